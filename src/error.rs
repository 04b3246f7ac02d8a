//! Error types. Every error leaves the filter exactly as it was.
//!
//! Each failure a caller might handle differently has its own variant, so
//! errors are matched on, never compared as strings; every enum is
//! `#[non_exhaustive]` so variants can be added without breaking callers.
//! Messages are lowercase, without a trailing period (std's convention).

use core::fmt;

/// Why an insert was refused. The filter is unchanged: nothing already
/// stored is lost.
///
/// ```
/// use concurrent_cuckoo::{CuckooFilter, InsertError};
/// // Two buckets of four slots: every key has the same bucket pair.
/// let tiny = CuckooFilter::builder().capacity(1).seed(7).build()?;
/// assert_eq!(tiny.capacity(), 8);
/// let mut stored = 0u32;
/// let err = loop {
///     match tiny.insert(&stored) {
///         Ok(()) => stored += 1,
///         Err(e) => break e,
///     }
/// };
/// assert_eq!(err, InsertError::Full);
/// assert_eq!((stored, tiny.len()), (8, 8)); // the refused key changed nothing
///
/// let filter = CuckooFilter::with_capacity(1000);
/// for _ in 0..8 {
///     filter.insert("k")?;
/// }
/// assert_eq!(filter.insert("k"), Err(InsertError::TooManyDuplicates));
/// assert_eq!(filter.count("k"), 8);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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

/// Why [`insert_batch`](crate::CuckooFilter::insert_batch) (or
/// [`insert_hash_batch`](crate::CuckooFilter::insert_hash_batch)) stopped.
///
/// The batch inserts keys in order and stops at the first one refused:
/// the first [`inserted()`](Self::inserted) keys are in the filter, the
/// refused key and every key after it are not, exactly as if the same
/// `insert` calls had been made one at a time and the loop had stopped at
/// the first error.
///
/// ```
/// use concurrent_cuckoo::{CuckooFilter, InsertError};
/// let filter = CuckooFilter::with_capacity(100);
/// let err = filter.insert_batch(&[7u64; 10]).unwrap_err();
/// assert_eq!(err.inserted(), 8); // eight copies fit in a key's two buckets
/// assert_eq!(err.error(), &InsertError::TooManyDuplicates);
/// assert_eq!(filter.len(), 8);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BatchInsertError {
    inserted: usize,
    error: InsertError,
}

impl BatchInsertError {
    pub(crate) fn new(inserted: usize, error: InsertError) -> Self {
        Self { inserted, error }
    }

    /// How many keys, from the start of the batch, were inserted: the
    /// refused key is `keys[inserted()]`.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(100);
    /// let keys = ["a", "b", "c", "c", "c", "c", "c", "c", "c", "c", "c", "d"];
    /// let err = filter.insert_batch(&keys).unwrap_err();
    /// assert_eq!(err.inserted(), 10); // "a", "b" and eight copies of "c"
    /// assert_eq!(keys[err.inserted()], "c"); // the ninth "c" was refused
    /// assert!(!filter.contains("d")); // nothing after it was inserted
    /// ```
    #[must_use]
    pub fn inserted(&self) -> usize {
        self.inserted
    }

    /// Why the key at [`inserted()`](Self::inserted) was refused.
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, InsertError};
    /// let filter = CuckooFilter::with_capacity(100);
    /// let err = filter.insert_hash_batch(&[5; 9]).unwrap_err();
    /// assert_eq!(err.error(), &InsertError::TooManyDuplicates);
    /// assert_eq!(err.to_string(), format!("batch insert stopped after 8 keys: {}", err.error()));
    /// ```
    #[must_use]
    pub fn error(&self) -> &InsertError {
        &self.error
    }
}

impl fmt::Display for BatchInsertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "batch insert stopped after {} keys: {}",
            self.inserted, self.error
        )
    }
}

