"""A pytest plugin for running redis-py's own cuckoo-filter tests
(`tests/test_bloom.py` of its source distribution) against this module.

redis-py's test harness reads the server's module list when the session
starts, and `test_bloom.py`, as it is imported, looks there for a module
named `bf` (RedisBloom) for the version checks on its t-digest tests:
any other module makes the whole file fail to import
(`AttributeError: No redis module named bf`). This module is `cuckoo`,
not RedisBloom. The plugin removes the module list after the harness read
it, as if the server had reported none, so the version checks skip the
tests they guard (none of the `test_cf_*` ones) and the file imports.
Nothing else of the harness or the tests changes.
"""

import pytest


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session):
    hidden = False
    for plugin in session.config.pluginmanager.get_plugins():
        info = getattr(plugin, "REDIS_INFO", None)
        if isinstance(info, dict) and "modules" in info:
            info.pop("modules")
            hidden = True
    if not hidden:
        raise pytest.UsageError("redis-py's harness reported no module list to hide")
