//! Arbitrary bytes fed to the decoder. Properties:
//! * never a panic (nor, under the sanitizer, a memory error or a huge
//!   allocation: `from_bytes` allocates nothing before the input is known
//!   to be exactly as long as its header says);
//! * an accepted input carries a correct checksum, and re-encoding the
//!   decoded filter gives back exactly the input;
//! * the streaming decoder accepts what `from_bytes` accepts.
//!
//! Random bytes almost never carry a valid checksum, so each input is also
//! decoded a second time with its checksum recomputed: that drives the
//! fuzzer through the header and body checks behind the checksum.
#![no_main]

use concurrent_cuckoo::{CuckooFilter, PortableHasher};
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

fuzz_target!(|data: &[u8]| {
    check(data);
    if data.len() >= 8 {
        let mut sealed = data.to_vec();
        let n = sealed.len() - 8;
        let sum = checksum(&sealed[..n]);
        sealed[n..].copy_from_slice(&sum.to_le_bytes());
        check(&sealed);
    }
});
