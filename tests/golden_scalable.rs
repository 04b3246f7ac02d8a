//! Golden file of the growing filter: a `ScalableCuckooFilter` encoded in
//! format version 3 (a container of version-2 levels), committed in
//! `tests/data/`, must keep decoding and answering exactly as recorded. Its
//! first level was emptied and retired before it was saved, so the file's
//! level index table skips an index.
//!
//! Each level's header records the longest displacement path its inserts
//! search. The golden file's levels were written when levels searched up
//! to 5 moves; levels made since search up to 4 (`LEVEL_MAX_PATH`), so the
//! generator now writes a second file, `v3-scalable-path4.bin`, which
//! differs from the first only in those four header bytes and the levels'
//! checksums (the same inserts land in the same slots: the answers file is
//! the same). The first stays, as data written by earlier releases.
//!
//! Since nested level maps (issue 53), the generator's filter places keys
//! differently and marks its container nested: it writes
//! `v3-scalable-nested.bin` and its own answers. The two older files stay,
//! as data written by earlier releases, which keep decoding to filters of
//! the old maps and keep answering as recorded.
//!
//! Regenerate only on purpose (a new format version gets new files); this
//! writes the generator's file and its answers, never the older files:
//!
//! ```text
//! CUCKOO_REGENERATE_GOLDEN=1 cargo test --test golden_scalable -- --ignored
//! ```

use concurrent_cuckoo::{CuckooFilter, DecodeError, ScalableCuckooFilter};
use std::path::PathBuf;

const NAME: &str = "v3-scalable";
/// The file the generator makes today (see the module comment).
const GENERATED: &str = "v3-scalable-nested";
/// The generator's file before nested maps.
const PATH4: &str = "v3-scalable-path4";
/// Absent keys probed: their answers pin every level's fingerprints and
/// bucket positions.
const ABSENT: std::ops::Range<u64> = 1_000_000..1_040_000;
/// Integer keys inserted, in order.
const INTS: u64 = 2_000;

