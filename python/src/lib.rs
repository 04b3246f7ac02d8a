//! The `concurrent_cuckoo._native` extension module: the library's filters
//! as Python classes (the `concurrent_cuckoo` package re-exports them).
//!
//! Keys are converted once, in `keys`, so a key answers the same in
//! Python, Rust, C and `ccf`; batches (`batch`) run without the GIL;
//! the classes share their methods through `methods::pyfilter` over the
//! traits of `backend`. Errors become the package's exceptions in
//! `errors`; bad parameters are refused in `params` before the
//! library sees them.

mod backend;
mod batch;
mod errors;
mod fixed;
mod frozen;
mod hashes;
mod keys;
mod methods;
mod params;
mod scalable;
mod stats;
mod timed;
mod windowed;

use pyo3::prelude::*;

// `gil_used`: the module relies on the GIL (batches copy numpy arrays and
// read lists on the assumption that no Python code runs meanwhile), so a
// free-threaded CPython (3.13t) re-enables the GIL when it is imported.
#[pymodule(gil_used = true)]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<fixed::PyCuckooFilter>()?;
    m.add_class::<scalable::PyScalableCuckooFilter>()?;
    m.add_class::<windowed::PyWindowedCuckooFilter>()?;
    m.add_class::<timed::PyTimedCuckooFilter>()?;
    m.add_class::<frozen::PyFrozenFilter>()?;
    m.add("probe_backend", concurrent_cuckoo::probe_backend())?;
    Ok(())
}
