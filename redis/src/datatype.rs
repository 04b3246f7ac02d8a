//! The module's data type: how Redis saves, loads, rewrites, copies,
//! measures and frees a `CF.*` value.
//!
//! # The RDB value (encoding version 1)
//!
//! ```text
//! string   the settings block, 64 bytes:
//!            0   8  magic "CCFRMETA"
//!            8   8  capacity                      (little-endian u64)
//!           16   8  error rate                    (f64 bits)
//!           24   8  deletes                       (u64)
//!           32   1  bucket size
//!           33   1  reserved, 0
//!           34   2  max iterations                (u16)
//!           36   2  expansion                     (u16)
//!           38   1  state: 0 live, 1 being restored, 2 a live window
//!                    filter, 3 a window filter being restored
//!           39   9  reserved, 0
//!           48   8  bytes of the pieces that follow (u64)
//!           56   8  XXH3-64 of bytes 0..56
//! unsigned the number of pieces
//! string   each piece, at most 64 MiB
//! ```
//!
//! The pieces, concatenated, are the library's encoding of the filter
//! (`docs/format.md`: its own header and checksums), or for a filter still
//! being restored by `CF.LOADCHUNK`, the bytes that arrived so far. The
//! filter is rebuilt from them a piece at a time, checked as `from_bytes`
//! checks; any damage, a short read (the module sets
//! `REDISMODULE_OPTIONS_HANDLE_IO_ERRORS`) or a value of a newer encoding
//! makes the load fail (Redis then refuses the RDB file or the `RESTORE`)
//! rather than produce a filter that answers wrong.
//!
//! A window filter (states 2 and 3) saves its own encoding in the pieces
//! (`window_value.rs`: its window block, then the library's version-4
//! encoding), or the bytes of it that arrived. The encoding version stays
//! 1, so every existing value loads unchanged and a module that predates
//! windows still loads every plain filter; such a module refuses a window
//! filter's value cleanly (its state byte is not one it knows: the load
//! fails, as for any damaged value).

use crate::value::complete_if_done;
use crate::value::{Body, CfValue, Meta};
use crate::window_value::{self, Window, WindowLoad};
use core::ffi::{c_int, c_void};
use redis_module::native_types::RedisType;
use redis_module::raw;
use xxhash_rust::xxh3::xxh3_64;

/// Registered as `cuckoo-cf`: its own type, not RedisBloom's `MBbloomCF`
/// (whose values it could not read, nor RedisBloom its).
pub(crate) static CF_TYPE: RedisType = RedisType::new(
    "cuckoo-cf",
    ENCODING_VERSION,
    raw::RedisModuleTypeMethods {
        version: raw::REDISMODULE_TYPE_METHOD_VERSION as u64,
        rdb_load: Some(rdb_load),
        rdb_save: Some(rdb_save),
        aof_rewrite: Some(aof_rewrite),
        mem_usage: Some(mem_usage),
        digest: Some(digest),
        free: Some(free),
        aux_load: None,
        aux_save: None,
        aux_save2: None,
        aux_save_triggers: 0,
        free_effort: Some(free_effort),
        unlink: None,
        copy: Some(copy),
        defrag: Some(crate::defrag::defrag),
        copy2: None,
        free_effort2: None,
        mem_usage2: None,
        unlink2: None,
    },
);

const ENCODING_VERSION: i32 = 1;
const META_LEN: usize = 64;
const MAGIC: &[u8; 8] = b"CCFRMETA";
/// Largest piece of an RDB value.
const RDB_PIECE: usize = 64 << 20;
/// Largest chunk of an AOF rewrite's `CF.LOADCHUNK` (well under Redis's
/// default 512 MiB `proto-max-bulk-len`).
const AOF_CHUNK: usize = 16 << 20;

/// What a value is, as its settings block says (byte 38).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Live = 0,
    Loading = 1,
    Window = 2,
    WindowLoading = 3,
}

impl State {
    fn of(body: &Body) -> Self {
        match body {
            Body::Live(_) => Self::Live,
            Body::Loading(_) => Self::Loading,
            Body::Window(_) => Self::Window,
            Body::WindowLoading(_) => Self::WindowLoading,
        }
    }

