//! Saving and loading a windowed filter: format version 4 (`docs/format.md`,
//! "Version 4: a windowed filter"), the plain format's magic, header size,
//! body order and checksum, with the window's fields in the header.

use super::lanes::Layout;
use super::table::WindowTable;
use super::{WindowedBuilder, WindowedCuckooFilter};
use crate::error::{BuildError, DecodeError};
use crate::hashing::PersistentHasher;
use crate::persist::format::{MAGIC, MAX_HEADER_LEN};
use crate::persist::ReadOptions;
use crate::storage::TableMemory;
use std::io::{self, Read, Write};
use xxhash_rust::xxh3::Xxh3;

/// The format version of a windowed filter.
pub(crate) const V4_WINDOWED: u16 = 4;
/// Header bytes (the plain version 2's: the body starts 64-byte aligned).
pub(super) const HEADER: usize = MAX_HEADER_LEN;
/// Bytes of body `write_to` hands its writer at a time.
const CHUNK: usize = 64 << 10;

/// What a version-4 header records.
pub(super) struct Header {
    /// 16 or 32 (four or two lanes a bucket).
    pub(super) lane_bits: u8,
    pub(super) max_path: u8,
    pub(super) tag_bits: u8,
    pub(super) generations: u8,
    pub(super) buckets: u64,
    pub(super) generation: u64,
    pub(super) hasher_id: u32,
    pub(super) seed: u64,
}

impl Header {
    pub(super) fn encode(&self) -> [u8; HEADER] {
        let mut h = [0u8; HEADER];
        h[..8].copy_from_slice(&MAGIC);
        h[8..10].copy_from_slice(&V4_WINDOWED.to_le_bytes());
        h[10] = self.lane_bits;
        h[11] = 64 / self.lane_bits; // slots per bucket
        h[12] = self.max_path;
        h[13] = self.tag_bits;
        h[14] = self.generations;
        h[16..24].copy_from_slice(&self.buckets.to_le_bytes());
        h[24..32].copy_from_slice(&self.generation.to_le_bytes());
        h[32..36].copy_from_slice(&self.hasher_id.to_le_bytes());
        h[40..48].copy_from_slice(&self.seed.to_le_bytes());
        h
    }

    /// Parses and checks every field but the hasher's (`b` holds at least
    /// [`HEADER`] bytes).
    pub(super) fn parse(b: &[u8]) -> Result<Self, DecodeError> {
        let m = b.len().min(8);
        if b[..m] != MAGIC[..m] {
            return Err(DecodeError::BadMagic);
        }
        if b.len() < HEADER {
            return Err(DecodeError::Truncated);
        }
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let version = u16::from_le_bytes([b[8], b[9]]);
        match version {
            V4_WINDOWED => {}
            1 | 2 => {
                return Err(DecodeError::InvalidHeader(
                    "this encodes a CuckooFilter: decode it with CuckooFilter::from_bytes",
                ))
            }
            3 => {
                return Err(DecodeError::InvalidHeader(
                    "this encodes a ScalableCuckooFilter: decode it with ScalableCuckooFilter::from_bytes",
                ))
            }
            v => return Err(DecodeError::UnsupportedVersion(v)),
        }
        let h = Self {
            lane_bits: b[10],
            max_path: b[12],
            tag_bits: b[13],
            generations: b[14],
            buckets: u64_at(16),
            generation: u64_at(24),
            hasher_id: u32::from_le_bytes(b[32..36].try_into().expect("4 bytes")),
            seed: u64_at(40),
        };
        let invalid = DecodeError::InvalidHeader;
        if !matches!((b[10], b[11]), (16, 4) | (32, 2)) {
            return Err(invalid(
                "lane bits and slots per bucket must be 16 and 4, or 32 and 2",
            ));
        }
        if b[15] != 0 || b[36..40] != [0; 4] || b[48..64] != [0; 16] {
            return Err(invalid("reserved bytes must be zero"));
        }
        if !(1..=if h.lane_bits == 32 { 8 } else { 5 }).contains(&h.max_path) {
            return Err(invalid(
                "maximum path length must be 1 to 5 (16-bit lanes) or 1 to 8 (32-bit lanes)",
            ));
        }
        let most_tag_bits = super::lanes::max_tag_bits(u32::from(h.lane_bits));
        if !(2..=most_tag_bits).contains(&u32::from(h.tag_bits))
            || h.generations == 0
            || u32::from(h.generations) + 3 > 1 << h.tag_bits
        {
            return Err(invalid(
                "tag bits must be 2 to 5 (16-bit lanes) or 2 to 8 (32-bit lanes) and the window 1 to 2^tag_bits - 3",
            ));
        }
        if h.buckets < 2 || !h.buckets.is_multiple_of(2) || h.buckets > 1 << 32 {
            return Err(invalid("bucket count must be even and in [2, 2^32]"));
        }
        if h.generation > super::table::MAX_GENERATION {
            return Err(invalid("generation beyond the cap, 2^63 - 1"));
        }
        Ok(h)
    }

