#!/usr/bin/env bash
# Side-by-side single-thread lookups against the fastest published cuckoo
# filters (issue 34): FastFilter/fastfilter_cpp's and efficient/cuckoofilter's
# CuckooFilter<uint64_t, 16>, their lookups inlined in C++, ours through the
# C ABI (static library), in one program (ffi/bench/), same keys. Not run
# in CI: it needs the peers' source trees, which it does not fetch.
#
#   scripts/bench-peers.sh FASTFILTER_CPP_DIR CUCKOOFILTER_DIR [LOG2_BUCKETS...]
#
# e.g. after `git clone https://github.com/FastFilter/fastfilter_cpp` and
# `git clone https://github.com/efficient/cuckoofilter` into target/peers/:
#   scripts/bench-peers.sh target/peers/fastfilter_cpp target/peers/cuckoofilter 16 20 24
#
# Sizes default to 16 20 24 (peers' buckets: 512 KiB, 8 MiB, 128 MiB
# tables). The 2^24 size needs about 1.5 GiB of memory. Builds with
# g++ -O3 -march=native (MARCH=x86-64-v3 for valgrind, which lacks AVX-512);
# the library with `cargo build --release -p
# concurrent-cuckoo-ffi` (RUSTFLAGS as given: pass -C target-cpu=native to
# match, the default build being what users get). Prints markdown tables:
# the C++ program's (ours as built by default, then ours with
# CCF_UNIFORM_HASHES), then examples/peers.rs' (ours from Rust, inlined).
set -euo pipefail
(( $# >= 2 )) || { sed -n 2,18p "$0"; exit 2; }
ff=$(cd "$1" && pwd) ref=$(cd "$2" && pwd)
shift 2
cd "$(dirname "$0")/.."
[[ -f $ff/src/cuckoo/cuckoofilter.h ]] || { echo "bench-peers: no src/cuckoo/cuckoofilter.h in $ff" >&2; exit 2; }
[[ -f $ref/src/cuckoofilter.h ]] || { echo "bench-peers: no src/cuckoofilter.h in $ref" >&2; exit 2; }
out=target/bench-peers
mkdir -p "$out"
cargo build --release --quiet -p concurrent-cuckoo-ffi
flags=(-O3 -march="${MARCH:-native}" -std=c++17 -Wall -Wno-unused-function)
# Each peer in its own translation unit, its namespace renamed: both call
# theirs `cuckoofilter` and share header guards.
g++ "${flags[@]}" -DPEER_FASTFILTER -Dcuckoofilter=peer_fastfilter -Iffi/bench \
    -I"$ff/src" -I"$ff/src/cuckoo" -c ffi/bench/peer.cc -o "$out/fastfilter.o"
g++ "${flags[@]}" -DPEER_REFERENCE -Dcuckoofilter=peer_reference -Iffi/bench \
    -I"$ref/src" -c ffi/bench/peer.cc -o "$out/reference.o"
g++ "${flags[@]}" -Iffi/bench -Iffi/include -c ffi/bench/peers.cc -o "$out/peers.o"
g++ "$out/peers.o" "$out/fastfilter.o" "$out/reference.o" \
    target/release/libconcurrent_cuckoo_ffi.a -lpthread -ldl -lm -o "$out/peers"
echo "commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src ffi || echo +); $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
"$out/peers" "$@"
cargo run --release --quiet --example peers -- "$@"
