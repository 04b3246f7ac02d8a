//! The concurrent table of a windowed filter: tagged lanes (`lanes.rs`),
//! the plain table's stripe locks and move versions (`stripes.rs`), a
//! generation counter, and the incremental sweep that frees expired lanes.
//!
//! # What every write keeps true
//! * **INV-1, moves** (the plain table's invariant, `src/table.rs`): a lane
//!   may stop holding a *live* fingerprint `f` while `f` stays present in
//!   the pair only if the pair's version is bumped after the copy that
//!   stays became visible and before the lane is cleared. Path moves do
//!   exactly that. A refresh rewrites a lane's tag in place (the lane never
//!   stops holding `f`); the sweep and an insert overwrite only lanes that
//!   are *expired* under the locks, whose key no reader must find.
//! * **INV-2, one live lane per fingerprint and pair**: an insert
//!   refreshes the live lane of its fingerprint in either bucket before it
//!   takes a free one, under both buckets' locks; a move checks that its
//!   destination holds no live lane of the fingerprint. So a refresh never
//!   leaves a live older copy behind that would mislead `len`. An expired
//!   lane of the fingerprint may stay until the sweep: it only ages, and
//!   `len` counts live tags only.
//! * **INV-3, no lane is older than `M - 2`**: at every moment, every
//!   occupied lane's tag is the generation (mod `M`) of a generation `t`
//!   with `cur - t <= M - 2`, so `(cur - tag) mod M` is its true age (and a
//!   lane tagged after a reader read `cur` shows age `M - 1`, read as
//!   live). Proof: (a) writers read `cur` *under the bucket's stripe lock*
//!   and store either a new lane tagged `cur` or a moved lane live at
//!   `cur`, so a lane arrives in a bucket with `t + G > c`, `c` the
//!   writer's read; (b) `advance` from generation `x` first sweeps slice
//!   `x mod P` (`P = M - 1 - G`, the slack) *under each bucket's lock*,
//!   clearing every lane expired at `x`, and only then stores `x + 1`;
//!   so bucket `b` is swept at every `x ≡ k_b (mod P)`. A visit at `x > c`
//!   took the lock after the writer released it (had it come before, the
//!   writer would have read `cur >= x`), so it sees the lane. The window
//!   `[t + G, t + M - 2]` holds `P` consecutive generations, all `> c`, so
//!   one visit in it clears the lane before `cur` reaches `t + M - 1`.
//!   Moves never carry an expired lane into a bucket already swept: a hop
//!   whose source lane is expired under the locks clears it instead.
//!   A writer that stalls while holding a lock holds up the sweep of that
//!   bucket, so `cur` cannot run more than `P` generations past its read:
//!   its lane's age is at most `G - 1 + P = M - 2` when it lands.
//!   Who sweeps a slice does not matter, only when: [`sweep_ahead`] (an
//!   insert's help, or a caller's thread) sweeps part of slice `x mod P`
//!   holding `advancing`, so at generation `x`, and `advance` sweeps what
//!   is left before it stores `x + 1`. A jump (`advance_to` by `P` or
//!   more, and every advance at the cap: `jump.rs`) instead clears, under
//!   every lock, every lane expired at its target by its true age, so
//!   every lane left is live there, and restarts the schedule at the
//!   target.
//! * **INV-4, an expired lane is an empty one** to every reader and
//!   writer: a lookup matches neither, an insert, a path search and a hop
//!   take either as free (the first by slot order), and nothing refreshes
//!   an expired lane. So what a table does depends only on its canonical
//!   form, every expired lane cleared, which [`with_snapshot`] writes: copies
//!   that applied the same inserts and advances but swept at different
//!   moments (a replica, a reloaded file, threads helping at other times)
//!   answer, place and save alike.
//!
//! [`sweep_ahead`]: WindowTable::sweep_ahead
//! [`with_snapshot`]: WindowTable::with_snapshot
//!
//! # Lookups
//! Read `cur` (acquire) as `r`, the pair's version, both buckets; a lane
//! that holds `f` and is live at `r` is a hit (it was live at some moment
//! of the lookup: INV-3 bounds what a stale `r` can see). A miss fences
//! (acquire), re-reads the version and `cur`: it stands if the version did
//! not change and `cur <= r + 1`. Then every lane it saw has a tag of at
//! most `r + 1` (a writer reads `cur` before its release store, and the
//! lookup's fence orders its re-read after the loads), and a key live for
//! the whole lookup has tag `>= r - G + 1`, so its age is in `[-1, G)`: it
//! would have been a hit. Otherwise the lookup retries, and after
//! `OPTIMISTIC_ATTEMPTS` reads under the pair's locks. The one writer
//! that clears lanes live at `cur` is a jump (`jump.rs`): it first flags
//! the generation word ([`JUMPING`], bit 63), so a lookup that sees one of
//! its clears re-reads a flagged word, and a miss read under the flag
//! never stands (the rule is `raw < JUMPING && now <= raw + 1`); lanes are
//! read at `raw & !JUMPING`, the generation the jump leaves.
//!
//! # Cost of the sweep
//! Each generation's slice is `n / P` buckets (one stripe lock each, a
//! load, and a store only where a lane expired), whatever `G` is: with the
//! default `M = 8, G = 4`, a third of the table (`n` buckets of 8 bytes).
//! Inserts sweep it ahead of the advance: one insert in
//! [`SWEEP_TRIGGER`]` + 1` (by fingerprint) sweeps the next
//! [`SWEEP_CHUNK`] buckets of the slice if no other thread is sweeping,
//! a bucket per insert on average, so a generation with at least `n / P`
//! inserts leaves `advance` nothing to sweep. `advance` sweeps what is
//! left. Lookups never wait for the sweep; a writer waits at most for the
//! one bucket it holds, or, helping, for its own chunk.

