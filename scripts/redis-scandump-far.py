#!/usr/bin/env python3
"""CF.SCANDUMP at far offsets of a big fixed filter: the time of each
call, and how long other clients' PINGs wait meanwhile (issue 42, defect
5; docs/redis.md, "Dumps a dataplane can use", has the figures).

    target/redis-venv/bin/python scripts/redis-scandump-far.py MODULE.so CAPACITY

Starts redis-server (from PATH) on a free loopback port with MODULE.so,
reserves `CF.RESERVE big CAPACITY EXPANSION 0` (400000000: 889 MB), adds
1,000 items, then times 20 calls at random offsets of its second half
(seeded), one offset 5 times, and the chunk holding the table's checksum
after a write, twice. Needs redis-py (scripts/test-redis.sh's venv)."""
import random, shutil, socket, subprocess, sys, tempfile, threading, time
import redis
module, capacity = sys.argv[1], int(sys.argv[2])
d = tempfile.mkdtemp()
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
p = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", d,
                      "--save", "", "--loadmodule", module], stdout=subprocess.DEVNULL)
try:
    r = redis.Redis(port=port, protocol=2)
    for _ in range(100):
        try:
            r.ping(); break
        except redis.ConnectionError:
            time.sleep(0.05)
    r.execute_command("CF.RESERVE", "big", capacity, "EXPANSION", 0)
    r.execute_command("CF.INSERT", "big", "ITEMS", *range(1000))
    size = r.execute_command("CF.INFO", "big")[1]
    print(f"filter: CF.RESERVE big {capacity} EXPANSION 0, Size {size:,} bytes")
    rng = random.Random(1)
    stop, pings = False, []
    def pinger():
        c = redis.Redis(port=port, protocol=2)
        while not stop:
            t = time.perf_counter(); c.ping(); pings.append(time.perf_counter() - t)
            time.sleep(0.001)
    th = threading.Thread(target=pinger); th.start()
    times = []
    for _ in range(20):
        it = rng.randrange(size // 2, size - (2 << 20))
        t = time.perf_counter(); r.execute_command("CF.SCANDUMP", "big", it); times.append(time.perf_counter() - t)
    rep = []
    for _ in range(5):
        t = time.perf_counter(); r.execute_command("CF.SCANDUMP", "big", size // 2 + 12345); rep.append(time.perf_counter() - t)
    stop = True; th.join()
    far_pings = max(pings)
    # The encoding's length: the largest iterator that answers data.
    lo, hi = 1, size + 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if r.execute_command("CF.SCANDUMP", "big", mid)[0] == 0:
            hi = mid
        else:
            lo = mid
    total = lo
    print(f"encoding: {total:,} bytes")
    r.execute_command("CF.ADD", "big", "x"); r.execute_command("CF.DEL", "big", "x")  # a new state
    # The last chunk (the table's checksum) at a position no dump passed.
    t = time.perf_counter(); r.execute_command("CF.SCANDUMP", "big", total - 100); last1 = time.perf_counter() - t
    t = time.perf_counter(); r.execute_command("CF.SCANDUMP", "big", total - 200); last2 = time.perf_counter() - t
    times.sort()
    print(f"20 far positions: min {times[0]*1e3:.1f} ms, median {times[10]*1e3:.1f} ms, max {times[-1]*1e3:.1f} ms")
    print(f"one position 5 times: " + ", ".join(f"{x*1e3:.1f}" for x in rep) + " ms")
    print(f"the checksum's chunk: first {last1*1e3:.1f} ms, again {last2*1e3:.1f} ms")
    print(f"PING during the 25 far calls: {len(pings)} pings, the slowest {far_pings*1e3:.1f} ms")
finally:
    p.terminate(); p.wait()
    shutil.rmtree(d, ignore_errors=True)
