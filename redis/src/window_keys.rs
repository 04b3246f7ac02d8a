//! The keys that hold window filters, for the sweeper (`window_sweeper.rs`)
//! to visit between commands, each when it is next due: each key's
//! database and name, noted where a window filter is made, loaded,
//! restored, copied, renamed or moved, and wherever a command advances
//! one.
//!
//! A key is due at once when noted, and then when the sweeper says (the
//! start of its filter's next generation): a key with nothing to do costs
//! nothing until then, however many keys there are (a heap ordered by
//! the time each is due, and for keys due together by when they were
//! scheduled, so that they take turns).
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

use core::cmp::Reverse;
use redis_module::Context;
use std::collections::{BinaryHeap, HashMap};
use std::sync::Mutex;

/// A key: its database and name.
pub(crate) type Key = (i32, Vec<u8>);

/// The keys noted and when each is due.
#[derive(Default)]
struct Keys {
    /// Each key's due time (ms) and the turn it was scheduled in: the
    /// heap entry that counts (others are stale, dropped when popped).
    due: HashMap<Key, (u64, u64)>,
    heap: BinaryHeap<Reverse<(u64, u64, Key)>>,
    /// Turns handed out so far.
    turns: u64,
}

impl Keys {
    fn schedule(&mut self, key: Key, at: u64) {
        self.turns += 1;
        let turn = self.turns;
        self.due.insert(key.clone(), (at, turn));
        self.heap.push(Reverse((at, turn, key)));
    }
}

static KEYS: Mutex<Option<Keys>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut Keys) -> R) -> R {
    // A panic while the lock was held (none can: nothing here panics)
    // would leave the keys as they were: usable.
    let mut guard = KEYS.lock().unwrap_or_else(|e| e.into_inner());
    f(guard.get_or_insert_with(Keys::default))
}

/// Notes that `key` in database `db` holds a window filter: due at once
/// (unless already due at once).
pub(crate) fn note(db: i32, key: &[u8]) {
    with(|k| {
        let key = (db, key.to_vec());
        if k.due.get(&key).is_none_or(|&(at, _)| at > 0) {
            k.schedule(key, 0);
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

/// How many keys are noted (a key being visited aside).
pub(crate) fn count() -> usize {
    with(|k| k.due.len())
}

/// Takes the key due first if it is due by `now` (ms), out of the keys
/// noted: the caller [`reschedule`]s it, or drops it (it holds no window
/// filter any more).
pub(crate) fn take_due(now: u64) -> Option<Key> {
    with(|k| {
        while let Some(Reverse((at, turn, _))) = k.heap.peek() {
            if *at > now {
                return None;
            }
            let (at, turn) = (*at, *turn);
            let Reverse((_, _, key)) = k.heap.pop()?;
            if k.due.get(&key) == Some(&(at, turn)) {
                // Until rescheduled, not due at all (and a note makes it
                // due at once).
                k.due.remove(&key);
                return Some(key);
            }
            // Stale: the key was scheduled again, or forgotten.
        }
        None
    })
}

/// Makes `key` due at `at` (ms), after the keys already due then.
pub(crate) fn reschedule(key: Key, at: u64) {
    with(|k| k.schedule(key, at));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one test of the shared static (tests run on threads of one
    /// process): keys are noted once each, due at once, taken in turn,
    /// rescheduled for later, noted again to be due at once, dropped.
    #[test]
    fn keys_are_taken_when_due_in_turn_and_forgotten() {
        let key = |db: i32, name: &[u8]| (db, name.to_vec());
        note(0, b"a");
        note(0, b"b");
        note(0, b"a");
        note(1, b"a");
        assert_eq!(count(), 3);
        let mut taken = [take_due(0), take_due(0), take_due(0)].map(Option::unwrap);
        assert_eq!(take_due(u64::MAX), None, "each once");
        taken.sort();
        assert_eq!(taken, [key(0, b"a"), key(0, b"b"), key(1, b"a")]);
        reschedule(key(0, b"a"), 100);
        reschedule(key(0, b"b"), 50);
        reschedule(key(1, b"a"), 50);
        assert_eq!(take_due(49), None);
        assert_eq!(
            take_due(60),
            Some(key(0, b"b")),
            "due first, scheduled first"
        );
        reschedule(key(0, b"b"), 60);
        assert_eq!(
            take_due(60),
            Some(key(1, b"a")),
            "the other key due then goes first"
        );
        assert_eq!(take_due(60), Some(key(0, b"b")));
        assert_eq!(take_due(99), None);
        note(0, b"a"); // due at once again
        assert_eq!(take_due(0), Some(key(0, b"a")));
        assert_eq!(take_due(u64::MAX), None, "its old entry is stale");
        assert_eq!(count(), 0, "all taken, none rescheduled");
        note(0, b"a");
        assert_eq!(count(), 1, "noted again after being dropped");
    }
}
