//! Frozen filters: validation of hostile input, answers identical to the
//! live filter for every width (aligned or not, from memory or a mapped
//! file), golden files, and a second process sharing the same file.

mod common;

use common::Rng;
use concurrent_cuckoo::{CuckooFilter, DecodeError, FrozenFilter};
use std::io::Write;

fn filled(bits: u32, n: usize, seed: u64) -> (CuckooFilter, Vec<u64>) {
    let f = CuckooFilter::builder()
        .capacity(2 * n)
        .fingerprint_bits(bits)
        .seed(seed)
        .build()
        .unwrap();
    let mut rng = Rng(seed);
    let keys: Vec<u64> = (0..n).map(|_| rng.next()).collect();
    f.insert_batch(&keys).unwrap();
    // Duplicates and holes too.
    f.insert_batch(&keys[..n / 10]).unwrap();
    for k in keys.iter().step_by(7) {
        assert!(f.remove(k));
    }
    (f, keys)
}

/// Every query kind answers exactly as the live filter, on `view`.
fn assert_answers_match<B: AsRef<[u8]>>(live: &CuckooFilter, view: &FrozenFilter<B>, keys: &[u64]) {
    let mut rng = Rng(99);
    let mut probes: Vec<u64> = (0..50_000).map(|_| rng.next()).collect();
    probes.extend_from_slice(keys);
    for k in &probes {
        assert_eq!(view.contains(k), live.contains(k), "key {k:#x}");
        assert_eq!(
            view.contains_hash(*k),
            live.contains_hash(*k),
            "hash {k:#x}"
        );
    }
    for k in probes.iter().step_by(13) {
        assert_eq!(view.count(k), live.count(k), "count {k:#x}");
    }
    for burst in [1, 7, 32, 100] {
        for chunk in probes.chunks(burst).take(200) {
            let (mut a, mut b) = (vec![false; chunk.len()], vec![false; chunk.len()]);
            view.contains_batch(chunk, &mut a);
            live.contains_batch(chunk, &mut b);
            assert_eq!(a, b);
            view.contains_hash_batch(chunk, &mut a);
            live.contains_hash_batch(chunk, &mut b);
            assert_eq!(a, b);
        }
    }
    assert_eq!(view.len(), live.len());
    assert_eq!(view.capacity(), live.capacity());
    assert_eq!(view.fingerprint_bits(), live.fingerprint_bits());
    assert_eq!(view.false_positive_bound(), live.false_positive_bound());
}

#[test]
fn answers_equal_the_live_filter_for_every_width_aligned_or_not() {
    for bits in [8, 16, 32] {
        let (live, keys) = filled(bits, 20_000, u64::from(bits));
        let bytes = live.to_bytes();
        let view = FrozenFilter::from_bytes(&bytes[..]).unwrap();
        assert_answers_match(&live, &view, &keys);
        // The same bytes one byte off any alignment.
        let mut shifted = vec![0u8; bytes.len() + 1];
        shifted[1..].copy_from_slice(&bytes);
        let view = FrozenFilter::from_bytes(&shifted[1..]).unwrap();
        assert_answers_match(&live, &view, &keys);
        // Owned bytes, and a thawed copy that is byte-identical.
        let owned = FrozenFilter::from_bytes(bytes.clone()).unwrap();
        let thawed = owned.to_filter().unwrap();
        assert_eq!(thawed.to_bytes(), bytes);
        assert_eq!(thawed.len(), live.len());
        assert_eq!(owned.into_inner(), bytes);
    }
}

