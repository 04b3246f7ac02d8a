//! The slot encoding of a windowed table and its lane-parallel tests.
//!
//! A bucket is one `u64` of lanes of `w` bits, `w` 16 (four lanes, slot
//! `i` in bits `[16 i, 16 i + 16)`, as the plain table's 16-bit buckets)
//! or 32 (two lanes: *wide* lanes, for rates below 16-bit lanes' floor or
//! windows longer than their tags count). A lane holds `tag << f | fp`: an
//! `f`-bit fingerprint (never 0; 0 is an empty lane) under a `t`-bit age
//! tag, `f + t = w`. The tag is the generation the key was last inserted
//! in, modulo `M = 2^t`. Either width keeps a bucket in one word, so every
//! write of a bucket is one atomic store, whatever the width: the table's
//! protocol (`table.rs`) and its proofs do not depend on it.
//!
//! # Liveness
//! With `G` generations in the window and `cur` the generation a reader
//! holds, a lane's age is `(cur - tag) mod M`, and it is **live** when the
//! age is in `[0, G)` (inserted in the window) or is `M - 1` (tagged with
//! `cur + 1` by a writer that saw the next generation before this reader
//! did: a "future" tag must never read as expired). Ages `[G, M - 2]` are
//! **expired**: the sweep has `M - 1 - G` generations to clear such a lane
//! before its age reaches `M - 1` and it would read live again (the
//! argument is in `table.rs`). Equivalently, with `age1 = (cur + 1 - tag)
//! mod M`: live iff `age1 <= G`.
//!
//! Every test below works on all lanes of a word at once with plain
//! integer arithmetic (SWAR): each lane's intermediate values stay below
//! `2^w`, so no carry or borrow crosses a lane, and the answers are exact
//! (no has-zero-byte approximations, which would raise the false-positive
//! rate). The result masks have the top bit (`w - 1`) of each selected
//! lane set. The width is a field, not a type parameter: the constants
//! below are computed once at build, and a lookup reads them with the rest
//! of the layout.

/// The lane widths a table may have.
pub(crate) const NARROW: u32 = 16;
pub(crate) const WIDE: u32 = 32;

/// The most tag bits of a lane of `lane_bits` bits: 5 for 16-bit lanes
/// (an 11-bit fingerprint at least), 8 for 32-bit ones (each tag value is
/// a counter per lock stripe: 256 of them, 2 KiB per stripe of 1,024
/// buckets, bound the window at 253 generations).
pub(crate) const fn max_tag_bits(lane_bits: u32) -> u32 {
    if lane_bits == WIDE {
        8
    } else {
        5
    }
}

/// The encoding of one filter: lane, fingerprint and tag widths and the
/// window, with the lane constants a lookup needs precomputed (they
/// depend on the widths, which a filter fixes at build: computing them per
/// lookup cost instructions in front of every lookup's loads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Lane bits `w` (16 or 32).
    lane_bits: u32,
    /// `log2(w)`: a flag's bit index shifted by it is its slot.
    lane_shift: u32,
    /// Fingerprint bits `f` (11 to 14 in 16-bit lanes, 24 to 30 in 32-bit).
    fp_bits: u32,
    /// Generations in the window, `G`.
    generations: u64,
    /// Each lane's low bit.
    ones: u64,
    /// Each lane's top bit: the result flags.
    flags: u64,
    /// Each lane's bits below its top bit.
    low: u64,
    /// `2^w - 1`: lane 0.
    lane_mask: u64,
    /// `M - 1` in every lane.
    tag_mask: u64,
    /// `2^f - 1` in every lane.
    fp_mask: u64,
    /// `2^f - 1`: lane 0 of `fp_mask`.
    fp_low: u64,
    /// `2^(w-1) - (G + 1)` in every lane: adding it sets a lane's top bit
    /// exactly when the lane is at least `G + 1`.
    over_g: u64,
}

