//! Encodings handed out and taken in, a bounded piece at a time.
//!
//! [`ChunkEncoder`] produces exactly the bytes of `to_bytes` (of a
//! [`CuckooFilter`] or a [`ScalableCuckooFilter`]) in pieces of at most a
//! given size, keeping the running checksum between calls; [`ChunkDecoder`]
//! takes such pieces in order, of any sizes, and builds the filter as they
//! arrive, checking exactly what `from_bytes` checks. Each call costs time
//! proportional to its piece, never to the whole filter: what a server
//! that must not stall (a Redis module's `CF.SCANDUMP`/`CF.LOADCHUNK` and
//! its RDB callbacks) needs to move a filter of many GiB.

use super::format::{Header, CHECKSUM_LEN, MAX_HEADER_LEN, PREFIX_LEN, V1, V2, V3_SCALABLE};
use super::scalable::{check_container_version, level_cap, level_error, ContainerHead};
use super::{admit_header, encoded_header, ReadOptions, TableFill};
use crate::error::DecodeError;
use crate::filter::{with_table, CuckooFilter, Table};
use crate::fingerprint::{BucketWord, Fingerprint};
use crate::hashing::{DefaultHashBuilder, PersistentHasher};
use crate::scalable::{Level, ScalableCuckooFilter};
use crate::storage::TableMemory;
use crate::table::RawTable;
use core::fmt;
use core::marker::PhantomData;
use std::io::{self, Write};
use xxhash_rust::xxh3::Xxh3Default;

/// One table of an encoding: where it sits, and what its header says.
#[derive(Clone, Debug)]
struct Part {
    /// Level index in a growing filter (0 for a single filter).
    level: usize,
    /// Its header's bytes.
    header: Vec<u8>,
    buckets: usize,
    bucket_bytes: usize,
    /// Occupied slots when the encoder started (the header's length).
    len: u64,
}

impl Part {
    fn of<F: Fingerprint>(level: usize, t: &RawTable<F>, hasher_id: u32, seed: u64) -> Self {
        let len = t.len() as u64;
        let (header, n) = encoded_header(t, hasher_id, seed, len);
        Self {
            level,
            header: header[..n].to_vec(),
            buckets: t.bucket_count(),
            bucket_bytes: F::BUCKET_BYTES,
            len,
        }
    }

    fn encoded_len(&self) -> u64 {
        (self.header.len() + CHECKSUM_LEN) as u64 + (self.buckets * self.bucket_bytes) as u64
    }
}

/// Where the encoder is inside a part.
#[derive(Clone, Copy, Debug)]
enum Stage {
    Header(usize),
    /// Next bucket, and bytes of it already handed out.
    Body(usize, usize),
    Checksum(usize),
}

/// Produces the encoding of a filter (the bytes of its `to_bytes`) a
/// bounded piece at a time.
///
/// The encoder keeps no reference to the filter: each
/// [`next_chunk`](Self::next_chunk) (or
/// [`next_chunk_scalable`](Self::next_chunk_scalable)) call takes it again.
/// **The filter must not change from the encoder's creation to its last
/// chunk** (no insert, remove or clear, on any thread): the pieces would
/// mix two states. The encoder refuses a filter whose shape changed, and a
/// level whose occupied slots no longer match its header, with an error;
/// a change it cannot see (a remove and an insert in different buckets)
/// is the caller's to prevent, for example by counting writes.
///
/// ```
/// use concurrent_cuckoo::{ChunkEncoder, CuckooFilter};
/// let filter = CuckooFilter::with_capacity(10_000);
/// filter.insert("k")?;
/// let mut encoder = ChunkEncoder::new(&filter);
/// let mut bytes = Vec::new();
/// while !encoder.is_done() {
///     encoder.next_chunk(&filter, 1000, &mut bytes)?; // at most 1000 bytes a call
/// }
/// assert_eq!(bytes, filter.to_bytes());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct ChunkEncoder {
    /// The container header of a growing filter (checksum included), and
    /// how much of it went out.
    prefix: Vec<u8>,
    prefix_at: usize,
    parts: Vec<Part>,
    /// Bytes handed out so far, and in all.
    pos: u64,
    total: u64,
    /// The part being encoded (`parts.len()`: done with parts), and where.
    part: usize,
    stage: Stage,
    sum: Xxh3Default,
    /// Occupied slots seen in the part's buckets so far.
    occupied: u64,
    /// The bytes of the bucket being handed out.
    bucket: Vec<u8>,
    /// Whether this encodes a growing filter.
    scalable: bool,
    /// Whether `sum` and `occupied` cover the part being encoded from its
    /// first byte: false after a [`seek`](Self::seek) into its buckets or
    /// checksum, where its checksum comes from `digests` or a pass over
    /// its table.
    hashed: bool,
    /// Each part's checksum, where known: learned as parts are handed out
    /// whole or hashed for a seek, kept by clones, taken from another
    /// encoder by [`adopt_digests`](Self::adopt_digests).
    digests: Vec<Option<u64>>,
}

impl fmt::Debug for ChunkEncoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChunkEncoder")
            .field("position", &self.pos)
            .field("total_len", &self.total)
            .field("scalable", &self.scalable)
            .finish_non_exhaustive()
    }
}

fn changed(what: &str) -> io::Error {
    io::Error::other(format!(
        "the filter changed while it was being encoded ({what}): start again"
    ))
}

impl ChunkEncoder {
    /// An encoder of `filter`'s encoding ([`CuckooFilter::to_bytes`]).
    ///
    /// ```
    /// use concurrent_cuckoo::{ChunkEncoder, CuckooFilter};
    /// let filter = CuckooFilter::with_capacity(1000);
    /// let mut encoder = ChunkEncoder::new(&filter);
    /// let mut out = Vec::new();
    /// while !encoder.is_done() {
    ///     encoder.next_chunk(&filter, 256, &mut out)?;
    /// }
    /// assert_eq!(out, filter.to_bytes());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    #[must_use]
    pub fn new<S: PersistentHasher>(filter: &CuckooFilter<S>) -> Self {
        let seed = filter.hasher.seed();
        let part = with_table!(&filter.table, t => Part::of(0, t, S::ID, seed));
        Self::of(Vec::new(), vec![part], false)
    }

