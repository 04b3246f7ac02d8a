//! Jumps of the generation: [`advance_to`] a target far ahead, and the
//! cap. (A child module of `table.rs`, whose fields it reads.)
//!
//! # One pass for any jump
//! From generation `c` to a target `c + d`, `advance_to` with `d` below the
//! sweep's period `P = M - 1 - G` advances `d` times (`d` slices, under
//! one bucket's lock at a time: cheaper than a pass over the whole table).
//! From `d >= P` on it *jumps*: under `advancing` and every stripe lock it
//! clears every lane expired at the target, in one pass, and stores the
//! target. Holding every lock, no lane is tagged `c + 1`, and by INV-3
//! every lane's true age at `c` is `(c - tag) mod M <= M - 2`, so its age
//! at the target is that plus `d` ([`Layout::expired_ahead`]): not its
//! tag's age then, which may have come round (the skip this replaced kept
//! a key inserted during the call alive for `d` a multiple of `M`, issue
//! 49). When `d >= G` every lane has expired at the target: the pass is a
//! *reset*, which zeroes the tag counters and, if they counted any lane,
//! stores zero over every non-zero bucket word (no decoding, no lock per
//! bucket; an idle, empty table costs the counters only). After the pass
//! every lane left is live at the target with an age below `G`, so INV-3
//! holds there and the sweep resumes with the target's slice: each lane's
//! expired generations `[t + G, t + M - 2]` all come after the target.
//!
//! # Lookups during a jump
//! A lookup does not lock, and the pass clears lanes that are live at `c`
//! (they expire at the target). Had the pass run while the generation
//! still read `c`, a lookup could read `c`, a cleared lane, `c` again and
//! the same version: its miss would stand for a key live at `c`, while
//! `generation()` still said `c`; and had the target been stored first, a
//! lookup could read the target and an uncleared lane whose tag has come
//! round: a hit for an expired key. So the jump first stores `c |`
//! [`JUMPING`] (release), then clears (release stores), then stores the
//! target (release):
//! * a lookup that read `c` and then a cleared lane re-reads, after its
//!   acquire fence, a generation no older than the flagged one (the
//!   clearing store it saw follows the flag), which fails `now <= r + 1`:
//!   it retries;
//! * a lookup that read the flagged word reads lanes as at `c` (the flag
//!   is bit 63, and `M` divides `2^63`, so `r & !JUMPING` is `c` and its
//!   tags' ages are `c`'s): a hit is a lane live at `c`, the answer before
//!   the jump, which takes effect only when the target is stored; a miss
//!   never stands (`raw < JUMPING` is part of the rule), and after its
//!   attempts its locked read waits for the jump's locks: the answer after;
//! * a lookup that read the target sees every clear (acquire).
//!
//! Writers and the sweep never see the flag: they read the generation
//! under a stripe lock or `advancing`, which the jump holds.
//! [`generation`](WindowTable::generation) reports `c` during the jump.
//! The canary `windowed_jump_unflagged` clears without the flag; the loom
//! models `a_lookup_racing_a_jump_*` catch it.
//!
//! # The cap
//! Generations stop at [`MAX_GENERATION`] (`2^63 - 1`; bit 63 is the
//! flag), so every generation the library reaches it can save and load.
//! Time does not stop there: an [`advance`](WindowTable::advance) at the
//! cap, and an `advance_to` past it, expire every key (a reset) and leave
//! the generation at the cap; `contains_at` and `len_at` past the cap
//! answer `false` and 0. So no key outlives its window by a stuck counter
//! (issue 50, item 8); at the cap a key lives until the next advance,
//! which may be sooner than `G` generations. Decoding refuses a saved
//! generation past the cap (`persist.rs`).
//!
//! [`advance_to`]: WindowTable::advance_to
//! [`Layout::expired_ahead`]: super::lanes::Layout::expired_ahead

use super::{WindowTable, JUMPING, MAX_GENERATION};
use crate::storage::prefetch;
use crate::sync::{fence, Ordering};

/// Words ahead of the reset's pass that it prefetches (8 KiB).
const PREFETCH_AHEAD: usize = 1024;