impl Layout {
    /// `lane_bits` (16 or 32) lanes of `tag_bits` (2 to
    /// [`max_tag_bits`]) of tag, the rest fingerprint, `generations`
    /// (`1 <= G <= 2^tag_bits - 3`, checked by the builder).
    pub(crate) fn new(lane_bits: u32, tag_bits: u32, generations: u64) -> Self {
        debug_assert!(lane_bits == NARROW || lane_bits == WIDE);
        debug_assert!((2..=max_tag_bits(lane_bits)).contains(&tag_bits));
        debug_assert!(generations >= 1 && generations + 3 <= 1 << tag_bits);
        let fp_bits = lane_bits - tag_bits;
        let lane_mask = (1u64 << lane_bits) - 1;
        // Lane 0's low bit in every lane: `2^64 - 1` divided by a lane's
        // maximum (`0x0001_0001_0001_0001` or `0x0000_0001_0000_0001`).
        let ones = u64::MAX / lane_mask;
        let flags = ones << (lane_bits - 1);
        Self {
            lane_bits,
            lane_shift: lane_bits.trailing_zeros(),
            fp_bits,
            generations,
            ones,
            flags,
            low: flags - ones,
            lane_mask,
            tag_mask: ((1 << tag_bits) - 1) * ones,
            fp_mask: ((1 << fp_bits) - 1) * ones,
            fp_low: (1 << fp_bits) - 1,
            over_g: ((1 << (lane_bits - 1)) - (generations + 1)) * ones,
        }
    }

    /// This layout with its lane width's constants written as constants:
    /// `W` must be its width. A hot path that branches on the width once
    /// and runs on `fixed::<NARROW>()` or `fixed::<WIDE>()` has every lane
    /// constant folded into its instructions (the methods are inlined and
    /// the copy split into scalars), as before lanes had two widths;
    /// read from the layout, they cost registers and instructions on
    /// every lookup.
    #[inline(always)]
    pub(crate) fn fixed<const W: u32>(self) -> Self {
        debug_assert_eq!(self.lane_bits, W);
        let lane_mask = (1u64 << W) - 1;
        let ones = u64::MAX / lane_mask;
        Self {
            lane_bits: W,
            lane_shift: W.trailing_zeros(),
            ones,
            flags: ones << (W - 1),
            low: (ones << (W - 1)) - ones,
            lane_mask,
            ..self
        }
    }

    /// Lane bits `w`.
    pub(crate) fn lane_bits(self) -> u32 {
        self.lane_bits
    }

    /// Lanes (slots) per bucket: 4 or 2.
    #[inline(always)]
    pub(crate) fn slots(self) -> usize {
        64 >> self.lane_shift
    }

    /// Whether lanes are 32 bits wide.
    #[inline(always)]
    pub(crate) fn is_wide(self) -> bool {
        self.lane_bits == WIDE
    }

    /// `2^f - 1` in every lane: a word's fingerprints without their tags.
    #[inline(always)]
    pub(crate) fn fp_mask(self) -> u64 {
        self.fp_mask
    }

    pub(crate) fn fp_bits(self) -> u32 {
        self.fp_bits
    }

    #[inline(always)]
    pub(crate) fn tag_bits(self) -> u32 {
        self.lane_bits - self.fp_bits
    }

    pub(crate) fn generations(self) -> u64 {
        self.generations
    }

    /// `M`: distinct tags.
    #[inline(always)]
    pub(crate) fn tags(self) -> u64 {
        1 << self.tag_bits()
    }

    /// Generations an expired lane may wait for the sweep: `M - 1 - G`
    /// (at least 2), also the sweep's period.
    pub(crate) fn slack(self) -> u64 {
        self.tags() - 1 - self.generations
    }

    /// The fingerprint of a (prepared) hash: its low `f` bits, 0 mapped to 1.
    #[inline(always)]
    pub(crate) fn fingerprint(self, hash: u64) -> u64 {
        let fp = hash & self.fp_low;
        fp + u64::from(fp == 0)
    }

    /// The tag of generation `generation`.
    #[inline(always)]
    pub(crate) fn tag_of(self, generation: u64) -> u64 {
        generation & (self.tags() - 1)
    }

    /// The lane of `fp` tagged with `generation`.
    #[inline(always)]
    pub(crate) fn lane(self, fp: u64, generation: u64) -> u64 {
        self.tag_of(generation) << self.fp_bits | fp
    }

    /// The fingerprint part of a lane value.
    #[inline(always)]
    pub(crate) fn fp_of_lane(self, lane: u64) -> u64 {
        lane & ((1 << self.fp_bits) - 1)
    }

