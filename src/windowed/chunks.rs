//! A windowed filter's encoding handed out and taken in a bounded piece
//! at a time, straight from and into the live table: what a server that
//! must not stall or hold a second copy (the Redis module's
//! `CF.SCANDUMP`, `CF.LOADCHUNK` and RDB callbacks) needs to move a
//! filter of many GiB. The windowed counterparts of
//! [`ChunkEncoder`](crate::ChunkEncoder) and
//! [`ChunkDecoder`](crate::ChunkDecoder); the bytes are exactly
//! [`to_bytes`](WindowedCuckooFilter::to_bytes)'s (`persist.rs`).

use super::persist::{admit, check_word, Header, HEADER};
use super::WindowedCuckooFilter;
use crate::error::DecodeError;
use crate::hashing::{DefaultHashBuilder, PersistentHasher};
use crate::persist::ReadOptions;
use core::fmt;
use std::io;
use xxhash_rust::xxh3::Xxh3;

/// Bytes of the checksum that ends an encoding.
const CHECKSUM: usize = 8;

fn changed(what: &str) -> io::Error {
    io::Error::other(format!(
        "the filter changed while it was being encoded ({what}): start again"
    ))
}

/// Produces a [`WindowedCuckooFilter`]'s encoding (the bytes of its
/// [`to_bytes`](WindowedCuckooFilter::to_bytes)) a bounded piece at a
/// time, read from the live table: no copy of it is made, and each call
/// costs its piece (and, for a checksum after a [`seek`](Self::seek), one
/// pass over the table).
///
/// The encoder keeps no reference to the filter: each
/// [`next_chunk`](Self::next_chunk) takes it again. **The filter must not
/// change from the encoder's creation to its last chunk** (no insert on
/// any thread): the pieces would mix two states. A change of generation
/// or of the table is refused with an error; an insert is the caller's to
/// prevent, for example by counting writes. Sweeps
/// ([`sweep_ahead`](WindowedCuckooFilter::sweep_ahead)) change nothing an
/// encoding holds, and may run between chunks.
///
/// ```
/// use concurrent_cuckoo::{WindowedChunkEncoder, WindowedCuckooFilter};
/// let f = WindowedCuckooFilter::builder().capacity(10_000).build()?;
/// f.insert("k")?;
/// let mut encoder = WindowedChunkEncoder::new(&f);
/// let mut bytes = Vec::new();
/// while !encoder.is_done() {
///     encoder.next_chunk(&f, 1000, &mut bytes)?; // at most 1000 bytes a call
/// }
/// assert_eq!(bytes, f.to_bytes());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct WindowedChunkEncoder {
    head: [u8; HEADER],
    generation: u64,
    buckets: usize,
    /// Bytes handed out so far.
    pos: u64,
    /// The checksum of the bytes before `pos`, where `hashed`.
    sum: Xxh3,
    /// Whether `sum` covers every byte before `pos` (false after a seek
    /// past the header).
    hashed: bool,
    /// The encoding's checksum, once known.
    digest: Option<u64>,
}

impl fmt::Debug for WindowedChunkEncoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WindowedChunkEncoder")
            .field("position", &self.pos)
            .field("total_len", &self.total_len())
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
}

impl WindowedChunkEncoder {
    /// An encoder of `filter`'s encoding at its current generation.
    #[must_use]
    pub fn new<S: PersistentHasher>(filter: &WindowedCuckooFilter<S>) -> Self {
        let generation = filter.generation();
        Self {
            head: filter.header_at(generation).encode(),
            generation,
            buckets: filter.table.buckets.len(),
            pos: 0,
            sum: Xxh3::new(),
            hashed: true,
            digest: None,
        }
    }

    /// Bytes of the whole encoding
    /// ([`encoded_len`](WindowedCuckooFilter::encoded_len)).
    #[must_use]
    pub fn total_len(&self) -> u64 {
        (HEADER + CHECKSUM) as u64 + self.buckets as u64 * 8
    }

