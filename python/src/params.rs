//! Constructor parameters checked before the library sees them: a bad
//! value is a `ValueError` (a `TypeError` for a non-int), never a panic.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt};

/// A count that must be at least 1 (`capacity`, `generations`, ...).
pub(crate) fn positive(name: &str, obj: &Bound<'_, PyAny>) -> PyResult<usize> {
    if !obj.is_instance_of::<PyInt>() || obj.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(format!(
            "{name} is an int, not {}",
            crate::keys::type_name(obj)
        )));
    }
    match obj.extract::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        Ok(_) => Err(PyValueError::new_err(format!("{name} must be at least 1"))),
        Err(_) if obj.lt(0)? => Err(PyValueError::new_err(format!("{name} must be at least 1"))),
        Err(_) => Err(PyValueError::new_err(format!("{name} is too large"))),
    }
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
