//! Persistence of a [`ScalableCuckooFilter`]: format version 3, a
//! container of version-2 levels (`docs/format.md`).
//!
//! ```text
//! offset  size  field
//!      0     8  magic "\x89CUCKOO\n"
//!      8     2  format version (3)
//!     10     2  level maps: 0 each level's own (version 2), 1 nested
//!               (every level's map comes from the configuration and its
//!               slot: `Config::map`, `index.rs` "Nested maps")
//!     12     4  levels stored, L (1..=max levels)
//!     16     4  max levels (1..=64)
//!     20     4  growth factor (>= 1)
//!     24     8  false-positive rate bound (f64, in (0, 1))
//!     32     8  initial capacity (items of level 0)
//!     40     4  hasher id
//!     44     4  reserved, zero
//!     48     8  hasher seed
//!     56    4L  the slot of each stored level: the levels in use
//!               ascending, except the current level (the one taking
//!               inserts), stored last; then zero padding to a multiple
//!               of 8
//!      P     8  checksum: XXH3-64 (seed 0) of bytes [0, P)
//!    P+8        each stored level, in order: a complete version-2
//!               encoding (header, body, checksum) with the same hasher
//!               id and seed
//! ```
//!
//! Only levels in use are stored (retired levels are not); the last one
//! stored is the current level. A filter whose current level is its
//! highest slot (every filter before slots were reused) stores them all
//! ascending, as before; readers before slot reuse refuse the other order
//! (an invalid header), never misread it. Each level is checked by its own checksum, the
//! container header by its own, and the levels' shapes against the
//! configuration (every level's bucket count is the one the configuration
//! gives its index, and a nested level's fingerprints are at least as wide
//! as its map's key). Readers from before nested maps refuse a container
//! of nested levels (its reserved bytes are not zero) rather than misread
//! it.

use super::format::{
    any_version, header_len, Header, CHECKSUM_LEN, MAGIC, PREFIX_LEN, V2, V3_SCALABLE,
};
use super::{
    append_snapshot, decode_one, encode, read_exact, read_full, write_atomically, ReadOptions,
};
use crate::error::DecodeError;
use crate::filter::with_table;
use crate::hashing::{DefaultHashBuilder, PersistentHasher};
use crate::scalable::{Config, Level, ScalableCuckooFilter, LEVEL_LIMIT};
use crate::storage::TableMemory;
use std::io::{self, Read, Write};
use std::path::Path;
use xxhash_rust::xxh3::xxh3_64;

/// Bytes of the fixed part of the container header.
const FIXED: usize = 56;

/// Bytes of the container header for `levels` stored levels, without its
/// checksum.
fn container_len(levels: usize) -> usize {
    FIXED + (4 * levels).next_multiple_of(8)
}

