//! Frozen filters (`cuckoo-harness frozen`): opening a saved 1 GiB filter
//! in place against decoding it, and lookups through the `FrozenFilter`
//! against the live `CuckooFilter` it was saved from.
//!
//! The live filter (16-bit fingerprints, 2^27 buckets: a 1 GiB table;
//! `--quick`: 64 MiB) is filled to 90% with `insert_hash_batch` and saved
//! with `write_to_path` into the system's temporary directory. Opening is
//! timed on the wall clock with the file in the page cache (it was just
//! written), which is the restart case: `std::fs::read` + `from_bytes`,
//! streaming `read_from(File)`, `FrozenFilter::load` (read into a buffer
//! on 2 MiB pages, one checksum pass) and `FrozenFilter::open` (map,
//! validate the header, one checksum pass). Lookups: a million queries, half present, as
//! precomputed hashes, one at a time (`contains_hash`) and in bursts of 32
//! (`contains_hash_batch`), the two filters measured alternately, round by
//! round, after a warm-up pass over each; CPU ns per key, the median.

use crate::keys::{key, queries};
use crate::report::{bar, f1, f2, machine, Table};
use crate::timing::time_ns;
use crate::Options;
use concurrent_cuckoo::{CuckooFilter, FrozenFilter};
use std::time::Instant;

const BURST: usize = 32;
const QUERIES: usize = 1 << 20;

