//! Saved files under real failures: a saving process killed with SIGKILL
//! at random moments, and a file system that runs out of space.
//!
//! `write_to_path` writes a temporary file next to the target, syncs it
//! and renames it over the target, so after any failure the target holds
//! the old filter or the new one, complete, and no stray temporary file
//! but the one a killed save was writing.

mod common;

use common::{child_test_process, scaled, Rng};
use concurrent_cuckoo::CuckooFilter;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Keys added per save by the saving child.
const STEP: usize = 1000;
const SEED: u64 = 0x00C0_FFEE;

/// Key `i` of the saving loop, as a hash.
fn key(i: usize) -> u64 {
    let mut z = (i as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// An empty filter of the saving loop: about 4.6 MB saved, so a save
/// (write and fsync) takes long enough for kills to land inside it.
fn empty() -> CuckooFilter {
    CuckooFilter::builder()
        .capacity(2_000_000)
        .seed(SEED)
        .build()
        .unwrap()
}

/// Adds keys `from..to` to `f`, as the saving loop does.
fn add(f: &CuckooFilter, from: usize, to: usize) {
    let keys: Vec<u64> = (from..to).map(key).collect();
    f.insert_hash_batch(&keys).unwrap();
}

/// A directory of its own under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("ccf-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    /// Names in the directory other than `keep`.
    fn others(&self, keep: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != keep)
            .collect();
        names.sort();
        names
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The saving process of the test below (does nothing unless the parent
/// set `CCF_SAVE_LOOP_FILE`): loads the file, then forever adds `STEP`
/// keys and saves with `write_to_path`, printing `SAVED <len>` after each
/// save returns, until it is killed.
#[test]
fn save_loop_child_entry() {
    let Some(path) = std::env::var_os("CCF_SAVE_LOOP_FILE") else {
        return;
    };
    let f = CuckooFilter::read_from(std::fs::File::open(&path).unwrap()).unwrap();
    let mut out = std::io::stdout();
    loop {
        let len = f.len();
        add(&f, len, len + STEP);
        f.write_to_path(&path).unwrap();
        writeln!(out, "SAVED {}", f.len()).unwrap();
        out.flush().unwrap();
    }
}

/// A child process saves a growing filter in a loop and is killed with
/// SIGKILL at a random moment, a hundred times, each new child carrying on
/// from the file the last one left. After every kill the file holds a
/// complete filter, the one of the child's last finished save or of the
/// save it was killed in, byte for byte what the same inserts give; and
/// the only other file is at most the temporary file of the save that was
/// killed (named for the child's process id).
/// Serialises the two tests that need it: the killed-save test forks
/// children all the time, and a child between its fork and its exec holds
/// a copy of every descriptor the full-disk test has open (close-on-exec
/// closes them only at the exec), so a file that test deleted kept its
/// tmpfs pages and the save "with room again" failed with ENOSPC (seen
/// once, on a loaded machine).
static FORKS_AND_FULL_DISK: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn a_save_killed_at_any_moment_leaves_the_old_or_the_new_filter() {
    let _serial = FORKS_AND_FULL_DISK
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let dir = TempDir::new("kill");
    let path = dir.0.join("filter.ccf");
    empty().write_to_path(&path).unwrap();
    // The filter every finished save is a prefix of, kept in step with the
    // file.
    let reference = empty();
    let mut rng = Rng(77);
    let rounds = scaled(100, 10);
    let (mut interrupted, mut saves) = (0, 0);
    for round in 0..rounds {
        let before = reference.len();
        let mut child = child_test_process("save_loop_child_entry")
            .env("CCF_SAVE_LOOP_FILE", &path)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (saved_tx, saved) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                // libtest's "test save_loop_child_entry ... " starts the
                // first line.
                if let Some(len) = line
                    .find("SAVED ")
                    .and_then(|at| line[at + 6..].trim().parse::<usize>().ok())
                {
                    let _ = saved_tx.send((Instant::now(), len));
                }
            }
        });
        // Once the child saves in a loop (two saves: how long one takes,
        // whatever the machine or an emulator), kill it at a random moment
        // within the next two saves.
        let wait = Duration::from_secs(120);
        let (first, _) = saved.recv_timeout(wait).expect("the child saves");
        let (second, second_len) = saved.recv_timeout(wait).expect("the child saves again");
        let save = second - first;
        std::thread::sleep(save.mul_f64(2.0 * rng.below(1000) as f64 / 1000.0));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        reader.join().unwrap();
        let last_saved = saved.try_iter().last().map_or(second_len, |(_, len)| len);
        saves += (last_saved - before) / STEP;

        let bytes = std::fs::read(&path).unwrap();
        let found = CuckooFilter::from_bytes(&bytes)
            .unwrap_or_else(|e| panic!("round {round}: the file is not a complete filter: {e}"));
        let len = found.len();
        assert!(
            len == last_saved || len == last_saved + STEP,
            "round {round}: the file holds {len} keys; the last finished save had {last_saved}"
        );
        add(&reference, reference.len(), len);
        assert_eq!(
            bytes,
            reference.to_bytes(),
            "round {round}: not the filter those inserts give"
        );

        let stray = dir.others("filter.ccf");
        let owned = format!(".filter.ccf.{}-", child.id());
        assert!(
            stray.len() <= 1 && stray.iter().all(|n| n.starts_with(&owned)),
            "round {round}: stray files {stray:?} (the killed save owned {owned}*)"
        );
        if let Some(tmp) = stray.first() {
            interrupted += 1;
            std::fs::remove_file(dir.0.join(tmp)).unwrap();
        }
    }
    println!(
        "{rounds} kills: {interrupted} inside a save (a temporary file left), \
         {saves} saves finished, {} keys in the final file",
        reference.len()
    );
    // The test proves something only if kills land inside saves.
    assert!(
        interrupted * 4 >= rounds,
        "only {interrupted} of {rounds} kills interrupted a save"
    );
}

