//! Persistence: the versioned, checksummed binary format of
//! `docs/format.md`, streaming encode and decode, crash-safe saving, and
//! serde support.
//!
//! Layout (all integers little-endian; version 2, the one written):
//!
//! ```text
//! offset  size  field
//!      0     8  magic "\x89CUCKOO\n"
//!      8     2  format version (2; 1 is read)
//!     10     1  fingerprint width in bits (8, 16, 32)
//!     11     1  slots per bucket (4)
//!     12     1  max displacement path length (1..=5)
//!     13     3  reserved, zero
//!     16     8  bucket count (even, 2..=2^32)
//!     24     8  length: occupied slots (<= 4 * bucket count)
//!     32     4  hasher id (`PersistentHasher::ID`)
//!     36     4  reserved, zero
//!     40     8  hasher seed
//!     48    16  reserved, zero (version 2 only: the body starts 64-aligned)
//!     64     B  body: every bucket in order, each slot little-endian at
//!               the fingerprint width (B = buckets * 4 * bits / 8)
//!   64+B     8  checksum: XXH3-64 (seed 0) of bytes [0, 64 + B)
//! ```
//!
//! Version 1 is the same without the 16 reserved bytes (the body at 48),
//! and its filters map hashes to buckets without the finalizer of
//! `index.rs`; they decode to filters that keep that mapping, so they
//! answer exactly as they did, and are written back as version 1.
//!
//! Decoding checks, in this order: magic, version, header fields, hasher
//! id, input length, checksum, and that the length equals the occupied
//! slots. Nothing is allocated before the header has been validated (and,
//! for [`CuckooFilter::from_bytes`], before the input is known to be exactly
//! as long as the header says).
//!
//! Not compiled under the loom cfg: loom's atomics only exist inside a model.

mod chunks;
mod file;
pub(crate) mod format;
mod options;
mod scalable;

pub use chunks::{ChunkDecoder, ChunkEncoder, DecodedFilter};
pub use options::ReadOptions;

use crate::error::DecodeError;
use crate::filter::{table_of_width, with_table, CuckooFilter, Table};
use crate::fingerprint::{BucketWord, Fingerprint};
use crate::hashing::{DefaultHashBuilder, PersistentHasher};
use crate::index::IndexMap;
use crate::storage::TableMemory;
use crate::table::RawTable;
pub(crate) use file::write_atomically;
use format::{header_len, version_for, Header, CHECKSUM_LEN, MAX_HEADER_LEN, PREFIX_LEN};
use std::io::{self, Read, Write};
use std::path::Path;
use xxhash_rust::xxh3::Xxh3Default;

/// Encoding and decoding move the body through a buffer of this size: a
/// multiple of every bucket size, and no second copy of a large filter.
const CHUNK: usize = 64 * 1024;

