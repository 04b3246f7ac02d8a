#!/usr/bin/env bash
# Tests the C API from C and C++, as CI does. Exits non-zero on any failure.
#
#   scripts/test-c.sh
#
# 1. installs what is missing: gcc, g++, pkg-config (apt); cbindgen
#    $CBINDGEN_VERSION (cargo install --locked);
# 2. checks that ffi/include/concurrent_cuckoo.h is what cbindgen generates
#    from ffi/src (regenerate with the command in ffi/cbindgen.toml);
# 3. builds libconcurrent_cuckoo_ffi.a and .so (release) and pkg-config
#    files for them (scripts/ffi-pkgconfig.sh);
# 4. builds ffi/tests/test_ffi.c twice, against the static and the shared
#    library, with -std=c11 -Wall -Wextra -Wpedantic -Werror and
#    AddressSanitizer + UBSan, and runs both, between the Rust interop
#    example's `write` (a filter saved by Rust, loaded by C) and `check` (the
#    filter C saved, checked by Rust);
# 4a. builds ffi/tests/test_windowed.c, test_timed.c and test_memory.c
#    (tables from a host's allocator: ccf_set_table_allocator) the same
#    way (static library) and runs them;
# 4b. builds ffi/tests/test_view.c the same way (static library), with
#    and without the header's SSE2 probe, and runs both: concurrent_cuckoo_inline.h's lookup against ccf_contains_hash, and
#    under concurrent writers;
# 5. builds ffi/tests/test_limits.c (no sanitizers) and runs it under
#    `ulimit -v` on the oversized files `interop hostile` writes: every
#    loader must refuse them as corrupt before reserving memory;
# 5b. installs the libraries into a prefix (scripts/ffi-install.sh: SONAME,
#    only ccf_* global in the static library, one pkg-config file) and
#    builds ffi/tests/test_install.c through that pkg-config file alone,
#    shared (run without LD_LIBRARY_PATH) and fully static (-static);
# 6. compiles ffi/tests/header_check.cpp as C++17 (warnings are errors) and
#    runs it;
# 7. builds ffi/examples/dataplane.c and batch_bench.c, and runs the
#    dataplane demo for 2 seconds on a small table (it exits non-zero on a
#    false negative).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/apt.sh
source scripts/lib/apt.sh

CBINDGEN_VERSION=0.29.4
start=$(date +%s)
step() { echo "--- test-c [$(( $(date +%s) - start ))s] $*"; }

step "tools"
apt_install_missing test-c gcc g++ pkg-config
if [[ "$(cbindgen --version 2>/dev/null || true)" != "cbindgen $CBINDGEN_VERSION" ]]; then
    echo "test-c: installing cbindgen $CBINDGEN_VERSION"
    cargo install cbindgen --version "$CBINDGEN_VERSION" --locked
fi

out=target/c-tests
rm -rf "$out"
mkdir -p "$out/tmp"

step "the committed header is what cbindgen generates"
cbindgen --quiet --config ffi/cbindgen.toml --crate concurrent-cuckoo-ffi \
    --output "$out/concurrent_cuckoo.h" ffi
if ! diff -u ffi/include/concurrent_cuckoo.h "$out/concurrent_cuckoo.h"; then
    echo "test-c: ffi/include/concurrent_cuckoo.h is stale: regenerate it (command in ffi/cbindgen.toml) and commit it" >&2
    exit 1
fi

step "libraries, pkg-config files, the Rust interop example"
scripts/ffi-pkgconfig.sh "$out/pkgconfig"
export PKG_CONFIG_PATH="$PWD/$out/pkgconfig"
cargo build --release -p concurrent-cuckoo-ffi --example interop
interop=target/release/examples/interop

cflags=(-std=c11 -Wall -Wextra -Wpedantic -Werror -g -O1 -fno-omit-frame-pointer
    -fsanitize=address,undefined -fno-sanitize-recover=all)
read -ra static_libs <<<"$(pkg-config --cflags --libs concurrent_cuckoo-static)"
read -ra shared_libs <<<"$(pkg-config --cflags --libs concurrent_cuckoo)"
rpath=(-Wl,-rpath,"$PWD/target/release")

step "build ffi/tests/test_ffi.c: static and shared"
gcc "${cflags[@]}" ffi/tests/test_ffi.c "${static_libs[@]}" -lm -pthread -o "$out/test_ffi_static"
gcc "${cflags[@]}" ffi/tests/test_ffi.c "${shared_libs[@]}" "${rpath[@]}" -lm -pthread -o "$out/test_ffi_shared"
# Each binary is linked the way its name says. (ldd's output is captured
# first: `ldd | grep -q` can fail on SIGPIPE under pipefail.)
static_deps=$(ldd "$out/test_ffi_static")
shared_deps=$(ldd "$out/test_ffi_shared")
if grep -q libconcurrent_cuckoo_ffi <<<"$static_deps"; then
    echo "test-c: test_ffi_static loads the shared library" >&2
    exit 1
fi
if ! grep -q "libconcurrent_cuckoo_ffi.so.0.1 => $PWD/target/release/" <<<"$shared_deps"; then
    echo "test-c: test_ffi_shared does not load target/release/libconcurrent_cuckoo_ffi.so.0.1 (the SONAME's link to it)" >&2
    exit 1
