//! Creating and freeing filters, and every operation on one.
//!
//! Byte keys always go through the keyed API (`insert(&[u8])` and
//! friends), never through a hash computed here and `*_hash`: how a key's
//! hash maps to buckets belongs to the core library and may change, and
//! only the keyed path keeps C and Rust answering alike.

use crate::ops::{self, counted, keyed, unique, Handle, Removable, Signed};
use crate::status::ccf_status::{self, *};
use crate::{ccf_filter, guard};
use concurrent_cuckoo::CuckooFilter;
use core::ffi::c_void;

keyed!(CuckooFilter);
counted!(CuckooFilter);
unique!(CuckooFilter);

impl Removable for CuckooFilter {
    #[inline(always)]
    fn remove_key(&self, key: &[u8]) -> bool {
        self.remove_hash(self.hasher().hash_bytes(key))
    }
    #[inline(always)]
    fn remove_one_hash(&self, hash: u64) -> bool {
        self.remove_hash(hash)
    }
    #[inline(always)]
    fn remove_keys(&self, keys: &[&[u8]], out: &mut [bool]) {
        self.remove_batch(keys, out)
    }
    #[inline(always)]
    fn remove_many_hashes(&self, hashes: &[u64], out: &mut [bool]) {
        self.remove_hash_batch(hashes, out)
    }
}

impl Signed for CuckooFilter {
    #[inline(always)]
    fn signed_hash_of(&self, key: &[u8], signature: u32) -> u64 {
        self.signed_hash(key, signature)
    }
    #[inline(always)]
    fn contains_signed(&self, keys: &[&[u8]], signatures: &[u32], out: &mut [bool]) {
        // The keys hashed in registers (`hash_bytes`).
        let hasher = self.hasher();
        self.contains_signed_batch_with(signatures, |i| hasher.hash_bytes(keys[i]), out)
    }
}

impl Handle for ccf_filter {
    type Filter = CuckooFilter;
    fn filter(&self) -> &CuckooFilter {
        &self.inner
    }
    fn wrap(inner: CuckooFilter) -> Self {
        ccf_filter { inner }
    }
}

/// Creates a filter that holds at least `capacity` items, with a random
/// hash seed.
///
/// `false_positive_rate` 0 means the default: 16-bit fingerprints (a false
/// positive rate below 0.013%); otherwise it must be strictly between 0
/// and 1, and the narrowest fingerprint (8, 16 or 32 bits) whose bound
/// `8 / 2^bits` meets it is chosen. The table takes about
/// `capacity * bits / 0.9 / 8` bytes, allocated and zeroed here.
///
/// Returns `CCF_OK` and stores the new filter in `*out`, to be released
/// with `ccf_free`. On any error `*out` is left unchanged:
/// `CCF_INVALID_ARGUMENT` for a NULL `out`, a capacity too large to
/// address (over 2^32 buckets of 4 slots) or a rate outside [0, 1) or NaN;
/// `CCF_ALLOCATION_FAILED` if the memory cannot be had.
///
/// # Safety
/// `out` is NULL or valid for writing one pointer.
#[no_mangle]
pub unsafe extern "C" fn ccf_new(
    capacity: usize,
    false_positive_rate: f64,
    out: *mut *mut ccf_filter,
) -> ccf_status {
    // SAFETY: the caller upholds `ccf_new_with_options`' contract for `out`;
    // `seed` is NULL, which it accepts.
    unsafe { ccf_new_with_options(capacity, false_positive_rate, 0, core::ptr::null(), out) }
}

/// A `ccf_new_with_flags` flag: every hash given to the filter's `*_hash`
/// calls is uniform over all 64 bits (the output of a full-avalanche 64-bit
/// hash: XXH3, wyhash, SipHash), so it uses their bits as they are instead
/// of mixing them first; about a fifth of an in-cache lookup.
/// Byte keys are unaffected (the library hashes them with XXH3).
///
/// Do not set it for hashes whose entropy sits in some bits only (a 32-bit
/// RSS, Toeplitz or CRC value widened to `uint64_t`, sequential IDs): the
/// bucket comes from the high 32 bits, so such hashes crowd into a few
/// buckets and inserts fail with `CCF_FULL` long before capacity. No answer
/// is ever wrong either way. Saved files record it (format version 1).
pub const CCF_UNIFORM_HASHES: u32 = 1;

