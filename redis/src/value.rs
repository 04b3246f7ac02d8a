//! The value a `CF.*` key holds: a filter (fixed or growing), the
//! RedisBloom-visible settings it was made with, and the state of the dumps
//! and restores that move it in pieces.

use concurrent_cuckoo::{
    BuildError, ChunkDecoder, ChunkEncoder, CompactStats, CuckooFilter, DecodedFilter,
    DefaultHashBuilder, InsertError, ScalableCuckooFilter, Stats,
};
use core::cell::RefCell;
use core::sync::atomic::{AtomicU64, Ordering};
use redis_module::key::{RedisKey, RedisKeyWritable};
use redis_module::native_types::RedisType;
use redis_module::RedisError;

use crate::window_value::{Window, WindowLoad};

/// Items of a `CF.INSERT` per pipelined batch call: a whole command of
/// up to 1024 items in one call, so the library's pipeline (buckets
/// prefetched 24 keys ahead) never restarts inside it, and a table with
/// at most twice as many lock stripes as the call has items takes each
/// stripe once per call instead of two stripes per item (the library's
/// batch locking). 64 before: a fill of 4M items measured 1.07x faster
/// this way (`docs/benchmarks.md`).
pub(crate) const INSERT_WINDOW: usize = 1024;

/// Most filters (levels) a growing filter may have by default:
/// RedisBloom's default `cf-max-expansions` (the config sets it).
pub(crate) const MAX_FILTERS: usize = 32;
/// The smallest capacity a filter has: `CF.RESERVE`'s with `BUCKETSIZE 1`
/// (RedisBloom's rule: at least twice the bucket size).
pub(crate) const MIN_CAPACITY: u64 = 2;
/// The largest `EXPANSION` (RedisBloom's).
pub(crate) const MAX_EXPANSION: u16 = 32768;
/// RedisBloom's default `BUCKETSIZE` (`cf-bucket-size`'s default).
pub(crate) const DEFAULT_BUCKET_SIZE: u8 = 2;
/// RedisBloom's default `MAXITERATIONS` (`cf-max-iterations`'s default).
pub(crate) const DEFAULT_MAX_ITERATIONS: u16 = 20;

/// What `CF.RESERVE` (or an auto-creating `CF.ADD`/`CF.INSERT`) was told,
/// kept for `CF.INFO` and for replicas, and the count of deletes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Meta {
    /// Items the filter (its first level) is sized for.
    pub(crate) capacity: u64,
    /// Accepted in RedisBloom's range (1-255) and reported; the table's
    /// buckets always hold 4 fingerprints (SIMD-compared).
    pub(crate) bucket_size: u8,
    /// Accepted in RedisBloom's range (1-65535) and reported; inserts
    /// search displacement paths of at most 5 moves breadth-first instead
    /// of a random walk.
    pub(crate) max_iterations: u16,
    /// 0: a fixed filter; `e`: a growing one whose levels grow by `e`.
    pub(crate) expansion: u16,
    /// The bound on the whole filter's false-positive rate.
    pub(crate) error_rate: f64,
    /// Successful `CF.DEL`s.
    pub(crate) deleted: u64,
    /// The most levels of a growing filter this creates
    /// (`cf-max-expansions` when it was created). Only creation reads it:
    /// a filter's own limit is in its encoding, so it is not saved with
    /// the settings (0 after a load: "the filter's own").
    pub(crate) max_levels: u16,
}

impl Meta {
    /// Nothing given: a restored filter's settings before its encoding
    /// says what it is (see [`merged`](Self::merged)). No valid setting is
    /// zero, so zero means "not given".
    pub(crate) const UNSET: Self = Self {
        capacity: 0,
        bucket_size: 0,
        max_iterations: 0,
        expansion: 0,
        error_rate: 0.0,
        deleted: 0,
        max_levels: 0,
    };

    /// These settings where given (non-zero), `implied`'s elsewhere; the
    /// expansion is always the encoding's.
    pub(crate) fn merged(self, implied: Self) -> Self {
        let pick = |given: u64, implied: u64| if given == 0 { implied } else { given };
        Self {
            capacity: pick(self.capacity, implied.capacity),
            bucket_size: pick(u64::from(self.bucket_size), u64::from(implied.bucket_size)) as u8,
            max_iterations: pick(
                u64::from(self.max_iterations),
                u64::from(implied.max_iterations),
            ) as u16,
            expansion: implied.expansion,
            error_rate: if self.error_rate == 0.0 {
                implied.error_rate
            } else {
                self.error_rate
            },
            deleted: self.deleted,
            max_levels: implied.max_levels,
        }
    }

