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
# directories (an installed copy is better made by scripts/ffi-install.sh,
# which writes one pkg-config file for both). The static library's system
# libraries come from rustc
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

# shellcheck source=lib/ffi.sh
source scripts/lib/ffi.sh
ffi_build_release
native=$ffi_native
version=$ffi_version

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
