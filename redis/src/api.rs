//! The module API's entry points, read where the module calls one the
//! `redis-module` crate does not wrap. Its own module, used by every other
//! one, depending on none.

/// The entry point `$name` of Redis's module API.
macro_rules! api {
    ($name:ident) => {{
        // SAFETY: the API's entry points are `static mut`s that Redis
        // fills in `RedisModule_Init`, before any code of the module runs,
        // and nothing writes them afterwards: reading a copy races nothing.
        unsafe { redis_module::raw::$name }
    }};
}
pub(crate) use api;
