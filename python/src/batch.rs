//! Batches of keys: one path for every input, read a chunk at a time
//! under the GIL and handed to the library without it.
//!
//! * a numpy array of any integer dtype (or `bool`), any shape: each
//!   chunk of its flattened keys is copied into a `u64` buffer (cast as
//!   `astype(uint64)` casts: a negative int keeps its 64-bit pattern, the
//!   same key as the Python int);
//! * a numpy `S`/`U`/object array: each chunk as `tolist()`'s keys;
//! * anything else with `__array__` (a pandas Series or Index): as
//!   `numpy.asarray` of it;
//! * a list, tuple or any iterable of keys: a chunk of items at a time.
//!
//! Memory stays bounded by a chunk whatever the batch's size, and other
//! threads get the GIL between chunks. Reading a numpy array in place
//! without the GIL would be unsound: any Python thread may write to a
//! writeable array while the GIL is released, a data race on the keys.
//! Under the GIL no Python code runs, so the chunk's copy is consistent.
//! Other keys are not copied: a `bytes` object's buffer and a `str`'s
//! UTF-8 form are immutable and stay alive while the chunk holds a
//! reference to their objects, so the library reads them in place.

use crate::backend::Counting;
use crate::errors;
use crate::keys::{self, Key, KeyRef};
use concurrent_cuckoo::{Filter, InsertError, WindowedCuckooFilter};
use numpy::{PyArray1, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyIterator, PyList, PySlice, PyString, PyTuple};

/// Keys of an integer array copied per trip without the GIL (512 KiB):
/// the copy stays in cache and other threads wait at most a chunk.
const INT_CHUNK: usize = 1 << 16;

/// Objects read per trip: their references and byte slices, a few
/// hundred KiB.
const OBJECT_CHUNK: usize = 1 << 14;

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

/// An insert refused in a run: the refused key's index in the run, and
/// why.
type Refusal = (usize, InsertError);

/// A batch as read under the GIL.
enum Source<'py> {
    /// A flattened integer (or bool) array.
    Ints {
        flat: Bound<'py, PyAny>,
        len: usize,
        shape: Bound<'py, PyAny>,
    },
    /// A flattened `S`/`U`/object array.
    Objects {
        flat: Bound<'py, PyAny>,
        len: usize,
        shape: Bound<'py, PyAny>,
    },
    /// Any other iterable (a list, a tuple, a generator...).
    Iter(Bound<'py, PyIterator>),
}

impl<'py> Source<'py> {
    fn of(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        let py = obj.py();
        if obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyBytes>() {
            return Err(PyTypeError::new_err(format!(
                "a batch is an iterable of keys, not one {} key: wrap it in a list",
                keys::type_name(obj)
            )));
        }
        if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() || !numpy_loaded(py)? {
            return Ok(Source::Iter(obj.try_iter()?));
        }
        let array = if obj.cast::<PyUntypedArray>().is_ok() {
            obj.clone()
        } else if obj.hasattr("__array__")? {
            // A pandas Series or Index, ...: its values as numpy sees them.
            py.import("numpy")?.call_method1("asarray", (obj,))?
        } else {
            return Ok(Source::Iter(obj.try_iter()?));
        };
        let untyped = array.cast::<PyUntypedArray>()?;
        let shape = array.getattr("shape")?;
        let len = untyped.shape().iter().product();
        // A view for a contiguous array (a copy for a strided n-D one).
        let flat = array.call_method1("reshape", (-1,))?;
        match untyped.dtype().kind() {
            b'i' | b'u' | b'b' => Ok(Source::Ints { flat, len, shape }),
            b'S' | b'U' | b'O' => Ok(Source::Objects { flat, len, shape }),
            _ => Err(PyTypeError::new_err(format!(
                "a batch array holds integers, bools, bytes (S), str (U) or objects, not {}",
                untyped.dtype()
            ))),
        }
    }

