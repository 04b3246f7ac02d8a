//! `ccf push` / `ccf pull` against a real redis-server with the module:
//! round trips are byte-identical, the server answers for every built
//! item, and failures leave the key and the output file as they were.
//!
//! Each test starts its own server on loopback. Without `redis-server`
//! they say they are skipped, unless `CCF_REQUIRE_REDIS` is set (as
//! `scripts/test.sh` sets it), when that is a failure.

mod common;
use common::{ccf, lines, start, start_cluster};
use predicates::prelude::*;
use redis::Commands;
use std::path::Path;

fn build(dir: &Path, name: &str, items: &str, extra: &[&str]) -> Vec<u8> {
    std::fs::write(dir.join("items.txt"), items).unwrap();
    ccf(dir)
        .args(["build", "items.txt", "-q", "-o", name])
        .args(extra)
        .assert()
        .success();
    std::fs::read(dir.join(name)).unwrap()
}

/// The key's filter, as `CF.SCANDUMP` gives it.
fn dump(con: &mut redis::Connection, key: &str) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut it = 0i64;
    loop {
        let (next, chunk): (i64, Option<Vec<u8>>) = redis::cmd("CF.SCANDUMP")
            .arg(key)
            .arg(it)
            .query(con)
            .unwrap();
        if next == 0 {
            return bytes;
        }
        bytes.extend_from_slice(&chunk.unwrap());
        it = next;
    }
}

#[test]
fn round_trips_are_byte_identical_and_the_server_answers() {
    let Some(server) = start(true) else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let url = server.url();
    let mut con = server.client();
    // Several MiB: many chunks, several pipelined windows.
    let items = lines("blocked", 3_000_000);
    let fixed = build(
        d,
        "fixed.ccf",
        &items,
        &["--capacity", "3M", "--fingerprint-bits", "32"],
    );
    assert!(fixed.len() > 10 << 20);
    ccf(d)
        .args(["push", "fixed.ccf", &url, "bl"])
        .assert()
        .success()
        .stderr(predicate::str::contains("pushed fixed.ccf"));
    assert_eq!(dump(&mut con, "bl"), fixed);
    for i in (0..3_000_000).step_by(9973) {
        let hit: i64 = redis::cmd("CF.EXISTS")
            .arg("bl")
            .arg(format!("blocked:{i}"))
            .query(&mut con)
            .unwrap();
        assert_eq!(hit, 1, "blocked:{i}");
    }
    let ttl: i64 = con.pttl("bl").unwrap();
    assert_eq!(ttl, -1, "the pushed key keeps no expiry");
    let keys: Vec<String> = con.keys("*").unwrap();
    assert_eq!(keys, ["bl"], "no temporary key is left");
    ccf(d)
        .args(["pull", &url, "bl", "back.ccf"])
        .assert()
        .success();
    assert_eq!(std::fs::read(d.join("back.ccf")).unwrap(), fixed);

    // A growing filter, and a key with a hash tag.
    let grow = build(
        d,
        "grow.ccf",
        &lines("g", 50_000),
        &["--grow", "--capacity", "2000"],
    );
    ccf(d)
        .args(["push", "grow.ccf", &url, "user:{7}:seen"])
        .assert()
        .success();
    assert_eq!(dump(&mut con, "user:{7}:seen"), grow);
    ccf(d)
        .args(["pull", &url, "user:{7}:seen", "grow-back.ccf", "-q"])
        .assert()
        .success();
    assert_eq!(std::fs::read(d.join("grow-back.ccf")).unwrap(), grow);
    let hit: i64 = redis::cmd("CF.EXISTS")
        .arg("user:{7}:seen")
        .arg("g:49999")
        .query(&mut con)
        .unwrap();
    assert_eq!(hit, 1);

    // A filter made on the server, pulled, answers in `ccf query`.
    let _: () = redis::cmd("CF.RESERVE")
        .arg("made")
        .arg(10_000)
        .query(&mut con)
        .unwrap();
    let _: Vec<i64> = redis::cmd("CF.INSERT")
        .arg("made")
        .arg("ITEMS")
        .arg(&["x", "y", "z"])
        .query(&mut con)
        .unwrap();
    ccf(d)
        .args(["pull", &url, "made", "made.ccf"])
        .assert()
        .success();
    assert_eq!(
        std::fs::read(d.join("made.ccf")).unwrap(),
        dump(&mut con, "made")
    );
    ccf(d)
        .args(["query", "made.ccf", "x", "y", "z"])
        .assert()
        .success();
}

