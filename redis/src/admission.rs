//! Memory admission: every filter table the module allocates, from any
//! command, `COPY`, restore or load, is sized before it is allocated and
//! refused when it would take its filter past `cuckoo.cf-max-memory-usage`
//! ([`configs::max_memory_usage`]) or, with `maxmemory` set, the server
//! past `maxmemory`.
//!
//! The library allocates every table through the global allocator (the
//! module sets `TableMemory::GlobalAllocator`), as zeroed blocks aligned
//! to its cache line or more (the buckets, the lock stripes, the version
//! words: each sized before it is made), and turns a null into an error
//! (`BuildError`, a failed insert's growth, a `DecodeError`): those are
//! the only fallible allocations it makes. A table is admitted whole: its
//! locks and versions count against the limit with its buckets. The module's allocator (`alloc.rs`) asks
//! [`admit`] before each such block and returns null when it says no, so
//! every path that can allocate a table is covered at the one place they
//! all pass, and nothing else (lookups never allocate) pays for it.
//!
//! What a write may still allocate is known only to the write: a command
//! runs its filter operation [`within`] a scope that knows what the
//! filter holds already, and learns whether a table was refused (to
//! choose its error reply) and how much was admitted (what a restore in
//! progress then holds). Outside any scope a table is admitted against the
//! limits as if its filter held nothing else.
//!
//! Redis runs commands, loads and copies on its main thread, one at a
//! time: the scope is a thread-local, and allocations on other threads
//! (none allocate tables) see no scope.
//!
//! While the server loads its data nothing is refused: persisted data
//! always loads, and the filters over the limit are named in the log
//! ([`note_loaded`]). A replica
//! admits every table: its writes come from its primary, which
//! admitted them and replicates only what it did (a command whose growth
//! was refused part way reaches replicas as the items it added), so a
//! replica with a lower limit, or past its own `maxmemory`, still holds
//! the primary's filters byte for byte.

use crate::api::api;
use crate::configs;
use core::cell::Cell;
use core::sync::atomic::{AtomicPtr, Ordering};
use redis_module::raw;

/// The scope of one filter operation (see the module docs).
#[derive(Clone, Copy, Debug)]
struct Scope {
    /// Bytes the filter may still take: the limit less what it held when
    /// the scope began, less what was admitted since.
    left: usize,
    /// Bytes admitted in this scope.
    admitted: usize,
    /// Whether a table was refused in this scope.
    refused: bool,
    /// Bytes the module's allocator handed out in this scope less those
    /// it took back (every block, tables or not: see [`allocated`]).
    net: isize,
    /// Bytes the operation frees once it is done (a table it replaces):
    /// `maxmemory` is checked for what it holds beyond them.
    credit: usize,
}

std::thread_local! {
    static SCOPE: Cell<Option<Scope>> = const { Cell::new(None) };
}

/// What a scope saw: whether a table was refused, the bytes of tables
/// admitted, and the bytes the operation still holds of all it allocated
/// (tables, lock stripes, version words, buffers: what a restore in
/// progress holds, for `MEMORY USAGE` and admission).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Outcome {
    pub(crate) refused: bool,
    pub(crate) admitted: usize,
    pub(crate) held: usize,
}

/// Runs `op` on a filter that holds `held` bytes now, admitting the tables
/// it allocates against the limits; returns its result and what the scope
/// saw. Scopes nest (an inner one is the one in force).
pub(crate) fn within<T>(held: usize, op: impl FnOnce() -> T) -> (T, Outcome) {
    within_replacing(held, 0, op)
}

/// [`within`] for an operation that frees `credit` bytes once done (a
/// window filter's table replaced by a new one of its size): the tables it
/// allocates are checked against `maxmemory` for what they add beyond
/// those, since the server holds no more than before once it is done.
pub(crate) fn within_replacing<T>(
    held: usize,
    credit: usize,
    op: impl FnOnce() -> T,
) -> (T, Outcome) {
    let scope = Scope {
        left: configs::max_memory_usage().saturating_sub(held),
        admitted: 0,
        refused: false,
        net: 0,
        credit,
    };
    let outer = SCOPE.with(|s| s.replace(Some(scope)));
    let result = op();
    let seen = SCOPE.with(|s| s.replace(outer)).unwrap_or(scope);
    // What the inner scope allocated, the outer one did too.
    allocated(seen.net);
    (
        result,
        Outcome {
            refused: seen.refused,
            admitted: seen.admitted,
            held: usize::try_from(seen.net).unwrap_or(0),
        },
    )
}

