//! `TimedCuckooFilter`: keys found for their whole time to live and gone a
//! generation after it, by a clock; the schedule kept across a save and a
//! restart; a clock set back; many threads beside a moving clock; every
//! configuration and decoding error.

use concurrent_cuckoo::{
    BuildError, Clock, DecodeError, ManualClock, TimedCuckooFilter, WindowedCuckooFilter,
};
use std::time::Duration;

const START: u64 = 1_700_000_000_000;

fn timed(clock: &ManualClock, ttl_ms: u64, generations: u64) -> TimedCuckooFilter<ManualClock> {
    TimedCuckooFilter::builder()
        .capacity(20_000)
        .time_to_live(Duration::from_millis(ttl_ms))
        .generations(generations)
        .clock(clock.clone())
        .seed(7)
        .build()
        .unwrap()
}

/// For several schedules, keys inserted at scattered times: each is found
/// at every probe before its time to live runs out, and (false positives
/// aside, bounded below) gone from a generation length after it.
#[test]
fn keys_live_their_time_to_live_and_go_a_generation_later() {
    for (ttl_ms, generations) in [(1000u64, 1u64), (1000, 4), (60_000, 6), (999, 7), (5, 5)] {
        let clock = ManualClock::new(START);
        let f = timed(&clock, ttl_ms, generations);
        let ttl = u64::try_from(f.time_to_live().as_millis()).unwrap();
        let step = u64::try_from(f.generation_length().as_millis()).unwrap();
        assert!(
            ttl >= ttl_ms && ttl < ttl_ms + generations,
            "{ttl_ms} in {generations}"
        );
        let mut inserted = Vec::new(); // (key, time)
        let mut late_hits = 0usize;
        let mut late_probes = 0usize;
        for round in 0..4000u64 {
            let now = clock.now_ms();
            f.insert(&round).unwrap();
            inserted.push((round, now));
            // Probe every key inserted in the last two windows.
            if round % 16 == 0 {
                for &(key, at) in inserted.iter().rev().take(400) {
                    let found = f.contains(&key);
                    let now = clock.now_ms();
                    if now < at + ttl {
                        assert!(found, "key {key} at {at} missed at {now} (ttl {ttl})");
                    } else if now >= at + ttl + step {
                        late_probes += 1;
                        late_hits += usize::from(found);
                    }
                }
            }
            clock.advance_ms(1 + (round * 7919) % (step.max(2) / 2 + 1));
        }
        assert!(late_probes > 1000, "{late_probes} probes after expiry");
        let bound = f.false_positive_bound() * late_probes as f64;
        assert!(
            (late_hits as f64) <= 4.0 * bound + 4.0,
            "{late_hits} of {late_probes} expired keys found (bound {bound})"
        );
    }
}