#[test]
fn existing_keys_are_kept_unless_replace() {
    let Some(server) = start(true) else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let url = server.url();
    let mut con = server.client();
    let first = build(d, "first.ccf", &lines("a", 1000), &["--capacity", "1000"]);
    let second = build(d, "second.ccf", &lines("b", 2000), &["--capacity", "2000"]);
    ccf(d)
        .args(["push", "first.ccf", &url, "k"])
        .assert()
        .success();
    ccf(d)
        .args(["push", "second.ccf", &url, "k"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("exists: --replace"));
    assert_eq!(dump(&mut con, "k"), first);
    ccf(d)
        .args(["push", "second.ccf", &url, "k", "--replace"])
        .assert()
        .success();
    assert_eq!(dump(&mut con, "k"), second);
    // --replace on a key of another type: refused, the key kept.
    let _: () = con.set("s", "value").unwrap();
    ccf(d)
        .args(["push", "second.ccf", &url, "s", "--replace"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a cuckoo filter"));
    let s: String = con.get("s").unwrap();
    assert_eq!(s, "value");
    // pull of a key of another type, or of no key: the old file is kept.
    std::fs::write(d.join("out.ccf"), b"old").unwrap();
    for key in ["s", "missing"] {
        ccf(d)
            .args(["pull", &url, key, "out.ccf"])
            .assert()
            .code(2)
            .stderr(predicate::str::starts_with("ccf: error: CF.SCANDUMP"));
        assert_eq!(std::fs::read(d.join("out.ccf")).unwrap(), b"old");
    }
    // A filter with no items has no dump (RedisBloom's contract): one line
    // that says so, and the old file kept.
    let _: () = redis::cmd("CF.RESERVE")
        .arg("empty")
        .arg(1000)
        .query(&mut con)
        .unwrap();
    ccf(d)
        .args(["pull", &url, "empty", "out.ccf"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "a filter with no items has no dump",
        ));
    assert_eq!(std::fs::read(d.join("out.ccf")).unwrap(), b"old");
    let keys: Vec<String> = con.keys("*ccf-push-tmp*").unwrap();
    assert!(keys.is_empty(), "{keys:?}");
}

#[test]
fn a_push_refused_midway_leaves_the_key_as_it_was() {
    let Some(server) = start(true) else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let url = server.url();
    let mut con = server.client();
    let old = build(d, "old.ccf", &lines("old", 1000), &["--capacity", "1000"]);
    ccf(d)
        .args(["push", "old.ccf", &url, "k"])
        .assert()
        .success();
    // Cap the server's memory: the first chunk is taken (it creates the
    // temporary key and its table, which takes the server over the cap)
    // and the next ones are refused with OOM, so the push fails midway.
    let big = build(
        d,
        "big.ccf",
        &lines("big", 2_000_000),
        &["--capacity", "2M", "--fingerprint-bits", "32"],
    );
    assert!(big.len() > 8 << 20);
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg("6mb")
        .query(&mut con)
        .unwrap();
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory-policy")
        .arg("noeviction")
        .query(&mut con)
        .unwrap();
    ccf(d)
        .args(["push", "big.ccf", &url, "k", "--replace"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("CF.LOADCHUNK"));
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg("0")
        .query(&mut con)
        .unwrap();
    assert_eq!(dump(&mut con, "k"), old);
    let keys: Vec<String> = con.keys("*").unwrap();
    assert_eq!(keys, ["k"], "the temporary key was removed");
}

#[test]
fn a_server_without_the_module() {
    let Some(server) = start(false) else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let url = server.url();
    build(d, "f.ccf", &lines("a", 100), &["--capacity", "100"]);
    ccf(d)
        .args(["push", "f.ccf", &url, "k"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no cuckoo filter module"));
    std::fs::write(d.join("out.ccf"), b"old").unwrap();
    ccf(d)
        .args(["pull", &url, "k", "out.ccf"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no cuckoo filter module"));
    assert_eq!(std::fs::read(d.join("out.ccf")).unwrap(), b"old");
    let keys: Vec<String> = server.client().keys("*").unwrap();
    assert!(keys.is_empty(), "{keys:?}");
}

#[test]
fn a_cluster_routes_by_key() {
    let Some(server) = start_cluster() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let url = server.url();
    let mut con = server.client();
    let fixed = build(d, "f.ccf", &lines("c", 2_000_000), &["--capacity", "2M"]);
    assert!(fixed.len() > 2 << 20, "several chunks");
    for key in ["plain", "user:{42}:seen"] {
        ccf(d)
            .args(["push", "f.ccf", &url, key, "--cluster"])
            .assert()
            .success();
        ccf(d)
            .args(["push", "f.ccf", &url, key, "--cluster"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("exists: --replace"));
        ccf(d)
            .args(["push", "f.ccf", &url, key, "--cluster", "--replace"])
            .assert()
            .success();
        assert_eq!(dump(&mut con, key), fixed);
        ccf(d)
            .args(["pull", &url, key, "back.ccf", "--cluster"])
            .assert()
            .success();
        assert_eq!(std::fs::read(d.join("back.ccf")).unwrap(), fixed);
    }
    let mut keys: Vec<String> = con.keys("*").unwrap();
    keys.sort();
    assert_eq!(keys, ["plain", "user:{42}:seen"]);
}

#[test]
fn pull_starts_again_when_the_filter_changes_midway() {
    let Some(server) = start(true) else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let url = server.url();
    let mut con = server.client();
    // 16 MiB: 16 CF.SCANDUMP chunks, so a writer gets in between.
    build(
        d,
        "f.ccf",
        &lines("p", 4_000_000),
        &["--capacity", "4M", "--fingerprint-bits", "32"],
    );
    ccf(d).args(["push", "f.ccf", &url, "k"]).assert().success();
    let writer = |stop_after: Option<std::time::Duration>| {
        let mut con = server.client();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            let started = std::time::Instant::now();
            let mut i = 0u64;
            while !flag.load(std::sync::atomic::Ordering::Relaxed)
                && stop_after.is_none_or(|t| started.elapsed() < t)
            {
                let _: i64 = redis::cmd("CF.ADD")
                    .arg("k")
                    .arg(format!("w:{i}"))
                    .query(&mut con)
                    .unwrap();
                i += 1;
            }
            i
        });
        (stop, handle)
    };
    // A writer that never stops: no retries left, nothing written.
    std::fs::write(d.join("out.ccf"), b"old").unwrap();
    let (stop, handle) = writer(None);
    ccf(d)
        .args(["pull", &url, "k", "out.ccf", "--retries", "2"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "kept changing during CF.SCANDUMP (3 attempts)",
        ));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(handle.join().unwrap() > 0);
    assert_eq!(std::fs::read(d.join("out.ccf")).unwrap(), b"old");
    // A writer that stops after a while: pull starts again until a pass
    // sees one state, and that is the filter's final state.
    let (_, handle) = writer(Some(std::time::Duration::from_millis(300)));
    ccf(d)
        .args(["pull", &url, "k", "out.ccf", "--retries", "100000"])
        .assert()
        .success();
    handle.join().unwrap();
    assert_eq!(
        std::fs::read(d.join("out.ccf")).unwrap(),
        dump(&mut con, "k")
    );
}

/// Reads one RESP value (a command or a reply) as its raw bytes, or
/// `None` at the end of the stream.
fn resp_value(input: &mut impl std::io::BufRead) -> Option<Vec<u8>> {
    let mut line = Vec::new();
    if input.read_until(b'\n', &mut line).ok()? == 0 {
        return None;
    }
    let head = std::str::from_utf8(&line[1..line.len() - 2])
        .ok()?
        .to_owned();
    match line[0] {
        b'*' => {
            let n: i64 = head.parse().ok()?;
            for _ in 0..n.max(0) {
                line.extend(resp_value(input)?);
            }
        }
        b'$' => {
            let n: i64 = head.parse().ok()?;
            if n >= 0 {
                let mut body = vec![0u8; n as usize + 2];
                input.read_exact(&mut body).ok()?;
                line.extend(body);
            }
        }
        _ => {}
    }
    Some(line)
}

/// Defect 5: a push cut off right after its first chunk leaves a
/// temporary key that expires. A proxy passes the commands to a real
/// server one at a time and cuts the connection once the first command
/// carrying a chunk has been answered.
#[test]
fn a_push_cut_after_its_first_chunk_leaves_a_key_that_expires() {
    use std::io::{BufReader, Write};
    let Some(server) = start(true) else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build(d, "f.ccf", &lines("a", 100_000), &["--capacity", "100000"]);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let proxy_port = listener.local_addr().unwrap().port();
    let upstream = server.port;
    let proxy = std::thread::spawn(move || {
        let (client, _) = listener.accept().unwrap();
        let mut to_client = client.try_clone().unwrap();
        let mut from_client = BufReader::new(client);
        let server = std::net::TcpStream::connect(("127.0.0.1", upstream)).unwrap();
        let mut to_server = server.try_clone().unwrap();
        let mut from_server = BufReader::new(server);
        while let Some(command) = resp_value(&mut from_client) {
            to_server.write_all(&command).unwrap();
            let reply = resp_value(&mut from_server).unwrap();
            to_client.write_all(&reply).unwrap();
            if command.len() > 64 << 10 {
                return; // both connections close
            }
        }
    });
    let url = format!("redis://127.0.0.1:{proxy_port}");
    ccf(d)
        .args(["push", "f.ccf", &url, "k", "-q"])
        .assert()
        .code(2);
    proxy.join().unwrap();
    let mut con = server.client();
    let keys: Vec<String> = con.keys("*ccf-push-tmp*").unwrap();
    assert_eq!(keys.len(), 1, "{keys:?}");
    let ttl: i64 = con.pttl(&keys[0]).unwrap();
    assert!(ttl > 0, "the temporary key has no expiry (PTTL {ttl})");
    let target: bool = con.exists("k").unwrap();
    assert!(!target);
}

/// Defect 9: a key of another type is named at once, `--replace` or not.
#[test]
fn a_key_of_another_type_is_named_at_once() {
    let Some(server) = start(true) else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let url = server.url();
    build(d, "f.ccf", &lines("a", 100), &["--capacity", "100"]);
    let mut con = server.client();
    let _: () = con.set("s", "value").unwrap();
    ccf(d)
        .args(["push", "f.ccf", &url, "s"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "holds a string, not a cuckoo filter",
        ));
    let s: String = con.get("s").unwrap();
    assert_eq!(s, "value");
}

/// `push -` reads the filter from stdin; `pull URL KEY -` writes it to
/// stdout.
#[test]
fn push_and_pull_through_stdin_and_stdout() {
    let Some(server) = start(true) else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let url = server.url();
    let file = build(d, "f.ccf", &lines("a", 1000), &["--capacity", "1000"]);
    ccf(d)
        .args(["push", "-", &url, "k", "-v"])
        .write_stdin(file.clone())
        .assert()
        .success()
        .stderr(predicate::str::contains("1 chunk(s) of at most 1.00 MiB"));
    ccf(d)
        .args(["pull", &url, "k", "-", "-q"])
        .assert()
        .success()
        .stdout(predicate::eq(file));
}