/// `ccf_new` with every option: `fingerprint_bits` 8, 16 or 32 (0 = chosen
/// from `false_positive_rate`, or 16 if that is 0 too), and `seed`, a
/// pointer to the hash seed to use (NULL = a fresh random seed).
///
/// A fixed seed makes runs reproducible and lets two filters built alike
/// hold identical tables; a random one (the default) keeps an attacker who
/// knows the hash function from choosing keys that collide. The seed is
/// stored in saved files.
///
/// Returns as `ccf_new`, plus `CCF_INVALID_ARGUMENT` for an unsupported
/// width or one whose bound `8 / 2^bits` exceeds a non-zero
/// `false_positive_rate`. `*out` is left unchanged on any error.
///
/// # Safety
/// `out` is NULL or valid for writing one pointer; `seed` is NULL or points
/// to a readable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn ccf_new_with_options(
    capacity: usize,
    false_positive_rate: f64,
    fingerprint_bits: u32,
    seed: *const u64,
    out: *mut *mut ccf_filter,
) -> ccf_status {
    // SAFETY: the caller's contract is `ccf_new_with_flags`' for `seed` and
    // `out`; no flags.
    unsafe {
        ccf_new_with_flags(
            capacity,
            false_positive_rate,
            fingerprint_bits,
            seed,
            0,
            out,
        )
    }
}

/// `ccf_new_with_options` with `flags`: 0, or `CCF_UNIFORM_HASHES`.
///
/// Returns as `ccf_new_with_options`, plus `CCF_INVALID_ARGUMENT` for a
/// flag this library does not know. `*out` is left unchanged on any error.
///
/// # Safety
/// `out` is NULL or valid for writing one pointer; `seed` is NULL or points
/// to a readable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn ccf_new_with_flags(
    capacity: usize,
    false_positive_rate: f64,
    fingerprint_bits: u32,
    seed: *const u64,
    flags: u32,
    out: *mut *mut ccf_filter,
) -> ccf_status {
    guard(CCF_INTERNAL_ERROR, || {
        if out.is_null() || flags & !CCF_UNIFORM_HASHES != 0 {
            return CCF_INVALID_ARGUMENT;
        }
        let mut builder = CuckooFilter::builder()
            .capacity(capacity)
            .uniform_hashes(flags & CCF_UNIFORM_HASHES != 0)
            .table_memory(crate::memory::table_memory());
        // -0.0 == 0.0 is the default too; NaN is not 0 and the builder
        // refuses it.
        if false_positive_rate != 0.0 {
            builder = builder.false_positive_rate(false_positive_rate);
        }
        if fingerprint_bits != 0 {
            builder = builder.fingerprint_bits(fingerprint_bits);
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

/// Whether `f` uses its hashes' bits as they are: made with
/// `CCF_UNIFORM_HASHES`, or loaded from a format version 1 file. False for
/// NULL.
///
/// # Safety
/// `f` is NULL or a live filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_uniform_hashes(f: *const ccf_filter) -> bool {
    // SAFETY: `f` is NULL or a live filter (caller's contract).
    unsafe { ops::read(f, false, CuckooFilter::uniform_hashes) }
}

/// Releases a filter and its table. NULL is a no-op.
///
/// Not thread-safe: no other call may be using `f`, and `f` must not be
/// used (or freed) again afterwards.
///
/// # Safety
/// `f` is NULL or a filter from `ccf_new`, `ccf_new_with_options` or
/// `ccf_load` that has not been freed, and no other thread uses it.
#[no_mangle]
pub unsafe extern "C" fn ccf_free(f: *mut ccf_filter) {
    // SAFETY: the caller's contract is `ops::release`'s.
    unsafe { ops::release(f) }
}

/// Adds one copy of the key: the `len` bytes at `key`.
///
/// Returns `CCF_OK`; `CCF_FULL` when no free slot can be reached for this
/// key; `CCF_TOO_MANY_DUPLICATES` when its buckets already hold 8 copies of
/// its fingerprint; `CCF_INVALID_ARGUMENT` for a NULL `f`, or a NULL `key`
/// with `len > 0`. On any error the filter is unchanged.
///
/// # Safety
/// `f` is NULL or a live filter; `key` is NULL or points to `len` readable
/// bytes.
#[no_mangle]
pub unsafe extern "C" fn ccf_insert(
    f: *mut ccf_filter,
    key: *const c_void,
    len: usize,
) -> ccf_status {
    // SAFETY: the caller's contract is `ops::insert`'s.
    unsafe { ops::insert(f, key, len) }
}

/// Adds the key unless it (or a key indistinguishable from it) is already
/// present: set semantics. Of several threads adding the same key at once,
/// exactly one sees `*added == true`.
///
/// `added` may be NULL; otherwise `*added` is set on every return, to true
/// exactly when this call stored the key. Returns as `ccf_insert` (a key
/// already present is `CCF_OK` with `*added == false`).
///
/// # Safety
/// `f` is NULL or a live filter; `key` is NULL or points to `len` readable
/// bytes; `added` is NULL or valid for writing one `bool`.
#[no_mangle]
pub unsafe extern "C" fn ccf_insert_unique(
    f: *mut ccf_filter,
    key: *const c_void,
    len: usize,
    added: *mut bool,
) -> ccf_status {
    // SAFETY: the caller's contract is `ops::insert_unique`'s.
    unsafe { ops::insert_unique(f, key, len, added) }
}

/// Is the key (probably) present? Never a false negative; a false positive
/// with probability below `ccf_false_positive_bound(f)`.
///
/// Returns false for a NULL `f`, or a NULL `key` with `len > 0`.
///
/// # Safety
/// `f` is NULL or a live filter; `key` is NULL or points to `len` readable
/// bytes.
#[no_mangle]
pub unsafe extern "C" fn ccf_contains(
    f: *const ccf_filter,
    key: *const c_void,
    len: usize,
) -> bool {
    // SAFETY: the caller's contract is `ops::contains`'s.
    unsafe { ops::contains(f, key, len) }
}

/// Removes one copy of the key; returns false if none was found (or for a
/// NULL `f`, or a NULL `key` with `len > 0`).
///
/// Only remove keys that were inserted: removing one that never was can
/// take away another key's copy when their fingerprints collide.
///
/// # Safety
/// `f` is NULL or a live filter; `key` is NULL or points to `len` readable
/// bytes.
#[no_mangle]
pub unsafe extern "C" fn ccf_remove(f: *mut ccf_filter, key: *const c_void, len: usize) -> bool {
    // SAFETY: the caller's contract is `ops::remove`'s.
    unsafe { ops::remove(f, key, len) }
}

/// `ccf_insert` for a caller that already holds a well-mixed 64-bit hash of
/// its key (a NIC's RSS hash, or its own hash function). All 64 bits are
/// used; the filter's seed is not. Hashes and byte keys are separate
/// spaces: `ccf_contains_hash` finds what `ccf_insert_hash` stored.
///
/// Returns `CCF_INVALID_ARGUMENT` for a NULL `f`, otherwise as `ccf_insert`.
///
/// # Safety
/// `f` is NULL or a live filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_insert_hash(f: *mut ccf_filter, hash: u64) -> ccf_status {
    // SAFETY: the caller's contract is `ops::insert_hash`'s.
    unsafe { ops::insert_hash(f, hash) }
}

/// `ccf_insert_unique` for a precomputed hash. `added` may be NULL;
/// otherwise `*added` is set on every return.
///
/// # Safety
/// `f` is NULL or a live filter; `added` is NULL or valid for writing one
/// `bool`.
#[no_mangle]
pub unsafe extern "C" fn ccf_insert_unique_hash(
    f: *mut ccf_filter,
    hash: u64,
    added: *mut bool,
) -> ccf_status {
    // SAFETY: the caller's contract is `ops::insert_unique_hash`'s.
    unsafe { ops::insert_unique_hash(f, hash, added) }
}

/// `ccf_contains` for a precomputed hash; false for a NULL `f`.
///
/// # Safety
/// `f` is NULL or a live filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_contains_hash(f: *const ccf_filter, hash: u64) -> bool {
    // SAFETY: the caller's contract is `ops::contains_hash`'s.
    unsafe { ops::contains_hash(f, hash) }
}

/// `ccf_remove` for a precomputed hash; false for a NULL `f`.
///
/// # Safety
/// `f` is NULL or a live filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_remove_hash(f: *mut ccf_filter, hash: u64) -> bool {
    // SAFETY: the caller's contract is `ops::remove_hash`'s.
    unsafe { ops::remove_hash(f, hash) }
}

