#!/usr/bin/env bash
# Before/after lookup benchmark: the same program (scripts/ab-lookups/main.rs)
# built against an older commit of the library and against the working tree,
# run alternately, round after round, so a slow spell of a shared machine
# hits both sides alike.
#
#   scripts/ab-lookups.sh OLD_COMMIT [ROUNDS] [BITS MIB]...
#   scripts/ab-lookups.sh 818fd9c 7 16 1 16 256     # in cache, and 256 MiB
#   scripts/ab-lookups.sh 818fd9c 7 mix 64           # two threads, 90/5/5, 64 MiB
#   scripts/ab-lookups.sh 68dce41 9 sremove 1        # growing filter: insert+remove
#   scripts/ab-lookups.sh 51a7421 7 sgrow 4          # growth 2, four levels
#   scripts/ab-lookups.sh 00595cb 7 writes 1 writes 64  # per-key insert / remove
#
# A configuration `mix MIB` runs the two-thread 90/5/5 mix (see main.rs)
# instead of the one-thread lookups: each round is one run of each side of
# five one-second rounds, of which each side reports the median.
# Prints, for each configuration, each side's median ns per lookup and the
# median over rounds of the paired ratio new/old (each round's new run
# divided by the old run next to it). Builds in target/ab-lookups; the old
# commit is checked out into a temporary git worktree, removed at the end.
set -euo pipefail
# The unstable hooks the drivers use (bucket counts) are behind the
# `unstable` feature in revisions that have one.
unstable_feature() { grep -q '^unstable = ' "$1/Cargo.toml" && echo ', features = ["unstable"]' || true; }
cd "$(dirname "$0")/.."
old=${1:?usage: scripts/ab-lookups.sh OLD_COMMIT [ROUNDS] [BITS MIB]...}
rounds=${2:-7}
shift $(( $# >= 2 ? 2 : 1 ))
configs=("$@")
(( ${#configs[@]} )) || configs=(16 1 16 256)

root=$(pwd)
work="$root/target/ab-lookups"
mkdir -p "$work"
tree="$work/old-tree"
git worktree remove --force "$tree" 2>/dev/null || true
git worktree add --detach --force "$tree" "$old" >/dev/null
trap 'git -C "$root" worktree remove --force "$tree" 2>/dev/null || true' EXIT

# One tiny crate per side, sharing the program and the lock file.
build() { # name library-path
    local dir="$work/$1"
    mkdir -p "$dir/src"
    cp scripts/ab-lookups/main.rs "$dir/src/main.rs"
    cat >"$dir/Cargo.toml" <<EOF
[package]
name = "ab-lookups-$1"
version = "0.0.0"
edition = "2021"
publish = false
[workspace]
[dependencies]
concurrent-cuckoo = { path = "$2"$(unstable_feature "$2") }
libc = "0.2"
[profile.release]
debug = 1
EOF
    (cd "$dir" && cargo build --release --quiet)
    echo "$dir/target/release/ab-lookups-$1"
}
old_bin=$(build old "$tree")
new_bin=$(build new "$root")
echo "ab-lookups: old = $(git rev-parse --short "$old"), new = working tree at $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (modified)'), $rounds rounds"

set -- "${configs[@]}"
while (( $# >= 2 )); do
    bits=$1 mib=$2
    shift 2
    : >"$work/old.txt"
    : >"$work/new.txt"
    for _ in $(seq "$rounds"); do
        "$old_bin" "$bits" "$mib" 5 >>"$work/old.txt"
        "$new_bin" "$bits" "$mib" 5 >>"$work/new.txt"
    done
    python3 - "$work/old.txt" "$work/new.txt" "$bits" "$mib" <<'PY'
import re, statistics, sys
if sys.argv[3] == "mix":
    pat = r'wall ([\d.]+) cpu ([\d.]+)'
    old, new = ([list(map(float, re.search(pat, l).groups())) for l in open(p)] for p in sys.argv[1:3])
    print(f"\nTwo threads, 90% contains / 5% insert / 5% remove, 16-bit fingerprints, {sys.argv[4]} MiB at 80% load, M operations/s (median of {len(old)} rounds)\n")
    print("| rate | old | new | new / old (median of paired rounds) |")
    print("|---|---:|---:|---:|")
    for i, name in enumerate(["wall clock", "sum of per-thread CPU-time rates"]):
        ratio = statistics.median(n[i] / o[i] for o, n in zip(old, new))
        print(f"| {name} | {statistics.median(o[i] for o in old):.1f} | {statistics.median(n[i] for n in new):.1f} | {ratio:.2f} |")
    sys.exit(0)
if sys.argv[3] == "writes":
    pat = r'insert ([\d.]+) ns remove ([\d.]+) ns'
    old, new = ([list(map(float, re.search(pat, l).groups())) for l in open(p)] for p in sys.argv[1:3])
    print(f"\nPer-key writes, one thread, an empty 16-bit table of {sys.argv[4]} MiB filled to 92% and emptied, ns per operation (median of {len(old)} rounds)\n")
    print("| operation | old | new | new / old (median of paired rounds) |")
    print("|---|---:|---:|---:|")
    for i, name in enumerate(["`insert_hash`", "`remove_hash`"]):
        ratio = statistics.median(n[i] / o[i] for o, n in zip(old, new))
        print(f"| {name} | {statistics.median(o[i] for o in old):.1f} | {statistics.median(n[i] for n in new):.1f} | {ratio:.2f} |")
    sys.exit(0)
if sys.argv[3] == "sgrow":
    pat = r'pair ([\d.]+) ns lookup ([\d.]+) ns'
    old, new = ([list(map(float, re.search(pat, l).groups())) for l in open(p)] for p in sys.argv[1:3])
    print(f"\nA growing filter of growth 2, four 16-bit levels ({sys.argv[4]} MiB of keys), one thread, ns per insert_hash + remove_hash pair and per absent contains_hash (median of {len(old)} rounds)\n")
    print("| operation | old | new | new / old (median of paired rounds) |")
    print("|---|---:|---:|---:|")
    for i, name in enumerate(["insert + remove", "absent lookup"]):
        ratio = statistics.median(n[i] / o[i] for o, n in zip(old, new))
        print(f"| {name} | {statistics.median(o[i] for o in old):.1f} | {statistics.median(n[i] for n in new):.1f} | {ratio:.2f} |")
    sys.exit(0)
if sys.argv[3] == "sremove":
    old, new = ([float(re.search(r'pair ([\d.]+)', l).group(1)) for l in open(p)] for p in sys.argv[1:3])
    ratio = statistics.median(n / o for o, n in zip(old, new))
    print(f"\nA growing filter of two 16-bit levels (growth 1), {sys.argv[4]} MiB at 90%, one thread, ns per insert_hash + remove_hash pair (median of {len(old)} rounds)\n")
    print("| operation | old | new | new / old (median of paired rounds) |")
    print("|---|---:|---:|---:|")
    print(f"| insert + remove | {statistics.median(old):.1f} | {statistics.median(new):.1f} | {ratio:.2f} |")
    sys.exit(0)
def rows(path):
    pat = r'contains ([\d.]+) contains_hash ([\d.]+) batch32 ([\d.]+) hash_batch32 ([\d.]+)'
    return [list(map(float, re.search(pat, line).groups())) for line in open(path)]
old, new = rows(sys.argv[1]), rows(sys.argv[2])
print(f"\n{sys.argv[3]}-bit fingerprints, {sys.argv[4]} MiB, absent keys, ns per lookup (median of {len(old)} rounds)\n")
print("| lookup | old | new | new / old (median of paired rounds) |")
print("|---|---:|---:|---:|")
for i, name in enumerate(["contains", "contains_hash", "contains_batch (32)", "contains_hash_batch (32)"]):
    ratio = statistics.median(n[i] / o[i] for o, n in zip(old, new))
    print(f"| `{name}` | {statistics.median(o[i] for o in old):.1f} | {statistics.median(n[i] for n in new):.1f} | {ratio:.2f} |")
PY
done