impl<S: PersistentHasher> CuckooFilter<S> {
    /// Encodes the filter in the binary format of `docs/format.md`: header
    /// (width, bucket count, length, hasher id and seed, ...), every bucket,
    /// and a checksum. [`from_bytes`](CuckooFilter::from_bytes) (or
    /// [`from_bytes_with_options`](Self::from_bytes_with_options) for another hasher) turns it back into a
    /// filter that answers every query exactly as this one does, and
    /// [`FrozenFilter`](crate::FrozenFilter) queries it where it lies.
    ///
    /// The snapshot is consistent, as [`write_to`](Self::write_to) explains.
    /// For filters of many GiB, prefer `write_to` or
    /// [`write_to_path`](Self::write_to_path), which do not build a second
    /// copy in memory.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1000);
    /// filter.insert("flow-1")?;
    /// let bytes = filter.to_bytes();
    /// assert_eq!(bytes.len(), filter.encoded_len());
    /// assert!(CuckooFilter::from_bytes(&bytes)?.contains("flow-1"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Beside writers
    /// The encoding is the filter as it was at one instant (the start of
    /// the call), taken while other threads go on writing: each writer
    /// waits at most for one group of lock stripes to be copied (about
    /// 1,024 buckets' cache lines at the default sizing), never for the
    /// whole table, and lookups never wait (`src/snapshot.rs` gives the
    /// protocol; `loom-tests/tests/snapshots.rs` models it). It needs
    /// memory for one encoding; [`write_to`](Self::write_to) streams with
    /// no copy but holds every lock while it writes.
    ///
    /// # Panics
    /// Never itself. Like any `Vec`, the encoding's allocation aborts the
    /// process when memory runs out: a host that must fail instead
    /// reserves [`encoded_len`](Self::encoded_len) bytes fallibly and calls
    /// [`write_to`](Self::write_to).
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.encoded_len());
        let (id, seed) = (S::ID, self.hasher.seed());
        with_table!(&self.table, t => append_snapshot(t, id, seed, &mut out));
        out
    }

    /// Streams the encoding of [`to_bytes`](Self::to_bytes) into `writer`,
    /// through a 64 KiB buffer (so wrapping `writer` in a `BufWriter` is
    /// unnecessary), without a second copy of the filter in memory.
    ///
    /// # Consistency and blocking
    /// The snapshot holds every stripe lock from the first byte of the
    /// header to the last byte of the body. Every call that takes a stripe
    /// lock **waits** until it is written: writes (`insert`,
    /// `insert_unique`, `remove`, their batch and `*_hash` forms, `clear`),
    /// `count`, another snapshot, and the rare lookup that raced a move just
    /// before the snapshot began and fell back to reading under its two
    /// stripe locks. Other lookups, `len` and `stats` go on undisturbed.
    /// The encoding is therefore one consistent state of the filter, with
    /// no torn buckets and a length that matches its contents. Because
    /// those calls wait on the writer's speed, snapshot a busy filter to
    /// fast storage rather than to a slow network peer, or take the
    /// snapshot with [`to_bytes`](Self::to_bytes), which writers wait for
    /// one stripe group at a time at most, at the cost of one encoding in
    /// memory.
    ///
    /// `writer` runs on this thread with those locks held, and they are not
    /// reentrant: a call from inside `writer` to any of the waiting calls
    /// above on this filter **deadlocks** (`count` and `insert_unique`
    /// included, not only writes). Lookups (`contains` and its forms) and
    /// `len`/`stats` from inside `writer` are fine: no move can happen
    /// while every stripe is locked, so a lookup never needs its locked
    /// fallback then.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1000);
    /// filter.insert(&42u64)?;
    /// let mut sink = Vec::new();
    /// filter.write_to(&mut sink)?;
    /// assert_eq!(sink, filter.to_bytes());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// Any error of `writer`; what was written is then an incomplete
    /// encoding that decoding rejects.
    pub fn write_to<W: Write>(&self, mut writer: W) -> io::Result<()> {
        let (id, seed) = (S::ID, self.hasher.seed());
        with_table!(&self.table, t => encode(t, id, seed, &mut writer))
    }

    /// Saves the filter to the file at `path` without ever leaving a
    /// half-written file under that name: the encoding of
    /// [`to_bytes`](Self::to_bytes), taken beside writers (they wait for
    /// one stripe group's copy at most, not for the file), goes to a new
    /// temporary file in the same
    /// directory, which is flushed to stable storage (`fsync`) and then
    /// renamed over `path` (atomic on POSIX file systems); on Unix the
    /// directory is synced too, so the rename survives a power cut. A crash
    /// or a kill at any point leaves either the old file or the new one.
    ///
    /// The new file has the default permissions for new files (not those
    /// of a file it replaces). A failed save removes its temporary file and
    /// leaves `path` as it was.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1000);
    /// filter.insert("flow-1")?;
    /// let path = std::env::temp_dir().join(format!("doc-{}.ccf", std::process::id()));
    /// filter.write_to_path(&path)?;
    /// let copy = CuckooFilter::from_bytes(&std::fs::read(&path)?)?;
    /// assert!(copy.contains("flow-1"));
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// Any I/O error creating, writing, syncing or renaming the file, and
    /// [`io::ErrorKind::InvalidInput`] if `path` names no file.
    pub fn write_to_path<P: AsRef<Path>>(&self, path: P) -> io::Result<()> {
        // The snapshot is taken once the temporary file exists, so a save
        // killed at any moment of it leaves that file behind (and the old
        // one in place): `tests/durability.rs` kills saves at random
        // moments and needs them to land inside one.
        write_atomically(path.as_ref(), |file| file.write_all(&self.to_bytes()))
    }

    /// Decodes a filter encoded by [`to_bytes`](Self::to_bytes), as
    /// `options` say: a bound on what the header may claim, where the table
    /// gets its memory, and the hasher `S` it was made with (inferred from
    /// the options: [`ReadOptions::new`] is the default hasher,
    /// [`ReadOptions::hasher`] names another). The hasher is rebuilt from
    /// the recorded seed with [`PersistentHasher::from_seed`]. The stripe
    /// count is chosen afresh for the bucket count, as for a new filter.
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, ReadOptions, TableMemory};
    /// let filter = CuckooFilter::with_capacity(100);
    /// filter.insert(&1u8)?;
    /// let options = ReadOptions::new().table_memory(TableMemory::GlobalAllocator);
    /// let copy = CuckooFilter::from_bytes_with_options(&filter.to_bytes(), options)?;
    /// assert!(copy.contains(&1u8));
    /// assert_eq!(copy.table_memory(), TableMemory::GlobalAllocator);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// A [`DecodeError`] if `bytes` is not exactly one intact encoding made
    /// with a hasher of the same [`ID`](PersistentHasher::ID)
    /// ([`DecodeError::HasherMismatch`] otherwise), or claims more than the
    /// options' limit ([`DecodeError::ExceedsLimit`]). Never panics,
    /// whatever the input, and allocates nothing before the header is
    /// validated and `bytes` is known to have the length the header implies.
    pub fn from_bytes_with_options(
        bytes: &[u8],
        options: ReadOptions<S>,
    ) -> Result<Self, DecodeError> {
        decode_stream(bytes, Some(bytes.len()), options.hasher())
    }

    /// Decodes a filter from `reader`, as written by
    /// [`write_to`](Self::write_to), as `options` say (see
    /// [`from_bytes_with_options`](Self::from_bytes_with_options)). Reads
    /// exactly the encoding's bytes (anything after it stays in `reader`),
    /// in 64 KiB chunks straight into the table, so no `BufReader` and no
    /// second copy is needed.
    ///
    /// The table is allocated once the header has been validated (at most
    /// 2^32 buckets; on Linux, tables of 4 MiB and more are mapped lazily,
    /// so a lying header costs address space, not memory) and freed if the
    /// body then fails to arrive or to check out. For a stream from an
    /// untrusted source, bound what a header may claim with
    /// [`ReadOptions::limit`].
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, DecodeError, ReadOptions};
    /// let filter = CuckooFilter::with_capacity(100_000);
    /// filter.insert("k")?;
    /// let bytes = filter.to_bytes();
    /// let copy = CuckooFilter::read_from_with_options(&bytes[..], ReadOptions::new())?;
    /// assert!(copy.contains("k"));
    /// let refused = CuckooFilter::read_from_with_options(&bytes[..], ReadOptions::new().limit(4096));
    /// assert!(matches!(refused, Err(DecodeError::ExceedsLimit { .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`from_bytes_with_options`](Self::from_bytes_with_options); an
    /// input that ends early is [`DecodeError::Truncated`] and any other
    /// read error is [`DecodeError::Io`].
    pub fn read_from_with_options<R: Read>(
        reader: R,
        options: ReadOptions<S>,
    ) -> Result<Self, DecodeError> {
        decode_stream(reader, None, options.hasher())
    }
}

