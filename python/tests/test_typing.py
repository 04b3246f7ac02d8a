"""The type stubs, checked as users meet them: `mypy --strict` on the
READMEs' Python examples, and `stubtest` against the installed module
(scripts/test-python.sh installs the pinned mypy)."""

import re
import subprocess
import sys

import pytest

pytest.importorskip("mypy")

READMES = ["README.md", "python/README.md"]


def run(args, cwd):
    done = subprocess.run(
        [sys.executable, "-m", *args], cwd=cwd, capture_output=True, text=True, timeout=600
    )
    return done.returncode, done.stdout + done.stderr


def test_readme_examples_pass_mypy_strict(repo, tmp_path):
    files = []
    for readme in READMES:
        blocks = re.findall(r"```python\n(.*?)```", (repo / readme).read_text(), flags=re.S)
        assert blocks, readme
        for i, code in enumerate(blocks):
            path = tmp_path / f"{readme.replace('/', '_').replace('.', '_')}_{i}.py"
            path.write_text(code)
            files.append(str(path))
    # A cache beside the venv (the tests run from target/): warm runs take
    # a second or two.
    rc, out = run(["mypy", "--strict", "--cache-dir", "mypy-cache", *files], cwd=".")
    assert rc == 0, out


def test_a_subclass_is_a_type_error(tmp_path):
    code = tmp_path / "sub.py"
    code.write_text(
        "from concurrent_cuckoo import CuckooFilter\n"
        "import numpy as np\n"
        "class Mine(CuckooFilter): ...\n"
        "f = CuckooFilter(np.int64(10))\n"
        "f.add(np.uint64(3))\n"
        "f.add(3.5)\n"
    )
    rc, out = run(["mypy", "--strict", "--cache-dir", "mypy-cache", str(code)], cwd=".")
    assert rc == 1
    assert 'Cannot inherit from final class "CuckooFilter"' in out, out
    assert "sub.py:6: error" in out and "sub.py:4" not in out and "sub.py:5" not in out, out


def test_stubtest_finds_nothing():
    rc, out = run(["mypy.stubtest", "concurrent_cuckoo", "--mypy-config-file", "/dev/null"], cwd=".")
    assert rc == 0, out