use super::lanes::{Layout, NARROW, WIDE};
use super::path::{Hop, Path, Search};
use crate::error::InsertError;
use crate::index::{FinalizedHashes, HashScheme, IndexMap};
use crate::storage::{prefetch, AllocationError, TableMemory, ZeroedArray};
use crate::stripes::{Counters, StripeGuard, Stripes};
use crate::sync::{fence, spin_hint, AtomicU64, Ordering, RawLock};
use crossbeam_utils::CachePadded;

/// Optimistic lookup attempts before the locked read (one under loom, so
/// that the models reach the locked read).
#[cfg(not(concurrent_cuckoo_loom))]
const OPTIMISTIC_ATTEMPTS: u32 = 4;
#[cfg(concurrent_cuckoo_loom)]
const OPTIMISTIC_ATTEMPTS: u32 = 1;

/// Path searches an insert runs before it searches under every lock.
#[cfg(not(concurrent_cuckoo_loom))]
const PATH_ATTEMPTS: usize = 8;
#[cfg(concurrent_cuckoo_loom)]
const PATH_ATTEMPTS: usize = 1;

/// Buckets an insert that helps the sweep sweeps (see the module docs).
#[cfg_attr(concurrent_cuckoo_loom, allow(dead_code))]
const SWEEP_CHUNK: usize = 64;

/// Inserts whose fingerprint has none of these bits set help the sweep:
/// one in 64 (fingerprints are uniform). Compiled out under loom, where
/// it would make the models' keys behave by their fingerprints; the model
/// `the_sweep_an_insert_runs_ahead_beside_a_reader_of_a_live_key`
/// (`loom-tests/tests/windowed_paths.rs`) calls `sweep_ahead` after an
/// insert instead, which is all the trigger does (the proof of INV-3
/// does not depend on who sweeps).
#[cfg_attr(concurrent_cuckoo_loom, allow(dead_code))]
const SWEEP_TRIGGER: u64 = 63;

/// Set in the generation word while a jump clears lanes (`jump.rs`): the
/// generation it jumps from, flagged, so that no lookup's miss stands.
pub(crate) const JUMPING: u64 = 1 << 63;

/// The last generation, `2^63 - 1` (the cap, `jump.rs`): an advance from
/// it expires every key and stays there.
pub(crate) const MAX_GENERATION: u64 = JUMPING - 1;

#[path = "jump.rs"]
mod jump;

/// Where a hash lives: both buckets and the fingerprint (without tag).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Loc {
    pub(crate) i1: usize,
    pub(crate) i2: usize,
    pub(crate) fp: u64,
}

/// The hash map and lane layout of a table: enough to locate a hash.
#[derive(Clone, Copy)]
pub(crate) struct Locator {
    index: IndexMap,
    layout: Layout,
}

impl Locator {
    /// Both buckets and the fingerprint of a 64-bit hash (the plain
    /// filter's map, `docs/format.md`, with an `f`-bit fingerprint).
    #[inline(always)]
    pub(crate) fn locate(self, hash: u64) -> Loc {
        let prepared = self.index.prepare_as::<FinalizedHashes>(hash);
        let fp = self.layout.fingerprint(prepared);
        let i1 = self.index.primary(prepared);
        Loc {
            i1,
            i2: self.index.alternate(i1, fp),
            fp,
        }
    }
}

pub(crate) struct WindowTable {
    pub(super) buckets: ZeroedArray<AtomicU64>,
    pub(super) index: IndexMap,
    pub(super) stripes: Stripes,
    pub(super) layout: Layout,
    /// Per stripe, a row of `row` counters, the first `M` of which count
    /// the stripe's lanes by tag (two's complement in a `u64`; written only
    /// under the stripe's lock).
    counts: ZeroedArray<AtomicU64>,
    row: usize,
    /// The current generation: read by every lookup, written only by
    /// `advance` (under `advancing`), so it has a line of its own.
    generation: CachePadded<AtomicU64>,
    /// Serialises `advance` calls and the sweep (each sweeps part of its
    /// slice, `advance` then stores the next generation).
    advancing: RawLock,
    /// Buckets at the end of the current generation's slice not swept yet
    /// (written under `advancing`; read without it as a hint), on a line
    /// of its own: helpers write it while every lookup reads `generation`.
    sweep_left: CachePadded<AtomicU64>,
    /// Expired lanes the sweep cleared (written under `advancing`).
    swept: AtomicU64,
    pub(super) max_path: usize,
}

