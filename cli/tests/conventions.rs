//! The conventions of the shell, as users of command-line tools expect
//! them (issue 33): `-` for stdin and stdout, a broken pipe ends as it
//! does for `grep`, `query` answers as `grep` does, summaries on stderr,
//! and the README's examples do what they say.

mod common;
use common::{ccf, lines};
use predicates::prelude::*;
use std::path::Path;

fn build(dir: &Path, items: &str) {
    std::fs::write(dir.join("in.txt"), items).unwrap();
    ccf(dir)
        .args([
            "build",
            "in.txt",
            "--capacity",
            "10000",
            "-q",
            "-o",
            "f.ccf",
        ])
        .assert()
        .success();
}

/// `-` names stdin or stdout wherever a file is named.
#[test]
fn dash_is_stdin_and_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build(d, &lines("k", 1000));
    let file = std::fs::read(d.join("f.ccf")).unwrap();
    // build -o -: the filter on stdout, the summary on stderr.
    let out = ccf(d)
        .args([
            "build",
            "-",
            "--capacity",
            "10000",
            "--seed",
            "7",
            "-o",
            "-",
        ])
        .write_stdin(lines("k", 1000))
        .assert()
        .success()
        .stderr(predicate::str::contains("items read"))
        .get_output()
        .stdout
        .clone();
    assert_eq!(&out[..8], b"\x89CUCKOO\n");
    // info - and query -: the filter from stdin.
    ccf(d)
        .args(["info", "-"])
        .write_stdin(file.clone())
        .assert()
        .success()
        .stdout(predicate::str::contains("items                 1,000"));
    ccf(d)
        .args(["query", "-", "k:3", "nope"])
        .write_stdin(out)
        .assert()
        .code(1)
        .stdout("k:3\t1\nnope\t0\n");
    // The filter and the items cannot both be stdin.
    ccf(d)
        .args(["query", "-"])
        .write_stdin(file)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("stdin"));
}

/// `ccf query ... | head -1` ends as `grep` does: killed by SIGPIPE,
/// nothing on stderr.
#[cfg(unix)]
#[test]
fn a_broken_pipe_ends_quietly() {
    use std::io::{BufRead, BufReader};
    use std::os::unix::process::ExitStatusExt;
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let items = lines("k", 200_000);
    build(d, &lines("k", 1000));
    std::fs::write(d.join("q.txt"), &items).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ccf"))
        .current_dir(d)
        .args(["query", "f.ccf"])
        .stdin(std::fs::File::open(d.join("q.txt")).unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert_eq!(first, "k:0\t1\n");
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.signal(), Some(libc_sigpipe()), "{output:?}");
    assert!(output.stderr.is_empty(), "{output:?}");
}

#[cfg(unix)]
fn libc_sigpipe() -> i32 {
    13
}

/// `query`: no input is "nothing found" (exit 1, as `grep`); `--show
/// count` is labelled; `--json` is JSON; items may be any bytes.
#[test]
fn query_answers_as_grep_does() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build(d, &lines("k", 1000));
    ccf(d)
        .args(["query", "f.ccf"])
        .write_stdin("")
        .assert()
        .code(1)
        .stdout("");
    ccf(d)
        .args(["query", "f.ccf", "--show", "count"])
        .write_stdin("k:1\nk:2\nnope\n")
        .assert()
        .code(1)
        .stdout("present\t2\nabsent\t1\n");
    let out = ccf(d)
        .args(["query", "f.ccf", "--show", "count", "--json"])
        .write_stdin("k:1\nk:2\nnope\n")
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v, serde_json::json!({"present": 2, "absent": 1}));
    let out = ccf(d)
        .args(["query", "f.ccf", "k:1", "nope", "--json"])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let rows: Vec<serde_json::Value> = out
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    assert_eq!(
        rows,
        [
            serde_json::json!({"item": "k:1", "present": true}),
            serde_json::json!({"item": "nope", "present": false}),
        ]
    );
    // Stdin gzip-compressed, read as build reads it.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, b"k:1\r\n\nk:2\n").unwrap();
    ccf(d)
        .args(["query", "f.ccf", "--show", "count"])
        .write_stdin(gz.finish().unwrap())
        .assert()
        .code(0)
        .stdout("present\t2\nabsent\t0\n");
    // An item that is not UTF-8, as an argument.
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        std::fs::write(d.join("bin.txt"), b"caf\xe9\n").unwrap();
        ccf(d)
            .args(["build", "bin.txt", "--capacity", "10", "-q", "-o", "b.ccf"])
            .assert()
            .success();
        ccf(d)
            .arg("query")
            .arg("b.ccf")
            .arg(std::ffi::OsStr::from_bytes(b"caf\xe9"))
            .assert()
            .code(0)
            .stdout(predicate::eq(&b"caf\xe9\t1\n"[..]));
    }
}

