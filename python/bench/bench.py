"""The package beside the Python filters users install instead.

    python/bench/run.sh            # makes target/bench-venv, runs this
    python bench.py [--n 1000000] [--rounds 3]

1M random int keys (below 2**63) at a false-positive rate of 1e-3,
abloom's published shape. Per filter: the per-key `add` loop on a fresh
filter, the per-key `in` loop over the added keys (ns per key), the
false-positive rate over as many absent keys, and bytes per key. Ours
also: numpy batches (`add_many`, `contains_many` on a uint64 array), and
batch lookups on 1 and 2 threads (8M lookups, the array split between the
threads). Contenders alternate round by round;
each figure is the best of its rounds, and ratios are within this run.
pyprobables' CuckooFilter is pure Python and takes str/bytes keys: it gets
the keys as str (converted before timing) and one round.
"""

import argparse
import json
import platform
import sys
import threading
import time

import numpy as np

import concurrent_cuckoo as cc

RATE = 1e-3


def peers(n):
    """name -> (make, add(f) -> per-key add, contains(f) -> per-key
    lookup, or None for the `in` operator (`k in f`, what users write: the
    type's `sq_contains` slot, no method call), bytes(f), key transform)."""
    import abloom
    import fastbloom_rs
    import probables
    import rbloom

    return {
        "concurrent_cuckoo": (
            lambda: cc.CuckooFilter(n, RATE),
            lambda f: f.add,
            None,
            lambda f: f.memory_usage,
            None,
        ),
        "rbloom": (
            lambda: rbloom.Bloom(n, RATE),
            lambda f: f.add,
            None,
            lambda f: f.size_in_bits // 8,
            None,
        ),
        "abloom": (
            lambda: abloom.BloomFilter(n, RATE),
            lambda f: f.add,
            None,
            lambda f: f.byte_count,
            None,
        ),
        # The Rust object under fastbloom_rs's Python wrapper, with its
        # int-specific calls: its fastest per-key path.
        "fastbloom-rs": (
            lambda: fastbloom_rs.BloomFilter(n, RATE)._py_bloom,
            lambda f: f.add_int,
            lambda f: f.contains_int,
            lambda f: len(f.get_bytes()),
            None,
        ),
        "pyprobables": (
            lambda: probables.CuckooFilter.init_error_rate(RATE, capacity=n),
            lambda f: f.add,
            lambda f: f.check,
            lambda f: len(bytes(f)),  # its serialised form: no size call
            str,
        ),
    }


def add_loop(add, keys):
    t = time.perf_counter()
    for k in keys:
        add(k)
    return time.perf_counter() - t


def in_loop(contains, keys):
    hits = 0
    t = time.perf_counter()
    for k in keys:
        if contains(k):
            hits += 1
    return time.perf_counter() - t, hits


def in_operator_loop(f, keys):
    hits = 0
    t = time.perf_counter()
    for k in keys:
        if k in f:
            hits += 1
    return time.perf_counter() - t, hits


def lookup_loop(f, contains, keys):
    """The per-key lookup loop: `contains(f)`'s call, or `k in f`."""
    return in_loop(contains(f), keys) if contains else in_operator_loop(f, keys)


def batch_lookups(f, arr, threads):
    parts = np.array_split(arr, threads)
    barrier = threading.Barrier(threads + 1)

    def work(p):
        barrier.wait()
        f.contains_many(p)

    ts = [threading.Thread(target=work, args=(p,)) for p in parts]
    for t in ts:
        t.start()
    barrier.wait()
    t0 = time.perf_counter()
    for t in ts:
        t.join()
    return time.perf_counter() - t0