impl<S> CuckooFilter<S> {
    /// Exact size in bytes of [`to_bytes`](Self::to_bytes)' output:
    /// `72 + bucket_count() * 4 * fingerprint_bits() / 8` (`56 + ...` for a
    /// filter decoded from format version 1).
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1000);
    /// assert_eq!(filter.encoded_len(), 72 + filter.bucket_count() * 4 * 2);
    /// ```
    #[must_use]
    pub fn encoded_len(&self) -> usize {
        with_table!(&self.table, t => {
            header_len(version_for(t.index.scheme()))
                + CHECKSUM_LEN
                + t.bucket_count() * t.bucket_bytes()
        })
    }
}

impl CuckooFilter<DefaultHashBuilder> {
    /// Decodes a filter encoded by [`to_bytes`](Self::to_bytes) with the
    /// default hasher. The result has the same fingerprint width, buckets,
    /// contents, length, maximum path length, hasher and seed, so it answers
    /// every query exactly as the encoded filter did.
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(1000);
    /// filter.insert("flow-1")?;
    /// let bytes = filter.to_bytes();
    /// let copy = CuckooFilter::from_bytes(&bytes)?;
    /// assert!(copy.contains("flow-1"));
    /// assert_eq!(copy.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// A [`DecodeError`] if `bytes` is not exactly one intact encoding:
    /// truncated, damaged (any flipped bit fails the checksum, if nothing
    /// before it), a newer format version, trailing bytes, or a filter made
    /// with another hasher. Never panics, whatever the input.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        Self::from_bytes_with_options(bytes, ReadOptions::new())
    }

    /// Decodes a filter from `reader`, as written by
    /// [`write_to`](Self::write_to), streaming it straight into the table.
    /// See [`read_from_with_options`](Self::read_from_with_options) for the details; for an
    /// untrusted stream use [`read_from_limited`](Self::read_from_limited).
    ///
    /// ```
    /// use concurrent_cuckoo::CuckooFilter;
    /// let filter = CuckooFilter::with_capacity(100);
    /// filter.insert("k")?;
    /// let copy = CuckooFilter::read_from(&filter.to_bytes()[..])?;
    /// assert!(copy.contains("k"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes), plus [`DecodeError::Io`].
    pub fn read_from<R: Read>(reader: R) -> Result<Self, DecodeError> {
        Self::read_from_with_options(reader, ReadOptions::new())
    }

    /// [`read_from`](Self::read_from) for untrusted streams: a header that
    /// claims an encoding of more than `max_bytes` bytes is refused with
    /// [`DecodeError::ExceedsLimit`] before anything is allocated.
    ///
    /// Use it whenever the stream's sender is not trusted with your memory
    /// (a network peer, an upload): `read_from` must reserve the table a
    /// header declares (up to 64 GiB of address space) before it can know
    /// whether the stream really holds that much. `from_bytes` does not need
    /// a limit: it checks the input's length against the header first.
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, DecodeError};
    /// let bytes = CuckooFilter::with_capacity(1_000_000).to_bytes(); // ~2.2 MB
    /// assert!(matches!(
    ///     CuckooFilter::read_from_limited(&bytes[..], 1 << 20),
    ///     Err(DecodeError::ExceedsLimit { .. })
    /// ));
    /// assert!(CuckooFilter::read_from_limited(&bytes[..], 4 << 20).is_ok());
    /// ```
    ///
    /// # Errors
    /// As [`read_from`](Self::read_from), plus [`DecodeError::ExceedsLimit`].
    pub fn read_from_limited<R: Read>(reader: R, max_bytes: u64) -> Result<Self, DecodeError> {
        Self::read_from_with_options(reader, ReadOptions::new().limit(max_bytes))
    }
}

