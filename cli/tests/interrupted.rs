//! A pull that is cut off, by the server (a closed connection) or by the
//! user (Ctrl-C), leaves the old file and no temporary file behind.
//!
//! The "server" is a fake on loopback that answers the commands `ccf pull`
//! sends, gives the first chunk of a dump (a valid start of an encoding),
//! and then closes the connection or stops answering.

mod common;
use common::ccf;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

/// Reads one RESP array of bulk strings (a command).
fn command(input: &mut BufReader<TcpStream>) -> Option<Vec<Vec<u8>>> {
    let mut line = String::new();
    if input.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let n: usize = line.trim_end().strip_prefix('*')?.parse().ok()?;
    let mut args = Vec::with_capacity(n);
    for _ in 0..n {
        line.clear();
        input.read_line(&mut line).ok()?;
        let len: usize = line.trim_end().strip_prefix('$')?.parse().ok()?;
        let mut arg = vec![0u8; len + 2];
        std::io::Read::read_exact(input, &mut arg).ok()?;
        arg.truncate(len);
        args.push(arg);
    }
    Some(args)
}

/// Serves one connection: the first `CF.SCANDUMP` gets a chunk, the
/// second is answered by closing (`close`) or never.
fn fake_server(close: bool) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut out = stream.try_clone().unwrap();
        let mut input = BufReader::new(stream);
        // The magic and version 2 of a fixed filter's header: a start the
        // decoder accepts.
        let chunk = b"\x89CUCKOO\n\x02\x00";
        while let Some(args) = command(&mut input) {
            let name = String::from_utf8_lossy(&args[0]).to_ascii_uppercase();
            let reply: Vec<u8> = match (name.as_str(), args.get(2).map(Vec::as_slice)) {
                ("COMMAND", _) => b"*1\r\n*1\r\n$11\r\ncf.scandump\r\n".to_vec(),
                ("CF.SCANDUMP", Some(b"0")) => {
                    let mut r =
                        format!("*2\r\n:{}\r\n${}\r\n", chunk.len() + 1, chunk.len()).into_bytes();
                    r.extend_from_slice(chunk);
                    r.extend_from_slice(b"\r\n");
                    r
                }
                ("CF.SCANDUMP", _) if close => return,
                ("CF.SCANDUMP", _) => {
                    std::thread::sleep(Duration::from_secs(120));
                    return;
                }
                _ => b"+OK\r\n".to_vec(),
            };
            out.write_all(&reply).unwrap();
        }
    });
    port
}

fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("ccf-tmp"))
        .collect()
}

#[test]
fn a_connection_closed_mid_dump() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("out.ccf"), b"old").unwrap();
    let port = fake_server(true);
    let url = format!("redis://127.0.0.1:{port}");
    let out = ccf(dir.path())
        .args(["pull", &url, "k", "out.ccf"])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let stderr = String::from_utf8(out).unwrap();
    assert!(stderr.starts_with("ccf: error: CF.SCANDUMP"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert_eq!(std::fs::read(dir.path().join("out.ccf")).unwrap(), b"old");
    assert!(temp_files(dir.path()).is_empty());
}

#[cfg(unix)]
#[test]
fn ctrl_c_mid_dump() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("out.ccf"), b"old").unwrap();
    let port = fake_server(false);
    let url = format!("redis://127.0.0.1:{port}");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_ccf"))
        .current_dir(dir.path())
        .args(["pull", &url, "k", "out.ccf", "-q"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the pull has its temporary file (it got the first chunk).
    let deadline = Instant::now() + Duration::from_secs(30);
    while temp_files(dir.path()).is_empty() {
        assert!(Instant::now() < deadline, "the pull never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(100));
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    // 128 + SIGINT, as the shell reports a command ended by Ctrl-C.
    assert_eq!(output.status.code(), Some(130));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(
        stderr,
        "ccf: error: interrupted: existing files and keys were left as they were\n"
    );
    assert_eq!(std::fs::read(dir.path().join("out.ccf")).unwrap(), b"old");
    assert!(
        temp_files(dir.path()).is_empty(),
        "{:?}",
        temp_files(dir.path())
    );
}
