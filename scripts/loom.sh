#!/usr/bin/env bash
# Model-checks the filter's concurrent protocols with loom.
#
#   scripts/loom.sh            run every model; exits non-zero on any failure
#   LOOM_CANARIES="reorder skip_bump" scripts/loom.sh --canary
#                              as --canary, those planted bugs only
#   scripts/loom.sh --canary --all-files
#                              as --canary, each bug against every model
#                              file (by default each runs only the files
#                              listed for it in canary_files below)
#   scripts/loom.sh --canary   build the filter 35 times, each time with a
#                              deliberately planted bug ("reorder": a move
#                              clears the source before writing the
#                              destination; "skip_bump": a path move never
#                              bumps the version readers validate against;
#                              "skip_remove_bump": a remove that leaves
#                              another copy of the fingerprint in the pair
#                              never bumps it; "newest_match_remove": a
#                              growing filter's remove takes the newest
#                              matching copy, the rule it had before it
#                              looked for a single matching level;
#                              "clear_aba": growth tells whether the filter
#                              changed by the newest level's index alone,
#                              which a clear and regrowth bring back;
#                              "relaxed_retire": a remove decides whether it
#                              emptied an old level with relaxed loads only,
#                              and the newest level loaded before its scan;
#                              "publish_before_mark": a growth publishes a
#                              slot as current before setting its in-use
#                              bit; "publish_before_reopen": it publishes a
#                              retired slot before reopening its level;
#                              "unbracketed_move": compaction moves a
#                              fingerprint without the move sequence;
#                              "remove_ignores_moves": a remove trusts its
#                              first "nothing to take";
#                              "unvalidated_take": a remove takes the copy
#                              its scan chose without checking the move
#                              sequence (issue 40);
#                              "sequence_after_levels": a lookup reads the
#                              move sequence after its level set;
#                              "relaxed_move_end": a move's closing
#                              increment is relaxed;
#                              "relaxed_close": a level is closed with a
#                              relaxed store; "windowed_no_future": a
#                              windowed lookup reads a lane tagged with the
#                              next generation as expired;
#                              "windowed_unvalidated_generation": its miss
#                              stands however far the generation moved
#                              during it; "windowed_unlocked_sweep": the
#                              sweep clears an expired lane without the
#                              bucket's lock, racing a refresh;
#                              "windowed_jump_unflagged": advance_to's jump
#                              clears lanes while lookups still read the
#                              old generation; "windowed_jump_by_tag": it
#                              judges lanes by their tags' ages at the
#                              target; "windowed_sweep_after_publish":
#                              advance sweeps after storing the next
#                              generation; "windowed_cur_before_lock": an
#                              insert reads the generation before its
#                              locks; "windowed_move_expired": a hop
#                              carries an expired lane;
#                              "windowed_fallback_cur_before_lock": the
#                              insert that falls back to every lock reads
#                              the generation before taking them;
#                              "windowed_hop_into_occupied_unbumped": a hop
#                              into a bucket holding other lanes skips the
#                              version bump; "windowed_sweep_clears_next":
#                              advance's sweep also clears the lanes that
#                              expire at the next generation;
#                              "windowed_help_sweeps_for_next_generation":
#                              sweep_ahead judges lanes at the next
#                              generation;
#                              "windowed_sweep_counts_unlocked": the sweep
#                              uncounts its cleared lanes after releasing
#                              the lock; "unique_unvalidated_check":
#                              insert_unique trusts one unvalidated pass
#                              over the levels;
#                              "one_move_alternate_unlocked": a one-move
#                              insert moves a fingerprint into its
#                              alternate bucket without that bucket's
#                              lock;
#                              "snapshot_writer_skips_copy": a writer
#                              changes a stripe a snapshot has not copied
#                              yet; "snapshot_marks_outside_barrier": a
#                              snapshot marks each stripe pending under
#                              its own lock alone, not all under every
#                              lock;
#                              "primary_insert_unlocked": an insert into a
#                              free slot of its primary stores before it
#                              takes that bucket's lock;
#                              "primary_remove_ignores_alternate": a remove
#                              under its primary's lock alone bumps no
#                              version for a copy in the alternate;
#                              "remove_primary_only": a remove never looks
#                              in the alternate once the primary, read under
#                              its lock, has no copy).
#                              Each bug must fail the models with its own
#                              marker: LOST FINGERPRINT for the first four,
#                              publish_before_mark, unbracketed_move,
#                              unvalidated_take (the copy it takes is
#                              another key's), sequence_after_levels,
#                              relaxed_move_end and relaxed_close, FULL
#                              WITH ROOM for clear_aba and
#                              publish_before_reopen, LEVEL NOT RETIRED for
#                              relaxed_retire, REMOVE MISSED for
#                              remove_ignores_moves, LOST FINGERPRINT for
#                              the first four windowed ones and
#                              windowed_jump_unflagged, EXPIRED KEY FOUND
#                              for the other four windowed ones (whose
#                              builds run only windowed.rs, where their
#                              models live), EXPIRED KEY FOUND for
#                              windowed_fallback_cur_before_lock and LOST
#                              FINGERPRINT for the next three, LEN WRONG
#                              for windowed_sweep_counts_unlocked (the
#                              models of windowed_paths.rs, whose builds
#                              run only that file), DUPLICATE ADMITTED
#                              for unique_unvalidated_check, LOST
#                              FINGERPRINT for the first two single-lock
#                              ones, REMOVE MISSED for
#                              remove_primary_only, LOST FINGERPRINT for
#                              the two snapshot ones (snapshots.rs, whose
#                              builds run only that file). Exits non-zero
#                              when the models catch *every* bug that way,
#                              which is what CI expects; exits 0 ("CANARY
#                              NOT CAUGHT") if any one slips through, because
#                              then the models are blind.
#
# LOOM_MAX_PREEMPTIONS (default 10, which is exhaustive for these models) bounds the preemptions loom explores.
set -euo pipefail
cd "$(dirname "$0")/.."
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-10}"

