//! `WindowedCuckooFilter`: the window's exact semantics against a model
//! (proptest), refresh, build errors, memory against `CuckooFilter`, and a
//! soak of 10,000 generations at capacity with the most churn.

use concurrent_cuckoo::{BuildError, CuckooFilter, WindowedCuckooFilter};
use proptest::prelude::*;
use std::collections::HashMap;
use std::time::Instant;

fn filter(capacity: usize, generations: u64) -> WindowedCuckooFilter {
    WindowedCuckooFilter::builder()
        .capacity(capacity)
        .generations(generations)
        .seed(41)
        .build()
        .unwrap()
}

#[test]
fn a_key_lives_exactly_g_generations_after_its_last_insert() {
    for g in 1..=5u64 {
        let f = filter(1000, g);
        f.insert("k").unwrap();
        for _ in 1..g {
            f.advance();
            assert!(f.contains("k"), "G = {g}, generation {}", f.generation());
        }
        // Refreshed in generation G - 1: lives through 2G - 2.
        f.insert("k").unwrap();
        for _ in 0..g - 1 {
            f.advance();
            assert!(f.contains("k"));
        }
        f.advance();
        assert!(!f.contains("k"), "G = {g}: gone at {}", f.generation());
        assert_eq!(f.len(), 0);
        let s = f.stats();
        assert_eq!((s.inserts, s.refreshes), (1, 1));
    }
}

/// Batch calls act as the same single calls, for batches around the
/// lookups' stages of 32 and longer, in both lane widths, with keys live,
/// expired and never inserted mixed, and refreshes in the insert batches.
#[test]
fn batches_act_as_single_calls() {
    for (generations, rate) in [(4u64, 1e-3), (40, 1e-6)] {
        let build = || {
            WindowedCuckooFilter::builder()
                .capacity(20_000)
                .generations(generations)
                .false_positive_rate(rate)
                .seed(43)
                .build()
                .unwrap()
        };
        let (batched, single) = (build(), build());
        let mut next = 0u64;
        for round in 0..3 * generations {
            let len = [0usize, 1, 31, 32, 33, 64, 65, 97, 1000][round as usize % 9];
            // Half new keys, half keys of earlier rounds (refreshes).
            let keys: Vec<u64> = (0..len as u64)
                .map(|i| if i % 2 == 0 { next + i } else { (next + i) / 3 })
                .collect();
            next += len as u64;
            batched.insert_batch(&keys).unwrap();
            for k in &keys {
                single.insert(k).unwrap();
            }
            assert_eq!(batched.to_bytes(), single.to_bytes(), "round {round}");
            // Live, expired and absent keys alike.
            let probes: Vec<u64> = (0..len as u64 + 40)
                .map(|i| (i * 7919) % (next + 100))
                .collect();
            let mut out = vec![false; probes.len()];
            batched.contains_batch(&probes, &mut out);
            let want: Vec<bool> = probes.iter().map(|k| single.contains(k)).collect();
            assert_eq!(out, want, "round {round}");
            batched.advance();
            single.advance();
        }
    }
}

