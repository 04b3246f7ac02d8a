//! [`Clock`]: where a [`TimedCuckooFilter`](super::TimedCuckooFilter) reads
//! the time.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// A source of wall-clock time in milliseconds since the Unix epoch. The
/// filter saves its epoch in these units, so a filter loaded in another
/// process (or after a restart) expires its keys on the same schedule.
pub trait Clock {
    /// Milliseconds since 1970-01-01 UTC. May go backwards (a clock set
    /// back): the filter's generation never does, it waits.
    fn now_ms(&self) -> u64;
}

/// The system's wall clock ([`SystemTime`]); a time before 1970 reads 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| {
                u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
            })
    }
}

/// A clock that moves only when told: for tests, and for hosts that keep
/// their own time (a dataplane's TSC-derived clock, a simulation). Clones
/// share one time.
///
/// ```
/// use concurrent_cuckoo::{Clock, ManualClock};
/// let clock = ManualClock::new(1_000);
/// let same = clock.clone();
/// clock.advance_ms(500);
/// assert_eq!(same.now_ms(), 1_500);
/// ```
#[derive(Clone, Debug, Default)]
pub struct ManualClock(Arc<AtomicU64>);

impl ManualClock {
    /// A clock reading `now_ms`.
    #[must_use]
    pub fn new(now_ms: u64) -> Self {
        Self(Arc::new(AtomicU64::new(now_ms)))
    }

    /// Sets the time (backwards too).
    pub fn set_ms(&self, now_ms: u64) {
        self.0.store(now_ms, Ordering::Release);
    }

    /// Moves the time forward by `ms` (saturating).
    pub fn advance_ms(&self, ms: u64) {
        let _ = self
            .0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |t| {
                Some(t.saturating_add(ms))
            });
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }
}
