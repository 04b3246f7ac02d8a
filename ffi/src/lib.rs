//! The C ABI of `concurrent-cuckoo`.
//!
//! Every `ccf_*` function here is exported unmangled with the C calling
//! convention; `cbindgen` turns this crate into `include/concurrent_cuckoo.h`
//! (configuration in `cbindgen.toml`), and the doc comments below become the
//! header's comments, so they are written for C readers.
//!
//! Conventions every entry point follows:
//! * a NULL pointer where an object is required, or a key pointer that is
//!   NULL while its length is not 0, is refused (`CCF_INVALID_ARGUMENT`,
//!   `false` or `0`, as each function documents), never dereferenced;
//! * no Rust panic unwinds into C: each body runs under
//!   [`std::panic::catch_unwind`] (the private `guard` function) and a
//!   panic, which would be a bug in this library, becomes
//!   `CCF_INTERNAL_ERROR` or the documented `false`/`0` return;
//! * only `ccf_free`, `ccf_frozen_free`, `ccf_scalable_free` and
//!   `ccf_windowed_free` need exclusive access to their handle: every other
//!   function takes it by shared reference (`&CuckooFilter`,
//!   `&FrozenFilter`, `&ScalableCuckooFilter`, `&WindowedCuckooFilter`),
//!   which is what makes concurrent calls from many C threads sound (all
//!   four are `Sync`).
//!
//! The modules: [`status`] (the status enum and the mapping from the
//! library's errors), [`filter`] (construction and the filter operations),
//! [`stats`] (the counters snapshot), [`persist`] (saving and loading
//! files), [`frozen`] (saved filters queried in place from a read-only
//! mapping), [`scalable`] (growing filters), [`windowed`] (filters whose
//! keys expire by age), [`memory`] (tables from the host's allocator). The batch calls of every handle share the
//! chunking helpers below; `ops` holds the calls generic over a handle
//! (keys, hashes, batches, counts, removes, releasing), which the entry
//! points of every handle type call, and [`persist`] the generic saving
//! and loading of files.

// The exported items carry their C names (`ccf_filter`, `CCF_OK`), so the
// header cbindgen generates is the C API verbatim.
#![allow(non_camel_case_types)]

pub mod filter;
pub mod frozen;
pub mod memory;
mod ops;
pub mod persist;
pub mod scalable;
pub mod stats;
pub mod status;
pub mod timed;
pub mod view;
pub mod windowed;
pub mod windowed_stats;

use concurrent_cuckoo::{BatchInsertError, CuckooFilter};
use core::ffi::{c_char, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};

pub use status::ccf_status;

/// A concurrent cuckoo filter: approximate set membership with deletion.
///
/// Opaque: create one with `ccf_new`, `ccf_new_with_options` or `ccf_load`,
/// release it with `ccf_free`.
///
/// Thread safety: every function except `ccf_free` may be called from any
/// number of threads at once on the same filter, with no locking by the
/// caller. Lookups take no lock; inserts and removes lock two of up to 4096
/// internal stripes; `ccf_clear` and `ccf_save` make concurrent writers wait
/// and let lookups go on. `ccf_free` must be the last call on a filter: no
/// other thread may be using it or use it afterwards.
///
/// Keys: a key passed as `(key, len)` is the `len` bytes at `key`, and it
/// hashes exactly as the Rust call `filter.insert(bytes)` with
/// `bytes: &[u8]` holding the same bytes (the length, then the bytes, into
/// XXH3-64 with the filter's seed). A filter saved by a Rust program that
/// used byte-slice keys therefore answers the same in C, and the other way
/// round. (A Rust `&str` key hashes differently from the same bytes as
/// `&[u8]`.) `len` 0 is the empty key, and `key` may then be NULL.
///
/// No false negatives: a key inserted and not removed is found by every
/// thread at every moment. False positives occur at a rate below
/// `ccf_false_positive_bound(f)`. A key may be inserted up to 8 times (a
/// multiset); each remove takes one copy away. Only remove keys that were
/// inserted: removing a key that was never inserted can remove another key
/// whose fingerprint collides with it.
pub struct ccf_filter {
    inner: CuckooFilter,
}