#[test]
fn build_errors_are_typed() {
    let b = || WindowedCuckooFilter::builder().capacity(100);
    assert_eq!(
        b().generations(0).build().unwrap_err(),
        BuildError::InvalidGenerations {
            generations: 0,
            max: 253
        }
    );
    assert_eq!(
        b().generations(254).build().unwrap_err(),
        BuildError::InvalidGenerations {
            generations: 254,
            max: 253
        }
    );
    // 29 generations fit 16-bit lanes, 30 take 32-bit ones; so does a
    // window 16-bit lanes hold at a rate only 32-bit ones reach.
    assert_eq!(b().generations(29).build().unwrap().lane_bits(), 16);
    assert_eq!(b().generations(30).build().unwrap().lane_bits(), 32);
    let wide = b()
        .generations(6)
        .false_positive_rate(1e-3)
        .build()
        .unwrap();
    assert_eq!((wide.lane_bits(), wide.tag_bits()), (32, 4));
    // At the limits: the most generations a rate allows, and rates that
    // leave no room for a tag at all.
    for (rate, max) in [(1e-6, 253), (1e-7, 61), (1e-8, 5), (1e-9, 0)] {
        assert_eq!(
            b().generations(254)
                .false_positive_rate(rate)
                .build()
                .unwrap_err(),
            BuildError::InvalidGenerations {
                generations: 254,
                max
            },
            "rate {rate}"
        );
        if max > 0 {
            let f = b()
                .generations(max)
                .false_positive_rate(rate)
                .build()
                .unwrap();
            assert!(f.false_positive_bound() <= rate, "rate {rate}");
        }
    }
    let err = b().false_positive_rate(1e-9).build().unwrap_err();
    assert!(
        err.to_string().contains("at least 4/2^29, about 7.451e-9"),
        "{err}"
    );
    for rate in [0.0, 1.0, -1.0, f64::NAN] {
        assert!(matches!(
            b().false_positive_rate(rate).build().unwrap_err(),
            BuildError::InvalidFalsePositiveRate(_)
        ));
    }
    assert!(matches!(
        WindowedCuckooFilter::builder()
            .capacity(usize::MAX)
            .build()
            .unwrap_err(),
        BuildError::CapacityOverflow { .. }
    ));
    assert_eq!(
        WindowedCuckooFilter::builder().build().unwrap_err(),
        BuildError::MissingCapacity
    );
    // Every valid window gets the fewest tag bits that hold it, and the
    // rate's bound holds.
    for (g, rate, tag_bits) in [(5, 1e-3, 3), (13, 2e-3, 4), (29, 4e-3, 5), (1, 0.5, 3)] {
        let f = b()
            .generations(g)
            .false_positive_rate(rate)
            .build()
            .unwrap();
        assert_eq!(f.tag_bits(), tag_bits, "G = {g}");
        assert!(f.false_positive_bound() <= rate);
    }
}

#[test]
fn memory_is_within_115_percent_of_the_plain_filter() {
    for capacity in [1_000usize, 100_000, 1_000_000, 10_000_000] {
        let plain = CuckooFilter::builder()
            .capacity(capacity)
            .false_positive_rate(1e-3)
            .build()
            .unwrap();
        let w = WindowedCuckooFilter::builder()
            .capacity(capacity)
            .false_positive_rate(1e-3)
            .build()
            .unwrap();
        let ratio = w.memory_usage() as f64 / plain.memory_usage() as f64;
        println!(
            "capacity {capacity}: windowed {} bytes, plain {} bytes, ratio {ratio:.4}",
            w.memory_usage(),
            plain.memory_usage()
        );
        assert!(ratio <= 1.15, "{capacity}: {ratio}");
    }
}

/// `try_empty_at` past the window is `advance_to` without the sweep: the
/// same bytes, the same answers, whatever the fill and the gap, for every
/// window size.
#[test]
fn an_empty_filter_at_a_generation_is_what_advance_to_leaves_when_all_expired() {
    for generations in [1usize, 2, 4] {
        for gap in [generations as u64, generations as u64 + 1, 50, 1 << 40] {
            let f = filter(2000, generations as u64);
            for i in 0..1500u64 {
                f.insert(&i).unwrap();
                if i % 500 == 0 {
                    f.advance();
                }
            }
            let target = f.generation() + gap;
            let fresh = f.try_empty_at(target).unwrap();
            assert_eq!(f.advance_to(target), fresh.generation());
            assert_eq!(fresh.to_bytes(), f.to_bytes(), "G {generations}, gap {gap}");
            assert!(fresh.is_empty() && (0..1500u64).all(|i| !fresh.contains(&i)));
            fresh.insert(&7u64).unwrap();
            f.insert(&7u64).unwrap();
            assert_eq!(fresh.to_bytes(), f.to_bytes());
        }
    }
}

