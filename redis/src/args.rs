//! Parsing the commands' arguments, with RedisBloom's error strings where
//! RedisBloom has them (clients and tests compare them).
//!
//! Numbers go through Redis's own parser (`RedisModule_StringToLongLong`,
//! `StringToDouble`): `+5`, `007`, ` 5` and `1e3` are not integers, as in
//! every Redis command. Keywords are case-insensitive. Unlike RedisBloom,
//! an unknown keyword is an error (RedisBloom's `CF.RESERVE` ignores it, so
//! a typo such as `EXPANSOIN 0` silently makes a growing filter), and a
//! keyword is only looked for where options are, never in the key or the
//! items.

use crate::value::{Meta, MAX_EXPANSION, MIN_CAPACITY};
use redis_module::{RedisError, RedisString};

pub(crate) type Result<T> = core::result::Result<T, RedisError>;

/// `Capacity must be at least (BucketSize * 2)`, RedisBloom's check.
pub(crate) const SMALL_CAPACITY: &str = "Capacity must be at least (BucketSize * 2)";

/// Whether `arg` is `keyword`, in any case.
pub(crate) fn is(arg: &RedisString, keyword: &str) -> bool {
    arg.as_slice().eq_ignore_ascii_case(keyword.as_bytes())
}

/// An integer in `range`, with RedisBloom's two error strings.
fn integer_in(
    arg: &RedisString,
    range: core::ops::RangeInclusive<i64>,
    unparsable: &'static str,
    out_of_range: &'static str,
) -> Result<i64> {
    let n = arg
        .parse_integer()
        .map_err(|_| RedisError::Str(unparsable))?;
    if range.contains(&n) {
        Ok(n)
    } else {
        Err(RedisError::Str(out_of_range))
    }
}

/// A capacity: any integer parses (`Bad capacity` otherwise); the range is
/// checked against the bucket size by the caller.
pub(crate) fn capacity(arg: &RedisString) -> Result<i64> {
    arg.parse_integer()
        .map_err(|_| RedisError::Str("Bad capacity"))
}

/// An error rate in (0, 1), with `BF.RESERVE`'s error strings.
pub(crate) fn error_rate(arg: &RedisString) -> Result<f64> {
    let rate = arg
        .parse_float()
        .map_err(|_| RedisError::Str("ERR Bad error rate"))?;
    if rate > 0.0 && rate < 1.0 {
        Ok(rate)
    } else {
        Err(RedisError::Str("ERR (0 < error rate range < 1)"))
    }
}

/// A hash seed: an unsigned 64-bit decimal integer.
pub(crate) fn seed(arg: &RedisString) -> Result<u64> {
    let text = arg.as_slice();
    let digits = !text.is_empty() && text.len() <= 20 && text.iter().all(u8::is_ascii_digit);
    let bad = || RedisError::Str("ERR Bad seed: an unsigned 64-bit integer");
    if !digits || (text.len() > 1 && text[0] == b'0') {
        return Err(bad());
    }
    core::str::from_utf8(text)
        .ok()
        .and_then(|t| t.parse().ok())
        .ok_or_else(bad)
}

/// The settings options of `CF.RESERVE` (and of the first `CF.LOADCHUNK`
/// chunk), applied to `meta`: `BUCKETSIZE`, `MAXITERATIONS`, `EXPANSION`,
/// `ERROR`, and the ones `allow` names among `SEED`, `CAPACITY`, `DELETED`.
/// Returns the seed if one was given.
///
/// RedisBloom's three keywords are checked as RedisBloom checks them (its
/// differential test compares the errors): `MAXITERATIONS`, then
/// `BUCKETSIZE`, then `EXPANSION`, each at its first occurrence only (a
/// repeat is ignored); this module's own keywords and unknown ones after.
pub(crate) fn settings(
    pairs: &[RedisString],
    meta: &mut Meta,
    allow: Allow,
) -> Result<Option<u64>> {
    if !pairs.len().is_multiple_of(2) {
        return Err(RedisError::WrongArity);
    }
    let first = |keyword: &str| {
        pairs
            .chunks_exact(2)
            .find(|pair| is(&pair[0], keyword))
            .map(|pair| &pair[1])
    };
    if let Some(value) = first("MAXITERATIONS") {
        meta.max_iterations = integer_in(
            value,
            1..=65535,
            "Couldn't parse MAXITERATIONS",
            "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive.",
        )? as u16;
    }
    if let Some(value) = first("BUCKETSIZE") {
        meta.bucket_size = integer_in(
            value,
            1..=255,
            "Couldn't parse BUCKETSIZE",
            "BUCKETSIZE: value must be an integer between 1 and 255, inclusive.",
        )? as u8;
    }
    if let Some(value) = first("EXPANSION").filter(|_| allow.expansion) {
        meta.expansion = integer_in(
            value,
            0..=i64::from(MAX_EXPANSION),
            "Couldn't parse EXPANSION",
            "EXPANSION: value must be an integer between 0 and 32768, inclusive.",
        )? as u16;
    }
    let mut seed = None;
    for pair in pairs.chunks_exact(2) {
        let (keyword, value) = (&pair[0], &pair[1]);
        if is(keyword, "BUCKETSIZE")
            || is(keyword, "MAXITERATIONS")
            || (is(keyword, "EXPANSION") && allow.expansion)
        {
            // Taken above.
        } else if is(keyword, "ERROR") {
            meta.error_rate = error_rate(value)?;
        } else if is(keyword, "SEED") && allow.seed {
            seed = Some(self::seed(value)?);
        } else if is(keyword, "MAXEXPANSIONS") && allow.seed {
            // With SEED, what replication sends (the creating server's
            // `cf-max-expansions`).
            meta.max_levels = integer_in(
                value,
                1..=64,
                "Couldn't parse MAXEXPANSIONS",
                "MAXEXPANSIONS: value must be an integer between 1 and 64, inclusive.",
            )? as u16;
        } else if is(keyword, "CAPACITY") && allow.capacity {
            // Any capacity a filter has (the AOF rewrite sends the
            // filter's own), down to CF.RESERVE's smallest.
            meta.capacity = u64::try_from(capacity(value)?)
                .ok()
                .filter(|&c| c >= MIN_CAPACITY)
                .ok_or(RedisError::Str(SMALL_CAPACITY))?;
        } else if is(keyword, "DELETED") && allow.deleted {
            // A u64, as the settings keep it and the AOF rewrite writes
            // it (an i64 would refuse a count past i64::MAX on replay).
            meta.deleted = core::str::from_utf8(value.as_slice())
                .ok()
                .filter(|t| t.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|t| t.parse::<u64>().ok())
                .ok_or(RedisError::Str("ERR Bad DELETED count"))?;
        } else {
            return Err(RedisError::Str("Unknown argument received"));
        }
    }
    Ok(seed)
}