/// Writes header, body and checksum of `t`, holding every stripe lock while
/// the header and body are produced.
pub(crate) fn encode<F: Fingerprint>(
    t: &RawTable<F>,
    hasher_id: u32,
    seed: u64,
    w: &mut impl Write,
) -> io::Result<()> {
    let all = t.stripes.lock_all();
    // Exact: every slot change updates its stripe's count under that
    // stripe's lock, and we hold them all.
    let len = t.stripes.len() as u64;
    let (header, header_bytes) = encoded_header(t, hasher_id, seed, len);
    let header = &header[..header_bytes];
    let mut sum = Xxh3Default::new();
    sum.update(header);
    w.write_all(header)?;
    let limit = CHUNK.min(t.bucket_count() * F::BUCKET_BYTES);
    let mut chunk = Vec::with_capacity(limit);
    let mut occupied = 0u64;
    for bucket in t.buckets.iter() {
        let word = F::load(bucket);
        occupied += F::occupied(word) as u64;
        word.put_le(&mut chunk);
        if chunk.len() >= limit {
            sum.update(&chunk);
            w.write_all(&chunk)?;
            chunk.clear();
        }
    }
    sum.update(&chunk);
    w.write_all(&chunk)?;
    drop(all);
    if occupied != len {
        return Err(io::Error::other(format!(
            "internal error: {occupied} occupied slots but a length of {len}"
        )));
    }
    w.write_all(&sum.digest().to_le_bytes())
}

