//! The level set: each slot's level (its table), the geometry a slot's
//! level has (`Config::items`, `Config::bits`, `Config::map`), and the
//! word naming the level that takes inserts.

use super::moves::MoveSequence;
use super::ScalableCuckooFilter;
use super::KEY_LOCKS;
use crate::error::BuildError;
use crate::filter::{table_of_width, with_table, Table};
use crate::fingerprint::SLOTS;
use crate::index::{nested_shape, HashScheme, IndexMap};
use crate::storage::TableMemory;
use crate::sync::RawLock;
use crate::sync::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use crate::table::{RawTable, MAX_PATH_LIMIT};

/// Longest displacement path a new level's inserts search (a fixed
/// filter's default is [`MAX_PATH_LIMIT`], 5). A level that refuses an
/// insert only passes it on to another level, so it need not search as
/// hard for its last slots as a fixed filter, whose `Full` is final: in
/// the fill of 1,024-item levels (a Redis key created with the defaults)
/// the few inserts that needed 5 moves and each level's last, failed
/// search (2,730 buckets) took half of the instructions spent searching.
/// With 4, levels still fill to about 97.5% of their slots (1,024 items;
/// 97.9% with 5) and 96.5% (a million; 97.3% with 5): see
/// `docs/design.md`, and the test
/// `levels_search_4_moves_and_fill_to_over_95_percent_before_growing`.
/// Recorded in each level's encoding (a level decoded from an older one
/// keeps its own limit), and otherwise a constant, so copies stay
/// identical.
pub(crate) const LEVEL_MAX_PATH: usize = if MAX_PATH_LIMIT < 4 {
    MAX_PATH_LIMIT
} else {
    4
};

/// One level: a table sized for the level's share of the items.
pub(crate) struct Level {
    pub(crate) table: Table,
    /// A retired level this one took the slot of (see `open_slot` in `growth.rs`): a
    /// lookup may still be reading it, so it lives until the filter is
    /// dropped or [`reclaim_retired`](ScalableCuckooFilter::reclaim_retired)
    /// runs. Null almost always: only a level decoded at a width the
    /// current rule would not choose is ever replaced.
    pub(super) replaced: AtomicPtr<Level>,
}

impl Level {
    /// A level of a freshly built table (stripe count: the default for
    /// its size, or `stripes`), its memory from `memory`.
    pub(super) fn new(
        map: IndexMap,
        bits: u32,
        stripes: Option<usize>,
        memory: TableMemory,
    ) -> Result<Self, BuildError> {
        let table = table_of_width!(bits, F => RawTable::<F>::new(
            map,
            stripes,
            None,
            LEVEL_MAX_PATH,
            memory,
        )
        .map_err(BuildError::AllocationFailed)?);
        Ok(Self::from_table(table))
    }

    /// A level holding `table` (a decoded one).
    pub(crate) fn from_table(table: Table) -> Self {
        Self {
            table,
            replaced: AtomicPtr::new(core::ptr::null_mut()),
        }
    }

    /// Bytes this level holds: all of its table while it is `live`; once
    /// retired, what its table keeps (see `RawTable::retired_memory_usage`),
    /// and the levels it replaced.
    pub(super) fn held_memory(&self, live: bool) -> usize {
        let table = if live {
            with_table!(&self.table, t => t.memory_usage())
        } else {
            with_table!(&self.table, t => t.retired_memory_usage())
        };
        let replaced = self.replaced.load(Ordering::Acquire);
        // SAFETY: a non-null `replaced` was boxed by the filter and is
        // freed only with this level (`Drop`) or under `&mut` of the
        // filter (`reclaim_retired`), which `&self` rules out.
        let older = unsafe { replaced.as_ref() }.map_or(0, |l| l.held_memory(false));
        core::mem::size_of::<Self>() + table + older
    }

    pub(crate) fn bits(&self) -> u32 {
        with_table!(&self.table, t => t.fingerprint_bits())
    }

    /// Its table's map from hashes to buckets.
    pub(crate) fn map(&self) -> IndexMap {
        with_table!(&self.table, t => t.index)
    }

