//! Breadth-first search for a cuckoo path in a windowed table, where a
//! lane is free when it is empty *or expired* at the generation the search
//! read. The search reads without locks; each hop is re-validated under
//! its two stripe locks (`WindowTable::hop` in `table.rs`), as in the plain table
//! (`src/path.rs`), whose search is written for its fingerprint types and
//! is not reused so that its lookups and inserts stay as they are.

use super::lanes::{Layout, NARROW, WIDE};
use crate::index::IndexMap;
use crate::sync::{AtomicU64, Ordering};
use core::mem::MaybeUninit;

/// Longest path in 16-bit lanes (the plain table's: 5 moves; 2 under
/// loom, whose models use one- and two-hop paths).
#[cfg(not(concurrent_cuckoo_loom))]
pub(crate) const MAX_PATH: usize = 5;
#[cfg(concurrent_cuckoo_loom)]
pub(crate) const MAX_PATH: usize = 2;

/// Longest path in 32-bit lanes: with two lanes a bucket a search reaches
/// half as many buckets a move, and 8 moves (1,022 buckets, against 5
/// moves' 126) take a table from about 82% full to about 88% before an
/// insert fails (`docs/benchmarks.md`, "Wide lanes").
#[cfg(not(concurrent_cuckoo_loom))]
pub(crate) const MAX_PATH_WIDE: usize = 8;
#[cfg(concurrent_cuckoo_loom)]
pub(crate) const MAX_PATH_WIDE: usize = 2;

/// The longest path in buckets of `slots` lanes.
pub(crate) const fn max_path(slots: usize) -> usize {
    if slots == 2 {
        MAX_PATH_WIDE
    } else {
        MAX_PATH
    }
}

/// Nodes of a search `depth` moves deep with `fanout` lanes a bucket.
const fn nodes(fanout: usize, depth: usize) -> usize {
    let (mut level, mut all, mut d) = (2, 2, 0);
    while d < depth {
        level *= fanout;
        all += level;
        d += 1;
    }
    all
}

/// Both roots and every node up to the longest path of either width.
const QUEUE: usize = {
    let (narrow, wide) = (nodes(4, MAX_PATH), nodes(2, MAX_PATH_WIDE));
    if narrow > wide {
        narrow
    } else {
        wide
    }
};

/// One move: the lane of `fp` in `from[slot]` goes to a free lane of `to`.
/// Compact (16 bytes: a bucket index fits 32 bits, a fingerprint too):
/// a search returns its path by value, and a path of 32-byte hops cost
/// every search a copy and a clear of twice the bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Hop {
    from: u32,
    to: u32,
    fp: u32,
    slot: u8,
}

impl Hop {
    /// The bucket the lane leaves.
    #[inline(always)]
    pub(crate) fn from(&self) -> usize {
        self.from as usize
    }

    /// The bucket the lane goes to.
    #[inline(always)]
    pub(crate) fn to(&self) -> usize {
        self.to as usize
    }

    /// The lane's slot in [`from`](Self::from).
    #[inline(always)]
    pub(crate) fn slot(&self) -> usize {
        usize::from(self.slot)
    }

    /// The fingerprint the lane must still hold.
    #[inline(always)]
    pub(crate) fn fp(&self) -> u64 {
        u64::from(self.fp)
    }
}

/// Hops in execution order: the one into the free lane first.
pub(crate) struct Path {
    hops: [Hop; MAX_PATH_WIDE],
    len: usize,
}

impl Path {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn hops(&self) -> impl Iterator<Item = &Hop> {
        self.hops[..self.len].iter()
    }
}

/// A bucket the search reached, and the move that reaches it.
#[derive(Clone, Copy)]
struct Node {
    bucket: u32,
    /// The fingerprint that would move here from the parent's `slot`.
    fp: u32,
    parent: u16,
    slot: u8,
    depth: u8,
}

