//! The binary format (`docs/format.md`): round trips for every width and
//! for `with_capacity`, and rejection of every kind of damaged or foreign
//! input: every truncation, every single flipped bit, wrong magic, future
//! versions, inconsistent headers, a mismatched hasher. Plus consistent
//! snapshots while other threads write.

mod common;

use common::Rng;
use concurrent_cuckoo::{
    CuckooFilter, DecodeError, DefaultHashBuilder, PersistentHasher, PortableHasher, ReadOptions,
};
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Cursor, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Barrier;

/// Header length of the version this release writes (2).
const HEADER_LEN: usize = 64;

fn filter(bits: u32, capacity: usize, seed: u64) -> CuckooFilter {
    CuckooFilter::builder()
        .capacity(capacity)
        .fingerprint_bits(bits)
        .seed(seed)
        .build()
        .unwrap()
}

fn tiny(bits: u32, buckets: usize, keys: u64) -> CuckooFilter {
    let f = CuckooFilter::builder()
        .capacity(0)
        .bucket_count(buckets)
        .fingerprint_bits(bits)
        .seed(5)
        .build()
        .unwrap();
    for k in 0..keys {
        f.insert(&k).unwrap();
    }
    f
}

/// XXH3-64 with seed 0: the format's checksum. `PortableHasher` hashes
/// exactly the bytes written to it, so it doubles as the reference here.
fn checksum(bytes: &[u8]) -> u64 {
    let mut h = PortableHasher::with_seed(0);
    h.write(bytes);
    h.finish()
}

/// Rewrites the trailing checksum so that a deliberately edited encoding
/// passes the checksum and reaches the later checks.
fn reseal(bytes: &mut [u8]) {
    let n = bytes.len() - 8;
    let sum = checksum(&bytes[..n]);
    bytes[n..].copy_from_slice(&sum.to_le_bytes());
}

/// Every answer a filter gives for `keys`.
fn answers(f: &CuckooFilter, keys: &[u64]) -> Vec<bool> {
    keys.iter().map(|k| f.contains(k)).collect()
}

fn assert_same_filter(a: &CuckooFilter, b: &CuckooFilter, probes: &[u64]) {
    assert_eq!(a.fingerprint_bits(), b.fingerprint_bits());
    assert_eq!(a.bucket_count(), b.bucket_count());
    assert_eq!(a.len(), b.len());
    assert_eq!(b.occupied_slots(), b.len());
    assert_eq!(a.max_path_len(), b.max_path_len());
    assert_eq!(a.hasher().seed(), b.hasher().seed());
    assert_eq!(answers(a, probes), answers(b, probes));
}

#[test]
fn every_width_round_trips_exactly() {
    let mut rng = Rng(1);
    let probes: Vec<u64> = (0..100_000).map(|_| rng.next()).collect();
    for bits in [8, 16, 32] {
        let f = filter(bits, 20_000, 42);
        let keys: Vec<u64> = (0..20_000).map(|_| rng.next()).collect();
        for k in &keys {
            f.insert(k).unwrap();
        }
        // Duplicates and removals too: holes in buckets must survive.
        f.insert(&keys[0]).unwrap();
        for k in keys.iter().step_by(7) {
            assert!(f.remove(k));
        }
        let bytes = f.to_bytes();
        assert_eq!(bytes.len(), f.encoded_len());
        assert_eq!(
            bytes.len(),
            72 + f.bucket_count() * 4 * bits as usize / 8,
            "{bits}"
        );
        let g = CuckooFilter::from_bytes(&bytes).unwrap();
        assert_same_filter(&f, &g, &probes);
        assert_same_filter(&f, &g, &keys);
        assert_eq!(g.to_bytes(), bytes, "re-encoding is byte-identical");
        // The decoded filter is fully functional.
        assert!(g.remove(&keys[1]));
        g.insert(&12345u64).unwrap();
        assert!(g.contains(&12345u64));
        assert_eq!(g.len(), f.len());
        assert_eq!(g.occupied_slots(), g.len());
    }
}

