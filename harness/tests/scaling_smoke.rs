//! CI's smoke run of the thread sweep (`cuckoo-harness scaling`): tiny
//! tables, a few milliseconds per point, so it takes seconds. It checks
//! that every part runs on every filter and thread count and that the
//! report and plots come out; it asserts no throughput (performance is
//! measured, never asserted in a test).

use std::process::Command;

#[test]
fn the_scaling_sweep_runs_every_part_and_writes_its_report_and_plots() {
    let dir = std::env::temp_dir().join(format!("scaling-smoke-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cuckoo-harness"))
        .args(["scaling", "--quick", "--seconds", "0.01"])
        .args(["--cache-mib", "1", "--big-mib", "2", "--fill-mib", "1"])
        .arg("--svg-dir")
        .arg(&dir)
        .output()
        .expect("run cuckoo-harness");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "scaling failed: {stderr}");
    let report = String::from_utf8(out.stdout).unwrap();

    // The default thread counts: 1, 2, 4, ... up to the CPUs, then 2x.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut threads: Vec<usize> = (0..).map(|i| 1 << i).take_while(|&t| t < cpus).collect();
    threads.extend([cpus, 2 * cpus]);
    for section in [
        "read-only contains_batch (32), absent keys, in cache (1 MiB)",
        "read-only contains_batch (32), present keys, 2 MiB table",
        "read-only contains, absent keys, in cache (1 MiB)",
        "mix 90/5/5 (lookups of keys half present), in cache (1 MiB)",
        "mix 50/25/25 (lookups of keys half present), 2 MiB table",
        "readers (contains, keys half present) beside 2 bulk writers, in cache (1 MiB)",
        "bulk fill to 90% (1 MiB; concurrent-cuckoo: insert_batch of 65536 keys)",
        "bulk fill to 90% (1 MiB; concurrent-cuckoo: insert_batch of 256 keys)",
    ] {
        let heading = format!("#### {section}\n");
        let at = report
            .find(&heading)
            .unwrap_or_else(|| panic!("no section {section:?} in:\n{report}"));
        let table = report[at + heading.len()..]
            .trim_start()
            .split("\n\n")
            .next()
            .unwrap();
        for t in &threads {
            assert!(
                table.contains(&format!("| concurrent-cuckoo | {t} | ")),
                "{section}: no row for {t} threads in:\n{table}"
            );
        }
        // Every measured rate is a positive number.
        for line in table.lines().skip(2) {
            let rate: f64 = line.split('|').nth(3).unwrap().trim().parse().unwrap();
            assert!(rate > 0.0, "{section}: {line}");
        }
    }
    for peer in ["atomic-cuckoo-filter", "Mutex<cuckoofilter>"] {
        assert!(
            report.contains(&format!("| {peer} | {} | ", 2 * cpus)),
            "{peer} missing"
        );
    }
    assert!(report.contains("### Goals"));
    for svg in ["scaling-speedup.svg", "scaling-peers.svg"] {
        let text = std::fs::read_to_string(dir.join(svg)).expect(svg);
        assert!(
            text.starts_with("<svg") && text.contains("<polyline"),
            "{svg}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
