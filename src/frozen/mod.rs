//! Frozen filters: a saved filter queried where its bytes lie. Documented
//! on [`FrozenFilter`], where users can read it.

mod bytes;

pub use bytes::{FrozenBytes, MappedFile};

use crate::error::DecodeError;
use crate::filter::{table_of_width, CuckooFilter};
use crate::fingerprint::{BucketWord, Fingerprint, SLOTS};
use crate::hashing::{DefaultHashBuilder, PersistentHasher};
use crate::index::IndexMap;
use crate::lookup::{Location, Lookup};
use crate::persist::format::{Header, CHECKSUM_LEN};
use crate::persist::{admit_header, ReadOptions, TableFill};
use crate::storage::{prefetch, TableMemory};
use crate::table::RawTable;
use core::fmt;
use core::hash::{BuildHasher, Hash};
use core::marker::PhantomData;
use std::path::Path;
use xxhash_rust::xxh3::Xxh3Default;

/// A saved filter, queried in place: read-only, from any number of threads
/// and processes.
///
/// A `FrozenFilter` wraps the bytes of a [`CuckooFilter`]'s encoding
/// ([`CuckooFilter::to_bytes`], [`CuckooFilter::write_to_path`];
/// `docs/format.md`) — a `&[u8]`, a `Vec<u8>`, a memory-mapped file,
/// anything `AsRef<[u8]>` — validates them once, and then answers lookups
/// straight from the body: no copy, no allocation proportional to the
/// table, no locks and no atomics, because the bytes never change. It
/// answers exactly as the [`CuckooFilter`] it was saved from (same hashing,
/// same seed, same buckets), and can be thawed back into one with
/// [`to_filter`](Self::to_filter).
///
/// A bucket of the body is the little-endian word a live bucket loads, so
/// a lookup reads both words with two plain loads (unaligned where the
/// bytes are not aligned; format version 2 starts the body at byte 64, so
/// in a page-aligned mapping every bucket sits inside one cache line) and
/// compares them with the same SIMD probe.
///
/// ```
/// use concurrent_cuckoo::{CuckooFilter, FrozenFilter};
/// let filter = CuckooFilter::with_capacity(10_000);
/// filter.insert_batch(&["10.0.0.1", "10.0.0.2"])?;
/// let bytes = filter.to_bytes();
///
/// let view = FrozenFilter::from_bytes(&bytes[..])?; // borrows: copies nothing
/// assert!(view.contains("10.0.0.1"));
/// assert_eq!(view.len(), 2);
/// let live = view.to_filter()?; // a writable copy
/// live.insert("10.0.0.3")?;
/// assert_eq!(live.len(), 3);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Files: loaded, or mapped and shared between processes
/// [`load`](FrozenFilter::load) reads a saved file into a private buffer
/// on 2 MiB pages ([`FrozenBytes`]): safe, and as fast as a live filter.
/// [`open`](FrozenFilter::open) maps it read-only instead, so every process
/// that opens the same file shares one copy in the page cache; it is
/// `unsafe` because the filter then reads the file's pages where they lie,
/// and truncating or rewriting the file in place while it is mapped makes
/// reads fault or see bytes change under a `&[u8]`. Replace such a file
/// only with [`CuckooFilter::write_to_path`] (which renames a new file over
/// it: processes that have the old one mapped keep reading the old inode).
pub struct FrozenFilter<B, S = DefaultHashBuilder> {
    bytes: B,
    hasher: S,
    header: Header,
    index: IndexMap,
}

/// The lookups of one width over the body's bytes.
struct View<'a, F> {
    body: &'a [u8],
    index: IndexMap,
    _width: PhantomData<F>,
}

impl<F: Fingerprint> View<'_, F> {
    /// The word of bucket `i` (`i < buckets`, which `IndexMap` guarantees;
    /// the body's length was checked against the bucket count).
    #[inline(always)]
    fn word(&self, i: usize) -> F::Word {
        let at = i * F::BUCKET_BYTES;
        F::Word::get_le(&self.body[at..at + F::BUCKET_BYTES])
    }

    fn count(&self, loc: &Location<F>) -> usize {
        F::count(self.word(loc.i1), loc.fp) + F::count(self.word(loc.i2), loc.fp)
    }
}