#[test]
fn advance_to_skips_long_gaps_with_the_same_answers() {
    let f = filter(1000, 4);
    let slow = filter(1000, 4);
    for (i, target) in [3u64, 5, 40, 41, 1000, 1003, 100_000]
        .into_iter()
        .enumerate()
    {
        for k in 0..50u64 {
            f.insert(&(i as u64, k)).unwrap();
            slow.insert(&(i as u64, k)).unwrap();
        }
        assert_eq!(f.advance_to(target), target);
        while slow.generation() < target {
            slow.advance();
        }
        assert_eq!(f.len(), slow.len(), "at {target}");
        for j in 0..=i as u64 {
            for k in 0..50u64 {
                assert_eq!(f.contains(&(j, k)), slow.contains(&(j, k)));
            }
        }
    }
    assert_eq!(f.advance_to(5), 100_000);
}

/// The cap (issue 49 item 2, issue 50 item 8): generations stop at
/// `2^63 - 1`; each advance from there, and each `advance_to` past it,
/// expires every key (none is immortal), and a filter at the cap saves
/// bytes it loads again.
#[test]
fn at_the_generation_cap_keys_still_expire_and_the_filter_reloads() {
    const CAP: u64 = (1 << 63) - 1;
    let f = filter(1000, 4);
    f.insert("early").unwrap();
    assert_eq!(f.advance_to(CAP - 2), CAP - 2);
    assert!(!f.contains("early") && f.is_empty());
    f.insert("near").unwrap();
    assert_eq!(f.advance(), CAP - 1);
    assert_eq!(f.advance(), CAP);
    assert!(f.contains("near") && f.len() == 1);
    assert!(f.contains_at("near", CAP) && !f.contains_at("near", CAP + 1));
    assert_eq!((f.len_at(CAP), f.len_at(u64::MAX)), (1, 0));
    let copy = WindowedCuckooFilter::from_bytes(&f.to_bytes()).unwrap();
    assert!(copy.contains("near") && copy.generation() == CAP);
    // An advance at the cap: every key expires, the generation stays.
    assert_eq!(f.advance(), CAP);
    assert!(!f.contains("near") && f.is_empty());
    f.insert("at the cap").unwrap();
    assert!(f.contains("at the cap"));
    assert_eq!(f.advance_to(CAP), CAP); // not past the cap: nothing expires
    assert!(f.contains("at the cap"));
    assert_eq!(f.advance_to(u64::MAX), CAP); // past it: everything does
    assert!(!f.contains("at the cap") && f.is_empty());
    // From far below, a target past the cap lands on it, empty.
    let g = filter(1000, 4);
    g.insert("k").unwrap();
    assert_eq!(g.advance_to(u64::MAX), CAP);
    assert!(!g.contains("k") && g.is_empty());
    g.insert("k").unwrap();
    let bytes = g.to_bytes();
    let copy = WindowedCuckooFilter::from_bytes(&bytes).unwrap();
    assert!(copy.contains("k") && copy.generation() == CAP);
    assert_eq!(copy.advance(), CAP);
    assert!(!copy.contains("k"));
}

