//! The `CF.*` commands.
//!
//! Every command runs on Redis's main thread, one at a time, so a filter
//! sees its writes in the order of the replication stream: replicas and
//! AOF replays that apply the same commands to a filter hashed with the
//! same seed end with the same table, byte for byte (the library places
//! fingerprints deterministically, and its batch writes act exactly as
//! the same writes one at a time). The seed is chosen on the primary and
//! replicated explicitly: a command that creates a filter reaches
//! replicas as `CF.RESERVE ... SEED s` followed by the command itself.

use crate::admission;
use crate::args::{self, Allow, SMALL_CAPACITY};
use crate::datatype::CF_TYPE;
use crate::dumps::Found;
use crate::reply::{reply_fields, to_i64, Field};
use crate::value::{
    self, complete_if_done, random_seed, Body, CfValue, Filter, Meta, CREATE_REFUSED, INSERT_WINDOW,
};
use crate::window;
use concurrent_cuckoo::{BuildError, InsertError};
use redis_module::key::RedisKeyWritable;
use redis_module::{raw, Context, ContextFlags, RedisError, RedisResult, RedisString, RedisValue};

/// Bytes of a `CF.SCANDUMP` chunk: about a third of a millisecond of work
/// on the main thread (read, checksum, copy into the reply).
pub(crate) const DUMP_CHUNK: usize = 1 << 20;

/// The id of the client running the command (0 where there is none).
fn client_id(ctx: &Context) -> u64 {
    match crate::api::api!(RedisModule_GetClientId) {
        // SAFETY: `ctx` is the context of the running command.
        Some(id) => unsafe { id(ctx.ctx) },
        None => 0,
    }
}

fn resp3(ctx: &Context) -> bool {
    ctx.get_flags().contains(ContextFlags::FLAGS_RESP3)
}

/// RedisBloom's error (`Memory allocation failure`) for an insert whose
/// filter had to grow and could not have its new level's table; the item
/// was not added, and nothing changed.
pub(crate) const GROW_REFUSED: &str = "ERR Memory allocation failure: the filter's new level \
     would pass cuckoo.cf-max-memory-usage or maxmemory";

/// The error for a filter that cannot be created with these settings.
fn build_error(e: BuildError, levels: usize) -> RedisError {
    match e {
        BuildError::FingerprintTooShort { .. } => RedisError::String(format!(
            "ERR error rate too small: at least {:e} for a filter of up to {levels} levels",
            (levels * 8) as f64 / 2f64.powi(32)
        )),
        _ => RedisError::Str(CREATE_REFUSED),
    }
}

/// The error for an insert refused while a scope of `admission` is in
/// force: a growth refused for memory, or what the filter said.
fn refused_in_scope(filter: &Filter, e: &InsertError) -> RedisError {
    if matches!(e, InsertError::Full) && admission::refused() {
        RedisError::Str(GROW_REFUSED)
    } else {
        refused(filter, e)
    }
}

/// The error for an insert the filter refused.
fn refused(filter: &Filter, e: &InsertError) -> RedisError {
    match (e, filter) {
        (InsertError::Full, Filter::Fixed(_)) => RedisError::Str("Filter is full"),
        (InsertError::Full, Filter::Growing(_)) => RedisError::Str("Maximum expansions reached"),
        (InsertError::TooManyDuplicates, _) => RedisError::Str(
            "ERR too many copies of this item: at most 8 in one filter's two buckets",
        ),
        _ => RedisError::String(format!("ERR {e}")),
    }
}

/// The settings and seed of a filter a write created (what replicas get
/// as an explicit `CF.RESERVE`).
type Created = (Meta, u64);

/// Opens the filter at `key` for a write, creating it with `create`'s
/// settings and a fresh seed when the key is empty (`ERR not found`
/// without settings). Returns the value, and the settings and seed of a
/// filter it created, for replication. (The value of an existing key is
/// looked up once: each lookup checks the key's type through the API.)
fn open_or_create<'k>(
    key: &'k RedisKeyWritable,
    name: &RedisString,
    create: Option<Meta>,
) -> Result<(Option<Created>, &'k mut CfValue), RedisError> {
    if let Some(value) = value::write(key, &CF_TYPE)? {
        return Ok((None, value));
    }
    let Some(meta) = create else {
        return Err(RedisError::Str("ERR not found"));
    };
    // `CF.RESERVE`'s rule, which the replicated `CF.RESERVE` meets on
    // every copy: a filter the primary made from configs a replica or a
    // replay would refuse (`cf-initial-size` under twice
    // `cf-bucket-size`) is refused here first.
    if meta.capacity < 2 * u64::from(meta.bucket_size) {
        return Err(RedisError::Str(SMALL_CAPACITY));
    }
    let created = create_with(key, name, meta, random_seed())?;
    Ok((Some(created), opened(key)?))
}

