#!/usr/bin/env bash
# The server's instructions per command (and per item) of the CF.*
# workloads of `scripts/bench-redis.sh --redisbloom`, for several builds of
# the module and RedisBloom side by side: redis-server runs under
# callgrind (valgrind), the counters are zeroed before each workload and
# dumped after it. Exact whatever the machine's load (wall-clock figures
# on a shared 2-vCPU host move by 30% between rounds); counts what the
# server's process executes in user space (parsing, dispatch, the module,
# replies), not the kernel's network stack nor cache misses: a filter of
# 100,000 items stays in cache.
#
#   scripts/redis-instructions.sh MODULE.so [MODULE.so...]
#       # each a build of this module or RedisBloom's redisbloom.so
#
# Prints a markdown table: one row per workload, one column per module.
# About 15 s per module. Needs valgrind (installed if missing).
# REDIS_INSTRUCTIONS_KEEP=DIR keeps callgrind's files there (one folder per
# module, one file per workload, named by its dump's trigger) for
# `callgrind_annotate --inclusive=yes FILE`; by default they are removed.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/apt.sh
source scripts/lib/apt.sh
apt_install_missing redis-instructions valgrind redis-server redis-tools
(( $# )) || { echo "usage: $0 MODULE.so [MODULE.so...]" >&2; exit 2; }

if [[ -n ${REDIS_INSTRUCTIONS_KEEP:-} ]]; then
    tmp=$REDIS_INSTRUCTIONS_KEEP
    mkdir -p "$tmp"
else
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
fi
hundred=$(for i in $(seq 0 99); do printf '__rand_int__:%d ' "$i"; done)
thousand=$(for i in $(seq 0 999); do printf '__rand_int__:%d ' "$i"; done)
python3 redis/bench/protocol.py 100000 bench CF.INSERT ITEMS >"$tmp/load.resp"
# 20 keys the command creates with the defaults, 10 commands of 1000 each.
python3 - >"$tmp/auto.resp" <<'PY'
import sys
out = sys.stdout.buffer
for k in range(20):
    for c in range(10):
        parts = [b"CF.INSERT", b"auto:%d" % k, b"ITEMS"] + [b"%d:%d" % (k, c * 1000 + j) for j in range(1000)]
        out.write(b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts))
PY

# workload label, commands, items per command
workloads=(
    "ping 20000 1"
    "exists-present 20000 1"
    "exists-absent 20000 1"
    "mexists 2000 100"
    "insert 200 1000"
    "insert-default 200 1000"
    "add 20000 1"
)
rows=()
for module in "$@"; do
    name=$(basename "$module" .so)
    out=$tmp/$name
    mkdir -p "$out"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    valgrind --tool=callgrind --callgrind-out-file="$out/cg.%p" --dump-instr=no \
        redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$out" \
        --loadmodule "$module" >"$out/valgrind.log" 2>&1 &
    pid=$!
    for _ in $(seq 300); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.2; done
    cli() { redis-cli -p "$port" "$@"; }
    cli CF.RESERVE bench 100000 >/dev/null
    cli --pipe <"$tmp/load.resp" >/dev/null
    cli -n 1 CF.RESERVE fill 200000 >/dev/null
    cli -n 1 CF.RESERVE fill1 20000 >/dev/null
    run() { # label, then redis-benchmark's arguments
        local label=$1
        shift
        callgrind_control -z "$pid" >/dev/null 2>&1
        redis-benchmark -p "$port" -c 10 -P 16 -q "$@" >/dev/null 2>&1
        callgrind_control -d "$label" "$pid" >/dev/null 2>&1
    }
    run ping -n 20000 PING
    run exists-present -n 20000 -r 1000 CF.EXISTS bench __rand_int__:7
    run exists-absent -n 20000 -r 1000 CF.EXISTS bench __rand_int__:x7
    # shellcheck disable=SC2086
    run mexists -n 2000 -r 2000 CF.MEXISTS bench $hundred
    # shellcheck disable=SC2086
    run insert --dbnum 1 -n 200 -r 2000000000 CF.INSERT fill ITEMS $thousand
    callgrind_control -z "$pid" >/dev/null 2>&1
    cli -n 2 --pipe <"$tmp/auto.resp" >/dev/null
    callgrind_control -d insert-default "$pid" >/dev/null 2>&1
    run add --dbnum 1 -n 20000 -r 2000000000 CF.ADD fill1 __rand_int__
    cli shutdown nosave >/dev/null 2>&1 || true
    wait "$pid" || true
    for f in "$out"/cg.*.*; do
        label=$(grep -m1 '^desc: Trigger: dump ' "$f" | sed 's/.*dump //' || true)
        total=$(grep -m1 '^summary:' "$f" | awk '{print $2}')
        rows+=("$name $label $total")
    done
done

python3 - "$(printf '%s\n' "${rows[@]}")" "${workloads[@]}" <<'PY'
import sys
rows, workloads = sys.argv[1], [w.split() for w in sys.argv[2:]]
counts, modules = {}, []
for line in rows.splitlines():
    parts = line.split()
    if len(parts) != 3:
        continue
    module, label, total = parts
    counts[(module, label)] = int(total)
    if module not in modules:
        modules.append(module)
print("| workload (instructions per item; per command where one item) | " + " | ".join(modules) + " |")
print("|---|" + "---:|" * len(modules))
for label, commands, items in workloads:
    per = int(commands) * int(items)
    cells = [f"{counts[(m, label)] / per:,.0f}" if (m, label) in counts else "" for m in modules]
    print(f"| {label} | " + " | ".join(cells) + " |")
PY
