"""RedisBloom's own flow tests, restated: the portable subset of
``tests/flow/test_cuckoo.py`` of RedisBloom 2.8.2 (its tag ``v2.8.2``), one
test here per test there, of the same name, with the same commands and
the same assertions, in this suite's style (written for this module, not
copied; RLTest's ``Env`` is the ``server`` fixture).

A test is portable when what it asserts is what a client sees and this
module promises to answer as RedisBloom does: replies, error texts,
counts, existence, and dump/restore round trips. Each test runs on this
module (``[cuckoo]``) and, on Redis, on RedisBloom 2.8.2 itself
(``[redisbloom]``, ``CCF_REDISBLOOM``), which shows the restatement asks
what the original asks (once per CI run: the restatement does not depend
on the server). The checks this module adds beyond the original's (a
refused chunk changes nothing, every byte a dump hands out is the
filter's own, a restored filter is the same) are made only of this
module: see ``ours``.

Portable (16): test_count, test_setnx, test_exists, test_expansion_0,
test_params, test_reserve_limits, test_scandump,
test_scandump_with_expansion, test_scandump_huge,
test_scandump_with_content, test_scandump_invalid,
test_scandump_invalid_header, test_scandump_random_scan_small,
test_scandump_scan_big, test_scandump_load_small, test_scandump_load_big.

Not portable (9 of its 25 tests: test_compact is defined twice, the
same), each asserting RedisBloom's internals:

* test_insert, test_max_iterations, test_num_deletes, test_compact,
  test_bucket_size, test_expansion: their assertions are on ``CF.DEBUG``
  strings (RedisBloom's debug command, not implemented here), which spell
  out its bucket layout (``buckets:8192`` for ``CAPACITY 10000``) and how
  many sub-filters its growth made (``filters:18``); test_compact reads a
  substring at a fixed offset of that string. Their other assertions
  (replies of ``CF.INSERT``/``NOCREATE``, ``MAXITERATIONS``,
  ``BUCKETSIZE`` and ``EXPANSION`` errors, items found after growth and
  after ``CF.COMPACT``, deletes kept over a reload) are covered by
  test_commands.py, test_growth.py, test_compact.py and
  test_persistence.py.
* test_mem_usage: ``MEMORY USAGE`` of exactly 1112 bytes (RedisBloom's
  allocation sizes).
* test_info: ``CF.INFO``'s exact ``Size`` (1080) and ``Number of
  buckets`` (512) for ``CAPACITY 1000``: RedisBloom's layout (this
  module's fields and their order: test_commands.py).
* test_max_expansions: exactly 124 items fit in ``CAPACITY 4`` before
  ``Maximum expansions reached``: RedisBloom's bucket layout and its rule
  of 32 sub-filters (the documented difference, docs/redis.md).

Not in 2.8.2 (added to RedisBloom's master later, so not counted):
test_number_of_buckets_does_not_overflow,
test_counter_overflow_with_large_number_of_items,
test_scandump_invalid_header_alloc, test_insufficient_memory.

The sizes are the original's except where a comment says what changed
and why (two of them, to bound CI's time: test_scandump_load_big's chunk
sizes, and the fill loops that stop at the first batch refused whole).
"""

import os
import random

import pytest
from redis.exceptions import ResponseError

from conftest import server_version
from test_commands import error, info

REDISBLOOM = os.environ.get("CCF_REDISBLOOM", "")
MODULES = ["cuckoo", "redisbloom"] if server_version()[0] == "redis" else ["cuckoo"]


@pytest.fixture(params=MODULES)
def server(request, servers):
    """A server with this module, or with RedisBloom 2.8.2 (the reference:
    a missing redisbloom.so fails under CCF_REQUIRE_REDISBLOOM=1, as
    scripts/test-redis.sh sets, and skips otherwise)."""
    if request.param == "cuckoo":
        return servers()
    if not REDISBLOOM or not os.path.exists(REDISBLOOM):
        if os.environ.get("CCF_REQUIRE_REDISBLOOM") == "1":
            pytest.fail(f"CCF_REDISBLOOM names no redisbloom.so (got {REDISBLOOM!r})")
        pytest.skip("CCF_REDISBLOOM names no redisbloom.so (scripts/test-redis.sh sets it)")
    return servers(name="redisbloom", module=REDISBLOOM)