impl std::error::Error for BatchInsertError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// The system could not allocate a table: building, decoding or growing a
/// filter asked for more memory than it could get. Shared by
/// [`BuildError`] and [`DecodeError`].
///
/// ```
/// use concurrent_cuckoo::{AllocationError, BuildError};
/// let err = BuildError::AllocationFailed(AllocationError::new(1 << 30));
/// assert_eq!(err.to_string(), "allocation of 1073741824 bytes failed");
/// if let BuildError::AllocationFailed(e) = err {
///     assert_eq!(e.bytes(), 1 << 30);
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AllocationError {
    bytes: usize,
}

impl AllocationError {
    /// The failure to allocate `bytes` bytes (for wrappers and tests that
    /// report or simulate one).
    ///
    /// ```
    /// use concurrent_cuckoo::AllocationError;
    /// assert_eq!(AllocationError::new(64).bytes(), 64);
    /// ```
    #[must_use]
    pub fn new(bytes: usize) -> Self {
        Self { bytes }
    }

    /// Bytes requested.
    ///
    /// ```
    /// use concurrent_cuckoo::AllocationError;
    /// let err = AllocationError::new(4096);
    /// assert_eq!(err.bytes(), 4096);
    /// ```
    #[must_use]
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

impl fmt::Display for AllocationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "allocation of {} bytes failed", self.bytes)
    }
}

impl std::error::Error for AllocationError {}

/// Why a filter could not be built. The builders check their settings
/// before allocating anything.
///
/// ```
/// use concurrent_cuckoo::{BuildError, CuckooFilter};
/// let err = CuckooFilter::builder()
///     .capacity(1000)
///     .fingerprint_bits(8)
///     .false_positive_rate(1e-4)
///     .build()
///     .unwrap_err();
/// assert_eq!(err, BuildError::FingerprintTooShort { bits: 8, rate: 1e-4 });
/// assert_eq!(
///     err.to_string(),
///     "8-bit fingerprints cannot reach a false-positive rate of 0.0001 (bound 8/2^8)"
/// );
/// ```
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
    /// The longest displacement path must be 1 to 5 moves.
    InvalidMaxPathLen(usize),
    /// An exact bucket count must be even and in `[2, 2^32]`.
    InvalidBucketCount(usize),
    /// An exact stripe count must be a power of two, at most 65536.
    InvalidStripeCount(usize),
    /// An exact version count must be a power of two, at least the stripe
    /// count, at most 2^20.
    InvalidVersionCount(usize),
    /// A scalable filter's growth factor must be at least 1 and at most
    /// `u32::MAX` (the saved format records it in 32 bits).
    InvalidGrowthFactor(usize),
    /// A scalable filter may have 1 to 64 levels.
    InvalidMaxLevels(usize),
    /// A windowed filter's window must be 1 to `max` generations, where
    /// `max` depends on the false-positive rate: a slot is 16 or 32 bits
    /// of fingerprint and age tag together, and the tag needs room for the
    /// window plus two generations of sweep slack
    /// ([`WindowedBuilder::generations`](crate::WindowedBuilder::generations)).
    InvalidGenerations {
        /// Generations asked for.
        generations: u64,
        /// The most this rate allows (0: the rate needs every bit for the
        /// fingerprint).
        max: u64,
    },
    /// A timed filter's time to live must be given, and be at least one
    /// millisecond for each of its generations
    /// ([`TimedBuilder::time_to_live`](crate::TimedBuilder::time_to_live)).
    InvalidTimeToLive {
        /// The time to live asked for, in milliseconds (0: none given).
        time_to_live_ms: u64,
        /// The generations it is split into.
        generations: u64,
    },
    /// The system could not allocate the table.
    AllocationFailed(AllocationError),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MissingCapacity => f.write_str(
                "no capacity given: call .capacity(n) on the builder",
            ),
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
            Self::InvalidMaxPathLen(n) => {
                write!(f, "invalid max path length {n}: must be in 1..=5")
            }
            Self::InvalidBucketCount(n) => {
                write!(f, "invalid bucket count {n}: must be even and in [2, 2^32]")
            }
            Self::InvalidStripeCount(n) => {
                write!(f, "invalid stripe count {n}: must be a power of two, at most 65536")
            }
            Self::InvalidVersionCount(n) => write!(
                f,
                "invalid version count {n}: must be a power of two, at least the stripe count, at most 2^20"
            ),
            Self::InvalidGrowthFactor(n) => {
                write!(f, "invalid growth factor {n}: must be 1 to 4294967295")
            }
            Self::InvalidMaxLevels(n) => write!(f, "invalid max levels {n}: must be in 1..=64"),
            Self::InvalidGenerations { generations, max: 0 } => write!(
                f,
                "invalid window of {generations} generations: this false-positive rate leaves \
                 no room for an age tag (a windowed filter's 32-bit slots hold at most a \
                 29-bit fingerprint: its rate must be at least 4/2^29, about 7.451e-9)"
            ),
            Self::InvalidGenerations { generations, max } => write!(
                f,
                "invalid window of {generations} generations: must be 1 to {max} at this false-positive rate"
            ),
            Self::InvalidTimeToLive {
                time_to_live_ms: 0,
                ..
            } => f.write_str("no time to live given: call .time_to_live(duration) on the builder"),
            Self::InvalidTimeToLive {
                time_to_live_ms,
                generations,
            } => write!(
                f,
                "invalid time to live of {time_to_live_ms} ms in {generations} generations: \
                 at least 1 generation and 1 ms a generation"
            ),
            Self::AllocationFailed(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::AllocationFailed(e) => Some(e),
            _ => None,
        }
    }
}

