//! Which copy a growing filter's remove takes, found without searching
//! every level when the levels nest (see "Removing keys across levels" in
//! `mod.rs`; the general rule, for every other case, is in `remove_once`).

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

impl<S> ScalableCuckooFilter<S> {
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