impl<F: Fingerprint> Lookup<F> for View<'_, F> {
    #[inline(always)]
    fn index(&self) -> IndexMap {
        self.index
    }

    #[inline(always)]
    fn prefetch(&self, loc: &Location<F>) {
        // A hint, which never faults: wrapping addresses, no bounds check
        // (as `RawTable::prefetch`).
        let base = self.body.as_ptr();
        prefetch(base.wrapping_add(loc.i1 * F::BUCKET_BYTES));
        prefetch(base.wrapping_add(loc.i2 * F::BUCKET_BYTES));
    }

    /// Both words, then one SIMD compare: the bytes never change, so there
    /// is nothing to validate.
    #[inline(always)]
    fn contains(&self, loc: &Location<F>) -> bool {
        let (w1, w2) = (self.word(loc.i1), self.word(loc.i2));
        F::probe_pair(w1, w2, loc.fp)
    }
}

/// Runs `$body` with `$v` bound to the [`View`] of the right width.
macro_rules! with_view {
    ($frozen:expr, $v:ident => $body:expr) => {{
        let frozen = $frozen;
        let body = frozen.body();
        let index = frozen.index;
        match frozen.header.bits {
            8 => {
                let $v = View::<u8> {
                    body,
                    index,
                    _width: PhantomData,
                };
                $body
            }
            16 => {
                let $v = View::<u16> {
                    body,
                    index,
                    _width: PhantomData,
                };
                $body
            }
            _ => {
                let $v = View::<u32> {
                    body,
                    index,
                    _width: PhantomData,
                };
                $body
            }
        }
    }};
}

impl<B: AsRef<[u8]>> FrozenFilter<B, DefaultHashBuilder> {
    /// Validates `bytes` as one encoded filter made with the default hasher
    /// and wraps them, copying nothing.
    ///
    /// Opening costs one pass over the bytes (the checksum, and the count
    /// of occupied slots against the header, in the same pass) and nothing
    /// proportional to the table afterwards.
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, FrozenFilter};
    /// let bytes = CuckooFilter::with_capacity(100).to_bytes();
    /// let borrowed = FrozenFilter::from_bytes(&bytes[..])?;
    /// let owned = FrozenFilter::from_bytes(bytes.clone())?;
    /// assert_eq!(borrowed.capacity(), owned.capacity());
    /// # Ok::<(), concurrent_cuckoo::DecodeError>(())
    /// ```
    ///
    /// # Errors
    /// A [`DecodeError`] exactly when [`CuckooFilter::from_bytes`] would
    /// refuse the same bytes: truncated, damaged (the checksum), a newer
    /// format version, trailing bytes, another hasher. Never panics,
    /// whatever the input.
    pub fn from_bytes(bytes: B) -> Result<Self, DecodeError> {
        Self::from_bytes_with_options(bytes, ReadOptions::new())
    }
}

impl FrozenFilter<FrozenBytes, DefaultHashBuilder> {
    /// Reads the file at `path` into memory (on 2 MiB pages where the
    /// system gives them: see [`FrozenBytes`]) and validates it as
    /// [`from_bytes`](FrozenFilter::from_bytes) does. The safe way to
    /// open a saved filter: the copy is private, so nothing done to the
    /// file afterwards affects it, and lookups out of cache are as fast as
    /// a live filter's.
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, FrozenFilter};
    /// let filter = CuckooFilter::with_capacity(1000);
    /// filter.insert("blocked.example")?;
    /// let path = std::env::temp_dir().join(format!("frozen-load-doc-{}.ccf", std::process::id()));
    /// filter.write_to_path(&path)?;
    /// let view = FrozenFilter::load(&path)?;
    /// std::fs::remove_file(&path)?; // the copy does not need the file
    /// assert!(view.contains("blocked.example"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`DecodeError::Io`] if the file cannot be opened or read,
    /// [`DecodeError::AllocationFailed`] if its length cannot be allocated,
    /// else as [`from_bytes`](FrozenFilter::from_bytes).
    pub fn load<P: AsRef<Path>>(path: P) -> Result<Self, DecodeError> {
        Self::load_with_options(path, ReadOptions::new())
    }
}

