//! What a key remembers of its `CF.SCANDUMP` dumps: where they reached, of
//! which version of the filter, and encoders to go on from.
//!
//! A dump is named by its iterator alone (RedisBloom's: one more than the
//! bytes handed out), so a call is told apart from another only by where
//! it is. Each value therefore records the positions its chunks ended at
//! with the version of the filter they were cut from (its *marks*), and
//! cuts each new chunk so that it never ends where a mark of another
//! version is: a position names at most one version, whoever asks (a
//! client, or a script: all scripts share one client id). A call at a
//! position marked by an older version is a stale dump ("the filter
//! changed"); one at the end of a version's encoding closes a whole dump.
//! A version is unique for the module's life (a global counter taken at
//! every change and every new value), so no later state is taken for an
//! earlier one.
//!
//! A position no chunk of this value ended at is served as RedisBloom
//! serves any iterator: the current filter's bytes from there, at the cost
//! of one chunk ([`Dumps::encoder_at`]: a seek, not the bytes before it).
//! What a key remembers is bounded ([`MAX_MARKS`], [`MAX_STATES`]); one
//! entry per client with a dump in progress ([`Dumpers`]) tells a dump
//! whose key now holds another value that it was replaced.

use concurrent_cuckoo::ChunkEncoder;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Positions remembered per value, the newest: 24 bytes each.
pub(crate) const MAX_MARKS: usize = 256;

/// Encoders of the current version kept per value (each a few hundred
/// bytes), the newest: a dump continuing from one pays its chunk alone,
/// checksums included (it carries the running checksum of its table).
pub(crate) const MAX_STATES: usize = 128;

/// Encodings longer than this keep their base encoder (a few hundred
/// bytes) past a dump's closing call: reading a table again for its
/// checksum would cost more than a millisecond.
pub(crate) const KEEP_BASE_ABOVE: u64 = 4 << 20;

/// The next version (see [`next_version`]).
static NEXT_VERSION: AtomicU64 = AtomicU64::new(1);

/// A version of a filter never handed out before in this module's life:
/// taken when a value is made and at each change to it.
pub(crate) fn next_version() -> u64 {
    NEXT_VERSION.fetch_add(1, Ordering::Relaxed)
}

/// Where a chunk handed out ended.
#[derive(Clone, Copy, Debug)]
struct Mark {
    position: u64,
    version: u64,
    /// The encoding's end: the next call there closes a whole dump.
    end: bool,
    /// A dump of this version closed: another chunk may end here (the
    /// mark is then replaced), where a chunk is cut short before the marks
    /// of versions no dump closed.
    closed: bool,
}

/// What a call at a position continues.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// A dump of the current version: go on.
    Current,
    /// A dump that handed out every chunk of the version given: it ends.
    End(u64),
    /// A dump of an earlier version: it cannot go on.
    Stale,
    /// No chunk ended here: served as any position is.
    Unknown,
}

/// The dumps of one value.
#[derive(Default)]
pub(crate) struct Dumps {
    /// Encoders of the current version where chunks ended (not at the end).
    states: Vec<ChunkEncoder>,
    /// An encoder of the current version at position 0 holding every
    /// table checksum learned so far: where a seek starts.
    base: Option<ChunkEncoder>,
    /// Where chunks ended, one per position (the newest), oldest first.
    marks: Vec<Mark>,
}

impl Dumps {
    /// The filter changed: the current version's encoders are of no more
    /// use; the marks stay, to tell their dumps. Returns whether anything
    /// was freed (what the value holds must then be measured again).
    pub(crate) fn changed(&mut self) -> bool {
        let freed = !self.states.is_empty() || self.base.is_some();
        if !self.states.is_empty() {
            self.states = Vec::new();
        }
        self.base = None;
        freed
    }

    /// What a call at `position` continues, the filter being at `version`.
    pub(crate) fn find(&self, position: u64, version: u64) -> Found {
        match self.marks.iter().rev().find(|m| m.position == position) {
            None => Found::Unknown,
            Some(m) if m.end => Found::End(m.version),
            Some(m) if m.version == version => Found::Current,
            Some(_) => Found::Stale,
        }
    }

    /// The closing call of a dump of `version` (at its end) came, the
    /// filter being at `current`: its encoders go, and its marks are
    /// closed (later chunks may end there instead of being cut short
    /// before them: otherwise every dump after a finished one would be
    /// cut shorter). Another client still dumping that version goes on
    /// from a seek (the base, with the table checksums it learned, is
    /// kept for an encoding of more than [`KEEP_BASE_ABOVE`] bytes, so
    /// that its chunks cost their bytes alone); if the filter changes, it
    /// is told so unless a later chunk ended where it stopped, which took
    /// the mark (then only the checksums on restore tell it).
    pub(crate) fn ended(&mut self, version: u64, current: u64) {
        if version == current {
            self.states = Vec::new();
            if self
                .base
                .as_ref()
                .is_some_and(|b| b.total_len() <= KEEP_BASE_ABOVE)
            {
                self.base = None;
            }
        }
        for mark in &mut self.marks {
            if mark.version == version {
                mark.closed = true;
            }
        }
    }

    /// The encoding's length at `version`, from the base encoder (made by
    /// `make` where there is none).
    pub(crate) fn total_len(&mut self, make: impl FnOnce() -> ChunkEncoder) -> u64 {
        self.base.get_or_insert_with(make).total_len()
    }

