//! The side-by-side comparison: every filter on the same keys at the same
//! load, single-threaded and with threads, against the memory limit.

mod lookups;
mod subjects;
mod threads;
mod writes;

use crate::filters;
use crate::memlimit::{anon_huge_mib, measure_limit, Limit};
use crate::report::{bar, f1, f2, machine, mib, millions, opt, pct, Table};
use crate::Options;
use lookups::BURSTS;
use std::time::Instant;
use subjects::{subjects, Subject};
use threads::{rate, MIXES};

/// Everything measured for one filter.
struct Row {
    name: String,
    n: u64,
    bytes: usize,
    fill: writes::Fill,
    lookups: lookups::Lookups,
    /// Filters that can remove.
    writes: Option<writes::Writes>,
    threaded: Vec<threads::Threaded>,
    /// `concurrent-cuckoo` only: the `*_hash` API.
    hash: Option<lookups::HashLookups>,
    note: String,
}

fn measure(s: &Subject, n: u64, ours_bits_per_item: u64, opts: &Options) -> Row {
    let build_start = Instant::now();
    let mut f = (s.build)(n, ours_bits_per_item);
    let build_ns = build_start.elapsed().as_nanos() as f64 / n as f64;
    let caps = f.caps();
    let huge_before = anon_huge_mib();
    let fill = writes::fill(f.as_mut(), n, caps, s.concurrent_fill, build_ns, s.name);
    let bytes = f.bytes();
    let mut note = String::new();
    if s.name == "concurrent-cuckoo" {
        if let (Some(a), Some(b)) = (huge_before, anon_huge_mib()) {
            note = format!("{:.0} MiB of the table on 2 MiB pages", b - a);
        }
    }

    // One progress bar for the one-thread operations.
    let pb = bar(
        lookups::steps(caps.batch) + writes::STEPS,
        format!("lookups {}", s.name),
    );
    let lookups = lookups::measure(f.as_mut(), n, caps.batch, opts, &pb);
    let writes = caps
        .remove
        .then(|| writes::remove_insert(f.as_mut(), n, opts.quick, &pb));
    if let Some(w) = &writes {
        if w.found != w.removed {
            note += &format!(" remove found {} of {}", w.found, w.removed);
        }
    }
    pb.finish_and_clear();
    let hash = f.as_ours().map(|o| lookups::measure_hash_api(o, n, opts));

    let threaded = threads::measure(f.as_ref(), caps, n, opts, s.name);
    drop(f);
    Row {
        name: s.name.to_string(),
        n,
        bytes,
        fill,
        lookups,
        writes,
        threaded,
        hash,
        note,
    }
}

fn cell(ns: f64) -> String {
    format!("{} ({})", f1(ns), f1(1e3 / ns))
}

