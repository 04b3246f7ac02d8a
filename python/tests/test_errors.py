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
    with pytest.raises(ValueError, match="seed must lie in"):
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
    with pytest.raises(FilterFull, match="the batch's first \\d+ key\\(s\\) are in") as caught:
        f.add_many(list(range(10_000)))
    assert 0 < caught.value.added < 10_000
    # Set semantics: a key that was a false positive of one before it is
    # in without a copy of its own, so len(f) may fall short of `added`.
    assert len(f) <= caught.value.added
    assert all(i in f for i in range(caught.value.added))


def test_add_many_counts_keys_of_earlier_runs():
    # A mixed batch is handed to the library run by run: the count covers
    # the runs before the failing one too.
    f = CuckooFilter(64)
    with pytest.raises(FilterFull) as caught:
        f.add_many(["a", "b", "c"] + list(range(10_000)))
    assert caught.value.added >= len(f) > 3
    assert f.contains_many((["a", "b", "c"] + list(range(10_000)))[: caught.value.added]).all()


def test_too_many_duplicates():
    f = CuckooFilter(1000)
    with pytest.raises(TooManyDuplicates) as caught:
        for _ in range(100):
            f.add_copy("same")
    assert isinstance(caught.value, CuckooError)
    assert not isinstance(caught.value, FilterFull)
    assert f.count("same") == len(f)
    with pytest.raises(TooManyDuplicates) as caught:
        f.add_copies_many(["same"] * 3)
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
    assert caught.value.added >= len(f) > 0
    assert f.contains_many(range(caught.value.added)).all()
    assert f.levels == 1


def test_a_frozen_filter_opens_only_the_fixed_format(tmp_path):
    ScalableCuckooFilter(100).save(tmp_path / "s.ccf")
    WindowedCuckooFilter(100, 2).save(tmp_path / "w.ccf")
    for name in ("s.ccf", "w.ccf"):
        with pytest.raises(InvalidFilterData):
            FrozenFilter.open(tmp_path / name)


def test_os_errors_carry_errno_and_filename(tmp_path):
    import errno

    missing = tmp_path / "nope.ccf"
    for call in (CuckooFilter.load, ScalableCuckooFilter.load, WindowedCuckooFilter.load, FrozenFilter.open):
        with pytest.raises(FileNotFoundError) as caught:
            call(missing)
        assert caught.value.errno == errno.ENOENT
        assert caught.value.filename == str(missing)
        assert caught.value.strerror and "os error" not in caught.value.strerror
    target = tmp_path / "no-such-dir" / "f.ccf"
    with pytest.raises(FileNotFoundError) as caught:
        CuckooFilter(10).save(target)
    assert caught.value.errno == errno.ENOENT and caught.value.filename == str(target)
    with pytest.raises(IsADirectoryError) as caught:
        CuckooFilter.load(tmp_path)
    assert caught.value.filename == str(tmp_path)


def test_a_file_of_another_type_says_which_load_reads_it(tmp_path):
    WindowedCuckooFilter(100, 2).save(tmp_path / "w.ccf")
    ScalableCuckooFilter(100).save(tmp_path / "s.ccf")
    CuckooFilter(100).save(tmp_path / "c.ccf")
    w, s, c = (str(tmp_path / n) for n in ("w.ccf", "s.ccf", "c.ccf"))
    cases = [
        (CuckooFilter.load, w, f"{w} holds a WindowedCuckooFilter: use WindowedCuckooFilter.load"),
        (FrozenFilter.open, w, f"{w} holds a WindowedCuckooFilter: use WindowedCuckooFilter.load"),
        (ScalableCuckooFilter.load, w, "holds a WindowedCuckooFilter: use WindowedCuckooFilter.load"),
        (WindowedCuckooFilter.load, c, "holds a CuckooFilter: use CuckooFilter.load"),
        (WindowedCuckooFilter.load, s, "holds a ScalableCuckooFilter: use ScalableCuckooFilter.load"),
        (CuckooFilter.load, s, "holds a ScalableCuckooFilter: use ScalableCuckooFilter.load"),
        (ScalableCuckooFilter.load, c, "holds a CuckooFilter: use CuckooFilter.load"),
    ]
    for call, path, message in cases:
        with pytest.raises(InvalidFilterData) as caught:
            call(path)
        assert message in str(caught.value), (call, path, str(caught.value))
        assert "::" not in str(caught.value)
    with pytest.raises(InvalidFilterData, match="these bytes hold a WindowedCuckooFilter: use WindowedCuckooFilter.from_bytes"):
        CuckooFilter.from_bytes(WindowedCuckooFilter(100, 2).to_bytes())


def test_numpy_integers_are_ints_for_every_parameter():
    np = pytest.importorskip("numpy")
    f = CuckooFilter(np.int64(1000), seed=np.uint64(7))
    assert f.capacity >= 1000
    assert CuckooFilter(1000, seed=7).to_bytes() == f.to_bytes()
    s = ScalableCuckooFilter(np.int32(100), growth_factor=np.int8(2), max_levels=np.uint16(4), seed=np.int64(1))
    assert s.levels == 1
    w = WindowedCuckooFilter(np.uint32(100), np.int64(3), seed=np.int16(2))
    assert w.generations == 3
    assert w.advance_to(np.int64(5)) == 5
    CuckooFilter(1000, false_positive_rate=np.float64(0.01))
    with pytest.raises(TypeError, match="capacity is an int, not float64"):
        CuckooFilter(np.float64(1000))


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: CuckooFilter(100, seed=-1), "seed"),
        (lambda: CuckooFilter(100, seed=2**64), "seed"),
        (lambda: ScalableCuckooFilter(100, seed=-5), "seed"),
        (lambda: WindowedCuckooFilter(100, 2, seed=-1), "seed"),
        (lambda: WindowedCuckooFilter(100, 2).advance_to(-1), "generation"),
        (lambda: CuckooFilter(-1), "capacity"),
        (lambda: CuckooFilter(2**70), "capacity"),
        (lambda: ScalableCuckooFilter(0), "initial_capacity"),
        (lambda: ScalableCuckooFilter(10, growth_factor=-2), "growth_factor"),
        (lambda: WindowedCuckooFilter(10, 0), "generations"),
        (lambda: WindowedCuckooFilter(10, 10**6), "generations"),
        (lambda: ScalableCuckooFilter(10, max_levels=65), "max_levels"),
        (lambda: ScalableCuckooFilter(10, growth_factor=2**32), "growth_factor"),
    ],
)
def test_out_of_range_arguments_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"^{name} must lie in"):
        call()


def test_messages_use_python_names():
    # No Rust paths and no private class names in what users read.
    messages = []
    for call in (
        lambda: CuckooFilter.from_bytes(ScalableCuckooFilter(10).to_bytes()),
        lambda: ScalableCuckooFilter.from_bytes(CuckooFilter(10).to_bytes()),
        lambda: WindowedCuckooFilter.from_bytes(CuckooFilter(10).to_bytes()),
        lambda: CuckooFilter(10).add(1.5),
        lambda: CuckooFilter(10).add_many("x"),
        lambda: CuckooFilter(0),
        lambda: ScalableCuckooFilter(10, max_levels=100),
        lambda: WindowedCuckooFilter(10, 10**6),
        lambda: CuckooFilter(2**62),
    ):
        with pytest.raises(Exception) as caught:
            call()
        messages.append(str(caught.value))
    for m in messages:
        assert "::" not in m and "_LiveFilter" not in m and "_Filter" not in m, m
        assert "..=" not in m and ".capacity(" not in m, m
