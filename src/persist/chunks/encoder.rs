//! [`ChunkEncoder`]: an encoding handed out a bounded piece at a time.

use crate::filter::{with_table, CuckooFilter, Table};
use crate::fingerprint::{BucketWord, Fingerprint};
use crate::hashing::PersistentHasher;
use crate::persist::encoded_header;
use crate::persist::format::CHECKSUM_LEN;
use crate::scalable::ScalableCuckooFilter;
use crate::table::RawTable;
use core::fmt;
use std::io;
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
        let prefix = crate::persist::scalable::container_header::<S>(filter, &levels);
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
