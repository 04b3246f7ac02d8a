//! Persistence: the versioned, checksummed binary format of
//! `docs/format.md`, streaming encode and decode, and serde support.
//!
//! Layout (all integers little-endian):
//!
//! ```text
//! offset  size  field
//!      0     8  magic "\x89CUCKOO\n"
//!      8     2  format version (1)
//!     10     1  fingerprint width in bits (8, 16, 32)
//!     11     1  slots per bucket (4)
//!     12     1  max displacement path length (1..=5)
//!     13     3  reserved, zero
//!     16     8  bucket count (even, 2..=2^32)
//!     24     8  length: occupied slots (<= 4 * bucket count)
//!     32     4  hasher id (`PersistentHasher::ID`)
//!     36     4  reserved, zero
//!     40     8  hasher seed
//!     48     B  body: every bucket in order, each slot little-endian at
//!               the fingerprint width (B = buckets * 4 * bits / 8)
//!   48+B     8  checksum: XXH3-64 (seed 0) of bytes [0, 48 + B)
//! ```
//!
//! Decoding checks, in this order: magic, version, header fields, hasher
//! id, input length, checksum, and that the length equals the occupied
//! slots. Nothing is allocated before the header has been validated (and,
//! for [`CuckooFilter::from_bytes`], before the input is known to be exactly
//! as long as the header says).
//!
//! Not compiled under the loom cfg: loom's atomics only exist inside a model.

use crate::error::DecodeError;
use crate::filter::{CuckooFilter, Table};
use crate::fingerprint::{Fingerprint, SLOTS};
use crate::hashing::{DefaultHashBuilder, IndexMap, PersistentHasher};
use crate::table::{RawTable, MAX_PATH_LIMIT};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::Path;
use xxhash_rust::xxh3::Xxh3Default;

/// First eight bytes of every encoded filter. The high first byte catches
/// 7-bit transports and the trailing newline catches newline translation.
pub(crate) const MAGIC: [u8; 8] = *b"\x89CUCKOO\n";
/// The format version this release writes (and the only one it reads).
pub(crate) const VERSION: u16 = 1;
/// Bytes before the body.
pub(crate) const HEADER_LEN: usize = 48;
/// Bytes of the trailing checksum.
pub(crate) const CHECKSUM_LEN: usize = 8;
/// Encoding and decoding move the body through a buffer of this size: a
/// multiple of every bucket size, and no second copy of a large filter.
const CHUNK: usize = 64 * 1024;

/// A bucket's loaded word and its body bytes. Slot `i` of a word holds bits
/// `[i * bits, (i + 1) * bits)` (see `fingerprint.rs`), so the word's
/// little-endian bytes are its slots in order, each little-endian: exactly
/// the body layout, written and read a whole bucket at a time.
trait BucketWord: Copy + Eq {
    const ZERO: Self;
    fn put_le(self, out: &mut Vec<u8>);
    fn get_le(bytes: &[u8]) -> Self;
}

macro_rules! bucket_word {
    ($($t:ty),*) => {$(
        impl BucketWord for $t {
            const ZERO: Self = 0;
            #[inline(always)]
            fn put_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            #[inline(always)]
            fn get_le(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(bytes.try_into().expect("one bucket"))
            }
        }
    )*};
}
bucket_word!(u32, u64, u128);

/// The decoded, validated header.
#[derive(Clone, Copy, Debug)]
struct Header {
    bits: u8,
    max_path: u8,
    buckets: u64,
    len: u64,
    hasher_id: u32,
    seed: u64,
}

