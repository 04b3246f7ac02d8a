//! [`WindowedBuilder`]: a windowed filter's configuration, and the choice
//! of tag and fingerprint widths for a window and a rate.

use super::lanes::Layout;
use super::table::WindowTable;
use super::{path, WindowedCuckooFilter};
use crate::error::BuildError;
use crate::hashing::DefaultHashBuilder;
use crate::storage::TableMemory;

/// Configures a [`WindowedCuckooFilter`]; from
/// [`WindowedCuckooFilter::builder`].
///
/// ```
/// use concurrent_cuckoo::{BuildError, WindowedCuckooFilter};
/// let err = WindowedCuckooFilter::builder().capacity(10).generations(0).build().unwrap_err();
/// assert_eq!(err, BuildError::InvalidGenerations { generations: 0, max: 29 });
/// # Ok::<(), BuildError>(())
/// ```
#[derive(Clone, Debug)]
#[must_use]
pub struct WindowedBuilder<S = DefaultHashBuilder> {
    capacity: Option<usize>,
    generations: u64,
    rate: Option<f64>,
    tag_bits: Option<u32>,
    bucket_count: Option<usize>,
    stripe_count: Option<usize>,
    max_path_len: usize,
    table_memory: TableMemory,
    hasher: S,
}

impl WindowedBuilder<DefaultHashBuilder> {
    /// The defaults: no capacity yet, a window of 4, no rate.
    pub(super) fn new() -> Self {
        Self {
            capacity: None,
            generations: 4,
            rate: None,
            tag_bits: None,
            bucket_count: None,
            stripe_count: None,
            max_path_len: path::MAX_PATH,
            table_memory: TableMemory::Mapped,
            hasher: DefaultHashBuilder::new(),
        }
    }

    /// Fixes the default hasher's seed (reproducible runs).
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(100).seed(7).build()?;
    /// assert_eq!(f.hasher().seed(), 7);
    /// # Ok::<(), concurrent_cuckoo::BuildError>(())
    /// ```
    pub fn seed(mut self, seed: u64) -> Self {
        self.hasher = DefaultHashBuilder::with_seed(seed);
        self
    }
}

impl<S> WindowedBuilder<S> {
    /// The most keys live at once (inserted or refreshed within the
    /// window). Required.
    ///
    /// ```
    /// use concurrent_cuckoo::{BuildError, WindowedCuckooFilter};
    /// let err = WindowedCuckooFilter::builder().build().unwrap_err();
    /// assert_eq!(err, BuildError::MissingCapacity);
    /// ```
    pub fn capacity(mut self, capacity: usize) -> Self {
        self.capacity = Some(capacity);
        self
    }

    /// `G`, the window: a key lives through the generation of its last
    /// insert and the `G - 1` after it (default 4). At most `2^t - 3`,
    /// with `t = 16 - f` tag bits, `f` the fingerprint bits the rate
    /// needs; without a rate, `f` is 13, 12 or 11 as `G` needs (rate
    /// bounds 9.8e-4, 2.0e-3, 3.9e-3).
    ///
    /// ```
    /// use concurrent_cuckoo::{BuildError, WindowedCuckooFilter};
    /// let b = || WindowedCuckooFilter::builder().capacity(100);
    /// assert_eq!(b().generations(29).build()?.tag_bits(), 5);
    /// let err = b().generations(6).false_positive_rate(1e-3).build().unwrap_err();
    /// assert_eq!(err, BuildError::InvalidGenerations { generations: 6, max: 5 });
    /// # Ok::<(), BuildError>(())
    /// ```
    pub fn generations(mut self, generations: u64) -> Self {
        self.generations = generations;
        self
    }

    /// Target false-positive rate in (0, 1): fingerprints of at least `f`
    /// bits with `8 / 2^f <= rate`, at most 14 (rate >= 4.9e-4).
    ///
    /// ```
    /// use concurrent_cuckoo::{BuildError, WindowedCuckooFilter};
    /// let f = WindowedCuckooFilter::builder().capacity(100).false_positive_rate(1e-3).build()?;
    /// assert!(f.false_positive_bound() <= 1e-3);
    /// let bad = WindowedCuckooFilter::builder().capacity(100).false_positive_rate(0.0).build();
    /// assert_eq!(bad.unwrap_err(), BuildError::InvalidFalsePositiveRate(0.0));
    /// # Ok::<(), BuildError>(())
    /// ```
    pub fn false_positive_rate(mut self, rate: f64) -> Self {
        self.rate = Some(rate);
        self
    }

