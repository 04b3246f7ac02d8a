//! The value of a window filter (`CF.RESERVE key capacity WINDOW ms`): a
//! [`WindowedCuckooFilter`] and the clock that turns the primary's time
//! into its generations, and how it is encoded (RDB, `DUMP`, `COPY`,
//! digests, `CF.SCANDUMP`/`CF.LOADCHUNK`, the AOF rewrite).
//!
//! # Time
//! A window of `w` ms in `g` generations has generations of `L =
//! ceil(w / g)` ms counted from the window's origin (the primary's clock
//! when it was made): the generation at time `now` is `(now - origin) /
//! L`. The library's window is `G = g + 1` generations: an item added in
//! generation `t` (at a time `T` in `[origin + tL, origin + (t+1)L)`) lives
//! through generation `t + g`, that is until `origin + (t+g+1)L > T + gL
//! >= T + w`, and is gone from generation `t + g + 1`, which starts at
//! most `(g+1)L` after `T`: by `T + w + L` when `g` divides `w`.
//!
//! Only the primary reads its clock to change a filter: each write first
//! advances the filter to the clock's generation and replicates that as
//! an explicit `CF.ADVANCE key generation` (`window.rs`); replicas and AOF
//! replays apply only those. Reads on any copy answer as of their own
//! clock's generation without changing a byte (as Redis treats a key whose
//! TTL passed).
//!
//! # The encoding
//! ```text
//!  0  8  magic "CCFRWNDW"
//!  8  8  origin, ms since the epoch (little-endian u64)
//! 16  8  window, ms (u64)
//! 24  8  generation length L, ms (u64)
//! 32  8  capacity (u64)
//! 40  8  error rate (f64 bits)
//! 48  1  g: generations of the window (the library's G is g + 1)
//! 49  7  reserved, 0
//! 56  8  XXH3-64 of bytes 0..56
//! 64  .. the library's encoding of the filter (docs/format.md, version 4)
//! ```

use concurrent_cuckoo::{
    ReadOptions, WindowedChunkDecoder, WindowedChunkEncoder, WindowedCuckooFilter,
};
use core::cell::RefCell;
use xxhash_rust::xxh3::xxh3_64;

/// Bytes of the window block that starts the encoding.
pub(crate) const BLOCK: usize = 64;
/// The window block's magic: what tells a window's first chunk from a
/// plain filter's (the library's encodings start `CCFILTER`-like magic).
pub(crate) const MAGIC: &[u8; 8] = b"CCFRWNDW";
/// Bytes of the library's version-4 header.
const LIB_HEADER: usize = 64;
/// The first `CF.SCANDUMP` chunk: the window block and the library header.
pub(crate) const HEADER_CHUNK: usize = BLOCK + LIB_HEADER;
/// The most generations a window may have (the library allows at most
/// `G = 253`, with 8 tag bits in 32-bit lanes; `G = 29` in 16-bit lanes).
pub(crate) const MAX_GENERATIONS: u64 = 252;

/// A window's clock and the settings its block keeps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Clock {
    /// The primary's clock (ms since the epoch) at generation 0.
    pub(crate) origin: u64,
    /// The window as told, ms.
    pub(crate) window: u64,
    /// `L`, ms: `ceil(window / generations)`.
    pub(crate) length: u64,
    /// `g`.
    pub(crate) generations: u64,
    pub(crate) capacity: u64,
    pub(crate) error_rate: f64,
}

impl Clock {
    /// A clock for `window` ms in `generations` (both at least 1, window at
    /// least generations: checked by the caller).
    pub(crate) fn new(
        origin: u64,
        window: u64,
        generations: u64,
        capacity: u64,
        rate: f64,
    ) -> Self {
        Self {
            origin,
            window,
            length: window.div_ceil(generations),
            generations,
            capacity,
            error_rate: rate,
        }
    }

    /// The generation at `now` (ms since the epoch): 0 before the origin
    /// (a clock that went backwards never moves a window back).
    /// The clock stops at [`MAX_TIME_MS`].
    pub(crate) fn generation_at(&self, now: u64) -> u64 {
        now.min(MAX_TIME_MS).saturating_sub(self.origin) / self.length
    }

    /// The window block.
    pub(crate) fn encode(&self) -> [u8; BLOCK] {
        let mut b = [0u8; BLOCK];
        b[0..8].copy_from_slice(MAGIC);
        b[8..16].copy_from_slice(&self.origin.to_le_bytes());
        b[16..24].copy_from_slice(&self.window.to_le_bytes());
        b[24..32].copy_from_slice(&self.length.to_le_bytes());
        b[32..40].copy_from_slice(&self.capacity.to_le_bytes());
        b[40..48].copy_from_slice(&self.error_rate.to_bits().to_le_bytes());
        b[48] = self.generations as u8;
        let sum = xxh3_64(&b[..56]);
        b[56..64].copy_from_slice(&sum.to_le_bytes());
        b
    }

