"""add_many and contains_many: every kind of batch answers as single calls."""

import numpy as np
import pytest

from concurrent_cuckoo import CuckooFilter, ScalableCuckooFilter, WindowedCuckooFilter

MAKERS = [
    lambda: CuckooFilter(50_000, seed=2),
    lambda: ScalableCuckooFilter(1000, seed=2),
    lambda: WindowedCuckooFilter(50_000, 3, seed=2),
]


@pytest.mark.parametrize("make", MAKERS)
def test_numpy_batches_answer_as_single_calls(make):
    f = make()
    keys = np.arange(0, 40_000, 2, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    assert f.add_many(keys) == 20_000
    if isinstance(f, WindowedCuckooFilter):
        # A windowed filter refreshes a key whose fingerprint it holds
        # (false positives included) instead of adding a copy.
        assert len(f) + f.stats()["refreshes"] == 20_000
    else:
        assert len(f) == 20_000
    probe = np.concatenate([keys, keys + np.uint64(1)])
    got = f.contains_many(probe)
    assert got.dtype == np.bool_ and got.shape == (40_000,)
    assert got[:20_000].all()
    assert got.tolist() == [int(k) in f for k in probe]
    # Far more than one copy chunk (65,536 keys).
    big = np.arange(200_000, dtype=np.uint64)
    assert f.contains_many(big).tolist() == [int(k) in f for k in big]


def test_int64_arrays_are_the_same_keys_as_uint64():
    f = CuckooFilter(1000, seed=3)
    f.add_many(np.array([-1, -(2**63), 5], dtype=np.int64))
    assert f.contains_many(np.array([2**64 - 1, 2**63, 5, 6], dtype=np.uint64)).tolist() == [
        True,
        True,
        True,
        False,
    ]
    assert f.contains_many(np.array([-1, 5, 6], dtype=np.int64)).tolist() == [True, True, False]


def test_strided_and_read_only_arrays():
    f = CuckooFilter(40_000, seed=4)
    base = np.arange(0, 200_000, dtype=np.uint64)
    f.add_many(base[::7])  # not contiguous
    expect = [int(k) in f for k in base]
    assert all(expect[::7])
    assert f.contains_many(base).tolist() == expect
    ro = base.copy()
    ro.flags.writeable = False
    assert f.contains_many(ro).tolist() == expect
    assert f.contains_many(base[::-1]).tolist() == expect[::-1]


def test_other_dtypes_are_iterated_as_ints():
    f = CuckooFilter(1000, seed=5)
    f.add_many(np.array([1, 2, 3], dtype=np.int32))
    assert f.contains_many(np.array([1, 2, 3, 4], dtype=np.uint8)).tolist() == [True] * 3 + [False]
    with pytest.raises(TypeError):
        f.add_many(np.array([1.0, 2.0]))
    with pytest.raises(TypeError):
        f.contains_many(np.zeros((2, 2), dtype=np.uint64))


@pytest.mark.parametrize("make", MAKERS)
def test_sequences_and_iterables_of_keys(make):
    f = make()
    words = [f"w{i}" for i in range(3000)]
    assert f.add_many(words) == 3000
    assert f.add_many(w.encode() + b"!" for w in words) == 3000  # a generator
    assert f.add_many(iter(range(100))) == 100
    assert f.add_many((bytearray(b"ba"), memoryview(b"mv"))) == 2
    refreshed = f.stats().get("refreshes", 0)
    assert len(f) + refreshed == 6102
    assert f.contains_many(words).all()
    assert f.contains_many(w.encode() for w in words).all()
    assert f.contains_many([b"ba", "mv", "ba"]).tolist() == [True, True, True]
    absent = [f"absent{i}" for i in range(3000)]
    assert f.contains_many(absent).tolist() == [a in f for a in absent]


def test_mixed_batches_keep_their_order():
    f = CuckooFilter(1000, seed=6)
    f.add_many(["s", 1, b"b", 2, 3, "t"])
    assert len(f) == 6
    assert f.contains_many([1, "s", "x", 2, b"b", 99, "t", 3]).tolist() == [
        True,
        True,
        False,
        True,
        True,
        False,
        True,
        True,
    ]


def test_empty_batches():
    f = CuckooFilter(100)
    assert f.add_many([]) == 0
    assert f.add_many(np.array([], dtype=np.uint64)) == 0
    got = f.contains_many([])
    assert got.dtype == np.bool_ and got.shape == (0,)
    assert f.contains_many(np.array([], dtype=np.int64)).shape == (0,)


def test_bad_batches():
    f = CuckooFilter(100)
    with pytest.raises(TypeError, match="wrap it in a list"):
        f.add_many("abc")
    with pytest.raises(TypeError, match="wrap it in a list"):
        f.contains_many(b"abc")
    with pytest.raises(TypeError):
        f.add_many(5)
    with pytest.raises(TypeError):
        f.add_many(None)
    # A bad key anywhere: nothing is added (keys are converted first).
    with pytest.raises(TypeError):
        f.add_many(["a", "b", 1.5])
    with pytest.raises(OverflowError):
        f.add_many([1, 2**64])
    assert len(f) == 0
    with pytest.raises(TypeError):
        f.contains_many([None])

    def failing():
        yield "a"
        raise RuntimeError("from the iterator")

    with pytest.raises(RuntimeError, match="from the iterator"):
        f.add_many(failing())
    assert len(f) == 0


def test_non_native_byte_order_arrays_are_the_same_keys():
    f = CuckooFilter(1000, seed=7)
    native = np.array([1, 2**64 - 1, 12345], dtype=np.uint64)
    f.add_many(native.astype(">u8"))
    assert f.contains_many(native).tolist() == [True, True, True]
    assert f.contains_many(np.array([-1, 7], dtype=">i8")).tolist() == [True, 7 in f]