    /// Uses `hasher` instead of the default.
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// use std::collections::hash_map::RandomState;
    /// let f = WindowedCuckooFilter::builder().capacity(100).hasher(RandomState::new()).build()?;
    /// f.insert("k")?;
    /// assert!(f.contains("k"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn hasher<S2>(self, hasher: S2) -> WindowedBuilder<S2> {
        WindowedBuilder {
            capacity: self.capacity,
            generations: self.generations,
            rate: self.rate,
            tag_bits: self.tag_bits,
            bucket_count: self.bucket_count,
            stripe_count: self.stripe_count,
            max_path_len: self.max_path_len,
            table_memory: self.table_memory,
            hasher,
        }
    }

    /// Where the filter's table gets its memory (see [`TableMemory`]): by
    /// default a large table is a mapping of its own on 2 MiB pages;
    /// [`TableMemory::GlobalAllocator`] takes every byte from the global
    /// allocator.
    ///
    /// ```
    /// use concurrent_cuckoo::{TableMemory, WindowedCuckooFilter};
    /// let f = WindowedCuckooFilter::builder()
    ///     .capacity(1000)
    ///     .table_memory(TableMemory::GlobalAllocator)
    ///     .build()?;
    /// assert_eq!(f.table_memory(), TableMemory::GlobalAllocator);
    /// # Ok::<(), concurrent_cuckoo::BuildError>(())
    /// ```
    pub fn table_memory(mut self, memory: TableMemory) -> Self {
        self.table_memory = memory;
        self
    }

    crate::unstable_api! {
        /// Exact tag bits (2 to 5). For tests and loom models.
        ///
        /// **Unstable**: a hook for tests, hidden from the docs.
        pub fn tag_bits(mut self, bits: u32) -> Self {
            self.tag_bits = Some(bits);
            self
        }
    }

    crate::unstable_api! {
        /// Exact bucket count (even, >= 2). For tests and loom models.
        ///
        /// **Unstable**: a hook for tests, hidden from the docs.
        pub fn bucket_count(mut self, buckets: usize) -> Self {
            self.bucket_count = Some(buckets);
            self
        }
    }

    crate::unstable_api! {
        /// Exact stripe count (a power of two). For tests and loom models.
        ///
        /// **Unstable**: a hook for tests, hidden from the docs.
        pub fn stripe_count(mut self, stripes: usize) -> Self {
            self.stripe_count = Some(stripes);
            self
        }
    }

    crate::unstable_api! {
        /// Longest displacement path (1 to 5). For tests and loom models.
        ///
        /// **Unstable**: a hook for tests, hidden from the docs.
        pub fn max_path_len(mut self, hops: usize) -> Self {
            self.max_path_len = hops;
            self
        }
    }

    /// Builds the filter.
    ///
    /// ```
    /// use concurrent_cuckoo::{BuildError, WindowedCuckooFilter};
    /// let f = WindowedCuckooFilter::builder().capacity(1000).build()?;
    /// assert!(f.is_empty());
    /// let err = WindowedCuckooFilter::builder().capacity(1000).false_positive_rate(1e-4).build();
    /// assert_eq!(err.unwrap_err(), BuildError::InvalidGenerations { generations: 4, max: 0 });
    /// # Ok::<(), BuildError>(())
    /// ```
    ///
    /// # Errors
    /// A missing or too large capacity, a rate outside (0, 1), a window of
    /// 0 or more generations than the rate leaves tag bits for, a bad
    /// tuning hook, or a failed allocation.
    pub fn build(self) -> Result<WindowedCuckooFilter<S>, BuildError> {
        let layout = self.layout()?;
        let buckets = match (self.bucket_count, self.capacity) {
            (Some(b), _) if b < 2 || !b.is_multiple_of(2) || b as u64 > 1 << 32 => {
                return Err(BuildError::InvalidBucketCount(b))
            }
            (Some(b), _) => b,
            (None, Some(n)) => crate::filter::buckets_for_capacity(n)?,
            (None, None) => return Err(BuildError::MissingCapacity),
        };
        if !(1..=path::MAX_PATH).contains(&self.max_path_len) {
            return Err(BuildError::InvalidMaxPathLen(self.max_path_len));
        }
        if let Some(s) = self.stripe_count {
            if !s.is_power_of_two() || s > 1 << 16 {
                return Err(BuildError::InvalidStripeCount(s));
            }
        }
        let table = WindowTable::new(
            buckets,
            self.stripe_count,
            layout,
            self.max_path_len,
            self.table_memory,
        )
        .map_err(BuildError::AllocationFailed)?;
        Ok(WindowedCuckooFilter {
            table,
            hasher: self.hasher,
        })
    }

    /// Tag and fingerprint widths for the window and rate (see
    /// [`generations`](Self::generations)).
    fn layout(&self) -> Result<Layout, BuildError> {
        if self.capacity.is_none() && self.bucket_count.is_none() {
            return Err(BuildError::MissingCapacity);
        }
        // The fewest fingerprint bits the rate allows (11 without one).
        let min_fp = match self.rate {
            None => 11,
            Some(rate) if !(rate > 0.0 && rate < 1.0) => {
                return Err(BuildError::InvalidFalsePositiveRate(rate))
            }
            Some(rate) => (1..=16u32)
                .find(|&f| 8.0 / (1u64 << f) as f64 <= rate)
                .unwrap_or(16),
        };
        let most_tag_bits = (Layout::SLOT_BITS - min_fp).min(5);
        let max = if most_tag_bits >= 2 {
            (1u64 << most_tag_bits) - 3
        } else {
            0
        };
        let g = self.generations;
        let invalid = BuildError::InvalidGenerations {
            generations: g,
            max,
        };
        let bits = match self.tag_bits {
            Some(bits) if (2..=5).contains(&bits) && g >= 1 && g + 3 <= 1u64 << bits => bits,
            Some(_) => return Err(invalid),
            // The fewest tag bits (at least 3) that fit the window: every
            // other bit goes to the fingerprint.
            None => (3..=most_tag_bits)
                .find(|&t| g >= 1 && g + 3 <= 1u64 << t)
                .ok_or(invalid)?,
        };
        Ok(Layout::new(bits, g))
    }
}
