//! A timed filter's saved form: its clock's schedule (epoch and generation
//! length) in a small header, then the windowed filter's own encoding
//! (checksummed, version 4; see docs/format.md).
//!
//! ```text
//! offset size field
//!      0    8 magic "CCFTIMED"
//!      8    4 version (1), little-endian like every field
//!     12    4 generations (the time to live's steps, >= 1)
//!     16    8 epoch, wall-clock milliseconds
//!     24    8 generation length, milliseconds (>= 1)
//!     32    - the windowed filter's encoding (window = generations + 1)
//! ```

use super::clock::{Clock, SystemClock};
use super::TimedCuckooFilter;
use crate::error::DecodeError;
use crate::hashing::{DefaultHashBuilder, PersistentHasher};
use crate::persist::ReadOptions;
use crate::windowed::WindowedCuckooFilter;
use std::io;
use std::path::Path;

const MAGIC: &[u8; 8] = b"CCFTIMED";
const VERSION: u32 = 1;
const HEADER: usize = 32;

impl<C, S: PersistentHasher> TimedCuckooFilter<C, S> {
    /// The filter's bytes: its schedule, then the windowed filter's
    /// encoding. Loaded with the same clock (or the system's, which the
    /// epoch is in), its keys expire on the same schedule, whatever time
    /// passed in between.
    ///
    /// ```
    /// use concurrent_cuckoo::{ManualClock, TimedCuckooFilter};
    /// use std::time::Duration;
    /// let clock = ManualClock::new(5_000_000);
    /// let f = TimedCuckooFilter::builder()
    ///     .capacity(100)
    ///     .time_to_live(Duration::from_secs(60))
    ///     .clock(clock.clone())
    ///     .build()?;
    /// f.insert("k")?;
    /// let bytes = f.to_bytes();
    /// clock.advance_ms(30_000); // a restart in between
    /// let back = TimedCuckooFilter::from_bytes_with_clock(&bytes, clock.clone())?;
    /// assert!(back.contains("k"));
    /// clock.advance_ms(45_000); // 75 s after the insert: gone
    /// assert!(!back.contains("k"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Panics
    /// As [`WindowedCuckooFilter::to_bytes`]: if the encoding cannot be
    /// allocated.
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        let window = self.window.to_bytes();
        let mut out = Vec::with_capacity(HEADER + window.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        // Built with at most `u64::MAX - 1` steps; a window wider than
        // `u32` cannot be built (253 generations at most).
        let steps = u32::try_from(self.generations()).unwrap_or(u32::MAX);
        out.extend_from_slice(&steps.to_le_bytes());
        out.extend_from_slice(&self.epoch_ms.to_le_bytes());
        out.extend_from_slice(&self.generation_ms.to_le_bytes());
        out.extend_from_slice(&window);
        out
    }

    /// Writes [`to_bytes`](Self::to_bytes) to `path` crash-safely (a
    /// temporary file, synced, renamed over `path`).
    ///
    /// # Errors
    /// Any I/O error creating, writing, syncing or renaming the file.
    pub fn write_to_path<P: AsRef<Path>>(&self, path: P) -> io::Result<()> {
        let bytes = self.to_bytes();
        crate::persist::write_atomically(path.as_ref(), |file| io::Write::write_all(file, &bytes))
    }
}

impl<C: Clock> TimedCuckooFilter<C, DefaultHashBuilder> {
    /// Decodes [`to_bytes`](Self::to_bytes)' output, reading time from
    /// `clock` and advanced at once to the generation it says (keys whose
    /// time ran out while the bytes lay saved are gone).
    ///
    /// # Errors
    /// A [`DecodeError`] naming what is wrong: not a timed filter's bytes
    /// ([`DecodeError::BadMagic`]), an unknown version, a field out of
    /// range, or the windowed filter's own errors. Never panics, whatever
    /// the input.
    pub fn from_bytes_with_clock(bytes: &[u8], clock: C) -> Result<Self, DecodeError> {
        Self::from_bytes_with_options(bytes, clock, ReadOptions::new())
    }
}

impl<C: Clock, S: PersistentHasher> TimedCuckooFilter<C, S> {
    /// [`from_bytes_with_clock`](TimedCuckooFilter::from_bytes_with_clock)
    /// as `options` say (a limit, the table's memory, the hasher: see
    /// [`ReadOptions`]).
    ///
    /// # Errors
    /// As [`from_bytes_with_clock`](TimedCuckooFilter::from_bytes_with_clock),
    /// and [`DecodeError::ExceedsLimit`] past the options' limit.
    pub fn from_bytes_with_options(
        bytes: &[u8],
        clock: C,
        options: ReadOptions<S>,
    ) -> Result<Self, DecodeError> {
        Self::decode(bytes, clock, options)
    }

    fn decode(bytes: &[u8], clock: C, options: ReadOptions<S>) -> Result<Self, DecodeError> {
        let header = bytes.get(..HEADER).ok_or(DecodeError::Truncated)?;
        if &header[..8] != MAGIC {
            return Err(DecodeError::BadMagic);
        }
        let word = |at: usize| u32::from_le_bytes(header[at..at + 4].try_into().expect("4 bytes"));
        let long = |at: usize| u64::from_le_bytes(header[at..at + 8].try_into().expect("8 bytes"));
        let version = word(8);
        if version != VERSION {
            return Err(DecodeError::UnsupportedVersion(
                u16::try_from(version).unwrap_or(u16::MAX),
            ));
        }
        let (steps, epoch_ms, generation_ms) = (u64::from(word(12)), long(16), long(24));
        if steps == 0 {
            return Err(DecodeError::InvalidHeader(
                "a timed filter of 0 generations",
            ));
        }
        if generation_ms == 0 || generation_ms.checked_mul(steps).is_none() {
            return Err(DecodeError::InvalidHeader("generation length out of range"));
        }
        let window = WindowedCuckooFilter::from_bytes_with_options(&bytes[HEADER..], options)?;
        if window.generations() != steps + 1 {
            return Err(DecodeError::InvalidHeader(
                "the window does not match the timed filter's generations",
            ));
        }
        let filter = Self {
            window,
            clock,
            epoch_ms,
            generation_ms,
        };
        filter.catch_up();
        Ok(filter)
    }
}

impl TimedCuckooFilter<SystemClock, DefaultHashBuilder> {
    /// [`from_bytes_with_clock`](Self::from_bytes_with_clock) with the
    /// system clock.
    ///
    /// # Errors
    /// As [`from_bytes_with_clock`](Self::from_bytes_with_clock).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        Self::from_bytes_with_clock(bytes, SystemClock)
    }
}
