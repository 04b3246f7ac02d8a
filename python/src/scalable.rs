//! `ScalableCuckooFilter`: a filter that grows.

use crate::keys::{self, with_key};
use crate::methods::pyfilter;
use crate::{errors, params, stats};
use concurrent_cuckoo::{Removal, ScalableCuckooFilter};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// A cuckoo filter that grows: when a level fills it adds a larger one,
/// with tighter fingerprints, so the false-positive rate stays within
/// `false_positive_rate` however many keys it takes.
#[pyclass(frozen, name = "ScalableCuckooFilter", module = "concurrent_cuckoo")]
pub(crate) struct PyScalableCuckooFilter {
    pub(crate) inner: ScalableCuckooFilter,
}

/// Why a remove was refused, and what avoids it. Only a filter loaded
/// from bytes written before nested levels refuses: `compact()` cannot
/// help (it cannot tell a key's copy from another key's match); a filter
/// built anew (and filled again) never refuses.
const REFUSED: &str = "this filter was saved by a release before nested levels, and levels \
    of different sizes hold copies matching this key: which one is its own cannot be told, \
    so nothing was removed and the key stays present (compact() does not change that). A \
    filter built by this release never refuses a remove: rebuild the filter (add its keys \
    to a new ScalableCuckooFilter) to remove keys freely";

pyfilter!(counting PyScalableCuckooFilter {
    #[new]
    #[pyo3(signature = (initial_capacity, false_positive_rate = 0.001, growth_factor = None, max_levels = None, seed = None))]
    fn new(
        initial_capacity: &Bound<'_, PyAny>,
        false_positive_rate: f64,
        growth_factor: Option<&Bound<'_, PyAny>>,
        max_levels: Option<&Bound<'_, PyAny>>,
        seed: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let mut builder = ScalableCuckooFilter::builder()
            .capacity(params::positive("initial_capacity", initial_capacity)?)
            .false_positive_rate(params::rate(false_positive_rate)?);
        if let Some(factor) = growth_factor {
            builder = builder.growth_factor(params::positive("growth_factor", factor)?);
        }
        if let Some(levels) = max_levels {
            builder = builder.max_levels(params::positive("max_levels", levels)?);
        }
        if let Some(seed) = seed {
            builder = builder.seed(params::u64("seed", seed)?);
        }
        let inner = builder.build().map_err(|e| errors::build(e, "initial_capacity"))?;
        Ok(Self { inner })
    }

    /// Removes one copy of `key` (from the largest level that holds it):
    /// `True`, or `False` if no level holds it. Only a filter loaded from
    /// bytes saved before nested levels may raise `RemovalRefused` (the
    /// key stays present).
    fn remove(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let key = keys::extract(key)?;
        match with_key!(key.as_ref(), k => self.inner.remove(k)) {
            Removal::Removed => Ok(true),
            Removal::NotFound => Ok(false),
            Removal::Refused => Err(errors::RemovalRefused::new_err(REFUSED)),
        }
    }

    /// Moves keys into the newest level where they fit (lookups and
    /// inserts may run meanwhile), without the GIL.
    fn compact(&self, py: Python<'_>) {
        py.detach(|| self.inner.compact_concurrently());
    }

    /// The number of levels.
    #[getter]
    fn levels(&self) -> usize {
        self.inner.levels()
    }

    /// len, capacity, levels, memory_usage, false_positive_bound, and
    /// `level_stats`: each level's counters (as `CuckooFilter.stats()`).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("len", self.inner.len())?;
        d.set_item("capacity", self.inner.capacity())?;
        d.set_item("levels", self.inner.levels())?;
        d.set_item("load_factor", self.inner.load_factor())?;
        d.set_item("memory_usage", self.inner.memory_usage())?;
        d.set_item("false_positive_bound", self.inner.false_positive_bound())?;
        let levels = PyList::empty(py);
        for s in self.inner.level_stats() {
            levels.append(stats::table(py, &s)?)?;
        }
        d.set_item("level_stats", levels)?;
        Ok(d)
    }
});