/// Looks up a burst of precomputed hashes: `out[i] = ccf_contains_hash(f,
/// hashes[i])` for `i < n`. Faster than `n` single calls: in stages of
/// 32, every bucket of the next 32 hashes is requested before the current
/// 32 are probed, so many cache misses are in flight at once (bursts of 32
/// to 64 suit it well).
///
/// `n == 0` does nothing. If `out` is NULL nothing is written; otherwise if
/// `f` or `hashes` is NULL, every `out[i]` is set to false.
///
/// # Safety
/// `f` is NULL or a live filter; `hashes` is NULL or points to `n` readable
/// `uint64_t`s; `out` is NULL or points to `n` writable `bool`s that do not
/// overlap `hashes` and that no other thread uses during the call.
#[no_mangle]
pub unsafe extern "C" fn ccf_contains_hash_batch(
    f: *const ccf_filter,
    hashes: *const u64,
    n: usize,
    out: *mut bool,
) {
    // SAFETY: the caller's contract is `ops::contains_hash_batch`'s.
    unsafe { ops::contains_hash_batch(f, hashes, n, out) }
}

/// Looks up a burst of byte keys: `out[i] = ccf_contains(f, keys[i],
/// lens[i])` for `i < n`, with the memory accesses of many keys overlapped
/// as in `ccf_contains_hash_batch`. Allocates nothing.
///
/// `n == 0` does nothing. If `out` is NULL nothing is written; otherwise if
/// `f`, `keys` or `lens` is NULL every `out[i]` is set to false, and a key
/// with `keys[i] == NULL` and `lens[i] > 0` gets `out[i] = false`.
///
/// # Safety
/// `f` is NULL or a live filter; `keys` and `lens` are NULL or point to `n`
/// readable elements, and each `keys[i]` is NULL or points to `lens[i]`
/// readable bytes; `out` is NULL or points to `n` writable `bool`s that
/// overlap none of the inputs and that no other thread uses during the
/// call.
#[no_mangle]
pub unsafe extern "C" fn ccf_contains_batch(
    f: *const ccf_filter,
    keys: *const *const c_void,
    lens: *const usize,
    n: usize,
    out: *mut bool,
) {
    // SAFETY: the caller's contract is `ops::contains_batch`'s.
    unsafe { ops::contains_batch(f, keys, lens, n, out) }
}

