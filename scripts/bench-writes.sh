#!/usr/bin/env bash
# Side-by-side per-key writes (issue 52): insert, remove, present and
# absent lookups, one key per call, on 1 and 2 threads, for ours through
# the C ABI (CCF_UNIFORM_HASHES, keys as hashes) against splatlab/vqf's
# 16-bit VQF (its AVX-512 build, plain and -DENABLE_THREADS) and
# FastFilter/fastfilter_cpp's CuckooFilter<uint64_t, 16> and TC, in one
# program (ffi/bench/writes.cc). Not run in CI: it needs the peers' source
# trees, which it does not fetch.
#
#   scripts/bench-writes.sh VQF_DIR FASTFILTER_CPP_DIR [LOG2_SLOTS...]
#
# e.g. with the two trees extracted into target/peers/ (from clones, or
# from snapshots: `git --git-dir=SNAPSHOT archive HEAD | tar -x -C
# target/peers/vqf`, likewise fastfilter_cpp):
#   scripts/bench-writes.sh target/peers/vqf target/peers/fastfilter_cpp 20 24
#
# Ours is the library as `cargo build --release -p concurrent-cuckoo-ffi`
# builds it (what users get); RUSTFLAGS and CARGO_TARGET_DIR are honoured
# (e.g. RUSTFLAGS="-C target-cpu=native" CARGO_TARGET_DIR=target/native);
# CCF_FFI_LIB=PATH links that libconcurrent_cuckoo_ffi.a instead (an older
# commit's, built apart, for a before-and-after), building nothing.
# Sizes default to 20 24 (2^24 slots needs about 0.5 GiB). Env:
# CCF_WRITES_REPS (default 3); MARCH (default native; x86-64-v3 for
# valgrind, which lacks AVX-512: TC and VQF's AVX-512 paths are left out,
# VQF built for AVX2) builds into target/bench-writes-$MARCH;
# WRITES_BUILD_ONLY=1 builds and prints the program's path, and
# WRITES_CALLGRIND=1 makes it dump callgrind's counts after each phase
# (both for scripts/write-instructions.sh).
#
# VQF is built with its own Makefile from a copy under target/, patched
# (each patch checked): 16-bit tags (include/vqf_filter.h); its 16-bit
# remove's offset fixed to subtract sizeof(uint64_t)/2 as its insert
# does (src/vqf_filter.c; unfixed, about 4 in 5 removes of present keys
# miss); vqf_init's "Size:" line dropped. Its thread-safe build's remove
# sets bit 63 of the block's metadata, which is also its lock bit: the
# program first tries a remove and a re-insert in a child process and,
# if that hangs, times no thread-safe remove ("hangs" in the table).
set -euo pipefail
(( $# >= 2 )) || { sed -n 2,37p "$0"; exit 2; }
vqf=$(cd "$1" && pwd) ff=$(cd "$2" && pwd)
shift 2
cd "$(dirname "$0")/.."
[[ -f $vqf/src/vqf_filter.c && -f $vqf/Makefile ]] || { echo "bench-writes: no VQF source in $vqf" >&2; exit 2; }
[[ -f $ff/src/tc-shortcut/tc-shortcut.hpp ]] || { echo "bench-writes: no src/tc-shortcut in $ff" >&2; exit 2; }
march=${MARCH:-native}
out=$PWD/target/bench-writes
[[ $march == native ]] || out+="-$march"
rm -rf "$out/vqf" "$out/vqf-ts"
mkdir -p "$out"
cp -r "$vqf" "$out/vqf"
rm -rf "$out/vqf/obj"
# patch FILE SED-EXPR WANTED-LINE: apply, and fail unless WANTED-LINE is
# now in FILE exactly once.
patch_checked() {
    sed -i "$2" "$1"
    [[ $(grep -cxF -- "$3" "$1") == 1 ]] || { echo "bench-writes: patch of $1 did not apply: $3" >&2; exit 1; }
}
patch_checked "$out/vqf/include/vqf_filter.h" 's/^#define TAG_BITS 8$/#define TAG_BITS 16/' '#define TAG_BITS 16'
patch_checked "$out/vqf/src/vqf_filter.c" \
    's|^      remove_index = remove_index + offset - sizeof(uint64_t);$|      remove_index = remove_index + offset - (sizeof(uint64_t)/2);|' \
    '      remove_index = remove_index + offset - (sizeof(uint64_t)/2);'
sed -i 's|^   printf("Size: %ld\\n",total_size_in_bytes);$||' "$out/vqf/src/vqf_filter.c"
! grep -q 'printf("Size' "$out/vqf/src/vqf_filter.c" || { echo "bench-writes: vqf_init's print not dropped" >&2; exit 1; }
cp -r "$out/vqf" "$out/vqf-ts"
# The thread-safe build's external names renamed, so both builds link.
ts_names=(vqf_init vqf_insert vqf_remove vqf_is_present alt_index print_bits print_tags print_block shuffle_256)
ts_defs=""
for name in "${ts_names[@]}"; do ts_defs+="-D$name=ts_$name "; done
vqf_objs=(obj/vqf_filter.o)
# Its AVX-512 shifts' tables.
[[ $march != native ]] || vqf_objs+=(obj/shuffle_matrix_512.o obj/shuffle_matrix_512_16.o)
# VQF's own Makefile and flags (its -march=native replaced by MARCH); its
# many warnings go to a log.
vqf_cxx="g++ -std=c++11 -fgnu-tm -frename-registers -march=$march"
make -C "$out/vqf" CXX="$vqf_cxx" "${vqf_objs[@]}" >"$out/vqf-build.log" 2>&1 &&
    CFLAGS="$ts_defs" make -C "$out/vqf-ts" CXX="$vqf_cxx" THREAD=1 obj/vqf_filter.o \
        >>"$out/vqf-build.log" 2>&1 ||
    { cat "$out/vqf-build.log" >&2; exit 1; }
lib=${CCF_FFI_LIB:-}
if [[ -z $lib ]]; then
    cargo build --release --quiet -p concurrent-cuckoo-ffi
    lib=${CARGO_TARGET_DIR:-target}/release/libconcurrent_cuckoo_ffi.a
fi
flags=(-O3 -march="$march" -g -std=c++17 -DNDEBUG -Wall -Wno-unused-function -Wno-unused-variable)
[[ ${WRITES_CALLGRIND:-} != 1 ]] || flags+=(-DWRITES_CALLGRIND)
g++ "${flags[@]}" -DVQF_ENTRY=peer_vqf16_writes -Iffi/bench -I"$out/vqf/include" \
    -c ffi/bench/peer_vqf.cc -o "$out/peer_vqf.o"
g++ "${flags[@]}" -DENABLE_THREADS $ts_defs -DVQF_ENTRY=peer_vqf16_ts_writes -DVQF_HANG_PROBE \
    -Iffi/bench -I"$out/vqf-ts/include" -c ffi/bench/peer_vqf.cc -o "$out/peer_vqf_ts.o"
# TC's intrinsics trip -Wmaybe-uninitialized inside GCC's own headers.
g++ "${flags[@]}" -Wno-maybe-uninitialized -Iffi/bench -I"$ff/src" -I"$ff/src/cuckoo" -c ffi/bench/peer_ff_writes.cc \
    -o "$out/peer_ff.o"
g++ "${flags[@]}" -Iffi/bench -Iffi/include -c ffi/bench/writes.cc -o "$out/writes.o"
g++ "$out/writes.o" "$out/peer_vqf.o" "$out/peer_vqf_ts.o" "$out/peer_ff.o" \
    "${vqf_objs[@]/#/$out/vqf/}" "$out/vqf-ts/obj/vqf_filter.o" \
    "$lib" -lpthread -ldl -lm -o "$out/writes"
[[ ${WRITES_BUILD_ONLY:-} != 1 ]] || { echo "$out/writes"; exit 0; }
echo "commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src ffi || echo +)${CCF_FFI_LIB:+ (library: $CCF_FFI_LIB)}; $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
"$out/writes" "$@"
