//! Saving a filter to a file and loading it back, in the library's
//! versioned, checksummed binary format (`docs/format.md`).

use crate::ops::{self, Handle};
use crate::status::ccf_status::{self, *};
use crate::status::io_error;
use crate::{ccf_filter, guard};
use concurrent_cuckoo::{CuckooFilter, DecodeError};
use core::ffi::{c_char, CStr};
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// Saves the filter to the file at `path` without ever leaving a
/// half-written file under that name: the data goes to a new temporary file
/// in the same directory, is flushed to stable storage (fsync), and the
/// temporary file is then renamed over `path` (and the directory synced).
/// A crash at any point leaves either the old file or the new one. A
/// failed save removes its temporary file and leaves `path` as it was.
///
/// The file holds one consistent snapshot, the filter at one moment, taken
/// beside writers: a concurrent insert, remove or clear waits at most for
/// one group of lock stripes to be copied (not for the file), lookups
/// never; the copy takes memory for one encoding. It records the
/// fingerprint width, the table, and the hash seed, so keep saved filters
/// as private as the seed should be. The format is the same on every
/// platform and is the one Rust's `CuckooFilter::write_to_path` writes.
///
/// `path` is a NUL-terminated file name, taken as raw bytes on Unix (any
/// encoding), as UTF-8 elsewhere. Returns `CCF_OK`; `CCF_IO_ERROR` if
/// creating, writing, syncing or renaming fails (including a path that
/// names a directory or no file); `CCF_INVALID_ARGUMENT` for a NULL `f`, a
/// NULL or empty `path`, or (outside Unix) a path that is not UTF-8.
///
/// # Safety
/// `f` is NULL or a live filter; `path` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn ccf_save(f: *const ccf_filter, path: *const c_char) -> ccf_status {
    // SAFETY: the caller's contract is `save`'s.
    unsafe { save(f, path, |filter, path| filter.write_to_path(path)) }
}

/// Loads a filter saved by `ccf_save` (or by Rust's `write_to_path`,
/// `write_to` or `to_bytes` with the default hasher). The new filter answers
/// every query exactly as the saved one did: same fingerprint width, table,
/// length and hash seed.
///
/// The file must hold exactly one saved filter. Nothing is allocated until
/// its header has been checked; the table is then read straight from the
/// file, and the checksum and length verified before a filter is returned.
///
/// Returns `CCF_OK` and stores the filter in `*out` (release it with
/// `ccf_free`); on any error `*out` is left unchanged: `CCF_IO_ERROR` if
/// the file cannot be opened or read; `CCF_CORRUPT` if it is not one intact
/// saved filter (see `CCF_CORRUPT`); `CCF_ALLOCATION_FAILED` if the memory
/// for its table cannot be had; `CCF_INVALID_ARGUMENT` for a NULL `out`, a
/// NULL or empty `path`, or (outside Unix) a path that is not UTF-8.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string; `out` is NULL or valid for
/// writing one pointer.
#[no_mangle]
pub unsafe extern "C" fn ccf_load(path: *const c_char, out: *mut *mut ccf_filter) -> ccf_status {
    // SAFETY: the caller's contract is `load`'s.
    unsafe {
        load(path, out, |file, len| {
            CuckooFilter::read_from_with_options(file, crate::memory::read_options(len))
        })
    }
}

/// Saves the filter behind `f` to the file at `path` with `write` (the
/// library's crash-safe `write_to_path`): `CCF_OK`, `CCF_IO_ERROR` if
/// `write` fails, `CCF_INVALID_ARGUMENT` for a NULL `f` or an unusable
/// `path` (see [`c_path`]).
///
/// # Safety
/// `f` as for `ops::filter_of`; `path` is NULL or a NUL-terminated string
/// that stays unchanged during the call.
pub(crate) unsafe fn save<H: Handle>(
    f: *const H,
    path: *const c_char,
    write: impl FnOnce(&H::Filter, &Path) -> io::Result<()>,
) -> ccf_status {
    guard(CCF_INTERNAL_ERROR, || {
        // SAFETY: `f` is NULL or live; `path` is NULL or NUL-terminated
        // (caller's contract).
        let (Some(filter), Some(path)) = (unsafe { ops::filter_of(f) }, unsafe { c_path(path) })
        else {
            return CCF_INVALID_ARGUMENT;
        };
        match write(filter, path) {
            Ok(()) => CCF_OK,
            Err(e) => io_error(&e),
        }
    })
}

