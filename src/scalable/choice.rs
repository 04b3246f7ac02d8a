//! Which copy a growing filter's remove takes (see "Removing keys across
//! levels" in `mod.rs`): found without searching every level when the
//! levels nest ([`ScalableCuckooFilter::finest_holder`]), and by the
//! general rule otherwise ([`ScalableCuckooFilter::general_holder`]).

use super::slots::{Level, LevelHash};
use super::ScalableCuckooFilter;

/// What [`ScalableCuckooFilter::finest_holder`] found.
pub(super) enum Finest<'a> {
    /// The level (and its slot) whose copy stands for the key.
    Holder(usize, &'a Level),
    /// No level in use holds the key's fingerprint.
    NoHolder,
    /// The general rule must choose.
    General,
}

/// What [`ScalableCuckooFilter::general_holder`] chose.
pub(super) enum Chosen<'a> {
    /// The level (and its slot) whose copy stands for the key.
    Holder(usize, &'a Level),
    /// No level holds the key's fingerprint.
    NoHolder,
    /// Two holding levels neither of which refines the other (levels
    /// decoded from an encoding before nested maps): which copy is the
    /// key's cannot be told.
    Ambiguous,
}

impl<S> ScalableCuckooFilter<S> {
    /// The general rule: of the levels `first` and `rest` (the live
    /// levels, current first, then ascending slots) that hold the key's
    /// fingerprint, the one that refines every other. A copy there stands
    /// for the key: two keys that collide there collide in every coarser
    /// level too. Among holders of one geometry, the lowest slot that is
    /// not current: old levels empty and retire, and two copies given the
    /// same operations take the same copy.
    ///
    /// Once the choice is a holder in a slot that is not current, a later
    /// level of its geometry cannot change it (it would tie, and the tie
    /// keeps the lower, non-current slot), so such a level is not looked
    /// up: with growth 1, whose levels share a geometry, a remove of a key
    /// of an old level stops looking at the first old level that holds
    /// it. (The choice is the full scan's: `tests::general_rule_*`.)
    pub(super) fn general_holder<'a>(
        &self,
        prepared: LevelHash,
        first: (usize, &'a Level),
        rest: impl Iterator<Item = (usize, &'a Level)>,
    ) -> Chosen<'a> {
        let current = self.current();
        let mut chosen: Option<(usize, &'a Level)> = None;
        for (j, other) in core::iter::once(first).chain(rest) {
            if let Some((c, level)) = chosen {
                if c != current && other.refines(level) && level.refines(other) {
                    continue;
                }
            }
            if !other.contains(prepared) {
                continue;
            }
            let Some((c, level)) = chosen else {
                chosen = Some((j, other));
                continue;
            };
            match (other.refines(level), level.refines(other)) {
                // Finer: it stands for every holder so far.
                (true, false) => chosen = Some((j, other)),
                // Coarser: the chosen copy stands for it.
                (false, true) => {}
                // One geometry: the lowest non-current slot (the holders
                // come current first, then ascending).
                (true, true) => {
                    if c == current {
                        chosen = Some((j, other));
                    }
                }
                (false, false) => return Chosen::Ambiguous,
            }
        }
        match chosen {
            Some((j, level)) => Chosen::Holder(j, level),
            None => Chosen::NoHolder,
        }
    }

    /// The copy to take, found without searching every level. When the
    /// levels in use, highest slot first, each strictly refine the next
    /// (a nested filter's levels of different sizes always do: a larger
    /// slot has more low bits and fingerprints at least as wide), the
    /// first level that holds the key's fingerprint refines every other
    /// holder and no other is of its geometry, so it is the level the
    /// general rule would choose, found by looking up only the levels
    /// above it. Levels of one geometry (where the general rule prefers
    /// the lowest slot that is not current), and levels not in that order
    /// (decoded from older encodings, or forged), go to the general rule;
    /// the check takes no lookup, only the levels' maps and widths.
    pub(super) fn finest_holder(&self, prepared: LevelHash) -> Finest<'_> {
        // Growth 1 gives every level one size: levels of one width are of
        // one geometry, which the check below would only find out after
        // it walked them.
        if !self.config.nested || self.config.growth_factor == 1 {
            return Finest::General;
        }
        // One snapshot of the level set for both passes.
        let descending = self.live_levels_descending();
        let mut pairs = descending.clone().zip(descending.clone().skip(1));
        if !pairs.all(|((_, above), (_, below))| above.refines(below) && !below.refines(above)) {
            return Finest::General;
        }
        match descending
            .clone()
            .find(|(_, level)| level.contains(prepared))
        {
            Some((i, finest)) => Finest::Holder(i, finest),
            None => Finest::NoHolder,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Rng;

    /// The general rule as it was before it skipped lookups: every live
    /// level looked up, then the finest holder, ties to the lowest
    /// non-current slot. `None` if no level holds the key or two holders
    /// cannot be ordered.
    fn full_scan(f: &ScalableCuckooFilter, prepared: LevelHash) -> Option<usize> {
        let current = f.current();
        let mut chosen: Option<(usize, &Level)> = None;
        for (j, other) in f.live_levels() {
            if !other.contains(prepared) {
                continue;
            }
            chosen = match chosen {
                None => Some((j, other)),
                Some((c, level)) => match (other.refines(level), level.refines(other)) {
                    (true, false) => Some((j, other)),
                    (false, true) => Some((c, level)),
                    (true, true) if c == current => Some((j, other)),
                    (true, true) => Some((c, level)),
                    (false, false) => return None,
                },
            };
        }
        chosen.map(|(j, _)| j)
    }

    /// Removes from growing filters of growth 1 (levels of one size, some of
    /// one geometry and some wider: the general rule, skipping lookups)
    /// take their copy from exactly the level the full scan chooses, through
    /// fills, removes of old and new keys, retirements and reopened slots.
    #[test]
    fn general_rule_takes_the_copy_the_full_scan_chooses() {
        for seed in 0..4u64 {
            let f = ScalableCuckooFilter::builder()
                .capacity(64)
                .growth_factor(1)
                .false_positive_rate(0.01)
                .seed(seed)
                .build()
                .unwrap();
            let mut rng = Rng(seed + 11);
            // Few distinct keys, so copies of one key and colliding keys
            // sit in several levels.
            let mut stored: Vec<u64> = Vec::new();
            let mut checked = 0;
            for _ in 0..6_000 {
                if stored.len() < 600 && rng.below(3) != 0 {
                    let k = rng.next() % 2_000;
                    f.insert_hash(k).unwrap();
                    stored.push(k);
                    continue;
                }
                if stored.is_empty() {
                    continue;
                }
                let k = stored.swap_remove(rng.below(stored.len()));
                let expected = full_scan(&f, LevelHash::of(k)).expect("a stored key has a holder");
                let before: Vec<usize> =
                    (0..64).map(|i| f.level(i).map_or(0, Level::len)).collect();
                assert!(f.remove_hash(k).is_removed());
                let after: Vec<usize> = (0..64).map(|i| f.level(i).map_or(0, Level::len)).collect();
                for i in 0..64 {
                    let taken = usize::from(i == expected);
                    assert_eq!(
                        after[i] + taken,
                        before[i],
                        "seed {seed}: slot {i}, the full scan chose {expected}"
                    );
                }
                checked += 1;
            }
            assert!(
                f.levels() >= 3 && checked > 1_000,
                "{} levels, {checked} removes",
                f.levels()
            );
        }
    }
}