    /// Bytes of the header before the buckets (64): what a host handing
    /// the encoding out in pieces may send first on its own.
    #[must_use]
    pub fn header_len(&self) -> u64 {
        HEADER as u64
    }

    /// The generation the encoding is at.
    #[must_use]
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Bytes handed out so far.
    #[must_use]
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// Whether every byte has been handed out.
    #[must_use]
    pub fn is_done(&self) -> bool {
        self.pos == self.total_len()
    }

    /// Bytes this encoder holds (the hasher's state included): a host
    /// that keeps encoders between calls reports them with its memory.
    #[must_use]
    pub fn memory_usage(&self) -> usize {
        core::mem::size_of::<Self>()
    }

    /// Moves to byte `position` of the encoding (at most
    /// [`total_len`](Self::total_len)), forwards or back, producing
    /// nothing before it. The checksum at the end covers the bytes
    /// skipped: known if this encoder (or one whose digest it adopted:
    /// [`adopt_digest`](Self::adopt_digest)) handed out every byte before
    /// it once, else computed by one pass over the table when reached.
    ///
    /// ```
    /// use concurrent_cuckoo::{WindowedChunkEncoder, WindowedCuckooFilter};
    /// let f = WindowedCuckooFilter::builder().capacity(1000).build()?;
    /// f.insert("k")?;
    /// let whole = f.to_bytes();
    /// let mut encoder = WindowedChunkEncoder::new(&f);
    /// encoder.seek(100)?;
    /// let mut out = Vec::new();
    /// encoder.next_chunk(&f, whole.len(), &mut out)?;
    /// assert_eq!(out, whole[100..]);
    /// assert!(encoder.seek(whole.len() as u64 + 1).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// `InvalidInput` for a position past the end; the encoder is
    /// unchanged.
    pub fn seek(&mut self, position: u64) -> io::Result<()> {
        if position > self.total_len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a position past the end of the encoding",
            ));
        }
        self.pos = position;
        self.sum = Xxh3::new();
        let into_header = (position as usize).min(HEADER);
        self.sum.update(&self.head[..into_header]);
        self.hashed = position <= HEADER as u64;
        Ok(())
    }

    /// Takes `other`'s checksum if it knows it and encodes the same state
    /// (the same header: the same generation of a filter unchanged since).
    pub fn adopt_digest(&mut self, other: &WindowedChunkEncoder) {
        if self.digest.is_none() && self.head == other.head {
            self.digest = other.digest;
        }
    }

    /// Appends the next at most `max` bytes (`max > 0`; fewer only at the
    /// end) of `filter`'s encoding, the filter this encoder was made from,
    /// to `out`; returns how many.
    ///
    /// # Errors
    /// If `filter`'s generation or table is not the encoder's (it
    /// advanced, or it is another filter).
    pub fn next_chunk<S>(
        &mut self,
        filter: &WindowedCuckooFilter<S>,
        max: usize,
        out: &mut Vec<u8>,
    ) -> io::Result<usize> {
        assert!(max > 0, "a chunk holds at least one byte");
        let table = &filter.table;
        if table.buckets.len() != self.buckets {
            return Err(changed("another table"));
        }
        if filter.generation() != self.generation {
            return Err(changed("its generation"));
        }
        let start = out.len();
        let body_end = (HEADER + self.buckets * 8) as u64;
        let want = (max as u64).min(self.total_len() - self.pos);
        let end = self.pos + want;
        while self.pos < end {
            let before = out.len();
            if self.pos < HEADER as u64 {
                let to = end.min(HEADER as u64) as usize;
                out.extend_from_slice(&self.head[self.pos as usize..to]);
            } else if self.pos < body_end {
                let at = self.pos as usize - HEADER;
                let (mut bucket, skip) = (at / 8, at % 8);
                let stop = end.min(body_end) as usize - HEADER;
                let word = table.canonical_word(bucket, self.generation).to_le_bytes();
                out.extend_from_slice(&word[skip..(stop - bucket * 8).min(8)]);
                bucket += 1;
                while (bucket + 1) * 8 <= stop {
                    let word = table.canonical_word(bucket, self.generation);
                    out.extend_from_slice(&word.to_le_bytes());
                    bucket += 1;
                }
                if bucket * 8 < stop {
                    let word = table.canonical_word(bucket, self.generation).to_le_bytes();
                    out.extend_from_slice(&word[..stop - bucket * 8]);
                }
            } else {
                let digest = self.digest(filter).to_le_bytes();
                let from = (self.pos - body_end) as usize;
                out.extend_from_slice(&digest[from..(end - body_end) as usize]);
            }
            if self.hashed && self.pos < body_end {
                let hashed = (body_end - self.pos).min((out.len() - before) as u64) as usize;
                self.sum.update(&out[before..before + hashed]);
            }
            self.pos += (out.len() - before) as u64;
            if self.hashed && self.pos == body_end {
                self.digest = Some(self.sum.digest());
            }
        }
        Ok(out.len() - start)
    }

    /// The encoding's checksum: known, or one pass over the table.
    fn digest<S>(&mut self, filter: &WindowedCuckooFilter<S>) -> u64 {
        if let Some(digest) = self.digest {
            return digest;
        }
        let mut sum = Xxh3::new();
        sum.update(&self.head);
        let mut buffer = Vec::with_capacity(HASH_BUFFER);
        for bucket in 0..self.buckets {
            let word = filter.table.canonical_word(bucket, self.generation);
            buffer.extend_from_slice(&word.to_le_bytes());
            if buffer.len() >= HASH_BUFFER {
                sum.update(&buffer);
                buffer.clear();
            }
        }
        sum.update(&buffer);
        let digest = sum.digest();
        self.digest = Some(digest);
        digest
    }
}