impl<S: PersistentHasher> ScalableCuckooFilter<S> {
    /// Encodes the filter: a container header (format version 3, laid out
    /// in the comments of `src/persist/scalable.rs`), then every level in
    /// use in the format of
    /// [`CuckooFilter::to_bytes`](crate::CuckooFilter::to_bytes)
    /// (version 2, `docs/format.md`).
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::with_capacity(10);
    /// filter.insert_batch(&(0..1000u32).collect::<Vec<_>>())?;
    /// let copy = ScalableCuckooFilter::from_bytes(&filter.to_bytes())?;
    /// assert_eq!((copy.len(), copy.levels()), (filter.len(), filter.levels()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Beside writers
    /// Each level is copied as it was at one instant, beside its writers,
    /// as [`CuckooFilter::to_bytes`](crate::CuckooFilter::to_bytes) copies
    /// a filter: a writer waits for one group of stripes' copy at most,
    /// never for the whole level. Levels are copied one after another
    /// while the growth lock is held, as in [`write_to`](Self::write_to):
    /// no level opens, closes or is compacted meanwhile (an insert that
    /// must grow, or a remove that empties an old level, waits for the
    /// snapshot), so every key inserted before it began and not removed
    /// is in the copy; the whole is one instant of the filter only when no
    /// other thread writes meanwhile.
    ///
    /// # Panics
    /// Never itself. Like any `Vec`, the encoding's allocation aborts the
    /// process when memory runs out: a host that must fail instead
    /// streams the encoding with [`write_to`](Self::write_to).
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        self.with_levels_fixed(|| {
            let levels = self.live_levels_oldest_first();
            let mut out = container_header(self, &levels);
            for (_, level) in levels {
                with_table!(&level.table, t => append_snapshot(t, S::ID, self.hasher.seed(), &mut out));
            }
            out
        })
    }

    /// Streams the encoding of [`to_bytes`](Self::to_bytes) into `writer`.
    /// Each level is a consistent snapshot (it holds that level's stripe
    /// locks while it is written), levels one after another: writers on
    /// other threads wait for the level being written (as do `count` and
    /// a lookup in its rare locked fallback), so the whole is one
    /// consistent state only when no other thread writes meanwhile. It
    /// holds the growth lock throughout: no level opens, closes or becomes
    /// current, and no [compaction](Self::compact_concurrently) moves a
    /// fingerprint, until it ends (an insert that must grow, or a remove
    /// that empties an old level, waits for it), so every key inserted
    /// before it began and not removed is in the copy.
    ///
    /// `writer` runs on this thread while a level's stripe locks and the
    /// growth lock are held, and they are not reentrant: from inside it,
    /// any write to this filter, `count`, `insert_unique`, `clear`,
    /// compaction or another snapshot **deadlocks**; lookups, `len` and
    /// `levels` do not.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::with_capacity(10);
    /// let mut sink = Vec::new();
    /// filter.write_to(&mut sink)?;
    /// assert_eq!(sink, filter.to_bytes());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    ///
    /// # Errors
    /// Any error of `writer`.
    pub fn write_to<W: Write>(&self, mut writer: W) -> io::Result<()> {
        // No level opens, closes or is compacted meanwhile: a compaction
        // moving a key out of a level not yet written into one already
        // written would leave it out of the copy.
        self.with_levels_fixed(|| {
            let levels = self.live_levels_oldest_first();
            writer.write_all(&container_header(self, &levels))?;
            for (_, level) in levels {
                with_table!(&level.table, t => encode(t, S::ID, self.hasher.seed(), &mut writer))?;
            }
            Ok(())
        })
    }

    /// Saves the filter to `path` crash-safely, as
    /// [`CuckooFilter::write_to_path`](crate::CuckooFilter::write_to_path):
    /// the encoding of [`to_bytes`](Self::to_bytes), taken beside writers.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::with_capacity(10);
    /// let path = std::env::temp_dir().join(format!("scalable-doc-{}.ccf", std::process::id()));
    /// filter.write_to_path(&path)?;
    /// assert!(ScalableCuckooFilter::read_from(std::fs::File::open(&path)?)?.is_empty());
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// Any I/O error creating, writing, syncing or renaming the file.
    pub fn write_to_path<P: AsRef<Path>>(&self, path: P) -> io::Result<()> {
        write_atomically(path.as_ref(), |file| file.write_all(&self.to_bytes()))
    }

    /// Decodes a filter from `reader`, as written by
    /// [`write_to`](Self::write_to), as `options` say; reads exactly the
    /// encoding's bytes. The options bound the bytes the levels' headers
    /// may claim (a level whose header would take the encoding past the
    /// limit is refused before it is allocated, with
    /// [`DecodeError::ExceedsLimit`] naming the bytes claimed up to the end
    /// of that level), say where every level's table, decoded or grown
    /// later, gets its memory, and name the hasher `S` (rebuilt from the
    /// recorded seed; [`ReadOptions::new`] is the default one).
    ///
    /// ```
    /// use concurrent_cuckoo::{DecodeError, ReadOptions, ScalableCuckooFilter, TableMemory};
    /// let bytes = ScalableCuckooFilter::with_capacity(10).to_bytes();
    /// let options = ReadOptions::new().limit(1 << 20).table_memory(TableMemory::GlobalAllocator);
    /// let copy = ScalableCuckooFilter::read_from_with_options(&bytes[..], options)?;
    /// assert_eq!(copy.table_memory(), TableMemory::GlobalAllocator);
    /// let big = ScalableCuckooFilter::with_capacity(100_000).to_bytes();
    /// let refused = ScalableCuckooFilter::read_from_with_options(&big[..], ReadOptions::new().limit(4096));
    /// assert!(matches!(refused, Err(DecodeError::ExceedsLimit { .. })));
    /// # Ok::<(), concurrent_cuckoo::DecodeError>(())
    /// ```
    ///
    /// # Errors
    /// A [`DecodeError`] if the input is not one intact encoding made with
    /// a hasher of the same ID, ends early ([`DecodeError::Truncated`]) or
    /// fails to read ([`DecodeError::Io`]), or passes the limit
    /// ([`DecodeError::ExceedsLimit`]). Never panics, whatever the input.
    pub fn read_from_with_options<R: Read>(
        mut reader: R,
        options: ReadOptions<S>,
    ) -> Result<Self, DecodeError> {
        decode_container(
            &mut reader,
            Input::Stream(options.limit),
            options.table_memory,
        )
    }

    /// Decodes a filter encoded by [`to_bytes`](Self::to_bytes), as
    /// `options` say (see [`read_from_with_options`](Self::read_from_with_options));
    /// an input longer than the limit is refused before anything is
    /// allocated.
    ///
    /// ```
    /// use concurrent_cuckoo::{DecodeError, ReadOptions, ScalableCuckooFilter};
    /// let bytes = ScalableCuckooFilter::with_capacity(100_000).to_bytes();
    /// let refused = ScalableCuckooFilter::from_bytes_with_options(
    ///     &bytes,
    ///     ReadOptions::new().limit(4096),
    /// );
    /// assert!(matches!(refused, Err(DecodeError::ExceedsLimit { .. })));
    /// ```
    ///
    /// # Errors
    /// As [`read_from_with_options`](Self::read_from_with_options), or
    /// [`DecodeError::TrailingBytes`] after the encoding.
    pub fn from_bytes_with_options(
        bytes: &[u8],
        options: ReadOptions<S>,
    ) -> Result<Self, DecodeError> {
        let total = bytes.len() as u64;
        if let Some(limit) = options.limit.filter(|&limit| total > limit) {
            return Err(DecodeError::ExceedsLimit {
                claimed: total,
                limit,
            });
        }
        let mut reader = bytes;
        let filter = decode_container(&mut reader, Input::Exact(total), options.table_memory)?;
        if !reader.is_empty() {
            return Err(DecodeError::TrailingBytes);
        }
        Ok(filter)
    }
}

