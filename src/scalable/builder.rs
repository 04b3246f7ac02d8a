//! The builder of a [`ScalableCuckooFilter`].

use super::slots::{Config, Level};
use super::{ScalableCuckooFilter, LEVEL_LIMIT};
use crate::error::BuildError;
use crate::hashing::DefaultHashBuilder;
use crate::storage::TableMemory;

/// Configures a [`ScalableCuckooFilter`]. Obtained from
/// [`ScalableCuckooFilter::builder`].
///
/// ```
/// use concurrent_cuckoo::ScalableCuckooFilter;
/// let filter = ScalableCuckooFilter::builder()
///     .capacity(1000) // a guess: the filter grows past it
///     .growth_factor(4)
///     .max_levels(8)
///     .false_positive_rate(1e-3)
///     .seed(42)
///     .build()?;
/// filter.insert_batch(&(0..20_000u32).collect::<Vec<_>>())?;
/// assert!(filter.levels() > 1 && filter.levels() <= 8);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
#[must_use]
pub struct ScalableBuilder<S = DefaultHashBuilder> {
    pub(super) initial_capacity: Option<usize>,
    pub(super) false_positive_rate: f64,
    pub(super) growth_factor: usize,
    pub(super) max_levels: usize,
    pub(super) table_memory: TableMemory,
    pub(super) hasher: S,
    #[cfg(concurrent_cuckoo_loom)]
    pub(super) level_stripes: Option<usize>,
}

impl ScalableBuilder<DefaultHashBuilder> {
    /// Fixes the default hasher's seed (see
    /// [`Builder::seed`](crate::Builder::seed)).
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let a = ScalableCuckooFilter::builder().capacity(10).seed(7).build()?;
    /// let b = ScalableCuckooFilter::builder().capacity(10).seed(7).build()?;
    /// a.insert_batch(&(0..100u32).collect::<Vec<_>>())?;
    /// b.insert_batch(&(0..100u32).collect::<Vec<_>>())?;
    /// assert_eq!(a.to_bytes(), b.to_bytes()); // the same seed: the same levels
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use = "a builder does nothing until `build` is called"]
    pub fn seed(mut self, seed: u64) -> Self {
        self.hasher = DefaultHashBuilder::with_seed(seed);
        self
    }
}

impl<S> ScalableBuilder<S> {
    /// Items the first level holds (the filter grows past it). Required.
    /// Named as [`Builder::capacity`](crate::Builder::capacity) and
    /// [`WindowedBuilder::capacity`](crate::WindowedBuilder::capacity) are;
    /// the built filter reports it as
    /// [`initial_capacity`](ScalableCuckooFilter::initial_capacity).
    ///
    /// ```
    /// use concurrent_cuckoo::{BuildError, ScalableCuckooFilter};
    /// let filter = ScalableCuckooFilter::builder().capacity(5000).build()?;
    /// assert!(filter.capacity() >= 5000);
    /// let none = ScalableCuckooFilter::builder().build();
    /// assert_eq!(none.unwrap_err(), BuildError::MissingCapacity);
    /// # Ok::<(), BuildError>(())
    /// ```
    #[must_use = "a builder does nothing until `build` is called"]
    pub fn capacity(mut self, capacity: usize) -> Self {
        self.initial_capacity = Some(capacity);
        self
    }

    /// Bound on the whole filter's false-positive rate, however far it
    /// grows (default 0.001). Must be in (0, 1) and leave room for the
    /// levels' reserve (`max_levels * 8 / 2^32`).
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::builder().capacity(100).false_positive_rate(0.05).build()?;
    /// assert_eq!(filter.level_fingerprint_bits(), vec![8]); // 8 / 2^8 fits in 0.05
    /// filter.insert_batch(&(0..1000u32).collect::<Vec<_>>())?;
    /// assert_eq!(filter.level_fingerprint_bits()[..2], [8, 16]); // a second 8-bit level would not
    /// assert!(filter.false_positive_bound() <= 0.05);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use = "a builder does nothing until `build` is called"]
    pub fn false_positive_rate(mut self, rate: f64) -> Self {
        self.false_positive_rate = rate;
        self
    }