    /// An encoder of the current version at `position` (at most the
    /// encoding's length): a copy of the state a dump left there, or the
    /// base moved there (O(levels); the checksum of the table it lands in
    /// is the base's if learned, else one pass over that table when
    /// reached, then learned: `handed_out`).
    pub(crate) fn encoder_at(
        &mut self,
        position: u64,
        make: impl FnOnce() -> ChunkEncoder,
    ) -> std::io::Result<ChunkEncoder> {
        if let Some(state) = self.states.iter().rev().find(|s| s.position() == position) {
            return Ok(state.clone());
        }
        let mut encoder = self.base.get_or_insert_with(make).clone();
        encoder.seek(position)?;
        Ok(encoder)
    }

    /// Where the chunk from `position` of at most `max` bytes of an
    /// encoding of `total` bytes at `version` ends: `position + max` (or
    /// the end), or short of it where a chunk of another version ended,
    /// so that every position names one version. (At most [`MAX_MARKS`]
    /// steps back. The end of the encoding is never moved: a dump that
    /// ended there was whole. So a dump of an earlier state whose chunk
    /// ended exactly where the current encoding ends, if any, is then
    /// taken for a whole one: only the length of its restore tells it.)
    pub(crate) fn chunk_end(&self, position: u64, max: u64, total: u64, version: u64) -> u64 {
        let natural = position.saturating_add(max).min(total);
        if natural == total {
            return total;
        }
        let taken = |end: u64| {
            self.marks
                .iter()
                .any(|m| m.position == end && m.version != version && !m.closed)
        };
        let mut end = natural;
        while taken(end) && end > position + 1 {
            end -= 1;
        }
        // Every position before it taken (more marks than bytes): the
        // natural end, whose mark then names this version.
        if taken(end) {
            natural
        } else {
            end
        }
    }

    /// Records a chunk of `version` handed out, `encoder` being where it
    /// ended: its end marked (the newest mark there), the encoder kept to
    /// go on from, the checksums it learned given to the base.
    pub(crate) fn handed_out(&mut self, encoder: ChunkEncoder, version: u64) {
        if let Some(base) = &mut self.base {
            base.adopt_digests(&encoder);
        }
        let position = encoder.position();
        let end = encoder.is_done();
        self.marks.retain(|m| m.position != position);
        if self.marks.len() >= MAX_MARKS {
            self.marks.remove(0);
        }
        self.marks.push(Mark {
            position,
            version,
            end,
            closed: false,
        });
        if !end {
            self.states.retain(|s| s.position() != position);
            if self.states.len() >= MAX_STATES {
                self.states.remove(0);
            }
            self.states.push(encoder);
        }
    }

    /// Bytes held besides the value's struct.
    pub(crate) fn memory_usage(&self) -> usize {
        crate::alloc::vec_bytes(&self.states)
            + self
                .states
                .iter()
                .chain(&self.base)
                .map(|e| e.memory_usage() - core::mem::size_of::<ChunkEncoder>())
                .sum::<usize>()
            + crate::alloc::vec_bytes(&self.marks)
    }
}

/// Clients with a dump in progress remembered at once (32 bytes each and
/// the map's own): entries go when their dump's closing call comes, so
/// only this many dumps left unfinished at once push the oldest out.
pub(crate) const MAX_DUMPERS: usize = 16384;

/// Which value each client is dumping at each place (a database and key,
/// digested): a client continuing a dump at a place that now holds another
/// value (`DEL` and a new filter, `RESTORE REPLACE`, `RENAME`, `SWAPDB`)
/// learns that its filter was replaced, rather than being handed another
/// filter's chunks or `[0, nil]` as if its dump were complete. The marks
/// of a value live in it; this is the one thing that must outlive it.
/// (All scripts share one client id: a script beginning a dump of the new
/// value at the same place takes the entry of one that dumped the old.)
pub(crate) struct Dumpers(Mutex<Option<DumperMap>>);

/// `(client, place)` to the dumped value's uid and when it began.
type DumperMap = HashMap<(u64, u64), (u64, u64)>;

/// The module's [`Dumpers`].
pub(crate) static DUMPERS: Dumpers = Dumpers(Mutex::new(None));

/// Orders [`Dumpers`] entries (the oldest goes first).
static DUMPER_CLOCK: AtomicU64 = AtomicU64::new(0);

impl Dumpers {
    fn with<R>(&self, f: impl FnOnce(&mut DumperMap) -> R) -> R {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        f(map.get_or_insert_with(HashMap::new))
    }

    /// Records that `client` begins dumping value `uid` at `place`.
    pub(crate) fn began(&self, client: u64, place: u64, uid: u64) {
        let now = DUMPER_CLOCK.fetch_add(1, Ordering::Relaxed);
        self.with(|map| {
            if map.len() >= MAX_DUMPERS && !map.contains_key(&(client, place)) {
                // Full: the oldest unfinished dump is forgotten (one scan,
                // only when full).
                if let Some(&oldest) = map.iter().min_by_key(|(_, &(_, t))| t).map(|(k, _)| k) {
                    map.remove(&oldest);
                }
            }
            map.insert((client, place), (uid, now));
        });
    }

    /// `client`'s dump at `place` ended (its closing call came).
    pub(crate) fn ended(&self, client: u64, place: u64) {
        self.with(|map| {
            map.remove(&(client, place));
            if map.is_empty() {
                // Give the room back once idle.
                map.shrink_to_fit();
            }
        });
    }

    /// Whether the dump `client` began at `place` was of another value
    /// than `uid` (false where none is remembered).
    pub(crate) fn replaced(&self, client: u64, place: u64, uid: u64) -> bool {
        self.with(|map| map.get(&(client, place)).is_some_and(|&(u, _)| u != uid))
    }
}
