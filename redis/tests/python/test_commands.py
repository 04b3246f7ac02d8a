"""Every CF.* command, its replies and its errors, in RESP2 and RESP3.

Replies are compared with RedisBloom's: RESP3 booleans where RedisBloom
sends them (CF.ADD, CF.ADDNX, CF.EXISTS, CF.MEXISTS, CF.DEL, CF.INSERT),
integers elsewhere (CF.INSERTNX, CF.COUNT), and CF.INFO's eight fields in
RedisBloom's order. Errors are the exact strings clients compare (redis-py
strips a leading "ERR ").
"""

import pytest
from redis.exceptions import ResponseError, WatchError

INFO_FIELDS = [
    "Size",
    "Number of buckets",
    "Number of filters",
    "Number of items inserted",
    "Number of items deleted",
    "Bucket size",
    "Expansion rate",
    "Max iterations",
]


def error(r, *command):
    with pytest.raises(ResponseError) as e:
        r.execute_command(*command)
    return str(e.value)


def resp3(r):
    return r.connection_pool.connection_kwargs.get("protocol") == 3


def boolean(r, value):
    """What RedisBloom sends for a boolean: RESP3 true/false, RESP2 1/0."""
    return value if resp3(r) else int(value)


def same(a, b):
    """Equal, and of the same Python type (bool is not int here)."""
    return a == b and type(a) is type(b)


def scandump(r, key):
    """The filter's CF.SCANDUMP chunks: (iterator, data) pairs, in order."""
    chunks, it = [], 0
    while True:
        it, data = r.execute_command("CF.SCANDUMP", key, it)
        if it == 0:
            return chunks
        chunks.append((it, data))


def encoding(r, key):
    """The filter's encoding: its CF.SCANDUMP chunks, concatenated."""
    return b"".join(data for _, data in scandump(r, key))


def copy_by_chunks(r, source, target):
    """Restores `target` from `source`'s CF.SCANDUMP chunks (CF.LOADCHUNK
    each); asserts each was taken."""
    for it, data in scandump(r, source):
        assert r.execute_command("CF.LOADCHUNK", target, it, data) in (b"OK", "OK", True)


def info(r, key):
    reply = r.execute_command("CF.INFO", key)
    if isinstance(reply, dict):
        pairs = list(reply.items())
    else:
        pairs = list(zip(reply[::2], reply[1::2]))
    return [(k.decode(), v) for k, v in pairs]


