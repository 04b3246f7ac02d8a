//! `ccf build`, `ccf query` and `ccf info` on generated files: lines, CSV,
//! TSV, gzip and stdin; every built item is found; the exit statuses.

mod common;
use common::{ccf, lines};
use flate2::write::GzEncoder;
use predicates::prelude::*;
use std::io::Write;

fn query_all_present(dir: &std::path::Path, filter: &str, items: &str) {
    let out = ccf(dir)
        .args(["query", filter, "--show", "count"])
        .write_stdin(items)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let n = items.lines().count();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        format!("present\t{n}\nabsent\t0\n")
    );
}

#[test]
fn lines_every_item_found_and_absent_ones_answered() {
    let dir = tempfile::tempdir().unwrap();
    let items = lines("url", 200_000);
    std::fs::write(dir.path().join("in.txt"), &items).unwrap();
    ccf(dir.path())
        .args(["build", "in.txt", "--capacity", "200k", "-o", "f.ccf"])
        .assert()
        .success()
        .stderr(predicate::str::contains("items read     200,000"));
    query_all_present(dir.path(), "f.ccf", &items);
    // Absent items: 0 and exit status 1 (as grep); a few false positives at most.
    let absent = lines("other", 10_000);
    let out = ccf(dir.path())
        .args(["query", "f.ccf", "--show", "hits"])
        .write_stdin(absent.clone())
        .assert()
        .code(predicate::in_iter([0, 1]))
        .get_output()
        .stdout
        .clone();
    assert!(out.iter().filter(|&&b| b == b'\n').count() < 20);
    ccf(dir.path())
        .args(["query", "f.ccf", "url:7", "nope"])
        .assert()
        .code(1)
        .stdout("url:7\t1\nnope\t0\n");
    ccf(dir.path())
        .args(["query", "f.ccf", "url:7", "url:199999"])
        .assert()
        .code(0)
        .stdout("url:7\t1\nurl:199999\t1\n");
    ccf(dir.path())
        .args(["query", "-q", "f.ccf", "nope"])
        .assert()
        .code(1)
        .stdout("");
    ccf(dir.path())
        .args([
            "query",
            "--no-mmap",
            "f.ccf",
            "--show",
            "misses",
            "url:1",
            "nope",
        ])
        .assert()
        .code(1)
        .stdout("nope\n");
}

#[test]
fn crlf_and_empty_lines_and_a_last_line_without_newline() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.txt"), "a\r\n\r\n\nb\nc").unwrap();
    ccf(dir.path())
        .args(["build", "in.txt", "--capacity", "100", "-o", "f.ccf"])
        .assert()
        .success()
        .stderr(predicate::str::contains("items read     3\n"));
    ccf(dir.path())
        .args(["query", "f.ccf", "a", "b", "c"])
        .assert()
        .success();
}

#[test]
fn gzip_stdin_several_inputs_and_threads() {
    let dir = tempfile::tempdir().unwrap();
    let first = lines("gz", 50_000);
    let mut gz = GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(first.as_bytes()).unwrap();
    std::fs::write(dir.path().join("a.txt.gz"), gz.finish().unwrap()).unwrap();
    let second = lines("stdin", 50_000);
    ccf(dir.path())
        .args([
            "build",
            "a.txt.gz",
            "-",
            "--capacity",
            "100000",
            "--threads",
            "3",
        ])
        .args(["-o", "f.ccf"])
        .write_stdin(second.clone())
        .assert()
        .success()
        .stderr(predicate::str::contains("items read     100,000"));
    query_all_present(dir.path(), "f.ccf", &first);
    query_all_present(dir.path(), "f.ccf", &second);
}

#[test]
fn csv_and_tsv_columns() {
    let dir = tempfile::tempdir().unwrap();
    // Quoted fields with the delimiter, a quote and a line end inside.
    let csv =
        "id,email,note\n1,a@x.org,plain\n2,\"b,c@x.org\",\"say \"\"hi\"\"\"\n3,\"multi\nline\",x\n";
    std::fs::write(dir.path().join("u.csv"), csv).unwrap();
    ccf(dir.path())
        .args([
            "build",
            "u.csv",
            "--column",
            "email",
            "--capacity",
            "100",
            "-o",
            "e.ccf",
        ])
        .assert()
        .success()
        .stderr(predicate::str::contains("items read     3\n"));
    ccf(dir.path())
        .args(["query", "e.ccf", "a@x.org", "b,c@x.org", "multi\nline"])
        .assert()
        .success();
    ccf(dir.path())
        .args(["query", "e.ccf", "email"])
        .assert()
        .code(1);
    ccf(dir.path())
        .args([
            "build",
            "u.csv",
            "--column",
            "3",
            "--header",
            "--capacity",
            "100",
            "-o",
            "n.ccf",
        ])
        .assert()
        .success();
    ccf(dir.path())
        .args(["query", "n.ccf", "plain", "say \"hi\"", "x"])
        .assert()
        .success();
    let tsv: String = (0..1000).map(|i| format!("{i}\tkey-{i}\tz\n")).collect();
    let mut gz = GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(tsv.as_bytes()).unwrap();
    std::fs::write(dir.path().join("t.tsv.gz"), gz.finish().unwrap()).unwrap();
    ccf(dir.path())
        .args([
            "build",
            "t.tsv.gz",
            "--column",
            "2",
            "--capacity",
            "1000",
            "-o",
            "t.ccf",
        ])
        .assert()
        .success();
    let keys: String = (0..1000).map(|i| format!("key-{i}\n")).collect();
    query_all_present(dir.path(), "t.ccf", &keys);
}