    /// Parses and checks a window block (`None` for anything else). Each
    /// field is checked before it is used (the checksum proves nothing
    /// against a forger, who recomputes it): `g` in 1-252 before the window
    /// is divided by it, the window in `g..=2^53` ms, the origin at most
    /// 2^53 ms, `L` the one the window implies, the capacity and the rate
    /// in `CF.RESERVE`'s ranges.
    pub(crate) fn decode(b: &[u8]) -> Option<Self> {
        if b.len() < BLOCK || &b[0..8] != MAGIC {
            return None;
        }
        let u64_at = |i: usize| {
            let mut raw = [0u8; 8];
            raw.copy_from_slice(&b[i..i + 8]);
            u64::from_le_bytes(raw)
        };
        if u64_at(56) != xxh3_64(&b[..56]) || b[49..56].iter().any(|&x| x != 0) {
            return None;
        }
        let generations = u64::from(b[48]);
        let (origin, window, capacity) = (u64_at(8), u64_at(16), u64_at(32));
        let error_rate = f64::from_bits(u64_at(40));
        let valid = (1..=MAX_GENERATIONS).contains(&generations)
            && (generations..=MAX_WINDOW_MS).contains(&window)
            && origin <= MAX_TIME_MS
            && (2..=MAX_CAPACITY).contains(&capacity)
            && error_rate > 0.0
            && error_rate < 1.0;
        if !valid {
            return None;
        }
        let clock = Self::new(origin, window, generations, capacity, error_rate);
        (clock.length == u64_at(24)).then_some(clock)
    }

    /// The last generation this clock reaches: at [`MAX_TIME_MS`]. A
    /// filter's generation is never beyond it (a restored or replicated
    /// one that claims more is refused), so its items always expire: the
    /// library stops advancing at 2^63, where they would live for ever.
    pub(crate) fn max_generation(&self) -> u64 {
        MAX_TIME_MS.saturating_sub(self.origin) / self.length
    }
}

/// The latest time a window's clock counts to, ms since the epoch (about
/// the year 287,000): the clock stops there, and no origin is later.
pub(crate) const MAX_TIME_MS: u64 = 1 << 53;

/// The largest capacity a window block may claim (a table of 2^32 buckets
/// holds 2^34 items; more could not be built).
const MAX_CAPACITY: u64 = 1 << 40;

/// The longest window: about 292 million years, so that no sum of times
/// overflows.
pub(crate) const MAX_WINDOW_MS: u64 = 1 << 53;

/// A live window filter.
pub(crate) struct Window {
    pub(crate) filter: WindowedCuckooFilter,
    pub(crate) clock: Clock,
    /// The `CF.SCANDUMP` in progress, if any. `CF.SCANDUMP` reads the
    /// key: hence the cell.
    pub(crate) dump: RefCell<Option<WindowDump>>,
}

impl Window {
    pub(crate) fn new(filter: WindowedCuckooFilter, clock: Clock) -> Self {
        Self {
            filter,
            clock,
            dump: RefCell::new(None),
        }
    }

    /// Bytes of [`write_encoding`](Self::write_encoding): the block, the
    /// library's header, 8 bytes per bucket, its checksum.
    pub(crate) fn encoded_len(&self) -> u64 {
        BLOCK as u64 + self.filter.encoded_len() as u64
    }

    /// Writes the encoding (module docs): the block, then the library's
    /// canonical bytes.
    pub(crate) fn write_encoding(&self, mut out: impl std::io::Write) -> std::io::Result<()> {
        out.write_all(&self.clock.encode())?;
        self.filter.write_to(out)
    }

    /// Bytes held: the filter and a dump's encoder.
    pub(crate) fn memory_usage(&self) -> usize {
        core::mem::size_of::<Self>()
            + self.filter.memory_usage()
            + self
                .dump
                .borrow()
                .as_ref()
                .map_or(0, |d| d.encoder.memory_usage())
    }