fn create_with(
    key: &RedisKeyWritable,
    name: &RedisString,
    meta: Meta,
    seed: u64,
) -> Result<(Meta, u64), RedisError> {
    let (filter, _) = admission::within(0, || Filter::create(&meta, seed));
    let filter = filter.map_err(|e| build_error(e, meta.levels()))?;
    let value = CfValue::live(meta, filter);
    if admission::loading() {
        // An AOF's `CF.RESERVE`, admitted whatever the limit now.
        admission::note_loaded(name.as_slice(), value.memory_usage());
    }
    key.set_value(&CF_TYPE, value)?;
    Ok((meta, seed))
}

/// The value at a key known to hold one.
fn opened(key: &RedisKeyWritable) -> Result<&mut CfValue, RedisError> {
    value::write(key, &CF_TYPE)?.ok_or(RedisError::Str("ERR not found"))
}

/// Replicates the creation of a filter as an explicit `CF.RESERVE` with
/// every setting and the seed.
fn replicate_reserve(ctx: &Context, key: &RedisString, meta: &Meta, seed: u64) {
    let (capacity, bucket, iterations, expansion, error, seed, levels) = (
        meta.capacity.to_string(),
        meta.bucket_size.to_string(),
        meta.max_iterations.to_string(),
        meta.expansion.to_string(),
        // `{:?}` is the shortest text that parses back to the same f64.
        format!("{:?}", meta.error_rate),
        seed.to_string(),
        meta.levels().to_string(),
    );
    // MAXEXPANSIONS: the creating server's `cf-max-expansions`, so a
    // replica (or an AOF replay) whose config differs makes the same filter.
    let parts: [&[u8]; 14] = [
        key.as_slice(),
        capacity.as_bytes(),
        b"BUCKETSIZE",
        bucket.as_bytes(),
        b"MAXITERATIONS",
        iterations.as_bytes(),
        b"EXPANSION",
        expansion.as_bytes(),
        b"ERROR",
        error.as_bytes(),
        b"SEED",
        seed.as_bytes(),
        b"MAXEXPANSIONS",
        levels.as_bytes(),
    ];
    ctx.replicate("CF.RESERVE", parts.as_slice());
}

/// Replicates a write: verbatim, or, if it created the filter, as the
/// explicit creation followed by the command itself.
fn replicate_write(ctx: &Context, args: &[RedisString], created: Option<(Meta, u64)>) {
    match created {
        None => ctx.replicate_verbatim(),
        Some((meta, seed)) => {
            replicate_reserve(ctx, &args[1], &meta, seed);
            let name = String::from_utf8_lossy(args[0].as_slice()).into_owned();
            let rest: Vec<&RedisString> = args[1..].iter().collect();
            ctx.replicate(&name, rest.as_slice());
        }
    }
}

/// Replicates a `CF.INSERT`/`CF.INSERTNX` as the filter's creation (if it
/// made it) and `CMD key NOCREATE ITEMS` with only the items it added, in
/// order: for a command part of whose items were refused for memory, which
/// a replica (admitting what its primary did) would otherwise add; and for
/// one that created its filter or had options, which a replica would
/// check against its own configs (`CAPACITY` against `cf-bucket-size`) or
/// use to create a filter of its own. `NOCREATE`: a copy never makes a
/// filter from its own configs.
///
/// The items go out as the command's own argument strings (`items`, the
/// arguments after `ITEMS`), on which the server only takes a reference:
/// made from byte slices, each was copied into a new string and freed
/// again, about 75 server instructions per item of a `CF.INSERT` of 1,000
/// where one command in ten creates its key. The replicated bytes are the
/// same either way.
fn replicate_added(
    ctx: &Context,
    args: &[RedisString],
    created: Option<(Meta, u64)>,
    items: &[RedisString],
    outcomes: &[Outcome],
) {
    if let Some((meta, seed)) = created {
        replicate_reserve(ctx, &args[1], &meta, seed);
    }
    let added = items
        .iter()
        .zip(outcomes)
        .filter_map(|(item, outcome)| (*outcome == Outcome::Added).then_some(item));
    let (nocreate, keyword) = (ctx.create_string("NOCREATE"), ctx.create_string("ITEMS"));
    let mut parts: Vec<&RedisString> = vec![&args[1], &nocreate, &keyword];
    parts.extend(added);
    if parts.len() > 3 {
        let name = String::from_utf8_lossy(args[0].as_slice()).into_owned();
        ctx.replicate(&name, parts.as_slice());
    }
}