#[test]
fn growing_filter_and_info_json() {
    let dir = tempfile::tempdir().unwrap();
    let items = lines("g", 30_000);
    std::fs::write(dir.path().join("in.txt"), &items).unwrap();
    ccf(dir.path())
        .args([
            "build",
            "in.txt",
            "--grow",
            "--capacity",
            "1000",
            "-o",
            "g.ccf",
        ])
        .assert()
        .success();
    query_all_present(dir.path(), "g.ccf", &items);
    let json = ccf(dir.path())
        .args(["info", "--json", "g.ccf"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(v["kind"], "growing");
    assert_eq!(v["format_version"], 3);
    assert_eq!(v["items"], 30_000);
    assert_eq!(v["checksum_ok"], true);
    assert!(v["levels"].as_u64().unwrap() > 1);
    let levels = v["level_details"].as_array().unwrap();
    assert_eq!(levels.len() as u64, v["levels"].as_u64().unwrap());
    let sum: u64 = levels.iter().map(|l| l["items"].as_u64().unwrap()).sum();
    assert_eq!(sum, 30_000);
    assert!(v["false_positive_bound"].as_f64().unwrap() > 0.0);

    ccf(dir.path())
        .args([
            "build",
            "in.txt",
            "--capacity",
            "40000",
            "--fingerprint-bits",
            "32",
        ])
        .args(["--seed", "7", "-o", "f.ccf"])
        .assert()
        .success();
    let json = ccf(dir.path())
        .args(["info", "--json", "f.ccf"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let file_len = std::fs::metadata(dir.path().join("f.ccf")).unwrap().len();
    assert_eq!(v["kind"], "fixed");
    assert_eq!(v["format_version"], 2);
    assert_eq!(v["items"], 30_000);
    assert_eq!(v["fingerprint_bits"], 32);
    assert_eq!(v["levels"], 1);
    assert_eq!(v["file_bytes"], file_len);
    let capacity = v["capacity"].as_u64().unwrap();
    assert!(capacity >= 40_000);
    let load = v["load_factor"].as_f64().unwrap();
    assert!((load - 30_000.0 / capacity as f64).abs() < 1e-9);
    assert_eq!(
        v["false_positive_bound"].as_f64().unwrap(),
        8.0 / 2f64.powi(32)
    );
    ccf(dir.path())
        .args(["info", "f.ccf"])
        .assert()
        .success()
        .stdout(predicate::str::contains("checksum              ok"))
        .stdout(predicate::str::contains("items                 30,000"));
}

#[test]
fn same_seed_one_thread_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.txt"), lines("s", 5000)).unwrap();
    for out in ["a.ccf", "b.ccf"] {
        ccf(dir.path())
            .args([
                "build",
                "in.txt",
                "--capacity",
                "5000",
                "--seed",
                "42",
                "--threads",
                "1",
            ])
            .args(["-o", out, "-q"])
            .assert()
            .success()
            .stdout("");
    }
    let a = std::fs::read(dir.path().join("a.ccf")).unwrap();
    assert_eq!(a, std::fs::read(dir.path().join("b.ccf")).unwrap());
}

#[test]
fn unique_counts_duplicates_and_multiset_refuses_past_the_copy_limit() {
    let dir = tempfile::tempdir().unwrap();
    let mut items = lines("u", 100);
    for _ in 0..20 {
        items.push_str("dup\n");
    }
    std::fs::write(dir.path().join("in.txt"), &items).unwrap();
    ccf(dir.path())
        .args([
            "build",
            "in.txt",
            "--capacity",
            "1000",
            "--unique",
            "-o",
            "u.ccf",
        ])
        .assert()
        .success()
        .stderr(predicate::str::contains("stored         101 "))
        .stderr(predicate::str::contains("duplicates     19 "));
    ccf(dir.path())
        .args(["build", "in.txt", "--capacity", "1000", "-o", "m.ccf"])
        .assert()
        .success()
        .stderr(predicate::str::contains("stored         108 "))
        .stderr(predicate::str::contains("refused        12 "));
    ccf(dir.path())
        .args(["query", "m.ccf", "dup", "u:99"])
        .assert()
        .success();
}

#[test]
fn help_for_every_subcommand_has_examples() {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["build", "info", "query", "push", "pull"] {
        ccf(dir.path())
            .args([sub, "--help"])
            .assert()
            .success()
            .stdout(predicate::str::contains("Examples:"));
    }
}

/// Without `--capacity`, regular files are sized by counting their lines
/// first (said on stderr); stdin and gzip still need a size.
#[test]
fn capacity_is_counted_from_regular_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let items = lines("c", 5000);
    std::fs::write(d.join("a.txt"), &items).unwrap();
    std::fs::write(d.join("b.txt"), "last line without newline").unwrap();
    ccf(d)
        .args(["build", "a.txt", "b.txt", "-o", "f.ccf"])
        .assert()
        .success()
        .stderr(predicate::str::contains("counted 5,001 lines"));
    query_all_present(d, "f.ccf", &items);
    ccf(d)
        .args(["query", "f.ccf", "last line without newline"])
        .assert()
        .code(0);
    ccf(d)
        .args(["build", "-", "-o", "g.ccf"])
        .write_stdin(items.clone())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--capacity"));
    let mut gz = GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(items.as_bytes()).unwrap();
    std::fs::write(d.join("a.txt.gz"), gz.finish().unwrap()).unwrap();
    ccf(d)
        .args(["build", "a.txt.gz", "-o", "g.ccf"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("uncompressed"));
}
