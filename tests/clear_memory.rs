//! `clear` never writes pages it does not need to (issue 28, item 3): a
//! growing filter on lazily zeroed mappings (tables of 4 MiB and more on
//! Linux) that drained all but its newest level, then cleared, must not
//! commit the drained levels' memory again. `clear` used to write zero
//! into every bucket of every level, retired ones included (their pages
//! given back with `MADV_DONTNEED`) and the never-touched pages of the
//! levels in use: it kept the oldest allocated level, a retired one, and
//! left it fully committed. Its own test binary: it reads the resident
//! memory of the whole process (`/proc/self/statm`).
#![cfg(target_os = "linux")]

use concurrent_cuckoo::ScalableCuckooFilter;

/// Resident bytes of this process.
fn resident_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|f| f.parse().ok())
        .expect("resident pages");
    // SAFETY: `sysconf` has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    pages * usize::try_from(page).expect("a page size")
}

/// Inserts fresh keys one at a time until the filter has `levels` levels;
/// returns them (the last one is the first key of the new level).
fn fill_until(f: &ScalableCuckooFilter, levels: usize, next: &mut u64) -> Vec<u64> {
    let mut keys = Vec::new();
    while f.levels() < levels {
        f.insert_hash(*next).unwrap();
        keys.push(*next);
        *next += 1;
    }
    keys
}

#[test]
fn clearing_a_drained_filter_does_not_commit_its_retired_levels_again() {
    let f = ScalableCuckooFilter::builder()
        .capacity(1_000_000) // 32-bit levels of ~4.4 MiB: mappings
        .growth_factor(1)
        .false_positive_rate(1e-7) // 32-bit: no remove is refused
        .seed(28)
        .build()
        .unwrap();
    let mut next = 0;
    let mut drained = fill_until(&f, 2, &mut next);
    drained.extend(fill_until(&f, 3, &mut next));
    drained.pop(); // in the newest level
    let level_bytes = f.level_stats()[0].memory_usage;
    assert!(
        level_bytes >= 4 << 20,
        "a mapped level: {level_bytes} bytes"
    );
    for k in &drained {
        assert!(f.remove_hash(*k).is_removed());
    }
    assert_eq!(f.levels(), 1, "the two drained levels retired");
    let before = resident_bytes();
    f.clear();
    let after = resident_bytes();
    println!(
        "resident before clear {before}, after {after} (+{} bytes); two drained levels of {level_bytes} bytes",
        after.saturating_sub(before)
    );
    assert!(
        after < before + level_bytes / 4,
        "clear committed {} bytes (a drained level is {level_bytes})",
        after - before
    );
    assert_eq!((f.len(), f.levels()), (0, 1));
    f.insert_hash(u64::MAX).unwrap();
    assert!(f.contains_hash(u64::MAX));
}
