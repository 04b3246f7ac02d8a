"""Issue 42: a review of the module at 68dce41 (Redis 7.0.15, Valkey
9.1.2). One test per defect; each failed there (the message is in its
docstring)."""

from test_commands import error


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
