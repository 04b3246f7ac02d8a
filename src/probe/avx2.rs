//! AVX2 probe for 32-bit fingerprints: both 16-byte buckets fill one 256-bit
//! register and one `vpcmpeqd` compares all eight slots.
//!
//! The filter uses it when the crate is compiled with AVX2 enabled (for
//! example `-C target-cpu=native`); the backend test calls it behind runtime
//! detection so it is checked on any machine that has AVX2.

use core::arch::x86_64::{
    _mm256_cmpeq_epi32, _mm256_movemask_epi8, _mm256_set1_epi32, _mm256_set_epi64x,
};

/// Does either four-slot bucket of 32-bit fingerprints hold `fp`?
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) fn pair_u32(a: u128, b: u128, fp: u32) -> bool {
    let both = _mm256_set_epi64x((b >> 64) as i64, b as i64, (a >> 64) as i64, a as i64);
    _mm256_movemask_epi8(_mm256_cmpeq_epi32(both, _mm256_set1_epi32(fp as i32))) != 0
}

/// [`pair_u32`] for a build that enables AVX2 for the whole crate (for
/// example `-C target-cpu=native` on an AVX2 machine), which is the only
/// kind that selects this backend (`mod.rs`). A `#[target_feature]`
/// function stays unsafe to call from code without the attribute even
/// then, so the safe probe interface goes through this wrapper.
#[cfg(target_feature = "avx2")]
#[inline(always)]
pub(crate) fn pair_u32_enabled(a: u128, b: u128, fp: u32) -> bool {
    // SAFETY: this code is compiled only when AVX2 is enabled for the whole
    // build (`cfg(target_feature = "avx2")`), so every CPU that runs it has
    // AVX2.
    unsafe { pair_u32(a, b, fp) }
}
