#!/usr/bin/env bash
# Builds and runs the DPDK examples (ffi/examples/dpdk), as CI does. Exits
# non-zero on any failure. About a minute on a warm cargo cache.
#
#   scripts/test-dpdk.sh
#
# 1. installs what is missing: gcc, make, and DPDK's development files
#    (libdpdk-dev, pkg-config) when `pkg-config --exists libdpdk` fails;
# 2. builds libconcurrent_cuckoo_ffi.a (release) and both examples
#    (-std=c11 -Wall -Wextra -Werror), into target/dpdk/;
# 3. runs the dataplane for 5 s with its defaults (no NIC, no hugepages:
#    --no-huge --no-pci, a ring-backed port; lookups by
#    ccf_contains_hash_batch) and 3 s with --keyed (ccf_contains_batch on
#    the 5-tuple bytes): each exits non-zero on a false negative;
# 4. runs it with --canary (1 admitted flow in 1024 left out of the filter),
#    which must exit 3, the false-negative status: the check can fail;
# 5. runs the benchmark in --smoke mode (tiny sizes, one round).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/apt.sh
source scripts/lib/apt.sh

start=$(date +%s)
step() { echo "--- test-dpdk [$(( $(date +%s) - start ))s] $*"; }

step "tools"
apt_install_missing test-dpdk gcc make
if ! { command -v pkg-config >/dev/null && pkg-config --exists libdpdk; }; then
    apt_install_missing test-dpdk libdpdk-dev pkg-config
fi
echo "DPDK $(pkg-config --modversion libdpdk)"

step "build: the library, the dataplane and the benchmark"
cargo build --release -p concurrent-cuckoo-ffi
make -C ffi/examples/dpdk --no-print-directory
bin=target/dpdk

# Each run is bounded: a hang is a failure too.
step "dataplane, 5 s, ccf_contains_hash_batch on the 5-tuple hash"
timeout 60 "$bin/dataplane" --seconds 5

step "dataplane, 3 s, --keyed: ccf_contains_batch on the 5-tuple bytes"
timeout 60 "$bin/dataplane" --seconds 3 --keyed

step "dataplane, 3 s, --canary: the false-negative check must fire (exit 3)"
set +e
timeout 60 "$bin/dataplane" --seconds 3 --canary
status=$?
set -e
if [[ $status -ne 3 ]]; then
    echo "test-dpdk: the canary run exited $status, not 3: the false-negative check did not fire" >&2
    exit 1
fi
echo "test-dpdk: the canary run exited 3 as it must"

step "dataplane, 3 s, --window 400: flows aged by ccf_timed on the host clock (no false negative)"
timeout 60 "$bin/dataplane" --seconds 3 --window 400 --flows 200000

step "dataplane, 3 s, --window 400 --generations 60 --rate 1e-6: the aging filter in 32-bit slots (no false negative)"
timeout 60 "$bin/dataplane" --seconds 3 --window 400 --generations 60 --rate 1e-6 --flows 200000

step "dataplane, 3 s, --window 400 --canary: the time to live's false-negative check must fire (exit 3)"
set +e
timeout 60 "$bin/dataplane" --seconds 3 --window 400 --flows 200000 --canary
status=$?
set -e
if [[ $status -ne 3 ]]; then
    echo "test-dpdk: the window canary run exited $status, not 3: the check did not fire" >&2
    exit 1
fi
echo "test-dpdk: the window canary run exited 3 as it must"

step "member_bench --smoke"
timeout 60 "$bin/member_bench" --smoke

step "all DPDK tests passed in $(( $(date +%s) - start ))s"