def ours(r):
    """Whether the server runs this module (not RedisBloom): the checks
    beyond the original's are made only of this module."""
    modules = r.execute_command("MODULE", "LIST")
    return any(dict(zip(m[::2], m[1::2]))[b"name"] == b"cuckoo" for m in modules)


def ok(reply):
    return reply in (b"OK", "OK", True)


def size(r, key):
    return dict(info(r, key))["Size"]


def add_until(r, key, items, full):
    """CF.ADD each item until the reply is the error `full`. Any other
    error fails the test, as in the original loops."""
    for item in items:
        try:
            assert r.execute_command("CF.ADD", key, item) == 1
        except ResponseError as e:
            if str(e) == full:
                return
            raise


def insert_until_full(r, key, batches):
    """CF.INSERT each batch until the filter can take no more: RedisBloom
    answers `Maximum expansions reached` once 32 sub-filters exist; this
    module answers -1 for each item its last level refuses and never
    errs (docs/redis.md, differences), so a batch refused whole ends the
    loop here (the original would send the rest, refused too)."""
    for batch in batches:
        try:
            replies = r.execute_command("CF.INSERT", key, "ITEMS", *batch)
        except ResponseError as e:
            if str(e) == "Maximum expansions reached":
                return
            raise
        if all(x == -1 for x in replies):
            return


def scandump_all(r, key):
    """(iterator, data) of every CF.SCANDUMP chunk, in order: the
    original's loop, each call resuming at the last reply's iterator."""
    chunks = []
    while True:
        it, data = r.execute_command("CF.SCANDUMP", key, chunks[-1][0] if chunks else 0)
        if it == 0:
            assert data is None
            return chunks
        chunks.append((it, data))


def round_trip(r, src, dst, items, delete=True):
    """The original's dump and restore: SCANDUMP every chunk, (DEL the
    key), LOADCHUNK each into `dst`, and every item is found there."""
    chunks = scandump_all(r, src)
    if delete:
        r.delete(src)
    # LOADCHUNK's arity: a key, an iterator and the data.
    assert "wrong number of arguments" in error(r, "CF.LOADCHUNK", dst)
    assert "wrong number of arguments" in error(r, "CF.LOADCHUNK", dst, "str")
    for chunk in chunks:
        assert ok(r.execute_command("CF.LOADCHUNK", dst, *chunk))
    assert all(x == 1 for x in r.execute_command("CF.MEXISTS", dst, *items))
    return chunks


def test_count(server):
    r = server.client()
    assert "wrong number of arguments" in error(r, "CF.RESERVE", "cf")
    assert error(r, "CF.RESERVE", "cf", "str") == "Bad capacity"
    assert ok(r.execute_command("CF.RESERVE", "cf", 1000))
    assert error(r, "CF.RESERVE", "cf", 1000) == "item exists"
    too_small = "Capacity must be at least (BucketSize * 2)"
    assert error(r, "CF.RESERVE", "tooSmall", 1) == too_small
    # CAPACITY is checked even when the key exists.
    for command in ("CF.INSERT", "CF.INSERTNX"):
        for capacity in (-1, 3):
            assert error(r, command, "cf", "CAPACITY", capacity, "ITEMS", "k0") == too_small
    assert r.execute_command("CF.EXISTS", "cf", "k1") == 0
    assert r.execute_command("CF.ADD", "cf", "k1") == 1
    assert r.execute_command("CF.ADD", "cf", "k1") == 1
    assert r.execute_command("CF.EXISTS", "cf", "k1") == 1
    assert r.execute_command("CF.COUNT", "cf", "k1") == 2
    # Each CF.DEL removes one copy.
    assert r.execute_command("CF.DEL", "cf", "k1") == 1
    assert r.execute_command("CF.COUNT", "cf", "k1") == 1
    assert r.execute_command("CF.DEL", "cf", "k1") == 1
    assert r.execute_command("CF.COUNT", "cf", "k1") == 0
    assert r.execute_command("CF.DEL", "cf", "k1") == 0
    assert "wrong number of arguments" in error(r, "CF.DEL", "cf")
    assert error(r, "CF.DEL", "bf", "k1") == "Not found"
    for x in range(100):
        r.execute_command("CF.ADD", "nums", str(x))
    for x in range(100):
        assert r.execute_command("CF.EXISTS", "nums", str(x)) == 1


