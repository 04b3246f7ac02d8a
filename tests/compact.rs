//! `ScalableCuckooFilter::compact` (issue 31, item 2): levels left with a
//! few items (keys never removed, refused removes) are emptied into other
//! levels of the same geometry and retired, with no item ever missed and
//! copies staying byte-identical.
//!
//! Before `compact` existed, such a level stayed in use for as long as
//! its few items did: `an_old_level_with_a_few_items_stays_in_use_without_compaction`
//! shows it on the scenario that `compact_retires_an_old_level_left_with_a_few_items`
//! compacts.

use concurrent_cuckoo::{CompactStats, ScalableCuckooFilter};
use proptest::prelude::*;
use std::collections::VecDeque;

/// Key `n`'s hash: spread over the whole range.
fn key(n: u64) -> u64 {
    n.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(7)
}

fn filter(initial: usize, growth: usize, rate: f64) -> ScalableCuckooFilter {
    ScalableCuckooFilter::builder()
        .capacity(initial)
        .growth_factor(growth)
        .false_positive_rate(rate)
        .max_levels(8)
        .seed(3)
        .build()
        .unwrap()
}

/// Fills `f` until three levels are in use, then removes every key but
/// the first `keep` (in slot 0) and the last 100: slot 0 is left with a
/// few items it would keep forever. Returns the keys still held.
fn leave_a_few_in_the_first_level(f: &ScalableCuckooFilter, keep: u64) -> Vec<u64> {
    let mut n = 0;
    while f.levels() < 3 {
        f.insert_hash(key(n)).unwrap();
        n += 1;
    }
    for old in keep..n - 100 {
        assert!(
            f.remove_hash(key(old)).is_removed(),
            "key {old} is removable"
        );
    }
    (0..keep).chain(n - 100..n).map(key).collect()
}

/// Share of `n` keys never inserted that `f` answers present for.
fn measured_rate(f: &ScalableCuckooFilter, n: u64) -> f64 {
    let hits = (0..n)
        .filter(|&i| f.contains_hash(key(1 << 40 | i)))
        .count();
    hits as f64 / n as f64
}

#[test]
fn an_old_level_with_a_few_items_stays_in_use_without_compaction() {
    let f = filter(1000, 1, 0.01);
    let held = leave_a_few_in_the_first_level(&f, 10);
    assert_eq!(f.levels(), 3);
    // Even with only the 10 old keys left, their level stays in use.
    for &k in &held[10..] {
        assert!(f.remove_hash(k).is_removed());
    }
    assert_eq!(f.len(), 10);
    assert!(
        f.levels() >= 2,
        "the level holding the 10 keys stays in use"
    );
}

#[test]
fn compact_retires_an_old_level_left_with_a_few_items() {
    let mut f = filter(1000, 1, 0.01);
    let held = leave_a_few_in_the_first_level(&f, 10);
    assert_eq!(f.levels(), 3);
    let len = f.len();
    let memory = f.memory_usage();
    let stats = f.compact();
    // Slot 0 (10 items) moves into slot 1, then slot 1 into slot 2, the
    // current one.
    assert_eq!(f.levels(), 1);
    assert_eq!(stats.levels_retired, 2);
    assert!(stats.fingerprints_moved >= 10);
    assert_eq!(f.memory_usage(), memory - stats.bytes_freed);
    assert!(stats.bytes_freed > 0);
    assert_eq!(f.len(), len);
    assert!(held.iter().all(|&k| f.contains_hash(k)));
    assert!(f.false_positive_bound() <= 0.01);
    assert!(measured_rate(&f, 200_000) <= 0.01);
    // Nothing left to move: a second call changes nothing.
    let bytes = f.to_bytes();
    assert_eq!(f.compact(), CompactStats::default());
    assert!(f.to_bytes() == bytes);
}

#[test]
fn growth_2_moves_nothing_between_levels_of_different_sizes() {
    let mut f = filter(1000, 2, 0.01);
    let held = leave_a_few_in_the_first_level(&f, 10);
    assert_eq!(f.levels(), 3);
    let bytes = f.to_bytes();
    let probes: Vec<bool> = (0..50_000)
        .map(|i| f.contains_hash(key(1 << 40 | i)))
        .collect();
    let stats = f.compact();
    assert_eq!(stats.fingerprints_moved, 0);
    assert_eq!(stats.levels_retired, 0);
    assert_eq!(f.levels(), 3);
    assert!(f.to_bytes() == bytes, "no level changed");
    assert!(held.iter().all(|&k| f.contains_hash(k)));
    let after: Vec<bool> = (0..50_000)
        .map(|i| f.contains_hash(key(1 << 40 | i)))
        .collect();
    assert!(probes == after, "no answer changed");
}

#[derive(Clone, Debug)]
enum Op {
    /// Insert this many new keys.
    Insert(u8),
    /// Remove the oldest keys held.
    RemoveOldest(u8),
    /// Remove the key at this position (modulo) of those held.
    RemoveAt(u16),
    /// Remove all but one in this many of the oldest half of the keys
    /// held: leaves old levels sparse.
    Thin(u8),
    Compact,
    /// Reload the copy from the original's encoding.
    Reload,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (1u8..=200).prop_map(Op::Insert),
        4 => (1u8..=80).prop_map(Op::RemoveOldest),
        2 => any::<u16>().prop_map(Op::RemoveAt),
        2 => (2u8..=16).prop_map(Op::Thin),
        2 => Just(Op::Compact),
        1 => Just(Op::Reload),
    ]
}