    /// The shape of the mask to answer with: the array's, else 1-D.
    fn shape(&self) -> Option<&Bound<'py, PyAny>> {
        match self {
            Source::Ints { shape, .. } | Source::Objects { shape, .. } => Some(shape),
            Source::Iter(_) => None,
        }
    }

    /// Calls `f(run, offset)` on consecutive runs of keys of one kind,
    /// `offset` being the run's first key's place in the batch, a chunk
    /// at a time.
    fn for_each_run(&self, mut f: impl FnMut(Run<'_>, usize) -> PyResult<()>) -> PyResult<()> {
        match self {
            Source::Ints { flat, len, .. } => int_chunks(flat, *len, f),
            Source::Objects { flat, len, .. } => {
                let py = flat.py();
                let mut start = 0;
                while start < *len {
                    let end = (start + OBJECT_CHUNK).min(*len);
                    let piece = flat.get_item(PySlice::new(py, start as isize, end as isize, 1))?;
                    let items = piece.call_method0("tolist")?;
                    let held: Vec<Bound<'_, PyAny>> = items.try_iter()?.collect::<PyResult<_>>()?;
                    object_runs(&held, start, &mut f)?;
                    start = end;
                }
                Ok(())
            }
            Source::Iter(iter) => {
                let mut iter = iter.clone();
                let mut start = 0;
                loop {
                    let held: Vec<Bound<'_, PyAny>> =
                        iter.by_ref().take(OBJECT_CHUNK).collect::<PyResult<_>>()?;
                    if held.is_empty() {
                        return Ok(());
                    }
                    object_runs(&held, start, &mut f)?;
                    start += held.len();
                }
            }
        }
    }
}