    /// An encoder of a growing filter's encoding
    /// ([`ScalableCuckooFilter::to_bytes`]).
    ///
    /// ```
    /// use concurrent_cuckoo::{ChunkEncoder, ScalableCuckooFilter};
    /// let filter = ScalableCuckooFilter::with_capacity(100);
    /// filter.insert_batch(&(0..1000u32).collect::<Vec<_>>())?; // grown
    /// let mut encoder = ChunkEncoder::scalable(&filter);
    /// let mut out = Vec::new();
    /// while !encoder.is_done() {
    ///     encoder.next_chunk_scalable(&filter, 4096, &mut out)?;
    /// }
    /// assert_eq!(out, filter.to_bytes());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn scalable<S: PersistentHasher>(filter: &ScalableCuckooFilter<S>) -> Self {
        let seed = filter.hasher.seed();
        let levels = filter.live_levels_oldest_first();
        let prefix = super::scalable::container_header::<S>(filter, &levels);
        let parts = levels
            .iter()
            .map(|(i, level)| with_table!(&level.table, t => Part::of(*i, t, S::ID, seed)))
            .collect();
        Self::of(prefix, parts, true)
    }

    fn of(prefix: Vec<u8>, parts: Vec<Part>, scalable: bool) -> Self {
        let total = prefix.len() as u64 + parts.iter().map(Part::encoded_len).sum::<u64>();
        let digests = vec![None; parts.len()];
        Self {
            prefix,
            prefix_at: 0,
            parts,
            pos: 0,
            total,
            part: 0,
            stage: Stage::Header(0),
            sum: Xxh3Default::new(),
            occupied: 0,
            bucket: Vec::with_capacity(16),
            scalable,
            hashed: true,
            digests,
        }
    }

    /// Moves this encoder to byte `position` of its encoding (at most
    /// [`total_len`](Self::total_len)), forwards or back, without
    /// producing or reading the bytes before it: O(levels), whatever the
    /// position. What a host that serves any offset of a dump at the cost
    /// of the bytes it hands out needs (the Redis module's `CF.SCANDUMP`
    /// at an iterator no dump of its reached).
    ///
    /// The checksum at the end of the table it lands in covers the bytes
    /// it skipped: when reached, it is the one this encoder already knows
    /// (see [`adopt_digests`](Self::adopt_digests)), or one pass over that
    /// table's buckets computes it then (the cost of the table, once: the
    /// encoder and its clones keep it). A seek inside a table's header
    /// hashes the skipped header bytes and loses nothing.
    ///
    /// ```
    /// use concurrent_cuckoo::{ChunkEncoder, CuckooFilter};
    /// let filter = CuckooFilter::with_capacity(1000);
    /// filter.insert("k")?;
    /// let whole = filter.to_bytes();
    /// let mut encoder = ChunkEncoder::new(&filter);
    /// encoder.seek(100)?; // no byte before 100 is produced
    /// let mut out = Vec::new();
    /// encoder.next_chunk(&filter, whole.len(), &mut out)?;
    /// assert_eq!(out, whole[100..]);
    /// assert!(encoder.seek(whole.len() as u64 + 1).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// `InvalidInput` for a position past the end of the encoding; the
    /// encoder is unchanged.
    pub fn seek(&mut self, position: u64) -> io::Result<()> {
        if position > self.total {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a position past the end of the encoding",
            ));
        }
        self.pos = position;
        self.prefix_at = usize::try_from(position)
            .unwrap_or(usize::MAX)
            .min(self.prefix.len());
        self.sum = Xxh3Default::new();
        self.occupied = 0;
        self.hashed = true;
        let mut rest = position - self.prefix_at as u64;
        self.part = self.parts.len();
        self.stage = Stage::Header(0);
        for (i, part) in self.parts.iter().enumerate() {
            let len = part.encoded_len();
            if rest >= len && i + 1 < self.parts.len() {
                rest -= len;
                continue;
            }
            if rest >= len {
                // The very end: nothing left to hand out.
                break;
            }
            self.part = i;
            let header = part.header.len() as u64;
            let body = (part.buckets * part.bucket_bytes) as u64;
            // `rest < len`: each offset below fits the part's sizes.
            self.stage = if rest < header {
                let at = rest as usize;
                self.sum.update(&part.header[..at]);
                Stage::Header(at)
            } else if rest < header + body {
                self.hashed = false;
                let into = (rest - header) as usize;
                Stage::Body(into / part.bucket_bytes, into % part.bucket_bytes)
            } else {
                self.hashed = false;
                Stage::Checksum((rest - header - body) as usize)
            };
            break;
        }
        Ok(())
    }

    /// Takes the checksums `other` knows and this encoder does not (see
    /// [`seek`](Self::seek)). `other` must encode the same state of the
    /// same filter (a clone of this encoder, or of one made from the
    /// filter unchanged since); one of another encoding (another number
    /// of tables) gives nothing.
    ///
    /// ```
    /// use concurrent_cuckoo::{ChunkEncoder, CuckooFilter};
    /// let filter = CuckooFilter::with_capacity(1000);
    /// let mut first = ChunkEncoder::new(&filter);
    /// let mut all = Vec::new();
    /// first.next_chunk(&filter, filter.encoded_len(), &mut all)?; // learns the checksum
    /// let mut later = ChunkEncoder::new(&filter);
    /// later.adopt_digests(&first);
    /// later.seek(filter.encoded_len() as u64 - 8)?; // the checksum: known, no pass over the table
    /// let mut tail = Vec::new();
    /// later.next_chunk(&filter, 8, &mut tail)?;
    /// assert_eq!(tail, all[all.len() - 8..]);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn adopt_digests(&mut self, other: &ChunkEncoder) {
        if other.digests.len() != self.digests.len() || other.total != self.total {
            return;
        }
        for (mine, theirs) in self.digests.iter_mut().zip(&other.digests) {
            if mine.is_none() {
                *mine = *theirs;
            }
        }
    }

    /// The checksum of the part being encoded, for an encoder that did not
    /// hash it from its first byte: known, or one pass over its table
    /// (which also checks its occupied slots against its header).
    fn part_digest<'t>(
        &mut self,
        table_of: &impl Fn(usize) -> Option<&'t Table>,
    ) -> io::Result<u64> {
        if let Some(digest) = self.digests[self.part] {
            return Ok(digest);
        }
        let part = &self.parts[self.part];
        let table = table_of(part.level).ok_or_else(|| changed("a level is gone"))?;
        let (sum, occupied) = with_table!(table, t => hash_part(part, t))?;
        if occupied != part.len {
            return Err(changed("occupied slots"));
        }
        self.digests[self.part] = Some(sum);
        Ok(sum)
    }

    /// Bytes of the whole encoding.
    ///
    /// ```
    /// use concurrent_cuckoo::{ChunkEncoder, CuckooFilter};
    /// let filter = CuckooFilter::with_capacity(1000);
    /// assert_eq!(ChunkEncoder::new(&filter).total_len(), filter.encoded_len() as u64);
    /// ```
    #[must_use]
    pub fn total_len(&self) -> u64 {
        self.total
    }

    /// Bytes of the headers before the first table's buckets: a growing
    /// filter's container header and its oldest level's header, or a
    /// single filter's header. A host handing the encoding out in pieces
    /// can make its first piece exactly these bytes (the Redis module's
    /// `CF.SCANDUMP` sends them as a header chunk, as RedisBloom does).
    ///
    /// ```
    /// use concurrent_cuckoo::{ChunkEncoder, CuckooFilter};
    /// let filter = CuckooFilter::with_capacity(1000);
    /// assert_eq!(ChunkEncoder::new(&filter).header_len(), 64); // format version 2
    /// ```
    #[must_use]
    pub fn header_len(&self) -> u64 {
        self.prefix.len() as u64 + self.parts.first().map_or(0, |p| p.header.len() as u64)
    }

    /// Bytes handed out so far.
    ///
    /// ```
    /// use concurrent_cuckoo::{ChunkEncoder, CuckooFilter};
    /// let filter = CuckooFilter::with_capacity(1000);
    /// let mut encoder = ChunkEncoder::new(&filter);
    /// encoder.next_chunk(&filter, 100, &mut Vec::new())?;
    /// assert_eq!(encoder.position(), 100);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    #[must_use]
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// Whether every byte has been handed out.
    ///
    /// ```
    /// use concurrent_cuckoo::{ChunkEncoder, CuckooFilter};
    /// let filter = CuckooFilter::with_capacity(10);
    /// let mut encoder = ChunkEncoder::new(&filter);
    /// assert!(!encoder.is_done());
    /// encoder.next_chunk(&filter, usize::MAX, &mut Vec::new())?;
    /// assert!(encoder.is_done());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    #[must_use]
    pub fn is_done(&self) -> bool {
        self.pos == self.total
    }

    /// Bytes this encoder holds: itself and its buffers (each table's
    /// header, a growing filter's container header, the bucket being
    /// handed out). A host that keeps encoders between calls, as the
    /// Redis module keeps the state of each `CF.SCANDUMP` in progress,
    /// reports them with its own memory.
    ///
    /// ```
    /// use concurrent_cuckoo::{ChunkEncoder, CuckooFilter};
    /// let filter = CuckooFilter::with_capacity(1_000_000);
    /// // The encoder holds headers, not the filter's buckets.
    /// assert!(ChunkEncoder::new(&filter).memory_usage() < 4096);
    /// ```
    #[must_use]
    pub fn memory_usage(&self) -> usize {
        core::mem::size_of::<Self>()
            + self.prefix.capacity()
            + self.parts.capacity() * core::mem::size_of::<Part>()
            + self
                .parts
                .iter()
                .map(|p| p.header.capacity())
                .sum::<usize>()
            + self.bucket.capacity()
            + self.digests.capacity() * core::mem::size_of::<Option<u64>>()
    }

    /// Appends the next at most `max` bytes (`max > 0`; fewer only at the
    /// end) of the encoding of `filter`, the one this encoder was made
    /// from, to `out`; returns how many.
    ///
    /// ```
    /// use concurrent_cuckoo::{ChunkEncoder, CuckooFilter, ScalableCuckooFilter};
    /// let filter = CuckooFilter::with_capacity(1000);
    /// let mut encoder = ChunkEncoder::new(&filter);
    /// let mut out = Vec::new();
    /// assert_eq!(encoder.next_chunk(&filter, 10, &mut out)?, 10);
    /// assert_eq!(out, filter.to_bytes()[..10]);
    /// // A growing filter's encoder is driven by `next_chunk_scalable`.
    /// let growing = ScalableCuckooFilter::with_capacity(10);
    /// assert!(ChunkEncoder::scalable(&growing).next_chunk(&filter, 10, &mut out).is_err());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    ///
    /// # Errors
    /// If this encoder encodes a growing filter, or `filter` visibly
    /// changed since the encoder was made (see [`ChunkEncoder`]).
    pub fn next_chunk<S>(
        &mut self,
        filter: &CuckooFilter<S>,
        max: usize,
        out: &mut Vec<u8>,
    ) -> io::Result<usize> {
        if self.scalable {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "this encoder encodes a ScalableCuckooFilter",
            ));
        }
        self.produce(|_| Some(&filter.table), max, out)
    }

    /// [`next_chunk`](Self::next_chunk) for a growing filter.
    ///
    /// ```
    /// use concurrent_cuckoo::{ChunkEncoder, ScalableCuckooFilter};
    /// let filter = ScalableCuckooFilter::with_capacity(10);
    /// let mut encoder = ChunkEncoder::scalable(&filter);
    /// let mut out = Vec::new();
    /// encoder.next_chunk_scalable(&filter, usize::MAX, &mut out)?;
    /// assert_eq!(out, filter.to_bytes());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`next_chunk`](Self::next_chunk).
    pub fn next_chunk_scalable<S>(
        &mut self,
        filter: &ScalableCuckooFilter<S>,
        max: usize,
        out: &mut Vec<u8>,
    ) -> io::Result<usize> {
        if !self.scalable {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "this encoder encodes a CuckooFilter",
            ));
        }
        self.produce(|i| filter.level(i).map(|l| &l.table), max, out)
    }

    fn produce<'t>(
        &mut self,
        table_of: impl Fn(usize) -> Option<&'t Table>,
        max: usize,
        out: &mut Vec<u8>,
    ) -> io::Result<usize> {
        assert!(max > 0, "a chunk holds at least one byte");
        let start = out.len();
        let want = (max as u64).min(self.total - self.pos) as usize;
        while out.len() - start < want {
            let left = want - (out.len() - start);
            // The container header first (its own checksum is inside it).
            if self.prefix_at < self.prefix.len() {
                let n = left.min(self.prefix.len() - self.prefix_at);
                out.extend_from_slice(&self.prefix[self.prefix_at..self.prefix_at + n]);
                self.prefix_at += n;
                continue;
            }
            let part = &self.parts[self.part];
            match self.stage {
                Stage::Header(at) => {
                    let n = left.min(part.header.len() - at);
                    let bytes = &part.header[at..at + n];
                    self.sum.update(bytes);
                    out.extend_from_slice(bytes);
                    self.stage = if at + n == part.header.len() {
                        Stage::Body(0, 0)
                    } else {
                        Stage::Header(at + n)
                    };
                }
                Stage::Body(bucket, _) if bucket == part.buckets => {
                    if self.hashed && self.occupied != part.len {
                        return Err(changed("occupied slots"));
                    }
                    self.stage = Stage::Checksum(0);
                }
                Stage::Body(bucket, taken) => {
                    let table = table_of(part.level).ok_or_else(|| changed("a level is gone"))?;
                    let before = out.len();
                    let (next, taken) =
                        with_table!(table, t => self.body(t, bucket, taken, left, out))?;
                    if self.hashed {
                        self.sum.update(&out[before..]);
                    }
                    self.stage = Stage::Body(next, taken);
                }
                Stage::Checksum(at) => {
                    let digest = if self.hashed {
                        let digest = self.sum.digest();
                        self.digests[self.part] = Some(digest);
                        digest
                    } else {
                        self.part_digest(&table_of)?
                    };
                    let digest = digest.to_le_bytes();
                    let n = left.min(CHECKSUM_LEN - at);
                    out.extend_from_slice(&digest[at..at + n]);
                    if at + n == CHECKSUM_LEN {
                        self.part += 1;
                        self.stage = Stage::Header(0);
                        self.sum = Xxh3Default::new();
                        self.occupied = 0;
                        self.hashed = true;
                    } else {
                        self.stage = Stage::Checksum(at + n);
                    }
                }
            }
        }
        let n = out.len() - start;
        self.pos += n as u64;
        Ok(n)
    }

    /// Hands out at most `left` body bytes of table `t` from bucket
    /// `bucket` (of which `taken` bytes already went out); returns where
    /// it stopped.
    fn body<F: Fingerprint>(
        &mut self,
        t: &RawTable<F>,
        mut bucket: usize,
        mut taken: usize,
        mut left: usize,
        out: &mut Vec<u8>,
    ) -> io::Result<(usize, usize)> {
        let part = &self.parts[self.part];
        if t.bucket_count() != part.buckets || F::BUCKET_BYTES != part.bucket_bytes {
            return Err(changed("the table's size"));
        }
        while left > 0 && bucket < part.buckets {
            let word = F::load(&t.buckets[bucket]);
            if taken == 0 && left >= F::BUCKET_BYTES {
                // The common case: whole buckets straight into `out`.
                word.put_le(out);
                self.occupied += F::occupied(word) as u64;
                left -= F::BUCKET_BYTES;
                bucket += 1;
                continue;
            }
            self.bucket.clear();
            word.put_le(&mut self.bucket);
            let n = left.min(F::BUCKET_BYTES - taken);
            out.extend_from_slice(&self.bucket[taken..taken + n]);
            left -= n;
            taken += n;
            if taken == F::BUCKET_BYTES {
                self.occupied += F::occupied(word) as u64;
                bucket += 1;
                taken = 0;
            }
        }
        Ok((bucket, taken))
    }
}