#[test]
fn every_truncation_and_bit_flip_is_refused_as_from_bytes_refuses_it() {
    for (bits, buckets, keys) in [(8, 4, 9), (16, 8, 20), (32, 2, 5)] {
        let f = CuckooFilter::builder()
            .capacity(0)
            .bucket_count(buckets)
            .fingerprint_bits(bits)
            .seed(7)
            .build()
            .unwrap();
        for k in 0..keys as u64 {
            f.insert(&k).unwrap();
        }
        let bytes = f.to_bytes();
        for len in 0..bytes.len() {
            let frozen = FrozenFilter::from_bytes(&bytes[..len]).unwrap_err();
            assert_eq!(
                Some(frozen),
                CuckooFilter::from_bytes(&bytes[..len]).err(),
                "{bits}-bit, length {len}"
            );
        }
        let mut flipped = bytes.clone();
        for bit in 0..bytes.len() * 8 {
            flipped[bit / 8] ^= 1 << (bit % 8);
            let frozen = FrozenFilter::from_bytes(&flipped[..]).err();
            let live = CuckooFilter::from_bytes(&flipped).err();
            flipped[bit / 8] ^= 1 << (bit % 8);
            let frozen = frozen.unwrap_or_else(|| panic!("{bits}-bit: flipped bit {bit} accepted"));
            assert_eq!(Some(frozen), live, "{bits}-bit, bit {bit}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(
            FrozenFilter::from_bytes(&longer[..]).unwrap_err(),
            DecodeError::TrailingBytes
        );
        for junk in [
            &b"\x89PNG\r\n\x1a\n"[..],
            b"",
            b"\x89CUCKOO\n\x07\x00",
            &[0u8; 200],
        ] {
            assert!(FrozenFilter::from_bytes(junk).is_err());
        }
    }
}

#[test]
fn golden_files_of_every_version_answer_as_recorded() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    for name in [
        "v1-fp8", "v1-fp16", "v1-fp32", "v2-fp8", "v2-fp16", "v2-fp32",
    ] {
        let bytes = std::fs::read(dir.join(format!("{name}.bin"))).unwrap();
        let live = CuckooFilter::from_bytes(&bytes).unwrap();
        let view = FrozenFilter::from_bytes(&bytes[..]).unwrap();
        let absent: Vec<u64> = (1_000_000..1_020_000).collect();
        assert_answers_match(&live, &view, &absent);
        let recorded = std::fs::read_to_string(dir.join(format!("{name}.txt"))).unwrap();
        let want: Vec<u64> = recorded
            .lines()
            .filter(|l| !l.starts_with('#'))
            .skip(2)
            .map(|l| l.parse().unwrap())
            .collect();
        let got: Vec<u64> = absent
            .iter()
            .copied()
            .filter(|k| view.contains(k))
            .collect();
        assert_eq!(got, want, "{name}");
    }
}

fn temp_path(tag: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("ccf-frozen-{tag}-{}.ccf", std::process::id()))
}

/// Answers to a fixed probe set, as one line a child process can print.
fn fingerprint_of_answers<B: AsRef<[u8]>>(view: &FrozenFilter<B>) -> String {
    let probes: Vec<u64> = (0..100_000u64)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .collect();
    let mut out = vec![false; probes.len()];
    view.contains_batch(&probes, &mut out);
    // The positions of the positive answers, summed up: SipHash with fixed
    // keys is the same in both processes (the same binary).
    let mut digest = std::hash::DefaultHasher::new();
    let mut positives = 0;
    for (i, _) in out.iter().enumerate().filter(|(_, &b)| b) {
        std::hash::Hasher::write_usize(&mut digest, i);
        positives += 1;
    }
    format!(
        "ANSWERS {} {positives} {:016x}",
        view.len(),
        std::hash::Hasher::finish(&digest)
    )
}

