//! A key's hash, exactly as the filter's hasher computes it, with byte
//! strings (a `str`'s UTF-8, `bytes`) hashed in one pass.
//!
//! The library's default hasher hashes a `[u8]` key as XXH3-64, with the
//! filter's seed, of its canonical bytes: std's `Hash` for a slice feeds
//! its length as a `usize`, which the hasher widens to 8 little-endian
//! bytes, then the bytes themselves (`src/hashing.rs`, "What is hashed";
//! XXH3 is a specified algorithm, its output frozen for saved filters).
//! Its `Hasher` collects those bytes through a general buffer (any key
//! type, any number of writes); a key already known to be a byte string
//! of 9 to 120 bytes is copied here once, behind its length, into one
//! buffer for `xxh3_64_with_seed`: the same input, so the same hash
//! (python/tests: batches and single calls store the same bytes for keys
//! of every length from 0 to 139), in less time. Others (ints, strings of
//! up to 8 bytes, which the library hashes in registers, and long ones)
//! take the filter's own hasher.

use crate::backend::Shape;
use crate::keys::KeyRef;

/// Canonical input bytes hashed here at most: the library's inline
/// buffer (above it, its hasher streams; the output is the same).
const MAX_INPUT: usize = 128;

/// The length prefix: std feeds a slice's length as a `usize`, which the
/// library's hasher widens to a `u64`.
const PREFIX: usize = 8;

/// `key` hashed as `filter`'s keyed calls hash it.
#[inline]
pub(crate) fn hash<F: Shape>(filter: &F, key: KeyRef<'_>) -> u64 {
    match key {
        KeyRef::Int(v) => filter.hash_key(&v),
        KeyRef::Bytes(b) => bytes(filter, b),
    }
}

/// `filter.hash_key(b)` for a byte-string key.
#[inline]
fn bytes<F: Shape>(filter: &F, b: &[u8]) -> u64 {
    let len = PREFIX + b.len();
    // Up to 16 bytes the library hashes in registers, no buffer to skip.
    if len <= 16 || len > MAX_INPUT {
        return filter.hash_key(b);
    }
    xxh3_17to128_prefixed(b, filter.seed())
}

/// XXH3-64 with `seed` of the length prefix followed by `b`, for inputs
/// (prefix included) of 17 to 128 bytes, as the XXH3 specification's
/// `XXH3_len_17to128_64b` computes it, reading the input's 8-byte words
/// where they lie (the prefix in a register, the rest in `b`) instead of
/// from a copy.
///
/// Why not copy into one buffer and call `xxh3_64_with_seed`: the copy's
/// length is the key's, so the copy is made of stores of several widths,
/// and XXH3's loads of the input's last 16 bytes straddle them;
/// store-to-load forwarding fails and each such load waits for the
/// stores to reach the cache. In a profile of `add_many` over 1M `str`
/// keys, the instruction after that load took 43% of the hashing's
/// samples. The output is the same (python/tests: batches and single
/// calls store the same bytes for keys of every length from 0 to 139).
#[inline]
fn xxh3_17to128_prefixed(b: &[u8], seed: u64) -> u64 {
    let len = PREFIX + b.len();
    debug_assert!((17..=MAX_INPUT).contains(&len));
    let prefix = b.len() as u64;
    // The input's 8 bytes at `offset` (at most `len - 8`).
    let word = |offset: usize| -> u64 {
        if offset >= PREFIX {
            read_le(&b[offset - PREFIX..])
        } else if offset == 0 {
            prefix
        } else {
            // Straddles the prefix and `b` (at least 9 bytes long here).
            (prefix >> (8 * offset)) | (read_le(b) << (8 * (PREFIX - offset)))
        }
    };
    let mix16 = |offset: usize, secret: usize| -> u64 {
        let lo = word(offset) ^ SECRET[secret].wrapping_add(seed);
        let hi = word(offset + 8) ^ SECRET[secret + 1].wrapping_sub(seed);
        let product = u128::from(lo) * u128::from(hi);
        product as u64 ^ (product >> 64) as u64
    };
    let mut acc = (len as u64).wrapping_mul(PRIME64_1);
    if len > 32 {
        if len > 64 {
            if len > 96 {
                acc = acc.wrapping_add(mix16(48, 12));
                acc = acc.wrapping_add(mix16(len - 64, 14));
            }
            acc = acc.wrapping_add(mix16(32, 8));
            acc = acc.wrapping_add(mix16(len - 48, 10));
        }
        acc = acc.wrapping_add(mix16(16, 4));
        acc = acc.wrapping_add(mix16(len - 32, 6));
    }
    acc = acc.wrapping_add(mix16(0, 0));
    acc = acc.wrapping_add(mix16(len - 16, 2));
    // XXH3's avalanche.
    acc ^= acc >> 37;
    acc = acc.wrapping_mul(0x1656_6791_9E37_79F9);
    acc ^ (acc >> 32)
}

/// The first 8 bytes of `bytes` (at least 8 long), little-endian.
#[inline(always)]
fn read_le(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(word)
}

/// XXH3's `PRIME64_1` (XXH64's first prime).
const PRIME64_1: u64 = 0x9E37_79B1_85EB_CA87;

/// The first 128 bytes of XXH3's default secret (`XXH3_kSecret`, the
/// specification's constant), as little-endian 64-bit words: all that
/// inputs of 17 to 128 bytes read.
const SECRET: [u64; 16] = [
    0xbe4b_a423_396c_feb8,
    0x1cad_21f7_2c81_017c,
    0xdb97_9083_e96d_d4de,
    0x1f67_b3b7_a4a4_4072,
    0x78e5_c0cc_4ee6_79cb,
    0x2172_ffcc_7dd0_5a82,
    0x8e24_43f7_7446_08b8,
    0x4c26_3a81_e690_35e0,
    0xcb00_c391_bb52_283c,
    0xa32e_531b_8b65_d088,
    0x4ef9_0da2_9748_6471,
    0xd8ac_dea9_46ef_1938,
    0x3f34_9ce3_3f76_faa8,
    0x1d4f_0bc7_c7bb_dcf9,
    0x3159_b4cd_4be0_518a,
    0x6473_78d9_c97e_9fc8,
];