def test_reserve_and_its_errors(r):
    assert r.execute_command("CF.RESERVE", "cf", 1000) in (b"OK", "OK", True)
    assert error(r, "CF.RESERVE", "cf", 1000) == "item exists"
    r.set("str", "x")
    assert error(r, "CF.RESERVE", "str", 1000).startswith("WRONGTYPE")
    # Arity: the key and capacity, then keyword-value pairs.
    assert "wrong number of arguments" in error(r, "CF.RESERVE", "k")
    assert "wrong number of arguments" in error(r, "CF.RESERVE", "k", 10, "BUCKETSIZE")
    cases = [
        ((10 ** 30,), "Bad capacity"),
        (("x",), "Bad capacity"),
        (("+5",), "Bad capacity"),
        ((3,), "Capacity must be at least (BucketSize * 2)"),
        ((-10,), "Capacity must be at least (BucketSize * 2)"),
        ((100, "BUCKETSIZE", 100), "Capacity must be at least (BucketSize * 2)"),
        ((100, "BUCKETSIZE", "x"), "Couldn't parse BUCKETSIZE"),
        ((100, "BUCKETSIZE", 0), "BUCKETSIZE: value must be an integer between 1 and 255, inclusive."),
        ((100, "BUCKETSIZE", 256), "BUCKETSIZE: value must be an integer between 1 and 255, inclusive."),
        ((100, "MAXITERATIONS", "x"), "Couldn't parse MAXITERATIONS"),
        ((100, "MAXITERATIONS", 0), "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive."),
        ((100, "MAXITERATIONS", 65536), "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive."),
        ((100, "EXPANSION", "x"), "Couldn't parse EXPANSION"),
        ((100, "EXPANSION", -1), "EXPANSION: value must be an integer between 0 and 32768, inclusive."),
        ((100, "EXPANSION", 32769), "EXPANSION: value must be an integer between 0 and 32768, inclusive."),
        ((100, "EXPANSOIN", 0), "Unknown argument received"),
        # RedisBloom's order: MAXITERATIONS, then BUCKETSIZE, then
        # EXPANSION, then the capacity against the bucket size; each
        # keyword's first occurrence counts.
        ((100, "BUCKETSIZE", "x", "MAXITERATIONS", "x"), "Couldn't parse MAXITERATIONS"),
        ((100, "EXPANSION", "x", "BUCKETSIZE", 0), "BUCKETSIZE: value must be"),
        ((3, "BUCKETSIZE", 2, "EXPANSION", "x"), "Couldn't parse EXPANSION"),
        ((100, "BUCKETSIZE", "x", "BUCKETSIZE", 2), "Couldn't parse BUCKETSIZE"),
        ((100, "FOO", 1, "MAXITERATIONS", 0), "MAXITERATIONS: value must be"),
        ((100, "ERROR", "x"), "Bad error rate"),
        ((100, "ERROR", 0), "(0 < error rate range < 1)"),
        ((100, "ERROR", 1), "(0 < error rate range < 1)"),
        ((100, "ERROR", 1e-12), "error rate too small"),
        ((100, "SEED", "-1"), "Bad seed"),
        ((10 ** 15,), "Insufficient memory to create filter"),
    ]
    for args, expected in cases:
        got = error(r, "CF.RESERVE", "new", *args)
        assert got.startswith(expected), (args, got)
        assert r.exists("new") == 0, args
    assert r.execute_command("CF.RESERVE", "first", 100, "BUCKETSIZE", 4, "BUCKETSIZE", "x")
    assert dict(info(r, "first"))["Bucket size"] == 4
    # Every option, any case, in any order.
    assert r.execute_command(
        "CF.RESERVE", "all", 5000, "maxiterations", 7, "Expansion", 0,
        "BUCKETSIZE", 4, "ERROR", 0.01, "SEED", 42,
    )
    got = dict(info(r, "all"))
    assert (got["Bucket size"], got["Max iterations"], got["Expansion rate"]) == (4, 7, 0)
    assert got["Number of filters"] == 1


def test_add_addnx_and_auto_creation(r):
    assert same(r.execute_command("CF.ADD", "auto", "a"), boolean(r, True))
    assert same(r.execute_command("CF.ADD", "auto", "a"), boolean(r, True))  # a second copy
    assert same(r.execute_command("CF.ADDNX", "auto", "a"), boolean(r, False))
    assert same(r.execute_command("CF.ADDNX", "auto", "b"), boolean(r, True))
    assert same(r.execute_command("CF.COUNT", "auto", "a"), 2)
    got = dict(info(r, "auto"))
    assert got["Number of items inserted"] == 3
    assert (got["Expansion rate"], got["Bucket size"], got["Max iterations"]) == (1, 2, 20)
    assert "wrong number of arguments" in error(r, "CF.ADD", "auto")
    assert "wrong number of arguments" in error(r, "CF.ADDNX", "auto", "a", "b")
    r.set("str", "x")
    assert error(r, "CF.ADD", "str", "a").startswith("WRONGTYPE")
    assert error(r, "CF.ADDNX", "str", "a").startswith("WRONGTYPE")