/// `CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e]
/// [ERROR rate] [SEED s]`.
pub(crate) fn reserve(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() < 3 || args.len().is_multiple_of(2) {
        return Err(RedisError::WrongArity);
    }
    if let Some(reply) = window::reserve(ctx, &args) {
        return reply;
    }
    let capacity = args::capacity(&args[2])?;
    let mut meta = Meta::default();
    let allow = Allow {
        expansion: true,
        seed: true,
        capacity: false,
        deleted: false,
    };
    let seed = args::settings(&args[3..], &mut meta, allow)?;
    if capacity < 2 * i64::from(meta.bucket_size) {
        return Err(RedisError::Str(SMALL_CAPACITY));
    }
    meta.capacity = capacity as u64;
    let key = ctx.open_key_writable(&args[1]);
    if value::write(&key, &CF_TYPE)?.is_some() {
        return Err(RedisError::Str("ERR item exists"));
    }
    let (meta, seed) = create_with(&key, &args[1], meta, seed.unwrap_or_else(random_seed))?;
    replicate_reserve(ctx, &args[1], &meta, seed);
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// `CF.ADD key item`.
pub(crate) fn add(ctx: &Context, args: &[RedisString]) -> RedisResult {
    add_one(ctx, args, false)
}

/// `CF.ADDNX key item`.
pub(crate) fn addnx(ctx: &Context, args: &[RedisString]) -> RedisResult {
    add_one(ctx, args, true)
}

fn add_one(ctx: &Context, args: &[RedisString], unique: bool) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let key = ctx.open_key_writable(&args[1]);
    let (created, value) = open_or_create(&key, &args[1], Some(Meta::default()))?;
    if window::of(value).is_some() {
        return window::add(ctx, args, value, unique);
    }
    let filter = value.filter()?;
    let item = args[2].as_slice();
    // Admitted: growth allocates a level (never more than the limits).
    let (result, seen) = admission::within(value.memory_usage(), || match unique {
        true => filter
            .insert_unique(item)
            .map_err(|e| refused_in_scope(filter, &e)),
        false => filter
            .insert(item)
            .map(|()| true)
            .map_err(|e| refused_in_scope(filter, &e)),
    });
    match result {
        Ok(added) => {
            if added {
                value.changed();
            }
            value.account_insert(i64::from(added), &seen);
            if added || created.is_some() {
                replicate_write(ctx, args, created);
            }
            Ok(RedisValue::Bool(added))
        }
        Err(e) => {
            crate::info::refused_inserts(1);
            // A refused insert may have added a level first.
            value.account_write(0);
            if let Some((meta, seed)) = created {
                replicate_reserve(ctx, &args[1], &meta, seed);
            }
            Err(e)
        }
    }
}

/// `CF.INSERT key [CAPACITY c] [ERROR r] [NOCREATE] ITEMS item...`.
pub(crate) fn insert(ctx: &Context, args: &[RedisString]) -> RedisResult {
    insert_many(ctx, args, false)
}

/// `CF.INSERTNX key [CAPACITY c] [ERROR r] [NOCREATE] ITEMS item...`.
pub(crate) fn insertnx(ctx: &Context, args: &[RedisString]) -> RedisResult {
    insert_many(ctx, args, true)
}