impl WindowTable {
    pub(crate) fn new(
        buckets: usize,
        stripes: Option<usize>,
        layout: Layout,
        max_path: usize,
        memory: TableMemory,
    ) -> Result<Self, AllocationError> {
        let stripes = stripes.unwrap_or_else(|| Stripes::default_count(buckets));
        let versions = Stripes::default_versions(buckets, stripes);
        let stripes = Stripes::new(stripes, versions, memory)?;
        // A row fills whole cache lines: stripes' writers do not share one.
        let row = (layout.tags() as usize).max(8);
        #[cfg(not(concurrent_cuckoo_loom))]
        let (counts, array) = (
            ZeroedArray::zeroed(stripes.count() * row, memory)?,
            ZeroedArray::zeroed(buckets, memory)?,
        );
        #[cfg(concurrent_cuckoo_loom)]
        let (counts, array) = (
            ZeroedArray::from_fn(stripes.count() * row, || AtomicU64::new(0))?,
            ZeroedArray::from_fn(buckets, || AtomicU64::new(0))?,
        );
        let table = Self {
            buckets: array,
            index: IndexMap::new(buckets, HashScheme::Finalized),
            stripes,
            layout,
            counts,
            row,
            generation: CachePadded::new(AtomicU64::new(0)),
            advancing: RawLock::default(),
            sweep_left: CachePadded::new(AtomicU64::new(0)),
            swept: AtomicU64::new(0),
            max_path,
        };
        table.schedule_sweep(0);
        Ok(table)
    }

    /// Both buckets and the fingerprint of a 64-bit hash (the plain
    /// filter's map, `docs/format.md`, with an `f`-bit fingerprint).
    #[inline(always)]
    pub(crate) fn locate(&self, hash: u64) -> Loc {
        self.locator().locate(hash)
    }

    /// What [`locate`](Self::locate) reads, copied out for a batch loop.
    #[inline(always)]
    pub(crate) fn locator(&self) -> Locator {
        Locator {
            index: self.index,
            layout: self.layout,
        }
    }

    #[inline(always)]
    pub(crate) fn prefetch(&self, loc: &Loc) {
        let base = self.buckets.as_ptr();
        prefetch(base.wrapping_add(loc.i1));
        prefetch(base.wrapping_add(loc.i2));
    }

    #[inline(always)]
    fn load(&self, bucket: usize) -> u64 {
        self.buckets[bucket].load(Ordering::Relaxed)
    }

    /// [`load`](Self::load) without the bounds check (a lookup's two).
    ///
    /// # Safety
    /// `bucket` is below `self.buckets.len()`.
    #[inline(always)]
    unsafe fn load_unchecked(&self, bucket: usize) -> u64 {
        debug_assert!(bucket < self.buckets.len());
        // SAFETY: in bounds, as the caller guarantees.
        unsafe { self.buckets.get_unchecked(bucket) }.load(Ordering::Relaxed)
    }

    /// Stores a bucket word: only under the bucket's stripe lock. Release,
    /// so a reader that loads it and then fences sees the writer's read of
    /// the generation (the lookup's miss rule relies on it).
    #[inline(always)]
    fn store(&self, bucket: usize, word: u64) {
        self.buckets[bucket].store(word, Ordering::Release);
    }

