//! [`ReadOptions`]: how a saved filter is read back, for hosts that bound
//! what an input may claim or account for every byte a filter holds.

use crate::hashing::DefaultHashBuilder;
use crate::storage::TableMemory;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::marker::PhantomData;

/// How a saved filter is decoded: the most bytes its encoding may claim,
/// where its tables get their memory, and the hasher `S` it was made with.
/// The default is no limit, [`TableMemory::Mapped`] and the default
/// hasher, which is what `from_bytes` and `read_from` use;
/// `read_from_limited(reader, n)` is
/// `read_from_with_options(reader, ReadOptions::new().limit(n))`. The
/// decoders infer the filter's hasher from the options, so the default
/// one needs no type named anywhere.
///
/// ```
/// use concurrent_cuckoo::{CuckooFilter, ReadOptions, TableMemory};
/// let bytes = CuckooFilter::with_capacity(4_000_000).to_bytes(); // ~9 MB
/// let options = ReadOptions::new()
///     .limit(16 << 20)
///     .table_memory(TableMemory::GlobalAllocator);
/// let copy = CuckooFilter::read_from_with_options(&bytes[..], options)?;
/// assert_eq!(copy.table_memory(), TableMemory::GlobalAllocator);
/// # Ok::<(), concurrent_cuckoo::DecodeError>(())
/// ```
pub struct ReadOptions<S = DefaultHashBuilder> {
    pub(crate) limit: Option<u64>,
    pub(crate) table_memory: TableMemory,
    /// The hasher type only: decoders rebuild the hasher from the seed in
    /// the encoding. `fn() -> S` keeps the options `Send`, `Sync` and
    /// `Copy` whatever `S` is.
    hasher: PhantomData<fn() -> S>,
}

// By hand: derives would require `S` itself to be `Clone`, `Debug`, ...

impl<S> Clone for ReadOptions<S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for ReadOptions<S> {}

impl<S> fmt::Debug for ReadOptions<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadOptions")
            .field("limit", &self.limit)
            .field("table_memory", &self.table_memory)
            .field("hasher", &core::any::type_name::<S>())
            .finish()
    }
}

impl<S> Default for ReadOptions<S> {
    fn default() -> Self {
        ReadOptions::new().hasher::<S>()
    }
}

impl<S> PartialEq for ReadOptions<S> {
    fn eq(&self, other: &Self) -> bool {
        (self.limit, self.table_memory) == (other.limit, other.table_memory)
    }
}

impl<S> Eq for ReadOptions<S> {}

impl<S> Hash for ReadOptions<S> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (self.limit, self.table_memory).hash(state);
    }
}

impl ReadOptions {
    /// No limit, tables as [`TableMemory::Mapped`] places them.
    ///
    /// ```
    /// use concurrent_cuckoo::{ReadOptions, TableMemory};
    /// assert_eq!(ReadOptions::new(), ReadOptions::default());
    /// assert_eq!(ReadOptions::new(), ReadOptions::new().table_memory(TableMemory::Mapped));
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        Self {
            limit: None,
            table_memory: TableMemory::Mapped,
            hasher: PhantomData,
        }
    }
}

impl<S> ReadOptions<S> {
    /// The same options for a filter made with hasher `T` (a
    /// [`PersistentHasher`](crate::PersistentHasher) other than the
    /// default): the decoders rebuild it from the seed the encoding
    /// records, and refuse an encoding made with another hasher
    /// ([`DecodeError::HasherMismatch`](crate::DecodeError::HasherMismatch)).
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, DecodeError, PersistentHasher, PortableHasher, ReadOptions};
    /// use std::hash::BuildHasher;
    ///
    /// #[derive(Clone)]
    /// struct MyHasher(u64);
    /// impl BuildHasher for MyHasher {
    ///     type Hasher = PortableHasher;
    ///     fn build_hasher(&self) -> PortableHasher {
    ///         PortableHasher::with_seed(self.0 ^ 0x1234)
    ///     }
    /// }
    /// impl PersistentHasher for MyHasher {
    ///     const ID: u32 = 0x4d79_4831;
    ///     fn seed(&self) -> u64 {
    ///         self.0
    ///     }
    ///     fn from_seed(seed: u64) -> Self {
    ///         MyHasher(seed)
    ///     }
    /// }
    ///
    /// let mine = CuckooFilter::builder().capacity(100).hasher(MyHasher::from_seed(1)).build()?;
    /// mine.insert("k")?;
    /// let options = ReadOptions::new().hasher::<MyHasher>();
    /// let copy = CuckooFilter::from_bytes_with_options(&mine.to_bytes(), options)?;
    /// assert!(copy.contains("k"));
    /// let default = CuckooFilter::with_capacity(100).to_bytes();
    /// assert!(matches!(
    ///     CuckooFilter::from_bytes_with_options(&default, options),
    ///     Err(DecodeError::HasherMismatch { .. })
    /// ));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub const fn hasher<T>(self) -> ReadOptions<T> {
        ReadOptions {
            limit: self.limit,
            table_memory: self.table_memory,
            hasher: PhantomData,
        }
    }

    /// Refuses, before allocating anything, an encoding whose header
    /// claims more than `max_bytes` bytes
    /// ([`DecodeError::ExceedsLimit`](crate::DecodeError::ExceedsLimit)).
    /// For inputs from anyone not trusted with your memory.
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, DecodeError, ReadOptions};
    /// let bytes = CuckooFilter::with_capacity(100_000).to_bytes();
    /// let limited = ReadOptions::new().limit(4096);
    /// assert!(matches!(
    ///     CuckooFilter::read_from_with_options(&bytes[..], limited),
    ///     Err(DecodeError::ExceedsLimit { .. })
    /// ));
    /// ```
    #[must_use]
    pub const fn limit(mut self, max_bytes: u64) -> Self {
        self.limit = Some(max_bytes);
        self
    }

    /// Where the decoded filter's tables get their memory, and every table
    /// it makes later (see [`TableMemory`]).
    ///
    /// ```
    /// use concurrent_cuckoo::{ReadOptions, ScalableCuckooFilter, TableMemory};
    /// let bytes = ScalableCuckooFilter::with_capacity(100).to_bytes();
    /// let options = ReadOptions::new().table_memory(TableMemory::GlobalAllocator);
    /// let copy = ScalableCuckooFilter::from_bytes_with_options(&bytes, options)?;
    /// copy.insert_batch(&(0..10_000u32).collect::<Vec<_>>())?; // grows: heap levels too
    /// assert_eq!(copy.table_memory(), TableMemory::GlobalAllocator);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub const fn table_memory(mut self, memory: TableMemory) -> Self {
        self.table_memory = memory;
        self
    }
}
