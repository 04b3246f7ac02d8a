//! The module's `INFO` section (`INFO cuckoo_filters`, and in `INFO
//! modules`/`INFO everything`): how many filters the server holds, their
//! items and memory, and the inserts and removes the filters refused
//! (a refused remove answers `0` as an absent item does; only here is it
//! told apart), and the work of the window sweeper (`window_sweeper.rs`):
//! the keys it visits, the buckets it swept and the generation changes it
//! made, beside the catch-ups that commands still swept themselves.
//!
//! Totals are kept as values change, never by walking the keyspace: each
//! value remembers what it last added to them ([`Accounted`]) and takes it
//! back when it changes or is freed (on whichever thread frees it: atomics).

use core::cell::Cell;
use core::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use redis_module::raw;

static FILTERS: AtomicI64 = AtomicI64::new(0);
static ITEMS: AtomicI64 = AtomicI64::new(0);
static MEMORY: AtomicI64 = AtomicI64::new(0);
static REFUSED_INSERTS: AtomicU64 = AtomicU64::new(0);
static REFUSED_REMOVES: AtomicU64 = AtomicU64::new(0);
static SWEEPER_VISITS: AtomicU64 = AtomicU64::new(0);
static SWEEPER_BUCKETS: AtomicU64 = AtomicU64::new(0);
static SWEEPER_ADVANCES: AtomicU64 = AtomicU64::new(0);
static CATCH_UP_SWEEPS: AtomicU64 = AtomicU64::new(0);

/// What one value counts in the totals now; freed with the value.
///
/// In cells: `CF.SCANDUMP` changes what a value holds (the state of its
/// dumps) through a shared reference (it opens the key for reading), and
/// must bring the totals up to date too. A value is used by one thread at
/// a time (it is `Send`, not `Sync`).
#[derive(Debug)]
pub(crate) struct Accounted {
    items: Cell<i64>,
    memory: Cell<i64>,
}

impl Accounted {
    /// A new value: one more filter, nothing else yet.
    pub(crate) fn new() -> Self {
        FILTERS.fetch_add(1, Ordering::Relaxed);
        Self {
            items: Cell::new(0),
            memory: Cell::new(0),
        }
    }

    /// The value now holds `items` items in `memory` bytes.
    pub(crate) fn update(&self, items: usize, memory: usize) {
        let (items, memory) = (clamp(items), clamp(memory));
        ITEMS.fetch_add(items - self.items.replace(items), Ordering::Relaxed);
        self.set_memory(memory);
    }

    /// The value now holds `memory` bytes; its items are unchanged.
    pub(crate) fn update_memory(&self, memory: usize) {
        self.set_memory(clamp(memory));
    }

    fn set_memory(&self, memory: i64) {
        MEMORY.fetch_add(memory - self.memory.replace(memory), Ordering::Relaxed);
    }
}

impl Accounted {
    /// The value gained `items` items (negative: lost) and now holds
    /// `memory` bytes.
    pub(crate) fn update_by(&self, items: i64, memory: usize) {
        self.add_items(items);
        self.set_memory(clamp(memory));
    }
}

impl Accounted {
    /// The value gained `items` items (negative: lost); its memory is
    /// unchanged.
    pub(crate) fn add_items(&self, items: i64) {
        let items = self.items.get().saturating_add(items).max(0);
        ITEMS.fetch_add(items - self.items.replace(items), Ordering::Relaxed);
    }
}

impl Drop for Accounted {
    fn drop(&mut self) {
        self.update(0, 0);
        FILTERS.fetch_sub(1, Ordering::Relaxed);
    }
}

fn clamp(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Counts `n` inserts a filter refused (full, or too many copies).
pub(crate) fn refused_inserts(n: u64) {
    REFUSED_INSERTS.fetch_add(n, Ordering::Relaxed);
}

/// Counts a remove the filter refused (its item's fingerprint is in two
/// levels: removing a copy might take another item's).
pub(crate) fn refused_remove() {
    REFUSED_REMOVES.fetch_add(1, Ordering::Relaxed);
}

/// Counts a visit of a key by the sweeper.
pub(crate) fn sweeper_visited() {
    SWEEPER_VISITS.fetch_add(1, Ordering::Relaxed);
}

/// Counts `n` buckets of window filters the sweeper swept
/// (`window_sweeper.rs`).
pub(crate) fn sweeper_swept(n: usize) {
    SWEEPER_BUCKETS.fetch_add(n as u64, Ordering::Relaxed);
}

/// Counts a generation change the sweeper made.
pub(crate) fn sweeper_advanced() {
    SWEEPER_ADVANCES.fetch_add(1, Ordering::Relaxed);
}

/// Counts a catch-up (a write's, a replicated `CF.ADVANCE`'s) that swept
/// part of its table itself: what the sweeper is there to make rare.
pub(crate) fn catch_up_swept() {
    CATCH_UP_SWEEPS.fetch_add(1, Ordering::Relaxed);
}

/// Adds the section to an `INFO` reply (the module's info callback).
pub(crate) fn section(ctx: *mut raw::RedisModuleInfoCtx) {
    let load = |a: &AtomicI64| a.load(Ordering::Relaxed);
    let loadu = |a: &AtomicU64| i64::try_from(a.load(Ordering::Relaxed)).unwrap_or(i64::MAX);
    raw::add_info_section(ctx, Some("filters"));
    for (name, value) in [
        ("filters", load(&FILTERS)),
        ("items", load(&ITEMS)),
        ("memory", load(&MEMORY)),
        ("refused_inserts", loadu(&REFUSED_INSERTS)),
        ("refused_removes", loadu(&REFUSED_REMOVES)),
        ("window_keys", clamp(crate::window_keys::count())),
        ("window_sweeper_visits", loadu(&SWEEPER_VISITS)),
        ("window_sweeper_buckets", loadu(&SWEEPER_BUCKETS)),
        ("window_sweeper_advances", loadu(&SWEEPER_ADVANCES)),
        ("window_catch_up_sweeps", loadu(&CATCH_UP_SWEEPS)),
    ] {
        raw::add_info_field_long_long(ctx, name, value);
    }
}