fn insert_many(ctx: &Context, args: &[RedisString], unique: bool) -> RedisResult {
    if args.len() < 4 {
        return Err(RedisError::WrongArity);
    }
    let flags = ctx.get_flags();
    let from_primary =
        flags.contains(ContextFlags::REPLICATED) || flags.contains(ContextFlags::LOADING);
    let options = args::insert_options(args, from_primary)?;
    let defaults = Meta::default();
    let create = (!options.nocreate).then(|| Meta {
        capacity: options.capacity.unwrap_or(defaults.capacity),
        error_rate: options.error_rate.unwrap_or(defaults.error_rate),
        ..defaults
    });
    let key = ctx.open_key_writable(&args[1]);
    let (created, value) = open_or_create(&key, &args[1], create)?;
    if window::of(value).is_some() {
        return window::insert(ctx, args, value, unique, options.items);
    }
    let filter = value.filter()?;
    let items: Vec<&[u8]> = args[options.items..].iter().map(|a| a.as_slice()).collect();
    let mut outcomes = Vec::with_capacity(items.len());
    let mut changed = false;
    // A refused item: `Refused`, or, where the filter had to grow and its
    // new level was refused for memory, `GrowRefused` (RedisBloom replies
    // with its error in the array too).
    let refusal = |e: Option<InsertError>| match e {
        Some(InsertError::Full) if admission::refused() => Outcome::GrowRefused,
        _ => Outcome::Refused,
    };
    // Admitted: growth allocates levels (never past the limits).
    let ((), seen) = admission::within(value.memory_usage(), || {
        if unique {
            for item in &items {
                outcomes.push(match filter.insert_unique(item) {
                    Ok(true) => {
                        changed = true;
                        Outcome::Added
                    }
                    Ok(false) => Outcome::Present,
                    Err(e) => refusal(Some(e)),
                });
            }
            return;
        }
        // Pipelined: one batch call per window of items. After a refused
        // item (RedisBloom goes on after it) the rest of its window goes
        // in one at a time: restarting the batch would hash the rest of
        // the window again for every refusal (a command of one item
        // repeated: every copy past 8 is refused).
        for window in items.chunks(INSERT_WINDOW) {
            let (inserted, failed) = match filter.insert_batch(window) {
                Ok(()) => (window.len(), None),
                Err((inserted, e)) => (inserted, Some(e)),
            };
            changed |= inserted > 0;
            outcomes.extend((0..inserted).map(|_| Outcome::Added));
            if failed.is_some() {
                outcomes.push(refusal(failed));
                for item in &window[inserted + 1..] {
                    match filter.insert(item) {
                        Ok(()) => {
                            changed = true;
                            outcomes.push(Outcome::Added);
                        }
                        Err(e) => outcomes.push(refusal(Some(e))),
                    }
                }
            }
        }
    });
    let added = outcomes.iter().filter(|&&o| o == Outcome::Added).count();
    let present = outcomes.iter().filter(|&&o| o == Outcome::Present).count();
    crate::info::refused_inserts((outcomes.len() - added - present) as u64);
    if changed {
        value.changed();
    }
    value.account_insert(i64::try_from(added).unwrap_or(i64::MAX), &seen);
    if seen.refused || created.is_some() || options.items != 3 {
        // A refusal a replica would not make (its limits are not the
        // primary's), a creation, or options a replica would read by its
        // own configs: replicas get exactly the items added.
        replicate_added(ctx, args, created, &args[options.items..], &outcomes);
    } else if changed {
        ctx.replicate_verbatim();
    }
    reply_outcomes(ctx, &outcomes, unique);
    Ok(RedisValue::NoReply)
}

/// What a `CF.INSERT`/`CF.INSERTNX` did with one item.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// Inserted: `1` (`true` in RESP3 for `CF.INSERT`).
    Added,
    /// Already there (`CF.INSERTNX` only): `0`.
    Present,
    /// Refused (full, or too many copies): `-1` (`false` in RESP3 for
    /// `CF.INSERT`).
    Refused,
    /// Refused because the filter had to grow and its new level was
    /// refused for memory: the error [`GROW_REFUSED`].
    GrowRefused,
}

/// Replies with the array of `outcomes`, element by element straight into
/// the reply (no intermediate `RedisValue` per item): `CF.INSERT`'s as
/// booleans (RESP2: `1`, or `-1` for a refusal), `CF.INSERTNX`'s as
/// integers.
fn reply_outcomes(ctx: &Context, outcomes: &[Outcome], unique: bool) {
    let resp3 = resp3(ctx);
    raw::reply_with_array(ctx.ctx, outcomes.len() as _);
    for outcome in outcomes {
        match (outcome, unique) {
            (Outcome::Added, false) => raw::reply_with_bool(ctx.ctx, 1),
            (Outcome::Refused, false) if resp3 => raw::reply_with_bool(ctx.ctx, 0),
            (Outcome::Added, true) => raw::reply_with_long_long(ctx.ctx, 1),
            (Outcome::Present, _) => raw::reply_with_long_long(ctx.ctx, 0),
            (Outcome::Refused, _) => raw::reply_with_long_long(ctx.ctx, -1),
            (Outcome::GrowRefused, _) => ctx.reply(Ok(RedisValue::StaticError(GROW_REFUSED))),
        };
    }
}

/// `CF.EXISTS key item`: 0 for a missing key.
pub(crate) fn exists(ctx: &Context, args: &[RedisString]) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let key = ctx.open_key(&args[1]);
    Ok(RedisValue::Bool(match value::read(&key, &CF_TYPE)? {
        None => false,
        Some(v) => match window::of(v) {
            Some(w) => window::exists(w, args[2].as_slice()),
            None => v.filter()?.contains(args[2].as_slice()),
        },
    }))
}

