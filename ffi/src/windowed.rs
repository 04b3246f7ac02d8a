//! Filters whose keys expire by age: `ccf_windowed`, Rust's
//! `WindowedCuckooFilter`. The key and batch calls are the generic ones of
//! the private `ops` module, and saving and loading are `persist`'s `save`
//! and `load`; what is its own is the window (`advance`, `generation`) and
//! its size.

use crate::guard;
use crate::ops::{self, keyed, Handle};
use crate::persist::{load, save};
use crate::status::ccf_status::{self, *};
use concurrent_cuckoo::WindowedCuckooFilter;
use core::ffi::{c_char, c_void};

/// A concurrent cuckoo filter whose keys expire by age, counted in
/// generations: a key last inserted in generation `t` is found while the
/// filter's generation is at most `t + G - 1` (`G`, the window, set at
/// creation) and is gone, false positives aside, from `t + G` on. The
/// caller starts each generation with `ccf_windowed_advance` (or
/// `ccf_windowed_advance_to`, to catch up with a clock).
///
/// Opaque: create one with `ccf_windowed_new` or `ccf_windowed_load`,
/// release it with `ccf_windowed_free`.
///
/// Inserting a key that is present (live or expired) refreshes it: it is
/// stored once, never duplicated, and counts once in `ccf_windowed_len`.
/// There is no remove: two keys whose fingerprints collide share one
/// slot, which a refresh of either keeps alive, so a remove could take the
/// other key's only copy.
///
/// Capacity: with at most `capacity` keys live (inserted or refreshed
/// within the window), inserts never fail, however many generations pass:
/// expired slots are free to inserts at once, and each advance clears the
/// expired slots of a slice of the table. Memory is fixed at creation.
///
/// Thread safety: every function except `ccf_windowed_free` may be called
/// from any number of threads at once on the same filter, with no locking
/// by the caller; lookups take no lock and never wait for an advance.
/// `ccf_windowed_free` must be the last call on a filter.
///
/// Keys: as for `ccf_filter`: `(key, len)` hashes exactly as the Rust call
/// on a `&[u8]` of the same bytes, and `len` 0 is the empty key (`key` may
/// then be NULL).
pub struct ccf_windowed {
    inner: WindowedCuckooFilter,
}

keyed!(WindowedCuckooFilter);

impl Handle for ccf_windowed {
    type Filter = WindowedCuckooFilter;
    fn filter(&self) -> &WindowedCuckooFilter {
        &self.inner
    }
    fn wrap(inner: WindowedCuckooFilter) -> Self {
        ccf_windowed { inner }
    }
}

/// Creates a filter for at most `capacity` live keys, a window of
/// `generations` generations (0 = the default, 4), a false-positive bound
/// of `false_positive_rate` (0 = the default, 0.001; otherwise strictly
/// between 0 and 1), and the hash seed at `seed` (NULL = a fresh random
/// seed). It starts at generation 0.
///
/// Returns `CCF_OK` and stores the new filter in `*out`, to be released
/// with `ccf_windowed_free`. On any error `*out` is left unchanged:
/// `CCF_INVALID_ARGUMENT` for a NULL `out`, a capacity too large to
/// address, a window the slots' age tags cannot count, or a rate outside
/// [0, 1) or NaN; `CCF_ALLOCATION_FAILED` if the table's memory cannot be
/// had. Slots are 16 bits, four a bucket, where they hold the window (up
/// to 29 generations) and reach the rate (down to 9.8e-4); else 32 bits,
/// two a bucket, about 2.2 times the memory a key (up to 253 generations;
/// rates down to 7.5e-9 with windows of up to 5, 2.4e-7 with 253).
///
/// # Safety
/// `out` is NULL or valid for writing one pointer; `seed` is NULL or
/// points to a readable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn ccf_windowed_new(
    capacity: usize,
    generations: usize,
    false_positive_rate: f64,
    seed: *const u64,
    out: *mut *mut ccf_windowed,
) -> ccf_status {
    guard(CCF_INTERNAL_ERROR, || {
        if out.is_null() {
            return CCF_INVALID_ARGUMENT;
        }
        let mut builder = WindowedCuckooFilter::builder()
            .capacity(capacity)
            .table_memory(crate::memory::table_memory());
        if generations != 0 {
            builder = builder.generations(generations as u64);
        }
        // -0.0 == 0.0 is the default too; NaN is not 0 and the builder
        // refuses it.
        if false_positive_rate != 0.0 {
            builder = builder.false_positive_rate(false_positive_rate);
        }
        // SAFETY: `seed` is NULL (`as_ref` gives None) or points to a
        // readable, aligned `uint64_t` (caller's contract).
        if let Some(&seed) = unsafe { seed.as_ref() } {
            builder = builder.seed(seed);
        }
        match builder.build() {
            // SAFETY: `out` is non-null (checked) and valid for writing a
            // pointer (caller's contract).
            Ok(inner) => unsafe { ops::store(out, inner) },
            Err(e) => e.into(),
        }
    })
}