/// A jump by any distance answers as the same number of single advances,
/// for keys inserted at every age (the skip it replaced kept keys alive
/// across jumps by multiples of `M`), and costs one pass: the stats count
/// the lanes it cleared.
#[test]
fn advance_to_answers_as_single_advances_for_every_distance() {
    // 16-bit lanes, then 32-bit ones (more than 5 tag bits, or asked).
    let layouts = [
        (16, 2u32, 1usize),
        (16, 3, 2),
        (16, 3, 4),
        (16, 3, 5),
        (16, 4, 9),
    ]
    .into_iter()
    .chain([(16, 5, 29), (32, 3, 4), (32, 6, 40), (32, 8, 253)]);
    for (lane_bits, tag_bits, g) in layouts {
        let m = 1u64 << tag_bits;
        // Every distance up to 3 M + 2 for the narrow tags; around the
        // slack, the window and M (and their multiples) for the wide ones.
        let slack = m - 1 - g as u64;
        let jumps: Vec<u64> = (2..=(3 * m + 2))
            .filter(|&j| {
                m <= 32
                    || j % 31 == 0
                    || [slack, g as u64, m, 2 * m, 3 * m]
                        .iter()
                        .any(|&x| j.abs_diff(x) <= 2)
            })
            .collect();
        for jump in jumps {
            let build = || {
                WindowedCuckooFilter::builder()
                    .capacity(8 * m as usize + 100)
                    .lane_bits(lane_bits)
                    .tag_bits(tag_bits)
                    .generations(g as u64)
                    .seed(3)
                    .build()
                    .unwrap()
            };
            let (fast, slow) = (build(), build());
            // Keys of every age in the window and beyond it.
            for age in 0..m {
                for k in 0..8u64 {
                    fast.insert(&(age, k)).unwrap();
                    slow.insert(&(age, k)).unwrap();
                }
                fast.advance();
                slow.advance();
            }
            let target = fast.generation() + jump;
            assert_eq!(fast.advance_to(target), target);
            while slow.generation() < target {
                slow.advance();
            }
            assert_eq!(fast.len(), slow.len(), "M {m}, G {g}, jump {jump}");
            for age in 0..m {
                for k in 0..8u64 {
                    assert_eq!(
                        fast.contains(&(age, k)),
                        slow.contains(&(age, k)),
                        "M {m}, G {g}, jump {jump}, key of age {age}"
                    );
                }
            }
            // Both tables canonical at the target: the same bytes.
            assert_eq!(
                fast.to_bytes(),
                slow.to_bytes(),
                "M {m}, G {g}, jump {jump}"
            );
        }
    }
}

/// The operations of the model test.
#[derive(Clone, Debug)]
enum Op {
    Insert(u64),
    Advance,
    AdvanceTo(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..48u64).prop_map(Op::Insert),
        3 => Just(Op::Advance),
        1 => (0..40u64).prop_map(Op::AdvanceTo),
    ]
}

/// Checks `f` against the model `last` (key -> generation of its last
/// insert) exactly: live keys are found; a key found that is not live
/// shares fingerprint and bucket pair with a live one (the only false
/// positives); `len` counts the live signatures.
fn check(f: &WindowedCuckooFilter, last: &HashMap<u64, u64>) {
    let cur = f.generation();
    let g = f.generations();
    let live = |k: &u64| last.get(k).is_some_and(|&t| cur < t + g);
    let sig = |k: &u64| f.signature_of_hash(f.hasher().hash_one(k));
    let live_sigs: std::collections::HashSet<_> =
        last.keys().filter(|k| live(k)).map(sig).collect();
    for k in 0..48u64 {
        let found = f.contains(&k);
        if live(&k) {
            assert!(
                found,
                "live key {k} (last inserted {:?}) lost at {cur}",
                last.get(&k)
            );
        } else if found {
            assert!(
                live_sigs.contains(&sig(&k)),
                "expired key {k} found at {cur}"
            );
        }
    }
    assert_eq!(f.len(), live_sigs.len(), "len at {cur}");
    // Answers as of later generations, changing nothing.
    for ahead in 1..=g + 1 {
        let at = cur + ahead;
        let live_at = |k: &u64| last.get(k).is_some_and(|&t| at < t + g);
        let sigs_at: std::collections::HashSet<_> =
            last.keys().filter(|k| live_at(k)).map(sig).collect();
        for k in 0..48u64 {
            let found = f.contains_at(&k, at);
            if live_at(&k) {
                assert!(found, "key {k} live at {at} not found from {cur}");
            } else if found {
                assert!(sigs_at.contains(&sig(&k)), "key {k} expired at {at} found");
            }
        }
        assert_eq!(f.len_at(at), sigs_at.len(), "len_at({at}) at {cur}");
    }
    assert_eq!(f.generation(), cur);
    // No lane's true age reached M - 1 (it would read as live, tagged
    // "next generation", and the scan would count it; `len` does not).
    assert_eq!(
        f.scan_lanes().1,
        f.len(),
        "an expired lane came back at {cur}"
    );
}

use std::hash::BuildHasher;

/// What happens to a second copy of the filter in the copies test.
#[derive(Clone, Debug)]
enum CopyOp {
    /// Applied to both copies.
    Both(Op),
    /// The second copy sweeps ahead (the first does not).
    SweepAhead(usize),
    /// The second copy is replaced by a reload of itself.
    Reload,
}