/// `CF.MEXISTS key item...`: one pipelined batch lookup.
pub(crate) fn mexists(ctx: &Context, args: &[RedisString]) -> RedisResult {
    if args.len() < 3 {
        return Err(RedisError::WrongArity);
    }
    let key = ctx.open_key(&args[1]);
    let mut found = vec![false; args.len() - 2];
    if let Some(v) = value::read(&key, &CF_TYPE)? {
        if let Some(w) = window::of(v) {
            return window::mexists(ctx, w, &args[2..]);
        }
        let items: Vec<&[u8]> = args[2..].iter().map(|a| a.as_slice()).collect();
        v.filter()?.contains_batch(&items, &mut found);
    }
    // Straight into the reply: no `RedisValue` per item.
    raw::reply_with_array(ctx.ctx, found.len() as _);
    for hit in found {
        raw::reply_with_bool(ctx.ctx, hit.into());
    }
    Ok(RedisValue::NoReply)
}

/// `CF.COUNT key item`: copies of the item's fingerprint in its buckets,
/// over every level; 0 for a missing key.
pub(crate) fn count(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let key = ctx.open_key(&args[1]);
    Ok(RedisValue::Integer(match value::read(&key, &CF_TYPE)? {
        None => 0,
        Some(v) => match window::of(v) {
            Some(w) => i64::from(window::exists(w, args[2].as_slice())),
            None => v.filter()?.count(args[2].as_slice()) as i64,
        },
    }))
}

/// `CF.DEL key item`.
pub(crate) fn del(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let key = ctx.open_key_writable(&args[1]);
    let value = value::write(&key, &CF_TYPE)?.ok_or(RedisError::Str("Not found"))?;
    let filter = value.filter()?;
    let removed = filter.remove(args[2].as_slice());
    if !removed && filter.contains(args[2].as_slice()) {
        // Present, yet not removed: its fingerprint is in two levels.
        crate::info::refused_remove();
    }
    if removed {
        // Saturating: an RDB value may hold any count (a forged one
        // `u64::MAX`), and a count must never abort the server.
        value.meta.deleted = value.meta.deleted.saturating_add(1);
        value.reclaim_retired();
        value.changed();
        value.account_write(-1);
        ctx.replicate_verbatim();
    }
    Ok(RedisValue::Bool(removed))
}