/// Appends the encoding of `t` (header, body, checksum) to `out`, its body
/// copied beside writers as `t` was at one instant (`snapshot.rs`), its
/// length counted from that copy.
pub(crate) fn append_snapshot<F: Fingerprint>(
    t: &RawTable<F>,
    hasher_id: u32,
    seed: u64,
    out: &mut Vec<u8>,
) {
    let start = out.len();
    let body_at = start + header_len(version_for(t.index.scheme()));
    out.resize(body_at + t.bucket_count() * F::BUCKET_BYTES, 0);
    let len = crate::snapshot::copy_buckets(t, &mut out[body_at..]);
    let (header, header_bytes) = encoded_header(t, hasher_id, seed, len);
    debug_assert_eq!(start + header_bytes, body_at);
    out[start..body_at].copy_from_slice(&header[..header_bytes]);
    let sum = xxhash_rust::xxh3::xxh3_64(&out[start..]);
    out.extend_from_slice(&sum.to_le_bytes());
}

/// The header of `t`'s encoding, claiming `len` occupied slots, and its
/// length.
pub(crate) fn encoded_header<F: Fingerprint>(
    t: &RawTable<F>,
    hasher_id: u32,
    seed: u64,
    len: u64,
) -> ([u8; MAX_HEADER_LEN], usize) {
    Header {
        version: version_for(t.index.scheme()),
        bits: F::BITS as u8,
        max_path: t.max_path as u8,
        buckets: t.bucket_count() as u64,
        len,
        hasher_id,
        seed,
    }
    .encode()
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
pub(crate) fn read_full(r: &mut impl Read, buf: &mut [u8]) -> Result<usize, DecodeError> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_error(e)),
        }
    }
    Ok(got)
}

pub(crate) fn read_exact(r: &mut impl Read, buf: &mut [u8]) -> Result<(), DecodeError> {
    r.read_exact(buf).map_err(io_error)
}

fn io_error(e: io::Error) -> DecodeError {
    match e.kind() {
        io::ErrorKind::UnexpectedEof => DecodeError::Truncated,
        _ => DecodeError::Io(e),
    }
}

/// Reads and validates a header from `r`: first the magic and version,
/// which say how long the header is, then the rest of it. Returns the
/// header and its bytes (for the checksum).
fn read_header(r: &mut impl Read) -> Result<(Header, [u8; MAX_HEADER_LEN]), DecodeError> {
    let mut head = [0u8; MAX_HEADER_LEN];
    let got = read_full(r, &mut head[..PREFIX_LEN])?;
    let version = Header::version_of(&head[..got])?;
    let len = header_len(version);
    let got = PREFIX_LEN + read_full(r, &mut head[PREFIX_LEN..len])?;
    Ok((Header::parse(&head[..got])?, head))
}

/// Decodes one encoding from `r`. `exact_len` is the input's total length
/// when known (`from_bytes`), the options' limit the caller's bound on it:
/// both are checked against the header before anything is allocated.
fn decode_stream<S: PersistentHasher, R: Read>(
    r: R,
    exact_len: Option<usize>,
    options: ReadOptions,
) -> Result<CuckooFilter<S>, DecodeError> {
    let (header, table) = decode_one(r, S::ID, exact_len, options)?;
    Ok(CuckooFilter::from_parts(table, S::from_seed(header.seed)))
}

/// Decodes one single-table encoding (format versions 1 and 2) from `r`,
/// made with hasher `hasher_id`: its header and its table, placed as
/// `options` say. `exact_len` is the input's total length when known
/// (`from_bytes`), the options' limit the caller's bound on it: both are
/// checked against the header before anything is allocated.
pub(crate) fn decode_one<R: Read>(
    mut r: R,
    hasher_id: u32,
    exact_len: Option<usize>,
    options: ReadOptions,
) -> Result<(Header, Table), DecodeError> {
    let (header, head) = read_header(&mut r)?;
    admit_header(&header, hasher_id, exact_len, options.limit)?;
    let mut sum = Xxh3Default::new();
    sum.update(&head[..header.body_offset()]);
    let memory = options.table_memory;
    let table =
        table_of_width!(header.bits, F => decode_table::<F>(&header, &mut r, &mut sum, memory)?);
    Ok((header, table))
}