fn reload(f: &ScalableCuckooFilter) -> ScalableCuckooFilter {
    ScalableCuckooFilter::from_bytes(&f.to_bytes()).expect("its own encoding decodes")
}

/// Runs `ops` on a filter and a copy, checking against the model (the
/// keys held, each once) after every step: every held key found by both,
/// `len` exact, and the two encodings equal.
fn run(growth: usize, rate: f64, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut original = filter(64, growth, rate);
    let mut copy = reload(&original);
    let mut held: VecDeque<u64> = VecDeque::new();
    let mut next = 0;
    for (step, op) in ops.iter().enumerate() {
        let remove = |k: u64, held: &mut VecDeque<u64>| -> Result<(), TestCaseError> {
            let (a, b) = (original.remove_hash(k), copy.remove_hash(k));
            prop_assert_eq!(a, b, "step {}: remove answered differently", step);
            if !a.is_removed() {
                held.push_back(k); // refused (two levels match): still held
            }
            Ok(())
        };
        match *op {
            Op::Insert(n) => {
                for _ in 0..n {
                    next += 1;
                    let k = key(next);
                    let (a, b) = (original.insert_hash(k), copy.insert_hash(k));
                    prop_assert_eq!(a, b, "step {}: insert answered differently", step);
                    if a.is_ok() {
                        held.push_back(k);
                    }
                }
            }
            Op::RemoveOldest(n) => {
                for _ in 0..n.min(held.len() as u8) {
                    let k = held.pop_front().unwrap();
                    remove(k, &mut held)?;
                }
            }
            Op::RemoveAt(at) => {
                if !held.is_empty() {
                    let k = held.remove(at as usize % held.len()).unwrap();
                    remove(k, &mut held)?;
                }
            }
            Op::Thin(n) => {
                let half = held.len() / 2;
                let old: Vec<u64> = held.drain(..half).collect();
                for (i, k) in old.into_iter().enumerate() {
                    if i % n as usize == 0 {
                        held.push_back(k);
                    } else {
                        remove(k, &mut held)?;
                    }
                }
            }
            Op::Compact => {
                let (len, levels) = (original.len(), original.levels());
                let (a, b) = (original.compact(), copy.compact());
                prop_assert_eq!(a.fingerprints_moved, b.fingerprints_moved);
                prop_assert_eq!(a.levels_retired, b.levels_retired);
                prop_assert_eq!(original.len(), len);
                prop_assert_eq!(original.levels(), levels - a.levels_retired);
            }
            Op::Reload => copy = reload(&original),
        }
        prop_assert_eq!(original.len(), held.len(), "step {} ({:?}): len", step, op);
        prop_assert_eq!(
            copy.len(),
            held.len(),
            "step {} ({:?}): copy's len",
            step,
            op
        );
        for &k in &held {
            prop_assert!(
                original.contains_hash(k),
                "step {} ({:?}): a held key is missed",
                step,
                op
            );
            prop_assert!(
                copy.contains_hash(k),
                "step {} ({:?}): the copy misses a held key",
                step,
                op
            );
        }
        prop_assert!(
            original.to_bytes() == copy.to_bytes(),
            "step {} ({:?}): the encodings differ",
            step,
            op
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Growth 1 (every slot of one geometry at rate 0.01: compaction
    /// moves), growth 2 (levels of different sizes: it moves nothing
    /// between them), and a rate where slot widths differ (8 bits, then
    /// 16).
    #[test]
    fn churn_with_compaction_matches_a_model_and_copies_stay_identical(
        growth in 1usize..=2,
        rate in prop_oneof![Just(0.01), Just(0.1)],
        ops in proptest::collection::vec(op(), 1..80),
    ) {
        run(growth, rate, &ops)?;
    }
}

/// A long window (growth 1) in which one key a round is never removed,
/// compacted every 10 rounds, with a copy reloaded once mid-way: the
/// encodings stay equal after every round.
#[test]
fn copies_encode_identically_through_a_window_with_compaction() {
    let mut original = filter(500, 1, 0.01);
    let mut copy = reload(&original);
    let mut held: VecDeque<u64> = VecDeque::new();
    let mut pinned = Vec::new();
    let mut next = 0;
    let mut moved = 0;
    for round in 0..200 {
        for _ in 0..250 {
            next += 1;
            let k = key(next);
            original.insert_hash(k).unwrap();
            copy.insert_hash(k).unwrap();
            held.push_back(k);
        }
        pinned.push(held.pop_back().unwrap());
        while held.len() > 750 {
            let k = held.pop_front().unwrap();
            let (a, b) = (original.remove_hash(k), copy.remove_hash(k));
            assert_eq!(a, b);
            if !a.is_removed() {
                held.push_back(k);
            }
        }
        if round % 10 == 9 {
            let (a, b) = (original.compact(), copy.compact());
            assert_eq!(a.fingerprints_moved, b.fingerprints_moved);
            moved += a.fingerprints_moved;
        }
        if round == 50 {
            copy = reload(&original);
        }
        assert!(
            original.to_bytes() == copy.to_bytes(),
            "round {round}: the encodings differ"
        );
        assert_eq!(original.len(), held.len() + pinned.len());
    }
    assert!(held
        .iter()
        .chain(&pinned)
        .all(|&k| original.contains_hash(k) && copy.contains_hash(k)));
    assert!(moved > 0, "compaction moved something");
}
