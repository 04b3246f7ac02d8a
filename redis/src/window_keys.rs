//! The keys that hold window filters, for the sweeper (`window_sweeper.rs`)
//! to visit between commands: each key's database and name, noted where a
//! window filter is made, loaded, restored, copied, renamed or moved, and
//! wherever a command advances one.
//!
//! A name is only a hint: the sweeper opens the key and checks that it
//! holds a window filter, and forgets the names that no longer do (a key
//! deleted, expired, moved, flushed or set to something else). So nothing
//! here must follow every change of the keyspace exactly: a window filter
//! whose new name was not noted (a `SWAPDB`, say) is noted again by the
//! next command that advances it, and until then its writes do their own
//! catch-up, as they did before the sweeper. Only the main thread calls
//! these (commands, loads, keyspace events, timers); the lock only makes
//! the static sound.

use redis_module::Context;
use std::collections::HashSet;
use std::sync::Mutex;

/// A key: its database and name.
pub(crate) type Key = (i32, Vec<u8>);

/// The keys noted, in the order the sweeper visits them.
#[derive(Default)]
struct Keys {
    order: Vec<Key>,
    known: HashSet<Key>,
    /// Where the next visit starts.
    cursor: usize,
}

static KEYS: Mutex<Option<Keys>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut Keys) -> R) -> R {
    // A panic while the lock was held (none can: nothing here panics)
    // would leave the keys as they were: usable.
    let mut guard = KEYS.lock().unwrap_or_else(|e| e.into_inner());
    f(guard.get_or_insert_with(Keys::default))
}

/// Notes that `key` in database `db` holds a window filter.
pub(crate) fn note(db: i32, key: &[u8]) {
    with(|k| {
        if !k.known.contains(&(db, key.to_vec())) {
            k.known.insert((db, key.to_vec()));
            k.order.push((db, key.to_vec()));
        }
    });
}

/// Notes that `key`, in the database `ctx` has selected, holds a window
/// filter.
pub(crate) fn note_selected(ctx: &Context, key: &[u8]) {
    if let Some(get) = crate::api::api!(RedisModule_GetSelectedDb) {
        // SAFETY: `ctx` is a live context the server passed in.
        note(unsafe { get(ctx.ctx) }, key);
    }
}

/// How many keys are noted.
pub(crate) fn count() -> usize {
    with(|k| k.order.len())
}

/// The key the next visit starts at, if any are noted.
pub(crate) fn current() -> Option<Key> {
    with(|k| {
        if k.cursor >= k.order.len() {
            k.cursor = 0;
        }
        k.order.get(k.cursor).cloned()
    })
}

/// Moves the next visit on to the key after the current one.
pub(crate) fn step() {
    with(|k| k.cursor += 1);
}

/// Forgets the current key (it holds no window filter any more); the next
/// visit starts at the key after it.
pub(crate) fn forget_current() {
    with(|k| {
        if k.cursor < k.order.len() {
            let gone = k.order.swap_remove(k.cursor);
            k.known.remove(&gone);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one test of the shared static (tests run on threads of one
    /// process): notes are kept once each, visited in turn and forgotten.
    #[test]
    fn keys_are_noted_once_visited_in_turn_and_forgotten() {
        note(0, b"a");
        note(0, b"b");
        note(0, b"a");
        note(1, b"a");
        assert_eq!(count(), 3);
        let mut seen = Vec::new();
        for _ in 0..3 {
            seen.push(current().unwrap());
            step();
        }
        seen.sort();
        assert_eq!(
            seen,
            [(0, b"a".to_vec()), (0, b"b".to_vec()), (1, b"a".to_vec())]
        );
        assert_eq!(current(), Some((0, b"a".to_vec())), "round again");
        forget_current();
        assert_eq!(count(), 2);
        let left: HashSet<Key> = (0..2)
            .map(|_| {
                let k = current().unwrap();
                step();
                k
            })
            .collect();
        assert!(!left.contains(&(0, b"a".to_vec())));
        note(0, b"a");
        assert_eq!(count(), 3, "noted again after being forgotten");
    }
}
