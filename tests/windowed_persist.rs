//! Saving and loading a `WindowedCuckooFilter` (format version 4): the
//! copy answers as the original at its generation and after, and damaged
//! input is refused, never decoded into a filter that answers wrong.

use concurrent_cuckoo::{
    CuckooFilter, DecodeError, FrozenFilter, ScalableCuckooFilter, WindowedCuckooFilter,
};
use xxhash_rust::xxh3::xxh3_64;

/// Six generations of 600 keys in a window of 3, in 16-bit lanes.
fn filled() -> WindowedCuckooFilter {
    filled_at(1e-3)
}

/// [`filled`] at `rate`: in 32-bit lanes below 9.8e-4.
fn filled_at(rate: f64) -> WindowedCuckooFilter {
    let f = WindowedCuckooFilter::builder()
        .capacity(2000)
        .generations(3)
        .false_positive_rate(rate)
        .seed(5)
        .build()
        .unwrap();
    for gen in 0..6u64 {
        for i in 0..600u64 {
            f.insert(&(gen, i)).unwrap();
        }
        f.advance();
    }
    f
}

/// Rewrites the checksum after an edit, so that only the field checks can
/// refuse it.
fn resum(bytes: &mut [u8]) {
    let n = bytes.len() - 8;
    let sum = xxh3_64(&bytes[..n]);
    bytes[n..].copy_from_slice(&sum.to_le_bytes());
}

/// Each bit of the header flipped, and each of every `step`-th byte of
/// the rest: refused.
fn every_flipped_bit_is_refused(bytes: &[u8], step: usize) {
    for i in (0..bytes.len()).filter(|&i| i < 64 || i % step == 0) {
        for bit in 0..8 {
            let mut bad = bytes.to_vec();
            bad[i] ^= 1 << bit;
            assert!(
                WindowedCuckooFilter::from_bytes(&bad).is_err(),
                "byte {i} bit {bit}"
            );
        }
    }
}

#[test]
fn a_copy_answers_as_the_original_now_and_after_each_advance() {
    for rate in [1e-3, 1e-6] {
        a_copy_answers_as_the_original(filled_at(rate));
    }
}

fn a_copy_answers_as_the_original(f: WindowedCuckooFilter) {
    let bytes = f.to_bytes();
    let mut streamed = Vec::new();
    f.write_to(&mut streamed).unwrap();
    assert_eq!(streamed, bytes);
    let copies = [
        WindowedCuckooFilter::from_bytes(&bytes).unwrap(),
        WindowedCuckooFilter::read_from(&bytes[..]).unwrap(),
    ];
    for copy in &copies {
        assert_eq!(
            (copy.generation(), copy.len(), copy.memory_usage()),
            (f.generation(), f.len(), f.memory_usage())
        );
        assert_eq!(
            (copy.lane_bits(), copy.tag_bits(), copy.fingerprint_bits()),
            (f.lane_bits(), f.tag_bits(), f.fingerprint_bits())
        );
        assert_eq!(copy.to_bytes().len(), bytes.len());
    }
    let copy = &copies[0];
    for step in 0..4 {
        for gen in 0..6u64 {
            for i in 0..600u64 {
                assert_eq!(
                    copy.contains(&(gen, i)),
                    f.contains(&(gen, i)),
                    "step {step}"
                );
            }
        }
        assert_eq!(copy.len(), f.len());
        copy.advance();
        f.advance();
    }
}

#[test]
fn damaged_input_is_refused() {
    let f = filled();
    let bytes = f.to_bytes();
    // Every truncation.
    for n in 0..bytes.len() {
        assert!(
            WindowedCuckooFilter::from_bytes(&bytes[..n]).is_err(),
            "{n} bytes"
        );
    }
    assert!(matches!(
        WindowedCuckooFilter::read_from(&bytes[..bytes.len() - 1]),
        Err(DecodeError::Truncated)
    ));
    let mut long = bytes.clone();
    long.push(0);
    assert!(matches!(
        WindowedCuckooFilter::from_bytes(&long),
        Err(DecodeError::TrailingBytes)
    ));
    // Every single flipped bit of the header, and a sample of the body's.
    every_flipped_bit_is_refused(&bytes, 7);
    // With a correct checksum, the field checks refuse what is out of range.
    let edit = |at: usize, value: u8| {
        let mut bad = bytes.clone();
        bad[at] = value;
        resum(&mut bad);
        WindowedCuckooFilter::from_bytes(&bad)
    };
    assert!(matches!(edit(13, 6), Err(DecodeError::InvalidHeader(_)))); // tag bits
    assert!(matches!(edit(14, 6), Err(DecodeError::InvalidHeader(_)))); // window > 2^3 - 3
    assert!(matches!(edit(14, 0), Err(DecodeError::InvalidHeader(_))));
    assert!(matches!(edit(12, 9), Err(DecodeError::InvalidHeader(_)))); // path
    assert!(matches!(edit(63, 1), Err(DecodeError::InvalidHeader(_)))); // reserved
    assert!(matches!(
        edit(32, 0x55),
        Err(DecodeError::HasherMismatch { .. })
    ));
    // A generation past the cap (`2^63 - 1`), which no filter reaches:
    // 2^63 (issue 50 item 8: its keys would never expire) and 2^64 - 1.
    for top in [0x80u8, 0xFF] {
        let mut bad = bytes.clone();
        bad[24..32].copy_from_slice(&[0xFF; 8]);
        bad[31] = top;
        if top == 0x80 {
            bad[24..31].fill(0);
        }
        resum(&mut bad);
        assert!(matches!(
            WindowedCuckooFilter::from_bytes(&bad),
            Err(DecodeError::InvalidHeader(_))
        ));
    }
    // A lane tagged after the saved generation: no snapshot holds one.
    let mut future = bytes.clone();
    let generation = f.generation();
    let lane: u16 = (((generation + 1) % 8) << 13 | 77) as u16;
    future[64..66].copy_from_slice(&lane.to_le_bytes());
    resum(&mut future);
    assert!(matches!(
        WindowedCuckooFilter::from_bytes(&future),
        Err(DecodeError::InvalidHeader(_))
    ));
    // Every other decoder refuses version 4 naming the type that reads it,
    // and this one names the type of the plain and growing formats.
    let names = |e: DecodeError, ty: &str| {
        let text = e.to_string();
        assert!(
            matches!(e, DecodeError::InvalidHeader(_)) && text.contains(ty),
            "{text}"
        );
    };
    let windowed = "WindowedCuckooFilter::from_bytes";
    names(CuckooFilter::from_bytes(&bytes).unwrap_err(), windowed);
    names(
        ScalableCuckooFilter::from_bytes(&bytes).unwrap_err(),
        windowed,
    );
    names(
        FrozenFilter::from_bytes(bytes.clone()).unwrap_err(),
        windowed,
    );
    let plain = CuckooFilter::with_capacity(100).to_bytes();
    names(
        WindowedCuckooFilter::from_bytes(&plain).unwrap_err(),
        "CuckooFilter::from_bytes",
    );
    let growing = ScalableCuckooFilter::with_capacity(100).to_bytes();
    names(
        WindowedCuckooFilter::from_bytes(&growing).unwrap_err(),
        "ScalableCuckooFilter::from_bytes",
    );
}