/// Whether a scope is in force (the allocator measures blocks only then).
pub(crate) fn scoped() -> bool {
    SCOPE.with(|s| s.get().is_some())
}

/// Records that the module's allocator handed out (positive) or took back
/// (negative) `bytes` in the scope in force, if any: called for every
/// block, so that a scope knows all its operation holds, not only the
/// tables it admitted.
pub(crate) fn allocated(bytes: isize) {
    SCOPE.with(|s| {
        if let Some(mut scope) = s.get() {
            scope.net = scope.net.saturating_add(bytes);
            s.set(Some(scope));
        }
    });
}

/// Whether a table block of `bytes` may be allocated now; records the
/// answer in the scope in force.
pub(crate) fn admit(bytes: usize) -> bool {
    let mut scope = SCOPE.with(Cell::get).unwrap_or(Scope {
        left: configs::max_memory_usage(),
        admitted: 0,
        refused: false,
        net: 0,
        credit: 0,
    });
    let flags = server_flags();
    let ok = if flags & CTX_FLAGS_REPLICA != 0 {
        // A replica applies what its primary admitted (its writes come
        // from the primary, which replicates only what it did): refusing
        // there, by its own config or maxmemory, would make it diverge.
        true
    } else if flags & CTX_FLAGS_LOADING != 0 {
        // Loading (an RDB, an AOF, a full resynchronisation, `DEBUG
        // RELOAD`) takes back what the server held, whatever the limits
        // say now: they guard commands, and refusing one value would
        // refuse the whole file, every other key with it. The server
        // itself loads past `maxmemory` rather than lose data. A filter
        // over the limit is named in the log ([`note_loaded`]); a
        // table the allocator cannot give still fails (fallibly).
        true
    } else {
        // `maxmemory` is read only where one is set: the server's memory
        // figures come with its whole `INFO memory` section, about
        // 200,000 instructions (a level of a growing filter costs less).
        bytes <= scope.left
            && (flags & CTX_FLAGS_MAXMEMORY == 0 || within_maxmemory(bytes, scope.credit))
    };
    if ok {
        scope.left = scope.left.saturating_sub(bytes);
        scope.admitted = scope.admitted.saturating_add(bytes);
    } else {
        scope.refused = true;
    }
    SCOPE.with(|s| {
        if s.get().is_some() {
            s.set(Some(scope));
        }
    });
    ok
}

/// Whether the server is loading its data (an RDB, an AOF, a full
/// resynchronisation, `DEBUG RELOAD`).
pub(crate) fn loading() -> bool {
    server_flags() & CTX_FLAGS_LOADING != 0
}

/// Whether what the running command writes comes from a source the
/// server trusts: a load (an RDB, an AOF, a full resynchronisation) or,
/// on a replica, its primary. Bytes from a client (`CF.LOADCHUNK`,
/// `RESTORE`) are not.
pub(crate) fn trusted_source() -> bool {
    server_flags() & (CTX_FLAGS_LOADING | CTX_FLAGS_REPLICA) != 0
}

/// Logs a filter `key` of `bytes` loaded past `cuckoo.cf-max-memory-usage`
/// (loading admits it: see [`admit`]), so that the operator learns which
/// filters the limit no longer covers.
pub(crate) fn note_loaded(key: &[u8], bytes: usize) {
    let limit = configs::max_memory_usage();
    if bytes > limit {
        redis_module::logging::log_warning(format!(
            "cuckoo: filter '{}' loaded with {bytes} bytes, over cuckoo.cf-max-memory-usage \
             ({limit} bytes): persisted data always loads; commands that would grow it are refused",
            String::from_utf8_lossy(key)
        ));
    }
}

/// Whether a table was refused in the scope in force so far.
pub(crate) fn refused() -> bool {
    SCOPE.with(Cell::get).is_some_and(|s| s.refused)
}

/// Records that a block admitted in the scope in force could not be had
/// from the allocator after all (the allocator, not the limits, said no).
pub(crate) fn allocation_failed(bytes: usize) {
    SCOPE.with(|s| {
        if let Some(mut scope) = s.get() {
            scope.refused = true;
            scope.admitted = scope.admitted.saturating_sub(bytes);
            scope.left = scope.left.saturating_add(bytes);
            s.set(Some(scope));
        }
    });
}

