"""``CF.COMPACT`` compacts (issue 31, item 2).

A few items left in an old sub-filter (never deleted) keep it in use:
``CF.COMPACT`` moves them into another sub-filter of the same size and
frees the emptied one, so ``Number of filters`` in ``CF.INFO`` falls,
every item stays found, and the command is replicated so that the
replica compacts at the same point and stays the same filter, byte for
byte. Before, ``CF.COMPACT`` was a read that changed nothing: the number
of sub-filters stayed where it was.
"""

from test_commands import info
from test_replication import wait_for_replica
from test_window import filters, item, missing


def test_compact_frees_an_old_sub_filter_left_with_a_few_items(servers):
    primary = servers(name="primary")
    replica = servers("--replicaof", "127.0.0.1", str(primary.port), name="replica")
    p, rep = primary.client(), replica.client()
    wait_for_replica(p, rep)
    p.execute_command("CF.RESERVE", "c", 1000, "EXPANSION", 1)
    added = 0
    while filters(p, "c") < 3:
        batch = [item(i) for i in range(added, added + 100)]
        assert p.execute_command("CF.INSERT", "c", "ITEMS", *batch) == [1] * len(batch)
        added += len(batch)
    # Keep the first 10 items (in the oldest sub-filter) and the last 100.
    kept = [item(i) for i in list(range(10)) + list(range(added - 100, added))]
    pipe = p.pipeline(transaction=False)
    gone = [item(i) for i in range(10, added - 100)]
    for x in gone:
        pipe.execute_command("CF.DEL", "c", x)
    # A delete refused (two sub-filters match the fingerprint) leaves its
    # item in the filter: it stays found.
    kept += [x for x, answer in zip(gone, pipe.execute()) if answer == 0]
    before = filters(p, "c")
    assert before >= 2
    items = dict(info(p, "c"))["Number of items inserted"]
    assert p.execute_command("CF.COMPACT", "c") in (b"OK", "OK", True)
    assert filters(p, "c") < before
    assert filters(p, "c") == 1
    assert dict(info(p, "c"))["Number of items inserted"] == items
    assert missing(p, "c", kept) == []
    # Replicated: the replica compacted at the same point.
    assert p.execute_command("WAIT", 1, 10000) == 1
    assert p.execute_command("DEBUG", "DIGEST-VALUE", "c") == rep.execute_command(
        "DEBUG", "DIGEST-VALUE", "c"
    )
    assert dict(info(p, "c")) == dict(info(rep, "c"))
    assert missing(rep, "c", kept) == []