impl Header {
    fn encode(&self) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        h[0..8].copy_from_slice(&MAGIC);
        h[8..10].copy_from_slice(&VERSION.to_le_bytes());
        h[10] = self.bits;
        h[11] = SLOTS as u8;
        h[12] = self.max_path;
        h[16..24].copy_from_slice(&self.buckets.to_le_bytes());
        h[24..32].copy_from_slice(&self.len.to_le_bytes());
        h[32..36].copy_from_slice(&self.hasher_id.to_le_bytes());
        h[40..48].copy_from_slice(&self.seed.to_le_bytes());
        h
    }

    /// Parses the first `HEADER_LEN` bytes of an encoding, or a shorter
    /// prefix if the input ended early: the magic and version are checked
    /// on whatever is there, so a short foreign input is `BadMagic`, and a
    /// short prefix of a real encoding is `Truncated`.
    fn parse(b: &[u8]) -> Result<Self, DecodeError> {
        let m = b.len().min(MAGIC.len());
        if b[..m] != MAGIC[..m] {
            return Err(DecodeError::BadMagic);
        }
        if b.len() < 10 {
            return Err(DecodeError::Truncated);
        }
        let version = u16::from_le_bytes([b[8], b[9]]);
        if version != VERSION {
            return Err(DecodeError::UnsupportedVersion(version));
        }
        if b.len() < HEADER_LEN {
            return Err(DecodeError::Truncated);
        }
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let header = Self {
            bits: b[10],
            max_path: b[12],
            buckets: u64_at(16),
            len: u64_at(24),
            hasher_id: u32_at(32),
            seed: u64_at(40),
        };
        if !matches!(header.bits, 8 | 16 | 32) {
            return Err(DecodeError::InvalidHeader(
                "fingerprint width must be 8, 16 or 32 bits",
            ));
        }
        if usize::from(b[11]) != SLOTS {
            return Err(DecodeError::InvalidHeader("slots per bucket must be 4"));
        }
        if !(1..=MAX_PATH_LIMIT).contains(&usize::from(header.max_path)) {
            return Err(DecodeError::InvalidHeader(
                "max path length must be in 1..=5",
            ));
        }
        if b[13..16] != [0; 3] || u32_at(36) != 0 {
            return Err(DecodeError::InvalidHeader("reserved bytes must be zero"));
        }
        if header.buckets < 2
            || !header.buckets.is_multiple_of(2)
            || header.buckets > IndexMap::MAX_BUCKETS
        {
            return Err(DecodeError::InvalidHeader(
                "bucket count must be even and in [2, 2^32]",
            ));
        }
        if header.len > header.buckets * SLOTS as u64 {
            return Err(DecodeError::InvalidHeader(
                "length exceeds the slots of the table",
            ));
        }
        Ok(header)
    }

    /// Bytes of the body (cannot overflow: at most 2^32 * 4 * 4).
    fn body_len(&self) -> u64 {
        self.buckets * SLOTS as u64 * u64::from(self.bits / 8)
    }

    /// Bytes of the whole encoding.
    fn encoded_len(&self) -> u64 {
        (HEADER_LEN + CHECKSUM_LEN) as u64 + self.body_len()
    }
}

