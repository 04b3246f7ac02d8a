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
//! Other keys are hashed as they are read, under the GIL, by the filter's
//! own hasher (`Shape::hash_key`: the hash its keyed calls compute, so
//! answers and stored bytes are those of the keyed calls): a `str`'s UTF-8
//! form and a `bytes` object's buffer are read in place, no copy, no
//! reference kept, and the library takes the chunk's hashes without the
//! GIL (its pipelined `*_hash` batch calls).

use crate::backend::{Counting, Refreshing, Shape};
use crate::errors;
use crate::hashes;
use crate::keys;
use concurrent_cuckoo::InsertError;
use numpy::{PyArray1, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyIterator, PyList, PySlice, PyString, PyTuple};

/// Keys of an integer array copied per trip without the GIL (512 KiB):
/// the copy stays in cache and other threads wait at most a chunk.
const INT_CHUNK: usize = 1 << 16;

/// Objects read per trip: their hashes, 128 KiB, and a few milliseconds
/// of the GIL at most.
const OBJECT_CHUNK: usize = 1 << 14;

/// A chunk of a batch as read under the GIL.
#[derive(Clone, Copy)]
enum Chunk<'a> {
    /// An integer array's keys, to hash without the GIL.
    Ints(&'a [u64]),
    /// Objects' keys, already hashed by the filter's hasher.
    Hashes(&'a [u64]),
}

impl Chunk<'_> {
    fn len(&self) -> usize {
        match self {
            Chunk::Ints(k) | Chunk::Hashes(k) => k.len(),
        }
    }

    /// The chunk's hashes (an integer chunk's hashed into `scratch`).
    /// Called without the GIL.
    fn hashes<'s, F: Shape>(&'s self, filter: &F, scratch: &'s mut Vec<u64>) -> &'s [u64] {
        match *self {
            Chunk::Hashes(h) => h,
            Chunk::Ints(keys) => {
                scratch.clear();
                scratch.extend(keys.iter().map(|k| filter.hash_key(k)));
                scratch
            }
        }
    }
}

/// An insert refused in a chunk: the refused key's index in the chunk,
/// and why.
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

    /// Calls `f(chunk, offset)` on consecutive chunks of the batch,
    /// `offset` being the chunk's first key's place in the batch; objects
    /// are hashed by `filter`'s hasher as they are read.
    fn for_each_chunk<F: Shape>(
        &self,
        filter: &F,
        mut f: impl FnMut(Chunk<'_>, usize) -> PyResult<()>,
    ) -> PyResult<()> {
        match self {
            Source::Ints { flat, len, .. } => int_chunks(flat, *len, f),
            Source::Objects { flat, len, .. } => {
                let py = flat.py();
                let mut hashes = Vec::with_capacity(OBJECT_CHUNK.min(*len));
                let mut start = 0;
                while start < *len {
                    let end = (start + OBJECT_CHUNK).min(*len);
                    let piece = flat.get_item(PySlice::new(py, start as isize, end as isize, 1))?;
                    let items = piece.call_method0("tolist")?;
                    hashes.clear();
                    hash_objects(filter, &mut items.try_iter()?, OBJECT_CHUNK, &mut hashes)?;
                    f(Chunk::Hashes(&hashes), start)?;
                    start = end;
                }
                Ok(())
            }
            Source::Iter(iter) => {
                let mut iter = iter.clone();
                let mut hashes = Vec::with_capacity(OBJECT_CHUNK);
                let mut start = 0;
                loop {
                    hashes.clear();
                    hash_objects(filter, &mut iter, OBJECT_CHUNK, &mut hashes)?;
                    if hashes.is_empty() {
                        return Ok(());
                    }
                    f(Chunk::Hashes(&hashes), start)?;
                    start += hashes.len();
                }
            }
        }
    }
}

/// Up to `limit` keys of `iter`, each hashed by `filter` as it is read
/// (its reference dropped right after), appended to `hashes`.
fn hash_objects<F: Shape>(
    filter: &F,
    iter: &mut Bound<'_, PyIterator>,
    limit: usize,
    hashes: &mut Vec<u64>,
) -> PyResult<()> {
    for obj in iter.take(limit) {
        let obj = obj?;
        let key = keys::extract(&obj)?;
        hashes.push(hashes::hash(filter, key.as_ref()));
    }
    Ok(())
}

/// A flattened integer array's keys, `INT_CHUNK` at a time, copied (and
/// cast to `u64`) under the GIL.
fn int_chunks(
    flat: &Bound<'_, PyAny>,
    len: usize,
    mut f: impl FnMut(Chunk<'_>, usize) -> PyResult<()>,
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
        f(Chunk::Ints(&buf), start)?;
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

/// Whether numpy is imported: if not, no argument can be an array (and
/// numpy's C API, whose absence would panic in `numpy`, is not touched).
fn numpy_loaded(py: Python<'_>) -> PyResult<bool> {
    py.import("sys")?.getattr("modules")?.contains("numpy")
}

/// Runs `op` on every chunk's hashes without the GIL; the answer is a
/// numpy bool array (of the input array's shape) of what `op` wrote.
fn masked<'py, F: Shape>(
    py: Python<'py>,
    filter: &F,
    keys: &Bound<'py, PyAny>,
    op: impl Fn(&[u64], &mut [bool]) -> Result<(), Refusal> + Sync,
) -> PyResult<Bound<'py, PyAny>> {
    // The answer is a numpy array: import numpy (an ImportError, not a
    // panic, if it is missing).
    py.import("numpy")?;
    let source = Source::of(keys)?;
    let mut out = Vec::new();
    let mut scratch = Vec::new();
    source.for_each_chunk(filter, |chunk, offset| {
        out.resize(offset + chunk.len(), false);
        let out = &mut out[offset..];
        let scratch = &mut scratch;
        py.detach(|| op(chunk.hashes(filter, scratch), out))
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
pub(crate) fn contains_many<'py, F: Shape>(
    py: Python<'py>,
    filter: &F,
    keys: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    masked(py, filter, keys, |hashes, out| {
        filter.contains_hash_batch(hashes, out);
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
    masked(py, filter, keys, |hashes, out| {
        filter.insert_unique_hashes(hashes, out)
    })
}

/// A windowed filter's `add_many`: every key is added (or refreshed);
/// which were not live just before.
pub(crate) fn add_many_windowed<'py, F: Refreshing>(
    py: Python<'py>,
    filter: &F,
    keys: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    masked(py, filter, keys, |hashes, out| {
        for (i, &hash) in hashes.iter().enumerate() {
            out[i] = filter.add_hash(hash).map_err(|e| (i, e))?;
        }
        Ok(())
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
    let mut scratch = Vec::new();
    source.for_each_chunk(filter, |chunk, offset| {
        let scratch = &mut scratch;
        py.detach(|| filter.insert_hash_batch(chunk.hashes(filter, scratch)))
            .map_err(|e| errors::batch(*e.error(), offset + e.inserted()))?;
        added = offset + chunk.len();
        Ok(())
    })?;
    Ok(added)
}
