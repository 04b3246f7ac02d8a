//! The header of an encoded filter: constants, parsing and validation
//! (`docs/format.md` specifies every byte). Shared by decoding into a live
//! filter and by [`FrozenFilter`](crate::FrozenFilter), which queries the
//! encoding where it lies.

use crate::error::DecodeError;
use crate::fingerprint::SLOTS;
use crate::index::{HashScheme, IndexMap};
use crate::table::MAX_PATH_LIMIT;

/// First eight bytes of every encoded filter. The high first byte catches
/// 7-bit transports and the trailing newline catches newline translation.
pub(crate) const MAGIC: [u8; 8] = *b"\x89CUCKOO\n";
/// Version 1: a 48-byte header, and hashes used as they are
/// ([`HashScheme::Raw`]). Read, and written only for filters decoded from it.
pub(crate) const V1: u16 = 1;
/// Version 2: a 64-byte header, so the body starts cache-line aligned in a
/// page-aligned mapping, and hashes finalized ([`HashScheme::Finalized`]).
pub(crate) const V2: u16 = 2;
/// Version 3: a scalable filter, a container of version-2 levels
/// (`persist/scalable.rs`).
pub(crate) const V3_SCALABLE: u16 = 3;
/// Bytes of the longest header (version 2).
pub(crate) const MAX_HEADER_LEN: usize = 64;
/// Bytes of the trailing checksum.
pub(crate) const CHECKSUM_LEN: usize = 8;
/// Bytes of the magic and version: enough to know the header's length.
pub(crate) const PREFIX_LEN: usize = 10;

/// The format version of an input, whatever kind of filter it encodes,
/// from its first bytes (see [`Header::version_of`]).
pub(crate) fn any_version(prefix: &[u8]) -> Result<u16, DecodeError> {
    let m = prefix.len().min(MAGIC.len());
    if prefix[..m] != MAGIC[..m] {
        return Err(DecodeError::BadMagic);
    }
    if prefix.len() < PREFIX_LEN {
        return Err(DecodeError::Truncated);
    }
    Ok(u16::from_le_bytes([prefix[8], prefix[9]]))
}

/// Header length of a format version (1 or 2).
pub(crate) const fn header_len(version: u16) -> usize {
    if version == V1 {
        48
    } else {
        MAX_HEADER_LEN
    }
}

/// The format version that records `scheme`: new filters write version 2;
/// a filter decoded from version 1 is written back as version 1, so that it
/// keeps answering exactly as it did. A nested level is written as version
/// 2 too: its container records the nesting (`persist/scalable.rs`), and
/// only it decodes such a level.
pub(crate) fn version_for(scheme: HashScheme) -> u16 {
    match scheme {
        HashScheme::Raw => V1,
        HashScheme::Finalized | HashScheme::Nested => V2,
    }
}

/// The decoded, validated header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    pub(crate) version: u16,
    pub(crate) bits: u8,
    pub(crate) max_path: u8,
    pub(crate) buckets: u64,
    pub(crate) len: u64,
    pub(crate) hasher_id: u32,
    pub(crate) seed: u64,
}

impl Header {
    /// The header's bytes (`header_len(self.version)` of the returned array
    /// are used; the rest are zero).
    pub(crate) fn encode(&self) -> ([u8; MAX_HEADER_LEN], usize) {
        let mut h = [0u8; MAX_HEADER_LEN];
        h[0..8].copy_from_slice(&MAGIC);
        h[8..10].copy_from_slice(&self.version.to_le_bytes());
        h[10] = self.bits;
        h[11] = SLOTS as u8;
        h[12] = self.max_path;
        h[16..24].copy_from_slice(&self.buckets.to_le_bytes());
        h[24..32].copy_from_slice(&self.len.to_le_bytes());
        h[32..36].copy_from_slice(&self.hasher_id.to_le_bytes());
        h[40..48].copy_from_slice(&self.seed.to_le_bytes());
        (h, header_len(self.version))
    }

    /// The format version of an input, from its first bytes (which may be
    /// fewer than [`PREFIX_LEN`] if the input ended early): the magic and
    /// version are checked on whatever is there, so a short foreign input is
    /// `BadMagic` and a short prefix of a real encoding is `Truncated`.
    pub(crate) fn version_of(prefix: &[u8]) -> Result<u16, DecodeError> {
        match any_version(prefix)? {
            v @ (V1 | V2) => Ok(v),
            V3_SCALABLE => Err(DecodeError::InvalidHeader(
                "this encodes a ScalableCuckooFilter: decode it with ScalableCuckooFilter::from_bytes",
            )),
            crate::windowed::V4_WINDOWED => Err(DecodeError::InvalidHeader(
                "this encodes a WindowedCuckooFilter: decode it with WindowedCuckooFilter::from_bytes",
            )),
            v => Err(DecodeError::UnsupportedVersion(v)),
        }
    }

    /// Parses and validates the header at the start of `b` (which may be
    /// shorter than a header if the input ended early).
    pub(crate) fn parse(b: &[u8]) -> Result<Self, DecodeError> {
        let version = Self::version_of(b)?;
        if b.len() < header_len(version) {
            return Err(DecodeError::Truncated);
        }
        let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let u64_at = |i: usize| {
            let mut raw = [0u8; 8];
            raw.copy_from_slice(&b[i..i + 8]);
            u64::from_le_bytes(raw)
        };
        let header = Self {
            version,
            bits: b[10],
            max_path: b[12],
            buckets: u64_at(16),
            len: u64_at(24),
            hasher_id: u32_at(32),
            seed: u64_at(40),
        };
        if !matches!(header.bits, 8 | 16 | 32) {
            return Err(DecodeError::InvalidHeader(
                "fingerprint width must be 8, 16 or 32 bits",
            ));
        }
        if usize::from(b[11]) != SLOTS {
            return Err(DecodeError::InvalidHeader("slots per bucket must be 4"));
        }
        if !(1..=MAX_PATH_LIMIT).contains(&usize::from(header.max_path)) {
            return Err(DecodeError::InvalidHeader(
                "max path length must be in 1..=5",
            ));
        }
        let reserved_zero = b[13..16] == [0; 3]
            && u32_at(36) == 0
            && b[48..header_len(version)].iter().all(|&x| x == 0);
        if !reserved_zero {
            return Err(DecodeError::InvalidHeader("reserved bytes must be zero"));
        }
        if header.buckets < 2
            || !header.buckets.is_multiple_of(2)
            || header.buckets > IndexMap::MAX_BUCKETS
        {
            return Err(DecodeError::InvalidHeader(
                "bucket count must be even and in [2, 2^32]",
            ));
        }
        if header.len > header.buckets * SLOTS as u64 {
            return Err(DecodeError::InvalidHeader(
                "length exceeds the slots of the table",
            ));
        }
        Ok(header)
    }

    /// How the encoded filter maps hashes to buckets.
    pub(crate) fn scheme(&self) -> HashScheme {
        match self.version {
            V1 => HashScheme::Raw,
            _ => HashScheme::Finalized,
        }
    }

    /// Offset of the body: the header's length.
    pub(crate) fn body_offset(&self) -> usize {
        header_len(self.version)
    }

    /// Bytes of the body (cannot overflow: at most 2^32 * 4 * 4).
    pub(crate) fn body_len(&self) -> u64 {
        self.buckets * SLOTS as u64 * u64::from(self.bits / 8)
    }

    /// Bytes of the whole encoding.
    pub(crate) fn encoded_len(&self) -> u64 {
        (self.body_offset() + CHECKSUM_LEN) as u64 + self.body_len()
    }
}