/// The checksum of a part (its header and its table's buckets, as
/// encoded) and the table's occupied slots: one pass over the table.
fn hash_part<F: Fingerprint>(part: &Part, t: &RawTable<F>) -> io::Result<(u64, u64)> {
    if t.bucket_count() != part.buckets || F::BUCKET_BYTES != part.bucket_bytes {
        return Err(changed("the table's size"));
    }
    let mut sum = Xxh3Default::new();
    sum.update(&part.header);
    let mut occupied = 0u64;
    // Hashed a few KiB at a time: XXH3 streams, the bytes are the same.
    let mut buffer = Vec::with_capacity(HASH_BUFFER + F::BUCKET_BYTES);
    for i in 0..part.buckets {
        let word = F::load(&t.buckets[i]);
        word.put_le(&mut buffer);
        occupied += F::occupied(word) as u64;
        if buffer.len() >= HASH_BUFFER {
            sum.update(&buffer);
            buffer.clear();
        }
    }
    sum.update(&buffer);
    Ok((sum.digest(), occupied))
}

/// Bytes [`hash_part`] hands XXH3 at a time.
const HASH_BUFFER: usize = 16 << 10;

/// What a [`ChunkDecoder`] decoded: a single filter or a growing one,
/// whichever the encoding holds.
// Made once per decode and unpacked at once: boxing the larger variant
// would only add an allocation.
#[allow(clippy::large_enum_variant)]
pub enum DecodedFilter<S = DefaultHashBuilder> {
    /// Format versions 1 and 2.
    Filter(CuckooFilter<S>),
    /// Format version 3.
    Scalable(ScalableCuckooFilter<S>),
}