    /// The most levels of a growing filter made with these settings.
    pub(crate) fn levels(&self) -> usize {
        match self.max_levels {
            0 => MAX_FILTERS,
            n => usize::from(n),
        }
    }

    /// Whether these are the settings of a live filter: what an RDB file
    /// or `RESTORE` takes back, and so what every filter must have. The
    /// commands that create a filter stay within them by their ranges; a
    /// filter restored by `CF.LOADCHUNK` takes settings from its encoding
    /// (the library allows initial capacities 0-3 and growth factors past
    /// 32768) and is refused unless they pass.
    pub(crate) fn loadable_live(&self) -> bool {
        self.capacity >= MIN_CAPACITY
            && self.bucket_size >= 1
            && self.max_iterations >= 1
            && self.expansion <= MAX_EXPANSION
            && self.error_rate > 0.0
            && self.error_rate < 1.0
    }
}

/// The settings of a filter created without options: the module's
/// configs (`configs.rs`; RedisBloom's defaults unless set).
impl Default for Meta {
    fn default() -> Self {
        use crate::configs::{self, value};
        // The configs' ranges keep each value within its type.
        Self {
            capacity: value(&configs::INITIAL_SIZE) as u64,
            bucket_size: value(&configs::BUCKET_SIZE) as u8,
            max_iterations: value(&configs::MAX_ITERATIONS) as u16,
            expansion: value(&configs::EXPANSION_FACTOR) as u16,
            error_rate: configs::ERROR_RATE.get(),
            deleted: 0,
            max_levels: value(&configs::MAX_EXPANSIONS) as u16,
        }
    }
}

/// The filter itself. (A fixed filter's struct is larger than a growing
/// one's handle; one per key, so the difference does not matter.)
#[allow(clippy::large_enum_variant)]
pub(crate) enum Filter {
    /// `EXPANSION 0`: `Filter is full` when full, nothing lost.
    Fixed(CuckooFilter),
    /// `EXPANSION e >= 1`: levels growing by `e`, up to [`MAX_FILTERS`].
    Growing(ScalableCuckooFilter),
}

/// Runs `$body` with `$f` bound to the filter, whichever kind it is.
/// Items a batch hashes at a time, on the stack: two stages of the
/// library's batch lookups.
const HASH_CHUNK: usize = 64;

macro_rules! with_filter {
    ($filter:expr, $f:ident => $body:expr) => {
        match $filter {
            Filter::Fixed($f) => $body,
            Filter::Growing($f) => $body,
        }
    };
}

impl Filter {
    /// A new filter for `meta`, hashing with `seed`.
    pub(crate) fn create(meta: &Meta, seed: u64) -> Result<Self, BuildError> {
        let capacity = usize::try_from(meta.capacity).unwrap_or(usize::MAX);
        Ok(if meta.expansion == 0 {
            Self::Fixed(
                CuckooFilter::builder()
                    .capacity(capacity)
                    .false_positive_rate(meta.error_rate)
                    .seed(seed)
                    .table_memory(crate::alloc::TABLES)
                    .build()?,
            )
        } else {
            Self::Growing(
                ScalableCuckooFilter::builder()
                    .capacity(capacity)
                    .growth_factor(usize::from(meta.expansion))
                    .max_levels(meta.levels())
                    .false_positive_rate(meta.error_rate)
                    .seed(seed)
                    .table_memory(crate::alloc::TABLES)
                    .build()?,
            )
        })
    }