    /// The current generation (during a jump, the one it jumps from:
    /// the jump has not taken effect until it stores its target).
    #[inline(always)]
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire) & !JUMPING
    }

    /// Adds `delta` to the count of tag `tag` in `bucket`'s stripe. Only
    /// under that stripe's lock.
    #[inline]
    fn count(&self, bucket: usize, tag: u64, delta: i64) {
        let counter = &self.counts[self.stripes.stripe_of(bucket) * self.row + tag as usize];
        #[cfg(not(concurrent_cuckoo_loom))]
        counter.store(
            counter.load(Ordering::Relaxed).wrapping_add(delta as u64),
            Ordering::Relaxed,
        );
        #[cfg(concurrent_cuckoo_loom)]
        counter.fetch_add(delta as u64, Ordering::Relaxed);
    }

    // ---- lookups ----------------------------------------------------------

    /// Exact lookup (module docs): one optimistic attempt inline; a lookup
    /// that raced a move or two advances continues out of line.
    #[inline(always)]
    pub(crate) fn contains(&self, loc: &Loc) -> bool {
        self.contains_at(loc, 0)
    }

    /// [`contains`](Self::contains) as if the generation were `at` when
    /// `at` is ahead of it (nothing changes): a lane live now is live then
    /// if it is `at - r` generations younger than the window. A key live at
    /// `at` must be tagged `at - G + 1` or later, so beyond `r + G` nothing
    /// is (a key inserted during the call may be tagged after `r + 1`
    /// only if the generation moved: a racing writer's key may be missed,
    /// as by an `advance`).
    #[inline(always)]
    pub(crate) fn contains_at(&self, loc: &Loc, at: u64) -> bool {
        if at > MAX_GENERATION {
            return false; // past the cap every key has expired (`jump.rs`)
        }
        match self.contains_optimistic(loc, at) {
            Some(answer) => answer,
            None => self.contains_contended(loc.i1, loc.i2, loc.fp, at),
        }
    }

    /// The rest of a lookup whose first attempt raced a writer: more
    /// optimistic attempts, then a read under the pair's locks.
    #[cold]
    #[inline(never)]
    fn contains_contended(&self, i1: usize, i2: usize, fp: u64, at: u64) -> bool {
        let loc = Loc { i1, i2, fp };
        for _ in 1..OPTIMISTIC_ATTEMPTS {
            crate::table::diagnostics::note_retry();
            spin_hint();
            if let Some(answer) = self.contains_optimistic(&loc, at) {
                return answer;
            }
        }
        crate::table::diagnostics::note_retry();
        self.contains_locked(&loc, at)
    }

    /// One attempt: `None` when a move or more than one advance may have
    /// hidden the key from it.
    #[inline(always)]
    fn contains_optimistic(&self, loc: &Loc, at: u64) -> Option<bool> {
        // One branch on the width, each side with its constants folded.
        if self.layout.is_wide() {
            self.contains_optimistic_in(self.layout.fixed::<WIDE>(), loc, at)
        } else {
            self.contains_optimistic_in(self.layout.fixed::<NARROW>(), loc, at)
        }
    }

    /// [`contains_optimistic`](Self::contains_optimistic) with the layout
    /// `l` (this table's, its width's constants fixed).
    #[inline(always)]
    fn contains_optimistic_in(&self, l: Layout, loc: &Loc, at: u64) -> Option<bool> {
        // Flagged while a jump clears lanes (`jump.rs`): the lanes are read
        // at the generation it jumps from, and a miss does not stand.
        let raw = self.generation.load(Ordering::Acquire);
        let r = raw & !JUMPING;
        // `at = 0` (a plain lookup) folds to the filter's own constant.
        let Some(over) = l.over_at(at, r) else {
            return Some(false);
        };
        let version = self.stripes.read_version(loc.i1, loc.i2);
        // Every `Loc` comes from `locate` (directly, or its fields passed on
        // by `contains_contended`), whose buckets are below the index map's
        // count (`IndexMap::primary`, `IndexMap::alternate`).
        // SAFETY: that count is the array's length; neither changes after `new`.
        let (w1, w2) = unsafe { (self.load_unchecked(loc.i1), self.load_unchecked(loc.i2)) };
        // The fingerprint first: a miss, the common case, rarely has a lane
        // of its fingerprint, and then needs no age at all. In 16-bit lanes
        // the plain table's SIMD compare of both buckets (tags masked off)
        // screens for one; in 32-bit lanes (two a word) the SWAR compare
        // below is as short, so it runs alone.
        let fp_mask = l.fp_mask();
        let hit = |m1: u64, m2: u64, clock: u64| {
            self.live(l, m1, w1, clock, r, over) | self.live(l, m2, w2, clock, r, over) != 0
        };
        if l.is_wide() {
            let fps = l.spread(loc.fp);
            let (m1, m2) = (l.holds_fp(w1, fps), l.holds_fp(w2, fps));
            if m1 | m2 != 0 && hit(m1, m2, l.clock(r)) {
                return Some(true);
            }
        } else if crate::probe::pair_u16(w1 & fp_mask, w2 & fp_mask, loc.fp as u16) {
            let (fps, clock) = (l.spread(loc.fp), l.clock(r));
            if hit(l.holds_fp(w1, fps), l.holds_fp(w2, fps), clock) {
                return Some(true);
            }
        }
        fence(Ordering::Acquire);
        let now = self.generation.load(Ordering::Relaxed);
        #[cfg(not(concurrent_cuckoo_canary = "windowed_unvalidated_generation"))]
        let settled = raw < JUMPING && now <= raw + 1;
        // The planted bug: a miss stands however far the generation moved.
        #[cfg(concurrent_cuckoo_canary = "windowed_unvalidated_generation")]
        let settled = {
            let _ = now;
            true
        };
        (version.unchanged() && settled).then_some(false)
    }

    /// The lanes of `matches` (lanes of `word` holding the fingerprint)
    /// live at generation `r`, whose [`clock`](Layout::clock) is `clock`,
    /// or later as `over` says ([`Layout::over_at`]).
    #[inline(always)]
    fn live(&self, l: Layout, matches: u64, word: u64, clock: u64, r: u64, over: u64) -> u64 {
        let hits = matches & !l.aged_out_over(word, clock, over);
        #[cfg(not(concurrent_cuckoo_canary = "windowed_no_future"))]
        let _ = r;
        // The planted bug: a lane tagged `r + 1` reads as expired.
        #[cfg(concurrent_cuckoo_canary = "windowed_no_future")]
        let hits = hits & !l.tagged(word, r + 1);
        hits
    }

    /// The lookup under both stripe locks, where nothing in the pair
    /// changes: exact at the generation read under them.
    #[cold]
    #[inline(never)]
    fn contains_locked(&self, loc: &Loc, at: u64) -> bool {
        crate::table::diagnostics::note_locked_read();
        let _guard = self.stripes.lock_pair(loc.i1, loc.i2);
        let l = self.layout;
        let r = self.generation();
        let Some(over) = l.over_at(at, r) else {
            return false;
        };
        let (fps, clock) = (l.spread(loc.fp), l.clock(r));
        let (w1, w2) = (self.load(loc.i1), self.load(loc.i2));
        let hits = |w: u64| l.holds_fp(w, fps) & !l.aged_out_over(w, clock, over);
        hits(w1) | hits(w2) != 0
    }

    // ---- inserts ----------------------------------------------------------

    /// Inserts or refreshes `loc`, tagged with the generation read under
    /// its locks. `Full` only if no slot is free or expired within a path
    /// found under every lock.
    pub(crate) fn insert(&self, loc: &Loc) -> Result<(), InsertError> {
        let result = self.store_key(loc);
        #[cfg(not(concurrent_cuckoo_loom))]
        if loc.fp & SWEEP_TRIGGER == 0 {
            self.sweep_ahead(SWEEP_CHUNK);
        }
        result
    }

    /// [`insert`](Self::insert) without its share of the sweep.
    fn store_key(&self, loc: &Loc) -> Result<(), InsertError> {
        self.prefetch(loc);
        for _ in 0..PATH_ATTEMPTS {
            // Read under the locks: a lane is never tagged older than the
            // generation its bucket's last sweep saw (INV-3 (a)).
            #[cfg(not(concurrent_cuckoo_canary = "windowed_cur_before_lock"))]
            let placed = self.place(loc, &self.stripes.lock_pair(loc.i1, loc.i2), 0);
            // The planted bug: the generation read before the locks.
            #[cfg(concurrent_cuckoo_canary = "windowed_cur_before_lock")]
            let placed = {
                let cur = self.generation();
                self.place_at(loc, &self.stripes.lock_pair(loc.i1, loc.i2), 0, cur)
            };
            if placed {
                return Ok(());
            }
            let Some(path) = self.search(loc) else {
                break;
            };
            let done = path
                .hops()
                .take_while(|hop| self.hop(hop, &self.stripes.lock_pair(hop.from(), hop.to())))
                .count();
            if done == path.len() {
                let guard = self.stripes.lock_pair(loc.i1, loc.i2);
                if self.place(loc, &guard, path.len()) {
                    return Ok(());
                }
            }
        }
        // Every stripe, ascending (as `clear`): nobody else writes now, so
        // a path the search does not find does not exist.
        #[cfg(not(concurrent_cuckoo_canary = "windowed_fallback_cur_before_lock"))]
        let all = self.stripes.lock_all();
        #[cfg(not(concurrent_cuckoo_canary = "windowed_fallback_cur_before_lock"))]
        let placed = self.place(loc, &all, 0);
        // The planted bug: the fallback reads the generation before it
        // takes every lock (advances sweep meanwhile).
        #[cfg(concurrent_cuckoo_canary = "windowed_fallback_cur_before_lock")]
        let (all, placed) = {
            let cur = self.generation();
            let all = self.stripes.lock_all();
            let placed = self.place_at(loc, &all, 0, cur);
            (all, placed)
        };
        if placed {
            return Ok(());
        }
        if let Some(path) = self.search(loc) {
            if path.hops().all(|hop| self.hop(hop, &all)) && self.place(loc, &all, path.len()) {
                return Ok(());
            }
        }
        all.record_full(loc.i1);
        Err(InsertError::Full)
    }

    /// Under `guard` (both buckets' stripes): refreshes the live lane of
    /// `loc.fp` to the current generation, or stores it in the first empty
    /// or expired lane. `false` if neither bucket has one. An expired lane
    /// counts only as free space, never as the key's (INV-4).
    fn place(&self, loc: &Loc, guard: &StripeGuard<'_>, path_len: usize) -> bool {
        self.place_at(loc, guard, path_len, self.generation())
    }

    /// [`place`](Self::place) with the generation `cur` read under the
    /// locks (the canary `windowed_cur_before_lock` reads it before).
    #[inline]
    fn place_at(&self, loc: &Loc, guard: &StripeGuard<'_>, path_len: usize, cur: u64) -> bool {
        // One branch on the width, each side with its constants folded.
        if self.layout.is_wide() {
            self.place_in(self.layout.fixed::<WIDE>(), loc, guard, path_len, cur)
        } else {
            self.place_in(self.layout.fixed::<NARROW>(), loc, guard, path_len, cur)
        }
    }

    /// [`place_at`](Self::place_at) with the layout `l` (this table's, its
    /// width's constants fixed).
    #[inline(always)]
    fn place_in(
        &self,
        l: Layout,
        loc: &Loc,
        guard: &StripeGuard<'_>,
        path_len: usize,
        cur: u64,
    ) -> bool {
        let lane = l.lane(loc.fp, cur);
        let words = [(loc.i1, self.load(loc.i1)), (loc.i2, self.load(loc.i2))];
        for (bucket, word) in words {
            if let Some(slot) = l.first(l.live_matches(word, loc.fp, cur)) {
                let old = l.get(word, slot);
                if old != lane {
                    self.store(bucket, l.set(word, slot, lane));
                    self.count(bucket, l.tag_of_lane(old), -1);
                    self.count(bucket, l.tag_of(cur), 1);
                }
                // For a windowed table the stripes' remove counters count
                // refreshes (see `stats`).
                guard.record_remove(loc.i1);
                return true;
            }
        }
        for (bucket, word) in words {
            if let Some(slot) = l.first(l.free(word, cur)) {
                let old = l.get(word, slot);
                if old != 0 {
                    self.count(bucket, l.tag_of_lane(old), -1);
                }
                self.store(bucket, l.set(word, slot, lane));
                self.count(bucket, l.tag_of(cur), 1);
                guard.record_insert(loc.i1, path_len);
                return true;
            }
        }
        false
    }

    /// A path that frees a lane for `loc`, searched without locks at the
    /// current generation.
    fn search(&self, loc: &Loc) -> Option<Path> {
        let search = Search {
            buckets: &self.buckets,
            index: self.index,
            layout: self.layout,
            max_path: self.max_path,
        };
        search.run(loc.i1, loc.i2, self.generation())
    }

    /// One hop of a path, under `guard` (both buckets' stripes): moves the
    /// live lane of `hop.fp()` in `hop.from()[hop.slot()]` to a free lane
    /// of `hop.to()` (copy, version bump, clear: INV-1), or, if that lane has
    /// expired, clears it (it must not reach a bucket the sweep already
    /// passed: INV-3). `false` if the table changed since the search.
    fn hop(&self, hop: &Hop, guard: &StripeGuard<'_>) -> bool {
        // One branch on the width, each side with its constants folded.
        if self.layout.is_wide() {
            self.hop_in(self.layout.fixed::<WIDE>(), hop, guard)
        } else {
            self.hop_in(self.layout.fixed::<NARROW>(), hop, guard)
        }
    }

    /// [`hop`](Self::hop) with the layout `l` (this table's, its width's
    /// constants fixed).
    #[inline(always)]
    fn hop_in(&self, l: Layout, hop: &Hop, guard: &StripeGuard<'_>) -> bool {
        let cur = self.generation();
        let (from, to, slot, fp) = (hop.from(), hop.to(), hop.slot(), hop.fp());
        let (wf, wt) = (self.load(from), self.load(to));
        let lane = l.get(wf, slot);
        if lane == 0 || l.fp_of_lane(lane) != fp {
            return false;
        }
        let flag = l.flag(slot);
        // The planted bug: an expired lane is moved like a live one.
        #[cfg(concurrent_cuckoo_canary = "windowed_move_expired")]
        let flag = {
            let _ = flag;
            0
        };
        if l.expired(wf, cur) & flag != 0 {
            self.store(from, l.set(wf, slot, 0));
            self.count(from, l.tag_of_lane(lane), -1);
            return true;
        }
        let Some(into) = l.first(l.free(wt, cur)) else {
            return false;
        };
        if l.live_matches(wt, fp, cur) != 0 {
            return false; // never two live lanes of one fingerprint in a pair
        }
        let old = l.get(wt, into);
        if old != 0 {
            self.count(to, l.tag_of_lane(old), -1);
        }
        self.store(to, l.set(wt, into, lane));
        self.count(to, l.tag_of_lane(lane), 1);
        #[cfg(not(concurrent_cuckoo_canary = "windowed_hop_into_occupied_unbumped"))]
        guard.bump_version(from, to);
        // The planted bug: a hop into a bucket that holds other lanes (as
        // the second hop of a two-hop path does) skips the version bump.
        #[cfg(concurrent_cuckoo_canary = "windowed_hop_into_occupied_unbumped")]
        if wt == 0 {
            guard.bump_version(from, to);
        }
        self.store(from, l.set(wf, slot, 0));
        self.count(from, l.tag_of_lane(lane), -1);
        guard.record_move(from);
        true
    }

    // ---- generations and the sweep ----------------------------------------

    /// Buckets `[lo, hi)` swept while the generation is `generation`.
    fn slice(&self, generation: u64) -> (usize, usize) {
        let (n, p) = (self.buckets.len() as u64, self.layout.slack());
        let k = generation % p;
        ((k * n / p) as usize, ((k + 1) * n / p) as usize)
    }

    /// Starts the next generation: sweeps this generation's slice, then
    /// publishes the new generation. Returns it.
    pub(crate) fn advance(&self) -> u64 {
        let _advancing = self.advancing.guard();
        self.advance_locked()
    }

    /// [`advance`](Self::advance), holding `advancing`.
    fn advance_locked(&self) -> u64 {
        // Only advancers store it, and we hold their lock: it stays `cur`
        // while we sweep, so each bucket's expiry is decided at the
        // generation current under its stripe lock.
        let cur = self.generation.load(Ordering::Relaxed);
        if cur == MAX_GENERATION {
            // The cap: every key expires, the generation stays (`jump.rs`).
            self.jump(cur, cur, true);
            return cur;
        }
        let (_, hi) = self.slice(cur);
        let left = self.sweep_left.load(Ordering::Relaxed) as usize;
        #[cfg(not(concurrent_cuckoo_canary = "windowed_sweep_after_publish"))]
        for bucket in hi - left..hi {
            self.sweep(bucket, cur);
            // The planted bug: the slice also loses the lanes that expire
            // at the generation about to be stored, while readers still
            // read `cur` (a key live through `cur` cleared early).
            #[cfg(concurrent_cuckoo_canary = "windowed_sweep_clears_next")]
            self.sweep(bucket, cur + 1);
        }
        self.schedule_sweep(cur + 1);
        self.generation.store(cur + 1, Ordering::Release);
        // The planted bug: the slice swept after the next generation is
        // published, when a lane expired at `cur` may read live again.
        #[cfg(concurrent_cuckoo_canary = "windowed_sweep_after_publish")]
        for bucket in hi - left..hi {
            self.sweep(bucket, cur);
        }
        cur + 1
    }

    /// Makes `generation`'s slice the one to sweep (holding `advancing`,
    /// or before the table is shared).
    fn schedule_sweep(&self, generation: u64) {
        let (lo, hi) = self.slice(generation);
        self.sweep_left.store((hi - lo) as u64, Ordering::Relaxed);
    }

    /// Buckets of the current generation's slice not swept yet (a
    /// relaxed read: exact while nothing advances or sweeps).
    pub(crate) fn sweep_left(&self) -> usize {
        self.sweep_left.load(Ordering::Relaxed) as usize
    }

    /// Sweeps up to `max` buckets of the current generation's slice, the
    /// part `advance` would otherwise sweep; returns how many. 0 when the
    /// slice is done or another thread is advancing or sweeping (never
    /// waits).
    pub(crate) fn sweep_ahead(&self, max: usize) -> usize {
        if self.sweep_left.load(Ordering::Relaxed) == 0 {
            return 0;
        }
        let Some(_advancing) = self.advancing.try_guard() else {
            return 0;
        };
        // Stored only under `advancing`: fixed while we hold it.
        let cur = self.generation.load(Ordering::Relaxed);
        let (_, hi) = self.slice(cur);
        let left = self.sweep_left.load(Ordering::Relaxed) as usize;
        let n = left.min(max);
        // The planted bug: a helper sweeps for the generation the next
        // advance will store, clearing lanes still live at `cur`.
        #[cfg(concurrent_cuckoo_canary = "windowed_help_sweeps_for_next_generation")]
        let cur = cur + 1;
        for bucket in hi - left..hi - left + n {
            self.sweep(bucket, cur);
        }
        self.sweep_left.store((left - n) as u64, Ordering::Relaxed);
        n
    }

    /// Clears `bucket`'s lanes expired at `cur`, under its stripe lock.
    fn sweep(&self, bucket: usize, cur: u64) {
        // One branch on the width, each side with its constants folded.
        if self.layout.is_wide() {
            self.sweep_in(self.layout.fixed::<WIDE>(), bucket, cur)
        } else {
            self.sweep_in(self.layout.fixed::<NARROW>(), bucket, cur)
        }
    }

    /// [`sweep`](Self::sweep) with the layout `l` (this table's, its
    /// width's constants fixed).
    #[inline(always)]
    fn sweep_in(&self, l: Layout, bucket: usize, cur: u64) {
        #[cfg(not(concurrent_cuckoo_canary = "windowed_unlocked_sweep"))]
        let _guard = self.stripes.lock_pair(bucket, bucket);
        // The planted bug: decide and clear without the lock, racing a
        // refresh of the same lane.
        let word = self.load(bucket);
        #[cfg(not(concurrent_cuckoo_canary = "windowed_sweep_counts_unlocked"))]
        let n = self.clear_lanes(l, bucket, word, l.expired(word, cur));
        // The planted bug: the sweep uncounts the lanes it cleared after
        // releasing the bucket's lock, a load and a store racing a writer's
        // count of the same tag in the same stripe.
        #[cfg(concurrent_cuckoo_canary = "windowed_sweep_counts_unlocked")]
        let n = {
            let expired = l.expired(word, cur);
            self.store(bucket, word & !l.spread_flags(expired));
            drop(_guard);
            let mut n = 0;
            for slot in 0..l.slots() {
                if expired & l.flag(slot) != 0 {
                    let tag = l.tag_of_lane(l.get(word, slot));
                    let counter =
                        &self.counts[self.stripes.stripe_of(bucket) * self.row + tag as usize];
                    let value = counter.load(Ordering::Relaxed);
                    counter.store(value.wrapping_sub(1), Ordering::Relaxed);
                    n += 1;
                }
            }
            n
        };
        if n > 0 {
            self.swept
                .store(self.swept.load(Ordering::Relaxed) + n, Ordering::Relaxed);
        }
    }

    /// Clears the lanes of `expired` (a flag mask) in `bucket`, which holds
    /// `word`, and uncounts them; returns how many. Under the bucket's
    /// stripe lock; `l` is this table's layout (its width's constants
    /// fixed, or not).
    #[inline(always)]
    fn clear_lanes(&self, l: Layout, bucket: usize, word: u64, mut expired: u64) -> u64 {
        if expired == 0 {
            return 0;
        }
        let mut cleared = word;
        let mut n = 0;
        while let Some(slot) = l.first(expired) {
            self.count(bucket, l.tag_of_lane(l.get(word, slot)), -1);
            cleared = l.set(cleared, slot, 0);
            expired &= !l.flag(slot);
            n += 1;
        }
        self.store(bucket, cleared);
        n
    }

    // ---- persistence ------------------------------------------------------

    /// Runs `f` on the generation and every bucket (canonical: expired
    /// lanes cleared) at one moment: under the advance lock and every
    /// stripe lock, held until `f` returns (writers and `advance` wait;
    /// lookups do not). No copy of the table is made.
    #[cfg(not(concurrent_cuckoo_loom))]
    pub(crate) fn with_snapshot<R>(
        &self,
        f: impl FnOnce(u64, &mut dyn Iterator<Item = u64>) -> R,
    ) -> R {
        let _advancing = self.advancing.guard();
        let _all = self.stripes.lock_all();
        let cur = self.generation();
        let mut words = self
            .buckets
            .iter()
            .map(|b| self.layout.without_expired(b.load(Ordering::Relaxed), cur));
        f(cur, &mut words)
    }

    /// Copies every bucket's canonical word (expired lanes cleared) into
    /// `body`, 8 little-endian bytes each, at one moment, beside writers
    /// (`snapshot.rs`): writers wait for at most one stripe group's copy;
    /// `advance` (whose sweep changes buckets outside any writer's lock
    /// order) waits for the whole copy, as the advance lock is held
    /// throughout. Returns the generation the copy is canonical at.
    #[cfg(not(concurrent_cuckoo_loom))]
    pub(crate) fn snapshot_into(&self, body: &mut [u8]) -> u64 {
        let _advancing = self.advancing.guard();
        // Stored only under `advancing` (and a jump holds it too): fixed.
        let cur = self.generation();
        let (buckets, layout) = (&self.buckets[..], self.layout);
        crate::snapshot::copy_into_body(&self.stripes, buckets.len(), 8, body, |i, out| {
            let word = layout.without_expired(buckets[i].load(Ordering::Relaxed), cur);
            out.copy_from_slice(&word.to_le_bytes());
        });
        cur
    }

    /// A table of this one's geometry holding its canonical buckets and
    /// generation at one moment, copied beside writers as
    /// [`snapshot_into`](Self::snapshot_into) copies them (`advance`
    /// waits for the copy). Counters of past operations start at 0.
    #[cfg(not(concurrent_cuckoo_loom))]
    pub(crate) fn try_clone(&self) -> Result<Self, AllocationError> {
        let copy = Self::new(
            self.buckets.len(),
            Some(self.stripes.count()),
            self.layout,
            self.max_path,
            self.stripes.memory(),
        )?;
        let cur = {
            let _advancing = self.advancing.guard();
            // Stored only under `advancing` (and a jump holds it too).
            let cur = self.generation();
            let (from, layout) = (&self.buckets[..], self.layout);
            let to = &copy.buckets[..];
            crate::snapshot::copy_every_bucket(&self.stripes, from.len(), |i| {
                // Nobody else sees `copy` yet.
                to[i].store(
                    layout.without_expired(from[i].load(Ordering::Relaxed), cur),
                    Ordering::Relaxed,
                );
            });
            cur
        };
        // Counted once the copy is whole (several threads made it): each
        // word stored again as it is, and its lanes counted.
        let _all = copy.stripes.lock_all();
        copy.restore_generation(cur);
        for bucket in 0..copy.buckets.len() {
            copy.restore_word(bucket, copy.load(bucket));
        }
        drop(_all);
        Ok(copy)
    }

    /// Sets the generation and the buckets (`words`, one per bucket, no
    /// expired lane) of a table no other thread sees yet, and counts them.
    #[cfg(not(concurrent_cuckoo_loom))]
    pub(crate) fn restore(&self, generation: u64, words: impl IntoIterator<Item = u64>) {
        let _all = self.stripes.lock_all();
        self.restore_generation(generation);
        for (bucket, word) in words.into_iter().enumerate().take(self.buckets.len()) {
            self.restore_word(bucket, word);
        }
    }

    /// Sets the generation of a table no other thread sees yet (before
    /// its words: [`restore_word`](Self::restore_word)).
    #[cfg(not(concurrent_cuckoo_loom))]
    pub(crate) fn restore_generation(&self, generation: u64) {
        self.schedule_sweep(generation);
        self.generation.store(generation, Ordering::Release);
    }

    /// Sets bucket `bucket` (in range) of a table no other thread sees
    /// yet to `word` (no expired lane) and counts its lanes.
    #[cfg(not(concurrent_cuckoo_loom))]
    pub(crate) fn restore_word(&self, bucket: usize, word: u64) {
        self.store(bucket, word);
        let l = self.layout;
        for slot in 0..l.slots() {
            let lane = l.get(word, slot);
            if lane != 0 {
                self.count(bucket, self.layout.tag_of_lane(lane), 1);
            }
        }
    }

    /// Bucket `bucket`'s word as an encoding at `generation` writes it:
    /// its lanes expired then cleared (a relaxed read, no lock: exact
    /// while nothing writes the bucket).
    #[cfg(not(concurrent_cuckoo_loom))]
    pub(crate) fn canonical_word(&self, bucket: usize, generation: u64) -> u64 {
        self.layout.without_expired(self.load(bucket), generation)
    }

    // ---- sizes and counters -----------------------------------------------

    /// Live lanes: the counts of the tags live at the current generation.
    /// Exact when no thread writes.
    pub(crate) fn len(&self) -> usize {
        self.len_at(0)
    }

    /// [`len`](Self::len) as if the generation were `at` when `at` is
    /// ahead: the lanes whose age would still be below `G` then.
    pub(crate) fn len_at(&self, at: u64) -> usize {
        let l = self.layout;
        let cur = self.generation();
        if at > MAX_GENERATION {
            return 0; // past the cap every key has expired (`jump.rs`)
        }
        let ahead = at.saturating_sub(cur);
        let live_ages = l.generations().saturating_sub(ahead);
        let mut sum = 0i64;
        for stripe in 0..self.stripes.count() {
            let row = &self.counts[stripe * self.row..][..self.row];
            for age in 0..live_ages {
                sum += row[l.tag_of(cur.wrapping_sub(age)) as usize].load(Ordering::Relaxed) as i64;
            }
        }
        sum.max(0) as usize
    }

    pub(crate) fn counters(&self) -> Counters {
        self.stripes.counters()
    }

    pub(crate) fn swept(&self) -> u64 {
        self.swept.load(Ordering::Relaxed)
    }

    pub(crate) fn memory_usage(&self) -> usize {
        core::mem::size_of_val(&*self.buckets)
            + self.stripes.memory_usage()
            + core::mem::size_of_val(&*self.counts)
    }

    /// [`scan`](Self::scan) for tables of at most 65,536 buckets (512 KiB),
    /// `(0, 0)` for larger ones.
    pub(crate) fn scan_if_small(&self) -> (usize, usize) {
        if self.buckets.len() <= 1 << 16 {
            self.scan()
        } else {
            (0, 0)
        }
    }

    /// Occupied lanes and lanes live at the current generation, by
    /// scanning (tests).
    #[cfg_attr(concurrent_cuckoo_loom, allow(dead_code))]
    pub(crate) fn scan(&self) -> (usize, usize) {
        let cur = self.generation();
        self.buckets.iter().fold((0, 0), |(o, l), b| {
            let w = b.load(Ordering::Relaxed);
            let ones = |m: u64| m.count_ones() as usize;
            (
                o + ones(self.layout.occupied(w)),
                l + ones(self.layout.live(w, cur)),
            )
        })
    }
}