impl<S> fmt::Debug for DecodedFilter<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Filter(x) => f.debug_tuple("Filter").field(x).finish(),
            Self::Scalable(x) => f.debug_tuple("Scalable").field(x).finish(),
        }
    }
}

/// A table being decoded, whatever its width.
enum AnyFill {
    F8(TableFill<u8>),
    F16(TableFill<u16>),
    F32(TableFill<u32>),
}

macro_rules! with_fill {
    ($fill:expr, $f:ident => $body:expr) => {
        match $fill {
            AnyFill::F8($f) => $body,
            AnyFill::F16($f) => $body,
            AnyFill::F32($f) => $body,
        }
    };
}

impl AnyFill {
    fn new(header: &Header, memory: TableMemory) -> Result<Self, DecodeError> {
        Ok(match header.bits {
            8 => Self::F8(TableFill::new(header, memory)?),
            16 => Self::F16(TableFill::new(header, memory)?),
            _ => Self::F32(TableFill::new(header, memory)?),
        })
    }

    fn bucket_bytes(&self) -> usize {
        match self {
            Self::F8(_) => <u8 as Fingerprint>::BUCKET_BYTES,
            Self::F16(_) => <u16 as Fingerprint>::BUCKET_BYTES,
            Self::F32(_) => <u32 as Fingerprint>::BUCKET_BYTES,
        }
    }