impl ScalableCuckooFilter<DefaultHashBuilder> {
    /// Decodes a filter encoded by [`to_bytes`](Self::to_bytes) with the
    /// default hasher: same levels, contents, configuration, hasher and
    /// seed, so it answers every query as the encoded filter did and grows
    /// as it would have.
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let filter = ScalableCuckooFilter::with_capacity(10);
    /// filter.insert("a")?;
    /// assert!(ScalableCuckooFilter::from_bytes(&filter.to_bytes())?.contains("a"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`from_bytes_with_options`](Self::from_bytes_with_options).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        Self::from_bytes_with_options(bytes, ReadOptions::new())
    }

    /// Decodes a filter from `reader` (see [`read_from_with_options`](Self::read_from_with_options)).
    ///
    /// ```
    /// use concurrent_cuckoo::ScalableCuckooFilter;
    /// let bytes = ScalableCuckooFilter::with_capacity(10).to_bytes();
    /// assert!(ScalableCuckooFilter::read_from(&bytes[..])?.is_empty());
    /// # Ok::<(), concurrent_cuckoo::DecodeError>(())
    /// ```
    ///
    /// # Errors
    /// As [`read_from_with_options`](Self::read_from_with_options).
    pub fn read_from<R: Read>(reader: R) -> Result<Self, DecodeError> {
        Self::read_from_with_options(reader, ReadOptions::new())
    }

    /// [`read_from`](Self::read_from) for untrusted streams, as
    /// [`CuckooFilter::read_from_limited`](crate::CuckooFilter::read_from_limited):
    /// a level whose header would take the encoding past `max_bytes` bytes
    /// is refused with [`DecodeError::ExceedsLimit`] before its table is
    /// allocated. `read_from` must reserve each table a header declares
    /// (up to 64 GiB of address space per level) before it can know whether
    /// the stream really holds that much; for a file, its length is the
    /// natural limit.
    ///
    /// ```
    /// use concurrent_cuckoo::{DecodeError, ScalableCuckooFilter};
    /// let filter = ScalableCuckooFilter::with_capacity(1_000_000); // ~2.2 MB
    /// let bytes = filter.to_bytes();
    /// assert!(matches!(
    ///     ScalableCuckooFilter::read_from_limited(&bytes[..], 1 << 20),
    ///     Err(DecodeError::ExceedsLimit { .. })
    /// ));
    /// assert!(ScalableCuckooFilter::read_from_limited(&bytes[..], bytes.len() as u64).is_ok());
    /// ```
    ///
    /// # Errors
    /// As [`read_from`](Self::read_from), plus [`DecodeError::ExceedsLimit`].
    pub fn read_from_limited<R: Read>(reader: R, max_bytes: u64) -> Result<Self, DecodeError> {
        Self::read_from_with_options(reader, ReadOptions::new().limit(max_bytes))
    }
}