/// Looks up a burst of at most 64 keys of one length, as a dataplane
/// holds them (`rte_hash_lookup_bulk`'s shape): bit `i` of the result is
/// set when `keys[i]` (`key_len` bytes) is probably present, as
/// `ccf_contains(f, keys[i], key_len)` would answer, with the memory
/// accesses of the burst overlapped as in `ccf_contains_batch`. Needs no
/// `lens[]` and no output array; allocates nothing.
///
/// Returns 0 for a NULL `f` or `keys`, or `n > 64`; bit `i` is clear for
/// a NULL `keys[i]` (with `key_len > 0`).
///
/// # Safety
/// `f` is NULL or a live filter; `keys` is NULL or points to `n` readable
/// pointers, each NULL or pointing to `key_len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ccf_contains_burst(
    f: *const ccf_filter,
    keys: *const *const c_void,
    key_len: usize,
    n: u32,
) -> u64 {
    // SAFETY: the caller's contract is `ops::contains_burst`'s.
    unsafe { ops::contains_burst(f, keys, key_len, n) }
}

/// Looks up a burst of at most 64 precomputed hashes: bit `i` of the
/// result is set when `hashes[i]` is probably present, as
/// `ccf_contains_hash` would answer.
///
/// A NIC's 32-bit RSS hash widened to 64 bits spreads over the table here
/// for a filter made without `CCF_UNIFORM_HASHES` (every hash is
/// finalized first), but as the whole hash it makes keys with one RSS
/// value one key to the filter: a false-positive floor of about `n / 2^32`
/// (0.4% at 2^24 keys) whatever the fingerprint width. Give the RSS hash
/// as a signature instead (`ccf_signed_hash`, `ccf_contains_signed_burst`).
///
/// Returns 0 for a NULL `f` or `hashes`, or `n > 64`.
///
/// # Safety
/// `f` is NULL or a live filter; `hashes` is NULL or points to `n`
/// readable `uint64_t`s.
#[no_mangle]
pub unsafe extern "C" fn ccf_contains_hash_burst(
    f: *const ccf_filter,
    hashes: *const u64,
    n: u32,
) -> u64 {
    // SAFETY: the caller's contract is `ops::contains_hash_burst`'s.
    unsafe { ops::contains_hash_burst(f, hashes, n) }
}

/// The hash of the `len` bytes at `key` given with `signature`, a 32-bit
/// hash of them the caller already has (the NIC's RSS hash of a packet's
/// flow key, `mbuf->hash.rss`): for this filter's `*_hash` calls
/// (`ccf_insert_hash`, `ccf_remove_hash`, `ccf_contains_hash`, the hash
/// batches), and what `ccf_contains_signed_burst` looks up.
///
/// The signature alone picks the key's first bucket, and the filter's own
/// seeded hash of the key alone gives its fingerprint: keys sharing a
/// signature share a bucket, never a fingerprint, so the false-positive
/// rate stays the filter's (the RSS hash as the whole hash would add the
/// collisions of its 32 bits). Signatures of little entropy are mixed
/// first and still spread over the table.
///
/// A key must come with the same signature every time (the same RSS
/// function and RSS key on every port and after a restart): with another
/// signature it is another hash, and not found. Whoever can steer the
/// signatures (knows the RSS key) can crowd keys into a few buckets:
/// inserts are then refused early (`CCF_FULL`), and no answer is ever
/// wrong. The hash depends on the filter's seed and layout, both saved
/// with it, so a reloaded filter gives the same hashes.
///
/// Returns 0 for a NULL `f`, or a NULL `key` with `len > 0` (0 is also a
/// valid hash).
///
/// # Safety
/// `f` is NULL or a live filter; `key` is NULL or points to `len`
/// readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ccf_signed_hash(
    f: *const ccf_filter,
    key: *const c_void,
    len: usize,
    signature: u32,
) -> u64 {
    // SAFETY: the caller's contract is `ops::signed_hash`'s.
    unsafe { ops::signed_hash(f, key, len, signature) }
}

