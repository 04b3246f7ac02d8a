//! Timing shared by every measurement: the thread's CPU clock, and CPU time
//! per operation of a closure.

/// This thread's CPU time: unlike the wall clock, it does not run while
/// another process has the core, which matters on a small shared machine.
/// Time stalled on memory is CPU time, so memory-bound loops are measured
/// in full.
#[derive(Clone, Copy)]
pub struct CpuClock(f64);

impl CpuClock {
    pub fn now() -> Self {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid out-pointer; the clock id is a constant.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        Self(ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64)
    }

    /// Nanoseconds of CPU time since `self`.
    pub fn elapsed_ns(self) -> f64 {
        Self::now().0 - self.0
    }
}

/// CPU time per operation of `f` (see [`CpuClock`]), and its result.
pub fn time_ns<T>(ops: usize, f: impl FnOnce() -> T) -> (f64, T) {
    let start = CpuClock::now();
    let r = f();
    (start.elapsed_ns() / ops as f64, r)
}
