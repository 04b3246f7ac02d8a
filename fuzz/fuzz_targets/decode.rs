//! Arbitrary bytes fed to the decoders of every filter kind (a single
//! `CuckooFilter`; a growing `ScalableCuckooFilter`, whose format-3
//! container holds format-2 levels; a `WindowedCuckooFilter`, format 4).
//! Properties:
//! * never a panic (nor, under the sanitizer, a memory error or a huge
//!   allocation: `from_bytes` allocates nothing before the input is known
//!   to be exactly as long as its header says);
//! * an accepted input carries a correct checksum, and re-encoding the
//!   decoded filter gives back exactly the input;
//! * the streaming decoder accepts what `from_bytes` accepts.
//!
//! Random bytes almost never carry a valid checksum, so each input is also
//! decoded a second time with its checksum recomputed: that drives the
//! fuzzer through the header and body checks behind the checksum. For the
//! container, both its header's checksum and the last level's are
//! recomputed (the golden file in the corpus has four levels; mutations of
//! the others meet their checksums).
#![no_main]

use concurrent_cuckoo::{CuckooFilter, PortableHasher, ScalableCuckooFilter, WindowedCuckooFilter};
use libfuzzer_sys::fuzz_target;
use std::hash::Hasher;

/// The format's checksum: XXH3-64, seed 0 (what `PortableHasher` computes
/// for raw bytes).
fn checksum(bytes: &[u8]) -> u64 {
    let mut h = PortableHasher::with_seed(0);
    h.write(bytes);
    h.finish()
}

fn check(data: &[u8]) {
    let decoded = CuckooFilter::from_bytes(data);
    let streamed = CuckooFilter::read_from(data);
    if let Ok(f) = decoded {
        let n = data.len() - 8;
        let stored = u64::from_le_bytes(data[n..].try_into().unwrap());
        assert_eq!(stored, checksum(&data[..n]), "accepted a bad checksum");
        assert_eq!(f.to_bytes(), data, "re-encoding an accepted filter differs");
        assert_eq!(f.len(), f.occupied_slots());
        assert_eq!(f.encoded_len(), data.len());
        let g = streamed.expect("read_from refused what from_bytes accepted");
        assert_eq!(g.to_bytes(), data);
        // The decoded filter works.
        let _ = f.insert(&data.len());
        let _ = f.contains(&data.len());
    }
}

fn check_scalable(data: &[u8]) {
    let decoded = ScalableCuckooFilter::from_bytes(data);
    let streamed = ScalableCuckooFilter::read_from(data);
    if let Ok(f) = decoded {
        assert_eq!(f.to_bytes(), data, "re-encoding an accepted filter differs");
        assert!(f.false_positive_bound() <= f.configured_false_positive_rate());
        assert!(f.levels() >= 1);
        let g = streamed.expect("read_from refused what from_bytes accepted");
        assert_eq!(g.to_bytes(), data);
        // The decoded filter works, and may grow.
        let _ = f.insert(&data.len());
        let _ = f.contains(&data.len());
    }
}

/// A windowed filter's decoders: they drop lanes already expired at the
/// saved generation, so an accepted input re-encodes to its canonical
/// form, which must then be a fixed point.
fn check_windowed(data: &[u8]) {
    let decoded = WindowedCuckooFilter::from_bytes(data);
    let streamed = WindowedCuckooFilter::read_from(data);
    if let Ok(f) = decoded {
        let canonical = f.to_bytes();
        assert_eq!(
            canonical.len(),
            data.len(),
            "re-encoding changed the length"
        );
        assert_eq!(f.encoded_len(), data.len());
        let again = WindowedCuckooFilter::from_bytes(&canonical).expect("its own encoding refused");
        assert_eq!(
            again.to_bytes(),
            canonical,
            "the canonical form is not a fixed point"
        );
        assert!(f.len() <= f.slots());
        let g = streamed.expect("read_from refused what from_bytes accepted");
        assert_eq!(g.to_bytes(), canonical);
        // The decoded filter works and advances.
        let _ = f.insert(&data.len());
        let _ = f.contains(&data.len());
        f.advance();
    }
}

/// Recomputes the checksum in the last 8 bytes of `data[..end]`.
fn seal(data: &mut [u8], end: usize) {
    let n = end - 8;
    let sum = checksum(&data[..n]);
    data[n..end].copy_from_slice(&sum.to_le_bytes());
}

fuzz_target!(|data: &[u8]| {
    check(data);
    check_scalable(data);
    check_windowed(data);
    if data.len() >= 8 {
        let mut sealed = data.to_vec();
        seal(&mut sealed, data.len());
        check(&sealed);
        check_windowed(&sealed);
        // The container's header checksum follows its 56 fixed bytes and
        // a table of 4-byte level indices padded to 8.
        if data.len() >= 16 {
            let levels = u32::from_le_bytes(data[12..16].try_into().unwrap()) as usize;
            let end = 56 + (4 * levels.min(64)).next_multiple_of(8) + 8;
            if end <= sealed.len() {
                seal(&mut sealed, end);
            }
        }
        check_scalable(&sealed);
    }
});