    /// Gives a decoded level, not yet shared, the map its slot has
    /// ([`Config::map`]): the same bucket count, so its buckets stay valid.
    #[cfg_attr(concurrent_cuckoo_loom, allow(dead_code))]
    pub(crate) fn set_map(&mut self, map: IndexMap) {
        with_table!(&mut self.table, t => {
            assert_eq!(t.index.buckets(), map.buckets(), "set_map: another bucket count");
            t.index = map;
        });
    }

    /// Whether two keys colliding in this level (the same fingerprint and
    /// bucket pair) collide in `coarser` too, so that a copy here may be
    /// taken for a key stored there (see "Removing keys across levels").
    pub(super) fn refines(&self, coarser: &Level) -> bool {
        self.map()
            .refines(self.bits(), coarser.map(), coarser.bits())
    }

    /// Longest displacement path its inserts search.
    pub(super) fn max_path(&self) -> usize {
        with_table!(&self.table, t => t.max_path)
    }

    pub(super) fn accepting(&self) -> bool {
        with_table!(&self.table, t => t.is_accepting())
    }

    pub(crate) fn len(&self) -> usize {
        with_table!(&self.table, t => t.len())
    }

    pub(super) fn capacity(&self) -> usize {
        with_table!(&self.table, t => t.bucket_count()) * SLOTS
    }

    pub(super) fn bound(&self) -> f64 {
        width_bound(self.bits())
    }

    #[inline]
    pub(super) fn contains(&self, hash: LevelHash) -> bool {
        with_table!(&self.table, t => {
            debug_assert_ne!(t.index.scheme(), HashScheme::Raw, "a growing filter's level");
            t.contains_prepared(hash.0)
        })
    }

    /// Frees the levels this one replaced (`&mut`: no reader can be in
    /// them).
    pub(super) fn drop_replaced(&mut self) {
        let replaced = self.replaced.swap(core::ptr::null_mut(), Ordering::Acquire);
        if !replaced.is_null() {
            // SAFETY: boxed by the filter (`Box::into_raw`) and owned by
            // this level alone; `&mut self` means no reader holds it.
            drop(unsafe { Box::from_raw(replaced) });
        }
    }
}

impl Drop for Level {
    fn drop(&mut self) {
        self.drop_replaced();
    }
}

/// A hash prepared once for every level of a growing filter: finalized
/// (`index.rs`), as every level's map prepares it (finalized or nested; a
/// growing filter has no raw level: its encoding's levels are version 2).
/// A lookup that misses searches every level; preparing the hash once
/// takes a multiply chain off each level's path to its buckets.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LevelHash(u64);

impl LevelHash {
    #[inline(always)]
    pub(crate) fn of(hash: u64) -> Self {
        Self(crate::index::finalize(hash))
    }
}

/// `2 * 4 / 2^bits`: the false-positive bound of one full level.
pub(super) fn width_bound(bits: u32) -> f64 {
    (2 * SLOTS) as f64 / 2f64.powi(bits as i32)
}

/// The narrowest width for level `level` (0-based) given the bounds
/// `spent` of the levels before it: its bound plus a 32-bit reserve for
/// every level that may follow must fit in `target`.
pub(super) fn width_for(level: usize, spent: f64, target: f64, max_levels: usize) -> Option<u32> {
    let reserve = (max_levels - level - 1) as f64 * width_bound(32);
    [8, 16, 32]
        .into_iter()
        .find(|&bits| spent + width_bound(bits) + reserve <= target)
}

/// What a scalable filter was built with (and persists).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Config {
    pub(crate) initial_capacity: usize,
    pub(crate) false_positive_rate: f64,
    /// At least 1 and at most `u32::MAX` (the builder and the decoder
    /// check): 32 bits, so that `nested` fits beside it.
    pub(crate) growth_factor: u32,
    pub(crate) max_levels: usize,
    /// Where every level's table gets its memory.
    pub(crate) table_memory: TableMemory,
    /// Whether the levels' maps nest ([`Config::map`]): every filter built
    /// since nested maps exist; `false` only for one decoded from an
    /// encoding written before (its levels keep their maps, and so do the
    /// levels it grows).
    pub(crate) nested: bool,
    /// Lock stripes of every level (the default for its size when
    /// `None`): loom models need two stripes in a four-bucket level.
    #[cfg(concurrent_cuckoo_loom)]
    pub(crate) level_stripes: Option<usize>,
}