#[test]
fn with_capacity_filters_round_trip_with_their_random_seed() {
    let f = CuckooFilter::with_capacity(50_000);
    let mut rng = Rng(2);
    for _ in 0..45_000 {
        f.insert(&rng.next()).unwrap();
    }
    f.insert("a string key").unwrap();
    f.insert(&b"bytes"[..]).unwrap();
    f.insert(&(1u8, -2i64, "tuple", 3usize)).unwrap();
    let g = CuckooFilter::from_bytes(&f.to_bytes()).unwrap();
    assert_eq!(g.hasher().seed(), f.hasher().seed());
    let mut rng = Rng(2);
    let inserted: Vec<u64> = (0..45_000).map(|_| rng.next()).collect();
    let absent: Vec<u64> = (0..200_000).map(|_| rng.next()).collect();
    assert!(inserted.iter().all(|k| g.contains(k)), "no false negatives");
    assert_same_filter(&f, &g, &absent);
    assert!(g.contains("a string key"));
    assert!(g.contains(&b"bytes"[..]));
    assert!(g.contains(&(1u8, -2i64, "tuple", 3usize)));
    // Hash-level API agrees too.
    for k in absent.iter().take(1000) {
        let h = f.hasher().hash_one(k);
        assert_eq!(g.hasher().hash_one(k), h);
        assert_eq!(g.contains_hash(h), f.contains_hash(h));
    }
}

#[test]
fn empty_full_and_tuned_filters_round_trip() {
    let empty = filter(16, 0, 9);
    let g = CuckooFilter::from_bytes(&empty.to_bytes()).unwrap();
    assert!(g.is_empty());
    assert_eq!(g.bucket_count(), 2);

    // Filled to the first failure.
    let full = filter(8, 2000, 10);
    let mut k = 0u64;
    while full.insert(&k).is_ok() {
        k += 1;
    }
    let g = CuckooFilter::from_bytes(&full.to_bytes()).unwrap();
    assert_eq!(g.len(), full.len());
    assert!((0..k).all(|k| g.contains(&k)));

    let tuned = CuckooFilter::builder()
        .capacity(100)
        .max_path_len(2)
        .stripe_count(2)
        .seed(3)
        .build()
        .unwrap();
    tuned.insert(&1u8).unwrap();
    let g = CuckooFilter::from_bytes(&tuned.to_bytes()).unwrap();
    assert_eq!(g.max_path_len(), 2);
    assert!(g.contains(&1u8));
}

#[test]
fn write_to_and_read_from_stream() {
    let f = filter(16, 300_000, 11);
    for k in 0..250_000u64 {
        f.insert(&k).unwrap();
    }
    // Larger than the 64 KiB streaming chunk, so several chunks are used.
    assert!(f.encoded_len() > 4 * 64 * 1024);
    let mut out = Vec::new();
    f.write_to(&mut out).unwrap();
    assert_eq!(out, f.to_bytes());

    // Anything after the encoding stays in the reader.
    out.extend_from_slice(b"next record");
    let mut cursor = Cursor::new(&out);
    let g = CuckooFilter::read_from(&mut cursor).unwrap();
    let mut rest = String::new();
    cursor.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "next record");
    assert_eq!(g.len(), 250_000);
    assert!((0..250_000u64).all(|k| g.contains(&k)));

    // A reader that returns a few bytes at a time and is sometimes
    // interrupted still decodes.
    let g = CuckooFilter::read_from(Trickle {
        data: &out,
        pos: 0,
        calls: 0,
    })
    .unwrap();
    assert_eq!(g.len(), 250_000);
}

/// Returns at most 1000 bytes per read, and `Interrupted` every 7th call.
struct Trickle<'a> {
    data: &'a [u8],
    pos: usize,
    calls: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.calls += 1;
        if self.calls.is_multiple_of(7) {
            return Err(io::ErrorKind::Interrupted.into());
        }
        let n = buf.len().min(1000).min(self.data.len() - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[test]
fn io_errors_are_reported() {
    struct Broken;
    impl Read for Broken {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            Err(io::ErrorKind::PermissionDenied.into())
        }
    }
    let err = CuckooFilter::read_from(Broken).unwrap_err();
    assert_eq!(err, DecodeError::Io(io::ErrorKind::PermissionDenied.into()));
    // The I/O error itself is kept, as the source.
    let source = std::error::Error::source(&err).expect("an io::Error source");
    assert_eq!(
        source.downcast_ref::<io::Error>().map(io::Error::kind),
        Some(io::ErrorKind::PermissionDenied)
    );

    struct Full(usize);
    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.0 == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            let n = buf.len().min(self.0);
            self.0 -= n;
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let f = filter(16, 100_000, 1);
    for room in [0, 10, 48, 100_000] {
        assert!(f.write_to(Full(room)).is_err(), "{room}");
    }
    // The filter is still usable afterwards (the locks were released).
    f.insert(&1u8).unwrap();
    assert!(f.contains(&1u8));
}