impl<S: PersistentHasher> FrozenFilter<FrozenBytes, S> {
    /// [`load`](FrozenFilter::load) as `options` say: a file longer than
    /// their limit is refused before anything is read
    /// ([`DecodeError::ExceedsLimit`]), its bytes are held where their
    /// [`TableMemory`] says ([`TableMemory::GlobalAllocator`]: from the
    /// global allocator, whatever the size), and it was saved with their
    /// hasher `S` ([`ReadOptions::hasher`]; [`ReadOptions::new`] is the
    /// default one).
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, DecodeError, FrozenFilter, ReadOptions};
    /// let filter = CuckooFilter::with_capacity(100_000);
    /// filter.insert("k")?;
    /// let path = std::env::temp_dir().join(format!("frozen-load-options-doc-{}.ccf", std::process::id()));
    /// filter.write_to_path(&path)?;
    /// let view = FrozenFilter::load_with_options(&path, ReadOptions::new())?;
    /// assert!(view.contains("k"));
    /// let refused = FrozenFilter::load_with_options(&path, ReadOptions::new().limit(4096));
    /// assert!(matches!(refused, Err(DecodeError::ExceedsLimit { .. })));
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`load`](FrozenFilter::load), plus [`DecodeError::ExceedsLimit`].
    pub fn load_with_options<P: AsRef<Path>>(
        path: P,
        options: ReadOptions<S>,
    ) -> Result<Self, DecodeError> {
        let bytes = FrozenBytes::read_file(path.as_ref(), options.hasher())?;
        Self::from_bytes_with_options(bytes, options)
    }
}

impl FrozenFilter<MappedFile, DefaultHashBuilder> {
    /// Maps the file at `path` read-only and validates it as
    /// [`from_bytes`](FrozenFilter::from_bytes) does, copying nothing:
    /// every process that opens the same file shares one copy in the page
    /// cache. The mapping is advised for 2 MiB pages (taken where the
    /// kernel and file system give them to file mappings) and read-ahead.
    /// When sharing the page cache's copy does not matter, the safe
    /// [`load`](FrozenFilter::load) reads the file into memory instead.
    ///
    /// # Safety
    /// The returned filter reads the file's pages where they lie, as a
    /// `&[u8]`, for as long as it lives. The file must not be truncated or
    /// written to, by this or any other process, until the filter (and
    /// anything that borrows from it) is dropped: a truncated mapping
    /// faults on access (`SIGBUS`), and bytes that change under a `&[u8]`
    /// are undefined behaviour. Replacing the file by renaming a new one
    /// over it, as [`CuckooFilter::write_to_path`] does, is fine: the
    /// mapping keeps the old file. This is the contract of
    /// the `memmap2` crate's `Mmap::map`, which this calls.
    ///
    /// # Page size
    /// Lookups in a large table are as fast as the live filter's only on
    /// 2 MiB pages: on 4 KiB pages each one also misses the TLB (measured
    /// on a 1 GiB filter: bursts of 32 took 1.9x as long; see
    /// `docs/benchmarks.md`). Linux maps file pages with 2 MiB entries for
    /// a file on a tmpfs mounted with `huge=always` (with `within_size`, a
    /// file written by appending, as [`CuckooFilter::write_to_path`]
    /// does, got none in our tests), or on a kernel built with
    /// `CONFIG_READ_ONLY_THP_FOR_FS`; elsewhere it takes 4 KiB pages
    /// whatever this advice says. [`load`](FrozenFilter::load) always
    /// gets the pages a live filter gets.
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, FrozenFilter};
    /// let filter = CuckooFilter::with_capacity(1000);
    /// filter.insert("blocked.example")?;
    /// let path = std::env::temp_dir().join(format!("frozen-doc-{}.ccf", std::process::id()));
    /// filter.write_to_path(&path)?;
    /// // SAFETY: this program alone uses the file and leaves it alone
    /// // until `view` is gone.
    /// let view = unsafe { FrozenFilter::open(&path) }?;
    /// assert!(view.contains("blocked.example"));
    /// drop(view);
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// Opening is `unsafe` because of the file, not the bytes:
    ///
    /// ```compile_fail
    /// let view = concurrent_cuckoo::FrozenFilter::open("filter.ccf");
    /// ```
    ///
    /// # Errors
    /// [`DecodeError::Io`] if the file cannot be opened or mapped, else as
    /// [`from_bytes`](FrozenFilter::from_bytes).
    pub unsafe fn open<P: AsRef<Path>>(path: P) -> Result<Self, DecodeError> {
        // SAFETY: the caller's contract is this function's.
        unsafe { Self::open_with_options(path, ReadOptions::new()) }
    }
}