/// Bits of `ScalableCuckooFilter::current` that hold the level index
/// (`LEVEL_LIMIT` fits); the generation counts above them.
const INDEX_BITS: u32 = 8;

/// The level index in a `current` word.
#[inline(always)]
pub(super) fn index_of(word: u64) -> usize {
    (word & ((1 << INDEX_BITS) - 1)) as usize
}

/// The `current` word after `word` for level `index`: the next generation.
pub(super) fn next_word(word: u64, index: usize) -> u64 {
    ((word >> INDEX_BITS).wrapping_add(1) << INDEX_BITS) | index as u64
}

impl Config {
    /// Items level `level` is sized for, if it can be addressed.
    pub(crate) fn items(&self, level: usize) -> Option<usize> {
        let mut items = self.initial_capacity.max(1);
        for _ in 0..level {
            items = items.checked_mul(self.growth_factor as usize)?;
        }
        Some(items)
    }

    /// The map of level `level`'s table of `bits`-bit fingerprints, if it
    /// can be addressed: a function of the configuration, the index and
    /// the width only.
    ///
    /// Nested (`nested`): `c * 2^k` buckets, where `c` is the bucket count
    /// that the first level's items need and `k` the fewest low bits that
    /// give at least the bucket count this level's items need (for a
    /// power-of-two growth factor `2^g` and a first level of a few
    /// thousand items, `k = g * level`: the same tables as before, up to
    /// the rounding of small ones), and the alternate keyed by the first
    /// level's width, the narrowest (`docs/design.md`); a level of no low
    /// bits whose width is the key's gets the finalized map of `c`
    /// buckets, which is the same map at less cost per alternate
    /// (`index.rs`). Else the bucket count its items need, finalized.
    pub(crate) fn map(&self, level: usize, bits: u32) -> Option<IndexMap> {
        let need = crate::filter::buckets_for_capacity(self.items(level)?).ok()?;
        if !self.nested {
            return Some(IndexMap::new(need, HashScheme::Finalized));
        }
        let top = crate::filter::buckets_for_capacity(self.items(0)?).ok()?;
        let key_bits = self.bits(0)?;
        // A level narrower than the key has no nested map (only forged
        // bytes could ask: every width is at least the first level's).
        if bits < key_bits {
            return None;
        }
        let low_bits = (0..=32).find(|&k| (top as u64) << k >= need as u64)?;
        nested_shape(top, low_bits, key_bits)?;
        if low_bits == 0 && key_bits == bits {
            return Some(IndexMap::new(top, HashScheme::Finalized));
        }
        Some(IndexMap::nested(top, low_bits, key_bits, bits))
    }

    /// The fingerprint width of level `level`: a function of the
    /// configuration and the index only, never of which levels a filter
    /// happens to hold, so a copy (saved and reloaded after levels were
    /// retired) chooses the widths the original does. It is the narrowest
    /// width that fits the budget after every level before it took its
    /// own width by this rule (`width_for`); `None` past the budget.
    pub(crate) fn bits(&self, level: usize) -> Option<u32> {
        let mut spent = 0.0;
        for before in 0..level {
            spent += width_bound(width_for(
                before,
                spent,
                self.false_positive_rate,
                self.max_levels,
            )?);
        }
        width_for(level, spent, self.false_positive_rate, self.max_levels)
    }
}

/// The set bits of a mask, lowest first.
#[derive(Clone, Copy)]
pub(super) struct Bits(pub(super) u64);

impl Iterator for Bits {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.0 == 0 {
            return None;
        }
        let i = self.0.trailing_zeros() as usize;
        self.0 &= self.0 - 1;
        Some(i)
    }
}

/// The set bits of a mask, highest first.
#[derive(Clone, Copy)]
pub(super) struct BitsDescending(pub(super) u64);

impl Iterator for BitsDescending {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.0 == 0 {
            return None;
        }
        let i = 63 - self.0.leading_zeros() as usize;
        self.0 &= !bit(i);
        Some(i)
    }
}

/// The bit of slot `i` in the `in_use` mask.
#[inline(always)]
pub(super) fn bit(i: usize) -> u64 {
    1 << i
}

