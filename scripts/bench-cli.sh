#!/usr/bin/env bash
# "Command-line build" of docs/benchmarks.md, in one run on one machine:
#
#   scripts/bench-cli.sh [N] [THREADS] [ROUNDS]   # defaults: 100000000, every core, 3
#
# 1. generates N distinct lines (`item:%012d`, 18 bytes each) into a file
#    (not timed);
# 2. (a) the library's insert_batch of the same items already in memory
#    (cli/examples/bench_build.rs insert), THREADS threads;
# 3. `ccf build FILE --capacity N --threads THREADS` (read, parse, insert,
#    write the file atomically);
# 4. (b) filling the Redis module by CF.INSERT batches of 1000 items from a
#    client: CF.RESERVE, then the commands generated from the file piped
#    through `redis-cli --pipe` (the fastest pipelined client), timed from
#    the generator's start to the last reply;
# 5. build + push: step 3 again, then `ccf push` into the same server.
#
# Each round runs the four in turn; the table gives each one's median over
# the rounds (and stderr every round's figure). Prints a markdown table. Needs about 2 GB of disk and 5 GB of memory for
# N = 100 million; everything is removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/apt.sh
source scripts/lib/apt.sh
apt_install_missing bench-cli libclang-dev redis-server redis-tools

n=${1:-100000000}
threads=${2:-$(nproc)}
rounds=${3:-3}
# One build (one feature resolution) for the tool, its helper and the module.
cargo build --release -p ccf -p concurrent-cuckoo-redis --lib --bins --examples
ccf=$PWD/target/release/ccf
helper=$PWD/target/release/examples/bench_build
module=$PWD/target/release/libconcurrent_cuckoo_redis.so

dir=$(mktemp -d "${BENCH_DIR:-${TMPDIR:-/tmp}}/bench-cli.XXXXXX")
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir" \
    --loadmodule "$module" --logfile "$dir/redis.log" --daemonize yes