    fn finish(self, header: &Header, stored: u64, computed: u64) -> Result<Table, DecodeError> {
        Ok(match self {
            Self::F8(f) => Table::F8(f.finish(header, stored, computed)?),
            Self::F16(f) => Table::F16(f.finish(header, stored, computed)?),
            Self::F32(f) => Table::F32(f.finish(header, stored, computed)?),
        })
    }
}

/// One table's encoding (header, body, checksum) being taken in.
struct LevelDecoder {
    head: Vec<u8>,
    header: Option<Header>,
    fill: Option<AnyFill>,
    /// Bytes of a bucket split between pieces.
    partial: Vec<u8>,
    /// Bytes of the checksum taken in so far.
    tail: Vec<u8>,
    sum: Xxh3Default,
    hasher_id: u32,
    /// The most bytes this table's encoding may take, and where the table
    /// gets its memory.
    options: ReadOptions,
}

impl LevelDecoder {
    fn new(hasher_id: u32, options: ReadOptions) -> Self {
        Self {
            head: Vec::with_capacity(MAX_HEADER_LEN),
            header: None,
            fill: None,
            partial: Vec::with_capacity(16),
            tail: Vec::with_capacity(CHECKSUM_LEN),
            sum: Xxh3Default::new(),
            hasher_id,
            options,
        }
    }

    /// Takes in what of `input` belongs to this table (advancing it);
    /// `true` once the whole table is in and checked.
    fn take(&mut self, input: &mut &[u8]) -> Result<bool, DecodeError> {
        if self.header.is_none() {
            // The magic and version say how long the header is.
            if self.head.len() < PREFIX_LEN {
                let n = input.len().min(PREFIX_LEN - self.head.len());
                self.head.extend_from_slice(&input[..n]);
                *input = &input[n..];
                if self.head.len() < PREFIX_LEN {
                    // Only a foreign start can be refused this early.
                    return match Header::version_of(&self.head) {
                        Err(DecodeError::BadMagic) => Err(DecodeError::BadMagic),
                        _ => Ok(false),
                    };
                }
            }
            let want = super::format::header_len(Header::version_of(&self.head)?);
            let n = input.len().min(want - self.head.len());
            self.head.extend_from_slice(&input[..n]);
            *input = &input[n..];
            if self.head.len() < want {
                return Ok(false);
            }
            let header = Header::parse(&self.head)?;
            admit_header(&header, self.hasher_id, None, self.options.limit)?;
            self.sum.update(&self.head);
            self.fill = Some(AnyFill::new(&header, self.options.table_memory)?);
            self.header = Some(header);
        }
        let fill = self.fill.as_mut().expect("the header is in");
        let bucket = fill.bucket_bytes();
        // Finish a bucket split between pieces, then whole buckets, then
        // keep what is left of a split one.
        while with_fill!(&*fill, f => f.remaining_bytes()) > 0 && !input.is_empty() {
            if !self.partial.is_empty() || input.len() < bucket {
                let n = input.len().min(bucket - self.partial.len());
                self.partial.extend_from_slice(&input[..n]);
                *input = &input[n..];
                if self.partial.len() == bucket {
                    self.sum.update(&self.partial);
                    with_fill!(&mut *fill, f => f.fill(&self.partial));
                    self.partial.clear();
                }
                continue;
            }
            let whole =
                (input.len() / bucket * bucket).min(with_fill!(&*fill, f => f.remaining_bytes()));
            let (now, rest) = input.split_at(whole);
            self.sum.update(now);
            with_fill!(&mut *fill, f => f.fill(now));
            *input = rest;
        }
        if with_fill!(&*fill, f => f.remaining_bytes()) > 0 {
            return Ok(false);
        }
        let n = input.len().min(CHECKSUM_LEN - self.tail.len());
        self.tail.extend_from_slice(&input[..n]);
        *input = &input[n..];
        Ok(self.tail.len() == CHECKSUM_LEN)
    }

