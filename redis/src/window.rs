//! The commands on window filters (`CF.RESERVE key capacity WINDOW ms
//! [GENERATIONS g]`): items that expire by age (`window_value.rs` says how
//! time becomes generations). `commands.rs` hands each command here when
//! its key holds a window filter (or, for `CF.RESERVE` and `CF.LOADCHUNK`,
//! when it makes one); `CF.ADVANCE` is this module's own.
//!
//! # Time and replication
//! On the primary (a command neither replicated nor loaded), every write
//! first advances the filter to its clock's generation, if that is ahead,
//! and replicates the step as `CF.ADVANCE key generation` before the write
//! itself: replicas and AOF replays never read their clock to change a
//! filter, so every copy applies the same generation changes at the same
//! points and holds the same bytes. Reads (`CF.EXISTS`, `CF.MEXISTS`,
//! `CF.COUNT`, `CF.INFO`) answer as of their own clock's generation and
//! change nothing.

use crate::admission;
use crate::args::{self, Allow, SMALL_CAPACITY};
use crate::datatype::CF_TYPE;
use crate::reply::{reply_fields, to_i64, Field};
use crate::value::INSERT_WINDOW;
use crate::value::{self, Body, CfValue, Meta, CREATE_REFUSED};
use crate::value::{DEFAULT_BUCKET_SIZE, DEFAULT_MAX_ITERATIONS};
use crate::window_keys;
use crate::window_value::MAX_GENERATIONS;
use crate::window_value::{self as wv, Clock, LoadError, Window, WindowDump, WindowLoad};
use concurrent_cuckoo::{BuildError, InsertError, WindowedChunkEncoder, WindowedCuckooFilter};
use redis_module::key::RedisKeyWritable;
use redis_module::{raw, Context, ContextFlags, RedisError, RedisResult, RedisString, RedisValue};

/// Generations of a window unless `GENERATIONS` says (the most the
/// default error rate, 0.001, allows).
pub(crate) const DEFAULT_GENERATIONS: u64 = 4;

/// Bytes of a `CF.SCANDUMP` chunk of a window filter (as a plain one's).
const DUMP_CHUNK: usize = 1 << 20;

/// Whether the running command came from the primary or an AOF (which
/// carry explicit advances) rather than a client of this server.
fn from_primary(ctx: &Context) -> bool {
    let flags = ctx.get_flags();
    flags.contains(ContextFlags::REPLICATED) || flags.contains(ContextFlags::LOADING)
}

/// The window of a value, if it is one.
pub(crate) fn of(value: &CfValue) -> Option<&Window> {
    match &value.body {
        Body::Window(w) => Some(w),
        _ => None,
    }
}

/// `CF.RESERVE key capacity ... WINDOW ms [GENERATIONS g] [ORIGIN ms]`:
/// `None` when the options name no window (a plain `CF.RESERVE`).
pub(crate) fn reserve(ctx: &Context, args: &[RedisString]) -> Option<RedisResult> {
    let pairs = &args[3..];
    let find = |k: &str| {
        pairs
            .chunks_exact(2)
            .find(|p| args::is(&p[0], k))
            .map(|p| &p[1])
    };
    let window = find("WINDOW");
    if window.is_none() {
        return (find("GENERATIONS").is_some() || find("ORIGIN").is_some()).then(|| {
            Err(RedisError::Str(
                "ERR GENERATIONS and ORIGIN are options of WINDOW",
            ))
        });
    }
    Some(reserve_window(ctx, args))
}

