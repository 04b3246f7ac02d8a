//! Portable probe: exact lane-by-lane comparison on plain integers.
//!
//! Used on targets without SSE2 or NEON, under loom, and when forced with
//! `--cfg concurrent_cuckoo_portable`. The loops have constant trip counts,
//! so the compiler unrolls them into straight-line compares.

#[inline(always)]
fn any_lane<const LANES: u32, const BITS: u32>(word: u128, fp: u128) -> bool {
    let mask = (1u128 << BITS) - 1;
    let mut hit = false;
    let mut lane = 0;
    while lane < LANES {
        hit |= (word >> (lane * BITS)) & mask == fp;
        lane += 1;
    }
    hit
}

/// Does either four-slot bucket of 8-bit fingerprints hold `fp`?
#[inline(always)]
pub(crate) fn pair_u8(a: u32, b: u32, fp: u8) -> bool {
    let both = (u64::from(b) << 32) | u64::from(a);
    any_lane::<8, 8>(u128::from(both), u128::from(fp))
}

/// Does either four-slot bucket of 16-bit fingerprints hold `fp`?
#[inline(always)]
pub(crate) fn pair_u16(a: u64, b: u64, fp: u16) -> bool {
    let both = (u128::from(b) << 64) | u128::from(a);
    any_lane::<8, 16>(both, u128::from(fp))
}

/// Does either four-slot bucket of 32-bit fingerprints hold `fp`?
#[inline(always)]
pub(crate) fn pair_u32(a: u128, b: u128, fp: u32) -> bool {
    any_lane::<4, 32>(a, u128::from(fp)) | any_lane::<4, 32>(b, u128::from(fp))
}
