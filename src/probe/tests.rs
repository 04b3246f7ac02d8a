//! Every backend available on this machine must agree with a scalar
//! reference on random buckets, including buckets with planted matches,
//! empty slots and near-miss values (one bit off).

use super::*;

use crate::test_rng::Rng;

/// The obvious definition: unpack every slot of both buckets and compare.
fn reference(a: u128, b: u128, bits: u32, fp: u128) -> bool {
    let mask = (1u128 << bits) - 1;
    let lanes = 4;
    (0..lanes).any(|i| (a >> (i * bits)) & mask == fp || (b >> (i * bits)) & mask == fp)
}

/// Random bucket whose slots are drawn from `fp`, `fp ^ 1`, `fp ^ top bit`,
/// zero and random values, so matches and near misses are frequent.
fn bucket(rng: &mut Rng, bits: u32, fp: u128) -> u128 {
    let mask = (1u128 << bits) - 1;
    let mut word = 0u128;
    for i in 0..4 {
        let slot = match rng.next() % 6 {
            0 => fp,
            1 => fp ^ 1,
            2 => fp ^ (1 << (bits - 1)),
            3 => 0,
            _ => u128::from(rng.next()) & mask,
        };
        word |= (slot & mask) << (i * bits);
    }
    word
}

type Backend8 = (&'static str, fn(u32, u32, u8) -> bool);
type Backend16 = (&'static str, fn(u64, u64, u16) -> bool);
type Backend32 = (&'static str, fn(u128, u128, u32) -> bool);

// On targets without SIMD backends nothing is pushed after construction.
#[cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "aarch64")),
    allow(unused_mut)
)]
fn backends() -> (Vec<Backend8>, Vec<Backend16>, Vec<Backend32>) {
    let mut b8: Vec<Backend8> = vec![("portable", portable::pair_u8), ("active", pair_u8)];
    let mut b16: Vec<Backend16> = vec![("portable", portable::pair_u16), ("active", pair_u16)];
    let mut b32: Vec<Backend32> = vec![("portable", portable::pair_u32), ("active", pair_u32)];
    #[cfg(target_arch = "x86_64")]
    {
        b8.push(("sse2", sse2::pair_u8));
        b16.push(("sse2", sse2::pair_u16));
        b32.push(("sse2", sse2::pair_u32));
        if std::is_x86_feature_detected!("avx2") {
            fn avx2_u32(a: u128, b: u128, fp: u32) -> bool {
                // SAFETY: only registered after runtime detection found AVX2.
                unsafe { avx2::pair_u32(a, b, fp) }
            }
            b32.push(("avx2", avx2_u32));
        }
    }
    #[cfg(target_arch = "aarch64")]
    {
        b8.push(("neon", neon::pair_u8));
        b16.push(("neon", neon::pair_u16));
        b32.push(("neon", neon::pair_u32));
    }
    (b8, b16, b32)
}

#[test]
fn every_backend_matches_the_scalar_reference() {
    let (b8, b16, b32) = backends();
    let mut rng = Rng(0x5EED);
    let (mut hits, mut misses) = (0u32, 0u32);
    for _ in 0..200_000 {
        let fp8 = (rng.next() as u8).max(1);
        let (a, b) = (
            bucket(&mut rng, 8, fp8.into()),
            bucket(&mut rng, 8, fp8.into()),
        );
        let want = reference(a, b, 8, fp8.into());
        for (name, f) in &b8 {
            assert_eq!(
                f(a as u32, b as u32, fp8),
                want,
                "{name} u8 a={a:#x} b={b:#x} fp={fp8:#x}"
            );
        }

        let fp16 = (rng.next() as u16).max(1);
        let (a, b) = (
            bucket(&mut rng, 16, fp16.into()),
            bucket(&mut rng, 16, fp16.into()),
        );
        let want16 = reference(a, b, 16, fp16.into());
        for (name, f) in &b16 {
            assert_eq!(
                f(a as u64, b as u64, fp16),
                want16,
                "{name} u16 a={a:#x} b={b:#x} fp={fp16:#x}"
            );
        }

        let fp32 = (rng.next() as u32).max(1);
        let (a, b) = (
            bucket(&mut rng, 32, fp32.into()),
            bucket(&mut rng, 32, fp32.into()),
        );
        let want32 = reference(a, b, 32, fp32.into());
        for (name, f) in &b32 {
            assert_eq!(
                f(a, b, fp32),
                want32,
                "{name} u32 a={a:#x} b={b:#x} fp={fp32:#x}"
            );
        }
        if want16 {
            hits += 1
        } else {
            misses += 1
        }
    }
    assert!(
        hits > 10_000 && misses > 10_000,
        "the generator must exercise both outcomes"
    );
}

#[test]
fn a_match_in_any_single_slot_is_found() {
    let (b8, b16, b32) = backends();
    for slot in 0..8u32 {
        let (fp8, fp16, fp32) = (0xA5u8, 0xA5A5u16, 0xA5A5_A5A5u32);
        let place = |bits: u32, fp: u128| -> (u128, u128) {
            let word = fp << ((slot % 4) * bits);
            if slot < 4 {
                (word, 0)
            } else {
                (0, word)
            }
        };
        let (a, b) = place(8, fp8.into());
        for (name, f) in &b8 {
            assert!(f(a as u32, b as u32, fp8), "{name} u8 slot {slot}");
            assert!(
                !f(a as u32, b as u32, fp8 ^ 0x10),
                "{name} u8 slot {slot} near miss"
            );
        }
        let (a, b) = place(16, fp16.into());
        for (name, f) in &b16 {
            assert!(f(a as u64, b as u64, fp16), "{name} u16 slot {slot}");
            assert!(
                !f(a as u64, b as u64, fp16 ^ 0x100),
                "{name} u16 slot {slot} near miss"
            );
        }
        let (a, b) = place(32, fp32.into());
        for (name, f) in &b32 {
            assert!(f(a, b, fp32), "{name} u32 slot {slot}");
            assert!(
                !f(a, b, fp32 ^ 0x1_0000),
                "{name} u32 slot {slot} near miss"
            );
        }
    }
}

#[test]
fn active_backend_is_expected() {
    #[cfg(concurrent_cuckoo_portable)]
    let expected = "portable";
    #[cfg(all(not(concurrent_cuckoo_portable), target_arch = "aarch64"))]
    let expected = "neon";
    #[cfg(all(
        not(concurrent_cuckoo_portable),
        target_arch = "x86_64",
        not(target_feature = "avx2")
    ))]
    let expected = "sse2";
    #[cfg(all(
        not(concurrent_cuckoo_portable),
        target_arch = "x86_64",
        target_feature = "avx2"
    ))]
    let expected = "sse2+avx2";
    #[cfg(all(
        not(concurrent_cuckoo_portable),
        not(any(target_arch = "x86_64", target_arch = "aarch64"))
    ))]
    let expected = "portable";
    assert_eq!(BACKEND, expected);
    println!("active probe backend: {BACKEND}");
}