cleanup() { redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap cleanup EXIT
for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
cli() { redis-cli -p "$port" "$@"; }
now() { date +%s.%N; }
# CPU seconds (user + system) the server has used so far.
server_cpu() { cli INFO cpu | tr -d '\r' | awk -F: '/^used_cpu_(user|sys):/ { s += $2 } END { printf "%.3f", s }'; }
# Runs a command, appending its CPU seconds (user + system, children
# included) to the file $cpu_file.
cpu() {
    local TIMEFORMAT='%3U %3S'
    { time "$@" 2>&3; } 3>&2 2>"$dir/time.txt"
    awk '{ printf "%.3f\n", $1 + $2 }' "$dir/time.txt" >"$cpu_file"
}
secs() { python3 -c "print(f'{$2 - $1:.2f}')"; }

echo "bench-cli: generating $n lines" >&2
"$helper" gen "$n" >"$dir/items.txt"
bytes=$(stat -c %s "$dir/items.txt")
# Warm the page cache the same way for every reader.
cat "$dir/items.txt" >/dev/null

a_all=() ri_all=() build_all=() b_all=() both_all=() build2_all=() push_all=()
a_cpu_all=() build_cpu_all=() b_cpu_all=() both_cpu_all=()
cpu_file=$dir/cpu.txt
for round in $(seq "$rounds"); do
    echo "bench-cli: round $round of $rounds: (a) insert_batch in memory" >&2
    a_line=$("$helper" insert "$dir/items.txt" "$n" "$threads")
    a_all+=("$(awk '{ for (i = 1; i <= NF; i++) if ($(i+1) == "s," && $(i-1) != "cpu") print $i }' <<<"$a_line")")
    a_cpu_all+=("$(awk '{ for (i = 1; i <= NF; i++) if ($i == "cpu") print $(i+1) }' <<<"$a_line")")

    echo "bench-cli: round $round: ccf build" >&2
    rm -f "$dir/f.ccf"
    t0=$(now)
    cpu "$ccf" build "$dir/items.txt" --capacity "$n" --threads "$threads" -o "$dir/f.ccf" --quiet
    t1=$(now)
    build_all+=("$(secs "$t0" "$t1")")
    build_cpu_all+=("$(cat "$cpu_file")")
    "$ccf" build "$dir/items.txt" --capacity "$n" --threads "$threads" -o "$dir/f.ccf" 2>"$dir/build.txt"
    ri_all+=("$(awk '/time/ { gsub(/[(]/, ""); for (i = 1; i <= NF; i++) if ($i == "insert") print $(i+1) }' "$dir/build.txt")")
    file_bytes=$(stat -c %s "$dir/f.ccf")

    echo "bench-cli: round $round: (b) CF.INSERT batches of 1000 through redis-cli --pipe" >&2
    cli DEL inserted >/dev/null
    cli CF.RESERVE inserted "$n" >/dev/null
    s0=$(server_cpu)
    t0=$(now)
    cpu bash -c '"$1" resp "$2" inserted | redis-cli -p "$3" --pipe >"$4"' _ "$helper" "$dir/items.txt" "$port" "$dir/pipe.txt"
    t1=$(now)
    s1=$(server_cpu)
    b_all+=("$(secs "$t0" "$t1")")
    b_cpu_all+=("$(python3 -c "print(f'{$(cat "$cpu_file") + $s1 - $s0:.2f}')")")
    grep -q "errors: 0" "$dir/pipe.txt" || { cat "$dir/pipe.txt" >&2; echo "bench-cli: CF.INSERT failed" >&2; exit 1; }
    cli DEL inserted >/dev/null

    echo "bench-cli: round $round: ccf build + ccf push" >&2
    rm -f "$dir/f.ccf"
    t0=$(now)
    cpu "$ccf" build "$dir/items.txt" --capacity "$n" --threads "$threads" -q -o "$dir/f.ccf"
    build_cpu=$(cat "$cpu_file")
    t1=$(now)
    s0=$(server_cpu)
    cpu "$ccf" push "$dir/f.ccf" "redis://127.0.0.1:$port" pushed -q --replace
    s1=$(server_cpu)
    t2=$(now)
    both_cpu_all+=("$(python3 -c "print(f'{$build_cpu + $(cat "$cpu_file") + $s1 - $s0:.2f}')")")
    build2_all+=("$(secs "$t0" "$t1")")
    push_all+=("$(secs "$t1" "$t2")")
    both_all+=("$(secs "$t0" "$t2")")
    # The pushed filter answers for the items (a sample).
    for i in 0 12345 $((n - 1)); do
        [[ $(cli CF.EXISTS pushed "$(printf 'item:%012d' "$i")") == 1 ]] || { echo "bench-cli: item $i missing" >&2; exit 1; }
    done
done
median() { python3 -c "import statistics, sys; print(f'{statistics.median(map(float, sys.argv[1:])):.2f}')" "$@"; }
a=$(median "${a_all[@]}") read_insert=$(median "${ri_all[@]}") build=$(median "${build_all[@]}")
a_cpu=$(median "${a_cpu_all[@]}") build_cpu=$(median "${build_cpu_all[@]}") b_cpu=$(median "${b_cpu_all[@]}") both_cpu=$(median "${both_cpu_all[@]}")
b=$(median "${b_all[@]}") both=$(median "${both_all[@]}") build2=$(median "${build2_all[@]}") push=$(median "${push_all[@]}")
echo "bench-cli: CPU s: (a) ${a_cpu_all[*]} | build ${build_cpu_all[*]} | (b) ${b_cpu_all[*]} | build+push ${both_cpu_all[*]}" >&2
echo "bench-cli: rounds (a) ${a_all[*]} | read+insert ${ri_all[*]} | build ${build_all[*]} | (b) ${b_all[*]} | build+push ${both_all[*]} (push ${push_all[*]})" >&2

rate() { python3 -c "print(f'{$n / $1 / 1e6:.2f}')"; }
ratio() { python3 -c "print(f'{$1 / $2:.2f}')"; }
cat <<REPORT
| $n lines ($(python3 -c "print(f'{$bytes / 2**30:.2f}')") GiB), $threads threads, $(nproc) cores, median of $rounds rounds | wall s | CPU s | M items/s (wall) | |
|---|---:|---:|---:|---|
| (a) library \`insert_batch\`, items in memory | $a | $a_cpu | $(rate "$a") | baseline |
| \`ccf build\`: read + parse + insert | $read_insert | | $(rate "$read_insert") | wall $(ratio "$read_insert" "$a")x (a) |
| \`ccf build\`: end to end (and write $(python3 -c "print(f'{$file_bytes / 2**20:.0f}')") MiB atomically) | $build | $build_cpu | $(rate "$build") | wall $(ratio "$build" "$a")x, CPU $(ratio "$build_cpu" "$a_cpu")x (a) |
| (b) \`CF.INSERT\` of 1000 by \`redis-cli --pipe\` (client and server CPU) | $b | $b_cpu | $(rate "$b") | |
| \`ccf build\` + \`ccf push\` ($build2 + $push s; CPU: client and server) | $both | $both_cpu | $(rate "$both") | **wall $(ratio "$b" "$both")x, CPU $(ratio "$b_cpu" "$both_cpu")x faster** than (b) |
REPORT