def test_setnx(server):
    r = server.client()
    assert r.execute_command("CF.ADDNX", "cf", "k1") == 1
    assert r.execute_command("CF.ADDNX", "cf", "k1") == 0
    assert r.execute_command("CF.COUNT", "cf", "k1") == 1
    assert r.execute_command("CF.ADD", "cf", "k1") == 1
    assert r.execute_command("CF.COUNT", "cf", "k1") == 2


def test_exists(server):
    r = server.client()
    assert r.execute_command("CF.INSERT", "f1", "ITEMS", "foo", "bar", "baz") == [1, 1, 1]
    assert r.execute_command("CF.MEXISTS", "f1", "foo", "bar", "baz") == [1, 1, 1]
    # A missing key holds nothing.
    assert r.execute_command("CF.EXISTS", "nonexist-key", "blah") == 0
    assert r.execute_command("CF.MEXISTS", "nonexist-key", "blah") == [0]
    for command in (("CF.MEXISTS", "key"), ("CF.MEXISTS",), ("CF.EXISTS", "key"), ("CF.EXISTS",)):
        assert "wrong number of arguments" in error(r, *command)


def test_expansion_0(server):
    """A filter with EXPANSION 0 never grows: once full, CF.INSERT answers
    -1 per item and CF.ADD `Filter is full`.

    Changed: in RedisBloom, CAPACITY 4 is two buckets of two, so exactly
    the items 1-4 fill it and 5 and 6 are refused. Here the filter has
    more room than its capacity (16 items in practice), so items are added
    until two are refused, and those two are the ones CF.INSERT sends.
    (The original's last line sends the command `Filter is full`, an
    unknown command: its intent, CF.ADD refused with that error, is
    asserted instead.)"""
    r = server.client()
    assert ok(r.execute_command("CF.RESERVE", "a", 4, "EXPANSION", 0))
    for item in ("1", "2", "3", "4"):
        assert r.execute_command("CF.ADD", "a", item) == 1
    refused, n = [], 5
    while len(refused) < 2:
        assert n < 1000, "a filter of capacity 4 took 1000 items"
        try:
            assert r.execute_command("CF.ADD", "a", str(n)) == 1
        except ResponseError as e:
            assert str(e) == "Filter is full"
            refused.append(str(n))
        n += 1
    assert r.execute_command("CF.INSERT", "a", "ITEMS", *refused) == [-1, -1]
    assert error(r, "CF.ADD", "a", refused[0]) == "Filter is full"
    assert dict(info(r, "a"))["Number of filters"] == 1


