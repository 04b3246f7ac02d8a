"""Issue 50: window filters under hostile and idle use. Forged window
blocks and library headers (their checksums recomputed, as a forger does)
are refused field by field, never a crash or an abort; buffers sized by
untrusted bytes are admitted and allocated fallibly; forged generations
are refused; CF.SCANDUMP's copy of a window filter counts against the
limits and a far position is served; a write after a long idle time
costs no sweep of the table; a window too short for its table's sweep is
refused at CF.RESERVE."""

import struct
import threading
import time

import pytest
import xxhash
from redis.exceptions import ResponseError

from test_cluster_and_hostile import reseal
from test_commands import encoding, error
from test_limits import rdb_length, rdb_string
from test_persistence import scandump_chunks
from test_replication import wait_for_replica

CONFIG = "cuckoo.cf-max-memory-usage"
MIB = 1 << 20
CREATE_REFUSED = "Insufficient memory to create filter"
CANNOT = "Couldn't create filter!"
BLOCK = 64  # the window block; the library's header follows, 64 bytes


def ok(reply):
    return reply in (b"OK", "OK", True)


def seal_block(chunk):
    """`chunk` (bytes starting with a window block) with the block's
    checksum, XXH3-64 of its first 56 bytes, recomputed."""
    b = bytearray(chunk)
    b[56:64] = xxhash.xxh3_64_intdigest(bytes(b[:56])).to_bytes(8, "little")
    return bytes(b)


def seal_all(whole):
    """A whole window encoding with both checksums recomputed: the block's
    and the library's (XXH3-64 of its header and body, in its last 8
    bytes)."""
    b = bytearray(seal_block(whole))
    b[-8:] = xxhash.xxh3_64_intdigest(bytes(b[BLOCK:-8])).to_bytes(8, "little")
    return bytes(b)


def window_payload(real_dump, pieces, state):
    """A DUMP payload of a window filter's value (datatype.rs: the settings
    block with `state` 2, live, or 3, being restored, then `pieces` in one
    piece), with the module id and RDB version of `real_dump` and Redis's
    checksum."""
    meta = bytearray(64)
    meta[0:8] = b"CCFRMETA"
    meta[8:16] = (1000).to_bytes(8, "little")
    meta[16:24] = struct.pack("<d", 0.01)
    meta[32] = 2
    meta[34:36] = (20).to_bytes(2, "little")
    meta[38] = state
    meta[48:56] = len(pieces).to_bytes(8, "little")
    meta[56:64] = xxhash.xxh3_64_intdigest(bytes(meta[:56])).to_bytes(8, "little")
    body = real_dump[:10]
    body += rdb_string(bytes(meta))
    body += b"\x02" + rdb_length(1)
    body += rdb_string(pieces)
    body += b"\x00"
    return reseal(body + real_dump[-10:-8])


def small_window(r, key="w"):
    assert ok(r.execute_command("CF.RESERVE", key, 1000, "WINDOW", 60_000, "ERROR", 0.01))
    r.execute_command("CF.INSERT", key, "ITEMS", *range(100))
    return encoding(r, key)


def test_a_block_with_no_generations_is_refused_by_loadchunk_and_restore(server):
    """Item 1: `g = 0` with the block's checksum recomputed divided by zero
    (the server crashed) through CF.LOADCHUNK and RESTORE alike."""
    r = server.client()
    whole = small_window(r)
    forged = bytearray(whole)
    forged[48] = 0
    header = seal_block(forged[:128])
    assert error(r, "CF.LOADCHUNK", "x", 129, header) == CANNOT
    real = r.dump("w")
    for state, pieces in [(3, header), (2, seal_all(forged))]:
        with pytest.raises(ResponseError):
            r.restore("x", 0, window_payload(real, pieces, state))
    assert r.ping() and r.exists("x") == 0
    # The payload forger is right: the real bytes restore.
    r.restore("x", 0, window_payload(real, whole, 2))
    assert r.execute_command("CF.EXISTS", "x", 5) == 1


def test_every_forged_header_field_is_refused_or_restores(server):
    """Each byte of the first chunk (block and library header) set to a few
    values, the block's checksum recomputed: CF.LOADCHUNK refuses it or
    starts a restore; the server stays up."""
    r = server.client()
    whole = small_window(r)
    refused = 0
    for at in [i for i in range(128) if not 56 <= i < 64]:
        for value in (0, 1, 0x80, 0xFF):
            chunk = bytearray(whole[:128])
            chunk[at] = value
            try:
                r.execute_command("CF.LOADCHUNK", "x", 129, seal_block(chunk))
                r.delete("x")
            except ResponseError as e:
                assert CANNOT in str(e) or CREATE_REFUSED in str(e), (at, value, str(e))
                refused += 1
    assert refused > 100 and r.ping()


