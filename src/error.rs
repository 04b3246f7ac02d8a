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
        ];
        for m in msgs {
            assert!(!m.chars().next().unwrap().is_uppercase(), "{m}");
            assert!(!m.ends_with('.'), "{m}");
        }
    }
}
