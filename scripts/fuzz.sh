#!/usr/bin/env bash
# Runs every cargo-fuzz target for a bounded time; exits non-zero if any
# target finds a crash (a panic, a sanitizer report, a timeout or an OOM).
#
#   scripts/fuzz.sh                  # each target for 60 s
#   FUZZ_SECONDS=600 scripts/fuzz.sh # longer
#   FUZZ_JOBS=1 scripts/fuzz.sh      # one target at a time (default: one
#                                    # per core, side by side)
#   scripts/fuzz.sh decode           # only the named targets
#
# Needs the nightly toolchain (`cargo +nightly`) and installs cargo-fuzz
# from crates.io if it is missing. Crashes are saved under
# fuzz/artifacts/<target>/; reproduce one with
#   cargo +nightly fuzz run <target> fuzz/artifacts/<target>/<file>
# Corpora grow in fuzz/corpus/<target>/ (ignored by git); the decode
# corpus is seeded with the golden files of tests/data/ and
# tests/data-windowed/, the window corpus (the Redis module's decoders of
# window filters; its build needs libclang-dev, as the module's does)
# with redis/tests/data/window-filter.bin and window-filter-wide.bin.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-60}
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(decode model scalable_model window)

if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "fuzz.sh: the nightly toolchain is required (rustup toolchain install nightly)" >&2
    exit 2
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "=== installing cargo-fuzz"
    cargo install cargo-fuzz --locked
fi

mkdir -p fuzz/corpus/decode fuzz/corpus/window
cp tests/data/*.bin tests/data-windowed/*.bin fuzz/corpus/decode/
cp redis/tests/data/window-filter*.bin fuzz/corpus/window/

# Build every target first, so the time limit is spent fuzzing, not
# compiling; then fuzz FUZZ_JOBS targets at a time (default: one per
# core), each libFuzzer process on one core, its output printed whole
# when it ends.
for target in "${targets[@]}"; do
    cargo +nightly fuzz build "$target"
done
jobs_at_once=${FUZZ_JOBS:-$(nproc)}
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
failed=()
fuzz_one() { # TARGET: exits non-zero on a crash
    local target=$1 start
    start=$(date +%s)
    echo "=== fuzz $target for ${seconds}s"
    if cargo +nightly fuzz run "$target" -- \
        -max_total_time="$seconds" -timeout=20 -print_final_stats=1; then
        echo "=== fuzz $target: no crash ($(( $(date +%s) - start ))s)"
    else
        echo "=== fuzz $target: FAILED, see fuzz/artifacts/$target/" >&2
        return 1
    fi
}
for (( first = 0; first < ${#targets[@]}; first += jobs_at_once )); do
    batch=("${targets[@]:first:jobs_at_once}")
    pids=()
    for target in "${batch[@]}"; do
        fuzz_one "$target" >"$logs/$target.log" 2>&1 &
        pids+=($!)
    done
    for i in "${!batch[@]}"; do
        wait "${pids[i]}" || failed+=("${batch[i]}")
        cat "$logs/${batch[i]}.log"
    done
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz.sh: crashes in: ${failed[*]}" >&2
    exit 1
fi
echo "fuzz.sh: ${#targets[@]} target(s), ${seconds}s each, no crash"