    /// The tag part of a lane value.
    #[inline(always)]
    pub(crate) fn tag_of_lane(self, lane: u64) -> u64 {
        lane >> self.fp_bits
    }

    /// `M + ((cur + 1) mod M)` in every lane: what [`aged_out`]
    /// subtracts the tags from. Once per lookup, for both its words.
    ///
    /// [`aged_out`]: Self::aged_out
    #[inline(always)]
    pub(crate) fn clock(self, cur: u64) -> u64 {
        (self.tags() | ((cur + 1) & (self.tags() - 1))) * self.ones
    }

    /// Lanes of `word` whose age at the generation of `clock` (from
    /// [`clock`](Self::clock)) is expired (flag per lane). Not masked by
    /// occupancy.
    #[inline(always)]
    pub(crate) fn aged_out(self, word: u64, clock: u64) -> u64 {
        self.aged_out_over(word, clock, self.over_g)
    }

    /// [`aged_out`](Self::aged_out) against another window: `over` from
    /// [`over_ahead`](Self::over_ahead) (or the filter's own).
    #[inline(always)]
    pub(crate) fn aged_out_over(self, word: u64, clock: u64, over: u64) -> u64 {
        let tags = (word >> self.fp_bits) & self.tag_mask;
        // Per lane `M + c1 - tag` is in [1, 2M - 1]: no borrow crosses
        // lanes, and masking leaves `age1 = (cur + 1 - tag) mod M`.
        let age1 = (clock - tags) & self.tag_mask;
        // The top bit set iff age1 >= G + 1 (age1 < 2^8, so no carry out).
        (age1 + over) & self.flags
    }

    /// The `over` constant of a lookup at generation `at` by a reader
    /// whose generation is `r`: the filter's own when `at <= r` (a plain
    /// lookup passes 0), else [`over_ahead`](Self::over_ahead)`(at - r)`.
    #[inline(always)]
    pub(crate) fn over_at(self, at: u64, r: u64) -> Option<u64> {
        if at <= r {
            Some(self.over_g)
        } else {
            self.over_ahead(at - r)
        }
    }

    /// The `over` constant that decides liveness `ahead` generations after
    /// the one a clock was made for: a lane of age `a` then (`-1` for a
    /// future tag) is live `ahead` generations later iff `a + ahead < G`,
    /// i.e. iff `age1 <= G - ahead`. `None` when `ahead > G`: no lane is
    /// live then (a future tag lives until `G` generations after `cur`).
    #[inline]
    pub(crate) fn over_ahead(self, ahead: u64) -> Option<u64> {
        let window = self.generations.checked_sub(ahead)?;
        Some(((1 << (self.lane_bits - 1)) - (window + 1)) * self.ones)
    }

    /// `word` with its lanes expired at `cur` cleared: the canonical form
    /// of a bucket, which a lookup or an insert cannot tell from `word`
    /// (both take an expired lane for an empty one).
    #[inline]
    #[cfg_attr(concurrent_cuckoo_loom, allow(dead_code))]
    pub(crate) fn without_expired(self, word: u64, cur: u64) -> u64 {
        let flags = self.expired(word, cur);
        // Each flag is a lane's top bit: spread it over the lane's bits.
        word & !self.spread_flags(flags)
    }

    /// `fp` in every lane, for [`holds_fp`](Self::holds_fp).
    #[inline(always)]
    pub(crate) fn spread(self, fp: u64) -> u64 {
        fp * self.ones
    }

    /// Lanes of `word` that hold the fingerprint spread in `fps` (any tag).
    #[inline(always)]
    pub(crate) fn holds_fp(self, word: u64, fps: u64) -> u64 {
        let z = (word ^ fps) & self.fp_mask;
        // Per lane z < 2^(w-1), so 2^(w-1) - z >= 1: no borrow crosses
        // lanes, and the top bit is set exactly when z == 0.
        (self.flags - z) & self.flags
    }

    /// Lanes of `word` that hold `fps` (a [`spread`](Self::spread)
    /// fingerprint) and are live at `clock`'s generation: a lookup's hits.
    #[inline(always)]
    pub(crate) fn hits(self, word: u64, fps: u64, clock: u64) -> u64 {
        self.holds_fp(word, fps) & !self.aged_out(word, clock)
    }

