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

use redis_module::configuration::{ConfigurationContext, ConfigurationValue};
use redis_module::{RedisError, RedisString};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};

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

/// `window-sweeper`: whether the sweeper (`window_sweeper.rs`) sweeps and
/// advances window filters between commands (`yes`, the default). With
/// `no`, each write catches up for itself, as before the sweeper: a pause
/// in proportion to the table at the first write of a generation, but no
/// work at all between commands.
pub(crate) static WINDOW_SWEEPER: AtomicBool = AtomicBool::new(true);
pub(crate) const WINDOW_SWEEPER_NAME: &str = "window-sweeper";

/// Whether the window sweeper runs.
pub(crate) fn window_sweeper() -> bool {
    WINDOW_SWEEPER.load(Ordering::Relaxed)
}

// The defaults of new filters, with RedisBloom's names (Redis 8's
// RedisBloom registers the same configs): what `CF.RESERVE` takes when an
// option is not given, and what `CF.ADD`/`CF.INSERT` create a missing key
// with. A filter keeps the settings it was created with (and replicas
// receive them explicitly with its `CF.RESERVE`): changing a config
// changes only filters created afterwards.

/// `cf-initial-size`: the capacity of a filter `CF.ADD` or `CF.INSERT`
/// (without `CAPACITY`) creates. RedisBloom's default, 1024.
pub(crate) static INITIAL_SIZE: AtomicI64 = AtomicI64::new(1024);
pub(crate) const INITIAL_SIZE_NAME: &str = "cf-initial-size";
/// Its range: the smallest filter (`CF.RESERVE key 2 BUCKETSIZE 1`) to
/// 2^30 items (a larger filter is `CF.RESERVE`'s to ask for, explicitly).
pub(crate) const INITIAL_SIZE_RANGE: (i64, i64) = (2, 1 << 30);

/// `cf-expansion-factor`: the `EXPANSION` of a filter created without one
/// (0: fixed; `e`: levels growing by `e`). RedisBloom's default, 1.
pub(crate) static EXPANSION_FACTOR: AtomicI64 = AtomicI64::new(1);
pub(crate) const EXPANSION_FACTOR_NAME: &str = "cf-expansion-factor";
/// `CF.RESERVE`'s range of `EXPANSION`.
pub(crate) const EXPANSION_FACTOR_RANGE: (i64, i64) = (0, 32768);

/// `cf-max-expansions`: the most levels a growing filter created from now
/// on may have. RedisBloom's default, 32.
pub(crate) static MAX_EXPANSIONS: AtomicI64 = AtomicI64::new(32);
pub(crate) const MAX_EXPANSIONS_NAME: &str = "cf-max-expansions";
/// 1 to the library's limit, 64 levels (RedisBloom allows 65535
/// sub-filters; its false-positive rate grows with each).
pub(crate) const MAX_EXPANSIONS_RANGE: (i64, i64) = (1, 64);

/// `cf-bucket-size`: the `BUCKETSIZE` reported for a filter created
/// without one (accepted and reported; the table's buckets hold 4
/// fingerprints, see docs/redis.md). RedisBloom's default, 2.
pub(crate) static BUCKET_SIZE: AtomicI64 = AtomicI64::new(2);
pub(crate) const BUCKET_SIZE_NAME: &str = "cf-bucket-size";
pub(crate) const BUCKET_SIZE_RANGE: (i64, i64) = (1, 255);

/// `cf-max-iterations`: the `MAXITERATIONS` reported for a filter created
/// without one (accepted and reported; inserts search paths of at most 5
/// moves breadth-first). RedisBloom's default, 20.
pub(crate) static MAX_ITERATIONS: AtomicI64 = AtomicI64::new(20);
pub(crate) const MAX_ITERATIONS_NAME: &str = "cf-max-iterations";
pub(crate) const MAX_ITERATIONS_RANGE: (i64, i64) = (1, 65535);

/// `cf-error-rate` (this module's; RedisBloom's cuckoo filter has no error
/// rate): the `ERROR` of a filter created without one, a bound on its
/// whole false-positive rate. A string config (the module API has no
/// floating-point one): a number in (0, 1), refused otherwise.
pub(crate) static ERROR_RATE: ErrorRate = ErrorRate(AtomicU64::new(DEFAULT_ERROR_RATE_BITS));
pub(crate) const ERROR_RATE_NAME: &str = "cf-error-rate";
/// Its default, 0.001, as text (registration) and as `f64` bits.
pub(crate) const DEFAULT_ERROR_RATE_TEXT: &str = "0.001";
const DEFAULT_ERROR_RATE_BITS: u64 = 0x3F50_624D_D2F1_A9FC; // 0.001_f64.to_bits()

/// The error rate config: an `f64` kept as its bits.
pub(crate) struct ErrorRate(AtomicU64);

impl ErrorRate {
    pub(crate) fn get(&self) -> f64 {
        f64::from_bits(self.0.load(Ordering::Relaxed))
    }
}

impl ConfigurationValue<RedisString> for ErrorRate {
    fn get(&self, _ctx: &ConfigurationContext) -> RedisString {
        RedisString::create(None, format!("{:?}", ErrorRate::get(self)).as_str())
    }

    fn set(&self, _ctx: &ConfigurationContext, value: RedisString) -> Result<(), RedisError> {
        let rate = value
            .parse_float()
            .ok()
            .filter(|rate| *rate > 0.0 && *rate < 1.0)
            .ok_or(RedisError::Str(
                "cf-error-rate must be a number between 0 and 1, exclusive",
            ))?;
        self.0.store(rate.to_bits(), Ordering::Relaxed);
        Ok(())
    }
}

/// A config's value now.
pub(crate) fn value(config: &AtomicI64) -> i64 {
    config.load(Ordering::Relaxed)
}
