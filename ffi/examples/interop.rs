//! The Rust side of the C interop test (`scripts/test-c.sh`).
//!
//! ```text
//! interop write PATH   build the interop filter in Rust and save it to PATH
//! interop check PATH   load PATH (saved from C by ffi/tests/test_ffi.c) and
//!                      check it is exactly the filter Rust builds
//! interop hostile DIR  write into DIR the files whose headers claim tables
//!                      far larger than the file, which ffi/tests/test_limits.c
//!                      loads under `ulimit -v` (see `write_hostile`)
//! ```
//!
//! The interop filter, built identically by `interop_build()` in
//! `ffi/tests/test_ffi.c`: seed `0x0123456789ABCDEF`, capacity 10000,
//! 16-bit fingerprints; the text keys `"interop-<i>"` for `i < 2000`, the
//! binary keys of every length below 300 (byte `j` of the key of length
//! `len` is `j * 31 + len * 7 + 1` mod 256), all as `&[u8]`; the hashes
//! `fmix64(i + 1)` for `i < 500` through `insert_hash`; then the text keys
//! with `i % 5 == 0` removed. Same seed, same keys in the same order, and
//! C byte keys hashing as `&[u8]`, give the same table byte for byte.
//!
//! Exits 0 on success, 1 with a message on any mismatch, 2 on bad usage.

use concurrent_cuckoo::{CuckooFilter, ScalableCuckooFilter};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

const SEED: u64 = 0x0123_4567_89AB_CDEF;
const TEXT_KEYS: u32 = 2000;
const BINARY_MAX: usize = 300;
const HASHES: u64 = 500;

fn fmix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn text_key(i: u32) -> Vec<u8> {
    format!("interop-{i}").into_bytes()
}

fn binary_key(len: usize) -> Vec<u8> {
    (0..len).map(|j| (j * 31 + len * 7 + 1) as u8).collect()
}

fn build() -> Result<CuckooFilter, String> {
    let f = CuckooFilter::builder()
        .capacity(10_000)
        .fingerprint_bits(16)
        .seed(SEED)
        .build()
        .map_err(|e| e.to_string())?;
    let err = |e: concurrent_cuckoo::InsertError| e.to_string();
    for i in 0..TEXT_KEYS {
        f.insert(&text_key(i)[..]).map_err(err)?;
    }
    for len in 0..BINARY_MAX {
        f.insert(&binary_key(len)[..]).map_err(err)?;
    }
    for i in 0..HASHES {
        f.insert_hash(fmix64(i + 1)).map_err(err)?;
    }
    for i in (0..TEXT_KEYS).step_by(5) {
        if !f.remove(&text_key(i)[..]) {
            return Err(format!("text key {i} vanished before its remove"));
        }
    }
    Ok(f)
}

/// Every key the interop filter must hold is found (through both the
/// single and the batch lookup), and the length is exact.
fn check_answers(f: &CuckooFilter) -> Result<(), String> {
    let present: Vec<Vec<u8>> = (0..TEXT_KEYS)
        .filter(|i| i % 5 != 0)
        .map(text_key)
        .chain((0..BINARY_MAX).map(binary_key))
        .collect();
    let want_len = present.len() + HASHES as usize;
    if f.len() != want_len {
        return Err(format!("length {} instead of {want_len}", f.len()));
    }
    let slices: Vec<&[u8]> = present.iter().map(Vec::as_slice).collect();
    let mut found = vec![false; slices.len()];
    f.contains_batch(&slices, &mut found);
    for (key, &hit) in slices.iter().zip(&found) {
        if !hit || !f.contains(*key) {
            return Err(format!("key {key:?} is missing"));
        }
    }
    if let Some(i) = (0..HASHES).find(|&i| !f.contains_hash(fmix64(i + 1))) {
        return Err(format!("hash {i} is missing"));
    }
    Ok(())
}

/// A writer that takes the first `left` bytes and then fails: the start
/// of an encoding, with every header intact.
struct Prefix {
    bytes: Vec<u8>,
    left: usize,
}