fi

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for kind in static shared; do
    step "run test_ffi ($kind library)"
    rm -rf "$out/tmp/$kind"
    mkdir -p "$out/tmp/$kind"
    "$interop" write "$out/tmp/$kind/from-rust.ccf"
    "$out/test_ffi_$kind" "$out/tmp/$kind/from-rust.ccf" "$out/tmp/$kind/from-c.ccf" \
        tests/data "$out/tmp/$kind"
    "$interop" check "$out/tmp/$kind/from-c.ccf"
done

step "ffi/tests/test_windowed.c: windowed filters (window, capacity, batches, bad arguments, files, threads)"
gcc "${cflags[@]}" ffi/tests/test_windowed.c "${static_libs[@]}" -lm -pthread -o "$out/test_windowed"
mkdir -p "$out/tmp/windowed"
"$out/test_windowed" "$out/tmp/windowed"

step "ffi/tests/test_timed.c: timed filters (time to live, host and system clocks, files, bad arguments, threads)"
gcc "${cflags[@]}" ffi/tests/test_timed.c "${static_libs[@]}" -lm -pthread -o "$out/test_timed"
mkdir -p "$out/tmp/timed"
"$out/test_timed" "$out/tmp/timed"

step "ffi/tests/test_memory.c: tables from the host's allocator (ccf_set_table_allocator), every kind of filter, threads, refusals"
gcc "${cflags[@]}" ffi/tests/test_memory.c "${static_libs[@]}" -lm -pthread -o "$out/test_memory"
mkdir -p "$out/tmp/memory"
"$out/test_memory" "$out/tmp/memory"

step "ffi/tests/test_view.c: the inline lookup (concurrent_cuckoo_inline.h) agrees with the library, under writers too"
gcc "${cflags[@]}" ffi/tests/test_view.c "${static_libs[@]}" -lm -pthread -o "$out/test_view"
"$out/test_view" tests/data
# The header's portable probe (the one non-x86 targets compile) on this machine.
gcc "${cflags[@]}" -U__SSE2__ ffi/tests/test_view.c "${static_libs[@]}" -lm -pthread -o "$out/test_view_portable"
"$out/test_view_portable" tests/data

step "untrusted sizes: loaders refuse oversized claims under ulimit -v (1 GiB)"
# No sanitizers here: ASan's shadow memory needs more address space than
# any limit allows.
gcc -std=c11 -Wall -Wextra -Wpedantic -Werror -O1 ffi/tests/test_limits.c \
    "${static_libs[@]}" -lm -pthread -o "$out/test_limits"
mkdir -p "$out/tmp/limits"
"$interop" hostile "$out/tmp/limits"
(ulimit -v 1048576 && "$out/test_limits" "$out/tmp/limits")

step "install: scripts/ffi-install.sh into a prefix; a program built only through its pkg-config file, shared (no LD_LIBRARY_PATH) and fully static"
prefix="$PWD/$out/prefix"
scripts/ffi-install.sh --prefix "$prefix"
installed_so=$(readelf -d "$prefix/lib/libconcurrent_cuckoo_ffi.so")
if ! grep -q "Library soname: \[libconcurrent_cuckoo_ffi.so.0.1\]" <<<"$installed_so"; then
    echo "test-c: the installed shared library's SONAME is not libconcurrent_cuckoo_ffi.so.0.1" >&2
    exit 1
fi
(
    export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
    unset LD_LIBRARY_PATH
    strict=(-std=c11 -Wall -Wextra -Wpedantic -Werror -O1)
    read -ra include_flags <<<"$(pkg-config --cflags concurrent_cuckoo)"
    read -ra shared_link <<<"$(pkg-config --libs concurrent_cuckoo)"
    read -ra static_link <<<"$(pkg-config --static --libs concurrent_cuckoo)"
    gcc "${strict[@]}" ffi/tests/test_install.c "${include_flags[@]}" "${shared_link[@]}" \
        -o "$out/test_install_shared"
    gcc -static "${strict[@]}" ffi/tests/test_install.c "${include_flags[@]}" "${static_link[@]}" \
        -o "$out/test_install_static"
    shared_needs=$(ldd "$out/test_install_shared")
    if ! grep -q "libconcurrent_cuckoo_ffi.so.0.1 => $prefix/lib/" <<<"$shared_needs"; then
        echo "test-c: test_install_shared does not load the installed libconcurrent_cuckoo_ffi.so.0.1" >&2
        echo "$shared_needs" >&2
        exit 1
    fi
    if readelf -d "$out/test_install_static" 2>/dev/null | grep -q NEEDED; then
        echo "test-c: test_install_static needs shared libraries" >&2
        exit 1
    fi
    "$out/test_install_shared"
    "$out/test_install_static"
)

step "C++17: the header compiles and links"
g++ -std=c++17 -Wall -Wextra -Wpedantic -Werror ffi/tests/header_check.cpp \
    "${shared_libs[@]}" "${rpath[@]}" -o "$out/header_check"
"$out/header_check"

step "examples: dataplane.c (run 2 s on a small table), batch_bench.c (build)"
gcc -std=c11 -Wall -Wextra -Wpedantic -Werror -O2 ffi/examples/dataplane.c \
    "${static_libs[@]}" -pthread -o "$out/dataplane"
gcc -std=c11 -Wall -Wextra -Wpedantic -Werror -O2 ffi/examples/batch_bench.c \
    "${static_libs[@]}" -pthread -o "$out/batch_bench"
"$out/dataplane" --seconds 2 --flows 200000 --workers 1 --churn 20000

step "all C API tests passed in $(( $(date +%s) - start ))s"
