"""Filters survive restarts (RDB, and AOF alone after BGREWRITEAOF), move
with DUMP/RESTORE and COPY, and a restore in progress survives too."""

import pathlib
import subprocess
import time

from conftest import MODULE
from test_commands import encoding, error, info

AOF_ONLY = ("--appendonly", "yes", "--aof-use-rdb-preamble", "no", "--appendfsync", "always")


def fill(r):
    """Filters of every kind, with settings CF.INFO reports; returns their
    keys and the items each holds."""
    r.execute_command("CF.RESERVE", "fixed", 20000, "EXPANSION", 0, "BUCKETSIZE", 4,
                      "MAXITERATIONS", 100, "ERROR", 0.01)
    r.execute_command("CF.RESERVE", "grown", 500, "EXPANSION", 3)
    r.execute_command("CF.RESERVE", "flat", 500)
    items = {k: [f"{k}:{i}" for i in range(n)]
             for k, n in (("fixed", 15000), ("grown", 20000), ("flat", 3000), ("auto", 2000))}
    for key, values in items.items():
        for start in range(0, len(values), 1000):
            r.execute_command("CF.INSERT", key, "ITEMS", *values[start:start + 1000])
    for key in ("fixed", "grown"):
        # A delete on the grown filter may be refused (0, the item stays:
        # its fingerprint is in two sub-filters), about once per
        # error-rate deletes; the fixed filter refuses none.
        refused = [item for item in items[key][:500]
                   if not r.execute_command("CF.DEL", key, item)]
        assert len(refused) <= 5 and (key == "grown" or not refused), (key, refused)
        items[key] = refused + items[key][500:]
    r.execute_command("CF.ADDNX", "single", "x")
    items["single"] = ["x"]
    return items


def snapshot(r, keys):
    return {k: (r.dump(k), info(r, k)) for k in keys}


def check(r, items, before):
    for key, values in items.items():
        assert all(r.execute_command("CF.MEXISTS", key, *values)), key
    after = snapshot(r, before)
    assert after == before


def scandump_chunks(r, key):
    """(iterator, data) of every CF.SCANDUMP chunk of `key`, in order."""
    chunks, it = [], 0
    while True:
        it, data = r.execute_command("CF.SCANDUMP", key, it)
        if it == 0:
            return chunks
        chunks.append((it, data))


def rewrite_aof(r):
    """BGREWRITEAOF, waited for."""
    r.bgrewriteaof()
    deadline = time.time() + 60
    while r.info("persistence")["aof_rewrite_in_progress"] or \
            r.info("persistence")["aof_rewrite_scheduled"]:
        assert time.time() < deadline
        time.sleep(0.05)
    assert r.info("persistence")["aof_last_bgrewrite_status"] == "ok"


def restart_from_the_aof_alone(server):
    server.stop()
    for rdb in server.dir.glob("*.rdb"):
        rdb.unlink()
    server.start()
    return server.client()


def library_encoding(capacity, growth, items=0):
    """The library's encoding of a growing filter of settings the module's
    commands never choose (redis/examples/library_encoding.rs, built next
    to the module)."""
    tool = pathlib.Path(MODULE).parent / "examples" / "library_encoding"
    return subprocess.run([str(tool), str(capacity), str(growth), str(items)],
                          check=True, capture_output=True, timeout=60).stdout


def test_restart_from_rdb(server):
    r = server.client()
    items = fill(r)
    before = snapshot(r, items)
    server.stop(save=True)
    server.start()
    check(server.client(), items, before)


def test_bgrewriteaof_then_restart_from_the_aof_alone(servers):
    # Without the RDB preamble the rewrite calls the type's aof_rewrite
    # (CF.LOADCHUNK chunks carrying the settings); writes after the rewrite
    # go to the incremental AOF.
    server = servers(*AOF_ONLY)
    r = server.client()
    items = fill(r)
    rewrite_aof(r)
    base = list((server.dir / "appendonlydir").glob("*.base.aof"))
    assert base and b"CF.LOADCHUNK" in base[0].read_bytes()
    r.execute_command("CF.INSERT", "grown", "ITEMS", *[f"late:{i}" for i in range(3000)])
    items["grown"] += [f"late:{i}" for i in range(3000)]
    r.execute_command("CF.DEL", "fixed", items["fixed"][0])
    items["fixed"] = items["fixed"][1:]
    before = snapshot(r, items)
    check(restart_from_the_aof_alone(server), items, before)


def test_dump_and_restore_across_servers_and_copy(servers):
    a, b = servers(), servers()
    ra, rb = a.client(), b.client()
    items = fill(ra)
    for key in items:
        payload = ra.dump(key)
        rb.restore(key, 0, payload)
        assert rb.dump(key) == payload
        assert info(rb, key) == info(ra, key)
        assert all(rb.execute_command("CF.MEXISTS", key, *items[key]))
    assert ra.copy("grown", "grown-copy")
    assert ra.dump("grown-copy") == ra.dump("grown")
    ra.execute_command("CF.ADD", "grown-copy", "only in the copy")
    assert ra.execute_command("CF.EXISTS", "grown", "only in the copy") == 0
    assert ra.copy("fixed", "grown-copy", replace=True)
    assert ra.dump("grown-copy") == ra.dump("fixed")
    # MEMORY USAGE counts the table: a few bytes per item.
    per_item = ra.memory_usage("fixed") / len(items["fixed"])
    assert 1 < per_item < 8, per_item


