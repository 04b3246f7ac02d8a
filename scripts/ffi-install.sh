#!/usr/bin/env bash
# Installs the C library under a prefix, as `make install` or a
# distribution package would:
#
#   scripts/ffi-install.sh --prefix DIR [--libdir DIR]
#
#   LIBDIR/libconcurrent_cuckoo_ffi.so.X.Y.Z   the shared library, SONAME
#                                              libconcurrent_cuckoo_ffi.so.0.1
#                                              (ffi/build.rs), with the links
#                                              .so.0.1 and .so to it
#   LIBDIR/libconcurrent_cuckoo_ffi.a          the static library, one object
#                                              whose only global symbols are
#                                              the ccf_* entry points
#   LIBDIR/pkgconfig/concurrent_cuckoo.pc      one pkg-config file for both
#   PREFIX/include/concurrent_cuckoo.h, concurrent_cuckoo_inline.h
#
# LIBDIR defaults to PREFIX/lib. Then:
#
#   export PKG_CONFIG_PATH=LIBDIR/pkgconfig
#   cc app.c $(pkg-config --cflags --libs concurrent_cuckoo)                    # shared
#   cc -static app.c $(pkg-config --cflags --static --libs concurrent_cuckoo)   # fully static
#
# The shared link records an rpath to LIBDIR (in the .pc's Libs), so the
# program runs without LD_LIBRARY_PATH; under a prefix the dynamic loader
# searches anyway (/usr, /usr/local after `ldconfig`), the rpath is
# harmless. The static library's system libraries (Libs.private) come from
# rustc for this host, with libgcc_s (shared only) replaced by libgcc_eh,
# its static twin, so that `-static` links: run this on the platform you
# link on.
#
# Why one object in the archive: a Rust static library holds the whole
# standard library with global, mangled symbols (and compiler builtins such
# as __muldc3), which clash with another Rust library linked into the same
# program. The archive is partially linked (`ld -r`, keeping only what the
# ccf_* symbols reach) and every global but ccf_* made local (objcopy).
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=""
libdir=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --prefix) prefix=$2; shift 2 ;;
        --libdir) libdir=$2; shift 2 ;;
        *) echo "usage: scripts/ffi-install.sh --prefix DIR [--libdir DIR]" >&2; exit 2 ;;
    esac
done
if [[ -z "$prefix" ]]; then
    echo "usage: scripts/ffi-install.sh --prefix DIR [--libdir DIR]" >&2
    exit 2
fi
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
libdir=${libdir:-$prefix/lib}
mkdir -p "$libdir/pkgconfig" "$prefix/include"
libdir=$(cd "$libdir" && pwd)

# shellcheck source=lib/ffi.sh
source scripts/lib/ffi.sh
ffi_build_release
built=target/release

# The shared library under its full version, with the SONAME link and the
# development link.
install -m 0755 "$built/libconcurrent_cuckoo_ffi.so" "$libdir/libconcurrent_cuckoo_ffi.so.$ffi_version"
ln -sf "libconcurrent_cuckoo_ffi.so.$ffi_version" "$libdir/$ffi_soname"
ln -sf "$ffi_soname" "$libdir/libconcurrent_cuckoo_ffi.so"

# The static library: only ccf_* stays global.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mapfile -t entry_points < <(nm -g --defined-only "$built/libconcurrent_cuckoo_ffi.a" 2>/dev/null |
    awk '$2 ~ /^[TDRB]$/ && $3 ~ /^ccf_/ { print $3 }' | sort -u)
if [[ ${#entry_points[@]} -lt 10 ]]; then
    echo "ffi-install: found only ${#entry_points[@]} ccf_* symbols in the static library" >&2
    exit 1
fi
roots=()
for symbol in "${entry_points[@]}"; do
    roots+=(-u "$symbol")
done
ld -r --gc-sections "${roots[@]}" -o "$work/concurrent_cuckoo.o" \
    --whole-archive "$built/libconcurrent_cuckoo_ffi.a" --no-whole-archive
# Without the LLVM bitcode Rust embeds (.llvmbc): binutils' LLVM plugin,
# where installed, cannot read rustc's and aborts `ar`.
objcopy --wildcard --keep-global-symbol='ccf_*' --remove-section=.llvmbc \
    --remove-section=.llvmcmd "$work/concurrent_cuckoo.o"
rm -f "$libdir/libconcurrent_cuckoo_ffi.a"
ar rcs "$libdir/libconcurrent_cuckoo_ffi.a" "$work/concurrent_cuckoo.o"
exported=$(nm -g --defined-only "$libdir/libconcurrent_cuckoo_ffi.a" | awk 'NF == 3 { print $3 }')
if grep -qv '^ccf_' <<<"$exported"; then
    echo "ffi-install: the static library still exports symbols other than ccf_*:" >&2
    grep -v '^ccf_' <<<"$exported" | head >&2
    exit 1
fi

install -m 0644 ffi/include/concurrent_cuckoo.h ffi/include/concurrent_cuckoo_inline.h "$prefix/include/"

private=$(sed 's/-lgcc_s\b/-lgcc_eh/g' <<<"$ffi_native")
cat >"$libdir/pkgconfig/concurrent_cuckoo.pc" <<PC
prefix=$prefix
libdir=$libdir
includedir=\${prefix}/include

Name: concurrent_cuckoo
Description: Concurrent cuckoo filter (C API of concurrent-cuckoo)
Version: $ffi_version
Cflags: -I\${includedir}
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lconcurrent_cuckoo_ffi
Libs.private: $private
PC
echo "ffi-install: installed $ffi_soname ($ffi_version), the static library (${#entry_points[@]} ccf_* symbols), the headers and concurrent_cuckoo.pc under $prefix"