/// Releases a filter. NULL is a no-op. Not thread-safe: no other call may
/// be using `f`, and `f` must not be used (or freed) again afterwards.
///
/// # Safety
/// `f` is NULL or a filter from `ccf_windowed_new` or `ccf_windowed_load`
/// that has not been freed, and no other thread uses it.
#[no_mangle]
pub unsafe extern "C" fn ccf_windowed_free(f: *mut ccf_windowed) {
    // SAFETY: the caller's contract is `release`'s.
    unsafe { ops::release(f) }
}

/// Inserts the key (the `len` bytes at `key`) into the current
/// generation, or refreshes it if present.
///
/// Returns `CCF_OK`; `CCF_FULL` only when more than `capacity` keys are
/// live and no displacement path frees a slot; `CCF_INVALID_ARGUMENT` for
/// a NULL `f`, or a NULL `key` with `len > 0`. On an error the filter is
/// unchanged.
///
/// # Safety
/// `f` is NULL or a live windowed filter; `key` is NULL or points to `len`
/// readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ccf_windowed_insert(
    f: *mut ccf_windowed,
    key: *const c_void,
    len: usize,
) -> ccf_status {
    // SAFETY: the caller's contract is `ops::insert`'s.
    unsafe { ops::insert(f, key, len) }
}

/// `ccf_windowed_insert` for a precomputed, well-mixed 64-bit hash (as
/// `ccf_insert_hash`).
///
/// # Safety
/// `f` is NULL or a live windowed filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_windowed_insert_hash(f: *mut ccf_windowed, hash: u64) -> ccf_status {
    // SAFETY: the caller's contract is `ops::insert_hash`'s.
    unsafe { ops::insert_hash(f, hash) }
}

/// Is the key live (probably)? True for a key inserted or refreshed within
/// the window; a false positive with probability below
/// `ccf_windowed_false_positive_bound(f)`. Returns false for a NULL `f`,
/// or a NULL `key` with `len > 0`.
///
/// # Safety
/// `f` is NULL or a live windowed filter; `key` is NULL or points to `len`
/// readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ccf_windowed_contains(
    f: *const ccf_windowed,
    key: *const c_void,
    len: usize,
) -> bool {
    // SAFETY: the caller's contract is `ops::contains`'s.
    unsafe { ops::contains(f, key, len) }
}

/// `ccf_windowed_contains` for a precomputed hash; false for a NULL `f`.
///
/// # Safety
/// `f` is NULL or a live windowed filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_windowed_contains_hash(f: *const ccf_windowed, hash: u64) -> bool {
    // SAFETY: the caller's contract is `ops::contains_hash`'s.
    unsafe { ops::contains_hash(f, hash) }
}