    /// Each new level holds `factor` times the items of the previous one
    /// (1 to `u32::MAX`, the most the saved format records; default 2).
    /// A factor of 1 makes every level the size of the first: memory grows
    /// by the first level's size per level (linear growth, RedisBloom's
    /// `EXPANSION 1`), and `max_levels` levels hold only `max_levels` times
    /// the initial capacity.
    ///
    /// ```
    /// use concurrent_cuckoo::{BuildError, ScalableCuckooFilter};
    /// let filter = ScalableCuckooFilter::builder().capacity(100).growth_factor(8).build()?;
    /// filter.insert_batch(&(0..500u32).collect::<Vec<_>>())?;
    /// assert_eq!(filter.levels(), 2); // the second level holds 800 items
    /// let flat = ScalableCuckooFilter::builder().capacity(100).growth_factor(1).build()?;
    /// let first = flat.capacity();
    /// flat.insert_batch(&(0..500u32).collect::<Vec<_>>())?;
    /// assert!(flat.levels() > 3); // levels the size of the first
    /// assert_eq!(flat.capacity(), first * flat.levels());
    /// let none = ScalableCuckooFilter::builder().capacity(100).growth_factor(0).build();
    /// assert_eq!(none.unwrap_err(), BuildError::InvalidGrowthFactor(0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use = "a builder does nothing until `build` is called"]
    pub fn growth_factor(mut self, factor: usize) -> Self {
        self.growth_factor = factor;
        self
    }

    /// Most levels in use at once (slots), 1 to 64 (default 32). Retired
    /// levels free their slots for later growth, so this bounds the levels
    /// in use, not the levels ever made: an insert fails with
    /// [`InsertError::Full`](crate::InsertError::Full) only when the
    /// current level refuses it, every other level in use is over 3/4
    /// full, and this many are in use.
    ///
    /// ```
    /// use concurrent_cuckoo::{InsertError, ScalableCuckooFilter};
    /// let filter = ScalableCuckooFilter::builder().capacity(10).max_levels(1).build()?;
    /// let err = (0..1000u32).find_map(|k| filter.insert(&k).err());
    /// assert_eq!(err, Some(InsertError::Full)); // one level only: it cannot grow
    /// assert_eq!(filter.levels(), 1);
    /// # Ok::<(), concurrent_cuckoo::BuildError>(())
    /// ```
    #[must_use = "a builder does nothing until `build` is called"]
    pub fn max_levels(mut self, levels: usize) -> Self {
        self.max_levels = levels;
        self
    }

    /// Uses `hasher` instead of the default (see
    /// [`Builder::hasher`](crate::Builder::hasher)).
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// use std::collections::hash_map::RandomState;
    /// let filter = ScalableCuckooFilter::builder().capacity(10).hasher(RandomState::new()).build()?;
    /// filter.insert("k")?;
    /// assert!(filter.contains("k"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use = "a builder does nothing until `build` is called"]
    pub fn hasher<S2>(self, hasher: S2) -> ScalableBuilder<S2> {
        ScalableBuilder {
            initial_capacity: self.initial_capacity,
            false_positive_rate: self.false_positive_rate,
            growth_factor: self.growth_factor,
            max_levels: self.max_levels,
            table_memory: self.table_memory,
            hasher,
            #[cfg(concurrent_cuckoo_loom)]
            level_stripes: self.level_stripes,
        }
    }