#[test]
fn open_maps_a_saved_file_and_a_second_process_answers_identically() {
    let (live, keys) = filled(16, 50_000, 5);
    let probe_keys: Vec<u64> = (0..100_000u64)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .collect();
    live.insert_batch(&probe_keys[..30_000]).unwrap();
    let path = temp_path("shared");
    live.write_to_path(&path).unwrap();
    // SAFETY: the file is only ever replaced by rename (below) while mapped.
    let view = unsafe { FrozenFilter::open(&path) }.unwrap();
    assert_answers_match(&live, &view, &keys);
    let mine = fingerprint_of_answers(&view);
    // The child is this test binary, running only the entry point below.
    let output = common::child_test_process("frozen_child_process_entry")
        .env("CCF_FROZEN_CHILD_FILE", &path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "child failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let theirs = stdout
        .lines()
        .find_map(|l| {
            l.find("ANSWERS ")
                .map(|at| l[at..].trim_end_matches(" ok").trim())
        })
        .unwrap_or_else(|| panic!("the child printed no answers: {stdout}"));
    assert_eq!(theirs, mine, "the second process answered differently");
    let positives: usize = mine.split(' ').nth(2).unwrap().parse().unwrap();
    assert!(
        positives >= 30_000,
        "the probe set must hit stored keys: {mine}"
    );
    // Replacing the file (by rename) leaves the existing mapping intact.
    CuckooFilter::with_capacity(10)
        .write_to_path(&path)
        .unwrap();
    assert_eq!(fingerprint_of_answers(&view), mine);
    // SAFETY: as above.
    assert!(unsafe { FrozenFilter::open(&path) }.unwrap().is_empty());
    std::fs::remove_file(&path).unwrap();
}

/// The second process of the test above: does nothing unless the parent
/// set `CCF_FROZEN_CHILD_FILE`.
#[test]
fn frozen_child_process_entry() {
    if let Some(path) = std::env::var_os("CCF_FROZEN_CHILD_FILE") {
        // SAFETY: the parent leaves the file alone until this child exits.
        let view = unsafe { FrozenFilter::open(path) }.unwrap();
        let mut stdout = std::io::stdout();
        writeln!(stdout, "\n{}", fingerprint_of_answers(&view)).unwrap();
        stdout.flush().unwrap();
    }
}

#[test]
fn open_and_load_report_io_errors_and_damaged_files() {
    let missing = temp_path("missing");
    // SAFETY: there is no file to change.
    match unsafe { FrozenFilter::open(&missing) }.unwrap_err() {
        DecodeError::Io(e) => assert_eq!(e.kind(), std::io::ErrorKind::NotFound),
        other => panic!("{other:?}"),
    }
    match FrozenFilter::load(&missing).unwrap_err() {
        DecodeError::Io(e) => assert_eq!(e.kind(), std::io::ErrorKind::NotFound),
        other => panic!("{other:?}"),
    }
    let path = temp_path("damaged");
    let mut bytes = CuckooFilter::with_capacity(1000).to_bytes();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(
        // SAFETY: nothing changes the file while the (refused) map lives.
        unsafe { FrozenFilter::open(&path) }.unwrap_err(),
        DecodeError::ChecksumMismatch
    );
    assert_eq!(
        FrozenFilter::load(&path).unwrap_err(),
        DecodeError::ChecksumMismatch
    );
    std::fs::write(&path, b"").unwrap();
    assert!(FrozenFilter::load(&path).is_err());
    std::fs::remove_file(&path).unwrap();
}

/// `load` reads a private copy, 64-byte aligned (on 2 MiB pages when
/// large): it answers as the live filter did, and nothing done to the file
/// afterwards (truncated, rewritten in place: what makes a mapped file
/// fault or change under its reader) reaches it.
#[test]
fn load_reads_a_private_copy_that_the_file_cannot_change() {
    for (bits, items) in [(8, 3_000), (16, 300_000), (32, 1_000_000)] {
        let (live, keys) = filled(bits, items, 9);
        let path = temp_path(&format!("load-{bits}"));
        live.write_to_path(&path).unwrap();
        let view = FrozenFilter::load(&path).unwrap();
        assert_eq!(view.as_bytes().as_ptr() as usize % 64, 0);
        if view.as_bytes().len() >= 4 << 20 {
            assert_eq!(view.as_bytes().as_ptr() as usize % (2 << 20), 0);
        }
        assert_answers_match(&live, &view, &keys);
        let before = fingerprint_of_answers(&view);
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(100)
            .unwrap();
        std::fs::write(&path, vec![0xAB; 4096]).unwrap();
        assert_eq!(fingerprint_of_answers(&view), before);
        assert_eq!(view.to_filter().unwrap().to_bytes(), live.to_bytes());
        std::fs::remove_file(&path).unwrap();
    }
}