/// A flattened integer array's keys, `INT_CHUNK` at a time, copied (and
/// cast to `u64`) under the GIL.
fn int_chunks(
    flat: &Bound<'_, PyAny>,
    len: usize,
    mut f: impl FnMut(Run<'_>, usize) -> PyResult<()>,
) -> PyResult<()> {
    let py = flat.py();
    // 64-bit arrays (the common case) are read as they are; others are
    // cast a chunk at a time (`astype` makes a fresh array of the chunk).
    let wide = flat.cast::<PyArray1<u64>>().is_ok() || flat.cast::<PyArray1<i64>>().is_ok();
    let uint64 = py.import("numpy")?.getattr("uint64")?;
    let mut buf = Vec::with_capacity(INT_CHUNK.min(len));
    let mut start = 0;
    while start < len {
        let end = (start + INT_CHUNK).min(len);
        let piece = flat.get_item(PySlice::new(py, start as isize, end as isize, 1))?;
        let piece = if wide {
            piece
        } else {
            piece.call_method1("astype", (&uint64,))?
        };
        buf.clear();
        if let Ok(a) = piece.cast::<PyArray1<u64>>() {
            copy_into(&mut buf, a, |v| v)?;
        } else {
            // The i64 key: the same 64-bit pattern as `keys::extract`.
            copy_into(&mut buf, piece.cast::<PyArray1<i64>>()?, |v| v as u64)?;
        }
        f(Run::Ints(&buf), start)?;
        start = end;
    }
    Ok(())
}

fn copy_into<T: numpy::Element + Copy>(
    buf: &mut Vec<u64>,
    array: &Bound<'_, PyArray1<T>>,
    to_u64: impl Fn(T) -> u64,
) -> PyResult<()> {
    let view = array.try_readonly()?;
    let view = view.as_array();
    match view.as_slice() {
        Some(s) => buf.extend(s.iter().map(|&v| to_u64(v))),
        None => buf.extend(view.iter().map(|&v| to_u64(v))),
    }
    Ok(())
}

/// The keys of `held` (objects of one chunk, the first at `offset` in the
/// batch) as runs of one kind.
fn object_runs(
    held: &[Bound<'_, PyAny>],
    offset: usize,
    f: &mut impl FnMut(Run<'_>, usize) -> PyResult<()>,
) -> PyResult<()> {
    let keys: Vec<Key<'_>> = held.iter().map(keys::extract).collect::<PyResult<_>>()?;
    let mut ints = Vec::new();
    let mut bytes = Vec::new();
    let mut start = 0;
    while start < keys.len() {
        let is_int = matches!(keys[start], Key::Int(_));
        let end = keys[start..]
            .iter()
            .position(|k| matches!(k, Key::Int(_)) != is_int)
            .map_or(keys.len(), |n| start + n);
        if is_int {
            ints.clear();
            ints.extend(keys[start..end].iter().map(|k| match k.as_ref() {
                KeyRef::Int(v) => v,
                KeyRef::Bytes(_) => unreachable!("a run holds one kind"),
            }));
            f(Run::Ints(&ints), offset + start)?;
        } else {
            bytes.clear();
            bytes.extend(keys[start..end].iter().map(|k| match k.as_ref() {
                KeyRef::Bytes(b) => b,
                KeyRef::Int(_) => unreachable!("a run holds one kind"),
            }));
            f(Run::Bytes(&bytes), offset + start)?;
        }
        start = end;
    }
    Ok(())
}

/// Whether numpy is imported: if not, no argument can be an array (and
/// numpy's C API, whose absence would panic in `numpy`, is not touched).
fn numpy_loaded(py: Python<'_>) -> PyResult<bool> {
    py.import("sys")?.getattr("modules")?.contains("numpy")
}

/// Runs `op` on every run of the batch without the GIL; the answer is a
/// numpy bool array (of the input array's shape) of what `op` wrote.
fn masked<'py>(
    py: Python<'py>,
    keys: &Bound<'py, PyAny>,
    op: impl Fn(Run<'_>, &mut [bool]) -> Result<(), Refusal> + Sync,
) -> PyResult<Bound<'py, PyAny>> {
    // The answer is a numpy array: import numpy (an ImportError, not a
    // panic, if it is missing).
    py.import("numpy")?;
    let source = Source::of(keys)?;
    let mut out = Vec::new();
    source.for_each_run(|run, offset| {
        out.resize(offset + run.len(), false);
        let out = &mut out[offset..];
        py.detach(|| op(run, out))
            .map_err(|(i, e)| errors::batch(e, offset + i))
    })?;
    // `from_vec` hands the vector to numpy: no copy.
    let mask = PyArray1::from_vec(py, out).into_any();
    match source.shape() {
        Some(shape) => mask.call_method1("reshape", (shape,)),
        None => Ok(mask),
    }
}

/// Looks every key up.
pub(crate) fn contains_many<'py, F: Filter + Sync>(
    py: Python<'py>,
    filter: &F,
    keys: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    masked(py, keys, |run, out| {
        with_run!(run, k => filter.contains_batch(k, out));
        Ok(())
    })
}

/// Adds every key not reported present (set semantics), in order: which
/// were new. On a refusal, the keys before the failing one are in.
pub(crate) fn add_many<'py, F: Counting>(
    py: Python<'py>,
    filter: &F,
    keys: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    masked(
        py,
        keys,
        |run, out| with_run!(run, k => filter.insert_unique_many(k, out)),
    )
}

/// A windowed filter's `add_many`: every key is added (or refreshed);
/// which were not live just before.
pub(crate) fn add_many_windowed<'py>(
    py: Python<'py>,
    filter: &WindowedCuckooFilter,
    keys: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    masked(py, keys, |run, out| {
        with_run!(run, k => {
            for (i, key) in k.iter().enumerate() {
                out[i] = !filter.contains(key);
                filter.insert(key).map_err(|e| (i, e))?;
            }
            Ok(())
        })
    })
}

/// Adds a copy of every key (multiset semantics), in order; returns how
/// many. On a refusal, the keys before the failing one are in.
pub(crate) fn add_copies_many<F: Counting>(
    py: Python<'_>,
    filter: &F,
    keys: &Bound<'_, PyAny>,
) -> PyResult<usize> {
    let source = Source::of(keys)?;
    let mut added = 0;
    source.for_each_run(|run, offset| {
        py.detach(|| with_run!(run, k => filter.insert_batch(k)))
            .map_err(|e| errors::batch(*e.error(), offset + e.inserted()))?;
        added = offset + run.len();
        Ok(())
    })?;
    Ok(added)
}