    /// Body and checksum bytes after the header.
    pub(super) fn rest_len(&self) -> u64 {
        self.buckets * 8 + 8
    }
}

impl<S: PersistentHasher> WindowedCuckooFilter<S> {
    /// The filter in the versioned, checksummed format of `docs/format.md`
    /// (version 4): its generation, window, buckets and hasher seed, as
    /// they were at one moment. Taken beside writers, as
    /// [`CuckooFilter::to_bytes`](crate::CuckooFilter::to_bytes) is: a
    /// writer waits for one stripe group's copy at most, lookups never;
    /// `advance` waits for the whole copy (it holds the advance lock), and
    /// a writer's help with the sweep is skipped meanwhile.
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(100).seed(1).build()?;
    /// f.insert("k")?;
    /// f.advance();
    /// let copy = WindowedCuckooFilter::from_bytes(&f.to_bytes())?;
    /// assert!(copy.contains("k") && copy.generation() == 1);
    /// copy.advance_to(4);
    /// assert!(!copy.contains("k"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Panics
    /// Never itself. Like any `Vec`, the encoding's allocation aborts the
    /// process when memory runs out: a host that must fail instead
    /// reserves [`encoded_len`](Self::encoded_len) bytes fallibly and calls
    /// [`write_to`](Self::write_to).
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![0u8; self.encoded_len()];
        let sum_at = out.len() - 8;
        let generation = self.table.snapshot_into(&mut out[HEADER..sum_at]);
        out[..HEADER].copy_from_slice(&self.header_at(generation).encode());
        let sum = xxhash_rust::xxh3::xxh3_64(&out[..sum_at]);
        out[sum_at..].copy_from_slice(&sum.to_le_bytes());
        out
    }

    /// Streams [`to_bytes`](Self::to_bytes) into `writer` through a
    /// 64 KiB buffer, holding the advance lock and every stripe lock
    /// meanwhile (writers and `advance` wait; lookups do not; `to_bytes`
    /// lets writers go on, at the cost of a copy in memory), with no
    /// copy of the table in memory: a host that must allocate fallibly
    /// reserves [`encoded_len`](Self::encoded_len) bytes itself and
    /// writes into them. As for the plain filter's `write_to`, a call
    /// from inside `writer` that writes to this filter deadlocks.
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(100).build()?;
    /// let mut file = Vec::new();
    /// file.try_reserve_exact(f.encoded_len())?;
    /// f.write_to(&mut file)?;
    /// assert_eq!(file, f.to_bytes());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// Any error of `writer`.
    pub fn write_to<W: Write>(&self, mut writer: W) -> io::Result<()> {
        let t = &self.table;
        t.with_snapshot(|generation, words| {
            let head = self.header_at(generation).encode();
            let mut sum = Xxh3::new();
            sum.update(&head);
            writer.write_all(&head)?;
            let mut chunk = Vec::with_capacity(CHUNK);
            for word in words {
                chunk.extend_from_slice(&word.to_le_bytes());
                if chunk.len() >= CHUNK {
                    sum.update(&chunk);
                    writer.write_all(&chunk)?;
                    chunk.clear();
                }
            }
            sum.update(&chunk);
            writer.write_all(&chunk)?;
            writer.write_all(&sum.digest().to_le_bytes())
        })
    }

    /// The header of an encoding at `generation`.
    pub(super) fn header_at(&self, generation: u64) -> Header {
        let t = &self.table;
        Header {
            lane_bits: t.layout.lane_bits() as u8,
            max_path: t.max_path as u8,
            tag_bits: t.layout.tag_bits() as u8,
            generations: t.layout.generations() as u8,
            buckets: t.buckets.len() as u64,
            generation,
            hasher_id: S::ID,
            seed: self.hasher.seed(),
        }
    }

    /// Saves the filter to the file at `path`, replacing it crash-safely as
    /// [`CuckooFilter::write_to_path`](crate::CuckooFilter::write_to_path)
    /// does: the encoding of [`to_bytes`](Self::to_bytes), taken beside
    /// writers, written to a temporary file beside it, synced, then renamed
    /// over it, so a crash leaves the old file or the new one, never part
    /// of either. Read it back with [`read_from`](WindowedCuckooFilter::read_from).
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(100).build()?;
    /// f.insert("k")?;
    /// let path = std::env::temp_dir().join(format!("windowed-doc-{}.ccf", std::process::id()));
    /// f.write_to_path(&path)?;
    /// let copy = WindowedCuckooFilter::read_from(std::fs::File::open(&path)?)?;
    /// assert!(copy.contains("k"));
    /// std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// Any error of creating, writing, syncing or renaming the file.
    pub fn write_to_path<P: AsRef<std::path::Path>>(&self, path: P) -> io::Result<()> {
        crate::persist::write_atomically(path.as_ref(), |file| file.write_all(&self.to_bytes()))
    }

    /// Decodes a filter written by [`to_bytes`](Self::to_bytes), as
    /// `options` say: a limit on the length the header may claim, where the
    /// table gets its memory, and the hasher `S`, rebuilt from the saved
    /// seed ([`ReadOptions::new`] is the default hasher;
    /// [`from_bytes`](WindowedCuckooFilter::from_bytes) is this with it).
    /// Refuses, never panics on, any damaged input: wrong magic or version,
    /// a field out of range, another hasher, a wrong length, a failed
    /// checksum. Lanes already expired at the saved generation are dropped
    /// (they are free space), so the sweep's schedule holds from the first
    /// advance.
    ///
    /// ```
    /// use concurrent_cuckoo::{DecodeError, ReadOptions, TableMemory, WindowedCuckooFilter};
    /// let f = WindowedCuckooFilter::builder().capacity(100).build()?;
    /// f.insert("k")?;
    /// let options = ReadOptions::new().table_memory(TableMemory::GlobalAllocator);
    /// let copy = WindowedCuckooFilter::from_bytes_with_options(&f.to_bytes(), options)?;
    /// assert!(copy.contains("k"));
    /// assert_eq!(copy.table_memory(), TableMemory::GlobalAllocator);
    /// let mut bytes = f.to_bytes();
    /// bytes[70] ^= 1;
    /// assert!(matches!(
    ///     WindowedCuckooFilter::from_bytes_with_options(&bytes, ReadOptions::new()),
    ///     Err(DecodeError::ChecksumMismatch)
    /// ));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// A [`DecodeError`] naming what is wrong
    /// ([`DecodeError::ExceedsLimit`] past the options' limit).
    pub fn from_bytes_with_options(
        bytes: &[u8],
        options: ReadOptions<S>,
    ) -> Result<Self, DecodeError> {
        let options = options.hasher();
        let header = Header::parse(bytes)?;
        admit(&header, options)?;
        let rest = &bytes[HEADER..];
        if (rest.len() as u64) < header.rest_len() {
            return Err(DecodeError::Truncated);
        }
        if rest.len() as u64 > header.rest_len() {
            return Err(DecodeError::TrailingBytes);
        }
        Self::decode_parts(header, &bytes[..HEADER], rest, options.table_memory)
    }

    /// Reads one filter from `reader` (exactly its bytes), as `options`
    /// say (see [`from_bytes_with_options`](Self::from_bytes_with_options);
    /// [`read_from`](WindowedCuckooFilter::read_from) is this with the
    /// default options): a header claiming more than their limit is refused
    /// before anything more is read ([`DecodeError::ExceedsLimit`]: for
    /// streams from an untrusted sender).
    ///
    /// ```
    /// use concurrent_cuckoo::{DecodeError, ReadOptions, WindowedCuckooFilter};
    /// let f = WindowedCuckooFilter::builder().capacity(100_000).build()?;
    /// f.insert("k")?;
    /// let bytes = f.to_bytes();
    /// let copy = WindowedCuckooFilter::read_from_with_options(&bytes[..], ReadOptions::new())?;
    /// assert!(copy.contains("k"));
    /// let refused = WindowedCuckooFilter::read_from_with_options(
    ///     &bytes[..],
    ///     ReadOptions::new().limit(4096),
    /// );
    /// assert!(matches!(refused, Err(DecodeError::ExceedsLimit { .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`from_bytes_with_options`](Self::from_bytes_with_options), and
    /// [`DecodeError::Io`].
    pub fn read_from_with_options<R: Read>(
        mut reader: R,
        options: ReadOptions<S>,
    ) -> Result<Self, DecodeError> {
        let options = options.hasher();
        let eof = |e: io::Error| match e.kind() {
            io::ErrorKind::UnexpectedEof => DecodeError::Truncated,
            _ => DecodeError::Io(e),
        };
        let mut head = [0u8; HEADER];
        reader.read_exact(&mut head).map_err(eof)?;
        let header = Header::parse(&head)?;
        admit(&header, options)?;
        // Grows as the bytes arrive: a header that claims more than the
        // stream holds costs no more memory than the stream.
        let mut rest = Vec::new();
        let want = header.rest_len();
        reader
            .take(want)
            .read_to_end(&mut rest)
            .map_err(DecodeError::Io)?;
        if (rest.len() as u64) < want {
            return Err(DecodeError::Truncated);
        }
        Self::decode_parts(header, &head, &rest, options.table_memory)
    }

    /// A filter of `header` filled from `body` (buckets, then checksum),
    /// its table from `memory`.
    fn decode_parts(
        header: Header,
        head: &[u8],
        rest: &[u8],
        memory: TableMemory,
    ) -> Result<Self, DecodeError> {
        if header.hasher_id != S::ID {
            return Err(DecodeError::HasherMismatch {
                expected: S::ID,
                found: header.hasher_id,
            });
        }
        let (body, sum) = rest.split_at(rest.len() - 8);
        let mut hasher = Xxh3::new();
        hasher.update(head);
        hasher.update(body);
        if hasher.digest().to_le_bytes() != sum {
            return Err(DecodeError::ChecksumMismatch);
        }
        let filter = Self::empty_of(&header, memory)?;
        let words = body
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")));
        restore(&filter.table, header.generation, words)?;
        Ok(filter)
    }
}

