//! The sweep's report: the machine, the goals, one table per section, and
//! the SVG plots.

use super::{Plan, Point};
use crate::plot::{lines, Series};
use crate::report::{f1, f2, machine, Table};
use crate::Options;

/// M operations/s of the measured threads, by the wall clock.
fn mops(p: &Point) -> f64 {
    p.run.main.ops as f64 / p.run.secs / 1e6
}

/// The point of the same section and filter at one thread.
fn base<'a>(points: &'a [Point], p: &Point) -> Option<&'a Point> {
    points
        .iter()
        .find(|q| q.section == p.section && q.filter == p.filter && q.threads == 1)
}

fn speedup(points: &[Point], p: &Point) -> f64 {
    base(points, p).map_or(f64::NAN, |b| mops(p) / mops(b))
}

/// M operations/s at the CPU time the measured threads got: the rate the
/// run would have had with `min(threads, CPUs)` CPUs to itself. Time
/// stalled on memory or on a cache line another core holds is CPU time,
/// so contention between the threads still shows; time another process
/// held the CPU does not (the machine may be shared). It flatters a
/// filter whose waiting threads sleep (a `Mutex`).
fn cpu_mops(p: &Point, cpus: usize) -> f64 {
    let width = p.threads.min(cpus) as f64;
    p.run.main.ops as f64 / (p.run.main.cpu_ns / width).max(1.0) * 1e3
}

fn cpu_speedup(points: &[Point], p: &Point, cpus: usize) -> f64 {
    base(points, p).map_or(f64::NAN, |b| cpu_mops(p, cpus) / cpu_mops(b, cpus))
}

/// Every run's rate, "a / b / c" (one run: "-").
fn spread(rates: &[f64]) -> String {
    if rates.len() < 2 {
        return "-".into();
    }
    rates.iter().map(|&r| f1(r)).collect::<Vec<_>>().join(" / ")
}

/// Per million lookups, or "-" for a filter that does not count them.
fn per_million(count: u64, lookups: u64, filter: &str) -> String {
    if filter != "concurrent-cuckoo" || lookups == 0 {
        "-".into()
    } else {
        format!("{:.1}", count as f64 * 1e6 / lookups as f64)
    }
}

/// The share of the CPUs it could use that the run's threads got.
fn cpu_share(p: &Point, cpus: usize) -> f64 {
    let threads = (p.threads + p.writers).min(cpus) as f64;
    (p.run.main.cpu_ns + p.run.writers.cpu_ns) / (p.run.secs * 1e9 * threads)
}

/// Sections in the order first measured.
fn sections(points: &[Point]) -> Vec<&str> {
    let mut s: Vec<&str> = Vec::new();
    for p in points {
        if !s.contains(&p.section.as_str()) {
            s.push(&p.section);
        }
    }
    s
}

fn find<'a>(points: &'a [Point], section: &str, filter: &str, threads: usize) -> Option<&'a Point> {
    points
        .iter()
        .find(|p| p.section.starts_with(section) && p.filter == filter && p.threads == threads)
}