def test_params(server):
    r = server.client()
    for args, message in [
        ((10, "EXPANSION", -1), "EXPANSION: value must be an integer between 0 and 32768, inclusive."),
        ((10, "BUCKETSIZE", 0), "BUCKETSIZE: value must be an integer between 1 and 255, inclusive."),
        ((10, "BUCKETSIZE", -1), "BUCKETSIZE: value must be an integer between 1 and 255, inclusive."),
        ((10, "MAXITERATIONS", 0), "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive."),
        ((10, "MAXITERATIONS", -1), "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive."),
    ]:
        assert error(r, "CF.RESERVE", "err", *args) == message
    assert ok(r.execute_command("CF.RESERVE", "err", 1000))
    # Arity: every command without its key or its last argument, and the
    # inserts without the ITEMS keyword.
    for command in [
        ("CF.RESERVE",), ("CF.RESERVE", "err"),
        ("CF.ADD",), ("CF.ADD", "err"), ("CF.ADDNX",), ("CF.ADDNX", "err"),
        ("CF.INSERT",), ("CF.INSERT", "err"), ("CF.INSERT", "err", "element"),
        ("CF.INSERTNX",), ("CF.INSERTNX", "err"), ("CF.INSERTNX", "err", "element"),
        ("CF.DEL",), ("CF.DEL", "err"), ("CF.EXISTS",), ("CF.EXISTS", "err"),
        ("CF.MEXISTS",), ("CF.MEXISTS", "err"), ("CF.COUNT",), ("CF.COUNT", "err"),
        ("CF.INFO",),
        ("CF.LOADCHUNK", "err"), ("CF.LOADCHUNK", "err", "iterator"),
        ("CF.SCANDUMP", "err"),
    ]:
        assert "wrong number of arguments" in error(r, *command), command


def test_reserve_limits(server):
    r = server.client()
    bucket_size = "BUCKETSIZE: value must be an integer between 1 and 255, inclusive."
    assert error(r, "CF.RESERVE", "cf", 100, "BUCKETSIZE", 33554432) == bucket_size
    assert error(r, "CF.RESERVE", "cf", 100, "MAXITERATIONS", 165536) == \
        "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive."
    assert error(r, "CF.RESERVE", "cf", 100, "EXPANSION", 327695) == \
        "EXPANSION: value must be an integer between 0 and 32768, inclusive."
    assert error(r, "CF.RESERVE", "CF", 67108864, "BUCKETSIZE", 33554432,
                 "MAXITERATIONS", 1337, "EXPANSION", 1337) == bucket_size
    # Each at its largest (a 150 MB table here, 134 MB in RedisBloom).
    assert ok(r.execute_command("CF.RESERVE", "cf", 67108864, "BUCKETSIZE", 255,
                                "MAXITERATIONS", 65535, "EXPANSION", 32768))
    fields = dict(info(r, "cf"))
    assert fields["Bucket size"] == 255
    assert fields["Expansion rate"] == 32768
    assert fields["Max iterations"] == 65535