/// Runs `mount`/`umount` (as root only).
fn mount_tmpfs(dir: &Path, bytes: usize) -> bool {
    std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={bytes}")])
        .arg("tmpfs")
        .arg(dir)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

struct Unmount<'a>(&'a Path);

impl Drop for Unmount<'_> {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(self.0).status();
    }
}

/// A save onto a file system without room for it fails with the system's
/// error, removes its temporary file and leaves the old file as it was.
/// Needs a small tmpfs of its own, so it runs as root only (as CI does);
/// otherwise it says it was skipped.
#[test]
fn a_save_onto_a_full_disk_fails_and_leaves_the_old_file() {
    let _serial = FORKS_AND_FULL_DISK
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let dir = TempDir::new("full");
    let mount = dir.0.join("mnt");
    std::fs::create_dir_all(&mount).unwrap();
    if !mount_tmpfs(&mount, 4 << 20) {
        println!("skipped: mounting a 4 MiB tmpfs needs root (CI runs as root)");
        return;
    }
    let _unmount = Unmount(&mount);
    let path = mount.join("filter.ccf");
    let old = CuckooFilter::builder()
        .capacity(100_000)
        .seed(SEED)
        .build()
        .unwrap();
    add(&old, 0, 50_000);
    old.write_to_path(&path).unwrap();
    let saved = std::fs::read(&path).unwrap();
    let check_intact = |what: &str| {
        assert_eq!(
            std::fs::read(&path).unwrap(),
            saved,
            "{what}: the old file changed"
        );
        let back = CuckooFilter::from_bytes(&saved).unwrap();
        assert!((0..50_000).all(|i| back.contains_hash(key(i))));
        let stray: Vec<_> = std::fs::read_dir(&mount)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n != "filter.ccf")
            .collect();
        assert!(stray.is_empty(), "{what}: temporary files left: {stray:?}");
    };

    // A filter larger than the whole file system.
    let big = empty();
    add(&big, 0, 100_000);
    let err = big.write_to_path(&path).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(28), "ENOSPC expected, got {err}");
    check_intact("a filter larger than the disk");

    // A disk filled up by something else: even a small save fails.
    let mut junk = std::fs::File::create(mount.join("junk")).unwrap();
    let chunk = vec![0x5Au8; 64 << 10];
    while junk.write_all(&chunk).is_ok() {}
    drop(junk);
    let small = CuckooFilter::builder()
        .capacity(1000)
        .seed(SEED)
        .build()
        .unwrap();
    let err = small.write_to_path(&path).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(28), "ENOSPC expected, got {err}");
    std::fs::remove_file(mount.join("junk")).unwrap();
    check_intact("a full disk");

    // With room again, saving works and replaces the file.
    small.write_to_path(&path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), small.to_bytes());
}