/// The container header of `filter`'s encoding, its checksum included,
/// for the stored `levels` (in use, oldest first).
pub(crate) fn container_header<S: PersistentHasher>(
    filter: &ScalableCuckooFilter<S>,
    levels: &[(usize, &Level)],
) -> Vec<u8> {
    let len = container_len(levels.len());
    let mut head = vec![0u8; len];
    head[0..8].copy_from_slice(&MAGIC);
    head[8..10].copy_from_slice(&V3_SCALABLE.to_le_bytes());
    head[10..12].copy_from_slice(&u16::from(filter.config.nested).to_le_bytes());
    head[12..16].copy_from_slice(&(levels.len() as u32).to_le_bytes());
    let c = filter.config;
    head[16..20].copy_from_slice(&(c.max_levels as u32).to_le_bytes());
    head[20..24].copy_from_slice(&c.growth_factor.to_le_bytes());
    head[24..32].copy_from_slice(&c.false_positive_rate.to_bits().to_le_bytes());
    head[32..40].copy_from_slice(&(c.initial_capacity as u64).to_le_bytes());
    head[40..44].copy_from_slice(&S::ID.to_le_bytes());
    head[48..56].copy_from_slice(&filter.hasher.seed().to_le_bytes());
    for (k, (i, _)) in levels.iter().enumerate() {
        head[FIXED + 4 * k..FIXED + 4 * k + 4].copy_from_slice(&(*i as u32).to_le_bytes());
    }
    let sum = xxh3_64(&head);
    head.extend_from_slice(&sum.to_le_bytes());
    head
}

/// What is known of the input's length before a container is decoded.
#[derive(Clone, Copy)]
enum Input {
    /// A whole input of exactly this many bytes (`from_bytes`): a level
    /// claiming more than what is left is truncated.
    Exact(u64),
    /// A stream, with the caller's bound on the encoding's length, if any.
    Stream(Option<u64>),
}

