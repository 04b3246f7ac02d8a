//! Shared by the integration tests: the built `ccf`, generated inputs, and
//! a redis-server with the cuckoo filter module on loopback.

#![allow(dead_code)] // each test file uses part of this

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `ccf` with `args`, in `dir`.
pub fn ccf(dir: &Path) -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::new(env!("CARGO_BIN_EXE_ccf"));
    cmd.current_dir(dir).timeout(Duration::from_secs(120));
    cmd
}

/// `prefix:0` .. `prefix:{n-1}`, one per line.
pub fn lines(prefix: &str, n: usize) -> String {
    (0..n).map(|i| format!("{prefix}:{i}\n")).collect()
}

/// A redis-server on loopback, killed (and its directory removed) on drop.
pub struct Server {
    child: Child,
    pub port: u16,
    dir: tempfile::TempDir,
}

impl Server {
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    pub fn client(&self) -> redis::Connection {
        redis::Client::open(self.url())
            .unwrap()
            .get_connection_with_timeout(Duration::from_secs(10))
            .unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = &self.dir;
    }
}

/// The module built with these tests (a dev-dependency of `ccf`, so cargo
/// builds its `cdylib` beside the test executables), or `CCF_REDIS_MODULE`.
pub fn module() -> PathBuf {
    if let Some(path) = std::env::var_os("CCF_REDIS_MODULE") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    for dir in [deps, deps.parent().unwrap()] {
        if let Ok(entries) = std::fs::read_dir(dir) {
            let mut found: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    let name = p.file_name().unwrap().to_string_lossy();
                    name.starts_with("libconcurrent_cuckoo_redis") && name.ends_with(".so")
                })
                .collect();
            found.sort_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok());
            if let Some(newest) = found.pop() {
                return newest;
            }
        }
    }
    panic!("the Redis module is not built beside {}", exe.display());
}

/// A free port on loopback (free when asked).
pub fn free_port() -> u16 {
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    probe.local_addr().unwrap().port()
}

/// A redis-server in cluster mode with the module, its cluster bus on a
/// port of its own (the default, port + 10000, may be past 65535).
pub fn start_cluster_node() -> Option<Server> {
    let bus = free_port().to_string();
    start_with(
        true,
        &[
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-port",
            &bus,
        ],
    )
}

/// A one-node Redis Cluster (every slot on one server) with the module.
pub fn start_cluster() -> Option<Server> {
    let server = start_cluster_node()?;
    let mut con = server.client();
    let _: () = redis::cmd("CLUSTER")
        .arg("ADDSLOTSRANGE")
        .arg(0)
        .arg(16383)
        .query(&mut con)
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let info: String = redis::cmd("CLUSTER").arg("INFO").query(&mut con).unwrap();
        if info.contains("cluster_state:ok") {
            return Some(server);
        }
        assert!(
            Instant::now() < deadline,
            "the cluster did not come up: {info}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts a redis-server with the module (`with_module`) or without.
/// `None` (with a message) only where no server can be started and
/// `CCF_REQUIRE_REDIS` is unset; with it set, that is a failure.
pub fn start(with_module: bool) -> Option<Server> {
    start_with(with_module, &[])
}

/// [`start`] with more arguments for the server.
pub fn start_with(with_module: bool, extra: &[&str]) -> Option<Server> {
    let port = free_port();
    let dir = tempfile::tempdir().unwrap();
    // `CCF_SERVER`: another server binary (scripts/test-redis.sh's Valkey).
    let binary = std::env::var_os("CCF_SERVER").unwrap_or_else(|| "redis-server".into());
    let mut cmd = Command::new(binary);
    cmd.args([
        "--port",
        &port.to_string(),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
    ])
    .args(["--appendonly", "no", "--logfile", "redis.log"])
    .arg("--dir")
    .arg(dir.path())
    .args(extra);
    if with_module {
        cmd.arg("--loadmodule").arg(module());
    }
    let child = match cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn() {
        Ok(child) => child,
        Err(e) if std::env::var_os("CCF_REQUIRE_REDIS").is_none() => {
            println!(
                "skipped: redis-server could not be started ({e}); scripts/test.sh installs it"
            );
            return None;
        }
        Err(e) => panic!("redis-server: {e} (CCF_REQUIRE_REDIS is set)"),
    };
    let mut server = Server { child, port, dir };
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = server.child.try_wait() {
            let log =
                std::fs::read_to_string(server.dir.path().join("redis.log")).unwrap_or_default();
            panic!("redis-server exited ({status}): {log}");
        }
        assert!(Instant::now() < deadline, "redis-server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(server)
}

/// Runs `ccf args` in `dir` with its stdin a pipe that stays open and
/// empty (a producer that has not finished), and kills it after `secs`:
/// `None` when it had to be killed, i.e. it hung or waited for input
/// before failing.
pub fn run_stdin_open(dir: &Path, args: &[&str], secs: u64) -> Option<std::process::Output> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ccf"))
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take();
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if child.try_wait().unwrap().is_some() {
            drop(stdin);
            return Some(child.wait_with_output().unwrap());
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Names of the temporary files `ccf` leaves in `dir` (none, when it
/// cleaned up): its own and the library's.
pub fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("ccf-tmp") || n.ends_with(".tmp"))
        .collect()
}
