"""The servers' conventions: module configs with RedisBloom's names, the
ACL category @cuckoo, the INFO section. On every server of the matrix
(CCF_SERVER); what a server lacks (module ACL categories before Redis 7.4
and Valkey 8) is checked to be skipped cleanly, with its log line."""

import time

import pytest
from conftest import server_version
from test_replication import wait_for_replica
from redis.exceptions import NoPermissionError, ResponseError

COMMANDS = [
    ("CF.RESERVE", "k", 100),
    ("CF.ADD", "k", "a"),
    ("CF.ADDNX", "k", "a"),
    ("CF.INSERT", "k", "ITEMS", "a"),
    ("CF.INSERTNX", "k", "ITEMS", "a"),
    ("CF.EXISTS", "k", "a"),
    ("CF.MEXISTS", "k", "a"),
    ("CF.COUNT", "k", "a"),
    ("CF.DEL", "k", "a"),
    ("CF.COMPACT", "k"),
    ("CF.INFO", "k"),
    ("CF.STATS", "k"),
    ("CF.SCANDUMP", "k", 0),
    ("CF.LOADCHUNK", "k", 10, "abcdefghi"),
    ("CF.ADVANCE", "k", 1),
]

DEFAULTS = {
    "cuckoo.cf-initial-size": "1024",
    "cuckoo.cf-expansion-factor": "1",
    "cuckoo.cf-max-expansions": "32",
    "cuckoo.cf-bucket-size": "2",
    "cuckoo.cf-max-iterations": "20",
    "cuckoo.cf-error-rate": "0.001",
}


def info(r, key):
    reply = r.execute_command("CF.INFO", key)
    return {k.decode(): v for k, v in zip(reply[::2], reply[1::2])}


def stats(r, key):
    reply = r.execute_command("CF.STATS", key)
    return {k.decode(): v for k, v in zip(reply[::2], reply[1::2])}


def configs(r):
    return {k: v for k, v in r.config_get("cuckoo.cf-*").items() if k in DEFAULTS}


def test_configs_have_redisbloom_defaults_and_refuse_bad_values(server):
    r = server.client(decode_responses=True)
    assert configs(r) == DEFAULTS
    for name, bad in [
        ("cf-initial-size", "1"),
        ("cf-initial-size", "x"),
        ("cf-expansion-factor", "32769"),
        ("cf-expansion-factor", "-1"),
        ("cf-max-expansions", "0"),
        ("cf-max-expansions", "65"),
        ("cf-bucket-size", "256"),
        ("cf-max-iterations", "0"),
        ("cf-error-rate", "0"),
        ("cf-error-rate", "1"),
        ("cf-error-rate", "x"),
    ]:
        with pytest.raises(ResponseError) as e:
            r.config_set(f"cuckoo.{name}", bad)
        assert f"cuckoo.{name}" in str(e.value), str(e.value)
    assert "between 0 and 1" in str(
        pytest.raises(ResponseError, r.config_set, "cuckoo.cf-error-rate", "2").value
    )
    assert configs(r) == DEFAULTS  # nothing changed


def test_configs_set_what_new_filters_get(server):
    r = server.client()
    r.config_set("cuckoo.cf-initial-size", 5000)
    r.config_set("cuckoo.cf-bucket-size", 4)
    r.config_set("cuckoo.cf-max-iterations", 100)
    r.config_set("cuckoo.cf-expansion-factor", 0)
    r.config_set("cuckoo.cf-error-rate", 0.01)
    r.execute_command("CF.ADD", "auto", "a")
    r.execute_command("CF.INSERT", "inserted", "ITEMS", "a")
    r.execute_command("CF.RESERVE", "reserved", 100)
    for key in ("auto", "inserted"):
        got = info(r, key)
        assert (got["Bucket size"], got["Max iterations"], got["Expansion rate"]) == (4, 100, 0)
        s = stats(r, key)
        assert s["Kind"] == b"fixed" and s["Capacity"] >= 5000
        assert float(s["Error rate"]) == 0.01
    got = info(r, "reserved")
    assert (got["Bucket size"], got["Expansion rate"]) == (4, 0)
    # The CAPACITY check of CF.INSERT is against the configured bucket size.
    with pytest.raises(ResponseError, match="Capacity must be at least"):
        r.execute_command("CF.INSERT", "small", "CAPACITY", 7, "ITEMS", "a")
    # A filter keeps its settings when the configs change.
    r.config_set("cuckoo.cf-bucket-size", 2)
    assert info(r, "auto")["Bucket size"] == 4


