//! The window sweeper: a timer that keeps every window filter's sweep and
//! generation up with its clock between commands, in steps of bounded
//! time, so that no command pays for the time a filter sat idle.
//!
//! # Why
//! A window filter moves on a generation at a time, and each step must
//! first clear the expired lanes of one slice of its table (the library's
//! sweep: `buckets / (M - 1 - G)` buckets, half the table with 3 tag bits
//! and `G = 5`). Left to the first write of each generation, that was a
//! pause of the whole server in proportion to the table: 90-170 ms for a
//! 212 MiB filter one to four generations behind (`docs/redis.md`, "Items
//! that expire"), however short the command.
//!
//! # A tick
//! Every [`TICK`] (every [`IDLE_TICK`] while no key is noted), for at
//! most [`BUDGET`] of the main thread (nothing while
//! `cuckoo.window-sweeper` is `no`: `configs.rs`), the sweeper visits the
//! keys `window_keys.rs` holds that are due, in turn: a key is due when
//! noted (made, loaded, advanced by a command or a `CF.ADVANCE`...),
//! when its last visit ran out of time, and when its filter's next
//! generation begins by the clock; in between it costs nothing, however
//! many keys there are. A visit:
//! * On every server it sweeps the current generation's slice ahead
//!   (`sweep_ahead`, [`STEP`] buckets between reads of the clock). A sweep
//!   clears only lanes that have expired at the filter's own generation,
//!   which its encoding leaves out anyway: no byte of the key changes, so
//!   copies stay byte-identical whichever server swept when.
//! * On the primary, once the slice is done and the clock has reached a
//!   later generation, it advances the filter one generation (which sweeps
//!   nothing: its slice is done), or at once to the clock's when every
//!   item has expired by then (`Window::catch_up`: a fresh empty table),
//!   and replicates the step as `CF.ADVANCE`, exactly as a write's advance
//!   does (`window.rs`): replicas and AOF replays apply those and never
//!   read their own clock.
//!
//! At its shortest generation (`window_value::least_generation_ms`) a
//! filter's slice takes at most a quarter of a generation at the assumed
//! 100 ns a bucket, within the sweeper's share of the main thread
//! ([`BUDGET`] of each [`TICK`]), so in steady use every write finds its
//! filter's generation current and its slice swept: it sweeps nothing.
//! Where the sweeper could not keep up (a server busy with longer
//! commands, a filter loaded or renamed and not yet visited, a replica
//! promoted), a write still catches up for itself, bounded as before by
//! `CF.RESERVE`'s rule.

use crate::datatype::CF_TYPE;
use crate::value::{self, Body};
use crate::window_keys;
use crate::window_value as wv;
use redis_module::key::KeyFlags;
use redis_module::{Context, ContextFlags, NotifyEvent};
use std::time::{Duration, Instant};

/// Time between ticks while window filters are noted.
const TICK: Duration = Duration::from_millis(10);
/// Time between ticks while none is.
const IDLE_TICK: Duration = Duration::from_millis(100);
/// The main thread's time a tick may take (30% of it at most): what one
/// command may wait behind the sweeper, beside one [`STEP`].
const BUDGET: Duration = Duration::from_millis(3);
/// Buckets swept between reads of the clock: 10-400 µs (4-100 ns a
/// bucket, pages resident or not).
const STEP: usize = 4096;

/// Starts the sweeper's timer (at the module's load).
pub(crate) fn start(ctx: &Context) {
    ctx.create_timer(IDLE_TICK, tick, ());
}

fn tick(ctx: &Context, (): ()) {
    let noted = sweep(ctx, Instant::now() + BUDGET);
    ctx.create_timer(if noted { TICK } else { IDLE_TICK }, tick, ());
}

/// A keyspace event's handler: notes a key that a `RENAME`, `MOVE`,
/// `COPY` or `RESTORE` left holding a window filter (its database is the
/// one the event's context selected).
pub(crate) fn on_keyspace_event(ctx: &Context, _: NotifyEvent, event: &str, key: &[u8]) {
    if !matches!(event, "rename_to" | "move_to" | "copy_to" | "restore") {
        return;
    }
    let name = ctx.create_string(key);
    let opened = ctx.open_key_with_flags(&name, KeyFlags::NOTOUCH);
    if let Ok(Some(value)) = value::read(&opened, &CF_TYPE) {
        if matches!(value.body, Body::Window(_)) {
            window_keys::note_selected(ctx, key);
        }
    }
}

