//! The library's statistics as Python dicts.

use concurrent_cuckoo::{Stats, WindowedStats};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// A fixed filter's (or one level's) `Stats`.
pub(crate) fn table<'py>(py: Python<'py>, s: &Stats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("len", s.len)?;
    d.set_item("capacity", s.capacity)?;
    d.set_item("load_factor", s.load_factor)?;
    d.set_item("memory_usage", s.memory_usage)?;
    d.set_item("fingerprint_bits", s.fingerprint_bits)?;
    d.set_item("bucket_count", s.bucket_count)?;
    d.set_item("stripes", s.stripes)?;
    d.set_item("max_path_len", s.max_path_len)?;
    d.set_item("inserts", s.inserts)?;
    d.set_item("removes", s.removes)?;
    d.set_item("relocations", s.relocations)?;
    d.set_item("failed_inserts", s.failed_inserts)?;
    d.set_item("duplicate_refusals", s.duplicate_refusals)?;
    d.set_item("path_lengths", s.path_lengths.to_vec())?;
    Ok(d)
}

/// A windowed filter's `WindowedStats`.
pub(crate) fn windowed<'py>(py: Python<'py>, s: &WindowedStats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("len", s.len)?;
    d.set_item("slots", s.slots)?;
    d.set_item("occupied", s.occupied)?;
    d.set_item("memory_usage", s.memory_usage)?;
    d.set_item("generation", s.generation)?;
    d.set_item("generations", s.generations)?;
    d.set_item("fingerprint_bits", s.fingerprint_bits)?;
    d.set_item("tag_bits", s.tag_bits)?;
    d.set_item("bucket_count", s.bucket_count)?;
    d.set_item("stripes", s.stripes)?;
    d.set_item("inserts", s.inserts)?;
    d.set_item("refreshes", s.refreshes)?;
    d.set_item("relocations", s.relocations)?;
    d.set_item("swept", s.swept)?;
    Ok(d)
}
