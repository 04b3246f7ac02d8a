"""to_bytes/from_bytes, save/load and pickle: the same filter back."""

import copy
import pickle

import numpy as np
import pytest

from concurrent_cuckoo import CuckooFilter, ScalableCuckooFilter, WindowedCuckooFilter

KEYS = ["a", b"b", 3, -4, 2**64 - 1] + [f"k{i}" for i in range(500)]


def filled(cls):
    f = {
        CuckooFilter: lambda: CuckooFilter(2000, seed=8),
        ScalableCuckooFilter: lambda: ScalableCuckooFilter(100, seed=8),
        WindowedCuckooFilter: lambda: WindowedCuckooFilter(2000, 3, seed=8),
    }[cls]()
    f.add_many(KEYS)
    return f


def same(a, b):
    assert type(a) is type(b)
    assert len(a) == len(b)
    assert a.capacity == b.capacity
    assert a.false_positive_bound == b.false_positive_bound
    assert a.to_bytes() == b.to_bytes()
    assert all(k in b for k in KEYS)
    probe = np.arange(10_000, 20_000, dtype=np.uint64)
    assert (a.contains_many(probe) == b.contains_many(probe)).all()


CLASSES = [CuckooFilter, ScalableCuckooFilter, WindowedCuckooFilter]


@pytest.mark.parametrize("cls", CLASSES)
def test_bytes_round_trip(cls):
    f = filled(cls)
    data = f.to_bytes()
    assert isinstance(data, bytes)
    same(f, cls.from_bytes(data))
    same(f, cls.from_bytes(bytearray(data)))
    same(f, cls.from_bytes(memoryview(data)))


@pytest.mark.parametrize("cls", CLASSES)
def test_save_and_load(cls, tmp_path):
    f = filled(cls)
    f.save(tmp_path / "f.ccf")
    same(f, cls.load(tmp_path / "f.ccf"))
    f.save(str(tmp_path / "g.ccf"))
    same(f, cls.load(str(tmp_path / "g.ccf")))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.ccf", "g.ccf"]  # no temporary left


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_pickle_round_trip(cls, protocol):
    f = filled(cls)
    g = pickle.loads(pickle.dumps(f, protocol=protocol))
    same(f, g)
    g.add("only in the copy")
    assert len(g) == len(f) + 1  # a copy, not the same table


@pytest.mark.parametrize("cls", CLASSES)
def test_copy_and_deepcopy(cls):
    f = filled(cls)
    same(f, copy.copy(f))
    same(f, copy.deepcopy(f))


def test_windowed_generation_survives_a_round_trip():
    f = WindowedCuckooFilter(100, 2)
    f.add("x")
    f.advance()
    g = WindowedCuckooFilter.from_bytes(f.to_bytes())
    assert g.generation == 1 and "x" in g
    g.advance()
    assert "x" not in g and "x" in f


def test_scalable_levels_survive_a_round_trip():
    f = filled(ScalableCuckooFilter)
    assert f.levels > 1
    assert ScalableCuckooFilter.from_bytes(f.to_bytes()).levels == f.levels