def test_scandump(server):
    r = server.client()
    maxrange = 500
    r.execute_command("CF.RESERVE", "cf", maxrange // 8)
    assert r.execute_command("CF.SCANDUMP", "cf", 0) == [0, None]  # no items: nothing to dump
    items = [str(x) for x in range(maxrange)]
    for x in items:
        r.execute_command("CF.ADD", "cf", x)
    assert all(x == 1 for x in r.execute_command("CF.MEXISTS", "cf", *items))
    assert "wrong number of arguments" in error(r, "CF.SCANDUMP", "cf")
    assert error(r, "CF.SCANDUMP", "cf", "str") == "Invalid position"
    assert error(r, "CF.SCANDUMP", "noexist", 0) == "not found"
    round_trip(r, "cf", "cf", items)


def test_scandump_with_expansion(server):
    r = server.client()
    maxrange = 500
    r.execute_command("CF.RESERVE", "cf", maxrange // 8, "EXPANSION", 2)
    assert r.execute_command("CF.SCANDUMP", "cf", 0) == [0, None]
    items = [str(x) for x in range(maxrange)]
    for x in items:
        r.execute_command("CF.ADD", "cf", x)
    assert all(x == 1 for x in r.execute_command("CF.MEXISTS", "cf", *items))
    before = info(r, "cf")
    round_trip(r, "cf", "cf", items)
    if ours(r):
        assert info(r, "cf") == before  # the same sub-filters, the same counts


def test_scandump_huge(server):
    r = server.client()
    # 64 Mi items of capacity: a 150 MB table here (67 MB in RedisBloom,
    # where the copies of `foo` its two buckets cannot hold make a second
    # sub-filter of 67 MB).
    r.execute_command("CF.RESERVE", "cf", 1024 * 1024 * 64)
    assert r.execute_command("CF.SCANDUMP", "cf", 0) == [0, None]
    for _ in range(6):
        r.execute_command("CF.ADD", "cf", "foo")
    assert r.execute_command("CF.EXISTS", "cf", "foo") == 1
    chunks = round_trip(r, "cf", "cf", ["foo"])
    assert len(chunks) > 2  # a header chunk and many data chunks
    if ours(r):
        assert r.execute_command("CF.COUNT", "cf", "foo") == 6


def test_scandump_with_content(server):
    r = server.client()
    r.execute_command("CF.RESERVE", "cf", 1024 * 1024 * 64)
    items = [f"foo{x}" for x in range(1000)]
    pipe = r.pipeline(transaction=False)
    for x in items:
        pipe.execute_command("CF.ADD", "cf", x)
    assert all(x == 1 for x in pipe.execute())
    assert all(x == 1 for x in r.execute_command("CF.MEXISTS", "cf", *items))
    # Restored into another key while the filter stays.
    round_trip(r, "cf", "cf2", items, delete=False)
    if ours(r):
        assert r.dump("cf2") == r.dump("cf")


def test_scandump_invalid(server):
    r = server.client()
    r.execute_command("CF.RESERVE", "cf", 4)
    before = r.dump("cf")
    # Bytes for a live filter, at iterators no chunk can end at. (The
    # original asserts an error; the text is RedisBloom's for each.)
    for iterator, data in [
        ("-9223372036854775808", "1"),
        ("922337203685477588", "1"),
        ("4", "kdoasdksaodsadsadsadsadsadadsadadsdad"),
        ("4", "abcd"),
    ]:
        assert error(r, "CF.LOADCHUNK", "cf", iterator, data) == "Couldn't load chunk!"
    # Beyond the original: iterator 0 is no position at all.
    assert error(r, "CF.LOADCHUNK", "cf", 0, "abcd") == "Invalid position"
    if ours(r):
        assert r.dump("cf") == before  # nothing changed
    r.execute_command("CF.ADD", "cf", "x")
    assert error(r, "CF.SCANDUMP", "cf", -1) == "Invalid position"


def test_scandump_invalid_header(server):
    r = server.client()
    r.execute_command("CF.RESERVE", "cf", 100)
    for x in range(50):
        r.execute_command("CF.ADD", "cf", f"foo{x}")
    _, header = r.execute_command("CF.SCANDUMP", "cf", 0)
    r.delete("cf")
    # The header chunk with its first 9 bytes zeroed, at iterator 1
    # (where RedisBloom's header chunk goes).
    damaged = bytes(9) + header[9:]
    assert error(r, "CF.LOADCHUNK", "cf", 1, damaged) == "Couldn't create filter!"
    assert r.exists("cf") == 0
    if ours(r):
        # Intact, but at RedisBloom's position (here a first chunk goes at
        # one more than its length): no filter either.
        assert error(r, "CF.LOADCHUNK", "cf", 1, header) == "Couldn't create filter!"
        assert r.exists("cf") == 0


def check_iterators(r, key, iterators):
    """CF.SCANDUMP at each iterator (pipelined) answers, never errs; here,
    with the encoding from that position, or [0, nil] past its end (a
    read hands out nothing wrong)."""
    pipe = r.pipeline(transaction=False)
    for it in iterators:
        pipe.execute_command("CF.SCANDUMP", key, it)
    replies = pipe.execute()
    if not ours(r):
        return
    whole = b"".join(data for _, data in scandump_all(r, key))
    for it, (next_it, data) in zip(iterators, replies):
        if it == 0:
            assert data == whole[: len(data)] and next_it == len(data) + 1, it
        elif it - 1 >= len(whole):
            assert (next_it, data) == (0, None), it
        else:
            assert data and data == whole[it - 1 : it - 1 + len(data)], it
            assert next_it == it + len(data), it


def test_scandump_random_scan_small(server):
    r = server.client()
    r.execute_command("CF.RESERVE", "cf", 50)
    add_until(r, "cf", [f"x{i}" for i in range(10000)], "Maximum expansions reached")
    # Every iterator from 0 to 1024 past the filter's size. Changed: here
    # the encoding can be longer than CF.INFO's Size (RedisBloom's is
    # shorter), so the range covers both.
    end = max(size(r, "cf"), sum(len(d) for _, d in scandump_all(r, "cf")))
    check_iterators(r, "cf", list(range(0, end + 1024)))
    # On a client that began no dump.
    check_iterators(server.client(), "cf", random.sample(range(1, 2 * end), 300))


def test_scandump_scan_big(server):
    r = server.client()
    r.execute_command("CF.RESERVE", "cf", 1024, "EXPANSION", 30000)
    # A million items: a second level of 30.72 million (69 MB here).
    insert_until_full(r, "cf", ([f"x{i}{j}" for j in range(10000)] for i in range(100)))
    limit = 2 * size(r, "cf")
    check_iterators(r, "cf", [random.randint(0, limit) for _ in range(100)])


def test_scandump_load_small(server):
    r = server.client()
    r.execute_command("CF.RESERVE", "cf", 10)
    insert_until_full(r, "cf", ([f"x{i}{j}" for j in range(1000)] for i in range(100)))
    before, mine = r.dump("cf"), ours(r)
    # Random bytes at random iterators: any error is one of three
    # (RedisBloom copies those that fit into its filter and answers OK;
    # here a live filter takes no chunk: each is refused).
    # (CF.INFO's Size here is 15 times RedisBloom's: 15 times the tries.)
    pipe = r.pipeline(transaction=False)
    for _ in range(size(r, "cf") + 100):
        data = os.urandom(random.randint(0, 100))
        pipe.execute_command("CF.LOADCHUNK", "cf", random.randint(0, 10000), data)
    for reply in pipe.execute(raise_on_error=False):
        if isinstance(reply, ResponseError):
            assert str(reply) in ("Couldn't load chunk!", "Invalid position", "item exists"), reply
        else:
            assert not mine and ok(reply)
    if mine:
        assert r.dump("cf") == before  # a live filter takes no chunk


def test_scandump_load_big(server):
    r = server.client()
    r.execute_command("CF.RESERVE", "cf", 1024, "EXPANSION", 30000)
    insert_until_full(r, "cf", ([f"x{i}{j}" for j in range(1000)] for i in range(100)))
    before, mine, limit = r.dump("cf"), ours(r), size(r, "cf")
    # Random bytes, 1 KiB to 36 MiB, at a random iterator past the header
    # into a live filter: any error is `Couldn't load chunk!` (RedisBloom
    # copies the bytes that fit into its filter and answers OK; here a
    # live filter takes no chunk, so every one is refused and nothing
    # changes). Changed: 100 chunks of 18 MiB on average are 1.8 GB sent;
    # here 90 are of 1 KiB to 1 MiB and 10 of 1 KiB to 36 MiB (slices of
    # one random buffer), to bound the time.
    pool = os.urandom(36 * 1024 * 1024)
    for n in range(100):
        length = random.randint(1024, len(pool) if n % 10 == 0 else 1 << 20)
        start = random.randint(0, len(pool) - length)
        data = pool[start : start + length]
        try:
            reply = r.execute_command("CF.LOADCHUNK", "cf", random.randint(2, limit), data)
        except ResponseError as e:
            assert str(e) == "Couldn't load chunk!"
        else:
            assert not mine and ok(reply)
    if mine:
        assert r.dump("cf") == before