/// `--delimiter '\t'` is a tab; a missing column names the delimiter.
#[test]
fn delimiters_as_typed_in_a_shell() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("t.txt"), "a\tx1\nb\tx2\n").unwrap();
    ccf(d)
        .args(["build", "t.txt", "--column", "2", "--delimiter", "\\t"])
        .args(["--capacity", "10", "-q", "-o", "t.ccf"])
        .assert()
        .success();
    ccf(d).args(["query", "t.ccf", "x1", "x2"]).assert().code(0);
    ccf(d)
        .args(["build", "t.txt", "--column", "3", "--delimiter", ";"])
        .args(["--capacity", "10", "-q", "-o", "t.ccf"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("delimiter ';'"));
}

/// Summaries go to stderr, all of them; `-q` hides them with the bar.
#[test]
fn summaries_are_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("in.txt"), lines("k", 100)).unwrap();
    ccf(d)
        .args(["build", "in.txt", "--capacity", "100", "-o", "f.ccf"])
        .assert()
        .success()
        .stdout("")
        .stderr(predicate::str::contains("items read     100"));
    ccf(d)
        .args(["build", "in.txt", "--capacity", "100", "-q", "-o", "f.ccf"])
        .assert()
        .success()
        .stdout("")
        .stderr("");
}

/// Defect 6: the README's commands (sizes scaled down, no server) do what
/// they say: the `query` example reads its candidates from stdin.
#[cfg(unix)]
#[test]
fn the_readme_examples_work() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("blocklist.txt"), lines("bad", 1000)).unwrap();
    std::fs::write(d.join("candidates.txt"), "bad:1\nbad:2\ngood.example\n").unwrap();
    let readme = include_str!("../README.md");
    let block = readme.split("```sh\n").nth(1).unwrap();
    let block = block.split("```").next().unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_ccf")).parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let mut queried = false;
    for line in block.lines().filter(|l| l.starts_with("ccf ")) {
        if line.starts_with("ccf push") || line.starts_with("ccf pull") {
            continue;
        }
        let line = line.replace("--capacity 100M", "--capacity 1000");
        let output = std::process::Command::new("sh")
            .current_dir(d)
            .env("PATH", &path)
            .arg("-c")
            .arg(&line)
            .output()
            .unwrap();
        assert!(
            output.status.code() == Some(0) || output.status.code() == Some(1),
            "{line}: {output:?}"
        );
        if line.starts_with("ccf query") && line.contains("--show count") {
            queried = true;
            let text = String::from_utf8(output.stdout).unwrap();
            assert_eq!(text, "present\t2\nabsent\t1\n", "{line}");
        }
    }
    assert!(queried);
}

/// `ccf completions SHELL` and `ccf man` come from the command line's own
/// definition.
#[test]
fn completions_and_man_page() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (shell, marker) in [
        ("bash", "_ccf()"),
        ("zsh", "#compdef ccf"),
        ("fish", "complete -c ccf"),
    ] {
        ccf(d)
            .args(["completions", shell])
            .assert()
            .success()
            .stdout(predicate::str::contains(marker))
            .stdout(predicate::str::contains("capacity"));
    }
    ccf(d)
        .arg("man")
        .assert()
        .success()
        .stdout(predicate::str::contains(".TH ccf 1"))
        .stdout(predicate::str::contains("completions"));
}

/// `-v` says the plan before the work; it cannot be combined with `-q`.
#[test]
fn verbose_says_the_plan() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("in.txt"), lines("k", 100)).unwrap();
    ccf(d)
        .args([
            "build",
            "in.txt",
            "--capacity",
            "100",
            "--threads",
            "3",
            "-v",
        ])
        .args(["-o", "f.ccf"])
        .assert()
        .success()
        .stderr(predicate::str::contains("building f.ccf from 1 input(s) ("))
        .stderr(predicate::str::contains(
            "3 insert thread(s), at most 6 batches",
        ));
    ccf(d)
        .args([
            "build",
            "in.txt",
            "--capacity",
            "100",
            "-v",
            "-q",
            "-o",
            "f.ccf",
        ])
        .assert()
        .code(2);
}
