//! [`AdmittedBuf`]: a byte buffer of a size fixed when it is made, for
//! the bytes whose size untrusted input names (a window filter's restore
//! from `CF.LOADCHUNK`, `RESTORE` or an RDB, and the copy of its encoding a
//! `CF.SCANDUMP` hands out).
//!
//! A `Vec<u8>` gets its block from the module's allocator's plain path,
//! Redis's `RedisModule_Alloc`, which aborts the server when the block
//! cannot be had (`try_reserve` cannot catch that: the abort happens
//! inside the allocator), and which no limit checks. This buffer's block
//! is instead asked for as a table's is: zeroed and aligned to the
//! library's cache line (`alloc::TABLE_ALIGN`), which the module's
//! allocator admits against `cuckoo.cf-max-memory-usage` and `maxmemory`
//! (`admission.rs`, in the caller's scope) and then takes with
//! `RedisModule_TryCalloc` (or `TryAlloc`): refused or unavailable, it is
//! `None`, never an abort. (Zeroed blocks of that size come as fresh
//! pages, so nothing is written twice.)

use core::ptr::NonNull;
use std::alloc::Layout;

/// The alignment that routes a block through the module's table path
/// (`alloc::TABLE_ALIGN`).
const ALIGN: usize = 64;

/// A buffer of at most `capacity` bytes, made fallibly and admitted.
pub(crate) struct AdmittedBuf {
    /// The block (dangling for a capacity of 0).
    ptr: NonNull<u8>,
    capacity: usize,
    len: usize,
}

// SAFETY: the buffer owns its block outright (no aliasing, no thread
// affinity): moving it to another thread moves that ownership.
unsafe impl Send for AdmittedBuf {}

impl AdmittedBuf {
    /// An empty buffer of `capacity` bytes: `None` where the limits or the
    /// allocator refuse the block.
    pub(crate) fn try_new(capacity: usize) -> Option<Self> {
        if capacity == 0 {
            return Some(Self {
                ptr: NonNull::dangling(),
                capacity,
                len: 0,
            });
        }
        let layout = Layout::from_size_align(capacity, ALIGN).ok()?;
        // SAFETY: a layout of non-zero size.
        let block = unsafe { std::alloc::alloc_zeroed(layout) };
        Some(Self {
            ptr: NonNull::new(block)?,
            capacity,
            len: 0,
        })
    }

    /// A copy (`None` as [`try_new`](Self::try_new)).
    pub(crate) fn try_clone(&self) -> Option<Self> {
        let mut copy = Self::try_new(self.capacity)?;
        copy.extend_from_slice(self.as_slice()).then_some(copy)
    }

    /// Appends `bytes`; `false`, appending nothing, where they do not fit.
    pub(crate) fn extend_from_slice(&mut self, bytes: &[u8]) -> bool {
        if bytes.len() > self.capacity - self.len {
            return false;
        }
        // SAFETY: `len + bytes.len() <= capacity`: the bytes land inside
        // the block, which `bytes` (a shared borrow) cannot overlap while
        // `self` is borrowed mutably.
        unsafe {
            self.ptr
                .as_ptr()
                .add(self.len)
                .copy_from_nonoverlapping(bytes.as_ptr(), bytes.len());
        }
        self.len += bytes.len();
        true
    }

    /// The bytes appended so far.
    pub(crate) fn as_slice(&self) -> &[u8] {
        // SAFETY: the first `len` bytes of the block are initialised (the
        // block is zeroed, and written up to `len`); for a capacity of 0
        // the pointer is dangling and the length 0.
        unsafe { core::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Bytes the block holds (its capacity).
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }
}

impl std::io::Write for AdmittedBuf {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if self.extend_from_slice(bytes) {
            Ok(bytes.len())
        } else {
            Err(std::io::ErrorKind::WriteZero.into())
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for AdmittedBuf {
    fn drop(&mut self) {
        if self.capacity == 0 {
            return;
        }
        // SAFETY: the block was allocated in `try_new` with this layout
        // (valid then, so valid now).
        unsafe {
            let layout = Layout::from_size_align_unchecked(self.capacity, ALIGN);
            std::alloc::dealloc(self.ptr.as_ptr(), layout);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn bytes_fit_up_to_the_capacity_and_no_further() {
        let mut b = AdmittedBuf::try_new(10).unwrap();
        assert!(b.extend_from_slice(b"hello"));
        assert!(!b.extend_from_slice(b"world!"), "11 bytes do not fit");
        assert_eq!(b.as_slice(), b"hello");
        b.write_all(b"world").unwrap();
        assert!(b.write_all(b"!").is_err());
        assert_eq!(
            (b.as_slice(), b.len(), b.capacity()),
            (&b"helloworld"[..], 10, 10)
        );
        let copy = b.try_clone().unwrap();
        assert_eq!(copy.as_slice(), b.as_slice());
        let empty = AdmittedBuf::try_new(0).unwrap();
        assert!(empty.as_slice().is_empty() && empty.try_clone().is_some());
        // A size no allocator gives: `None`, not an abort.
        assert!(AdmittedBuf::try_new(usize::MAX - 63).is_none());
    }
}
