//! Where a fill's time goes (`cuckoo-harness bands`): a table of 2^25
//! slots (`--n` sets the slots) filled to 90% in 18 bands of 5% of its
//! slots, with `insert_batch` and with one `insert` per key, the two taking
//! turns over 3 rounds on fresh tables; per band the median CPU ns per key
//! and how many of the band's keys needed a displacement path of each
//! length (from `stats()`, identical in every round: the filters place
//! keys exactly alike).

use crate::filters::Ours;
use crate::keys::key;
use crate::report::{f1, machine, Table};
use crate::timing::CpuClock;
use crate::Options;

const BANDS: usize = 18;

/// One fill: ns per key of each band, and each band's path-length counts.
fn fill(slots: u64, keys: &[u64], batched: bool) -> (Vec<f64>, Vec<[u64; 6]>) {
    let f = Ours::builder()
        .capacity(0)
        .bucket_count((slots / 4) as usize)
        .seed(0x5EED)
        .build()
        .expect("build concurrent-cuckoo");
    let (mut ns, mut paths) = (Vec::new(), Vec::new());
    let mut before = f.stats().path_lengths;
    for band in 0..BANDS {
        let part = &keys[keys.len() * band / BANDS..keys.len() * (band + 1) / BANDS];
        let start = CpuClock::now();
        if batched {
            f.insert_batch(part).expect("fill to 90% fits");
        } else {
            for k in part {
                f.insert(k).expect("fill to 90% fits");
            }
        }
        ns.push(start.elapsed_ns() / part.len() as f64);
        let now = f.stats().path_lengths;
        let mut delta = [0u64; 6];
        for (d, (a, b)) in delta.iter_mut().zip(now.iter().zip(&before)) {
            *d = a - b;
        }
        paths.push(delta);
        before = now;
    }
    (ns, paths)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

pub fn run(opts: &Options) -> String {
    let slots = opts.n.unwrap_or(if opts.quick { 1 << 20 } else { 1 << 25 });
    let rounds = 3;
    let keys: Vec<u64> = (0..slots * 9 / 10).map(key).collect();
    let (mut batch, mut single) = (vec![Vec::new(); BANDS], vec![Vec::new(); BANDS]);
    let mut paths = Vec::new();
    for _ in 0..rounds {
        for (batched, out) in [(true, &mut batch), (false, &mut single)] {
            eprintln!("  bands: {slots} slots, batched {batched}");
            let (ns, p) = fill(slots, &keys, batched);
            for (o, v) in out.iter_mut().zip(ns) {
                o.push(v);
            }
            paths = p;
        }
    }
    let mut t = Table::new(&[
        "occupancy",
        "insert_batch: ns/key",
        "insert: ns/key",
        "keys needing a path of 0 / 1 / 2 / 3 / 4 / 5 moves",
    ]);
    let (mut total_batch, mut total_single) = (0.0, 0.0);
    for band in 0..BANDS {
        let (b, s) = (median(batch[band].clone()), median(single[band].clone()));
        total_batch += b / BANDS as f64;
        total_single += s / BANDS as f64;
        let p = paths[band].map(|n| n.to_string()).join(" / ");
        t.row(vec![
            format!("{}-{}%", band * 5, (band + 1) * 5),
            f1(b),
            f1(s),
            p,
        ]);
    }
    t.row(vec![
        "fill to 90%".into(),
        f1(total_batch),
        f1(total_single),
        String::new(),
    ]);
    format!(
        "## Where a fill's time goes\n\n`cargo run --release -p cuckoo-harness -- bands`: \
         {slots} slots filled to 90% in bands of 5%, one thread, the median of {rounds} \
         rounds, `insert_batch` and `insert` taking turns; CPU ns per key.\n\n\
         ### Machine\n\n{}\n{}",
        machine(),
        t.render()
    )
}
