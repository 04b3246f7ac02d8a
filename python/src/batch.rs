//! Batches of keys: a numpy `uint64`/`int64` array, a sequence of keys, or
//! any iterable of them, handed to the library's batch calls with the GIL
//! released.
//!
//! A numpy array is read under the GIL a piece at a time (`CHUNK` keys)
//! into a buffer, and each piece is handed to the library without the
//! GIL. Reading the array in place without the GIL would be unsound: any
//! Python thread may write to a writeable array (or to the writeable base
//! of a read-only view) while the GIL is released, a data race on the
//! keys. Under the GIL no Python code runs, and copying 8 bytes a key
//! costs little beside hashing and probing it (the reads go through
//! `numpy`'s `PyReadonlyArray`, its contract for reading an array under
//! the GIL). What stays outside any extension's reach: C code that
//! writes the array after releasing the GIL itself (numpy's own ufuncs
//! do, on large arrays) races with every reader of it, this one included;
//! such a program has a race of its own making.
//!
//! Other keys are converted under the GIL (see [`crate::keys`]): the
//! `bytes` objects stay referenced (alive, and immutable) for the whole
//! call, so the library reads them in place.

use crate::backend::Live;
use crate::errors;
use crate::keys::{self, Key, KeyRef};
use concurrent_cuckoo::Filter;
use numpy::{PyArray1, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

/// Keys of a numpy array copied per trip without the GIL: 512 KiB, so
/// the copy stays in cache and the GIL is taken back often enough for
/// other threads.
const CHUNK: usize = 1 << 16;

/// A run of keys of one kind, for one library call.
#[derive(Clone, Copy)]
pub(crate) enum Run<'a> {
    Ints(&'a [u64]),
    Bytes(&'a [&'a [u8]]),
}

impl Run<'_> {
    fn len(&self) -> usize {
        match self {
            Run::Ints(k) => k.len(),
            Run::Bytes(k) => k.len(),
        }
    }
}

/// Calls a generic library batch method with the run's keys:
/// `with_run!(run, k => filter.insert_batch(k))`.
macro_rules! with_run {
    ($run:expr, $k:ident => $body:expr) => {
        match $run {
            Run::Ints($k) => $body,
            Run::Bytes($k) => $body,
        }
    };
}

/// The keys of a batch, as extracted under the GIL.
enum Batch<'py> {
    U64(Bound<'py, PyArray1<u64>>),
    I64(Bound<'py, PyArray1<i64>>),
    Keys(Vec<Key<'py>>),
}

impl<'py> Batch<'py> {
    fn extract(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        if numpy_loaded(obj.py())? {
            if let Ok(a) = obj.cast::<PyArray1<u64>>() {
                return Ok(Batch::U64(a.clone()));
            }
            if let Ok(a) = obj.cast::<PyArray1<i64>>() {
                return Ok(Batch::I64(a.clone()));
            }
        }
        if obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyBytes>() {
            return Err(PyTypeError::new_err(format!(
                "a batch is an iterable of keys, not one {} key: wrap it in a list",
                keys::type_name(obj)
            )));
        }
        let mut out = Vec::with_capacity(obj.len().unwrap_or(0));
        for key in obj.try_iter()? {
            out.push(keys::extract(&key?)?);
        }
        Ok(Batch::Keys(out))
    }

    fn len(&self) -> usize {
        match self {
            Batch::U64(a) => PyUntypedArrayMethods::len(a),
            Batch::I64(a) => PyUntypedArrayMethods::len(a),
            Batch::Keys(k) => k.len(),
        }
    }

    /// Calls `f(run, offset)` on consecutive runs of keys of one kind,
    /// `offset` being the run's first key's place in the batch.
    fn for_each_run(&self, mut f: impl FnMut(Run<'_>, usize) -> PyResult<()>) -> PyResult<()> {
        match self {
            Batch::U64(a) => chunks(a, |v| v, f),
            // The i64 key: the same 64-bit pattern as `keys::extract`.
            Batch::I64(a) => chunks(a, |v| v as u64, f),
            Batch::Keys(all) => {
                let mut start = 0;
                while start < all.len() {
                    let is_int = matches!(all[start].as_ref(), KeyRef::Int(_));
                    let end = all[start..]
                        .iter()
                        .position(|k| matches!(k.as_ref(), KeyRef::Int(_)) != is_int)
                        .map_or(all.len(), |n| start + n);
                    if is_int {
                        let ints: Vec<u64> = all[start..end]
                            .iter()
                            .map(|k| match k.as_ref() {
                                KeyRef::Int(v) => v,
                                KeyRef::Bytes(_) => unreachable!("a run holds one kind"),
                            })
                            .collect();
                        f(Run::Ints(&ints), start)?;
                    } else {
                        let bytes: Vec<&[u8]> = all[start..end]
                            .iter()
                            .map(|k| match k.as_ref() {
                                KeyRef::Bytes(b) => b,
                                KeyRef::Int(_) => unreachable!("a run holds one kind"),
                            })
                            .collect();
                        f(Run::Bytes(&bytes), start)?;
                    }
                    start = end;
                }
                Ok(())
            }
        }
    }
}

/// A numpy array's keys, `CHUNK` at a time, copied under the GIL.
fn chunks<T: numpy::Element + Copy>(
    array: &Bound<'_, PyArray1<T>>,
    to_u64: impl Fn(T) -> u64,
    mut f: impl FnMut(Run<'_>, usize) -> PyResult<()>,
) -> PyResult<()> {
    let view = array.try_readonly()?;
    let view = view.as_array();
    let mut buf = Vec::with_capacity(CHUNK.min(view.len()));
    let mut start = 0;
    while start < view.len() {
        let end = (start + CHUNK).min(view.len());
        buf.clear();
        let piece = view.slice(numpy::ndarray::s![start..end]);
        match piece.as_slice() {
            Some(s) => buf.extend(s.iter().map(|&v| to_u64(v))),
            None => buf.extend(piece.iter().map(|&v| to_u64(v))),
        }
        f(Run::Ints(&buf), start)?;
        start = end;
    }
    Ok(())
}

/// Whether numpy is imported: if not, no argument can be an array (and
/// numpy's C API, whose absence would panic in `numpy`, is not touched).
fn numpy_loaded(py: Python<'_>) -> PyResult<bool> {
    py.import("sys")?.getattr("modules")?.contains("numpy")
}

/// Looks every key up; a numpy `bool` array in the batch's order.
pub(crate) fn contains_many<'py, F: Filter + Sync>(
    py: Python<'py>,
    filter: &F,
    keys: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray1<bool>>> {
    // The answer is a numpy array: import numpy (an ImportError, not a
    // panic, if it is missing).
    py.import("numpy")?;
    let batch = Batch::extract(keys)?;
    let mut out = vec![false; batch.len()];
    batch.for_each_run(|run, offset| {
        let out = &mut out[offset..offset + run.len()];
        py.detach(|| with_run!(run, k => filter.contains_batch(k, out)));
        Ok(())
    })?;
    // `from_vec` hands the vector to numpy: no copy.
    Ok(PyArray1::from_vec(py, out))
}

/// Inserts every key, in order; on a refusal, the keys before the failing
/// one stay in and the error says how many were added.
pub(crate) fn add_many<F: Live>(
    py: Python<'_>,
    filter: &F,
    keys: &Bound<'_, PyAny>,
) -> PyResult<usize> {
    let batch = Batch::extract(keys)?;
    batch.for_each_run(|run, offset| {
        py.detach(|| with_run!(run, k => filter.insert_batch(k)))
            .map_err(|e| errors::batch(e, offset))
    })?;
    Ok(batch.len())
}
