//! Bad input never panics: each case is one line on stderr, exit status 2,
//! and an existing output file left as it was.

mod common;
use common::{ccf, lines};
use predicates::prelude::*;
use std::path::Path;

const OLD: &[u8] = b"the previous output";

/// Runs `ccf args` in `dir`, expecting one error line naming `expected`,
/// status 2, no panic, and `out.ccf` unchanged.
fn fails(dir: &Path, args: &[&str], stdin: &str, expected: &str) {
    std::fs::write(dir.join("out.ccf"), OLD).unwrap();
    let output = ccf(dir)
        .args(args)
        .write_stdin(stdin)
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with("ccf: error: "))
        .stderr(predicate::str::contains(expected))
        .get_output()
        .clone();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(std::fs::read(dir.join("out.ccf")).unwrap(), OLD, "{args:?}");
    let leftovers: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("ccf-tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

fn good_filter(dir: &Path) -> Vec<u8> {
    std::fs::write(dir.join("in.txt"), lines("k", 10_000)).unwrap();
    ccf(dir)
        .args([
            "build",
            "in.txt",
            "--capacity",
            "10000",
            "-q",
            "-o",
            "good.ccf",
        ])
        .assert()
        .success();
    std::fs::read(dir.join("good.ccf")).unwrap()
}

/// `build EXTRA... -o out.ccf`.
fn build<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["build"];
    a.extend_from_slice(extra);
    a.extend_from_slice(&["-o", "out.ccf"]);
    a
}

#[test]
fn build_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("in.txt"), lines("k", 10_000)).unwrap();
    std::fs::create_dir(d.join("adir")).unwrap();
    fails(
        d,
        &build(&["missing.txt", "--capacity", "10"]),
        "",
        "cannot open missing.txt",
    );
    fails(
        d,
        &build(&["adir", "--capacity", "10"]),
        "",
        "adir is a directory",
    );
    // No size, and stdin's lines cannot be counted before they are read.
    fails(d, &build(&["-"]), "k:1\n", "--capacity N");
    // Full: says how many went in; nothing is written.
    fails(
        d,
        &build(&["in.txt", "--capacity", "1000"]),
        "",
        "the filter is full: ",
    );
    fails(
        d,
        &build(&["in.txt", "--capacity", "1000", "--unique"]),
        "",
        "items went in",
    );
    // A line over the limit, in the middle of a file and at its end.
    let long = format!("a\n{}\nb\n", "x".repeat(5000));
    std::fs::write(d.join("long.txt"), &long).unwrap();
    fails(
        d,
        &build(&["long.txt", "--capacity", "10", "--max-line", "4096"]),
        "",
        "longer than 4096 bytes",
    );
    fails(
        d,
        &build(&["-", "--capacity", "10", "--max-line", "100"]),
        &"y".repeat(10_000),
        "longer than 100 bytes",
    );
    // Not gzip after all: a corrupt .gz.
    std::fs::write(
        d.join("bad.gz"),
        [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3],
    )
    .unwrap();
    fails(
        d,
        &build(&["bad.gz", "--capacity", "10"]),
        "",
        "cannot read bad.gz",
    );
    // CSV: a missing column, a header without the name.
    std::fs::write(d.join("c.csv"), "a,b\n1,2\n3\n").unwrap();
    fails(
        d,
        &build(&["c.csv", "--column", "2", "--capacity", "10"]),
        "",
        "no column 2",
    );
    fails(
        d,
        &build(&["c.csv", "--column", "zz", "--capacity", "10"]),
        "",
        "no column \"zz\"",
    );
    fails(
        d,
        &build(&["c.csv", "--column", "0", "--capacity", "10"]),
        "",
        "start at 1",
    );
    // Bad settings.
    fails(
        d,
        &build(&["in.txt", "--capacity", "10", "--error-rate", "2"]),
        "",
        "cannot make the filter",
    );
    fails(
        d,
        &build(&["in.txt", "--capacity", "10", "--threads", "0"]),
        "",
        "--threads",
    );
    // An output directory that does not exist.
    let out = ccf(d)
        .args([
            "build",
            "in.txt",
            "--capacity",
            "20000",
            "-o",
            "no/such/dir/f.ccf",
        ])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    assert!(String::from_utf8(out)
        .unwrap()
        .starts_with("ccf: error: cannot create a file in no/such/dir"));
}

