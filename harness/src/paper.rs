//! The evaluation of Fan, Andersen, Kaminsky and Mitzenmacher, "Cuckoo
//! Filter: Practically Better Than Bloom" (CoNEXT 2014), reproduced for
//! this crate and the peers, one thread, keys hashed by each filter's own
//! hasher:
//!
//! * Table 3: fill an empty filter until the first insert fails; items,
//!   bits per item, false-positive rate, construction speed.
//! * Figure 5: lookup throughput against the fraction of positive queries,
//!   on the filters as Table 3 left them.
//! * Figure 7: insert throughput against occupancy, during that fill.
//! * Figure 8: delete throughput against occupancy, deleting every item
//!   until the filter is empty.
//!
//! The cuckoo filters all get the same number of slots (a power of two, as
//! `cuckoofilter` and `atomic-cuckoo-filter` require). Filters that do not
//! fail (Bloom, exact set) and the static xor filter take as many items as
//! `concurrent-cuckoo` held at its first failure, and the Bloom filter gets
//! the same memory as `concurrent-cuckoo`.

use crate::filters::{
    self, AtomicCuckoo, Bloom, CuckooFilterCrate, Exact, Filter, Fuse, OursBatch, OursKeys,
};
use crate::keys::queries;
use crate::plot::{self, Series};
use crate::report::{bar, f1, f2, machine, mib, millions, pct, Table};
use crate::timing::{time_ns, CpuClock};
use crate::Options;
use std::time::Instant;

const POSITIVE: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];
/// Occupancy bands for Figures 7 and 8.
const BANDS: usize = 20;

struct Result {
    name: &'static str,
    /// Slots (cuckoo filters) or the target item count (others).
    capacity: u64,
    items: u64,
    bytes: usize,
    build_ns: f64,
    fpr: f64,
    /// Figure 5: ns per lookup at each fraction of POSITIVE.
    lookup: Vec<f64>,
    /// `contains_batch` (32) at each fraction, where native.
    lookup_batch: Option<Vec<f64>>,
    /// Figure 7: (occupancy at the band's end, ns per insert).
    insert: Vec<(f64, f64)>,
    /// Figure 8: (occupancy at the band's start, ns per delete).
    delete: Vec<(f64, f64)>,
}

/// Inserts keys `0..` until the first failure (or `target` keys); records
/// ns per insert for each `1/BANDS` of `capacity`.
fn fill_to_failure(
    f: &mut dyn Filter,
    capacity: u64,
    target: Option<u64>,
    name: &str,
) -> (u64, f64, Vec<(f64, f64)>) {
    let limit = target.unwrap_or(capacity);
    let pb = bar(limit, format!("Table 3 / Figure 7: fill {name}"));
    let band = (capacity / BANDS as u64).max(1);
    let chunk = (band / 10).max(1);
    let mut curve = Vec::new();
    let (mut band_ns, mut band_ops) = (0f64, 0u64);
    let mut inserted = 0u64;
    let mut total_ns = 0f64;
    loop {
        let end = (inserted + chunk).min(limit);
        if end == inserted {
            break;
        }
        let start = CpuClock::now();
        let failed = f.insert_range(inserted..end, true);
        let ns = start.elapsed_ns();
        let done = failed.unwrap_or(end);
        total_ns += ns;
        band_ns += ns;
        band_ops += done - inserted;
        pb.inc(done - inserted);
        inserted = done;
        if band_ops >= band || failed.is_some() || inserted == limit {
            if band_ops > 0 {
                curve.push((inserted as f64 / capacity as f64, band_ns / band_ops as f64));
            }
            band_ns = 0.0;
            band_ops = 0;
        }
        if failed.is_some() {
            break;
        }
    }
    pb.finish_and_clear();
    (inserted, total_ns / inserted.max(1) as f64, curve)
}

/// Deletes keys `0..items` in bands; (occupancy at the band's start, ns).
fn delete_all(f: &mut dyn Filter, items: u64, capacity: u64, name: &str) -> Vec<(f64, f64)> {
    let pb = bar(items, format!("Figure 8: delete until empty {name}"));
    let band = (capacity / BANDS as u64).max(1);
    let mut curve = Vec::new();
    let mut at = 0;
    while at < items {
        let end = (at + band).min(items);
        let occupancy = (items - at) as f64 / capacity as f64;
        let start = Instant::now();
        f.remove_range(at..end);
        curve.push((
            occupancy,
            start.elapsed().as_nanos() as f64 / (end - at) as f64,
        ));
        pb.inc(end - at);
        at = end;
    }
    pb.finish_and_clear();
    curve
}

