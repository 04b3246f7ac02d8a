//! SIMD comparison of one fingerprint against both candidate buckets at once.
//!
//! Every backend works on bucket words that were already loaded atomically
//! (see `fingerprint.rs`), so no SIMD instruction ever touches shared memory
//! and there is no data race to reason about. Each backend answers exactly
//! "does any of the eight slots equal `fp`": no has-zero-byte approximations,
//! which would raise the false-positive rate.
//!
//! Layout follows hashbrown's per-architecture `Group` files: one file per
//! instruction set, each exporting the same three functions
//! (`pair_u8`, `pair_u16`, `pair_u32`), chosen at compile time by
//! `cfg(target_feature)`:
//!
//! | target                       | 8-bit | 16-bit | 32-bit |
//! |------------------------------|-------|--------|--------|
//! | x86-64 (SSE2 is baseline)    | SSE2  | SSE2   | SSE2, or AVX2 when compiled with `+avx2` |
//! | aarch64 (NEON is baseline)   | NEON  | NEON   | NEON   |
//! | anything else, loom, or `--cfg concurrent_cuckoo_portable` | portable | portable | portable |
//!
//! Runtime detection of AVX2 does not pay here: the 32-bit probe is two
//! 128-bit compares with SSE2 versus one 256-bit compare with AVX2, a saving
//! smaller than the indirect call or branch that dispatch would add. The AVX2
//! code is still compiled on every x86-64 build so the backend test can check
//! it on machines that have it.

// Not every backend is selected on every target, but each is compiled where
// its instruction set exists so the backend test can check it.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) mod portable;

#[cfg(target_arch = "x86_64")]
#[cfg_attr(
    any(
        test,
        concurrent_cuckoo_loom,
        concurrent_cuckoo_portable,
        // Its 32-bit probe gives way to AVX2's.
        target_feature = "avx2"
    ),
    allow(dead_code)
)]
pub(crate) mod sse2;

#[cfg(target_arch = "x86_64")]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) mod avx2;

#[cfg(target_arch = "aarch64")]
#[cfg_attr(
    any(test, concurrent_cuckoo_loom, concurrent_cuckoo_portable),
    allow(dead_code)
)]
pub(crate) mod neon;

#[cfg(all(
    target_arch = "x86_64",
    not(concurrent_cuckoo_loom),
    not(concurrent_cuckoo_portable)
))]
mod active {
    #[cfg(target_feature = "avx2")]
    pub(crate) use super::avx2::pair_u32_enabled as pair_u32;
    #[cfg(not(target_feature = "avx2"))]
    pub(crate) use super::sse2::pair_u32;
    pub(crate) use super::sse2::{pair_u16, pair_u8};
    #[cfg(not(target_feature = "avx2"))]
    pub(crate) const NAME: &str = "sse2";
    #[cfg(target_feature = "avx2")]
    pub(crate) const NAME: &str = "sse2+avx2";
}

#[cfg(all(
    target_arch = "aarch64",
    not(concurrent_cuckoo_loom),
    not(concurrent_cuckoo_portable)
))]
mod active {
    pub(crate) use super::neon::{pair_u16, pair_u32, pair_u8};
    pub(crate) const NAME: &str = "neon";
}

#[cfg(any(
    not(any(target_arch = "x86_64", target_arch = "aarch64")),
    concurrent_cuckoo_loom,
    concurrent_cuckoo_portable
))]
mod active {
    pub(crate) use super::portable::{pair_u16, pair_u32, pair_u8};
    pub(crate) const NAME: &str = "portable";
}

pub(crate) use active::{pair_u16, pair_u32, pair_u8};

/// Name of the probe backend compiled into this build: `"sse2"`,
/// `"sse2+avx2"`, `"neon"` or `"portable"`.
pub const BACKEND: &str = active::NAME;

#[cfg(test)]
mod tests;