/// Decodes a container from `r`; what is known of `input`'s length is
/// checked against each level's header before the level is allocated.
fn decode_container<S: PersistentHasher>(
    r: &mut impl Read,
    input: Input,
    memory: TableMemory,
) -> Result<ScalableCuckooFilter<S>, DecodeError> {
    let mut fixed = [0u8; FIXED];
    let got = read_full(r, &mut fixed[..PREFIX_LEN])?;
    check_container_version(&fixed[..got])?;
    let got = PREFIX_LEN + read_full(r, &mut fixed[PREFIX_LEN..])?;
    if got < FIXED {
        return Err(DecodeError::Truncated);
    }
    let head = ContainerHead::parse_fixed(&fixed, S::ID)?;
    let mut rest = vec![0u8; head.rest_len()];
    read_exact(r, &mut rest)?;
    let indices = head.indices(&fixed, &rest)?;
    let (mut consumed, bound) = match input {
        Input::Exact(total) => (head.len() as u64, Some(total)),
        Input::Stream(limit) => (head.admit(limit)?, limit),
    };
    let mut levels = Vec::with_capacity(indices.len());
    for &i in &indices {
        let (want_buckets, most) = head.level_size(i)?;
        let cap = level_cap(most, consumed, bound);
        let options = ReadOptions::new().limit(cap).table_memory(memory);
        let (header, table) =
            decode_one(&mut *r, S::ID, None, options).map_err(|e| match (e, input) {
                // Longer than what is left of a whole input: cut short.
                (DecodeError::ExceedsLimit { claimed, .. }, Input::Exact(_)) if claimed <= most => {
                    DecodeError::Truncated
                }
                (e, _) => level_error(e, most, consumed, bound),
            })?;
        head.check_level(&header, want_buckets)?;
        consumed += header.encoded_len();
        levels.push((i, Level::from_table(table)));
    }
    head.assemble(levels, memory)
}

/// The most bytes the next level's encoding may take. Its length is
/// unknown until its header is read; the configuration bounds it (`most`:
/// the size it gives this level, at the widest fingerprints), and so does
/// what is left of `bound` (the input's length, or the caller's limit)
/// after the `consumed` bytes: a header claiming more is refused before
/// its table is allocated.
pub(crate) fn level_cap(most: u64, consumed: u64, bound: Option<u64>) -> u64 {
    bound.map_or(most, |b| b.saturating_sub(consumed).min(most))
}

/// A level decoder's error as the container's: a level claiming more
/// than its configuration gives it is invalid; one claiming more than is
/// left of `limit` after `consumed` bytes exceeds the limit by the whole
/// container's count.
pub(crate) fn level_error(
    e: DecodeError,
    most: u64,
    consumed: u64,
    limit: Option<u64>,
) -> DecodeError {
    match e {
        DecodeError::ExceedsLimit { claimed, .. } if claimed > most => {
            DecodeError::InvalidHeader("a level's size does not match the configuration")
        }
        DecodeError::ExceedsLimit { claimed, .. } => DecodeError::ExceedsLimit {
            claimed: consumed.saturating_add(claimed),
            limit: limit.unwrap_or(u64::MAX),
        },
        e => e,
    }
}

/// Refuses a prefix that is not a growing filter's container.
pub(crate) fn check_container_version(prefix: &[u8]) -> Result<(), DecodeError> {
    match any_version(prefix)? {
        V3_SCALABLE => Ok(()),
        1 | V2 => Err(DecodeError::InvalidHeader(
            "this encodes a CuckooFilter: decode it with CuckooFilter::from_bytes",
        )),
        crate::windowed::V4_WINDOWED => Err(DecodeError::InvalidHeader(
            "this encodes a WindowedCuckooFilter: decode it with WindowedCuckooFilter::from_bytes",
        )),
        v => Err(DecodeError::UnsupportedVersion(v)),
    }
}

/// A container header, checked: what the levels that follow must match.
/// Shared by the streaming decoder above and the chunk decoder.
#[derive(Clone, Debug)]
pub(crate) struct ContainerHead {
    /// Levels stored.
    stored: usize,
    pub(crate) config: Config,
    pub(crate) seed: u64,
}

impl ContainerHead {
    /// Bytes of the fixed part: the first read.
    pub(crate) const FIXED: usize = FIXED;