/// Visits the keys due until `deadline` or until none is; whether any
/// key is noted.
fn sweep(ctx: &Context, deadline: Instant) -> bool {
    let noted = window_keys::count();
    if noted == 0 || !crate::configs::window_sweeper() {
        return noted > 0;
    }
    let flags = ctx.get_flags();
    let primary = flags.contains(ContextFlags::MASTER)
        && !flags.intersects(ContextFlags::LOADING | ContextFlags::ASYNC_LOADING);
    let now = wv::now_ms();
    while let Some(key) = window_keys::take_due(now) {
        match visit(ctx, key.0, &key.1, primary, deadline) {
            // Dropped: no window filter there any more.
            Visit::Gone => {}
            Visit::Done { next } => window_keys::reschedule(key, next),
            // After the keys due now: they take turns.
            Visit::OutOfTime => window_keys::reschedule(key, now),
        }
        if Instant::now() >= deadline {
            break;
        }
    }
    true
}

/// How a visit of one key ended.
enum Visit {
    /// The key holds no window filter (any more).
    Gone,
    /// Its slice is swept and, on the primary, its generation current:
    /// nothing to do before `next` (ms), when its next generation begins.
    Done { next: u64 },
    /// The tick's time ran out first.
    OutOfTime,
}

/// Sweeps and (on the primary) advances the window filter of key `name`
/// in database `db` as far as `deadline` allows.
fn visit(ctx: &Context, db: i32, name: &[u8], primary: bool, deadline: Instant) -> Visit {
    crate::info::sweeper_visited();
    let Some(select) = crate::api::api!(RedisModule_SelectDb) else {
        return Visit::Gone;
    };
    // SAFETY: `ctx` is the timer's live context; a database that does not
    // exist is refused, not a fault.
    if unsafe { select(ctx.ctx, db) } != redis_module::raw::Status::Ok as i32 {
        return Visit::Gone;
    }
    let key_name = ctx.create_string(name);
    loop {
        // Swept through the key opened for reading: closing a key opened
        // for writing tells `WATCH` it changed, and a sweep changes no
        // byte of it.
        let target = {
            let key = ctx.open_key_with_flags(&key_name, KeyFlags::NOTOUCH);
            let Ok(Some(value)) = value::read(&key, &CF_TYPE) else {
                return Visit::Gone;
            };
            let Body::Window(w) = &value.body else {
                return Visit::Gone;
            };
            loop {
                let swept = w.filter.sweep_ahead(STEP);
                if swept == 0 {
                    break;
                }
                crate::info::sweeper_swept(swept);
                if Instant::now() >= deadline {
                    return Visit::OutOfTime;
                }
            }
            let target = w.clock.generation_at(wv::now_ms());
            let current = w.filter.generation();
            if !primary || target <= current {
                // Due again when the clock reaches the next generation
                // (on a replica too: it may be the primary by then, and
                // its primary's CF.ADVANCE notes it due at once).
                let next = current.max(target).saturating_add(1);
                let at = w
                    .clock
                    .origin
                    .saturating_add(next.saturating_mul(w.clock.length));
                return Visit::Done { next: at };
            }
            // One generation (its slice is swept: no sweep), or the
            // clock's at once where every item has expired by then.
            if target >= current.saturating_add(w.filter.generations()) {
                target
            } else {
                current + 1
            }
        };
        let key = ctx.open_key_writable_with_flags(&key_name, KeyFlags::NOTOUCH);
        let Ok(Some(value)) = value::write(&key, &CF_TYPE) else {
            return Visit::Gone;
        };
        crate::window::advance_replicated(ctx, name, value, target);
        crate::info::sweeper_advanced();
        if Instant::now() >= deadline {
            return Visit::OutOfTime;
        }
    }
}
