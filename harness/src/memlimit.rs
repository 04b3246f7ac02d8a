//! The physical limit: how fast one core can fetch random 64-byte lines
//! from a buffer as large as the filter.
//!
//! The buffer is mapped the way `concurrent-cuckoo` maps a large table
//! (anonymous `mmap`, 2 MiB aligned, `MADV_HUGEPAGE`), or with
//! `MADV_NOHUGEPAGE` to show what 4 KiB pages cost, and every page is
//! touched first. The loop then loads one word from each of `count` random
//! lines, prefetching the line `ahead` positions further on; the limit is
//! the fastest of 16, 32 and 64 lines ahead. A negative lookup needs two
//! such lines, so `2 * ns_per_line` is the floor for a lookup out of
//! cache.
//!
//! Until the batch lookups went to stages of 32 keys (`src/stages.rs`),
//! the limit was taken 16 lines ahead only, the depth of their sliding
//! window then (8 keys of 2 lines): on the 2-vCPU AMD EPYC guest, 8.3 ns a
//! line at 1 GiB, where 64 ahead fetch one every 4.1 ns. The comparison
//! tables measured before then compare against the shallower figure.
//!
//! [`measure_limit`] runs that loop in the configurations the comparison
//! reports: 2 MiB pages on one and two threads, 4 KiB pages, and a
//! dependent chase.

use crate::keys::Rng;
use crate::report::{bar, mib};
use crate::timing::CpuClock;

const HUGE: usize = 2 << 20;

/// The memory system's limit for random line fetches from a table-sized
/// buffer.
pub struct Limit {
    pub bytes: usize,
    /// ns per line, 2 MiB pages, one thread, at the fastest depth.
    pub line_ns: f64,
    /// The same with two threads, ns per line per thread.
    pub line_ns_2t: f64,
    /// 4 KiB pages, one thread.
    pub line_ns_4k: f64,
    /// Dependent chase (latency), 2 MiB pages.
    pub chase_ns: f64,
    pub huge_share: Option<f64>,
}

impl Limit {
    pub fn lookup_ns(&self) -> f64 {
        2.0 * self.line_ns
    }
}

pub fn measure_limit(bytes: usize, quick: bool) -> Limit {
    let count = if quick { 2_000_000 } else { 8_000_000 };
    let pb = bar(
        5,
        format!("memory limit: random 64-byte lines from {}", mib(bytes)),
    );
    let huge = Buffer::new(bytes, true);
    let huge_share = huge.huge_page_share();
    pb.inc(1);
    huge.random_lines(count / 4, 16, 1); // warm the TLB and caches' state
    let (line_ns, ahead) = [16, 32, 64]
        .into_iter()
        .flat_map(|ahead| (0..3).map(move |s| (ahead, s)))
        .map(|(ahead, s)| (huge.random_lines(count, ahead, 2 + s), ahead))
        .fold(
            (f64::INFINITY, 16),
            |best, run| if run.0 < best.0 { run } else { best },
        );
    pb.inc(1);
    let line_ns_2t = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|t| {
                let huge = &huge;
                s.spawn(move || huge.random_lines(count, ahead, 10 + t))
            })
            .collect();
        let v: Vec<f64> = handles
            .into_iter()
            .map(|h| h.join().expect("thread"))
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    });
    pb.inc(1);
    let chase_ns = huge.dependent_lines(count / 16, 5);
    pb.inc(1);
    drop(huge);
    let small = Buffer::new(bytes, false);
    small.random_lines(count / 4, 16, 1);
    let line_ns_4k = small.random_lines(count, ahead, 3);
    drop(small);
    pb.finish_and_clear();
    Limit {
        bytes,
        line_ns,
        line_ns_2t,
        line_ns_4k,
        chase_ns,
        huge_share,
    }
}

/// An anonymous mapping, optionally backed by transparent huge pages.
pub struct Buffer {
    base: *mut u8,
    len: usize,
    map_base: *mut libc::c_void,
    map_len: usize,
}

// SAFETY: the buffer owns its mapping; threads only read it after creation.
unsafe impl Send for Buffer {}
// SAFETY: as above; all shared access is reads.
unsafe impl Sync for Buffer {}

