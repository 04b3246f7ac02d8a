//! Breadth-first search for a cuckoo displacement path, and its execution.
//!
//! Following libcuckoo, the search runs *without locks*, reading buckets with
//! atomic loads, and finds the shortest path of moves that ends in a free
//! slot. The path is then executed from its free end backwards, one hop at a
//! time, each under the two stripe locks of that hop, after checking that the
//! source slot still holds the fingerprint the search saw and that the
//! destination still has a free slot. A failed check abandons the path (the
//! hops already done were each a valid move, so nothing is lost) and the
//! insert searches again. No fingerprint is ever evicted without a place to
//! go, so a full table returns an error instead of dropping a victim.
//!
//! The queue is a fixed-size array on the stack: no allocation per insert.

use crate::fingerprint::{Fingerprint, SLOTS};
use crate::storage::prefetch;
use crate::stripes::StripeGuard;
use crate::table::{RawTable, MAX_PATH_LIMIT};
use core::mem::MaybeUninit;

/// Queue capacity: both roots and every node up to `MAX_PATH_LIMIT` hops
/// deep, `2 * (1 + 4 + ... + 4^MAX_PATH_LIMIT)`.
const QUEUE_CAP: usize = 2 * ((SLOTS.pow(MAX_PATH_LIMIT as u32 + 1) - 1) / (SLOTS - 1));

/// Nodes of the widest level a search ever expands (depth
/// `MAX_PATH_LIMIT - 1`; the deepest level is only scanned).
const EXPAND_CAP: usize = 2 * SLOTS.pow(MAX_PATH_LIMIT as u32 - 1);

/// How many nodes ahead of its scan a search generates (and prefetches)
/// the next ones: a level's first free bucket is usually among its first
/// few (about one in five buckets has a free slot at 90% load), and more
/// loads in flight only queue behind each other.
const SCAN_AHEAD: usize = 8;

/// A bucket reached by the search.
#[derive(Clone, Copy, Default)]
struct Node {
    /// Bucket index (< 2^32 by construction of `IndexMap`).
    bucket: u32,
    /// The fingerprint that would move into this bucket from the parent.
    fp: u32,
    /// Index of the parent node in the queue (unused for roots).
    parent: u16,
    /// Slot of the parent bucket that holds `fp`.
    parent_slot: u8,
    /// Moves from a root to here.
    depth: u8,
}

/// One move: the fingerprint `fp` in `from[slot]` goes to any free slot of `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Hop<F> {
    pub(crate) from: usize,
    pub(crate) slot: usize,
    pub(crate) fp: F,
    pub(crate) to: usize,
}

/// Moves in execution order (the hop into the free slot comes first).
#[derive(Debug)]
pub(crate) struct Path<F> {
    hops: [Option<Hop<F>>; MAX_PATH_LIMIT],
    len: usize,
}

impl<F: Copy> Path<F> {
    /// Moves in the path.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn hops(&self) -> impl Iterator<Item = Hop<F>> + '_ {
        self.hops[..self.len]
            .iter()
            .map(|h| h.expect("hops below len are set"))
    }
}

/// The BFS queue: a fixed array on the stack that is *not* initialised up
/// front. Zeroing all 32 KiB on every search cost 87% of the instructions of
/// a table fill (callgrind), while a typical search touches a few entries.
struct Queue {
    nodes: [MaybeUninit<Node>; QUEUE_CAP],
    len: usize,
}

impl Queue {
    #[inline]
    fn new() -> Self {
        Self {
            nodes: [const { MaybeUninit::uninit() }; QUEUE_CAP],
            len: 0,
        }
    }

    #[inline]
    fn push(&mut self, node: Node) {
        self.nodes[self.len].write(node);
        self.len += 1;
    }

    #[inline]
    fn get(&self, index: usize) -> Node {
        assert!(index < self.len, "queue index {index} not yet written");
        // SAFETY: entries `0..len` were written by `push` (and are never
        // un-written); `index < len` was just checked.
        unsafe { self.nodes[index].assume_init() }
    }
}

