//! `ccf_status`, its messages, and the mapping from the library's errors.

use concurrent_cuckoo::{BuildError, DecodeError, InsertError};
use core::ffi::{c_char, c_int, CStr};

/// The result of a fallible call. `CCF_OK` is 0, so `if (status)` tests
/// for failure; `ccf_status_message` describes each value.
///
/// Every error leaves the filter exactly as it was, except that a batch
/// insert that stops at a refused key keeps the keys before it (see
/// `ccf_insert_batch`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ccf_status {
    /// Success.
    CCF_OK = 0,
    /// The insert found no free slot reachable for this key: the filter is
    /// full (nothing stored was evicted). A growing filter (`ccf_scalable`)
    /// is full only when its `max_levels` levels are in use and the newest
    /// is full, or when a new level cannot be allocated.
    CCF_FULL = 1,
    /// The key's two buckets already hold 8 copies of its fingerprint (the
    /// key, or keys indistinguishable from it, was inserted 8 times); in a
    /// growing filter, the buckets of its newest level.
    CCF_TOO_MANY_DUPLICATES = 2,
    /// A NULL pointer where an object is required, a NULL key with a
    /// length above 0, an empty path, or a configuration the library
    /// refuses (capacity too large to address, false-positive rate outside
    /// (0, 1), unsupported fingerprint width, or one too short for the
    /// requested rate; for a growing filter, a growth factor over
    /// 2^32 - 1, more than 64 levels, or a rate below the levels'
    /// reserve).
    CCF_INVALID_ARGUMENT = 3,
    /// The system could not provide the memory for the table.
    CCF_ALLOCATION_FAILED = 4,
    /// Opening, mapping, reading, writing, syncing or renaming a file
    /// failed. On Linux `errno` then holds the failing system call's error
    /// (`ENOENT`, `EISDIR`, `EACCES`, `ENOSPC`, ...), or `EIO` where the
    /// failure was no system call's (a file that ended early); elsewhere
    /// it is unspecified.
    CCF_IO_ERROR = 5,
    /// The file is not one intact saved filter: wrong magic bytes, an
    /// unsupported format version, a damaged header or body (checksum),
    /// truncation, bytes after the end, a filter saved with a hasher
    /// other than the default one, or a saved filter of the other kind (a
    /// growing filter's file given to `ccf_load` or `ccf_frozen_open`, a
    /// single filter's to `ccf_scalable_load`).
    CCF_CORRUPT = 6,
    /// A bug in this library (an internal Rust panic, caught before it
    /// could reach C). The filter may still be used, but please report it.
    CCF_INTERNAL_ERROR = 7,
}

use ccf_status::*;

impl From<InsertError> for ccf_status {
    fn from(e: InsertError) -> Self {
        match e {
            InsertError::Full => CCF_FULL,
            InsertError::TooManyDuplicates => CCF_TOO_MANY_DUPLICATES,
            // `InsertError` is non-exhaustive: a kind added later is still
            // an error, not success.
            _ => CCF_INTERNAL_ERROR,
        }
    }
}

impl From<BuildError> for ccf_status {
    fn from(e: BuildError) -> Self {
        match e {
            BuildError::AllocationFailed(_) => CCF_ALLOCATION_FAILED,
            // Missing or overflowing capacity, rate outside (0, 1), width
            // unsupported or too short, tuning parameter out of range: all
            // describe the arguments.
            _ => CCF_INVALID_ARGUMENT,
        }
    }
}

impl From<DecodeError> for ccf_status {
    fn from(e: DecodeError) -> Self {
        match e {
            DecodeError::Io(e) => io_error(&e),
            DecodeError::AllocationFailed(_) => CCF_ALLOCATION_FAILED,
            // Truncated, bad magic, unsupported version, checksum, hasher
            // mismatch, invalid header, trailing bytes: the file's fault.
            _ => CCF_CORRUPT,
        }
    }
}

/// The integer a C caller passes where the header says `ccf_status`.
///
/// `ccf_status_message` takes its argument as a plain `int` on the Rust
/// side because C may pass any `int` value in an enum parameter, and a Rust
/// enum holding a value outside its variants is undefined behaviour. The
/// header still says `ccf_status` (cbindgen.toml renames this alias and
/// does not emit it); a C enum and an `int` are passed identically.
pub type ccf_status_arg = c_int;

impl ccf_status {
    /// Every status, in order of value (dense from 0).
    const ALL: [Self; 8] = [
        CCF_OK,
        CCF_FULL,
        CCF_TOO_MANY_DUPLICATES,
        CCF_INVALID_ARGUMENT,
        CCF_ALLOCATION_FAILED,
        CCF_IO_ERROR,
        CCF_CORRUPT,
        CCF_INTERNAL_ERROR,
    ];