    /// The table, once [`take`](Self::take) said it is all in.
    fn finish(self) -> Result<(Header, Table), DecodeError> {
        let header = self.header.expect("complete");
        let mut stored = [0u8; CHECKSUM_LEN];
        stored.copy_from_slice(&self.tail);
        let table = self.fill.expect("complete").finish(
            &header,
            u64::from_le_bytes(stored),
            self.sum.digest(),
        )?;
        Ok((header, table))
    }

    /// The bytes taken in so far, as they came.
    fn write_taken(&self, out: &mut impl Write) -> io::Result<()> {
        out.write_all(&self.head)?;
        if let Some(fill) = &self.fill {
            with_fill!(fill, f => f.write_filled(out))?;
        }
        out.write_all(&self.partial)?;
        out.write_all(&self.tail)
    }
}

/// Where a [`ChunkDecoder`] is. One lives per decode, so the size of the
/// larger states does not matter.
#[allow(clippy::large_enum_variant)]
enum State<S> {
    /// Nothing yet, or fewer bytes than say which kind of filter follows.
    Start(Vec<u8>),
    Single(LevelDecoder),
    Container(Container),
    Done(DecodedFilter<S>),
    /// An error happened: it is returned again.
    Failed(DecodeError),
    /// Taken by `finish`.
    Gone,
}

/// The same error again, for a decoder that stays failed (`DecodeError`
/// is not `Clone`: it may hold an `io::Error`).
fn again(e: &DecodeError) -> DecodeError {
    match e {
        DecodeError::Truncated => DecodeError::Truncated,
        DecodeError::BadMagic => DecodeError::BadMagic,
        DecodeError::UnsupportedVersion(v) => DecodeError::UnsupportedVersion(*v),
        DecodeError::ChecksumMismatch => DecodeError::ChecksumMismatch,
        DecodeError::HasherMismatch { expected, found } => DecodeError::HasherMismatch {
            expected: *expected,
            found: *found,
        },
        DecodeError::InvalidHeader(why) => DecodeError::InvalidHeader(why),
        DecodeError::TrailingBytes => DecodeError::TrailingBytes,
        DecodeError::ExceedsLimit { claimed, limit } => DecodeError::ExceedsLimit {
            claimed: *claimed,
            limit: *limit,
        },
        DecodeError::Io(e) => DecodeError::Io(io::Error::new(e.kind(), e.to_string())),
        DecodeError::AllocationFailed(a) => DecodeError::AllocationFailed(*a),
    }
}

/// A growing filter's container being taken in.
struct Container {
    /// The container header's bytes so far (all of it once `head` is set).
    bytes: Vec<u8>,
    head: Option<ContainerHead>,
    indices: Vec<usize>,
    levels: Vec<(usize, Level)>,
    current: Option<(LevelDecoder, usize, u64)>,
    /// Bytes of the container header and the finished levels.
    done_bytes: u64,
}

/// Builds a filter from its encoding handed in by pieces, in order and of
/// any sizes: the counterpart of [`ChunkEncoder`], checking exactly what
/// `from_bytes` checks. Each table is allocated when its header arrives and
/// filled as its bytes come, so each [`feed`](Self::feed) costs time
/// proportional to its piece.
///
/// ```
/// use concurrent_cuckoo::{ChunkDecoder, CuckooFilter, DecodedFilter};
/// let filter = CuckooFilter::with_capacity(10_000);
/// filter.insert("k")?;
/// let bytes = filter.to_bytes();
/// let mut decoder = ChunkDecoder::new();
/// for piece in bytes.chunks(777) {
///     decoder.feed(piece)?;
/// }
/// let DecodedFilter::Filter(copy) = decoder.finish()? else { unreachable!() };
/// assert!(copy.contains("k"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ChunkDecoder<S = DefaultHashBuilder> {
    state: State<S>,
    consumed: u64,
    options: ReadOptions,
    _hasher: PhantomData<fn() -> S>,
}

impl<S> fmt::Debug for ChunkDecoder<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChunkDecoder")
            .field("consumed", &self.consumed)
            .field("complete", &matches!(self.state, State::Done(_)))
            .finish_non_exhaustive()
    }
}

impl ChunkDecoder<DefaultHashBuilder> {
    /// A decoder of an encoding made with the default hasher.
    ///
    /// ```
    /// use concurrent_cuckoo::{ChunkDecoder, DecodedFilter, ScalableCuckooFilter};
    /// let filter = ScalableCuckooFilter::with_capacity(10);
    /// let mut decoder = ChunkDecoder::new(); // either kind of filter
    /// decoder.feed(&filter.to_bytes())?;
    /// assert!(matches!(decoder.finish()?, DecodedFilter::Scalable(_)));
    /// # Ok::<(), concurrent_cuckoo::DecodeError>(())
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self::new_with_hasher()
    }
}

impl Default for ChunkDecoder<DefaultHashBuilder> {
    fn default() -> Self {
        Self::new()
    }
}

