//! [`Removal`]: what [`ScalableCuckooFilter::remove`] did, and why not.
//!
//! [`ScalableCuckooFilter::remove`]: super::ScalableCuckooFilter::remove

/// The outcome of [`ScalableCuckooFilter::remove`]: a growing filter
/// decoded from an encoding written before nested level maps may refuse to
/// remove a key that is present, which a `bool` could not tell from
/// "absent". A filter built by this version never refuses.
///
/// ```
/// use concurrent_cuckoo::{Removal, ScalableCuckooFilter};
/// let filter = ScalableCuckooFilter::with_capacity(10);
/// filter.insert("k")?;
/// assert_eq!(filter.remove("k"), Removal::Removed);
/// assert_eq!(filter.remove("k"), Removal::NotFound);
/// # Ok::<(), concurrent_cuckoo::InsertError>(())
/// ```
///
/// [`ScalableCuckooFilter::remove`]: crate::ScalableCuckooFilter::remove
#[must_use = "a refused remove leaves the key present"]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Removal {
    /// One copy of the key was removed.
    Removed,
    /// No level holds the key's fingerprint: nothing changed.
    NotFound,
    /// Levels of different geometry that do not nest (a filter decoded
    /// from an encoding written before nested level maps) hold the key's
    /// fingerprint, so which copy is the key's cannot be told; taking
    /// another key's would make that key a false negative. Nothing
    /// changed: the key stays present (see [removing keys across levels]).
    /// Compacting the filter ([`compact`], [`compact_concurrently`]) moves
    /// keys between levels of one geometry, which may let a later remove
    /// succeed; a filter built anew and filled again never refuses.
    ///
    /// [removing keys across levels]: crate::ScalableCuckooFilter#removing-keys-across-levels
    /// [`compact`]: crate::ScalableCuckooFilter::compact
    /// [`compact_concurrently`]: crate::ScalableCuckooFilter::compact_concurrently
    Refused,
}

impl Removal {
    /// Whether a copy was removed.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::with_capacity(10);
    /// filter.insert_hash(1)?;
    /// assert!(filter.remove_hash(1).is_removed());
    /// assert!(!filter.remove_hash(1).is_removed());
    /// # Ok::<(), concurrent_cuckoo::InsertError>(())
    /// ```
    #[must_use]
    pub fn is_removed(self) -> bool {
        self == Self::Removed
    }
}

impl From<Removal> for bool {
    /// [`Removal::is_removed`].
    fn from(removal: Removal) -> bool {
        removal.is_removed()
    }
}
