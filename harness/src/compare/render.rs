//! The comparison's report: its header, the memory-limit table, and the
//! tables of each set of rows (one thread, against the limit, threads). The
//! goals are in `goals.rs`.

use super::lookups::{BigPeer, BURSTS};
use super::threads::{rate, MIXES};
use super::Row;
use crate::memlimit::Limit;
use crate::report::{f1, f2, machine, mib, millions, opt, pct, Table};
use crate::Options;

/// The title and the machine (its load average at the start of the run).
pub fn header(quick: bool) -> String {
    format!(
        "## Comparison{}\n\n### Machine\n\n{}\n",
        if quick {
            " (--quick: 64 MiB tables, partly cached; judge the goals on the full run)"
        } else {
            ""
        },
        machine()
    )
}

pub fn limit(limit: &Limit) -> String {
    let mut out = format!(
        "### The memory limit\n\nRandom 64-byte lines from a {} buffer, prefetched 16, 32 or 64 lines ahead (the fastest), CPU time per line:\n\n",
        mib(limit.bytes)
    );
    let mut t = Table::new(&[
        "pages",
        "threads",
        "ns per line",
        "ns per 2 lines (one negative lookup)",
        "M lookups/s per thread",
    ]);
    for (pages, th, ns) in [
        ("2 MiB", "1", limit.line_ns),
        ("2 MiB", "2", limit.line_ns_2t),
        ("4 KiB", "1", limit.line_ns_4k),
    ] {
        t.row(vec![
            pages.into(),
            th.into(),
            f1(ns),
            f1(2.0 * ns),
            f1(1e3 / (2.0 * ns)),
        ]);
    }
    out += &t.render();
    out += &format!(
        "\nDependent chase (one line at a time, 2 MiB pages): {} ns per line. Share of the buffer on 2 MiB pages: {}.\n\n",
        f1(limit.chase_ns),
        opt(limit.huge_share, |x| format!("{:.0}%", x * 100.0))
    );
    out
}

/// `concurrent-cuckoo` alone on the 1 GiB class (`big`), then the peers'
/// negative lookups on tables sized for the same items.
pub fn big(big: &[Row], peers: &[BigPeer], limit: &Limit, opts: &Options) -> String {
    let mut out = format!(
        "### concurrent-cuckoo on a {} table ({} items, 90% load)\n\n",
        mib(big[0].bytes),
        millions(big[0].n)
    );
    out += &tables(big, limit, opts);
    out += &format!(
        "\n#### Peers' negative lookups on tables sized for the same {} items\n\nA negative lookup reads both buckets at any load, so these tables hold a 2% sample of the keys (filling them would take longer than the whole run); both crates write their whole table when they build it, so all of it is real memory. CPU time per lookup:\n\n",
        millions(big[0].n)
    );
    let mut t = Table::new(&[
        "filter",
        "table",
        "ns per negative lookup",
        "concurrent-cuckoo `contains` is faster by",
        "`contains_hash` is faster by",
    ]);
    let (ours_ns, ours_hash_ns) = (
        big[0].lookups.contains[0],
        big[0].hash.as_ref().map_or(f64::NAN, |h| h.contains[0]),
    );
    t.row(vec![
        "concurrent-cuckoo".into(),
        mib(big[0].bytes),
        f1(ours_ns),
        "-".into(),
        "-".into(),
    ]);
    for p in peers {
        t.row(vec![
            p.name.clone(),
            mib(p.bytes),
            f1(p.ns),
            format!("{}x", f2(p.ns / ours_ns)),
            format!("{}x", f2(p.ns / ours_hash_ns)),
        ]);
    }
    out += &t.render();
    out += "\n";
    out
}

/// Every filter at the same `n` items.
pub fn head_to_head(n: u64, rows: &[Row], limit: &Limit, opts: &Options) -> String {
    let mut out = format!(
        "### Head to head: every filter sized for {} items at about 90% load\n\nThe same keys for every filter; each hashes them with its own default hasher. The cuckoo filters take 16-bit fingerprints except `cuckoofilter` (8-bit, fixed); the Bloom filter gets the memory of `concurrent-cuckoo`.\n\n",
        millions(n)
    );
    out += &tables(rows, limit, opts);
    out
}

/// ns per operation (M operations/s).
fn cell(ns: f64) -> String {
    format!("{} ({})", f1(ns), f1(1e3 / ns))
}