# Every model file runs even when an earlier one fails (--no-fail-fast): a
# planted bug that breaks one file's set-up must not hide the marker
# another file's model prints (newest_match_remove did).
run_models() { # $1 = planted bug (build.rs's CCF_LOOM_CANARY; empty: none), $2 = target dir, $3 = log file, then libtest args
    local bug="$1" dir="$2" log="$3"
    shift 3
    # The bug goes through build.rs, not RUSTFLAGS: every canary build then
    # shares the dependencies' artefacts, and rebuilds only this crate and
    # the models.
    # shellcheck disable=SC2086 # $LOOM_TESTS: cargo's test selection, word-split on purpose
    CCF_LOOM_CANARY="$bug" RUSTFLAGS="--cfg concurrent_cuckoo_loom" \
        cargo test --release -p loom-tests ${LOOM_TESTS:-} --target-dir "$dir" --no-fail-fast -- --test-threads=2 --nocapture "$@" 2>&1 | tee "$log"
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
bugs=(reorder skip_bump skip_remove_bump newest_match_remove clear_aba relaxed_retire publish_before_mark publish_before_reopen unbracketed_move remove_ignores_moves unvalidated_take sequence_after_levels relaxed_move_end relaxed_close windowed_no_future windowed_unvalidated_generation windowed_unlocked_sweep windowed_jump_unflagged windowed_jump_by_tag windowed_sweep_after_publish windowed_cur_before_lock windowed_move_expired windowed_fallback_cur_before_lock windowed_hop_into_occupied_unbumped windowed_sweep_clears_next windowed_help_sweeps_for_next_generation windowed_sweep_counts_unlocked unique_unvalidated_check primary_insert_unlocked primary_remove_ignores_alternate remove_primary_only one_move_alternate_unlocked snapshot_writer_skips_copy snapshot_marks_outside_barrier unique_batch_unlocked)
# The failure each planted bug must cause (the models' panic messages).
declare -A marker=(
    [reorder]="LOST FINGERPRINT"
    [skip_bump]="LOST FINGERPRINT"
    [skip_remove_bump]="LOST FINGERPRINT"
    [newest_match_remove]="LOST FINGERPRINT"
    [clear_aba]="FULL WITH ROOM"
    [relaxed_retire]="LEVEL NOT RETIRED"
    [publish_before_mark]="LOST FINGERPRINT"
    [publish_before_reopen]="FULL WITH ROOM"
    [unbracketed_move]="LOST FINGERPRINT"
    [remove_ignores_moves]="REMOVE MISSED"
    [unvalidated_take]="LOST FINGERPRINT"
    [sequence_after_levels]="LOST FINGERPRINT"
    [relaxed_move_end]="LOST FINGERPRINT"
    [relaxed_close]="LOST FINGERPRINT"
    [windowed_no_future]="LOST FINGERPRINT"
    [windowed_unvalidated_generation]="LOST FINGERPRINT"
    [windowed_unlocked_sweep]="LOST FINGERPRINT"
    [windowed_jump_unflagged]="LOST FINGERPRINT"
    [windowed_jump_by_tag]="EXPIRED KEY FOUND"
    [windowed_sweep_after_publish]="EXPIRED KEY FOUND"
    [windowed_cur_before_lock]="EXPIRED KEY FOUND"
    [windowed_move_expired]="EXPIRED KEY FOUND"
    [windowed_fallback_cur_before_lock]="EXPIRED KEY FOUND"
    [windowed_hop_into_occupied_unbumped]="LOST FINGERPRINT"
    [windowed_sweep_clears_next]="LOST FINGERPRINT"
    [windowed_help_sweeps_for_next_generation]="LOST FINGERPRINT"
    [windowed_sweep_counts_unlocked]="LEN WRONG"
    [unique_unvalidated_check]="DUPLICATE ADMITTED"
    [unique_batch_unlocked]="DUPLICATE ADMITTED"
    [primary_insert_unlocked]="LOST FINGERPRINT"
    [primary_remove_ignores_alternate]="LOST FINGERPRINT"
    [remove_primary_only]="REMOVE MISSED"
    [one_move_alternate_unlocked]="LOST FINGERPRINT"
    [snapshot_writer_skips_copy]="LOST FINGERPRINT"
    [snapshot_marks_outside_barrier]="LOST FINGERPRINT"
)
# The model files that catch each planted bug (a windowed bug not listed
# here runs windowed.rs).
declare -A canary_files=(
    [windowed_fallback_cur_before_lock]="--test windowed_paths"
    [windowed_hop_into_occupied_unbumped]="--test windowed_paths"
    [windowed_sweep_clears_next]="--test windowed_paths"
    [windowed_help_sweeps_for_next_generation]="--test windowed_paths"
    [windowed_sweep_counts_unlocked]="--test windowed_paths"
    [unique_unvalidated_check]="--test compaction"
    [unique_batch_unlocked]="--test models"
    [snapshot_writer_skips_copy]="--test snapshots"
    [snapshot_marks_outside_barrier]="--test snapshots"
    [reorder]="--test models --test single_lock"
    [skip_bump]="--test models"
    [skip_remove_bump]="--test models"
    [newest_match_remove]="--test scalable --test compaction"
    [clear_aba]="--test scalable"
    [relaxed_retire]="--test scalable"
    [publish_before_mark]="--test scalable"
    [publish_before_reopen]="--test scalable --test compaction"
    [unbracketed_move]="--test scalable --test compaction"
    [remove_ignores_moves]="--test scalable"
    [unvalidated_take]="--test compaction"
    [sequence_after_levels]="--test compaction"
    [relaxed_move_end]="--test scalable --test compaction"
    [relaxed_close]="--test scalable --test compaction"
    [primary_insert_unlocked]="--test models --test single_lock --test scalable --test compaction"
    [primary_remove_ignores_alternate]="--test models --test single_lock"
    [remove_primary_only]="--test models --test single_lock --test scalable --test compaction"
    [one_move_alternate_unlocked]="--test one_move"
)
# LOOM_CANARIES="bug ..." runs only those planted bugs (to check new ones
# without rebuilding every other; CI runs them all).
if [[ -n "${LOOM_CANARIES:-}" ]]; then
    read -ra bugs <<<"$LOOM_CANARIES"
fi
all_files=0
[[ "${2:-}" == "--all-files" ]] && all_files=1
for bug in "${bugs[@]}"; do
    want="${marker[$bug]}"
    log="target/loom-canary-${bug}.log"
    mkdir -p target
    # The three-thread model (1.7M interleavings, most of the suite's time)
    # is skipped here: every planted bug is caught by smaller models, and a
    # bug it does not touch would otherwise cost its full run per canary.
    # Each bug runs only the model files that catch it (a windowed bug
    # lives in src/windowed/, which only the windowed models use): every
    # other file would cost its build and its full run per canary. The
    # lists are the files whose models failed when each bug ran against
    # every file (scripts/loom.sh --canary --all-files runs them so again,
    # to redraw the lists after models change).
    tests="${canary_files[$bug]:-}"
    if [[ "$bug" == windowed_* && -z "$tests" ]]; then
        tests="--test windowed"
    fi
    if [[ "$all_files" == 1 ]]; then
        tests=""
    fi
    if LOOM_TESTS="$tests" run_models "$bug" "target/loom-canary" "$log" \
        --skip two_displacing_inserters_and_a_reader >/dev/null; then
        echo "CANARY NOT CAUGHT: with bug '${bug}' every loom model passed"
    elif grep -q "$want" "$log"; then
        # Model names from the panic lines ("thread 'NAME' (id) panicked"):
        # libtest's "test NAME ... FAILED" lines can be garbled by the
        # panicking threads' output, which runs concurrently.
        failed=$( (grep -oE "^thread '[a-z0-9_]+'( \([0-9]+\))? panicked" "$log" || true) |
            sed -E "s/^thread '([a-z0-9_]+)'.*/\1/" | sort -u)
        echo "canary '${bug}' caught: $(grep -c . <<<"$failed") model(s) failed with ${want}:"
        sed 's/^/    /' <<<"$failed"
        caught=$((caught + 1))
    else
        echo "CANARY NOT CAUGHT: with bug '${bug}' the models failed, but not with ${want}:"
        grep -E "panicked|error" "$log" | head -5
    fi
done
echo "loom canary: ${caught}/${#bugs[@]} planted bugs caught in $(( $(date +%s) - start )) s"
if [[ "$caught" == "${#bugs[@]}" ]]; then
    exit 1 # the expected outcome: the buggy filter fails the models
fi
exit 0
