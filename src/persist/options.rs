//! [`ReadOptions`]: how a saved filter is read back, for hosts that bound
//! what an input may claim or account for every byte a filter holds.

use crate::storage::TableMemory;

/// How a saved filter is decoded: the most bytes its encoding may claim,
/// and where its tables get their memory. The default is no limit and
/// [`TableMemory::Mapped`], which is what `from_bytes` and `read_from`
/// use; `read_from_limited(reader, n)` is
/// `read_from_with_options(reader, ReadOptions::new().limit(n))`.
///
/// ```
/// use concurrent_cuckoo::{CuckooFilter, DefaultHashBuilder, ReadOptions, TableMemory};
/// let bytes = CuckooFilter::with_capacity(4_000_000).to_bytes(); // ~9 MB
/// let options = ReadOptions::new()
///     .limit(16 << 20)
///     .table_memory(TableMemory::GlobalAllocator);
/// let copy = CuckooFilter::<DefaultHashBuilder>::read_from_with_options(&bytes[..], options)?;
/// assert_eq!(copy.table_memory(), TableMemory::GlobalAllocator);
/// # Ok::<(), concurrent_cuckoo::DecodeError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ReadOptions {
    pub(crate) limit: Option<u64>,
    pub(crate) table_memory: TableMemory,
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
        }
    }

    /// Refuses, before allocating anything, an encoding whose header
    /// claims more than `max_bytes` bytes
    /// ([`DecodeError::ExceedsLimit`](crate::DecodeError::ExceedsLimit)).
    /// For inputs from anyone not trusted with your memory.
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, DecodeError, DefaultHashBuilder, ReadOptions};
    /// let bytes = CuckooFilter::with_capacity(100_000).to_bytes();
    /// let limited = ReadOptions::new().limit(4096);
    /// assert!(matches!(
    ///     CuckooFilter::<DefaultHashBuilder>::read_from_with_options(&bytes[..], limited),
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
    /// use concurrent_cuckoo::{DefaultHashBuilder, ReadOptions, ScalableCuckooFilter, TableMemory};
    /// let bytes = ScalableCuckooFilter::with_capacity(100).to_bytes();
    /// let options = ReadOptions::new().table_memory(TableMemory::GlobalAllocator);
    /// let copy = ScalableCuckooFilter::<DefaultHashBuilder>::from_bytes_with_options(&bytes, options)?;
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
