//! `WindowedCuckooFilter`: keys expire by age.

use crate::methods::pyfilter;
use crate::{errors, params, stats};
use concurrent_cuckoo::WindowedCuckooFilter;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// A cuckoo filter whose keys expire: a key added (or added again) in
/// generation `g` is present until `generations` more generations have
/// begun (`advance()`), then gone. A sliding window of the last
/// `generations` periods.
#[pyclass(frozen, name = "WindowedCuckooFilter", module = "concurrent_cuckoo")]
pub(crate) struct PyWindowedCuckooFilter {
    pub(crate) inner: WindowedCuckooFilter,
}

pyfilter!(live PyWindowedCuckooFilter {
    #[new]
    #[pyo3(signature = (capacity, generations, false_positive_rate = 0.001, seed = None))]
    fn new(
        capacity: &Bound<'_, PyAny>,
        generations: &Bound<'_, PyAny>,
        false_positive_rate: f64,
        seed: Option<u64>,
    ) -> PyResult<Self> {
        let mut builder = WindowedCuckooFilter::builder()
            .capacity(params::positive("capacity", capacity)?)
            .generations(params::positive("generations", generations)?)
            .false_positive_rate(params::rate(false_positive_rate)?);
        if let Some(seed) = seed {
            builder = builder.seed(seed);
        }
        let inner = builder.build().map_err(errors::build)?;
        Ok(Self { inner })
    }

    /// Starts the next generation and returns its number: keys last added
    /// `generations` generations ago expire.
    fn advance(&self, py: Python<'_>) -> u64 {
        py.detach(|| self.inner.advance())
    }

    /// Advances until the generation is at least `generation` (never
    /// backwards); returns the generation.
    fn advance_to(&self, py: Python<'_>, generation: u64) -> u64 {
        py.detach(|| self.inner.advance_to(generation))
    }

    /// The current generation (0 when made).
    #[getter]
    fn generation(&self) -> u64 {
        self.inner.generation()
    }

    /// How many generations a key lives.
    #[getter]
    fn generations(&self) -> u64 {
        self.inner.generations()
    }

    /// len, slots, occupied, memory_usage, generation, generations,
    /// fingerprint_bits, tag_bits, inserts, refreshes, relocations, swept, ...
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        stats::windowed(py, &self.inner.stats())
    }
});