def str_batches(present, rounds):
    """Batches of str keys (issue 51): `add_many(list[str])` against
    abloom's and rbloom's `update`, and `contains_many(list[str])` against
    the per-key `in` loop, ns per key, best of `rounds`, alternated."""
    import abloom
    import rbloom

    n = len(present)
    words = [f"user-{k}" for k in present]
    best = {}

    def record(key, seconds):
        best[key] = min(best.get(key, float("inf")), seconds / n)

    for _ in range(rounds):
        f = cc.CuckooFilter(n, RATE)
        t = time.perf_counter()
        f.add_many(words)
        record("ours add_many(list[str])", time.perf_counter() - t)
        t = time.perf_counter()
        got = f.contains_many(words)
        record("ours contains_many(list[str])", time.perf_counter() - t)
        assert got.all()
        t, hits = in_operator_loop(f, words)
        assert hits == n
        record("ours `in` loop (str)", t)
        a = abloom.BloomFilter(n, RATE)
        t = time.perf_counter()
        a.update(words)
        record("abloom update(list[str])", time.perf_counter() - t)
        t, hits = in_operator_loop(a, words)
        record("abloom `in` loop (str)", t)
        r = rbloom.Bloom(n, RATE)
        t = time.perf_counter()
        r.update(words)
        record("rbloom update(list[str])", time.perf_counter() - t)
        # Other batch kinds, ours: int32 arrays and lists of int.
        g = cc.CuckooFilter(n, RATE)
        ints32 = (np.asarray(present) % (2**31)).astype(np.int32)
        t = time.perf_counter()
        g.add_many(ints32)
        record("ours add_many(int32 array)", time.perf_counter() - t)
        t = time.perf_counter()
        g.contains_many(ints32)
        record("ours contains_many(int32 array)", time.perf_counter() - t)
        t = time.perf_counter()
        g.contains_many(present)
        record("ours contains_many(list[int])", time.perf_counter() - t)
        print("str batches: round done", file=sys.stderr)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    n = args.n
    rng = np.random.default_rng(42)
    arr = rng.integers(0, 2**63, size=2 * n, dtype=np.uint64)
    arr = np.unique(arr)[: 2 * n]
    rng.shuffle(arr)
    present_arr, absent_arr = arr[:n], arr[n : 2 * n]
    present, absent = present_arr.tolist(), absent_arr.tolist()
    contenders = peers(n)
    best = {name: {} for name in contenders}
    as_str = {}

    def record(name, key, value):
        old = best[name].get(key)
        best[name][key] = value if old is None else min(old, value)

    for r in range(args.rounds):
        for name, (make, add, contains, size, conv) in contenders.items():
            if name == "pyprobables" and r > 0:
                continue
            if conv is not None:
                if name not in as_str:
                    as_str[name] = ([conv(k) for k in present], [conv(k) for k in absent])
                keys, other = as_str[name]
            else:
                keys, other = present, absent
            f = make()
            record(name, "add", add_loop(add(f), keys) / n)
            t, hits = lookup_loop(f, contains, keys)
            assert hits == n, (name, hits)
            record(name, "in", t / n)
            _, fp = lookup_loop(f, contains, other)
            best[name]["fpr"] = fp / n
            best[name]["bytes_per_key"] = (size(f) / n) if size(f) is not None else None
            if name == "concurrent_cuckoo":
                g = cc.CuckooFilter(n, RATE)
                t = time.perf_counter()
                g.add_many(present_arr)
                record(name, "add_many", (time.perf_counter() - t) / n)
                t = time.perf_counter()
                got = g.contains_many(present_arr)
                record(name, "contains_many", (time.perf_counter() - t) / n)
                assert got.all()
                # 8M lookups per figure (the added keys 8 times), 1 and 2
                # threads alternated: long enough to see past other load.
                lookups = np.tile(present_arr, 8)
                for _ in range(3):
                    for threads in (1, 2):
                        t = batch_lookups(g, lookups, threads) / len(lookups)
                        record(name, f"batch_{threads}t", t)
            print(f"round {r + 1}: {name} done", file=sys.stderr)

    others = [v for k, v in best.items() if k != "concurrent_cuckoo"]
    fastest_add = min(v["add"] for v in others)
    fastest_in = min(v["in"] for v in others)
    ours = best["concurrent_cuckoo"]
    ns = lambda s: f"{s * 1e9:.1f}"
    print(f"python {platform.python_version()}, {platform.machine()}, n={n}, rate={RATE}, rounds={args.rounds}")
    print()
    print("| filter | add loop (ns/key) | `in` loop (ns/key) | false positives | bytes/key |")
    print("|---|---:|---:|---:|---:|")
    for name, v in best.items():
        bpk = "n/a" if v["bytes_per_key"] is None else f"{v['bytes_per_key']:.2f}"
        print(f"| {name} | {ns(v['add'])} | {ns(v['in'])} | {v['fpr']:.5f} | {bpk} |")
    print()
    print(f"| ours against the fastest other | ratio (>1: ours faster) |")
    print("|---|---:|")
    print(f"| add loop | {fastest_add / ours['add']:.2f}x |")
    print(f"| `in` loop | {fastest_in / ours['in']:.2f}x |")
    print(f"| add_many (numpy, {ns(ours['add_many'])} ns/key) against the fastest add loop | {fastest_add / ours['add_many']:.2f}x |")
    print(f"| contains_many (numpy, {ns(ours['contains_many'])} ns/key) against the fastest `in` loop | {fastest_in / ours['contains_many']:.2f}x |")
    print()
    print("| batch lookups (contains_many, 8M lookups split over threads) | ns/key | speed-up |")
    print("|---|---:|---:|")
    for t in (1, 2):
        print(f"| {t} thread(s) | {ns(ours[f'batch_{t}t'])} | {ours['batch_1t'] / ours[f'batch_{t}t']:.2f}x |")
    strs = str_batches(present, args.rounds)
    print()
    print("| batch (1M keys, best of rounds) | ns/key |")
    print("|---|---:|")
    for k, v in strs.items():
        print(f"| {k} | {ns(v)} |")
    print()
    print(
        f"| add_many(list[str]) against abloom's update | "
        f"{strs['ours add_many(list[str])'] / strs['abloom update(list[str])']:.2f}x the time |"
    )
    print(
        f"| contains_many(list[str]) against our per-key `in` loop | "
        f"{strs['ours contains_many(list[str])'] / strs['ours `in` loop (str)']:.2f}x the time |"
    )
    print()
    print(json.dumps({"per_key": best, "batches": strs}))


if __name__ == "__main__":
    main()