    /// Advances the filter to `target` (a generation ahead of its own),
    /// in work bounded by the table, not by how far `target` is. When
    /// every item has expired by `target` (`target >= generation + G`),
    /// the filter is replaced by an empty one at `target`
    /// (`try_empty_at`: the bytes advancing would leave, for one zeroed
    /// table instead of a sweep of this one, which after a long idle time
    /// cost seconds), its table admitted as a new filter's (against
    /// `maxmemory` beyond the one it replaces) and the old one freed off
    /// the main thread ([`free_elsewhere`]). Otherwise (or when
    /// the new table is refused) the library advances it: fewer than `G`
    /// generations, each sweeping its slice of the table
    /// ([`least_generation_ms`] bounds that at `CF.RESERVE`). Every copy
    /// (replica, AOF replay) reaches the same bytes whichever way it took.
    /// Returns the generation reached.
    pub(crate) fn catch_up(&mut self, target: u64) -> u64 {
        let f = &self.filter;
        if self.catch_up_sweeps(target) {
            crate::info::catch_up_swept();
        }
        if target >= f.generation().saturating_add(f.generations()) {
            // Admitted as a new filter's table, against `maxmemory` for
            // what it adds beyond the table it replaces (none): a filter
            // near `maxmemory` is replaced too.
            let replaced = f.memory_usage();
            let (fresh, _) =
                crate::admission::within_replacing(0, replaced, || f.try_empty_at(target));
            if let Ok(fresh) = fresh {
                free_elsewhere(core::mem::replace(&mut self.filter, fresh));
                return self.filter.generation();
            }
        }
        self.filter.advance_to(target)
    }

    /// Whether advancing to `target` sweeps part of the table: short of a
    /// whole window ahead (a reset), it does unless `target` is the next
    /// generation and this one's slice was swept already (the sweeper's
    /// work, `window_sweeper.rs`).
    fn catch_up_sweeps(&self, target: u64) -> bool {
        let f = &self.filter;
        let current = f.generation();
        target > current
            && target < current.saturating_add(f.generations())
            && (target > current + 1 || f.sweep_left() > 0)
    }

    /// Whether `item` is live at generation `generation` (the reader's
    /// clock: the filter's own where that is ahead), changing nothing.
    pub(crate) fn contains_at(&self, item: &[u8], generation: u64) -> bool {
        self.filter.contains_at(item, generation)
    }

    /// Live items at `generation`, changing nothing.
    pub(crate) fn len_at(&self, generation: u64) -> usize {
        self.filter.len_at(generation)
    }
}

/// Tables from this size on are freed on a thread of their own.
const FREE_ELSEWHERE_FROM: usize = 16 << 20;

/// Drops `filter`, on a thread of its own when its table is large (giving
/// back a gigabyte of pages takes the main thread tens of milliseconds),
/// as Redis's lazy free does for large values. The server's allocator is
/// thread-safe. Where no thread can be started, here.
fn free_elsewhere(filter: WindowedCuckooFilter) {
    if filter.memory_usage() < FREE_ELSEWHERE_FROM {
        return;
    }
    // A refused spawn drops the closure, and the filter with it, here.
    let _ = std::thread::Builder::new()
        .name("cuckoo-free".into())
        .spawn(move || drop(filter));
}

/// Nanoseconds a write's catch-up is assumed to take per bucket it sweeps,
/// for [`least_generation_ms`]: above the most measured, 44-64 ns, on a
/// shared 2-core host (Redis 7.0 and Valkey 9.1, tables of 28 and 122
/// million buckets caught up 4 generations on pages never touched before;
/// `docs/redis.md`, "Items that expire").
const SWEEP_NS_PER_BUCKET: u64 = 100;

/// The shortest generation (ms) a filter's window may have: the time its
/// longest catch-up may take, and at least four times its sweeper's work
/// per generation. A write that finds its filter `k < G` generations
/// behind advances through them, each sweeping a slice of `buckets / (M -
/// 1 - G)` buckets (a longer gap replaces the table: [`Window::catch_up`]),
/// so at most `G - 1 = g` slices. With generations at least that long, a
/// command's catch-up ends well within one generation: an item a write
/// added is found by the next command. With generations at least four
/// slices long, the sweeper (`window_sweeper.rs`), which may take 30% of
/// the main thread, sweeps each generation's slice within it, so that in
/// steady use no write sweeps at all. (`None` for a filter whose catch-up
/// takes under 2 ms.)
pub(crate) fn least_generation_ms(filter: &WindowedCuckooFilter) -> Option<u64> {
    least_generation_ms_of(buckets(filter), filter.tag_bits(), filter.generations())
}

/// A window filter's buckets: four lanes each, or two of 32 bits.
pub(crate) fn buckets(filter: &WindowedCuckooFilter) -> u64 {
    filter.slots() as u64 * u64::from(filter.lane_bits()) / 64
}

