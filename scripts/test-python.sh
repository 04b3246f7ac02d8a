#!/usr/bin/env bash
# The Python package's tests (python/tests), as a user installs it:
#
#   scripts/test-python.sh
#
# 1. makes a venv under target/python-venv (kept between runs) with pinned
#    pytest and numpy from PyPI;
# 2. `pip install ./python`: PEP 517 through maturin (fetched by pip), a
#    release build of the extension in target/ (no LTO: the workspace's
#    release profile), reused when nothing changed;
# 3. runs pytest against `ccf` (CCF, else target/debug/ccf that `cargo
#    test --workspace` builds; built here if missing).
# Exits non-zero when any step or test fails.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=target/python-venv
python=${PYTHON:-python3}
if [[ ! -x $venv/bin/python ]]; then
    "$python" -m venv "$venv"
fi
# Pinned: numpy 2.4.6 is the newest for Python 3.11 (2.5 needs 3.12);
# pandas only to test its Series and Index as batches (not a dependency
# of the package); mypy for `mypy --strict` on the READMEs' examples and
# `stubtest` on the stubs (python/tests/test_typing.py: about 15 s cold,
# a few seconds with the cache it keeps in target/mypy-cache).
"$venv/bin/pip" install -q --disable-pip-version-check "pytest==9.2.0" "numpy==2.4.6" \
    "pandas==3.1.1; python_version >= '3.11'" "mypy==2.4.1"
"$venv/bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps ./python

if [[ -z ${CCF:-} ]]; then
    CCF=$PWD/target/debug/ccf
    [[ -x $CCF ]] || cargo build -p ccf
fi
export CCF
# From target/, so the tests import the installed package, not python/'s
# source folder (which has no compiled module).
cd target
exec "$OLDPWD/$venv/bin/python" -m pytest -q -p no:cacheprovider "$OLDPWD/python/tests" "$@"