    /// The settings a filter decoded from its encoding implies (what a
    /// restore takes where it was not told more). The encoding holds no
    /// bucket size or max iterations: those are RedisBloom's defaults,
    /// never this server's configs, so that every copy that completes the
    /// same restore (a replica, a replay, a server loading an RDB saved
    /// mid-restore) reports the same filter. (`CF.LOADCHUNK` sends them
    /// explicitly since they were kept: only older data lacks them.)
    pub(crate) fn implied_meta(&self) -> Meta {
        let reported = Meta {
            bucket_size: DEFAULT_BUCKET_SIZE,
            max_iterations: DEFAULT_MAX_ITERATIONS,
            ..Meta::UNSET
        };
        match self {
            Self::Fixed(f) => Meta {
                capacity: f.capacity() as u64,
                expansion: 0,
                error_rate: f.false_positive_bound(),
                ..reported
            },
            Self::Growing(f) => Meta {
                capacity: f.initial_capacity() as u64,
                expansion: u16::try_from(f.growth_factor()).unwrap_or(u16::MAX),
                max_levels: u16::try_from(f.max_levels()).unwrap_or(u16::MAX),
                error_rate: f.configured_false_positive_rate(),
                ..reported
            },
        }
    }

    pub(crate) fn len(&self) -> usize {
        with_filter!(self, f => f.len())
    }

    /// `item`'s hash, as the filter's keyed calls hash it (`hash_bytes`:
    /// in registers, no `Hasher` state). Every item call goes through it.
    fn hash(&self, item: &[u8]) -> u64 {
        with_filter!(self, f => f.hasher().hash_bytes(item))
    }

    pub(crate) fn insert(&self, item: &[u8]) -> Result<(), InsertError> {
        let hash = self.hash(item);
        with_filter!(self, f => f.insert_hash(hash))
    }

    pub(crate) fn insert_unique(&self, item: &[u8]) -> Result<bool, InsertError> {
        let hash = self.hash(item);
        with_filter!(self, f => f.insert_unique_hash(hash))
    }

    /// Inserts `items` in order, pipelined; stops at the first refused:
    /// `Err((inserted, why))`. The items are hashed a chunk at a time by
    /// `hash_bytes` (in registers; the same hashes as the keyed calls).
    pub(crate) fn insert_batch(&self, items: &[&[u8]]) -> Result<(), (usize, InsertError)> {
        let mut hashes = [0u64; HASH_CHUNK];
        for (chunk, items) in items.chunks(HASH_CHUNK).enumerate() {
            let hashes = self.hash_items(items, &mut hashes);
            with_filter!(self, f => f.insert_hash_batch(hashes))
                .map_err(|e| (chunk * HASH_CHUNK + e.inserted(), *e.error()))?;
        }
        Ok(())
    }

    /// `items`' hashes, as the filter's keyed calls hash them, in
    /// `buffer`.
    fn hash_items<'b>(&self, items: &[&[u8]], buffer: &'b mut [u64; HASH_CHUNK]) -> &'b [u64] {
        let hasher = with_filter!(self, f => f.hasher());
        for (hash, item) in buffer.iter_mut().zip(items) {
            *hash = hasher.hash_bytes(item);
        }
        &buffer[..items.len()]
    }

    pub(crate) fn contains(&self, item: &[u8]) -> bool {
        let hash = self.hash(item);
        with_filter!(self, f => f.contains_hash(hash))
    }

    /// `out[i] = contains(items[i])`, pipelined (hashed as
    /// [`insert_batch`](Self::insert_batch)'s items).
    pub(crate) fn contains_batch(&self, items: &[&[u8]], out: &mut [bool]) {
        let mut hashes = [0u64; HASH_CHUNK];
        for (items, out) in items.chunks(HASH_CHUNK).zip(out.chunks_mut(HASH_CHUNK)) {
            let hashes = self.hash_items(items, &mut hashes);
            with_filter!(self, f => f.contains_hash_batch(hashes, out));
        }
    }

    pub(crate) fn count(&self, item: &[u8]) -> usize {
        let hash = self.hash(item);
        with_filter!(self, f => f.count_hash(hash))
    }

    pub(crate) fn remove(&self, item: &[u8]) -> bool {
        let hash = self.hash(item);
        match self {
            Self::Fixed(f) => f.remove_hash(hash),
            // A refused remove answers 0, as "not found": RedisBloom's
            // reply has no third value, and the item stays present.
            Self::Growing(f) => f.remove_hash(hash).is_removed(),
        }
    }

    pub(crate) fn memory_usage(&self) -> usize {
        with_filter!(self, f => f.memory_usage())
    }

    /// The stats of each level (one for a fixed filter), oldest first.
    pub(crate) fn level_stats(&self) -> Vec<Stats> {
        match self {
            Self::Fixed(f) => vec![f.stats()],
            Self::Growing(f) => f.level_stats(),
        }
    }

    pub(crate) fn false_positive_bound(&self) -> f64 {
        match self {
            Self::Fixed(f) => f.false_positive_bound(),
            Self::Growing(f) => f.false_positive_bound(),
        }
    }

    /// A new encoder of this filter's encoding.
    pub(crate) fn encoder(&self) -> ChunkEncoder {
        match self {
            Self::Fixed(f) => ChunkEncoder::new(f),
            Self::Growing(f) => ChunkEncoder::scalable(f),
        }
    }

    /// The next at most `max` bytes of `encoder` (made by
    /// [`encoder`](Self::encoder) from this filter, unchanged since).
    pub(crate) fn next_chunk(
        &self,
        encoder: &mut ChunkEncoder,
        max: usize,
        out: &mut Vec<u8>,
    ) -> std::io::Result<usize> {
        match self {
            Self::Fixed(f) => encoder.next_chunk(f, max, out),
            Self::Growing(f) => encoder.next_chunk_scalable(f, max, out),
        }
    }

    /// A copy, moved through the encoding a piece at a time (no second
    /// copy of the whole encoding in memory).
    pub(crate) fn duplicate(&self) -> Result<Self, String> {
        let mut encoder = self.encoder();
        let mut decoder = crate::alloc::decoder();
        let mut piece = Vec::with_capacity(COPY_PIECE);
        while !encoder.is_done() {
            piece.clear();
            self.next_chunk(&mut encoder, COPY_PIECE, &mut piece)
                .map_err(|e| e.to_string())?;
            decoder.feed(&piece).map_err(|e| e.to_string())?;
        }
        Self::from_decoded(decoder.finish().map_err(|e| e.to_string())?)
    }
}

