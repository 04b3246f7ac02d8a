//! Helpers for `scripts/bench-cli.sh` (not part of the tool):
//!
//! * `gen N`: N distinct items, one per line, on stdout (`item:%012d`,
//!   17 bytes and a line end each);
//! * `insert FILE CAPACITY THREADS`: reads FILE and cuts its lines into a
//!   `Vec<&[u8]>` (not timed), then times the library's `insert_batch` of
//!   those items into a fresh `CuckooFilter` from THREADS threads, as
//!   `ccf build` does: the in-memory baseline of "Command-line build";
//! * `resp FILE KEY`: `CF.INSERT KEY ITEMS ...` of FILE's lines, 1000 items
//!   a command, as RESP on stdout for `redis-cli --pipe`.

use concurrent_cuckoo::CuckooFilter;
use std::io::{BufWriter, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["gen", n] => generate(n.parse().expect("N")),
        ["insert", file, capacity, threads] => insert(
            file,
            capacity.parse().expect("CAPACITY"),
            threads.parse().expect("THREADS"),
        ),
        ["resp", file, key] => resp(file, key),
        _ => {
            eprintln!("usage: bench_build gen N | insert FILE CAPACITY THREADS | resp FILE KEY");
            std::process::exit(2);
        }
    }
}

fn generate(n: u64) {
    let mut out = BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    for i in 0..n {
        writeln!(out, "item:{i:012}").expect("stdout");
    }
    out.flush().expect("stdout");
}

fn lines(data: &[u8]) -> Vec<&[u8]> {
    data.split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect()
}

fn insert(file: &str, capacity: usize, threads: usize) {
    let data = std::fs::read(file).expect("read FILE");
    let items = lines(&data);
    let filter = CuckooFilter::builder()
        .capacity(capacity)
        .build()
        .expect("filter");
    // The same work split as `ccf build`: batches of about 4 MiB of input.
    let batch = 4 << 20 >> 4;
    let next = AtomicUsize::new(0);
    let cpu_before = process_cpu_seconds();
    let started = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let at = next.fetch_add(batch, Ordering::Relaxed);
                if at >= items.len() {
                    break;
                }
                let end = (at + batch).min(items.len());
                filter.insert_batch(&items[at..end]).expect("insert_batch");
            });
        }
    });
    let secs = started.elapsed().as_secs_f64();
    let cpu = process_cpu_seconds() - cpu_before;
    assert_eq!(filter.len(), items.len());
    println!(
        "insert_batch {} items, {threads} threads: {secs:.3} s, cpu {cpu:.2} s, {:.0} items/s",
        items.len(),
        items.len() as f64 / secs
    );
}

/// User + system CPU seconds of this process so far (Linux `/proc`, in
/// clock ticks of 1/100 s).
fn process_cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command name (which is in parentheses).
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15 of the line: 11 and 12 here.
    (ticks(11) + ticks(12)) / 100.0
}

fn resp(file: &str, key: &str) {
    let data = std::fs::read(file).expect("read FILE");
    let items = lines(&data);
    let mut out = BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    for chunk in items.chunks(1000) {
        write!(
            out,
            "*{}\r\n$9\r\nCF.INSERT\r\n${}\r\n{key}\r\n$5\r\nITEMS\r\n",
            chunk.len() + 3,
            key.len()
        )
        .expect("stdout");
        for item in chunk {
            write!(out, "${}\r\n", item.len()).expect("stdout");
            out.write_all(item).expect("stdout");
            out.write_all(b"\r\n").expect("stdout");
        }
    }
    out.flush().expect("stdout");
}
