"""Concurrent cuckoo filters: Python bindings of the ``concurrent-cuckoo``
Rust library.

Keys are ``str`` (hashed as its UTF-8 bytes), ``bytes``/``bytearray``/
``memoryview``, or ``int`` in ``[-2**63, 2**64)`` (the library's 64-bit
key; ``bool`` counts as the int it is, as in Python's sets). The same key
answers the same in Python, Rust, C and ``ccf``.
"""

from ._errors import (
    CuckooError,
    FilterFull,
    InvalidFilterData,
    RemovalRefused,
    TooManyDuplicates,
)
from ._native import (
    CuckooFilter,
    FrozenFilter,
    ScalableCuckooFilter,
    TimedCuckooFilter,
    WindowedCuckooFilter,
    probe_backend,
)

__version__ = "0.1.0"

__all__ = [
    "CuckooError",
    "CuckooFilter",
    "FilterFull",
    "FrozenFilter",
    "InvalidFilterData",
    "RemovalRefused",
    "ScalableCuckooFilter",
    "TimedCuckooFilter",
    "TooManyDuplicates",
    "WindowedCuckooFilter",
    "probe_backend",
]
