"""Bad input: exceptions, never a crash, and the filter left as it was."""

import math
import pickle

import pytest

from concurrent_cuckoo import (
    CuckooError,
    CuckooFilter,
    FilterFull,
    FrozenFilter,
    InvalidFilterData,
    ScalableCuckooFilter,
    TooManyDuplicates,
    WindowedCuckooFilter,
)

MAKERS = {
    "fixed": lambda cap, rate=0.001: CuckooFilter(cap, rate),
    "scalable": lambda cap, rate=0.001: ScalableCuckooFilter(cap, rate),
    "windowed": lambda cap, rate=0.001: WindowedCuckooFilter(cap, 3, rate),
}


@pytest.mark.parametrize("kind", MAKERS)
@pytest.mark.parametrize("capacity", [0, -1, -(2**70), 2**70])
def test_bad_capacity_is_a_value_error(kind, capacity):
    with pytest.raises(ValueError):
        MAKERS[kind](capacity)


@pytest.mark.parametrize("kind", MAKERS)
@pytest.mark.parametrize("capacity", [1.5, "10", None, True])
def test_non_int_capacity_is_a_type_error(kind, capacity):
    with pytest.raises(TypeError):
        MAKERS[kind](capacity)


@pytest.mark.parametrize("kind", MAKERS)
@pytest.mark.parametrize("rate", [0.0, 1.0, -0.1, 1.5, math.nan, math.inf, -math.inf])
def test_rate_outside_0_1_is_a_value_error(kind, rate):
    with pytest.raises(ValueError, match="false_positive_rate"):
        MAKERS[kind](100, rate)


def test_a_capacity_too_large_for_memory_is_an_error_not_a_crash():
    with pytest.raises((ValueError, MemoryError)):
        CuckooFilter(2**62)


def test_bad_scalable_and_windowed_parameters():
    with pytest.raises(ValueError):
        ScalableCuckooFilter(100, growth_factor=0)
    with pytest.raises(ValueError):
        ScalableCuckooFilter(100, max_levels=0)
    with pytest.raises(ValueError):
        WindowedCuckooFilter(100, 0)
    with pytest.raises(ValueError):
        WindowedCuckooFilter(100, -3)
    with pytest.raises(ValueError):
        WindowedCuckooFilter(100, 10**6)
    with pytest.raises(OverflowError):
        CuckooFilter(100, seed=-1)


def test_a_full_filter_raises_filter_full_and_is_unchanged():
    f = CuckooFilter(64, seed=1)
    added = 0
    with pytest.raises(FilterFull) as caught:
        for i in range(10_000):
            f.add(i)
            added += 1
    assert caught.value.added == 0
    assert isinstance(caught.value, CuckooError)
    assert len(f) == added
    before = f.to_bytes()
    # The key that failed fails again (the filter is as it was; another
    # key might still find a place).
    failed = added
    with pytest.raises(FilterFull):
        f.add(failed)
    assert f.to_bytes() == before
    assert all(i in f for i in range(added))


@pytest.mark.parametrize("kind", ["fixed", "windowed"])
def test_add_many_on_a_full_filter_says_how_many_were_added(kind):
    f = MAKERS[kind](64)
    with pytest.raises(FilterFull, match="key\\(s\\) of the batch were added") as caught:
        f.add_many(list(range(10_000)))
    assert 0 < caught.value.added < 10_000
    assert len(f) == caught.value.added
    assert all(i in f for i in range(caught.value.added))


def test_add_many_counts_keys_of_earlier_runs():
    # A mixed batch is handed to the library run by run: the count covers
    # the runs before the failing one too.
    f = CuckooFilter(64)
    with pytest.raises(FilterFull) as caught:
        f.add_many(["a", "b", "c"] + list(range(10_000)))
    assert caught.value.added == len(f) > 3


def test_too_many_duplicates():
    f = CuckooFilter(1000)
    with pytest.raises(TooManyDuplicates) as caught:
        for _ in range(100):
            f.add("same")
    assert isinstance(caught.value, CuckooError)
    assert not isinstance(caught.value, FilterFull)
    assert f.count("same") == len(f)
    with pytest.raises(TooManyDuplicates) as caught:
        f.add_many(["same"] * 3)
    assert caught.value.added == 0


@pytest.mark.parametrize("cls", [CuckooFilter, ScalableCuckooFilter, WindowedCuckooFilter])
def test_corrupt_bytes_are_invalid_filter_data(cls):
    good = cls(100, 3) if cls is WindowedCuckooFilter else cls(100)
    data = bytearray(good.to_bytes())
    for bad in (b"", b"not a filter", bytes(data[:-1]), bytes(data) + b"x"):
        with pytest.raises(InvalidFilterData):
            cls.from_bytes(bad)
    data[len(data) // 2] ^= 0x55
    with pytest.raises(InvalidFilterData) as caught:
        cls.from_bytes(data)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, CuckooError)
    with pytest.raises(TypeError):
        cls.from_bytes("a str")
    with pytest.raises(TypeError):
        cls.from_bytes(None)


def test_a_filter_of_another_kind_is_invalid_data():
    with pytest.raises(InvalidFilterData):
        CuckooFilter.from_bytes(WindowedCuckooFilter(100, 2).to_bytes())
    with pytest.raises(InvalidFilterData):
        WindowedCuckooFilter.from_bytes(CuckooFilter(100).to_bytes())


def test_missing_and_corrupt_files(tmp_path):
    with pytest.raises(FileNotFoundError):
        CuckooFilter.load(tmp_path / "nope.ccf")
    with pytest.raises(FileNotFoundError):
        FrozenFilter.open(tmp_path / "nope.ccf")
    with pytest.raises(OSError):
        CuckooFilter(10).save(tmp_path / "no-such-dir" / "f.ccf")
    bad = tmp_path / "bad.ccf"
    bad.write_bytes(b"\x00" * 100)
    with pytest.raises(InvalidFilterData):
        CuckooFilter.load(bad)
    with pytest.raises(InvalidFilterData):
        FrozenFilter.open(bad)
    empty = tmp_path / "empty.ccf"
    empty.write_bytes(b"")
    with pytest.raises(InvalidFilterData):
        FrozenFilter.open(empty)


def test_a_frozen_filter_is_not_picklable(tmp_path):
    CuckooFilter(10).save(tmp_path / "f.ccf")
    with pytest.raises(TypeError):
        pickle.dumps(FrozenFilter.open(tmp_path / "f.ccf"))


def test_no_direct_construction_of_a_frozen_filter():
    with pytest.raises(TypeError):
        FrozenFilter()


def test_a_growing_filter_at_its_level_limit_is_full():
    f = ScalableCuckooFilter(64, max_levels=1)
    with pytest.raises(FilterFull) as caught:
        f.add_many(range(10_000))
    assert caught.value.added == len(f) > 0
    assert f.levels == 1


def test_a_frozen_filter_opens_only_the_fixed_format(tmp_path):
    ScalableCuckooFilter(100).save(tmp_path / "s.ccf")
    WindowedCuckooFilter(100, 2).save(tmp_path / "w.ccf")
    for name in ("s.ccf", "w.ccf"):
        with pytest.raises(InvalidFilterData):
            FrozenFilter.open(tmp_path / name)
