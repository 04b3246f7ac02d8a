//! Golden files of the windowed filter's format (version 4,
//! `docs/format.md`): `tests/data-windowed/v4-windowed.bin` (16-bit lanes)
//! and `v4-windowed-wide.bin` (32-bit lanes), small filters saved by an
//! earlier build, must keep decoding and answering as recorded, and
//! filters built the same way today must save the same bytes. A change to
//! the format, the lane encoding, the default hasher or the sweep's effect
//! on saved bytes fails here. The decode fuzzer starts from this file too
//! (`scripts/fuzz.sh` seeds its corpus with them). It lives apart from
//! `tests/data/`, whose files every reader of the plain and growing
//! formats (the chunk decoder, the frozen view, the C view test) opens.
//!
//! Regenerate only on purpose (a new format version gets a new file):
//!
//! ```text
//! CUCKOO_REGENERATE_GOLDEN=1 cargo test --test golden_windowed -- --ignored
//! ```
//!
//! writes a file that is missing; `CUCKOO_REGENERATE_ALL=1` as well
//! rewrites every one:
//!
//! ```text
//! CUCKOO_REGENERATE_GOLDEN=1 CUCKOO_REGENERATE_ALL=1 cargo test --test golden_windowed -- --ignored
//! ```

use concurrent_cuckoo::WindowedCuckooFilter;
use std::path::PathBuf;

/// The golden files: name, and the rate their filter is built for (1e-6
/// takes 32-bit lanes).
const FILES: [(&str, f64); 2] = [("v4-windowed.bin", 1e-3), ("v4-windowed-wide.bin", 1e-6)];

fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data-windowed")
        .join(name)
}

fn read(name: &str) -> Vec<u8> {
    std::fs::read(path(name)).unwrap_or_else(|e| panic!("tests/data-windowed/{name}: {e}"))
}

/// Keys of generation `g`: 40 each.
fn keys(g: u64) -> impl Iterator<Item = String> {
    (0..40).map(move |i| format!("flow-{g}-{i}"))
}

/// The recorded filter: a window of 3 generations, keys inserted in
/// generations 0 to 4 (those of 0 and 1 expired by the end), generation
/// 2's keys refreshed in generation 3, saved at generation 4.
fn build(rate: f64) -> WindowedCuckooFilter {
    let f = WindowedCuckooFilter::builder()
        .capacity(300)
        .generations(3)
        .false_positive_rate(rate)
        .seed(0x5EED)
        .build()
        .unwrap();
    for g in 0..5 {
        for k in keys(g) {
            f.insert(&k).unwrap();
        }
        if g == 3 {
            for k in keys(2) {
                f.insert(&k).unwrap();
            }
        }
        if g < 4 {
            f.advance();
        }
    }
    f
}

#[test]
fn the_golden_files_decode_and_answer_as_recorded() {
    for ((name, _), lane_bits) in FILES.into_iter().zip([16, 32]) {
        let bytes = read(name);
        let f = WindowedCuckooFilter::from_bytes(&bytes).unwrap();
        assert_eq!(f.lane_bits(), lane_bits, "{name}");
        answers_as_recorded(&f, &bytes);
    }
}

fn answers_as_recorded(f: &WindowedCuckooFilter, bytes: &[u8]) {
    assert_eq!((f.generation(), f.generations()), (4, 3));
    // Live: generations 2 (refreshed in 3), 3 and 4.
    for g in 2..5 {
        assert!(keys(g).all(|k| f.contains(&k)), "generation {g}'s keys");
    }
    assert_eq!(f.len(), 120);
    // Generation 2's keys live through 5 (refreshed in 3), 3's through 5.
    assert_eq!(f.len_at(6), 40);
    assert_eq!(f.to_bytes(), bytes, "re-encoding the golden file differs");
    let streamed = WindowedCuckooFilter::read_from(bytes).unwrap();
    assert_eq!(streamed.to_bytes(), bytes);
}

#[test]
fn filters_built_the_same_way_save_the_same_bytes() {
    for (name, rate) in FILES {
        assert!(build(rate).to_bytes() == read(name), "{name}");
    }
}

#[test]
#[ignore = "writes tests/data-windowed/*.bin: run on purpose only"]
fn regenerate_golden_files() {
    if std::env::var_os("CUCKOO_REGENERATE_GOLDEN").is_some() {
        for (name, rate) in FILES {
            if !path(name).exists() || std::env::var_os("CUCKOO_REGENERATE_ALL").is_some() {
                std::fs::write(path(name), build(rate).to_bytes()).unwrap();
            }
        }
    }
}