impl<S: PersistentHasher> FrozenFilter<MappedFile, S> {
    /// [`open`](FrozenFilter::open) as `options` say: a file longer than
    /// their limit is refused ([`DecodeError::ExceedsLimit`]), and it was
    /// saved with their hasher `S` ([`ReadOptions::hasher`]). Their
    /// [`TableMemory`] does not apply: the file's pages are the memory.
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, FrozenFilter, ReadOptions};
    /// let filter = CuckooFilter::with_capacity(1000);
    /// filter.insert("k")?;
    /// let path = std::env::temp_dir().join(format!("frozen-open-options-doc-{}.ccf", std::process::id()));
    /// filter.write_to_path(&path)?;
    /// // SAFETY: nothing else touches the file while `view` lives.
    /// let view = unsafe { FrozenFilter::open_with_options(&path, ReadOptions::new()) }?;
    /// assert!(view.contains("k"));
    /// drop(view);
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Safety
    /// As [`open`](FrozenFilter::open): the file stays as it is while the
    /// filter lives.
    ///
    /// # Errors
    /// As [`open`](FrozenFilter::open), plus [`DecodeError::ExceedsLimit`].
    pub unsafe fn open_with_options<P: AsRef<Path>>(
        path: P,
        options: ReadOptions<S>,
    ) -> Result<Self, DecodeError> {
        let file = std::fs::File::open(path).map_err(DecodeError::Io)?;
        // Files saved with `write_to_path` are replaced by rename, which
        // leaves an existing mapping on the old inode intact.
        // SAFETY: the caller guarantees no one truncates or rewrites the
        // file while the filter lives.
        let map = unsafe { MappedFile::map(&file) }?;
        Self::from_bytes_with_options(map, options)
    }
}

impl<B: AsRef<[u8]>, S: PersistentHasher> FrozenFilter<B, S> {
    /// [`from_bytes`](FrozenFilter::from_bytes) as `options` say: bytes
    /// longer than their limit are refused
    /// ([`DecodeError::ExceedsLimit`]), and the filter was saved with their
    /// hasher `S` ([`ReadOptions::hasher`]), rebuilt from the seed the
    /// encoding records with [`PersistentHasher::from_seed`]. Their
    /// [`TableMemory`] does not apply: `bytes` are used where they lie.
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, FrozenFilter, ReadOptions};
    /// let bytes = CuckooFilter::with_capacity(100).to_bytes();
    /// let view = FrozenFilter::from_bytes_with_options(&bytes[..], ReadOptions::new())?;
    /// assert!(view.is_empty());
    /// # Ok::<(), concurrent_cuckoo::DecodeError>(())
    /// ```
    ///
    /// # Errors
    /// As [`from_bytes`](FrozenFilter::from_bytes);
    /// [`DecodeError::HasherMismatch`] if `S` is not the hasher it was
    /// saved with; [`DecodeError::ExceedsLimit`] past the limit.
    pub fn from_bytes_with_options(bytes: B, options: ReadOptions<S>) -> Result<Self, DecodeError> {
        let data = bytes.as_ref();
        let header = Header::parse(data)?;
        admit_header(&header, S::ID, Some(data.len()), options.limit)?;
        // The length matches, so it fits in memory and in `usize`.
        let (offset, body_len) = (header.body_offset(), header.body_len() as usize);
        let occupied = match header.bits {
            8 => checksum_and_count::<u8>(data, offset, body_len)?,
            16 => checksum_and_count::<u16>(data, offset, body_len)?,
            _ => checksum_and_count::<u32>(data, offset, body_len)?,
        };
        if occupied != header.len {
            return Err(DecodeError::InvalidHeader(
                "length does not match the occupied slots",
            ));
        }
        Ok(Self {
            index: IndexMap::new(header.buckets as usize, header.scheme()),
            hasher: S::from_seed(header.seed),
            header,
            bytes,
        })
    }
}

