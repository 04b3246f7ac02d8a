//! [`TimedCuckooFilter`]: keys that expire a time to live after their last
//! insert, by a clock, not by generations counted by hand.
//!
//! A [`WindowedCuckooFilter`] counts generations; this type drives one from
//! a [`Clock`]: a time to live split into `g` generations of
//! `ceil(ttl / g)` each (the granularity), the window `g + 1` generations
//! so that a key lives at least its whole time to live, and before every
//! call the windowed filter advanced to the generation the clock says
//! (`(now - epoch) / generation length`, one load and a compare when it is
//! already there). The epoch, in wall-clock milliseconds, is saved with
//! the filter: a filter loaded after a restart, or in another process,
//! expires its keys on the same schedule, where generations counted from
//! an [`Instant`](std::time::Instant) would start again at 0.

mod builder;
mod clock;
mod persist;

pub use builder::TimedBuilder;
pub use clock::{Clock, ManualClock, SystemClock};

use crate::error::{BatchInsertError, InsertError};
use crate::hashing::DefaultHashBuilder;
use crate::windowed::WindowedCuckooFilter;
use core::hash::{BuildHasher, Hash};
use std::time::Duration;

/// A concurrent filter whose keys expire by time: each is found for at
/// least its [`time_to_live`](Self::time_to_live) after its last insert
/// (an insert of a present key refreshes it) and is gone at most one
/// [`generation_length`](Self::generation_length) later. Shared through
/// `&self` as the other filters are; the clock is read on every call (so
/// a [`SystemClock`] costs a `clock_gettime` per call: a host with a
/// cheaper clock of its own implements [`Clock`] over it).
///
/// ```
/// use concurrent_cuckoo::{ManualClock, TimedCuckooFilter};
/// use std::time::Duration;
///
/// let clock = ManualClock::new(1_700_000_000_000); // wall-clock ms
/// let sessions = TimedCuckooFilter::builder()
///     .capacity(10_000)
///     .time_to_live(Duration::from_secs(60))
///     .generations(6) // expiry in steps of 10 s
///     .clock(clock.clone())
///     .build()?;
/// sessions.insert("session-7")?;
/// clock.advance_ms(59_999);
/// assert!(sessions.contains("session-7")); // within its time to live
/// clock.advance_ms(10_001);
/// assert!(!sessions.contains("session-7")); // a generation later: gone
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct TimedCuckooFilter<C = SystemClock, S = DefaultHashBuilder> {
    window: WindowedCuckooFilter<S>,
    clock: C,
    epoch_ms: u64,
    generation_ms: u64,
}

impl TimedCuckooFilter {
    /// A builder; [`capacity`](TimedBuilder::capacity) and
    /// [`time_to_live`](TimedBuilder::time_to_live) are required.
    pub fn builder() -> TimedBuilder {
        TimedBuilder::new()
    }
}

impl<C: Clock, S: BuildHasher> TimedCuckooFilter<C, S> {
    /// The generation the clock says it is.
    #[inline]
    fn generation_now(&self) -> u64 {
        self.clock.now_ms().saturating_sub(self.epoch_ms) / self.generation_ms
    }

    /// Advances the windowed filter to the clock's generation (never
    /// back): keys whose time is up expire before the call they would
    /// have answered.
    #[inline]
    fn catch_up(&self) {
        let now = self.generation_now();
        if now > self.window.generation() {
            self.window.advance_to(now);
        }
    }

    /// Inserts `key`, or refreshes it: it is found for at least the time
    /// to live from now.
    ///
    /// # Errors
    /// [`InsertError::Full`] when the live keys fill the table; nothing
    /// changed.
    pub fn insert<K: Hash + ?Sized>(&self, key: &K) -> Result<(), InsertError> {
        self.catch_up();
        self.window.insert(key)
    }

    /// [`insert`](Self::insert) of a 64-bit hash.
    ///
    /// # Errors
    /// As [`insert`](Self::insert).
    pub fn insert_hash(&self, hash: u64) -> Result<(), InsertError> {
        self.catch_up();
        self.window.insert_hash(hash)
    }