def test_max_expansions_bounds_levels_and_replicas_follow_the_primary(servers):
    primary = servers(module_args=["cf-max-expansions", "2"], name="primary")
    p = primary.client()
    assert p.config_get("cuckoo.cf-max-expansions") == {"cuckoo.cf-max-expansions": "2"}
    replica = servers("--replicaof", "127.0.0.1", str(primary.port), name="replica")
    r = replica.client()
    # Linked before the writes, so WAIT below waits for them (a replica
    # still syncing when WAIT gives up had no key: CI on a loaded machine).
    wait_for_replica(p, r)
    p.execute_command("CF.RESERVE", "g", 100, "EXPANSION", 1)
    refused = 0
    for i in range(2000):
        try:
            p.execute_command("CF.ADD", "g", f"i{i}")
        except ResponseError as e:
            assert str(e) == "Maximum expansions reached"
            refused += 1
    assert refused > 0
    assert stats(p, "g")["Levels"] == 2
    assert p.execute_command("WAIT", 1, 10000) == 1
    # The replica (default configs: 32 levels) made the same filter.
    assert r.dump("g") == p.dump("g")


def test_acl_category_cuckoo_holds_every_command(server):
    r = server.client(decode_responses=True)
    name, version = server_version()
    supported = (name == "redis" and version >= (7, 4)) or (name == "valkey" and version >= (8, 0))
    log = server.log()
    if not supported:
        # Skipped cleanly: loaded, said so, no category.
        assert "skipped @cuckoo" in log, log
        with pytest.raises(ResponseError):
            r.execute_command("ACL", "CAT", "cuckoo")
        return
    assert "ACL category @cuckoo holds every CF.* command" in log
    assert sorted(r.execute_command("ACL", "CAT", "cuckoo")) == sorted(
        c[0].lower() for c in COMMANDS
    )
    r.execute_command("ACL", "SETUSER", "nocf", "on", ">pw", "~*", "+@all", "-@cuckoo")
    r.execute_command("ACL", "SETUSER", "onlycf", "on", ">pw", "~*", "+@cuckoo")
    nocf = server.client(username="nocf", password="pw")
    onlycf = server.client(username="onlycf", password="pw")
    for command in COMMANDS:
        with pytest.raises(NoPermissionError):
            nocf.execute_command(*command)
    assert nocf.set("plain", "ok")
    assert onlycf.execute_command("CF.ADD", "k2", "a") == 1
    with pytest.raises(NoPermissionError):
        onlycf.set("plain", "no")


def section(r):
    return {k: v for k, v in r.info("cuckoo_filters").items()}


def items_of(r, key):
    """CF.INFO's item count (inserted less deleted) of `key`."""
    reply = r.execute_command("CF.INFO", key)
    info = dict(zip(reply[::2], reply[1::2])) if isinstance(reply, list) else reply
    return info[b"Number of items inserted"]