/// Bytes handed to XXH3 at a time by a pass over the table.
const HASH_BUFFER: usize = 16 << 10;

/// Builds a [`WindowedCuckooFilter`] from its encoding fed in pieces of any
/// sizes, in order, straight into its table: the table (allocated when
/// the header has arrived, as the options say) is the only copy, and
/// each piece costs its own length. It checks what
/// [`from_bytes_with_options`](WindowedCuckooFilter::from_bytes_with_options)
/// checks, piece by piece (the header and each bucket as it arrives, the
/// checksum at the end), and also refuses a lane that had expired at the
/// saved generation ([`to_bytes`](WindowedCuckooFilter::to_bytes) never
/// writes one), so that the bytes it took are exactly its table's:
/// [`write_received`](Self::write_received) hands them out again (a
/// server saving a restore in progress).
///
/// ```
/// use concurrent_cuckoo::{ReadOptions, WindowedChunkDecoder, WindowedCuckooFilter};
/// let f = WindowedCuckooFilter::builder().capacity(10_000).build()?;
/// f.insert("k")?;
/// let bytes = f.to_bytes();
/// let mut decoder = WindowedChunkDecoder::new(ReadOptions::new());
/// for piece in bytes.chunks(1000) {
///     decoder.feed(piece)?;
/// }
/// let copy = decoder.finish()?;
/// assert!(copy.contains("k"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct WindowedChunkDecoder<S = DefaultHashBuilder> {
    options: ReadOptions<S>,
    /// The header's bytes so far.
    head: Vec<u8>,
    /// The filter being filled, once the header arrived, with its saved
    /// generation.
    filter: Option<(WindowedCuckooFilter<S>, u64)>,
    /// The bytes of the bucket being received.
    word: Vec<u8>,
    /// Buckets filled.
    filled: usize,
    /// The checksum's bytes so far.
    tail: Vec<u8>,
    sum: Xxh3,
    consumed: u64,
}