/// Looks up a burst of precomputed hashes: `out[i] =
/// ccf_windowed_contains_hash(f, hashes[i])` for `i < n`, with the
/// buckets of keys ahead prefetched. Every `out[i]` is false for a NULL
/// `f` or `hashes`; nothing is written for a NULL `out`.
///
/// # Safety
/// `f` is NULL or a live windowed filter; `hashes` is NULL or points to
/// `n` readable `uint64_t`s; `out` is NULL or points to `n` writable
/// bools that no other thread reads or writes during the call.
#[no_mangle]
pub unsafe extern "C" fn ccf_windowed_contains_hash_batch(
    f: *const ccf_windowed,
    hashes: *const u64,
    n: usize,
    out: *mut bool,
) {
    // SAFETY: the caller's contract is `ops::contains_hash_batch`'s.
    unsafe { ops::contains_hash_batch(f, hashes, n, out) }
}

/// Looks up a burst of byte keys: `out[i] = ccf_windowed_contains(f,
/// keys[i], lens[i])` for `i < n`. Every `out[i]` is false for a NULL
/// `f`, `keys` or `lens`; nothing is written for a NULL `out`.
///
/// # Safety
/// `f` is NULL or a live windowed filter; `keys` and `lens` are NULL or
/// point to `n` readable elements, each `keys[i]` NULL or pointing to
/// `lens[i]` readable bytes; `out` as for
/// `ccf_windowed_contains_hash_batch`.
#[no_mangle]
pub unsafe extern "C" fn ccf_windowed_contains_batch(
    f: *const ccf_windowed,
    keys: *const *const c_void,
    lens: *const usize,
    n: usize,
    out: *mut bool,
) {
    // SAFETY: the caller's contract is `ops::contains_batch`'s.
    unsafe { ops::contains_batch(f, keys, lens, n, out) }
}

/// `ccf_contains_burst` for a windowed filter: bit `i` set when `keys[i]`
/// (`key_len` bytes) is live; 0 for a NULL `f` or `keys`, or `n > 64`.
///
/// # Safety
/// `f` is NULL or a live windowed filter; `keys` is NULL or points to `n`
/// readable pointers, each NULL or pointing to `key_len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ccf_windowed_contains_burst(
    f: *const ccf_windowed,
    keys: *const *const c_void,
    key_len: usize,
    n: u32,
) -> u64 {
    // SAFETY: the caller's contract is `ops::contains_burst`'s.
    unsafe { ops::contains_burst(f, keys, key_len, n) }
}

/// `ccf_contains_hash_burst` for a windowed filter: bit `i` set when
/// `hashes[i]` is live; 0 for a NULL `f` or `hashes`, or `n > 64`.
///
/// # Safety
/// `f` is NULL or a live windowed filter; `hashes` is NULL or points to
/// `n` readable `uint64_t`s.
#[no_mangle]
pub unsafe extern "C" fn ccf_windowed_contains_hash_burst(
    f: *const ccf_windowed,
    hashes: *const u64,
    n: u32,
) -> u64 {
    // SAFETY: the caller's contract is `ops::contains_hash_burst`'s.
    unsafe { ops::contains_hash_burst(f, hashes, n) }
}

/// Inserts (or refreshes) a burst of byte keys in order, stopping at the
/// first key refused, as `ccf_insert_batch` does: `*inserted` (unless
/// NULL) is set to the number of keys, from the start, that went in.
/// Returns `CCF_OK`, the status of the first key refused, or
/// `CCF_INVALID_ARGUMENT` (nothing inserted) for a NULL `f`, NULL arrays
/// with `n > 0`, or any invalid key.
///
/// # Safety
/// As `ccf_windowed_contains_batch` for `f`, `keys` and `lens`;
/// `inserted` is NULL or valid for writing one `size_t`.
#[no_mangle]
pub unsafe extern "C" fn ccf_windowed_insert_batch(
    f: *mut ccf_windowed,
    keys: *const *const c_void,
    lens: *const usize,
    n: usize,
    inserted: *mut usize,
) -> ccf_status {
    // SAFETY: the caller's contract is `ops::insert_batch`'s.
    unsafe { ops::insert_batch(f, keys, lens, n, inserted) }
}