/// `CF.COMPACT key`: RedisBloom's manual compaction. Moves the items of
/// sparse sub-filters into other sub-filters of the same size with room
/// and frees the sub-filters it empties
/// ([`ScalableCuckooFilter::compact`](concurrent_cuckoo::ScalableCuckooFilter::compact)):
/// a write, replicated verbatim so that replicas (and AOF replays)
/// compact at the same point and stay byte-identical. Deterministic, so
/// replaying it gives the same filter. Costs O(slots of the sub-filters
/// it empties), on the main thread, only when called.
pub(crate) fn compact(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    let key = ctx.open_key_writable(&args[1]);
    let value =
        value::write(&key, &CF_TYPE)?.ok_or(RedisError::Str("Cuckoo filter was not found"))?;
    // A value still being restored answers its error.
    value.filter()?;
    if let Some(stats) = value.compact() {
        if stats.fingerprints_moved > 0 || stats.levels_retired > 0 {
            value.changed();
        }
        // Items are unchanged; memory may have fallen.
        value.account_write(0);
    }
    ctx.replicate_verbatim();
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// `CF.INFO key`: RedisBloom's eight fields, in its order.
pub(crate) fn info(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    let key = ctx.open_key(&args[1]);
    let value = value::read(&key, &CF_TYPE)?.ok_or(RedisError::Str("ERR not found"))?;
    if let Some(w) = window::of(value) {
        return window::info(ctx, value, w);
    }
    let filter = value.filter()?;
    let levels = filter.level_stats();
    let m = &value.meta;
    reply_fields(
        ctx,
        &[
            (c"Size", Field::Int(to_i64(filter.memory_usage()))),
            (
                c"Number of buckets",
                Field::Int(to_i64(levels.first().map_or(0, |s| s.bucket_count))),
            ),
            (c"Number of filters", Field::Int(to_i64(levels.len()))),
            (
                c"Number of items inserted",
                Field::Int(to_i64(filter.len())),
            ),
            (c"Number of items deleted", Field::Int(to_i64(m.deleted))),
            (c"Bucket size", Field::Int(i64::from(m.bucket_size))),
            (c"Expansion rate", Field::Int(i64::from(m.expansion))),
            (c"Max iterations", Field::Int(i64::from(m.max_iterations))),
        ],
    )
}

/// `CF.STATS key`: the library's own figures, summed over levels where
/// they add up and per level where they do not.
pub(crate) fn stats(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() != 2 {
        return Err(RedisError::WrongArity);
    }
    let key = ctx.open_key(&args[1]);
    let value = value::read(&key, &CF_TYPE)?.ok_or(RedisError::Str("ERR not found"))?;
    let filter = value.filter()?;
    let levels = filter.level_stats();
    let sum = |f: fn(&concurrent_cuckoo::Stats) -> u64| levels.iter().map(f).sum::<u64>();
    let (items, capacity) = (sum(|s| s.len as u64), sum(|s| s.capacity as u64));
    let mut paths = [0u64; 6];
    for s in &levels {
        for (total, n) in paths.iter_mut().zip(s.path_lengths) {
            *total += n;
        }
    }
    reply_fields(
        ctx,
        &[
            (
                c"Kind",
                Field::Text(match filter {
                    Filter::Fixed(_) => c"fixed",
                    Filter::Growing(_) => c"growing",
                }),
            ),
            (c"Items", Field::Int(to_i64(items))),
            (c"Capacity", Field::Int(to_i64(capacity))),
            (
                c"Load factor",
                Field::Double(items as f64 / capacity.max(1) as f64),
            ),
            (c"Memory", Field::Int(to_i64(filter.memory_usage()))),
            (c"Levels", Field::Int(to_i64(levels.len()))),
            (
                c"Fingerprint bits",
                Field::Ints(
                    levels
                        .iter()
                        .map(|s| i64::from(s.fingerprint_bits))
                        .collect(),
                ),
            ),
            (
                c"Buckets",
                Field::Ints(levels.iter().map(|s| to_i64(s.bucket_count)).collect()),
            ),
            (
                c"False positive bound",
                Field::Double(filter.false_positive_bound()),
            ),
            (c"Error rate", Field::Double(value.meta.error_rate)),
            (c"Inserts", Field::Int(to_i64(sum(|s| s.inserts)))),
            (c"Removes", Field::Int(to_i64(sum(|s| s.removes)))),
            (c"Relocations", Field::Int(to_i64(sum(|s| s.relocations)))),
            (
                c"Refused full",
                Field::Int(to_i64(sum(|s| s.failed_inserts))),
            ),
            (
                c"Refused duplicates",
                Field::Int(to_i64(sum(|s| s.duplicate_refusals))),
            ),
            (
                c"Path lengths",
                Field::Ints(paths.iter().map(|&n| to_i64(n)).collect()),
            ),
            (
                c"Probe",
                Field::Text(match concurrent_cuckoo::probe_backend() {
                    "sse2" => c"sse2",
                    "sse2+avx2" => c"sse2+avx2",
                    "neon" => c"neon",
                    _ => c"portable",
                }),
            ),
        ],
    )
}

/// `CF.SCANDUMP key iterator`: the filter's encoding (the library's saved
/// format, `concurrent_cuckoo::CuckooFilter::to_bytes` or
/// `ScalableCuckooFilter::to_bytes`) in chunks, as RedisBloom's users see
/// a dump: iterator 0 answers the header chunk (the encoding's headers up
/// to the first table's buckets, `ChunkEncoder::header_len` bytes), each
/// later call a data chunk of at most [`DUMP_CHUNK`] bytes; each reply is
/// `[next, chunk]` with `next` the iterator of the following call (one more
/// than the bytes handed out so far), and `[0, nil]` ends: past the end, and
/// at once for a filter with no items (RedisBloom's answer: nothing to
/// restore). A write to the filter between two calls ends the dump (an
/// error: start again from 0), so the chunks always make one state of the
/// filter: a chunk is cut short (by at most a few hundred bytes) where it
/// would end where a chunk of an earlier state ended, so that an iterator
/// names one state whoever continues it (`dumps.rs`). Any iterator costs
/// one chunk: the encoder moves to it without the bytes before it.
pub(crate) fn scandump(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() != 3 {
        return Err(RedisError::WrongArity);
    }
    let iterator = args::iterator(&args[2])?;
    // Read-only: the dumps in progress are kept through `&CfValue`.
    let key = ctx.open_key(&args[1]);
    let value = value::read(&key, &CF_TYPE)?.ok_or(RedisError::Str("ERR not found"))?;
    if let Some(w) = window::of(value) {
        return window::scandump(value, w, iterator);
    }
    let filter = value.filter()?;
    let version = value.version;
    let end = || {
        Ok(RedisValue::Array(vec![
            RedisValue::Integer(0),
            RedisValue::Null,
        ]))
    };
    let client = client_id(ctx);
    let place = dump_place(ctx, &args[1]);
    let offset =
        match iterator {
            // Nothing to dump: no dump begins (RedisBloom's answer for a
            // filter with no items).
            0 if filter.len() == 0 => return end(),
            0 => {
                crate::dumps::DUMPERS.began(client, place, value.uid);
                0
            }
            _ if crate::dumps::DUMPERS.replaced(client, place, value.uid) => {
                return Err(RedisError::Str(
                    "ERR the filter was replaced during CF.SCANDUMP: start again from iterator 0",
                ))
            }
            _ => {
                let offset = iterator - 1;
                let found = value.dumps.borrow().find(offset, version);
                match found {
                    // Every chunk of one state went out: the closing call ends
                    // the dump, even if the filter changed since (it was whole).
                    Found::End(ended) => {
                        value.dumps.borrow_mut().ended(ended, version);
                        crate::dumps::DUMPERS.ended(client, place);
                        value.account_memory();
                        return end();
                    }
                    Found::Stale => return Err(RedisError::Str(
                        "ERR the filter changed during CF.SCANDUMP: start again from iterator 0",
                    )),
                    // Nothing to dump now (a dump that began before the filter
                    // emptied is stale, above: never a torn dump).
                    Found::Unknown if filter.len() == 0 => return end(),
                    Found::Current | Found::Unknown => offset,
                }
            }
        };
    let reply = next_chunk(value, filter, offset);
    // What the dumps hold changed: `INFO`'s totals follow `MEMORY USAGE`.
    value.account_memory();
    let (next, chunk) = reply?;
    if next == 0 {
        return end();
    }
    Ok(RedisValue::Array(vec![
        RedisValue::Integer(to_i64(next)),
        RedisValue::StringBuffer(chunk),
    ]))
}

/// The chunk of `value`'s encoding from `offset` and the iterator after it
/// (0 past the end), its end marked where the next call finds it.
fn next_chunk(value: &CfValue, filter: &Filter, offset: u64) -> Result<(u64, Vec<u8>), RedisError> {
    let version = value.version;
    let mut dumps = value.dumps.borrow_mut();
    let total = dumps.total_len(|| filter.encoder());
    if offset >= total {
        return Ok((0, Vec::new()));
    }
    let failed = |e: std::io::Error| RedisError::String(format!("ERR {e}"));
    let mut encoder = dumps
        .encoder_at(offset, || filter.encoder())
        .map_err(failed)?;
    let max = match offset {
        0 => encoder.header_len().clamp(1, DUMP_CHUNK as u64),
        _ => DUMP_CHUNK as u64,
    };
    let stop = dumps.chunk_end(offset, max, total, version);
    // `stop - offset` is at most `DUMP_CHUNK`.
    let want = (stop - offset) as usize;
    let mut chunk = Vec::new();
    chunk
        .try_reserve_exact(want)
        .map_err(|_| RedisError::Str("ERR out of memory for a CF.SCANDUMP chunk"))?;
    filter
        .next_chunk(&mut encoder, want, &mut chunk)
        .map_err(failed)?;
    dumps.handed_out(encoder, version);
    Ok((offset + chunk.len() as u64 + 1, chunk))
}

/// The database and key of a dump, digested (see `value::Dumpers`).
fn dump_place(ctx: &Context, key: &RedisString) -> u64 {
    let db = match crate::api::api!(RedisModule_GetSelectedDb) {
        // SAFETY: `ctx` is the context of the running command.
        Some(db) => unsafe { db(ctx.ctx) },
        None => 0,
    };
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    hasher.update(&db.to_le_bytes());
    hasher.update(key.as_slice());
    hasher.digest()
}

/// `CF.LOADCHUNK key iterator data [BUCKETSIZE b] [MAXITERATIONS m]
/// [CAPACITY c] [ERROR r] [DELETED d]`: restores a filter from the chunks
/// `CF.SCANDUMP` gave, in order. The first chunk creates the key (the
/// options, with it only, set what `CF.INFO` reports: the AOF rewrite uses
/// them); the filter answers once every chunk arrived and its checksum
/// matched. A chunk that cannot continue the encoding abandons the restore
/// (the key is deleted) with `Couldn't load chunk!`.
pub(crate) fn loadchunk(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    if args.len() < 4 || !args.len().is_multiple_of(2) {
        return Err(RedisError::WrongArity);
    }
    let iterator = args::chunk_iterator(&args[2])?;
    let data = args[3].as_slice();
    let key = ctx.open_key_writable(&args[1]);
    let offset = u64::try_from(iterator)
        .ok()
        .and_then(|end| end.checked_sub(data.len() as u64 + 1));
    let Some(offset) = offset else {
        // RedisBloom's answers for chunks that cannot be where they say
        // (a negative iterator included): its header chunk is at iterator
        // 1 (here a first chunk is at one more than its length), a data
        // chunk for a missing key is `ERR not found` (RedisBloom looks the
        // filter up before it reads the position), and bytes for a live
        // filter are refused. Nothing changes.
        return Err(RedisError::Str(match value::write(&key, &CF_TYPE)? {
            None if iterator == 1 => "Couldn't create filter!",
            None => "ERR not found",
            Some(v) if matches!(v.body, Body::Live(_)) => "Couldn't load chunk!",
            _ => "Invalid position",
        }));
    };
    if let Some(reply) = window::loadchunk(ctx, &args, &key, offset) {
        return reply;
    }
    if offset == 0 {
        if value::write(&key, &CF_TYPE)?.is_some() {
            return Err(RedisError::Str("ERR item exists"));
        }
        let mut given = args::first_chunk_settings(&args[4..])?;
        // The reported settings the chunk did not give are this server's
        // configs, and reach replicas (and the AOF) explicitly: every copy
        // restores the same filter whatever its own configs.
        let defaults = Meta::default();
        let mut explicit: Vec<(&[u8], String)> = Vec::new();
        if given.bucket_size == 0 {
            given.bucket_size = defaults.bucket_size;
            explicit.push((b"BUCKETSIZE", given.bucket_size.to_string()));
        }
        if given.max_iterations == 0 {
            given.max_iterations = defaults.max_iterations;
            explicit.push((b"MAXITERATIONS", given.max_iterations.to_string()));
        }
        if data.is_empty() {
            return Err(RedisError::Str("Couldn't create filter!"));
        }
        // Admitted: a header that arrived allocates its table (a forged
        // one claiming more than the limits is refused here). The decoder
        // is made in the scope too: all it holds is measured.
        let ((decoder, fed), admitted) = admission::within(0, || {
            let mut decoder = Box::new(crate::alloc::decoder());
            let fed = decoder.feed(data);
            (decoder, fed)
        });
        if admitted.refused {
            return Err(RedisError::Str(CREATE_REFUSED));
        }
        fed.map_err(|_| RedisError::Str("Couldn't create filter!"))?;
        let mut value = CfValue::new(given, Body::Loading(decoder));
        value.restore_held = admitted.held;
        // What the decoder holds counts in the `INFO` totals from the
        // header on (`CfValue::new` counted the struct alone).
        value.account();
        complete_if_done(&mut value).map_err(|_| RedisError::Str("Couldn't create filter!"))?;
        if admission::loading() {
            admission::note_loaded(args[1].as_slice(), value.memory_usage());
        }
        key.set_value(&CF_TYPE, value)?;
        if explicit.is_empty() {
            ctx.replicate_verbatim();
        } else {
            let mut parts: Vec<&[u8]> = args[1..].iter().map(|a| a.as_slice()).collect();
            for (keyword, value) in &explicit {
                parts.push(keyword);
                parts.push(value.as_bytes());
            }
            ctx.replicate("CF.LOADCHUNK", parts.as_slice());
        }
        return Ok(RedisValue::SimpleStringStatic("OK"));
    }
    if args.len() > 4 {
        return Err(RedisError::Str(
            "ERR options are only taken with the first chunk",
        ));
    }
    let value = value::write(&key, &CF_TYPE)?.ok_or(RedisError::Str("ERR not found"))?;
    let held = value.memory_usage();
    let Body::Loading(decoder) = &mut value.body else {
        // A data chunk for a live filter: refused, nothing changes
        // (RedisBloom's error; it would copy the bytes into the filter).
        return Err(RedisError::Str("Couldn't load chunk!"));
    };
    if decoder.consumed() != offset {
        return Err(RedisError::Str("Invalid position"));
    }
    let (fed, admitted) =
        admission::within(held, || !data.is_empty() && decoder.feed(data).is_ok());
    value.restore_held = value.restore_held.saturating_add(admitted.held);
    if admitted.refused {
        // A table the limits refused: the decoder cannot go on, so the
        // restore is abandoned, as for a bad chunk (below).
        key.delete()?;
        ctx.replicate("DEL", &[args[1].as_slice()]);
        return Err(RedisError::Str(CREATE_REFUSED));
    }
    if !fed || complete_if_done(value).is_err() {
        // The decoder cannot go on: the restore is abandoned, here and on
        // replicas (which took the same chunks before).
        key.delete()?;
        ctx.replicate("DEL", &[args[1].as_slice()]);
        return Err(RedisError::Str("Couldn't load chunk!"));
    }
    value.changed();
    value.account(); // a restore that completed: its items counted once
    if admission::loading() && matches!(value.body, Body::Live(_)) {
        admission::note_loaded(args[1].as_slice(), value.memory_usage());
    }
    ctx.replicate_verbatim();
    Ok(RedisValue::SimpleStringStatic("OK"))
}
