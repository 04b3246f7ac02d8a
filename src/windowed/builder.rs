//! [`WindowedBuilder`]: a windowed filter's configuration, and the choice
//! of tag and fingerprint widths for a window and a rate.

use super::lanes::{max_tag_bits, Layout, NARROW, WIDE};
use super::table::WindowTable;
use super::{path, WindowedCuckooFilter};
use crate::error::BuildError;
use crate::hashing::DefaultHashBuilder;
use crate::storage::TableMemory;

/// Load factor `capacity(n)` sizes 32-bit lanes for: two lanes a bucket
/// fill to a lower load than four before an insert fails.
const WIDE_TARGET_LOAD: f64 = 0.8;

/// Configures a [`WindowedCuckooFilter`]; from
/// [`WindowedCuckooFilter::builder`].
///
/// ```
/// use concurrent_cuckoo::{BuildError, WindowedCuckooFilter};
/// let err = WindowedCuckooFilter::builder().capacity(10).generations(0).build().unwrap_err();
/// assert_eq!(err, BuildError::InvalidGenerations { generations: 0, max: 253 });
/// # Ok::<(), BuildError>(())
/// ```
#[derive(Clone, Debug)]
#[must_use]
pub struct WindowedBuilder<S = DefaultHashBuilder> {
    capacity: Option<usize>,
    generations: u64,
    rate: Option<f64>,
    tag_bits: Option<u32>,
    lane_bits: Option<u32>,
    bucket_count: Option<usize>,
    stripe_count: Option<usize>,
    max_path_len: Option<usize>,
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
            lane_bits: None,
            bucket_count: None,
            stripe_count: None,
            max_path_len: None,
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
    /// insert and the `G - 1` after it (default 4). A lane holds a `t`-bit
    /// age tag (generations mod `2^t`; `G <= 2^t - 3`) beside an `f`-bit
    /// fingerprint. The filter takes 16-bit lanes, four a bucket, when
    /// they hold both the window's tags and the fingerprint the rate
    /// needs: without a rate, `f` is 13, 12 or 11 for `G` up to 5, 13 or
    /// 29 (rate bounds 9.8e-4, 2.0e-3, 3.9e-3). Otherwise 32-bit lanes,
    /// two a bucket ([`lane_bits`](WindowedCuckooFilter::lane_bits): about
    /// 2.2 times the memory a key), with up to 8 tag bits: windows of up to
    /// 253 generations. A window no lane holds at the rate is
    /// [`BuildError::InvalidGenerations`], naming the most it allows.
    ///
    /// ```
    /// use concurrent_cuckoo::{BuildError, WindowedCuckooFilter};
    /// let b = || WindowedCuckooFilter::builder().capacity(100);
    /// assert_eq!(b().generations(29).build()?.tag_bits(), 5);
    /// let long = b().generations(100).build()?;
    /// assert_eq!((long.lane_bits(), long.tag_bits(), long.fingerprint_bits()), (32, 7, 25));
    /// let err = b().generations(254).build().unwrap_err();
    /// assert_eq!(err, BuildError::InvalidGenerations { generations: 254, max: 253 });
    /// let err = b().generations(6).false_positive_rate(1e-8).build().unwrap_err();
    /// assert_eq!(err, BuildError::InvalidGenerations { generations: 6, max: 5 });
    /// # Ok::<(), BuildError>(())
    /// ```
    pub fn generations(mut self, generations: u64) -> Self {
        self.generations = generations;
        self
    }

