//! Arbitrary bytes fed to the Redis module's decoders of a window filter
//! (`redis/src/window_value.rs`: the window block, the library's version-4
//! header behind it, the whole encoding), which take bytes from any
//! client (`CF.LOADCHUNK`, `RESTORE`). Properties:
//! * never a panic (a forged block with `g = 0` divided by zero: issue 50),
//!   nor a huge allocation (nothing is allocated before the input is as
//!   long as its header says);
//! * an accepted first chunk announces a length its header's bucket count
//!   implies, at most 2^32 buckets;
//! * an accepted encoding encodes back to exactly its bytes (the decoder
//!   refuses a lane expired at the saved generation, which no encoding
//!   holds), and the same bytes restored in pieces of any size (its first
//!   byte picks the size), as `CF.LOADCHUNK` takes them, give the same
//!   answer, the bytes received written back exactly after each piece.
//!
//! A forger recomputes checksums, and random bytes almost never carry
//! valid ones: each input is also decoded with the window block's checksum
//! (XXH3-64 of its first 56 bytes, at 56) and the library's (XXH3-64 of
//! its header and body, in the last 8 bytes) recomputed, which drives the
//! fuzzer through every field check behind them.
#![no_main]

use concurrent_cuckoo::PortableHasher;
use concurrent_cuckoo_redis::fuzzing::{
    window_encoding, window_encoding_in_pieces, window_first_chunk,
};
use libfuzzer_sys::fuzz_target;
use std::hash::Hasher;

/// Bytes of the window block.
const BLOCK: usize = 64;
/// The first chunk: the block and the library's header.
const HEADER_CHUNK: usize = 128;

fn checksum(bytes: &[u8]) -> u64 {
    let mut h = PortableHasher::with_seed(0);
    h.write(bytes);
    h.finish()
}

fn check(bytes: &[u8]) {
    if let Some(total) = window_first_chunk(bytes) {
        assert!(total <= (HEADER_CHUNK as u64 + 8) + (8u64 << 32), "{total}");
        assert!(bytes.len() >= HEADER_CHUNK);
    }
    let whole = window_encoding(bytes);
    if let Some(again) = &whole {
        assert_eq!(again, bytes);
        assert_eq!(window_first_chunk(bytes), Some(bytes.len() as u64));
    }
    let piece = 1 + usize::from(bytes.first().copied().unwrap_or(0)) * 3;
    assert_eq!(window_encoding_in_pieces(bytes, piece), whole);
}

fuzz_target!(|data: &[u8]| {
    check(data);
    if data.len() < BLOCK {
        return;
    }
    let mut forged = data.to_vec();
    let sum = checksum(&forged[..56]);
    forged[56..64].copy_from_slice(&sum.to_le_bytes());
    check(&forged);
    if forged.len() >= HEADER_CHUNK + 8 {
        let end = forged.len() - 8;
        let sum = checksum(&forged[BLOCK..end]);
        forged[end..].copy_from_slice(&sum.to_le_bytes());
        check(&forged);
    }
});