impl<F: Fingerprint> RawTable<F> {
    /// Shortest path (at most `self.max_path` moves) that frees a slot in
    /// bucket `i1` or `i2`, found without locks; `None` if there is none.
    /// A path of no moves means a root already has a free slot again.
    ///
    /// Breadth-first, one level at a time, and lazily: a level's nodes
    /// (the alternate buckets of every fingerprint of the level above, in
    /// queue order) are generated only [`SCAN_AHEAD`] nodes ahead of the
    /// scan that loads them, and the first bucket with a free slot ends
    /// the search. That is the node a node-by-node BFS stops at too, so
    /// placement does not depend on the scheme, but near full, where most
    /// buckets are full, it fetches and computes what the scan reaches plus
    /// a few: generating each full node's children as it was seen (up to
    /// 32 prefetched lines and 32 queue entries for a path of one move)
    /// cost 800 instructions per search in cache and, out of cache, kept
    /// the miss buffers so busy that the prefetches themselves stalled.
    pub(crate) fn search_path(&self, i1: usize, i2: usize) -> Option<Path<F>> {
        let mut queue = Queue::new();
        // The loaded words of the level above (whose fingerprints generate
        // the level being scanned) and of the level being scanned.
        let mut words = [[const { MaybeUninit::<F::Word>::uninit() }; EXPAND_CAP]; 2];
        let [above, this] = &mut words;
        let (mut above, mut this) = (above, this);
        // The roots were just found full under the locks, but the search
        // holds none, and a slot may have been freed since.
        for (at, root) in [i1, i2].into_iter().enumerate() {
            queue.push(Node {
                bucket: root as u32,
                ..Node::default()
            });
            let word = F::load(&self.buckets[root]);
            if F::free_slot(word).is_some() {
                return Some(self.trace(&queue, at));
            }
            above[at].write(word);
        }
        let mut parents = 0..2;
        for depth in 1..=self.max_path {
            if depth > 1 {
                self.let_loom_interleave_writers();
            }
            let start = queue.len;
            let end = start + parents.len() * SLOTS;
            // The next parent whose children to generate.
            let mut parent = parents.start;
            for at in start..end {
                // Keep the children of whole parents generated (and their
                // buckets prefetched) up to `SCAN_AHEAD` nodes past `at`.
                while queue.len <= at + SCAN_AHEAD && parent < parents.end {
                    // SAFETY: the scan of the level above wrote `above[i]`
                    // for each of its nodes (or returned before this level).
                    let word = unsafe { above[parent - parents.start].assume_init() };
                    self.push_children(&mut queue, parent, word, depth as u8);
                    parent += 1;
                }
                let word = F::load(&self.buckets[queue.get(at).bucket as usize]);
                if F::free_slot(word).is_some() {
                    return Some(self.trace(&queue, at));
                }
                if depth < self.max_path {
                    // A level less than `max_path` deep has at most
                    // `2 * SLOTS^(MAX_PATH_LIMIT - 1) = EXPAND_CAP` nodes.
                    this[at - start].write(word);
                }
            }
            // The level just scanned generates the next (swaps references).
            core::mem::swap(&mut above, &mut this);
            parents = start..end;
        }
        None
    }

    /// Under loom, between two levels of a search: reads the stripes'
    /// item counts, which every write path updates (under loom with a
    /// read-modify-write: `StripeGuard::add_len`), so that loom's
    /// partial-order reduction runs other writers' critical sections here.
    /// It would not on its own: it keeps one last load and one last store
    /// per atomic, and a writer's store to a bucket always follows its own
    /// load of that bucket, which replaces the search's earlier load of it
    /// as the access the store depends on. A writer between two levels is
    /// where a search can miss a free slot that moves (the model
    /// `a_search_that_misses_a_moving_free_slot_does_not_answer_full`).
    /// Nothing outside loom, and nothing for searches of one level, which
    /// most models use. (A yield here found that model's schedule too, but
    /// it biased loom's schedules so much that the two-hop model stopped
    /// catching the planted `skip_bump` bug.)
    #[inline(always)]
    fn let_loom_interleave_writers(&self) {
        #[cfg(concurrent_cuckoo_loom)]
        let _ = self.stripes.len();
    }

