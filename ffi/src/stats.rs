//! `ccf_stats`: a filter's size, memory and writers' counters in one
//! snapshot, mirroring Rust's `Stats`.

use crate::ops::{filter_of, Handle};
use crate::status::ccf_status::{self, *};
use crate::{ccf_filter, guard};
use concurrent_cuckoo::Stats;

/// What `ccf_stats` reports: size, memory, and what inserts and removes
/// have done since the filter was created, loaded or thawed (`ccf_clear`
/// keeps the counters). Mirrors Rust's `Stats`.
///
/// Without concurrent writers every field is exact, and for a filter
/// created empty `inserts - removes == len`; while writers run, each
/// counter is a recent value (they are read one after another). Reading
/// them never slows lookups.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ccf_filter_stats {
    /// Items stored (each copy counts), as `ccf_len`.
    pub len: u64,
    /// Fingerprint slots, as `ccf_capacity`.
    pub capacity: u64,
    /// `len / capacity`.
    pub load_factor: f64,
    /// Bytes held, as `ccf_memory_usage`.
    pub memory_usage: u64,
    /// Buckets in the table (4 slots each).
    pub bucket_count: u64,
    /// Stripe locks.
    pub stripes: u64,
    /// Fingerprint width in bits (8, 16 or 32).
    pub fingerprint_bits: u32,
    /// Longest displacement path an insert searches (1 to 5).
    pub max_path_len: u32,
    /// Successful inserts (each copy; `ccf_insert_unique` calls that added
    /// the key).
    pub inserts: u64,
    /// Successful removes.
    pub removes: u64,
    /// Fingerprints moved by displacement paths.
    pub relocations: u64,
    /// Inserts refused with `CCF_FULL`.
    pub failed_inserts: u64,
    /// Inserts refused with `CCF_TOO_MANY_DUPLICATES`.
    pub duplicate_refusals: u64,
    /// `path_lengths[h]`: successful inserts whose slot was freed by a
    /// displacement path of `h` moves (0: a slot was free). Sums to
    /// `inserts`; entries past `max_path_len` stay 0.
    pub path_lengths: [u64; 6],
}

impl From<&Stats> for ccf_filter_stats {
    fn from(s: &Stats) -> Self {
        // `usize` is at most 64 bits on every target Rust supports, so the
        // widening casts are exact; `max_path_len` is at most 5.
        Self {
            len: s.len as u64,
            capacity: s.capacity as u64,
            load_factor: s.load_factor,
            memory_usage: s.memory_usage as u64,
            bucket_count: s.bucket_count as u64,
            stripes: s.stripes as u64,
            fingerprint_bits: s.fingerprint_bits,
            max_path_len: u32::try_from(s.max_path_len).unwrap_or(u32::MAX),
            inserts: s.inserts,
            removes: s.removes,
            relocations: s.relocations,
            failed_inserts: s.failed_inserts,
            duplicate_refusals: s.duplicate_refusals,
            path_lengths: s.path_lengths,
        }
    }
}

/// Fills `*out` with the filter's statistics (see `ccf_filter_stats`).
///
/// `out_size` is `sizeof(ccf_filter_stats)` as the caller was compiled:
/// the struct may gain fields at its end in later releases, and the
/// library writes only the first `min(out_size, its own size)` bytes, so a
/// program built against an older header keeps working with a newer
/// library, and a newer program with an older library gets the fields the
/// library knows (zero the struct first to see which are missing). A size
/// smaller than this first release's struct is refused.
///
/// Returns `CCF_OK`; `CCF_INVALID_ARGUMENT` for a NULL `f` or `out` or too
/// small an `out_size`, and then `*out` is left unchanged.
///
/// # Safety
/// `f` is NULL or a live filter; `out` is NULL or valid for writing
/// `out_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn ccf_stats(
    f: *const ccf_filter,
    out: *mut ccf_filter_stats,
    out_size: usize,
) -> ccf_status {
    // SAFETY: the caller's contract is `write_stats`'s; `ccf_filter_stats`
    // has no padding (asserted at compile time below).
    unsafe {
        write_stats(f, out, out_size, FIRST_RELEASE_SIZE, |filter| {
            ccf_filter_stats::from(&filter.stats())
        })
    }
}

