#!/usr/bin/env python3
"""A window filter against a plain filter and against the workaround users
write today (one plain filter key per time slice, queried key by key):
memory (`MEMORY USAGE`) and the server's rate of `CF.EXISTS` and
`CF.INSERT`, measured with `redis-benchmark` (pipelined, so the server,
not the client, is what is measured). docs/redis.md, "Items that expire",
quotes one run.

    cargo build --release -p concurrent-cuckoo-redis
    python3 scripts/bench-redis-window.py [--module PATH] [--server redis-server] \\
        [--items 1000000] [--generations 4]

The workaround keeps g + 1 keys `f:<slice>` (a slice is a generation of
window / g): an add goes to the current slice's key; a lookup asks every
key (`CF.EXISTS` on each, pipelined), found if any has the item. Each
key is sized for the items of one slice at a steady rate (items / g) and
`ERROR` / (g + 1), so that the union of g + 1 keys keeps the window
filter's false-positive rate: the most frugal honest sizing (a burst that
puts more than items / g in one slice fills its key).
"""

import argparse
import os
import re
import shutil
import subprocess
import tempfile
import time

import redis


def bench(port, *command, n=400_000, pipeline=32, clients=4, keyspace=10_000_000):
    """Requests per second `redis-benchmark` measured for `command`."""
    out = subprocess.run(
        ["redis-benchmark", "-p", str(port), "-n", str(n), "-P", str(pipeline),
         "-c", str(clients), "-r", str(keyspace), "-q", "--csv", *map(str, command)],
        capture_output=True, text=True, check=True,
    ).stdout
    rows = [line for line in out.splitlines() if line and not line.startswith('"test"')]
    return float(re.findall(r'"([0-9.]+)"', rows[-1])[0])


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser()
    p.add_argument("--module", default=os.path.join(
        here, "..", "target", "release", "libconcurrent_cuckoo_redis.so"))
    p.add_argument("--server", default=shutil.which("redis-server") or "redis-server")
    p.add_argument("--items", type=int, default=1_000_000)
    p.add_argument("--generations", type=int, default=4)
    p.add_argument("--port", type=int, default=23999)
    args = p.parse_args()
    n, g, rate = args.items, args.generations, 0.001
    d = tempfile.mkdtemp()
    proc = subprocess.Popen([args.server, "--port", str(args.port), "--save", "", "--dir", d,
                             "--loadmodule", os.path.abspath(args.module)],
                            stdout=subprocess.DEVNULL)
    try:
        r = redis.Redis(port=args.port)
        for _ in range(100):
            try:
                r.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.1)
        version = r.info("server")["redis_version"]
        # An hour's window: no generation changes during the run.
        r.execute_command("CF.RESERVE", "w", n, "WINDOW", 3_600_000, "GENERATIONS", g,
                          "ERROR", rate)
        r.execute_command("CF.RESERVE", "p", n, "EXPANSION", 0, "ERROR", rate)
        slices = [f"f:{s}" for s in range(g + 1)]
        for key in slices:
            r.execute_command("CF.RESERVE", key, -(-n // g), "EXPANSION", 0,
                              "ERROR", rate / (g + 1))
        # Fill to the live items of a window: n in w and p, n / g per slice.
        batch = 1000
        for start in range(0, n, batch):
            items = range(start, min(start + batch, n))
            pipe = r.pipeline(transaction=False)
            pipe.execute_command("CF.INSERT", "w", "ITEMS", *items)
            pipe.execute_command("CF.INSERT", "p", "ITEMS", *items)
            pipe.execute_command("CF.INSERT", slices[start * g // n], "ITEMS", *items)
            pipe.execute()
        mem = {k: r.memory_usage(k) for k in ["w", "p", *slices]}
        workaround_mem = sum(mem[k] for k in slices)
        print(f"server: {args.server} ({version}); items live: {n}; g = {g}; ERROR {rate}")
        print(f"{'':34}{'bytes':>12}{'bytes/item':>12}")
        for name, b in [("window filter (1 key)", mem["w"]),
                        ("plain fixed filter (1 key)", mem["p"]),
                        (f"workaround ({g + 1} slice keys)", workaround_mem)]:
            print(f"{name:34}{b:>12}{b / n:>12.2f}")
        # CF.EXISTS, half hits (keyspace twice the items).
        ks = 2 * n
        exists_w = bench(args.port, "CF.EXISTS", "w", "__rand_int__", keyspace=ks)
        exists_p = bench(args.port, "CF.EXISTS", "p", "__rand_int__", keyspace=ks)
        exists_s = bench(args.port, "CF.EXISTS", slices[0], "__rand_int__", keyspace=ks)
        # Inserts of new items (keyspace 10^9) into fresh filters with room
        # for twice what the run adds.
        count = 100_000
        r.execute_command("CF.RESERVE", "wi", 20 * count, "WINDOW", 3_600_000,
                          "GENERATIONS", g, "ERROR", rate)
        r.execute_command("CF.RESERVE", "pi", 20 * count, "EXPANSION", 0, "ERROR", rate)
        insert = ["ITEMS", *["__rand_int__"] * 10]
        insert_w = bench(args.port, "CF.INSERT", "wi", *insert, n=count, keyspace=10**9)
        insert_p = bench(args.port, "CF.INSERT", "pi", *insert, n=count, keyspace=10**9)
        print("CF.EXISTS, lookups per second (redis-benchmark -P 32 -c 4):")
        print(f"  window filter: {exists_w:,.0f}")
        print(f"  plain filter:  {exists_p:,.0f}")
        print(f"  workaround:    {exists_s / (g + 1):,.0f} "
              f"({exists_s:,.0f} CF.EXISTS/s on a slice key, {g + 1} per lookup)")
        print("CF.INSERT of 10 items, items per second:")
        print(f"  window filter: {insert_w * 10:,.0f}")
        print(f"  plain filter:  {insert_p * 10:,.0f} (the workaround's: one slice key)")
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