impl<S> ScalableCuckooFilter<S> {
    /// A filter of decoded (or newly built) `levels`, each with its slot:
    /// the last one takes inserts (the encoding stores the current level
    /// last), all of them are in use.
    pub(crate) fn from_parts(config: Config, hasher: S, levels: Vec<(usize, Level)>) -> Self {
        let slots: Box<[AtomicPtr<Level>]> = (0..config.max_levels)
            .map(|_| AtomicPtr::new(core::ptr::null_mut()))
            .collect();
        let mut current = 0;
        let mut in_use = 0;
        for (i, level) in levels {
            current = i;
            in_use |= bit(i);
            slots[i].store(Box::into_raw(Box::new(level)), Ordering::Release);
        }
        Self {
            slots,
            current: AtomicU64::new(current as u64),
            in_use: AtomicU64::new(in_use),
            retire_order: AtomicUsize::new(0),
            moves: MoveSequence::default(),
            retired_since_reclaim: AtomicBool::new(false),
            growth: RawLock::default(),
            key_locks: (0..KEY_LOCKS).map(|_| RawLock::default()).collect(),
            hasher,
            config,
        }
    }

    /// Level `i`, if allocated.
    #[inline]
    pub(crate) fn level(&self, i: usize) -> Option<&Level> {
        // `get`: a chunk encoder may ask a filter other than its own for a
        // level past this one's `max_levels` (and gets "changed").
        let ptr = self.slots.get(i)?.load(Ordering::Acquire);
        // SAFETY: a non-null slot points to a `Level` boxed by this filter
        // and freed only by `drop`, which `&self` rules out.
        unsafe { ptr.as_ref() }
    }

    /// The current level's slot: the one taking inserts.
    #[inline(always)]
    pub(super) fn current(&self) -> usize {
        index_of(self.current.load(Ordering::Acquire))
    }

    /// The slots in use (a snapshot).
    #[inline(always)]
    pub(super) fn in_use(&self) -> u64 {
        self.in_use.load(Ordering::Acquire)
    }

    /// The levels a lookup must search: the levels in use, the current
    /// one first (the one most likely to hold a recent key), then the
    /// others, lowest slot first. One load of the mask instead of a slot
    /// pointer per slot. `current` is loaded first: a growth sets a slot's
    /// bit before it publishes the slot as current (release), so the mask
    /// loaded after it holds the current slot's bit, and a lookup that
    /// follows an insert into a level (in happens-before) sees its bit
    /// (loom model `a_reader_sees_a_reopened_slot_while_two_writers_fill_it`;
    /// canary `publish_before_mark`). A retirement clears the bit only
    /// after closing the (empty) level, so skipping it changes no answer.
    #[inline]
    pub(crate) fn live_levels(&self) -> impl Iterator<Item = (usize, &Level)> + '_ {
        let current = self.current();
        let in_use = self.in_use();
        let first = in_use & bit(current);
        Bits(first)
            .chain(Bits(in_use & !first))
            .filter_map(move |i| {
                let level = self.level(i)?;
                // A closed level is empty (it is closed only when emptied or
                // cleared): skipping it changes no answer.
                (i == current || level.accepting()).then_some((i, level))
            })
    }

    /// The levels [`live_levels`](Self::live_levels) yields, highest slot
    /// first (one snapshot of the current level and the mask, loaded in
    /// the same order).
    #[inline]
    pub(crate) fn live_levels_descending(
        &self,
    ) -> impl Iterator<Item = (usize, &Level)> + Clone + '_ {
        let current = self.current();
        let in_use = self.in_use();
        BitsDescending(in_use).filter_map(move |i| {
            let level = self.level(i)?;
            (i == current || level.accepting()).then_some((i, level))
        })
    }

    /// The levels in use in the order of the saved format and of
    /// [`level_stats`](Self::level_stats): ascending slots, the current
    /// level last (for a filter that never switched back to a lower slot,
    /// ascending: the order before slots were reused).
    pub(crate) fn live_levels_oldest_first(&self) -> Vec<(usize, &Level)> {
        let mut levels: Vec<(usize, &Level)> = self.live_levels().collect();
        if !levels.is_empty() {
            levels.rotate_left(1);
        }
        levels
    }
}
