#!/usr/bin/env bash
# Builds the C API's libraries (release) and writes two pkg-config files for
# them:
#
#   concurrent_cuckoo.pc         the shared library (libconcurrent_cuckoo_ffi.so)
#   concurrent_cuckoo-static.pc  the static library (libconcurrent_cuckoo_ffi.a)
#                                and the system libraries it needs
#
# Two files, because with both libraries in one directory `-l` picks the
# shared one: the static file names the archive by path instead.
#
#   scripts/ffi-pkgconfig.sh [--libdir DIR] [--includedir DIR] OUTDIR
#
# By default the files point into this tree (target/release, ffi/include),
# for building against the libraries where cargo left them:
#
#   scripts/ffi-pkgconfig.sh target/pkgconfig
#   export PKG_CONFIG_PATH=$PWD/target/pkgconfig
#   cc app.c $(pkg-config --cflags --libs concurrent_cuckoo-static)
#
# After copying the libraries and the header elsewhere, pass their
# directories. The static library's system libraries come from rustc
# (`--print native-static-libs`) for this host, so run this on the platform
# you link on.
set -euo pipefail
cd "$(dirname "$0")/.."

libdir="$PWD/target/release"
includedir="$PWD/ffi/include"
while [[ $# -gt 1 ]]; do
    case "$1" in
        --libdir) libdir=$2; shift 2 ;;
        --includedir) includedir=$2; shift 2 ;;
        *) break ;;
    esac
done
if [[ $# -ne 1 || "$1" == -* ]]; then
    echo "usage: scripts/ffi-pkgconfig.sh [--libdir DIR] [--includedir DIR] OUTDIR" >&2
    exit 2
fi
outdir=$1

# Builds both libraries; rustc prints the static library's native
# dependencies (cargo replays the note when the build is fresh).
build_log=$(cargo rustc -p concurrent-cuckoo-ffi --release -- --print native-static-libs 2>&1) || {
    echo "$build_log" >&2
    echo "ffi-pkgconfig: cargo build failed" >&2
    exit 1
}
native=$(sed -n 's/^note: native-static-libs: //p' <<<"$build_log" | tail -n 1)
if [[ -z "$native" ]]; then
    echo "$build_log" >&2
    echo "ffi-pkgconfig: rustc did not print native-static-libs" >&2
    exit 1
fi
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' ffi/Cargo.toml | head -n 1)

mkdir -p "$outdir"
cat >"$outdir/concurrent_cuckoo.pc" <<EOF
libdir=$libdir
includedir=$includedir

Name: concurrent_cuckoo
Description: Concurrent cuckoo filter (C API of concurrent-cuckoo), shared library
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -lconcurrent_cuckoo_ffi
EOF
cat >"$outdir/concurrent_cuckoo-static.pc" <<EOF
libdir=$libdir
includedir=$includedir

Name: concurrent_cuckoo-static
Description: Concurrent cuckoo filter (C API of concurrent-cuckoo), static library
Version: $version
Cflags: -I\${includedir}
Libs: \${libdir}/libconcurrent_cuckoo_ffi.a $native
EOF
echo "ffi-pkgconfig: wrote $outdir/concurrent_cuckoo.pc and concurrent_cuckoo-static.pc (static: $native)"
