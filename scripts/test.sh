#!/usr/bin/env bash
# The tests: what README.md's set-up section gives as the test command, and
# what CI runs. Installs what they need on a fresh machine, then runs them.
#
#   scripts/test.sh
#
# 1. installs what is missing: libclang-dev (the Redis module's bindgen),
#    redis-server and redis-tools (apt);
# 2. runs `cargo test --workspace --all-features`: the library's unit,
#    property, stress, durability and doc tests, the C API's Rust tests,
#    the Redis module's Rust test against a live server, and `ccf`'s tests
#    (cli/tests: build/query/info, bad input, push/pull against their own
#    redis-server with the module) (CCF_REQUIRE_REDIS: a missing
#    redis-server is a failure, not a skip);
# 3. runs the Python package's tests (scripts/test-python.sh: `pip install
#    ./python` into a venv under target/, then pytest, with the `ccf` that
#    step 2 built);
# 4. runs the rest of the Redis module's tests (scripts/test-redis.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/apt.sh
source scripts/lib/apt.sh

apt_install_missing test libclang-dev redis-server redis-tools
CCF_REQUIRE_REDIS=1 cargo test --workspace --all-features
CCF="$PWD/target/debug/ccf" scripts/test-python.sh
scripts/test-redis.sh --no-cargo