/// Runs `body`, turning a panic into `on_panic`: no unwinding may cross
/// the C boundary (it would abort the C program), and a panic here is a bug
/// in this library, reported to C as the documented error value.
///
/// `AssertUnwindSafe`: the only state `body` can leave half-updated is the
/// filter's, and the filter stays usable after a panic: its stripe locks
/// are released by unwinding (their guards unlock on drop), never
/// poisoned, and every slot write is a single atomic store.
#[inline(always)]
fn guard<R>(on_panic: R, body: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(r) => r,
        Err(payload) => {
            // Dropping a payload runs arbitrary code that could panic in
            // turn, outside any catch_unwind; a leaked message is harmless.
            std::mem::forget(payload);
            on_panic
        }
    }
}

/// Byte keys of the batch calls go to the library in groups of this many,
/// gathered on the stack: no allocation per call, and long enough for the
/// library's pipeline (stages of 32 keys) to run at full depth.
pub(crate) const KEY_CHUNK: usize = 64;

/// Whether a C key is valid: not NULL with `len > 0`, and no longer than
/// any object can be. Reads nothing.
#[inline(always)]
fn key_valid(key: *const c_void, len: usize) -> bool {
    len == 0 || (!key.is_null() && len <= isize::MAX as usize)
}

/// The bytes of a C key, or `None` if the key is invalid (NULL with
/// `len > 0`, or longer than any object can be).
///
/// # Safety
/// If `key` is not NULL, it points to `len` readable bytes that stay
/// unchanged for the duration of the call.
#[inline(always)]
unsafe fn key_bytes<'a>(key: *const c_void, len: usize) -> Option<&'a [u8]> {
    if len == 0 {
        return Some(&[]);
    }
    if !key_valid(key, len) {
        return None;
    }
    // SAFETY: `key` is non-null and, by the caller's contract, points to
    // `len` readable, unchanging bytes; `u8` has alignment 1 and any bit
    // pattern is a valid `u8`; `len <= isize::MAX` was checked above.
    Some(unsafe { core::slice::from_raw_parts(key.cast::<u8>(), len) })
}

/// `n` elements at `p` as a slice, or `None` for NULL (or an `n` no array
/// of `T` can have).
///
/// # Safety
/// If `p` is not NULL, it points to `n` initialised, properly aligned
/// values of `T` that nothing writes during the call.
#[inline(always)]
unsafe fn array<'a, T>(p: *const T, n: usize) -> Option<&'a [T]> {
    if p.is_null() || n > isize::MAX as usize / core::mem::size_of::<T>().max(1) {
        return None;
    }
    // SAFETY: non-null, and by the caller's contract valid for reading `n`
    // aligned, initialised `T`s that are not written during the call; the
    // total size fits in `isize` (checked above).
    Some(unsafe { core::slice::from_raw_parts(p, n) })
}

/// `array(p, n)`, except that `n == 0` is the empty slice whatever `p` is
/// (a C caller may pass NULL for an empty array, as for the empty key).
///
/// # Safety
/// As [`array`].
#[inline(always)]
unsafe fn array_or_empty<'a, T>(p: *const T, n: usize) -> Option<&'a [T]> {
    if n == 0 {
        return Some(&[]);
    }
    // SAFETY: the caller's contract is `array`'s.
    unsafe { array(p, n) }
}

/// Gathers the byte keys `keys[i]`/`lens[i]` (at most [`KEY_CHUNK`]) into
/// `chunk[i]`; bit `i` of the result is set when key `i` is invalid (see
/// [`key_valid`]), whose `chunk[i]` is left as it was.
///
/// # Safety
/// `keys.len() == lens.len() <= KEY_CHUNK`; each `keys[i]` is NULL or
/// points to `lens[i]` readable bytes that stay unchanged while the slices
/// gathered into `chunk` are used.
#[inline(always)]
unsafe fn gather_keys(
    keys: &[*const c_void],
    lens: &[usize],
    chunk: &mut [&[u8]; KEY_CHUNK],
) -> u64 {
    debug_assert!(keys.len() == lens.len() && keys.len() <= KEY_CHUNK);
    let mut invalid = 0u64;
    for (i, (&key, &len)) in keys.iter().zip(lens).enumerate() {
        // SAFETY: `keys[i]` is NULL or points to `lens[i]` readable,
        // unchanging bytes (caller's contract).
        match unsafe { key_bytes(key, len) } {
            Some(bytes) => chunk[i] = bytes,
            None => invalid |= 1 << i,
        }
    }
    invalid
}