impl Write for Prefix {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            return Err(std::io::Error::other("enough"));
        }
        let n = buf.len().min(self.left);
        self.bytes.extend_from_slice(&buf[..n]);
        self.left -= n;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Offset of the first level inside a growing filter's encoding: the
/// second occurrence of the magic.
fn first_level(bytes: &[u8]) -> Result<usize, String> {
    bytes[8..]
        .windows(8)
        .position(|w| w == &bytes[..8])
        .map(|at| at + 8)
        .ok_or_else(|| "no level in the encoding".to_string())
}

/// Files that claim far more than they hold, each of which a loader must
/// refuse as corrupt before reserving the memory the claim asks for:
///
/// * `huge-single.ccf`: a filter's 64-byte header claiming 2^32 buckets of
///   32-bit fingerprints (64 GiB), and 8 more bytes: 72 in all;
/// * `huge-level.ccf`: a growing filter whose first level's header claims
///   2^32 buckets, its container (and its configuration) unchanged;
/// * `huge-scalable.ccf`: a growing filter configured for 2^31 items in
///   its first level (4 GiB), every header consistent, cut after 512
///   bytes.
fn write_hostile(dir: &Path) -> Result<(), String> {
    let save = |name: &str, bytes: &[u8]| {
        std::fs::write(dir.join(name), bytes).map_err(|e| format!("writing {name}: {e}"))
    };
    let small = CuckooFilter::builder()
        .capacity(100)
        .fingerprint_bits(32)
        .seed(SEED)
        .build()
        .map_err(|e| e.to_string())?;
    let mut single = small.to_bytes();
    single[16..24].copy_from_slice(&(1u64 << 32).to_le_bytes());
    single.truncate(72);
    save("huge-single.ccf", &single)?;

    let growing = ScalableCuckooFilter::builder()
        .capacity(100)
        .seed(SEED)
        .build()
        .map_err(|e| e.to_string())?;
    let mut level = growing.to_bytes();
    let at = first_level(&level)?;
    level[at + 16..at + 24].copy_from_slice(&(1u64 << 32).to_le_bytes());
    save("huge-level.ccf", &level)?;

    // The table is mapped lazily: building it touches no memory.
    let big = ScalableCuckooFilter::builder()
        .capacity(1 << 31)
        .seed(SEED)
        .build()
        .map_err(|e| e.to_string())?;
    let mut prefix = Prefix {
        bytes: Vec::new(),
        left: 512,
    };
    let _ = big.write_to(&mut prefix); // stops with "enough" after 512 bytes
    save("huge-scalable.ccf", &prefix.bytes)
}

fn run(mode: &str, path: &str) -> Result<(), String> {
    if mode == "hostile" {
        return write_hostile(Path::new(path));
    }
    let built = build()?;
    check_answers(&built)?;
    match mode {
        "write" => built
            .write_to_path(path)
            .map_err(|e| format!("saving {path}: {e}")),
        "check" => {
            let file = std::fs::File::open(path).map_err(|e| format!("opening {path}: {e}"))?;
            let loaded =
                CuckooFilter::read_from(file).map_err(|e| format!("loading {path}: {e}"))?;
            check_answers(&loaded)?;
            if loaded.to_bytes() != built.to_bytes() {
                return Err(format!(
                    "{path} holds a different table than Rust builds from the same keys and seed"
                ));
            }
            Ok(())
        }
        _ => unreachable!("mode checked by main"),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [mode, path] = args.as_slice() else {
        eprintln!("usage: interop write|check PATH | interop hostile DIR");
        return ExitCode::from(2);
    };
    if !["write", "check", "hostile"].contains(&mode.as_str()) {
        eprintln!("usage: interop write|check PATH | interop hostile DIR");
        return ExitCode::from(2);
    }
    match run(mode, path) {
        Ok(()) => {
            println!("interop {mode} {path}: ok");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("interop {mode} {path}: {e}");
            ExitCode::FAILURE
        }
    }
}
