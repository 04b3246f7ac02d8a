//! Pinning threads to CPUs, and what the machine's CPUs are.
//!
//! A scaling curve with unpinned threads measures the scheduler as much as
//! the filter: two threads may share a core for a while, or migrate and
//! lose their caches. So each worker pins itself to one CPU of those the
//! process may use, thread `i` to the `i`-th (wrapping round when there
//! are more threads than CPUs, which is the oversubscribed case). Linux
//! only (`sched_setaffinity`); elsewhere threads run unpinned and the
//! report says so.

/// The CPUs this process may run on, in ascending order.
pub fn allowed_cpus() -> Vec<usize> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `cpu_set_t` is plain bits, valid when zeroed.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `set` is a valid, writable `cpu_set_t` of the size passed.
        let ok = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) } == 0;
        if ok {
            let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
                // SAFETY: `cpu < CPU_SETSIZE`, the set's capacity.
                .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
                .collect();
            if !cpus.is_empty() {
                return cpus;
            }
        }
    }
    (0..logical_cpus()).collect()
}

/// `std::thread::available_parallelism`, at least 1.
pub fn logical_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Pins the calling thread to `cpu`; whether that worked.
pub fn pin_current(cpu: usize) -> bool {
    #[cfg(target_os = "linux")]
    {
        if cpu >= libc::CPU_SETSIZE as usize {
            return false;
        }
        // SAFETY: `cpu_set_t` is plain bits, valid when zeroed.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `cpu < CPU_SETSIZE`, checked above.
        unsafe { libc::CPU_SET(cpu, &mut set) };
        // SAFETY: `set` is a valid `cpu_set_t` of the size passed; pid 0 is
        // the calling thread.
        unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) == 0 }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = cpu;
        false
    }
}

/// Physical cores among the allowed CPUs (distinct `(package, core)`
/// pairs in Linux's sysfs topology), if the topology can be read: fewer
/// than the logical CPUs means the CPUs are hyperthreads.
pub fn physical_cores(cpus: &[usize]) -> Option<usize> {
    let read = |cpu: usize, what: &str| {
        std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu{cpu}/topology/{what}"))
            .ok()
            .map(|s| s.trim().to_string())
    };
    let mut cores = std::collections::HashSet::new();
    for &cpu in cpus {
        cores.insert((read(cpu, "physical_package_id")?, read(cpu, "core_id")?));
    }
    Some(cores.len())
}
