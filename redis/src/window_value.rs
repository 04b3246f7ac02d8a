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

use concurrent_cuckoo::{DefaultHashBuilder, ReadOptions, WindowedCuckooFilter};
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
/// `G = 29` with 5 tag bits).
pub(crate) const MAX_GENERATIONS: u64 = 28;

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
    pub(crate) fn generation_at(&self, now: u64) -> u64 {
        now.saturating_sub(self.origin) / self.length
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

    /// Parses and checks a window block (`None` for anything else).
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
        let clock = Self::new(
            u64_at(8),
            u64_at(16),
            generations,
            u64_at(32),
            f64::from_bits(u64_at(40)),
        );
        let valid = (1..=MAX_GENERATIONS).contains(&generations)
            && clock.window >= generations
            && clock.window <= MAX_WINDOW_MS
            && clock.length == u64_at(24)
            && clock.capacity >= 1
            && clock.error_rate > 0.0
            && clock.error_rate < 1.0;
        valid.then_some(clock)
    }
}

/// The longest window: about 292 million years, so that no sum of times
/// overflows.
pub(crate) const MAX_WINDOW_MS: u64 = 1 << 53;

/// A live window filter.
pub(crate) struct Window {
    pub(crate) filter: WindowedCuckooFilter,
    pub(crate) clock: Clock,
    /// The encoding a `CF.SCANDUMP` in progress hands out, with the
    /// value's version it was made at: made once per dump (the library
    /// encodes a version-4 filter whole), dropped at the dump's end or at
    /// the next change. `CF.SCANDUMP` reads the key: hence the cell.
    pub(crate) dump: RefCell<Option<(u64, Vec<u8>)>>,
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
        (BLOCK + LIB_HEADER + 8) as u64 + self.filter.slots() as u64 * 2
    }

    /// Writes the encoding (module docs): the block, then the library's
    /// canonical bytes.
    pub(crate) fn write_encoding(&self, mut out: impl std::io::Write) -> std::io::Result<()> {
        out.write_all(&self.clock.encode())?;
        self.filter.write_to(out)
    }

    /// The encoding in one buffer, allocated fallibly (`None` where the
    /// allocator refused it).
    pub(crate) fn encoding(&self) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        out.try_reserve_exact(self.encoded_len() as usize).ok()?;
        self.write_encoding(&mut out).ok()?;
        Some(out)
    }

    /// Bytes held: the filter and a dump's encoding.
    pub(crate) fn memory_usage(&self) -> usize {
        core::mem::size_of::<Self>()
            + self.filter.memory_usage()
            + self.dump.borrow().as_ref().map_or(0, |(_, d)| d.capacity())
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

/// A window filter being restored by `CF.LOADCHUNK`: the bytes so far of
/// an encoding of `total` bytes (its block and header came first).
pub(crate) struct WindowLoad {
    pub(crate) clock: Clock,
    pub(crate) bytes: Vec<u8>,
    pub(crate) total: u64,
}

impl WindowLoad {
    pub(crate) fn memory_usage(&self) -> usize {
        core::mem::size_of::<Self>() + self.bytes.capacity()
    }

    pub(crate) fn is_complete(&self) -> bool {
        self.bytes.len() as u64 == self.total
    }
}

/// The clock and encoded length a first chunk (at least the block and the
/// library's header) announces: `None` unless it is a window's.
pub(crate) fn parse_header(first: &[u8]) -> Option<(Clock, u64)> {
    let clock = Clock::decode(first)?;
    let lib = first.get(BLOCK..HEADER_CHUNK)?;
    // The library's version-4 header: version at 8, buckets at 16 (the
    // library checks every field again when it decodes).
    if u16::from_le_bytes([lib[8], lib[9]]) != 4 {
        return None;
    }
    let buckets = u64::from_le_bytes(lib[16..24].try_into().ok()?);
    if !(2..=1 << 32).contains(&buckets) {
        return None;
    }
    Some((clock, (HEADER_CHUNK + 8) as u64 + buckets * 8))
}

/// Bytes of table a filter of `total` encoded bytes needs at least (its
/// buckets): what admission checks before any buffer is allocated.
pub(crate) fn table_bytes(total: u64) -> usize {
    usize::try_from(total.saturating_sub((HEADER_CHUNK + 8) as u64)).unwrap_or(usize::MAX)
}

/// A live window from its whole encoding: checked as the library checks
/// its own (magic, fields, checksum), and the block against it (`G = g +
/// 1`). Its table is allocated by the library (admitted by the caller's
/// scope).
pub(crate) fn decode(bytes: &[u8]) -> Result<Window, String> {
    let (clock, total) = parse_header(bytes).ok_or("not a window filter's encoding")?;
    if bytes.len() as u64 != total {
        return Err(format!(
            "{} bytes where {total} were announced",
            bytes.len()
        ));
    }
    let options = ReadOptions::new().table_memory(crate::alloc::TABLES);
    let filter = WindowedCuckooFilter::<DefaultHashBuilder>::from_bytes_with_options(
        &bytes[BLOCK..],
        options,
    )
    .map_err(|e| e.to_string())?;
    if filter.generations() != clock.generations + 1 {
        return Err("the window's generations disagree with its filter's".into());
    }
    Ok(Window::new(filter, clock))
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