/// A context the module keeps for calls that need one outside a command
/// (`GetServerInfo`, `GetContextFlags`): set once at load.
static SERVER_CTX: AtomicPtr<raw::RedisModuleCtx> = AtomicPtr::new(core::ptr::null_mut());

/// Keeps a detached context for [`within_maxmemory`]; called once from
/// the module's `init`.
pub(crate) fn init(ctx: *mut raw::RedisModuleCtx) {
    if let Some(detach) = api!(RedisModule_GetDetachedThreadSafeContext) {
        // SAFETY: `ctx` is the context `RedisModule_OnLoad` was given; a
        // detached context lives until freed, which the module never does.
        let detached = unsafe { detach(ctx) };
        SERVER_CTX.store(detached, Ordering::Relaxed);
    }
}

/// `REDISMODULE_CTX_FLAGS_LOADING`: the server is loading an RDB or AOF.
const CTX_FLAGS_LOADING: i32 = raw::REDISMODULE_CTX_FLAGS_LOADING as i32;
/// `REDISMODULE_CTX_FLAGS_MAXMEMORY`: `maxmemory` is set (non-zero).
const CTX_FLAGS_MAXMEMORY: i32 = raw::REDISMODULE_CTX_FLAGS_MAXMEMORY as i32;
/// `REDISMODULE_CTX_FLAGS_SLAVE`: the server is a replica.
const CTX_FLAGS_REPLICA: i32 = raw::REDISMODULE_CTX_FLAGS_SLAVE as i32;

/// The server's context flags (0 without a server).
fn server_flags() -> i32 {
    let ctx = SERVER_CTX.load(Ordering::Relaxed);
    match api!(RedisModule_GetContextFlags) {
        // SAFETY: `ctx` is the detached context kept by `init`, valid for
        // the module's life; this runs on the main thread.
        Some(flags) if !ctx.is_null() => unsafe { flags(ctx) },
        _ => 0,
    }
}

/// Whether `bytes` more fit under `maxmemory`, when one is set, raised by
/// `credit`, the bytes the operation frees once done (`used_memory`
/// counts the blocks the operation allocated so far: the credit is not
/// spent by them).
fn within_maxmemory(bytes: usize, credit: usize) -> bool {
    let ctx = SERVER_CTX.load(Ordering::Relaxed);
    let (Some(info), Some(field), Some(free)) = (
        api!(RedisModule_GetServerInfo),
        api!(RedisModule_ServerInfoGetFieldUnsigned),
        api!(RedisModule_FreeServerInfo),
    ) else {
        return true;
    };
    if ctx.is_null() {
        return true;
    }
    // SAFETY: as above; the section name is a C string; the data is freed
    // below, once read.
    let data = unsafe { info(ctx, c"memory".as_ptr()) };
    if data.is_null() {
        return true;
    }
    let (mut max_err, mut used_err) = (0, 0);
    // SAFETY: `data` is the live info just returned; field names are C
    // strings; each error flag is written by its call.
    let (maxmemory, used) = unsafe {
        let maxmemory = field(data, c"maxmemory".as_ptr(), &mut max_err);
        let used = field(data, c"used_memory".as_ptr(), &mut used_err);
        free(ctx, data);
        (maxmemory, used)
    };
    if max_err != 0 || used_err != 0 || maxmemory == 0 {
        return true;
    }
    used.saturating_add(bytes as u64) <= maxmemory.saturating_add(credit as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without a server (`maxmemory` unknown) only the per-filter limit
    /// applies: what a filter holds already counts, admitted blocks add
    /// up, a refusal is recorded, and scopes nest.
    #[test]
    fn scopes_admit_up_to_the_limit_less_what_is_held() {
        let limit = configs::max_memory_usage();
        let (taken, seen) = within(limit - 1000, || (admit(600), admit(300), admit(200)));
        assert_eq!(taken, (true, true, false));
        assert_eq!((seen.refused, seen.admitted), (true, 900));
        let (inner, outer) = within(0, || {
            assert!(admit(100));
            let (_, inner) = within(limit, || admit(1));
            assert!(!refused(), "the inner scope's refusal stays there");
            inner
        });
        assert!(inner.refused && !outer.refused && outer.admitted == 100);
        // Outside any scope: against the limit alone.
        assert!(admit(limit) && !admit(limit + 1));
        // A block the allocator then failed is given back to the scope.
        let ((), seen) = within(0, || {
            assert!(admit(limit));
            allocation_failed(limit);
            assert!(admit(limit));
        });
        assert!(seen.refused && seen.admitted == limit);
    }
}
