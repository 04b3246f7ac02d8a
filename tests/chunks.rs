//! Encodings in pieces: `ChunkEncoder` hands out exactly `to_bytes`, and
//! `ChunkDecoder` takes pieces of any sizes and refuses exactly what
//! `from_bytes` refuses, for every format version and both filter kinds.

mod common;

use common::Rng;
use concurrent_cuckoo::{
    ChunkDecoder, ChunkEncoder, CuckooFilter, DecodeError, DecodedFilter, ScalableCuckooFilter,
};
use proptest::prelude::*;

fn single(bits: u32, items: u64, seed: u64) -> CuckooFilter {
    let f = CuckooFilter::builder()
        .capacity(items as usize + 100)
        .fingerprint_bits(bits)
        .seed(seed)
        .build()
        .unwrap();
    f.insert_hash_batch(
        &(0..items)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect::<Vec<_>>(),
    )
    .unwrap();
    f
}

/// A growing filter of several levels, one of them retired.
fn growing(seed: u64) -> ScalableCuckooFilter {
    let f = ScalableCuckooFilter::builder()
        .capacity(50)
        .false_positive_rate(1e-7)
        .seed(seed)
        .build()
        .unwrap();
    let (first, k) = common::fill_first_level(&f);
    f.insert_hash_batch(&(k..k + 2000).collect::<Vec<_>>())
        .unwrap();
    for h in first {
        assert!(f.remove_hash(h).is_removed());
    }
    f
}

fn encode_in_pieces(
    mut next: impl FnMut(&mut ChunkEncoder, usize, &mut Vec<u8>) -> std::io::Result<usize>,
    mut encoder: ChunkEncoder,
    sizes: &mut impl FnMut() -> usize,
) -> Vec<u8> {
    let mut out = Vec::new();
    while !encoder.is_done() {
        let before = out.len();
        let max = sizes();
        let n = next(&mut encoder, max, &mut out).unwrap();
        assert_eq!(n, out.len() - before);
        assert!(n <= max && n > 0);
        assert_eq!(encoder.position(), out.len() as u64);
    }
    assert_eq!(out.len() as u64, encoder.total_len());
    out
}

fn decode_in_pieces(bytes: &[u8], sizes: &mut impl FnMut() -> usize) -> DecodedFilter {
    let mut decoder = ChunkDecoder::new();
    let mut at = 0;
    while at < bytes.len() {
        let n = sizes().min(bytes.len() - at);
        decoder.feed(&bytes[at..at + n]).unwrap();
        at += n;
        assert_eq!(decoder.consumed(), at as u64);
        let mut taken = Vec::new();
        decoder.write_consumed(&mut taken).ok();
        if !decoder.is_complete() {
            assert_eq!(taken, &bytes[..at], "write_consumed after {at} bytes");
        }
    }
    assert!(decoder.is_complete());
    decoder.finish().unwrap()
}

fn bytes_of(d: &DecodedFilter) -> Vec<u8> {
    match d {
        DecodedFilter::Filter(f) => f.to_bytes(),
        DecodedFilter::Scalable(f) => f.to_bytes(),
        _ => unreachable!("the chunk decoder makes plain and growing filters"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Any piece sizes: the encoder's pieces are `to_bytes`, and the
    /// decoder rebuilds a filter that encodes to the same bytes.
    #[test]
    fn pieces_of_any_size_round_trip(
        bits in prop::sample::select(vec![8u32, 16, 32]),
        items in 0u64..3000,
        seed in any::<u64>(),
        max in 1usize..5000,
    ) {
        let mut rng = Rng(seed);
        let mut sizes = || 1 + rng.below(max);
        let f = single(bits, items, seed);
        let bytes = encode_in_pieces(|e, m, o| e.next_chunk(&f, m, o), ChunkEncoder::new(&f), &mut sizes);
        prop_assert_eq!(&bytes, &f.to_bytes());
        let back = decode_in_pieces(&bytes, &mut sizes);
        prop_assert!(matches!(back, DecodedFilter::Filter(_)));
        prop_assert_eq!(bytes_of(&back), bytes);

        let g = growing(seed);
        let bytes = encode_in_pieces(|e, m, o| e.next_chunk_scalable(&g, m, o), ChunkEncoder::scalable(&g), &mut sizes);
        prop_assert_eq!(&bytes, &g.to_bytes());
        let back = decode_in_pieces(&bytes, &mut sizes);
        prop_assert!(matches!(back, DecodedFilter::Scalable(_)));
        prop_assert_eq!(bytes_of(&back), bytes);
    }
}

/// Golden files of format versions 1 and 2 and a growing filter's (3):
/// fed a byte at a time and in odd pieces, they decode to what `from_bytes`
/// gives, and re-encode in pieces to themselves.
#[test]
fn golden_files_of_every_version_decode_in_pieces() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "bin") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        for size in [1usize, 13, 4096] {
            let back = decode_in_pieces(&bytes, &mut || size);
            assert_eq!(
                bytes_of(&back),
                bytes,
                "{} in pieces of {size}",
                path.display()
            );
            let again = match &back {
                DecodedFilter::Filter(f) => encode_in_pieces(
                    |e, m, o| e.next_chunk(f, m, o),
                    ChunkEncoder::new(f),
                    &mut || size,
                ),
                DecodedFilter::Scalable(f) => encode_in_pieces(
                    |e, m, o| e.next_chunk_scalable(f, m, o),
                    ChunkEncoder::scalable(f),
                    &mut || size,
                ),
                _ => unreachable!("the chunk decoder makes plain and growing filters"),
            };
            assert_eq!(again, bytes);
        }
        seen += 1;
    }
    assert!(seen >= 4, "golden files found: {seen}");
}