    /// Parses and checks the fixed part (whose version was checked).
    pub(crate) fn parse_fixed(fixed: &[u8; FIXED], hasher_id: u32) -> Result<Self, DecodeError> {
        let u32_at =
            |i: usize| u32::from_le_bytes([fixed[i], fixed[i + 1], fixed[i + 2], fixed[i + 3]]);
        let u64_at = |i: usize| {
            let mut raw = [0u8; 8];
            raw.copy_from_slice(&fixed[i..i + 8]);
            u64::from_le_bytes(raw)
        };
        let (stored, max_levels, factor) = (u32_at(12) as usize, u32_at(16) as usize, u32_at(20));
        let rate = f64::from_bits(u64_at(24));
        let (initial, found_id, seed) = (u64_at(32), u32_at(40), u64_at(48));
        let nested = match [fixed[10], fixed[11]] {
            [0, 0] => false,
            [1, 0] => true,
            _ => {
                return Err(DecodeError::InvalidHeader(
                    "the level-map field must be 0 or 1",
                ))
            }
        };
        if u32_at(44) != 0 {
            return Err(DecodeError::InvalidHeader("reserved bytes must be zero"));
        }
        if !(1..=LEVEL_LIMIT).contains(&max_levels) || !(1..=max_levels).contains(&stored) {
            return Err(DecodeError::InvalidHeader(
                "level counts must be 1 to 64, stored levels at most the maximum",
            ));
        }
        if factor < 1 || !(rate > 0.0 && rate < 1.0) {
            return Err(DecodeError::InvalidHeader(
                "growth factor must be at least 1 and the rate in (0, 1)",
            ));
        }
        let initial = usize::try_from(initial)
            .map_err(|_| DecodeError::InvalidHeader("initial capacity too large"))?;
        if found_id != hasher_id {
            return Err(DecodeError::HasherMismatch {
                expected: hasher_id,
                found: found_id,
            });
        }
        Ok(Self {
            stored,
            config: Config {
                initial_capacity: initial,
                false_positive_rate: rate,
                growth_factor: factor,
                max_levels,
                // The decoder's choice, set by `assemble`.
                table_memory: TableMemory::Mapped,
                nested,
            },
            seed,
        })
    }

    /// Bytes of the whole container header, its checksum included.
    pub(crate) fn len(&self) -> usize {
        container_len(self.stored) + 8
    }

    /// Bytes after the fixed part: the level indices, padding, checksum.
    pub(crate) fn rest_len(&self) -> usize {
        self.len() - FIXED
    }

    /// Checks the whole header (`fixed` then `rest`) against its checksum
    /// and returns the stored levels' indices.
    pub(crate) fn indices(&self, fixed: &[u8], rest: &[u8]) -> Result<Vec<usize>, DecodeError> {
        let mut head = Vec::with_capacity(self.len());
        head.extend_from_slice(fixed);
        head.extend_from_slice(rest);
        let (body, sum) = head.split_at(container_len(self.stored));
        let mut stored_sum = [0u8; 8];
        stored_sum.copy_from_slice(sum);
        if u64::from_le_bytes(stored_sum) != xxh3_64(body) {
            return Err(DecodeError::ChecksumMismatch);
        }
        let indices: Vec<usize> = (0..self.stored)
            .map(|k| u32_at_of(body, FIXED + 4 * k) as usize)
            .collect();
        // The levels before the last ascend; the last (the current level)
        // is any other slot: the highest unless the filter switched back
        // to a lower one (an encoding written before slots were reused
        // always ascends).
        let (current, others) = indices.split_last().unwrap_or((&0, &[]));
        if body[FIXED + 4 * self.stored..].iter().any(|&b| b != 0)
            || others.windows(2).any(|w| w[0] >= w[1])
            || others.contains(current)
            || indices.iter().any(|&i| i >= self.config.max_levels)
        {
            return Err(DecodeError::InvalidHeader(
                "level indices must be distinct slots below the maximum, all but the last ascending, padding zero",
            ));
        }
        Ok(indices)
    }

    /// The container header's length, the bytes consumed once it is read,
    /// if within the caller's `limit`.
    pub(crate) fn admit(&self, limit: Option<u64>) -> Result<u64, DecodeError> {
        let consumed = self.len() as u64;
        match limit {
            Some(limit) if consumed > limit => Err(DecodeError::ExceedsLimit {
                claimed: consumed,
                limit,
            }),
            _ => Ok(consumed),
        }
    }