fn cache_line(level: u32) -> String {
    (0..5)
        .find_map(|i| {
            let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{i}");
            let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).ok();
            (read("level")?.trim() == level.to_string() && read("type")?.trim() != "Instruction")
                .then(|| read("size"))
                .flatten()
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

fn goals(plan: &Plan, points: &[Point]) -> String {
    let p = plan.physical.unwrap_or(plan.cpus.len());
    let ours = "concurrent-cuckoo";
    let cpus = plan.cpus.len();
    let mut t = Table::new(&[
        "goal",
        "target",
        "wall clock",
        "met",
        "at the CPU time got",
        "met",
    ]);
    let mut row = |goal: String, target: String, measured: Option<(f64, f64)>, bound: f64| {
        let cell = |m: f64| {
            if m.is_finite() {
                (
                    format!("{}x", f2(m)),
                    if m >= bound { "yes" } else { "no" }.to_string(),
                )
            } else {
                ("-".into(), "not measured".into())
            }
        };
        let (wall, wall_met) = cell(measured.map_or(f64::NAN, |m| m.0));
        let (cpu, cpu_met) = cell(measured.map_or(f64::NAN, |m| m.1));
        t.row(vec![goal, target, wall, wall_met, cpu, cpu_met]);
    };
    let both = |x: &Point| (speedup(points, x), cpu_speedup(points, x, cpus));
    // The read-only goal: 0.85 x P in general, 1.9x on 2 cores.
    let read_bound = if p == 2 { 1.9 } else { 0.85 * p as f64 };
    for keys in ["absent keys", "present keys"] {
        let section = format!("read-only contains_batch (32), {keys}, in cache");
        let m = find(points, &section, ours, p).map(both);
        row(
            format!("read-only `contains_batch`, {keys}, in-cache table: {p} threads over 1"),
            format!(">= {}x", f2(read_bound)),
            m,
            read_bound,
        );
    }
    let mix = "mix 90/5/5 (lookups of keys half present), in cache";
    let m = find(points, mix, ours, p).map(both);
    row(
        format!("90/5/5 mix, in-cache table: {p} threads over 1"),
        format!(">= {}x", f2(0.6 * p as f64)),
        m,
        0.6 * p as f64,
    );
    let ratio = match (
        find(points, mix, ours, p),
        find(points, mix, "atomic-cuckoo-filter", p),
    ) {
        (Some(a), Some(b)) => Some((mops(a) / mops(b), cpu_mops(a, cpus) / cpu_mops(b, cpus))),
        _ => None,
    };
    row(
        format!("90/5/5 mix at {p} threads: concurrent-cuckoo over atomic-cuckoo-filter"),
        ">= 4x".into(),
        ratio,
        4.0,
    );
    // No thread count up to 2P where adding threads lowers throughput.
    let mut drops = Vec::new();
    for section in sections(points) {
        let series: Vec<&Point> = points
            .iter()
            .filter(|x| x.section == section && x.filter == ours && x.threads <= 2 * p)
            .collect();
        for w in series.windows(2) {
            for (clock, rate) in [
                ("wall clock", mops(w[0]), mops(w[1])),
                (
                    "at the CPU time got",
                    cpu_mops(w[0], cpus),
                    cpu_mops(w[1], cpus),
                ),
            ]
            .map(|(c, a, b)| (c, (a, b)))
            {
                let (a, b) = rate;
                if b < a * 0.97 {
                    drops.push(format!(
                        "{section}, {clock}: {} -> {} threads, {} -> {} M ops/s",
                        w[0].threads,
                        w[1].threads,
                        f1(a),
                        f1(b)
                    ));
                }
            }
        }
    }
    let mut out = format!(
        "### Goals (P = {p} physical cores{})\n\n",
        if plan.physical.is_none() {
            ", topology unknown: logical CPUs"
        } else {
            ""
        }
    );
    out += &t.render();
    out += &format!(
        "\nThread counts where adding threads lowered concurrent-cuckoo's total by more than 3% (up to 2 x P = {}): {}\n",
        2 * p,
        if drops.is_empty() { "none".to_string() } else { format!("\n\n- {}\n", drops.join("\n- ")) }
    );
    out
}

pub fn report(plan: &Plan, points: &[Point], opts: &Options, load: &str) -> String {
    let pinned = points.iter().all(|p| p.run.pinned);
    let mut out = format!(
        "## Scaling: throughput against threads\n\n`cargo run --release -p cuckoo-harness -- scaling{}`: \
         threads {:?}, each pinned to one CPU ({}), {} run(s) of {:.2} s per point, round-robin over the thread counts, the best kept; tables: in cache \
         {}, big {}, fill {} (16-bit fingerprints; `cuckoofilter`'s 8-bit table has the same slots in \
         half the bytes), filled to 90%.\n\n### Machine\n\n{}- CPUs this process may use: {:?} \
         ({} physical cores{}); L2 {}, L3 {} (as the guest reports them)\n- load average just before \
         the sweep: {load}\n\n",
        if opts.quick { " --quick" } else { "" },
        plan.threads,
        if pinned { "pinned: yes" } else { "pinning FAILED or unsupported: threads ran unpinned" },
        plan.reps,
        plan.dur.as_secs_f64(),
        super::mib(plan.cache_slots),
        super::mib(plan.big_slots),
        super::mib(plan.fill_slots),
        machine(),
        plan.cpus,
        plan.physical.map_or("unknown".into(), |c| c.to_string()),
        match plan.physical {
            Some(c) if c < plan.cpus.len() => ", so some CPUs are hyperthreads",
            Some(_) => ", no hyperthreads",
            None => "",
        },
        cache_line(2),
        cache_line(3),
    );
    out += &goals(plan, points);
    out += "\n### Results\n\nM ops/s: operations of the measured threads per second, wall clock (a lookup in a burst counts one; a fill counts keys), the best run; all runs: every run's, ascending (the spread is the machine's noise). Speed-up: over one thread of the same section and filter. Efficiency: speed-up / threads. Retries and locked fallbacks: concurrent-cuckoo's failed optimistic lookup attempts and lookups finished under the stripe locks, per million lookups. CPU share: CPU time the threads got over wall time x min(threads, CPUs); below 1.00 means other processes or waiting (locks, sleep) took the rest. M ops/s at the CPU time got: operations over the measured threads' CPU time / min(threads, CPUs), the rate with those CPUs to itself (stalls on memory and on lines other cores hold are CPU time, so contention between the threads still counts; it flatters a lock whose waiters sleep); its speed-up is over one thread's.\n";
    let cpus = plan.cpus.len();
    for section in sections(points) {
        let rows: Vec<&Point> = points.iter().filter(|p| p.section == section).collect();
        let writers = rows.iter().any(|p| p.writers > 0);
        let mut head = vec![
            "filter",
            "threads",
            "M ops/s",
            "all runs",
            "speed-up",
            "efficiency",
            "retries / M lookups",
            "locked / M lookups",
            "CPU share",
            "M ops/s at the CPU time got",
            "its speed-up",
        ];
        if writers {
            head.push("writers' M keys/s");
        }
        let mut t = Table::new(&head);
        for p in rows {
            let s = speedup(points, p);
            let mut cells = vec![
                p.filter.to_string(),
                p.threads.to_string(),
                f1(mops(p)),
                spread(&p.rates),
                f2(s),
                f2(s / p.threads as f64),
                per_million(p.retries, p.lookups, p.filter),
                per_million(p.locked, p.lookups, p.filter),
                f2(cpu_share(p, cpus)),
                f1(cpu_mops(p, cpus)),
                f2(cpu_speedup(points, p, cpus)),
            ];
            if writers {
                cells.push(f1(p.run.writers.ops as f64 / p.run.secs / 1e6));
            }
            t.row(cells);
        }
        out += &format!("\n#### {section}\n\n{}", t.render());
    }
    out
}

/// The SVG plots, into `dir`; the markdown that shows them.
pub fn plots(plan: &Plan, points: &[Point], dir: &str) -> String {
    let ours = "concurrent-cuckoo";
    let series_of = |section: &str, filter: &str, y: &dyn Fn(&Point) -> f64| -> Vec<(f64, f64)> {
        points
            .iter()
            .filter(|p| p.section.starts_with(section) && p.filter == filter)
            .map(|p| (p.threads as f64, y(p)))
            .collect()
    };
    let cores = plan.cpus.len();
    let max_t = plan.threads.iter().copied().max().unwrap_or(1) as f64;
    let mut speed = vec![Series::new(
        "ideal (up to the CPUs)",
        vec![
            (1.0, 1.0),
            (cores as f64, cores as f64),
            (max_t, cores as f64),
        ],
    )];
    let sp = |p: &Point| speedup(points, p);
    for (label, section) in [
        (
            "contains_batch, absent, in cache",
            "read-only contains_batch (32), absent keys, in cache",
        ),
        (
            "contains, absent, in cache",
            "read-only contains, absent keys, in cache",
        ),
        (
            "contains_batch, absent, big table",
            "read-only contains_batch (32), absent keys, 1",
        ),
        (
            "90/5/5, in cache",
            "mix 90/5/5 (lookups of keys half present), in cache",
        ),
        (
            "50/25/25, in cache",
            "mix 50/25/25 (lookups of keys half present), in cache",
        ),
        (
            "readers beside 1 bulk writer",
            "readers (contains, keys half present) beside 1 ",
        ),
        ("bulk fill (insert_batch)", "bulk fill"),
    ] {
        let pts = series_of(section, ours, &sp);
        if !pts.is_empty() {
            speed.push(Series::new(label, pts));
        }
    }
    let mut peers = Vec::new();
    for filter in [
        "concurrent-cuckoo",
        "atomic-cuckoo-filter",
        "Mutex<cuckoofilter>",
    ] {
        for (label, section) in [
            (
                "90/5/5",
                "mix 90/5/5 (lookups of keys half present), in cache",
            ),
            (
                "contains, absent",
                "read-only contains, absent keys, in cache",
            ),
        ] {
            let pts = series_of(section, filter, &mops);
            if !pts.is_empty() {
                peers.push(Series::new(&format!("{filter}: {label}"), pts));
            }
        }
    }
    let mut out = String::from("\n### Plots\n\n");
    for (file, title, y, series) in [
        (
            "scaling-speedup.svg",
            format!("concurrent-cuckoo: speed-up over one thread ({cores} CPUs)"),
            "speed-up",
            &speed,
        ),
        (
            "scaling-peers.svg",
            format!("M ops/s against threads, in-cache table ({cores} CPUs)"),
            "M ops/s",
            &peers,
        ),
    ] {
        let path = format!("{dir}/{file}");
        match lines(&path, &title, "threads", y, series) {
            Ok(()) => {
                eprintln!("wrote {path}");
                out += &format!("![{title}]({file})\n\n");
            }
            Err(e) => out += &format!("(plot {path} failed: {e})\n\n"),
        }
    }
    out
}
