#!/usr/bin/env bash
# The Python benchmark (not CI): a venv under target/bench-venv with the
# peers (pinned) and this package, then bench.py (arguments go to it) and
# batch_costs.py; with --goals first, goals.py alone (issue 51's speed
# goals against abloom, interleaved, CPU time: a short run).
#
#   python/bench/run.sh [--n 1000000] [--rounds 3]
#   python/bench/run.sh --goals [--n 1000000] [--rounds 7]
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=target/bench-venv
[[ -x $venv/bin/python ]] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check \
    "rbloom==1.5.4" "abloom==1.1.0" "fastbloom-rs==0.5.10" "pyprobables==0.7.0" "numpy==2.4.6"
"$venv/bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps ./python
cd target
# numpy's BLAS threads would spin beside the measured ones.
export OPENBLAS_NUM_THREADS=1
if [[ ${1:-} == --goals ]]; then
    shift
    exec "$OLDPWD/$venv/bin/python" "$OLDPWD/python/bench/goals.py" "$@"
fi
"$OLDPWD/$venv/bin/python" "$OLDPWD/python/bench/bench.py" "$@"
# GIL waits and peak memory of a 5M-key str batch (fresh processes).
"$OLDPWD/$venv/bin/python" "$OLDPWD/python/bench/batch_costs.py"
