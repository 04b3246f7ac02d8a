//! The package's exceptions and the library's errors turned into them.
//!
//! The exception classes live in Python (`concurrent_cuckoo/_errors.py`):
//! `InvalidFilterData` derives from both `CuckooError` and `ValueError`,
//! which a class made from Rust with one base cannot. Rust raises them
//! through `import_exception!`, which imports the module on first use.

use concurrent_cuckoo::{BatchInsertError, BuildError, DecodeError, InsertError};
use pyo3::exceptions::{PyMemoryError, PyValueError};
use pyo3::PyErr;

pyo3::import_exception!(concurrent_cuckoo._errors, FilterFull);
pyo3::import_exception!(concurrent_cuckoo._errors, TooManyDuplicates);
pyo3::import_exception!(concurrent_cuckoo._errors, InvalidFilterData);
pyo3::import_exception!(concurrent_cuckoo._errors, RemovalRefused);

/// A refused parameter: `ValueError`, or `MemoryError` when the table
/// could not be allocated.
pub(crate) fn build(e: BuildError) -> PyErr {
    match e {
        BuildError::AllocationFailed { .. } => PyMemoryError::new_err(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
    }
}

/// A refused insert, `added` keys of its batch (if any) being in.
/// `FilterFull` and `TooManyDuplicates` take `(message, added)`.
pub(crate) fn insert(e: InsertError, added: usize) -> PyErr {
    let message = e.to_string();
    match e {
        InsertError::TooManyDuplicates => TooManyDuplicates::new_err((message, added)),
        _ => FilterFull::new_err((message, added)),
    }
}

/// A refused batch insert: the keys before the failing one are in.
/// `offset`: keys of the whole batch handed to the library before this
/// piece of it.
pub(crate) fn batch(e: BatchInsertError, offset: usize) -> PyErr {
    let added = offset + e.inserted();
    let message = format!("{}: {added} key(s) of the batch were added", e.error());
    match e.error() {
        InsertError::TooManyDuplicates => TooManyDuplicates::new_err((message, added)),
        _ => FilterFull::new_err((message, added)),
    }
}

/// Bytes or a file that are no filter: `InvalidFilterData` (a
/// `ValueError`); the file's own error (`FileNotFoundError`, ...) for I/O;
/// `MemoryError` when the table could not be allocated.
pub(crate) fn decode(e: DecodeError) -> PyErr {
    match e {
        DecodeError::Io(io) => io.into(),
        DecodeError::AllocationFailed { .. } => PyMemoryError::new_err(e.to_string()),
        _ => InvalidFilterData::new_err(e.to_string()),
    }
}
