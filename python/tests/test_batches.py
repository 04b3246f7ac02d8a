"""add_many and contains_many: every kind of batch answers as single calls."""

import numpy as np
import pytest

from concurrent_cuckoo import CuckooFilter, FilterFull, ScalableCuckooFilter, WindowedCuckooFilter

MAKERS = [
    lambda: CuckooFilter(50_000, seed=2),
    lambda: ScalableCuckooFilter(1000, seed=2),
    lambda: WindowedCuckooFilter(50_000, 3, seed=2),
]


@pytest.mark.parametrize("make", MAKERS)
def test_numpy_batches_answer_as_single_calls(make):
    f = make()
    keys = np.arange(0, 40_000, 2, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    new = f.add_many(keys)
    assert new.dtype == np.bool_ and new.shape == (20_000,)
    # Distinct keys: all new but the rare false positive of one before.
    assert new.sum() > 19_900
    if isinstance(f, WindowedCuckooFilter):
        # A windowed filter refreshes a key whose fingerprint it holds
        # (false positives included) instead of adding a copy.
        assert len(f) + f.stats()["refreshes"] == 20_000
    else:
        assert len(f) == new.sum()
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
    with pytest.raises(TypeError, match="not float64"):
        f.add_many(np.array([1.0, 2.0]))
    # Any shape: the answer has the array's.
    got = f.contains_many(np.array([[1, 9], [3, 2]], dtype=np.uint64))
    assert got.tolist() == [[True, False], [True, True]]


@pytest.mark.parametrize("make", MAKERS)
def test_sequences_and_iterables_of_keys(make):
    f = make()
    words = [f"w{i}" for i in range(3000)]
    masks = [
        f.add_many(words),
        f.add_many(w.encode() + b"!" for w in words),  # a generator
        f.add_many(iter(range(100))),
        f.add_many((bytearray(b"ba"), memoryview(b"mv"))),
    ]
    assert [m.shape for m in masks] == [(3000,), (3000,), (100,), (2,)]
    new = sum(int(m.sum()) for m in masks)
    assert new > 6050
    if isinstance(f, WindowedCuckooFilter):
        assert len(f) + f.stats()["refreshes"] == 6102
    else:
        assert len(f) == new
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
    assert f.add_many([]).shape == (0,)
    assert f.add_many(np.array([], dtype=np.uint64)).shape == (0,)
    assert f.add_copies_many([]) == 0
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


def test_every_integer_dtype_and_bool_are_the_ints_they_hold():
    f = CuckooFilter(1000, seed=8)
    f.add_many([0, 1, 5, -1, -7, 200])
    for dtype in (np.int8, np.int16, np.int32, np.int64):
        got = f.contains_many(np.array([5, -1, -7, 3], dtype=dtype))
        assert got.tolist() == [True, True, True, 3 in f], dtype
    for dtype in (np.uint8, np.uint16, np.uint32, np.uint64):
        assert f.contains_many(np.array([5, 200, 4], dtype=dtype)).tolist() == [True, True, 4 in f]
    assert f.contains_many(np.array([True, False])).tolist() == [True, True]
    g = CuckooFilter(1000, seed=8)
    assert g.add_many(np.array([True, True, False])).tolist() == [True, False, True]
    assert 1 in g and 0 in g


def test_string_and_bytes_arrays_are_their_items():
    f = CuckooFilter(1000, seed=9)
    words = ["alpha", "β-beta", "", "gamma"]
    assert f.add_many(np.array(words)).all()  # a U array
    assert all(w in f for w in words)
    assert f.contains_many(np.array([w.encode() for w in words])).all()  # an S array
    assert f.contains_many(np.array(words, dtype=object)).all()
    # numpy drops an S item's trailing NULs: b"ab\x00" in an S array is b"ab".
    s = np.array([b"ab\x00", b"cd"])
    f.add_many(s)
    assert b"ab" in f and b"cd" in f


def test_tuples_ranges_and_2d_arrays():
    f = CuckooFilter(1000, seed=10)
    assert f.add_many(("a", b"b", 3)).tolist() == [True, True, True]
    assert f.contains_many(range(3, 5)).tolist() == [True, 4 in f]
    grid = np.arange(12, dtype=np.int32).reshape(3, 4)
    new = f.add_many(grid)
    assert new.shape == (3, 4)
    assert f.contains_many(grid).all()
    assert f.contains_many(grid.T).shape == (4, 3)


def test_batches_larger_than_a_chunk_keep_their_order_and_errors_count_right():
    f = CuckooFilter(100_000, seed=11)
    keys = [f"k{i}" for i in range(40_000)]  # chunks of 16,384 objects
    assert f.add_many(keys).sum() == len(f)
    probe = keys[::2] + [f"absent{i}" for i in range(20_000)]
    assert f.contains_many(probe).tolist() == [k in f for k in probe]
    ints = np.arange(150_000, dtype=np.int16)  # cast a chunk at a time
    assert f.contains_many(ints).tolist() == [int(k) in f for k in ints]
    small = CuckooFilter(64)
    with pytest.raises(FilterFull) as caught:
        small.add_many([f"x{i}" for i in range(40_000)])
    added = caught.value.added
    assert 0 < len(small) <= added < 40_000
    assert small.contains_many([f"x{i}" for i in range(added)]).all()


def test_pandas_series_and_index():
    pd = pytest.importorskip("pandas")
    f = CuckooFilter(10_000, seed=12)
    ids = pd.Series([3, 1, 3, 7], dtype="int64")
    assert f.add_many(ids).tolist() == [True, True, False, True]
    assert f.contains_many(pd.Index([1, 2, 3])).tolist() == [True, 2 in f, True]
    names = pd.Series(["ann", "bob", "ann"])
    assert f.add_many(names).tolist() == [True, True, False]
    assert f.contains_many(pd.Series(["ann", "bob"], dtype="string")).all()
    assert f.contains_many(pd.Series([1, 3], dtype="int32")).all()


class _Str(str):
    """A str subclass: not an exact str, read through the general path."""


# Every kind of key a batch reads object by object: exact and subclassed
# str (ASCII, not, empty, and past the hasher's 16- and 128-byte inline
# inputs), bytes, bytearray, memoryview, ints of every range, bools and
# numpy integers.
MIXED = [
    "a",
    "",
    "päivää 日本",
    "x" * 40,
    "y" * 300,
    _Str("sub"),
    b"b",
    b"\x00" * 130,
    bytearray(b"ba"),
    memoryview(b"mv"),
    0,
    7,
    -1,
    -(2**63),
    2**63,
    2**64 - 1,
    True,
    np.int32(-5),
    np.uint64(2**64 - 2),
    # Every length around the hasher's inputs of 16 and 128 bytes (8 of
    # them the length): batches and single calls hash byte strings apart.
    *(b"z" * i for i in range(140)),
    *("s" * i for i in range(140)),
]


@pytest.mark.parametrize("make", MAKERS)
def test_batches_store_what_single_calls_store(make):
    # Batches hash each object as they read it, per-key calls through the
    # library's keyed calls: the bytes stored must be the same.
    keys = MIXED * 2 + [f"k{i}" for i in range(20_000)]  # repeats, two chunks
    one_by_one, batched = make(), make()
    new = [one_by_one.add(k) for k in keys]
    assert batched.add_many(keys).tolist() == new
    assert batched.to_bytes() == one_by_one.to_bytes()
    probe = keys + [f"absent{i}" for i in range(5000)]
    assert batched.contains_many(probe).tolist() == [k in one_by_one for k in probe]
    if not isinstance(one_by_one, WindowedCuckooFilter):
        copies, copies_batched = make(), make()
        for k in keys:
            copies.add_copy(k)
        assert copies_batched.add_copies_many(keys) == len(keys)
        assert copies_batched.to_bytes() == copies.to_bytes()