/// Looks up a burst of at most 64 keys of one length, each with its
/// signature (see `ccf_signed_hash`): bit `i` of the result is set when
/// `keys[i]` (`key_len` bytes) with `signatures[i]` is probably present,
/// as `ccf_contains_hash(f, ccf_signed_hash(f, keys[i], key_len,
/// signatures[i]))` would answer: `rte_hash_lookup_with_hash_bulk`'s
/// shape. As fast as `ccf_contains_burst` (the key is hashed either way,
/// for its fingerprint); allocates nothing.
///
/// Returns 0 for a NULL `f`, `keys` or `signatures`, or `n > 64`; bit `i`
/// is clear for a NULL `keys[i]` (with `key_len > 0`).
///
/// # Safety
/// `f` is NULL or a live filter; `keys` is NULL or points to `n` readable
/// pointers, each NULL or pointing to `key_len` readable bytes;
/// `signatures` is NULL or points to `n` readable `uint32_t`s.
#[no_mangle]
pub unsafe extern "C" fn ccf_contains_signed_burst(
    f: *const ccf_filter,
    keys: *const *const c_void,
    key_len: usize,
    signatures: *const u32,
    n: u32,
) -> u64 {
    // SAFETY: the caller's contract is `ops::contains_signed_burst`'s.
    unsafe { ops::contains_signed_burst(f, keys, key_len, signatures, n) }
}

/// Inserts a batch of byte keys: `keys[i]`/`lens[i]` for `i < n`, in order,
/// exactly as the same `ccf_insert` calls one at a time would, stopping at
/// the first key refused. Several times faster than a loop of `ccf_insert`
/// on a table larger than the cache: keys are hashed a block ahead and
/// their buckets prefetched. Each insert is still an ordinary operation of
/// its own: other threads see the keys go in one by one (never the batch
/// as one step), and see no key half-inserted. Allocates nothing.
///
/// Returns `CCF_OK` when every key went in. Otherwise the status of the
/// first key refused (`CCF_FULL` or `CCF_TOO_MANY_DUPLICATES`): the keys
/// before it are in the filter, it and every key after it are not.
/// `CCF_INVALID_ARGUMENT` for a NULL `f`, a NULL `keys` or `lens` with
/// `n > 0`, or a NULL `keys[i]` with `lens[i] > 0` anywhere in the batch:
/// the whole batch is checked first, so nothing is inserted then.
///
/// `inserted` may be NULL; otherwise `*inserted` is set on every return to
/// how many keys, from the start, went in: `n` on `CCF_OK`, the index of
/// the refused key on `CCF_FULL` and `CCF_TOO_MANY_DUPLICATES`, 0 on
/// `CCF_INVALID_ARGUMENT`. (On `CCF_INTERNAL_ERROR`, a bug, at least that
/// many went in.) `n == 0` inserts nothing and returns `CCF_OK`.
///
/// # Safety
/// `f` is NULL or a live filter; `keys` and `lens` are NULL or point to `n`
/// readable elements, and each `keys[i]` is NULL or points to `lens[i]`
/// readable bytes; `inserted` is NULL or valid for writing one `size_t`.
#[no_mangle]
pub unsafe extern "C" fn ccf_insert_batch(
    f: *mut ccf_filter,
    keys: *const *const c_void,
    lens: *const usize,
    n: usize,
    inserted: *mut usize,
) -> ccf_status {
    // SAFETY: the caller's contract is `ops::insert_batch`'s.
    unsafe { ops::insert_batch(f, keys, lens, n, inserted) }
}

/// `ccf_insert_batch` for precomputed hashes (see `ccf_insert_hash`):
/// `hashes[i]` for `i < n`, in order, stopping at the first refused.
///
/// Returns and sets `*inserted` (which may be NULL) as `ccf_insert_batch`;
/// `CCF_INVALID_ARGUMENT` for a NULL `f`, or a NULL `hashes` with `n > 0`.
///
/// # Safety
/// `f` is NULL or a live filter; `hashes` is NULL or points to `n`
/// readable `uint64_t`s; `inserted` is NULL or valid for writing one
/// `size_t`.
#[no_mangle]
pub unsafe extern "C" fn ccf_insert_hash_batch(
    f: *mut ccf_filter,
    hashes: *const u64,
    n: usize,
    inserted: *mut usize,
) -> ccf_status {
    // SAFETY: the caller's contract is `ops::insert_hash_batch`'s.
    unsafe { ops::insert_hash_batch(f, hashes, n, inserted) }
}

