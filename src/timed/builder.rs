//! [`TimedBuilder`]: a timed filter's configuration.

use super::clock::{Clock, SystemClock};
use super::TimedCuckooFilter;
use crate::error::BuildError;
use crate::hashing::DefaultHashBuilder;
use crate::storage::TableMemory;
use crate::windowed::{WindowedBuilder, WindowedCuckooFilter};
use std::time::Duration;

/// Configures a [`TimedCuckooFilter`]; from [`TimedCuckooFilter::builder`].
///
/// ```
/// use concurrent_cuckoo::{BuildError, TimedCuckooFilter};
/// use std::time::Duration;
/// let f = TimedCuckooFilter::builder()
///     .capacity(1000)
///     .time_to_live(Duration::from_secs(90))
///     .generations(9)
///     .build()?;
/// assert_eq!(f.generation_length(), Duration::from_secs(10));
/// let none = TimedCuckooFilter::builder().capacity(1000).build();
/// assert!(matches!(none, Err(BuildError::InvalidTimeToLive { .. })));
/// # Ok::<(), BuildError>(())
/// ```
#[derive(Clone, Debug)]
#[must_use]
pub struct TimedBuilder<C = SystemClock, S = DefaultHashBuilder> {
    window: WindowedBuilder<S>,
    time_to_live: Option<Duration>,
    generations: u64,
    clock: C,
    epoch_ms: Option<u64>,
}

impl TimedBuilder {
    /// The defaults: the system clock, an epoch of now, 4 generations.
    pub(super) fn new() -> Self {
        Self {
            window: WindowedCuckooFilter::builder(),
            time_to_live: None,
            generations: 4,
            clock: SystemClock,
            epoch_ms: None,
        }
    }
}

impl<C> TimedBuilder<C, DefaultHashBuilder> {
    /// Fixes the default hasher's seed (reproducible runs).
    pub fn seed(mut self, seed: u64) -> Self {
        self.window = self.window.seed(seed);
        self
    }
}

impl<C, S> TimedBuilder<C, S> {
    /// Live keys the filter holds at once. Required.
    pub fn capacity(mut self, capacity: usize) -> Self {
        self.window = self.window.capacity(capacity);
        self
    }

    /// How long a key is found after its last insert, at least. Required:
    /// at least one millisecond a generation.
    pub fn time_to_live(mut self, time_to_live: Duration) -> Self {
        self.time_to_live = Some(time_to_live);
        self
    }

    /// Steps the time to live is split into (default 4): a key is gone at
    /// most `time_to_live / generations` after its time is up. More steps
    /// expire closer to the time and cost fingerprint bits (see
    /// [`WindowedBuilder::generations`]: the window is one more than
    /// this).
    pub fn generations(mut self, generations: u64) -> Self {
        self.generations = generations;
        self
    }

    /// Target false-positive rate (see
    /// [`WindowedBuilder::false_positive_rate`]).
    pub fn false_positive_rate(mut self, rate: f64) -> Self {
        self.window = self.window.false_positive_rate(rate);
        self
    }

    /// Where the table gets its memory (see [`TableMemory`]).
    pub fn table_memory(mut self, memory: TableMemory) -> Self {
        self.window = self.window.table_memory(memory);
        self
    }

    /// Wall-clock milliseconds of generation 0 (default: the clock's time
    /// at [`build`](Self::build)). Filters that must expire keys in step
    /// (copies on several machines) share one.
    pub fn epoch_ms(mut self, epoch_ms: u64) -> Self {
        self.epoch_ms = Some(epoch_ms);
        self
    }

    /// Reads the time from `clock` instead of the system's.
    pub fn clock<C2: Clock>(self, clock: C2) -> TimedBuilder<C2, S> {
        TimedBuilder {
            window: self.window,
            time_to_live: self.time_to_live,
            generations: self.generations,
            clock,
            epoch_ms: self.epoch_ms,
        }
    }

    /// Uses `hasher` instead of the default.
    pub fn hasher<S2>(self, hasher: S2) -> TimedBuilder<C, S2> {
        TimedBuilder {
            window: self.window.hasher(hasher),
            time_to_live: self.time_to_live,
            generations: self.generations,
            clock: self.clock,
            epoch_ms: self.epoch_ms,
        }
    }

    /// Builds the filter.
    ///
    /// # Errors
    /// [`BuildError::InvalidTimeToLive`] for no time to live, or one
    /// shorter than a millisecond a generation; else as
    /// [`WindowedBuilder::build`] (its window is `generations + 1`).
    pub fn build(self) -> Result<TimedCuckooFilter<C, S>, BuildError>
    where
        C: Clock,
    {
        let ttl_ms = self
            .time_to_live
            .map_or(0, |ttl| u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX));
        let invalid = BuildError::InvalidTimeToLive {
            time_to_live_ms: ttl_ms,
            generations: self.generations,
        };
        if self.generations == 0 || self.generations == u64::MAX || ttl_ms < self.generations {
            return Err(invalid);
        }
        let generation_ms = ttl_ms.div_ceil(self.generations);
        generation_ms.checked_mul(self.generations).ok_or(invalid)?;
        // The window is one generation longer than the time to live's
        // steps; an error about it speaks of the steps the caller asked.
        let window = match self.window.generations(self.generations + 1).build() {
            Err(BuildError::InvalidGenerations { generations, max }) => {
                return Err(BuildError::InvalidGenerations {
                    generations: generations - 1,
                    max: max.saturating_sub(1),
                })
            }
            built => built?,
        };
        let epoch_ms = self.epoch_ms.unwrap_or_else(|| self.clock.now_ms());
        let filter = TimedCuckooFilter {
            window,
            clock: self.clock,
            epoch_ms,
            generation_ms,
        };
        Ok(filter)
    }
}