impl<S> fmt::Debug for WindowedChunkDecoder<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WindowedChunkDecoder")
            .field("consumed", &self.consumed)
            .field("total_len", &self.total_len())
            .finish_non_exhaustive()
    }
}

impl<S> WindowedChunkDecoder<S> {
    /// Bytes of the whole encoding, once its header has arrived.
    #[must_use]
    pub fn total_len(&self) -> Option<u64> {
        let (filter, _) = self.filter.as_ref()?;
        Some(filter.encoded_len() as u64)
    }
}

impl<S: PersistentHasher> WindowedChunkDecoder<S> {
    /// A decoder taking `options`: the most bytes a header may claim,
    /// where the table gets its memory, the hasher.
    #[must_use]
    pub fn new(options: ReadOptions<S>) -> Self {
        Self {
            options,
            head: Vec::with_capacity(HEADER),
            filter: None,
            word: Vec::with_capacity(8),
            filled: 0,
            tail: Vec::with_capacity(CHECKSUM),
            sum: Xxh3::new(),
            consumed: 0,
        }
    }

    /// Bytes taken so far.
    #[must_use]
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// Whether every byte has arrived (then [`finish`](Self::finish)
    /// checks the checksum).
    #[must_use]
    pub fn is_complete(&self) -> bool {
        self.total_len() == Some(self.consumed)
    }

    /// Bytes this decoder holds: its buffers and, once the header
    /// arrived, the table being filled.
    #[must_use]
    pub fn memory_usage(&self) -> usize {
        core::mem::size_of::<Self>()
            + self.head.capacity()
            + self.word.capacity()
            + self.tail.capacity()
            + self.filter.as_ref().map_or(0, |(f, _)| f.memory_usage())
    }

    /// Takes the next bytes of the encoding. On an error the decoder is
    /// of no more use (drop it).
    ///
    /// # Errors
    /// A [`DecodeError`] naming what is wrong: the header's (as
    /// [`from_bytes_with_options`](WindowedCuckooFilter::from_bytes_with_options)),
    /// [`DecodeError::ExceedsLimit`] past the options' limit,
    /// [`DecodeError::AllocationFailed`] for the table,
    /// [`DecodeError::InvalidHeader`] for a bad bucket,
    /// [`DecodeError::TrailingBytes`] past the end.
    pub fn feed(&mut self, mut bytes: &[u8]) -> Result<(), DecodeError> {
        if self.filter.is_none() {
            let n = bytes.len().min(HEADER - self.head.len());
            self.head.extend_from_slice(&bytes[..n]);
            self.consumed += n as u64;
            bytes = &bytes[n..];
            if self.head.len() < HEADER {
                // A wrong magic is refused at once.
                return Header::parse(&self.head).map(|_| ()).or_else(|e| match e {
                    DecodeError::Truncated => Ok(()),
                    e => Err(e),
                });
            }
            self.begin()?;
        }
        let Some((filter, generation)) = &self.filter else {
            return Ok(());
        };
        let buckets = filter.table.buckets.len();
        let layout = filter.table.layout;
        while !bytes.is_empty() {
            if self.filled == buckets {
                let n = bytes.len().min(CHECKSUM - self.tail.len());
                if n == 0 {
                    return Err(DecodeError::TrailingBytes);
                }
                self.tail.extend_from_slice(&bytes[..n]);
                self.consumed += n as u64;
                bytes = &bytes[n..];
                continue;
            }
            let n = bytes.len().min(8 - self.word.len());
            self.word.extend_from_slice(&bytes[..n]);
            self.consumed += n as u64;
            bytes = &bytes[n..];
            if self.word.len() == 8 {
                let word = u64::from_le_bytes(self.word[..].try_into().expect("8 bytes"));
                check_word(layout, word, *generation)?;
                if layout.without_expired(word, *generation) != word {
                    return Err(DecodeError::InvalidHeader(
                        "body: a lane expired at the saved generation",
                    ));
                }
                self.sum.update(&self.word);
                filter.table.restore_word(self.filled, word);
                self.filled += 1;
                self.word.clear();
            }
        }
        Ok(())
    }