def test_a_header_claiming_2_32_buckets_is_refused_not_an_abort(server):
    """Item 5: the restore buffer came from an allocator that aborts (Valkey
    aborted, 'Allocating 34359738504 bytes'); it is now admitted and
    allocated fallibly, as the table of a plain filter is."""
    r = server.client()
    whole = small_window(r)
    r.config_set(CONFIG, "64gb")
    chunk = bytearray(whole[:128])
    chunk[BLOCK + 16:BLOCK + 24] = (1 << 32).to_bytes(8, "little")
    # A window long enough for such a table (a shorter one is refused
    # first: test_a_window_too_short_for_its_tables_sweep_is_refused).
    chunk[16:24] = (1 << 40).to_bytes(8, "little")
    chunk[24:32] = (1 << 38).to_bytes(8, "little")  # L = window / 4
    chunk = seal_block(chunk)
    try:
        r.execute_command("CF.LOADCHUNK", "x", 129, bytes(chunk))
        # A host that gives 32 GiB lazily: the buffer is held and counted.
        assert r.memory_usage("x") > 32 << 30
        r.delete("x")
    except ResponseError as e:
        assert CREATE_REFUSED in str(e)
    assert r.ping() and r.exists("x") == 0
    # Under the default limit: refused before anything is held.
    r.config_set(CONFIG, "1gb")
    before = r.info("memory")["used_memory"]
    assert error(r, "CF.LOADCHUNK", "x", 129, bytes(chunk)) == CREATE_REFUSED
    assert r.info("memory")["used_memory"] - before < MIB


def test_forged_generations_are_refused(server):
    """Item 8: a window filter whose generation is 2^63 (where the library
    stops advancing) was accepted and its items never expired; one far
    ahead of the clock is refused too, one at the clock restores."""
    r = server.client()
    whole = small_window(r)
    real = r.dump("w")
    at = BLOCK + 24
    for generation in (1 << 63, 1 << 62, 10_000):
        forged = bytearray(whole)
        forged[at:at + 8] = generation.to_bytes(8, "little")
        forged = seal_all(forged)
        assert error(r, "CF.LOADCHUNK", "x", 129, forged[:128]) == CANNOT
        with pytest.raises(ResponseError):
            r.restore("x", 0, window_payload(real, forged, 2))
        assert r.exists("x") == 0
    r.restore("x", 0, window_payload(real, seal_all(whole), 2))
    assert r.execute_command("CF.EXISTS", "x", 5) == 1


def test_a_far_scandump_position_is_served_as_a_plain_filters_is(server):
    """Item 7: with no dump in progress, a position inside the encoding
    answered 'the filter changed'; it is served, as on a plain filter."""
    r = server.client()
    assert ok(r.execute_command("CF.RESERVE", "w", 2_000_000, "WINDOW", 60_000))
    r.execute_command("CF.INSERT", "w", "ITEMS", *range(1000))
    whole = encoding(r, "w")
    assert len(whole) > 2 * MIB
    it, data = r.execute_command("CF.SCANDUMP", "w", 1_000_001)
    assert data == whole[1_000_000:1_000_000 + len(data)] and len(data) > 0
    assert it == 1_000_001 + len(data)
    # Past the end: the dump is over.
    assert r.execute_command("CF.SCANDUMP", "w", len(whole) + 10)[0] == 0
    # A dump a write interrupted is still told so where it stopped.
    it, _ = r.execute_command("CF.SCANDUMP", "w", 0)
    r.execute_command("CF.ADD", "w", "new")
    assert "changed during CF.SCANDUMP" in error(r, "CF.SCANDUMP", "w", it)


