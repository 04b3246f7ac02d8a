//! Filters whose keys expire by time: `ccf_timed`, Rust's
//! `TimedCuckooFilter`. The key and batch calls are the generic ones of the
//! private `ops` module; what is its own is the clock (the system's, or
//! one the host sets) and saving the schedule with the filter.

use crate::guard;
use crate::ops::{self, keyed, Handle};
use crate::persist::{open, save};
use crate::status::ccf_status::{self, *};
use crate::status::io_error;
use concurrent_cuckoo::{Clock, ManualClock, SystemClock, TimedCuckooFilter};
use core::ffi::{c_char, c_void};
use std::io::Read;

/// `flags` of `ccf_timed_new` and `ccf_timed_load`: the filter reads the
/// time the host gives it with `ccf_timed_set_time` (milliseconds; a
/// dataplane's clock derived from its cycle counter, a simulation's),
/// instead of the system's wall clock.
pub const CCF_TIMED_HOST_CLOCK: u32 = 1;

/// The clock a timed filter reads.
pub(crate) enum TimedClock {
    /// The system's wall clock.
    System,
    /// The host's, set by `ccf_timed_set_time`.
    Host(ManualClock),
}

impl Clock for TimedClock {
    #[inline]
    fn now_ms(&self) -> u64 {
        match self {
            Self::System => SystemClock.now_ms(),
            Self::Host(clock) => clock.now_ms(),
        }
    }
}

impl TimedClock {
    /// The clock `flags` ask for, a host clock starting at `now_ms`;
    /// `None` for unknown flags.
    fn from_flags(flags: u32, now_ms: u64) -> Option<Self> {
        match flags {
            0 => Some(Self::System),
            CCF_TIMED_HOST_CLOCK => Some(Self::Host(ManualClock::new(now_ms))),
            _ => None,
        }
    }
}

type Timed = TimedCuckooFilter<TimedClock>;

/// A concurrent cuckoo filter whose keys expire by time: a key is found
/// for at least the time to live after its last insert, and is gone,
/// false positives aside, at most one generation length
/// (`time_to_live / generations`) later. The filter reads its clock on
/// every call and expires keys as the time passes: there is nothing to
/// call on a timer.
///
/// Opaque: create one with `ccf_timed_new` or `ccf_timed_load`, release it
/// with `ccf_timed_free`.
///
/// Inserting a present key refreshes it; there is no remove (as for
/// `ccf_windowed`, which this drives). Capacity: with at most `capacity`
/// keys live, inserts never fail.
///
/// The clock: by default the system's wall clock, whose epoch (the time
/// of generation 0, in milliseconds since 1970) is saved with the filter,
/// so a filter loaded after a restart expires its keys on the same
/// schedule. With `CCF_TIMED_HOST_CLOCK` the host gives the time with
/// `ccf_timed_set_time` (any millisecond count that does not go back; the
/// filter waits if it does).
///
/// Thread safety: as `ccf_windowed`: every call but `ccf_timed_free` from
/// any number of threads at once.
pub struct ccf_timed {
    inner: Timed,
}

keyed!(Timed);

impl Handle for ccf_timed {
    type Filter = Timed;
    fn filter(&self) -> &Timed {
        &self.inner
    }
    fn wrap(inner: Timed) -> Self {
        ccf_timed { inner }
    }
}