    /// Whether the value is being restored (its settings are those given).
    fn loading(self) -> bool {
        matches!(self, Self::Loading | Self::WindowLoading)
    }
}

/// The settings block (see the module docs).
fn encode_meta(meta: &Meta, state: State, pieces_len: u64) -> [u8; META_LEN] {
    let mut b = [0u8; META_LEN];
    b[0..8].copy_from_slice(MAGIC);
    b[8..16].copy_from_slice(&meta.capacity.to_le_bytes());
    b[16..24].copy_from_slice(&meta.error_rate.to_bits().to_le_bytes());
    b[24..32].copy_from_slice(&meta.deleted.to_le_bytes());
    b[32] = meta.bucket_size;
    b[34..36].copy_from_slice(&meta.max_iterations.to_le_bytes());
    b[36..38].copy_from_slice(&meta.expansion.to_le_bytes());
    b[38] = state as u8;
    b[48..56].copy_from_slice(&pieces_len.to_le_bytes());
    let sum = xxh3_64(&b[..56]);
    b[56..64].copy_from_slice(&sum.to_le_bytes());
    b
}

/// Parses and checks a settings block: the settings, whether the value is
/// being restored, and the bytes of its pieces.
fn decode_meta(b: &[u8]) -> Option<(Meta, State, u64)> {
    if b.len() != META_LEN || &b[0..8] != MAGIC {
        return None;
    }
    let u64_at = |i: usize| {
        let mut raw = [0u8; 8];
        raw.copy_from_slice(&b[i..i + 8]);
        u64::from_le_bytes(raw)
    };
    if u64_at(56) != xxh3_64(&b[..56]) || b[33] != 0 || b[39..48].iter().any(|&x| x != 0) {
        return None;
    }
    let meta = Meta {
        capacity: u64_at(8),
        error_rate: f64::from_bits(u64_at(16)),
        deleted: u64_at(24),
        bucket_size: b[32],
        max_iterations: u16::from_le_bytes([b[34], b[35]]),
        expansion: u16::from_le_bytes([b[36], b[37]]),
        max_levels: 0,
    };
    let state = match b[38] {
        0 => State::Live,
        1 => State::Loading,
        2 => State::Window,
        3 => State::WindowLoading,
        _ => return None,
    };
    let loading = state.loading();
    // A restore in progress keeps what its first chunk gave (zero: not
    // given, and never an expansion: that is the encoding's); a live
    // filter's settings are all set.
    let given = (meta.error_rate == 0.0 || (meta.error_rate > 0.0 && meta.error_rate < 1.0))
        && meta.expansion == 0;
    if !(if loading { given } else { meta.loadable_live() }) {
        return None;
    }
    if state == State::Window && meta.expansion != 0 {
        return None;
    }
    Some((meta, state, u64_at(48)))
}

/// The bytes a value saves after its settings: the encoding of a live
/// filter (produced a piece at a time by `each`), or what a restore in
/// progress has taken in.
fn for_each_piece(
    value: &CfValue,
    max: usize,
    mut each: impl FnMut(u64, &[u8]) -> bool,
) -> Result<(), String> {
    match &value.body {
        Body::Live(filter) => {
            let mut encoder = filter.encoder();
            let total = encoder.total_len();
            let mut piece = Vec::with_capacity(max.min(total as usize));
            while !encoder.is_done() {
                piece.clear();
                filter
                    .next_chunk(&mut encoder, max, &mut piece)
                    .map_err(|e| e.to_string())?;
                if !each(total, &piece) {
                    return Ok(());
                }
            }
            Ok(())
        }
        Body::Loading(_) | Body::Window(_) | Body::WindowLoading(_) => {
            // Written out a piece at a time: never a copy of every byte
            // received (a restore in progress may hold gigabytes).
            let total = pieces_len(value);
            let mut pieces = Pieces {
                piece: Vec::with_capacity(max.min(total as usize)),
                max,
                each: |piece: &[u8]| each(total, piece),
                stopped: false,
            };
            let written = match &value.body {
                Body::Loading(decoder) => decoder.write_consumed(&mut pieces),
                Body::Window(w) => w.write_encoding(&mut pieces),
                Body::WindowLoading(l) => l.write_received(&mut pieces),
                Body::Live(_) => unreachable!("matched above"),
            };
            match written {
                Ok(()) | Err(_) if pieces.stopped => Ok(()),
                Ok(()) => {
                    pieces.flush_piece();
                    Ok(())
                }
                Err(e) => Err(e.to_string()),
            }
        }
    }
}

