#!/usr/bin/env python3
"""The first write after idle generations on a window filter: how long one
`CF.ADD` takes after the filter sat `k` generations with no write, for
k = 1 to g. Before the sweeper (redis/src/window_sweeper.rs) that write
swept the idle generations' slices of the table itself, on the main
thread; with it, it should find them swept. docs/redis.md, "The sweeper",
quotes runs of this script.

    cargo build --profile test -p concurrent-cuckoo-redis --lib
    target/redis-venv/bin/python scripts/redis-window-idle.py \\
        [--module target/debug/libconcurrent_cuckoo_redis.so] \\
        [--server redis-server] [--capacity 100000000] [--generations 4]

The window is the least `CF.RESERVE` takes for the capacity (its error
names it), so each generation is as short as the rules allow.
"""

import argparse
import subprocess
import tempfile
import time

import redis


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--module", default="target/debug/libconcurrent_cuckoo_redis.so")
    ap.add_argument("--server", default="redis-server")
    ap.add_argument("--capacity", type=int, default=100_000_000)
    ap.add_argument("--generations", type=int, default=4)
    ap.add_argument("--port", type=int, default=23999)
    a = ap.parse_args()
    directory = tempfile.mkdtemp()
    server = subprocess.Popen(
        [a.server, "--port", str(a.port), "--bind", "127.0.0.1", "--save", "",
         "--dir", directory, "--loadmodule", a.module],
        stdout=subprocess.DEVNULL)
    r = redis.Redis(port=a.port)
    try:
        for _ in range(200):
            try:
                r.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        try:
            r.execute_command("CF.RESERVE", "w", a.capacity, "WINDOW", a.generations,
                              "GENERATIONS", a.generations)
            least = a.generations  # small filters take any window
        except redis.ResponseError as e:
            least = int(str(e).split("(WINDOW ")[1].split()[0])
        r.delete("w")
        r.execute_command("CF.RESERVE", "w", a.capacity, "WINDOW", least,
                          "GENERATIONS", a.generations)
        length = least / a.generations / 1000
        print(f"{a.server}: capacity {a.capacity}, {r.memory_usage('w') >> 20} MiB, "
              f"WINDOW {least} ms in {a.generations} generations of {length:.3f} s")
        r.execute_command("CF.INSERT", "w", "ITEMS", *range(10_000))
        for k in range(1, a.generations + 1):
            r.execute_command("CF.ADD", "w", f"before{k}")
            time.sleep(k * length + 0.01)
            sent = time.monotonic()
            r.execute_command("CF.ADD", "w", f"after{k}")
            took = time.monotonic() - sent
            print(f"  idle {k} generation(s): the next CF.ADD took {took * 1000:.1f} ms")
        print("  INFO:", {k: v for k, v in r.info("cuckoo_filters").items() if "window" in k})
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
