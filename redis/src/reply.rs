//! Replies of named fields (`CF.INFO`, `CF.STATS`): a map in RESP3, a
//! flat array in RESP2. Used by `commands.rs` and `window.rs`.

use redis_module::{raw, Context, RedisResult, RedisValue};

/// A reply of `pairs` as a map (RESP3) or a flat array (RESP2), with
/// simple-string field names in this order (RedisBloom's `CF.INFO` shape,
/// which clients parse by name).
pub(crate) fn reply_fields(
    ctx: &Context,
    pairs: &[(&'static core::ffi::CStr, Field)],
) -> RedisResult {
    raw::reply_with_map(ctx.ctx, pairs.len() as _);
    for (name, value) in pairs {
        raw::reply_with_simple_string(ctx.ctx, name.as_ptr());
        match value {
            Field::Int(n) => {
                raw::reply_with_long_long(ctx.ctx, *n);
            }
            Field::Double(x) => {
                raw::reply_with_double(ctx.ctx, *x);
            }
            Field::Text(t) => {
                raw::reply_with_simple_string(ctx.ctx, t.as_ptr());
            }
            Field::Ints(values) => {
                raw::reply_with_array(ctx.ctx, values.len() as _);
                for n in values {
                    raw::reply_with_long_long(ctx.ctx, *n);
                }
            }
        }
    }
    Ok(RedisValue::NoReply)
}

pub(crate) enum Field {
    Int(i64),
    Double(f64),
    Text(&'static core::ffi::CStr),
    Ints(Vec<i64>),
}

pub(crate) fn to_i64(n: impl TryInto<i64>) -> i64 {
    n.try_into().unwrap_or(i64::MAX)
}
