//! `ccf push` / `ccf pull` against a 3-node Redis Cluster with the module:
//! commands sent to a node that does not own the key (MOVED), and a push
//! while the key's slot migrates to another node (ASK, TRYAGAIN), the
//! migration finished mid-transfer.
//!
//! The same recipe as the module's Python test
//! (`redis/tests/python/test_cluster_and_hostile.py`): three masters,
//! `CLUSTER SETSLOT ... IMPORTING/MIGRATING`, `MIGRATE`, `SETSLOT ... NODE`.

mod common;
use common::{ccf, lines, start_cluster_node, Server};
use std::cell::RefCell;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Three cluster nodes with a third of the slots each, up and agreeing.
/// One connection each, made once: a connect while a `ccf` child exits
/// can fail with EINTR.
struct Cluster {
    nodes: Vec<Server>,
    ids: Vec<String>,
    cons: Vec<RefCell<redis::Connection>>,
}

impl Cluster {
    fn start() -> Option<Self> {
        let mut nodes = Vec::new();
        for _ in 0..3 {
            nodes.push(start_cluster_node()?);
        }
        let ranges = [(0, 5460), (5461, 10922), (10923, 16383)];
        let mut ids = Vec::new();
        for (node, (lo, hi)) in nodes.iter().zip(ranges) {
            let mut con = node.client();
            let _: () = redis::cmd("CLUSTER")
                .arg("ADDSLOTSRANGE")
                .arg(lo)
                .arg(hi)
                .query(&mut con)
                .unwrap();
            ids.push(redis::cmd("CLUSTER").arg("MYID").query(&mut con).unwrap());
        }
        let mut first = nodes[0].client();
        for node in &nodes[1..] {
            let bus: i64 = {
                let mut con = node.client();
                let conf: Vec<String> = redis::cmd("CONFIG")
                    .arg("GET")
                    .arg("cluster-port")
                    .query(&mut con)
                    .unwrap();
                conf[1].parse().unwrap()
            };
            let _: () = redis::cmd("CLUSTER")
                .arg("MEET")
                .arg("127.0.0.1")
                .arg(node.port)
                .arg(bus)
                .query(&mut first)
                .unwrap();
        }
        let cons = nodes.iter().map(|n| RefCell::new(n.client())).collect();
        let cluster = Self { nodes, ids, cons };
        cluster.wait_until("the cluster came up", |c| {
            (0..3).all(|i| {
                let info: String = c.query(i, redis::cmd("CLUSTER").arg("INFO"));
                info.contains("cluster_state:ok") && info.contains("cluster_known_nodes:3")
            })
        });
        Some(cluster)
    }