def test_insert_and_insertnx(r):
    ok = boolean(r, True)
    assert r.execute_command("CF.INSERT", "i", "ITEMS", "a", "b", "a") == [ok, ok, ok]
    assert all(same(x, ok) for x in r.execute_command("CF.INSERT", "i", "ITEMS", "c"))
    assert r.execute_command("CF.INSERTNX", "i", "ITEMS", "a", "d", "d") == [0, 1, 0]
    assert all(type(x) is int for x in r.execute_command("CF.INSERTNX", "i", "ITEMS", "e"))
    assert dict(info(r, "i"))["Number of items inserted"] == 6
    # Options before ITEMS, any case.
    assert r.execute_command("CF.INSERT", "j", "capacity", 5000, "error", 0.01, "items", "x") == [ok]
    assert r.execute_command("CF.INSERT", "j", "NOCREATE", "ITEMS", "y") == [ok]
    assert error(r, "CF.INSERT", "none", "NOCREATE", "ITEMS", "x") == "not found"
    assert error(r, "CF.INSERTNX", "none", "NOCREATE", "ITEMS", "x") == "not found"
    assert r.exists("none") == 0
    assert error(r, "CF.INSERT", "j", "CAPACITY", "x", "ITEMS", "a") == "Bad capacity"
    assert error(r, "CF.INSERT", "j", "CAPACITY", 3, "ITEMS", "a") == "Capacity must be at least (BucketSize * 2)"
    assert error(r, "CF.INSERT", "j", "FOO", "ITEMS", "a") == "Unknown argument received"
    for bad in (("CF.INSERT", "j", "ITEMS"), ("CF.INSERT", "j", "a", "b"), ("CF.INSERT", "j", "CAPACITY")):
        assert "wrong number of arguments" in error(r, *bad) or error(r, *bad) == "Unknown argument received"
    assert "wrong number of arguments" in error(r, "CF.INSERT", "j", "ITEMS")
    r.set("str", "x")
    assert error(r, "CF.INSERT", "str", "ITEMS", "a").startswith("WRONGTYPE")
    # A full fixed filter: RedisBloom's -1 (RESP2) or false (RESP3) for
    # CF.INSERT, -1 for CF.INSERTNX, and the rest still goes in.
    assert r.execute_command("CF.RESERVE", "tiny", 4, "EXPANSION", 0, "ERROR", 0.05)
    replies = r.execute_command("CF.INSERT", "tiny", "ITEMS", *range(100))
    full = False if resp3(r) else -1
    assert replies.count(full) > 0 and replies.count(ok) > 0
    assert all(same(x, ok) or same(x, full) for x in replies)
    stored = [i for i, x in enumerate(replies) if same(x, ok)]
    assert dict(info(r, "tiny"))["Number of items inserted"] == len(stored)
    assert all(r.execute_command("CF.EXISTS", "tiny", i) for i in stored)
    nx = r.execute_command("CF.INSERTNX", "tiny", "ITEMS", *range(100, 200))
    assert -1 in nx and all(type(x) is int for x in nx)


def test_exists_mexists_count(r):
    r.execute_command("CF.INSERT", "e", "ITEMS", "a", "b", "b")
    assert same(r.execute_command("CF.EXISTS", "e", "a"), boolean(r, True))
    assert same(r.execute_command("CF.EXISTS", "e", "zzz"), boolean(r, False))
    assert r.execute_command("CF.MEXISTS", "e", "a", "zzz", "b") == [
        boolean(r, True), boolean(r, False), boolean(r, True)]
    assert same(r.execute_command("CF.COUNT", "e", "b"), 2)
    assert same(r.execute_command("CF.COUNT", "e", "zzz"), 0)
    # A missing key answers with zeros.
    assert same(r.execute_command("CF.EXISTS", "missing", "a"), boolean(r, False))
    assert r.execute_command("CF.MEXISTS", "missing", "a", "b") == [boolean(r, False)] * 2
    assert same(r.execute_command("CF.COUNT", "missing", "a"), 0)
    assert r.exists("missing") == 0
    # A key of another type is WRONGTYPE (RedisBloom answers 0 here).
    r.set("str", "x")
    for command in (("CF.EXISTS", "str", "a"), ("CF.MEXISTS", "str", "a"), ("CF.COUNT", "str", "a")):
        assert error(r, *command).startswith("WRONGTYPE")
    assert "wrong number of arguments" in error(r, "CF.EXISTS", "e")
    assert "wrong number of arguments" in error(r, "CF.MEXISTS", "e")
    assert "wrong number of arguments" in error(r, "CF.COUNT", "e", "a", "b")


