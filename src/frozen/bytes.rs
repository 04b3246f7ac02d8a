//! [`FrozenBytes`]: a saved filter's bytes read into memory, on 2 MiB
//! pages where the system gives them; [`MappedFile`]: a saved filter's
//! file mapped read-only.

use crate::error::DecodeError;
use crate::persist::ReadOptions;
use crate::storage::Region;
use core::fmt;
use std::io::Read;
use std::path::Path;

/// The bytes of a file read into memory by [`FrozenFilter::load`]: one
/// 64-byte-aligned buffer that this value owns. On Linux a buffer of 4 MiB
/// or more is a private mapping aligned to 2 MiB and advised to use 2 MiB
/// pages, as a live filter's table is, so lookups through a loaded frozen
/// filter pay no TLB miss that a live filter's would not.
///
/// Unlike a mapped file ([`FrozenFilter::open`]), the bytes are a private
/// copy: nothing another process does to the file afterwards changes them.
///
/// [`FrozenFilter::load`]: crate::FrozenFilter::load
/// [`FrozenFilter::open`]: crate::FrozenFilter::open
pub struct FrozenBytes {
    region: Region,
    len: usize,
}

impl FrozenBytes {
    /// Reads the whole file at `path`, no longer than the options' limit,
    /// into memory from their table memory.
    pub(crate) fn read_file(path: &Path, options: ReadOptions) -> Result<Self, DecodeError> {
        let mut file = std::fs::File::open(path).map_err(DecodeError::Io)?;
        let len = file.metadata().map_err(DecodeError::Io)?.len();
        if let Some(limit) = options.limit.filter(|&limit| len > limit) {
            return Err(DecodeError::ExceedsLimit {
                claimed: len,
                limit,
            });
        }
        let len = usize::try_from(len).map_err(|_| {
            DecodeError::InvalidHeader("the file is too large for this platform's address space")
        })?;
        // A region holds at least one byte; an empty file decodes to an
        // error either way.
        let region = Region::zeroed(len.max(1), options.table_memory)
            .map_err(DecodeError::AllocationFailed)?;
        // SAFETY: the region holds `len.max(1)` zeroed (initialised) bytes
        // that no one else can reach yet: this is the only reference until
        // `Self` is built, and it ends before.
        let buffer = unsafe { core::slice::from_raw_parts_mut(region.as_ptr(), len) };
        file.read_exact(buffer).map_err(|e| match e.kind() {
            // Shorter than its length said a moment ago: cut short under us.
            std::io::ErrorKind::UnexpectedEof => DecodeError::Truncated,
            _ => DecodeError::Io(e),
        })?;
        Ok(Self { region, len })
    }
}

// SAFETY: the buffer is owned memory written only while it is built
// (`read_file`) and read-only afterwards, so it may be sent and shared
// like a `Box<[u8]>`.
unsafe impl Send for FrozenBytes {}
// SAFETY: as above: `&FrozenBytes` only ever reads.
unsafe impl Sync for FrozenBytes {}

impl core::ops::Deref for FrozenBytes {
    type Target = [u8];
    #[inline(always)]
    fn deref(&self) -> &[u8] {
        // SAFETY: the region holds at least `len` initialised bytes, owned
        // by `self` and never written after `read_file` returned.
        unsafe { core::slice::from_raw_parts(self.region.as_ptr(), self.len) }
    }
}

impl AsRef<[u8]> for FrozenBytes {
    #[inline(always)]
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl fmt::Debug for FrozenBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FrozenBytes")
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

/// A file mapped read-only, whose bytes a [`FrozenFilter`](crate::FrozenFilter)
/// opened with [`FrozenFilter::open`](crate::FrozenFilter::open) answers
/// from in place (shared with every process that maps the same file).
/// The mapping library is an implementation detail: this type is what the
/// API names.
pub struct MappedFile {
    map: memmap2::Mmap,
}

impl MappedFile {
    /// Maps `file` read-only, advised for 2 MiB pages and read-ahead on
    /// Linux.
    ///
    /// # Safety
    /// As [`FrozenFilter::open`](crate::FrozenFilter::open): nobody
    /// truncates or writes the file while the mapping lives.
    pub(crate) unsafe fn map(file: &std::fs::File) -> Result<Self, DecodeError> {
        // SAFETY: read-only map, never written through; the caller
        // guarantees no one truncates or rewrites the file while it lives.
        let map = unsafe { memmap2::Mmap::map(file) }.map_err(DecodeError::Io)?;
        #[cfg(target_os = "linux")]
        {
            // Advice only: a kernel or file system that cannot do it says
            // so, and lookups simply take 4 KiB pages.
            let _ = map.advise(memmap2::Advice::HugePage);
            let _ = map.advise(memmap2::Advice::WillNeed);
        }
        Ok(Self { map })
    }
}

impl core::ops::Deref for MappedFile {
    type Target = [u8];
    #[inline(always)]
    fn deref(&self) -> &[u8] {
        &self.map
    }
}

impl AsRef<[u8]> for MappedFile {
    #[inline(always)]
    fn as_ref(&self) -> &[u8] {
        &self.map
    }
}

impl fmt::Debug for MappedFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MappedFile")
            .field("len", &self.map.len())
            .finish()
    }
}