impl<S: PersistentHasher> ChunkDecoder<S> {
    /// A decoder of an encoding made with hasher `S` (rebuilt from the
    /// seed the encoding holds, as every `*_with_hasher` decoder does).
    ///
    /// ```
    /// use concurrent_cuckoo::{ChunkDecoder, CuckooFilter, DecodedFilter, DefaultHashBuilder};
    /// let filter = CuckooFilter::with_capacity(100);
    /// // Any `PersistentHasher`; here the default one, spelled out.
    /// let mut decoder = ChunkDecoder::<DefaultHashBuilder>::new_with_hasher();
    /// decoder.feed(&filter.to_bytes())?;
    /// assert!(matches!(decoder.finish()?, DecodedFilter::Filter(_)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn new_with_hasher() -> Self {
        Self {
            state: State::Start(Vec::with_capacity(PREFIX_LEN)),
            consumed: 0,
            options: ReadOptions::new(),
            _hasher: PhantomData,
        }
    }

    /// Refuses, before allocating it, a table whose header would take the
    /// encoding past `max_bytes` ([`DecodeError::ExceedsLimit`]), as
    /// `read_from_limited` does: for pieces from an untrusted sender.
    ///
    /// ```
    /// use concurrent_cuckoo::{ChunkDecoder, CuckooFilter, DecodeError};
    /// let bytes = CuckooFilter::with_capacity(100_000).to_bytes();
    /// let mut decoder = ChunkDecoder::new().limit(4096);
    /// // Refused at the header, before the table is allocated.
    /// assert!(matches!(decoder.feed(&bytes[..64]), Err(DecodeError::ExceedsLimit { .. })));
    /// ```
    #[must_use]
    pub fn limit(mut self, max_bytes: u64) -> Self {
        self.options = self.options.limit(max_bytes);
        self
    }

    /// Where the decoded filter's tables get their memory, and every table
    /// it makes later (see [`TableMemory`]), as
    /// [`ReadOptions::table_memory`] does for `read_from_with_options`.
    ///
    /// ```
    /// use concurrent_cuckoo::{ChunkDecoder, CuckooFilter, DecodedFilter, TableMemory};
    /// let bytes = CuckooFilter::with_capacity(1000).to_bytes();
    /// let mut decoder = ChunkDecoder::new().table_memory(TableMemory::GlobalAllocator);
    /// decoder.feed(&bytes)?;
    /// let DecodedFilter::Filter(copy) = decoder.finish()? else { unreachable!() };
    /// assert_eq!(copy.table_memory(), TableMemory::GlobalAllocator);
    /// # Ok::<(), concurrent_cuckoo::DecodeError>(())
    /// ```
    #[must_use]
    pub fn table_memory(mut self, memory: TableMemory) -> Self {
        self.options = self.options.table_memory(memory);
        self
    }

    /// Bytes taken in so far.
    ///
    /// ```
    /// use concurrent_cuckoo::{ChunkDecoder, CuckooFilter};
    /// let bytes = CuckooFilter::with_capacity(100).to_bytes();
    /// let mut decoder = ChunkDecoder::new();
    /// decoder.feed(&bytes[..100])?;
    /// assert_eq!(decoder.consumed(), 100);
    /// # Ok::<(), concurrent_cuckoo::DecodeError>(())
    /// ```
    #[must_use]
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// Whether the whole encoding has arrived and checked out:
    /// [`finish`](Self::finish) will succeed.
    ///
    /// ```
    /// use concurrent_cuckoo::{ChunkDecoder, CuckooFilter};
    /// let bytes = CuckooFilter::with_capacity(100).to_bytes();
    /// let mut decoder = ChunkDecoder::new();
    /// decoder.feed(&bytes[..bytes.len() - 1])?;
    /// assert!(!decoder.is_complete());
    /// decoder.feed(&bytes[bytes.len() - 1..])?;
    /// assert!(decoder.is_complete());
    /// # Ok::<(), concurrent_cuckoo::DecodeError>(())
    /// ```
    #[must_use]
    pub fn is_complete(&self) -> bool {
        matches!(self.state, State::Done(_))
    }

    /// Takes in the next piece of the encoding.
    ///
    /// ```
    /// use concurrent_cuckoo::{ChunkDecoder, CuckooFilter, DecodeError};
    /// let mut bytes = CuckooFilter::with_capacity(100).to_bytes();
    /// bytes.push(0);
    /// let mut decoder = ChunkDecoder::new();
    /// assert!(matches!(decoder.feed(&bytes), Err(DecodeError::TrailingBytes)));
    /// assert!(decoder.feed(b"").is_err()); // failed for good
    /// ```
    ///
    /// # Errors
    /// A [`DecodeError`] as soon as the bytes so far cannot be the start
    /// of an intact encoding (a bad header, a checksum that does not
    /// match, bytes after the end: [`DecodeError::TrailingBytes`]). The
    /// decoder then stays failed: every later call returns the error.
    pub fn feed(&mut self, piece: &[u8]) -> Result<(), DecodeError> {
        if let State::Failed(e) = &self.state {
            return Err(again(e));
        }
        let result = self.take(piece);
        if let Err(e) = &result {
            self.state = State::Failed(again(e));
        } else {
            self.consumed += piece.len() as u64;
        }
        result
    }

    fn take(&mut self, mut input: &[u8]) -> Result<(), DecodeError> {
        loop {
            match &mut self.state {
                State::Start(prefix) => {
                    let n = input.len().min(PREFIX_LEN - prefix.len());
                    prefix.extend_from_slice(&input[..n]);
                    input = &input[n..];
                    let version = super::format::any_version(prefix);
                    if prefix.len() < PREFIX_LEN {
                        // Only a foreign start can be refused this early.
                        return match version {
                            Err(DecodeError::BadMagic) => Err(DecodeError::BadMagic),
                            _ => Ok(()),
                        };
                    }
                    let prefix = core::mem::take(prefix);
                    let mut rest: &[u8] = &prefix;
                    self.state = match version? {
                        V1 | V2 => State::Single(LevelDecoder::new(S::ID, self.options)),
                        V3_SCALABLE => State::Container(Container {
                            bytes: Vec::new(),
                            head: None,
                            indices: Vec::new(),
                            levels: Vec::new(),
                            current: None,
                            done_bytes: 0,
                        }),
                        v => return Err(DecodeError::UnsupportedVersion(v)),
                    };
                    // The prefix goes to the new state first.
                    self.take_bytes(&mut rest)?;
                }
                State::Done(_) => {
                    return if input.is_empty() {
                        Ok(())
                    } else {
                        Err(DecodeError::TrailingBytes)
                    };
                }
                State::Failed(e) => return Err(again(e)),
                State::Gone => unreachable!("finish consumed the decoder"),
                State::Single(_) | State::Container(_) => {
                    self.take_bytes(&mut input)?;
                    if input.is_empty() {
                        return Ok(());
                    }
                }
            }
        }
    }

    /// Takes in bytes in the single or container state.
    fn take_bytes(&mut self, input: &mut &[u8]) -> Result<(), DecodeError> {
        match &mut self.state {
            State::Single(level) => {
                if level.take(input)? {
                    let State::Single(level) = core::mem::replace(&mut self.state, State::Gone)
                    else {
                        unreachable!()
                    };
                    let (header, table) = level.finish()?;
                    self.state = State::Done(DecodedFilter::Filter(CuckooFilter::from_parts(
                        table,
                        S::from_seed(header.seed),
                    )));
                }
                Ok(())
            }
            State::Container(c) => {
                if let Some(filter) = c.take::<S>(input, self.options)? {
                    self.state = State::Done(DecodedFilter::Scalable(filter));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// The decoded filter.
    ///
    /// ```
    /// use concurrent_cuckoo::{ChunkDecoder, CuckooFilter, DecodeError};
    /// let bytes = CuckooFilter::with_capacity(100).to_bytes();
    /// let mut decoder = ChunkDecoder::new();
    /// decoder.feed(&bytes[..10])?;
    /// assert!(matches!(decoder.finish(), Err(DecodeError::Truncated)));
    /// # Ok::<(), DecodeError>(())
    /// ```
    ///
    /// # Errors
    /// [`DecodeError::Truncated`] if the encoding has not all arrived, or
    /// the error that stopped the decoder.
    pub fn finish(mut self) -> Result<DecodedFilter<S>, DecodeError> {
        match core::mem::replace(&mut self.state, State::Gone) {
            State::Done(filter) => Ok(filter),
            State::Failed(e) => Err(e),
            _ => Err(DecodeError::Truncated),
        }
    }

    /// Writes the bytes taken in so far, exactly as they came (what a
    /// server saving an unfinished restore writes out, to feed to a new
    /// decoder later), in time and memory proportional to them.
    ///
    /// ```
    /// use concurrent_cuckoo::{ChunkDecoder, CuckooFilter};
    /// let bytes = CuckooFilter::with_capacity(100).to_bytes();
    /// let mut decoder = ChunkDecoder::new();
    /// decoder.feed(&bytes[..300])?;
    /// let mut saved = Vec::new();
    /// decoder.write_consumed(&mut saved)?; // an unfinished restore, saved
    /// assert_eq!(saved, bytes[..300]);
    /// let mut resumed = ChunkDecoder::new();
    /// resumed.feed(&saved)?;
    /// resumed.feed(&bytes[300..])?;
    /// assert!(resumed.is_complete());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// Any error of `out`, or [`io::ErrorKind::Other`] for a finished or
    /// failed decoder (nothing to write out).
    pub fn write_consumed(&self, out: &mut impl Write) -> io::Result<()> {
        match &self.state {
            State::Start(prefix) => out.write_all(prefix),
            State::Single(level) => level.write_taken(out),
            State::Container(c) => c.write_taken::<S>(out),
            State::Done(_) | State::Failed(_) | State::Gone => Err(io::Error::other(
                "the decoder is finished: its filter has the bytes",
            )),
        }
    }
}

impl Container {
    /// Takes in what it can of `input`; the filter once it is complete.
    fn take<S: PersistentHasher>(
        &mut self,
        input: &mut &[u8],
        options: ReadOptions,
    ) -> Result<Option<ScalableCuckooFilter<S>>, DecodeError> {
        let limit = options.limit;
        if self.head.is_none() {
            const FIXED: usize = ContainerHead::FIXED;
            if self.bytes.len() < FIXED {
                let n = input.len().min(FIXED - self.bytes.len());
                self.bytes.extend_from_slice(&input[..n]);
                *input = &input[n..];
                if self.bytes.len() < FIXED {
                    return Ok(None);
                }
            }
            let mut fixed = [0u8; FIXED];
            fixed.copy_from_slice(&self.bytes[..FIXED]);
            check_container_version(&fixed)?;
            let head = ContainerHead::parse_fixed(&fixed, S::ID)?;
            let n = input.len().min(head.len() - self.bytes.len());
            self.bytes.extend_from_slice(&input[..n]);
            *input = &input[n..];
            if self.bytes.len() < head.len() {
                return Ok(None);
            }
            self.indices = head.indices(
                &self.bytes[..ContainerHead::FIXED],
                &self.bytes[ContainerHead::FIXED..],
            )?;
            self.done_bytes = head.admit(limit)?;
            self.head = Some(head);
        }
        let head = self.head.clone().expect("parsed above");
        loop {
            if self.current.is_none() {
                let Some(&i) = self.indices.get(self.levels.len()) else {
                    break;
                };
                let (want, most) = head.level_size(i)?;
                let cap = level_cap(most, self.done_bytes, limit);
                let level = LevelDecoder::new(S::ID, options.limit(cap));
                self.current = Some((level, want, most));
            }
            let (level, want, most) = self.current.as_mut().expect("set above");
            let complete = level
                .take(input)
                .map_err(|e| level_error(e, *most, self.done_bytes, limit))?;
            if let Some(header) = level.header {
                head.check_level(&header, *want)?;
            }
            if !complete {
                return Ok(None);
            }
            let (level, _, _) = self.current.take().expect("set above");
            let (header, table) = level.finish()?;
            self.done_bytes += header.encoded_len();
            let i = self.indices[self.levels.len()];
            self.levels.push((i, Level::from_table(table)));
        }
        let levels = core::mem::take(&mut self.levels);
        head.assemble(levels, options.table_memory).map(Some)
    }

    fn write_taken<S: PersistentHasher>(&self, out: &mut impl Write) -> io::Result<()> {
        out.write_all(&self.bytes)?;
        let Some(head) = &self.head else {
            return Ok(());
        };
        for (_, level) in &self.levels {
            with_table!(&level.table, t => super::encode(t, S::ID, head.seed, out))?;
        }
        if let Some((level, _, _)) = &self.current {
            level.write_taken(out)?;
        }
        Ok(())
    }
}
