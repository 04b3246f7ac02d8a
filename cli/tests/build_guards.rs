//! `ccf build` as a new user meets it (issue 33): it never hangs, never
//! overwrites its input, reads lines as `query` does, fails before the
//! work rather than after it, and says what to do about a full or empty
//! filter. Every test is bounded: a child that hangs is killed and fails.

mod common;
use common::{ccf, lines, run_stdin_open, temp_files};
use predicates::prelude::*;

/// The one error line of a failed run.
fn one_error_line(output: &std::process::Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("ccf: error: "), "{stderr}");
    stderr
}

/// Defect 1: the filter fills while the reader still has batches to hand
/// out; the reader used to block forever on the full channel.
#[test]
fn a_filter_that_fills_while_reading_ends_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // About 20 MiB: five 4 MiB batches, more than one thread and its queue hold.
    let items: String = (0..2_500_000).map(|i| format!("{i:07}\n")).collect();
    std::fs::write(d.join("s.txt"), items).unwrap();
    for threads in ["1", "2"] {
        let args = [
            "build",
            "s.txt",
            "--capacity",
            "300k",
            "--threads",
            threads,
            "-q",
            "-o",
            "x.ccf",
        ];
        let output = run_stdin_open(d, &args, 60).expect("ccf build hung on a full filter");
        let stderr = one_error_line(&output);
        assert!(stderr.contains("the filter is full"), "{stderr}");
        assert!(!d.join("x.ccf").exists());
        assert!(temp_files(d).is_empty(), "{:?}", temp_files(d));
    }
}

/// Defect 2: an output that is one of the inputs (same device and inode,
/// whatever the path) is refused, and the input left as it was.
#[test]
fn an_output_that_is_an_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let items = lines("s", 100);
    std::fs::write(d.join("same.txt"), &items).unwrap();
    std::fs::hard_link(d.join("same.txt"), d.join("link.txt")).unwrap();
    for (input, output) in [
        ("same.txt", "same.txt"),
        ("same.txt", "./same.txt"),
        ("link.txt", "same.txt"),
    ] {
        ccf(d)
            .args(["build", input, "--capacity", "100", "-o", output])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("is also an input"));
        assert_eq!(std::fs::read_to_string(d.join("same.txt")).unwrap(), items);
    }
    // A filter file built from itself.
    ccf(d)
        .args([
            "build",
            "same.txt",
            "--capacity",
            "100",
            "-q",
            "-o",
            "b.ccf",
        ])
        .assert()
        .success();
    let filter = std::fs::read(d.join("b.ccf")).unwrap();
    ccf(d)
        .args(["build", "b.ccf", "--capacity", "100", "-o", "b.ccf"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is also an input"));
    assert_eq!(std::fs::read(d.join("b.ccf")).unwrap(), filter);
}

/// Defect 3: `query` reads lines as `build` does (CRLF, blank lines
/// skipped): a filter answers present for its own input.
#[test]
fn query_reads_lines_as_build_does() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = "alpha\r\nbeta\r\n\r\ngamma\r\n\n";
    std::fs::write(d.join("crlf.txt"), input).unwrap();
    ccf(d)
        .args([
            "build",
            "crlf.txt",
            "--capacity",
            "100",
            "-q",
            "-o",
            "f.ccf",
        ])
        .assert()
        .success();
    ccf(d)
        .args(["query", "f.ccf"])
        .write_stdin(input)
        .assert()
        .code(0)
        .stdout("alpha\t1\nbeta\t1\ngamma\t1\n");
}

