//! The entry points of the commands that run per item (`CF.EXISTS`,
//! `CF.MEXISTS`, `CF.ADD`, `CF.ADDNX`, `CF.INSERT`, `CF.INSERTNX`),
//! registered by hand instead of by the `redis_module!` macro.
//!
//! Why: the macro's wrapper hands a command a `Vec<RedisString>` made by
//! taking a reference on every argument (`RedisModule_RetainString`) and
//! dropping each afterwards (`RedisModule_FreeString`), in a vector from
//! the server's allocator. For `CF.EXISTS` that was about 550 of the
//! server's 5,200 instructions per command (callgrind, Redis 7.0), more
//! than the lookup itself; for `CF.INSERT` about 80 per item. Here the
//! arguments are borrowed for the call, as Redis lends them: no reference
//! is taken, none is released, and up to [`STACK_ARGS`] of them live on
//! the stack. Nothing else changes: same flags, same key positions (the
//! key specs and ACL category are set on these commands as on the others,
//! after they are created), same replies.

use core::ffi::c_int;
use core::mem::ManuallyDrop;
use redis_module::{raw, Context, RedisResult, RedisString};

/// Arguments a command may have and still be lent them without a vector
/// (`CF.EXISTS` and `CF.ADD` have 3).
const STACK_ARGS: usize = 8;

/// A command handler on borrowed arguments.
type Handler = fn(&Context, &[RedisString]) -> RedisResult;

/// Runs `handler` on the arguments Redis lent the command and replies
/// with its result.
///
/// # Safety
/// `ctx`, `argv` and `argc` are those Redis passed a command's entry point.
unsafe fn call(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
    handler: Handler,
) -> c_int {
    let context = Context::new(ctx);
    let argv: &[*mut raw::RedisModuleString] = match usize::try_from(argc) {
        // SAFETY: Redis passes `argc` live strings at `argv`, valid for the
        // whole call.
        Ok(n) if !argv.is_null() => unsafe { core::slice::from_raw_parts(argv, n) },
        _ => &[],
    };
    // Never dropped (`ManuallyDrop`): no reference was taken, so none may
    // be released; the strings are Redis's, alive until the call returns,
    // and no handler keeps an argument past it.
    let borrow = |&inner| ManuallyDrop::new(RedisString::from_redis_module_string(ctx, inner));
    let result = if argv.len() <= STACK_ARGS {
        let mut lent = [const {
            ManuallyDrop::new(RedisString::from_redis_module_string(
                core::ptr::null_mut(),
                core::ptr::null_mut(),
            ))
        }; STACK_ARGS];
        for (slot, inner) in lent.iter_mut().zip(argv) {
            *slot = borrow(inner);
        }
        handler(&context, as_strings(&lent[..argv.len()]))
    } else {
        let lent: Vec<ManuallyDrop<RedisString>> = argv.iter().map(borrow).collect();
        handler(&context, as_strings(&lent))
    };
    context.reply(result) as c_int
}

/// The borrowed arguments as the `RedisString`s the handlers take.
fn as_strings(lent: &[ManuallyDrop<RedisString>]) -> &[RedisString] {
    // SAFETY: `ManuallyDrop<T>` is `repr(transparent)` over `T`, so the
    // two slices have the same layout; a shared borrow drops nothing.
    unsafe { &*(lent as *const [ManuallyDrop<RedisString>] as *const [RedisString]) }
}

/// An `extern "C"` entry point per handler.
macro_rules! entry {
    ($name:ident, $handler:path) => {
        extern "C" fn $name(
            ctx: *mut raw::RedisModuleCtx,
            argv: *mut *mut raw::RedisModuleString,
            argc: c_int,
        ) -> c_int {
            // SAFETY: Redis calls the entry point with a command's own
            // context and arguments.
            unsafe { call(ctx, argv, argc, $handler) }
        }
    };
}

entry!(exists, crate::commands::exists);
entry!(mexists, crate::commands::mexists);
entry!(add, crate::commands::add);
entry!(addnx, crate::commands::addnx);
entry!(insert, crate::commands::insert);
entry!(insertnx, crate::commands::insertnx);

/// The commands registered here: name, entry point, flags (the key is
/// argument 1 of each).
type EntryPoint =
    extern "C" fn(*mut raw::RedisModuleCtx, *mut *mut raw::RedisModuleString, c_int) -> c_int;
const COMMANDS: &[(&core::ffi::CStr, EntryPoint, &core::ffi::CStr)] = &[
    (c"cf.add", add, c"write deny-oom"),
    (c"cf.addnx", addnx, c"write deny-oom"),
    (c"cf.insert", insert, c"write deny-oom"),
    (c"cf.insertnx", insertnx, c"write deny-oom"),
    (c"cf.exists", exists, c"readonly fast"),
    (c"cf.mexists", mexists, c"readonly fast"),
];

/// Creates the commands of [`COMMANDS`]; `Err` names the first one Redis
/// refused. Called from the module's `init`, before the key specs and
/// ACL categories are set on every command.
pub(crate) fn register(ctx: &Context) -> Result<(), String> {
    let create = crate::api::api!(RedisModule_CreateCommand)
        .ok_or("the server has no RedisModule_CreateCommand")?;
    for (name, entry, flags) in COMMANDS {
        // SAFETY: the module's load context, C strings, and an entry point
        // of the signature Redis calls.
        let status = unsafe {
            create(
                ctx.ctx,
                name.as_ptr(),
                Some(*entry),
                flags.as_ptr(),
                1,
                1,
                1,
            )
        };
        if status != raw::Status::Ok as c_int {
            return Err(format!("could not create the command {name:?}"));
        }
    }
    Ok(())
}
