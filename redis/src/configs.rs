//! The module's configuration: values an operator sets with
//! `CONFIG SET cuckoo.<name> <value>` (read back with `CONFIG GET`), in
//! `redis.conf` as `cuckoo.<name> <value>`, or as a `--loadmodule`
//! argument pair `<name> <value>` (unprefixed there).
//!
//! Each config is a static the commands read (an atomic: `CONFIG SET`
//! runs on the main thread like every command, but a config is read from
//! wherever it is needed without a lock), registered in `lib.rs`'s
//! `redis_module!` `configurations:` list (name, static, default, minimum,
//! maximum, flags). New configs go here, a static and its constants each,
//! and a line in `lib.rs`.

use std::sync::atomic::{AtomicI64, Ordering};

/// `cf-max-memory-usage`: the most bytes one filter may hold (its tables,
/// locks and bookkeeping, what `MEMORY USAGE` reports). A command, copy,
/// restore or load that would allocate a table taking a filter past it is
/// refused (`ERR Insufficient memory to create filter`, or for growth
/// inside an insert `ERR Memory allocation failure`) and changes nothing.
///
/// The default, 1 GiB, holds a filter reserved for 100 million items at
/// the default error rate (about 210 MiB with 16-bit fingerprints, 420 MiB
/// with 32-bit ones) and refuses one command of tens of GB
/// (`CF.RESERVE f 15000000000 ERROR 0.00001` asks for about 63 GB).
/// valkey-bloom's `bloom-memory-usage-limit` is the model (64 MB there:
/// Bloom filters are smaller per item at a given rate).
pub(crate) static MAX_MEMORY_USAGE: AtomicI64 = AtomicI64::new(DEFAULT_MAX_MEMORY_USAGE);
/// Its name, without the module's prefix.
pub(crate) const MAX_MEMORY_USAGE_NAME: &str = "cf-max-memory-usage";
/// Its default: 1 GiB.
pub(crate) const DEFAULT_MAX_MEMORY_USAGE: i64 = 1 << 30;
/// Its smallest value: the memory of the smallest filter, with room.
pub(crate) const MIN_MAX_MEMORY_USAGE: i64 = 64 << 10;
/// Its largest: no limit in practice (`i64::MAX` bytes).
pub(crate) const MAX_MAX_MEMORY_USAGE: i64 = i64::MAX;

/// The per-filter memory limit now, in bytes.
pub(crate) fn max_memory_usage() -> usize {
    usize::try_from(MAX_MEMORY_USAGE.load(Ordering::Relaxed)).unwrap_or(usize::MAX)
}