impl<S: PersistentHasher> CuckooFilter<S> {
    /// Encodes the filter in the binary format of `docs/format.md`: header
    /// (width, bucket count, length, hasher id and seed, ...), every bucket,
    /// and a checksum. [`from_bytes`](CuckooFilter::from_bytes) (or
    /// [`decode`](Self::decode) for another hasher) turns it back into a
    /// filter that answers every query exactly as this one does.
    ///
    /// The snapshot is consistent, as [`write_to`](Self::write_to) explains.
    /// For filters of many GiB, prefer `write_to`, which does not build a
    /// second copy in memory.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.encoded_len());
        if let Err(e) = self.write_to(&mut out) {
            // Writing to a Vec cannot fail; only the internal consistency
            // check in `encode` can.
            panic!("CuckooFilter::to_bytes: {e}");
        }
        out
    }

    /// Streams the encoding of [`to_bytes`](Self::to_bytes) into `writer`,
    /// through a 64 KiB buffer (so wrapping `writer` in a `BufWriter` is
    /// unnecessary), without a second copy of the filter in memory.
    ///
    /// # Consistency and blocking
    /// The snapshot holds every stripe lock from the first byte of the
    /// header to the last byte of the body: writers on other threads
    /// (`insert`, `remove`, `clear`) **wait** until it is written, while
    /// lookups go on undisturbed. The encoding is therefore one consistent
    /// state of the filter, with no torn buckets and a length that matches
    /// its contents. Because writers wait on the writer's speed, snapshot a
    /// busy filter to fast storage (or into memory with `to_bytes`) rather
    /// than to a slow network peer. `writer` must not modify this filter
    /// (that would deadlock).
    ///
    /// # Errors
    /// Any error of `writer`; what was written is then an incomplete
    /// encoding that decoding rejects.
    pub fn write_to<W: Write>(&self, mut writer: W) -> io::Result<()> {
        let (id, seed) = (S::ID, self.hasher.seed());
        match &self.table {
            Table::F8(t) => encode(t, 8, id, seed, &mut writer),
            Table::F16(t) => encode(t, 16, id, seed, &mut writer),
            Table::F32(t) => encode(t, 32, id, seed, &mut writer),
        }
    }

    /// Saves the filter to the file at `path` without ever leaving a
    /// half-written file under that name: the encoding of
    /// [`write_to`](Self::write_to) goes to a new temporary file in the same
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
        write_atomically(path.as_ref(), |file| self.write_to(file))
    }

    /// Decodes a filter encoded by [`to_bytes`](Self::to_bytes) with hasher
    /// `S`: the generic form of [`CuckooFilter::from_bytes`], for filters
    /// built with a [`PersistentHasher`] other than the default. The hasher
    /// is rebuilt from the recorded seed with [`PersistentHasher::from_seed`].
    /// The stripe count is chosen afresh for the bucket count, as for a new
    /// filter.
    ///
    /// # Errors
    /// A [`DecodeError`] if `bytes` is not exactly one intact encoding made
    /// with a hasher of the same [`ID`](PersistentHasher::ID)
    /// ([`DecodeError::HasherMismatch`] otherwise). Never panics, whatever
    /// the input, and allocates nothing before the header is validated and
    /// `bytes` is known to have the length the header implies.
    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        decode_stream(bytes, Some(bytes.len()))
    }

    /// Decodes a filter from `reader`, as written by
    /// [`write_to`](Self::write_to): the generic form of
    /// [`CuckooFilter::read_from`]. Reads exactly the encoding's bytes
    /// (anything after it stays in `reader`), in 64 KiB chunks straight into
    /// the table, so no `BufReader` and no second copy is needed.
    ///
    /// The table is allocated once the header has been validated (at most
    /// 2^32 buckets; on Linux, tables of 4 MiB and more are mapped lazily,
    /// so a lying header costs address space, not memory) and freed if the
    /// body then fails to arrive or to check out.
    ///
    /// # Errors
    /// As [`decode`](Self::decode); an input that ends early is
    /// [`DecodeError::Truncated`] and any other read error is
    /// [`DecodeError::Io`].
    pub fn decode_from<R: Read>(reader: R) -> Result<Self, DecodeError> {
        decode_stream(reader, None)
    }
}

impl<S> CuckooFilter<S> {
    /// Exact size in bytes of [`to_bytes`](Self::to_bytes)' output:
    /// `56 + bucket_count() * 4 * fingerprint_bits() / 8`.
    pub fn encoded_len(&self) -> usize {
        HEADER_LEN + CHECKSUM_LEN + self.capacity() * (self.fingerprint_bits() as usize / 8)
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
        Self::decode(bytes)
    }

    /// Decodes a filter from `reader`, as written by
    /// [`write_to`](Self::write_to), streaming it straight into the table.
    /// See [`decode_from`](Self::decode_from) for the details.
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes), plus [`DecodeError::Io`].
    pub fn read_from<R: Read>(reader: R) -> Result<Self, DecodeError> {
        Self::decode_from(reader)
    }
}

