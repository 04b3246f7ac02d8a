"""Window filters: ``CF.RESERVE key capacity WINDOW ms [GENERATIONS g]``
(docs/redis.md, "Items that expire").

An item added at time T is found until at least T + window and gone by
T + window + L (L = ceil(window / g), one generation). Only the primary
reads its clock to change a filter: it replicates each generation change
as ``CF.ADVANCE``; replicas, AOF replays and restores end with the same
bytes (``DEBUG DIGEST-VALUE``). Reads answer by the local clock.

Timing: windows of 600-1000 ms. Every "found" assertion is made only
where the client's own clock proves the server's time since the add is
within the window (``found_within``), every "gone" one only where it
proves the window and a generation have passed (``sleep_past``), so a
slow machine cannot fail a correct module, and each assertion is
reached on any machine that answers within a few hundred ms.
"""

import threading
import time

import pytest
from redis.exceptions import ResponseError

from test_cluster_and_hostile import assert_short_payload_refused, reseal
from test_commands import copy_by_chunks, encoding, error, info
from test_replication import wait_for_replica

CONFIG = "cuckoo.cf-max-memory-usage"
MIB = 1 << 20
CREATE_REFUSED = "Insufficient memory to create filter"
NOT_FOR_WINDOW = "not supported on a WINDOW filter"


def ok(reply):
    return reply in (b"OK", "OK", True)


def digest(r, key):
    return r.execute_command("DEBUG", "DIGEST-VALUE", key)[0]


def fields(r, key):
    return dict(info(r, key))


def add_timed(r, key, *items):
    """Adds `items` (CF.INSERT); returns (sent, replied): client times
    around the command, which bound the server's time of the add."""
    sent = time.monotonic()
    assert all(r.execute_command("CF.INSERT", key, "ITEMS", *items))
    return sent, time.monotonic()


def found_within(r, key, items, added, window):
    """CF.MEXISTS of `items`, asserted all found, if the server's time since
    the add (`added`: add_timed's pair) is provably under `window` ms.
    Returns whether it asserted."""
    found = r.execute_command("CF.MEXISTS", key, *items)
    if (time.monotonic() - added[0]) * 1000 >= window:
        return False
    assert all(found), (key, items, found)
    return True


def sleep_past(added, ms):
    """Sleeps until `ms` have provably passed on the server since the add."""
    left = added[1] + ms / 1000 - time.monotonic()
    if left > 0:
        time.sleep(left + 0.02)


def test_reserve_arguments_and_commands_that_do_not_apply(r):
    assert ok(r.execute_command("CF.RESERVE", "w", 1000, "WINDOW", 1000))
    f = fields(r, "w")
    assert (f["Window"], f["Generations"], f["Number of filters"]) == (1000, 4, 1)
    assert f["Expansion rate"] == 0 and f["Number of items inserted"] == 0
    for command, message in [
        (("CF.RESERVE", "x", 100, "WINDOW", 0), "WINDOW must be an integer"),
        (("CF.RESERVE", "x", 100, "WINDOW", "soon"), "WINDOW must be an integer"),
        (("CF.RESERVE", "x", 100, "WINDOW", 2**53 + 1), "WINDOW must be an integer"),
        (("CF.RESERVE", "x", 100, "WINDOW", 1000, "GENERATIONS", 0), "GENERATIONS must be"),
        (("CF.RESERVE", "x", 100, "WINDOW", 1000, "GENERATIONS", 253), "GENERATIONS must be"),
        # A rate of 1e-7 leaves tag bits for 60 generations (32-bit lanes
        # with 6 tag bits), one of 1e-9 for none.
        (("CF.RESERVE", "x", 100, "WINDOW", 1000, "GENERATIONS", 61, "ERROR", 1e-7),
         "at most 60 at ERROR"),
        (("CF.RESERVE", "x", 100, "WINDOW", 1000, "ERROR", 1e-9), "too small for a WINDOW"),
        (("CF.RESERVE", "x", 100, "WINDOW", 3, "GENERATIONS", 4), "at least GENERATIONS"),
        (("CF.RESERVE", "x", 100, "WINDOW", 1000, "EXPANSION", 2), "never grows"),
        (("CF.RESERVE", "x", 100, "WINDOW", 1000, "EXPANSION", 0), "never grows"),
        (("CF.RESERVE", "x", 100, "GENERATIONS", 2), "options of WINDOW"),
        (("CF.RESERVE", "x", 100, "WINDOW", 1000, "BOGUS", 1), "Unknown argument"),
        (("CF.RESERVE", "x", 3, "WINDOW", 1000), "Capacity must be at least"),
        (("CF.RESERVE", "w", 100, "WINDOW", 1000), "item exists"),
        (("CF.DEL", "w", "a"), NOT_FOR_WINDOW),
        (("CF.COMPACT", "w"), NOT_FOR_WINDOW),
        (("CF.STATS", "w"), NOT_FOR_WINDOW),
        (("CF.ADVANCE", "w", 5), "replicated by the primary only"),
    ]:
        assert message in error(r, *command), command
    assert r.exists("x") == 0
    # More generations or a smaller ERROR than 16-bit lanes hold: 32-bit
    # ones (twice the bytes a slot), up to 252 generations and down to
    # 4/2^29 (about 7.451e-9).
    assert ok(r.execute_command("CF.RESERVE", "x", 100, "WINDOW", 28, "GENERATIONS", 28,
                                "ERROR", 0.01))
    assert fields(r, "x")["Generations"] == 28
    assert ok(r.execute_command("CF.RESERVE", "long", 100, "WINDOW", 252, "GENERATIONS", 252))
    assert fields(r, "long")["Generations"] == 252
    assert ok(r.execute_command("CF.RESERVE", "exact", 100, "WINDOW", 1000, "ERROR", 1e-8))
    assert fields(r, "exact")["Size"] > fields(r, "x")["Size"]
    # The refused commands changed nothing.
    assert r.execute_command("CF.ADD", "w", "a") == 1
    assert "not supported" in error(r, "CF.DEL", "w", "a")
    assert r.execute_command("CF.EXISTS", "w", "a") == 1


