//! Batches in stages: the memory-level parallelism of every batch lookup.
//!
//! A batch that looks keys up in a table larger than the cache is bound by
//! how many of its cache misses are in flight at once. [`staged`] takes
//! keys [`STAGE`] at a time: it makes every location of the next stage
//! and starts loading its buckets, then probes the current stage. Making
//! locations is arithmetic and prefetches with no load that waits, so a
//! stage's misses are all issued together, and a probe that waits for its
//! line holds back only the probes behind it.
//!
//! Why not a sliding window (each key's buckets prefetched a few keys
//! before its probe, as the batches did before): there a probe that waits
//! sits between every two prefetches, and once the core's out-of-order
//! window fills behind it, the later prefetches wait too, so fewer misses
//! overlap than the window promises. At 2^24 keys (a 32 MiB table), bursts
//! of 32 took 20.4 ns a key that way and 10.7 in stages, and one batch of
//! 4M keys 17.6 against 5.8; in cache both run alike
//! (`docs/benchmarks.md`, "Batch lookups in stages").

use core::mem::MaybeUninit;

/// Keys per stage: a DPDK burst, and 64 bucket lines in flight (two a
/// key), about what a core's miss buffers and its prefetcher queue take.
pub(crate) const STAGE: usize = 32;

/// Runs `probe(k, &locate(k))` for every `k` in `0..n`, in order, in
/// stages of [`STAGE`] keys: the next stage's locations are all made (each
/// passed to `prefetch` as it is made) before the current stage is
/// probed. `locate` runs for the keys in order, a stage ahead of
/// `probe`.
#[inline(always)]
pub(crate) fn staged<L: Copy>(
    n: usize,
    locate: impl Fn(usize) -> L,
    prefetch: impl Fn(&L),
    mut probe: impl FnMut(usize, &L),
) {
    type Stage<L> = [MaybeUninit<L>; STAGE];
    // Uninitialised: a burst of a few keys writes only its own entries,
    // not two stages of filler (which cost a burst of 8 a tenth of its
    // time).
    let mut stages: [Stage<L>; 2] = [[MaybeUninit::uninit(); STAGE]; 2];
    // Locates keys `start..` (at most a stage of them) into `stage`;
    // how many.
    let fill = |stage: &mut Stage<L>, start: usize| {
        let len = STAGE.min(n - start);
        for (j, slot) in stage[..len].iter_mut().enumerate() {
            let loc = locate(start + j);
            prefetch(&loc);
            slot.write(loc);
        }
        len
    };
    let [first, second] = &mut stages;
    let (mut this, mut other) = (first, second);
    let mut start = 0;
    let mut len = if n > 0 { fill(this, 0) } else { 0 };
    while len > 0 {
        let next = start + len;
        let next_len = if next < n { fill(other, next) } else { 0 };
        for (j, slot) in this[..len].iter().enumerate() {
            // SAFETY: `fill` wrote `this[..len]` in this stage's turn (the
            // stages swap only after their probes).
            probe(start + j, unsafe { slot.assume_init_ref() });
        }
        core::mem::swap(&mut this, &mut other);
        start = next;
        len = next_len;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    #[test]
    fn every_key_is_located_and_probed_once_in_order_one_stage_ahead() {
        for n in [0, 1, 7, 31, 32, 33, 63, 64, 65, 100, 1000] {
            let located = RefCell::new(Vec::new());
            let prefetched = RefCell::new(Vec::new());
            let mut probed = Vec::new();
            staged(
                n,
                |k| {
                    located.borrow_mut().push(k);
                    k * 3
                },
                |&loc| prefetched.borrow_mut().push(loc / 3),
                |k, &loc| {
                    assert_eq!(loc, k * 3, "key {k} probed with another key's location");
                    // Located: this stage and the next, no further.
                    let ahead = located.borrow().len();
                    let limit = ((k / STAGE + 2) * STAGE).min(n);
                    assert_eq!(ahead, limit, "{ahead} located at the probe of {k}");
                    probed.push(k);
                },
            );
            let all: Vec<usize> = (0..n).collect();
            assert_eq!(*located.borrow(), all, "n = {n}");
            assert_eq!(*prefetched.borrow(), all, "n = {n}");
            assert_eq!(probed, all, "n = {n}");
        }
    }
}
