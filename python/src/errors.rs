//! The package's exceptions and the library's errors turned into them,
//! with messages in Python's terms (the class and method a user calls).
//!
//! The exception classes live in Python (`concurrent_cuckoo/_errors.py`):
//! `InvalidFilterData` derives from both `CuckooError` and `ValueError`,
//! which a class made from Rust with one base cannot. Rust raises them
//! through `import_exception!`, which imports the module on first use.

use concurrent_cuckoo::{BuildError, DecodeError, InsertError};
use pyo3::exceptions::{PyMemoryError, PyOSError, PyValueError};
use pyo3::PyErr;
use std::path::Path;

pyo3::import_exception!(concurrent_cuckoo._errors, FilterFull);
pyo3::import_exception!(concurrent_cuckoo._errors, TooManyDuplicates);
pyo3::import_exception!(concurrent_cuckoo._errors, InvalidFilterData);
pyo3::import_exception!(concurrent_cuckoo._errors, RemovalRefused);

/// A refused parameter: `ValueError` naming the Python parameter (the
/// library's message names its builder's), or `MemoryError` when the
/// table could not be allocated. `capacity`: the constructor's name for
/// its capacity parameter.
pub(crate) fn build(e: BuildError, capacity: &str) -> PyErr {
    let message = match e {
        BuildError::AllocationFailed { .. } => return PyMemoryError::new_err(e.to_string()),
        BuildError::CapacityOverflow { requested } => {
            format!("{capacity} {requested} is too large: no filter can hold that many keys")
        }
        BuildError::InvalidGrowthFactor(n) => {
            format!("growth_factor must lie in [1, 4294967295], not {n}")
        }
        BuildError::InvalidMaxLevels(n) => format!("max_levels must lie in [1, 64], not {n}"),
        BuildError::InvalidGenerations { generations, max } => format!(
            "generations must lie in [1, {max}] at this false_positive_rate, not {generations}"
        ),
        BuildError::InvalidTimeToLive {
            time_to_live_ms,
            generations,
        } => format!(
            "time_to_live must be at least 1 ms a generation ({generations} ms for {generations} \
             generations), not {time_to_live_ms} ms"
        ),
        _ => e.to_string(),
    };
    PyValueError::new_err(message)
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

/// A refused insert in a batch: the batch's first `added` keys are in.
pub(crate) fn batch(e: InsertError, added: usize) -> PyErr {
    let message = format!("{e}: the batch's first {added} key(s) are in the filter");
    match e {
        InsertError::TooManyDuplicates => TooManyDuplicates::new_err((message, added)),
        _ => FilterFull::new_err((message, added)),
    }
}

/// Where the refused bytes came from, for the message's advice.
#[derive(Clone, Copy)]
pub(crate) enum Source<'a> {
    /// `from_bytes`: "these bytes hold a ...: use X.from_bytes".
    Bytes,
    /// `load`/`open` of this file: "this file holds a ...: use X.load".
    File(&'a Path),
}

/// Bytes or a file that are no filter: `InvalidFilterData` (a
/// `ValueError`); an `OSError` of the right subclass with `errno`,
/// `strerror` and `filename` for I/O; `MemoryError` when the table could
/// not be allocated.
pub(crate) fn decode(e: DecodeError, source: Source<'_>) -> PyErr {
    match e {
        DecodeError::Io(io) => match source {
            Source::File(path) => os(&io, path),
            Source::Bytes => io.into(),
        },
        DecodeError::AllocationFailed { .. } => PyMemoryError::new_err(e.to_string()),
        DecodeError::InvalidHeader(what) => match other_type(what) {
            Some(ty) => InvalidFilterData::new_err(match source {
                Source::Bytes => format!("these bytes hold a {ty}: use {ty}.from_bytes"),
                Source::File(path) => format!(
                    "{} holds a {ty}: use {}",
                    path.display(),
                    if ty == "CuckooFilter" {
                        "CuckooFilter.load (or FrozenFilter.open)".to_owned()
                    } else {
                        format!("{ty}.load")
                    }
                ),
            }),
            None => InvalidFilterData::new_err(e.to_string()),
        },
        _ => InvalidFilterData::new_err(e.to_string()),
    }
}

/// The library's "this encodes a X: decode it with X::from_bytes": `X`.
fn other_type(what: &str) -> Option<&str> {
    let rest = what.strip_prefix("this encodes a ")?;
    let ty = &rest[..rest.find(':')?];
    [
        "CuckooFilter",
        "ScalableCuckooFilter",
        "WindowedCuckooFilter",
        "TimedCuckooFilter",
    ]
    .contains(&ty)
    .then_some(ty)
}

/// An I/O error on `path` as Python raises its own: `OSError(errno,
/// strerror, filename)`, which Python turns into the subclass the errno
/// names (`FileNotFoundError`, `PermissionError`, ...).
pub(crate) fn os(e: &std::io::Error, path: &Path) -> PyErr {
    match e.raw_os_error() {
        Some(errno) => {
            let strerror = std::io::Error::from_raw_os_error(errno).to_string();
            // Rust appends " (os error N)"; Python's strerror has none.
            let strerror = match strerror.rfind(" (os error ") {
                Some(i) => strerror[..i].to_owned(),
                None => strerror,
            };
            PyOSError::new_err((errno, strerror, path.as_os_str().to_os_string()))
        }
        None => PyOSError::new_err((None::<i32>, e.to_string(), path.as_os_str().to_os_string())),
    }
}
