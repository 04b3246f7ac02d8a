//! The methods every class shares, written once: `pyfilter!` makes a
//! class's whole `#[pymethods]` block (PyO3 takes one block per class)
//! from the shared methods and the class's own.
//!
//! * `pyfilter!(frozen Class { own methods })`: lookups, sizes, `repr`;
//! * `pyfilter!(live Class { own methods })`: those, plus `add`,
//!   `add_many`, `to_bytes`/`from_bytes`, `save`/`load` and pickling;
//! * `pyfilter!(counting Class { own methods })`: those, plus
//!   `add_unique`, `count` and `clear`.
//!
//! The class is a `#[pyclass(frozen)]` struct whose `inner` field is the
//! library's filter: every method takes `&self`, as the library's do, so
//! threads share one object with no borrow checks.

macro_rules! pyfilter {
    (counting $class:ident { $($own:tt)* }) => {
        $crate::methods::pyfilter!(live $class {
            /// Adds `key` unless the filter reports it present (set
            /// semantics: a false positive also skips it). Returns whether
            /// it was added.
            fn add_unique(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
                let key = $crate::keys::extract(key)?;
                $crate::keys::with_key!(key.as_ref(), k => $crate::backend::Counting::insert_unique(&self.inner, k))
                    .map_err(|e| $crate::errors::insert(e, 0))
            }

            /// How many copies of `key`'s fingerprint the filter holds.
            fn count(&self, key: &Bound<'_, PyAny>) -> PyResult<usize> {
                let key = $crate::keys::extract(key)?;
                Ok($crate::keys::with_key!(key.as_ref(), k => $crate::backend::Counting::count(&self.inner, k)))
            }

            /// Removes every key.
            fn clear(&self, py: Python<'_>) {
                py.detach(|| $crate::backend::Counting::clear(&self.inner));
            }

            $($own)*
        });
    };
    (live $class:ident { $($own:tt)* }) => {
        $crate::methods::pyfilter!(@reads $class {
            /// Adds `key` (str, bytes, bytearray, memoryview or int).
            /// Raises `FilterFull` when no place can be made for it, or
            /// `TooManyDuplicates` when it was added too many times; the
            /// filter is then as it was.
            fn add(&self, key: &Bound<'_, PyAny>) -> PyResult<()> {
                let key = $crate::keys::extract(key)?;
                $crate::keys::with_key!(key.as_ref(), k => $crate::backend::Live::insert(&self.inner, k))
                    .map_err(|e| $crate::errors::insert(e, 0))
            }

            /// Adds every key of `keys` (a numpy uint64/int64 array, a
            /// sequence or any iterable of keys) in order, without the GIL;
            /// returns how many. On `FilterFull`/`TooManyDuplicates` the
            /// keys before the failing one are in: the exception's `added`.
            fn add_many(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<usize> {
                $crate::batch::add_many(py, &self.inner, keys)
            }

            /// The filter in the library's binary format (what `save` writes,
            /// what `ccf`, C and Rust read).
            fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
                let bytes = py.detach(|| $crate::backend::Live::to_bytes(&self.inner));
                pyo3::types::PyBytes::new(py, &bytes)
            }

            /// A filter from `to_bytes`'s output (bytes, bytearray or
            /// memoryview). Raises `InvalidFilterData` (a `ValueError`) for
            /// bytes that are no such filter.
            #[staticmethod]
            fn from_bytes(data: &Bound<'_, PyAny>) -> PyResult<Self> {
                let Some(key) = $crate::keys::bytes_like(data)? else {
                    return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                        "from_bytes takes bytes, bytearray or memoryview, not {}",
                        $crate::keys::type_name(data)
                    )));
                };
                let $crate::keys::KeyRef::Bytes(bytes) = key.as_ref() else {
                    unreachable!("bytes_like gives bytes")
                };
                let inner = data
                    .py()
                    .detach(|| $crate::backend::Live::from_bytes(bytes))
                    .map_err($crate::errors::decode)?;
                Ok(Self { inner })
            }

            /// Writes the filter to `path` crash-safely (a temporary file
            /// beside it, synced, renamed over it): a reader sees the old
            /// file or the new one, never a part.
            fn save(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
                py.detach(|| $crate::backend::Live::write_to_path(&self.inner, &path))
                    .map_err(PyErr::from)
            }

            /// The filter saved at `path` (by `save`, Rust, C or `ccf`).
            #[staticmethod]
            fn load(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
                let inner = py
                    .detach(|| {
                        let bytes = std::fs::read(&path)
                            .map_err(concurrent_cuckoo::DecodeError::Io)?;
                        $crate::backend::Live::from_bytes(&bytes)
                    })
                    .map_err($crate::errors::decode)?;
                Ok(Self { inner })
            }

            /// Pickling: through `to_bytes` and `from_bytes`.
            fn __reduce__<'py>(
                &self,
                py: Python<'py>,
            ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, pyo3::types::PyBytes>,))> {
                let from_bytes = py.get_type::<Self>().getattr("from_bytes")?;
                Ok((from_bytes, (self.to_bytes(py),)))
            }

            $($own)*
        });
    };
    (frozen $class:ident { $($own:tt)* }) => {
        $crate::methods::pyfilter!(@reads $class { $($own)* });
    };
    (@reads $class:ident { $($own:tt)* }) => {
        #[pymethods]
        impl $class {
            /// `key in filter`: true for every added key, and for other
            /// keys with probability at most `false_positive_bound`.
            fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
                let key = $crate::keys::extract(key)?;
                Ok($crate::keys::with_key!(key.as_ref(), k => concurrent_cuckoo::Filter::contains(&self.inner, k)))
            }

            /// `key in filter` for every key of `keys` (a numpy uint64/int64
            /// array, a sequence or any iterable of keys), without the GIL:
            /// a numpy bool array in the same order.
            fn contains_many<'py>(
                &self,
                py: Python<'py>,
                keys: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, numpy::PyArray1<bool>>> {
                $crate::batch::contains_many(py, &self.inner, keys)
            }

            /// The number of keys held (a key added twice counts twice).
            fn __len__(&self) -> usize {
                concurrent_cuckoo::Filter::len(&self.inner)
            }

            /// The number of keys the filter holds at most (a growing
            /// filter: before it grows).
            #[getter]
            fn capacity(&self) -> usize {
                $crate::backend::Shape::capacity(&self.inner)
            }

            /// Bytes of memory the filter's tables take.
            #[getter]
            fn memory_usage(&self) -> usize {
                concurrent_cuckoo::Filter::memory_usage(&self.inner)
            }

            /// An upper bound on the probability that a key never added is
            /// reported present.
            #[getter]
            fn false_positive_bound(&self) -> f64 {
                concurrent_cuckoo::Filter::false_positive_bound(&self.inner)
            }

            fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
                let this = slf.get();
                Ok(format!(
                    "{}(len={}, capacity={}, false_positive_bound={:.3e})",
                    slf.get_type().name()?,
                    concurrent_cuckoo::Filter::len(&this.inner),
                    $crate::backend::Shape::capacity(&this.inner),
                    concurrent_cuckoo::Filter::false_positive_bound(&this.inner),
                ))
            }

            $($own)*
        }
    };
}
pub(crate) use pyfilter;