/// Checks the checksum of an encoding whose length matches its header, and
/// counts the occupied slots of its body in the same pass (chunk by chunk,
/// so each chunk is counted while it is still in cache).
fn checksum_and_count<F: Fingerprint>(
    data: &[u8],
    offset: usize,
    body_len: usize,
) -> Result<u64, DecodeError> {
    const CHUNK: usize = 64 * 1024;
    let mut sum = Xxh3Default::new();
    sum.update(&data[..offset]);
    let mut occupied = 0u64;
    for chunk in data[offset..offset + body_len].chunks(CHUNK) {
        sum.update(chunk);
        occupied += chunk
            .chunks_exact(F::BUCKET_BYTES)
            .map(|b| F::occupied(F::Word::get_le(b)) as u64)
            .sum::<u64>();
    }
    let mut stored = [0u8; CHECKSUM_LEN];
    stored.copy_from_slice(&data[offset + body_len..]);
    if u64::from_le_bytes(stored) != sum.digest() {
        return Err(DecodeError::ChecksumMismatch);
    }
    Ok(occupied)
}

impl<B: AsRef<[u8]>, S> FrozenFilter<B, S> {
    /// The body: every bucket, in order.
    #[inline(always)]
    fn body(&self) -> &[u8] {
        let offset = self.header.body_offset();
        &self.bytes.as_ref()[offset..offset + self.header.body_len() as usize]
    }