impl WindowTable {
    /// Advances until the generation is at least `target` and returns it:
    /// `target - cur` advances when fewer than the sweep's period, else one
    /// jump (module docs); past the cap, a reset at the cap.
    pub(crate) fn advance_to(&self, target: u64) -> u64 {
        let _advancing = self.advancing.guard();
        // Only advancers store it, and we hold their lock.
        let cur = self.generation.load(Ordering::Relaxed);
        if target > MAX_GENERATION {
            self.jump(cur, MAX_GENERATION, true);
            return MAX_GENERATION;
        }
        if target <= cur {
            return cur;
        }
        let ahead = target - cur;
        if ahead < self.layout.slack() {
            let mut reached = cur;
            while reached < target {
                reached = self.advance_locked();
            }
            return reached;
        }
        self.jump(cur, target, ahead >= self.layout.generations());
        target
    }

    /// Moves the generation from `from` (the current one) to `to`
    /// (`from <= to <= MAX_GENERATION`), clearing every lane expired at
    /// `to`, or every lane if `expire_all`; holding `advancing`.
    pub(super) fn jump(&self, from: u64, to: u64, expire_all: bool) {
        let _all = self.stripes.lock_all();
        // The planted bug: clear while lookups still read `from`.
        #[cfg(not(concurrent_cuckoo_canary = "windowed_jump_unflagged"))]
        self.generation.store(from | JUMPING, Ordering::Release);
        #[cfg(concurrent_cuckoo_canary = "windowed_jump_unflagged")]
        let _ = from | JUMPING;
        let cleared = if expire_all {
            self.clear_all()
        } else {
            self.clear_expired_ahead(from, to - from)
        };
        self.swept.store(
            self.swept.load(Ordering::Relaxed) + cleared,
            Ordering::Relaxed,
        );
        self.schedule_sweep(to);
        self.generation.store(to, Ordering::Release);
    }

    /// Empties the table (every stripe lock held, the generation flagged);
    /// returns the lanes it held.
    fn clear_all(&self) -> u64 {
        // The counters count every occupied lane, live or expired, exactly
        // under every lock.
        let mut lanes = 0u64;
        for counter in self.counts.iter() {
            lanes = lanes.wrapping_add(counter.load(Ordering::Relaxed));
            counter.store(0, Ordering::Relaxed);
        }
        if lanes == 0 {
            return 0;
        }
        // Orders the flag before every clearing store below for a lookup
        // that loads one of them and then fences (fence to fence): one
        // fence instead of a release store per word.
        fence(Ordering::Release);
        // A cache line (8 words) at a time: a line of zeros stays untouched
        // (a mapped table's pages never written are not faulted in to
        // store zeros), any other is zeroed whole. A test per word
        // mispredicted on a third of a full table's words (545 ms for
        // 1 GiB, against 43 ms now: `docs/benchmarks.md`, "advance_to
        // past the window").
        let base = self.buckets.as_ptr();
        for (i, line) in self.buckets.chunks(8).enumerate() {
            // Two pages ahead: the hardware prefetcher stops at a 4 KiB
            // page's end, and a heap table (a Redis module's) has no 2 MiB
            // pages.
            prefetch(base.wrapping_add(i * 8 + PREFETCH_AHEAD));
            let any = line
                .iter()
                .fold(0, |any, word| any | word.load(Ordering::Relaxed));
            if any != 0 {
                for word in line {
                    word.store(0, Ordering::Relaxed);
                }
            }
        }
        lanes
    }

    /// Clears the lanes expired `ahead` generations after `cur` (every
    /// stripe lock held, the generation flagged); returns how many.
    fn clear_expired_ahead(&self, cur: u64, ahead: u64) -> u64 {
        let l = self.layout;
        let mut n = 0;
        for bucket in 0..self.buckets.len() {
            let word = self.load(bucket);
            #[cfg(not(concurrent_cuckoo_canary = "windowed_jump_by_tag"))]
            let expired = l.expired_ahead(word, cur, ahead);
            // The planted bug: lanes judged by their tags' ages at the
            // target, which may have come round (as the skip this replaced).
            #[cfg(concurrent_cuckoo_canary = "windowed_jump_by_tag")]
            let expired = l.expired(word, cur + ahead);
            n += self.clear_lanes(self.layout, bucket, word, expired);
        }
        n
    }
}
