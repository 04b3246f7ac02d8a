//! A snapshot of a filter's size and its writers' counters.

/// What [`CuckooFilter::stats`](crate::CuckooFilter::stats) reports: size,
/// memory, and what inserts and removes have done since the filter was
/// created (or decoded; `clear` keeps the counters).
///
/// The counters live on the stripe locks' cache lines, which writers own
/// anyway and lookups never touch, and are summed when `stats()` is
/// called: keeping them costs writers nothing measurable, and reading them
/// never slows lookups. While writers run, the sums are recent values
/// (each counter is exact, but they are read one after another); without
/// concurrent writers they are exact, and `inserts - removes ==
/// len` holds for a filter built empty.
///
/// ```
/// use concurrent_cuckoo::CuckooFilter;
/// let filter = CuckooFilter::with_capacity(1000);
/// for k in 0..900u32 {
///     filter.insert(&k)?;
/// }
/// filter.remove(&7u32);
/// let s = filter.stats();
/// assert_eq!((s.len, s.inserts, s.removes), (899, 900, 1));
/// assert_eq!(s.path_lengths.iter().sum::<u64>(), s.inserts);
/// assert!(s.load_factor > 0.7 && s.fingerprint_bits == 16);
/// # Ok::<(), concurrent_cuckoo::InsertError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Stats {
    /// Items stored (each copy counts), as [`len`](crate::CuckooFilter::len).
    pub len: usize,
    /// Fingerprint slots, as [`capacity`](crate::CuckooFilter::capacity).
    pub capacity: usize,
    /// `len / capacity`.
    pub load_factor: f64,
    /// Bytes held, as [`memory_usage`](crate::CuckooFilter::memory_usage).
    pub memory_usage: usize,
    /// Fingerprint width in bits (8, 16 or 32).
    pub fingerprint_bits: u32,
    /// Buckets in the table.
    pub bucket_count: usize,
    /// Stripe locks.
    pub stripes: usize,
    /// Longest displacement path an insert searches.
    pub max_path_len: usize,
    /// Successful inserts (each copy; `insert_unique` calls that added one).
    pub inserts: u64,
    /// Successful removes.
    pub removes: u64,
    /// Fingerprints moved by displacement paths.
    pub relocations: u64,
    /// Inserts refused with [`InsertError::Full`](crate::InsertError::Full).
    pub failed_inserts: u64,
    /// Inserts refused with
    /// [`InsertError::TooManyDuplicates`](crate::InsertError::TooManyDuplicates).
    pub duplicate_refusals: u64,
    /// `path_lengths[h]`: successful inserts whose slot was freed by a
    /// displacement path of `h` moves (0: a slot was free). Sums to
    /// `inserts`; entries past `max_path_len` stay 0.
    pub path_lengths: [u64; 6],
}