    /// Items stored when the filter was saved.
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, FrozenFilter};
    /// let filter = CuckooFilter::with_capacity(100);
    /// filter.insert(&1u8)?;
    /// assert_eq!(FrozenFilter::from_bytes(filter.to_bytes())?.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.header.len as usize
    }

    /// `len() == 0`.
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, FrozenFilter};
    /// assert!(FrozenFilter::from_bytes(CuckooFilter::with_capacity(10).to_bytes())?.is_empty());
    /// # Ok::<(), concurrent_cuckoo::DecodeError>(())
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.header.len == 0
    }

    /// Fingerprint slots, as [`CuckooFilter::capacity`].
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, FrozenFilter};
    /// let filter = CuckooFilter::with_capacity(1000);
    /// assert_eq!(FrozenFilter::from_bytes(filter.to_bytes())?.capacity(), filter.capacity());
    /// # Ok::<(), concurrent_cuckoo::DecodeError>(())
    /// ```
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.header.buckets as usize * SLOTS
    }

    /// Fingerprint width in bits (8, 16 or 32).
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, FrozenFilter};
    /// let filter = CuckooFilter::builder().capacity(10).fingerprint_bits(32).build()?;
    /// assert_eq!(FrozenFilter::from_bytes(filter.to_bytes())?.fingerprint_bits(), 32);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn fingerprint_bits(&self) -> u32 {
        u32::from(self.header.bits)
    }

    /// Bytes of the encoding this filter reads (for a mapped file, the
    /// mapping: memory the page cache shares between every process that
    /// maps it).
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, FrozenFilter};
    /// let bytes = CuckooFilter::with_capacity(1000).to_bytes();
    /// assert_eq!(FrozenFilter::from_bytes(&bytes[..])?.memory_usage(), bytes.len());
    /// # Ok::<(), concurrent_cuckoo::DecodeError>(())
    /// ```
    #[must_use]
    pub fn memory_usage(&self) -> usize {
        self.bytes.as_ref().len()
    }

    /// Upper bound on the false-positive rate when full: `2 * 4 / 2^bits`.
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, FrozenFilter};
    /// let view = FrozenFilter::from_bytes(CuckooFilter::with_capacity(10).to_bytes())?;
    /// assert_eq!(view.false_positive_bound(), 8.0 / 65536.0);
    /// # Ok::<(), concurrent_cuckoo::DecodeError>(())
    /// ```
    #[must_use]
    pub fn false_positive_bound(&self) -> f64 {
        (2 * SLOTS) as f64 / 2f64.powi(self.fingerprint_bits() as i32)
    }

    /// The hasher, rebuilt from the recorded seed.
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, FrozenFilter};
    /// let filter = CuckooFilter::builder().capacity(100).seed(42).build()?;
    /// let view = FrozenFilter::from_bytes(filter.to_bytes())?;
    /// assert_eq!(view.hasher().seed(), 42);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn hasher(&self) -> &S {
        &self.hasher
    }

    /// The wrapped bytes.
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, FrozenFilter};
    /// let bytes = CuckooFilter::with_capacity(100).to_bytes();
    /// let view = FrozenFilter::from_bytes(&bytes[..])?;
    /// assert_eq!(view.as_bytes(), &bytes[..]);
    /// # Ok::<(), concurrent_cuckoo::DecodeError>(())
    /// ```
    #[must_use]
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.as_ref()
    }

    /// Unwraps the bytes.
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, FrozenFilter};
    /// let bytes = CuckooFilter::with_capacity(100).to_bytes();
    /// let view = FrozenFilter::from_bytes(bytes.clone())?; // owns its Vec<u8>
    /// let back: Vec<u8> = view.into_inner();
    /// assert_eq!(back, bytes);
    /// # Ok::<(), concurrent_cuckoo::DecodeError>(())
    /// ```
    #[must_use]
    pub fn into_inner(self) -> B {
        self.bytes
    }

    /// [`contains`](FrozenFilter::contains) for a precomputed 64-bit hash,
    /// as [`CuckooFilter::contains_hash`].
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, FrozenFilter};
    /// let filter = CuckooFilter::with_capacity(100);
    /// filter.insert_hash(0xABCD)?;
    /// assert!(FrozenFilter::from_bytes(filter.to_bytes())?.contains_hash(0xABCD));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn contains_hash(&self, hash: u64) -> bool {
        with_view!(self, v => {
            let loc = v.locate(hash);
            v.prefetch(&loc);
            v.contains(&loc)
        })
    }

    /// [`contains_batch`](FrozenFilter::contains_batch) for precomputed
    /// hashes, pipelined as [`CuckooFilter::contains_hash_batch`].
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, FrozenFilter};
    /// let filter = CuckooFilter::with_capacity(100);
    /// filter.insert_hash(1)?;
    /// let view = FrozenFilter::from_bytes(filter.to_bytes())?;
    /// let mut out = [false; 2];
    /// view.contains_hash_batch(&[1, 2], &mut out);
    /// assert!(out[0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Panics
    /// If `hashes.len() != out.len()`, with the message
    /// `"contains_hash_batch: hashes and out differ in length"`.
    #[inline]
    pub fn contains_hash_batch(&self, hashes: &[u64], out: &mut [bool]) {
        assert_eq!(
            hashes.len(),
            out.len(),
            "contains_hash_batch: hashes and out differ in length"
        );
        with_view!(self, v => v.contains_batch(|i| hashes[i], out))
    }

    /// [`count`](FrozenFilter::count) for a precomputed 64-bit hash.
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, FrozenFilter};
    /// let filter = CuckooFilter::with_capacity(100);
    /// filter.insert_hash_batch(&[5, 5])?;
    /// assert_eq!(FrozenFilter::from_bytes(filter.to_bytes())?.count_hash(5), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn count_hash(&self, hash: u64) -> usize {
        with_view!(self, v => v.count(&v.locate(hash)))
    }
}