    /// [`insert`](Self::insert) of many keys, the clock read once.
    ///
    /// # Errors
    /// As [`WindowedCuckooFilter::insert_batch`]: the keys before the
    /// refused one are in.
    pub fn insert_batch<K: Hash>(&self, keys: &[K]) -> Result<(), BatchInsertError> {
        self.catch_up();
        self.window.insert_batch(keys)
    }

    /// [`insert_batch`](Self::insert_batch) of 64-bit hashes.
    ///
    /// # Errors
    /// As [`insert_batch`](Self::insert_batch).
    pub fn insert_hash_batch(&self, hashes: &[u64]) -> Result<(), BatchInsertError> {
        self.catch_up();
        self.window.insert_hash_batch(hashes)
    }

    /// Whether `key` may be present: `true` for every key inserted less
    /// than the time to live ago; `false` for every key whose last insert
    /// is more than the time to live and a generation ago, but for
    /// false positives.
    #[must_use]
    pub fn contains<K: Hash + ?Sized>(&self, key: &K) -> bool {
        self.catch_up();
        self.window.contains(key)
    }

    /// [`contains`](Self::contains) of a 64-bit hash.
    #[must_use]
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.catch_up();
        self.window.contains_hash(hash)
    }

    /// `out[i] = contains(&keys[i])`, the clock read once.
    ///
    /// # Panics
    /// If `keys.len() != out.len()`.
    pub fn contains_batch<K: Hash>(&self, keys: &[K], out: &mut [bool]) {
        self.catch_up();
        self.window.contains_batch(keys, out);
    }

    /// [`contains_batch`](Self::contains_batch) of 64-bit hashes.
    ///
    /// # Panics
    /// If `hashes.len() != out.len()`.
    pub fn contains_hash_batch(&self, hashes: &[u64], out: &mut [bool]) {
        self.catch_up();
        self.window.contains_hash_batch(hashes, out);
    }

    /// Live keys (as [`WindowedCuckooFilter::len`] counts them), as of
    /// the clock's time.
    #[must_use]
    pub fn len(&self) -> usize {
        self.catch_up();
        self.window.len()
    }

    /// Whether [`len`](Self::len) is 0.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The hasher keys are hashed with.
    pub fn hasher(&self) -> &S {
        self.window.hasher()
    }
}

impl<C, S> TimedCuckooFilter<C, S> {
    /// The least time a key is found after its last insert:
    /// [`generations`](Self::generations) times the
    /// [`generation_length`](Self::generation_length) (the time to live
    /// asked for, rounded up to whole milliseconds a generation).
    #[must_use]
    pub fn time_to_live(&self) -> Duration {
        Duration::from_millis(self.generation_ms.saturating_mul(self.generations()))
    }

    /// The granularity of expiry: a key is gone at most this long after
    /// its time to live.
    #[must_use]
    pub fn generation_length(&self) -> Duration {
        Duration::from_millis(self.generation_ms)
    }

    /// Generations the time to live is split into (the windowed filter's
    /// window is one more).
    #[must_use]
    pub fn generations(&self) -> u64 {
        self.window.generations() - 1
    }

    /// Wall-clock milliseconds of generation 0 (saved with the filter).
    #[must_use]
    pub fn epoch_ms(&self) -> u64 {
        self.epoch_ms
    }

    /// The clock the filter reads.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// The windowed filter underneath, for its statistics and sizes.
    /// Advancing it by hand expires keys early: the clock only ever
    /// catches up with it.
    pub fn windowed(&self) -> &WindowedCuckooFilter<S> {
        &self.window
    }

    /// Slots of the table (the capacity asked for, rounded up).
    #[must_use]
    pub fn slots(&self) -> usize {
        self.window.slots()
    }

    /// Bytes the filter holds.
    #[must_use]
    pub fn memory_usage(&self) -> usize {
        self.window.memory_usage()
    }

    /// The most a lookup of an absent key answers `true`, as a rate.
    #[must_use]
    pub fn false_positive_bound(&self) -> f64 {
        self.window.false_positive_bound()
    }
}

impl<C, S> core::fmt::Debug for TimedCuckooFilter<C, S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TimedCuckooFilter")
            .field("epoch_ms", &self.epoch_ms)
            .field("generation_ms", &self.generation_ms)
            .field("window", &self.window)
            .finish_non_exhaustive()
    }
}