def test_items_expire_and_refresh_by_the_clock(r):
    # g = 4: generations of 250 ms; gone by T + 1250 ms.
    window, g = 1000, 4
    assert ok(r.execute_command("CF.RESERVE", "w", 1000, "WINDOW", window, "GENERATIONS", g))
    first = add_timed(r, "w", "a", "b")
    # The NX forms answer whether an item was live, and refresh it too.
    assert r.execute_command("CF.ADDNX", "w", "a") == 0
    assert r.execute_command("CF.INSERTNX", "w", "ITEMS", "a", "c") == [0, 1]
    first = (first[0], time.monotonic())  # a's last refresh is no later
    assert r.execute_command("CF.COUNT", "w", "a") == 1
    assert r.execute_command("CF.MEXISTS", "w", "a", "b", "c", "zz") == [1, 1, 1, 0]
    time.sleep(0.5)
    checked = found_within(r, "w", ["a", "b"], first, window)
    refreshed = add_timed(r, "w", "b")  # b lives a window from now
    sleep_past(first, window + window // g)
    # a (and the first add of b, c) are gone: a is not found, b is.
    assert r.execute_command("CF.EXISTS", "w", "a") == 0
    assert r.execute_command("CF.COUNT", "w", "a") == 0
    checked += found_within(r, "w", ["b"], refreshed, window)
    assert checked, "the machine was too slow to check any item within its window"
    sleep_past(refreshed, window + window // g)
    assert r.execute_command("CF.MEXISTS", "w", "a", "b", "c") == [0, 0, 0]
    assert fields(r, "w")["Number of items inserted"] == 0
    # Reads changed nothing; a write advances (and the filter is empty).
    before = digest(r, "w")
    r.execute_command("CF.EXISTS", "w", "b")
    assert digest(r, "w") == before
    assert r.execute_command("CF.ADD", "w", "d") == 1
    assert digest(r, "w") != before


def churn(r, key, seconds, start=0):
    """Writes for `seconds`, ~every 50 ms (generation changes happen
    between them): CF.INSERT, CF.ADD, and CF.ADDNX both from a script and
    in a MULTI (whose advance reaches replicas inside the transaction).
    Returns the next item number."""
    i = start
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        r.execute_command("CF.INSERT", key, "ITEMS", *range(i, i + 50))
        r.execute_command("CF.ADD", key, f"one{i}")
        r.eval("return redis.call('CF.ADDNX', KEYS[1], ARGV[1])", 1, key, f"lua{i}")
        tx = r.pipeline(transaction=True)
        tx.execute_command("CF.ADDNX", key, f"multi{i}")
        tx.execute_command("CF.EXISTS", key, f"multi{i}")
        assert tx.execute() == [1, 1]
        i += 50
        time.sleep(0.05)
    return i


def test_replica_and_aof_replay_are_identical_across_generations(servers):
    # The primary's sweeper off (cuckoo.window-sweeper no): its generations
    # change only with writes, so the bytes it had stand still for the
    # comparisons after the writes stop (test_issue50.py checks the copies
    # with the sweeper advancing).
    primary = servers("--appendonly", "yes", "--appendfsync", "always",
                      "--cuckoo.window-sweeper", "no", name="primary")
    replica = servers("--replicaof", "127.0.0.1", str(primary.port), name="replica")
    p, r = primary.client(), replica.client()
    wait_for_replica(p, r)
    assert ok(p.execute_command("CF.RESERVE", "w", 5000, "WINDOW", 600, "GENERATIONS", 3))
    # And one in 32-bit lanes (an ERROR 16-bit lanes do not reach).
    assert ok(p.execute_command("CF.RESERVE", "wide", 5000, "WINDOW", 600, "GENERATIONS", 3,
                                "ERROR", 1e-6))
    churn(p, "w", 1.5)
    churn(p, "wide", 0.8)
    wait_for_replica(p, r)
    want, want_wide = digest(p, "w"), digest(p, "wide")
    assert fields(p, "w")["Generation"] >= 5  # several advances replicated
    assert digest(r, "w") == want and digest(r, "wide") == want_wide
    assert encoding(r, "w") == encoding(p, "w")
    assert encoding(r, "wide") == encoding(p, "wide")
    # A replica refuses writes, and its reads change nothing.
    with pytest.raises(ResponseError, match="read only replica"):
        r.execute_command("CF.ADD", "w", "z")
    r.execute_command("CF.MEXISTS", "w", *range(100))
    assert digest(r, "w") == want
    # The AOF replays to the same bytes (no clock read on replay: by now
    # the window has passed, and replay still ends where the primary was).
    time.sleep(0.7)
    primary.stop()
    primary.start()
    p = primary.client()
    assert digest(p, "w") == want and digest(p, "wide") == want_wide
    # And so does a rewritten AOF of CF.LOADCHUNK commands.
    p.config_set("aof-use-rdb-preamble", "no")
    p.execute_command("BGREWRITEAOF")
    while p.info("persistence")["aof_rewrite_in_progress"]:
        time.sleep(0.05)
    primary.stop()
    primary.start()
    assert digest(primary.client(), "w") == want
    assert digest(primary.client(), "wide") == want_wide
    # After the window everything reads as gone, on every copy.
    assert primary.client().execute_command("CF.MEXISTS", "w", *range(50)) == [0] * 50


def test_a_restart_after_the_window_finds_the_items_gone(servers):
    s = servers()
    r = s.client()
    window = 1000
    assert ok(r.execute_command("CF.RESERVE", "w", 1000, "WINDOW", window))
    added = add_timed(r, "w", *range(100))
    r.save()
    # A restart within the window: still found.
    s.stop()
    s.start()
    r = s.client()
    checked = found_within(r, "w", list(range(100)), added, window)
    before = digest(r, "w")
    s.stop()
    sleep_past(added, window + window // 4)
    s.start()
    r = s.client()
    assert digest(r, "w") == before, "loading read no clock"
    assert r.execute_command("CF.MEXISTS", "w", *range(100)) == [0] * 100
    assert fields(r, "w")["Number of items inserted"] == 0
    assert checked, "the machine was too slow to check the items within the window"


def test_debug_reload_keeps_the_bytes(r):
    # 16-bit lanes, and 32-bit ones (an ERROR 16-bit lanes do not reach).
    keys = {"w": 0.001, "wide": 1e-6}
    for key, rate in keys.items():
        assert ok(r.execute_command("CF.RESERVE", key, 2000, "WINDOW", 600, "GENERATIONS", 3,
                                    "ERROR", rate))
        churn(r, key, 0.4)
    # The sweeper catches an idle filter up with the clock (after a
    # reload too, as it notes the loaded window): compare only reloads
    # that left every filter at its generation (the library header's,
    # bytes 24-32 after the 64-byte window block).
    def generation(data):
        return int.from_bytes(data[64 + 24:64 + 32], "little")

    for _ in range(5):
        before = [(digest(r, key), encoding(r, key)) for key in keys]
        assert ok(r.execute_command("DEBUG", "RELOAD"))
        after = [(digest(r, key), encoding(r, key)) for key in keys]
        if [generation(e) for _, e in after] == [generation(e) for _, e in before]:
            assert after == before
            return
    raise AssertionError("no reload left the generations as they were in five tries")


def test_scandump_loadchunk_copy_dump_restore(server):
    r = server.client()
    assert ok(r.execute_command("CF.RESERVE", "w", 200_000, "WINDOW", 60_000))
    r.execute_command("CF.INSERT", "w", "ITEMS", *range(5000))
    want = digest(r, "w")
    # CF.SCANDUMP: the 128-byte header chunk, then chunks of up to 1 MiB.
    chunks, it = [], 0
    while True:
        it, data = r.execute_command("CF.SCANDUMP", "w", it)
        if it == 0:
            break
        chunks.append((it, data))
    assert len(chunks[0][1]) == 128 and chunks[0][1].startswith(b"CCFRWNDW")
    assert len(chunks) >= 2
    for it, data in chunks:
        assert ok(r.execute_command("CF.LOADCHUNK", "restored", it, data))
    assert digest(r, "restored") == want
    assert fields(r, "restored") == fields(r, "w")
    assert all(r.execute_command("CF.MEXISTS", "restored", *range(5000)))
    # A restore in progress is saved and reloaded as it is.
    r.execute_command("CF.LOADCHUNK", "partial", *chunks[0])
    assert "being restored" in error(r, "CF.EXISTS", "partial", 1)
    assert ok(r.execute_command("DEBUG", "RELOAD"))
    for it, data in chunks[1:]:
        assert ok(r.execute_command("CF.LOADCHUNK", "partial", it, data))
    assert digest(r, "partial") == want
    # A write between two calls ends a dump.
    it, _ = r.execute_command("CF.SCANDUMP", "w", 0)
    r.execute_command("CF.ADD", "w", "new")
    assert "changed during CF.SCANDUMP" in error(r, "CF.SCANDUMP", "w", it)
    want = digest(r, "w")
    # COPY and DUMP/RESTORE: the same bytes.
    assert r.copy("w", "copied")
    assert digest(r, "copied") == want
    r.restore("dumped", 0, r.dump("w"))
    assert digest(r, "dumped") == want
    # A damaged chunk abandons the restore: nothing is left.
    first, second = chunks[0], chunks[1]
    r.execute_command("CF.LOADCHUNK", "bad", *first)
    damaged = bytearray(second[1])
    damaged[100] ^= 1
    if len(chunks) == 2:
        assert error(r, "CF.LOADCHUNK", "bad", second[0], bytes(damaged)) == "Couldn't load chunk!"
    else:
        r.execute_command("CF.LOADCHUNK", "bad", second[0], bytes(damaged))
        for it, data in chunks[2:-1]:
            r.execute_command("CF.LOADCHUNK", "bad", it, data)
        assert error(r, "CF.LOADCHUNK", "bad", *chunks[-1]) == "Couldn't load chunk!"
    assert r.exists("bad") == 0
    # A damaged window block, a wrong position: refused, nothing made.
    block = bytearray(first[1])
    block[20] ^= 1
    assert error(r, "CF.LOADCHUNK", "bad", first[0], bytes(block)) == "Couldn't create filter!"
    r.execute_command("CF.LOADCHUNK", "bad", *first)
    assert error(r, "CF.LOADCHUNK", "bad", second[0] + 1, second[1]) == "Invalid position"
    assert r.exists("bad") == 1
    # 32-bit lanes: the same chunks restore the same bytes.
    assert ok(r.execute_command("CF.RESERVE", "wide", 20_000, "WINDOW", 60_000,
                                "GENERATIONS", 100, "ERROR", 1e-6))
    r.execute_command("CF.INSERT", "wide", "ITEMS", *range(5000))
    copy_by_chunks(r, "wide", "wide-copy")
    assert digest(r, "wide-copy") == digest(r, "wide")
    assert all(r.execute_command("CF.MEXISTS", "wide-copy", *range(5000)))
    r.restore("wide-dumped", 0, r.dump("wide"))
    assert digest(r, "wide-dumped") == digest(r, "wide")


def test_memory_admission_refuses_a_window_over_the_limit(server):
    r = server.client()
    r.config_set(CONFIG, "8mb")
    before = r.info("memory")["used_memory"]
    # 10 million items: about 22 MB of table.
    assert error(r, "CF.RESERVE", "w", 10_000_000, "WINDOW", 1000) == CREATE_REFUSED
    assert r.exists("w") == 0
    assert r.info("memory")["used_memory"] - before < MIB
    # A forged header chunk claiming the same table: refused before any
    # buffer is allocated.
    r.config_set(CONFIG, "1gb")
    # (A window long enough for a table this size: test_issue50.py.)
    assert ok(r.execute_command("CF.RESERVE", "w", 10_000_000, "WINDOW", 10_000))
    assert 16 * MIB < r.memory_usage("w") < 64 * MIB
    r.execute_command("CF.ADD", "w", "a")
    it, header = r.execute_command("CF.SCANDUMP", "w", 0)
    dumped = r.dump("w")
    r.config_set(CONFIG, "8mb")
    assert error(r, "CF.LOADCHUNK", "other", it, header) == CREATE_REFUSED
    assert r.exists("other") == 0
    with pytest.raises(ResponseError):
        r.restore("other", 0, dumped)
    assert r.exists("other") == 0
    with pytest.raises(ResponseError):
        r.copy("w", "other")
    assert r.exists("other") == 0
    # INFO totals count a window filter.
    section = r.info("cuckoo_filters")
    assert section["cuckoo_filters"] == 1 and section["cuckoo_items"] == 1
    assert section["cuckoo_memory"] >= r.memory_usage("w") - 1024


def test_concurrent_clients_with_a_replica_attached(servers):
    primary = servers(name="primary")
    replica = servers("--replicaof", "127.0.0.1", str(primary.port), name="replica")
    p = primary.client()
    wait_for_replica(p, replica.client())
    window = 800
    # Room for every item the clients add in a window, on a fast machine.
    assert ok(p.execute_command("CF.RESERVE", "w", 2_000_000, "WINDOW", window))
    failures, checked = [], []

    def client(n):
        c = primary.client()
        i = 0
        end = time.monotonic() + 1.5
        while time.monotonic() < end:
            items = [f"{n}:{j}" for j in range(i, i + 100)]
            sent = time.monotonic()
            pipe = c.pipeline(transaction=False)
            pipe.execute_command("CF.INSERT", "w", "ITEMS", *items)
            pipe.execute_command("CF.MEXISTS", "w", *items)
            pipe.execute_command("CF.ADDNX", "w", items[0])
            added, found, again = pipe.execute(raise_on_error=False)
            if (time.monotonic() - sent) * 1000 < window:
                checked.append(1)
                if not (isinstance(added, list) and all(added) and all(found) and again == 0):
                    failures.append((n, i))
            i += 100

    threads = [threading.Thread(target=client, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures and checked
    wait_for_replica(p, replica.client())
    assert digest(replica.client(), "w") == digest(p, "w")
    assert fields(p, "w")["Generation"] >= 6


def test_damaged_window_payloads_are_refused(server):
    """Every bit flipped in a window filter's DUMP payload (Redis's checksum
    recomputed) is refused, or restores exactly the original; cut short,
    likewise (see assert_short_payload_refused); the server stays up."""
    r = server.client()
    assert ok(r.execute_command("CF.RESERVE", "src", 60, "WINDOW", 60_000, "ERROR", 0.05))
    r.execute_command("CF.INSERT", "src", "ITEMS", *range(40))
    payload = r.dump("src")
    body = payload[:-8]
    refused = accepted = 0
    for bit in range(len(body) * 8):
        damaged = bytearray(body)
        damaged[bit // 8] ^= 1 << (bit % 8)
        try:
            r.restore("dst", 0, reseal(bytes(damaged)), replace=True)
        except ResponseError:
            refused += 1
            continue
        accepted += 1
        assert r.dump("dst") == payload, f"bit {bit} restored a different filter"
        r.delete("dst")
    assert refused > 0.9 * (refused + accepted), (accepted, refused)
    for cut in range(1, len(body) - 2, 5):
        assert_short_payload_refused(r, body[:cut] + body[-2:], payload)
    assert r.exists("dst") == 0 and r.ping()
    assert all(r.execute_command("CF.MEXISTS", "src", *range(40)))


def test_a_pipelined_insert_does_what_one_add_per_item_does(r):
    """CF.INSERT on a window filter hashes, looks up and inserts its items
    in batches (it ran item by item, at 0.67x a plain filter's speed): each
    reply, and the filter's bytes, must be what one CF.ADD per item in the
    same order gives a twin of the same seed, refusals in the middle of a
    batch and repeated items (refreshes) included."""
    sec, usec = r.time()
    origin = sec * 1000 + usec // 1000  # the digest covers the origin too
    for key in ("batched", "single"):
        assert ok(r.execute_command("CF.RESERVE", key, 64, "WINDOW", 3_600_000,
                                    "SEED", 7, "ORIGIN", origin))
    items = [f"k{i % 150}" for i in range(220)]  # 70 repeats; most refused
    replies = r.execute_command("CF.INSERT", "batched", "ITEMS", *items)
    expected = []
    for item in items:
        try:
            expected.append(r.execute_command("CF.ADD", "single", item) in (1, True))
        except ResponseError:
            expected.append(False)
    got = [reply in (1, True) for reply in replies]
    assert got == expected
    assert True in got and False in got, "some items went in, some were refused"
    assert all(reply in (1, True, -1, False) for reply in replies)
    assert digest(r, "batched") == digest(r, "single")
    assert r.execute_command("CF.MEXISTS", "batched", *items) == \
        r.execute_command("CF.MEXISTS", "single", *items)
