"""Hash identity with Rust: the library's golden files (tests/data/,
written by tests/golden.rs in Rust) answer in Python exactly as recorded.

The Rust generator inserts u64 keys i * 0x9E3779B97F4A7C15 (every fifth
of the first 150 removed again), byte strings as `&[u8]`, and usize keys
(hashed as 8 bytes, as u64); the .txt beside each file lists which keys of
1_000_000..1_020_000 are false positives. Exact answers on all of them
pin Python's int and bytes keys to Rust's u64 and &[u8] keys."""

import numpy as np
import pytest

from concurrent_cuckoo import CuckooFilter, FrozenFilter

GOLDEN = ["v2-fp8", "v2-fp16", "v2-fp32", "v1-fp16"]


def rust_int_keys():
    return [(i * 0x9E3779B97F4A7C15) % 2**64 for i in range(150) if i % 5 != 0]


def rust_byte_keys():
    return [bytes(((b * 7 + i) % 256) for b in range(i * 13)) for i in range(20)]


def recorded(repo, name):
    lines = (repo / "tests" / "data" / f"{name}.txt").read_text().splitlines()
    body = [l for l in lines if not l.startswith("#")]
    length = int(body[0].split()[1])
    lo, hi = (int(x) for x in body[1].split()[1].split(".."))
    return length, range(lo, hi), [int(x) for x in body[2:]]


@pytest.mark.parametrize("name", GOLDEN)
@pytest.mark.parametrize("how", ["load", "open"])
def test_golden_file_answers_as_recorded(repo, name, how):
    path = repo / "tests" / "data" / f"{name}.bin"
    f = CuckooFilter.load(path) if how == "load" else FrozenFilter.open(path)
    length, absent, false_positives = recorded(repo, name)
    assert len(f) == length
    for k in rust_int_keys():
        assert k in f
    for k in rust_byte_keys():
        assert k in f
    for k in range(3_000_000_000, 3_000_000_020):
        assert k in f
    # Absent keys: the recorded false positives and no others, single
    # calls and batches (uint64 and int64 arrays) alike.
    singles = [k for k in absent if k in f]
    assert singles == false_positives
    for dtype in (np.uint64, np.int64):
        got = f.contains_many(np.arange(absent.start, absent.stop, dtype=dtype))
        assert [absent.start + int(i) for i in np.flatnonzero(got)] == false_positives