/// Why an encoded filter was refused by
/// [`CuckooFilter::from_bytes`](crate::CuckooFilter::from_bytes),
/// [`read_from`](crate::CuckooFilter::read_from),
/// [`FrozenFilter::from_bytes`](crate::FrozenFilter::from_bytes) or their
/// generic forms. No filter is returned: a damaged encoding never becomes a
/// filter that answers wrong. The format is specified in `docs/format.md`.
///
/// `PartialEq` compares [`Io`](Self::Io) errors by their
/// [`kind`](std::io::Error::kind) only.
///
/// ```
/// use concurrent_cuckoo::{CuckooFilter, DecodeError};
/// let filter = CuckooFilter::with_capacity(1000);
/// filter.insert("k")?;
/// let bytes = filter.to_bytes();
///
/// let cut = &bytes[..bytes.len() - 1];
/// assert_eq!(CuckooFilter::from_bytes(cut).unwrap_err(), DecodeError::Truncated);
///
/// let mut damaged = bytes.clone();
/// damaged[100] ^= 1; // one flipped bit in the body
/// assert_eq!(CuckooFilter::from_bytes(&damaged).unwrap_err(), DecodeError::ChecksumMismatch);
///
/// assert_eq!(CuckooFilter::from_bytes(b"not a filter").unwrap_err(), DecodeError::BadMagic);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
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
    /// The input goes on past the end of the encoded filter (for inputs
    /// whose whole length is known, such as `from_bytes`).
    TrailingBytes,
    /// The header claims an encoding longer than the caller's limit
    /// ([`read_from_limited`](crate::CuckooFilter::read_from_limited));
    /// nothing was allocated.
    ExceedsLimit {
        /// Bytes the header says the encoding has.
        claimed: u64,
        /// The caller's limit.
        limit: u64,
    },
    /// Reading failed; the I/O error is the [`source`](std::error::Error::source).
    /// An unexpected end of input is reported as [`Truncated`](Self::Truncated).
    Io(std::io::Error),
    /// The system could not allocate the table.
    AllocationFailed(AllocationError),
}