def test_del(r):
    r.execute_command("CF.INSERT", "d", "ITEMS", "a", "a")
    assert same(r.execute_command("CF.DEL", "d", "a"), boolean(r, True))
    assert same(r.execute_command("CF.DEL", "d", "a"), boolean(r, True))
    assert same(r.execute_command("CF.DEL", "d", "a"), boolean(r, False))
    assert dict(info(r, "d"))["Number of items deleted"] == 2
    assert error(r, "CF.DEL", "missing", "a") == "Not found"
    r.set("str", "x")
    assert error(r, "CF.DEL", "str", "a").startswith("WRONGTYPE")
    assert "wrong number of arguments" in error(r, "CF.DEL", "d")


def test_info_has_redisbloom_fields_in_order(r):
    r.execute_command("CF.RESERVE", "f", 1000, "BUCKETSIZE", 4, "MAXITERATIONS", 50, "EXPANSION", 2)
    r.execute_command("CF.INSERT", "f", "ITEMS", *range(5000))
    r.execute_command("CF.DEL", "f", 7)
    reply = r.execute_command("CF.INFO", "f")
    assert isinstance(reply, dict) == resp3(r)
    got = info(r, "f")
    assert [k for k, _ in got] == INFO_FIELDS
    values = dict(got)
    assert all(type(v) is int for v in values.values())
    assert values["Number of filters"] > 1
    assert values["Number of items inserted"] == 4999
    assert values["Number of items deleted"] == 1
    assert (values["Bucket size"], values["Expansion rate"], values["Max iterations"]) == (4, 2, 50)
    assert values["Size"] > 0 and values["Number of buckets"] > 0
    assert error(r, "CF.INFO", "missing") == "not found"
    r.set("str", "x")
    assert error(r, "CF.INFO", "str").startswith("WRONGTYPE")


def test_stats_reports_the_library_figures(r):
    r.execute_command("CF.RESERVE", "s", 1000, "ERROR", 0.001)
    r.execute_command("CF.INSERT", "s", "ITEMS", *range(20000))
    reply = r.execute_command("CF.STATS", "s")
    if not isinstance(reply, dict):
        reply = dict(zip(reply[::2], reply[1::2]))
    stats = {k.decode(): v for k, v in reply.items()}
    assert stats["Kind"] in (b"growing", "growing")
    assert stats["Items"] == 20000
    assert stats["Levels"] == len(stats["Fingerprint bits"]) > 1
    assert all(b in (8, 16, 32) for b in stats["Fingerprint bits"])
    assert float(stats["False positive bound"]) <= 0.001
    assert float(stats["Error rate"]) == 0.001
    assert sum(stats["Path lengths"]) == stats["Inserts"] == 20000
    assert 0 < float(stats["Load factor"]) < 1
    assert error(r, "CF.STATS", "missing") == "not found"


def test_scandump_and_loadchunk_round_trip(r):
    r.execute_command("CF.RESERVE", "src", 100, "EXPANSION", 2)
    for start in range(0, 500000, 10000):
        r.execute_command("CF.INSERT", "src", "ITEMS", *range(start, start + 10000))
    chunks, it = [], 0
    while True:
        it, data = r.execute_command("CF.SCANDUMP", "src", it)
        if it == 0:
            assert data is None
            break
        chunks.append((it, data))
    assert len(chunks) > 1, "more than one 1 MiB chunk"
    for it, data in chunks:
        assert r.execute_command("CF.LOADCHUNK", "dst", it, data) in (b"OK", "OK", True)
    assert info(r, "dst") == info(r, "src")
    assert all(r.execute_command("CF.MEXISTS", "dst", *range(0, 500000, 97)))
    assert r.dump("dst") == r.dump("src")