/// Defect 4 (and the exit status of a signal): Ctrl-C while a build runs
/// removes its temporary output, whichever phase it is in, and exits 130.
#[cfg(unix)]
#[test]
fn ctrl_c_during_a_build_leaves_no_temporary_file() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("out.ccf"), b"old").unwrap();
    for (signal, code) in [("-INT", 130), ("-TERM", 143)] {
        // Stdin stays open: the build waits for more items.
        let mut child = Command::new(env!("CARGO_BIN_EXE_ccf"))
            .current_dir(d)
            .args(["build", "-", "--capacity", "1M", "-q", "-o", "out.ccf"])
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while temp_files(d).is_empty() {
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("the build never created its temporary output");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let status = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(code), "{signal}");
        assert_eq!(
            String::from_utf8(output.stderr).unwrap(),
            "ccf: error: interrupted: existing files and keys were left as they were\n"
        );
        assert_eq!(std::fs::read(d.join("out.ccf")).unwrap(), b"old");
        assert!(temp_files(d).is_empty(), "{:?}", temp_files(d));
    }
}

/// Defect 7: `--threads` is bounded, and a thread the system refuses is
/// one line and exit 2, not a panic.
#[test]
fn threads_are_bounded_and_a_refused_thread_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("in.txt"), lines("t", 100)).unwrap();
    ccf(d)
        .args(["build", "in.txt", "--capacity", "100", "--threads", "5000"])
        .args(["-o", "f.ccf"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--threads"));
    // A thread whose stack (RUST_MIN_STACK: 1.5 GB) does not fit in 1 GB
    // of address space cannot start: the very first spawn fails, while no
    // other thread runs. (Letting 1000 threads of 2 MiB use the space up
    // instead left the threads already started with no memory to run in:
    // now and then one of them died of it, a flaky test.)
    #[cfg(target_os = "linux")]
    {
        let output = std::process::Command::new("sh")
            .current_dir(d)
            .arg("-c")
            .arg(format!(
                "ulimit -v 1000000 && RUST_MIN_STACK=1500000000 exec {} build in.txt --capacity 100 --threads 4 -q -o f.ccf",
                env!("CARGO_BIN_EXE_ccf")
            ))
            .output()
            .unwrap();
        let stderr = one_error_line(&output);
        assert!(stderr.contains("thread"), "{stderr}");
        assert!(!d.join("f.ccf").exists());
    }
}

/// Defect 8: an unwritable output or a missing input is reported before
/// any input is read (stdin stays open here: a late check never comes).
#[test]
fn bad_outputs_and_missing_inputs_fail_before_the_work() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("sub")).unwrap();
    let cases: [(&[&str], &str); 3] = [
        (
            &["build", "-", "--capacity", "100", "-o", "no/such/dir/f.ccf"],
            "no/such/dir",
        ),
        (
            &[
                "build",
                "-",
                "missing.txt",
                "--capacity",
                "100",
                "-o",
                "f.ccf",
            ],
            "missing.txt",
        ),
        (
            &["build", "-", "--capacity", "100", "-o", "sub"],
            "sub is a directory",
        ),
    ];
    for (args, expected) in cases {
        let output = run_stdin_open(d, args, 20)
            .unwrap_or_else(|| panic!("{args:?}: waited for the input before failing"));
        let stderr = one_error_line(&output);
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
    // pull into a directory: refused before connecting (nothing listens).
    ccf(d)
        .args(["pull", "redis://127.0.0.1:9", "k", "sub"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("sub is a directory"));
    assert!(temp_files(d).is_empty());
}

/// Defect 10: a build with no items warns (its file cannot be pushed and
/// pulled back), and a filter filled by repeated items names `--unique`.
#[test]
fn empty_builds_warn_and_duplicates_name_unique() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("empty.txt"), "\n\n").unwrap();
    ccf(d)
        .args(["build", "empty.txt", "--capacity", "1000", "-o", "e.ccf"])
        .assert()
        .success()
        .stderr(predicate::str::contains("warning: no items"))
        .stderr(predicate::str::contains("bytes per stored item").not());
    // 600 items, each 8 times: 4,800 copies in a filter for 1,000.
    let once = lines("dup", 600);
    std::fs::write(d.join("dup.txt"), once.repeat(8)).unwrap();
    ccf(d)
        .args(["build", "dup.txt", "--capacity", "1000", "-o", "d.ccf"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--unique"));
    ccf(d)
        .args(["build", "dup.txt", "--capacity", "1000", "--unique", "-q"])
        .args(["-o", "d.ccf"])
        .assert()
        .success();
}