fn int_key(i: u64) -> u64 {
    i.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

fn str_key(i: u32) -> String {
    format!("flow-{i}")
}

/// The filter, as the generator builds it, and how many of the first
/// integer keys filled (and were then removed from) its first level.
fn build() -> (ScalableCuckooFilter, u64) {
    let f = ScalableCuckooFilter::builder()
        .capacity(64)
        .false_positive_rate(1e-3)
        .growth_factor(2)
        .max_levels(12)
        .seed(0x601D_0300)
        .build()
        .unwrap();
    let mut in_first = None;
    for i in 0..INTS {
        f.insert(&int_key(i)).unwrap();
        if f.levels() > 1 && in_first.is_none() {
            in_first = Some(i); // keys 0..i went to level 0
        }
    }
    for i in 0..50 {
        f.insert(str_key(i).as_str()).unwrap();
    }
    let in_first = in_first.expect("the filter must grow");
    let levels = f.levels();
    for i in 0..in_first {
        assert!(f.remove(&int_key(i)).is_removed());
    }
    assert_eq!(f.levels(), levels - 1, "the first level must be retired");
    (f, in_first)
}

fn record(f: &ScalableCuckooFilter) -> String {
    let mut out = format!(
        "# Answers of the golden filter beside this file (see tests/golden_scalable.rs).\n\
         len {}\nlevel-bits {:?}\nfalse-positives-in {}..{}\n",
        f.len(),
        f.level_fingerprint_bits(),
        ABSENT.start,
        ABSENT.end
    );
    for k in ABSENT.filter(|k| f.contains(k)) {
        out.push_str(&format!("{k}\n"));
    }
    out
}

fn data(ext: &str) -> PathBuf {
    data_of(NAME, ext)
}

fn data_of(name: &str, ext: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/data/{name}.{ext}"))
}

#[test]
#[ignore = "writes tests/data; run deliberately with CUCKOO_REGENERATE_GOLDEN=1"]
fn regenerate_golden_file() {
    if std::env::var_os("CUCKOO_REGENERATE_GOLDEN").is_none() {
        eprintln!("set CUCKOO_REGENERATE_GOLDEN=1 to overwrite tests/data");
        return;
    }
    let (f, _) = build();
    std::fs::write(data_of(GENERATED, "bin"), f.to_bytes()).unwrap();
    std::fs::write(data_of(GENERATED, "txt"), record(&f)).unwrap();
}

#[test]
fn golden_file_decodes_and_answers_as_recorded() {
    decodes_and_answers_as_recorded(NAME);
}

#[test]
fn nested_golden_file_decodes_and_answers_as_recorded() {
    decodes_and_answers_as_recorded(GENERATED);
}

/// The level-map field (bytes 10-11 of the container): 0 in the files of
/// earlier releases, which keep it when they grow; 1 in new filters.
#[test]
fn old_files_keep_their_maps_as_they_grow_and_new_filters_nest() {
    let old = ScalableCuckooFilter::from_bytes(&std::fs::read(data("bin")).unwrap()).unwrap();
    for i in INTS..INTS * 4 {
        old.insert(&int_key(i)).unwrap();
    }
    assert_eq!(old.to_bytes()[10..12], [0, 0]);
    assert_eq!(build().0.to_bytes()[10..12], [1, 0]);
    let mut other = std::fs::read(data_of(GENERATED, "bin")).unwrap();
    other[10] = 2;
    assert!(matches!(
        ScalableCuckooFilter::from_bytes(&other),
        Err(DecodeError::InvalidHeader(_))
    ));
}

/// A forged nested container whose level is narrower than the width its
/// configuration gives level 0 (the nested maps' key): refused, not a
/// panic. The recorded rate sits where level 0 gets 32 bits, yet one
/// 16-bit level's bound still fits (a checksum proves nothing against a
/// forger: it is recomputed).
#[test]
fn a_nested_level_narrower_than_the_key_is_refused() {
    let f = ScalableCuckooFilter::builder()
        .capacity(1000)
        .max_levels(64)
        .false_positive_rate(1e-3)
        .seed(5)
        .build()
        .unwrap();
    assert_eq!(f.level_fingerprint_bits(), vec![16]);
    let mut bytes = f.to_bytes();
    assert_eq!(bytes[10], 1, "nested");
    let rate = 8.0 / 65536.0 + 5e-8;
    bytes[24..32].copy_from_slice(&f64::to_bits(rate).to_le_bytes());
    let sum = xxhash_rust::xxh3::xxh3_64(&bytes[..64]);
    bytes[64..72].copy_from_slice(&sum.to_le_bytes());
    assert!(matches!(
        ScalableCuckooFilter::from_bytes(&bytes),
        Err(DecodeError::InvalidHeader(_))
    ));
    // The same bytes as a container of the old maps decode: their level
    // needs no key.
    bytes[10] = 0;
    let sum = xxhash_rust::xxh3::xxh3_64(&bytes[..64]);
    bytes[64..72].copy_from_slice(&sum.to_le_bytes());
    assert!(ScalableCuckooFilter::from_bytes(&bytes).is_ok());
}

fn decodes_and_answers_as_recorded(name: &str) {
    let bytes = std::fs::read(data_of(name, "bin")).unwrap();
    let recorded = std::fs::read_to_string(data_of(name, "txt")).unwrap();
    let f = ScalableCuckooFilter::from_bytes(&bytes).unwrap();
    assert_eq!(u16::from_le_bytes([bytes[8], bytes[9]]), 3);
    let (_, in_first) = build();
    assert!(
        (in_first..INTS).all(|i| f.contains(&int_key(i))),
        "an inserted key is missing"
    );
    assert!((0..50).all(|i| f.contains(str_key(i).as_str())));
    let mut lines = recorded.lines().filter(|l| !l.starts_with('#'));
    let len: usize = lines
        .next()
        .unwrap()
        .strip_prefix("len ")
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(f.len(), len);
    assert_eq!(
        lines.next().unwrap(),
        format!("level-bits {:?}", f.level_fingerprint_bits())
    );
    assert!(lines.next().unwrap().starts_with("false-positives-in "));
    let want: Vec<u64> = lines.map(|l| l.parse().unwrap()).collect();
    let got: Vec<u64> = ABSENT.filter(|k| f.contains(k)).collect();
    assert_eq!(got, want, "absent keys answer differently");
    assert_eq!(f.to_bytes(), bytes, "re-encoding differs");
    // The decoded filter keeps growing from where it was.
    let levels = f.levels();
    for i in INTS..INTS * 4 {
        f.insert(&int_key(i)).unwrap();
    }
    assert!(f.levels() > levels);
}

#[test]
fn the_generator_still_makes_the_golden_file() {
    let bytes = std::fs::read(data_of(GENERATED, "bin")).unwrap();
    let (f, _) = build();
    assert_eq!(f.to_bytes(), bytes);
}

/// The generator's file before nested maps is the same filter as the
/// older file: the same answers, every level the same size and width and
/// holding as many items; only the path limit its header records differs.
#[test]
fn the_path4_file_is_the_older_file_with_shorter_paths() {
    let f =
        ScalableCuckooFilter::from_bytes(&std::fs::read(data_of(PATH4, "bin")).unwrap()).unwrap();
    let older = ScalableCuckooFilter::from_bytes(&std::fs::read(data("bin")).unwrap()).unwrap();
    assert_eq!(record(&f), record(&older));
    let (new, old) = (f.level_stats(), older.level_stats());
    assert_eq!(new.len(), old.len());
    for (n, o) in new.iter().zip(&old) {
        assert_eq!(
            (n.len, n.bucket_count, n.fingerprint_bits),
            (o.len, o.bucket_count, o.fingerprint_bits)
        );
        assert_eq!((n.max_path_len, o.max_path_len), (4, 5));
    }
}

#[test]
fn a_damaged_or_mistyped_golden_file_is_refused() {
    let bytes = std::fs::read(data("bin")).unwrap();
    let stored = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let first_level = 56 + (4 * stored).next_multiple_of(8) + 8;
    assert_eq!(
        &bytes[first_level..first_level + 8],
        &bytes[..8],
        "a level starts here"
    );
    // In the container header, its level table, a level's body: the
    // checksums catch it.
    for at in [20, 56, bytes.len() / 2] {
        let mut b = bytes.clone();
        b[at] ^= 0x10;
        assert_eq!(
            ScalableCuckooFilter::from_bytes(&b).unwrap_err(),
            DecodeError::ChecksumMismatch,
            "a flipped bit at {at}"
        );
    }
    // In a level's header: its fields are checked before its checksum.
    let mut b = bytes.clone();
    b[first_level + 12] ^= 0x10;
    assert!(matches!(
        ScalableCuckooFilter::from_bytes(&b).unwrap_err(),
        DecodeError::ChecksumMismatch | DecodeError::InvalidHeader(_)
    ));
    assert_eq!(
        ScalableCuckooFilter::from_bytes(&bytes[..bytes.len() - 1]).unwrap_err(),
        DecodeError::Truncated
    );
    let mut longer = bytes.clone();
    longer.push(0);
    assert_eq!(
        ScalableCuckooFilter::from_bytes(&longer).unwrap_err(),
        DecodeError::TrailingBytes
    );
    match CuckooFilter::from_bytes(&bytes).unwrap_err() {
        DecodeError::InvalidHeader(why) => assert!(why.contains("ScalableCuckooFilter")),
        e => panic!("a growing filter decoded as a single one gave {e:?}"),
    }
}

/// A level decoded from the older file searches paths of 5 moves; once
/// retired it must not be reopened as it is, or the filter and a copy
/// saved without it (which allocates a level of 4 moves in its slot) would
/// stop being identical. `clear` retires every level in use but the
/// oldest; both then grow into the retired slot above it.
#[test]
fn a_retired_level_from_the_older_file_is_replaced_not_reopened() {
    let bytes = std::fs::read(data("bin")).unwrap();
    let original = ScalableCuckooFilter::from_bytes(&bytes).unwrap();
    assert!(original.level_stats().iter().all(|s| s.max_path_len == 5));
    let levels = original.levels();
    original.clear();
    assert_eq!(original.levels(), 1);
    let copy = ScalableCuckooFilter::from_bytes(&original.to_bytes()).unwrap();
    let mut i = 0;
    while original.levels() < 2 {
        original.insert(&int_key(i)).unwrap();
        copy.insert(&int_key(i)).unwrap();
        i += 1;
    }
    assert!(
        levels > 2,
        "the file holds the retired slot above the oldest"
    );
    let paths: Vec<usize> = original
        .level_stats()
        .iter()
        .map(|s| s.max_path_len)
        .collect();
    assert_eq!(
        paths,
        [5, 4],
        "the oldest level kept its own limit; the new one has 4"
    );
    assert_eq!(original.to_bytes(), copy.to_bytes());
}