def test_scandump_as_redisbloom_users_see_it(r):
    # A filter with no items: nothing to dump (RedisBloom's [0, nil]), at
    # any iterator, and no key to restore.
    r.execute_command("CF.RESERVE", "empty", 1000)
    for it in (0, 1, 5, 10**9):
        assert r.execute_command("CF.SCANDUMP", "empty", it) == [0, None]
    r.execute_command("CF.ADD", "empty", "x")
    r.execute_command("CF.DEL", "empty", "x")
    assert r.execute_command("CF.SCANDUMP", "empty", 0) == [0, None]
    # A dump is a header chunk, then data chunks: the header chunk is the
    # encoding's headers only (far smaller than a 1 MiB data chunk), and
    # every reply's iterator is 1 + the bytes handed out so far.
    r.execute_command("CF.RESERVE", "f", 1_000_000, "EXPANSION", 0)
    r.execute_command("CF.INSERT", "f", "ITEMS", *range(1000))
    chunks, it, total = [], 0, 0
    while True:
        it, data = r.execute_command("CF.SCANDUMP", "f", it)
        if it == 0:
            assert data is None
            break
        total += len(data)
        assert it == total + 1
        chunks.append((it, data))
    assert len(chunks) >= 3
    assert len(chunks[0][1]) < 200 < len(chunks[1][1]) == 1 << 20
    # The header chunk alone creates the key (a restore in progress); the
    # data chunks complete it.
    assert r.execute_command("CF.LOADCHUNK", "g", *chunks[0]) in (b"OK", "OK")
    assert "being restored" in error(r, "CF.EXISTS", "g", "1")
    for chunk in chunks[1:]:
        assert r.execute_command("CF.LOADCHUNK", "g", *chunk) in (b"OK", "OK")
    assert all(r.execute_command("CF.MEXISTS", "g", *range(1000)))
    # A damaged header chunk: Couldn't create filter!, and no key.
    bad = bytearray(chunks[0][1])
    bad[len(bad) // 2] ^= 0x40
    assert error(r, "CF.LOADCHUNK", "h", chunks[0][0], bytes(bad)) == "Couldn't create filter!"
    assert r.exists("h") == 0


def test_scandump_and_loadchunk_errors(r):
    r.execute_command("CF.INSERT", "src", "ITEMS", "a")
    assert error(r, "CF.SCANDUMP", "src", -1) == "Invalid position"
    assert error(r, "CF.SCANDUMP", "src", "x") == "Invalid position"
    # Any iterator inside the encoding answers its bytes from there
    # (RedisBloom's contract: test_redisbloom_flow.py).
    assert r.execute_command("CF.SCANDUMP", "src", 5)[0] > 5
    assert error(r, "CF.SCANDUMP", "missing", 0) == "not found"
    it, data = r.execute_command("CF.SCANDUMP", "src", 0)
    # The header chunk, then the data chunk, then past the end: done.
    it, body = r.execute_command("CF.SCANDUMP", "src", it)
    assert it == 1 + len(data) + len(body)
    assert r.execute_command("CF.SCANDUMP", "src", it) == [0, None]
    assert r.execute_command("CF.SCANDUMP", "src", it + 1000) == [0, None]
    # A write between two calls ends a dump.
    r.execute_command("CF.RESERVE", "big", 1000000, "EXPANSION", 0)  # 2.3 MB: 3 chunks
    r.execute_command("CF.INSERT", "big", "ITEMS", *range(1000))
    it, _ = r.execute_command("CF.SCANDUMP", "big", 0)
    r.execute_command("CF.ADD", "big", "more")
    assert "changed during CF.SCANDUMP" in error(r, "CF.SCANDUMP", "big", it)
    # Two dumps at the header chunk, one stale: the current one's header
    # chunk is cut one byte short, so that its iterator is not the stale
    # one's; the current one goes on, the stale one still gets its error
    # (whoever asks: the iterator names the state).
    other = r.connection_pool.get_connection("_")
    try:
        other.send_command("CF.SCANDUMP", "big", 0)
        stale, _ = other.read_response()
        r.execute_command("CF.ADD", "big", "more again")
        current, _ = r.execute_command("CF.SCANDUMP", "big", 0)
        assert current == stale - 1
        assert r.execute_command("CF.SCANDUMP", "big", current)[0] > current
        other.send_command("CF.SCANDUMP", "big", stale)
        with pytest.raises(ResponseError, match="changed during CF.SCANDUMP"):
            other.read_response()
    finally:
        other.disconnect()  # a new client next time: this one's dump is stale
        r.connection_pool.release(other)
    # A call repeated with the same iterator hands out the same chunk again
    # (dumps are kept by where they are, not consumed by a call).
    assert r.execute_command("CF.SCANDUMP", "big", current) == r.execute_command(
        "CF.SCANDUMP", "big", current
    )
    # LOADCHUNK.
    assert error(r, "CF.LOADCHUNK", "dst", "x", data) == "Invalid position"
    assert error(r, "CF.LOADCHUNK", "dst", 0, data) == "Invalid position"
    # A data chunk for a missing key: RedisBloom's `not found`, whatever
    # the iterator (issue 42, defect 6).
    assert error(r, "CF.LOADCHUNK", "dst", -9223372036854775808, "1") == "not found"
    assert error(r, "CF.LOADCHUNK", "dst", 2, "not a filter at all") == "not found"
    assert error(r, "CF.LOADCHUNK", "dst", -1, "x") == "not found"
    assert error(r, "CF.LOADCHUNK", "dst", 20, "not a filter at all") == "Couldn't create filter!"
    assert error(r, "CF.LOADCHUNK", "src", len(data) + 1, data) == "item exists"
    assert error(r, "CF.LOADCHUNK", "missing", 100, "abc") == "not found"
    r.set("str", "x")
    assert error(r, "CF.LOADCHUNK", "str", len(data) + 1, data).startswith("WRONGTYPE")
    # A restore in progress answers nothing, and a bad chunk abandons it.
    r.execute_command("CF.RESERVE", "big2", 200000)
    r.execute_command("CF.ADD", "big2", "an item")
    it, header = r.execute_command("CF.SCANDUMP", "big2", 0)
    it, body = r.execute_command("CF.SCANDUMP", "big2", it)
    first = header + body  # any in-order split loads: here not at the chunks' borders
    half = first[: len(first) // 2]
    assert r.execute_command("CF.LOADCHUNK", "part", len(half) + 1, half)
    assert "being restored" in error(r, "CF.EXISTS", "part", "a")
    assert "being restored" in error(r, "CF.INFO", "part")
    assert error(r, "CF.LOADCHUNK", "part", 5, "xyz") == "Invalid position"  # not where it stopped
    # The rest of the first chunk, damaged: the restore is abandoned (the
    # checksum at the end of the encoding does not match).
    rest = bytearray(first[len(half):])
    rest[-1] ^= 0xFF
    assert error(r, "CF.LOADCHUNK", "part", len(first) + 1, bytes(rest)) == "Couldn't load chunk!"
    assert r.exists("part") == 0
    # Options only with the first chunk.
    assert "only taken with the first chunk" in error(
        r, "CF.LOADCHUNK", "x", 100, "abc", "BUCKETSIZE", 4)


def test_scandump_does_not_abort_a_transaction_watching_the_key(server):
    # CF.SCANDUMP reads: a client WATCHing the key sees no change (Redis
    # counts closing a key opened for writing as one).
    r, other = server.client(), server.client()
    r.execute_command("CF.RESERVE", "k", 1_000_000, "EXPANSION", 0)  # 3 chunks
    r.execute_command("CF.INSERT", "k", "ITEMS", *range(1000))
    whole = encoding(r, "k")
    parts = []
    with r.pipeline() as p:
        p.watch("k")
        it, data = other.execute_command("CF.SCANDUMP", "k", 0)
        parts.append(data)
        p.multi()
        p.execute_command("CF.EXISTS", "k", 1)
        assert p.execute() in ([1], [True])
    # The dump goes on where it was, from another transaction's watch.
    with r.pipeline() as p:
        p.watch("k")
        while it:
            it, data = other.execute_command("CF.SCANDUMP", "k", it)
            parts.append(data or b"")
        p.multi()
        p.execute_command("CF.EXISTS", "k", 1)
        assert p.execute() in ([1], [True])
    assert b"".join(parts) == whole
    # A write still aborts it.
    with r.pipeline() as p:
        p.watch("k")
        other.execute_command("CF.ADD", "k", "more")
        p.multi()
        p.execute_command("CF.EXISTS", "k", 1)
        with pytest.raises(WatchError):
            p.execute()


def test_compact_and_unknown_keys(r):
    r.execute_command("CF.ADD", "c", "a")
    assert r.execute_command("CF.COMPACT", "c") in (b"OK", "OK", True)
    assert error(r, "CF.COMPACT", "missing") == "Cuckoo filter was not found"


def test_key_specs_route_every_command_by_its_first_argument(r):
    commands = ["cf.reserve", "cf.add", "cf.addnx", "cf.insert", "cf.insertnx", "cf.exists",
                "cf.mexists", "cf.count", "cf.del", "cf.compact", "cf.info", "cf.stats",
                "cf.scandump", "cf.loadchunk", "cf.advance"]
    r2 = r
    for name in commands:
        args = {"cf.reserve": [100], "cf.insert": ["ITEMS", "a"], "cf.insertnx": ["ITEMS", "a"],
                "cf.mexists": ["a"], "cf.compact": [], "cf.info": [], "cf.stats": [],
                "cf.scandump": [0], "cf.loadchunk": [1, "x"], "cf.advance": [1]}.get(name, ["a"])
        keys = r2.command_getkeys(name, "thekey", *args)
        assert [k.decode() if isinstance(k, bytes) else k for k in keys] == ["thekey"], name
    # (One argument "COMMAND INFO": no reply callback of redis-py's.)
    reply = r2.execute_command("COMMAND INFO", *commands)
    assert len(reply) == len(commands)
    arity = {e[0].decode(): e[1] for e in reply}
    assert arity == {"cf.reserve": -3, "cf.add": 3, "cf.addnx": 3, "cf.insert": -4,
                     "cf.insertnx": -4, "cf.exists": 3, "cf.mexists": -3, "cf.count": 3,
                     "cf.del": 3, "cf.compact": 2, "cf.info": 2, "cf.stats": 2,
                     "cf.scandump": 3, "cf.loadchunk": -4, "cf.advance": 3}
    # Each entry's key specs (the 9th field): one, at argument 1.
    for entry in reply:
        specs = entry[8]
        assert len(specs) == 1, entry[0]
        spec = specs[0]
        if isinstance(spec, list):
            spec = dict(zip(spec[::2], spec[1::2]))
        begin = spec[b"begin_search"]
        if isinstance(begin, list):
            begin = dict(zip(begin[::2], begin[1::2]))
        index = begin[b"spec"]
        if isinstance(index, list):
            index = dict(zip(index[::2], index[1::2]))
        assert index[b"index"] == 1, entry[0]


def test_a_dump_whose_filter_was_replaced_fails(server):
    """Issue 32, defect 5: a dump interrupted by DEL + CF.RESERVE of its
    key (or RESTORE REPLACE, RENAME onto it, SWAPDB) ended with [0, nil]
    as if complete: the client's backup was silently cut short."""
    r = server.client()

    def big(key):
        r.execute_command("CF.RESERVE", key, 1_000_000, "EXPANSION", 0)  # 3 chunks
        r.execute_command("CF.INSERT", key, "ITEMS", *range(100))

    def replaced(how):
        r.flushall()
        big("k")
        it, _ = r.execute_command("CF.SCANDUMP", "k", 0)
        it, _ = r.execute_command("CF.SCANDUMP", "k", it)
        how()
        with pytest.raises(ResponseError, match="replaced|changed"):
            r.execute_command("CF.SCANDUMP", "k", it)

    def del_reserve():
        r.delete("k")
        r.execute_command("CF.RESERVE", "k", 1000)

    def restore_replace():
        r.execute_command("CF.ADD", "small", "x")
        r.restore("k", 0, r.dump("small"), replace=True)

    def rename():
        r.execute_command("CF.ADD", "other", "x")
        r.rename("other", "k")

    def swapdb():
        server.client(db=1).execute_command("CF.ADD", "k", "x")
        r.swapdb(0, 1)

    for how in (del_reserve, restore_replace, rename, swapdb):
        replaced(how)
    # A dump of the filter that stays there still ends with [0, nil].
    r.flushall()
    big("k")
    chunks, it = 0, 0
    while True:
        it, data = r.execute_command("CF.SCANDUMP", "k", it)
        if it == 0:
            break
        chunks += 1
    assert chunks == 4 and data is None


def test_a_finished_dump_frees_its_state(server):
    """Issue 32, defect 4: a finished CF.SCANDUMP kept its state until the
    key was written (500 filters dumped once each left used_memory 1.8 MB
    higher). Now the closing call frees it."""
    r = server.client()
    keys = [f"f{i}" for i in range(200)]
    for key in keys:
        r.execute_command("CF.ADD", key, "x")

    def dump_all():
        for key in keys:
            it = 0
            while True:
                it, _ = r.execute_command("CF.SCANDUMP", key, it)
                if it == 0:
                    break

    r.execute_command("CF.SCANDUMP", keys[0], 0)  # the reply buffers settle
    before = r.info("memory")["used_memory"]
    dump_all()
    grew = r.info("memory")["used_memory"] - before
    # What is left: which client dumps which filter (a few dozen bytes
    # each), not the dumps' states (about 3.6 KB each before).
    assert grew < 100 * 1024, grew


def test_dump_state_of_one_key_is_freed_bounded_and_counted(server):
    """Issue 32, defect 4: 40 write+dump cycles on one key kept 104 KB
    (a finished dump's state stayed until 64 newer ones were made stale),
    states at distinct positions of one filter were kept without bound,
    and MEMORY USAGE counted none of them. Now the closing call frees a
    dump's state, a key keeps at most 128 states, and MEMORY USAGE
    reports what they hold: what DEL then frees (one command: the
    server's own buffers, resized by its timers, do not blur it)."""
    r = server.client()
    r.config_set("lazyfree-lazy-user-del", "no")  # DEL frees at once

    def used():
        return r.info("memory")["used_memory"]

    def dump(key):
        it, chunks = 0, []
        while True:
            it, data = r.execute_command("CF.SCANDUMP", key, it)
            if it == 0:
                return chunks
            chunks.append(data)

    def freed_as_reported(key):
        reported, before = r.memory_usage(key), used()
        r.delete(key)
        freed = before - used()
        # The allocator's size classes aside, MEMORY USAGE is what the
        # key held.
        assert abs(freed - reported) <= reported // 20 + 1024, (freed, reported)
        return freed

    # Every command once first (their first use grows the server's own
    # structures).
    for _ in range(2):
        r.execute_command("CF.ADD", "k", "first")
        dump("k")
        r.memory_usage("k")
        used()
        r.delete("k")

    # Finished dumps, each after a write: nothing kept.
    r.execute_command("CF.ADD", "k", "first")
    dump("k")
    reported = r.memory_usage("k")
    for i in range(40):
        r.execute_command("CF.ADD", "k", f"w{i}")
        dump("k")
    assert r.memory_usage("k") == reported
    # Before: 110-160 KB freed, 5 KB reported.
    assert freed_as_reported("k") < 8 * 1024

    # Unfinished dumps, each made stale by a write: where each stopped is
    # kept (a mark of 24 bytes, the newest 256: to tell their clients to
    # start again; issue 42: no encoder), and counted.
    r.execute_command("CF.ADD", "k", "first")
    reported = r.memory_usage("k")
    for i in range(100):
        r.execute_command("CF.ADD", "k", f"a{i}")
        r.execute_command("CF.SCANDUMP", "k", 0)
    stale = r.memory_usage("k") - reported
    assert 100 * 24 <= stale <= 256 * 24 + 1024, stale
    freed_as_reported("k")

    # Unfinished dumps of one state of a filter, at distinct positions
    # (any iterator is served, as RedisBloom does): at most 128 kept
    # however many there are, and counted.
    r.execute_command("CF.RESERVE", "big", 1_500_000, "EXPANSION", 0)
    r.execute_command("CF.INSERT", "big", "ITEMS", *range(100))
    total = sum(len(c) for c in dump("big"))
    step = (total - (1 << 20)) // 220
    assert step > 0, total
    reported = r.memory_usage("big")

    def abandon(positions):
        for j in positions:
            # A chunk from offset j*step, left there.
            it, data = r.execute_command("CF.SCANDUMP", "big", 1 + j * step)
            assert it != 0 and data

    abandon(range(1, 140))
    held = r.memory_usage("big") - reported
    assert 128 * 512 < held < 128 * 4096, held
    abandon(range(140, 220))
    # No more held (the states differ by a few bytes of buffers).
    assert r.memory_usage("big") - reported <= held + 1024
