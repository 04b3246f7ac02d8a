//! serde support (feature `serde`): the same bytes as `to_bytes`, through
//! any serde format. Run with `cargo test --features serde`.
#![cfg(feature = "serde")]

use concurrent_cuckoo::{CuckooFilter, DecodeError, PersistentHasher};
use serde::de::value::{BytesDeserializer, Error as ValueError};
use serde::Deserialize;
use std::hash::BuildHasher;

fn sample(bits: u32) -> CuckooFilter {
    let f = CuckooFilter::builder()
        .capacity(2000)
        .fingerprint_bits(bits)
        .seed(8)
        .build()
        .unwrap();
    for k in 0..1500u32 {
        f.insert(&k).unwrap();
    }
    f
}

#[test]
fn json_round_trip_is_the_binary_format() {
    for bits in [8, 16, 32] {
        let f = sample(bits);
        let json = serde_json::to_vec(&f).unwrap();
        // JSON spells bytes as an array of numbers: exactly `to_bytes`.
        let as_numbers: Vec<u8> = serde_json::from_slice(&json).unwrap();
        assert_eq!(as_numbers, f.to_bytes());
        let g: CuckooFilter = serde_json::from_slice(&json).unwrap();
        assert_eq!(g.len(), 1500);
        assert_eq!(g.fingerprint_bits(), bits);
        assert_eq!(g.hasher().seed(), 8);
        assert!((0..1500u32).all(|k| g.contains(&k)));
        assert_eq!(g.to_bytes(), f.to_bytes());
    }
}

#[test]
fn byte_formats_use_visit_bytes() {
    let f = sample(16);
    let bytes = f.to_bytes();
    let g: CuckooFilter =
        CuckooFilter::deserialize(BytesDeserializer::<ValueError>::new(&bytes)).unwrap();
    assert_eq!(g.to_bytes(), bytes);
}

#[test]
fn damaged_input_is_a_deserialization_error() {
    let f = sample(8);
    let mut bytes = f.to_bytes();
    bytes[100] ^= 4;
    let json = serde_json::to_vec(&bytes).unwrap();
    let err = serde_json::from_slice::<CuckooFilter>(&json).unwrap_err();
    assert!(
        err.to_string()
            .contains(&DecodeError::ChecksumMismatch.to_string()),
        "{err}"
    );
    let err =
        CuckooFilter::<concurrent_cuckoo::DefaultHashBuilder>::deserialize(BytesDeserializer::<
            ValueError,
        >::new(
            &bytes[..50]
        ))
        .unwrap_err();
    assert!(err.to_string().contains("truncated"), "{err}");
    // Not bytes at all.
    assert!(serde_json::from_str::<CuckooFilter>("\"a string\"").is_err());
    assert!(serde_json::from_str::<CuckooFilter>("[1, 2, 300]").is_err());
    assert!(serde_json::from_str::<CuckooFilter>("{}").is_err());
}

#[test]
fn hasher_identity_is_checked_through_serde() {
    #[derive(Clone)]
    struct Other(u64);
    impl BuildHasher for Other {
        type Hasher = std::hash::DefaultHasher;
        fn build_hasher(&self) -> Self::Hasher {
            std::hash::DefaultHasher::new()
        }
    }
    impl PersistentHasher for Other {
        const ID: u32 = 0x1_0001;
        fn seed(&self) -> u64 {
            self.0
        }
        fn from_seed(seed: u64) -> Self {
            Self(seed)
        }
    }
    let json = serde_json::to_vec(&sample(16)).unwrap();
    let err = serde_json::from_slice::<CuckooFilter<Other>>(&json).unwrap_err();
    assert!(err.to_string().contains("hasher mismatch"), "{err}");
}