impl<S: PersistentHasher> WindowedCuckooFilter<S> {
    /// An empty filter of `header`'s geometry and hasher (checked by
    /// [`Header::parse`]), its table from `memory`.
    pub(super) fn empty_of(header: &Header, memory: TableMemory) -> Result<Self, DecodeError> {
        WindowedBuilder::new()
            .hasher(S::from_seed(header.seed))
            .bucket_count(header.buckets as usize)
            .lane_bits(u32::from(header.lane_bits))
            .tag_bits(u32::from(header.tag_bits))
            .generations(u64::from(header.generations))
            .max_path_len(usize::from(header.max_path))
            .table_memory(memory)
            .build()
            .map_err(|e| match e {
                BuildError::AllocationFailed(e) => DecodeError::AllocationFailed(e),
                _ => DecodeError::InvalidHeader("inconsistent window"),
            })
    }
}

/// Refuses a header that claims more bytes than the options' limit.
pub(super) fn admit(header: &Header, options: ReadOptions) -> Result<(), DecodeError> {
    let claimed = (HEADER as u64).saturating_add(header.rest_len());
    match options.limit {
        Some(limit) if claimed > limit => Err(DecodeError::ExceedsLimit { claimed, limit }),
        _ => Ok(()),
    }
}

impl<S> WindowedCuckooFilter<S> {
    /// Bytes of [`to_bytes`](WindowedCuckooFilter::to_bytes): the header,
    /// 8 per bucket, the checksum. Fixed at build.
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(1000).build()?;
    /// assert_eq!(f.encoded_len(), f.to_bytes().len());
    /// # Ok::<(), concurrent_cuckoo::BuildError>(())
    /// ```
    #[must_use]
    pub fn encoded_len(&self) -> usize {
        HEADER + self.table.buckets.len() * 8 + 8
    }
}

