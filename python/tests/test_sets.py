"""Set semantics by default: `add` of a key present stores nothing and
returns False; `add_many` answers which keys were new; the multiset form
is `add_copy`/`add_copies_many`."""

import numpy as np
import pytest

from concurrent_cuckoo import (
    CuckooFilter,
    ScalableCuckooFilter,
    TooManyDuplicates,
    WindowedCuckooFilter,
)

MAKERS = {
    "fixed": lambda: CuckooFilter(10_000, seed=1),
    "scalable": lambda: ScalableCuckooFilter(1000, seed=1),
    "windowed": lambda: WindowedCuckooFilter(10_000, 3, seed=1),
}


@pytest.mark.parametrize("kind", MAKERS)
def test_add_says_whether_the_key_was_new(kind):
    f = MAKERS[kind]()
    assert f.add("k") is True
    assert f.add("k") is False
    assert f.add(b"k") is False  # the same key
    assert f.add(7) is True
    assert len(f) == 2


@pytest.mark.parametrize("kind", MAKERS)
def test_add_many_answers_which_keys_were_new(kind):
    f = MAKERS[kind]()
    f.add("b")
    new = f.add_many(["a", "b", "a", "c", 5, 5])
    assert new.dtype == np.bool_
    assert new.tolist() == [True, False, False, True, True, False]
    assert len(f) == 4
    again = f.add_many(np.array([5, 6, 6], dtype=np.int32))
    assert again.tolist() == [False, True, False]


def test_a_windowed_key_is_new_again_once_expired():
    f = WindowedCuckooFilter(1000, 2, seed=1)
    assert f.add("k") is True
    f.advance()
    assert f.add("k") is False  # refreshed: lives on
    f.advance()
    f.advance()
    assert "k" not in f
    assert f.add("k") is True


@pytest.mark.parametrize("kind", ["fixed", "scalable"])
def test_copies_are_the_multiset_form(kind):
    f = MAKERS[kind]()
    assert f.add("k") is True
    assert f.add_copy("k") is None
    assert f.add_copies_many(["k", "k", "other"]) == 3
    assert f.count("k") == 4 and len(f) == 5
    assert f.remove("k") and f.count("k") == 3
    # Copies are bounded by a key's two buckets (a growing filter may put
    # them in a new level); set-style adds never are.
    if kind == "fixed":
        with pytest.raises(TooManyDuplicates):
            for _ in range(100):
                f.add_copy("k")
    for _ in range(100):
        assert f.add("k") is False


def test_a_zipf_column_never_fails_below_capacity():
    # The pattern of issue 51: a column of ids with heavy repeats.
    rng = np.random.default_rng(51)
    column = rng.zipf(1.3, 2_000_000).astype(np.int64)
    distinct = len(np.unique(column))
    assert distinct < 1_000_000
    f = CuckooFilter(1_000_000)
    new = f.add_many(column)
    # Set semantics: one copy per distinct key (false positives of keys
    # before it store nothing either, so at most `distinct`).
    assert new.sum() == len(f) <= distinct
    assert len(f) >= distinct * 0.99
    assert f.contains_many(column).all()
    # A pandas-like repeat of the whole column adds nothing.
    assert not f.add_many(column).any()


def test_a_per_event_loop_over_repeated_ids_never_fails():
    # 30k ids seen ~33 times each, one add per event (issue 51: raised
    # FilterFull at a load of 0.034 when add stored a copy per call).
    rng = np.random.default_rng(7)
    events = rng.integers(0, 30_000, size=1_000_000).tolist()
    f = CuckooFilter(1_000_000)
    new = 0
    for user_id in events:
        new += f.add(user_id)
    assert new == len(f) <= 30_000
    assert len(f) >= 29_900
    assert all(i in f for i in set(events))


def test_repeats_in_a_scalable_filter_do_not_grow_it():
    f = ScalableCuckooFilter(1000, seed=3)
    for _ in range(50):
        f.add_many(range(900))
    assert f.levels == 1 and len(f) <= 900


@pytest.mark.parametrize("kind", ["fixed", "scalable"])
def test_add_many_answers_and_stores_exactly_as_add_one_at_a_time(kind):
    # add_many pipelines its inserts (buckets prefetched keys ahead): the
    # same answers and the same bytes as the per-key loop.
    rng = np.random.default_rng(3)
    keys = rng.integers(0, 5000, size=30_000).astype(np.uint64)
    batch, single = MAKERS[kind](), MAKERS[kind]()
    mask = batch.add_many(keys)
    assert mask.tolist() == [single.add(int(k)) for k in keys]
    assert batch.to_bytes() == single.to_bytes()