#[test]
fn every_truncation_is_rejected() {
    for bits in [8, 16, 32] {
        let bytes = tiny(bits, 6, 10).to_bytes();
        for len in 0..bytes.len() {
            assert_eq!(
                CuckooFilter::from_bytes(&bytes[..len]).unwrap_err(),
                DecodeError::Truncated,
                "{bits}-bit, {len} of {} bytes",
                bytes.len()
            );
            assert_eq!(
                CuckooFilter::read_from(&bytes[..len]).unwrap_err(),
                DecodeError::Truncated,
                "streamed, {bits}-bit, {len} of {} bytes",
                bytes.len()
            );
        }
    }
    // And a large one, cut inside the body and inside the checksum.
    let bytes = filter(16, 100_000, 2).to_bytes();
    for len in [HEADER_LEN, 70_000, bytes.len() - 8, bytes.len() - 1] {
        assert_eq!(
            CuckooFilter::from_bytes(&bytes[..len]).unwrap_err(),
            DecodeError::Truncated
        );
        assert_eq!(
            CuckooFilter::read_from(&bytes[..len]).unwrap_err(),
            DecodeError::Truncated
        );
    }
}

#[test]
fn trailing_bytes_are_rejected_by_from_bytes() {
    let mut bytes = tiny(16, 4, 5).to_bytes();
    bytes.push(0);
    assert_eq!(
        CuckooFilter::from_bytes(&bytes).unwrap_err(),
        DecodeError::TrailingBytes
    );
}

#[test]
fn every_single_bit_flip_is_rejected() {
    for (bits, buckets, keys) in [(8, 4, 9), (16, 8, 20), (32, 2, 5)] {
        let f = tiny(bits, buckets, keys);
        assert!(!f.is_empty());
        let bytes = f.to_bytes();
        assert!(CuckooFilter::from_bytes(&bytes).is_ok());
        let mut flipped = bytes.clone();
        for bit in 0..bytes.len() * 8 {
            flipped[bit / 8] ^= 1 << (bit % 8);
            let err = CuckooFilter::from_bytes(&flipped).err();
            let streamed = CuckooFilter::read_from(&flipped[..]).err();
            flipped[bit / 8] ^= 1 << (bit % 8);
            let byte = bit / 8;
            let err = err.unwrap_or_else(|| panic!("{bits}-bit: flipping bit {bit} was accepted"));
            // Streaming agrees, except that it cannot know the input is
            // too short for a (valid) header that claims a huge table: it
            // reserves the table first, which may fail instead.
            match (&err, &streamed) {
                (DecodeError::Truncated, Some(DecodeError::AllocationFailed(_))) => {}
                // On 32-bit targets such a claim exceeds the address space
                // and is refused as an invalid header before reserving.
                #[cfg(target_pointer_width = "32")]
                (DecodeError::Truncated, Some(DecodeError::InvalidHeader(_))) => {}
                _ => assert_eq!(streamed.as_ref(), Some(&err), "bit {bit}"),
            }
            // Which check fires depends on the field; past the header it is
            // always the checksum.
            if byte >= HEADER_LEN {
                assert_eq!(err, DecodeError::ChecksumMismatch, "bit {bit}");
            } else if byte < 8 {
                assert_eq!(err, DecodeError::BadMagic, "bit {bit}");
            }
        }
        assert_eq!(flipped, bytes);
    }
}

#[test]
fn foreign_input_is_bad_magic() {
    for input in [
        &b"\x89PNG\r\n\x1a\n and then some"[..],
        b"{\"json\": true}",
        b"x",
        &[0u8; 100],
    ] {
        assert_eq!(
            CuckooFilter::from_bytes(input).unwrap_err(),
            DecodeError::BadMagic,
            "{input:?}"
        );
    }
    let mut bytes = tiny(16, 4, 1).to_bytes();
    bytes[1] = b'c';
    assert_eq!(
        CuckooFilter::from_bytes(&bytes).unwrap_err(),
        DecodeError::BadMagic
    );
    assert_eq!(
        CuckooFilter::from_bytes(b"").unwrap_err(),
        DecodeError::Truncated
    );
}