def test_a_scandump_holds_no_copy_and_a_restore_needs_no_second(server):
    """Items 4 and 6: CF.SCANDUMP of a window filter copied its whole
    encoding (three dumps by a read-only user pushed the server past
    maxmemory, then the admin's writes were refused), and a restore held
    every byte in a buffer before decoding it into a second table (it
    needed twice the filter's size free: with maxmemory at used + 1.4x a
    23 MB filter the plain filter restored, the window filter failed at
    its last chunk). Dumps are now read from the live table and restores
    written straight into the table: with maxmemory at used + 0.5x the
    filter, three dumps in turn succeed, the admin still writes, and a
    restore under maxmemory at used + 1.25x the filter completes."""
    r = server.client()
    assert ok(r.execute_command("CF.RESERVE", "w", 10_000_000, "WINDOW", 600_000))
    r.execute_command("CF.INSERT", "w", "ITEMS", *range(20_000))
    size = r.memory_usage("w")
    assert size > 16 * MIB
    r.config_set("maxmemory-policy", "noeviction")
    used = r.info("memory")["used_memory"]
    r.config_set("maxmemory", used + size // 2)
    dumps = []
    for _ in range(3):
        chunks, it = [], 0
        while True:
            it, data = r.execute_command("CF.SCANDUMP", "w", it)
            if it == 0:
                break
            chunks.append(data)
        dumps.append(b"".join(chunks))
        assert r.info("memory")["used_memory"] < used + 4 * MIB
    assert dumps[0] == dumps[1] == dumps[2]
    assert r.set("admin", "x") and r.execute_command("CF.ADD", "w", "b") == 1
    # Two dumps interleaved (two clients), each whole.
    it1, first1 = r.execute_command("CF.SCANDUMP", "w", 0)
    it2, first2 = r.execute_command("CF.SCANDUMP", "w", 0)
    parts1, parts2 = [first1], [first2]
    while it1 or it2:
        if it1:
            it1, data = r.execute_command("CF.SCANDUMP", "w", it1)
            parts1.append(data or b"")
        if it2:
            it2, data = r.execute_command("CF.SCANDUMP", "w", it2)
            parts2.append(data or b"")
    assert b"".join(parts1) == b"".join(parts2) == encoding(r, "w")
    whole = encoding(r, "w")
    r.delete("admin")
    r.config_set("maxmemory", 0)
    # A restore in 1 MiB chunks with room for the filter and a quarter more
    # (the chunks in flight count in used_memory too).
    used = r.info("memory")["used_memory"]
    r.config_set("maxmemory", used + size + size // 4)
    # (Each chunk goes with the iterator CF.SCANDUMP gave with it: its end
    # plus one.)
    assert ok(r.execute_command("CF.LOADCHUNK", "copy", 129, whole[:128]))
    at = 128
    while at < len(whole):
        piece = whole[at:at + MIB]
        at += len(piece)
        assert ok(r.execute_command("CF.LOADCHUNK", "copy", at + 1, piece))
    assert r.execute_command("CF.MEXISTS", "copy", 1, 19_999, "b") == [1, 1, 1]
    assert encoding(r, "copy") == whole
    r.config_set("maxmemory", 0)


def now_ms(r):
    sec, usec = r.time()
    return sec * 1000 + usec // 1000


def digest(r, key):
    return r.execute_command("DEBUG", "DIGEST-VALUE", key)[0]


def test_a_write_after_an_idle_hour_on_a_1gb_window_filter_sweeps_nothing(server):
    """Items 2 and 3: the first write after many generations swept the whole
    table on the main thread (11 s after an idle hour on a 1 GB filter
    with a 1-minute window, which is now refused as too short for it: 10
    minutes here). Every item has expired by then: the table is
    replaced by an empty one at the clock's generation, the old one freed
    off the main thread. (The idle hour is an ORIGIN an hour back: the
    filter is made at generation 0 and the clock is at 24.)"""
    r = server.client()
    assert ok(r.execute_command("CF.RESERVE", "big", 440_000_000, "WINDOW", 600_000,
                                "ORIGIN", now_ms(r) - 3_600_000))
    assert r.memory_usage("big") > 900 * MIB
    other = server.client()
    sent = time.monotonic()
    assert r.execute_command("CF.ADD", "big", "item0") == 1
    took = time.monotonic() - sent
    assert other.ping()
    assert took < 0.25, f"the catch-up took {took:.3f} s"
    assert r.execute_command("CF.EXISTS", "big", "item0") == 1
    assert dict(zip(*[iter(r.execute_command("CF.INFO", "big"))] * 2))[b"Generation"] == 24


def test_a_window_too_short_for_its_tables_sweep_is_refused(server):
    """Items 2 and 3: CF.RESERVE win:big 440000000 WINDOW 4 GENERATIONS 4
    made every CF.ADD take 5-13 s, and on a 100-million filter with a
    1-second window an item was gone when the next command looked. A
    window whose generations are shorter than the longest catch-up of its
    table is refused, with the least WINDOW in the error."""
    r = server.client()
    for command in [("CF.RESERVE", "w", 440_000_000, "WINDOW", 4, "GENERATIONS", 4),
                    ("CF.RESERVE", "w", 100_000_000, "WINDOW", 1000)]:
        assert "WINDOW too short for this capacity" in error(r, *command)
    assert r.exists("w") == 0
    message = error(r, "CF.RESERVE", "w", 5_000_000, "WINDOW", 100)
    least = int(message.split("(WINDOW ")[1].split()[0])
    assert "WINDOW too short" in error(r, "CF.RESERVE", "w", 5_000_000, "WINDOW", least - 4)
    assert ok(r.execute_command("CF.RESERVE", "w", 5_000_000, "WINDOW", least))
    # A client's restore of such a window (its block forged) is refused too.
    r.execute_command("CF.ADD", "w", "a")
    it, header = r.execute_command("CF.SCANDUMP", "w", 0)
    forged = bytearray(header)
    forged[16:24] = (100).to_bytes(8, "little")  # the window, ms
    forged[24:32] = (25).to_bytes(8, "little")  # L = window / 4
    assert error(r, "CF.LOADCHUNK", "x", it, seal_block(forged)) == CANNOT
    assert ok(r.execute_command("CF.LOADCHUNK", "x", it, header))
    # Small filters take any window, as before.
    assert ok(r.execute_command("CF.RESERVE", "small", 10_000, "WINDOW", 4, "GENERATIONS", 4))
    # At its shortest window, a write that catches up on g generations
    # (the most it sweeps: one generation more replaces the table) ends
    # within a generation: what it added, the next command finds.
    length = least / 4
    r.execute_command("CF.ADD", "w", "before")
    time.sleep(length * 3.2 / 1000)
    sent = time.monotonic()
    assert r.execute_command("CF.ADD", "w", "item0") == 1
    took = time.monotonic() - sent
    found = r.execute_command("CF.EXISTS", "w", "item0")
    if (time.monotonic() - sent) * 1000 < least:
        assert found == 1, f"catch-up {took:.3f} s, window {least} ms"


def test_copies_hold_the_same_bytes_after_a_catch_up_that_replaced_the_table(servers):
    """The cheap reset (a new empty table at the clock's generation) leaves
    the bytes a sweep would: the replica, which applies the replicated
    CF.ADVANCE the same way, and a restart from the AOF hold the same."""
    # The sweeper off: the write catches up, and the bytes stand still
    # for the comparisons.
    off = ("--cuckoo.window-sweeper", "no")
    primary = servers("--appendonly", "yes", *off, name="primary")
    replica = servers("--replicaof", "127.0.0.1", str(primary.port), name="replica")
    p = primary.client()
    wait_for_replica(p, replica.client())
    assert ok(p.execute_command("CF.RESERVE", "w", 5000, "WINDOW", 400, "GENERATIONS", 2))
    p.execute_command("CF.INSERT", "w", "ITEMS", *range(3000))
    time.sleep(0.7)  # at least 3 generations of 200 ms: all expired
    assert p.execute_command("CF.ADD", "w", "after") == 1
    assert p.execute_command("CF.MEXISTS", "w", 1, 2, 3) == [0, 0, 0]
    wait_for_replica(p, replica.client())
    want = (digest(p, "w"), encoding(p, "w"))
    assert (digest(replica.client(), "w"), encoding(replica.client(), "w")) == want
    primary.restart("--appendonly", "yes", *off)
    assert (digest(primary.client(), "w"), encoding(primary.client(), "w")) == want


def test_a_filter_near_maxmemory_is_replaced_too(server):
    """The new table of a catch-up past the window is admitted against
    `maxmemory` for what it adds beyond the table it replaces (nothing):
    a filter near `maxmemory` is reset as cheaply, not swept."""
    r = server.client()
    assert ok(r.execute_command("CF.RESERVE", "w", 10_000_000, "WINDOW", 10_000,
                                "ORIGIN", now_ms(r) - 3_600_000))
    assert r.memory_usage("w") > 16 * MIB
    r.config_set("maxmemory-policy", "noeviction")
    r.config_set("maxmemory", r.info("memory")["used_memory"] + MIB)
    sent = time.monotonic()
    assert r.execute_command("CF.ADD", "w", "item0") == 1
    took = time.monotonic() - sent
    assert took < 0.25, f"the catch-up took {took:.3f} s"
    assert r.execute_command("CF.EXISTS", "w", "item0") == 1
    # The old table is freed off the main thread: used_memory falls back.
    deadline = time.monotonic() + 10
    while r.info("memory")["used_memory"] > int(r.config_get("maxmemory")["maxmemory"]):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    r.config_set("maxmemory", 0)


def sweeper(r):
    """The window sweeper's counters in the module's INFO section."""
    s = r.info("cuckoo_filters")
    return {k[len("cuckoo_window_"):]: v for k, v in s.items() if k.startswith("cuckoo_window_")}


def wait_for(what, check, seconds=30):
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"waited {seconds} s for {what}"
        time.sleep(0.02)


def test_a_write_after_idle_generations_finds_them_swept(server):
    """Items 2 and 3: a write that found its filter generations behind the
    clock swept their slices itself, on the main thread: 90-170 ms for this
    212 MiB filter one to four generations behind, whatever the command.
    The sweeper (window_sweeper.rs) does it between commands, a few
    milliseconds at a time, and advances the filter with its clock: the
    write finds nothing to sweep. (The idle generations are an ORIGIN two
    generations back: the filter is made at generation 0, the clock is at
    2.)"""
    r = server.client()
    least = int(error(r, "CF.RESERVE", "w", 100_000_000, "WINDOW", 100)
                .split("(WINDOW ")[1].split()[0])
    length = least // 4
    assert length > 2000, length
    before = sweeper(r)
    assert ok(r.execute_command("CF.RESERVE", "w", 100_000_000, "WINDOW", least,
                                "ORIGIN", now_ms(r) - 2 * length - 200))
    assert r.memory_usage("w") > 200 * MIB
    # Meanwhile another client's commands wait at most a tick's share.
    other, worst = server.client(), 0.0
    def caught_up():
        nonlocal worst
        sent = time.monotonic()
        other.ping()
        worst = max(worst, time.monotonic() - sent)
        return sweeper(r)["sweeper_advances"] >= before["sweeper_advances"] + 2
    wait_for("the sweeper to advance the filter to the clock's generation", caught_up)
    assert sweeper(r)["keys"] == before["keys"] + 1
    swept = sweeper(r)["sweeper_buckets"] - before["sweeper_buckets"]
    buckets = dict(zip(*[iter(r.execute_command("CF.INFO", "w"))] * 2))[b"Number of buckets"]
    assert swept >= buckets * 0.9, (swept, buckets)
    sent = time.monotonic()
    assert r.execute_command("CF.ADD", "w", "item0") == 1
    took = time.monotonic() - sent
    assert r.execute_command("CF.EXISTS", "w", "item0") == 1
    assert sweeper(r)["catch_up_sweeps"] == before["catch_up_sweeps"], "the write swept"
    # Loose bounds for a loaded 2-core machine: the sweep took 90-170 ms
    # in the write; the sweeper's steps take at most a few ms.
    assert took < 0.06, f"the write took {took:.3f} s"
    assert worst < 0.1, f"a PING waited {worst:.3f} s behind the sweeper"


def consistent(p, replica, key):
    """The primary's and the replica's digests of `key` at one moment when
    the primary's sweeper did not advance it in between (a few tries)."""
    for _ in range(20):
        first = digest(p, key)
        wait_for_replica(p, replica)
        theirs = digest(replica, key)
        if digest(p, key) == first:
            return first, theirs
    raise AssertionError("the primary's filter kept changing")


def test_copies_hold_the_same_bytes_while_the_sweeper_advances(servers):
    """The sweeper's advances on the primary reach the replica and the AOF
    as CF.ADVANCE, as a write's do; the replica's sweeper only sweeps
    (no byte changes): every copy holds the same bytes, and a reload of
    the AOF too. Nothing is written during the idle generations."""
    primary = servers("--appendonly", "yes", name="primary")
    replica = servers("--replicaof", "127.0.0.1", str(primary.port), name="replica")
    p, q = primary.client(), replica.client()
    wait_for_replica(p, q)
    assert ok(p.execute_command("CF.RESERVE", "w", 20_000, "WINDOW", 900, "GENERATIONS", 3))
    p.execute_command("CF.INSERT", "w", "ITEMS", *range(3000))
    before = sweeper(p)
    wait_for("two generations", lambda: sweeper(p)["sweeper_advances"] >= before["sweeper_advances"] + 2)
    assert p.execute_command("CF.MEXISTS", "w", 1, 2, 3) == [1, 1, 1]
    mine, theirs = consistent(p, q, "w")
    assert mine == theirs
    assert sweeper(q)["keys"] == 1 and sweeper(q)["sweeper_advances"] == 0
    # Every item expired, by the sweeper's advances alone: what a replica
    # and a reload of the AOF hold too.
    wait_for("the window to pass", lambda: p.execute_command("CF.MEXISTS", "w", 1, 2, 3) == [0, 0, 0])
    wait_for("the sweeper to advance past it",
             lambda: sweeper(p)["sweeper_advances"] >= before["sweeper_advances"] + 4)
    mine, theirs = consistent(p, q, "w")
    assert mine == theirs
    reloaded = p.pipeline(transaction=True)
    reloaded.execute_command("DEBUG", "DIGEST-VALUE", "w")
    reloaded.execute_command("DEBUG", "LOADAOF")
    reloaded.execute_command("DEBUG", "DIGEST-VALUE", "w")
    was, _, now = reloaded.execute()
    assert was == now, "the AOF holds the sweeper's advances"


def test_the_sweeper_follows_renames_and_forgets_deleted_keys(server):
    """A window filter renamed, moved or copied stays in the sweeper's
    care under its new name; a deleted one leaves it."""
    r = server.client()
    assert ok(r.execute_command("CF.RESERVE", "w", 20_000, "WINDOW", 600, "GENERATIONS", 3))
    r.rename("w", "renamed")
    r.execute_command("COPY", "renamed", "copied")
    r.move("copied", 1)
    wait_for("the old name to be forgotten", lambda: sweeper(r)["keys"] == 2)
    before = sweeper(r)["sweeper_advances"]
    # Both advance with the clock (a generation is 200 ms), no write needed.
    wait_for("advances", lambda: sweeper(r)["sweeper_advances"] >= before + 4)
    r.delete("renamed")
    assert server.client(db=1).delete("copied") == 1
    wait_for("the deleted keys to be forgotten", lambda: sweeper(r)["keys"] == 0)


def test_with_the_sweeper_off_a_write_catches_up_itself(server):
    """cuckoo.window-sweeper no: nothing between commands; the write that
    finds its filter behind the clock sweeps the slices itself (as every
    write did before the sweeper), and its item is found."""
    r = server.client()
    assert r.config_get("cuckoo.window-sweeper") == {"cuckoo.window-sweeper": "yes"}
    assert ok(r.config_set("cuckoo.window-sweeper", "no"))
    before = sweeper(r)
    assert ok(r.execute_command("CF.RESERVE", "w", 20_000, "WINDOW", 900, "GENERATIONS", 3,
                                "ORIGIN", now_ms(r) - 650))
    time.sleep(0.3)
    assert sweeper(r)["sweeper_advances"] == before["sweeper_advances"]
    assert sweeper(r)["sweeper_buckets"] == before["sweeper_buckets"]
    assert r.execute_command("CF.ADD", "w", "item0") == 1
    assert sweeper(r)["catch_up_sweeps"] == before["catch_up_sweeps"] + 1
    assert r.execute_command("CF.EXISTS", "w", "item0") == 1
    assert ok(r.config_set("cuckoo.window-sweeper", "yes"))
    wait_for("the sweeper", lambda: sweeper(r)["sweeper_buckets"] > before["sweeper_buckets"])


def test_idle_window_keys_cost_the_sweeper_nothing_until_due(server):
    """The sweeper visits a key when it is noted and when its filter's next
    generation begins, not on every tick: 5,000 window filters with a
    10-minute window are visited once each, then not again while nothing
    is due, and a key advanced by a command is visited again at once."""
    r = server.client()
    pipe = r.pipeline(transaction=False)
    for i in range(5000):
        pipe.execute_command("CF.RESERVE", f"w{i}", 100, "WINDOW", 600_000)
    assert all(ok(x) for x in pipe.execute())
    wait_for("every key's first visit",
             lambda: sweeper(r)["sweeper_visits"] >= 5000 and sweeper(r)["keys"] == 5000)
    settled = sweeper(r)["sweeper_visits"]
    time.sleep(1)
    assert sweeper(r)["sweeper_visits"] == settled, "idle keys were visited again"
    # A short window: visited at each of its generations.
    assert ok(r.execute_command("CF.RESERVE", "short", 100, "WINDOW", 400, "GENERATIONS", 2))
    before = sweeper(r)
    time.sleep(1.1)  # 5 generations of 200 ms
    after = sweeper(r)
    assert after["sweeper_advances"] - before["sweeper_advances"] >= 4
    assert after["sweeper_visits"] - before["sweeper_visits"] <= 20