fn batched(f: impl Fn(&[u64], &mut [bool]), q: &[u64]) -> (f64, usize) {
    let mut out = [false; BURST];
    time_ns(q.len(), || {
        q.chunks_exact(BURST)
            .map(|b| {
                f(b, &mut out);
                out.iter().filter(|&&x| x).count()
            })
            .sum()
    })
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Wall-clock seconds of `f`, and its result.
fn wall<T>(f: impl FnOnce() -> T) -> (f64, T) {
    let start = Instant::now();
    let r = f();
    (start.elapsed().as_secs_f64(), r)
}

/// A `kB` field of this process's `/proc/self/smaps_rollup`.
fn smaps_rollup_kb(field: &str) -> Option<u64> {
    std::fs::read_to_string("/proc/self/smaps_rollup")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

pub fn run(opts: &Options) -> String {
    let buckets: usize = if opts.quick { 1 << 23 } else { 1 << 27 };
    let rounds = if opts.quick { 3 } else { 11 };
    let live = CuckooFilter::builder()
        .capacity(0)
        .bucket_count(buckets)
        .fingerprint_bits(16)
        .seed(0x5EED)
        .build()
        .expect("build the live filter");
    let n = (buckets * 4) as u64 * 9 / 10;
    let pb = bar(n / (1 << 20), "frozen: fill to 90%");
    let mut chunk = Vec::with_capacity(1 << 20);
    for start in (0..n).step_by(1 << 20) {
        chunk.clear();
        chunk.extend((start..n.min(start + (1 << 20))).map(key));
        live.insert_hash_batch(&chunk).expect("sized for 90%");
        pb.inc(1);
    }
    pb.finish_and_clear();
    let dir = opts
        .dir
        .as_ref()
        .map_or_else(std::env::temp_dir, std::path::PathBuf::from);
    let path = dir.join(format!("cuckoo-harness-frozen-{}.ccf", std::process::id()));
    let (save_s, saved) = wall(|| live.write_to_path(&path));
    saved.expect("save the filter");
    let file_len = std::fs::metadata(&path).map_or(0, |m| m.len());

    // Opening: each way three times, the median.
    let pb = bar(12, "frozen: open and decode");
    let (mut decode, mut stream, mut load, mut open) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..3 {
        let (s, f) = wall(|| {
            let bytes = std::fs::read(&path).expect("read");
            CuckooFilter::from_bytes(&bytes).expect("decode")
        });
        assert_eq!(f.len(), live.len());
        drop(f);
        decode.push(s);
        pb.inc(1);
        let (s, f) = wall(|| {
            CuckooFilter::read_from(std::io::BufReader::new(
                std::fs::File::open(&path).expect("open"),
            ))
            .expect("stream")
        });
        assert_eq!(f.len(), live.len());
        drop(f);
        stream.push(s);
        pb.inc(1);
        let (s, f) = wall(|| FrozenFilter::load(&path).expect("load frozen"));
        assert_eq!(f.len(), live.len());
        drop(f);
        load.push(s);
        pb.inc(1);
        // SAFETY: the harness alone uses this file, and leaves it as it is
        // until the filter is dropped.
        let (s, f) = wall(|| unsafe { FrozenFilter::open(&path) }.expect("open frozen"));
        assert_eq!(f.len(), live.len());
        drop(f);
        open.push(s);
        pb.inc(1);
    }
    pb.finish_and_clear();

    // Lookups: the live filter, the frozen view of the mapped file, and
    // the file loaded into anonymous memory on 2 MiB pages
    // (`FrozenFilter::load`). The third separates the cost of the frozen
    // lookup code from the cost of the file mapping's page size (4 KiB
    // pages, unless the kernel maps file pages with 2 MiB entries:
    // `FilePmdMapped`).
    let live_huge_kb = smaps_rollup_kb("AnonHugePages");
    // SAFETY: as above: nothing else touches the file while it is mapped.
    let frozen = unsafe { FrozenFilter::open(&path) }.expect("open frozen");
    let on_heap = FrozenFilter::load(&path).expect("load frozen");
    // Fault the copy in (a pass over it), then see how much of it sits on
    // 2 MiB pages.
    let _ = on_heap
        .as_bytes()
        .iter()
        .step_by(4096)
        .fold(0u8, |a, &b| a ^ b);
    let copy_huge = smaps_rollup_kb("AnonHugePages")
        .zip(live_huge_kb)
        .map(|(after, before)| (after.saturating_sub(before) * 1024) as f64 / file_len as f64);
    let q = queries(n, QUERIES, 0.5, 7);
    let (_, warm_live) = batched(|b, o| live.contains_hash_batch(b, o), &q);
    let (_, warm_frozen) = batched(|b, o| frozen.contains_hash_batch(b, o), &q);
    let (_, warm_heap) = batched(|b, o| on_heap.contains_hash_batch(b, o), &q);
    assert_eq!(warm_live, warm_frozen, "frozen and live answer differently");
    assert_eq!(warm_live, warm_heap, "frozen and live answer differently");
    // Page-cache files count as FilePmdMapped, tmpfs files as ShmemPmdMapped.
    let huge_kb = smaps_rollup_kb("FilePmdMapped")
        .into_iter()
        .chain(smaps_rollup_kb("ShmemPmdMapped"))
        .reduce(|a, b| a + b);
    let pb = bar(rounds as u64, "frozen: lookups");
    // [live, frozen file, frozen heap] x [batch, one at a time]: samples.
    let mut samples: [[Vec<f64>; 2]; 3] = Default::default();
    for round in 0..rounds {
        // Take turns, starting with a different subject each round.
        for i in (0..3).map(|i| (i + round) % 3) {
            let (batch, single) = match i {
                0 => (
                    batched(|b, o| live.contains_hash_batch(b, o), &q).0,
                    time_ns(q.len(), || {
                        q.iter().filter(|&&h| live.contains_hash(h)).count()
                    })
                    .0,
                ),
                1 => (
                    batched(|b, o| frozen.contains_hash_batch(b, o), &q).0,
                    time_ns(q.len(), || {
                        q.iter().filter(|&&h| frozen.contains_hash(h)).count()
                    })
                    .0,
                ),
                _ => (
                    batched(|b, o| on_heap.contains_hash_batch(b, o), &q).0,
                    time_ns(q.len(), || {
                        q.iter().filter(|&&h| on_heap.contains_hash(h)).count()
                    })
                    .0,
                ),
            };
            samples[i][0].push(batch);
            samples[i][1].push(single);
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    drop(on_heap);
    drop(frozen);
    let _ = std::fs::remove_file(&path);

    let gib = file_len as f64 / (1u64 << 30) as f64;
    let mut opening = Table::new(&["way", "seconds", "GiB/s", "extra memory"]);
    let rate = |s: f64| f2(gib / s);
    let (d, st, ld, o) = (
        median(&mut decode),
        median(&mut stream),
        median(&mut load),
        median(&mut open),
    );
    opening.row(vec![
        "`std::fs::read` + `CuckooFilter::from_bytes`".into(),
        format!("{d:.3}"),
        rate(d),
        "the file, then the table (2x its size at the peak)".into(),
    ]);
    opening.row(vec![
        "`CuckooFilter::read_from(BufReader<File>)`".into(),
        format!("{st:.3}"),
        rate(st),
        "the table".into(),
    ]);
    opening.row(vec![
        "`FrozenFilter::load` (read into 2 MiB pages + checksum pass)".into(),
        format!("{ld:.3}"),
        rate(ld),
        "the file's size, private".into(),
    ]);
    opening.row(vec![
        "`unsafe FrozenFilter::open` (map + checksum pass)".into(),
        format!("{o:.3}"),
        rate(o),
        "none: the page cache's copy, shared by every process".into(),
    ]);
    let mut lookups = Table::new(&[
        "lookup (50% present)",
        "live ns",
        "frozen, mapped file ns",
        "frozen, loaded ns",
        "mapped / live",
        "loaded / live",
    ]);
    let med = |v: &mut Vec<f64>| median(v);
    for (row, name) in [
        "bursts of 32: `contains_hash_batch`",
        "one at a time: `contains_hash`",
    ]
    .into_iter()
    .enumerate()
    {
        let (l, f, h) = (
            med(&mut samples[0][row]),
            med(&mut samples[1][row]),
            med(&mut samples[2][row]),
        );
        lookups.row(vec![
            name.into(),
            f1(l),
            f1(f),
            f1(h),
            format!("{}x", f2(f / l)),
            format!("{}x", f2(h / l)),
        ]);
    }
    let kb = |v: Option<u64>| v.map_or("unknown".to_string(), |kb| format!("{} MiB", kb / 1024));
    format!(
        "## Frozen filters: opening and querying a saved filter in place\n\n`cargo run --release -p cuckoo-harness -- frozen{}`: a {:.2} GiB saved filter (16-bit fingerprints, {} items, 90% load), saved in {save_s:.2} s with `write_to_path`. Opening: wall clock, median of 3, file in the page cache. Lookups: CPU ns per key, median of {rounds} rounds (the three subjects take turns), {QUERIES} queries. See `harness/src/frozen.rs`.\n\n### Machine\n\n{}- the file: `{}`; its pages mapped with 2 MiB entries (`FilePmdMapped` + `ShmemPmdMapped`): {}\n- anonymous memory on 2 MiB pages before the copy (`AnonHugePages`, the live table is most of it): {}\n- the loaded copy's share on 2 MiB pages (growth of `AnonHugePages`): {}\n\n### Opening\n\n{}\n### Lookups\n\n{}",
        if opts.quick { " --quick" } else { "" },
        gib,
        n,
        machine(),
        dir.display(),
        kb(huge_kb),
        kb(live_huge_kb),
        copy_huge.map_or("unknown".to_string(), |s| format!("{:.0}%", s * 100.0)),
        opening.render(),
        lookups.render()
    )
}