/// A writer that hands what it is given to `each` in pieces of `max`
/// bytes (the last shorter), and stops (an error to the writer) once
/// `each` says so.
struct Pieces<F: FnMut(&[u8]) -> bool> {
    piece: Vec<u8>,
    max: usize,
    each: F,
    stopped: bool,
}

impl<F: FnMut(&[u8]) -> bool> Pieces<F> {
    fn flush_piece(&mut self) {
        if !self.piece.is_empty() && !self.stopped {
            self.stopped = !(self.each)(&self.piece);
            self.piece.clear();
        }
    }
}

impl<F: FnMut(&[u8]) -> bool> std::io::Write for Pieces<F> {
    fn write(&mut self, mut buf: &[u8]) -> std::io::Result<usize> {
        let len = buf.len();
        while !buf.is_empty() {
            if self.stopped {
                return Err(std::io::Error::other("stopped"));
            }
            let n = buf.len().min(self.max - self.piece.len());
            self.piece.extend_from_slice(&buf[..n]);
            buf = &buf[n..];
            if self.piece.len() == self.max {
                self.flush_piece();
            }
        }
        Ok(len)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Bytes of the pieces a value saves.
fn pieces_len(value: &CfValue) -> u64 {
    match &value.body {
        Body::Live(filter) => filter.encoder().total_len(),
        Body::Loading(decoder) => decoder.consumed(),
        Body::Window(w) => w.encoded_len(),
        Body::WindowLoading(l) => l.received(),
    }
}

unsafe extern "C" fn rdb_save(rdb: *mut raw::RedisModuleIO, value: *mut c_void) {
    // SAFETY: Redis passes a value this type created (`rdb_load`, `copy`
    // or `set_value`), alive for the call.
    let value = unsafe { &*value.cast::<CfValue>() };
    let total = pieces_len(value);
    let state = State::of(&value.body);
    raw::save_slice(rdb, &encode_meta(&value.meta, state, total));
    raw::save_unsigned(rdb, total.div_ceil(RDB_PIECE as u64));
    let result = for_each_piece(value, RDB_PIECE, |_, piece| {
        raw::save_slice(rdb, piece);
        true
    });
    if let Err(e) = result {
        // Cannot happen (nothing writes during a save); the short value
        // then fails to load rather than load wrong.
        log_warning(&format!("cuckoo: saving a filter failed: {e}"));
    }
}

unsafe extern "C" fn rdb_load(rdb: *mut raw::RedisModuleIO, encver: c_int) -> *mut c_void {
    if encver != ENCODING_VERSION {
        log_warning(&format!(
            "cuckoo: a filter of encoding version {encver} (this module reads {ENCODING_VERSION})"
        ));
        return core::ptr::null_mut();
    }
    // Admitted (`admission.rs`): for a `RESTORE`, each table against
    // `cuckoo.cf-max-memory-usage` and `maxmemory`; while the server loads
    // its data, nothing is refused (persisted data always loads) and a
    // filter over the limit is named in the log.
    match crate::admission::within(0, || load(rdb)) {
        (_, seen) if seen.refused => {
            log_warning(&format!(
                "cuckoo: a saved filter needs more memory than cuckoo.cf-max-memory-usage \
                 ({} bytes) or maxmemory allows: refused (raise the limit to load it)",
                crate::configs::max_memory_usage()
            ));
            core::ptr::null_mut()
        }
        (Some(mut value), seen) => {
            if matches!(value.body, Body::Loading(_)) {
                value.restore_held = seen.held;
                value.account();
            }
            if crate::admission::loading() {
                crate::admission::note_loaded(&key_name(rdb), value.memory_usage());
            }
            if matches!(value.body, Body::Window(_)) {
                note_window(rdb);
            }
            Box::into_raw(Box::new(value)).cast()
        }
        (None, _) => {
            log_warning("cuckoo: a saved filter is damaged or cut short: refused");
            core::ptr::null_mut()
        }
    }
}

/// Notes the key a window filter is being loaded into for the sweeper
/// (`window_keys.rs`), where the server names it and its database (a
/// `RESTORE` also raises a keyspace event the sweeper hears).
fn note_window(rdb: *mut raw::RedisModuleIO) {
    let name = key_name(rdb);
    let Some(db_of) = crate::api::api!(RedisModule_GetDbIdFromIO) else {
        return;
    };
    // SAFETY: `rdb` is the IO Redis passed to `rdb_load`, alive for the
    // call.
    let db = unsafe { db_of(rdb) };
    if !name.is_empty() && db >= 0 {
        crate::window_keys::note(db, &name);
    }
}

/// The name of the key being loaded (empty where the server does not say).
fn key_name(rdb: *mut raw::RedisModuleIO) -> Vec<u8> {
    let Some(name) = crate::api::api!(RedisModule_GetKeyNameFromIO) else {
        return Vec::new();
    };
    // SAFETY: `rdb` is the IO Redis passed to `rdb_load`, alive for the
    // call; the name it returns (or null) lives as long.
    let name = unsafe { name(rdb) };
    if name.is_null() {
        return Vec::new();
    }
    let mut len = 0;
    match crate::api::api!(RedisModule_StringPtrLen) {
        // SAFETY: `name` is a live RedisModuleString; the pointer returned
        // is valid for `len` bytes while it lives, copied here at once.
        Some(ptr_len) => unsafe {
            let p = ptr_len(name, &mut len);
            if p.is_null() {
                Vec::new()
            } else {
                core::slice::from_raw_parts(p.cast::<u8>(), len).to_vec()
            }
        },
        None => Vec::new(),
    }
}

fn load(rdb: *mut raw::RedisModuleIO) -> Option<CfValue> {
    let block = raw::load_string_buffer(rdb).ok()?;
    let (meta, state, total) = decode_meta(block.as_ref())?;
    let pieces = raw::load_unsigned(rdb).ok()?;
    if pieces != total.div_ceil(RDB_PIECE as u64) {
        return None;
    }
    if matches!(state, State::Window | State::WindowLoading) {
        return load_window(rdb, meta, state, total, pieces);
    }
    let loading = state.loading();
    // A live filter's encoding is exactly the pieces: a table header that
    // claims more (a forged value) is refused before its table is
    // allocated. A restore in progress saved only the start of its
    // encoding, whose headers rightly claim more.
    let mut decoder = if loading {
        crate::alloc::decoder()
    } else {
        crate::alloc::decoder().limit(total)
    };
    for _ in 0..pieces {
        let piece = raw::load_string_buffer(rdb).ok()?;
        let piece = piece.as_ref();
        let expected = (total - decoder.consumed()).min(RDB_PIECE as u64);
        if piece.len() as u64 != expected {
            return None;
        }
        decoder.feed(piece).ok()?;
    }
    if decoder.consumed() != total {
        return None;
    }
    let mut value = CfValue::new(meta, Body::Loading(Box::new(decoder)));
    if loading {
        // Still incomplete, as it was saved.
        return match &value.body {
            Body::Loading(d) if !d.is_complete() => Some(value),
            _ => None,
        };
    }
    let settings = value.meta;
    complete_if_done(&mut value).ok()?;
    match &value.body {
        Body::Live(filter) if filter.implied_meta().expansion == settings.expansion => {
            value.meta = settings;
            Some(value)
        }
        _ => None,
    }
}

/// A window filter's value after its settings block: its pieces fed
/// straight into its table (`WindowLoad`), allocated once the first
/// piece's header, every field checked, has said how large it is, and
/// admitted against the limits and allocated fallibly in the load's
/// scope (a `RESTORE` of a forged value claiming gigabytes is refused,
/// never an abort; no buffer of the encoding is held besides the table).
fn load_window(
    rdb: *mut raw::RedisModuleIO,
    meta: Meta,
    state: State,
    total: u64,
    pieces: u64,
) -> Option<CfValue> {
    let mut read = 0u64;
    let mut loaded: Option<WindowLoad> = None;
    for _ in 0..pieces {
        let piece = raw::load_string_buffer(rdb).ok()?;
        let piece = piece.as_ref();
        let expected = total.checked_sub(read)?.min(RDB_PIECE as u64);
        if piece.len() as u64 != expected {
            return None;
        }
        read += expected;
        match loaded.as_mut() {
            Some(load) => load.feed(piece).ok()?,
            None => {
                let (_, whole) = window_value::parse_header(piece)?;
                let complete = whole == total;
                if (state == State::Window) != complete || whole < total {
                    return None;
                }
                // Its table, admitted in the load's scope (refused: the
                // scope says so) and filled as the pieces arrive.
                loaded = Some(WindowLoad::begin(piece).ok()?);
            }
        }
    }
    let load = loaded?;
    let body = match state {
        State::Window => Body::Window(Box::new(load.finish().ok()?)),
        _ => Body::WindowLoading(Box::new(load)),
    };
    Some(CfValue::new(meta, body))
}

/// Rewrites the value as the `CF.LOADCHUNK` commands that rebuild it (only
/// called with `aof-use-rdb-preamble no`; otherwise the rewrite's base is
/// an RDB). The first chunk carries the settings `CF.INFO` reports: all of
/// a live filter's, and those a restore in progress was given with its
/// first chunk (the others are zero, "not given", which `CF.LOADCHUNK`
/// would refuse).
unsafe extern "C" fn aof_rewrite(
    aof: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
    value: *mut c_void,
) {
    // SAFETY: as in `rdb_save`.
    let value = unsafe { &*value.cast::<CfValue>() };
    let Some(emit) = crate::api::api!(RedisModule_EmitAOF) else {
        return;
    };
    let m = value.meta;
    let settings: Vec<(&[u8], String)> = [
        (
            &b"BUCKETSIZE"[..],
            m.bucket_size != 0,
            m.bucket_size.to_string(),
        ),
        (
            b"MAXITERATIONS",
            m.max_iterations != 0,
            m.max_iterations.to_string(),
        ),
        (b"CAPACITY", m.capacity != 0, m.capacity.to_string()),
        (b"ERROR", m.error_rate != 0.0, format!("{:?}", m.error_rate)),
        (b"DELETED", m.deleted != 0, m.deleted.to_string()),
    ]
    .into_iter()
    .filter(|&(_, set, _)| set)
    .map(|(keyword, _, value)| (keyword, value))
    .collect();
    // The format of a command of the key and `2 + 2 * pairs` buffers: the
    // iterator, the chunk and `pairs` keyword-value pairs.
    const FORMATS: [&core::ffi::CStr; 6] = [
        c"sbb",
        c"sbbbb",
        c"sbbbbbb",
        c"sbbbbbbbb",
        c"sbbbbbbbbbb",
        c"sbbbbbbbbbbbb",
    ];
    let mut offset = 0u64;
    let result = for_each_piece(value, AOF_CHUNK, |_, chunk| {
        let iterator = (offset + chunk.len() as u64 + 1).to_string();
        let pairs = if offset == 0 { settings.len() } else { 0 };
        let mut b: [&[u8]; 12] = [&[]; 12];
        b[0] = iterator.as_bytes();
        b[1] = chunk;
        for (i, (keyword, value)) in settings[..pairs].iter().enumerate() {
            b[2 + 2 * i] = keyword;
            b[3 + 2 * i] = value.as_bytes();
        }
        // SAFETY: `EmitAOF` reads its variadic arguments by the format
        // string: `s` a RedisModuleString (the key Redis passed), each `b`
        // a pointer and a length, all alive for the call. It reads the
        // first `2 + 2 * pairs` buffers; C ignores the variadic arguments
        // a function does not read, so the unused (empty) ones may follow.
        unsafe {
            emit(
                aof,
                c"CF.LOADCHUNK".as_ptr(),
                FORMATS[pairs].as_ptr(),
                key,
                b[0].as_ptr(),
                b[0].len(),
                b[1].as_ptr(),
                b[1].len(),
                b[2].as_ptr(),
                b[2].len(),
                b[3].as_ptr(),
                b[3].len(),
                b[4].as_ptr(),
                b[4].len(),
                b[5].as_ptr(),
                b[5].len(),
                b[6].as_ptr(),
                b[6].len(),
                b[7].as_ptr(),
                b[7].len(),
                b[8].as_ptr(),
                b[8].len(),
                b[9].as_ptr(),
                b[9].len(),
                b[10].as_ptr(),
                b[10].len(),
                b[11].as_ptr(),
                b[11].len(),
            );
        }
        offset += chunk.len() as u64;
        true
    });
    if let Err(e) = result {
        log_warning(&format!(
            "cuckoo: rewriting a filter to the AOF failed: {e}"
        ));
    }
}

unsafe extern "C" fn mem_usage(value: *const c_void) -> usize {
    // SAFETY: as in `rdb_save`.
    unsafe { &*value.cast::<CfValue>() }.memory_usage()
}

/// `free_effort`: the work of freeing a value, in units where more than
/// Redis's `LAZYFREE_THRESHOLD` (64) frees it on a background thread
/// (`UNLINK`, eviction, `FLUSHALL ASYNC`, an overwritten key with
/// `lazyfree-lazy-*`). A table is one allocation, but freeing a large one
/// returns its pages to the system, work in proportion to its size: one
/// unit per 64 KiB, so filters of more than 4 MiB are freed off the main
/// thread. (`free` is safe there: a value is `Send`.)
unsafe extern "C" fn free_effort(_key: *mut raw::RedisModuleString, value: *const c_void) -> usize {
    // SAFETY: as in `rdb_save`.
    let value = unsafe { &*value.cast::<CfValue>() };
    1 + value.memory_usage() / FREE_EFFORT_UNIT
}

/// Bytes of a value per unit of `free_effort`.
const FREE_EFFORT_UNIT: usize = 64 << 10;

/// `DEBUG DIGEST-VALUE` (and `DEBUG DIGEST`): the settings block and the
/// encoding, which holds every fingerprint where it lies, so two values
/// digest alike exactly when they save alike (a replica's filter against
/// its primary's).
unsafe extern "C" fn digest(md: *mut raw::RedisModuleDigest, value: *mut c_void) {
    let (Some(add), Some(end)) = (
        crate::api::api!(RedisModule_DigestAddStringBuffer),
        crate::api::api!(RedisModule_DigestEndSequence),
    ) else {
        return;
    };
    // SAFETY: as in `rdb_save`.
    let value = unsafe { &*value.cast::<CfValue>() };
    let total = pieces_len(value);
    let meta = encode_meta(&value.meta, State::of(&value.body), total);
    // SAFETY: `md` is the digest Redis passed, alive for the call; each
    // buffer is read for its length during the call.
    unsafe { add(md, meta.as_ptr().cast(), meta.len()) };
    let result = for_each_piece(value, DIGEST_PIECE, |_, piece| {
        // SAFETY: as above.
        unsafe { add(md, piece.as_ptr().cast(), piece.len()) };
        true
    });
    if let Err(e) = result {
        log_warning(&format!("cuckoo: digesting a filter failed: {e}"));
    }
    // SAFETY: as above.
    unsafe { end(md) };
}

/// Pieces `COPY` moves a restore in progress's bytes in.
const COPY_PIECE: usize = 16 << 20;

/// Pieces a digest takes the encoding in.
const DIGEST_PIECE: usize = 1 << 20;

unsafe extern "C" fn free(value: *mut c_void) {
    // SAFETY: `value` is a `Box<CfValue>` this type created; Redis frees
    // each value once, after its last use.
    drop(unsafe { Box::from_raw(value.cast::<CfValue>()) });
}

/// `COPY`: a deep copy, moved through the encoding a piece at a time.
unsafe extern "C" fn copy(
    _from: *mut raw::RedisModuleString,
    _to: *mut raw::RedisModuleString,
    value: *const c_void,
) -> *mut c_void {
    // SAFETY: as in `rdb_save`.
    let value = unsafe { &*value.cast::<CfValue>() };
    // Admitted as a new filter's tables (`COPY` fails when refused).
    let (body, seen) = crate::admission::within(0, || match &value.body {
        Body::Live(filter) => filter.duplicate().map(Body::Live),
        Body::Window(w) => copy_window(w).map(Body::Window),
        Body::WindowLoading(l) => l
            .try_clone()
            .map(|copy| Body::WindowLoading(Box::new(copy)))
            .map_err(|e| e.to_string()),
        Body::Loading(_) => {
            // Fed a piece at a time (no copy of every byte received).
            let mut copy = crate::alloc::decoder();
            let mut fed = Ok(());
            for_each_piece(value, COPY_PIECE, |_, piece| {
                fed = copy.feed(piece).map_err(|e| e.to_string());
                fed.is_ok()
            })
            .and(fed)
            .map(|()| Body::Loading(Box::new(copy)))
        }
    });
    match body {
        Ok(body) => {
            let mut copy = CfValue::new(value.meta, body);
            if matches!(copy.body, Body::Loading(_)) {
                copy.restore_held = seen.held;
                // `CfValue::new` counted the struct alone in the `INFO`
                // totals: the decoder's bytes count from here.
                copy.account();
            }
            Box::into_raw(Box::new(copy)).cast()
        }
        Err(e) => {
            log_warning(&format!("cuckoo: COPY failed: {e}"));
            core::ptr::null_mut()
        }
    }
}

/// A copy of a window filter: the library's copy of its canonical buckets
/// at one moment (no encoding in between; its table admitted as a new
/// filter's), with the same clock.
fn copy_window(w: &Window) -> Result<Box<Window>, String> {
    let filter = w.filter.try_clone().map_err(|e| e.to_string())?;
    Ok(Box::new(Window::new(filter, w.clock)))
}

fn log_warning(message: &str) {
    redis_module::logging::log_warning(message);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_blocks_round_trip_and_damage_is_refused() {
        let meta = Meta {
            capacity: 1000,
            bucket_size: 3,
            max_iterations: 500,
            expansion: 2,
            error_rate: 0.01,
            deleted: 7,
            max_levels: 0,
        };
        let block = encode_meta(&meta, State::Live, 12345);
        assert_eq!(decode_meta(&block), Some((meta, State::Live, 12345)));
        for bit in 0..META_LEN * 8 {
            let mut damaged = block;
            damaged[bit / 8] ^= 1 << (bit % 8);
            assert_eq!(decode_meta(&damaged), None, "bit {bit}");
        }
        assert_eq!(decode_meta(&block[..63]), None);
        // A restore in progress saves what its first chunk gave.
        let given = Meta {
            bucket_size: 4,
            ..Meta::UNSET
        };
        let block = encode_meta(&given, State::Loading, 10);
        assert_eq!(decode_meta(&block), Some((given, State::Loading, 10)));
        assert_eq!(
            decode_meta(&encode_meta(&Meta::UNSET, State::Live, 10)),
            None
        );
        // A window filter's states; never one that grows.
        let window = Meta {
            expansion: 0,
            ..meta
        };
        for state in [State::Window, State::WindowLoading] {
            let block = encode_meta(&window, state, 10);
            assert_eq!(decode_meta(&block), Some((window, state, 10)));
        }
        assert_eq!(decode_meta(&encode_meta(&meta, State::Window, 10)), None);
        let mut unknown = encode_meta(&window, State::Live, 10);
        unknown[38] = 4;
        assert_eq!(decode_meta(&unknown), None);
        // A live filter's settings: exactly those `loadable_live` takes.
        for (capacity, expansion, ok) in [(2, 32768, true), (1, 2, false), (2, 32769, false)] {
            let m = Meta {
                capacity,
                expansion,
                ..meta
            };
            assert_eq!(m.loadable_live(), ok);
            assert_eq!(decode_meta(&encode_meta(&m, State::Live, 10)).is_some(), ok);
        }
    }
}
