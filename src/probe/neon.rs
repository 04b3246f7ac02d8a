//! NEON probe (baseline on every aarch64 CPU): both buckets are combined into
//! one 128-bit vector (two for 32-bit fingerprints), compared lane-wise with
//! `cmeq` against a broadcast of the fingerprint, and reduced with `umaxv`.

use core::arch::aarch64::{
    vceq_u8, vceqq_u16, vceqq_u32, vcombine_u16, vcombine_u32, vcreate_u16, vcreate_u32,
    vcreate_u8, vdup_n_u8, vdupq_n_u16, vdupq_n_u32, vmaxv_u8, vmaxvq_u16, vmaxvq_u32, vorrq_u32,
};

/// Does either four-slot bucket of 8-bit fingerprints hold `fp`?
#[inline(always)]
pub(crate) fn pair_u8(a: u32, b: u32, fp: u8) -> bool {
    // SAFETY: NEON is part of the aarch64 baseline; register-only intrinsics.
    #[allow(unused_unsafe)]
    unsafe {
        let both = vcreate_u8((u64::from(b) << 32) | u64::from(a));
        vmaxv_u8(vceq_u8(both, vdup_n_u8(fp))) != 0
    }
}

/// Does either four-slot bucket of 16-bit fingerprints hold `fp`?
#[inline(always)]
pub(crate) fn pair_u16(a: u64, b: u64, fp: u16) -> bool {
    // SAFETY: NEON is part of the aarch64 baseline; register-only intrinsics.
    #[allow(unused_unsafe)]
    unsafe {
        let both = vcombine_u16(vcreate_u16(a), vcreate_u16(b));
        vmaxvq_u16(vceqq_u16(both, vdupq_n_u16(fp))) != 0
    }
}

/// Does either four-slot bucket of 32-bit fingerprints hold `fp`?
#[inline(always)]
pub(crate) fn pair_u32(a: u128, b: u128, fp: u32) -> bool {
    // SAFETY: NEON is part of the aarch64 baseline; register-only intrinsics.
    #[allow(unused_unsafe)]
    unsafe {
        let needle = vdupq_n_u32(fp);
        let va = vcombine_u32(vcreate_u32(a as u64), vcreate_u32((a >> 64) as u64));
        let vb = vcombine_u32(vcreate_u32(b as u64), vcreate_u32((b >> 64) as u64));
        vmaxvq_u32(vorrq_u32(vceqq_u32(va, needle), vceqq_u32(vb, needle))) != 0
    }
}