/// Checks a parsed header before anything is allocated for it: made with
/// hasher `hasher_id`, as long as the input when its length is known
/// (`exact_len`), within the caller's `limit`, and addressable on this
/// platform. Returns the encoding's total length.
pub(crate) fn admit_header(
    header: &Header,
    hasher_id: u32,
    exact_len: Option<usize>,
    limit: Option<u64>,
) -> Result<u64, DecodeError> {
    if header.hasher_id != hasher_id {
        return Err(DecodeError::HasherMismatch {
            expected: hasher_id,
            found: header.hasher_id,
        });
    }
    let total = header.encoded_len();
    if let Some(n) = exact_len {
        match (n as u64).cmp(&total) {
            core::cmp::Ordering::Less => return Err(DecodeError::Truncated),
            core::cmp::Ordering::Greater => return Err(DecodeError::TrailingBytes),
            core::cmp::Ordering::Equal => {}
        }
    }
    if let Some(limit) = limit {
        if total > limit {
            return Err(DecodeError::ExceedsLimit {
                claimed: total,
                limit,
            });
        }
    }
    if usize::try_from(total).is_err() {
        return Err(DecodeError::InvalidHeader(
            "the table is too large for this platform's address space",
        ));
    }
    Ok(total)
}

/// Allocates the table of a validated header, fills it from the body in
/// `r` a whole bucket at a time, checks the checksum that follows and the
/// length, and sets the stripes' counts.
fn decode_table<F: Fingerprint>(
    header: &Header,
    r: &mut impl Read,
    sum: &mut Xxh3Default,
    memory: TableMemory,
) -> Result<RawTable<F>, DecodeError> {
    let mut fill = TableFill::<F>::new(header, memory)?;
    let mut chunk = vec![0u8; CHUNK.min(fill.remaining_bytes())];
    while fill.remaining_bytes() > 0 {
        let bytes = &mut chunk[..CHUNK.min(fill.remaining_bytes())];
        read_exact(r, bytes)?;
        sum.update(bytes);
        fill.fill(bytes);
    }
    let mut stored = [0u8; CHECKSUM_LEN];
    read_exact(r, &mut stored)?;
    fill.finish(header, u64::from_le_bytes(stored), sum.digest())
}

/// A table being filled from an encoding's body, whole buckets at a time,
/// in order: the one place decoding writes buckets, for the streaming
/// decoder above and the chunk decoder (`chunks.rs`).
pub(crate) struct TableFill<F: Fingerprint> {
    table: RawTable<F>,
    /// Buckets filled so far.
    next: usize,
    /// Occupied slots per stripe, set on the stripes at the end.
    counts: Vec<i64>,
    occupied: u64,
}

impl<F: Fingerprint> TableFill<F> {
    /// An empty table for a validated `header` of this width, its memory
    /// from `memory`. The header's size must fit the platform (the callers
    /// check the encoding's length against `usize` first).
    pub(crate) fn new(header: &Header, memory: TableMemory) -> Result<Self, DecodeError> {
        debug_assert_eq!(u32::from(header.bits), F::BITS);
        let table = RawTable::<F>::new(
            IndexMap::new(header.buckets as usize, header.scheme()),
            None,
            None,
            usize::from(header.max_path),
            memory,
        )
        .map_err(DecodeError::AllocationFailed)?;
        let counts = vec![0i64; table.stripes.count()];
        Ok(Self {
            table,
            next: 0,
            counts,
            occupied: 0,
        })
    }

    /// Bytes of body still to come.
    pub(crate) fn remaining_bytes(&self) -> usize {
        (self.table.bucket_count() - self.next) * F::BUCKET_BYTES
    }