/// Pieces a copy moves the encoding through.
const COPY_PIECE: usize = 16 << 20;

impl Filter {
    /// The filter a [`ChunkDecoder`] made, or the reply's error text for a
    /// kind of filter this value cannot hold (the enum may grow).
    pub(crate) fn from_decoded(decoded: DecodedFilter) -> Result<Self, String> {
        match decoded {
            DecodedFilter::Filter(f) => Ok(Self::Fixed(f)),
            DecodedFilter::Scalable(f) => Ok(Self::Growing(f)),
            _ => Err("an encoding of a filter kind this module does not hold".to_owned()),
        }
    }
}

/// A live filter, or one being restored by `CF.LOADCHUNK`.
// The live variant is the common one: boxing it would add a pointer chase
// to every command.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Body {
    Live(Filter),
    /// Chunks arrived so far, taken in by the decoder; the filter answers
    /// only once every chunk arrived and the checksum matched.
    /// (Boxed: a decoder is larger than a filter, and most values are
    /// live filters.)
    Loading(Box<ChunkDecoder<DefaultHashBuilder>>),
    /// A window filter (`CF.RESERVE ... WINDOW ms`, `window.rs`), boxed
    /// as the decoder is.
    Window(Box<Window>),
    /// A window filter being restored by `CF.LOADCHUNK`.
    WindowLoading(Box<WindowLoad>),
}

/// The value of a `CF.*` key.
pub(crate) struct CfValue {
    /// The filter's settings; while it is being restored, those given with
    /// its first chunk ([`Meta::UNSET`] where none was).
    pub(crate) meta: Meta,
    pub(crate) body: Body,
    /// This state of the filter, unique for the module's life
    /// (`dumps::next_version`, taken anew at every change): a dump of an
    /// earlier one cannot go on (its pieces would mix two states).
    pub(crate) version: u64,
    /// Dumps in progress. `CF.SCANDUMP` reads the key: it opens it for
    /// reading (closing a key opened for writing counts as a change to it,
    /// which aborts transactions that `WATCH` it), so it keeps its dumps
    /// through a shared reference. Redis runs commands on its main thread
    /// only; a `RefCell` makes the value `!Sync`, so nothing can share one
    /// between threads unnoticed.
    pub(crate) dumps: RefCell<crate::dumps::Dumps>,
    /// Bytes a restore in progress holds besides this struct: all its
    /// decoder allocated and still holds (tables, admitted as their headers
    /// arrived, lock stripes, version words, buffers: measured by the
    /// module's allocator, `admission::Outcome::held`), which `MEMORY
    /// USAGE` reports and admission counts as held, once.
    pub(crate) restore_held: usize,
    /// What this value counts in the module's `INFO` totals.
    pub(crate) accounted: crate::info::Accounted,
    /// This value's identity, unique for the module's life: a dump that
    /// began on another value of the same key (replaced by `DEL` and a
    /// new filter, `RESTORE REPLACE`, `RENAME`, `SWAPDB`) cannot go on
    /// (`dumps::Dumpers`).
    pub(crate) uid: u64,
}