#[test]
fn unknown_versions_are_refused() {
    let bytes = tiny(16, 4, 3).to_bytes();
    assert_eq!(&bytes[8..10], &[2, 0], "this release writes version 2");
    for version in [0u16, 5, 0x0100, 0x0201, u16::MAX] {
        let mut b = bytes.clone();
        b[8..10].copy_from_slice(&version.to_le_bytes());
        reseal(&mut b);
        let err = CuckooFilter::from_bytes(&b).unwrap_err();
        assert_eq!(err, DecodeError::UnsupportedVersion(version));
        assert!(err.to_string().contains(&version.to_string()));
        assert_eq!(
            CuckooFilter::read_from(&b[..]).unwrap_err(),
            DecodeError::UnsupportedVersion(version)
        );
    }
    // Version 3 is the container of a growing filter: the error says so.
    let mut b = bytes.clone();
    b[8..10].copy_from_slice(&3u16.to_le_bytes());
    reseal(&mut b);
    match CuckooFilter::from_bytes(&b).unwrap_err() {
        DecodeError::InvalidHeader(why) => assert!(why.contains("ScalableCuckooFilter"), "{why}"),
        e => panic!("version 3 decoded as a single filter gave {e:?}"),
    }
    // Version 4 is a windowed filter's: the error names it too.
    b[8..10].copy_from_slice(&4u16.to_le_bytes());
    reseal(&mut b);
    match CuckooFilter::from_bytes(&b).unwrap_err() {
        DecodeError::InvalidHeader(why) => assert!(why.contains("WindowedCuckooFilter"), "{why}"),
        e => panic!("version 4 decoded as a single filter gave {e:?}"),
    }
}

/// A hasher of our own, with its own identity.
#[derive(Clone)]
struct OtherHasher(u64);

impl BuildHasher for OtherHasher {
    type Hasher = std::hash::DefaultHasher;
    fn build_hasher(&self) -> Self::Hasher {
        let mut h = std::hash::DefaultHasher::new();
        h.write_u64(self.0);
        h
    }
}

impl PersistentHasher for OtherHasher {
    const ID: u32 = 0x00C0_FFEE;
    fn seed(&self) -> u64 {
        self.0
    }
    fn from_seed(seed: u64) -> Self {
        Self(seed)
    }
}

#[test]
fn mismatched_hashers_are_refused() {
    let other = CuckooFilter::builder()
        .capacity(100)
        .hasher(OtherHasher(77))
        .build()
        .unwrap();
    other.insert("k").unwrap();
    let bytes = other.to_bytes();
    let err = CuckooFilter::from_bytes(&bytes).unwrap_err();
    assert_eq!(
        err,
        DecodeError::HasherMismatch {
            expected: 1,
            found: 0x00C0_FFEE
        }
    );
    assert!(err.to_string().starts_with("hasher mismatch"), "{err}");
    assert_eq!(
        CuckooFilter::read_from(&bytes[..]).unwrap_err(),
        err,
        "streaming refuses before reading the body"
    );

    // The right hasher decodes it, seed and all.
    let other = ReadOptions::new().hasher::<OtherHasher>();
    let back = CuckooFilter::from_bytes_with_options(&bytes, other).unwrap();
    assert_eq!(back.hasher().0, 77);
    assert!(back.contains("k"));
    let back = CuckooFilter::read_from_with_options(&bytes[..], other).unwrap();
    assert!(back.contains("k"));

    // And refuses a default-hasher filter.
    let default = tiny(16, 4, 1).to_bytes();
    assert_eq!(
        CuckooFilter::from_bytes_with_options(&default, other).err(),
        Some(DecodeError::HasherMismatch {
            expected: 0x00C0_FFEE,
            found: 1
        })
    );
    assert_eq!(<DefaultHashBuilder as PersistentHasher>::ID, 1);
}