#[test]
fn damaged_filter_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = good_filter(d);
    let mut flipped = good.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x40;
    std::fs::write(d.join("flipped.ccf"), &flipped).unwrap();
    std::fs::write(d.join("short.ccf"), &good[..good.len() - 100]).unwrap();
    std::fs::write(d.join("header.ccf"), &good[..6]).unwrap();
    std::fs::write(d.join("text.ccf"), "hello, world\n").unwrap();
    std::fs::write(d.join("empty.ccf"), "").unwrap();
    let mut long = good.clone();
    long.extend_from_slice(b"junk");
    std::fs::write(d.join("long.ccf"), &long).unwrap();
    for (file, expected) in [
        ("flipped.ccf", "checksum mismatch"),
        ("short.ccf", "truncated"),
        ("header.ccf", "truncated"),
        ("text.ccf", "bad magic"),
        ("empty.ccf", "truncated"),
        ("long.ccf", "trailing bytes"),
        ("missing.ccf", "cannot open missing.ccf"),
    ] {
        fails(d, &["info", file], "", expected);
        fails(d, &["info", "--json", file], "", expected);
        fails(d, &["query", file, "k:1"], "", expected);
        fails(d, &["query", "--no-mmap", file, "k:1"], "", expected);
        // push checks the file before it connects (port 9 is discard: no server).
        fails(d, &["push", file, "redis://127.0.0.1:9", "k"], "", expected);
    }
    // A growing filter, damaged.
    ccf(d)
        .args([
            "build",
            "in.txt",
            "--grow",
            "--capacity",
            "500",
            "-q",
            "-o",
            "g.ccf",
        ])
        .assert()
        .success();
    let mut g = std::fs::read(d.join("g.ccf")).unwrap();
    let at = g.len() - 20;
    g[at] ^= 1;
    std::fs::write(d.join("g-bad.ccf"), &g).unwrap();
    fails(d, &["info", "g-bad.ccf"], "", "checksum mismatch");
    fails(d, &["query", "g-bad.ccf", "k:1"], "", "checksum mismatch");
    fails(
        d,
        &["push", "g-bad.ccf", "redis://127.0.0.1:9", "k"],
        "",
        "checksum mismatch",
    );
}

#[test]
fn servers_that_are_not_there() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    good_filter(d);
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    }; // closed again: nothing listens there
    let url = format!("redis://127.0.0.1:{port}");
    fails(
        d,
        &["push", "good.ccf", &url, "k"],
        "",
        "cannot connect to 127.0.0.1",
    );
    fails(
        d,
        &["pull", &url, "k", "out.ccf"],
        "",
        "cannot connect to 127.0.0.1",
    );
    fails(
        d,
        &["push", "good.ccf", "http://x", "k"],
        "",
        "bad server URL",
    );
    fails(
        d,
        &["pull", "not a url", "k", "out.ccf"],
        "",
        "bad server URL",
    );
}

/// Defect 7: what the redis crate says is one line in the user's words:
/// a port that does not speak RESP, a URL without its scheme, a refused
/// password.
#[test]
fn server_errors_are_one_line_in_plain_words() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    good_filter(d);
    // A server that answers the first request (the client pipelines AUTH
    // and two CLIENT SETINFO) with `reply`, three times, and closes.
    let serve = |reply: &'static [u8]| {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for stream in listener.incoming().take(2) {
                let mut stream = stream.unwrap();
                let mut buf = [0u8; 4096];
                let _ = stream.read(&mut buf);
                let _ = stream.write_all(&reply.repeat(3));
            }
        });
        port
    };
    let http = serve(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
    let url = format!("redis://127.0.0.1:{http}");
    fails(d, &["push", "good.ccf", &url, "k"], "", "does not speak");
    let auth = serve(b"-WRONGPASS invalid username-password pair or user is disabled.\r\n");
    let url = format!("redis://:secret@127.0.0.1:{auth}");
    fails(d, &["push", "good.ccf", &url, "k"], "", "password");
    for args in [
        &["push", "good.ccf", "127.0.0.1:6379", "k"][..],
        &["pull", "127.0.0.1:6379", "k", "out.ccf"][..],
    ] {
        fails(d, args, "", "redis://");
    }
    let output = ccf(d)
        .args(["push", "good.ccf", "127.0.0.1:6379", "k"])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let stderr = String::from_utf8(output).unwrap();
    assert!(!stderr.contains("InvalidClientConfig"), "{stderr}");
}
