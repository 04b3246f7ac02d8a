"""Every type's calls and Python's conventions."""

import re

import numpy as np
import pytest

import concurrent_cuckoo as cc
from concurrent_cuckoo import (
    CuckooFilter,
    FrozenFilter,
    RemovalRefused,
    ScalableCuckooFilter,
    TimedCuckooFilter,
    WindowedCuckooFilter,
)

LIVE = [
    lambda: CuckooFilter(1000, seed=1),
    lambda: ScalableCuckooFilter(1000, seed=1),
    lambda: WindowedCuckooFilter(1000, 4, seed=1),
    lambda: TimedCuckooFilter(1000, 3600.0, seed=1),
]


@pytest.mark.parametrize("make", LIVE)
def test_add_contains_len(make):
    f = make()
    assert len(f) == 0
    assert "a" not in f
    f.add("a")
    f.add(b"b")
    f.add(3)
    assert "a" in f and b"b" in f and 3 in f
    assert len(f) == 3
    # Absent keys (seeded filter: these answers are fixed).
    assert sum(k in f for k in range(1000, 2000)) <= 2


@pytest.mark.parametrize("make", LIVE)
def test_sizes_and_repr(make):
    f = make()
    assert f.capacity >= 1000
    assert f.memory_usage > 0
    assert 0 < f.false_positive_bound <= 0.001
    f.add(1)
    name = type(f).__name__
    assert re.fullmatch(
        rf"{name}\(len=1, capacity={f.capacity}, false_positive_bound=\d\.\d{{3}}e-\d+\)", repr(f)
    )
    assert type(f).__module__ == "concurrent_cuckoo"


def test_fixed_filter_calls():
    f = CuckooFilter(1000, false_positive_rate=0.1, seed=3)
    assert f.fingerprint_bits == 8
    assert f.add("k") is True
    assert f.add("k") is False
    assert f.count("k") == 1
    assert f.add_copy("k") is None
    assert f.count("k") == 2
    assert len(f) == 2
    assert f.remove("k") is True
    assert f.count("k") == 1
    assert f.remove("k") is True
    assert f.remove("k") is False
    assert "k" not in f
    f.add_many(range(100))
    assert len(f) == 100
    s = f.stats()
    assert s["len"] == 100 and s["capacity"] == f.capacity and s["fingerprint_bits"] == 8
    assert s["inserts"] == 102 and s["removes"] == 2
    assert s["memory_usage"] == f.memory_usage
    assert sum(s["path_lengths"]) == 102
    f.clear()
    assert len(f) == 0 and 5 not in f


def test_fixed_filter_rate_sets_fingerprint_bits():
    assert CuckooFilter(100).fingerprint_bits == 16
    assert CuckooFilter(100, 0.1).fingerprint_bits == 8


def test_seed_is_kept_by_the_file():
    a = CuckooFilter(1000, seed=11)
    b = CuckooFilter(1000, seed=12)
    assert a.to_bytes() != b.to_bytes()
    assert CuckooFilter.from_bytes(a.to_bytes()).to_bytes() == a.to_bytes()


def test_scalable_filter_grows_within_its_rate():
    f = ScalableCuckooFilter(1000, false_positive_rate=0.01, seed=5)
    assert f.levels == 1
    f.add_copies_many(np.arange(20_000, dtype=np.uint64))
    assert len(f) == 20_000
    assert f.levels > 1
    assert f.capacity >= 20_000
    assert f.false_positive_bound <= 0.01
    assert f.contains_many(np.arange(20_000, dtype=np.uint64)).all()
    s = f.stats()
    assert s["levels"] == f.levels == len(s["level_stats"])
    assert sum(l["len"] for l in s["level_stats"]) == 20_000
    assert s["len"] == 20_000
    assert f.add(5) is False
    assert f.add(10**12) is True
    assert f.count(10**12) == 1
    assert f.remove(10**12) is True
    assert f.remove(10**12) is False
    f.compact()
    assert len(f) == 20_000
    assert f.contains_many(np.arange(20_000, dtype=np.uint64)).all()
    f.clear()
    assert len(f) == 0


def test_scalable_removes_a_key_with_copies_in_two_levels():
    # A key added in a level of 8-bit fingerprints and again in a grown
    # level of wider ones (issue 53: refused before nested levels). Each
    # remove takes one copy; every other key stays.
    for growth in (2, 3):
        f = ScalableCuckooFilter(64, false_positive_rate=0.1, growth_factor=growth, seed=9)
        f.add("twice")
        f.add_many(range(1000))
        assert f.levels > 1
        assert f.add("twice") is False  # set semantics: no second copy
        f.add_copy("twice")
        held = len(f)
        assert f.remove("twice") is True
        assert f.remove("twice") is True
        assert len(f) == held - 2
        assert all(i in f for i in range(1000))
    assert isinstance(RemovalRefused("x"), cc.CuckooError)


def test_windowed_filter_expires_by_generation():
    f = WindowedCuckooFilter(1000, generations=2, seed=2)
    assert f.generation == 0 and f.generations == 2
    f.add("old")
    assert f.advance() == 1
    f.add("new")
    assert "old" in f and "new" in f
    assert f.advance() == 2
    assert "old" not in f and "new" in f
    assert f.advance_to(10) == 10
    assert "new" not in f
    assert f.advance_to(3) == 10  # never backwards
    assert f.generation == 10
    assert len(f) == 0
    f.add_many(["a", "b"])
    s = f.stats()
    assert s["generation"] == 10 and s["generations"] == 2 and s["len"] == 2
    assert s["slots"] == f.capacity
    assert s["inserts"] == 4