fn lookups(
    f: &mut dyn Filter,
    items: u64,
    q: usize,
    batch: bool,
    name: &str,
) -> (Vec<f64>, Option<Vec<f64>>, f64) {
    let pb = bar(
        POSITIVE.len() as u64 * (1 + u64::from(batch)),
        format!("Figure 5: lookups {name}"),
    );
    let warm = queries(items, q / 4, 0.5, 1);
    f.count_contains(&warm);
    let mut single = Vec::new();
    let mut batched = Vec::new();
    let mut fpr = 0.0;
    for (i, &p) in POSITIVE.iter().enumerate() {
        let qs = queries(items, q, p, 50 + i as u64);
        let (ns, hits) = time_ns(q, || f.count_contains(&qs));
        single.push(ns);
        if p == 0.0 {
            fpr = hits as f64 / q as f64;
        }
        pb.inc(1);
        if batch {
            batched.push(time_ns(q, || f.count_contains_batch(&qs, 32)).0);
            pb.inc(1);
        }
    }
    pb.finish_and_clear();
    (single, batch.then_some(batched), fpr)
}

pub fn run(opts: &Options) -> String {
    let started = Instant::now();
    let slots_log2 = if opts.quick { 21 } else { 25 };
    let slots = 1u64 << slots_log2;
    let nominal = slots * 9 / 10;
    let q = if opts.quick { 500_000 } else { 2_000_000 };
    let mut results: Vec<Result> = Vec::new();

    // Cuckoo filters: fill to first failure.
    type Make = fn(u64) -> Box<dyn Filter>;
    let cuckoos: [(&'static str, Make); 4] = [
        ("concurrent-cuckoo", |n| {
            Box::new(OursKeys(filters::ours(n)))
        }),
        ("concurrent-cuckoo insert_batch", |n| {
            Box::new(OursBatch(filters::ours(n)))
        }),
        ("cuckoofilter", |n| Box::new(CuckooFilterCrate::new(n))),
        ("atomic-cuckoo-filter", |n| Box::new(AtomicCuckoo::new(n))),
    ];
    let mut ours_items = 0;
    let mut ours_bytes = 0;
    for (name, make) in cuckoos {
        let mut f = make(nominal);
        let capacity = match f.as_ours() {
            Some(o) => o.capacity() as u64,
            None => slots,
        };
        let (items, build_ns, insert) = fill_to_failure(f.as_mut(), capacity, None, name);
        let batch = f.caps().batch;
        let (lookup, lookup_batch, fpr) = lookups(f.as_mut(), items, q, batch, name);
        let bytes = f.bytes();
        if ours_items == 0 {
            ours_items = items;
            ours_bytes = bytes;
        }
        let delete = delete_all(f.as_mut(), items, capacity, name);
        results.push(Result {
            name,
            capacity,
            items,
            bytes,
            build_ns,
            fpr,
            lookup,
            lookup_batch,
            insert,
            delete,
        });
        eprintln!(
            "  done: {name} ({:.0} s so far)",
            started.elapsed().as_secs_f64()
        );
    }

    // The others take as many items as concurrent-cuckoo held.
    let n = ours_items;
    {
        let name = "fastbloom AtomicBloomFilter";
        let mut f: Box<dyn Filter> =
            Box::new(Bloom::new((ours_bytes as u64 * 8).next_multiple_of(64), n));
        let (items, build_ns, insert) = fill_to_failure(f.as_mut(), n, Some(n), name);
        let (lookup, _, fpr) = lookups(f.as_mut(), items, q, false, name);
        results.push(Result {
            name,
            capacity: n,
            items,
            bytes: f.bytes(),
            build_ns,
            fpr,
            lookup,
            lookup_batch: None,
            insert,
            delete: Vec::new(),
        });
    }
    {
        let name = "xorf BinaryFuse16";
        let pb = bar(1, format!("Table 3: build {name}"));
        let (build_ns, mut f) = time_ns(n as usize, || Box::new(Fuse::new(n)) as Box<dyn Filter>);
        pb.finish_and_clear();
        let (lookup, _, fpr) = lookups(f.as_mut(), n, q, false, name);
        results.push(Result {
            name,
            capacity: n,
            items: n,
            bytes: f.bytes(),
            build_ns,
            fpr,
            lookup,
            lookup_batch: None,
            insert: Vec::new(),
            delete: Vec::new(),
        });
    }
    {
        let name = "RwLock<HashSet<u64>>";
        let mut f: Box<dyn Filter> = Box::new(Exact::new(n));
        let (items, build_ns, insert) = fill_to_failure(f.as_mut(), n, Some(n), name);
        let (lookup, _, fpr) = lookups(f.as_mut(), items, q, false, name);
        let bytes = f.bytes();
        let delete = delete_all(f.as_mut(), items, n, name);
        results.push(Result {
            name,
            capacity: n,
            items,
            bytes,
            build_ns,
            fpr,
            lookup,
            lookup_batch: None,
            insert,
            delete,
        });
    }

    // --- report
    let mut out = format!(
        "## The paper's evaluation{}\n\nOne thread; times are the thread's CPU time. Cuckoo filters: 2^{slots_log2} slots each ({} items nominal); the others take the {} items `concurrent-cuckoo` held at its first failure (the Bloom filter in the same memory).\n\n### Machine\n\n{}\n",
        if opts.quick { " (--quick)" } else { "" },
        millions(nominal),
        millions(n),
        machine()
    );
    out += "### Table 3: fill to the first failure\n\n";
    let mut t = Table::new(&[
        "filter",
        "items",
        "load",
        "memory",
        "bits/item",
        "FPR",
        "lower bound bits/item for this FPR",
        "construction M keys/s",
    ]);
    for r in &results {
        let bits = r.bytes as f64 * 8.0 / r.items as f64;
        let bound = if r.fpr > 0.0 {
            (1.0 / r.fpr).log2()
        } else {
            f64::NAN
        };
        t.row(vec![
            r.name.into(),
            millions(r.items),
            format!("{:.1}%", 100.0 * r.items as f64 / r.capacity as f64),
            mib(r.bytes),
            f1(bits),
            pct(r.fpr),
            f1(bound),
            f2(1e3 / r.build_ns),
        ]);
    }
    out += &t.render();
    out += "\nLoad is items over slots for the cuckoo filters and 100% for the rest (filled to a fixed count). `cuckoofilter` reports its first failure after it has already dropped a victim (its documented behaviour).\n";

    out += "\n### Figure 5: lookup throughput (M lookups/s) against the fraction of positive queries\n\n";
    let mut head = vec!["filter".to_string()];
    head.extend(POSITIVE.iter().map(|p| format!("{:.0}%", p * 100.0)));
    let hr: Vec<&str> = head.iter().map(|s| s.as_str()).collect();
    let mut t = Table::new(&hr);
    let mut fig5 = Vec::new();
    for r in &results {
        let mut row = vec![r.name.to_string()];
        row.extend(r.lookup.iter().map(|ns| f1(1e3 / ns)));
        t.row(row);
        fig5.push(Series::new(
            r.name,
            POSITIVE
                .iter()
                .zip(&r.lookup)
                .map(|(p, ns)| (p * 100.0, 1e3 / ns))
                .collect(),
        ));
        if let Some(b) = &r.lookup_batch {
            let label = format!("{} contains_batch(32)", r.name);
            let mut row = vec![label.clone()];
            row.extend(b.iter().map(|ns| f1(1e3 / ns)));
            t.row(row);
            fig5.push(Series::new(
                &label,
                POSITIVE
                    .iter()
                    .zip(b)
                    .map(|(p, ns)| (p * 100.0, 1e3 / ns))
                    .collect(),
            ));
        }
    }
    out += &t.render();

    let band_table =
        |title: &str, pick: &dyn Fn(&Result) -> &Vec<(f64, f64)>| -> (String, Vec<Series>) {
            let mut s = format!("\n### {title}\n\n");
            let mut t = Table::new(&["filter", "occupancy: M ops/s"]);
            let mut series = Vec::new();
            for r in &results {
                let c = pick(r);
                if c.is_empty() {
                    continue;
                }
                t.row(vec![
                    r.name.into(),
                    c.iter()
                        .map(|(o, ns)| format!("{:.0}%: {:.1}", o * 100.0, 1e3 / ns))
                        .collect::<Vec<_>>()
                        .join(", "),
                ]);
                series.push(Series::new(
                    r.name,
                    c.iter().map(|(o, ns)| (o * 100.0, 1e3 / ns)).collect(),
                ));
            }
            s += &t.render();
            (s, series)
        };
    let (s7, fig7) = band_table("Figure 7: insert throughput against occupancy", &|r| {
        &r.insert
    });
    out += &s7;
    let (s8, fig8) = band_table(
        "Figure 8: delete-until-empty throughput against occupancy",
        &|r| &r.delete,
    );
    out += &s8;
    out += "\nOccupancy is items over slots for the cuckoo filters and over the final item count for the Bloom filter and the exact set; each point is the mean over one band of 5%.\n";

    let dir = opts.svg_dir.clone().unwrap_or_else(|| "docs".into());
    let suffix = if opts.quick { "-quick" } else { "" };
    let size = if opts.quick {
        "quick run".to_string()
    } else {
        format!("2^{slots_log2} slots")
    };
    let files = [
        (
            format!("{dir}/fig5-lookup{suffix}.svg"),
            format!("Lookup throughput vs positive queries ({size})"),
            "positive queries (%)",
            &fig5,
        ),
        (
            format!("{dir}/fig7-insert{suffix}.svg"),
            format!("Insert throughput vs occupancy ({size})"),
            "occupancy (%)",
            &fig7,
        ),
        (
            format!("{dir}/fig8-delete{suffix}.svg"),
            format!("Delete-until-empty throughput vs occupancy ({size})"),
            "occupancy (%)",
            &fig8,
        ),
    ];
    out += "\n";
    for (path, title, x, series) in files {
        match plot::lines(&path, &title, x, "million operations per second", series) {
            Ok(()) => out += &format!("Plot: `{path}`\n"),
            Err(e) => out += &format!("Plot {path} failed: {e}\n"),
        }
    }
    out += &format!(
        "\nTotal run time: {:.0} s.\n",
        started.elapsed().as_secs_f64()
    );
    out
}
