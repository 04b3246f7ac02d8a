"""A replica ends with byte-identical filters: the seed is chosen on the
primary and replicated explicitly, every write replays to the same
placement, and every CF.LOADCHUNK chunk reaches the replica (RedisBloom
#1014: restored filters reached replicas with empty buckets)."""

import time

import pytest
from redis.exceptions import ResponseError

from test_commands import encoding, info


def wait_for_replica(primary, replica):
    deadline = time.time() + 30
    while True:
        role = replica.info("replication")
        if role.get("master_link_status") == "up":
            break
        assert time.time() < deadline, role
        time.sleep(0.05)
    assert primary.execute_command("WAIT", 1, 10000) == 1


def writes(r):
    """Every kind of write, filters created every way."""
    r.execute_command("CF.RESERVE", "reserved", 1000, "EXPANSION", 2, "BUCKETSIZE", 3)
    r.execute_command("CF.RESERVE", "fixed", 50000, "EXPANSION", 0, "ERROR", 0.01)
    r.execute_command("CF.ADD", "auto-add", "a")
    r.execute_command("CF.ADDNX", "auto-addnx", "a")
    r.execute_command("CF.INSERT", "auto-insert", "CAPACITY", 200, "ITEMS", *range(3000))
    r.execute_command("CF.INSERTNX", "auto-insertnx", "ITEMS", *range(500))
    for start in range(0, 40000, 2000):
        r.execute_command("CF.INSERT", "reserved", "ITEMS", *range(start, start + 2000))
        r.execute_command("CF.INSERT", "fixed", "ITEMS", *range(start, start + 2000))
    for i in range(0, 3000, 7):
        r.execute_command("CF.DEL", "auto-insert", i)
    for i in range(0, 40000, 3):
        r.execute_command("CF.ADDNX", "reserved", f"nx{i}")
    # A refused command changes nothing and replicates nothing.
    with pytest.raises(ResponseError):
        r.execute_command("CF.RESERVE", "fixed", 10)
    # A restore by chunks, several of them.
    r.execute_command("CF.RESERVE", "big", 1_000_000, "EXPANSION", 0)
    r.execute_command("CF.INSERT", "big", "ITEMS", *range(20000))
    it = 0
    while True:
        it, data = r.execute_command("CF.SCANDUMP", "big", it)
        if it == 0:
            break
        r.execute_command("CF.LOADCHUNK", "restored", it, data)
    return ["reserved", "fixed", "auto-add", "auto-addnx", "auto-insert", "auto-insertnx",
            "big", "restored"]


def test_a_replica_holds_byte_identical_filters(servers):
    primary = servers(name="primary")
    replica = servers("--replicaof", "127.0.0.1", str(primary.port), name="replica")
    p, r = primary.client(), replica.client()
    wait_for_replica(p, r)
    keys = writes(p)
    wait_for_replica(p, r)
    for key in keys:
        assert r.dump(key) == p.dump(key), key
        assert info(r, key) == info(p, key), key
    assert encoding(r, "restored") == encoding(p, "big")
    assert all(r.execute_command("CF.MEXISTS", "restored", *range(20000)))
    # A replica refuses writes and answers reads.
    with pytest.raises(ResponseError, match="read only replica"):
        r.execute_command("CF.ADD", "reserved", "z")
    assert r.execute_command("CF.EXISTS", "reserved", 5) == 1


def test_a_replica_that_syncs_later_gets_the_same_filters(servers):
    # Full resynchronisation: the replica gets the primary's RDB (rdb_save
    # and rdb_load of every filter, a restore in progress included).
    primary = servers(name="primary")
    p = primary.client()
    keys = writes(p)
    p.execute_command("CF.RESERVE", "src", 1_000_000, "EXPANSION", 0)
    p.execute_command("CF.ADD", "src", "an item")  # an empty filter has no dump
    it, data = p.execute_command("CF.SCANDUMP", "src", 0)
    p.execute_command("CF.LOADCHUNK", "partial", it, data)
    replica = servers("--replicaof", "127.0.0.1", str(primary.port), name="replica")
    r = replica.client()
    wait_for_replica(p, r)
    for key in keys + ["partial"]:
        assert r.dump(key) == p.dump(key), key