    /// Target false-positive rate in (0, 1): fingerprints of at least `f`
    /// bits with `2 b / 2^f <= rate`, `b` lanes a bucket. 16-bit lanes
    /// (`b = 4`) reach 9.8e-4 with windows up to 5 generations (`f = 13`);
    /// below, 32-bit lanes (`b = 2`, [`generations`](Self::generations))
    /// reach 7.5e-9 with windows up to 5 generations (`f = 29`) and 2.4e-7
    /// with 253 (`f = 24`).
    ///
    /// ```
    /// use concurrent_cuckoo::{BuildError, WindowedCuckooFilter};
    /// let f = WindowedCuckooFilter::builder().capacity(100).false_positive_rate(1e-3).build()?;
    /// assert!(f.false_positive_bound() <= 1e-3);
    /// let f = WindowedCuckooFilter::builder().capacity(100).false_positive_rate(1e-6).build()?;
    /// assert!(f.false_positive_bound() <= 1e-6 && f.lane_bits() == 32);
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
            lane_bits: self.lane_bits,
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
        /// Exact tag bits (2 to 5 in 16-bit lanes, to 8 in 32-bit ones;
        /// more than 5 picks 32-bit lanes). For tests and loom models.
        ///
        /// **Unstable**: a hook for tests, hidden from the docs.
        pub fn tag_bits(mut self, bits: u32) -> Self {
            self.tag_bits = Some(bits);
            self
        }
    }

    crate::unstable_api! {
        /// Exact lane width (16 or 32 bits), where the builder would pick
        /// 16 for the window and rate. For tests and loom models.
        ///
        /// **Unstable**: a hook for tests, hidden from the docs.
        pub fn lane_bits(mut self, bits: u32) -> Self {
            self.lane_bits = Some(bits);
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
        /// Longest displacement path (1 to 5 in 16-bit lanes, to 8 in
        /// 32-bit ones; default the most). For tests and loom models.
        ///
        /// **Unstable**: a hook for tests, hidden from the docs.
        pub fn max_path_len(mut self, hops: usize) -> Self {
            self.max_path_len = Some(hops);
            self
        }
    }

    /// Builds the filter.
    ///
    /// ```
    /// use concurrent_cuckoo::{BuildError, WindowedCuckooFilter};
    /// let f = WindowedCuckooFilter::builder().capacity(1000).build()?;
    /// assert!(f.is_empty());
    /// let err = WindowedCuckooFilter::builder().capacity(1000).false_positive_rate(1e-9).build();
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
            (None, Some(n)) if layout.is_wide() => {
                crate::filter::buckets_for_load(n, layout.slots(), WIDE_TARGET_LOAD)?
            }
            (None, Some(n)) => crate::filter::buckets_for_capacity(n)?,
            (None, None) => return Err(BuildError::MissingCapacity),
        };
        let longest = path::max_path(layout.slots());
        let max_path_len = self.max_path_len.unwrap_or(longest);
        if !(1..=longest).contains(&max_path_len) {
            return Err(BuildError::InvalidMaxPathLen(max_path_len));
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
            max_path_len,
            self.table_memory,
        )
        .map_err(BuildError::AllocationFailed)?;
        Ok(WindowedCuckooFilter {
            table,
            hasher: self.hasher,
        })
    }

    /// Lane, tag and fingerprint widths for the window and rate (see
    /// [`generations`](Self::generations)): 16-bit lanes when they reach
    /// the rate and hold the window's tags, else 32-bit lanes.
    fn layout(&self) -> Result<Layout, BuildError> {
        if self.capacity.is_none() && self.bucket_count.is_none() {
            return Err(BuildError::MissingCapacity);
        }
        if let Some(rate) = self.rate {
            if !(rate > 0.0 && rate < 1.0) {
                return Err(BuildError::InvalidFalsePositiveRate(rate));
            }
        }
        if let Some(bits) = self.lane_bits.filter(|&b| b != NARROW && b != WIDE) {
            return Err(BuildError::UnsupportedFingerprintBits(bits));
        }
        let g = self.generations;
        let fits = |tag_bits: u32| g >= 1 && g + 3 <= 1u64 << tag_bits;
        if let Some(bits) = self.tag_bits {
            let lane_bits = self
                .lane_bits
                .unwrap_or(if bits > 5 { WIDE } else { NARROW });
            let valid = (lane_bits == NARROW || lane_bits == WIDE)
                && (2..=max_tag_bits(lane_bits)).contains(&bits)
                && fits(bits);
            if !valid {
                return Err(BuildError::InvalidGenerations {
                    generations: g,
                    max: (1 << max_tag_bits(lane_bits)) - 3,
                });
            }
            return Ok(Layout::new(lane_bits, bits, g));
        }
        let widths = match self.lane_bits {
            Some(lane_bits) => vec![lane_bits],
            None => vec![NARROW, WIDE],
        };
        let mut max = 0;
        for lane_bits in widths {
            let most = self.most_tag_bits(lane_bits);
            if most >= 2 {
                max = max.max((1u64 << most) - 3);
            }
            // The fewest tag bits (at least 3) that fit the window: every
            // other bit goes to the fingerprint.
            if let Some(bits) = (3..=most).find(|&t| fits(t)) {
                return Ok(Layout::new(lane_bits, bits, g));
            }
        }
        Err(BuildError::InvalidGenerations {
            generations: g,
            max,
        })
    }

    /// The most tag bits lanes of `lane_bits` bits may have at the rate:
    /// the lane less the fewest fingerprint bits `f` with `2 b / 2^f <=
    /// rate` (`b` lanes a bucket; 11 bits without a rate), at most the
    /// lane's [`max_tag_bits`]; 0 if the lane is too narrow for the rate.
    fn most_tag_bits(&self, lane_bits: u32) -> u32 {
        let slots = 64 / lane_bits;
        let min_fp = match self.rate {
            None => 11,
            Some(rate) => (1..=lane_bits)
                .find(|&f| (2 * slots) as f64 / (1u64 << f) as f64 <= rate)
                .unwrap_or(lane_bits),
        };
        (lane_bits - min_fp).min(max_tag_bits(lane_bits))
    }
}
