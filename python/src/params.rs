//! Parameters checked before the library sees them: a bad value is a
//! `ValueError` naming the parameter (a `TypeError` for a non-int), never
//! a panic. Any integer is an int here: Python's, numpy's (through
//! `__index__`), but not `bool`.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt};

/// `obj` as a Python int, or a `TypeError` naming `name`.
fn int<'py>(name: &str, obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyInt>> {
    let refused = || {
        PyTypeError::new_err(format!(
            "{name} is an int, not {}",
            crate::keys::type_name(obj)
        ))
    };
    if obj.is_instance_of::<PyBool>() || obj.is_instance_of::<PyFloat>() {
        return Err(refused());
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(obj.cast::<PyInt>()?.clone());
    }
    match obj.call_method0("__index__") {
        Ok(i) => i.cast_into::<PyInt>().map_err(|_| refused()),
        Err(_) => Err(refused()),
    }
}

/// An int in `[low, high]` (both fit `u64`), or an error naming `name`
/// and the range.
fn in_range(
    name: &str,
    obj: &Bound<'_, PyAny>,
    low: u64,
    high: u64,
    high_text: &str,
) -> PyResult<u64> {
    let i = int(name, obj)?;
    match i.extract::<u64>() {
        Ok(v) if (low..=high).contains(&v) => Ok(v),
        _ => Err(PyValueError::new_err(format!(
            "{name} must lie in [{low}, {high_text}], not {i}"
        ))),
    }
}

/// A count that must be at least 1 (`capacity`, `generations`, ...).
pub(crate) fn positive(name: &str, obj: &Bound<'_, PyAny>) -> PyResult<usize> {
    let high = usize::MAX as u64;
    let v = in_range(name, obj, 1, high, &high.to_string())?;
    Ok(v as usize)
}

/// Any `u64` (`seed`, `generation`).
pub(crate) fn u64(name: &str, obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    in_range(name, obj, 0, u64::MAX, "2**64 - 1")
}

/// A false-positive rate in (0, 1).
pub(crate) fn rate(rate: f64) -> PyResult<f64> {
    if rate > 0.0 && rate < 1.0 {
        Ok(rate)
    } else {
        Err(PyValueError::new_err(format!(
            "false_positive_rate must lie in (0, 1), not {rate}"
        )))
    }
}