/// Makes a filter from the file at `path` with `make` and stores a new
/// handle for it in `*out`; on any error `*out` is left unchanged:
/// `CCF_INVALID_ARGUMENT` for an unusable `path` (see [`c_path`]) or a
/// NULL `out`, otherwise `make`'s status.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string that stays unchanged during
/// the call; `out` is NULL or valid for writing one pointer.
pub(crate) unsafe fn open<H: Handle>(
    path: *const c_char,
    out: *mut *mut H,
    make: impl FnOnce(&Path) -> Result<H::Filter, ccf_status>,
) -> ccf_status {
    guard(CCF_INTERNAL_ERROR, || {
        // SAFETY: `path` is NULL or NUL-terminated (caller's contract).
        let Some(path) = (unsafe { c_path(path) }) else {
            return CCF_INVALID_ARGUMENT;
        };
        if out.is_null() {
            return CCF_INVALID_ARGUMENT;
        }
        match make(path) {
            // SAFETY: `out` is non-null (checked) and valid for writing a
            // pointer (caller's contract).
            Ok(inner) => unsafe { ops::store(out, inner) },
            Err(status) => status,
        }
    })
}

/// [`open`] with [`load_file`]: loads the one filter the file at `path`
/// holds with `decode`.
///
/// # Safety
/// As [`open`].
pub(crate) unsafe fn load<H: Handle>(
    path: *const c_char,
    out: *mut *mut H,
    decode: impl FnOnce(&mut File, u64) -> Result<H::Filter, DecodeError>,
) -> ccf_status {
    // SAFETY: the caller's contract is `open`'s.
    unsafe { open(path, out, |path| load_file(path, decode)) }
}

/// Decodes the one filter the file at `path` holds with `decode` (a
/// streaming decoder, which reads the encoding's bytes and no more, and
/// refuses a header claiming more than its limit before allocating):
/// `CCF_IO_ERROR` if the file cannot be opened or read, the decoder's
/// error as a status, and `CCF_CORRUPT` if bytes follow the encoding.
///
/// The limit is the file's length: a header that claims a table larger
/// than the file (a 72-byte file claiming 2^32 buckets) is `CCF_CORRUPT`
/// before any memory is reserved for it, not an allocation of up to
/// 64 GiB that fails (strict overcommit, a container's memory limit, a
/// 32-bit target) or succeeds only to find the body missing.
pub(crate) fn load_file<T>(
    path: &Path,
    decode: impl FnOnce(&mut File, u64) -> Result<T, DecodeError>,
) -> Result<T, ccf_status> {
    let mut file = File::open(path).map_err(|e| io_error(&e))?;
    let len = file.metadata().map_err(|e| io_error(&e))?.len();
    // The decoders stream the body into the table in 64 KiB chunks: no
    // second copy of a large filter in memory.
    let filter = decode(&mut file, len).map_err(|e| match e {
        // Claims more than the file holds: the file is cut short or lies.
        DecodeError::ExceedsLimit { .. } => CCF_CORRUPT,
        e => ccf_status::from(e),
    })?;
    // The decoder stops at the end of the encoding; a file is one filter,
    // so anything after it means the file is not what was saved.
    let mut byte = [0u8; 1];
    loop {
        match file.read(&mut byte) {
            Ok(0) => return Ok(filter),
            Ok(_) => return Err(CCF_CORRUPT),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_error(&e)),
        }
    }
}

/// A C path as a `Path`; `None` for NULL, the empty string, or (outside
/// Unix, where paths are not byte strings) one that is not UTF-8.
///
/// # Safety
/// `path` is NULL or points to a NUL-terminated string that stays unchanged
/// during the call.
pub(crate) unsafe fn c_path<'a>(path: *const c_char) -> Option<&'a Path> {
    if path.is_null() {
        return None;
    }
    // SAFETY: non-null and NUL-terminated, unchanged during the call
    // (caller's contract).
    let bytes = unsafe { CStr::from_ptr(path) }.to_bytes();
    if bytes.is_empty() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Some(Path::new(std::ffi::OsStr::from_bytes(bytes)))
    }
    #[cfg(not(unix))]
    {
        core::str::from_utf8(bytes).ok().map(Path::new)
    }
}
