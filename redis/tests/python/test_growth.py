"""Filters that grow, fill up, and hold duplicates."""

import pytest
from redis.exceptions import ResponseError

from test_commands import error, info


def insert_all(r, key, items, batch=5000):
    for start in range(0, len(items), batch):
        replies = r.execute_command("CF.INSERT", key, "ITEMS", *items[start:start + batch])
        assert all(x in (1, True) for x in replies)


def missing(r, key, items, batch=5000):
    lost = 0
    for start in range(0, len(items), batch):
        found = r.execute_command("CF.MEXISTS", key, *items[start:start + batch])
        lost += sum(1 for x in found if not x)
    return lost


def test_a_filter_grows_from_1000_to_300000_items_and_finds_every_one(server):
    r = server.client()
    r.execute_command("CF.RESERVE", "g", 1000, "EXPANSION", 2, "ERROR", 0.001)
    items = [f"user:{i}".encode() for i in range(300_000)]
    insert_all(r, "g", items)
    fields = dict(info(r, "g"))
    assert fields["Number of items inserted"] == len(items)
    assert fields["Number of filters"] > 5
    assert missing(r, "g", items) == 0
    # The error rate bounds the whole grown filter's false positives.
    absent = [f"absent:{i}".encode() for i in range(100_000)]
    false_positives = len(absent) - missing(r, "g", absent)
    assert false_positives <= 100_000 * 0.001 * 2, false_positives
    # Deletes: every other item stays found. A delete is refused (0, and
    # the item stays) when the item's fingerprint is in two sub-filters:
    # taking the other copy could lose another item. That happens with
    # about the error rate's probability.
    refused = []
    for item in items[:50_000:10]:
        if r.execute_command("CF.DEL", "g", item) == 0:
            refused.append(item)
    assert len(refused) <= 5000 * 0.001 * 2, len(refused)
    assert dict(info(r, "g"))["Number of items deleted"] == 5000 - len(refused)
    kept = [x for i, x in enumerate(items) if i >= 50_000 or i % 10 != 0]
    assert missing(r, "g", kept + refused) == 0


def test_expansion_0_fills_up_with_filter_is_full_and_loses_nothing(server):
    r = server.client()
    r.execute_command("CF.RESERVE", "fixed", 1000, "EXPANSION", 0)
    stored = []
    i = 0
    while True:
        try:
            r.execute_command("CF.ADD", "fixed", f"k{i}")
        except ResponseError as e:
            assert str(e) == "Filter is full"
            break
        stored.append(f"k{i}")
        i += 1
    fields = dict(info(r, "fixed"))
    assert fields["Number of items inserted"] == len(stored) >= 1000
    assert fields["Number of filters"] == 1
    assert missing(r, "fixed", stored) == 0
    # A refused insert changes nothing: more refusals, same count.
    replies = r.execute_command("CF.INSERT", "fixed", "ITEMS", *[f"x{i}" for i in range(200)])
    assert replies.count(-1) > 0
    assert dict(info(r, "fixed"))["Number of items inserted"] == len(stored) + replies.count(1)
    assert missing(r, "fixed", stored) == 0
    # CF.ADDNX on the full filter says "Filter is full". "Full" is per
    # bucket pair: a few keys may still find room, as some of the
    # CF.INSERT items above did, so try keys until one is refused.
    for j in range(1000):
        try:
            assert r.execute_command("CF.ADDNX", "fixed", f"n{j}") in (0, 1)
        except ResponseError as e:
            assert str(e) == "Filter is full"
            break
    else:
        raise AssertionError("CF.ADDNX never refused on a full filter")


def test_expansion_1_adds_levels_of_one_size_up_to_32(server):
    r = server.client()
    r.execute_command("CF.RESERVE", "flat", 100, "ERROR", 0.01)  # EXPANSION 1
    first = dict(info(r, "flat"))["Number of buckets"]
    stored = []
    i = 0
    while True:
        try:
            r.execute_command("CF.ADD", "flat", i)
        except ResponseError as e:
            assert str(e) == "Maximum expansions reached"
            break
        stored.append(i)
        i += 1
    fields = dict(info(r, "flat"))
    assert fields["Number of filters"] == 32
    assert fields["Number of buckets"] == first
    stats = r.execute_command("CF.STATS", "flat")
    stats = dict(zip(stats[::2], stats[1::2]))
    assert set(stats[b"Buckets"]) == {first}, "every level the size of the first"
    assert missing(r, "flat", stored) == 0


@pytest.mark.parametrize("expansion", [1, 2, 3, 4])
def test_an_item_whose_copies_are_in_two_levels_is_deleted(server, expansion):
    """An item added before and after a growth has copies in two
    sub-filters. Their bucket maps nest (two items colliding in a larger
    sub-filter collide in every smaller one), so CF.DEL takes the copy in
    the largest that matches, for every EXPANSION (before nested levels it
    answered 0 and kept both, except with EXPANSION 1: the item stayed
    forever, pinning its old sub-filter)."""
    r = server.client()
    key = f"w{expansion}"
    r.execute_command("CF.RESERVE", key, 100, "EXPANSION", expansion)
    r.execute_command("CF.ADD", key, "twice")
    i = 0
    while dict(info(r, key))["Number of filters"] < 2:
        r.execute_command("CF.ADD", key, f"fill{i}")
        i += 1
    r.execute_command("CF.ADD", key, "twice")
    assert r.execute_command("CF.COUNT", key, "twice") == 2
    assert r.execute_command("CF.DEL", key, "twice") == 1
    assert r.execute_command("CF.DEL", key, "twice") == 1
    assert r.execute_command("CF.COUNT", key, "twice") == 0
    assert missing(r, key, [f"fill{j}" for j in range(i)]) == 0


def test_duplicates_do_not_grow_a_small_filter(server):
    # RedisBloom #533: one item added again and again grew a filter to
    # gigabytes. Here the 9th copy in a level's bucket pair is refused.
    r = server.client()
    r.execute_command("CF.RESERVE", "d", 100)
    for _ in range(8):
        assert r.execute_command("CF.ADD", "d", "same") == 1
    assert "too many copies" in error(r, "CF.ADD", "d", "same")
    assert r.execute_command("CF.INSERT", "d", "ITEMS", "same", "other") == [-1, 1]
    fields = dict(info(r, "d"))
    assert fields["Number of filters"] == 1
    assert fields["Number of items inserted"] == 9
    assert r.execute_command("CF.COUNT", "d", "same") == 8
    size = r.memory_usage("d")
    for _ in range(1000):
        with pytest.raises(ResponseError):
            r.execute_command("CF.ADD", "d", "same")
    assert r.memory_usage("d") == size
