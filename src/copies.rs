//! `Clone` for the filters: a copy of every bucket, taken beside writers
//! as a snapshot ([`CuckooFilter::to_bytes`]) is (`snapshot.rs`), into a
//! table of the same geometry (no encoding in between, and any hasher that
//! is `Clone`).

use crate::error::AllocationError;
use crate::filter::Table;
use crate::fingerprint::{BucketWord, Fingerprint};
use crate::scalable::Level;
use crate::table::RawTable;
use crate::{CuckooFilter, ScalableCuckooFilter};

impl<F: Fingerprint> RawTable<F> {
    /// A table of this one's geometry holding its buckets as they were at
    /// one instant, copied beside writers (`snapshot.rs`: a writer waits
    /// for one stripe group's copy at most, lookups never). Its counters
    /// of past operations (`stats`) start at zero.
    pub(crate) fn try_clone(&self) -> Result<Self, AllocationError> {
        let copy = RawTable::<F>::new(
            self.index,
            Some(self.stripes.count()),
            Some(self.stripes.version_count()),
            self.max_path,
            self.stripes.memory(),
        )?;
        let (from, to) = (&self.buckets[..], &copy.buckets[..]);
        crate::snapshot::copy_every_bucket(&self.stripes, from.len(), |i| {
            let word = F::load(&from[i]);
            if word != F::Word::ZERO {
                // Nobody else sees `copy` yet: a plain whole-bucket store.
                F::store_word(&to[i], word);
            }
        });
        // Counted from the copy once it is whole (the copies of its
        // stripes were made by several threads).
        let mut counts = vec![0i64; copy.stripes.count()];
        for (i, bucket) in to.iter().enumerate() {
            counts[copy.stripes.stripe_of(i)] += F::occupied(F::load(bucket)) as i64;
        }
        copy.stripes.lock_all().set_counts(&counts);
        Ok(copy)
    }
}

impl Table {
    /// [`RawTable::try_clone`], whatever the width.
    pub(crate) fn try_clone(&self) -> Result<Self, AllocationError> {
        Ok(match self {
            Table::F8(t) => Table::F8(t.try_clone()?),
            Table::F16(t) => Table::F16(t.try_clone()?),
            Table::F32(t) => Table::F32(t.try_clone()?),
        })
    }
}

impl<S: Clone> CuckooFilter<S> {
    /// A copy of the filter: its buckets at one moment (copied beside
    /// writers, as [`to_bytes`](Self::to_bytes) copies them: a writer on
    /// another thread waits for one group of lock stripes' copy at most,
    /// lookups never), the same geometry and a clone of the hasher. The
    /// copy's `stats` counters start at zero.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1000);
    /// filter.insert("k")?;
    /// let copy = filter.try_clone()?;
    /// assert!(copy.contains("k") && copy.len() == 1);
    /// let _ = filter.remove("k");
    /// assert!(copy.contains("k")); // a copy, not a view
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`AllocationError`] when the memory for the copy cannot be had
    /// (`clone` panics then).
    pub fn try_clone(&self) -> Result<Self, AllocationError> {
        Ok(Self::from_parts(
            self.table.try_clone()?,
            self.hasher.clone(),
        ))
    }
}

impl<S: Clone> Clone for CuckooFilter<S> {
    /// [`try_clone`](Self::try_clone).
    ///
    /// # Panics
    /// If the memory for the copy cannot be had, as `Vec::clone` does.
    fn clone(&self) -> Self {
        self.try_clone()
            .unwrap_or_else(|e| panic!("CuckooFilter::clone: {e}"))
    }
}

impl<S: Clone> ScalableCuckooFilter<S> {
    /// A copy of the filter: every level in use, each copied at one moment
    /// beside its writers, as [`to_bytes`](Self::to_bytes) copies them,
    /// while the growth lock is held (no level opens, closes or is
    /// compacted meanwhile): one state of the filter
    /// when no other thread writes meanwhile, and every key inserted before
    /// the call and not removed is in the copy. The copy's `stats` start
    /// at zero.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::with_capacity(10);
    /// filter.insert_batch(&(0..1000u32).collect::<Vec<_>>())?; // grows
    /// let copy = filter.try_clone()?;
    /// assert_eq!((copy.len(), copy.levels()), (filter.len(), filter.levels()));
    /// assert!((0..1000u32).all(|k| copy.contains(&k)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`AllocationError`] when the memory for the copy cannot be had
    /// (`clone` panics then).
    pub fn try_clone(&self) -> Result<Self, AllocationError> {
        self.with_levels_fixed(|| {
            let mut levels = Vec::new();
            for (i, level) in self.live_levels_oldest_first() {
                levels.push((i, Level::from_table(level.table.try_clone()?)));
            }
            Ok(Self::from_parts(self.config, self.hasher.clone(), levels))
        })
    }
}

impl<S: Clone> Clone for ScalableCuckooFilter<S> {
    /// [`try_clone`](Self::try_clone).
    ///
    /// # Panics
    /// If the memory for the copy cannot be had, as `Vec::clone` does.
    fn clone(&self) -> Self {
        self.try_clone()
            .unwrap_or_else(|e| panic!("ScalableCuckooFilter::clone: {e}"))
    }
}

impl<K: core::hash::Hash, S: core::hash::BuildHasher> Extend<K> for ScalableCuckooFilter<S> {
    /// Inserts every key, as [`insert`](ScalableCuckooFilter::insert)
    /// one at a time. A key refused with
    /// [`TooManyDuplicates`](crate::InsertError::TooManyDuplicates) is
    /// still found (its 8 copies are there), so that refusal is let pass;
    /// set semantics instead: [`insert_unique`](ScalableCuckooFilter::insert_unique).
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let mut filter = ScalableCuckooFilter::with_capacity(10);
    /// filter.extend(0..1000u32);
    /// assert!((0..1000u32).all(|k| filter.contains(&k)));
    /// ```
    ///
    /// # Panics
    /// If a key cannot be stored at all ([`Full`](crate::InsertError::Full):
    /// the filter already has its most levels, or the memory for a new one
    /// cannot be had): rather than lose it silently. Call `insert` for an
    /// error instead.
    fn extend<I: IntoIterator<Item = K>>(&mut self, keys: I) {
        for key in keys {
            match self.insert(&key) {
                Ok(()) | Err(crate::InsertError::TooManyDuplicates) => {}
                Err(e) => panic!("ScalableCuckooFilter::extend: {e}"),
            }
        }
    }
}

impl<K: core::hash::Hash> FromIterator<K> for ScalableCuckooFilter {
    /// A growing filter of every key, sized for the iterator's lower size
    /// hint (at least 1,024) and grown as needed, with the default rate
    /// and a random seed: [`Extend`].
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter: ScalableCuckooFilter = (0..10_000u64).collect();
    /// assert!(filter.contains(&42u64) && filter.len() == 10_000);
    /// ```
    ///
    /// # Panics
    /// As [`Extend::extend`], and as
    /// [`with_capacity`](ScalableCuckooFilter::with_capacity).
    fn from_iter<I: IntoIterator<Item = K>>(keys: I) -> Self {
        let keys = keys.into_iter();
        let mut filter = ScalableCuckooFilter::with_capacity(keys.size_hint().0.max(1024));
        filter.extend(keys);
        filter
    }
}