/// `ccf_windowed_insert_batch` for precomputed hashes.
///
/// # Safety
/// `f` is NULL or a live windowed filter; `hashes` is NULL or points to
/// `n` readable `uint64_t`s; `inserted` is NULL or valid for writing one
/// `size_t`.
#[no_mangle]
pub unsafe extern "C" fn ccf_windowed_insert_hash_batch(
    f: *mut ccf_windowed,
    hashes: *const u64,
    n: usize,
    inserted: *mut usize,
) -> ccf_status {
    // SAFETY: the caller's contract is `ops::insert_hash_batch`'s.
    unsafe { ops::insert_hash_batch(f, hashes, n, inserted) }
}

/// Starts the next generation and returns it: keys last inserted `G`
/// generations ago expire. Clears the expired slots of one slice of the
/// table on the way (each bucket under its lock for a few nanoseconds;
/// lookups never wait). Calls from several threads run one after another.
/// Returns 0 for a NULL `f`.
///
/// # Safety
/// `f` is NULL or a live windowed filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_windowed_advance(f: *mut ccf_windowed) -> u64 {
    // SAFETY: `f` is NULL or live (caller's contract).
    unsafe { ops::read(f, 0, WindowedCuckooFilter::advance) }
}

/// Advances until the generation is at least `generation` (for a clock:
/// `elapsed / (window / G)`), never backwards, and returns the generation
/// then. A jump of `2^t - 1 - G` generations or more (`t` tag bits) costs
/// one pass over the table, whatever its length, and a jump of `G` or more
/// (past every key's window) is a reset that stores zeros over the
/// occupied buckets only; lookups never block on either. Generations stop
/// at `2^63 - 1` (`UINT64_MAX` gives that): a target past it lands there
/// with every key expired, as each advance there does. Returns 0 for a
/// NULL `f`.
///
/// # Safety
/// `f` is NULL or a live windowed filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_windowed_advance_to(f: *mut ccf_windowed, generation: u64) -> u64 {
    // SAFETY: `f` is NULL or live (caller's contract).
    unsafe { ops::read(f, 0, |w| w.advance_to(generation)) }
}

/// The current generation (0 at creation); 0 for a NULL `f`.
///
/// # Safety
/// `f` is NULL or a live windowed filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_windowed_generation(f: *const ccf_windowed) -> u64 {
    // SAFETY: `f` is NULL or live (caller's contract).
    unsafe { ops::read(f, 0, WindowedCuckooFilter::generation) }
}

/// `G`, the window: generations a key lives after its last insert; 0 for
/// a NULL `f`.
///
/// # Safety
/// `f` is NULL or a live windowed filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_windowed_generations(f: *const ccf_windowed) -> u64 {
    // SAFETY: `f` is NULL or live (caller's contract).
    unsafe { ops::read(f, 0, WindowedCuckooFilter::generations) }
}

/// Live keys, each once; exact when no thread writes. 0 for a NULL `f`.
///
/// # Safety
/// `f` is NULL or a live windowed filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_windowed_len(f: *const ccf_windowed) -> usize {
    // SAFETY: `f` is NULL or live (caller's contract).
    unsafe { ops::read(f, 0, WindowedCuckooFilter::len) }
}

/// Fingerprint slots of the table (at least `capacity / 0.9`); 0 for a
/// NULL `f`.
///
/// # Safety
/// `f` is NULL or a live windowed filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_windowed_slots(f: *const ccf_windowed) -> usize {
    // SAFETY: `f` is NULL or live (caller's contract).
    unsafe { ops::read(f, 0, WindowedCuckooFilter::slots) }
}

/// Bytes the filter holds, fixed at creation; 0 for a NULL `f`.
///
/// # Safety
/// `f` is NULL or a live windowed filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_windowed_memory_usage(f: *const ccf_windowed) -> usize {
    // SAFETY: `f` is NULL or live (caller's contract).
    unsafe { ops::read(f, 0, WindowedCuckooFilter::memory_usage) }
}