/// The inverse of the main thread's share the sweeper needs at the shortest
/// generation, at [`SWEEP_NS_PER_BUCKET`]: a quarter, within its 30%.
const SWEEPER_SHARE: u64 = 4;

/// [`least_generation_ms`] of a table of `buckets` buckets, `tag_bits`
/// tag bits and `G` generations (as a library header names them).
fn least_generation_ms_of(buckets: u64, tag_bits: u32, generations: u64) -> Option<u64> {
    let lanes = 1u64 << tag_bits.min(16);
    let slack = lanes.saturating_sub(1 + generations).max(1);
    let swept = buckets.div_ceil(slack) * generations.saturating_sub(1).max(SWEEPER_SHARE);
    let ms = swept
        .saturating_mul(SWEEP_NS_PER_BUCKET)
        .div_ceil(1_000_000);
    (ms > 1).then_some(ms)
}

/// A `CF.SCANDUMP` of a window filter: where it stands, read from the
/// live table chunk by chunk (no copy of it).
pub(crate) struct WindowDump {
    /// The value's version the dump began at: any change (a write, an
    /// advance) makes it stale.
    pub(crate) version: u64,
    /// The library's encoder, at the dump's position past the block (with
    /// the checksum of the bytes it handed out).
    pub(crate) encoder: WindowedChunkEncoder,
    /// The iterator its last chunk told the client to go on from.
    pub(crate) next: u64,
}

/// A window filter being restored by `CF.LOADCHUNK` (or loaded while it
/// was): its block's clock, and the library's encoding decoded straight
/// into its table as the bytes arrive (the table, allocated when the
/// first chunk's header arrived and admitted as a new filter's, is the
/// only copy).
pub(crate) struct WindowLoad {
    pub(crate) clock: Clock,
    decoder: WindowedChunkDecoder,
    /// Bytes of the whole encoding, the block's included.
    pub(crate) total: u64,
}

/// Why a window's restore cannot go on.
#[derive(Debug)]
pub(crate) enum LoadError {
    /// Its first bytes are not a window filter's encoding (or not one
    /// this source may send): [`parse_header`].
    NotAWindow,
    /// Its bytes are damaged (the library says how).
    Damaged(String),
}

impl core::fmt::Display for LoadError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::NotAWindow => f.write_str("not a window filter's encoding"),
            Self::Damaged(why) => f.write_str(why),
        }
    }
}

impl WindowLoad {
    /// A restore whose first bytes are `first` (the block and at least the
    /// library's header, every field checked by [`parse_header`]): its
    /// table allocated, as the caller's admission scope allows.
    pub(crate) fn begin(first: &[u8]) -> Result<Self, LoadError> {
        let (clock, total) = parse_header(first).ok_or(LoadError::NotAWindow)?;
        if first.len() as u64 > total {
            return Err(LoadError::Damaged("more bytes than announced".into()));
        }
        let options = ReadOptions::new().table_memory(crate::alloc::TABLES);
        let mut load = Self {
            clock,
            decoder: WindowedChunkDecoder::new(options),
            total,
        };
        load.feed(&first[BLOCK..])?;
        Ok(load)
    }

    /// Takes the next bytes (checked as they arrive). On an error the
    /// restore cannot go on.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Result<(), LoadError> {
        self.decoder
            .feed(bytes)
            .map_err(|e| LoadError::Damaged(e.to_string()))
    }

    /// Bytes received, the block's included.
    pub(crate) fn received(&self) -> u64 {
        BLOCK as u64 + self.decoder.consumed()
    }

    pub(crate) fn is_complete(&self) -> bool {
        self.received() == self.total
    }

    /// The live window, once every byte arrived and checked.
    pub(crate) fn finish(self) -> Result<Window, LoadError> {
        let filter = self
            .decoder
            .finish()
            .map_err(|e| LoadError::Damaged(e.to_string()))?;
        if filter.generations() != self.clock.generations + 1 {
            return Err(LoadError::Damaged(
                "the window's generations disagree with its filter's".into(),
            ));
        }
        Ok(Window::new(filter, self.clock))
    }

    /// Writes the bytes received, exactly (read back from the table being
    /// filled: no copy is kept).
    pub(crate) fn write_received(&self, mut out: impl std::io::Write) -> std::io::Result<()> {
        out.write_all(&self.clock.encode())?;
        self.decoder.write_received(out)
    }

    /// A copy (its own table, admitted in the caller's scope), fed the
    /// bytes this one received a piece at a time.
    pub(crate) fn try_clone(&self) -> Result<Self, LoadError> {
        let mut copy = Refeed {
            first: Vec::with_capacity(HEADER_CHUNK),
            load: None,
            error: None,
        };
        if self.write_received(&mut copy).is_err() {
            return Err(copy
                .error
                .unwrap_or(LoadError::Damaged("copy failed".into())));
        }
        match copy.load {
            Some(load) => Ok(load),
            None => Self::begin(&copy.first),
        }
    }

    pub(crate) fn memory_usage(&self) -> usize {
        core::mem::size_of::<Self>() + self.decoder.memory_usage()
    }
}

