#!/usr/bin/env bash
# The Python package's tests (python/tests), as a user installs it:
#
#   scripts/test-python.sh
#
# 1. makes a venv under target/python-venv (kept between runs) with pinned
#    pytest and numpy from PyPI;
# 2. `pip wheel ./python`: PEP 517 through maturin (fetched by pip), a
#    release build of the extension in target/ (no LTO: the workspace's
#    release profile; stripped), reused when nothing changed; checks the
#    wheel's size and tag and installs it;
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
    "pandas==3.1.1; python_version >= '3.11'" "mypy==2.4.1" "auditwheel==6.8.2"
# The wheel users would get from a source build (PEP 517 through maturin,
# a release build in target/, reused when nothing changed), checked and
# installed: stripped (a few MB at most), abi3, and what auditwheel says
# of its platform (the manylinux release wheels come from
# .github/workflows/python-release.yml or `maturin build --zig
# --compatibility manylinux2014`: python/README.md).
wheels=target/python-wheel-check
rm -rf "$wheels"
"$venv/bin/pip" wheel -q --disable-pip-version-check --no-deps -w "$wheels" ./python
wheel=$(echo "$wheels"/concurrent_cuckoo-*-cp310-abi3-*.whl)
[[ -f $wheel ]] || { echo "no abi3 wheel in $wheels" >&2; exit 1; }
# The extension's size unpacked (a wheel is compressed: an unstripped
# 11 MB extension packs to about 3 MB).
"$venv/bin/python" - "$wheel" <<'PY'
import sys, zipfile
wheel = sys.argv[1]
ext = [i for i in zipfile.ZipFile(wheel).infolist() if "_native" in i.filename and not i.filename.endswith(".pyi")]
assert len(ext) == 1, ext
size = ext[0].file_size
assert size < 4 << 20, f"{ext[0].filename}: {size} bytes, not stripped?"
print(f"wheel {wheel.rsplit('/', 1)[-1]}: extension {size // 1024} KiB")
PY
tag=$("$venv/bin/auditwheel" show "$wheel" | tr -s ' \n' ' ' | grep -o 'platform tag: "[^"]*"' || true)
echo "auditwheel: $tag"
[[ $tag == *manylinux_* ]] || { echo "auditwheel finds no manylinux tag for $wheel" >&2; exit 1; }
"$venv/bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps "$wheel"

if [[ -z ${CCF:-} ]]; then
    CCF=$PWD/target/debug/ccf
    [[ -x $CCF ]] || cargo build -p ccf
fi
export CCF
# From target/, so the tests import the installed package, not python/'s
# source folder (which has no compiled module).
cd target
exec "$OLDPWD/$venv/bin/python" -m pytest -q -p no:cacheprovider "$OLDPWD/python/tests" "$@"
