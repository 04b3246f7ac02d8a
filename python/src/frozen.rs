//! `FrozenFilter`: a saved filter queried in place from a read-only map.

use crate::errors;
use crate::keys::{self, with_key};
use crate::methods::pyfilter;
use concurrent_cuckoo::{FrozenFilter, MappedFile};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// A saved (fixed) filter queried in place: the file is mapped read-only,
/// so opening costs no load and every process that opens it shares its
/// pages. Read-only: no `add`, no `remove`.
///
/// The file must not be truncated or written in place while it is open
/// (replacing it by a rename, as `save` and `ccf build` do, is fine: the
/// map keeps the old file).
#[pyclass(frozen, name = "FrozenFilter", module = "concurrent_cuckoo")]
pub(crate) struct PyFrozenFilter {
    inner: FrozenFilter<MappedFile>,
}

pyfilter!(frozen PyFrozenFilter {
    /// Maps the filter saved at `path` (by `CuckooFilter.save`, Rust, C or
    /// `ccf build` without `--grow`).
    #[staticmethod]
    fn open(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        // SAFETY: `FrozenFilter::open` maps the file: its contract is that
        // the file is not modified in place while mapped. This package
        // documents that contract to its users (class docstring above and
        // python/README.md); the writers of this project (`save`,
        // `write_to_path`, `ccf`) replace files by rename, which keeps the
        // mapped file intact.
        let inner = py
            .detach(|| unsafe { FrozenFilter::open(&path) })
            .map_err(|e| errors::decode(e, errors::Source::File(&path)))?;
        Ok(Self { inner })
    }

    /// How many copies of `key`'s fingerprint the filter holds.
    fn count(&self, key: &Bound<'_, PyAny>) -> PyResult<usize> {
        let key = keys::extract(key)?;
        Ok(with_key!(key.as_ref(), k => self.inner.count(k)))
    }

    /// Bits per fingerprint.
    #[getter]
    fn fingerprint_bits(&self) -> u32 {
        self.inner.fingerprint_bits()
    }

    /// The file's bytes (the library's binary format).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
        pyo3::types::PyBytes::new(py, self.inner.as_bytes())
    }

    /// len, capacity, fingerprint_bits, memory_usage, false_positive_bound.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("len", self.inner.len())?;
        d.set_item("capacity", self.inner.capacity())?;
        d.set_item("fingerprint_bits", self.inner.fingerprint_bits())?;
        d.set_item("memory_usage", self.inner.memory_usage())?;
        d.set_item("false_positive_bound", self.inner.false_positive_bound())?;
        Ok(d)
    }
});
