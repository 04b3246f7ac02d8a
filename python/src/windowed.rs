//! `WindowedCuckooFilter`: keys expire by age.

use crate::backend::Refreshing;
use crate::keys;
use crate::methods::pyfilter;
use crate::{errors, hashes, params, stats};
use concurrent_cuckoo::WindowedCuckooFilter;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// A cuckoo filter whose keys expire: a key added (or added again) in
/// generation `g` is present until `generations` more generations have
/// begun (`advance()`), then gone. A sliding window of the last
/// `generations` periods: up to 29 in 16-bit slots at rates down to
/// 9.8e-4, else in 32-bit slots (about 2.2 times the memory a key) up to
/// 253, at rates down to 7.5e-9.
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
        seed: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let mut builder = WindowedCuckooFilter::builder()
            .capacity(params::positive("capacity", capacity)?)
            .generations(params::positive("generations", generations)? as u64)
            .false_positive_rate(params::rate(false_positive_rate)?);
        if let Some(seed) = seed {
            builder = builder.seed(params::u64("seed", seed)?);
        }
        let inner = builder.build().map_err(|e| errors::build(e, "capacity"))?;
        Ok(Self { inner })
    }

    /// Adds `key` (str, bytes, bytearray, memoryview or int) to the
    /// current generation, or refreshes it if present (a key is never
    /// stored twice). Returns whether it was new: not live just before
    /// this call. Two threads adding one new key at the same moment may
    /// both be told `True` (the check and the insert are two steps); the
    /// filter still holds it once. Raises `FilterFull` when no place can
    /// be made for it; the filter is then as it was.
    fn add(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let key = keys::extract(key)?;
        let hash = hashes::hash(&self.inner, key.as_ref());
        Refreshing::add_hash(&self.inner, hash).map_err(|e| errors::insert(e, 0))
    }

    /// `add` of every key of `keys` (a numpy array of integers, bools,
    /// bytes or str, a pandas Series, a list, tuple or any iterable of
    /// keys), in order, without the GIL: a numpy bool array, `True` where
    /// the key was new. On `FilterFull` the keys before the failing one
    /// are in: the exception's `added`.
    fn add_many<'py>(&self, py: Python<'py>, keys: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        crate::batch::add_many_windowed(py, &self.inner, keys)
    }

    /// Starts the next generation and returns its number: keys last added
    /// `generations` generations ago expire.
    fn advance(&self, py: Python<'_>) -> u64 {
        py.detach(|| self.inner.advance())
    }

    /// Advances until the generation is at least `generation` (never
    /// backwards); returns the generation.
    fn advance_to(&self, py: Python<'_>, generation: &Bound<'_, PyAny>) -> PyResult<u64> {
        let generation = params::u64("generation", generation)?;
        Ok(py.detach(|| self.inner.advance_to(generation)))
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