/// The next [`CfValue::uid`].
static NEXT_UID: AtomicU64 = AtomicU64::new(1);

// Redis may free a value on a background thread (`FLUSHALL ASYNC` frees
// the whole keyspace there): a value must be `Send`. It need not be
// `Sync`, and is not: only the thread running commands uses it.
const _: fn() = || {
    fn send<T: Send>() {}
    send::<CfValue>();
};

/// RedisBloom's error for a filter whose table cannot be had: here one
/// that would pass `cuckoo.cf-max-memory-usage` or `maxmemory`
/// (`admission.rs`), or that the allocator refused. Nothing was created.
pub(crate) const CREATE_REFUSED: &str = "ERR Insufficient memory to create filter";

/// The error for a command on a filter `CF.LOADCHUNK` has not finished.
pub(crate) const INCOMPLETE: &str =
    "ERR the filter is being restored: CF.LOADCHUNK has not sent every chunk";

/// The error for `CF.DEL`, `CF.COMPACT` and `CF.STATS` on a window filter
/// (the only commands that reach [`CfValue::filter`] with one).
pub(crate) const NOT_FOR_WINDOW: &str = "ERR not supported on a WINDOW filter: its items \
     expire by age and none can be deleted (CF.DEL, CF.COMPACT and CF.STATS do not apply)";

impl CfValue {
    /// A new value (no change yet, no dump in progress).
    pub(crate) fn new(meta: Meta, body: Body) -> Self {
        let mut value = Self {
            meta,
            body,
            version: crate::dumps::next_version(),
            dumps: RefCell::new(crate::dumps::Dumps::default()),
            restore_held: 0,
            accounted: crate::info::Accounted::new(),
            uid: NEXT_UID.fetch_add(1, Ordering::Relaxed),
        };
        value.account();
        value
    }

    /// Brings the `INFO` totals up to date with this value, counting its
    /// items (`len` sums every lock stripe's count: up to 4096 cache
    /// lines), so only where a value is created or restored; writes use
    /// [`account_write`](Self::account_write).
    pub(crate) fn account(&mut self) {
        let items = match &self.body {
            Body::Live(f) => f.len(),
            Body::Window(w) => w.filter.len(),
            Body::Loading(_) | Body::WindowLoading(_) => 0,
        };
        let memory = self.memory_usage();
        self.accounted.update(items, memory);
    }

    /// Brings the `INFO` memory total up to date with what this value holds
    /// now, through a shared reference: what `CF.SCANDUMP` changes (the
    /// state of its dumps) besides the filter.
    pub(crate) fn account_memory(&self) {
        self.accounted.update_memory(self.memory_usage());
    }

    /// Brings the `INFO` totals up to date after a write that added (or,
    /// negative, removed) `items` items: its memory is measured again
    /// (a sum over the levels), its items are not recounted.
    pub(crate) fn account_write(&mut self, items: i64) {
        let memory = self.memory_usage();
        self.accounted.update_by(items, memory);
    }

    /// [`account_write`](Self::account_write) for an insert whose
    /// admission scope saw `seen`: where it allocated nothing (no level
    /// added: no table admitted, no bytes held), its memory is what was
    /// last accounted and is not measured again (a sum over the levels,
    /// about as costly as the insert of one item itself).
    pub(crate) fn account_insert(&mut self, items: i64, seen: &crate::admission::Outcome) {
        if seen.admitted == 0 && seen.held == 0 {
            self.accounted.add_items(items);
        } else {
            self.account_write(items);
        }
    }

    pub(crate) fn live(meta: Meta, filter: Filter) -> Self {
        Self::new(meta, Body::Live(filter))
    }

