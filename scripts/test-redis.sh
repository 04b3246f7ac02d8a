#!/usr/bin/env bash
# The Redis module's tests (redis/), as CI runs them. Exits non-zero on any
# failure. About a minute on a warm cargo cache.
#
#   scripts/test-redis.sh              everything below
#   scripts/test-redis.sh --no-cargo   without step 3 (scripts/test.sh runs
#                                      it with the workspace's tests)
#
# 1. installs what is missing: libclang-dev (the redis-module crate's
#    bindgen), redis-server and redis-tools (Debian's Redis 7.0), and, in a
#    virtual environment under target/, redis-py, pytest,
#    pytest-asyncio and xxhash (forged RDB values) from PyPI, plus redis-py's source distribution, whose
#    tests/ holds its own cuckoo-filter tests;
# 2. builds the module with debug assertions (cargo's test profile:
#    optimised, with overflow and alignment checks) into
#    target/debug/libconcurrent_cuckoo_redis.so, and the example the Python
#    tests run for library encodings the module never makes
#    (target/debug/examples/library_encoding);
# 3. runs the Rust test that pulls filters out of a live server with
#    CF.SCANDUMP and opens them with FrozenFilter::from_bytes;
# 4. runs redis/tests/python (pytest): every command and error in RESP2
#    and RESP3, growth, persistence (RDB, AOF, DUMP/RESTORE, COPY),
#    replication, a three-node cluster migrating a slot, hostile input;
#    the tests start and stop their own redis-server processes on loopback;
# 5. runs redis-py's own cuckoo-filter tests (test_cf_* of
#    tests/test_bloom.py and tests/test_asyncio/test_bloom.py) against a
#    server with the module, with RESP3 (redis-py's default), --protocol=2
#    and --protocol=3.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/apt.sh
source scripts/lib/apt.sh

REDIS_PY=8.1.0
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

step "build the module (test profile: debug assertions on)"
cargo build --profile test -p concurrent-cuckoo-redis --lib --example library_encoding
module=$PWD/target/debug/libconcurrent_cuckoo_redis.so
export CCF_REDIS_MODULE=$module

if (( run_cargo )); then
    step "Rust: CF.SCANDUMP into FrozenFilter::from_bytes"
    CCF_REQUIRE_REDIS=1 cargo test -p concurrent-cuckoo-redis
fi

step "redis/tests/python: commands, growth, persistence, replication, cluster, hostile input"
"$venv/bin/python" -m pytest -q -p no:cacheprovider redis/tests/python

step "redis-py's own cuckoo-filter tests (redis $REDIS_PY source distribution)"
dir=$(mktemp -d)
port=$("$venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save "" --dir "$dir" --loadmodule "$module" \
    --logfile "$dir/redis.log" --daemonize yes
trap 'redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
plugin=$PWD/redis/tests/redis-py
for protocol in "" 2 3; do
    echo "redis-py cf tests, protocol ${protocol:-default (RESP3)}"
    (cd "$sdist" && PYTHONPATH="$plugin" "$OLDPWD/$venv/bin/python" -m pytest -q -p no:cacheprovider \
        -p hide_module_list tests/test_bloom.py tests/test_asyncio/test_bloom.py -k "test_cf_" \
        --redis-url="redis://127.0.0.1:$port/0" --redis-mod-url="redis://127.0.0.1:$port" \
        ${protocol:+--protocol=$protocol} --disable-warnings |
        tee "$dir/redis-py.out")
    # The selection must not be empty: 2 sync and at least 2 async tests.
    grep -Eq "^([4-9]|[1-9][0-9]+) passed" "$dir/redis-py.out" || {
        echo "test-redis: redis-py's cuckoo-filter tests did not all run" >&2
        exit 1
    }
done

step "all Redis module tests passed in $(( $(date +%s) - start ))s"