/// A capacity that is at least twice the default bucket size
/// (`cf-bucket-size`, RedisBloom's check).
pub(crate) fn positive(capacity: i64) -> Result<u64> {
    u64::try_from(capacity)
        .ok()
        .filter(|&c| c >= 2 * u64::from(Meta::default().bucket_size))
        .ok_or(RedisError::Str(SMALL_CAPACITY))
}

/// The settings a `CF.LOADCHUNK` of position 0 may carry after the chunk
/// (`CAPACITY`, `DELETED` and the common ones, no `EXPANSION` or `SEED`:
/// the chunk holds those), whatever kind of filter the chunk begins.
pub(crate) fn first_chunk_settings(pairs: &[RedisString]) -> Result<Meta> {
    let mut given = Meta::UNSET;
    let allow = Allow {
        expansion: false,
        seed: false,
        capacity: true,
        deleted: true,
    };
    settings(pairs, &mut given, allow)?;
    Ok(given)
}

/// Which optional keywords [`settings`] takes.
#[derive(Clone, Copy)]
pub(crate) struct Allow {
    pub(crate) expansion: bool,
    pub(crate) seed: bool,
    pub(crate) capacity: bool,
    pub(crate) deleted: bool,
}

/// The options of `CF.INSERT`/`CF.INSERTNX` before `ITEMS`.
pub(crate) struct InsertOptions {
    pub(crate) capacity: Option<u64>,
    pub(crate) error_rate: Option<f64>,
    pub(crate) nocreate: bool,
    /// Index of the first item in the arguments.
    pub(crate) items: usize,
}

/// Parses `CF.INSERT key [CAPACITY c] [ERROR r] [NOCREATE] ITEMS item...`
/// (`args[0]` is the command). RedisBloom's errors: a keyword without its
/// value, or no `ITEMS` or no item after it, is a wrong arity; a capacity
/// that is not an integer is `Bad capacity`, one under 4
/// `Capacity must be at least (BucketSize * 2)` (checked even when the
/// filter exists); anything else is `Unknown argument received`.
///
/// `from_primary`: the command comes from the primary or an AOF, which
/// took it: its `CAPACITY` is checked against the smallest capacity only,
/// not this server's `cf-bucket-size` (a replica or replay never refuses
/// what the primary accepted; older primaries replicate `CAPACITY`).
pub(crate) fn insert_options(args: &[RedisString], from_primary: bool) -> Result<InsertOptions> {
    let mut options = InsertOptions {
        capacity: None,
        error_rate: None,
        nocreate: false,
        items: 0,
    };
    let mut at = 2;
    while at < args.len() {
        let arg = &args[at];
        if is(arg, "ITEMS") {
            options.items = at + 1;
            break;
        } else if is(arg, "CAPACITY") {
            let value = args.get(at + 1).ok_or(RedisError::WrongArity)?;
            let capacity = capacity(value)?;
            options.capacity = Some(if from_primary {
                u64::try_from(capacity)
                    .ok()
                    .filter(|&c| c >= MIN_CAPACITY)
                    .ok_or(RedisError::Str(SMALL_CAPACITY))?
            } else {
                positive(capacity)?
            });
            at += 2;
        } else if is(arg, "ERROR") {
            let value = args.get(at + 1).ok_or(RedisError::WrongArity)?;
            options.error_rate = Some(error_rate(value)?);
            at += 2;
        } else if is(arg, "NOCREATE") {
            options.nocreate = true;
            at += 1;
        } else {
            return Err(RedisError::Str("Unknown argument received"));
        }
    }
    if options.items == 0 || options.items >= args.len() {
        return Err(RedisError::WrongArity);
    }
    Ok(options)
}

/// A `CF.LOADCHUNK` iterator, read as RedisBloom reads one: any integer
/// but 0 (`Invalid position` whatever the key holds). A negative one is
/// no chunk's end, but its answer depends on the key (for a live filter,
/// `Couldn't load chunk!`), so the caller gives it.
pub(crate) fn chunk_iterator(arg: &RedisString) -> Result<i64> {
    arg.parse_integer()
        .ok()
        .filter(|&n| n != 0)
        .ok_or(RedisError::Str("Invalid position"))
}

/// A `CF.SCANDUMP` iterator: a non-negative integer.
pub(crate) fn iterator(arg: &RedisString) -> Result<u64> {
    arg.parse_integer()
        .ok()
        .and_then(|n| u64::try_from(n).ok())
        .ok_or(RedisError::Str("Invalid position"))
}