fn reserve_window(ctx: &Context, args: &[RedisString]) -> RedisResult {
    let capacity = args::capacity(&args[2])?;
    let mut window = None;
    let mut generations = DEFAULT_GENERATIONS;
    let mut origin = None;
    let mut rest = Vec::new();
    for pair in args[3..].chunks_exact(2) {
        let (keyword, value) = (&pair[0], &pair[1]);
        let number = |range: core::ops::RangeInclusive<i64>, error: &'static str| {
            value
                .parse_integer()
                .ok()
                .filter(|n| range.contains(n))
                .ok_or(RedisError::Str(error))
        };
        if args::is(keyword, "WINDOW") {
            window = Some(number(
                1..=wv::MAX_WINDOW_MS as i64,
                "ERR WINDOW must be an integer of milliseconds from 1 to 2^53",
            )? as u64);
        } else if args::is(keyword, "GENERATIONS") {
            generations = number(
                1..=MAX_GENERATIONS as i64,
                "ERR GENERATIONS must be an integer from 1 to 252",
            )? as u64;
        } else if args::is(keyword, "ORIGIN") {
            origin = Some(number(
                0..=wv::MAX_TIME_MS as i64,
                "ERR ORIGIN must be milliseconds since the epoch, from 0 to 2^53",
            )? as u64);
        } else if args::is(keyword, "EXPANSION") || args::is(keyword, "MAXEXPANSIONS") {
            return Err(RedisError::Str(
                "ERR a WINDOW filter never grows: EXPANSION does not apply (its capacity is \
                 the most items live in the window)",
            ));
        } else {
            rest.extend([keyword.clone(), value.clone()]);
        }
    }
    let window = window.unwrap_or(1);
    if window < generations {
        return Err(RedisError::Str(
            "ERR WINDOW must be at least GENERATIONS milliseconds",
        ));
    }
    let mut meta = Meta::default();
    let allow = Allow {
        expansion: false,
        seed: true,
        capacity: false,
        deleted: false,
    };
    let seed = args::settings(&rest, &mut meta, allow)?;
    if capacity < 2 * i64::from(meta.bucket_size) {
        return Err(RedisError::Str(SMALL_CAPACITY));
    }
    meta.capacity = capacity as u64;
    meta.expansion = 0;
    meta.max_levels = 0;
    let key = ctx.open_key_writable(&args[1]);
    if value::write(&key, &CF_TYPE)?.is_some() {
        return Err(RedisError::Str("ERR item exists"));
    }
    let seed = seed.unwrap_or_else(value::random_seed);
    let origin = origin.unwrap_or_else(wv::now_ms);
    let (built, _) = admission::within(0, || {
        WindowedCuckooFilter::builder()
            .capacity(usize::try_from(meta.capacity).unwrap_or(usize::MAX))
            .generations(generations + 1)
            .false_positive_rate(meta.error_rate)
            .seed(seed)
            .table_memory(crate::alloc::TABLES)
            .build()
    });
    let filter = built.map_err(|e| build_error(e, meta.error_rate))?;
    if let Some(least) = wv::least_generation_ms(&filter) {
        if window.div_ceil(generations) < least {
            return Err(RedisError::String(format!(
                "ERR WINDOW too short for this capacity: each of its {generations} generations \
                 must last at least {least} ms (WINDOW {} or more), the time a write may take to \
                 catch up on them; give a longer WINDOW, fewer GENERATIONS or a smaller capacity",
                least * generations
            )));
        }
    }
    let clock = Clock::new(origin, window, generations, meta.capacity, meta.error_rate);
    let value = CfValue::new(meta, Body::Window(Box::new(Window::new(filter, clock))));
    if admission::loading() {
        admission::note_loaded(args[1].as_slice(), value.memory_usage());
    }
    key.set_value(&CF_TYPE, value)?;
    window_keys::note_selected(ctx, args[1].as_slice());
    replicate_reserve(ctx, &args[1], &meta, seed, &clock);
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// The error for a window the library cannot build.
fn build_error(e: BuildError, rate: f64) -> RedisError {
    match e {
        BuildError::InvalidGenerations { max, .. } if max >= 2 => RedisError::String(format!(
            "ERR GENERATIONS must be at most {} at ERROR {rate} (a larger ERROR allows up to \
             {MAX_GENERATIONS})",
            max - 1
        )),
        BuildError::InvalidGenerations { .. } => RedisError::String(format!(
            "ERR ERROR {rate} is too small for a WINDOW filter: at least 4/2^29, about 7.451e-9"
        )),
        _ => RedisError::Str(CREATE_REFUSED),
    }
}

