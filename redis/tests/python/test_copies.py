"""Every copy is the same filter: what a primary replicates, and what its
AOF holds, rebuilds exactly the filter it made, whatever the configs of the
replica or of the server replaying the AOF (issue 32, defects 1 and 7)."""

import time

from test_commands import error, info
from test_persistence import AOF_ONLY, scandump_chunks

SMALL_CAPACITY = "Capacity must be at least (BucketSize * 2)"
ITEMS = [f"item{i}" for i in range(200)]

# Configs as far from the primary's defaults as they go: a server with
# these must still rebuild the primary's filters byte for byte.
OTHER_CONFIGS = {
    "cf-bucket-size": "255",
    "cf-initial-size": "4",
    "cf-expansion-factor": "0",
    "cf-max-iterations": "7",
    "cf-max-expansions": "3",
    "cf-error-rate": "0.25",
}


def set_configs(r, configs):
    for name, value in configs.items():
        r.config_set(f"cuckoo.{name}", value)


def digest(r, key):
    return r.execute_command("DEBUG", "DIGEST-VALUE", key)


def writes(r):
    """Filters made every way whose settings a config could change: a
    creation with CAPACITY (checked against cf-bucket-size), auto-created
    ones (cf-initial-size, cf-expansion-factor, ...), and a restore by
    chunks without options (BUCKETSIZE and MAXITERATIONS from configs).
    Returns each key's items."""
    r.execute_command("CF.INSERT", "capacity", "CAPACITY", 100, "ITEMS", *ITEMS)
    r.execute_command("CF.INSERT", "auto", "ITEMS", *ITEMS)
    r.execute_command("CF.INSERTNX", "auto-nx", "ERROR", 0.01, "ITEMS", *ITEMS)
    r.execute_command("CF.ADD", "add", "one")
    r.execute_command("CF.RESERVE", "src", 5000, "BUCKETSIZE", 4, "MAXITERATIONS", 50)
    r.execute_command("CF.INSERT", "src", "ITEMS", *ITEMS)
    for it, data in scandump_chunks(r, "src"):
        r.execute_command("CF.LOADCHUNK", "restored", it, data)
    return {"capacity": ITEMS, "auto": ITEMS, "auto-nx": ITEMS, "add": ["one"],
            "src": ITEMS, "restored": ITEMS}


def same_filters(copy, original, items):
    for key, values in items.items():
        assert copy.exists(key), key
        assert all(copy.execute_command("CF.MEXISTS", key, *values)), key
        assert info(copy, key) == info(original, key), key
        assert digest(copy, key) == digest(original, key), key


def wait_for(primary, replica):
    deadline = time.time() + 30
    while replica.info("replication").get("master_link_status") != "up":
        assert time.time() < deadline
        time.sleep(0.05)
    assert primary.execute_command("WAIT", 1, 10000) == 1


def test_a_primary_refuses_an_auto_create_its_replicas_would_refuse(servers):
    """Defect 1: with cf-bucket-size 255 and cf-initial-size 100 the
    primary created a 100-item filter; its replicated CF.RESERVE was
    refused on the replica, whose CF.INSERT then auto-created a filter of
    its own configs (184 of 200 items missing with these)."""
    primary = servers(name="primary")
    replica = servers("--replicaof", "127.0.0.1", str(primary.port), name="replica")
    p, r = primary.client(), replica.client()
    set_configs(r, {"cf-expansion-factor": "0", "cf-initial-size": "4"})
    set_configs(p, {"cf-bucket-size": "255", "cf-initial-size": "100"})
    wait_for(p, r)
    assert error(p, "CF.INSERT", "k3", "ITEMS", *ITEMS) == SMALL_CAPACITY
    assert error(p, "CF.ADD", "k4", "x") == SMALL_CAPACITY
    assert error(p, "CF.INSERT", "k5", "CAPACITY", 100, "ITEMS", "x") == SMALL_CAPACITY
    # What the primary takes, every copy takes.
    p.execute_command("CF.INSERT", "k6", "CAPACITY", 510, "ITEMS", *ITEMS)
    wait_for(p, r)
    assert p.exists("k3", "k4", "k5") == 0 and r.exists("k3", "k4", "k5") == 0
    same_filters(r, p, {"k6": ITEMS})


