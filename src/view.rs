//! A read-only description of a table's lookup state, for lookups compiled
//! outside this crate: the C ABI's inline lookup (`ccf_view` and
//! `concurrent_cuckoo_inline.h` in `ffi/`), which a C loop inlines instead
//! of making a call per key.
//!
//! The view hands out the addresses of the atomic bucket and version words
//! and the numbers that map a hash onto them. A reader that uses it must
//! run exactly the lookup protocol of `table.rs` (version loaded with
//! acquire, both buckets relaxed, on a miss an acquire fence and a relaxed
//! re-read of the version) and, when the version changed, finish with the
//! filter's own lookup: then it answers as [`CuckooFilter::contains_hash`]
//! does, false negatives included (never).
//!
//! Only the commonest table gets a view: 16-bit fingerprints (one `u64`
//! word per bucket, slot `s` in bits `16s..16s+16`), with finalized hashes
//! (`index.rs`) or hashes used as they are
//! ([`uniform_hashes`](crate::Builder::uniform_hashes)). Every other table
//! answers `None`, and its callers keep calling the filter.

use crate::filter::{CuckooFilter, Table};
use crate::index::HashScheme;

/// The lookup state of a table with 16-bit fingerprints (module docs). Valid while the filter it came from lives and
/// is not [`relocate`](CuckooFilter::relocate)d (which takes `&mut`):
/// nothing else replaces or moves its table.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(feature = "unstable"), allow(dead_code))]
pub struct LookupView {
    /// Bucket `i` is the `u64` at `buckets + i`, loaded atomically.
    pub buckets: *const u64,
    /// The number of buckets, `m`: even, at least 2, at most 2^32.
    pub bucket_count: u64,
    /// The pair `{a, b}`'s version is the `u64` at
    /// `versions + (((a ^ b) >> 1) & version_mask)`, loaded atomically.
    pub versions: *const u64,
    /// The number of version words minus one (a power of two minus one).
    pub version_mask: u64,
    /// Whether hashes are used as they are (`true`) or finalized first.
    pub uniform_hashes: bool,
}

impl<S> CuckooFilter<S> {
    crate::unstable_api! {
        /// The view of this filter's table for an inlined lookup (module docs),
        /// or `None` unless it has 16-bit fingerprints.
        /// For the C ABI; Rust callers inline [`contains_hash`](Self::contains_hash)
        /// already.
        #[must_use]
        pub fn lookup_view(&self) -> Option<LookupView> {
            let Table::F16(t) = &self.table else {
                return None;
            };
            let (versions, count) = t.stripes.version_words();
            Some(LookupView {
                // `AtomicU64` has the size, alignment and bit validity of `u64`.
                buckets: t.buckets.as_ptr().cast::<u64>(),
                bucket_count: t.index.buckets() as u64,
                versions: versions.cast::<u64>(),
                version_mask: count as u64 - 1,
                uniform_hashes: t.index.scheme() == HashScheme::Raw,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::CuckooFilter;

    #[test]
    fn only_16_bit_tables_have_a_view_which_says_their_scheme() {
        for (bits, uniform) in [8, 16, 32]
            .into_iter()
            .flat_map(|b| [(b, false), (b, true)])
        {
            let filter = CuckooFilter::builder()
                .capacity(1000)
                .fingerprint_bits(bits)
                .uniform_hashes(uniform)
                .build()
                .unwrap();
            let view = filter.lookup_view();
            assert_eq!(view.is_some(), bits == 16, "{bits}-bit");
            if let Some(view) = view {
                assert_eq!(view.uniform_hashes, uniform);
                assert_eq!(view.bucket_count, filter.stats().bucket_count as u64);
                assert!((view.version_mask + 1).is_power_of_two());
                assert!(!view.buckets.is_null() && !view.versions.is_null());
            }
        }
    }
}
