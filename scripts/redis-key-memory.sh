#!/usr/bin/env bash
# Memory of small filters made the way most Redis users make them: by
# `CF.ADD` / `CF.INSERT` on a missing key, with the server's defaults, for
# several builds of this module and RedisBloom side by side (one server
# each, Debian's redis-server). Prints a markdown table of `MEMORY USAGE`:
# a key of 1 member, of 100, and the mean bytes per member of 20 keys of
# 10,000 (10 `CF.INSERT` of 1,000 each), with their levels (sub-filters).
#
#   scripts/redis-key-memory.sh MODULE.so [MODULE.so...]
#       # absolute or relative paths: each a build of this module or
#       # RedisBloom's redisbloom.so
#
# Exact whatever the machine's load; a few seconds per module.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib/apt.sh
source scripts/lib/apt.sh
apt_install_missing redis-key-memory redis-server redis-tools
(( $# )) || { echo "usage: $0 MODULE.so [MODULE.so...]" >&2; exit 2; }

tmp=$(mktemp -d)
port=
cleanup() {
    [[ -n $port ]] && redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT
python3 - >"$tmp/fill.resp" <<'PY'
import sys
out = sys.stdout.buffer
def command(*parts):
    out.write(b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts))
for k in range(20):
    for c in range(10):
        command(b"CF.INSERT", b"auto:%d" % k, b"ITEMS", *(b"%d:%d" % (k, c * 1000 + j) for j in range(1000)))
command(b"CF.ADD", b"one", b"x")
for i in range(100):
    command(b"CF.ADD", b"hundred", b"h%d" % i)
PY

echo "| module | 1 member: bytes | 100 members: bytes | 10,000 members: bytes per member | levels of those |"
echo "|---|---:|---:|---:|---:|"
for module in "$@"; do
    module=$(realpath "$module")
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$tmp" \
        --loadmodule "$module" --logfile "$tmp/server.log" --daemonize yes
    for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
    redis-cli -p "$port" --pipe <"$tmp/fill.resp" >/dev/null
    total=0
    for k in $(seq 0 19); do
        total=$(( total + $(redis-cli -p "$port" MEMORY USAGE "auto:$k") ))
    done
    # CF.INFO's fields in order: "Number of filters" is the third pair.
    levels=$(redis-cli -p "$port" CF.INFO auto:0 | sed -n 6p)
    one=$(redis-cli -p "$port" MEMORY USAGE one)
    hundred=$(redis-cli -p "$port" MEMORY USAGE hundred)
    redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
    port=
    python3 -c "import sys; n, one, hundred, total, levels = sys.argv[1:]; print(f'| {n} | {int(one):,} | {int(hundred):,} | {int(total) / 200000:.2f} | {levels} |')" \
        "$(basename "$module" .so)" "$one" "$hundred" "$total" "$levels"
done
