//! A Redis module: the concurrent cuckoo filter as a Redis data type that
//! speaks RedisBloom's `CF.*` commands, so clients that already use them
//! (redis-py's `r.cf()`, Jedis, go-redis, lettuce) change nothing.
//!
//! ```sh
//! cargo build --release -p concurrent-cuckoo-redis
//! redis-server --loadmodule target/release/libconcurrent_cuckoo_redis.so
//! ```
//!
//! The commands (`commands.rs`), their arguments (`args.rs`) and key specs
//! (`keyspecs.rs`), the value a key holds (`value.rs`) and how Redis
//! persists it (`datatype.rs`). `docs/redis.md` in the repository says what
//! is compatible with RedisBloom and what is not, and why.
//!
//! The commands that run per item enter through `dispatch.rs`, which lends
//! them their arguments without the macro's copy. Window filters (items
//! that expire, `CF.RESERVE ... WINDOW ms`) have their commands in
//! `window.rs` (which `commands.rs` hands them to), their value and
//! encoding in `window_value.rs`, and their sweeper, a timer that sweeps
//! and advances them between commands, in `window_sweeper.rs`, which
//! visits the keys `window_keys.rs` noted.
//!
//! Each file depends one way: `dispatch` on `commands`; `commands` on `window`, `datatype`, `args`, `value`,
//! `admission`, `reply` and `info`; `window_sweeper` on `window`,
//! `datatype`, `value`, `window_value`, `window_keys`, `configs` and
//! `info`; `window` on `datatype`, `args`, `value`,
//! `window_value`, `window_keys`, `admission`, `reply` and `info`;
//! `datatype` on `value`, `window_value`, `window_keys`, `admission` and
//! `configs`; `args` on `value`, `value` on `window_value`, `configs` and
//! `info`; `info` on `window_keys` (which depends on nothing);
//! `window_value` on `admission`, `alloc` and `info`; `alloc`
//! on `admission`, `admission` on `configs`; `defrag` (the type's defrag
//! callback, which `datatype` registers) on `value` and `alloc`; every one
//! may read the module API's entry points (`api`), which depends on
//! nothing.

mod acl;
mod admission;
mod alloc;
mod api;
mod args;
mod commands;
mod configs;
mod datatype;
mod defrag;
mod dispatch;
mod dumps;
mod info;
mod keyspecs;
mod reply;
mod value;
mod window;
mod window_keys;
mod window_sweeper;
mod window_value;

/// Entry points for the fuzz targets (`fuzz/fuzz_targets/window.rs`, built
/// with `--cfg fuzzing` by cargo-fuzz): the module's decoders of a window
/// filter's untrusted bytes, run without a server.
#[cfg(fuzzing)]
pub mod fuzzing {
    /// `parse_header` of a first chunk (a window block and the library's
    /// header): the encoding's announced length where accepted.
    pub fn window_first_chunk(bytes: &[u8]) -> Option<u64> {
        crate::window_value::parse_header(bytes).map(|(_, total)| total)
    }

    /// `decode` of a whole window encoding: its encoding again where
    /// accepted (which must be `bytes`).
    pub fn window_encoding(bytes: &[u8]) -> Option<Vec<u8>> {
        let window = crate::window_value::decode(bytes).ok()?;
        let mut out = Vec::new();
        window.write_encoding(&mut out).ok()?;
        Some(out)
    }

    /// A restore of `bytes` as `CF.LOADCHUNK` takes it: a first chunk of
    /// the block and header, then pieces of `piece` bytes, each checked as
    /// it arrives, the bytes received written back after each (which must
    /// be the prefix fed); its encoding again where accepted.
    pub fn window_encoding_in_pieces(bytes: &[u8], piece: usize) -> Option<Vec<u8>> {
        use crate::window_value::{WindowLoad, HEADER_CHUNK};
        let first = bytes.len().min(HEADER_CHUNK);
        let mut load = WindowLoad::begin(&bytes[..first]).ok()?;
        let mut at = first;
        while at < bytes.len() {
            let end = bytes.len().min(at + piece.max(1));
            load.feed(&bytes[at..end]).ok()?;
            at = end;
            let mut received = Vec::new();
            load.write_received(&mut received).ok()?;
            assert_eq!(received, bytes[..at], "the bytes received, written back");
        }
        if !load.is_complete() {
            return None;
        }
        let window = load.finish().ok()?;
        let mut out = Vec::new();
        window.write_encoding(&mut out).ok()?;
        Some(out)
    }
}

use datatype::CF_TYPE;
use redis_module::configuration::ConfigurationFlags;
use redis_module::{raw, redis_module, Context, RedisString, Status};

