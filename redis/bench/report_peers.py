"""The markdown report of `scripts/bench-redis.sh --redisbloom`: each
workload's median over the rounds per server, in requests and items per
second, and the module's ratio to RedisBloom (and to each baseline build
that ran), of the medians and of each round's pair.

    python report_peers.py RESULTS MEMORY N ROUNDS REQUESTS CLIENTS \
        PIPELINE FILL LOAD_BEFORE LOAD_AFTER SERVER_VERSION COMMIT CPUS

RESULTS: lines `server workload requests-per-second`, in round order;
MEMORY: lines `server bytes` of the loaded filter.
"""

import statistics
import sys

ITEMS = {"mexists": 100, "insert": 1000, "insert-default": 1000}
NAMES = {
    "exists-present": "`CF.EXISTS`, present",
    "exists-absent": "`CF.EXISTS`, absent",
    "mexists": "`CF.MEXISTS` of 100 (half present)",
    "insert": "`CF.INSERT` of 1000, reserved key",
    "insert-default": "`CF.INSERT` of 1000, default-created keys",
    "add": "`CF.ADD`, reserved key",
}


def main():
    (results, memory, n, rounds, requests, clients, pipeline, fill,
     load_before, load_after, version, commit, cpus) = sys.argv[1:]
    n, fill, requests = int(n), int(fill), int(requests)
    runs = {}
    order = []
    for line in results.splitlines():
        server, workload, value = line.split()
        runs.setdefault((server, workload), []).append(float(value))
        if workload not in order:
            order.append(workload)
    servers = []
    for server, _ in runs:
        if server not in servers:
            servers.append(server)
    # RedisBloom first, then the baseline builds (BENCH_BASELINE).
    peers = [s for s in servers if s == "redisbloom"] + [
        s for s in servers if s not in ("ours", "redisbloom")]

    print(f"`scripts/bench-redis.sh --redisbloom {n} {rounds}` at `{commit}`: redis-server "
          f"{version}, one per module, {', '.join(servers)}; a filter of {n:,} members "
          f"(`CF.RESERVE bench {n}`); redis-benchmark with {clients} clients, pipeline "
          f"{pipeline} ({requests:,} `CF.EXISTS`/`CF.ADD`, {requests // 20:,} `CF.MEXISTS`); "
          f"fills of {fill:,} members (`CF.INSERT` pipeline 4; default-created keys by "
          f"`redis-cli --pipe`, 10,000 members a key). Median of {rounds} rounds, the servers "
          f"taking turns. {cpus} CPUs; load average {load_before} before, {load_after} after.\n")
    head = "| workload | " + " | ".join(f"{s} items/s" for s in servers)
    head += " | " + " | ".join(f"ours / {p}: of the medians (each round)" for p in peers) + " |"
    print(head)
    print("|---|" + "---:|" * (len(servers) + len(peers)))
    for workload in order:
        per = ITEMS.get(workload, 1)
        med = {s: statistics.median(runs[(s, workload)]) * per for s in servers}
        cells = [f"{med[s]:,.0f}" for s in servers]
        for p in peers:
            pairs = [a / b for a, b in zip(runs[("ours", workload)], runs[(p, workload)])]
            cells.append(f"**{med['ours'] / med[p]:.2f}x** ({', '.join(f'{x:.2f}' for x in pairs)})")
        print(f"| {NAMES.get(workload, workload)} | " + " | ".join(cells) + " |")
    sizes = dict(line.split() for line in memory.splitlines())
    cells = [f"{int(sizes[s]) / n:.2f}" for s in servers]
    cells += [f"{int(sizes['ours']) / int(sizes[p]):.2f}x" for p in peers]
    print("| bytes per member (`MEMORY USAGE bench`) | " + " | ".join(cells) + " |")
    print()
    print("Raw requests/s per round: " + "; ".join(
        f"{s} {w} {', '.join(f'{x:,.0f}' for x in v)}" for (s, w), v in runs.items()))


if __name__ == "__main__":
    main()
