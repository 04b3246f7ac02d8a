"""The answers RedisBloom's own flow tests (tests/flow/test_cuckoo.py of
RedisBloom 2.8: test_scandump_invalid_header, test_scandump_random_scan_small,
test_scandump_scan_big, test_scandump_load_small, test_scandump_load_big)
expect of CF.SCANDUMP and CF.LOADCHUNK given iterators and bytes no client
of a dump sends, checked here against this module's own format (issue 32):

* a header chunk loaded at iterator 1 (RedisBloom's header position) into
  an empty key is `Couldn't create filter!`;
* CF.SCANDUMP answers any iterator from 0 to twice the filter's size: the
  filter's encoding from that position, or `[0, nil]` past its end, never
  an error and never a wrong byte;
* bytes loaded at any position into a live filter are refused with
  `Couldn't load chunk!` (`item exists` for a first chunk) and change
  nothing.

Written for this module (the sizes are this module's and bounded for CI),
not copied."""

import os
import random

from test_commands import error, info
from test_persistence import scandump_chunks


def encoding(r, key):
    return b"".join(data for _, data in scandump_chunks(r, key))


def size(r, key):
    return dict(info(r, key))["Size"]


def check_any_iterator(r, key, iterators):
    """CF.SCANDUMP at each iterator answers the encoding from there (or
    [0, nil] past its end), pipelined."""
    whole = encoding(r, key)
    pipe = r.pipeline(transaction=False)
    for it in iterators:
        pipe.execute_command("CF.SCANDUMP", key, it)
    for it, (next_it, data) in zip(iterators, pipe.execute()):
        if it == 0:
            assert data == whole[: len(data)] and next_it == len(data) + 1, it
        elif it - 1 >= len(whole):
            assert (next_it, data) == (0, None), it
        else:
            assert data and data == whole[it - 1 : it - 1 + len(data)], it
            assert next_it == it + len(data), it
    return whole


def test_a_header_loaded_at_iterator_1_cannot_create_a_filter(server):
    r = server.client()
    r.execute_command("CF.RESERVE", "cf", 100)
    for x in range(50):
        r.execute_command("CF.ADD", "cf", f"foo{x}")
    _, header = r.execute_command("CF.SCANDUMP", "cf", 0)
    r.delete("cf")
    damaged = bytes(9) + header[9:]
    assert error(r, "CF.LOADCHUNK", "cf", 1, damaged) == "Couldn't create filter!"
    # Intact, but at RedisBloom's position: no filter either.
    assert error(r, "CF.LOADCHUNK", "cf", 1, header) == "Couldn't create filter!"
    assert r.exists("cf") == 0


def test_scandump_answers_every_iterator_of_a_small_filter(server):
    r = server.client()
    r.execute_command("CF.RESERVE", "cf", 50)
    items = [f"x{i}" for i in range(10000)]
    for start in range(0, len(items), 500):
        replies = r.execute_command("CF.INSERT", "cf", "ITEMS", *items[start:start + 500])
        if any(x != 1 for x in replies):
            break  # its last level is full
    whole = encoding(r, "cf")
    # Every iterator up to the end and 1024 past it, on a fresh client
    # (no dump begun) and after a finished dump (its states freed).
    check_any_iterator(r, "cf", list(range(0, len(whole) + 1024)))
    fresh = server.client()
    check_any_iterator(fresh, "cf", random.sample(range(1, 2 * size(r, "cf")), 300))


def test_scandump_answers_random_iterators_of_a_big_filter(server):
    r = server.client()
    # A second level of about a million items (2.3 MB: three data chunks).
    r.execute_command("CF.RESERVE", "cf", 1024, "EXPANSION", 1024)
    for i in range(4):
        r.execute_command("CF.INSERT", "cf", "ITEMS", *[f"x{i}-{j}" for j in range(10000)])
    limit = 2 * size(r, "cf")
    assert len(encoding(r, "cf")) > (1 << 20)  # more than one data chunk
    check_any_iterator(r, "cf", [random.randint(0, limit) for _ in range(100)])


def test_bytes_loaded_into_a_live_filter_are_refused(server):
    r = server.client()
    r.execute_command("CF.RESERVE", "cf", 1024, "EXPANSION", 8)
    for i in range(4):
        r.execute_command("CF.INSERT", "cf", "ITEMS", *[f"x{i}-{j}" for j in range(1000)])
    before = r.dump("cf")
    limit = size(r, "cf")
    for _ in range(30):
        data = os.urandom(random.randint(1024, 1 << 20))
        assert error(r, "CF.LOADCHUNK", "cf", random.randint(2, limit), data) == \
            "Couldn't load chunk!"
    for _ in range(300):
        data = os.urandom(random.randint(0, 100))
        assert error(r, "CF.LOADCHUNK", "cf", random.randint(0, 10000), data) in (
            "Couldn't load chunk!", "item exists")
    assert r.dump("cf") == before