/// Removes one copy of each byte key `keys[i]`/`lens[i]`, `i < n`, in
/// order, exactly as the same `ccf_remove` calls one at a time would (so a
/// key listed twice loses two copies, if it has them); pipelined as
/// `ccf_insert_batch`. Allocates nothing. Only remove keys that were
/// inserted (see `ccf_remove`).
///
/// `removed` may be NULL, and then only the removes happen; otherwise
/// `removed[i]` is set to whether a copy of key `i` was found and removed
/// (every `removed[i]` is false after an error).
///
/// Returns `CCF_OK`; `CCF_INVALID_ARGUMENT` for a NULL `f`, a NULL `keys`
/// or `lens` with `n > 0`, or a NULL `keys[i]` with `lens[i] > 0` anywhere
/// in the batch: the whole batch is checked first, so nothing is removed
/// then.
///
/// # Safety
/// `f` is NULL or a live filter; `keys` and `lens` are NULL or point to `n`
/// readable elements, and each `keys[i]` is NULL or points to `lens[i]`
/// readable bytes; `removed` is NULL or points to `n` writable `bool`s that
/// overlap none of the inputs and that no other thread uses during the
/// call.
#[no_mangle]
pub unsafe extern "C" fn ccf_remove_batch(
    f: *mut ccf_filter,
    keys: *const *const c_void,
    lens: *const usize,
    n: usize,
    removed: *mut bool,
) -> ccf_status {
    // SAFETY: the caller's contract is `ops::remove_batch`'s.
    unsafe { ops::remove_batch(f, keys, lens, n, removed) }
}

/// `ccf_remove_batch` for precomputed hashes: removes one copy of each
/// `hashes[i]`, `i < n`, in order, as `ccf_remove_hash` calls one at a
/// time would. `removed` may be NULL; otherwise `removed[i]` is set as in
/// `ccf_remove_batch`.
///
/// Returns `CCF_OK`; `CCF_INVALID_ARGUMENT` (nothing removed, every
/// `removed[i]` false) for a NULL `f`, or a NULL `hashes` with `n > 0`.
///
/// # Safety
/// `f` is NULL or a live filter; `hashes` is NULL or points to `n`
/// readable `uint64_t`s; `removed` is NULL or points to `n` writable
/// `bool`s that do not overlap `hashes` and that no other thread uses
/// during the call.
#[no_mangle]
pub unsafe extern "C" fn ccf_remove_hash_batch(
    f: *mut ccf_filter,
    hashes: *const u64,
    n: usize,
    removed: *mut bool,
) -> ccf_status {
    // SAFETY: the caller's contract is `ops::remove_hash_batch`'s.
    unsafe { ops::remove_hash_batch(f, hashes, n, removed) }
}

/// Copies of the key's fingerprint in its two buckets, 0 to 8: how many
/// times the key was inserted and not removed, plus copies of keys that
/// collide with it (same fingerprint and buckets; the filter cannot tell
/// them apart). Exact at the moment of the call: it reads the two buckets
/// under their stripe locks.
///
/// 0 for a NULL `f`, or a NULL `key` with `len > 0`.
///
/// # Safety
/// `f` is NULL or a live filter; `key` is NULL or points to `len` readable
/// bytes.
#[no_mangle]
pub unsafe extern "C" fn ccf_count(f: *const ccf_filter, key: *const c_void, len: usize) -> usize {
    // SAFETY: the caller's contract is `ops::count`'s.
    unsafe { ops::count(f, key, len) }
}

/// `ccf_count` for a precomputed hash; 0 for a NULL `f`.
///
/// # Safety
/// `f` is NULL or a live filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_count_hash(f: *const ccf_filter, hash: u64) -> usize {
    // SAFETY: the caller's contract is `ops::count_hash`'s.
    unsafe { ops::count_hash(f, hash) }
}

/// Items stored (each copy counts): exact while no insert or remove runs,
/// a recent value while they do. 0 for a NULL `f`.
///
/// # Safety
/// `f` is NULL or a live filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_len(f: *const ccf_filter) -> usize {
    // SAFETY: `f` is NULL or a live filter (caller's contract).
    unsafe { ops::read(f, 0, CuckooFilter::len) }
}

/// `ccf_len(f) == 0` (so true for a NULL `f`).
///
/// # Safety
/// `f` is NULL or a live filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_is_empty(f: *const ccf_filter) -> bool {
    // SAFETY: `f` is NULL or a live filter (caller's contract).
    unsafe { ccf_len(f) == 0 }
}

/// Fingerprint slots in the table (4 per bucket). A filter created for
/// `capacity` items has about `capacity / 0.9` slots, and inserts of
/// distinct keys typically keep succeeding until over 95% of them are
/// used. 0 for a NULL `f`.
///
/// # Safety
/// `f` is NULL or a live filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_capacity(f: *const ccf_filter) -> usize {
    // SAFETY: `f` is NULL or a live filter (caller's contract).
    unsafe { ops::read(f, 0, CuckooFilter::capacity) }
}

/// `ccf_len(f) / ccf_capacity(f)`; 0 for a NULL `f`.
///
/// # Safety
/// `f` is NULL or a live filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_load_factor(f: *const ccf_filter) -> f64 {
    // SAFETY: `f` is NULL or a live filter (caller's contract).
    unsafe { ops::read(f, 0.0, CuckooFilter::load_factor) }
}