    /// The header arrived: checked, admitted, the table allocated.
    fn begin(&mut self) -> Result<(), DecodeError> {
        let header = Header::parse(&self.head)?;
        if header.hasher_id != S::ID {
            return Err(DecodeError::HasherMismatch {
                expected: S::ID,
                found: header.hasher_id,
            });
        }
        admit(&header, self.options.hasher())?;
        let filter = WindowedCuckooFilter::<S>::empty_of(&header, self.options.table_memory)?;
        filter.table.restore_generation(header.generation);
        self.sum.update(&self.head);
        self.filter = Some((filter, header.generation));
        Ok(())
    }

    /// The filter, once every byte arrived and the checksum matched.
    ///
    /// # Errors
    /// [`DecodeError::Truncated`] before the last byte,
    /// [`DecodeError::ChecksumMismatch`].
    pub fn finish(self) -> Result<WindowedCuckooFilter<S>, DecodeError> {
        if !self.is_complete() {
            return Err(DecodeError::Truncated);
        }
        let Some((filter, _)) = self.filter else {
            return Err(DecodeError::Truncated);
        };
        if self.sum.digest().to_le_bytes()[..] != self.tail[..] {
            return Err(DecodeError::ChecksumMismatch);
        }
        Ok(filter)
    }

    /// Writes the bytes taken so far, exactly as they arrived (read back
    /// from the table being filled: no copy of them is kept).
    ///
    /// # Errors
    /// Any error of `out`.
    pub fn write_received(&self, mut out: impl io::Write) -> io::Result<()> {
        out.write_all(&self.head)?;
        if let Some((filter, generation)) = &self.filter {
            let mut buffer = Vec::with_capacity(HASH_BUFFER);
            for bucket in 0..self.filled {
                let word = filter.table.canonical_word(bucket, *generation);
                buffer.extend_from_slice(&word.to_le_bytes());
                if buffer.len() >= HASH_BUFFER {
                    out.write_all(&buffer)?;
                    buffer.clear();
                }
            }
            out.write_all(&buffer)?;
        }
        out.write_all(&self.word)?;
        out.write_all(&self.tail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WindowedCuckooFilter;

    fn filled() -> WindowedCuckooFilter {
        let f = WindowedCuckooFilter::builder()
            .capacity(5000)
            .generations(3)
            .seed(9)
            .build()
            .unwrap();
        for g in 0..5u64 {
            for k in 0..900u64 {
                f.insert(&(g * 1000 + k)).unwrap();
            }
            f.advance();
        }
        f
    }

    /// Every piece size, from every seek position of a sample: the bytes
    /// of `to_bytes`, the checksum known or recomputed.
    #[test]
    fn chunks_of_any_size_from_any_position_are_to_bytes() {
        let f = filled();
        let whole = f.to_bytes();
        for max in [1, 3, 7, 8, 9, 64, 65, 1000, whole.len()] {
            let mut e = WindowedChunkEncoder::new(&f);
            let mut out = Vec::new();
            while !e.is_done() {
                let n = e.next_chunk(&f, max, &mut out).unwrap();
                assert!(n > 0 && n <= max);
            }
            assert_eq!(out, whole, "max {max}");
        }
        let total = whole.len() as u64;
        for at in [
            0,
            1,
            63,
            64,
            65,
            71,
            72,
            1001,
            total - 9,
            total - 8,
            total - 3,
            total,
        ] {
            let mut e = WindowedChunkEncoder::new(&f);
            e.seek(at).unwrap();
            let mut out = Vec::new();
            while !e.is_done() {
                e.next_chunk(&f, 777, &mut out).unwrap();
            }
            assert_eq!(out, whole[at as usize..], "from {at}");
        }
    }

    #[test]
    fn an_advance_between_chunks_is_refused_and_a_sweep_is_not() {
        let f = filled();
        let whole = f.to_bytes();
        let mut e = WindowedChunkEncoder::new(&f);
        let mut out = Vec::new();
        e.next_chunk(&f, 100, &mut out).unwrap();
        while f.sweep_ahead(64) > 0 {}
        e.next_chunk(&f, whole.len(), &mut out).unwrap();
        assert_eq!(out, whole);
        let mut e = WindowedChunkEncoder::new(&f);
        e.next_chunk(&f, 100, &mut Vec::new()).unwrap();
        f.advance();
        assert!(e.next_chunk(&f, 100, &mut Vec::new()).is_err());
    }

    #[test]
    fn a_digest_adopted_saves_the_pass() {
        let f = filled();
        let whole = f.to_bytes();
        let mut first = WindowedChunkEncoder::new(&f);
        first.next_chunk(&f, whole.len(), &mut Vec::new()).unwrap();
        let mut later = WindowedChunkEncoder::new(&f);
        later.adopt_digest(&first);
        assert!(later.digest.is_some());
        later.seek(whole.len() as u64 - 8).unwrap();
        let mut tail = Vec::new();
        later.next_chunk(&f, 8, &mut tail).unwrap();
        assert_eq!(tail, whole[whole.len() - 8..]);
    }

    /// Pieces of every size decode to the same filter, whose received
    /// bytes at every point are the prefix fed.
    #[test]
    fn pieces_of_any_size_decode_and_are_written_back_as_received() {
        let f = filled();
        let whole = f.to_bytes();
        for size in [1, 5, 8, 63, 64, 100, 4096, whole.len()] {
            let mut d = WindowedChunkDecoder::new(ReadOptions::new());
            let mut fed = 0;
            for piece in whole.chunks(size) {
                d.feed(piece).unwrap();
                fed += piece.len();
                let mut back = Vec::new();
                d.write_received(&mut back).unwrap();
                assert_eq!(back, whole[..fed], "size {size} at {fed}");
            }
            assert!(d.is_complete());
            assert!(d.memory_usage() >= f.memory_usage() / 2);
            let copy = d.finish().unwrap();
            assert_eq!(copy.to_bytes(), whole, "size {size}");
            assert_eq!(copy.len(), f.len());
        }
    }

    #[test]
    fn damage_is_refused() {
        let f = filled();
        let whole = f.to_bytes();
        let decode = |bytes: &[u8]| {
            let mut d = WindowedChunkDecoder::new(ReadOptions::new());
            d.feed(bytes)?;
            d.finish()
        };
        assert!(decode(&whole).is_ok());
        assert!(matches!(
            decode(&whole[..whole.len() - 1]),
            Err(DecodeError::Truncated)
        ));
        let mut longer = whole.clone();
        longer.push(0);
        assert!(matches!(decode(&longer), Err(DecodeError::TrailingBytes)));
        let mut flipped = whole.clone();
        flipped[whole.len() - 1] ^= 1;
        assert!(matches!(
            decode(&flipped),
            Err(DecodeError::ChecksumMismatch)
        ));
        assert!(matches!(
            decode(b"not a filter at all"),
            Err(DecodeError::BadMagic)
        ));
        let limited = WindowedChunkDecoder::new(ReadOptions::new().limit(100)).feed(&whole);
        assert!(matches!(limited, Err(DecodeError::ExceedsLimit { .. })));
        // Every bit of the body flipped: refused, never a panic; a lane
        // left expired at the saved generation too.
        for bit in (HEADER * 8..whole.len() * 8).step_by(97) {
            let mut damaged = whole.clone();
            damaged[bit / 8] ^= 1 << (bit % 8);
            assert!(decode(&damaged).is_err(), "bit {bit}");
        }
    }
}
