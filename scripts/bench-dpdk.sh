#!/usr/bin/env bash
# The benchmark of docs/benchmarks.md, "DPDK: the filter beside rte_hash and
# rte_member": ffi/examples/dpdk/member_bench.c run twice, once with 2 MiB
# (transparent huge) pages for both the library and DPDK's structures, once
# with 4 KiB pages for both.
#
#   scripts/bench-dpdk.sh [--quick] [member_bench options...]
#
# Full run: 2^16 and 2^27 keys, 5 rounds: about 4 minutes a page size (8 in
# all) and 8 GB of memory at the peak. --quick: 2^16 and 2^22 keys, 3
# rounds, about 12 s a page size. Reports go to target/dpdk/bench-2m.md and
# bench-4k.md (and stdout); the load average is printed before and after
# each run, since other work on the machine slows every structure's
# lookups.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! { command -v pkg-config >/dev/null && pkg-config --exists libdpdk; }; then
    echo "bench-dpdk: pkg-config finds no libdpdk: install libdpdk-dev and pkg-config" >&2
    exit 1
fi
cargo build --release -p concurrent-cuckoo-ffi
make -C ffi/examples/dpdk --no-print-directory

git_rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
for pages in 2m 4k; do
    out=target/dpdk/bench-$pages.md
    {
        echo "<!-- scripts/bench-dpdk.sh $*, commit $git_rev, $(date -u +%FT%TZ) -->"
        echo "load before: $(uptime)"
    } | tee "$out"
    start=$(date +%s)
    target/dpdk/member_bench --pages "$pages" "$@" | tee -a "$out"
    {
        echo "load after: $(uptime)"
        echo "wall clock: $(( $(date +%s) - start )) s"
    } | tee -a "$out"
done