/// Bytes the filter holds: its table, stripe locks and versions, and the
/// handle itself. 0 for a NULL `f`.
///
/// # Safety
/// `f` is NULL or a live filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_memory_usage(f: *const ccf_filter) -> usize {
    // SAFETY: `f` is NULL or a live filter (caller's contract).
    unsafe { ops::read(f, 0, CuckooFilter::memory_usage) }
}

/// Fingerprint width in bits: 8, 16 or 32; 0 for a NULL `f`.
///
/// # Safety
/// `f` is NULL or a live filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_fingerprint_bits(f: *const ccf_filter) -> u32 {
    // SAFETY: `f` is NULL or a live filter (caller's contract).
    unsafe { ops::read(f, 0, CuckooFilter::fingerprint_bits) }
}

/// Upper bound on the false-positive rate, reached when the table is full:
/// `8 / 2^ccf_fingerprint_bits(f)`; 0 for a NULL `f`.
///
/// # Safety
/// `f` is NULL or a live filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_false_positive_bound(f: *const ccf_filter) -> f64 {
    // SAFETY: `f` is NULL or a live filter (caller's contract).
    unsafe { ops::read(f, 0.0, CuckooFilter::false_positive_bound) }
}

/// Removes every item. Concurrent inserts and removes wait for it;
/// lookups running meanwhile may see the items either there or gone.
/// Returns `CCF_INVALID_ARGUMENT` for a NULL `f`.
///
/// # Safety
/// `f` is NULL or a live filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_clear(f: *mut ccf_filter) -> ccf_status {
    // SAFETY: `f` is NULL or a live filter (caller's contract).
    unsafe {
        ops::with(f, |filter| {
            filter.clear();
            CCF_OK
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KEY_CHUNK;
    use core::ptr;

    fn new_filter(capacity: usize, seed: u64) -> *mut ccf_filter {
        let mut f = ptr::null_mut();
        // SAFETY: `seed` and `f` are valid for reading and writing.
        let status = unsafe { ccf_new_with_options(capacity, 0.0, 16, &seed, &mut f) };
        assert_eq!(status, CCF_OK);
        f
    }

    #[test]
    fn byte_keys_hash_as_rust_byte_slices() {
        let f = new_filter(1000, 7);
        // SAFETY: `f` is live until `ccf_free` below, used by this thread only.
        let inner = unsafe { &(*f).inner };
        let keys: Vec<Vec<u8>> = (0..200usize)
            .map(|len| (0..len).map(|i| (i * 13 + len) as u8).collect())
            .collect();
        for (i, key) in keys.iter().enumerate() {
            if i % 2 == 0 {
                // SAFETY: `key` is `key.len()` readable bytes.
                assert_eq!(
                    unsafe { ccf_insert(f, key.as_ptr().cast(), key.len()) },
                    CCF_OK
                );
            } else {
                inner.insert(key.as_slice()).unwrap();
            }
        }
        for key in &keys {
            // Both ways: what C stored Rust finds, and the other way round.
            assert!(inner.contains(key.as_slice()));
            // SAFETY: as above.
            assert!(unsafe { ccf_contains(f, key.as_ptr().cast(), key.len()) });
        }
        // SAFETY: `f` came from `ccf_new_with_options` and is freed once.
        unsafe { ccf_free(f) };
    }

    #[test]
    fn the_byte_key_batch_matches_single_lookups_across_chunks() {
        let f = new_filter(10_000, 8);
        let keys: Vec<String> = (0..3 * KEY_CHUNK as u32 + 5)
            .map(|i| format!("k{i}"))
            .collect();
        let mut ptrs: Vec<*const c_void> = keys.iter().map(|k| k.as_ptr().cast()).collect();
        let mut lens: Vec<usize> = keys.iter().map(String::len).collect();
        for i in (0..keys.len()).step_by(3) {
            // SAFETY: `ptrs[i]` is `lens[i]` readable bytes.
            assert_eq!(unsafe { ccf_insert(f, ptrs[i], lens[i]) }, CCF_OK);
        }
        // Invalid keys in several chunks, and the empty key as NULL.
        for i in [0, KEY_CHUNK - 1, KEY_CHUNK, 2 * KEY_CHUNK + 3] {
            ptrs[i] = ptr::null();
        }
        lens[KEY_CHUNK] = 0;
        // SAFETY: the empty key needs no bytes.
        assert_eq!(unsafe { ccf_insert(f, ptr::null(), 0) }, CCF_OK);
        let mut out = vec![true; keys.len()];
        // SAFETY: `ptrs`, `lens` and `out` hold `keys.len()` elements; every
        // non-null `ptrs[i]` points to `lens[i]` bytes.
        unsafe {
            ccf_contains_batch(
                f,
                ptrs.as_ptr(),
                lens.as_ptr(),
                keys.len(),
                out.as_mut_ptr(),
            )
        };
        for i in 0..keys.len() {
            // SAFETY: as above.
            let single = unsafe { ccf_contains(f, ptrs[i], lens[i]) };
            assert_eq!(out[i], single, "key {i}");
        }
        assert!(!out[0] && !out[KEY_CHUNK - 1] && !out[2 * KEY_CHUNK + 3]);
        assert!(out[KEY_CHUNK], "the empty key was inserted");
        // SAFETY: `f` came from `ccf_new_with_options` and is freed once.
        unsafe { ccf_free(f) };
    }

    /// Pointers and lengths of `keys`, as C passes a batch.
    fn c_batch(keys: &[String]) -> (Vec<*const c_void>, Vec<usize>) {
        (
            keys.iter().map(|k| k.as_ptr().cast()).collect(),
            keys.iter().map(String::len).collect(),
        )
    }

    #[test]
    fn byte_key_write_batches_match_rust_across_chunks() {
        let f = new_filter(10_000, 9);
        // SAFETY: `f` is live until `ccf_free` below, used by this thread only.
        let inner = unsafe { &(*f).inner };
        let n = 3 * KEY_CHUNK + 5;
        let keys: Vec<String> = (0..n).map(|i| format!("batch-{i}")).collect();
        let (mut ptrs, lens) = c_batch(&keys);
        let mut inserted = usize::MAX;
        // SAFETY: `ptrs`/`lens` hold `n` elements, each `lens[i]` bytes.
        let status = unsafe { ccf_insert_batch(f, ptrs.as_ptr(), lens.as_ptr(), n, &mut inserted) };
        assert_eq!((status, inserted), (CCF_OK, n));
        // Hashed as Rust hashes `&[u8]`.
        assert!(keys.iter().all(|k| inner.contains(k.as_bytes())));
        assert_eq!(inner.len(), n);

        // One invalid key, in the last chunk: nothing at all goes in.
        ptrs[n - 2] = core::ptr::null();
        // SAFETY: as above; the NULL key is refused, never read.
        let status = unsafe { ccf_insert_batch(f, ptrs.as_ptr(), lens.as_ptr(), n, &mut inserted) };
        assert_eq!((status, inserted), (CCF_INVALID_ARGUMENT, 0));
        assert_eq!(inner.len(), n);
        let mut removed = vec![true; n];
        // SAFETY: as above; `removed` holds `n` bools.
        let status =
            unsafe { ccf_remove_batch(f, ptrs.as_ptr(), lens.as_ptr(), n, removed.as_mut_ptr()) };
        assert_eq!(status, CCF_INVALID_ARGUMENT);
        assert!(removed.iter().all(|&r| !r));
        assert_eq!(inner.len(), n);

        // Removes across chunks, flags or none: exactly one copy each.
        ptrs[n - 2] = keys[n - 2].as_ptr().cast();
        let half = 2 * KEY_CHUNK + 1;
        // SAFETY: as above, with `half <= n` elements.
        let status = unsafe {
            ccf_remove_batch(f, ptrs.as_ptr(), lens.as_ptr(), half, core::ptr::null_mut())
        };
        assert_eq!(status, CCF_OK);
        assert_eq!(inner.len(), n - half);
        // SAFETY: as above.
        let status =
            unsafe { ccf_remove_batch(f, ptrs.as_ptr(), lens.as_ptr(), n, removed.as_mut_ptr()) };
        assert_eq!(status, CCF_OK);
        assert!(removed[..half].iter().all(|&r| !r) && removed[half..].iter().all(|&r| r));
        assert!(inner.is_empty());
        // SAFETY: `f` came from `ccf_new_with_options` and is freed once.
        unsafe { ccf_free(f) };
    }

    #[test]
    fn a_byte_key_batch_stops_at_the_first_refusal_in_a_later_chunk() {
        let f = new_filter(10_000, 10);
        // 60 distinct keys, then 12 copies of one key across the chunk
        // boundary: the ninth copy (index 68) is refused.
        let mut keys: Vec<String> = (0..60).map(|i| format!("distinct-{i}")).collect();
        keys.extend(core::iter::repeat_n("dup".to_string(), 12));
        let (ptrs, lens) = c_batch(&keys);
        let mut inserted = 0;
        // SAFETY: `ptrs`/`lens` hold `keys.len()` elements, each `lens[i]` bytes.
        let status =
            unsafe { ccf_insert_batch(f, ptrs.as_ptr(), lens.as_ptr(), keys.len(), &mut inserted) };
        assert_eq!((status, inserted), (CCF_TOO_MANY_DUPLICATES, 68));
        // SAFETY: `f` is live; "dup" is 3 readable bytes.
        unsafe {
            assert_eq!(ccf_len(f), 68);
            assert_eq!(ccf_count(f, "dup".as_ptr().cast(), 3), 8);
            ccf_free(f);
        }
    }
}