impl Buffer {
    /// Maps `bytes` (rounded up to 2 MiB), advises huge pages or not, and
    /// touches every page so no fault is measured.
    pub fn new(bytes: usize, huge_pages: bool) -> Self {
        let len = bytes.next_multiple_of(HUGE);
        let map_len = len + HUGE;
        // SAFETY: anonymous private mapping with no hint; checked below.
        let map_base = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert!(
            map_base != libc::MAP_FAILED,
            "mmap of {map_len} bytes failed"
        );
        let base = (map_base as usize).next_multiple_of(HUGE) as *mut u8;
        let advice = if huge_pages {
            libc::MADV_HUGEPAGE
        } else {
            libc::MADV_NOHUGEPAGE
        };
        // SAFETY: `base..base+len` lies inside the mapping.
        unsafe {
            libc::madvise(base.cast(), len, advice);
            for page in (0..len).step_by(4096) {
                base.add(page).write_volatile((page >> 12) as u8 | 1);
            }
        }
        Self {
            base,
            len,
            map_base,
            map_len,
        }
    }

    pub fn lines(&self) -> usize {
        self.len / 64
    }

    /// Fetches `count` random lines with `ahead` lines in flight; returns
    /// nanoseconds of this thread's CPU time per line.
    pub fn random_lines(&self, count: usize, ahead: usize, seed: u64) -> f64 {
        assert!(ahead.is_power_of_two() && ahead <= 64);
        let lines = self.lines() as u64;
        let mut rng = Rng::new(seed);
        let mut ring = [0usize; 64];
        let line_at = |i: usize| {
            // SAFETY: i < lines, so the line lies inside the buffer.
            unsafe { self.base.add(i * 64) }
        };
        let start = CpuClock::now();
        for slot in ring.iter_mut().take(ahead) {
            *slot = rng.below(lines) as usize;
            prefetch(line_at(*slot));
        }
        let mut sum = 0u64;
        for k in 0..count {
            let current = ring[k & (ahead - 1)];
            let next = rng.below(lines) as usize;
            prefetch(line_at(next));
            ring[k & (ahead - 1)] = next;
            // SAFETY: inside the buffer, 8-byte aligned (lines are).
            sum = sum.wrapping_add(unsafe { line_at(current).cast::<u64>().read_volatile() });
        }
        let ns = start.elapsed_ns() / count as f64;
        std::hint::black_box(sum);
        ns
    }

    /// A dependent chase: each line's address depends on the previous
    /// load, so no two misses overlap (latency, not throughput).
    pub fn dependent_lines(&self, count: usize, seed: u64) -> f64 {
        let lines = self.lines() as u64;
        let mut rng = Rng::new(seed);
        let mut x = 0u64;
        let start = CpuClock::now();
        for _ in 0..count {
            let i = (rng.below(lines) ^ (x & 1)) as usize;
            // SAFETY: `i < lines` (flipping bit 0 of an index below an even
            // line count stays below it).
            x = unsafe { self.base.add(i * 64).cast::<u64>().read_volatile() };
        }
        let ns = start.elapsed_ns() / count as f64;
        std::hint::black_box(x);
        ns
    }

    /// Share of the buffer the kernel backed with huge pages.
    pub fn huge_page_share(&self) -> Option<f64> {
        huge_share_of(self.base as usize)
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: exactly the mapping created in `new`.
        unsafe {
            libc::munmap(self.map_base, self.map_len);
        }
    }
}

#[inline(always)]
fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p.cast())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Share of the mapping containing `addr` backed by huge pages, from
/// `/proc/self/smaps`.
pub fn huge_share_of(addr: usize) -> Option<f64> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    let mut in_region = false;
    let mut size = 0f64;
    for line in smaps.lines() {
        if let Some((range, _)) = line.split_once(' ') {
            if let Some((a, b)) = range.split_once('-') {
                if let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
                {
                    in_region = a <= addr && addr < b;
                    size = (b - a) as f64;
                    continue;
                }
            }
        }
        if in_region {
            if let Some(rest) = line.strip_prefix("AnonHugePages:") {
                let kb: f64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
                return Some(kb * 1024.0 / size);
            }
        }
    }
    None
}

/// `AnonHugePages` of the whole system in MiB, from `/proc/meminfo`.
pub fn anon_huge_mib() -> Option<f64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("AnonHugePages:"))?;
    let kb: f64 = line["AnonHugePages:".len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}