/// Creates a filter for at most `capacity` live keys that keeps each for
/// `time_to_live_ms` milliseconds after its last insert, expiring in
/// `generations` steps (0 = the default, 4: a key is gone at most
/// `time_to_live_ms / generations` after its time), with a false-positive
/// bound of `false_positive_rate` (0 = the default, 0.001), the clock
/// `flags` name (0: the system's; `CCF_TIMED_HOST_CLOCK`: the host's,
/// starting at `now_ms`, which the system clock ignores), and the hash
/// seed at `seed` (NULL = a fresh random seed).
///
/// Returns `CCF_OK` and stores the new filter in `*out`, to be released
/// with `ccf_timed_free`. On any error `*out` is left unchanged:
/// `CCF_INVALID_ARGUMENT` for a NULL `out`, unknown flags, a time to live
/// shorter than 1 ms a generation, more generations than the rate's age
/// tags can count, a capacity too large, or a bad rate;
/// `CCF_ALLOCATION_FAILED` if the table's memory cannot be had.
///
/// # Safety
/// `out` is NULL or valid for writing one pointer; `seed` is NULL or
/// points to a readable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn ccf_timed_new(
    capacity: usize,
    time_to_live_ms: u64,
    generations: u32,
    false_positive_rate: f64,
    flags: u32,
    now_ms: u64,
    seed: *const u64,
    out: *mut *mut ccf_timed,
) -> ccf_status {
    guard(CCF_INTERNAL_ERROR, || {
        let Some(clock) = TimedClock::from_flags(flags, now_ms) else {
            return CCF_INVALID_ARGUMENT;
        };
        if out.is_null() {
            return CCF_INVALID_ARGUMENT;
        }
        let mut builder = TimedCuckooFilter::builder()
            .capacity(capacity)
            .table_memory(crate::memory::table_memory())
            .time_to_live(std::time::Duration::from_millis(time_to_live_ms));
        if generations != 0 {
            builder = builder.generations(u64::from(generations));
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
        match builder.clock(clock).build() {
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
/// `f` is NULL or a filter from `ccf_timed_new` or `ccf_timed_load` that
/// has not been freed, and no other thread uses it.
#[no_mangle]
pub unsafe extern "C" fn ccf_timed_free(f: *mut ccf_timed) {
    // SAFETY: the caller's contract is `release`'s.
    unsafe { ops::release(f) }
}

/// Sets a host clock's time, in milliseconds: keys whose time to live ran
/// out by then expire before the next call answers. A time earlier than
/// the last is taken, and the filter waits for the clock to pass where it
/// was. Returns `CCF_OK`; `CCF_INVALID_ARGUMENT` for a NULL `f` or a
/// filter on the system clock.
///
/// # Safety
/// `f` is NULL or a live timed filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_timed_set_time(f: *mut ccf_timed, now_ms: u64) -> ccf_status {
    // SAFETY: the caller's contract is `ops::read`'s.
    unsafe {
        ops::read(f, CCF_INVALID_ARGUMENT, |filter| match filter.clock() {
            TimedClock::Host(clock) => {
                clock.set_ms(now_ms);
                CCF_OK
            }
            TimedClock::System => CCF_INVALID_ARGUMENT,
        })
    }
}

/// Inserts the key (the `len` bytes at `key`), or refreshes it: it is
/// found for at least the time to live from now. Returns `CCF_OK`;
/// `CCF_FULL` only when more than `capacity` keys are live;
/// `CCF_INVALID_ARGUMENT` for a NULL `f`, or a NULL `key` with `len > 0`.
///
/// # Safety
/// `f` is NULL or a live timed filter; `key` is NULL or points to `len`
/// readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ccf_timed_insert(
    f: *mut ccf_timed,
    key: *const c_void,
    len: usize,
) -> ccf_status {
    // SAFETY: the caller's contract is `ops::insert`'s.
    unsafe { ops::insert(f, key, len) }
}

/// `ccf_timed_insert` of a 64-bit hash.
///
/// # Safety
/// `f` is NULL or a live timed filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_timed_insert_hash(f: *mut ccf_timed, hash: u64) -> ccf_status {
    // SAFETY: the caller's contract is `ops::insert_hash`'s.
    unsafe { ops::insert_hash(f, hash) }
}

/// Inserts `n` hashes, the clock read once; `*inserted` (if not NULL)
/// receives how many went in before any refusal. Returns as
/// `ccf_timed_insert`, plus `CCF_INVALID_ARGUMENT` for a NULL `hashes`
/// with `n > 0`.
///
/// # Safety
/// `f` is NULL or a live timed filter; `hashes` is NULL or points to `n`
/// readable `uint64_t`s; `inserted` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ccf_timed_insert_hash_batch(
    f: *mut ccf_timed,
    hashes: *const u64,
    n: usize,
    inserted: *mut usize,
) -> ccf_status {
    // SAFETY: the caller's contract is `ops::insert_hash_batch`'s.
    unsafe { ops::insert_hash_batch(f, hashes, n, inserted) }
}

/// Whether the key may be present: true for every key inserted within
/// the time to live; false for a NULL `f`, or a NULL `key` with `len > 0`.
///
/// # Safety
/// `f` is NULL or a live timed filter; `key` is NULL or points to `len`
/// readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ccf_timed_contains(
    f: *const ccf_timed,
    key: *const c_void,
    len: usize,
) -> bool {
    // SAFETY: the caller's contract is `ops::contains`'s.
    unsafe { ops::contains(f, key, len) }
}

/// `ccf_timed_contains` of a 64-bit hash.
///
/// # Safety
/// `f` is NULL or a live timed filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_timed_contains_hash(f: *const ccf_timed, hash: u64) -> bool {
    // SAFETY: the caller's contract is `ops::contains_hash`'s.
    unsafe { ops::contains_hash(f, hash) }
}

/// `out[i] = ccf_timed_contains_hash(f, hashes[i])` for `i < n`, the clock
/// read once and the lookups' memory accesses overlapped. Writes nothing
/// for a NULL `f`, `hashes` or `out`.
///
/// # Safety
/// `f` is NULL or a live timed filter; `hashes` and `out` are NULL or
/// point to `n` readable `uint64_t`s and `n` writable `bool`s.
#[no_mangle]
pub unsafe extern "C" fn ccf_timed_contains_hash_batch(
    f: *const ccf_timed,
    hashes: *const u64,
    n: usize,
    out: *mut bool,
) {
    // SAFETY: the caller's contract is `ops::contains_hash_batch`'s.
    unsafe { ops::contains_hash_batch(f, hashes, n, out) }
}

