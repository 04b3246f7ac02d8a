"""The package's exceptions (raised by the native module too)."""


class CuckooError(Exception):
    """Base class of the package's own exceptions."""


class FilterFull(CuckooError):
    """No place could be made for a key: the filter is as it was before it.

    ``added``: how many keys of the batch (``add_many``) were added before
    the failing one (0 for ``add``).
    """

    def __init__(self, message: str, added: int = 0) -> None:
        super().__init__(message)
        self.added = added


class TooManyDuplicates(CuckooError):
    """A key was added more times than its two buckets can hold copies of.

    ``added`` as for :class:`FilterFull`.
    """

    def __init__(self, message: str, added: int = 0) -> None:
        super().__init__(message)
        self.added = added


class InvalidFilterData(CuckooError, ValueError):
    """Bytes or a file that hold no filter (truncated, damaged, another
    format version or hasher)."""


class RemovalRefused(CuckooError):
    """``ScalableCuckooFilter.remove`` of a filter saved before nested
    levels: levels of different sizes hold the key, so which copy is its
    own cannot be told; nothing was removed and the key is still present.
    Filters built by this release never raise it."""