    /// Lanes of `word` that hold a fingerprint (flag per lane).
    #[inline(always)]
    pub(crate) fn occupied(self, word: u64) -> u64 {
        (((word & self.low) + self.low) | word) & self.flags
    }

    /// Lanes of `word` that hold `fp` and are live at `cur`.
    #[inline(always)]
    pub(crate) fn live_matches(self, word: u64, fp: u64, cur: u64) -> u64 {
        self.hits(word, self.spread(fp), self.clock(cur))
    }

    /// Lanes of `word` that hold `fp`, live or expired.
    #[cfg(test)]
    pub(crate) fn any_matches(self, word: u64, fp: u64) -> u64 {
        self.holds_fp(word, self.spread(fp))
    }

    /// Occupied lanes of `word` that are expired at `cur`.
    #[inline(always)]
    pub(crate) fn expired(self, word: u64, cur: u64) -> u64 {
        self.occupied(word) & self.aged_out(word, self.clock(cur))
    }

    /// Occupied lanes of `word` expired `ahead` generations after `cur`
    /// by their true age at `cur` (at most `M - 2` by INV-3, and no lane
    /// tagged `cur + 1`: a jump reads them under every stripe lock), not by
    /// their tag's age then, which may have come round. Every occupied
    /// lane when `ahead >= G`.
    #[cfg_attr(concurrent_cuckoo_loom, allow(dead_code))]
    pub(crate) fn expired_ahead(self, word: u64, cur: u64, ahead: u64) -> u64 {
        match self.over_ahead(ahead) {
            Some(over) => self.occupied(word) & self.aged_out_over(word, self.clock(cur), over),
            None => self.occupied(word),
        }
    }

    /// Lanes an insert may take at `cur`: empty or expired.
    #[inline(always)]
    pub(crate) fn free(self, word: u64, cur: u64) -> u64 {
        (!self.occupied(word) & self.flags) | self.expired(word, cur)
    }

    /// Lanes tagged with `generation`, occupied or not (decoding refuses
    /// lanes tagged after the saved generation; the `windowed_no_future`
    /// canary).
    #[cfg_attr(concurrent_cuckoo_loom, allow(dead_code))]
    pub(crate) fn tagged(self, word: u64, generation: u64) -> u64 {
        let z = ((word >> self.fp_bits) & self.tag_mask) ^ (self.tag_of(generation) * self.ones);
        (self.flags - z) & self.flags
    }

    /// Occupied lanes live at `cur` (for counting and tests).
    #[cfg_attr(concurrent_cuckoo_loom, allow(dead_code))]
    pub(crate) fn live(self, word: u64, cur: u64) -> u64 {
        self.occupied(word) & !self.aged_out(word, self.clock(cur))
    }

    /// Flag masks' lanes spread over their whole lanes: `flags` with each
    /// flag (a lane's top bit) made the lane's every bit.
    #[inline(always)]
    pub(crate) fn spread_flags(self, flags: u64) -> u64 {
        (flags >> (self.lane_bits - 1)) * self.lane_mask
    }

    /// The flag of slot `slot` (its lane's top bit).
    #[inline(always)]
    pub(crate) fn flag(self, slot: usize) -> u64 {
        1 << ((slot << self.lane_shift) + self.lane_bits as usize - 1)
    }

    /// The first lane of a flag mask, if any.
    #[inline(always)]
    pub(crate) fn first(self, mask: u64) -> Option<usize> {
        (mask != 0).then(|| (mask.trailing_zeros() >> self.lane_shift) as usize)
    }

    /// Lane `i` of `word`.
    #[inline(always)]
    pub(crate) fn get(self, word: u64, i: usize) -> u64 {
        (word >> (i << self.lane_shift)) & self.lane_mask
    }

    /// `word` with lane `i` set to `lane`.
    #[inline(always)]
    pub(crate) fn set(self, word: u64, i: usize, lane: u64) -> u64 {
        let at = i << self.lane_shift;
        (word & !(self.lane_mask << at)) | (lane << at)
    }
}

#[cfg(all(test, not(concurrent_cuckoo_loom)))]
mod tests {
    use super::*;

