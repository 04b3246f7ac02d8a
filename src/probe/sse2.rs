//! SSE2 probe (baseline on every x86-64 CPU): both buckets go into one
//! 128-bit register (two for 32-bit fingerprints) and are compared against a
//! broadcast of the fingerprint with a single `pcmpeq`, then `pmovmskb`.

use core::arch::x86_64::{
    __m128i, _mm_cmpeq_epi16, _mm_cmpeq_epi32, _mm_cmpeq_epi8, _mm_cvtsi64_si128,
    _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi16, _mm_set1_epi32, _mm_set1_epi8, _mm_set_epi64x,
};

#[inline(always)]
fn split(word: u128) -> __m128i {
    // SAFETY: SSE2 is part of the x86-64 baseline: every CPU this code can
    // run on has it. The intrinsic works on values, not memory.
    unsafe { _mm_set_epi64x((word >> 64) as i64, word as i64) }
}

/// Does either four-slot bucket of 8-bit fingerprints hold `fp`?
#[inline(always)]
pub(crate) fn pair_u8(a: u32, b: u32, fp: u8) -> bool {
    // The upper eight bytes of the register are zero and `fp` never is, so
    // they can never match.
    // SAFETY: SSE2 is x86-64 baseline; register-only intrinsics.
    unsafe {
        let both = _mm_cvtsi64_si128(((u64::from(b) << 32) | u64::from(a)) as i64);
        _mm_movemask_epi8(_mm_cmpeq_epi8(both, _mm_set1_epi8(fp as i8))) != 0
    }
}

/// Does either four-slot bucket of 16-bit fingerprints hold `fp`?
#[inline(always)]
pub(crate) fn pair_u16(a: u64, b: u64, fp: u16) -> bool {
    // SAFETY: SSE2 is x86-64 baseline; register-only intrinsics.
    unsafe {
        let both = _mm_set_epi64x(b as i64, a as i64);
        _mm_movemask_epi8(_mm_cmpeq_epi16(both, _mm_set1_epi16(fp as i16))) != 0
    }
}

/// Does either four-slot bucket of 32-bit fingerprints hold `fp`?
#[inline(always)]
pub(crate) fn pair_u32(a: u128, b: u128, fp: u32) -> bool {
    let (va, vb) = (split(a), split(b));
    // SAFETY: SSE2 is x86-64 baseline; register-only intrinsics.
    unsafe {
        let needle = _mm_set1_epi32(fp as i32);
        let eq = _mm_or_si128(_mm_cmpeq_epi32(va, needle), _mm_cmpeq_epi32(vb, needle));
        _mm_movemask_epi8(eq) != 0
    }
}