def test_a_restore_in_progress_survives_a_restart_and_completes(server):
    r = server.client()
    r.execute_command("CF.RESERVE", "src", 1_000_000, "EXPANSION", 0)
    r.execute_command("CF.INSERT", "src", "ITEMS", *range(5000))
    chunks = scandump_chunks(r, "src")
    assert len(chunks) >= 3
    for it, data in chunks[:2]:
        r.execute_command("CF.LOADCHUNK", "dst", it, data)
    partial = r.dump("dst")
    server.stop(save=True)
    server.start()
    r = server.client()
    assert r.dump("dst") == partial
    assert "being restored" in error(r, "CF.EXISTS", "dst", 1)
    for it, data in chunks[2:]:
        r.execute_command("CF.LOADCHUNK", "dst", it, data)
    assert encoding(r, "dst") == encoding(r, "src")
    assert all(r.execute_command("CF.MEXISTS", "dst", *range(5000)))


def test_the_smallest_settings_survive_a_restart_from_the_rdb_and_the_aof(servers):
    # CF.RESERVE takes a capacity of 2 with BUCKETSIZE 1 (RedisBloom's
    # rule: twice the bucket size), and a restored library encoding may
    # have an initial capacity of 2 or 3: the RDB load and CF.LOADCHUNK's
    # CAPACITY option (which the AOF rewrite uses) take them back.
    rdb, aof = servers(), servers(*AOF_ONLY)
    items = {"small": ["a"], "lib": [str(i) for i in range(100)]}
    data = library_encoding(3, 5, 100)
    for server in (rdb, aof):
        r = server.client()
        r.execute_command("CF.RESERVE", "small", 2, "BUCKETSIZE", 1)
        r.execute_command("CF.ADD", "small", "a")
        assert r.execute_command("CF.LOADCHUNK", "lib", len(data) + 1, data) in (b"OK", "OK")
        assert info(r, "lib")[6] == ("Expansion rate", 5)
    before = snapshot(rdb.client(), items)
    rdb.stop(save=True)
    rdb.start()
    check(rdb.client(), items, before)
    before = snapshot(aof.client(), items)
    rewrite_aof(aof.client())
    check(restart_from_the_aof_alone(aof), items, before)


def test_loadchunk_refuses_a_filter_whose_settings_a_restart_would_refuse(server):
    # The library takes initial capacities 0-3 and growth factors up to
    # 2^32 - 1; the module's settings cannot hold a capacity under 2 or an
    # expansion over 32768 (CF.RESERVE's ranges). Such a filter, once
    # loaded, made the server refuse its own RDB file at the next start.
    r = server.client()
    r.execute_command("CF.ADD", "kept", "a")
    for capacity, growth in ((2, 40000), (1, 2), (0, 2)):
        data = library_encoding(capacity, growth, 3)
        # In one chunk: nothing is created.
        assert error(r, "CF.LOADCHUNK", "bad", len(data) + 1, data) == "Couldn't create filter!"
        assert r.exists("bad") == 0
        # In two: the last chunk abandons the restore, as a damaged one does.
        half = len(data) // 2
        assert r.execute_command("CF.LOADCHUNK", "bad", half + 1, data[:half]) in (b"OK", "OK")
        assert error(r, "CF.LOADCHUNK", "bad", len(data) + 1, data[half:]) == \
            "Couldn't load chunk!"
        assert r.exists("bad") == 0
    before = snapshot(r, ["kept"])
    server.stop(save=True)
    server.start()
    assert snapshot(server.client(), ["kept"]) == before


def test_the_aof_rewrite_keeps_the_settings_of_a_restore_in_progress(servers):
    server = servers(*AOF_ONLY)
    r = server.client()
    r.execute_command("CF.RESERVE", "src", 1_000_000, "EXPANSION", 0)
    r.execute_command("CF.INSERT", "src", "ITEMS", *range(5000))
    chunks = scandump_chunks(r, "src")
    assert len(chunks) >= 3
    # Settings given with the first chunk (not EXPANSION: the encoding's).
    (it, data), rest = chunks[0], chunks[1:]
    r.execute_command("CF.LOADCHUNK", "dst", it, data, "BUCKETSIZE", 4, "MAXITERATIONS", 100,
                      "CAPACITY", 5000, "ERROR", 0.02, "DELETED", 7)
    r.execute_command("CF.LOADCHUNK", "dst", *rest[0])
    # One given setting only: the others stay the encoding's.
    r.execute_command("CF.LOADCHUNK", "one", it, data, "MAXITERATIONS", 9)
    rewrite_aof(r)
    r = restart_from_the_aof_alone(server)
    assert "being restored" in error(r, "CF.INFO", "dst")
    for key, sent in (("dst", rest[:1]), ("one", [])):
        for it, data in rest[len(sent):]:
            r.execute_command("CF.LOADCHUNK", key, it, data)
        assert encoding(r, key) == encoding(r, "src")
    fields = dict(info(r, "dst"))
    assert (fields["Bucket size"], fields["Max iterations"], fields["Number of items deleted"]) \
        == (4, 100, 7)
    fields = dict(info(r, "one"))
    assert (fields["Bucket size"], fields["Max iterations"], fields["Number of items deleted"]) \
        == (2, 9, 0)
    stats = r.execute_command("CF.STATS", "dst")
    stats = dict(stats.items()) if isinstance(stats, dict) else dict(zip(stats[::2], stats[1::2]))
    assert float(stats[b"Error rate"]) == 0.02
