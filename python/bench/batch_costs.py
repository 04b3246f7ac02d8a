"""What a large batch of str keys costs beside its time (issue 51): how
long another Python thread waits for the GIL during it, and how much the
process's peak memory grows. Run by python/bench/run.sh after bench.py;
each measure in a fresh process, so the peak is this batch's.

    python batch_costs.py [--n 5000000]
"""

import argparse
import json
import resource
import subprocess
import sys
import threading
import time

import numpy as np

import concurrent_cuckoo as cc


def peak_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def one(call, n):
    keys = [f"user-{k}" for k in range(n)] if call != "add_many_u64" else np.arange(n, dtype=np.uint64)
    f = cc.CuckooFilter(n)
    f.add_many(keys[:1000])  # numpy and the module loaded, the table touched
    before = peak_mib()
    gaps = []
    done = threading.Event()

    def watch():
        last = time.perf_counter()
        while not done.is_set():
            now = time.perf_counter()
            gaps.append(now - last)
            last = now
            time.sleep(0.0001)

    w = threading.Thread(target=watch)
    w.start()
    time.sleep(0.05)
    t = time.perf_counter()
    if call == "contains_many":
        f.contains_many(keys)
    else:
        f.add_many(keys)
    took = time.perf_counter() - t
    done.set()
    w.join()
    return {
        "call": call,
        "n": n,
        "seconds": round(took, 3),
        "longest_wait_ms": round(max(gaps) * 1e3, 1),
        "peak_growth_mib": round(peak_mib() - before, 1),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=5_000_000)
    ap.add_argument("--one")
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.n)))
        return
    print("| batch | keys | seconds | another thread's longest GIL wait (ms) | peak memory growth (MiB) |")
    print("|---|---:|---:|---:|---:|")
    for call in ("add_many", "contains_many"):
        out = subprocess.run(
            [sys.executable, __file__, "--one", call, "--n", str(args.n)],
            check=True, capture_output=True, text=True,
        ).stdout
        r = json.loads(out)
        print(f"| {call}(list[str]) | {r['n']:,} | {r['seconds']} | {r['longest_wait_ms']} | {r['peak_growth_mib']} |")


if __name__ == "__main__":
    main()