/// Writes a file through `write` into a fresh temporary file next to
/// `path`, syncs it, and renames it over `path`; removes the temporary file
/// if anything fails. See [`CuckooFilter::write_to_path`].
pub(crate) fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    // Unique per process and call, so concurrent saves never share one.
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(
        ".{}-{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let tmp = dir.join(tmp_name);
    let mut file = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
    let result = write(&mut file)
        .and_then(|()| file.sync_all())
        .and_then(|()| {
            drop(file);
            fs::rename(&tmp, path)
        });
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    // The rename is in the directory: sync it so it is durable too. Best
    // effort: some file systems refuse to open or sync a directory.
    #[cfg(unix)]
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Writes header, body and checksum of `t`, holding every stripe lock while
/// the header and body are produced.
fn encode<F: Fingerprint>(
    t: &RawTable<F>,
    bits: u8,
    hasher_id: u32,
    seed: u64,
    w: &mut impl Write,
) -> io::Result<()>
where
    F::Word: BucketWord,
{
    let width = usize::from(bits / 8);
    let all = t.stripes.lock_all();
    // Exact: every slot change updates its stripe's count under that
    // stripe's lock, and we hold them all.
    let len = t.stripes.len() as u64;
    let header = Header {
        bits,
        max_path: t.max_path as u8,
        buckets: t.bucket_count() as u64,
        len,
        hasher_id,
        seed,
    }
    .encode();
    let mut sum = Xxh3Default::new();
    sum.update(&header);
    w.write_all(&header)?;
    let limit = CHUNK.min(t.bucket_count() * SLOTS * width);
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

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> Result<usize, DecodeError> {
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

fn read_exact(r: &mut impl Read, buf: &mut [u8]) -> Result<(), DecodeError> {
    r.read_exact(buf).map_err(io_error)
}

fn io_error(e: io::Error) -> DecodeError {
    match e.kind() {
        io::ErrorKind::UnexpectedEof => DecodeError::Truncated,
        kind => DecodeError::Io(kind),
    }
}

/// Decodes one encoding from `r`. `exact_len` is the input's total length
/// when known (`from_bytes`): checked against the header before anything is
/// allocated.
fn decode_stream<S: PersistentHasher, R: Read>(
    mut r: R,
    exact_len: Option<usize>,
) -> Result<CuckooFilter<S>, DecodeError> {
    let mut head = [0u8; HEADER_LEN];
    let got = read_full(&mut r, &mut head)?;
    let header = Header::parse(&head[..got])?;
    if header.hasher_id != S::ID {
        return Err(DecodeError::HasherMismatch {
            expected: S::ID,
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
    if usize::try_from(total).is_err() {
        return Err(DecodeError::InvalidHeader(
            "the table is too large for this platform's address space",
        ));
    }
    let mut sum = Xxh3Default::new();
    sum.update(&head);
    let table = match header.bits {
        8 => Table::F8(decode_table(&header, &mut r, &mut sum)?),
        16 => Table::F16(decode_table(&header, &mut r, &mut sum)?),
        _ => Table::F32(decode_table(&header, &mut r, &mut sum)?),
    };
    Ok(CuckooFilter {
        table,
        hasher: S::from_seed(header.seed),
    })
}

/// Allocates the table of a validated header, fills it from the body in
/// `r`, checks the checksum that follows and the length, and sets the
/// stripes' counts.
fn decode_table<F: Fingerprint>(
    header: &Header,
    r: &mut impl Read,
    sum: &mut Xxh3Default,
) -> Result<RawTable<F>, DecodeError>
where
    F::Word: BucketWord,
{
    let width = usize::from(header.bits / 8);
    debug_assert_eq!(width, core::mem::size_of::<F>());
    // Fits: `decode_stream` checked the whole encoding's length does.
    let buckets = header.buckets as usize;
    let t = RawTable::<F>::new(buckets, None, None, usize::from(header.max_path))
        .map_err(|e| DecodeError::AllocationFailed { bytes: e.bytes })?;
    let bucket_bytes = SLOTS * width;
    let mut chunk = vec![0u8; CHUNK.min(buckets * bucket_bytes)];
    let mut counts = vec![0i64; t.stripes.count()];
    let mut occupied = 0u64;
    let mut next = 0usize;
    while next < buckets {
        let n = (chunk.len() / bucket_bytes).min(buckets - next);
        let bytes = &mut chunk[..n * bucket_bytes];
        read_exact(r, bytes)?;
        sum.update(bytes);
        for (i, raw) in bytes.chunks_exact(bucket_bytes).enumerate() {
            let word = F::Word::get_le(raw);
            if word == F::Word::ZERO {
                continue; // the new table is already empty
            }
            let index = next + i;
            let bucket = &t.buckets[index];
            for s in 0..SLOTS {
                let fp = F::slot(word, s);
                if fp != F::EMPTY {
                    F::store_slot(bucket, F::load(bucket), s, fp);
                }
            }
            let here = F::occupied(word);
            counts[t.stripes.stripe_of(index)] += here as i64;
            occupied += here as u64;
        }
        next += n;
    }
    let mut stored = [0u8; CHECKSUM_LEN];
    read_exact(r, &mut stored)?;
    if u64::from_le_bytes(stored) != sum.digest() {
        return Err(DecodeError::ChecksumMismatch);
    }
    if occupied != header.len {
        return Err(DecodeError::InvalidHeader(
            "length does not match the occupied slots",
        ));
    }
    t.stripes.lock_all().set_counts(&counts);
    Ok(t)
}

#[cfg(feature = "serde")]
mod serde_impls {
    //! `Serialize` writes [`CuckooFilter::to_bytes`] as one byte string;
    //! `Deserialize` accepts a byte string (or, for formats such as JSON
    //! that spell bytes as a sequence of numbers, a sequence of `u8`) and
    //! decodes it with [`CuckooFilter::decode`].

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
            deserializer.deserialize_bytes(EncodedFilter(PhantomData))
        }
    }

    struct EncodedFilter<S>(PhantomData<S>);

    impl<'de, S: PersistentHasher> Visitor<'de> for EncodedFilter<S> {
        type Value = CuckooFilter<S>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("the bytes of an encoded cuckoo filter")
        }

        fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<Self::Value, E> {
            CuckooFilter::decode(bytes).map_err(E::custom)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            // The hint comes from the input: cap what it may reserve.
            let mut bytes = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
            while let Some(b) = seq.next_element::<u8>()? {
                bytes.push(b);
            }
            CuckooFilter::decode(&bytes).map_err(de::Error::custom)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory of its own under the system temp dir, removed on drop.
    struct TempDir(std::path::PathBuf);

    impl TempDir {
        fn new(tag: &str) -> Self {
            use std::sync::atomic::{AtomicU64, Ordering};
            static N: AtomicU64 = AtomicU64::new(0);
            let dir = std::env::temp_dir().join(format!(
                "ccf-{tag}-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            fs::create_dir_all(&dir).unwrap();
            Self(dir)
        }

        fn entries(&self) -> Vec<String> {
            let mut names: Vec<String> = fs::read_dir(&self.0)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary() {
        let dir = TempDir::new("atomic");
        let path = dir.0.join("filter.ccf");
        fs::write(&path, b"old contents").unwrap();
        // The writer fails half-way, as a full disk would.
        let err = write_atomically(&path, |f| {
            f.write_all(b"half of a new encoding")?;
            Err(io::Error::other("disk full"))
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "disk full");
        assert_eq!(fs::read(&path).unwrap(), b"old contents");
        assert_eq!(
            dir.entries(),
            ["filter.ccf"],
            "the temporary file is removed"
        );
        // A successful write replaces the file, again leaving nothing else.
        write_atomically(&path, |f| f.write_all(b"new contents")).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new contents");
        assert_eq!(dir.entries(), ["filter.ccf"]);
    }

    #[test]
    fn a_path_without_a_file_name_is_refused() {
        let err = write_atomically(Path::new("/"), |_| Ok(())).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }
}
