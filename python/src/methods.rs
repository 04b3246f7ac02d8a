//! The methods every class shares, written once: `pyfilter!` makes a
//! class's whole `#[pymethods]` block (PyO3 takes one block per class)
//! from the shared methods and the class's own.
//!
//! * `pyfilter!(frozen Class { own methods })`: lookups, sizes, `repr`;
//! * `pyfilter!(live Class { own methods })`: those, plus
//!   `to_bytes`/`from_bytes`, `save`/`load` and pickling;
//! * `pyfilter!(counting Class { own methods })`: those, plus the set
//!   `add`/`add_many`, the multiset `add_copy`/`add_copies_many`, `count`
//!   and `clear` (the windowed class has its own `add`/`add_many`).
//!
//! The class is a `#[pyclass(frozen)]` struct whose `inner` field is the
//! library's filter: every method takes `&self`, as the library's do, so
//! threads share one object with no borrow checks.

macro_rules! pyfilter {
    (counting $class:ident { $($own:tt)* }) => {
        $crate::methods::pyfilter!(live $class {
            /// Adds `key` (str, bytes, bytearray, memoryview or int) unless
            /// the filter reports it present: set semantics, so a key seen
            /// again (or a false positive of a key present) stores nothing.
            /// Returns whether it was new. Raises `FilterFull` when no
            /// place can be made for a new key; the filter is then as it
            /// was.
            fn add(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
                let key = $crate::keys::extract(key)?;
                let hash = $crate::hashes::hash(&self.inner, key.as_ref());
                $crate::backend::Counting::insert_unique_hash(&self.inner, hash)
                    .map_err(|e| $crate::errors::insert(e, 0))
            }

            /// `add` of every key of `keys` (a numpy array of integers,
            /// bools, bytes or str, a pandas Series, a list, tuple or any
            /// iterable of keys), in order, without the GIL: a numpy bool
            /// array, `True` where the key was new. On `FilterFull` the
            /// keys before the failing one are in: the exception's `added`.
            fn add_many<'py>(
                &self,
                py: Python<'py>,
                keys: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, PyAny>> {
                $crate::batch::add_many(py, &self.inner, keys)
            }

            /// Adds a copy of `key` even if it is present (multiset
            /// semantics: `count` rises, and each copy takes one `remove`).
            /// Raises `FilterFull`, or `TooManyDuplicates` when the key's
            /// two buckets hold no room for another copy; the filter is
            /// then as it was.
            fn add_copy(&self, key: &Bound<'_, PyAny>) -> PyResult<()> {
                let key = $crate::keys::extract(key)?;
                $crate::keys::with_key!(key.as_ref(), k => $crate::backend::Counting::insert(&self.inner, k))
                    .map_err(|e| $crate::errors::insert(e, 0))
            }

            /// `add_copy` of every key of `keys` (as `add_many` takes
            /// them), in order, without the GIL; returns how many. On
            /// `FilterFull`/`TooManyDuplicates` the keys before the
            /// failing one are in: the exception's `added`.
            fn add_copies_many(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<usize> {
                $crate::batch::add_copies_many(py, &self.inner, keys)
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
                    .map_err(|e| $crate::errors::decode(e, $crate::errors::Source::Bytes))?;
                Ok(Self { inner })
            }

            /// Writes the filter to `path` crash-safely (a temporary file
            /// beside it, synced, renamed over it): a reader sees the old
            /// file or the new one, never a part.
            fn save(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
                py.detach(|| $crate::backend::Live::write_to_path(&self.inner, &path))
                    .map_err(|e| $crate::errors::os(&e, &path))
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
                    .map_err(|e| $crate::errors::decode(e, $crate::errors::Source::File(&path)))?;
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
                let hash = $crate::hashes::hash(&self.inner, key.as_ref());
                Ok(concurrent_cuckoo::Filter::contains_hash(&self.inner, hash))
            }

            /// `key in filter` for every key of `keys` (a numpy array of
            /// integers, bools, bytes or str, a pandas Series, a list, tuple
            /// or any iterable of keys), without the GIL between chunks: a
            /// numpy bool array of the same order (and an array's shape).
            fn contains_many<'py>(
                &self,
                py: Python<'py>,
                keys: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, PyAny>> {
                $crate::batch::contains_many(py, &self.inner, keys)
            }

            /// The number of keys held (each copy `add_copy` stored counts).
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