/// A header field set to `value` (and the checksum fixed up), decoded.
fn with_field(bytes: &[u8], at: usize, value: &[u8]) -> Result<CuckooFilter, DecodeError> {
    let mut b = bytes.to_vec();
    b[at..at + value.len()].copy_from_slice(value);
    reseal(&mut b);
    let streamed = CuckooFilter::read_from(&b[..]).err();
    let result = CuckooFilter::from_bytes(&b);
    assert_eq!(result.as_ref().err(), streamed.as_ref());
    result
}

#[test]
fn inconsistent_headers_are_refused_even_with_a_valid_checksum() {
    let f = tiny(16, 4, 6);
    let bytes = f.to_bytes();
    let invalid = |at: usize, value: &[u8]| match with_field(&bytes, at, value) {
        Err(DecodeError::InvalidHeader(why)) => why,
        other => panic!("field at {at} = {value:?}: {other:?}"),
    };
    for bits in [0u8, 1, 7, 9, 12, 24, 64, 255] {
        assert!(invalid(10, &[bits]).contains("width"));
    }
    for slots in [0u8, 1, 2, 3, 5, 8] {
        assert!(invalid(11, &[slots]).contains("slots"));
    }
    for path in [0u8, 6, 200] {
        assert!(invalid(12, &[path]).contains("path"));
    }
    for (at, value) in [
        (13, &[1u8][..]),
        (15, &[0x80]),
        (36, &[0, 0, 0, 1]),
        (48, &[1]),
        (63, &[0x80]),
    ] {
        assert!(invalid(at, value).contains("reserved"));
    }
    for buckets in [0u64, 1, 3, 5, (1 << 32) + 2, 1 << 40, u64::MAX] {
        assert!(invalid(16, &buckets.to_le_bytes()).contains("bucket count"));
    }
    for len in [17u64, 1000, u64::MAX] {
        assert!(invalid(24, &len.to_le_bytes()).contains("length"));
    }
    // Consistent sizes but a length that does not match the contents: only
    // detectable after reading the body.
    for len in [0u64, 5, 7, 16] {
        assert!(invalid(24, &len.to_le_bytes()).contains("occupied"));
    }
    // A checksum that is right for other data.
    let mut b = bytes.clone();
    let n = b.len();
    b[n - 8..].copy_from_slice(&checksum(b"something else").to_le_bytes());
    assert_eq!(
        CuckooFilter::from_bytes(&b).unwrap_err(),
        DecodeError::ChecksumMismatch
    );
}

#[test]
fn huge_claims_are_refused_before_allocating() {
    let bytes = tiny(32, 4, 1).to_bytes();
    // 2^32 buckets of 16 bytes (64 GiB) claimed by a 120-byte input: the
    // length check fails first, nothing is allocated.
    let mut b = bytes.clone();
    b[16..24].copy_from_slice(&(1u64 << 32).to_le_bytes());
    reseal(&mut b);
    assert_eq!(
        CuckooFilter::from_bytes(&b).unwrap_err(),
        DecodeError::Truncated
    );
    // Streaming cannot know the input's length: the table may be reserved
    // (lazily, as address space) and is freed when the body runs out.
    let err = CuckooFilter::read_from(&b[..]).unwrap_err();
    assert!(
        matches!(
            err,
            // (InvalidHeader: on 32-bit targets 64 GiB exceeds the address space.)
            DecodeError::Truncated
                | DecodeError::AllocationFailed(_)
                | DecodeError::InvalidHeader(_)
        ),
        "{err:?}"
    );
    // With a limit, the claim is refused before anything is allocated.
    let claimed = 72 + (1u64 << 32) * 16;
    assert_eq!(
        CuckooFilter::read_from_limited(&b[..], 1 << 20).unwrap_err(),
        DecodeError::ExceedsLimit {
            claimed,
            limit: 1 << 20
        }
    );
    // The honest original is within a limit of its own length, not one less.
    let n = bytes.len() as u64;
    assert!(CuckooFilter::read_from_limited(&bytes[..], n).is_ok());
    assert_eq!(
        CuckooFilter::read_from_limited(&bytes[..], n - 1).unwrap_err(),
        DecodeError::ExceedsLimit {
            claimed: n,
            limit: n - 1
        }
    );
    // Past the format's limit: refused by the header check.
    b[16..24].copy_from_slice(&(1u64 << 40).to_le_bytes());
    assert!(matches!(
        CuckooFilter::read_from(&b[..]),
        Err(DecodeError::InvalidHeader(_))
    ));
}

