"""Threads sharing one filter, and the GIL released during batches."""

import threading
import time

import numpy as np
import pytest

from concurrent_cuckoo import CuckooFilter, ScalableCuckooFilter


def run_threads(targets):
    errors = []

    def wrap(fn):
        def go():
            try:
                fn()
            except BaseException as e:  # reported by the main thread
                errors.append(e)

        return go

    threads = [threading.Thread(target=wrap(t)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_four_threads_add_and_query_one_filter():
    for f in (CuckooFilter(400_000, seed=1), ScalableCuckooFilter(20_000, seed=1)):
        per_thread = 50_000
        mult = np.uint64(0x9E3779B97F4A7C15)
        own = [np.arange(t * per_thread, (t + 1) * per_thread, dtype=np.uint64) * mult for t in range(4)]
        words = [[f"t{t}-{i}" for i in range(5_000)] for t in range(4)]
        barrier = threading.Barrier(4)
        seen = [None] * 4
        new = [0] * 4

        def worker(t):
            def go():
                barrier.wait()
                for piece in np.array_split(own[t], 10):
                    new[t] += int(f.add_many(piece).sum())
                    # Every key this thread added is found at once, while
                    # the others add theirs.
                    assert f.contains_many(piece).all()
                new[t] += int(f.add_many(words[t]).sum())
                assert f.contains_many(words[t]).all()
                seen[t] = f.contains_many(np.concatenate(own)).sum()

            return go

        run_threads([worker(t) for t in range(4)])
        # Set semantics: a key is stored unless it was (or was a false
        # positive of) a key present; each thread counts what it stored.
        assert len(f) == sum(new) > 4 * (per_thread + 5_000) * 0.99
        everything = np.concatenate(own)
        assert f.contains_many(everything).all()
        assert all(f.contains_many(w).all() for w in words)
        # Each thread saw at least all of its own keys.
        assert all(s >= per_thread for s in seen)
        # Batches agree with single calls on absent keys after the threads.
        absent = everything + np.uint64(1)
        assert f.contains_many(absent[:20_000]).tolist() == [int(k) in f for k in absent[:20_000]]


def spin_rate(seconds=0.1):
    """Increments a Python counter for `seconds` alone: per second."""
    n, end = 0, time.perf_counter() + seconds
    while time.perf_counter() < end:
        n += 1
    return n / seconds


def test_the_gil_is_released_during_a_batch():
    f = CuckooFilter(1_000_000, seed=2)
    f.add_many(np.arange(1_000_000, dtype=np.uint64))
    keys = np.arange(12_000_000, dtype=np.uint64)
    rate = spin_rate()
    counter = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            counter[0] += 1

    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        time.sleep(0.05)
        before = counter[0]
        t0 = time.perf_counter()
        got = f.contains_many(keys)
        elapsed = time.perf_counter() - t0
        during = counter[0] - before
    finally:
        stop.set()
        spinner.join()
    assert got[:1_000_000].all()
    # Held, the GIL would let the spinner run at most one switch interval
    # (5 ms) of the batch; released, it runs through it. Ask for the
    # increments of 10 switch intervals at a tenth of the rate measured
    # alone (the two threads share the cores).
    assert elapsed > 0.1, f"the batch took {elapsed:.3f}s: too short to tell"
    assert during > rate * 0.05 * 0.1, (during, rate, elapsed)
    # And most of the batch's time at that: the counter ran for it.
    assert during > rate * elapsed * 0.1, (during, rate, elapsed)


@pytest.mark.parametrize("make", [lambda: CuckooFilter(200_000, seed=5), lambda: ScalableCuckooFilter(20_000, seed=5)])
def test_threads_adding_the_same_keys_store_each_once(make):
    # Set semantics across threads: four threads add the same keys (as
    # arrays, lists of str, and one at a time); each key is stored once,
    # exactly one thread is told it was new, and all are found.
    f = make()
    ints = np.arange(40_000, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    words = [f"w{i}" for i in range(10_000)]
    singles = list(range(10**9, 10**9 + 2_000))
    new = [0] * 4
    barrier = threading.Barrier(4)

    def worker(t):
        def go():
            barrier.wait()
            for piece in np.array_split(ints, 8):
                new[t] += int(f.add_many(piece).sum())
            new[t] += int(f.add_many(words).sum())
            new[t] += sum(f.add(k) for k in singles)

        return go

    run_threads([worker(t) for t in range(4)])
    assert sum(new) == len(f) <= 52_000
    assert len(f) > 52_000 * 0.99
    assert f.contains_many(ints).all() and f.contains_many(words).all()
    assert all(f.count(k) == 1 for k in words[:1000])
