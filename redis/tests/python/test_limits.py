"""The module's limits (issue 24): the per-filter memory limit config,
admission of every table allocation against it and against maxmemory,
restores bounded by what they received, copies that evolve identically,
dumps that always finish, memory given back, and the smaller items
(free_effort, digest, saturating counters, alignment).

Each test runs against a real redis-server (Debian's 7.0) started by the
fixtures in conftest.py."""

import pytest
from redis.exceptions import ResponseError

CONFIG = "cuckoo.cf-max-memory-usage"
GIB = 1 << 30


def test_memory_limit_config_defaults_sets_and_loads_from_module_arguments(servers):
    r = servers().client()
    assert r.config_get(CONFIG) == {CONFIG: str(GIB)}
    assert r.config_set(CONFIG, "2gb")
    assert r.config_get(CONFIG) == {CONFIG: str(2 * GIB)}
    with pytest.raises(ResponseError):
        r.config_set(CONFIG, 5)
    assert r.config_get(CONFIG) == {CONFIG: str(2 * GIB)}
    # As a --loadmodule argument (after the module's path).
    s = servers(module_args=["cf-max-memory-usage", "1000000"])
    assert s.client().config_get(CONFIG) == {CONFIG: "1000000"}
