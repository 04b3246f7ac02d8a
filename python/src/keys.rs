//! A Python object as a key, hashed exactly as Rust, C and `ccf` hash it.
//!
//! * `bytes`, `bytearray`, `memoryview`: the library's `&[u8]` key, as the
//!   C API and `ccf` hash an item's bytes;
//! * `str`: its UTF-8 encoding as that `&[u8]` key (not Rust's `&str`,
//!   whose `Hash` differs), so `"a"` and `b"a"` are one key;
//! * `int` (and `bool`, an `int`, as Python's own sets treat it: `True` is
//!   `1`; and any object with `__index__`, such as numpy's integers): the
//!   library's `u64` key; a negative int in `[-2**63, 0)` is the `i64` key,
//!   which the library's hasher hashes as its 64-bit pattern, the `u64`
//!   `v + 2**64`. Ints outside `[-2**63, 2**64)` raise `OverflowError`;
//! * anything else (`float`, `None`, a list...): `TypeError`.

use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyInt, PyMemoryView, PyString};

/// An extracted key, borrowing from the object it came from (a `str`'s
/// cached UTF-8, a `bytes` object's buffer: both immutable and alive as
/// long as the borrowed object is), or a copy of a mutable buffer.
pub(crate) enum Key<'a> {
    Int(u64),
    /// The bytes of an immutable object (`bytes`, or a `str`'s UTF-8).
    Borrowed(&'a [u8]),
    /// A copy of a mutable buffer (`bytearray`, `memoryview`), taken under
    /// the GIL.
    Owned(Vec<u8>),
}

/// A key as the library takes it.
#[derive(Clone, Copy)]
pub(crate) enum KeyRef<'a> {
    Int(u64),
    Bytes(&'a [u8]),
}

impl Key<'_> {
    pub(crate) fn as_ref(&self) -> KeyRef<'_> {
        match self {
            Key::Int(v) => KeyRef::Int(*v),
            Key::Borrowed(b) => KeyRef::Bytes(b),
            Key::Owned(v) => KeyRef::Bytes(v),
        }
    }
}

/// Calls a generic library method with the key as its Rust type:
/// `with_key!(key_ref, k => filter.contains(k))`, `k` being `&u64` or
/// `&[u8]`.
macro_rules! with_key {
    ($key:expr, $k:ident => $body:expr) => {
        match $key {
            $crate::keys::KeyRef::Int(v) => {
                let $k = &v;
                $body
            }
            $crate::keys::KeyRef::Bytes(b) => {
                let $k: &[u8] = b;
                $body
            }
        }
    };
}
pub(crate) use with_key;

/// `obj` as a key (see the module's documentation).
///
/// A `str` is read through `PyUnicode_AsUTF8AndSize` (in the limited API
/// from Python 3.10): its UTF-8 form, which CPython keeps with the string
/// (for an ASCII string, its own characters), so no `bytes` object is
/// made per key.
///
/// An exact `str` or `int` (the common keys) is recognised by comparing
/// its type pointer: no call into the interpreter to test type flags.
pub(crate) fn extract<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<Key<'a>> {
    if obj.is_exact_instance_of::<PyString>() {
        // SAFETY: the object's type is exactly `str` (checked above).
        let s = unsafe { obj.cast_unchecked::<PyString>() };
        return Ok(Key::Borrowed(s.to_str()?.as_bytes()));
    }
    if obj.is_exact_instance_of::<PyInt>() || obj.is_instance_of::<PyInt>() {
        return int(obj).map(Key::Int);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Key::Borrowed(s.to_str()?.as_bytes()));
    }
    if let Some(bytes) = bytes_like(obj)? {
        return Ok(bytes);
    }
    match int(obj) {
        Ok(v) => Ok(Key::Int(v)),
        Err(e) if e.is_instance_of::<PyTypeError>(obj.py()) => Err(PyTypeError::new_err(format!(
            "a key is a str, bytes, bytearray, memoryview or int, not {}",
            type_name(obj)
        ))),
        Err(e) => Err(e),
    }
}

/// `bytes`, `bytearray` or `memoryview` as a key's bytes; `None` for
/// other types.
pub(crate) fn bytes_like<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<Option<Key<'a>>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Some(Key::Borrowed(b.as_bytes())));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(Some(Key::Owned(b.to_vec())));
    }
    if obj.is_instance_of::<PyMemoryView>() {
        // `tobytes()`: a copy under the GIL (the buffer may be mutable).
        let copy = obj.call_method0("tobytes")?.cast_into::<PyBytes>()?;
        return Ok(Some(Key::Owned(copy.as_bytes().to_vec())));
    }
    Ok(None)
}

/// An int (or an object with `__index__`) as the library's `u64` key.
///
/// `PyLong_AsLongLongAndOverflow` first: it reads an int's digits in a
/// loop, where `PyLong_AsUnsignedLongLong` goes through a byte array for
/// every int above 2**30 (a sixth of a per-key `in` loop's time). Only
/// ints above `i64::MAX` take the unsigned conversion.
pub(crate) fn int(obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    let mut overflow: std::os::raw::c_int = 0;
    // SAFETY: `obj` is a live object borrowed for the call and the GIL is
    // held (a `Bound` is proof of it); `overflow` is a valid out-pointer.
    // The call accepts any object (it calls `__index__` on non-ints) and
    // reports an error as -1 with an exception set, taken below.
    let v = unsafe { pyo3::ffi::PyLong_AsLongLongAndOverflow(obj.as_ptr(), &mut overflow) };
    match overflow {
        0 if v == -1 => match PyErr::take(obj.py()) {
            Some(e) => Err(e),
            None => Ok(v as u64),
        },
        // The i64 key: the library's hasher feeds `write_i64` as
        // `write_u64` of the same bits (python/tests: test_keys.py), so a
        // negative int is the u64 of its 64-bit pattern.
        0 => Ok(v as u64),
        // Above i64::MAX: an int, or a numpy uint64 through `__index__`.
        1 => index(obj)?.extract::<u64>().map_err(|_| out_of_range()),
        _ => Err(out_of_range()),
    }
}

/// `obj` as a Python int: itself, or its `__index__` (numpy integers).
pub(crate) fn index<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if obj.is_instance_of::<PyInt>() {
        Ok(obj.clone())
    } else {
        obj.call_method0("__index__")
    }
}

fn out_of_range() -> PyErr {
    PyOverflowError::new_err("an int key lies in [-2**63, 2**64) (the library's 64-bit keys)")
}

/// The name of `obj`'s type, for messages.
pub(crate) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "this type".into())
}
