//! Running a body on pinned threads for a fixed time, and what it counts.

use super::pin::pin_current;
use crate::timing::CpuClock;
use concurrent_cuckoo::thread_lookup_retries;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// What one thread did.
#[derive(Clone, Copy, Default)]
pub struct ThreadCount {
    /// Operations (a lookup in a burst of 32 counts one).
    pub ops: u64,
    /// Of which lookups.
    pub lookups: u64,
}

/// One role's threads (readers or writers) summed.
#[derive(Clone, Copy, Default)]
pub struct Totals {
    pub threads: usize,
    pub ops: u64,
    pub lookups: u64,
    /// Failed optimistic lookup attempts (`thread_lookup_retries().0`).
    pub retries: u64,
    /// Lookups that finished under the stripe locks.
    pub locked: u64,
    pub cpu_ns: f64,
}

impl Totals {
    fn add(&mut self, c: ThreadCount, retries: (u64, u64), cpu_ns: f64) {
        self.threads += 1;
        self.ops += c.ops;
        self.lookups += c.lookups;
        self.retries += retries.0;
        self.locked += retries.1;
        self.cpu_ns += cpu_ns;
    }
}

/// A timed run: the main role, the writers beside it (if any), the wall
/// time and whether every thread was pinned.
pub struct Run {
    pub main: Totals,
    pub writers: Totals,
    pub secs: f64,
    pub pinned: bool,
}

/// Which threads a body runs as.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Main,
    Writer,
}

/// Runs `body(role, index, stop)` on `main` threads and `writers` more,
/// each pinned to `cpus[k % cpus.len()]` (`k` counting main threads
/// first), from a common start until `dur` has passed (`Some`) or until
/// every thread returned (`None`: bodies that run to completion, such as a
/// fill; `stop` is then never set). A body returns what it did and
/// polls `stop` every few hundred operations.
pub fn run<B>(main: usize, writers: usize, cpus: &[usize], dur: Option<Duration>, body: B) -> Run
where
    B: Fn(Role, usize, &AtomicBool) -> ThreadCount + Sync,
{
    let stop = AtomicBool::new(false);
    let total = main + writers;
    let barrier = Barrier::new(total + 1);
    let (results, secs) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..total)
            .map(|k| {
                let (stop, barrier, body) = (&stop, &barrier, &body);
                let cpu = cpus[k % cpus.len()];
                s.spawn(move || {
                    let pinned = pin_current(cpu);
                    let (role, index) = if k < main {
                        (Role::Main, k)
                    } else {
                        (Role::Writer, k - main)
                    };
                    barrier.wait();
                    let retries_before = thread_lookup_retries();
                    let clock = CpuClock::now();
                    let count = body(role, index, stop);
                    let cpu_ns = clock.elapsed_ns();
                    let retries_after = thread_lookup_retries();
                    let retries = (
                        retries_after.0 - retries_before.0,
                        retries_after.1 - retries_before.1,
                    );
                    (role, count, retries, cpu_ns, pinned)
                })
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        if let Some(dur) = dur {
            std::thread::sleep(dur);
            stop.store(true, Ordering::Relaxed);
        }
        let results: Vec<_> = handles
            .into_iter()
            .map(|h| h.join().expect("worker thread"))
            .collect();
        (results, start.elapsed().as_secs_f64())
    });
    let mut run = Run {
        main: Totals::default(),
        writers: Totals::default(),
        secs,
        pinned: true,
    };
    for (role, count, retries, cpu_ns, pinned) in results {
        run.pinned &= pinned;
        match role {
            Role::Main => run.main.add(count, retries, cpu_ns),
            Role::Writer => run.writers.add(count, retries, cpu_ns),
        }
    }
    run
}