/// Looks up the byte keys `keys[i]`/`lens[i]` with `lookup` (a batch
/// lookup of the filter or frozen filter) chunk by chunk, so that `out[i]`
/// is its answer for key `i`, and `false` for an invalid key. Allocates
/// nothing.
///
/// # Safety
/// `keys`, `lens` and `out` have the same length; each `keys[i]` is NULL or
/// points to `lens[i]` readable bytes that stay unchanged during the call.
#[inline(always)]
unsafe fn contains_byte_keys(
    keys: &[*const c_void],
    lens: &[usize],
    out: &mut [bool],
    lookup: impl Fn(&[&[u8]], &mut [bool]),
) {
    for ((keys, lens), out) in keys
        .chunks(KEY_CHUNK)
        .zip(lens.chunks(KEY_CHUNK))
        .zip(out.chunks_mut(KEY_CHUNK))
    {
        let mut chunk: [&[u8]; KEY_CHUNK] = [&[]; KEY_CHUNK];
        // SAFETY: at most `KEY_CHUNK` keys of equal-length chunks; each key
        // is NULL or `lens[i]` readable, unchanging bytes (caller's
        // contract).
        let mut invalid = unsafe { gather_keys(keys, lens, &mut chunk) };
        lookup(&chunk[..keys.len()], out);
        while invalid != 0 {
            out[invalid.trailing_zeros() as usize] = false;
            invalid &= invalid - 1;
        }
    }
}

/// Inserts the byte keys `keys[i]`/`lens[i]` with `insert` (a batch insert
/// of the filter, scalable filter, ...) chunk by chunk, in order, stopping
/// at the first key refused, and returns the status of the whole batch as
/// `ccf_insert_batch` documents it: `CCF_INVALID_ARGUMENT` (nothing
/// inserted) if any key is invalid, the whole batch being checked first;
/// otherwise `CCF_OK`, or the status of the first key refused.
///
/// `*inserted` (unless NULL) is kept at the number of keys, from the
/// start, that went in: updated after every chunk, so that even a panic
/// in a later chunk leaves a count of keys that are in.
///
/// # Safety
/// `keys` and `lens` have the same length; each `keys[i]` is NULL or points
/// to `lens[i]` readable bytes that stay unchanged during the call;
/// `inserted` is NULL or valid for writing one `size_t`.
#[inline(always)]
unsafe fn insert_byte_keys(
    keys: &[*const c_void],
    lens: &[usize],
    inserted: *mut usize,
    insert: impl Fn(&[&[u8]]) -> Result<(), BatchInsertError>,
) -> ccf_status {
    if !keys.iter().zip(lens).all(|(&k, &len)| key_valid(k, len)) {
        return ccf_status::CCF_INVALID_ARGUMENT;
    }
    let mut done = 0;
    for (keys, lens) in keys.chunks(KEY_CHUNK).zip(lens.chunks(KEY_CHUNK)) {
        let mut chunk: [&[u8]; KEY_CHUNK] = [&[]; KEY_CHUNK];
        // SAFETY: at most `KEY_CHUNK` keys, each `lens[i]` readable bytes
        // (caller's contract); all valid (checked above).
        let invalid = unsafe { gather_keys(keys, lens, &mut chunk) };
        debug_assert_eq!(invalid, 0);
        let result = insert(&chunk[..keys.len()]);
        let went_in = result.map_or_else(|e| e.inserted(), |()| keys.len());
        done += went_in;
        // SAFETY: `inserted` is NULL or writable (caller's contract).
        unsafe { set_count(inserted, done) };
        if let Err(e) = result {
            return ccf_status::from(*e.error());
        }
    }
    ccf_status::CCF_OK
}

/// Inserts the precomputed `hashes` with `insert` (a batch insert of
/// hashes), sets `*inserted` (unless NULL) to how many went in, and
/// returns `CCF_OK` or the status of the first hash refused.
///
/// # Safety
/// `inserted` is NULL or valid for writing one `size_t`.
#[inline(always)]
unsafe fn insert_hashes(
    hashes: &[u64],
    inserted: *mut usize,
    insert: impl FnOnce(&[u64]) -> Result<(), BatchInsertError>,
) -> ccf_status {
    let (done, status) = match insert(hashes) {
        Ok(()) => (hashes.len(), ccf_status::CCF_OK),
        Err(e) => (e.inserted(), ccf_status::from(*e.error())),
    };
    // SAFETY: `inserted` is NULL or writable (caller's contract).
    unsafe { set_count(inserted, done) };
    status
}