impl WindowedCuckooFilter {
    /// [`from_bytes_with_options`](WindowedCuckooFilter::from_bytes_with_options) with the default hasher.
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(100).seed(1).build()?;
    /// f.insert("k")?;
    /// f.advance();
    /// let copy = WindowedCuckooFilter::from_bytes(&f.to_bytes())?;
    /// assert!(copy.contains("k") && copy.generation() == 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`from_bytes_with_options`](WindowedCuckooFilter::from_bytes_with_options).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        WindowedCuckooFilter::from_bytes_with_options(bytes, ReadOptions::new())
    }

    /// [`read_from_with_options`](WindowedCuckooFilter::read_from_with_options) with the default
    /// hasher.
    ///
    /// ```
    /// use concurrent_cuckoo::WindowedCuckooFilter;
    /// let f = WindowedCuckooFilter::builder().capacity(100).build()?;
    /// f.insert("k")?;
    /// let bytes = f.to_bytes();
    /// assert!(WindowedCuckooFilter::read_from(&bytes[..])?.contains("k"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`read_from_with_options`](WindowedCuckooFilter::read_from_with_options).
    pub fn read_from<R: Read>(reader: R) -> Result<Self, DecodeError> {
        WindowedCuckooFilter::read_from_with_options(reader, ReadOptions::new())
    }
}