    /// Queues (and prefetches) the alternate bucket of each fingerprint of
    /// `word`, the loaded bucket of queue entry `parent`: its children, at
    /// `depth` moves from a root.
    #[inline(always)]
    fn push_children(&self, queue: &mut Queue, parent: usize, word: F::Word, depth: u8) {
        let bucket = queue.get(parent).bucket as usize;
        for slot in 0..SLOTS {
            let fp = F::slot(word, slot);
            let child = self.index.alternate(bucket, fp.to_u64());
            prefetch(&self.buckets[child]);
            queue.push(Node {
                bucket: child as u32,
                fp: fp.to_u64() as u32,
                parent: parent as u16,
                parent_slot: slot as u8,
                depth,
            });
        }
    }

    /// Rebuilds the hops leading to entry `leaf` of the queue, free end first.
    fn trace(&self, queue: &Queue, leaf: usize) -> Path<F> {
        let mut path = Path {
            hops: [None; MAX_PATH_LIMIT],
            len: 0,
        };
        let mut at = leaf;
        loop {
            let node = queue.get(at);
            if node.depth == 0 {
                break;
            }
            let parent = queue.get(usize::from(node.parent));
            path.hops[path.len] = Some(Hop {
                from: parent.bucket as usize,
                slot: usize::from(node.parent_slot),
                fp: F::from_u64(u64::from(node.fp)),
                to: node.bucket as usize,
            });
            path.len += 1;
            at = usize::from(node.parent);
        }
        path
    }

    /// Executes `path` hop by hop: `Some(moves)` if every hop went
    /// through, `None` if a hop's check failed (the hops before it stay
    /// done: each was a valid move).
    pub(crate) fn execute_path(&self, path: &Path<F>) -> Option<usize> {
        path.hops()
            .all(|hop| self.move_one(hop))
            .then_some(path.len)
    }

    /// Moves `hop.fp` from `hop.from[hop.slot]` to a free slot of `hop.to`
    /// under both stripe locks, if the table still looks as the search saw it.
    pub(crate) fn move_one(&self, hop: Hop<F>) -> bool {
        self.move_locked(&self.stripes.lock_pair(hop.from, hop.to), hop)
    }

    /// [`move_one`](Self::move_one) for a caller whose `guard` already holds
    /// the stripes of `hop.from` and `hop.to`.
    pub(crate) fn move_locked(&self, guard: &StripeGuard<'_>, hop: Hop<F>) -> bool {
        debug_assert!(guard.holds(hop.from) && guard.holds(hop.to));
        let (src, dst) = (&self.buckets[hop.from], &self.buckets[hop.to]);
        let src_word = F::load(src);
        if F::slot(src_word, hop.slot) != hop.fp {
            return false;
        }
        let dst_word = F::load(dst);
        let Some(free) = F::free_slot(dst_word) else {
            return false;
        };
        #[cfg(not(any(
            concurrent_cuckoo_canary = "reorder",
            concurrent_cuckoo_canary = "skip_bump"
        )))]
        {
            // Copy first, announce, then clear: the fingerprint is in at
            // least one bucket at every instant, and a reader that sees the
            // clear sees the bump (the invariant in `table.rs`).
            F::store_slot(dst, dst_word, free, hop.fp);
            guard.bump_version(hop.from, hop.to);
            F::store_slot(src, src_word, hop.slot, F::EMPTY);
        }
        // Deliberate bugs for the loom canary (`scripts/loom.sh --canary`),
        // which the models must catch.
        #[cfg(concurrent_cuckoo_canary = "reorder")]
        {
            // Clear the source before the destination holds the fingerprint.
            F::store_slot(src, src_word, hop.slot, F::EMPTY);
            F::store_slot(dst, dst_word, free, hop.fp);
            guard.bump_version(hop.from, hop.to);
        }
        #[cfg(concurrent_cuckoo_canary = "skip_bump")]
        {
            // Move in the right order but never tell readers.
            F::store_slot(dst, dst_word, free, hop.fp);
            F::store_slot(src, src_word, hop.slot, F::EMPTY);
        }
        guard.record_move(hop.from);
        guard.add_len(hop.from, -1);
        guard.add_len(hop.to, 1);
        true
    }
}