def test_info_section_counts_filters_items_memory_and_refusals(server):
    r = server.client()
    assert section(r) == {
        "cuckoo_filters": 0,
        "cuckoo_items": 0,
        "cuckoo_memory": 0,
        "cuckoo_refused_inserts": 0,
        "cuckoo_refused_removes": 0,
        "cuckoo_window_keys": 0,
        "cuckoo_window_sweeper_visits": 0,
        "cuckoo_window_sweeper_buckets": 0,
        "cuckoo_window_sweeper_advances": 0,
        "cuckoo_window_catch_up_sweeps": 0,
    }
    r.execute_command("CF.RESERVE", "fixed", 4, "EXPANSION", 0)
    replies = r.execute_command("CF.INSERT", "fixed", "ITEMS", *range(100))
    refused = sum(1 for x in replies if x == -1)
    assert refused > 0
    r.execute_command("CF.INSERT", "other", "ITEMS", *range(1000))
    s = section(r)
    assert s["cuckoo_filters"] == 2
    assert s["cuckoo_items"] == 100 - refused + 1000
    memory = (
        stats(r, "fixed")["Memory"] + stats(r, "other")["Memory"]
    )
    assert s["cuckoo_memory"] >= memory
    assert s["cuckoo_refused_inserts"] == refused
    # An item added again after its filter grew has copies in two levels
    # of different sizes (EXPANSION 2): its levels nest, so CF.DEL takes
    # one copy each time (refused before nested levels; only a filter
    # loaded from such a dump still refuses, and counts in
    # cuckoo_refused_removes).
    r.execute_command("CF.RESERVE", "grown", 100, "EXPANSION", 2)
    r.execute_command("CF.ADD", "grown", "twice")
    i = 0
    while stats(r, "grown")["Levels"] < 2:
        r.execute_command("CF.ADD", "grown", f"fill{i}")
        i += 1
    r.execute_command("CF.ADD", "grown", "twice")
    assert r.execute_command("CF.DEL", "grown", "twice") == 1
    r.execute_command("CF.ADD", "grown", "twice")
    assert r.execute_command("CF.DEL", "grown", "never added") == 0
    s = section(r)
    assert s["cuckoo_refused_removes"] == 0
    assert s["cuckoo_filters"] == 3
    # Deletes and frees give their share back.
    r.execute_command("CF.DEL", "other", 5)
    assert section(r)["cuckoo_items"] == s["cuckoo_items"] - 1
    r.copy("other", "copy")
    assert section(r)["cuckoo_filters"] == 4
    # Writes add their items to the total (no recount per command: that
    # sums every lock stripe); it stays exactly the filters' own counts
    # through every kind of write.
    r.execute_command("CF.ADDNX", "other", "nx-new")
    r.execute_command("CF.INSERTNX", "other", "ITEMS", "nx-new", "nx-2")
    r.execute_command("CF.ADD", "copy", "in the copy")
    r.execute_command("CF.DEL", "copy", 6)
    r.execute_command("CF.INSERT", "fixed", "ITEMS", *range(100, 120))
    keys = ("fixed", "other", "grown", "copy")
    assert section(r)["cuckoo_items"] == sum(items_of(r, k) for k in keys)
    # SYNC: Valkey frees a flushed keyspace in the background by default
    # (the totals follow when the values are freed, on that thread).
    r.execute_command("FLUSHALL", "SYNC")
    s = section(r)
    assert (s["cuckoo_filters"], s["cuckoo_items"], s["cuckoo_memory"]) == (0, 0, 0)


def test_info_totals_survive_reloads_restores_and_full_syncs(servers):
    """Issue 32, defect 6: DEBUG RELOAD set cuckoo_items to 0, RESTORE and
    a one-chunk CF.LOADCHUNK added nothing, and a replica after a full
    sync reported 0: values completed by a load were never counted."""
    primary = servers(name="primary")
    r = primary.client()
    r.execute_command("CF.INSERT", "a", "ITEMS", *range(1000))
    r.execute_command("CF.RESERVE", "b", 5000, "EXPANSION", 0)
    r.execute_command("CF.INSERT", "b", "ITEMS", *range(300))
    whole = b"".join(data for _, data in _chunks(r, "b"))
    assert r.execute_command("CF.LOADCHUNK", "one-chunk", len(whole) + 1, whole)
    r.restore("restored", 0, r.dump("a"))
    keys = ("a", "b", "one-chunk", "restored")
    expected = sum(items_of(r, k) for k in keys)
    assert expected == 2600
    assert section(r)["cuckoo_items"] == expected
    r.execute_command("DEBUG", "RELOAD")
    s = section(r)
    assert (s["cuckoo_filters"], s["cuckoo_items"]) == (4, expected)
    assert s["cuckoo_memory"] >= sum(stats(r, k)["Memory"] for k in keys)
    replica = servers("--replicaof", "127.0.0.1", str(primary.port), name="replica")
    c = replica.client()
    deadline = time.time() + 30
    while c.info("replication").get("master_link_status") != "up":
        assert time.time() < deadline
        time.sleep(0.05)
    assert r.execute_command("WAIT", 1, 10000) == 1
    t = section(c)
    assert (t["cuckoo_filters"], t["cuckoo_items"]) == (4, expected)


def _chunks(r, key):
    it = 0
    while True:
        it, data = r.execute_command("CF.SCANDUMP", key, it)
        if it == 0:
            return
        yield it, data
