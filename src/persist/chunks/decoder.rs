//! [`ChunkDecoder`]: an encoding taken in a bounded piece at a time.

use crate::error::DecodeError;
use crate::filter::{with_table, CuckooFilter, Table};
use crate::fingerprint::Fingerprint;
use crate::hashing::{DefaultHashBuilder, PersistentHasher};
use crate::persist::format::{
    Header, CHECKSUM_LEN, MAX_HEADER_LEN, PREFIX_LEN, V1, V2, V3_SCALABLE,
};
use crate::persist::scalable::{check_container_version, level_cap, level_error, ContainerHead};
use crate::persist::{admit_header, ReadOptions, TableFill};
use crate::scalable::{Level, ScalableCuckooFilter};
use crate::storage::TableMemory;
use core::fmt;
use core::marker::PhantomData;
use std::io::{self, Write};
use xxhash_rust::xxh3::Xxh3Default;

/// What a [`ChunkDecoder`] decoded: a single filter or a growing one,
/// whichever the encoding holds.
// Made once per decode and unpacked at once: boxing the larger variant
// would only add an allocation.
#[allow(clippy::large_enum_variant)]
#[non_exhaustive]
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
            let want = crate::persist::format::header_len(Header::version_of(&self.head)?);
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
/// any sizes: the counterpart of [`ChunkEncoder`](crate::ChunkEncoder), checking exactly what
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
        Self::with_options(ReadOptions::new())
    }
}

impl Default for ChunkDecoder<DefaultHashBuilder> {
    fn default() -> Self {
        Self::new()
    }
}

impl<S: PersistentHasher> ChunkDecoder<S> {
    /// A decoder as `options` say: a bound on what the headers may claim,
    /// where the tables get their memory, and the hasher `S` the encoding
    /// was made with (rebuilt from the seed it holds;
    /// [`ReadOptions::hasher`] names one other than the default).
    ///
    /// ```
    /// use concurrent_cuckoo::{ChunkDecoder, CuckooFilter, DecodedFilter, ReadOptions, TableMemory};
    /// let filter = CuckooFilter::with_capacity(100);
    /// let options = ReadOptions::new().limit(1 << 20).table_memory(TableMemory::GlobalAllocator);
    /// let mut decoder = ChunkDecoder::with_options(options);
    /// decoder.feed(&filter.to_bytes())?;
    /// assert!(matches!(decoder.finish()?, DecodedFilter::Filter(_)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_options(options: ReadOptions<S>) -> Self {
        Self {
            state: State::Start(Vec::with_capacity(PREFIX_LEN)),
            consumed: 0,
            options: options.hasher(),
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
                    let version = crate::persist::format::any_version(prefix);
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
            with_table!(&level.table, t => crate::persist::encode(t, S::ID, head.seed, out))?;
        }
        if let Some((level, _, _)) = &self.current {
            level.write_taken(out)?;
        }
        Ok(())
    }
}