/// Fills a new table (no other thread sees it yet) with `words` at
/// `generation`, dropping expired lanes; refuses a lane without a
/// fingerprint or tagged after `generation` (no snapshot holds one).
fn restore(
    table: &WindowTable,
    generation: u64,
    words: impl Iterator<Item = u64>,
) -> Result<(), DecodeError> {
    let l = table.layout;
    let mut kept = Vec::with_capacity(table.buckets.len());
    for word in words {
        check_word(l, word, generation)?;
        kept.push(l.without_expired(word, generation));
    }
    table.restore(generation, kept);
    Ok(())
}

/// Refuses a saved bucket word with a lane without fingerprint or tagged
/// after `generation` (no snapshot holds one).
pub(super) fn check_word(l: Layout, word: u64, generation: u64) -> Result<(), DecodeError> {
    for slot in 0..l.slots() {
        let lane = l.get(word, slot);
        if lane != 0 && l.fp_of_lane(lane) == 0 {
            return Err(DecodeError::InvalidHeader(
                "body: a lane without fingerprint",
            ));
        }
    }
    if l.tagged(word, generation + 1) & l.occupied(word) != 0 {
        return Err(DecodeError::InvalidHeader(
            "body: a lane tagged after the saved generation",
        ));
    }
    Ok(())
}

#[cfg(feature = "serde")]
mod serde_impls {
    //! As the plain filter's: [`to_bytes`](WindowedCuckooFilter::to_bytes)
    //! as one byte string (or a sequence of `u8`), decoded with
    //! [`from_bytes_with_options`](WindowedCuckooFilter::from_bytes_with_options).

    use super::*;
    use crate::persist::serde_impls::{DecodeBytes, Encoded};
    use core::marker::PhantomData;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    impl<S: PersistentHasher> Serialize for WindowedCuckooFilter<S> {
        fn serialize<Ser: Serializer>(&self, serializer: Ser) -> Result<Ser::Ok, Ser::Error> {
            serializer.serialize_bytes(&self.to_bytes())
        }
    }

    impl<S: PersistentHasher> DecodeBytes for WindowedCuckooFilter<S> {
        fn decode_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
            WindowedCuckooFilter::from_bytes_with_options(bytes, ReadOptions::new().hasher())
        }
    }

    impl<'de, S: PersistentHasher> Deserialize<'de> for WindowedCuckooFilter<S> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_bytes(Encoded(PhantomData))
        }
    }
}