/// The explicit `CF.RESERVE` replicas and the AOF get: every setting, the
/// seed and the window's origin.
fn replicate_reserve(ctx: &Context, key: &RedisString, meta: &Meta, seed: u64, clock: &Clock) {
    let texts = [
        meta.capacity.to_string(),
        meta.bucket_size.to_string(),
        meta.max_iterations.to_string(),
        format!("{:?}", meta.error_rate),
        seed.to_string(),
        clock.window.to_string(),
        clock.generations.to_string(),
        clock.origin.to_string(),
    ];
    let keywords: [&[u8]; 7] = [
        b"BUCKETSIZE",
        b"MAXITERATIONS",
        b"ERROR",
        b"SEED",
        b"WINDOW",
        b"GENERATIONS",
        b"ORIGIN",
    ];
    let mut parts: Vec<&[u8]> = vec![key.as_slice(), texts[0].as_bytes()];
    for (keyword, text) in keywords.iter().zip(&texts[1..]) {
        parts.extend([*keyword, text.as_bytes()]);
    }
    ctx.replicate("CF.RESERVE", parts.as_slice());
}

/// On the primary, advances the window to its clock's generation if that
/// is ahead, replicating the step (`CF.ADVANCE`); on a replica or a
/// replay, nothing (its advances arrive explicitly). Whether it advanced.
/// (The sweeper, `window_sweeper.rs`, keeps the generation current between
/// commands: in steady use there is nothing left to do here.)
fn advance_for_write(ctx: &Context, key: &RedisString, value: &mut CfValue) -> bool {
    if from_primary(ctx) {
        return false;
    }
    let Body::Window(w) = &mut value.body else {
        return false;
    };
    let target = w.clock.generation_at(wv::now_ms());
    if target <= w.filter.generation() {
        return false;
    }
    window_keys::note_selected(ctx, key.as_slice());
    advance_replicated(ctx, key.as_slice(), value, target);
    true
}

/// Advances the window filter `value` of key `key` to `target` (a
/// generation ahead of its own) and replicates the step as `CF.ADVANCE`:
/// a write's first step on the primary, and the sweeper's. Returns the
/// generation reached.
pub(crate) fn advance_replicated(
    ctx: &Context,
    key: &[u8],
    value: &mut CfValue,
    target: u64,
) -> u64 {
    let Body::Window(w) = &mut value.body else {
        return 0;
    };
    let reached = w.catch_up(target);
    ctx.replicate("CF.ADVANCE", &[key, reached.to_string().as_bytes()]);
    value.changed();
    // Items expired: counted again (once per generation, not per write).
    value.account();
    reached
}