#[test]
fn expired_lanes_are_not_saved_back() {
    for rate in [1e-3, 1e-6] {
        let f = filled_at(rate);
        let (occupied, live) = f.scan_lanes();
        assert!(
            occupied > live,
            "the model needs expired lanes: {occupied} {live}"
        );
        let copy = WindowedCuckooFilter::from_bytes(&f.to_bytes()).unwrap();
        assert_eq!(copy.scan_lanes(), (live, live));
    }
}

/// 32-bit lanes' header fields and lanes: what 16-bit lanes allow and
/// they do not (and the reverse) is refused, as are their lanes without a
/// fingerprint or tagged after the saved generation.
#[test]
fn damaged_wide_input_is_refused() {
    let f = filled_at(1e-6);
    assert_eq!((f.lane_bits(), f.tag_bits()), (32, 3));
    let bytes = f.to_bytes();
    assert_eq!((bytes[10], bytes[11], bytes[12]), (32, 2, 8));
    every_flipped_bit_is_refused(&bytes, 5);
    let edit = |edits: &[(usize, u8)]| {
        let mut bad = bytes.clone();
        for &(at, value) in edits {
            bad[at] = value;
        }
        resum(&mut bad);
        WindowedCuckooFilter::from_bytes(&bad)
    };
    let refused = |r: Result<WindowedCuckooFilter, DecodeError>| {
        matches!(r, Err(DecodeError::InvalidHeader(_)))
    };
    assert!(refused(edit(&[(11, 4)]))); // 32-bit lanes, four a bucket
    assert!(refused(edit(&[(10, 16), (11, 2)]))); // 16-bit lanes, two
    assert!(refused(edit(&[(10, 64), (11, 1)])));
    assert!(refused(edit(&[(13, 9)]))); // tag bits past 8
    assert!(refused(edit(&[(12, 9)]))); // a path past 8 moves
    assert!(refused(edit(&[(12, 0)])));
    assert!(edit(&[(13, 8), (14, 253)]).is_ok()); // the longest window
    assert!(refused(edit(&[(13, 8), (14, 254)])));
    // 16-bit lanes hold at most 5 tag bits and paths of 5 moves.
    let narrow = filled().to_bytes();
    let edit_narrow = |at: usize, value: u8| {
        let mut bad = narrow.clone();
        bad[at] = value;
        resum(&mut bad);
        WindowedCuckooFilter::from_bytes(&bad)
    };
    assert!(refused(edit_narrow(12, 6)));
    assert!(refused(edit_narrow(13, 6)));
    // Bucket 0's lanes: one without fingerprint (its tag alone), one
    // tagged with the generation after the saved one.
    let generation = f.generation();
    for lane in [1u32 << 29, (((generation + 1) % 8) << 29 | 77) as u32] {
        let mut bad = bytes.clone();
        bad[68..72].copy_from_slice(&lane.to_le_bytes());
        resum(&mut bad);
        assert!(
            refused(WindowedCuckooFilter::from_bytes(&bad)),
            "lane {lane:#x}"
        );
    }
}

#[cfg(feature = "serde")]
#[test]
fn serde_round_trips_through_json() {
    let f = filled();
    let json = serde_json::to_string(&f).unwrap();
    let back: WindowedCuckooFilter = serde_json::from_str(&json).unwrap();
    // Decoding drops expired lanes: compare with a decoded copy.
    let decoded = WindowedCuckooFilter::from_bytes(&f.to_bytes()).unwrap();
    assert!(back.to_bytes() == decoded.to_bytes());
    let mut damaged = json.into_bytes();
    let at = damaged.len() / 2;
    damaged[at] = if damaged[at] == b'1' { b'2' } else { b'1' };
    let damaged = String::from_utf8(damaged).unwrap();
    assert!(serde_json::from_str::<WindowedCuckooFilter>(&damaged).is_err());
}
