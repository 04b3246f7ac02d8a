#!/usr/bin/env bash
# Builds the library's unit and integration tests for aarch64-unknown-linux-gnu
# and runs them under qemu-user, so the NEON probe (src/probe/neon.rs) and the
# `prfm` prefetch (src/storage.rs) are compiled and executed for real on an
# x86-64 machine.
#
#   scripts/test-aarch64.sh [LIBTEST ARGS...]    e.g. scripts/test-aarch64.sh probe::
#
# Exits non-zero when the install, the build or any test fails, and also when
# the probe backend test did not run, did not pass, or did not report "neon".
#
# How: rustup cannot add targets on these machines (no download), so the
# aarch64 build uses Debian's compiler, rustc-web (/usr/bin/rustc), with its
# aarch64 standard library (libstd-rust-web-dev:arm64, same version: the
# package is Multi-Arch: same), Debian's cross gcc as the linker and
# qemu-aarch64 as the runner. Cargo is still rustup's. The test binaries are
# linked statically: dynamically linked ones hang under qemu-user as soon as
# they spawn a thread. Doc tests cannot run this way, hence `--lib --tests`.
# The build goes to target/aarch64 so the host build is left alone.
#
# Environment:
#   CUCKOO_TEST_SCALE      divisor on the heavy tests' iteration counts
#                          (default 8 here: everything runs emulated)
#   AARCH64_TEST_TIMEOUT   seconds allowed for build + run (default 1500)
#   RUSTFLAGS / CARGO_ENCODED_RUSTFLAGS are ignored (unset): they would
#   override the static-linking flag below.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/apt.sh
source scripts/lib/apt.sh

TARGET=aarch64-unknown-linux-gnu
TARGET_DIR=target/aarch64
LOG="$TARGET_DIR/test-aarch64.log"
# The test that asserts which probe backend is compiled in (src/probe/tests.rs),
# and the backend-vs-scalar tests that must have run alongside it.
BACKEND_TEST=probe::tests::active_backend_is_expected
REQUIRED_TESTS=(
    "$BACKEND_TEST"
    probe::tests::every_backend_matches_the_scalar_reference
    probe::tests::a_match_in_any_single_slot_is_found
)
EXPECTED_BACKEND=neon

start=$(date +%s)
elapsed() { echo "$(( $(date +%s) - start )) s"; }

# --- 1. Install what the cross build needs (idempotent, quiet) ---------------
PACKAGES=(rustc-web libstd-rust-web-dev:arm64 gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user)
apt_install_missing test-aarch64 --arch arm64 "${PACKAGES[@]}"
if [[ ! -d "$(/usr/bin/rustc --print sysroot)/lib/rustlib/$TARGET/lib" ]]; then
    echo "test-aarch64: /usr/bin/rustc has no standard library for $TARGET" >&2
    exit 1
fi
echo "test-aarch64: $(/usr/bin/rustc --version) for $TARGET, $(qemu-aarch64 --version | head -1)"

# --- 2. Build and run under qemu ----------------------------------------------
unset RUSTFLAGS CARGO_ENCODED_RUSTFLAGS
export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER=qemu-aarch64
# tests/frozen.rs spawns the test binary again; qemu-user cannot exec an
# aarch64 binary without binfmt_misc, so the test goes through the runner.
export CCF_TEST_RUNNER=qemu-aarch64
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUSTFLAGS="-C target-feature=+crt-static"
export CUCKOO_TEST_SCALE="${CUCKOO_TEST_SCALE:-8}"
timeout_s="${AARCH64_TEST_TIMEOUT:-1500}"
cargo_test=(cargo test --no-fail-fast -p concurrent-cuckoo --target "$TARGET" --target-dir "$TARGET_DIR")

mkdir -p "$TARGET_DIR"
status=0
timeout --kill-after=10 "$timeout_s" "${cargo_test[@]}" --lib --tests -- "$@" 2>&1 | tee "$LOG" || status=$?
if [[ "$status" == 124 || "$status" == 137 ]]; then
    echo "test-aarch64: timed out after ${timeout_s} s" >&2
fi

# --- 3. Check that the backend tests ran, passed and saw NEON -----------------
failures=()
if (( $# == 0 )); then # with a test filter given, the required tests may be filtered out
    for t in "${REQUIRED_TESTS[@]}"; do
        grep -qE "^test ${t} \.\.\. ok\$" "$LOG" || failures+=("$t did not run and pass")
    done
fi
if [[ "$status" == 0 ]]; then
    # Run the backend test once more with its output shown, to read the name.
    reported=$( (timeout --kill-after=10 300 "${cargo_test[@]}" --lib -- --exact "$BACKEND_TEST" --nocapture 2>&1 || true) |
        grep -o 'active probe backend: [a-z0-9+]*' | head -1 | sed 's/^active probe backend: //' || true)
    echo "test-aarch64: active probe backend reported under qemu: ${reported:-<none>}"
    [[ "$reported" == "$EXPECTED_BACKEND" ]] || failures+=("backend is '${reported}', expected '${EXPECTED_BACKEND}'")
fi

passed=$(awk '/^test result:/ { s += $4 } END { print s + 0 }' "$LOG")
failed=$(awk '/^test result:/ { s += $6 } END { print s + 0 }' "$LOG")
for f in "${failures[@]}"; do echo "test-aarch64: FAIL: $f" >&2; done
echo "test-aarch64: cargo test exit ${status}, CUCKOO_TEST_SCALE=${CUCKOO_TEST_SCALE}, $(elapsed) in all"
echo "aarch64: ${passed} passed, ${failed} failed"
if [[ "$status" != 0 ]] || (( ${#failures[@]} )); then
    exit 1
fi
