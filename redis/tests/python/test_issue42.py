"""Issue 42: a review of the module at 68dce41 (Redis 7.0.15, Valkey
9.1.2). One test per defect; each failed there (the message is in its
docstring)."""

from test_commands import error


def total_memory(r):
    return r.info("cuckoo_filters")["cuckoo_memory"]


def keys_memory(r):
    return sum(r.memory_usage(k) for k in r.scan_iter(count=1000))


def dump(r, key):
    """(iterator, chunk) of every CF.SCANDUMP chunk of `key`, in order."""
    chunks, it = [], 0
    for _ in range(10000):
        it, data = r.execute_command("CF.SCANDUMP", key, it)
        if it == 0:
            return chunks
        chunks.append((it, data))
    raise AssertionError("CF.SCANDUMP did not end")


def test_info_memory_counts_restores_copies_and_dumps(server):
    """Defect 2: INFO's cuckoo_memory left out a restore that had received
    only its header, and its copies: after the 64-byte header chunk of a
    10M-capacity filter, cuckoo_memory was 344 while MEMORY USAGE was
    25.9 MB (at 68dce41: `AssertionError: header only: cuckoo_memory 344,
    keys 25,907,...`); saved CF.SCANDUMP positions were in MEMORY USAGE
    but not in the total. Now the total is the sum of the keys' MEMORY
    USAGE (within 15%) at every step of a restore (header only, partial,
    complete), its COPYs and DEBUG RELOADs, and during a dump."""
    r = server.client()
    r.execute_command("CF.RESERVE", "src", 10_000_000, "EXPANSION", 0)
    r.execute_command("CF.INSERT", "src", "ITEMS", *range(1000))
    chunks = dump(r, "src")
    assert len(chunks) > 20
    r.delete("src")

    def check(step):
        total, keys = total_memory(r), keys_memory(r)
        assert abs(total - keys) <= keys * 0.15, f"{step}: cuckoo_memory {total:,}, keys {keys:,}"

    assert r.execute_command("CF.LOADCHUNK", "dst", *chunks[0])
    check("header only")
    r.copy("dst", "copy1")
    check("a copy of a restore of its header only")
    r.execute_command("DEBUG", "RELOAD")
    check("header only, reloaded")
    for chunk in chunks[1:10]:
        assert r.execute_command("CF.LOADCHUNK", "dst", *chunk)
    check("partial")
    r.copy("dst", "copy2")
    check("a copy of a partial restore")
    r.execute_command("DEBUG", "RELOAD")
    check("partial, reloaded")
    for chunk in chunks[10:]:
        assert r.execute_command("CF.LOADCHUNK", "dst", *chunk)
    assert r.execute_command("CF.EXISTS", "dst", 7) == 1
    check("complete")
    r.copy("dst", "copy3")
    check("a copy of a complete restore")
    r.execute_command("DEBUG", "RELOAD")
    check("complete, reloaded")


def test_loadchunk_of_a_missing_key_is_not_found(r):
    """Defect 6: `CF.LOADCHUNK k -1 x` on a missing key answered `Invalid
    position`; RedisBloom answers `ERR not found` (at 68dce41:
    `AssertionError: assert 'Invalid position' == 'not found'`). The
    differential test (test_vs_redisbloom.py) sends it too."""
    assert error(r, "CF.LOADCHUNK", "missing", -1, "x") == "not found"
    assert error(r, "CF.LOADCHUNK", "missing", 2, "not a filter at all") == "not found"
    assert error(r, "CF.LOADCHUNK", "missing", 1, "x") == "Couldn't create filter!"
    assert error(r, "CF.LOADCHUNK", "missing", 0, "x") == "Invalid position"
    assert r.exists("missing") == 0