impl<B: AsRef<[u8]>, S: BuildHasher> FrozenFilter<B, S> {
    /// Is `key` (probably) present? Exactly the answer of the
    /// [`CuckooFilter`] that was saved: never a false negative.
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, FrozenFilter};
    /// let filter = CuckooFilter::with_capacity(100);
    /// filter.insert("a")?;
    /// let view = FrozenFilter::from_bytes(filter.to_bytes())?;
    /// assert!(view.contains("a"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    #[must_use]
    pub fn contains<K: Hash + ?Sized>(&self, key: &K) -> bool {
        self.contains_hash(self.hasher.hash_one(key))
    }

    /// Looks up a burst of keys, as [`CuckooFilter::contains_batch`].
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, FrozenFilter};
    /// let filter = CuckooFilter::with_capacity(100);
    /// filter.insert_batch(&[1u32, 2])?;
    /// let view = FrozenFilter::from_bytes(filter.to_bytes())?;
    /// let mut out = [false; 3];
    /// view.contains_batch(&[1u32, 2, 3], &mut out);
    /// assert!(out[0] && out[1]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Panics
    /// If `keys.len() != out.len()`, with the message
    /// `"contains_batch: keys and out differ in length"`.
    #[inline]
    pub fn contains_batch<K: Hash>(&self, keys: &[K], out: &mut [bool]) {
        assert_eq!(
            keys.len(),
            out.len(),
            "contains_batch: keys and out differ in length"
        );
        with_view!(self, v => v.contains_batch(|i| self.hasher.hash_one(&keys[i]), out))
    }

    /// Copies of `key`'s fingerprint in its two buckets, as
    /// [`CuckooFilter::count`].
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, FrozenFilter};
    /// let filter = CuckooFilter::with_capacity(100);
    /// filter.insert_batch(&["x", "x", "x"])?;
    /// assert_eq!(FrozenFilter::from_bytes(filter.to_bytes())?.count("x"), 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn count<K: Hash + ?Sized>(&self, key: &K) -> usize {
        self.count_hash(self.hasher.hash_one(key))
    }
}

impl<B: AsRef<[u8]>, S: PersistentHasher> FrozenFilter<B, S> {
    /// Thaws the filter: a new, writable [`CuckooFilter`] with the same
    /// contents, hasher and seed, answering every query as this one does.
    /// Copies the table (the bytes were validated when this view was made).
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, FrozenFilter};
    /// let filter = CuckooFilter::with_capacity(100);
    /// filter.insert("a")?;
    /// let live = FrozenFilter::from_bytes(filter.to_bytes())?.to_filter()?;
    /// assert!(live.remove("a"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`DecodeError::AllocationFailed`] if the table cannot be allocated.
    pub fn to_filter(&self) -> Result<CuckooFilter<S>, DecodeError> {
        let header = &self.header;
        let body = self.body();
        let table = table_of_width!(header.bits, F => thaw::<F>(header, body)?);
        Ok(CuckooFilter::from_parts(table, S::from_seed(header.seed)))
    }
}

/// A live table holding the buckets of `body` (already validated).
fn thaw<F: Fingerprint>(header: &Header, body: &[u8]) -> Result<RawTable<F>, DecodeError> {
    let mut fill = TableFill::<F>::new(header, TableMemory::Mapped)?;
    fill.fill(body);
    Ok(fill.into_table())
}

impl<B, S> fmt::Debug for FrozenFilter<B, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FrozenFilter")
            .field("len", &self.header.len)
            .field("capacity", &(self.header.buckets as usize * SLOTS))
            .field("fingerprint_bits", &self.header.bits)
            .field("format_version", &self.header.version)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::{with_table, Table};

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn frozen_filters_are_send_and_sync() {
        assert_send_sync::<FrozenFilter<&[u8]>>();
        assert_send_sync::<FrozenFilter<Vec<u8>>>();
        assert_send_sync::<FrozenFilter<MappedFile>>();
    }

    /// `with_table!` and `CuckooFilter` are used: keep the import honest.
    #[test]
    fn thawed_filters_keep_their_width() {
        let f = CuckooFilter::builder()
            .capacity(100)
            .fingerprint_bits(8)
            .build()
            .unwrap();
        let view = FrozenFilter::from_bytes(f.to_bytes()).unwrap();
        let thawed = view.to_filter().unwrap();
        assert_eq!(with_table!(&thawed.table, t => t.fingerprint_bits()), 8);
        assert!(matches!(thawed.table, Table::F8(_)));
    }
}