def test_windowed_filters_past_16_bit_lanes():
    # A rate below 9.8e-4 or a window over 29 generations takes 32-bit
    # slots (fingerprint and age tag together): the bound is met and the
    # bytes round-trip; past 253 generations the error names the limit.
    f = WindowedCuckooFilter(5000, generations=100, false_positive_rate=1e-6, seed=3)
    s = f.stats()
    assert s["fingerprint_bits"] + s["tag_bits"] == 32
    assert f.false_positive_bound <= 1e-6
    for g in range(150):
        f.add_many([f"{g}-{i}" for i in range(40)])
        f.advance()
    # At generation 150 the keys of generations 51 to 149 are live.
    assert all(f"{g}-{i}" in f for g in range(51, 150) for i in range(40))
    assert len(f) == 99 * 40
    copy = WindowedCuckooFilter.from_bytes(f.to_bytes())
    assert copy.to_bytes() == f.to_bytes() and len(copy) == 99 * 40
    with pytest.raises(ValueError, match=r"generations must lie in \[1, 253\]"):
        WindowedCuckooFilter(100, 254)
    with pytest.raises(ValueError, match=r"generations must lie in \[1, 5\]"):
        WindowedCuckooFilter(100, 6, false_positive_rate=1e-8)


def test_timed_filter_expires_by_time_and_keeps_its_schedule(tmp_path):
    import pickle
    import time

    # Found for its time to live: an hour, so no pause of a loaded
    # machine can make it expire during the test.
    hour = TimedCuckooFilter(1000, 3600.0, generations=4, seed=3)
    assert hour.time_to_live == 3600.0 and hour.generations == 4
    assert hour.add("session-7") is True
    assert hour.add("session-7") is False  # live: refreshed, not new
    assert "session-7" in hour and len(hour) == 1
    mask = hour.add_many(["session-7", "session-8"])
    assert mask.tolist() == [False, True]
    # The schedule travels with the bytes: the same epoch, the same keys.
    for copy in (TimedCuckooFilter.from_bytes(hour.to_bytes()), pickle.loads(pickle.dumps(hour))):
        assert copy.epoch_ms == hour.epoch_ms
        assert "session-7" in copy and "session-8" in copy
    path = tmp_path / "timed.ccf"
    hour.save(path)
    assert "session-8" in TimedCuckooFilter.load(path)
    # Gone one step after its time to live: 50 ms in two steps, so gone
    # within 75 ms; waiting longer is only safer.
    brief = TimedCuckooFilter(1000, 0.05, generations=2, seed=4)
    brief.add_many(list(range(100)))
    time.sleep(0.3)
    assert sum(k in brief for k in range(100)) <= 1
    assert len(brief) == 0
    # Errors name the argument.
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="time_to_live"):
            TimedCuckooFilter(1000, bad)
    with pytest.raises(ValueError):
        TimedCuckooFilter(1000, 60.0, generations=0)
    with pytest.raises(ValueError, match=r"generations must lie in \[1, 252\]"):
        TimedCuckooFilter(1000, 60.0, generations=253)  # more steps than any slot's tags count
    with pytest.raises(ValueError, match=r"generations must lie in \[1, 4\]"):
        TimedCuckooFilter(1000, 60.0, generations=6, false_positive_rate=1e-8)
    with pytest.raises(ValueError):
        TimedCuckooFilter(1000, 0.002, generations=4)  # under 1 ms a step
    with pytest.raises(ValueError, match="at least 1 ms a generation"):
        TimedCuckooFilter(1000, 0.003, generations=4)
    with pytest.raises(cc.InvalidFilterData):
        TimedCuckooFilter.from_bytes(WindowedCuckooFilter(100, 2).to_bytes())


def test_frozen_filter_answers_as_the_saved_one(tmp_path):
    f = CuckooFilter(5000, seed=4)
    f.add_many([f"k{i}" for i in range(3000)])
    f.add_copy(b"twice")
    f.add_copy(b"twice")
    path = tmp_path / "f.ccf"
    f.save(path)
    z = FrozenFilter.open(str(path))
    assert len(z) == len(f) == 3002
    assert z.capacity == f.capacity
    assert z.fingerprint_bits == f.fingerprint_bits
    assert z.false_positive_bound == f.false_positive_bound
    probe = [f"k{i}" for i in range(6000)]
    assert (z.contains_many(probe) == f.contains_many(probe)).all()
    assert z.count(b"twice") == 2
    assert z.to_bytes() == f.to_bytes()
    assert z.stats() == {
        "len": 3002,
        "capacity": f.capacity,
        "fingerprint_bits": f.fingerprint_bits,
        "memory_usage": z.memory_usage,
        "false_positive_bound": f.false_positive_bound,
    }
    assert repr(z).startswith("FrozenFilter(len=3002,")
    assert not hasattr(z, "add") and not hasattr(z, "remove")


def test_frozen_filter_keeps_the_old_file_across_a_save(tmp_path):
    path = tmp_path / "f.ccf"
    f = CuckooFilter(100, seed=5)
    f.add("before")
    f.save(path)
    z = FrozenFilter.open(path)
    g = CuckooFilter(100, seed=5)
    g.add("after")
    g.save(path)  # a rename over the mapped file
    assert "before" in z and "after" not in z
    assert "after" in FrozenFilter.open(path)


def test_package_exports():
    assert sorted(cc.__all__) == sorted(
        [
            "CuckooError",
            "CuckooFilter",
            "FilterFull",
            "FrozenFilter",
            "InvalidFilterData",
            "RemovalRefused",
            "ScalableCuckooFilter",
            "TimedCuckooFilter",
            "TooManyDuplicates",
            "WindowedCuckooFilter",
            "probe_backend",
        ]
    )
    assert isinstance(cc.probe_backend, str) and cc.probe_backend
    assert CuckooFilter.__doc__ and CuckooFilter.add.__doc__ and CuckooFilter.contains_many.__doc__
