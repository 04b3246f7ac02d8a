#!/usr/bin/env bash
# Model-checks the filter's concurrent protocols with loom.
#
#   scripts/loom.sh            run every model; exits non-zero on any failure
#   scripts/loom.sh --canary   build the filter twice, each time with a
#                              deliberately planted bug in fingerprint moves
#                              ("reorder": clear the source before writing
#                              the destination; "skip_bump": never bump the
#                              version readers validate against). Exits
#                              non-zero when the models catch *both* bugs as
#                              a lost fingerprint, which is what CI expects;
#                              exits 0 ("CANARY NOT CAUGHT") if either one
#                              slips through, because then the models are blind.
#
# LOOM_MAX_PREEMPTIONS (default 10, which is exhaustive for these models) bounds the preemptions loom explores.
set -euo pipefail
cd "$(dirname "$0")/.."
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-10}"

run_models() { # $1 = extra rustc flags, $2 = target dir, $3 = log file
    RUSTFLAGS="--cfg concurrent_cuckoo_loom $1" \
        cargo test --release -p loom-tests --target-dir "$2" -- --test-threads=2 2>&1 | tee "$3"
    return "${PIPESTATUS[0]}"
}

start=$(date +%s)
if [[ "${1:-}" != "--canary" ]]; then
    status=0
    run_models "" target/loom target/loom.log || status=$?
    echo "loom: preemption bound ${LOOM_MAX_PREEMPTIONS}, $(( $(date +%s) - start )) s, exit ${status}"
    exit "$status"
fi

caught=0
for bug in reorder skip_bump; do
    log="target/loom-canary-${bug}.log"
    mkdir -p target
    if run_models "--cfg concurrent_cuckoo_canary=\"${bug}\"" "target/loom-canary" "$log" >/dev/null; then
        echo "CANARY NOT CAUGHT: with bug '${bug}' every loom model passed"
    elif grep -q "LOST FINGERPRINT" "$log"; then
        echo "canary '${bug}' caught: $(grep -c '^test .* FAILED$' "$log") model(s) failed with LOST FINGERPRINT"
        caught=$((caught + 1))
    else
        echo "CANARY NOT CAUGHT: with bug '${bug}' the models failed, but not by losing a fingerprint:"
        grep -E "panicked|error" "$log" | head -5
    fi
done
echo "loom canary: ${caught}/2 planted bugs caught in $(( $(date +%s) - start )) s"
if [[ "$caught" == 2 ]]; then
    exit 1 # the expected outcome: the buggy filter fails the models
fi
exit 0
