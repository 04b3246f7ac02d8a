#!/usr/bin/env bash
# Checks the crate without any SIMD probe backend, in two ways:
#
#  (a) `cargo check --lib --tests` and `cargo build --lib` for
#      armv7-unknown-linux-gnueabihf, a 32-bit target with neither SSE2 nor
#      NEON (rustc's armv7 gnueabihf baseline is VFPv3-D16 without NEON), so
#      the portable probe is what gets compiled, with a 32-bit usize. With
#      --run, the unit and integration tests are also built and run there
#      under qemu-arm (statically linked, CUCKOO_TEST_SCALE=8 by default).
#  (b) always: the host unit tests with the portable backend forced
#      (--cfg concurrent_cuckoo_portable), checking that the probe backend
#      test ran, passed and reported "portable".
#
#   scripts/check-portable.sh          (a) check + (b)
#   scripts/check-portable.sh --run    (a) check, build and run under qemu-arm + (b)
#
# Exits non-zero when anything fails to build or any test fails.
#
# Why build-std: rustup cannot add targets here, and Debian's armhf standard
# library for rustc-web is not installable alongside the amd64 compiler on
# every mirror (the armhf security index has been seen stale, which also makes
# `apt-get update` fail for the arm64 lists scripts/test-aarch64.sh needs), so
# no armhf architecture is added. Instead Debian's rustc-web (/usr/bin/rustc)
# builds the standard library for the target from Debian's matching source
# package rust-web-src (its dependencies are vendored in it), which needs
# RUSTC_BOOTSTRAP=1 for cargo's -Z build-std. If a standard library for the
# target is already installed in /usr/bin/rustc's sysroot it is used instead.
# Builds go to target/portable-check and target/portable.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/apt.sh
source scripts/lib/apt.sh

CROSS_TARGET=armv7-unknown-linux-gnueabihf
BACKEND_TEST=probe::tests::active_backend_is_expected
run_cross=0
case "${1:-}" in
    "") ;;
    --run) run_cross=1 ;;
    *) echo "usage: $0 [--run]" >&2; exit 2 ;;
esac

start=$(date +%s)
elapsed() { echo "$(( $(date +%s) - start )) s"; }
failures=()

# --- install (idempotent, quiet) ----------------------------------------------
PACKAGES=(rustc-web rust-web-src)
(( run_cross )) && PACKAGES+=(gcc-arm-linux-gnueabihf libc6-dev-armhf-cross qemu-user)
apt_install_missing check-portable "${PACKAGES[@]}"
rustc_v=$(dpkg-query -W -f='${Version}' rustc-web)
src_v=$(dpkg-query -W -f='${Version}' rust-web-src)
if [[ "$rustc_v" != "$src_v" ]]; then
    echo "check-portable: rustc-web ${rustc_v} and rust-web-src ${src_v} differ; build-std needs the same version" >&2
    exit 1
fi

# --- (a) the crate for a target with neither SSE2 nor NEON --------------------
(
    unset RUSTFLAGS CARGO_ENCODED_RUSTFLAGS
    export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc
    build_std=()
    if [[ ! -d "$(/usr/bin/rustc --print sysroot)/lib/rustlib/$CROSS_TARGET/lib" ]]; then
        export RUSTC_BOOTSTRAP=1
        build_std=(-Z build-std)
    fi
    cross=(-p concurrent-cuckoo --target "$CROSS_TARGET" --target-dir target/portable-check "${build_std[@]}")
    echo "check-portable: (a) $(/usr/bin/rustc --version), --target ${CROSS_TARGET}${build_std:+ (std built from rust-web-src)}"
    # (set -e does not apply inside a subshell tested with ||: exit by hand)
    echo "check-portable: (a) cargo check --lib --tests"
    cargo check "${cross[@]}" --lib --tests || exit 1
    # A full build of the library too: some lints (arithmetic_overflow, for
    # one) only fire during code generation, which `cargo check` skips.
    echo "check-portable: (a) cargo build --lib"
    cargo build "${cross[@]}" --lib || exit 1
    if (( run_cross )); then
        export CARGO_TARGET_ARMV7_UNKNOWN_LINUX_GNUEABIHF_LINKER=arm-linux-gnueabihf-gcc
        export CARGO_TARGET_ARMV7_UNKNOWN_LINUX_GNUEABIHF_RUNNER=qemu-arm
        # tests/frozen.rs spawns the test binary again, through this runner.
        export CCF_TEST_RUNNER=qemu-arm
        # Static, as for aarch64: dynamically linked binaries hang under
        # qemu-user once they spawn a thread.
        export CARGO_TARGET_ARMV7_UNKNOWN_LINUX_GNUEABIHF_RUSTFLAGS="-C target-feature=+crt-static"
        export CUCKOO_TEST_SCALE="${CUCKOO_TEST_SCALE:-8}"
        echo "check-portable: (a) running the tests for ${CROSS_TARGET} under qemu-arm (CUCKOO_TEST_SCALE=${CUCKOO_TEST_SCALE})"
        timeout --kill-after=10 "${PORTABLE_TEST_TIMEOUT:-1500}" \
            cargo test --no-fail-fast "${cross[@]}" --lib --tests || exit 1
    fi
) || failures+=("(a) ${CROSS_TARGET}")
echo "check-portable: (a) done at $(elapsed)"

# --- (b) host tests with the portable backend forced --------------------------
log=target/portable/check-portable.log
mkdir -p target/portable
echo "check-portable: (b) host unit tests with --cfg concurrent_cuckoo_portable"
host_test=(cargo test -p concurrent-cuckoo --lib --target-dir target/portable)
status=0
RUSTFLAGS="--cfg concurrent_cuckoo_portable" "${host_test[@]}" 2>&1 | tee "$log" || status=$?
if [[ "$status" != 0 ]]; then
    failures+=("(b) host tests with the portable backend (exit ${status})")
elif ! grep -qE "^test ${BACKEND_TEST} \.\.\. ok\$" "$log"; then
    failures+=("(b) ${BACKEND_TEST} did not run and pass")
else
    # Once more with its output shown, to read the backend's name.
    reported=$( (RUSTFLAGS="--cfg concurrent_cuckoo_portable" "${host_test[@]}" -- --exact "$BACKEND_TEST" --nocapture 2>&1 || true) |
        grep -o 'active probe backend: [a-z0-9+]*' | head -1 | sed 's/^active probe backend: //' || true)
    echo "check-portable: (b) active probe backend reported: ${reported:-<none>}"
    [[ "$reported" == portable ]] || failures+=("(b) backend is '${reported}', expected 'portable'")
fi

for f in "${failures[@]}"; do echo "check-portable: FAIL: $f" >&2; done
echo "check-portable: $(( ${#failures[@]} )) failure(s), $(elapsed) in all"
(( ${#failures[@]} == 0 ))