/// The bound on the false-positive rate, at every moment (expired slots
/// never match); 0 for a NULL `f`.
///
/// # Safety
/// `f` is NULL or a live windowed filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_windowed_false_positive_bound(f: *const ccf_windowed) -> f64 {
    // SAFETY: `f` is NULL or live (caller's contract).
    unsafe { ops::read(f, 0.0, WindowedCuckooFilter::false_positive_bound) }
}

/// Saves the filter (its generation, window, slots and hash seed) to the
/// file at `path`, replacing it crash-safely as `ccf_save` does, in the
/// format Rust's `WindowedCuckooFilter::write_to_path` writes (format
/// version 4), which `ccf_windowed_load` reads. One moment of the filter,
/// taken beside writers: a writer waits at most for one group of lock
/// stripes to be copied; an advance waits for the copy; lookups go on.
///
/// Returns `CCF_OK`; `CCF_IO_ERROR` if creating, writing, syncing or
/// renaming fails; `CCF_INVALID_ARGUMENT` for a NULL `f`, a NULL or empty
/// `path`, or (outside Unix) a path that is not UTF-8.
///
/// # Safety
/// `f` is NULL or a live windowed filter; `path` is NULL or a
/// NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn ccf_windowed_save(
    f: *const ccf_windowed,
    path: *const c_char,
) -> ccf_status {
    // SAFETY: the caller's contract is `persist::save`'s.
    unsafe { save(f, path, |filter, path| filter.write_to_path(path)) }
}