/// Loads the module: persistence errors become load failures (never a
/// crash), filter tables come from Redis's allocator (so `used_memory` and
/// `maxmemory` see them), and every command gets its key spec.
fn init(ctx: &Context, _args: &[RedisString]) -> Status {
    ctx.set_module_options(raw::ModuleOptions::HANDLE_IO_ERRORS);
    admission::init(ctx.ctx);
    raw::register_info_function(ctx.ctx, Some(module_info));
    if let Err(e) = dispatch::register(ctx) {
        ctx.log_warning(&format!("cuckoo: {e}"));
        return Status::Err;
    }
    if let Err(e) = keyspecs::register(ctx) {
        ctx.log_warning(&format!("cuckoo: {e}"));
        return Status::Err;
    }
    match acl::register(ctx) {
        Ok(acl::Registered::Category) => {
            ctx.log_notice("cuckoo: ACL category @cuckoo holds every CF.* command")
        }
        Ok(acl::Registered::Unsupported) => ctx.log_notice(
            "cuckoo: this server has no module ACL categories (Redis 7.4+, Valkey 8+): \
             skipped @cuckoo; the CF.* commands are in @module",
        ),
        Err(e) => {
            ctx.log_warning(&format!("cuckoo: {e}"));
            return Status::Err;
        }
    }
    window_sweeper::start(ctx);
    ctx.log_notice(&format!(
        "cuckoo: CF.* commands on concurrent-cuckoo {} (probe {})",
        env!("CARGO_PKG_VERSION"),
        concurrent_cuckoo::probe_backend()
    ));
    Status::Ok
}

/// The module's `INFO` section (`info.rs`), registered in `init` in place
/// of the `redis_module!` macro's empty handler.
extern "C" fn module_info(ctx: *mut raw::RedisModuleInfoCtx, _for_crash_report: core::ffi::c_int) {
    info::section(ctx);
    defrag::info_section(ctx);
}

redis_module! {
    name: "cuckoo",
    version: 10000,
    allocator: (alloc::ModuleAlloc, alloc::ModuleAlloc),
    data_types: [CF_TYPE],
    init: init,
    // CF.ADD, CF.ADDNX, CF.INSERT, CF.INSERTNX, CF.EXISTS and CF.MEXISTS:
    // registered in `init` by `dispatch` (arguments borrowed, not copied).
    commands: [
        ["cf.reserve", commands::reserve, "write deny-oom", 1, 1, 1, ""],
        ["cf.count", commands::count, "readonly fast", 1, 1, 1, ""],
        ["cf.del", commands::del, "write fast", 1, 1, 1, ""],
        ["cf.compact", commands::compact, "write", 1, 1, 1, ""],
        ["cf.info", commands::info, "readonly fast", 1, 1, 1, ""],
        ["cf.stats", commands::stats, "readonly fast", 1, 1, 1, ""],
        ["cf.scandump", commands::scandump, "readonly", 1, 1, 1, ""],
        ["cf.loadchunk", commands::loadchunk, "write deny-oom", 1, 1, 1, ""],
        ["cf.advance", window::advance, "write", 1, 1, 1, ""],
    ],
    // Keys that a RENAME, MOVE, COPY or RESTORE left holding a window
    // filter, noted for its sweeper.
    event_handlers: [
        [@GENERIC: window_sweeper::on_keyspace_event],
    ],
    configurations: [
        i64: [
            [
                configs::MAX_MEMORY_USAGE_NAME,
                &configs::MAX_MEMORY_USAGE,
                configs::DEFAULT_MAX_MEMORY_USAGE,
                configs::MIN_MAX_MEMORY_USAGE,
                configs::MAX_MAX_MEMORY_USAGE,
                ConfigurationFlags::MEMORY,
                None
            ],
            [
                configs::INITIAL_SIZE_NAME,
                &configs::INITIAL_SIZE,
                1024,
                configs::INITIAL_SIZE_RANGE.0,
                configs::INITIAL_SIZE_RANGE.1,
                ConfigurationFlags::DEFAULT,
                None
            ],
            [
                configs::EXPANSION_FACTOR_NAME,
                &configs::EXPANSION_FACTOR,
                1,
                configs::EXPANSION_FACTOR_RANGE.0,
                configs::EXPANSION_FACTOR_RANGE.1,
                ConfigurationFlags::DEFAULT,
                None
            ],
            [
                configs::MAX_EXPANSIONS_NAME,
                &configs::MAX_EXPANSIONS,
                32,
                configs::MAX_EXPANSIONS_RANGE.0,
                configs::MAX_EXPANSIONS_RANGE.1,
                ConfigurationFlags::DEFAULT,
                None
            ],
            [
                configs::BUCKET_SIZE_NAME,
                &configs::BUCKET_SIZE,
                2,
                configs::BUCKET_SIZE_RANGE.0,
                configs::BUCKET_SIZE_RANGE.1,
                ConfigurationFlags::DEFAULT,
                None
            ],
            [
                configs::MAX_ITERATIONS_NAME,
                &configs::MAX_ITERATIONS,
                20,
                configs::MAX_ITERATIONS_RANGE.0,
                configs::MAX_ITERATIONS_RANGE.1,
                ConfigurationFlags::DEFAULT,
                None
            ],
        ],
        string: [
            [
                configs::ERROR_RATE_NAME,
                &configs::ERROR_RATE,
                configs::DEFAULT_ERROR_RATE_TEXT,
                ConfigurationFlags::DEFAULT,
                None
            ],
        ],
        bool: [
            [
                configs::WINDOW_SWEEPER_NAME,
                &configs::WINDOW_SWEEPER,
                true,
                ConfigurationFlags::DEFAULT,
                None
            ],
        ],
        enum: [],
        module_args_as_configuration: true,
    ]
}