    /// Where every level's table gets its memory (see [`TableMemory`]),
    /// the first and each one the filter grows: by default large tables
    /// are mappings of their own, given back to the system when a level
    /// retires; [`TableMemory::GlobalAllocator`] takes every byte from
    /// the global allocator.
    ///
    /// ```
    /// use concurrent_cuckoo::{ScalableCuckooFilter, TableMemory};
    /// let filter = ScalableCuckooFilter::builder()
    ///     .capacity(100)
    ///     .table_memory(TableMemory::GlobalAllocator)
    ///     .build()?;
    /// filter.insert_batch(&(0..1000u32).collect::<Vec<_>>())?;
    /// assert!(filter.levels() > 1);
    /// assert_eq!(filter.table_memory(), TableMemory::GlobalAllocator);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use = "a builder does nothing until `build` is called"]
    pub fn table_memory(mut self, memory: TableMemory) -> Self {
        self.table_memory = memory;
        self
    }

    /// Lock stripes of every level (loom models only: a four-bucket level
    /// with two stripes, so that two removes can run under different
    /// locks).
    #[cfg(concurrent_cuckoo_loom)]
    #[doc(hidden)]
    pub fn level_stripes(mut self, stripes: usize) -> Self {
        self.level_stripes = Some(stripes);
        self
    }

    /// Builds the filter and its first level.
    ///
    /// ```
    /// use concurrent_cuckoo::{BuildError, ScalableCuckooFilter};
    /// let filter = ScalableCuckooFilter::builder().capacity(1000).build()?;
    /// assert_eq!(filter.levels(), 1);
    /// let too_many = ScalableCuckooFilter::builder().capacity(1000).max_levels(65).build();
    /// assert_eq!(too_many.unwrap_err(), BuildError::InvalidMaxLevels(65));
    /// # Ok::<(), BuildError>(())
    /// ```
    ///
    /// # Errors
    /// A [`BuildError`] for a missing initial capacity, a growth factor of
    /// 0 or over `u32::MAX`, a level count outside 1..=64, a false-positive rate outside
    /// (0, 1) or too small for the levels' 32-bit reserve, or a failed
    /// allocation.
    pub fn build(self) -> Result<ScalableCuckooFilter<S>, BuildError> {
        let initial = self.initial_capacity.ok_or(BuildError::MissingCapacity)?;
        // The saved format records the factor in 32 bits: a larger one
        // would be truncated on save (and is absurd: the second level of a
        // one-item filter would hold 2^32 items).
        let growth_factor = match u32::try_from(self.growth_factor) {
            Ok(factor) if factor >= 1 => factor,
            _ => return Err(BuildError::InvalidGrowthFactor(self.growth_factor)),
        };
        if !(1..=LEVEL_LIMIT).contains(&self.max_levels) {
            return Err(BuildError::InvalidMaxLevels(self.max_levels));
        }
        let rate = self.false_positive_rate;
        if !(rate > 0.0 && rate < 1.0) {
            return Err(BuildError::InvalidFalsePositiveRate(rate));
        }
        let config = Config {
            initial_capacity: initial,
            false_positive_rate: rate,
            growth_factor,
            max_levels: self.max_levels,
            table_memory: self.table_memory,
            nested: true,
            #[cfg(concurrent_cuckoo_loom)]
            level_stripes: self.level_stripes,
        };
        let Some(bits) = config.bits(0) else {
            return Err(BuildError::FingerprintTooShort { bits: 32, rate });
        };
        let stripes = {
            #[cfg(concurrent_cuckoo_loom)]
            let stripes = self.level_stripes;
            #[cfg(not(concurrent_cuckoo_loom))]
            let stripes = None;
            stripes
        };
        // The first level's bucket count, or the error that says why not.
        crate::filter::buckets_for_capacity(initial.max(1))?;
        let map = config.map(0, bits).ok_or(BuildError::CapacityOverflow {
            requested: initial as u64,
        })?;
        let first = Level::new(map, bits, stripes, self.table_memory)?;
        Ok(ScalableCuckooFilter::from_parts(
            config,
            self.hasher,
            vec![(0, first)],
        ))
    }
}