#[test]
fn snapshots_are_consistent_while_writers_run() {
    let f = filter(16, 200_000, 21);
    let stable: Vec<u64> = (0..50_000u64).map(|k| k * 2 + 1).collect();
    for k in &stable {
        f.insert(k).unwrap();
    }
    let stop = AtomicBool::new(false);
    let ops = AtomicUsize::new(0);
    let writers = 2;
    let start = Barrier::new(writers + 1);
    std::thread::scope(|s| {
        for t in 0..writers as u64 {
            let (f, stop, start, ops) = (&f, &stop, &start, &ops);
            s.spawn(move || {
                let mut rng = Rng(100 + t);
                let mut mine = Vec::new();
                start.wait();
                while !stop.load(Ordering::Relaxed) {
                    // Even keys only: never confused with the stable ones
                    // (up to fingerprint collisions, which only add copies).
                    let k = (rng.next() % 1_000_000) * 2;
                    if mine.len() < 20_000 && !rng.next().is_multiple_of(3) {
                        if f.insert(&k).is_ok() {
                            mine.push(k);
                        }
                    } else if let Some(k) = mine.pop() {
                        assert!(f.remove(&k));
                    }
                    ops.fetch_add(1, Ordering::Relaxed);
                }
                for k in mine {
                    assert!(f.remove(&k));
                }
            });
        }
        start.wait();
        let mut lengths = std::collections::HashSet::new();
        for round in 0..30 {
            let bytes = if round % 2 == 0 {
                f.to_bytes()
            } else {
                let mut v = Vec::new();
                f.write_to(&mut v).unwrap();
                v
            };
            // A torn snapshot (length not matching contents, a bucket
            // half-written) would fail to decode or miss a stable key.
            let g = CuckooFilter::from_bytes(&bytes).expect("snapshot decodes");
            assert_eq!(g.len(), g.occupied_slots());
            assert!(g.len() >= stable.len());
            assert!(stable.iter().all(|k| g.contains(k)), "round {round}");
            lengths.insert(g.len());
            // Let the writers change the filter between snapshots.
            let seen = ops.load(Ordering::Relaxed);
            while ops.load(Ordering::Relaxed) < seen + 500 {
                std::thread::yield_now();
            }
        }
        stop.store(true, Ordering::Relaxed);
        assert!(lengths.len() > 1, "the snapshots saw writers at work");
    });
    assert_eq!(f.len(), stable.len());
    assert_eq!(f.occupied_slots(), stable.len());
    let g = CuckooFilter::from_bytes(&f.to_bytes()).unwrap();
    assert_eq!(g.len(), stable.len());
}

#[test]
fn decode_errors_are_proper_errors() {
    fn assert_error<E: std::error::Error + Send + Sync + 'static>(_: &E) {}
    let err = CuckooFilter::from_bytes(b"nope").unwrap_err();
    assert_error(&err);
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(err);
    assert_eq!(
        boxed.to_string(),
        "bad magic: the input is not an encoded cuckoo filter"
    );
}

#[test]
fn write_to_path_saves_replaces_and_never_leaves_a_partial_file() {
    let dir = std::env::temp_dir().join(format!("ccf-save-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("blocklist.ccf");
    let probes: Vec<u64> = (0..20_000).collect();
    for bits in [8, 16, 32] {
        let f = filter(bits, 5000, 40 + u64::from(bits));
        for k in 0..5000u64 {
            f.insert(&k).unwrap();
        }
        f.write_to_path(&path).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes, f.to_bytes(), "{bits}-bit: the file is the encoding");
        assert_same_filter(&f, &CuckooFilter::from_bytes(&bytes).unwrap(), &probes);
    }
    // A save that cannot complete (the target name is taken by a
    // non-empty directory, so the final rename fails) leaves what was there
    // and no temporary file behind.
    let blocked = dir.join("blocked");
    std::fs::create_dir_all(blocked.join("keep")).unwrap();
    let f = filter(16, 100, 41);
    assert!(f.write_to_path(&blocked).is_err());
    assert!(blocked.join("keep").is_dir(), "the old contents survive");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["blocked", "blocklist.ccf"],
        "no temporary file is left"
    );
    // A directory that does not exist: nothing is created.
    assert!(f.write_to_path(dir.join("missing").join("x.ccf")).is_err());
    assert!(!dir.join("missing").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
