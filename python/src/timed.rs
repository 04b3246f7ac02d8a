//! `TimedCuckooFilter`: keys expire by time.

use crate::backend::Refreshing;
use crate::keys;
use crate::methods::pyfilter;
use crate::{errors, hashes, params, stats};
use concurrent_cuckoo::TimedCuckooFilter;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::time::Duration;

/// A cuckoo filter whose keys expire by time: a key added (or added again)
/// is present for at least `time_to_live` seconds and gone at most one
/// step (`time_to_live / generations`) later, by the system's wall clock.
/// Nothing to call on a timer: every call reads the clock. The schedule
/// is saved with the filter, so one loaded after a restart keeps it.
#[pyclass(frozen, name = "TimedCuckooFilter", module = "concurrent_cuckoo")]
pub(crate) struct PyTimedCuckooFilter {
    pub(crate) inner: TimedCuckooFilter,
}

pyfilter!(live PyTimedCuckooFilter {
    #[new]
    #[pyo3(signature = (capacity, time_to_live, generations = None, false_positive_rate = 0.001, seed = None))]
    fn new(
        capacity: &Bound<'_, PyAny>,
        time_to_live: f64,
        generations: Option<&Bound<'_, PyAny>>,
        false_positive_rate: f64,
        seed: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        // Whole milliseconds; NaN, negative and absurd values are refused
        // by name before any conversion.
        if !(time_to_live.is_finite() && time_to_live > 0.0 && time_to_live < 1e15) {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "time_to_live must be a positive number of seconds, not {time_to_live}"
            )));
        }
        let mut builder = TimedCuckooFilter::builder()
            .capacity(params::positive("capacity", capacity)?)
            .time_to_live(Duration::from_secs_f64(time_to_live))
            .false_positive_rate(params::rate(false_positive_rate)?);
        if let Some(generations) = generations {
            builder = builder.generations(params::positive("generations", generations)? as u64);
        }
        if let Some(seed) = seed {
            builder = builder.seed(params::u64("seed", seed)?);
        }
        let inner = builder.build().map_err(|e| errors::build(e, "capacity"))?;
        Ok(Self { inner })
    }

    /// Adds `key` (str, bytes, bytearray, memoryview or int), or refreshes
    /// it if present: it is found for at least `time_to_live` seconds from
    /// now. Returns whether it was new: not live just before this call.
    /// Raises `FilterFull` when no place can be made for it.
    fn add(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let key = keys::extract(key)?;
        let hash = hashes::hash(&self.inner, key.as_ref());
        Refreshing::add_hash(&self.inner, hash).map_err(|e| errors::insert(e, 0))
    }

    /// `add` of every key of `keys` (as `WindowedCuckooFilter.add_many`
    /// takes them): a numpy bool array, `True` where the key was new.
    fn add_many<'py>(&self, py: Python<'py>, keys: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        crate::batch::add_many_windowed(py, &self.inner, keys)
    }

    /// Seconds a key is found for after its last add, at least (the
    /// `time_to_live` asked for, rounded up to whole milliseconds a step).
    #[getter]
    fn time_to_live(&self) -> f64 {
        self.inner.time_to_live().as_secs_f64()
    }

    /// Steps the time to live expires in.
    #[getter]
    fn generations(&self) -> u64 {
        self.inner.generations()
    }

    /// Wall-clock milliseconds of the filter's first step (saved with it).
    #[getter]
    fn epoch_ms(&self) -> u64 {
        self.inner.epoch_ms()
    }

    /// The windowed filter's statistics underneath: len, slots, occupied,
    /// memory_usage, generation, generations (the window: one more than
    /// the steps), fingerprint_bits, tag_bits, ...
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        stats::windowed(py, &self.inner.windowed().stats())
    }
});