    /// The filter, or the error for one still being restored.
    pub(crate) fn filter(&self) -> Result<&Filter, RedisError> {
        match &self.body {
            Body::Live(f) => Ok(f),
            Body::Loading(_) | Body::WindowLoading(_) => Err(RedisError::Str(INCOMPLETE)),
            Body::Window(_) => Err(RedisError::Str(NOT_FOR_WINDOW)),
        }
    }

    /// Records a change: a dump in progress can no longer go on (its
    /// chunks' marks stay, to tell it why).
    pub(crate) fn changed(&mut self) {
        self.version = crate::dumps::next_version();
        if self.dumps.get_mut().changed() {
            // The encoders freed leave the `INFO` total too (a write that
            // allocated nothing does not measure the value again).
            self.account_memory();
        }
    }

    /// Frees the tables of levels a delete emptied and retired, so that
    /// `used_memory` falls with `MEMORY USAGE` and `CF.INFO` `Size` (a
    /// constant-time check when none was).
    pub(crate) fn reclaim_retired(&mut self) {
        if let Body::Live(Filter::Growing(f)) = &mut self.body {
            f.reclaim_retired();
        }
    }

    /// Compacts a growing filter (`CF.COMPACT`, see
    /// [`ScalableCuckooFilter::compact`]): `None` for a filter of one
    /// fixed table (nothing to compact) or one still being restored.
    pub(crate) fn compact(&mut self) -> Option<CompactStats> {
        match &mut self.body {
            Body::Live(Filter::Growing(f)) => Some(f.compact()),
            _ => None,
        }
    }

    /// Bytes held, for `MEMORY USAGE`: the filter (or the restore in
    /// progress) and what its dumps left (`dumps.rs`).
    pub(crate) fn memory_usage(&self) -> usize {
        core::mem::size_of::<Self>()
            + self.dumps.borrow().memory_usage()
            + match &self.body {
                Body::Live(f) => f.memory_usage(),
                // All the decoder allocated (the bytes taken in are in
                // its tables: not counted again).
                Body::Loading(_) => self.restore_held,
                Body::Window(w) => w.memory_usage(),
                Body::WindowLoading(l) => l.memory_usage(),
            }
    }
}

/// The filter of a key opened for reading: `None` for an empty key,
/// `WRONGTYPE` for a key of another type.
pub(crate) fn read<'k>(
    key: &'k RedisKey,
    ty: &RedisType,
) -> Result<Option<&'k CfValue>, RedisError> {
    key.get_value::<CfValue>(ty)
        .map_err(|_| RedisError::WrongType)
}

/// The filter of a key opened for writing: `None` for an empty key,
/// `WRONGTYPE` for a key of another type.
pub(crate) fn write<'k>(
    key: &'k RedisKeyWritable,
    ty: &RedisType,
) -> Result<Option<&'k mut CfValue>, RedisError> {
    key.get_value::<CfValue>(ty)
        .map_err(|_| RedisError::WrongType)
}

/// A fresh random hash seed, chosen on the primary and replicated
/// explicitly (so replicas and AOF replays hash identically).
pub(crate) fn random_seed() -> u64 {
    DefaultHashBuilder::new().seed()
}

/// Makes a restored value live once its decoder has every byte and its
/// settings, the given merged with the encoding's, are those of a live
/// filter ([`Meta::loadable_live`]). On an error the value is left unusable:
/// the caller drops it.
pub(crate) fn complete_if_done(value: &mut CfValue) -> Result<(), String> {
    let Body::Loading(decoder) = &value.body else {
        return Ok(());
    };
    if !decoder.is_complete() {
        return Ok(());
    }
    let Body::Loading(decoder) = core::mem::replace(&mut value.body, Body::Loading(Box::default()))
    else {
        unreachable!("checked above")
    };
    let filter = Filter::from_decoded(decoder.finish().map_err(|e| e.to_string())?)?;
    let meta = value.meta.merged(filter.implied_meta());
    if !meta.loadable_live() {
        // A filter the library allows but the module's settings cannot
        // hold: taken in, it would make the server refuse its own RDB.
        return Err(format!("settings outside the module's ranges: {meta:?}"));
    }
    value.meta = meta;
    value.body = Body::Live(filter);
    // Its items now count in the `INFO` totals (every path that completes
    // a restore: `CF.LOADCHUNK`, an RDB load, `RESTORE`, a full sync).
    value.account();
    Ok(())
}
