//! Shared helpers for the integration tests.
#![allow(dead_code)]

/// Splitmix64: deterministic, dependency-free randomness for tests.
#[derive(Clone)]
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0; the bias of a modulo is irrelevant here).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Divisor for iteration counts of heavy tests, from `CUCKOO_TEST_SCALE`
/// (used when running under qemu, where everything is ~10x slower).
pub fn scale() -> usize {
    std::env::var("CUCKOO_TEST_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
        .max(1)
}

/// `n / scale()`, at least `min`.
pub fn scaled(n: usize, min: usize) -> usize {
    (n / scale()).max(min)
}

/// A command that runs this test binary again, as a second process,
/// running only the test `entry` (which does nothing unless the caller
/// sets the environment variable it looks for). Under an emulator
/// (scripts/test-aarch64.sh runs the tests in qemu-user, which cannot exec
/// a foreign binary by itself) the child goes through the same runner,
/// named in `CCF_TEST_RUNNER`.
pub fn child_test_process(entry: &str) -> std::process::Command {
    let exe = std::env::current_exe().unwrap();
    let mut child = match std::env::var_os("CCF_TEST_RUNNER") {
        Some(runner) => {
            let mut c = std::process::Command::new(runner);
            c.arg(&exe);
            c
        }
        None => std::process::Command::new(&exe),
    };
    child.args(["--exact", entry, "--nocapture", "--test-threads=1"]);
    child
}

/// Inserts the hashes 0, 1, 2, ... into a one-level growing filter until
/// it grows a second level. Returns the hashes that went into the first
/// level and the first hash not inserted (the one that made it grow was
/// `next - 1`, in the second level).
pub fn fill_first_level(f: &concurrent_cuckoo::ScalableCuckooFilter) -> (Vec<u64>, u64) {
    assert_eq!(f.levels(), 1);
    let mut first = Vec::new();
    let mut k = 0u64;
    while f.levels() == 1 {
        f.insert_hash(k).unwrap();
        if f.levels() == 1 {
            first.push(k);
        }
        k += 1;
    }
    (first, k)
}