/// Loads a filter saved by `ccf_windowed_save` (or by Rust's
/// `WindowedCuckooFilter::write_to_path`, `write_to` or `to_bytes` with
/// the default hasher): the same generation, window, live keys and hash
/// seed. It does not advance by itself: call `ccf_windowed_advance_to`
/// with the clock's generation after loading.
///
/// Returns `CCF_OK` and stores the filter in `*out` (release it with
/// `ccf_windowed_free`); on any error `*out` is left unchanged:
/// `CCF_IO_ERROR` if the file cannot be opened or read; `CCF_CORRUPT` if it
/// is not one intact saved windowed filter (a file of `ccf_save` or
/// `ccf_scalable_save` is `CCF_CORRUPT` here); `CCF_ALLOCATION_FAILED` if
/// the table's memory cannot be had; `CCF_INVALID_ARGUMENT` for a NULL
/// `out`, a NULL or empty `path`, or (outside Unix) a path that is not
/// UTF-8.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string; `out` is NULL or valid for
/// writing one pointer.
#[no_mangle]
pub unsafe extern "C" fn ccf_windowed_load(
    path: *const c_char,
    out: *mut *mut ccf_windowed,
) -> ccf_status {
    // The reader grows its buffer only as the file's bytes arrive: a
    // header that claims more than the file holds costs no more.
    // SAFETY: the caller's contract is `persist::load`'s.
    unsafe {
        load(path, out, |file, _len| {
            WindowedCuckooFilter::read_from_with_options(
                file,
                concurrent_cuckoo::ReadOptions::new().table_memory(crate::memory::table_memory()),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::ptr::{null, null_mut};

    fn new(capacity: usize, generations: usize) -> *mut ccf_windowed {
        let mut f = null_mut();
        let seed = 7u64;
        // SAFETY: `out` and `seed` are valid.
        let status = unsafe { ccf_windowed_new(capacity, generations, 0.0, &seed, &mut f) };
        assert_eq!(status, CCF_OK);
        f
    }

    #[test]
    fn keys_expire_after_the_window_and_refresh_extends_them() {
        let f = new(1000, 3);
        let (a, b) = (b"flow-a".as_ptr().cast(), b"flow-b".as_ptr().cast());
        // SAFETY: `f` is live until freed below; keys are 6 readable bytes.
        unsafe {
            assert_eq!(ccf_windowed_insert(f, a, 6), CCF_OK);
            assert_eq!(ccf_windowed_insert(f, b, 6), CCF_OK);
            assert_eq!(ccf_windowed_advance(f), 1);
            assert_eq!(ccf_windowed_insert(f, b, 6), CCF_OK); // refreshed
            assert_eq!(ccf_windowed_advance_to(f, 2), 2);
            assert!(ccf_windowed_contains(f, a, 6) && ccf_windowed_contains(f, b, 6));
            assert_eq!(ccf_windowed_len(f), 2);
            assert_eq!(ccf_windowed_advance(f), 3); // a, inserted in 0, expires
            assert!(!ccf_windowed_contains(f, a, 6) && ccf_windowed_contains(f, b, 6));
            assert_eq!(ccf_windowed_len(f), 1);
            assert_eq!(ccf_windowed_generations(f), 3);
            ccf_windowed_free(f);
        }
    }

    #[test]
    fn null_and_bad_arguments_are_refused() {
        // SAFETY: every pointer is NULL or valid.
        unsafe {
            let mut f = null_mut();
            assert_eq!(
                ccf_windowed_new(10, 0, 0.0, null(), null_mut()),
                CCF_INVALID_ARGUMENT
            );
            assert_eq!(
                ccf_windowed_new(10, 0, 1.5, null(), &mut f),
                CCF_INVALID_ARGUMENT
            );
            assert_eq!(
                ccf_windowed_new(10, 0, f64::NAN, null(), &mut f),
                CCF_INVALID_ARGUMENT
            );
            assert!(f.is_null());
            assert_eq!(
                ccf_windowed_insert(null_mut(), null(), 0),
                CCF_INVALID_ARGUMENT
            );
            assert_eq!(
                ccf_windowed_insert_hash(null_mut(), 1),
                CCF_INVALID_ARGUMENT
            );
            assert!(!ccf_windowed_contains(null(), null(), 0));
            assert_eq!(ccf_windowed_advance(null_mut()), 0);
            assert_eq!(ccf_windowed_len(null()), 0);
            assert_eq!(ccf_windowed_false_positive_bound(null()), 0.0);
            let f = new(10, 2);
            assert_eq!(ccf_windowed_insert(f, null(), 3), CCF_INVALID_ARGUMENT);
            assert_eq!(ccf_windowed_len(f), 0);
            ccf_windowed_free(f);
            ccf_windowed_free(null_mut());
        }
    }

    #[test]
    fn batches_and_a_save_and_load_keep_the_window() {
        let f = new(1000, 4);
        let hashes: Vec<u64> = (0..100u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        let mut done = 0;
        let mut out = vec![false; 100];
        let path = std::env::temp_dir().join(format!("ccf-windowed-{}.ccf", std::process::id()));
        let c_path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: `f` is live; arrays have 100 elements; the path is
        // NUL-terminated.
        unsafe {
            assert_eq!(
                ccf_windowed_insert_hash_batch(f, hashes.as_ptr(), 100, &mut done),
                CCF_OK
            );
            assert_eq!(done, 100);
            ccf_windowed_advance(f);
            assert_eq!(ccf_windowed_save(f, c_path.as_ptr()), CCF_OK);
            let mut g = null_mut();
            assert_eq!(ccf_windowed_load(c_path.as_ptr(), &mut g), CCF_OK);
            ccf_windowed_contains_hash_batch(g, hashes.as_ptr(), 100, out.as_mut_ptr());
            assert!(out.iter().all(|&b| b));
            assert_eq!(ccf_windowed_generation(g), 1);
            assert_eq!(ccf_windowed_advance_to(g, 4), 4);
            ccf_windowed_contains_hash_batch(g, hashes.as_ptr(), 100, out.as_mut_ptr());
            assert!(out.iter().all(|&b| !b), "expired after the load too");
            ccf_windowed_free(g);
            ccf_windowed_free(f);
        }
        std::fs::remove_file(&path).unwrap();
    }
}