/// Removes one copy of each byte key `keys[i]`/`lens[i]` with `remove` (a
/// batch remove, which sets a flag per key) chunk by chunk, in order; the
/// flags go to `removed` when the caller wants them, to a scratch array
/// otherwise. Returns `CCF_INVALID_ARGUMENT` (nothing removed) if any key
/// is invalid, the whole batch being checked first; `CCF_OK` otherwise.
/// Allocates nothing.
///
/// # Safety
/// `keys`, `lens` and `removed` (if any) have the same length; each
/// `keys[i]` is NULL or points to `lens[i]` readable bytes that stay
/// unchanged during the call.
#[inline(always)]
unsafe fn remove_byte_keys(
    keys: &[*const c_void],
    lens: &[usize],
    mut removed: Option<&mut [bool]>,
    remove: impl Fn(&[&[u8]], &mut [bool]),
) -> ccf_status {
    if !keys.iter().zip(lens).all(|(&k, &len)| key_valid(k, len)) {
        return ccf_status::CCF_INVALID_ARGUMENT;
    }
    // Where the flags go when the caller wants none.
    let mut scratch = [false; KEY_CHUNK];
    for (c, (keys, lens)) in keys
        .chunks(KEY_CHUNK)
        .zip(lens.chunks(KEY_CHUNK))
        .enumerate()
    {
        let mut chunk: [&[u8]; KEY_CHUNK] = [&[]; KEY_CHUNK];
        // SAFETY: at most `KEY_CHUNK` keys, each `lens[i]` readable bytes
        // (caller's contract); all valid (checked above).
        let invalid = unsafe { gather_keys(keys, lens, &mut chunk) };
        debug_assert_eq!(invalid, 0);
        let out = match removed.as_deref_mut() {
            Some(all) => &mut all[c * KEY_CHUNK..c * KEY_CHUNK + keys.len()],
            None => &mut scratch[..keys.len()],
        };
        remove(&chunk[..keys.len()], out);
    }
    ccf_status::CCF_OK
}

/// Removes one copy of each of the precomputed `hashes` with `remove` (a
/// batch remove of hashes): in one call when the caller wants the flags
/// (`removed`, as long as `hashes`), chunk by chunk into a scratch array
/// otherwise. Allocates nothing.
#[inline(always)]
fn remove_hashes(
    hashes: &[u64],
    removed: Option<&mut [bool]>,
    remove: impl Fn(&[u64], &mut [bool]),
) {
    match removed {
        Some(removed) => remove(hashes, removed),
        None => {
            let mut scratch = [false; KEY_CHUNK];
            for hashes in hashes.chunks(KEY_CHUNK) {
                remove(hashes, &mut scratch[..hashes.len()]);
            }
        }
    }
}

/// Writes `value` to `*count` unless `count` is NULL.
///
/// # Safety
/// `count` is NULL or valid for writing one `size_t`.
#[inline(always)]
unsafe fn set_count(count: *mut usize, value: usize) {
    if !count.is_null() {
        // SAFETY: non-null and writable (caller's contract); `write` needs
        // no valid previous value.
        unsafe { count.write(value) };
    }
}

/// Writes `value` to `*added` unless `added` is NULL.
///
/// # Safety
/// `added` is NULL or valid for writing one `bool`.
#[inline(always)]
unsafe fn set_added(added: *mut bool, value: bool) {
    if !added.is_null() {
        // SAFETY: non-null and writable (caller's contract); `write` needs
        // no valid previous value, so an uninitialised C `bool` is fine.
        unsafe { added.write(value) };
    }
}

