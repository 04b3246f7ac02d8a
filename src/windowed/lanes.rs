//! The slot encoding of a windowed table and its lane-parallel tests.
//!
//! A bucket is one `u64` of four 16-bit lanes (slot `i` in bits
//! `[16 i, 16 i + 16)`, as the plain table's 16-bit buckets). A lane holds
//! `tag << f | fp`: an `f`-bit fingerprint (never 0; 0 is an empty lane)
//! under a `t`-bit age tag, `f + t = 16`. The tag is the generation the key
//! was last inserted in, modulo `M = 2^t`.
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
//! Every test below works on all four lanes of a word at once with plain
//! integer arithmetic (SWAR): each lane's intermediate values stay below
//! `2^16`, so no carry or borrow crosses a lane, and the answers are exact
//! (no has-zero-byte approximations, which would raise the false-positive
//! rate). The result masks have bit 15 of each selected lane set.

/// The four lanes' low bits.
const ONES: u64 = 0x0001_0001_0001_0001;
/// The four lanes' top bits: the result flags.
pub(crate) const FLAGS: u64 = ONES << 15;
/// The four lanes' low 15 bits.
const LOW15: u64 = FLAGS - ONES;

/// The encoding of one filter: fingerprint and tag widths and the window,
/// with the lane constants a lookup needs precomputed (they depend on the
/// widths, which a filter fixes at build: computing them per lookup cost
/// instructions in front of every lookup's loads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Fingerprint bits `f` (11 to 14).
    fp_bits: u32,
    /// Generations in the window, `G`.
    generations: u64,
    /// `M - 1` in every lane.
    tag_mask: u64,
    /// `2^f - 1` in every lane.
    fp_mask: u64,
    /// `0x8000 - (G + 1)` in every lane: adding it sets a lane's top bit
    /// exactly when the lane is at least `G + 1`.
    over_g: u64,
}

impl Layout {
    /// Slot width: tag and fingerprint together.
    pub(crate) const SLOT_BITS: u32 = 16;

    /// `tag_bits` (2 to 5) of tag, the rest fingerprint, `generations`
    /// (`1 <= G <= 2^tag_bits - 3`, checked by the builder).
    pub(crate) fn new(tag_bits: u32, generations: u64) -> Self {
        debug_assert!((2..=5).contains(&tag_bits));
        debug_assert!(generations >= 1 && generations + 3 <= 1 << tag_bits);
        let fp_bits = Self::SLOT_BITS - tag_bits;
        Self {
            fp_bits,
            generations,
            tag_mask: ((1 << tag_bits) - 1) * ONES,
            fp_mask: ((1 << fp_bits) - 1) * ONES,
            over_g: (0x8000 - (generations + 1)) * ONES,
        }
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
        Self::SLOT_BITS - self.fp_bits
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
        // Lane 0 of the mask is `2^f - 1`.
        let fp = hash & self.fp_mask & 0xFFFF;
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
        (self.tags() | ((cur + 1) & (self.tags() - 1))) * ONES
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
        // Bit 15 set iff age1 >= G + 1 (age1 < 32, so no carry out).
        (age1 + over) & FLAGS
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
        Some((0x8000 - (window + 1)) * ONES)
    }

    /// `word` with its lanes expired at `cur` cleared: the canonical form
    /// of a bucket, which a lookup or an insert cannot tell from `word`
    /// (both take an expired lane for an empty one).
    #[inline]
    #[cfg_attr(concurrent_cuckoo_loom, allow(dead_code))]
    pub(crate) fn without_expired(self, word: u64, cur: u64) -> u64 {
        let flags = self.expired(word, cur);
        // Each flag is a lane's bit 15: spread it over the lane's 16 bits.
        word & !((flags >> 15) * 0xFFFF)
    }

    /// `fp` in every lane, for [`holds_fp`](Self::holds_fp).
    #[inline(always)]
    pub(crate) fn spread(fp: u64) -> u64 {
        fp * ONES
    }

    /// Lanes of `word` that hold the fingerprint spread in `fps` (any tag).
    #[inline(always)]
    pub(crate) fn holds_fp(self, word: u64, fps: u64) -> u64 {
        let z = (word ^ fps) & self.fp_mask;
        // Per lane z < 2^15, so 0x8000 - z >= 1: no borrow crosses lanes,
        // and bit 15 is set exactly when z == 0.
        (FLAGS - z) & FLAGS
    }

    /// Lanes of `word` that hold `fps` (a [`spread`](Self::spread)
    /// fingerprint) and are live at `clock`'s generation: a lookup's hits.
    #[inline(always)]
    pub(crate) fn hits(self, word: u64, fps: u64, clock: u64) -> u64 {
        self.holds_fp(word, fps) & !self.aged_out(word, clock)
    }

    /// Lanes of `word` that hold a fingerprint (flag per lane).
    #[inline(always)]
    pub(crate) fn occupied(word: u64) -> u64 {
        (((word & LOW15) + LOW15) | word) & FLAGS
    }

    /// Lanes of `word` that hold `fp` and are live at `cur`.
    #[inline(always)]
    pub(crate) fn live_matches(self, word: u64, fp: u64, cur: u64) -> u64 {
        self.hits(word, Self::spread(fp), self.clock(cur))
    }