    fn wait_until(&self, what: &str, mut done: impl FnMut(&Self) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(15);
        while !done(self) {
            assert!(Instant::now() < deadline, "timed out: {what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn query<T: redis::FromRedisValue>(&self, node: usize, cmd: &redis::Cmd) -> T {
        cmd.query(&mut *self.cons[node].borrow_mut()).unwrap()
    }

    fn slot(&self, key: &str) -> i64 {
        self.query(0, redis::cmd("CLUSTER").arg("KEYSLOT").arg(key))
    }

    fn keys_in_slot(&self, node: usize, slot: i64) -> Vec<String> {
        self.query(
            node,
            redis::cmd("CLUSTER")
                .arg("GETKEYSINSLOT")
                .arg(slot)
                .arg(100),
        )
    }

    /// The node holding `slot` (from the ranges given in `start`).
    fn owner(&self, slot: i64) -> usize {
        (slot / 5461) as usize
    }
}

/// Every item in `items` answers 1 to `CF.EXISTS key` on `node`.
fn all_found(cluster: &Cluster, node: usize, key: &str, items: &str) {
    let mut con = cluster.cons[node].borrow_mut();
    let mut pipe = redis::pipe();
    for item in items.lines() {
        pipe.cmd("CF.EXISTS").arg(key).arg(item);
    }
    let found: Vec<i64> = pipe.query(&mut *con).unwrap();
    assert_eq!(found.len(), items.lines().count());
    assert!(found.iter().all(|&f| f == 1), "an item of {key} is missing");
}

fn build(dir: &Path, name: &str, items: &str, extra: &[&str]) -> Vec<u8> {
    std::fs::write(dir.join("items.txt"), items).unwrap();
    ccf(dir)
        .args(["build", "items.txt", "-q", "-o", name])
        .args(extra)
        .assert()
        .success();
    std::fs::read(dir.join(name)).unwrap()
}

#[test]
fn push_and_pull_on_three_nodes_with_the_slot_migrating_mid_transfer() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();

    // A stable cluster, the URL a node that does not own the key.
    let key = "blocklist";
    let slot = cluster.slot(key);
    let owner = cluster.owner(slot);
    let other = (owner + 1) % 3;
    let url = cluster.nodes[other].url();
    let small = lines("s", 20_000);
    let small_file = build(d, "small.ccf", &small, &["--capacity", "20000"]);
    ccf(d)
        .args(["push", "small.ccf", &url, key, "--cluster", "-q"])
        .assert()
        .success();
    all_found(&cluster, owner, key, &small);
    assert_eq!(cluster.keys_in_slot(owner, slot), [key]);
    ccf(d)
        .args(["pull", &url, key, "back.ccf", "--cluster", "-q"])
        .assert()
        .success();
    assert_eq!(std::fs::read(d.join("back.ccf")).unwrap(), small_file);

    // The slot migrating from `owner` to `dst` during a push that replaces
    // the key (several chunks, so several round trips).
    let dst = (owner + 2) % 3;
    let big = lines("b", 600_000);
    let big_file = build(
        d,
        "big.ccf",
        &big,
        &["--capacity", "600000", "--fingerprint-bits", "32"],
    );
    assert!(big_file.len() > 2 << 20, "several chunks");
    let setslot = |node: usize, how: &str, id: &str| {
        let _: () = redis::cmd("CLUSTER")
            .arg("SETSLOT")
            .arg(slot)
            .arg(how)
            .arg(id)
            .query(&mut *cluster.cons[node].borrow_mut())
            .unwrap();
    };
    setslot(dst, "IMPORTING", &cluster.ids[owner]);
    setslot(owner, "MIGRATING", &cluster.ids[dst]);
    let mut push = Command::new(env!("CARGO_BIN_EXE_ccf"))
        .current_dir(d)
        .args(["push", "big.ccf", &url, key, "--cluster", "--replace", "-q"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Mid-transfer: once the temporary key exists (on `dst`, by ASK), the
    // old key moves over and the slot is handed to `dst`.
    let deadline = Instant::now() + Duration::from_secs(15);
    while cluster.keys_in_slot(dst, slot).is_empty() {
        if Instant::now() > deadline || push.try_wait().unwrap().is_some() {
            let _ = push.kill();
            let _ = push.wait();
            let stderr = std::io::read_to_string(push.stderr.take().unwrap()).unwrap();
            panic!("no temporary key on the importing node: {stderr}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // The old key is still on `owner`, the temporary one on `dst`: no
    // commit can succeed before the migration.
    assert!(push.try_wait().unwrap().is_none());
    let moving = cluster.keys_in_slot(owner, slot);
    if !moving.is_empty() {
        let _: () = redis::cmd("MIGRATE")
            .arg("127.0.0.1")
            .arg(cluster.nodes[dst].port)
            .arg("")
            .arg(0)
            .arg(5000)
            .arg("KEYS")
            .arg(&moving)
            .query(&mut *cluster.cons[owner].borrow_mut())
            .unwrap();
    }
    for node in [dst, owner, other] {
        setslot(node, "NODE", &cluster.ids[dst]);
    }
    let deadline = Instant::now() + Duration::from_secs(15);
    let status = loop {
        if let Some(status) = push.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = push.kill();
            let _ = push.wait();
            panic!("the push did not end in 15 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let stderr = std::io::read_to_string(push.stderr.take().unwrap()).unwrap();
    assert!(status.success(), "push during the migration: {stderr}");
    assert!(cluster.keys_in_slot(owner, slot).is_empty());
    assert_eq!(
        cluster.keys_in_slot(dst, slot),
        [key],
        "no temporary key is left"
    );
    let ttl: i64 = cluster.query(dst, redis::cmd("PTTL").arg(key));
    assert_eq!(ttl, -1, "the pushed key keeps no expiry");
    all_found(&cluster, dst, key, &big);
    ccf(d)
        .args(["pull", &url, key, "back.ccf", "--cluster", "-q"])
        .assert()
        .success();
    assert_eq!(std::fs::read(d.join("back.ccf")).unwrap(), big_file);
}