fn copy_op() -> impl Strategy<Value = CopyOp> {
    prop_oneof![
        8 => op().prop_map(CopyOp::Both),
        2 => (1..64usize).prop_map(CopyOp::SweepAhead),
        1 => Just(CopyOp::Reload),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_window_matches_a_model(
        g in 1..=5usize,
        lane_bits in prop_oneof![Just(16u32), Just(32)],
        ops in proptest::collection::vec(op(), 1..300),
    ) {
        // 48 keys, capacity 48: never more live than the capacity.
        let f = WindowedCuckooFilter::builder()
            .capacity(48)
            .generations(g as u64)
            .lane_bits(lane_bits)
            .seed(7)
            .build()
            .unwrap();
        let mut last = HashMap::new();
        for op in ops {
            match op {
                Op::Insert(k) => {
                    prop_assert_eq!(f.insert(&k), Ok(()));
                    last.insert(k, f.generation());
                }
                Op::Advance => {
                    f.advance();
                }
                Op::AdvanceTo(jump) => {
                    f.advance_to(f.generation() + jump);
                }
            }
            check(&f, &last);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Two copies given the same inserts and advances, one of which sweeps
    /// at other moments and is reloaded from its own bytes now and then,
    /// save the same bytes and answer alike after every step: what a
    /// server's primary, replica and reloaded copies rely on. (Before
    /// expired lanes were treated exactly as empty ones, an insert
    /// refreshed an expired lane of its fingerprint in place on one copy
    /// and took the first free lane on a copy that had swept it.)
    #[test]
    fn copies_that_sweep_at_other_moments_stay_identical(
        g in 1..=5usize,
        lane_bits in prop_oneof![Just(16u32), Just(32)],
        ops in proptest::collection::vec(copy_op(), 1..300),
    ) {
        let build = || {
            WindowedCuckooFilter::builder()
                .capacity(48)
                .generations(g as u64)
                .lane_bits(lane_bits)
                .seed(9)
                .build()
                .unwrap()
        };
        let a = build();
        let mut b = build();
        for op in ops {
            match op {
                CopyOp::Both(Op::Insert(k)) => {
                    prop_assert_eq!(a.insert(&k), Ok(()));
                    prop_assert_eq!(b.insert(&k), Ok(()));
                }
                CopyOp::Both(Op::Advance) => {
                    a.advance();
                    b.advance();
                }
                CopyOp::Both(Op::AdvanceTo(jump)) => {
                    let to = a.generation() + jump;
                    a.advance_to(to);
                    b.advance_to(to);
                }
                CopyOp::SweepAhead(n) => {
                    b.sweep_ahead(n);
                }
                CopyOp::Reload => {
                    b = WindowedCuckooFilter::from_bytes(&b.to_bytes()).unwrap();
                }
            }
            prop_assert_eq!(a.to_bytes(), b.to_bytes());
            prop_assert_eq!(a.len(), b.len());
            for k in 0..48u64 {
                prop_assert_eq!(a.contains(&k), b.contains(&k));
            }
        }
    }
}

/// Inserts sweep the slice ahead of the advance: after a generation of
/// `capacity` inserts there is nothing left for `advance` to sweep, and
/// `sweep_ahead` sweeps the next slice in the steps asked for.
#[test]
fn inserts_sweep_the_slice_before_the_advance() {
    let f = filter(100_000, 4);
    // One slice holds a third of the buckets (M = 8, G = 4: P = 3).
    let slice = f.slots() / 4 / 3;
    assert!(f.sweep_ahead(10) == 10);
    for k in 0..100_000u64 {
        f.insert(&k).unwrap();
    }
    assert_eq!(f.sweep_ahead(1), 0, "inserts left part of the slice");
    f.advance();
    let mut swept = 0;
    loop {
        match f.sweep_ahead(1000) {
            0 => break,
            n => {
                assert!(n <= 1000);
                swept += n;
            }
        }
    }
    assert!(swept.abs_diff(slice) <= 1, "{swept} of {slice}");
    // Lanes expire and the sweep clears them ahead of the advances.
    for _ in 0..8 {
        f.advance();
        while f.sweep_ahead(4096) > 0 {}
    }
    assert_eq!((f.len(), f.scan_lanes()), (0, (0, 0)));
    assert!(f.stats().swept >= 99_000, "{:?}", f.stats());
}

/// 10,000 generations at capacity with the most churn: every generation
/// inserts `capacity / G` new keys, so every key is live exactly `G`
/// generations and then replaced, and `capacity` keys are live at every
/// advance. No insert is refused, memory never changes, the keys of the
/// oldest live generation are all found, and expired keys are found no
/// more often than the false-positive bound allows.
#[test]
fn soak_10000_generations_at_capacity() {
    soak_at_capacity(4096, 4, 1e-3, 10_000, 16);
}

/// The soak in 32-bit lanes: a rate 16-bit lanes do not reach, with a
/// short window and with one of 100 generations (41 keys each).
#[test]
fn soak_wide_lanes_at_capacity() {
    soak_at_capacity(4096, 4, 1e-6, 3_000, 32);
    soak_at_capacity(4100, 100, 1e-6, 1_000, 0);
}

/// `generations` generations of the soak above: `capacity` keys live,
/// `capacity / g` replaced a generation; a lane width's checks.
fn soak_at_capacity(capacity: usize, g: usize, rate: f64, generations: u64, lane_bits: u32) {
    let f = WindowedCuckooFilter::builder()
        .capacity(capacity)
        .generations(g as u64)
        .false_positive_rate(rate)
        .seed(3)
        .build()
        .unwrap();
    if lane_bits != 0 {
        assert_eq!(f.lane_bits(), lane_bits);
    }
    let memory = f.memory_usage();
    let per_gen = (capacity / g) as u64;
    let key = |gen: u64, i: u64| gen << 32 | i;
    let start = Instant::now();
    for gen in 0..generations {
        assert_eq!(f.generation(), gen);
        for i in 0..per_gen {
            if let Err(e) = f.insert(&key(gen, i)) {
                panic!(
                    "generation {gen}: insert {i} refused: {e:?} at {} live",
                    f.len()
                );
            }
        }
        if gen % 16 == 0 && gen >= g as u64 - 1 {
            let oldest = gen + 1 - g as u64;
            assert!(
                (0..per_gen).all(|i| f.contains(&key(oldest, i))),
                "generation {gen}"
            );
            let len = f.len();
            assert!(len <= capacity && len + 8 >= capacity, "len {len} at {gen}");
            assert_eq!(f.scan_lanes().1, len, "an expired lane came back at {gen}");
        }
        f.advance();
        assert_eq!(f.memory_usage(), memory);
    }
    let s = f.stats();
    assert_eq!(s.failed_inserts, 0);
    let soak = start.elapsed();
    // Expired keys: from generations long gone (each lookup is a fresh
    // chance of a false positive against a full table); past those, keys
    // of generations not run (never inserted), not the live ones.
    let queries = 1_000_000u64;
    let found = (0..queries)
        .filter(|&x| {
            let gen = x / per_gen;
            let gen = if gen + g as u64 >= generations {
                gen + generations
            } else {
                gen
            };
            f.contains(&key(gen, x % per_gen))
        })
        .count();
    let found = found as f64 / queries as f64;
    println!(
        "soak: {generations} generations of {g}, {} inserts, {} moves, {} lanes swept in \
         {soak:?}; expired keys found {found:.2e} (bound {:.2e}); memory {memory} bytes",
        s.inserts,
        s.relocations,
        s.swept,
        f.false_positive_bound()
    );
    // At a bound of 1e-6 or less a million lookups expect under one
    // false positive: a few are allowed there, none beyond the bound else.
    let allowed = (f.false_positive_bound() * queries as f64).max(3.0);
    assert!(found * queries as f64 <= allowed, "{found}");
    // G more generations: every key has expired.
    for _ in 0..g {
        f.advance();
    }
    assert_eq!(f.len(), 0);
}
