#!/usr/bin/env bash
# Instructions per per-key write and lookup, counted by callgrind (exact
# and repeatable whatever the machine's load), for the filters of
# scripts/bench-writes.sh: ours through the C ABI, VQF-16 (plain and
# thread-safe) and fastfilter_cpp's cuckoo-16, one thread. Not run in CI.
#
#   scripts/write-instructions.sh VQF_DIR FASTFILTER_CPP_DIR [LOG2_SLOTS]   (default 20)
#
# valgrind lacks AVX-512, so everything is built for x86-64-v3
# (bench-writes.sh with MARCH=x86-64-v3): VQF's AVX2 build, which shifts
# a block's tags with memmove where its AVX-512 build uses one vpermb,
# and no TC (AVX-512 only). The library is built as bench-writes.sh
# builds it (leave RUSTFLAGS without target-cpu=native for valgrind).
# Counts are the inclusive instructions of each timed loop (writes.h's
# count_true: the call and everything it calls) over the keys it ran.
# LL_BYTES=N adds callgrind's cache simulation with a last-level cache of
# N bytes (e.g. 1048576, smaller than the 2^20-slot tables): a second
# table gives its data misses per key, about the distinct lines a key's
# operation touches when the table is out of cache.
set -euo pipefail
(( $# >= 2 )) || { sed -n 2,20p "$0"; exit 2; }
cd "$(dirname "$0")/.."
lg=${3:-20}
bin=$(MARCH=x86-64-v3 WRITES_CALLGRIND=1 WRITES_BUILD_ONLY=1 scripts/bench-writes.sh "$1" "$2" | tail -1)
out=$(dirname "$bin")/callgrind
rm -rf "$out"
mkdir -p "$out"
# As writes.cc: n keys inserted and removed, m looked up of each kind.
n=$(awk -v lg="$lg" 'BEGIN { printf "%d", 0.92 * 2 ^ lg }')
m=$(( n < 4194304 ? n : 4194304 ))
# Collecting only inside the loops, the program dumps after each phase
# (writes.h's WRITES_PHASE_DONE): cg.out.K holds phase K's loop alone,
# named "FILTER / PHASE" in its trigger line.
cache=()
[[ -z ${LL_BYTES:-} ]] || cache=(--cache-sim=yes "--LL=$LL_BYTES,16,64")
CCF_WRITES_ONLY=ours,vqf,cuckoo16 CCF_WRITES_REPS=1 CCF_WRITES_THREADS=1 \
    valgrind --tool=callgrind "${cache[@]}" --callgrind-out-file="$out/cg.out" \
    --toggle-collect='*count_true<*' "$bin" "$lg" >"$out/stdout" 2>"$out/valgrind.log"
# table TITLE EVENT...: per key, the sum of the named events of each dump.
table() {
    local title=$1
    shift
    echo
    echo "2^$lg slots, $n keys, 92% load; $title per key (callgrind, x86-64-v3 builds)"
    echo
    echo "| filter | insert | remove | present lookup | absent lookup |"
    echo "|---|---:|---:|---:|---:|"
    for f in $(ls "$out"/cg.out.* | sort -V); do
        name=$(grep -a -m1 '^desc: Trigger: Client Request: ' "$f" | sed 's/^desc: Trigger: Client Request: //')
        events=$(grep -a -m1 '^events:' "$f" | cut -d' ' -f2-)
        summary=$(grep -a -m1 '^summary:' "$f" | cut -d' ' -f2-)
        echo "$name|$events|$summary"
    done | awk -F'|' -v n="$n" -v m="$m" -v want="$*" '
    {
        split($1, fp, " / "); f = fp[1]; p = fp[2]
        ne = split($2, ev, " "); split($3, val, " "); sum = 0
        for (i = 1; i <= ne; i++) if (index(" " want " ", " " ev[i] " ")) sum += val[i]
        per[f, p] = sum / (p == "insert" || p == "remove" ? n : m)
        if (!(f in seen)) { seen[f] = 1; order[++count] = f }
    }
    END {
        split("insert remove present absent", phases, " ")
        for (i = 1; i <= count; i++) {
            f = order[i]
            line = "| " f (f ~ /VQF/ ? " (AVX2 build)" : "") " |"
            for (j = 1; j <= 4; j++)
                line = line (((f, phases[j]) in per) ? sprintf(" %.1f |", per[f, phases[j]]) : " - |")
            print line
        }
    }'
}
table instructions Ir
[[ -z ${LL_BYTES:-} ]] || table "first-level data misses (D1mr + D1mw, 48 KiB L1)" D1mr D1mw
[[ -z ${LL_BYTES:-} ]] || table "last-level data misses (DLmr + DLmw, LL of $LL_BYTES bytes)" DLmr DLmw
