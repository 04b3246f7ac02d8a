"""Files exchanged with `ccf` both ways: the same keys answer the same."""

import json
import subprocess

import pytest

from concurrent_cuckoo import CuckooFilter, FrozenFilter, ScalableCuckooFilter

LINES = [f"host-{i}.example" for i in range(2000)] + ["héllo wörld", "12345", "-1", "tab\there", "x"]


def run(ccf, *args, input=None):
    return subprocess.run([ccf, *args], input=input, capture_output=True, check=False)


@pytest.mark.parametrize("grow", [False, True])
def test_a_ccf_built_filter_answers_every_line_in_python(ccf, tmp_path, grow):
    src = tmp_path / "lines.txt"
    src.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    out = tmp_path / "built.ccf"
    size = ["--grow", "--capacity", "500"] if grow else ["--capacity", "3000"]
    done = run(ccf, "build", str(src), *size, "-q", "-o", str(out))
    assert done.returncode == 0, done.stderr.decode()
    if grow:
        f = ScalableCuckooFilter.load(out)
        assert f.levels > 1
    else:
        f = FrozenFilter.open(out)
        assert all(line in CuckooFilter.load(out) for line in LINES)
    assert len(f) == len(LINES)
    assert all(line in f for line in LINES)
    assert all(line.encode() in f for line in LINES)
    assert f.contains_many(LINES).all()
    # The int 12345 is the u64 key, not the line "12345".
    absent = [f"other-{i}" for i in range(2000)]
    assert f.contains_many(absent).sum() <= 5


def query(ccf, path, items):
    done = run(ccf, "query", str(path), "--", *items)
    assert done.returncode in (0, 1), done.stderr.decode()
    answers = {}
    for line in done.stdout.decode().splitlines():
        item, _, bit = line.rpartition("\t")
        answers[item] = bit == "1"
    return done.returncode, answers


@pytest.mark.parametrize("cls", [CuckooFilter, ScalableCuckooFilter])
def test_a_python_saved_filter_answers_the_same_in_ccf(ccf, tmp_path, cls):
    f = cls(500) if cls is ScalableCuckooFilter else cls(3000)
    f.add_many([l for l in LINES if "\t" not in l])
    path = tmp_path / "py.ccf"
    f.save(path)
    present = [l for l in LINES if "\t" not in l]
    code, answers = query(ccf, path, present)
    assert code == 0
    assert answers == {l: True for l in present}
    absent = [f"other-{i}" for i in range(300)]
    code, answers = query(ccf, path, absent)
    assert code == 1
    assert answers == {a: (a in f) for a in absent}
    info = json.loads(run(ccf, "info", "--json", str(path)).stdout)
    assert info["items"] == len(f)
    assert info["capacity"] == f.capacity
    assert info["false_positive_bound"] == pytest.approx(f.false_positive_bound)
    assert info["levels"] == (f.levels if cls is ScalableCuckooFilter else 1)