/// What a search reads: a table's buckets, index map, encoding and
/// longest path.
pub(crate) struct Search<'a> {
    pub(crate) buckets: &'a [AtomicU64],
    pub(crate) index: IndexMap,
    pub(crate) layout: Layout,
    pub(crate) max_path: usize,
}

impl Search<'_> {
    /// The shortest path (at most `max_path` moves) that frees a lane of
    /// bucket `i1` or `i2` at generation `cur`, read without locks; `None`
    /// if there is none. A path of no moves: a root has a free lane again.
    pub(crate) fn run(&self, i1: usize, i2: usize, cur: u64) -> Option<Path> {
        // One branch on the width, each side with its constants folded
        // (the slot loop unrolled).
        if self.layout.is_wide() {
            self.run_in(self.layout.fixed::<WIDE>(), i1, i2, cur)
        } else {
            self.run_in(self.layout.fixed::<NARROW>(), i1, i2, cur)
        }
    }

    /// [`run`](Self::run) with the layout `l` (the table's, its width's
    /// constants fixed).
    #[inline(always)]
    fn run_in(&self, l: Layout, i1: usize, i2: usize, cur: u64) -> Option<Path> {
        // Not zeroed up front: 2730 entries (32 KiB), of which a search
        // usually writes a few dozen.
        let mut queue = [const { MaybeUninit::<Node>::uninit() }; QUEUE];
        let roots = [i1, i2];
        for (at, &root) in roots.iter().enumerate() {
            queue[at].write(Node {
                bucket: root as u32,
                fp: 0,
                parent: 0,
                slot: 0,
                depth: 0,
            });
        }
        let mut len = roots.len();
        let free = |bucket: usize| l.free(self.buckets[bucket].load(Ordering::Relaxed), cur) != 0;
        // A path of no moves: a root has a free lane again.
        if let Some(at) = roots.iter().position(|&root| free(root)) {
            return Some(Self::path_to(&queue, len, at));
        }
        // Breadth first, each bucket tested as it is queued rather than
        // when its turn to be expanded comes: the same path (the first
        // free bucket in queue order), found without queueing the rest of
        // its level (a table that is always 90% live searches often).
        let mut head = 0;
        while head < len {
            // SAFETY: entries `0..len` were written above or below before
            // `len` passed them, and `head < len`.
            let node = unsafe { queue[head].assume_init() };
            if usize::from(node.depth) < self.max_path {
                let bucket = node.bucket as usize;
                let word = self.buckets[bucket].load(Ordering::Relaxed);
                for slot in 0..l.slots() {
                    let fp = l.fp_of_lane(l.get(word, slot));
                    let alternate = self.index.alternate(bucket, fp);
                    queue[len].write(Node {
                        bucket: alternate as u32,
                        fp: fp as u32,
                        parent: head as u16,
                        slot: slot as u8,
                        depth: node.depth + 1,
                    });
                    len += 1;
                    if free(alternate) {
                        return Some(Self::path_to(&queue, len, len - 1));
                    }
                }
            }
            head += 1;
        }
        None
    }

    /// The hops from a root to node `at` of `queue` (whose first `len`
    /// entries are written), in execution order.
    fn path_to(queue: &[MaybeUninit<Node>], len: usize, mut at: usize) -> Path {
        let mut path = Path {
            hops: [Hop::default(); MAX_PATH_WIDE],
            len: 0,
        };
        loop {
            assert!(at < len);
            // SAFETY: entries below `len` are written (`search`).
            let node = unsafe { queue[at].assume_init() };
            if node.depth == 0 {
                return path;
            }
            // SAFETY: a parent precedes its child in the queue.
            let parent = unsafe { queue[usize::from(node.parent)].assume_init() };
            path.hops[path.len] = Hop {
                from: parent.bucket,
                to: node.bucket,
                fp: node.fp,
                slot: node.slot,
            };
            path.len += 1;
            at = usize::from(node.parent);
        }
    }
}