/// Tables for one set of rows measured at the same item count.
fn render(rows: &[Row], limit: &Limit, opts: &Options) -> String {
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

fn render_limit(limit: &Limit) -> String {
    let mut out = format!(
        "### The memory limit\n\nRandom 64-byte lines from a {} buffer, 16 lines in flight (the depth of `contains_hash_batch`), CPU time per line:\n\n",
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

fn measure_all(n: u64, opts: &Options, names: &[&str], started: Instant) -> Vec<Row> {
    let probe = filters::ours(n);
    let bits_per_item = (probe.memory_usage() as u64 * 8).div_ceil(n);
    drop(probe);
    let mut rows = Vec::new();
    for s in subjects() {
        if !names.contains(&s.name) {
            continue;
        }
        rows.push(measure(&s, n, bits_per_item, opts));
        eprintln!(
            "  done: {} at {} items ({:.0} s so far)",
            s.name,
            millions(n),
            started.elapsed().as_secs_f64()
        );
    }
    rows
}

pub fn run(opts: &Options) -> String {
    let quick = opts.quick;
    let started = Instant::now();
    // Head to head: every filter sized for the same items at ~90% load.
    let n_all = opts
        .n
        .unwrap_or(if quick { 30_000_000 } else { 120_000_000 });
    // The 1 GiB table: concurrent-cuckoo alone (peers would take too long
    // to fill at this size for a five-minute run).
    let n_big = if quick { None } else { Some(483_000_000u64) };
    let limit_bytes = filters::ours(n_big.unwrap_or(n_all)).memory_usage();

    let mut names: Vec<&str> = subjects().iter().map(|s| s.name).collect();
    if let Some(only) = &opts.only {
        names.retain(|n| *n == "concurrent-cuckoo" || n.contains(only.as_str()));
    }

    let mut out = format!(
        "## Comparison{}\n\n### Machine\n\n{}\n",
        if quick {
            " (--quick: 64 MiB tables, partly cached; judge the goals on the full run)"
        } else {
            ""
        },
        machine()
    );
    let limit = measure_limit(limit_bytes, quick);
    out += &render_limit(&limit);

    let big = n_big.map(|n| measure_all(n, opts, &["concurrent-cuckoo"], started));
    let big_peers = n_big.map_or_else(Vec::new, |n| lookups::big_peers(n, opts));
    let rows = measure_all(n_all, opts, &names, started);

    if let Some(big) = &big {
        out += &format!(
            "### concurrent-cuckoo on a {} table ({} items, 90% load)\n\n",
            mib(big[0].bytes),
            millions(big[0].n)
        );
        out += &render(big, &limit, opts);
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
        for p in &big_peers {
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
    }
    out += &format!(
        "### Head to head: every filter sized for {} items at about 90% load\n\nThe same keys for every filter; each hashes them with its own default hasher. The cuckoo filters take 16-bit fingerprints except `cuckoofilter` (8-bit, fixed); the Bloom filter gets the memory of `concurrent-cuckoo`.\n\n",
        millions(n_all)
    );
    out += &render(&rows, &limit, opts);

    // --- goals
    let find = |name: &str| rows.iter().find(|r| r.name == name);
    let frac = |ns: f64| f2(limit.lookup_ns() / ns);
    let mut t = Table::new(&["goal", "target", "achieved"]);
    if let Some(o) = find("concurrent-cuckoo") {
        let b = big.as_ref().map(|v| &v[0]);
        for peer in ["cuckoofilter", "atomic-cuckoo-filter"] {
            if let Some(p) = find(peer) {
                let same = format!(
                    "{}x `contains`, {}x `contains_hash`",
                    f2(p.lookups.contains[0] / o.lookups.contains[0]),
                    f2(p.lookups.contains[0] / o.hash.as_ref().map_or(f64::NAN, |h| h.contains[0])),
                );
                let vs_big = b.map_or(String::new(), |b| {
                    format!(
                        "; ours on the {} table against theirs at {} items: {}x / {}x",
                        mib(b.bytes),
                        millions(p.n),
                        f2(p.lookups.contains[0] / b.lookups.contains[0]),
                        f2(p.lookups.contains[0]
                            / b.hash.as_ref().map_or(f64::NAN, |h| h.contains[0]))
                    )
                });
                let on_big = big_peers.iter().find(|bp| bp.name == peer).and_then(|bp| {
                    b.map(|b| {
                        format!(
                            "**{}x `contains`, {}x `contains_hash`** on tables sized for {} items (ours {}, theirs {})",
                            f2(bp.ns / b.lookups.contains[0]),
                            f2(bp.ns / b.hash.as_ref().map_or(f64::NAN, |h| h.contains[0])),
                            millions(b.n),
                            mib(b.bytes),
                            mib(bp.bytes)
                        )
                    })
                });
                let text = match on_big {
                    Some(big) => format!("{big}; at {} items, 90% load: {same}", millions(o.n)),
                    None => format!("{same} (both at {} items){vs_big}", millions(o.n)),
                };
                t.row(vec![
                    format!("single negative `contains` vs {peer}"),
                    ">= 3x".into(),
                    text,
                ]);
            }
        }
        let r = b.unwrap_or(o);
        if let (Some(h), Some(kb)) = (&r.hash, r.lookups.batch) {
            t.row(vec![
                format!("`contains_batch` vs the two-line limit ({} table)", mib(r.bytes)),
                ">= 0.77".into(),
                format!(
                    "`contains_hash_batch`: {} / {} / {}; keyed `contains_batch`: {} / {} / {} (bursts 16/32/64)",
                    frac(h.batch[0]), frac(h.batch[1]), frac(h.batch[2]), frac(kb[0]), frac(kb[1]), frac(kb[2])
                ),
            ]);
        }
        for (peer, target) in [("atomic-cuckoo-filter", ">= 2x"), ("cuckoofilter", ">= 5x")] {
            if let (Some(a), Some(p)) = (
                rate(&o.threaded, "90/5/5", 2),
                find(peer).and_then(|p| rate(&p.threaded, "90/5/5", 2)),
            ) {
                t.row(vec![
                    format!(
                        "90/5/5, 2 threads, vs {peer}{}",
                        if peer == "cuckoofilter" {
                            " in a Mutex"
                        } else {
                            ""
                        }
                    ),
                    target.into(),
                    format!(
                        "{}x wall clock ({}x by CPU time)",
                        f2(a.0 / p.0),
                        f2(a.1 / p.1)
                    ),
                ]);
            }
        }
        for r in b.into_iter().chain(Some(o)) {
            if let (Some(two), Some(one)) = (
                rate(&r.threaded, "read-only", 2),
                rate(&r.threaded, "read-only", 1),
            ) {
                t.row(vec![
                    format!("read-only, 2 threads / 1 thread ({} table)", mib(r.bytes)),
                    ">= 1.9x".into(),
                    format!(
                        "{}x wall clock ({}x by CPU time)",
                        f2(two.0 / one.0),
                        f2(two.1 / one.1)
                    ),
                ]);
            }
        }
    }
    out += "\n### Goals\n\n";
    out += &t.render();
    out += &format!(
        "\nTotal run time: {:.0} s.\n",
        started.elapsed().as_secs_f64()
    );
    out
}