/// A writer that restores what it is given: the first chunk's bytes
/// gathered until they hold the block and header, then fed.
struct Refeed {
    first: Vec<u8>,
    load: Option<WindowLoad>,
    error: Option<LoadError>,
}

impl std::io::Write for Refeed {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let fed = match &mut self.load {
            Some(load) => load.feed(buf),
            None => {
                self.first.extend_from_slice(buf);
                if self.first.len() < HEADER_CHUNK {
                    return Ok(buf.len());
                }
                WindowLoad::begin(&self.first).map(|load| {
                    self.load = Some(load);
                    self.first = Vec::new();
                })
            }
        };
        match fed {
            Ok(()) => Ok(buf.len()),
            Err(e) => {
                self.error = Some(e);
                Err(std::io::Error::other("refused"))
            }
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The clock and encoded length a first chunk (at least the block and the
/// library's header) announces: `None` unless it is a window's. Every
/// field of the library's header is checked here too, before any is used
/// (the library checks them again when it decodes): the version, lane
/// and slot sizes (16 bits and 4, or 32 and 2), path length and tag bits
/// (at most 5 and 5, or 8 and 8), generations (`G = g + 1`,
/// the block's), magic, reserved bytes, the bucket count (even, 2 to 2^32: what
/// sizes the restore's buffer) and the generation (at most the clock's
/// last, [`Clock::max_generation`], and, from a client, at most
/// [`AHEAD_ALLOWED`] windows ahead of this server's clock: a forged
/// generation far ahead would keep every item for as long). From a
/// client, a window too short for its table's catch-up is refused too, as
/// `CF.RESERVE` refuses it ([`least_generation_ms`]).
pub(crate) fn parse_header(first: &[u8]) -> Option<(Clock, u64)> {
    let clock = Clock::decode(first)?;
    let lib = first.get(BLOCK..HEADER_CHUNK)?;
    let u64_at = |i: usize| u64::from_le_bytes(lib[i..i + 8].try_into().expect("8 bytes"));
    let (max_path, tag_bits, generations) = (lib[12], lib[13], u64::from(lib[14]));
    let (buckets, generation) = (u64_at(16), u64_at(24));
    // 16-bit lanes, four a bucket, or 32-bit ones, two a bucket: the
    // longest path and the most tag bits each allows.
    let most = match (lib[10], lib[11]) {
        (16, 4) => Some(5),
        (32, 2) => Some(8),
        _ => None,
    };
    let valid = lib[..8] == *b"\x89CUCKOO\n"
        && u16::from_le_bytes([lib[8], lib[9]]) == 4
        && most
            .is_some_and(|most| (1..=most).contains(&max_path) && (2..=most).contains(&tag_bits))
        && generations == clock.generations + 1
        && generations + 3 <= 1 << tag_bits
        && lib[15] == 0
        && lib[36..40] == [0; 4]
        && lib[48..64] == [0; 16]
        && (2..=1 << 32).contains(&buckets)
        && buckets.is_multiple_of(2)
        && generation <= clock.max_generation()
        && (crate::admission::trusted_source()
            || (!too_far_ahead(&clock, generation, now_ms())
                && least_generation_ms_of(buckets, u32::from(tag_bits), generations)
                    .is_none_or(|least| clock.length >= least)));
    valid.then(|| (clock, (HEADER_CHUNK + 8) as u64 + buckets * 8))
}

/// Windows a restored filter's generation may be ahead of this server's
/// clock when a client sends it (clocks of two servers differ a little;
/// a load or a primary is trusted as it is).
pub(crate) const AHEAD_ALLOWED: u64 = 2;

/// Whether `generation` is more than [`AHEAD_ALLOWED`] windows (of `g + 1`
/// generations) ahead of `clock`'s generation at `now`.
pub(crate) fn too_far_ahead(clock: &Clock, generation: u64, now: u64) -> bool {
    generation > clock.generation_at(now) + AHEAD_ALLOWED * (clock.generations + 1)
}

/// A live window from its whole encoding: checked as the library checks
/// its own (magic, fields, each bucket, checksum), and the block against
/// it (`G = g + 1`). Its table is allocated by the library (admitted by
/// the caller's scope). (For the fuzz target and the tests: the server
/// takes encodings in pieces, [`WindowLoad`].)
#[cfg(any(test, fuzzing))]
pub(crate) fn decode(bytes: &[u8]) -> Result<Window, LoadError> {
    let (_, total) = parse_header(bytes).ok_or(LoadError::NotAWindow)?;
    if bytes.len() as u64 != total {
        return Err(LoadError::Damaged(format!(
            "{} bytes where {total} were announced",
            bytes.len()
        )));
    }
    WindowLoad::begin(bytes)?.finish()
}

/// The current time, ms since the epoch: the command's cached time where
/// the server has it (Redis 7.2+, Valkey: one time for a whole script or
/// `MULTI`, as Redis uses for key expiry), its clock otherwise.
pub(crate) fn now_ms() -> u64 {
    if let Some(cached) = crate::api::api!(RedisModule_CachedMicroseconds) {
        // SAFETY: a plain read of the server's cached time.
        let us = unsafe { cached() };
        return u64::try_from(us).unwrap_or(0) / 1000;
    }
    match crate::api::api!(RedisModule_Milliseconds) {
        // SAFETY: a plain read of the server's clock.
        Some(ms) => u64::try_from(unsafe { ms() }).unwrap_or(0),
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_round_trip_and_damage_is_refused() {
        let clock = Clock::new(1_700_000_000_000, 1000, 3, 5000, 0.001);
        assert_eq!(clock.length, 334);
        let block = clock.encode();
        assert_eq!(Clock::decode(&block), Some(clock));
        for bit in 0..BLOCK * 8 {
            let mut damaged = block;
            damaged[bit / 8] ^= 1 << (bit % 8);
            assert_eq!(Clock::decode(&damaged), None, "bit {bit}");
        }
        assert_eq!(Clock::decode(&block[..63]), None);
    }

    /// The first chunk of a real window filter: its block and the
    /// library's header.
    fn header_chunk(generations: u64) -> Vec<u8> {
        header_chunk_at(generations, 0.01)
    }

    /// [`header_chunk`] of a filter for `rate` (below 9.8e-4, or with more
    /// than 28 generations, in 32-bit lanes).
    fn header_chunk_at(generations: u64, rate: f64) -> Vec<u8> {
        let clock = Clock::new(1_700_000_000_000, 1000, generations, 5000, rate);
        let f = WindowedCuckooFilter::builder()
            .capacity(5000)
            .generations(generations + 1)
            .false_positive_rate(rate)
            .build()
            .unwrap();
        let mut chunk = clock.encode().to_vec();
        chunk.extend_from_slice(&f.to_bytes()[..LIB_HEADER]);
        chunk
    }

    /// Recomputes the window block's checksum, as a forger does.
    fn reseal(chunk: &mut [u8]) {
        let sum = xxh3_64(&chunk[..56]);
        chunk[56..64].copy_from_slice(&sum.to_le_bytes());
    }

    /// A whole encoding restores from pieces of any size, the bytes
    /// received written back exactly at every point, and a copy of a
    /// restore in progress goes on to the same filter.
    #[test]
    fn a_restore_in_pieces_takes_the_bytes_into_the_table() {
        let seed = include_bytes!("../tests/data/window-filter.bin");
        for size in [1, 7, 64, 100, 1000, seed.len()] {
            let first = seed.len().min(HEADER_CHUNK.max(size));
            let mut load = WindowLoad::begin(&seed[..first]).unwrap();
            let mut at = first;
            while at < seed.len() {
                let end = seed.len().min(at + size);
                load.feed(&seed[at..end]).unwrap();
                at = end;
                let mut back = Vec::new();
                load.write_received(&mut back).unwrap();
                assert_eq!(back, seed[..at], "size {size} at {at}");
                if at * 2 > seed.len() && at - size <= seed.len() / 2 {
                    let copy = load.try_clone().unwrap();
                    assert_eq!(copy.received(), load.received());
                }
            }
            assert!(load.is_complete());
            let window = load.finish().unwrap();
            let mut again = Vec::new();
            window.write_encoding(&mut again).unwrap();
            assert_eq!(&again[..], &seed[..], "size {size}");
        }
    }

    /// Issue 50, item 1: `g = 0` with the checksum recomputed divided by
    /// zero before its range was checked.
    #[test]
    fn a_forged_block_with_no_generations_is_refused() {
        let mut chunk = header_chunk(3);
        assert!(parse_header(&chunk).is_some());
        chunk[48] = 0;
        reseal(&mut chunk);
        assert_eq!(Clock::decode(&chunk), None);
        assert!(parse_header(&chunk).is_none());
    }

    /// Every byte of the block and the library's header set to each of a
    /// few values, the block's checksum recomputed (so the checks behind
    /// it run): never a panic, and whatever is accepted has every field in
    /// range.
    #[test]
    fn every_forged_field_is_checked_before_use() {
        // 16-bit lanes; 32-bit ones with 3 and with 8 tag bits.
        for good in [
            header_chunk(3),
            header_chunk_at(3, 1e-6),
            header_chunk_at(200, 0.01),
        ] {
            every_forged_field_of(&good);
        }
    }

    fn every_forged_field_of(good: &[u8]) {
        assert!(parse_header(good).is_some());
        for at in (0..HEADER_CHUNK).filter(|i| !(56..64).contains(i)) {
            for value in [0u8, 1, 2, 3, 0x7f, 0x80, 0xfe, 0xff] {
                let mut chunk = good.to_vec();
                chunk[at] = value;
                reseal(&mut chunk);
                if let Some((clock, total)) = parse_header(&chunk) {
                    assert!((1..=MAX_GENERATIONS).contains(&clock.generations));
                    assert!(clock.length >= 1 && clock.window <= MAX_WINDOW_MS);
                    assert!(
                        total <= (HEADER_CHUNK + 8) as u64 + (8 << 32),
                        "{at}: {total}"
                    );
                }
            }
        }
    }

    /// Issue 50, item 8: a generation at 2^63 (where the library stops
    /// advancing: its items would never expire) is refused, as is one
    /// past the clock's last or far ahead of the clock.
    #[test]
    fn forged_generations_are_refused() {
        let mut chunk = header_chunk(3);
        let clock = Clock::decode(&chunk).unwrap();
        let at = BLOCK + 24;
        for (generation, accepted) in [
            (0, true),
            (AHEAD_ALLOWED * 4, true),
            (AHEAD_ALLOWED * 4 + 1, false),
            (clock.max_generation(), false),
            (1 << 63, false),
            (u64::MAX, false),
        ] {
            chunk[at..at + 8].copy_from_slice(&generation.to_le_bytes());
            assert_eq!(parse_header(&chunk).is_some(), accepted, "{generation}");
        }
        let now = 1_700_000_000_000 + 1000 * 3600;
        assert!(!too_far_ahead(&clock, clock.generation_at(now) + 8, now));
        assert!(too_far_ahead(&clock, clock.generation_at(now) + 9, now));
        assert_eq!(clock.generation_at(u64::MAX), clock.max_generation());
    }

    /// Issue 50, items 2 and 3: a first chunk from a client whose window
    /// is too short for its table's catch-up is refused, as `CF.RESERVE`
    /// refuses it; a window long enough is taken.
    #[test]
    fn a_window_too_short_for_its_table_is_refused() {
        let mut chunk = header_chunk(3);
        chunk[BLOCK + 16..BLOCK + 24].copy_from_slice(&(1u64 << 27).to_le_bytes());
        assert!(parse_header(&chunk).is_none());
        let clock = Clock::new(1_700_000_000_000, 600_000, 3, 5000, 0.01);
        chunk[..BLOCK].copy_from_slice(&clock.encode());
        assert!(parse_header(&chunk).is_some());
        assert_eq!(least_generation_ms_of(1 << 10, 3, 5), None);
        // 2^27 buckets, 3 tag bits, G = 5: 2 slices of 2^26 per
        // generation, 4 generations, at 100 ns a bucket.
        assert_eq!(least_generation_ms_of(1 << 27, 3, 5), Some(26_844));
        // G = 2: 5 slices of 2^27 / 5; one to catch up, four for the
        // sweeper's share.
        assert_eq!(least_generation_ms_of(1 << 27, 3, 2), Some(10_738));
    }

    /// Lane widths and slot counts other than 16 and 4 or 32 and 2, and
    /// paths or tags past what the width allows, are refused.
    #[test]
    fn lane_widths_and_their_limits_are_checked() {
        let (narrow, wide) = (header_chunk(3), header_chunk_at(3, 1e-6));
        assert_eq!(
            (narrow[BLOCK + 10], wide[BLOCK + 10], wide[BLOCK + 12]),
            (16, 32, 8)
        );
        for (chunk, at, value, accepted) in [
            (&narrow, 10, 32, false),
            (&narrow, 11, 2, false),
            (&narrow, 12, 6, false),
            (&narrow, 13, 6, false),
            (&wide, 11, 4, false),
            (&wide, 10, 16, false),
            (&wide, 12, 9, false),
            (&wide, 13, 9, false),
            (&wide, 13, 8, true),
        ] {
            let mut forged = chunk.clone();
            forged[BLOCK + at] = value;
            assert_eq!(
                parse_header(&forged).is_some(),
                accepted,
                "byte {at} = {value}"
            );
        }
    }

    /// A window of 32-bit lanes encodes, restores in pieces and decodes
    /// back to the same bytes, as the seed of 16-bit lanes does.
    #[test]
    fn a_wide_window_restores_in_pieces() {
        let bytes = wide_window_encoding();
        for size in [1, 100, bytes.len()] {
            let first = bytes.len().min(HEADER_CHUNK.max(size));
            let mut load = WindowLoad::begin(&bytes[..first]).unwrap();
            for piece in bytes[first..].chunks(size) {
                load.feed(piece).unwrap();
            }
            let mut again = Vec::new();
            load.finish().unwrap().write_encoding(&mut again).unwrap();
            assert!(again == bytes, "size {size}");
        }
        let window = decode(&bytes).unwrap();
        // What the RDB's settings block announces (it once counted 16-bit
        // lanes: a wide window's save was refused on loading).
        assert_eq!(window.encoded_len(), bytes.len() as u64);
        assert_eq!(buckets(&window.filter), 1318);
        assert_eq!(window.filter.len(), 1500);
        assert!((0..1500u64).all(|i| window.filter.contains(&i)));
        // The window fuzz target's second seed is this encoding.
        let seed = include_bytes!("../tests/data/window-filter-wide.bin");
        assert!(
            seed[..] == bytes[..],
            "tests/data/window-filter-wide.bin differs"
        );
    }

    /// Writes `tests/data/window-filter-wide.bin`, the window fuzz target's
    /// seed of 32-bit lanes: run on purpose only.
    #[test]
    #[ignore = "writes redis/tests/data/window-filter-wide.bin"]
    fn write_the_wide_fuzz_seed() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/window-filter-wide.bin"
        );
        std::fs::write(path, wide_window_encoding()).unwrap();
    }

    /// A window of 40 generations in 32-bit lanes holding 1,500 items.
    fn wide_window_encoding() -> Vec<u8> {
        let clock = Clock::new(1_700_000_000_000, 60_000, 40, 2000, 1e-6);
        let f = WindowedCuckooFilter::builder()
            .capacity(2000)
            .generations(41)
            .false_positive_rate(1e-6)
            .seed(7)
            .build()
            .unwrap();
        assert_eq!(f.lane_bits(), 32);
        for i in 0..1500u64 {
            f.insert(&i).unwrap();
        }
        let mut bytes = Vec::new();
        Window::new(f, clock).write_encoding(&mut bytes).unwrap();
        bytes
    }

    /// The fuzz target's seed (`scripts/fuzz.sh`), a window filter's
    /// encoding pulled from a server with `CF.SCANDUMP`, decodes and
    /// encodes back the same.
    #[test]
    fn the_fuzz_seed_decodes() {
        let seed = include_bytes!("../tests/data/window-filter.bin");
        let window = decode(seed).unwrap();
        let mut again = Vec::new();
        window.write_encoding(&mut again).unwrap();
        assert_eq!(&again[..], &seed[..]);
        assert_eq!(window.filter.len(), 40);
    }

    #[test]
    fn an_item_lives_through_the_window_and_is_gone_a_generation_later() {
        // g = 4 of a 1000 ms window: L = 250; G = 5.
        let clock = Clock::new(10_000, 1000, 4, 100, 0.001);
        for added in [10_000u64, 10_249, 10_250, 10_999] {
            let f = WindowedCuckooFilter::builder()
                .capacity(100)
                .generations(5)
                .false_positive_rate(0.001)
                .build()
                .unwrap();
            f.advance_to(clock.generation_at(added));
            f.insert(&added).unwrap();
            // Found through added + window, gone by added + window + L.
            for later in [added, added + 500, added + 1000] {
                let g = f.advance_to(clock.generation_at(later));
                assert!(f.contains(&added), "{added} at {later} (generation {g})");
            }
            f.advance_to(clock.generation_at(added + 1000 + 250));
            assert!(!f.contains(&added), "{added} after the window");
        }
        assert_eq!(clock.generation_at(0), 0, "before the origin");
    }
}