/// The C output array `out[0..n]` as a slice, every element first set to
/// `false`; `None` for NULL.
///
/// C callers pass arrays that are typically uninitialised (`bool out[32];`),
/// and a Rust `&mut [bool]` may only point to valid `bool`s, so the memory
/// is initialised through the raw pointer before the slice exists. The
/// cost is one small `memset` per call.
///
/// # Safety
/// If `p` is not NULL, it points to `n` writable `bool`s that no other
/// pointer passed to the same call overlaps and that no other thread
/// accesses during the call.
#[inline(always)]
unsafe fn out_array<'a>(p: *mut bool, n: usize) -> Option<&'a mut [bool]> {
    if p.is_null() || n > isize::MAX as usize {
        return None;
    }
    // SAFETY: `p` is non-null and valid for writing `n` bools (caller's
    // contract; `bool` has size and alignment 1); the byte 0 is `false`.
    unsafe { p.write_bytes(0, n) };
    // SAFETY: the `n` bools at `p` are now initialised, valid `false`s; no
    // other slice of this call overlaps them and no other thread touches
    // them (caller's contract), so an exclusive slice aliases nothing; the
    // size fits in `isize` (checked above).
    Some(unsafe { core::slice::from_raw_parts_mut(p, n) })
}

/// The major version of the header a program is compiled against. Before
/// 1.0 a new minor version may change the ABI: the shared library's
/// SONAME is `libconcurrent_cuckoo_ffi.so.0.MINOR` (from 1.0 on,
/// `.so.MAJOR`). Compare with [`ccf_version`] at run time to catch a
/// program that loaded another library than it was built for.
pub const CCF_VERSION_MAJOR: u32 = 0;
/// The minor version of the header (see `CCF_VERSION_MAJOR`).
pub const CCF_VERSION_MINOR: u32 = 1;
/// The patch version of the header (see `CCF_VERSION_MAJOR`).
pub const CCF_VERSION_PATCH: u32 = 0;

/// The version of this library, e.g. `"0.1.0"`: a static, NUL-terminated
/// string that must not be freed. It is `CCF_VERSION_MAJOR`,
/// `CCF_VERSION_MINOR` and `CCF_VERSION_PATCH` of the header this library
/// was built with, joined by dots.
#[no_mangle]
pub extern "C" fn ccf_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// The SIMD probe compiled into this library: `"sse2"`, `"sse2+avx2"`,
/// `"neon"` or `"portable"`. A static string that must not be freed.
#[no_mangle]
pub extern "C" fn ccf_probe_backend() -> *const c_char {
    match concurrent_cuckoo::probe_backend() {
        "sse2" => c"sse2".as_ptr(),
        "sse2+avx2" => c"sse2+avx2".as_ptr(),
        "neon" => c"neon".as_ptr(),
        "portable" => c"portable".as_ptr(),
        _ => c"unknown".as_ptr(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::ffi::CStr;

    #[test]
    fn version_and_backend_are_nul_terminated_and_match_the_library() {
        // SAFETY: both return static NUL-terminated strings.
        let version = unsafe { CStr::from_ptr(ccf_version()) };
        assert_eq!(version.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
        // The header's macros are the package's version: bumping one
        // without the other fails here.
        assert_eq!(
            format!("{CCF_VERSION_MAJOR}.{CCF_VERSION_MINOR}.{CCF_VERSION_PATCH}"),
            env!("CARGO_PKG_VERSION")
        );
        // SAFETY: as above.
        let backend = unsafe { CStr::from_ptr(ccf_probe_backend()) };
        assert_eq!(
            backend.to_str().unwrap(),
            concurrent_cuckoo::probe_backend()
        );
    }

    #[test]
    fn a_panic_becomes_the_error_value() {
        // The default hook prints the message; that is expected here.
        assert_eq!(guard(7, || panic!("deliberate test panic")), 7);
        assert_eq!(guard(7, || 3), 3);
    }

    #[test]
    fn keys_and_arrays_refuse_null_but_accept_the_empty_key() {
        // SAFETY: NULL with len 0 is the empty key; the other calls pass
        // NULL, which the helpers refuse without dereferencing.
        unsafe {
            assert_eq!(key_bytes(core::ptr::null(), 0), Some(&[][..]));
            assert_eq!(key_bytes(core::ptr::null(), 1), None);
            assert_eq!(array::<u64>(core::ptr::null(), 0), None);
            assert!(ops::filter_of::<ccf_filter>(core::ptr::null()).is_none());
        }
        let big = [0u8; 4];
        // SAFETY: a too-large length is refused before any slice is made.
        assert_eq!(unsafe { key_bytes(big.as_ptr().cast(), usize::MAX) }, None);
    }
}
