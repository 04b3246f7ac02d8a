//! `ccf_windowed_stats`: a windowed filter's size, generation and writers'
//! counters in one snapshot, mirroring Rust's `WindowedStats`.

use crate::stats::write_stats;
use crate::status::ccf_status;
use crate::windowed::ccf_windowed;
use concurrent_cuckoo::WindowedStats;

/// What `ccf_windowed_stats` reports. Mirrors Rust's `WindowedStats`.
///
/// Without concurrent writers every field is exact; while writers run,
/// each counter is a recent value. `failed_inserts` counts the inserts
/// refused with `CCF_FULL` (more keys live than the filter holds): watch it
/// under churn.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ccf_windowed_filter_stats {
    /// Live keys, as `ccf_windowed_len`.
    pub len: u64,
    /// Lanes (slots), as `ccf_windowed_slots`.
    pub slots: u64,
    /// `len / slots`.
    pub load_factor: f64,
    /// Occupied lanes, live or expired and not yet swept (counted by a scan
    /// for tables of at most 65,536 buckets, else 0).
    pub occupied: u64,
    /// Bytes held, as `ccf_windowed_memory_usage`.
    pub memory_usage: u64,
    /// The current generation, as `ccf_windowed_generation`.
    pub generation: u64,
    /// The window in generations, as `ccf_windowed_generations`.
    pub generations: u64,
    /// Buckets in the table (4 lanes of 16 bits each, or 2 of 32:
    /// `slots / bucket_count`).
    pub bucket_count: u64,
    /// Stripe locks.
    pub stripes: u64,
    /// Inserts that stored a new lane.
    pub inserts: u64,
    /// Inserts that refreshed their key's lane.
    pub refreshes: u64,
    /// Lanes moved by displacement paths.
    pub relocations: u64,
    /// Expired lanes cleared by the sweep.
    pub swept: u64,
    /// Inserts refused with `CCF_FULL`.
    pub failed_inserts: u64,
    /// Fingerprint bits of a lane.
    pub fingerprint_bits: u32,
    /// Age-tag bits of a lane.
    pub tag_bits: u32,
}

impl From<&WindowedStats> for ccf_windowed_filter_stats {
    fn from(s: &WindowedStats) -> Self {
        // `usize` is at most 64 bits on every target Rust supports: the
        // widening casts are exact.
        Self {
            len: s.len as u64,
            slots: s.slots as u64,
            load_factor: if s.slots == 0 {
                0.0
            } else {
                s.len as f64 / s.slots as f64
            },
            occupied: s.occupied as u64,
            memory_usage: s.memory_usage as u64,
            generation: s.generation,
            generations: s.generations,
            bucket_count: s.bucket_count as u64,
            stripes: s.stripes as u64,
            inserts: s.inserts,
            refreshes: s.refreshes,
            relocations: s.relocations,
            swept: s.swept,
            failed_inserts: s.failed_inserts,
            fingerprint_bits: s.fingerprint_bits,
            tag_bits: s.tag_bits,
        }
    }
}

/// Fills `*out` with the windowed filter's statistics (see
/// `ccf_windowed_filter_stats`). `out_size` is
/// `sizeof(ccf_windowed_filter_stats)` as the caller was compiled: as for
/// `ccf_stats`, the library writes only the first `min(out_size, its own
/// size)` bytes, so programs and libraries of different releases agree; a
/// size smaller than this first release's struct is refused.
///
/// Returns `CCF_OK`; `CCF_INVALID_ARGUMENT` for a NULL `f` or `out` or too
/// small an `out_size`, and then `*out` is left unchanged.
///
/// # Safety
/// `f` is NULL or a live windowed filter; `out` is NULL or valid for
/// writing `out_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn ccf_windowed_stats(
    f: *const ccf_windowed,
    out: *mut ccf_windowed_filter_stats,
    out_size: usize,
) -> ccf_status {
    // SAFETY: the caller's contract is `write_stats`'s; the struct has no
    // padding (asserted at compile time below).
    unsafe {
        write_stats(f, out, out_size, FIRST_RELEASE_SIZE, |filter| {
            ccf_windowed_filter_stats::from(&filter.stats())
        })
    }
}

/// Size of `ccf_windowed_filter_stats` in the first release that had it:
/// the least `out_size` `ccf_windowed_stats` accepts, forever.
const FIRST_RELEASE_SIZE: usize = 120;

// 14 eight-byte fields and two four-byte ones, no padding: every byte
// copied is initialised. Fields are only ever appended.
const _: () = assert!(size_of::<ccf_windowed_filter_stats>() == 14 * 8 + 2 * 4);
const _: () = assert!(size_of::<ccf_windowed_filter_stats>() == FIRST_RELEASE_SIZE);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::filter_of;
    use crate::status::ccf_status::*;
    use crate::windowed::{
        ccf_windowed_advance, ccf_windowed_free, ccf_windowed_insert_hash, ccf_windowed_new,
    };
    use core::ptr;

    #[test]
    fn stats_mirror_the_rust_snapshot() {
        let mut f = ptr::null_mut();
        // SAFETY: `f` is valid for writing, live until `ccf_windowed_free`
        // and used by this thread only; `out` buffers are valid for their
        // sizes.
        unsafe {
            assert_eq!(ccf_windowed_new(1000, 4, 1e-3, ptr::null(), &mut f), CCF_OK);
            for h in 0..500u64 {
                let hash = h.wrapping_mul(0x9E37_79B9_7F4A_7C15);
                assert_eq!(ccf_windowed_insert_hash(f, hash), CCF_OK);
            }
            assert_eq!(ccf_windowed_insert_hash(f, 0), CCF_OK); // a refresh
            assert_eq!(ccf_windowed_advance(f), 1);
            let size = size_of::<ccf_windowed_filter_stats>();
            let mut out = core::mem::MaybeUninit::<ccf_windowed_filter_stats>::uninit();
            assert_eq!(ccf_windowed_stats(f, out.as_mut_ptr(), size), CCF_OK);
            let got = out.assume_init();
            let want = ccf_windowed_filter_stats::from(&filter_of(f.cast_const()).unwrap().stats());
            assert_eq!(got, want);
            assert_eq!((got.len, got.inserts, got.refreshes), (500, 500, 1));
            assert_eq!(
                (got.generation, got.generations, got.failed_inserts),
                (1, 4, 0)
            );
            assert_eq!(got.slots, got.bucket_count * 4);
            let mut untouched = ccf_windowed_filter_stats {
                len: 77,
                ..Default::default()
            };
            assert_eq!(
                ccf_windowed_stats(ptr::null(), &mut untouched, size),
                CCF_INVALID_ARGUMENT
            );
            assert_eq!(
                ccf_windowed_stats(f, &mut untouched, size - 1),
                CCF_INVALID_ARGUMENT
            );
            assert_eq!(untouched.len, 77);
            let mut longer = [0xA5u8; FIRST_RELEASE_SIZE + 16];
            let p = longer.as_mut_ptr().cast::<ccf_windowed_filter_stats>();
            assert_eq!(ccf_windowed_stats(f, p, longer.len()), CCF_OK);
            assert_eq!(p.read_unaligned(), want);
            assert!(longer[size..].iter().all(|&b| b == 0xA5));
            ccf_windowed_free(f);
        }
    }
}
