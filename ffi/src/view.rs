//! `ccf_view_v2` (and `v1`) and `ccf_prefetch_hash`: what a C loop needs to look keys
//! up without a call per key.
//!
//! `ccf_contains_hash` is a call through the C ABI, then one to the
//! table's lookup; a hot C loop pays both for every key, and its compiler
//! can neither keep the table's fields in registers nor overlap one key's
//! work with the next's. `ccf_view_v1` describes a filter's table (the
//! addresses of its atomic bucket and version words and the numbers that
//! map a hash onto them), and `concurrent_cuckoo_inline.h` runs the
//! library's lookup protocol over it in `static inline` C, calling back
//! into the library only when a concurrent move changed the pair's version
//! (`src/view.rs` in the core crate, `src/table.rs` for the protocol).

use crate::ops::filter_of;
use crate::{ccf_filter, guard};

/// What `concurrent_cuckoo_inline.h` needs to look keys up in a filter
/// inline (`ccf_view_v2`; a changed layout or meaning will come from a
/// function with a new name, so a header and a library that disagree fail
/// to link instead of misreading each other).
///
/// Read-only and valid as long as the filter: a filter never moves its
/// table. Copy it into a local variable of the function with the hot loop
/// (not the variable this call returned into), so the compiler keeps its
/// fields in registers (see `concurrent_cuckoo_inline.h`).
///
/// `inline_lookup` is 1 for tables with 16-bit fingerprints and finalized
/// hashes (every filter made by `ccf_new*` without `CCF_UNIFORM_HASHES`,
/// and those loaded from files they saved), 2 for 16-bit tables whose
/// hashes are used as they are (`CCF_UNIFORM_HASHES`; only `ccf_view_v2`
/// says 2); then bucket `i < bucket_count` is the atomic `uint64_t` at
/// `buckets + i`, its slot `s` in bits `16 s` to `16 s + 15`, and the
/// version of the bucket pair `{a, b}` the atomic `uint64_t` at `versions
/// + (((a ^ b) >> 1) & version_mask)`. Otherwise it is 0, the other
/// fields but `filter` are zero, and the inline functions call the library.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ccf_view {
    /// The filter, for lookups the inline code hands back to the library.
    pub filter: *const ccf_filter,
    /// 1 if the inline lookup applies to finalized hashes, 2 if it applies
    /// to hashes used as they are, 0 if every lookup calls the library.
    pub inline_lookup: u32,
    /// Always 0 (padding, named so the layout is explicit).
    pub reserved: u32,
    /// The first bucket word.
    pub buckets: *const u64,
    /// Buckets in the table: even, from 2 to 2^32.
    pub bucket_count: u64,
    /// The first version word.
    pub versions: *const u64,
    /// Version words minus one (their count is a power of two).
    pub version_mask: u64,
}

/// The view of `f` for `concurrent_cuckoo_inline.h` as it was before
/// `CCF_UNIFORM_HASHES`: as `ccf_view_v2`, except that a filter with
/// uniform hashes gets `inline_lookup` 0 (every lookup calls the library),
/// because a header of that time would finalize its hashes. Kept for
/// programs built with such a header.
///
/// # Safety
/// `f` is NULL or a live filter; the view is used only while it lives.
#[no_mangle]
pub unsafe extern "C" fn ccf_view_v1(f: *const ccf_filter) -> ccf_view {
    // SAFETY: the caller's contract is `ccf_view_v2`'s.
    let view = unsafe { ccf_view_v2(f) };
    if view.inline_lookup == 1 {
        view
    } else {
        fallback_view(f)
    }
}

/// The view of `f` for `concurrent_cuckoo_inline.h` (see `ccf_view`).
/// Always usable: for a NULL `f`, or a table the inline lookup does not
/// handle, `inline_lookup` is 0 and the inline functions call
/// `ccf_contains_hash` and `ccf_prefetch_hash`, which answer exactly as
/// for any filter (false for NULL). `inline_lookup` is 2 for a filter
/// made with `CCF_UNIFORM_HASHES` (or loaded from a format version 1
/// file), whose hashes are used as they are.
///
/// # Safety
/// `f` is NULL or a live filter; the view is used only while it lives.
#[no_mangle]
pub unsafe extern "C" fn ccf_view_v2(f: *const ccf_filter) -> ccf_view {
    let fallback = fallback_view(f);
    guard(fallback, || {
        // SAFETY: `f` is NULL or a live filter (caller's contract).
        let Some(view) = unsafe { filter_of(f) }.and_then(|filter| filter.lookup_view()) else {
            return fallback;
        };
        ccf_view {
            inline_lookup: if view.uniform_hashes { 2 } else { 1 },
            buckets: view.buckets,
            bucket_count: view.bucket_count,
            versions: view.versions,
            version_mask: view.version_mask,
            ..fallback
        }
    })
}

/// The view that sends every lookup to the library.
fn fallback_view(f: *const ccf_filter) -> ccf_view {
    ccf_view {
        filter: f,
        inline_lookup: 0,
        reserved: 0,
        buckets: core::ptr::null(),
        bucket_count: 0,
        versions: core::ptr::null(),
        version_mask: 0,
    }
}

/// Starts loading the two buckets `ccf_contains_hash(f, hash)` will read,
/// and returns at once; a hint that changes no answer. A loop that looks
/// keys up one at a time prefetches a key a few iterations ahead, so the
/// cache misses of several keys overlap (as DPDK's `rte_hash_prefetch`);
/// bursts known in advance are better served by `ccf_contains_hash_batch`.
/// NULL `f` does nothing.
///
/// # Safety
/// `f` is NULL or a live filter.
#[no_mangle]
pub unsafe extern "C" fn ccf_prefetch_hash(f: *const ccf_filter, hash: u64) {
    guard((), || {
        // SAFETY: `f` is NULL or a live filter (caller's contract).
        if let Some(filter) = unsafe { filter_of(f) } {
            filter.prefetch_hash(hash);
        }
    });
}