def test_a_replica_with_other_configs_holds_the_same_filters(servers):
    """Defects 1 and 7: a replica whose cf-bucket-size refuses the
    replicated CAPACITY lost the items (the command was refused there),
    and a restore by chunks took BUCKETSIZE/MAXITERATIONS from the
    replica's configs (CF.INFO and DEBUG DIGEST-VALUE differed)."""
    primary = servers(name="primary")
    replica = servers("--replicaof", "127.0.0.1", str(primary.port), name="replica")
    p, r = primary.client(), replica.client()
    set_configs(r, OTHER_CONFIGS)
    wait_for(p, r)
    items = writes(p)
    wait_for(p, r)
    same_filters(r, p, items)
    # A replica that syncs later (a full sync: the primary's RDB) too.
    late = servers("--replicaof", "127.0.0.1", str(primary.port), name="late")
    l = late.client()
    set_configs(l, OTHER_CONFIGS)
    deadline = time.time() + 30
    while l.info("replication").get("master_link_status") != "up":
        assert time.time() < deadline
        time.sleep(0.05)
    assert p.execute_command("WAIT", 2, 10000) == 2
    same_filters(l, p, items)


def test_an_aof_replayed_under_other_configs_rebuilds_the_same_filters(servers):
    """Defects 1 and 7 on replay: the AOF holds what the primary
    replicated, and a restart with other configs refused the CAPACITY of
    an auto-creating CF.INSERT and restored chunks with its own
    BUCKETSIZE/MAXITERATIONS."""
    s = servers(*AOF_ONLY)
    r = s.client()
    items = writes(r)
    before = {key: (digest(r, key), info(r, key)) for key in items}
    s.module_args = [x for pair in OTHER_CONFIGS.items() for x in pair]
    s.stop()
    for rdb in s.dir.glob("*.rdb"):
        rdb.unlink()
    s.start()
    r = s.client()
    assert r.config_get("cuckoo.cf-bucket-size") == {"cuckoo.cf-bucket-size": "255"}
    for key, values in items.items():
        assert all(r.execute_command("CF.MEXISTS", key, *values)), key
        assert (digest(r, key), info(r, key)) == before[key], key


def resp(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = str(a).encode() if not isinstance(a, bytes) else a
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def test_an_older_modules_aof_replays_under_other_configs(servers, tmp_path):
    """Defect 1, the other way: an AOF (or a primary) of the module before
    this fix holds `CF.INSERT key CAPACITY c ITEMS ...` after the filter's
    CF.RESERVE; a server whose cf-bucket-size makes c too small refused
    it on replay (the check of a new filter's capacity), losing the items.
    A command from the primary or the AOF is checked only against the
    smallest capacity."""
    d = tmp_path / "old"
    d.mkdir()
    (d / "appendonly.aof").write_bytes(
        resp("SELECT", 0)
        + resp("CF.RESERVE", "k", 100, "BUCKETSIZE", 2, "MAXITERATIONS", 20, "EXPANSION", 1,
               "ERROR", "0.001", "SEED", 7, "MAXEXPANSIONS", 32)
        + resp("CF.INSERT", "k", "CAPACITY", 100, "ITEMS", *ITEMS)
    )
    s = servers(*AOF_ONLY, name="old", module_args=["cf-bucket-size", "255"])
    r = s.client()
    assert all(r.execute_command("CF.MEXISTS", "k", *ITEMS))
    # A client's command is still checked against this server's configs.
    assert error(r, "CF.INSERT", "k", "CAPACITY", 100, "ITEMS", "x") == SMALL_CAPACITY
