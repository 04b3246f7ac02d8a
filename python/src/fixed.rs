//! `CuckooFilter`: a filter of fixed capacity.

use crate::keys::{self, with_key};
use crate::methods::pyfilter;
use crate::{errors, params, stats};
use concurrent_cuckoo::CuckooFilter;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// A concurrent cuckoo filter of fixed capacity: a set of keys that may
/// answer `True` for a key never added (at most `false_positive_bound` of
/// the time) and never `False` for one added. Shared by threads as it is.
#[pyclass(frozen, name = "CuckooFilter", module = "concurrent_cuckoo")]
pub(crate) struct PyCuckooFilter {
    pub(crate) inner: CuckooFilter,
}

pyfilter!(counting PyCuckooFilter {
    #[new]
    #[pyo3(signature = (capacity, false_positive_rate = 0.001, seed = None))]
    fn new(capacity: &Bound<'_, PyAny>, false_positive_rate: f64, seed: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let mut builder = CuckooFilter::builder()
            .capacity(params::positive("capacity", capacity)?)
            .false_positive_rate(params::rate(false_positive_rate)?);
        if let Some(seed) = seed {
            builder = builder.seed(params::u64("seed", seed)?);
        }
        let inner = builder.build().map_err(|e| errors::build(e, "capacity"))?;
        Ok(Self { inner })
    }

    /// Removes one copy of `key`; `False` if none was found. Remove only
    /// keys that were added: removing another key that collides with an
    /// added one removes that one.
    fn remove(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let key = keys::extract(key)?;
        Ok(with_key!(key.as_ref(), k => self.inner.remove(k)))
    }

    /// Bits per fingerprint (from the false-positive rate).
    #[getter]
    fn fingerprint_bits(&self) -> u32 {
        self.inner.fingerprint_bits()
    }

    /// Counters and sizes: len, capacity, load_factor, memory_usage,
    /// fingerprint_bits, inserts, removes, relocations, ...
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        stats::table(py, &self.inner.stats())
    }
});