/// `CF.ADVANCE key generation`: what a primary replicates when its clock
/// moved a window filter on; taken from the primary or an AOF only.
pub(crate) fn advance(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    if !from_primary(ctx) {
        return Err(RedisError::Str(
            "ERR CF.ADVANCE is replicated by the primary only: a WINDOW filter advances by the \
             primary's clock",
        ));
    }
    let generation = args::seed(&args[2]).map_err(|_| RedisError::Str("ERR bad generation"))?;
    let key = ctx.open_key_writable(&args[1]);
    let Some(value) = value::write(&key, &CF_TYPE)? else {
        return Ok(RedisValue::SimpleStringStatic("OK"));
    };
    let Body::Window(w) = &mut value.body else {
        return Err(RedisError::Str("ERR not a WINDOW filter"));
    };
    if generation > w.clock.max_generation() {
        // Past the clock's last generation (a forged AOF): refused, as a
        // restored filter claiming it is.
        return Err(RedisError::Str("ERR bad generation"));
    }
    if generation > w.filter.generation() {
        w.catch_up(generation);
        value.changed();
        value.account();
    }
    // The sweeper sweeps a replica's filters ahead of the primary's next
    // advance too.
    window_keys::note_selected(ctx, args[1].as_slice());
    ctx.replicate_verbatim();
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// The error for an insert a window filter refused.
fn refused(e: &InsertError) -> RedisError {
    match e {
        InsertError::Full => RedisError::Str("Filter is full"),
        _ => RedisError::String(format!("ERR {e}")),
    }
}

/// `CF.ADD`/`CF.ADDNX` on a window filter: inserts (a present item is
/// refreshed: it lives a whole window from now). `CF.ADDNX` answers
/// whether the item was absent.
pub(crate) fn add(
    ctx: &Context,
    args: &[RedisString],
    value: &mut CfValue,
    unique: bool,
) -> RedisResult {
    advance_for_write(ctx, &args[1], value);
    let Some(w) = of(value) else {
        return Err(RedisError::Str("ERR not a WINDOW filter"));
    };
    let item = args[2].as_slice();
    let was = w.filter.contains(item);
    let inserted = w.filter.insert(item);
    match inserted {
        Ok(()) => {
            value.changed();
            value.accounted.add_items(i64::from(!was));
            ctx.replicate_verbatim();
            Ok(RedisValue::Bool(!unique || !was))
        }
        Err(e) => {
            crate::info::refused_inserts(1);
            Err(refused(&e))
        }
    }
}

/// `CF.INSERT`/`CF.INSERTNX` on a window filter: the items from `first`
/// on, in order, each as [`add`].
pub(crate) fn insert(
    ctx: &Context,
    args: &[RedisString],
    value: &mut CfValue,
    unique: bool,
    first: usize,
) -> RedisResult {
    advance_for_write(ctx, &args[1], value);
    let Some(w) = of(value) else {
        return Err(RedisError::Str("ERR not a WINDOW filter"));
    };
    let resp3 = ctx.get_flags().contains(ContextFlags::FLAGS_RESP3);
    let items = &args[first..];
    raw::reply_with_array(ctx.ctx, items.len() as _);
    let (new, refusals) = if unique {
        insert_unique_items(ctx, &w.filter, items)
    } else {
        insert_items(ctx, &w.filter, items, resp3)
    };
    crate::info::refused_inserts(refusals);
    if (items.len() as u64) > refusals {
        value.changed();
        value.accounted.add_items(new);
        ctx.replicate_verbatim();
    }
    Ok(RedisValue::NoReply)
}

/// `CF.INSERTNX`'s items, one at a time (each reply says whether the item
/// was absent before it, after the items before it went in): replies, and
/// `(items new, items refused)`.
fn insert_unique_items(
    ctx: &Context,
    filter: &WindowedCuckooFilter,
    items: &[RedisString],
) -> (i64, u64) {
    let (mut new, mut refusals) = (0i64, 0u64);
    for item in items {
        let item = item.as_slice();
        let was = filter.contains(item);
        let ok = filter.insert(item).is_ok();
        new += i64::from(ok && !was);
        refusals += u64::from(!ok);
        raw::reply_with_long_long(ctx.ctx, if ok { i64::from(!was) } else { -1 });
    }
    (new, refusals)
}

/// `CF.INSERT`'s items, pipelined: each window of [`INSERT_WINDOW`] items
/// hashed once, looked up in one batch (which were live, for the count of
/// new items) and inserted in one batch, exactly the effects of one insert
/// per item in order; after a refused item the rest of its window goes in
/// one at a time (as `commands::insert_many` does). Item by item, a
/// lookup then an insert each, `CF.INSERT` ran at 0.67x a plain filter's.
/// Replies as each item went, and returns `(items new, items refused)`:
/// an item counts as new if it was not live before the window and is the
/// first of its hash in the window (an approximation of what one insert
/// after another would count only where two items of one window collide,
/// which the INFO totals it feeds tolerate).
fn insert_items(
    ctx: &Context,
    filter: &WindowedCuckooFilter,
    items: &[RedisString],
    resp3: bool,
) -> (i64, u64) {
    let (mut new, mut refusals) = (0i64, 0u64);
    let (mut hashes, mut live, mut fresh) = (Vec::new(), Vec::new(), Vec::new());
    for window in items.chunks(INSERT_WINDOW) {
        hashes.clear();
        hashes.extend(window.iter().map(|i| filter.hasher().hash_bytes(i)));
        live.clear();
        live.resize(window.len(), false);
        filter.contains_hash_batch(&hashes, &mut live);
        let inserted = match filter.insert_hash_batch(&hashes) {
            Ok(()) => window.len(),
            Err(e) => e.inserted(),
        };
        let mut ok = vec![true; inserted];
        ok.extend(
            (inserted..window.len()).map(|i| i > inserted && filter.insert_hash(hashes[i]).is_ok()),
        );
        fresh.clear();
        fresh.extend(
            (0..window.len())
                .filter(|&i| ok[i] && !live[i])
                .map(|i| hashes[i]),
        );
        fresh.sort_unstable();
        fresh.dedup();
        new += fresh.len() as i64;
        for ok in ok {
            refusals += u64::from(!ok);
            match (ok, resp3) {
                (true, _) => raw::reply_with_bool(ctx.ctx, 1),
                (false, true) => raw::reply_with_bool(ctx.ctx, 0),
                (false, false) => raw::reply_with_long_long(ctx.ctx, -1),
            };
        }
    }
    (new, refusals)
}

/// The generation a read on this server answers as of.
fn read_generation(w: &Window) -> u64 {
    w.clock.generation_at(wv::now_ms())
}

/// `CF.EXISTS`, `CF.COUNT`: whether `item` is live now, by this server's
/// clock (nothing changes).
pub(crate) fn exists(w: &Window, item: &[u8]) -> bool {
    w.contains_at(item, read_generation(w))
}

/// `CF.MEXISTS`: [`exists`] for each item.
pub(crate) fn mexists(ctx: &Context, w: &Window, items: &[RedisString]) -> RedisResult {
    let generation = read_generation(w);
    raw::reply_with_array(ctx.ctx, items.len() as _);
    for item in items {
        raw::reply_with_bool(ctx.ctx, w.contains_at(item.as_slice(), generation).into());
    }
    Ok(RedisValue::NoReply)
}

/// `CF.INFO` of a window filter: RedisBloom's eight fields (items live now
/// by this server's clock), then the window's: `Window` (ms),
/// `Generations` (`g`) and `Generation` (this server's clock's).
pub(crate) fn info(ctx: &Context, value: &CfValue, w: &Window) -> RedisResult {
    let generation = read_generation(w);
    let m = &value.meta;
    reply_fields(
        ctx,
        &[
            (c"Size", Field::Int(to_i64(w.filter.memory_usage()))),
            (
                c"Number of buckets",
                Field::Int(to_i64(wv::buckets(&w.filter) as usize)),
            ),
            (c"Number of filters", Field::Int(1)),
            (
                c"Number of items inserted",
                Field::Int(to_i64(w.len_at(generation))),
            ),
            (c"Number of items deleted", Field::Int(0)),
            (c"Bucket size", Field::Int(i64::from(m.bucket_size))),
            (c"Expansion rate", Field::Int(0)),
            (c"Max iterations", Field::Int(i64::from(m.max_iterations))),
            (c"Window", Field::Int(to_i64(w.clock.window))),
            (c"Generations", Field::Int(to_i64(w.clock.generations))),
            (c"Generation", Field::Int(to_i64(generation))),
        ],
    )
}

/// `CF.SCANDUMP` of a window filter: its encoding (`window_value.rs`),
/// read from the live table a chunk at a time with no copy of it (the
/// library's `WindowedChunkEncoder`): first the window block and the
/// library's header (128 bytes), then chunks of at most 1 MiB. A change
/// to the filter (a write, an advance) makes the dump stale: a call that
/// goes on from where its last chunk ended is then told the filter
/// changed (start again from 0). Any other position is served from the
/// current state, as a plain filter serves any position (the checksum at
/// the end, if no dump of this state handed out every byte before it,
/// costs one pass over the table).
pub(crate) fn scandump(value: &CfValue, w: &Window, iterator: u64) -> RedisResult {
    let end = || {
        Ok(RedisValue::Array(vec![
            RedisValue::Integer(0),
            RedisValue::Null,
        ]))
    };
    if iterator == 0 && w.filter.is_empty() {
        return end();
    }
    let offset = iterator.saturating_sub(1);
    let mut dump = w.dump.borrow_mut();
    let current = dump.as_ref().is_some_and(|d| d.version == value.version);
    let goes_on = iterator != 0 && dump.as_ref().is_some_and(|d| d.next == iterator);
    if goes_on && !current {
        return Err(RedisError::Str(
            "ERR the filter changed during CF.SCANDUMP: start again from iterator 0",
        ));
    }
    if offset >= w.encoded_len() {
        *dump = None;
        return end();
    }
    if !goes_on {
        let mut encoder = WindowedChunkEncoder::new(&w.filter);
        if let Some(d) = dump.as_ref().filter(|_| current) {
            // The same state: its checksum, if that dump learned it.
            encoder.adopt_digest(&d.encoder);
        }
        let failed = |e: std::io::Error| RedisError::String(format!("ERR {e}"));
        encoder
            .seek(offset.saturating_sub(wv::BLOCK as u64))
            .map_err(failed)?;
        *dump = Some(WindowDump {
            version: value.version,
            encoder,
            next: 0,
        });
    }
    let Some(d) = dump.as_mut() else {
        return end();
    };
    let max = if offset == 0 {
        wv::HEADER_CHUNK
    } else {
        DUMP_CHUNK
    };
    let mut chunk = Vec::new();
    chunk
        .try_reserve_exact(max)
        .map_err(|_| RedisError::Str("ERR out of memory for a CF.SCANDUMP chunk"))?;
    if offset < wv::BLOCK as u64 {
        chunk.extend_from_slice(&w.clock.encode()[offset as usize..]);
    }
    if chunk.len() < max && !d.encoder.is_done() {
        d.encoder
            .next_chunk(&w.filter, max - chunk.len(), &mut chunk)
            .map_err(|e| RedisError::String(format!("ERR {e}")))?;
    }
    let next = offset + chunk.len() as u64 + 1;
    d.next = next;
    drop(dump);
    value.account_memory();
    Ok(RedisValue::Array(vec![
        RedisValue::Integer(to_i64(next)),
        RedisValue::StringBuffer(chunk),
    ]))
}

/// `CF.LOADCHUNK` of a window filter's chunks: `None` unless this chunk
/// starts a window's encoding (`offset` 0, an empty key, the window's
/// magic) or continues a window's restore. The first chunk must hold the
/// window block and the library's header (what `CF.SCANDUMP` hands out
/// first); the table that header needs is admitted before any byte is
/// kept. The filter is decoded, checked whole, once every byte arrived.
pub(crate) fn loadchunk(
    ctx: &Context,
    args: &[RedisString],
    key: &RedisKeyWritable,
    offset: u64,
) -> Option<RedisResult> {
    let data = args[3].as_slice();
    let existing = match value::write(key, &CF_TYPE) {
        Ok(v) => v,
        Err(e) => return Some(Err(e)),
    };
    match existing {
        None if offset == 0 && data.starts_with(wv::MAGIC) => Some(first_chunk(ctx, args, key)),
        Some(value) if matches!(value.body, Body::WindowLoading(_)) => {
            Some(next_chunk(ctx, args, key, value, offset))
        }
        _ => None,
    }
}

fn first_chunk(ctx: &Context, args: &[RedisString], key: &RedisKeyWritable) -> RedisResult {
    let data = args[3].as_slice();
    let given = args::first_chunk_settings(&args[4..])?;
    let cannot = || RedisError::Str("Couldn't create filter!");
    // Its table, admitted as a new filter's and allocated fallibly: a
    // forged header claiming more than the limits or the allocator give
    // is refused here, never an abort.
    let (load, seen) = admission::within(0, || WindowLoad::begin(data));
    if seen.refused {
        return Err(RedisError::Str(CREATE_REFUSED));
    }
    let load = load.map_err(|_| cannot())?;
    let clock = load.clock;
    let meta = Meta {
        capacity: clock.capacity,
        error_rate: clock.error_rate,
        bucket_size: match given.bucket_size {
            0 => DEFAULT_BUCKET_SIZE,
            b => b,
        },
        max_iterations: match given.max_iterations {
            0 => DEFAULT_MAX_ITERATIONS,
            m => m,
        },
        ..Meta::UNSET
    };
    if !meta.loadable_live() {
        // Settings a live filter cannot have (a forged block's capacity
        // under 2): the server would refuse its own RDB.
        return Err(cannot());
    }
    let mut value = CfValue::new(meta, Body::WindowLoading(Box::new(load)));
    complete(&mut value).map_err(|_| cannot())?;
    if admission::loading() {
        admission::note_loaded(args[1].as_slice(), value.memory_usage());
    }
    if matches!(value.body, Body::Window(_)) {
        window_keys::note_selected(ctx, args[1].as_slice());
    }
    key.set_value(&CF_TYPE, value)?;
    ctx.replicate_verbatim();
    Ok(RedisValue::SimpleStringStatic("OK"))
}

fn next_chunk(
    ctx: &Context,
    args: &[RedisString],
    key: &RedisKeyWritable,
    value: &mut CfValue,
    offset: u64,
) -> RedisResult {
    if args.len() > 4 {
        return Err(RedisError::Str(
            "ERR options are only taken with the first chunk",
        ));
    }
    let data = args[3].as_slice();
    let Body::WindowLoading(load) = &mut value.body else {
        return Err(RedisError::Str("Couldn't load chunk!"));
    };
    if load.received() != offset {
        return Err(RedisError::Str("Invalid position"));
    }
    let fits = !data.is_empty() && offset + data.len() as u64 <= load.total;
    let completed = if fits {
        load.feed(data).and_then(|()| complete(value))
    } else {
        Err(LoadError::Damaged("past the end".into()))
    };
    if completed.is_err() {
        // The restore cannot go on: abandoned, here and on replicas.
        key.delete()?;
        ctx.replicate("DEL", &[args[1].as_slice()]);
        return Err(RedisError::Str("Couldn't load chunk!"));
    }
    value.changed();
    value.account();
    if matches!(value.body, Body::Window(_)) {
        window_keys::note_selected(ctx, args[1].as_slice());
        if admission::loading() {
            admission::note_loaded(args[1].as_slice(), value.memory_usage());
        }
    }
    ctx.replicate_verbatim();
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// Makes a window being restored live once every byte arrived and the
/// checksum matched (its table was admitted when the first chunk came).
/// On an error the value is left unusable: the caller drops it.
fn complete(value: &mut CfValue) -> Result<(), LoadError> {
    let Body::WindowLoading(load) = &value.body else {
        return Ok(());
    };
    if !load.is_complete() {
        return Ok(());
    }
    let Body::WindowLoading(load) =
        core::mem::replace(&mut value.body, Body::Loading(Box::default()))
    else {
        unreachable!("matched above");
    };
    value.body = Body::Window(Box::new(load.finish()?));
    Ok(())
}
