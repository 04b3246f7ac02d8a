//! Golden files: small filters encoded by an earlier build, committed in
//! `tests/data/`, must keep decoding and answering exactly as recorded. A
//! change to the format, the default hasher or the key encoding that would
//! break filters already on disk fails here.
//!
//! The files are made by `regenerate_golden_files` below, which writes only
//! the files of the format version this build writes. Regenerate them only
//! on purpose (a new format version gets *new* files; old ones stay):
//!
//! ```text
//! CUCKOO_REGENERATE_GOLDEN=1 cargo test --test golden -- --ignored
//! ```

use concurrent_cuckoo::{CuckooFilter, DecodeError};
use std::path::PathBuf;

/// The absent keys probed: their answers (mostly `false`; the false
/// positives are recorded) pin the fingerprints and bucket positions.
const ABSENT: std::ops::Range<u64> = 1_000_000..1_020_000;

struct Golden {
    name: &'static str,
    /// Format version the file was written in. Only files of the version
    /// this build writes are (re)made by the generator; older ones are
    /// history, kept to prove they still decode and answer as recorded.
    version: u16,
    bits: u32,
    max_path: usize,
    seed: u64,
    capacity: usize,
}

/// The format version this build writes.
const CURRENT_VERSION: u16 = 2;

const GOLDEN: [Golden; 6] = [
    Golden {
        name: "v1-fp8",
        version: 1,
        bits: 8,
        max_path: 5,
        seed: 0x601D_0008,
        capacity: 300,
    },
    Golden {
        name: "v1-fp16",
        version: 1,
        bits: 16,
        max_path: 4,
        seed: 0x601D_0016,
        capacity: 300,
    },
    Golden {
        name: "v1-fp32",
        version: 1,
        bits: 32,
        max_path: 3,
        seed: 0x601D_0032,
        capacity: 300,
    },
    // Version 2: a 64-byte header, and hashes finalized before use.
    Golden {
        name: "v2-fp8",
        version: 2,
        bits: 8,
        max_path: 5,
        seed: 0x601D_0208,
        capacity: 300,
    },
    Golden {
        name: "v2-fp16",
        version: 2,
        bits: 16,
        max_path: 4,
        seed: 0x601D_0216,
        capacity: 300,
    },
    Golden {
        name: "v2-fp32",
        version: 2,
        bits: 32,
        max_path: 3,
        seed: 0x601D_0232,
        capacity: 300,
    },
];

/// Every kind of key whose hash is promised to be portable.
#[derive(Debug)]
enum Key {
    Int(u64),
    Str(String),
    Bytes(Vec<u8>),
    Tuple(u32, u16, u8, i64),
    Usize(usize),
}

impl Key {
    fn insert(&self, f: &CuckooFilter) {
        match self {
            Key::Int(k) => f.insert(k),
            Key::Str(k) => f.insert(k.as_str()),
            Key::Bytes(k) => f.insert(&k[..]),
            Key::Tuple(a, b, c, d) => f.insert(&(*a, *b, *c, *d)),
            Key::Usize(k) => f.insert(k),
        }
        .unwrap()
    }

    fn contains(&self, f: &CuckooFilter) -> bool {
        match self {
            Key::Int(k) => f.contains(k),
            Key::Str(k) => f.contains(k.as_str()),
            Key::Bytes(k) => f.contains(&k[..]),
            Key::Tuple(a, b, c, d) => f.contains(&(*a, *b, *c, *d)),
            Key::Usize(k) => f.contains(k),
        }
    }

    fn remove(&self, f: &CuckooFilter) -> bool {
        match self {
            Key::Int(k) => f.remove(k),
            _ => unreachable!("only integer keys are removed"),
        }
    }
}

/// 270 keys: integers, strings, byte strings from empty to 247 bytes (past
/// the hasher's 128-byte inline buffer), tuples and `usize`s.
fn keys() -> Vec<Key> {
    let mut keys = Vec::new();
    keys.extend((0..150u64).map(|i| Key::Int(i.wrapping_mul(0x9E37_79B9_7F4A_7C15))));
    keys.extend((0..50).map(|i| Key::Str(format!("key-{i}"))));
    keys.extend((0..20).map(|i| Key::Bytes((0..i * 13).map(|b| (b * 7 + i) as u8).collect())));
    keys.extend((0..30).map(|i| Key::Tuple(i, i as u16 * 3, i as u8, -(i as i64))));
    // Above 2^31 but fits a 32-bit usize: hashed as 8 bytes everywhere.
    keys.extend((0..20).map(|i| Key::Usize(3_000_000_000 + i)));
    keys
}

