#!/usr/bin/env bash
# Instructions per lookup, counted by callgrind (exact and repeatable
# whatever the machine's load): the driver scripts/lookup-instructions/main.rs
# built against each given commit (or `.` for the working tree), each kind
# of operation run N times inside one function that callgrind collects alone.
#
#   scripts/lookup-instructions.sh [REV]...        # default: . (the working tree)
#   scripts/lookup-instructions.sh 818fd9c 0f7cdd8 .
#
# Environment: BITS (16), MIB (1: in cache), N (100000), KINDS (all; also
# windowed_contains_hash_miss, windowed_contains_hash_hit, windowed_refresh
# and their wide_ forms: a windowed filter in 16- or 32-bit lanes;
# scalable_insert_remove, scalable2_insert_remove: growing filters of one
# and two levels; insert_remove_half: insert_remove at 45% load).
# Prints one markdown row per kind: instructions per operation for each REV,
# the whole loop iteration and, in brackets, the part inside the functions
# it calls (for `contains_hash`, the lookup function alone; keyed lookups
# hash inline, in the loop).
# Builds in target/lookup-instructions; a commit is checked out into a
# temporary git worktree there, removed at the end.
set -euo pipefail
# The unstable hooks the drivers use (bucket counts) are behind the
# `unstable` feature in revisions that have one.
unstable_feature() { grep -q '^unstable = ' "$1/Cargo.toml" && echo ', features = ["unstable"]' || true; }
cd "$(dirname "$0")/.."
(( $# )) || set -- .
bits=${BITS:-16} mib=${MIB:-1} n=${N:-100000}
kinds=(${KINDS:-contains_hash_miss contains_hash_hit contains_miss contains_hit hash_batch_miss batch_miss insert_remove insert_remove_half scalable_insert_remove scalable2_insert_remove})
root=$(pwd)
work="$root/target/lookup-instructions"
mkdir -p "$work"
trees=()
trap 'for t in "${trees[@]}"; do git -C "$root" worktree remove --force "$t" 2>/dev/null || true; done' EXIT

# The library source of a revision: the working tree, or a worktree of
# the commit (made here, in this shell, so that the trap removes it).
source_of() { # rev -> path
    if [[ $1 == . ]]; then echo "$root"; else echo "$work/src-$(git rev-parse --short "$1")"; fi
}
for rev in "$@"; do
    [[ $rev == . ]] && continue
    lib=$(source_of "$rev")
    git worktree remove --force "$lib" 2>/dev/null || true
    git worktree add --detach --force "$lib" "$rev" >/dev/null
    trees+=("$lib")
done

build() { # rev -> binary path
    local rev=$1 name lib
    lib=$(source_of "$rev")
    if [[ $rev == . ]]; then name=tree; else name=$(git rev-parse --short "$rev"); fi
    local dir="$work/$name"
    mkdir -p "$dir/src"
    cp scripts/lookup-instructions/main.rs "$dir/src/main.rs"
    cat >"$dir/Cargo.toml" <<TOML
[package]
name = "lookup-instructions-$name"
version = "0.0.0"
edition = "2021"
publish = false
[workspace]
[dependencies]
concurrent-cuckoo = { path = "$lib"$(unstable_feature "$lib") }
[profile.release]
debug = 1
TOML
    (cd "$dir" && cargo build --release --quiet)
    echo "$dir/target/release/lookup-instructions-$name"
}

bins=()
for rev in "$@"; do bins+=("$(build "$rev")"); done
echo "$bits-bit fingerprints, $mib MiB at 90% load, $n operations; instructions per operation (callgrind):"
echo "the whole loop iteration, and in brackets the part inside the functions the loop calls"
echo
printf '| operation |'; for rev in "$@"; do printf ' %s |' "$([[ $rev == . ]] && echo "tree ($(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src || echo +))" || git rev-parse --short "$rev")"; done; echo
printf '|---|'; for _ in "$@"; do printf -- '---:|'; done; echo
for kind in "${kinds[@]}"; do
    fn=op_${kind%_miss}; fn=${fn%_hit}
    printf '| `%s` |' "$kind"
    for bin in "${bins[@]}"; do
        out="$work/cg.$kind.$(basename "$bin").out"
        valgrind --tool=callgrind --callgrind-out-file="$out" --dump-instr=yes \
            --toggle-collect="$fn" "$bin" "$bits" "$mib" "$kind" "$n" >/dev/null 2>"$out.log"
        # The whole loop iteration, and the part spent inside the calls the
        # loop makes (the lookup function itself, inclusive).
        printf ' %s |' "$(python3 - "$out" "$fn" "$n" <<'PY'
import re, sys
path, fn, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
total, inside, in_fn, after_calls, names = 0, 0, False, False, {}
for line in open(path):
    if line.startswith('summary:'):
        total = int(line.split()[1])
    elif line.startswith(('fn=', 'cfn=')):
        # `fn=(id) name` or `cfn=(id) name` the first time a function
        # appears, `(id)` alone after (callgrind's name compression).
        m = re.match(r'c?fn=\((\d+)\)(?: (.*))?$', line.strip())
        if m.group(2) is not None:
            names[m.group(1)] = m.group(2)
        if line.startswith('fn='):
            in_fn = names.get(m.group(1)) == fn
    elif line.startswith('calls='):
        after_calls = in_fn
    elif after_calls:
        inside += int(line.split()[-1])
        after_calls = False
print(f"{total / n:.1f} ({inside / n:.1f})")
PY
)"
    done
    echo
done