/// Whatever `from_bytes` refuses, the decoder refuses: every truncation
/// (at `finish`), every flipped bit and a trailing byte (at `feed` or
/// `finish`), fed in pieces of 7 bytes.
#[test]
fn damaged_encodings_are_refused_in_pieces() {
    let f = single(16, 300, 5);
    let g = ScalableCuckooFilter::builder()
        .capacity(20)
        .seed(6)
        .build()
        .unwrap();
    g.insert_batch(&(0..100u32).collect::<Vec<_>>()).unwrap();
    assert!(g.levels() > 1);
    for bytes in [f.to_bytes(), g.to_bytes()] {
        let outcome = |input: &[u8]| -> Result<(), DecodeError> {
            let mut d = ChunkDecoder::new();
            for piece in input.chunks(7) {
                d.feed(piece)?;
            }
            d.finish().map(drop)
        };
        assert!(outcome(&bytes).is_ok());
        for len in 0..bytes.len() {
            assert!(outcome(&bytes[..len]).is_err(), "length {len}");
        }
        let mut flipped = bytes.clone();
        for bit in 0..bytes.len() * 8 {
            flipped[bit / 8] ^= 1 << (bit % 8);
            assert!(outcome(&flipped).is_err(), "flipped bit {bit}");
            flipped[bit / 8] ^= 1 << (bit % 8);
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(outcome(&longer).unwrap_err(), DecodeError::TrailingBytes);
        // A failed decoder stays failed.
        let mut d = ChunkDecoder::new();
        assert_eq!(d.feed(b"not a filter").unwrap_err(), DecodeError::BadMagic);
        assert_eq!(d.feed(&bytes).unwrap_err(), DecodeError::BadMagic);
    }
}

/// A header claiming 2^32 buckets is refused before its table is
/// allocated by a decoder with a limit; a growing filter's level larger
/// than its configuration, by every decoder.
#[test]
fn claims_past_a_limit_or_the_configuration_are_refused_before_allocating() {
    let mut b = single(32, 10, 7).to_bytes();
    b[16..24].copy_from_slice(&(1u64 << 32).to_le_bytes());
    let mut d = ChunkDecoder::new().limit(1 << 20);
    assert_eq!(
        d.feed(&b[..64]).unwrap_err(),
        DecodeError::ExceedsLimit {
            claimed: 72 + (1u64 << 32) * 16,
            limit: 1 << 20
        }
    );
    let g = growing(8);
    let mut c = g.to_bytes();
    let level = 8 + c[8..].windows(8).position(|w| w == &c[..8]).unwrap();
    c[level + 16..level + 24].copy_from_slice(&(1u64 << 32).to_le_bytes());
    let mut d = ChunkDecoder::new();
    assert_eq!(
        d.feed(&c[..level + 64]).unwrap_err(),
        DecodeError::InvalidHeader("a level's size does not match the configuration")
    );
}

/// An encoder refuses a filter that visibly changed between pieces, and
/// the other kind of filter.
#[test]
fn an_encoder_refuses_a_filter_that_changed() {
    let f = single(16, 1000, 9);
    let mut e = ChunkEncoder::new(&f);
    let mut out = Vec::new();
    e.next_chunk(&f, 100, &mut out).unwrap();
    f.insert_hash(u64::MAX).unwrap();
    let err = (0..100)
        .find_map(|_| e.next_chunk(&f, 4096, &mut out).err())
        .expect("the change is seen at the end of the table");
    assert!(err.to_string().contains("changed"), "{err}");
    let g = growing(10);
    assert!(ChunkEncoder::new(&f)
        .next_chunk_scalable(&g, 10, &mut out)
        .is_err());
    assert!(ChunkEncoder::scalable(&g)
        .next_chunk(&f, 10, &mut out)
        .is_err());
    // Another growing filter, with fewer level slots than the encoder's
    // filter has levels: "changed", not an index out of bounds.
    let small = ScalableCuckooFilter::builder()
        .capacity(50)
        .max_levels(1)
        .seed(10)
        .build()
        .unwrap();
    let mut e = ChunkEncoder::scalable(&g);
    let err = (0..1000)
        .find_map(|_| e.next_chunk_scalable(&small, 4096, &mut out).err())
        .expect("the other filter is refused");
    assert!(err.to_string().contains("changed"), "{err}");
}

/// An encoder reports what it holds: more than its struct, and more for a
/// growing filter of several levels (a header and a part per level) than
/// for a single table; handing out chunks keeps it bounded (the bucket
/// buffer is reused, not grown).
#[test]
fn an_encoder_reports_the_memory_it_holds() {
    let one = single(16, 1000, 1);
    let mut encoder = ChunkEncoder::new(&one);
    let fresh = encoder.memory_usage();
    assert!(fresh > core::mem::size_of::<ChunkEncoder>());
    let mut out = Vec::new();
    while !encoder.is_done() {
        out.clear();
        encoder.next_chunk(&one, 1000, &mut out).unwrap();
        assert!(encoder.memory_usage() < fresh + 64);
    }
    let levels = growing(2);
    assert!(levels.levels() > 2);
    let several = ChunkEncoder::scalable(&levels).memory_usage();
    assert!(several > fresh + levels.levels() * 40, "{several} {fresh}");
}

/// `seek` lands on any byte of the encoding, forwards or back, of a single
/// filter (1, 2 and 4-byte fingerprints) and a growing one: the bytes from
/// there are `to_bytes`'s, checksums included, whether the encoder knows
/// the checksums of the tables it skipped into (from a whole pass, or
/// `adopt_digests`) or computes them.
#[test]
fn a_seek_lands_on_any_byte_with_the_same_bytes_after_it() {
    type Next<'a> =
        Box<dyn Fn(&mut ChunkEncoder, usize, &mut Vec<u8>) -> std::io::Result<usize> + 'a>;
    let singles: Vec<CuckooFilter> = [8, 16, 32].iter().map(|&b| single(b, 300, 7)).collect();
    let scalable = growing(9);
    let mut cases: Vec<(Vec<u8>, ChunkEncoder, Next)> = singles
        .iter()
        .map(|f| {
            let next: Next = Box::new(move |e, max, out| e.next_chunk(f, max, out));
            (f.to_bytes(), ChunkEncoder::new(f), next)
        })
        .collect();
    let next: Next = Box::new(|e, max, out| e.next_chunk_scalable(&scalable, max, out));
    cases.push((scalable.to_bytes(), ChunkEncoder::scalable(&scalable), next));
    let mut rng = Rng(11);
    for (bytes, fresh, next) in &cases {
        let total = bytes.len() as u64;
        assert_eq!(fresh.total_len(), total);
        // A whole pass learns every checksum.
        let mut whole = fresh.clone();
        let mut out = Vec::new();
        while !whole.is_done() {
            next(&mut whole, 4096, &mut out).unwrap();
        }
        assert_eq!(&out, bytes);
        let mut positions: Vec<u64> = (0..64).chain(total - 64..=total).collect();
        positions.extend((0..200).map(|_| rng.below(total as usize + 1) as u64));
        for &p in &positions {
            for learned in [false, true] {
                let mut e = fresh.clone();
                if learned {
                    e.adopt_digests(&whole);
                }
                // Somewhere else first: a seek goes back as well as forwards.
                e.seek(rng.below(total as usize + 1) as u64).unwrap();
                e.seek(p).unwrap();
                assert_eq!(e.position(), p);
                let mut out = Vec::new();
                while !e.is_done() {
                    let max = 1 + rng.below(700);
                    next(&mut e, max, &mut out).unwrap();
                }
                assert_eq!(&out[..], &bytes[p as usize..], "position {p} of {total}");
            }
        }
        let mut e = fresh.clone();
        assert!(e.seek(total + 1).is_err());
        assert_eq!(e.position(), 0);
    }
}
