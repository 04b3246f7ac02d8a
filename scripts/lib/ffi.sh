# shellcheck shell=bash
# Shared by scripts/ffi-pkgconfig.sh and scripts/ffi-install.sh: builds the
# C libraries (release) and tells what the static one needs.

# Builds libconcurrent_cuckoo_ffi.a and .so (release), links the .so's
# SONAME to it in target/release (so programs linked there with an rpath
# find it), and sets:
#   ffi_native   the system libraries the static library needs (rustc's
#                `--print native-static-libs`; cargo replays the note when
#                the build is fresh)
#   ffi_version  the package version, e.g. 0.1.0
#   ffi_soname   the shared library's SONAME, e.g. libconcurrent_cuckoo_ffi.so.0.1
ffi_build_release() {
    local log
    log=$(cargo rustc -p concurrent-cuckoo-ffi --release -- --print native-static-libs 2>&1) || {
        echo "$log" >&2
        echo "ffi: cargo build failed" >&2
        return 1
    }
    ffi_native=$(sed -n 's/^note: native-static-libs: //p' <<<"$log" | tail -n 1)
    if [[ -z "$ffi_native" ]]; then
        echo "$log" >&2
        echo "ffi: rustc did not print native-static-libs" >&2
        return 1
    fi
    ffi_version=$(sed -n 's/^version = "\(.*\)"$/\1/p' ffi/Cargo.toml | head -n 1)
    ffi_soname=$(readelf -d target/release/libconcurrent_cuckoo_ffi.so |
        sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
    if [[ -z "$ffi_soname" ]]; then
        echo "ffi: target/release/libconcurrent_cuckoo_ffi.so has no SONAME (ffi/build.rs sets it)" >&2
        return 1
    fi
    ln -sf libconcurrent_cuckoo_ffi.so "target/release/$ffi_soname"
}