/// Integer keys removed after all were inserted (leaves holes in buckets).
fn removed(i: usize) -> bool {
    i < 150 && i.is_multiple_of(5)
}

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// The filter, as the generator builds it.
fn build(g: &Golden) -> CuckooFilter {
    let f = CuckooFilter::builder()
        .capacity(g.capacity)
        .fingerprint_bits(g.bits)
        .max_path_len(g.max_path)
        .seed(g.seed)
        .build()
        .unwrap();
    let keys = keys();
    for k in &keys {
        k.insert(&f);
    }
    for (i, k) in keys.iter().enumerate() {
        if removed(i) {
            assert!(k.remove(&f));
        }
    }
    f
}

/// The recorded answers: the length, then the absent keys that answer
/// `true` (false positives).
fn record(f: &CuckooFilter) -> String {
    let mut out = format!(
        "# Answers of the golden filter beside this file (see tests/golden.rs).\nlen {}\nfalse-positives-in {}..{}\n",
        f.len(),
        ABSENT.start,
        ABSENT.end
    );
    for k in ABSENT.filter(|k| f.contains(k)) {
        out.push_str(&format!("{k}\n"));
    }
    out
}

#[test]
#[ignore = "writes tests/data; run deliberately with CUCKOO_REGENERATE_GOLDEN=1"]
fn regenerate_golden_files() {
    if std::env::var_os("CUCKOO_REGENERATE_GOLDEN").is_none() {
        eprintln!("set CUCKOO_REGENERATE_GOLDEN=1 to overwrite tests/data");
        return;
    }
    std::fs::create_dir_all(data_dir()).unwrap();
    for g in GOLDEN.iter().filter(|g| g.version == CURRENT_VERSION) {
        let f = build(g);
        std::fs::write(data_dir().join(format!("{}.bin", g.name)), f.to_bytes()).unwrap();
        std::fs::write(data_dir().join(format!("{}.txt", g.name)), record(&f)).unwrap();
    }
}

#[test]
fn golden_files_decode_and_answer_as_recorded() {
    for g in &GOLDEN {
        let bytes = std::fs::read(data_dir().join(format!("{}.bin", g.name))).unwrap();
        let recorded = std::fs::read_to_string(data_dir().join(format!("{}.txt", g.name))).unwrap();
        let f = CuckooFilter::from_bytes(&bytes).unwrap_or_else(|e| panic!("{}: {e}", g.name));
        assert_eq!(
            u16::from_le_bytes([bytes[8], bytes[9]]),
            g.version,
            "{}",
            g.name
        );
        assert_eq!(f.fingerprint_bits(), g.bits, "{}", g.name);
        assert_eq!(f.max_path_len(), g.max_path, "{}", g.name);
        assert_eq!(f.hasher().seed(), g.seed, "{}", g.name);
        let keys = keys();
        for (i, k) in keys.iter().enumerate() {
            if !removed(i) {
                assert!(k.contains(&f), "{}: inserted key {k:?} is missing", g.name);
            }
        }
        let mut lines = recorded.lines().filter(|l| !l.starts_with('#'));
        let len: usize = lines
            .next()
            .unwrap()
            .strip_prefix("len ")
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(f.len(), len, "{}", g.name);
        assert_eq!(f.occupied_slots(), len, "{}", g.name);
        assert!(lines.next().unwrap().starts_with("false-positives-in "));
        let want: Vec<u64> = lines.map(|l| l.parse().unwrap()).collect();
        let got: Vec<u64> = ABSENT.filter(|k| f.contains(k)).collect();
        assert_eq!(got, want, "{}: absent keys answer differently", g.name);
        // The encoder has not changed either: re-encoding gives the file.
        assert_eq!(f.to_bytes(), bytes, "{}: re-encoding differs", g.name);
    }
}

#[test]
fn the_generator_still_makes_the_golden_files() {
    // Same seed, same keys, same insertion order: today's build must make
    // byte-identical filters (hashing, placement and encoding unchanged).
    for g in GOLDEN.iter().filter(|g| g.version == CURRENT_VERSION) {
        let bytes = std::fs::read(data_dir().join(format!("{}.bin", g.name))).unwrap();
        assert_eq!(build(g).to_bytes(), bytes, "{}", g.name);
    }
}

#[test]
fn damaged_golden_files_are_refused() {
    for name in ["v1-fp16.bin", "v2-fp16.bin"] {
        damaged_file_is_refused(name);
    }
}

fn damaged_file_is_refused(name: &str) {
    let bytes = std::fs::read(data_dir().join(name)).unwrap();
    let mut b = bytes.clone();
    let mid = b.len() / 2;
    b[mid] ^= 0x10;
    assert_eq!(
        CuckooFilter::from_bytes(&b).unwrap_err(),
        DecodeError::ChecksumMismatch
    );
    assert_eq!(
        CuckooFilter::from_bytes(&bytes[..bytes.len() - 1]).unwrap_err(),
        DecodeError::Truncated
    );
}