/// `ccf_contains_burst` for a timed filter: bit `i` set when `keys[i]`
/// (`key_len` bytes each, DPDK's fixed-length keys) is live, the clock
/// read once; 0 for a NULL `f` or `keys`, or `n > 64`.
///
/// # Safety
/// `f` is NULL or a live timed filter; `keys` is NULL or points to `n`
/// readable pointers, each NULL or pointing to `key_len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ccf_timed_contains_burst(
    f: *const ccf_timed,
    keys: *const *const c_void,
    key_len: usize,
    n: u32,
) -> u64 {
    // SAFETY: the caller's contract is `ops::contains_burst`'s.
    unsafe { ops::contains_burst(f, keys, key_len, n) }
}

/// `ccf_contains_hash_burst` for a timed filter: bit `i` set when
/// `hashes[i]` is live, the clock read once; 0 for a NULL `f` or
/// `hashes`, or `n > 64`.
///
/// # Safety
/// `f` is NULL or a live timed filter; `hashes` is NULL or points to `n`
/// readable `uint64_t`s.
#[no_mangle]
pub unsafe extern "C" fn ccf_timed_contains_hash_burst(
    f: *const ccf_timed,
    hashes: *const u64,
    n: u32,
) -> u64 {
    // SAFETY: the caller's contract is `ops::contains_hash_burst`'s.
    unsafe { ops::contains_hash_burst(f, hashes, n) }
}

/// Live keys as of the clock's time; 0 for a NULL `f`.
///
/// # Safety
/// `f` is NULL or a live timed filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_timed_len(f: *const ccf_timed) -> usize {
    // SAFETY: the caller's contract is `ops::read`'s.
    unsafe { ops::read(f, 0, Timed::len) }
}

/// The time to live the filter keeps keys for, at least, in milliseconds
/// (the one asked for, rounded up to whole milliseconds a generation);
/// 0 for a NULL `f`.
///
/// # Safety
/// `f` is NULL or a live timed filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_timed_time_to_live_ms(f: *const ccf_timed) -> u64 {
    // SAFETY: the caller's contract is `ops::read`'s.
    unsafe {
        ops::read(f, 0, |filter| {
            u64::try_from(filter.time_to_live().as_millis()).unwrap_or(u64::MAX)
        })
    }
}

/// Saves the filter, its schedule (epoch and generation length) with it,
/// to the file at `path` crash-safely (a temporary file, synced, renamed
/// over `path`). Returns `CCF_OK`; `CCF_IO_ERROR` if writing fails;
/// `CCF_INVALID_ARGUMENT` for a NULL `f` or an unusable `path`.
///
/// # Safety
/// `f` is NULL or a live timed filter; `path` is NULL or a NUL-terminated
/// string.
#[no_mangle]
pub unsafe extern "C" fn ccf_timed_save(f: *const ccf_timed, path: *const c_char) -> ccf_status {
    // SAFETY: the caller's contract is `persist::save`'s.
    unsafe { save(f, path, |filter, path| filter.write_to_path(path)) }
}

/// Loads a filter saved by `ccf_timed_save` (or Rust's
/// `TimedCuckooFilter::to_bytes` with the default hasher), reading the
/// clock `flags` name (as `ccf_timed_new`; a host clock starts at
/// `now_ms`): keys whose time ran out while it lay saved are gone.
///
/// Returns `CCF_OK` and stores the filter in `*out`; on any error `*out`
/// is left unchanged: `CCF_IO_ERROR` if the file cannot be read;
/// `CCF_CORRUPT` if it is not one intact saved timed filter;
/// `CCF_ALLOCATION_FAILED` if memory cannot be had; `CCF_INVALID_ARGUMENT`
/// for unknown flags, a NULL `out` or an unusable `path`.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string; `out` is NULL or valid for
/// writing one pointer.
#[no_mangle]
pub unsafe extern "C" fn ccf_timed_load(
    path: *const c_char,
    flags: u32,
    now_ms: u64,
    out: *mut *mut ccf_timed,
) -> ccf_status {
    let Some(clock) = TimedClock::from_flags(flags, now_ms) else {
        return CCF_INVALID_ARGUMENT;
    };
    // SAFETY: the caller's contract is `persist::open`'s.
    unsafe {
        open(path, out, |path| {
            let bytes = read_whole(path)?;
            let options =
                concurrent_cuckoo::ReadOptions::new().table_memory(crate::memory::table_memory());
            Timed::from_bytes_with_options(&bytes, clock, options).map_err(ccf_status::from)
        })
    }
}

/// The file's bytes, its buffer reserved fallibly.
fn read_whole(path: &std::path::Path) -> Result<Vec<u8>, ccf_status> {
    let mut file = std::fs::File::open(path).map_err(|e| io_error(&e))?;
    let len = file.metadata().map_err(|e| io_error(&e))?.len();
    let mut bytes = Vec::new();
    let len = usize::try_from(len).map_err(|_| CCF_ALLOCATION_FAILED)?;
    bytes
        .try_reserve_exact(len)
        .map_err(|_| CCF_ALLOCATION_FAILED)?;
    file.read_to_end(&mut bytes).map_err(|e| io_error(&e))?;
    Ok(bytes)
}
