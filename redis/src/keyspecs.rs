//! Each command's arity and key spec (the key is argument 1), registered
//! with `RedisModule_SetCommandInfo` so that `COMMAND INFO`, `COMMAND
//! GETKEYS` and cluster-aware clients route every command by its key.
//!
//! Raw calls: the `redis-module` crate's `#[command]` attribute registers
//! key specs too, but needs an API of Redis 7.2 (ACL categories), and the
//! module must load into 7.0.

use redis_module::{raw, Context};

/// How a command uses its key.
#[derive(Clone, Copy)]
pub(crate) enum Access {
    /// Reads only.
    Read,
    /// Reads and changes the value (or creates it).
    Write,
}

/// `(name, arity, access)` of every command.
pub(crate) const COMMANDS: &[(&core::ffi::CStr, i32, Access)] = &[
    (c"cf.reserve", -3, Access::Write),
    (c"cf.add", 3, Access::Write),
    (c"cf.addnx", 3, Access::Write),
    (c"cf.insert", -4, Access::Write),
    (c"cf.insertnx", -4, Access::Write),
    (c"cf.exists", 3, Access::Read),
    (c"cf.mexists", -3, Access::Read),
    (c"cf.count", 3, Access::Read),
    (c"cf.del", 3, Access::Write),
    (c"cf.compact", 2, Access::Write),
    (c"cf.info", 2, Access::Read),
    (c"cf.stats", 2, Access::Read),
    (c"cf.scandump", 3, Access::Read),
    (c"cf.loadchunk", -4, Access::Write),
    (c"cf.advance", 3, Access::Write),
];

/// Registers the arity and key spec of every command; `Err` names the
/// first command Redis refused.
pub(crate) fn register(ctx: &Context) -> Result<(), String> {
    let (Some(get_command), Some(set_info)) = (
        crate::api::api!(RedisModule_GetCommand),
        crate::api::api!(RedisModule_SetCommandInfo),
    ) else {
        return Err("this Redis has no RedisModule_SetCommandInfo (it needs 7.0 or later)".into());
    };
    let version = raw::RedisModuleCommandInfoVersion {
        version: 1,
        sizeof_historyentry: core::mem::size_of::<raw::RedisModuleCommandHistoryEntry>(),
        sizeof_keyspec: core::mem::size_of::<raw::RedisModuleCommandKeySpec>(),
        sizeof_arg: core::mem::size_of::<raw::RedisModuleCommandArg>(),
    };
    for &(name, arity, access) in COMMANDS {
        // SAFETY: `ctx` is the module's context during `init`; `name` is a
        // NUL-terminated command name this module registered.
        let command = unsafe { get_command(ctx.ctx, name.as_ptr()) };
        if command.is_null() {
            return Err(format!("{} is not registered", name.to_string_lossy()));
        }
        // SAFETY: all-zero is the documented "unset" value of every field
        // of these C structs (plain integers, pointers and unions of them),
        // and a zeroed spec ends the spec array.
        let mut specs: [raw::RedisModuleCommandKeySpec; 2] = unsafe { core::mem::zeroed() };
        specs[0].flags = match access {
            Access::Read => raw::REDISMODULE_CMD_KEY_RO | raw::REDISMODULE_CMD_KEY_ACCESS,
            Access::Write => raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_UPDATE,
        } as u64;
        specs[0].begin_search_type =
            raw::RedisModuleKeySpecBeginSearchType_REDISMODULE_KSPEC_BS_INDEX;
        specs[0].bs.index.pos = 1;
        specs[0].find_keys_type = raw::RedisModuleKeySpecFindKeysType_REDISMODULE_KSPEC_FK_RANGE;
        specs[0].fk.range.lastkey = 0;
        specs[0].fk.range.keystep = 1;
        specs[0].fk.range.limit = 0;
        // SAFETY: as above.
        let mut info: raw::RedisModuleCommandInfo = unsafe { core::mem::zeroed() };
        info.version = &version;
        info.arity = arity;
        info.key_specs = specs.as_mut_ptr();
        // SAFETY: `command` came from `GetCommand`; `info` and what it
        // points to live through the call, which copies them.
        if unsafe { set_info(command, &info) } != raw::REDISMODULE_OK as i32 {
            return Err(format!(
                "Redis refused the key spec of {}",
                name.to_string_lossy()
            ));
        }
    }
    Ok(())
}