impl PartialEq for DecodeError {
    fn eq(&self, other: &Self) -> bool {
        use DecodeError::*;
        match (self, other) {
            (Truncated, Truncated)
            | (BadMagic, BadMagic)
            | (ChecksumMismatch, ChecksumMismatch)
            | (TrailingBytes, TrailingBytes) => true,
            (UnsupportedVersion(a), UnsupportedVersion(b)) => a == b,
            (
                HasherMismatch {
                    expected: a,
                    found: b,
                },
                HasherMismatch {
                    expected: c,
                    found: d,
                },
            ) => (a, b) == (c, d),
            (InvalidHeader(a), InvalidHeader(b)) => a == b,
            (
                ExceedsLimit {
                    claimed: a,
                    limit: b,
                },
                ExceedsLimit {
                    claimed: c,
                    limit: d,
                },
            ) => (a, b) == (c, d),
            (Io(a), Io(b)) => a.kind() == b.kind(),
            (AllocationFailed(a), AllocationFailed(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for DecodeError {}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Truncated => f.write_str("truncated input: the encoded filter ends early"),
            Self::BadMagic => f.write_str("bad magic: the input is not an encoded cuckoo filter"),
            Self::UnsupportedVersion(v) => {
                write!(
                    f,
                    "unsupported format version {v}: not one this release can read"
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
            Self::ExceedsLimit { claimed, limit } => write!(
                f,
                "the encoded filter claims {claimed} bytes, more than the limit of {limit}"
            ),
            Self::Io(e) => write!(f, "i/o error while reading the filter: {e}"),
            Self::AllocationFailed(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for DecodeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io(e) => Some(e),
            Self::AllocationFailed(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error;

    fn assert_error<E: Error + Send + Sync + 'static>(e: E) -> String {
        e.to_string()
    }

    #[test]
    fn messages_are_lowercase_and_errors_are_send_sync() {
        let msgs = [
            assert_error(InsertError::Full),
            assert_error(InsertError::TooManyDuplicates),
            assert_error(BatchInsertError::new(3, InsertError::Full)),
            assert_error(AllocationError::new(1)),
            assert_error(BuildError::MissingCapacity),
            assert_error(BuildError::CapacityOverflow { requested: 1 }),
            assert_error(BuildError::InvalidFalsePositiveRate(2.0)),
            assert_error(BuildError::UnsupportedFingerprintBits(12)),
            assert_error(BuildError::FingerprintTooShort {
                bits: 8,
                rate: 1e-6,
            }),
            assert_error(BuildError::InvalidMaxPathLen(9)),
            assert_error(BuildError::InvalidBucketCount(3)),
            assert_error(BuildError::InvalidStripeCount(3)),
            assert_error(BuildError::InvalidVersionCount(3)),
            assert_error(BuildError::InvalidGrowthFactor(0)),
            assert_error(BuildError::InvalidMaxLevels(0)),
            assert_error(BuildError::AllocationFailed(AllocationError::new(1))),
            assert_error(DecodeError::Truncated),
            assert_error(DecodeError::BadMagic),
            assert_error(DecodeError::UnsupportedVersion(9)),
            assert_error(DecodeError::ChecksumMismatch),
            assert_error(DecodeError::HasherMismatch {
                expected: 1,
                found: 2,
            }),
            assert_error(DecodeError::InvalidHeader("x")),
            assert_error(DecodeError::TrailingBytes),
            assert_error(DecodeError::ExceedsLimit {
                claimed: 10,
                limit: 5,
            }),
            assert_error(DecodeError::Io(std::io::Error::other("disk"))),
            assert_error(DecodeError::AllocationFailed(AllocationError::new(1))),
        ];
        for m in msgs {
            assert!(!m.chars().next().unwrap().is_uppercase(), "{m}");
            assert!(!m.ends_with('.'), "{m}");
        }
    }

    #[test]
    fn sources_chain_to_the_underlying_error() {
        let io = DecodeError::Io(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "no",
        ));
        let inner = io.source().unwrap().downcast_ref::<std::io::Error>();
        assert_eq!(inner.unwrap().kind(), std::io::ErrorKind::PermissionDenied);
        let batch = BatchInsertError::new(2, InsertError::Full);
        assert_eq!(
            batch.source().unwrap().downcast_ref::<InsertError>(),
            Some(&InsertError::Full)
        );
        let alloc = BuildError::AllocationFailed(AllocationError::new(64));
        assert_eq!(
            alloc.source().unwrap().downcast_ref::<AllocationError>(),
            Some(&AllocationError::new(64))
        );
        assert!(DecodeError::Truncated.source().is_none());
        // `Io` compares by kind.
        assert_eq!(
            DecodeError::Io(std::io::Error::other("a")),
            DecodeError::Io(std::io::Error::other("b"))
        );
    }
}
