//! The side-by-side comparison: every filter on the same keys at the same
//! load, single-threaded and with threads, against the memory limit.
//!
//! This file runs the parts in order; each part is one file:
//!
//! * `subjects`: the filters compared and how each is built;
//! * `writes`: the fill, then remove and insert at 90% load;
//! * `lookups`: `contains`, batches, the `*_hash` API, and the peers'
//!   negative lookups on tables of the 1 GiB class;
//! * `threads`: the mixed workloads on several threads;
//! * `render` and `goals`: the report's tables and the goals table.
//!
//! The memory limit is measured by `crate::memlimit`.

mod goals;
mod lookups;
mod render;
mod subjects;
mod threads;
mod writes;

use crate::filters;
use crate::memlimit::{anon_huge_mib, measure_limit};
use crate::report::{bar, millions};
use crate::Options;
use std::time::Instant;
use subjects::{subjects, Subject};

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

/// One filter at `n` items: build and fill, lookups, remove and insert,
/// the `*_hash` API, then the mixed workloads, in that order.
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

    let mut out = render::header(quick);
    let limit = measure_limit(limit_bytes, quick);
    out += &render::limit(&limit);

    let big = n_big.map(|n| measure_all(n, opts, &["concurrent-cuckoo"], started));
    let big_peers = n_big.map_or_else(Vec::new, |n| lookups::big_peers(n, opts));
    let rows = measure_all(n_all, opts, &names, started);

    if let Some(big) = &big {
        out += &render::big(big, &big_peers, &limit, opts);
    }
    out += &render::head_to_head(n_all, &rows, &limit, opts);
    out += &goals::render(&rows, big.as_ref().map(|v| &v[0]), &big_peers, &limit);
    out += &format!(
        "\nTotal run time: {:.0} s.\n",
        started.elapsed().as_secs_f64()
    );
    out
}