    /// Stores the next buckets from `bytes`: whole buckets, no more than
    /// remain.
    pub(crate) fn fill(&mut self, bytes: &[u8]) {
        debug_assert!(
            bytes.len().is_multiple_of(F::BUCKET_BYTES) && bytes.len() <= self.remaining_bytes()
        );
        for raw in bytes.chunks_exact(F::BUCKET_BYTES) {
            let word = F::Word::get_le(raw);
            let index = self.next;
            self.next += 1;
            if word == F::Word::ZERO {
                continue; // the new table is already empty
            }
            // Nobody else can see the table yet: a plain whole-bucket store.
            F::store_word(&self.table.buckets[index], word);
            let here = F::occupied(word);
            self.counts[self.table.stripes.stripe_of(index)] += here as i64;
            self.occupied += here as u64;
        }
    }

    /// The filled buckets' bytes, as they were read (for a chunk decoder
    /// that writes out what it has taken in).
    pub(crate) fn write_filled(&self, out: &mut impl Write) -> io::Result<()> {
        let mut chunk = Vec::with_capacity(CHUNK.min(self.next * F::BUCKET_BYTES));
        for bucket in &self.table.buckets[..self.next] {
            F::load(bucket).put_le(&mut chunk);
            if chunk.len() >= CHUNK {
                out.write_all(&chunk)?;
                chunk.clear();
            }
        }
        out.write_all(&chunk)
    }

    /// The table, once every bucket is in: `stored` must equal `computed`
    /// (the checksum) and the occupied slots the header's length.
    pub(crate) fn finish(
        self,
        header: &Header,
        stored: u64,
        computed: u64,
    ) -> Result<RawTable<F>, DecodeError> {
        debug_assert_eq!(self.remaining_bytes(), 0);
        if stored != computed {
            return Err(DecodeError::ChecksumMismatch);
        }
        if self.occupied != header.len {
            return Err(DecodeError::InvalidHeader(
                "length does not match the occupied slots",
            ));
        }
        Ok(self.into_table())
    }

    /// The table, once every bucket is in, for a body validated already
    /// (a frozen filter's): sets the stripes' counts.
    pub(crate) fn into_table(self) -> RawTable<F> {
        debug_assert_eq!(self.remaining_bytes(), 0);
        self.table.stripes.lock_all().set_counts(&self.counts);
        self.table
    }
}

#[cfg(feature = "serde")]
pub(crate) mod serde_impls {
    //! `Serialize` writes [`CuckooFilter::to_bytes`] as one byte string;
    //! `Deserialize` accepts a byte string (or, for formats such as JSON
    //! that spell bytes as a sequence of numbers, a sequence of `u8`) and
    //! decodes it with [`CuckooFilter::from_bytes_with_options`].

    use super::*;
    use core::fmt;
    use core::marker::PhantomData;
    use serde::de::{self, SeqAccess, Visitor};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    impl<S: PersistentHasher> Serialize for CuckooFilter<S> {
        fn serialize<Ser: Serializer>(&self, serializer: Ser) -> Result<Ser::Ok, Ser::Error> {
            serializer.serialize_bytes(&self.to_bytes())
        }
    }

    impl<'de, S: PersistentHasher> Deserialize<'de> for CuckooFilter<S> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_bytes(Encoded(PhantomData))
        }
    }

    /// A filter type decoded from the bytes serde hands over.
    pub(crate) trait DecodeBytes: Sized {
        fn decode_bytes(bytes: &[u8]) -> Result<Self, DecodeError>;
    }

    impl<S: PersistentHasher> DecodeBytes for CuckooFilter<S> {
        fn decode_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
            CuckooFilter::from_bytes_with_options(bytes, ReadOptions::new().hasher())
        }
    }

    /// The visitor of an encoded filter of type `T` (the plain filter's,
    /// a windowed filter's).
    pub(crate) struct Encoded<T>(pub(crate) PhantomData<T>);

    impl<'de, T: DecodeBytes> Visitor<'de> for Encoded<T> {
        type Value = T;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("the bytes of an encoded cuckoo filter")
        }

        fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<Self::Value, E> {
            T::decode_bytes(bytes).map_err(E::custom)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            // The hint comes from the input: cap what it may reserve.
            let mut bytes = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
            while let Some(b) = seq.next_element::<u8>()? {
                bytes.push(b);
            }
            T::decode_bytes(&bytes).map_err(de::Error::custom)
        }
    }
}