    /// Lanes of `word` that hold `fp`, live or expired.
    #[cfg(test)]
    pub(crate) fn any_matches(self, word: u64, fp: u64) -> u64 {
        self.holds_fp(word, Self::spread(fp))
    }

    /// Occupied lanes of `word` that are expired at `cur`.
    #[inline(always)]
    pub(crate) fn expired(self, word: u64, cur: u64) -> u64 {
        Self::occupied(word) & self.aged_out(word, self.clock(cur))
    }

    /// Occupied lanes of `word` expired `ahead` generations after `cur`
    /// by their true age at `cur` (at most `M - 2` by INV-3, and no lane
    /// tagged `cur + 1`: a jump reads them under every stripe lock), not by
    /// their tag's age then, which may have come round. Every occupied
    /// lane when `ahead >= G`.
    #[cfg_attr(concurrent_cuckoo_loom, allow(dead_code))]
    pub(crate) fn expired_ahead(self, word: u64, cur: u64, ahead: u64) -> u64 {
        match self.over_ahead(ahead) {
            Some(over) => Self::occupied(word) & self.aged_out_over(word, self.clock(cur), over),
            None => Self::occupied(word),
        }
    }

    /// Lanes an insert may take at `cur`: empty or expired.
    #[inline(always)]
    pub(crate) fn free(self, word: u64, cur: u64) -> u64 {
        (!Self::occupied(word) & FLAGS) | self.expired(word, cur)
    }

    /// Lanes tagged with `generation`, occupied or not (decoding refuses
    /// lanes tagged after the saved generation; the `windowed_no_future`
    /// canary).
    #[cfg_attr(concurrent_cuckoo_loom, allow(dead_code))]
    pub(crate) fn tagged(self, word: u64, generation: u64) -> u64 {
        let z = ((word >> self.fp_bits) & self.tag_mask) ^ (self.tag_of(generation) * ONES);
        (FLAGS - z) & FLAGS
    }

    /// Occupied lanes live at `cur` (for counting and tests).
    #[cfg_attr(concurrent_cuckoo_loom, allow(dead_code))]
    pub(crate) fn live(self, word: u64, cur: u64) -> u64 {
        Self::occupied(word) & !self.aged_out(word, self.clock(cur))
    }
}

/// The first lane of a flag mask, if any.
#[inline(always)]
pub(crate) fn first(mask: u64) -> Option<usize> {
    (mask != 0).then(|| mask.trailing_zeros() as usize / 16)
}

/// Lane `i` of `word`.
#[inline(always)]
pub(crate) fn get(word: u64, i: usize) -> u64 {
    (word >> (16 * i)) & 0xFFFF
}

/// `word` with lane `i` set to `lane`.
#[inline(always)]
pub(crate) fn set(word: u64, i: usize, lane: u64) -> u64 {
    (word & !(0xFFFF << (16 * i))) | (lane << (16 * i))
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

    #[test]
    fn lane_tests_equal_their_scalar_definitions() {
        let mut rng = crate::test_rng::Rng(41);
        for tag_bits in 2..=5u32 {
            for g in 1..=(1u64 << tag_bits) - 3 {
                let l = Layout::new(tag_bits, g);
                for _ in 0..20_000 {
                    let mut word = rng.next();
                    // Some empty lanes, some lanes of one fingerprint.
                    let fp = l.fingerprint(rng.next());
                    for i in 0..4 {
                        match rng.next() % 4 {
                            0 => word = set(word, i, 0),
                            1 => word = set(word, i, l.lane(fp, rng.next())),
                            _ => {}
                        }
                        if l.fp_of_lane(get(word, i)) == 0 {
                            word = set(word, i, 0);
                        }
                    }
                    let cur = rng.next() >> 1;
                    for i in 0..4 {
                        let lane = get(word, i);
                        let flag = 1u64 << (16 * i + 15);
                        let occupied = lane != 0;
                        let live = occupied && live_scalar(l, lane, cur);
                        let hit = live && l.fp_of_lane(lane) == fp;
                        assert_eq!(Layout::occupied(word) & flag != 0, occupied);
                        assert_eq!(l.live(word, cur) & flag != 0, live);
                        assert_eq!(l.expired(word, cur) & flag != 0, occupied && !live);
                        assert_eq!(l.free(word, cur) & flag != 0, !live);
                        assert_eq!(l.live_matches(word, fp, cur) & flag != 0, hit);
                        assert_eq!(
                            l.any_matches(word, fp) & flag != 0,
                            occupied && l.fp_of_lane(lane) == fp
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_future_tag_is_live_and_the_slack_is_expired() {
        let l = Layout::new(3, 4); // M = 8, G = 4: live ages 0..=3 and 7
        let fp = 5;
        let lane = |tag: u64| l.lane(fp, tag);
        let cur = 10;
        let live: Vec<u64> = (0..8).filter(|&t| l.live(lane(t), cur) != 0).collect();
        // cur mod 8 = 2: tags 2, 1, 0, 7 (ages 0..3) and 3 (cur + 1).
        assert_eq!(live, vec![0, 1, 2, 3, 7]);
        assert_eq!(l.slack(), 3);
    }
}
