//! The ACL category `cuckoo` (the name Redis 8's RedisBloom gives its
//! cuckoo-filter commands) holding every `CF.*` command, so an operator
//! grants or refuses them together (`ACL SETUSER u -@cuckoo`).
//!
//! Module ACL categories came with Redis 7.4 and Valkey 8
//! (`RedisModule_AddACLCategory`, `RedisModule_SetCommandACLCategories`).
//! On an older server the module loads without them and says so in the
//! log; the commands are still in `@module` and their flags' categories.

use crate::keyspecs::COMMANDS;
use redis_module::{raw, Context};

/// The category's name.
pub(crate) const CATEGORY: &core::ffi::CStr = c"cuckoo";

/// What [`register`] did.
pub(crate) enum Registered {
    /// The category exists and holds every command.
    Category,
    /// The server has no API for module ACL categories.
    Unsupported,
}

/// Adds the category and puts every command in it. Called from the
/// module's `init`, after the commands exist and before `OnLoad` returns
/// (the only time Redis takes a new category). `Err` names what the
/// server refused.
pub(crate) fn register(ctx: &Context) -> Result<Registered, String> {
    let (Some(add_category), Some(set_categories), Some(get_command)) = (
        crate::api::api!(RedisModule_AddACLCategory),
        crate::api::api!(RedisModule_SetCommandACLCategories),
        crate::api::api!(RedisModule_GetCommand),
    ) else {
        return Ok(Registered::Unsupported);
    };
    // SAFETY: `ctx` is the module's context during `OnLoad`; the name is
    // NUL-terminated.
    if unsafe { add_category(ctx.ctx, CATEGORY.as_ptr()) } != raw::REDISMODULE_OK as i32 {
        return Err("the server refused the ACL category cuckoo".into());
    }
    for &(name, _, _) in COMMANDS {
        // SAFETY: as above; `name` is a command this module registered.
        let command = unsafe { get_command(ctx.ctx, name.as_ptr()) };
        if command.is_null() {
            return Err(format!("{} is not registered", name.to_string_lossy()));
        }
        // SAFETY: `command` came from `GetCommand`; the categories string
        // is NUL-terminated and copied by the call.
        if unsafe { set_categories(command, CATEGORY.as_ptr()) } != raw::REDISMODULE_OK as i32 {
            return Err(format!(
                "the server refused the ACL category of {}",
                name.to_string_lossy()
            ));
        }
    }
    Ok(Registered::Category)
}