#[test]
fn the_schedule_survives_a_save_and_a_restart() {
    let clock = ManualClock::new(START);
    let f = timed(&clock, 60_000, 6);
    f.insert("early").unwrap();
    clock.advance_ms(30_000);
    f.insert("late").unwrap();
    let bytes = f.to_bytes();
    drop(f);
    // The process is down for 40 s: "early" (70 s old) is gone on load.
    clock.advance_ms(40_000);
    let back = TimedCuckooFilter::from_bytes_with_clock(&bytes, clock.clone()).unwrap();
    assert_eq!(back.epoch_ms(), START);
    assert_eq!(back.time_to_live(), Duration::from_secs(60));
    assert!(!back.contains("early"));
    assert!(back.contains("late"));
    clock.advance_ms(30_000); // "late" is 70 s old
    assert!(!back.contains("late"));
    assert!(back.is_empty());
    // Saved by path, loaded with the system clock: its epoch was 2023, so
    // every key of it is long expired.
    let dir = std::env::temp_dir().join(format!("ccf-timed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("f.ccf");
    let g = timed(&ManualClock::new(START), 1000, 2);
    g.insert("k").unwrap();
    g.write_to_path(&path).unwrap();
    let loaded = TimedCuckooFilter::from_bytes(&std::fs::read(&path).unwrap()).unwrap();
    assert!(!loaded.contains("k"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_clock_set_back_waits_and_loses_nothing() {
    let clock = ManualClock::new(START + 10_000);
    let f = timed(&clock, 1000, 4);
    f.insert("k").unwrap();
    let generation = f.windowed().generation();
    clock.set_ms(START); // back before the epoch
    assert!(f.contains("k"));
    assert_eq!(f.windowed().generation(), generation);
    f.insert("j").unwrap();
    clock.set_ms(START + 10_500);
    assert!(f.contains("k") && f.contains("j"));
    clock.set_ms(START + 12_000);
    assert!(!f.contains("k"));
}

/// Three threads insert and look up their own keys while a fourth moves the
/// clock: a key is found by its thread whenever the clock read after the
/// lookup is within its time to live from the clock read before its
/// insert.
#[test]
fn threads_beside_a_moving_clock_find_every_live_key() {
    let clock = ManualClock::new(START);
    let f = timed(&clock, 200, 4);
    let ttl = u64::try_from(f.time_to_live().as_millis()).unwrap();
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            // Bounded, so a failing worker (which never sets `done`)
            // fails the test instead of hanging it.
            for _ in 0..50_000 {
                if done.load(std::sync::atomic::Ordering::Relaxed) {
                    break;
                }
                clock.advance_ms(1);
                std::thread::sleep(Duration::from_micros(200));
            }
        });
        let workers: Vec<_> = (0..3u64)
            .map(|t| {
                let (f, clock) = (&f, &clock);
                s.spawn(move || {
                    let mut mine: Vec<(u64, u64)> = Vec::new();
                    for i in 0..5_000u64 {
                        let key = t << 32 | i;
                        let before = clock.now_ms();
                        f.insert(&key).unwrap();
                        mine.push((key, before));
                        for &(old, at) in mine.iter().rev().step_by(97).take(8) {
                            let found = f.contains(&old);
                            if clock.now_ms() < at + ttl {
                                assert!(found, "thread {t}: key {old} inserted at {at}");
                            }
                        }
                        if mine.len() > 4096 {
                            mine.drain(..2048);
                        }
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
    });
}

#[test]
fn configuration_errors_are_typed() {
    let b = || TimedCuckooFilter::builder().capacity(100);
    let err = b().build().unwrap_err();
    assert_eq!(
        err,
        BuildError::InvalidTimeToLive {
            time_to_live_ms: 0,
            generations: 4
        }
    );
    assert!(err.to_string().contains("no time to live"), "{err}");
    let err = b()
        .time_to_live(Duration::from_millis(3))
        .generations(4)
        .build()
        .unwrap_err();
    assert_eq!(
        err,
        BuildError::InvalidTimeToLive {
            time_to_live_ms: 3,
            generations: 4
        }
    );
    assert!(b()
        .time_to_live(Duration::from_secs(1))
        .generations(0)
        .build()
        .is_err());
    // More steps than the rate leaves tag bits for: the error speaks of
    // the steps asked (the window is one more).
    let err = b()
        .time_to_live(Duration::from_secs(60))
        .generations(400)
        .build()
        .unwrap_err();
    assert_eq!(
        err,
        BuildError::InvalidGenerations {
            generations: 400,
            max: 252
        }
    );
    // A rate that leaves no tag bits says which rates work.
    let err = WindowedCuckooFilter::builder()
        .capacity(100)
        .false_positive_rate(1e-9)
        .build()
        .unwrap_err();
    assert!(
        err.to_string().contains("at least 4/2^29, about 7.451e-9"),
        "{err}"
    );
}

#[test]
fn damaged_or_foreign_bytes_are_refused_without_panicking() {
    let clock = ManualClock::new(START);
    let f = timed(&clock, 1000, 4);
    f.insert("k").unwrap();
    let bytes = f.to_bytes();
    let decode = |b: &[u8]| TimedCuckooFilter::from_bytes_with_clock(b, clock.clone());
    assert!(decode(&bytes).is_ok());
    for cut in 0..bytes.len() {
        assert!(decode(&bytes[..cut]).is_err(), "cut at {cut}");
    }
    let mut wrong = bytes.clone();
    wrong[0] ^= 1;
    assert!(matches!(decode(&wrong), Err(DecodeError::BadMagic)));
    let mut wrong = bytes.clone();
    wrong[8] = 2;
    assert!(matches!(
        decode(&wrong),
        Err(DecodeError::UnsupportedVersion(2))
    ));
    let mut wrong = bytes.clone();
    wrong[24..32].fill(0); // a generation length of 0
    assert!(matches!(decode(&wrong), Err(DecodeError::InvalidHeader(_))));
    let mut wrong = bytes.clone();
    wrong[12] = 5; // 5 steps over a window of 5
    assert!(matches!(decode(&wrong), Err(DecodeError::InvalidHeader(_))));
    let mut wrong = bytes.clone();
    wrong[12..16].fill(0);
    assert!(matches!(decode(&wrong), Err(DecodeError::InvalidHeader(_))));
    // Every flipped bit of the header is refused or decodes a filter that
    // answers; none panics. (The windowed encoding has its own checksum.)
    for bit in 0..32 * 8 {
        let mut flipped = bytes.clone();
        flipped[bit / 8] ^= 1 << (bit % 8);
        if let Ok(g) = decode(&flipped) {
            let _ = g.contains("k");
        }
    }
    // A plain windowed filter's bytes are not a timed filter's.
    let plain = WindowedCuckooFilter::with_capacity(100).to_bytes();
    assert!(decode(&plain).is_err());
}