    /// The scalar definition every SWAR test must equal.
    fn live_scalar(l: Layout, lane: u64, cur: u64) -> bool {
        let m = l.tags();
        let age = (cur % m + m - l.tag_of_lane(lane)) % m;
        age < l.generations() || age == m - 1
    }

    /// Every layout of 16-bit lanes, and of 32-bit lanes every tag width
    /// with windows at both ends and between.
    fn layouts() -> Vec<Layout> {
        let mut all = Vec::new();
        for lane_bits in [NARROW, WIDE] {
            for tag_bits in 2..=max_tag_bits(lane_bits) {
                let max = (1u64 << tag_bits) - 3;
                for g in 1..=max {
                    if lane_bits == NARROW || g <= 3 || g + 3 >= max || g % 17 == 0 {
                        all.push(Layout::new(lane_bits, tag_bits, g));
                    }
                }
            }
        }
        all
    }

    #[test]
    fn lane_tests_equal_their_scalar_definitions() {
        let mut rng = crate::test_rng::Rng(41);
        for l in layouts() {
            for _ in 0..20_000 {
                let mut word = rng.next();
                // Some empty lanes, some lanes of one fingerprint.
                let fp = l.fingerprint(rng.next());
                for i in 0..l.slots() {
                    match rng.next() % 4 {
                        0 => word = l.set(word, i, 0),
                        1 => word = l.set(word, i, l.lane(fp, rng.next())),
                        _ => {}
                    }
                    if l.fp_of_lane(l.get(word, i)) == 0 {
                        word = l.set(word, i, 0);
                    }
                }
                let cur = rng.next() >> 1;
                for i in 0..l.slots() {
                    let lane = l.get(word, i);
                    let flag = l.flag(i);
                    let occupied = lane != 0;
                    let live = occupied && live_scalar(l, lane, cur);
                    let hit = live && l.fp_of_lane(lane) == fp;
                    assert_eq!(l.occupied(word) & flag != 0, occupied);
                    assert_eq!(l.live(word, cur) & flag != 0, live);
                    assert_eq!(l.expired(word, cur) & flag != 0, occupied && !live);
                    assert_eq!(l.free(word, cur) & flag != 0, !live);
                    assert_eq!(l.live_matches(word, fp, cur) & flag != 0, hit);
                    assert_eq!(
                        l.any_matches(word, fp) & flag != 0,
                        occupied && l.fp_of_lane(lane) == fp
                    );
                    let cleared = l.without_expired(word, cur);
                    let kept = if occupied && !live { 0 } else { lane };
                    assert_eq!(l.get(cleared, i), kept);
                }
                assert_eq!(l.first(l.flag(l.slots() - 1)), Some(l.slots() - 1));
            }
        }
    }

    #[test]
    fn wide_lanes_hold_two_slots_of_32_bits() {
        let l = Layout::new(WIDE, 8, 253);
        assert_eq!(
            (l.slots(), l.fp_bits(), l.tags(), l.slack()),
            (2, 24, 256, 2)
        );
        let word = l.set(l.set(0, 0, l.lane(7, 300)), 1, l.lane(0xFF_FFFF, 301));
        assert_eq!(
            word,
            (301 % 256) << 56 | 0xFF_FFFF << 32 | (300 % 256) << 24 | 7
        );
        assert_eq!(l.live_matches(word, 0xFF_FFFF, 300), l.flag(1));
        assert_eq!(l.live_matches(word, 7, 300 + 252), l.flag(0));
        assert_eq!(l.live_matches(word, 7, 300 + 253), 0);
    }

    #[test]
    fn a_future_tag_is_live_and_the_slack_is_expired() {
        let l = Layout::new(NARROW, 3, 4); // M = 8, G = 4: live ages 0..=3 and 7
        let fp = 5;
        let lane = |tag: u64| l.lane(fp, tag);
        let cur = 10;
        let live: Vec<u64> = (0..8).filter(|&t| l.live(lane(t), cur) != 0).collect();
        // cur mod 8 = 2: tags 2, 1, 0, 7 (ages 0..3) and 3 (cur + 1).
        assert_eq!(live, vec![0, 1, 2, 3, 7]);
        assert_eq!(l.slack(), 3);
    }
}
