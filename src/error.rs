//! Error types. Every error leaves the filter exactly as it was.

use core::fmt;

/// Why an insert was refused. The filter is unchanged: nothing already
/// stored is lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum InsertError {
    /// No displacement path (within the search depth) frees a slot in
    /// either candidate bucket: the filter is (locally) full.
    Full,
    /// The key's two buckets already hold `2 * 4 = 8` copies of its
    /// fingerprint (the key, or keys indistinguishable from it, was inserted
    /// eight times).
    TooManyDuplicates,
}

impl fmt::Display for InsertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Full => "cuckoo filter is full: no free slot reachable for this key",
            Self::TooManyDuplicates => {
                "too many duplicates: both candidate buckets already hold 8 copies of this fingerprint"
            }
        })
    }
}

impl std::error::Error for InsertError {}

/// Why a filter could not be built.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum BuildError {
    /// No capacity was given to the builder.
    MissingCapacity,
    /// The requested capacity needs more buckets than a filter can address
    /// (2^32 buckets of 4 slots) or more bytes than `usize` can count.
    CapacityOverflow {
        /// The capacity asked for.
        requested: u64,
    },
    /// The false-positive rate must be a number strictly between 0 and 1.
    InvalidFalsePositiveRate(f64),
    /// Only 8-, 16- and 32-bit fingerprints are supported.
    UnsupportedFingerprintBits(u32),
    /// The given fingerprint width cannot reach the given false-positive
    /// rate (the bound is `2 * 4 / 2^bits`).
    FingerprintTooShort {
        /// Fingerprint width asked for.
        bits: u32,
        /// False-positive rate asked for.
        rate: f64,
    },
    /// The system could not allocate the table.
    AllocationFailed {
        /// Bytes requested.
        bytes: usize,
    },
    /// A tuning parameter is out of range (name and reason).
    InvalidParameter(&'static str),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MissingCapacity => f.write_str("no capacity given: call .capacity(n) on the builder"),
            Self::CapacityOverflow { requested } => {
                write!(f, "capacity overflow: a filter cannot hold {requested} items")
            }
            Self::InvalidFalsePositiveRate(rate) => {
                write!(f, "false-positive rate {rate} is not strictly between 0 and 1")
            }
            Self::UnsupportedFingerprintBits(bits) => {
                write!(f, "unsupported fingerprint width {bits}: use 8, 16 or 32 bits")
            }
            Self::FingerprintTooShort { bits, rate } => write!(
                f,
                "{bits}-bit fingerprints cannot reach a false-positive rate of {rate} (bound 8/2^{bits})"
            ),
            Self::AllocationFailed { bytes } => write!(f, "allocation of {bytes} bytes failed"),
            Self::InvalidParameter(what) => write!(f, "invalid parameter: {what}"),
        }
    }
}

impl std::error::Error for BuildError {}

/// Why an encoded filter was refused by
/// [`CuckooFilter::from_bytes`](crate::CuckooFilter::from_bytes),
/// [`read_from`](crate::CuckooFilter::read_from) or their generic forms.
/// No filter is returned: a damaged encoding never becomes a filter that
/// answers wrong. The format is specified in `docs/format.md`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeError {
    /// The input ended before the end of the encoded filter.
    Truncated,
    /// The input does not start with the format's magic bytes: it is not an
    /// encoded cuckoo filter.
    BadMagic,
    /// The format version is one this release cannot read (0, or newer than
    /// it knows).
    UnsupportedVersion(u16),
    /// The checksum does not match the header and body: the data was
    /// damaged.
    ChecksumMismatch,
    /// The filter was encoded with a different hash function than the one
    /// the caller decodes with: its keys would hash elsewhere, so every
    /// lookup would answer wrong.
    HasherMismatch {
        /// [`PersistentHasher::ID`](crate::PersistentHasher::ID) of the
        /// caller's hasher.
        expected: u32,
        /// Hasher ID recorded in the encoded filter.
        found: u32,
    },
    /// A header field is out of range or inconsistent (which one, and why).
    InvalidHeader(&'static str),
    /// [`from_bytes`](crate::CuckooFilter::from_bytes) was given bytes past
    /// the end of the encoded filter.
    TrailingBytes,
    /// Reading failed (for [`read_from`](crate::CuckooFilter::read_from));
    /// an unexpected end of input is reported as [`Truncated`](Self::Truncated).
    Io(std::io::ErrorKind),
    /// The system could not allocate the table.
    AllocationFailed {
        /// Bytes requested.
        bytes: usize,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Truncated => f.write_str("truncated input: the encoded filter ends early"),
            Self::BadMagic => f.write_str("bad magic: the input is not an encoded cuckoo filter"),
            Self::UnsupportedVersion(v) => {
                write!(
                    f,
                    "unsupported format version {v}: this release reads version 1"
                )
            }
            Self::ChecksumMismatch => {
                f.write_str("checksum mismatch: the encoded filter is damaged")
            }
            Self::HasherMismatch { expected, found } => write!(
                f,
                "hasher mismatch: the filter was encoded with hasher id {found}, \
                 but it is being decoded with hasher id {expected}"
            ),
            Self::InvalidHeader(what) => write!(f, "invalid header: {what}"),
            Self::TrailingBytes => {
                f.write_str("trailing bytes after the end of the encoded filter")
            }
            Self::Io(kind) => write!(f, "i/o error while reading the filter: {kind}"),
            Self::AllocationFailed { bytes } => write!(f, "allocation of {bytes} bytes failed"),
        }
    }
}

impl std::error::Error for DecodeError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_error<E: std::error::Error + Send + Sync + 'static>(e: E) -> String {
        e.to_string()
    }

    #[test]
    fn messages_are_lowercase_and_errors_are_send_sync() {
        let msgs = [
            assert_error(InsertError::Full),
            assert_error(InsertError::TooManyDuplicates),
            assert_error(BuildError::MissingCapacity),
            assert_error(BuildError::CapacityOverflow { requested: 1 }),
            assert_error(BuildError::InvalidFalsePositiveRate(2.0)),
            assert_error(BuildError::UnsupportedFingerprintBits(12)),
            assert_error(BuildError::FingerprintTooShort {
                bits: 8,
                rate: 1e-6,
            }),
            assert_error(BuildError::AllocationFailed { bytes: 1 }),
            assert_error(BuildError::InvalidParameter("x")),
            assert_error(DecodeError::Truncated),
            assert_error(DecodeError::BadMagic),
            assert_error(DecodeError::UnsupportedVersion(2)),
            assert_error(DecodeError::ChecksumMismatch),
            assert_error(DecodeError::HasherMismatch {
                expected: 1,
                found: 2,
            }),
            assert_error(DecodeError::InvalidHeader("x")),
            assert_error(DecodeError::TrailingBytes),
            assert_error(DecodeError::Io(std::io::ErrorKind::Other)),
            assert_error(DecodeError::AllocationFailed { bytes: 1 }),
        ];
        for m in msgs {
            assert!(!m.chars().next().unwrap().is_uppercase(), "{m}");
            assert!(!m.ends_with('.'), "{m}");
        }
    }
}