/// Tables for one set of rows measured at the same item count.
fn tables(rows: &[Row], limit: &Limit, opts: &Options) -> String {
    let mut out = String::new();
    out += "#### One thread: ns per operation (M operations/s)\n\n";
    out += "Lookups at 0%, 50% and 100% positive keys; batches of negative keys; insert and remove at 90% load (remove 5% of the keys, then insert them again). Times are the thread's CPU time.\n\n";
    let mut t = Table::new(&[
        "filter",
        "items",
        "memory",
        "bits/item",
        "FPR",
        "fill ns/key (threads)",
        "contains 0%",
        "contains 50%",
        "contains 100%",
        "batch 16",
        "batch 32",
        "batch 64",
        "insert",
        "remove",
    ]);
    for r in rows {
        let b = |i: usize| r.lookups.batch.map_or("-".into(), |b| cell(b[i]));
        t.row(vec![
            r.name.clone(),
            millions(r.n),
            mib(r.bytes),
            f1(r.bytes as f64 * 8.0 / r.n as f64),
            pct(r.lookups.fpr),
            format!("{} ({})", f1(r.fill.ns), r.fill.threads),
            cell(r.lookups.contains[0]),
            cell(r.lookups.contains[1]),
            cell(r.lookups.contains[2]),
            b(0),
            b(1),
            b(2),
            r.writes.as_ref().map_or("-".into(), |w| cell(w.insert)),
            r.writes.as_ref().map_or("-".into(), |w| cell(w.remove)),
        ]);
        if let Some(h) = &r.hash {
            t.row(vec![
                format!("{} `*_hash`", r.name),
                millions(r.n),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                cell(h.contains[0]),
                cell(h.contains[1]),
                cell(h.contains[2]),
                cell(h.batch[0]),
                cell(h.batch[1]),
                cell(h.batch[2]),
                String::new(),
                String::new(),
            ]);
        }
    }
    out += &t.render();
    let notes: Vec<String> = rows
        .iter()
        .filter(|r| !r.note.trim().is_empty() || r.fill.failures > 0)
        .map(|r| {
            let fails = if r.fill.failures > 0 {
                format!(" {} failed inserts during the fill.", r.fill.failures)
            } else {
                String::new()
            };
            format!("- {}: {}{}", r.name, r.note.trim(), fails)
        })
        .collect();
    if !notes.is_empty() {
        out += &format!("\n{}\n", notes.join("\n"));
    }

    out += &format!(
        "\n#### Negative lookups against the memory limit ({} ns per lookup, one thread)\n\nFraction = limit / measured, as a rate (1.0 = at the limit). The limit is for a buffer of {}; smaller tables are partly cached and can beat it.\n\n",
        f1(limit.lookup_ns()),
        mib(limit.bytes)
    );
    let mut t = Table::new(&[
        "filter",
        "API",
        "table",
        "ns per lookup",
        "fraction of the limit",
    ]);
    let frac = |ns: f64| f2(limit.lookup_ns() / ns);
    for r in rows {
        let m = mib(r.bytes);
        t.row(vec![
            r.name.clone(),
            "contains".into(),
            m.clone(),
            f1(r.lookups.contains[0]),
            frac(r.lookups.contains[0]),
        ]);
        if let Some(b) = r.lookups.batch {
            for (i, burst) in BURSTS.iter().enumerate() {
                t.row(vec![
                    r.name.clone(),
                    format!("contains_batch ({burst})"),
                    m.clone(),
                    f1(b[i]),
                    frac(b[i]),
                ]);
            }
        }
        if let Some(h) = &r.hash {
            t.row(vec![
                r.name.clone(),
                "contains_hash".into(),
                m.clone(),
                f1(h.contains[0]),
                frac(h.contains[0]),
            ]);
            for (i, burst) in BURSTS.iter().enumerate() {
                t.row(vec![
                    r.name.clone(),
                    format!("contains_hash_batch ({burst})"),
                    m.clone(),
                    f1(h.batch[i]),
                    frac(h.batch[i]),
                ]);
            }
        }
    }
    out += &t.render();

    out += "\n#### Threads: M operations/s in total, wall clock (by CPU time)\n\n";
    out += "Read-only: lookups of keys about half present. Mixes: lookup/insert/remove percentages; inserts add fresh keys and removes take original ones, so the load stays near 90%. `cuckoofilter` is behind a `Mutex`; the Bloom and xor filters cannot delete, so they run read-only only. The number in parentheses sums each thread's operations over its own CPU time: what the run would do with both cores to itself (it flatters lock-based filters, whose waiting threads sleep).\n\n";
    let mut head = vec!["filter".to_string()];
    for m in MIXES {
        for &th in &opts.threads {
            head.push(format!("{} x{th}", m.label()));
        }
    }
    let head_refs: Vec<&str> = head.iter().map(|s| s.as_str()).collect();
    let mut t = Table::new(&head_refs);
    for r in rows {
        let mut cells = vec![r.name.clone()];
        for m in MIXES {
            for &th in &opts.threads {
                cells.push(
                    rate(&r.threaded, &m.label(), th)
                        .map_or("-".into(), |(w, c)| format!("{} ({})", f1(w), f1(c))),
                );
            }
        }
        t.row(cells);
    }
    out += &t.render();
    out
}