    /// The status with value `v`, if there is one.
    fn from_int(v: c_int) -> Option<Self> {
        let s = *Self::ALL.get(usize::try_from(v).ok()?)?;
        debug_assert_eq!(s as c_int, v);
        Some(s)
    }

    fn message(self) -> &'static CStr {
        match self {
            CCF_OK => c"ok",
            CCF_FULL => c"cuckoo filter is full: no free slot reachable for this key",
            CCF_TOO_MANY_DUPLICATES => {
                c"too many duplicates: both candidate buckets already hold 8 copies of this fingerprint"
            }
            CCF_INVALID_ARGUMENT => c"invalid argument",
            CCF_ALLOCATION_FAILED => {
                c"allocation failed: the system could not provide the memory for the table"
            }
            CCF_IO_ERROR => c"i/o error",
            CCF_CORRUPT => c"corrupt file: not one intact saved cuckoo filter",
            CCF_INTERNAL_ERROR => c"internal error in concurrent-cuckoo (a bug: please report it)",
        }
    }
}

/// A static, NUL-terminated English description of `status` (never NULL;
/// "unknown status" for a value that is not a `ccf_status`). Must not be
/// freed.
#[no_mangle]
pub extern "C" fn ccf_status_message(status: ccf_status_arg) -> *const c_char {
    ccf_status::from_int(status)
        .map_or(c"unknown status", ccf_status::message)
        .as_ptr()
}

/// `CCF_IO_ERROR`, with `errno` set to the system error behind `e` (`EIO`
/// when there is none) on Linux, as the status's documentation promises:
/// a C caller reports it with `strerror(errno)` as after any libc call.
pub(crate) fn io_error(e: &std::io::Error) -> ccf_status {
    #[cfg(target_os = "linux")]
    // SAFETY: `__errno_location` returns the calling thread's `errno`,
    // valid and writable for the thread's whole life.
    unsafe {
        *libc::__errno_location() = e.raw_os_error().unwrap_or(libc::EIO);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = e;
    CCF_IO_ERROR
}

#[cfg(test)]
mod tests {
    use super::*;
    use concurrent_cuckoo::AllocationError;

    fn message(status: c_int) -> &'static str {
        // SAFETY: `ccf_status_message` returns a static NUL-terminated
        // string for every input.
        unsafe { CStr::from_ptr(ccf_status_message(status)) }
            .to_str()
            .unwrap()
    }

    #[test]
    fn every_status_has_its_own_message_and_others_are_unknown() {
        let all = ccf_status::ALL;
        let mut seen = std::collections::HashSet::new();
        for (i, s) in all.into_iter().enumerate() {
            assert_eq!(s as c_int, i as c_int, "values are dense from 0");
            let m = message(s as c_int);
            assert_ne!(m, "unknown status", "{s:?}");
            assert!(seen.insert(m), "{s:?} repeats a message");
        }
        for v in [-1, all.len() as c_int, c_int::MAX, c_int::MIN] {
            assert_eq!(message(v), "unknown status");
        }
    }

    #[test]
    fn errors_map_to_their_statuses() {
        assert_eq!(ccf_status::from(InsertError::Full), CCF_FULL);
        assert_eq!(
            ccf_status::from(InsertError::TooManyDuplicates),
            CCF_TOO_MANY_DUPLICATES
        );
        assert_eq!(
            ccf_status::from(BuildError::AllocationFailed(AllocationError::new(1))),
            CCF_ALLOCATION_FAILED
        );
        assert_eq!(
            ccf_status::from(BuildError::CapacityOverflow { requested: 1 }),
            CCF_INVALID_ARGUMENT
        );
        assert_eq!(
            ccf_status::from(BuildError::InvalidFalsePositiveRate(2.0)),
            CCF_INVALID_ARGUMENT
        );
        assert_eq!(
            ccf_status::from(DecodeError::Io(std::io::ErrorKind::PermissionDenied.into())),
            CCF_IO_ERROR
        );
        assert_eq!(
            ccf_status::from(DecodeError::AllocationFailed(AllocationError::new(1))),
            CCF_ALLOCATION_FAILED
        );
        for e in [
            DecodeError::Truncated,
            DecodeError::BadMagic,
            DecodeError::UnsupportedVersion(9),
            DecodeError::ChecksumMismatch,
            DecodeError::HasherMismatch {
                expected: 1,
                found: 2,
            },
            DecodeError::InvalidHeader("x"),
            DecodeError::TrailingBytes,
        ] {
            assert_eq!(ccf_status::from(e), CCF_CORRUPT);
        }
    }
}
