"""Shared fixtures: the repository, and the `ccf` binary for the exchange
tests (scripts/test-python.sh sets CCF; else target/{debug,release}/ccf)."""

import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def repo() -> pathlib.Path:
    return REPO


@pytest.fixture(scope="session")
def ccf() -> str:
    named = os.environ.get("CCF")
    candidates = [named] if named else [
        str(REPO / "target" / "debug" / "ccf"),
        str(REPO / "target" / "release" / "ccf"),
    ]
    for path in candidates:
        if path and os.access(path, os.X_OK):
            return path
    # A failure, not a skip: the exchange with ccf is part of the suite.
    pytest.fail(f"no ccf binary at {candidates}: build it with `cargo build -p ccf`")