    /// The bucket count the configuration gives level `i`, and the most
    /// bytes its encoding may take (at the widest fingerprints).
    pub(crate) fn level_size(&self, i: usize) -> Result<(usize, u64), DecodeError> {
        // The bucket count is the same at every width.
        let buckets = self
            .config
            .map(i, 32)
            .ok_or(DecodeError::InvalidHeader(
                "a level past the addressable size",
            ))?
            .buckets();
        let most = (header_len(V2) + CHECKSUM_LEN) as u64
            + buckets as u64 * (crate::fingerprint::SLOTS * 4) as u64;
        Ok((buckets, most))
    }

    /// Checks a level's header against the container.
    pub(crate) fn check_level(
        &self,
        header: &Header,
        want_buckets: usize,
    ) -> Result<(), DecodeError> {
        if header.version != V2 || header.seed != self.seed {
            return Err(DecodeError::InvalidHeader(
                "every level must be a version-2 encoding with the container's seed",
            ));
        }
        if header.buckets != want_buckets as u64 {
            return Err(DecodeError::InvalidHeader(
                "a level's size does not match the configuration",
            ));
        }
        Ok(())
    }

    /// The filter of the decoded levels, if their bounds fit the rate,
    /// its later levels' memory from `memory`. Levels of a nested
    /// container take the maps the configuration gives their slots (their
    /// encodings, version 2, say "finalized"), if their fingerprints are
    /// as wide as the maps' key.
    pub(crate) fn assemble<S: PersistentHasher>(
        &self,
        mut levels: Vec<(usize, Level)>,
        memory: TableMemory,
    ) -> Result<ScalableCuckooFilter<S>, DecodeError> {
        if self.config.nested {
            for (i, level) in &mut levels {
                let map = self
                    .config
                    .map(*i, level.bits())
                    .ok_or(DecodeError::InvalidHeader(
                        "a level past the addressable size",
                    ))?;
                let key_bits = self.config.bits(0).unwrap_or(32);
                if level.bits() < key_bits || level.map().buckets() != map.buckets() {
                    return Err(DecodeError::InvalidHeader(
                        "a nested level's fingerprints must be at least as wide as the first level's",
                    ));
                }
                level.set_map(map);
            }
        }
        let bound: f64 = levels
            .iter()
            .map(|(_, l)| 8.0 / 2f64.powi(with_table!(&l.table, t => t.fingerprint_bits()) as i32))
            .sum();
        if bound > self.config.false_positive_rate {
            return Err(DecodeError::InvalidHeader(
                "the levels' false-positive bounds exceed the recorded rate",
            ));
        }
        let config = Config {
            table_memory: memory,
            ..self.config
        };
        Ok(ScalableCuckooFilter::from_parts(
            config,
            S::from_seed(self.seed),
            levels,
        ))
    }
}

fn u32_at_of(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

#[cfg(feature = "serde")]
mod serde_impls {
    //! As for `CuckooFilter`: the encoding as one byte string.

    use super::*;
    use core::fmt;
    use core::marker::PhantomData;
    use serde::de::{self, SeqAccess, Visitor};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    impl<S: PersistentHasher> Serialize for ScalableCuckooFilter<S> {
        fn serialize<Ser: Serializer>(&self, serializer: Ser) -> Result<Ser::Ok, Ser::Error> {
            serializer.serialize_bytes(&self.to_bytes())
        }
    }

    impl<'de, S: PersistentHasher> Deserialize<'de> for ScalableCuckooFilter<S> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_bytes(Encoded(PhantomData))
        }
    }

    struct Encoded<S>(PhantomData<S>);

    impl<'de, S: PersistentHasher> Visitor<'de> for Encoded<S> {
        type Value = ScalableCuckooFilter<S>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("the bytes of an encoded scalable cuckoo filter")
        }

        fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<Self::Value, E> {
            ScalableCuckooFilter::from_bytes_with_options(bytes, ReadOptions::new().hasher())
                .map_err(E::custom)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut bytes = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
            while let Some(b) = seq.next_element::<u8>()? {
                bytes.push(b);
            }
            ScalableCuckooFilter::from_bytes_with_options(&bytes, ReadOptions::new().hasher())
                .map_err(de::Error::custom)
        }
    }
}
