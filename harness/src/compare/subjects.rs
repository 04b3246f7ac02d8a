//! The filters compared, and how each is built for `n` items. Adding a peer
//! is one entry here (and its adapter in `crate::filters`).

use crate::filters::{self, AtomicCuckoo, Bloom, CuckooFilterCrate, Exact, Filter, Fuse, OursKeys};

pub struct Subject {
    pub name: &'static str,
    pub build: fn(n: u64, ours_bits: u64) -> Box<dyn Filter>,
    /// Filled on two threads (otherwise one).
    pub concurrent_fill: bool,
}

pub fn subjects() -> Vec<Subject> {
    vec![
        Subject {
            name: "concurrent-cuckoo",
            build: |n, _| Box::new(OursKeys(filters::ours(n))),
            concurrent_fill: true,
        },
        Subject {
            name: "cuckoofilter",
            build: |n, _| Box::new(CuckooFilterCrate::new(n)),
            concurrent_fill: false,
        },
        Subject {
            name: "atomic-cuckoo-filter",
            build: |n, _| Box::new(AtomicCuckoo::new(n)),
            concurrent_fill: true,
        },
        Subject {
            name: "fastbloom AtomicBloomFilter",
            // Same memory per item as ours.
            build: |n, bits_per_item| Box::new(Bloom::new(n * bits_per_item / 64 * 64, n)),
            concurrent_fill: true,
        },
        Subject {
            name: "xorf BinaryFuse16",
            build: |n, _| Box::new(Fuse::new(n)),
            concurrent_fill: false,
        },
        Subject {
            name: "RwLock<HashSet<u64>>",
            build: |n, _| Box::new(Exact::new(n)),
            concurrent_fill: false,
        },
    ]
}