/// What `ccf_stats` and `ccf_windowed_stats` share: `CCF_INVALID_ARGUMENT`
/// for a NULL `f` or `out` or an `out_size` below `first_size`, else the
/// first `min(out_size, size_of::<T>())` bytes of `snapshot(filter)` copied
/// to `out` and `CCF_OK`.
///
/// # Safety
/// `f` is NULL or a live handle; `T` has no padding; `out` is NULL or
/// valid for writing `out_size` bytes.
pub(crate) unsafe fn write_stats<H: Handle, T>(
    f: *const H,
    out: *mut T,
    out_size: usize,
    first_size: usize,
    snapshot: impl FnOnce(&H::Filter) -> T,
) -> ccf_status {
    guard(CCF_INTERNAL_ERROR, || {
        // SAFETY: `f` is NULL or a live handle (caller's contract).
        let Some(filter) = (unsafe { filter_of(f) }) else {
            return CCF_INVALID_ARGUMENT;
        };
        if out.is_null() || out_size < first_size {
            return CCF_INVALID_ARGUMENT;
        }
        let stats = snapshot(filter);
        // SAFETY: `T` has no padding, `out` is non-null and valid for
        // writing `out_size` bytes (caller's contract).
        unsafe { write_prefix(&stats, out, out_size) };
        CCF_OK
    })
}

/// Copies the first `min(out_size, size_of::<T>())` bytes of `value` to
/// `out`: a statistics struct that may gain fields at its end, written for
/// a caller compiled against any release's header.
///
/// # Safety
/// `T` has no padding (every byte of `value` is initialised); `out` is
/// non-null and valid for writing `out_size` bytes.
unsafe fn write_prefix<T>(value: &T, out: *mut T, out_size: usize) {
    let len = out_size.min(size_of::<T>());
    // SAFETY: `value` is a live reference of `size_of::<T>() >= len`
    // initialised bytes (no padding: the caller's contract); `out` is valid
    // for writing `out_size >= len` bytes (caller's contract); a byte copy
    // needs no alignment and no valid previous value, and `out` cannot
    // overlap `value`, a borrow of the caller's local.
    unsafe {
        core::ptr::copy_nonoverlapping((value as *const T).cast::<u8>(), out.cast::<u8>(), len)
    };
}

/// Size of `ccf_filter_stats` in the first release that had it: the least
/// `out_size` `ccf_stats` accepts, forever.
const FIRST_RELEASE_SIZE: usize = 144;

// The first release's layout: 11 eight-byte fields, two four-byte ones and
// six path counters, with no padding, so every byte `ccf_stats` copies is
// initialised. Fields are only ever appended.
const _: () = assert!(size_of::<ccf_filter_stats>() == 11 * 8 + 2 * 4 + 6 * 8);
const _: () = assert!(size_of::<ccf_filter_stats>() == FIRST_RELEASE_SIZE);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::{ccf_free, ccf_insert_hash, ccf_new_with_options, ccf_remove_hash};
    use core::ptr;

    #[test]
    fn stats_mirror_the_rust_snapshot() {
        let mut f = ptr::null_mut();
        let seed = 3u64;
        // SAFETY: `seed` and `f` are valid for reading and writing; `f` is
        // live until `ccf_free` and used by this thread only.
        unsafe {
            assert_eq!(ccf_new_with_options(1000, 0.0, 8, &seed, &mut f), CCF_OK);
            for h in 0..700u64 {
                assert_eq!(
                    ccf_insert_hash(f, h.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
                    CCF_OK
                );
            }
            assert!(ccf_remove_hash(f, 0));
            let size = size_of::<ccf_filter_stats>();
            assert_eq!(size, FIRST_RELEASE_SIZE, "fields are only ever appended");
            let mut out = core::mem::MaybeUninit::<ccf_filter_stats>::uninit();
            assert_eq!(ccf_stats(f, out.as_mut_ptr(), size), CCF_OK);
            let got = out.assume_init();
            let want = ccf_filter_stats::from(&(*f).inner.stats());
            assert_eq!(got, want);
            assert_eq!((got.len, got.inserts, got.removes), (699, 700, 1));
            assert_eq!(got.path_lengths.iter().sum::<u64>(), got.inserts);
            assert_eq!(got.fingerprint_bits, 8);
            assert_eq!(got.capacity, got.bucket_count * 4);
            let mut untouched = ccf_filter_stats {
                len: 77,
                ..Default::default()
            };
            assert_eq!(
                ccf_stats(ptr::null(), &mut untouched, size),
                CCF_INVALID_ARGUMENT
            );
            assert_eq!(ccf_stats(f, &mut untouched, size - 1), CCF_INVALID_ARGUMENT);
            assert_eq!(untouched.len, 77);
            assert_eq!(ccf_stats(f, ptr::null_mut(), size), CCF_INVALID_ARGUMENT);
            // A caller from a later release, whose struct is longer: only
            // this release's bytes are written, the tail stays.
            let mut longer = [0xA5u8; FIRST_RELEASE_SIZE + 16];
            let p = longer.as_mut_ptr().cast::<ccf_filter_stats>();
            assert_eq!(ccf_stats(f, p, longer.len()), CCF_OK);
            assert_eq!(p.read_unaligned(), want);
            assert!(longer[size..].iter().all(|&b| b == 0xA5));
            ccf_free(f);
        }
    }
}
