//! Zeroed arrays (a table's buckets, its lock stripes, its version words):
//! each one zeroed, cache-line-aligned allocation, made fallibly; and
//! prefetching.
//!
//! Large tables (4 MiB and up) on Linux are mapped directly with `mmap`,
//! aligned to 2 MiB and marked `MADV_HUGEPAGE`: a lookup out of cache pays a
//! TLB miss as well as a cache miss, and 2 MiB pages cut that cost (on the
//! development machine, random line fetches ran about 1.5x faster). The
//! mapping is zero-filled lazily by the kernel, so creating a 1 GiB filter
//! does not touch 1 GiB of memory up front. Smaller tables use the global
//! allocator with 64-byte alignment.

/// Alignment of the bucket array: one cache line.
#[cfg_attr(concurrent_cuckoo_loom, allow(dead_code))]
pub(crate) const CACHE_LINE: usize = 64;

pub(crate) use crate::error::AllocationError;

#[cfg(not(concurrent_cuckoo_loom))]
pub(crate) use raw::{Region, ZeroedArray};

/// Marker for types whose all-zero bit pattern is a valid value, the one a
/// new table starts with (an empty bucket, an unlocked lock stripe with
/// zero counts, a version word's first version): a table's arrays come
/// straight from zeroed memory ([`ZeroedArray`]), allocated fallibly and
/// in one piece, never built element by element.
///
/// # Safety
/// Implementors must be valid when every byte is zero, zero must be the
/// value they start with, and they must not need dropping.
#[cfg(not(concurrent_cuckoo_loom))]
pub(crate) unsafe trait ZeroInit {}

// SAFETY: `CachePadded<T>` is `T` aligned and padded (a `repr(align)`
// struct of one field): zero bytes are a zero `T`, valid by `T`'s own
// contract, with padding bytes that may hold anything; it has no drop glue
// beyond `T`'s, which has none.
#[cfg(not(concurrent_cuckoo_loom))]
unsafe impl<T: ZeroInit> ZeroInit for crossbeam_utils::CachePadded<T> {}

/// Where a filter's tables get their memory: an option of each filter
/// (the builders' `table_memory`, [`ReadOptions::table_memory`] and
/// [`ChunkDecoder::table_memory`](crate::ChunkDecoder::table_memory) for
/// decoded ones), kept by the filter for every table it makes later (a
/// growing filter's new levels, compaction, copies).
///
/// ```
/// use concurrent_cuckoo::{CuckooFilter, TableMemory};
/// let filter = CuckooFilter::builder()
///     .capacity(4_000_000) // ~9 MiB, from the global allocator
///     .table_memory(TableMemory::GlobalAllocator)
///     .build()?;
/// assert_eq!(filter.table_memory(), TableMemory::GlobalAllocator);
/// # Ok::<(), concurrent_cuckoo::BuildError>(())
/// ```
///
/// [`ReadOptions::table_memory`]: crate::ReadOptions::table_memory
#[derive(Clone, Copy, Default)]
#[non_exhaustive]
pub enum TableMemory {
    /// The default: on Linux, tables of 4 MiB and more are private
    /// anonymous mappings of their own, aligned to 2 MiB and advised to use
    /// 2 MiB pages (lookups out of cache pay fewer TLB misses), zeroed
    /// lazily by the kernel, and given back to the system when a growing
    /// filter retires a level; smaller tables come from the global
    /// allocator.
    #[default]
    Mapped,
    /// Every table from the global allocator (`alloc_zeroed`), whatever
    /// its size: for a host that must account for every byte through its
    /// allocator, such as a Redis module (whose allocator reports to
    /// Redis's `used_memory`, which `maxmemory` acts on). A table is four
    /// such zeroed blocks, each aligned to the cache line or more and
    /// allocated fallibly (a null is an error): its lock stripes, its
    /// version words, a line of shared state, then its buckets; a host may refuse any of them to
    /// keep a limit. No 2 MiB pages
    /// unless the allocator provides them, and a retired level keeps its
    /// memory until the filter is dropped.
    GlobalAllocator,
    /// Every table from a host's allocator: memory the host places itself
    /// (a dataplane's `rte_malloc_socket` on the right NUMA socket, huge
    /// pages it reserved). As [`GlobalAllocator`](Self::GlobalAllocator)
    /// otherwise: four zeroed blocks a table, each asked for with its
    /// size and alignment (the cache line or more), a null refusing it.
    /// The allocator must outlive every table it gave.
    ///
    /// ```
    /// use concurrent_cuckoo::{CuckooFilter, TableAllocator, TableHost, TableMemory};
    /// use std::alloc::Layout;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    ///
    /// /// The global allocator, counting the bytes it holds for tables.
    /// struct Counting(AtomicUsize);
    /// // SAFETY: blocks come from `alloc_zeroed` with the layout asked for,
    /// // and go back to `dealloc` with it.
    /// unsafe impl TableAllocator for Counting {
    ///     fn allocate_zeroed(&self, layout: Layout) -> *mut u8 {
    ///         self.0.fetch_add(layout.size(), Ordering::Relaxed);
    ///         // SAFETY: tables ask for non-zero sizes.
    ///         unsafe { std::alloc::alloc_zeroed(layout) }
    ///     }
    ///     unsafe fn deallocate(&self, block: *mut u8, layout: Layout) {
    ///         self.0.fetch_sub(layout.size(), Ordering::Relaxed);
    ///         // SAFETY: `block` came from `allocate_zeroed` with `layout`.
    ///         unsafe { std::alloc::dealloc(block, layout) }
    ///     }
    /// }
    ///
    /// static TABLES: Counting = Counting(AtomicUsize::new(0));
    /// static HOST: TableHost = TableHost::new(&TABLES);
    /// let filter = CuckooFilter::builder()
    ///     .capacity(1_000_000)
    ///     .table_memory(TableMemory::Allocator(&HOST))
    ///     .build()?;
    /// assert!(TABLES.0.load(Ordering::Relaxed) >= 2 << 20);
    /// drop(filter);
    /// assert_eq!(TABLES.0.load(Ordering::Relaxed), 0);
    /// # Ok::<(), concurrent_cuckoo::BuildError>(())
    /// ```
    Allocator(&'static TableHost),
}

/// A host's allocator as a table's memory option names it
/// ([`TableMemory::Allocator`]): a `static` (or leaked) value, so that the
/// option and each table keep one thin pointer to it, not a trait object
/// (a table's bookkeeping stays as small as with the other options).
pub struct TableHost {
    allocator: &'static dyn TableAllocator,
}

impl TableHost {
    /// The host allocator `allocator`.
    #[must_use]
    pub const fn new(allocator: &'static dyn TableAllocator) -> Self {
        Self { allocator }
    }

    /// Its allocator.
    #[must_use]
    pub fn allocator(&self) -> &'static dyn TableAllocator {
        self.allocator
    }
}

/// A host's allocator for tables ([`TableMemory::Allocator`]).
///
/// # Safety
/// `allocate_zeroed` returns null or a block of `layout.size()` bytes, all
/// zero, aligned to `layout.align()`, that nothing else uses until it is
/// passed to `deallocate` with the same layout. Both may be called from
/// any thread (the filter is `Send` and `Sync`).
pub unsafe trait TableAllocator: Sync {
    /// A zeroed block for `layout` (non-zero size), or null.
    fn allocate_zeroed(&self, layout: core::alloc::Layout) -> *mut u8;

    /// Gives back a block.
    ///
    /// # Safety
    /// `block` came from this allocator's `allocate_zeroed` with `layout`
    /// and is given back once.
    unsafe fn deallocate(&self, block: *mut u8, layout: core::alloc::Layout);
}

impl TableMemory {
    /// The allocator's address, for comparing and hashing.
    fn key(&self) -> (u8, *const ()) {
        match self {
            Self::Mapped => (0, core::ptr::null()),
            Self::GlobalAllocator => (1, core::ptr::null()),
            Self::Allocator(host) => (2, (*host as *const TableHost).cast()),
        }
    }
}

impl core::fmt::Debug for TableMemory {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Mapped => f.write_str("Mapped"),
            Self::GlobalAllocator => f.write_str("GlobalAllocator"),
            Self::Allocator(_) => write!(f, "Allocator({:p})", self.key().1),
        }
    }
}

/// Equal when the same variant, and for allocators the same one.
impl PartialEq for TableMemory {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for TableMemory {}

impl core::hash::Hash for TableMemory {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

#[cfg(not(concurrent_cuckoo_loom))]
mod raw {
    use super::{AllocationError, TableHost, TableMemory, ZeroInit, CACHE_LINE};
    use core::alloc::Layout;
    use core::marker::PhantomData;
    use core::ptr::NonNull;

    /// The reference a host's block keeps after the region's bytes.
    type HostRef = &'static TableHost;

    /// Regions at least this large are mapped with 2 MiB pages where possible.
    #[cfg(target_os = "linux")]
    const HUGE_PAGE_THRESHOLD: usize = 4 << 20;
    #[cfg(target_os = "linux")]
    const HUGE_PAGE: usize = 2 << 20;

    /// The system's page size: 4 KiB on most x86-64 kernels, 16 or 64 KiB
    /// on many aarch64 servers and routers. A mapping's trimmed ends must
    /// be whole pages, or `munmap` fails and the address space leaks.
    #[cfg(target_os = "linux")]
    pub(super) fn page_size() -> usize {
        use core::sync::atomic::{AtomicUsize, Ordering::Relaxed};
        static PAGE: AtomicUsize = AtomicUsize::new(0);
        let known = PAGE.load(Relaxed);
        if known != 0 {
            return known;
        }
        // SAFETY: `sysconf` has no preconditions; it returns -1 on error.
        let asked = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        let page = usize::try_from(asked)
            .ok()
            .filter(|p| p.is_power_of_two())
            .unwrap_or(4096);
        PAGE.store(page, Relaxed);
        page
    }

    /// `(mapped, total)` for a region of `bytes` bytes on pages of `page`
    /// bytes: the region's length rounded up to whole pages, and what to
    /// map so that a 2 MiB-aligned range of that length fits inside
    /// (`None` on overflow). Every length is a multiple of `page` as long
    /// as `page` divides 2 MiB (every Linux page size does).
    #[cfg(target_os = "linux")]
    pub(super) fn mapping_sizes(bytes: usize, page: usize) -> Option<(usize, usize)> {
        let mapped = bytes.checked_next_multiple_of(page)?;
        let total = mapped.checked_add(HUGE_PAGE.max(page))?;
        // No Rust object may span more than `isize::MAX` bytes (the heap
        // path's `Layout` enforces it); on 32-bit targets `mmap` can hand
        // out 3 GiB, so the mapped path must refuse it itself.
        (total <= isize::MAX as usize).then_some((mapped, total))
    }

    /// Where the 2 MiB-aligned region of `mapped` bytes starts inside a
    /// mapping of `total` bytes at `base`, and the lengths of the unused
    /// head and tail to unmap.
    #[cfg(target_os = "linux")]
    pub(super) fn trim(base: usize, mapped: usize, total: usize) -> (usize, usize, usize) {
        let aligned = base.next_multiple_of(HUGE_PAGE);
        let head = aligned - base;
        (aligned, head, total - head - mapped)
    }

    /// Zeroed, cache-line-aligned memory that this value owns: the storage
    /// of a bucket array, or of a saved filter read into memory
    /// (`FrozenBytes`). Regions of 4 MiB and more on Linux are a private
    /// anonymous mapping aligned to 2 MiB and advised to use huge pages
    /// (zero-filled lazily by the kernel); smaller ones come from the
    /// global allocator. It hands out only a raw pointer: the types built
    /// on it decide how the bytes are shared.
    pub(crate) struct Region {
        ptr: NonNull<u8>,
        backing: Backing,
    }

    enum Backing {
        Heap(Layout),
        /// A block of a host's allocator, for this layout: the region's
        /// bytes, then the allocator's reference ([`HostRef`]), which
        /// `Drop` reads back (a region stays as small as a heap one).
        Host(Layout),
        #[cfg(target_os = "linux")]
        Mmap {
            len: usize,
        },
    }

    // SAFETY: a `Region` is plain memory it owns exclusively, with no
    // thread affinity; the types built on it (`ZeroedArray`, `FrozenBytes`)
    // carry the `Send`/`Sync` reasoning for what they store in it.
    unsafe impl Send for Region {}
    // SAFETY: `&Region` only gives out the pointer; every access through
    // it is argued by the type that makes it.
    unsafe impl Sync for Region {}

    impl Region {
        /// `bytes` zeroed bytes (`bytes > 0`), 64-byte aligned, from
        /// `memory`.
        pub(crate) fn zeroed(bytes: usize, memory: TableMemory) -> Result<Self, AllocationError> {
            Self::zeroed_aligned(bytes, CACHE_LINE, memory)
        }

        /// `bytes` zeroed bytes (`bytes > 0`), aligned to `align` (a power
        /// of two, at least [`CACHE_LINE`], at most a page: a mapping is
        /// page-aligned), from `memory`.
        pub(crate) fn zeroed_aligned(
            bytes: usize,
            align: usize,
            memory: TableMemory,
        ) -> Result<Self, AllocationError> {
            assert!(bytes > 0, "a region holds at least one byte");
            assert!(align.is_power_of_two() && (CACHE_LINE..=4096).contains(&align));
            #[cfg(target_os = "linux")]
            if bytes >= HUGE_PAGE_THRESHOLD && memory == TableMemory::Mapped {
                return Self::mmap(bytes);
            }
            // Elsewhere every region comes from the global allocator.
            #[cfg(not(target_os = "linux"))]
            let _ = memory;
            let layout =
                Layout::from_size_align(bytes, align).map_err(|_| AllocationError::new(bytes))?;
            if let TableMemory::Allocator(host) = memory {
                return Self::from_host(bytes, align, host);
            }
            // SAFETY: `layout` has non-zero size (asserted above).
            let raw = unsafe { std::alloc::alloc_zeroed(layout) };
            let ptr = NonNull::new(raw).ok_or(AllocationError::new(bytes))?;
            Ok(Self {
                ptr,
                backing: Backing::Heap(layout),
            })
        }

        /// `bytes` zeroed bytes aligned to `align` from `host`, in a block
        /// that also holds, after them, the reference to `host` that gives
        /// it back.
        fn from_host(
            bytes: usize,
            align: usize,
            host: &'static TableHost,
        ) -> Result<Self, AllocationError> {
            let trailer = bytes
                .checked_next_multiple_of(align_of::<HostRef>())
                .ok_or(AllocationError::new(bytes))?;
            let total = trailer
                .checked_add(size_of::<HostRef>())
                .ok_or(AllocationError::new(bytes))?;
            let layout =
                Layout::from_size_align(total, align).map_err(|_| AllocationError::new(bytes))?;
            let ptr = NonNull::new(host.allocator().allocate_zeroed(layout))
                .ok_or(AllocationError::new(bytes))?;
            // SAFETY: the host's block holds `total` bytes (its contract),
            // of which `trailer..total` are this reference's, aligned for it
            // (`trailer` is a multiple of its alignment, and so is the
            // block's start, aligned to 64 or more); nothing else uses them.
            unsafe { ptr.as_ptr().add(trailer).cast::<HostRef>().write(host) };
            Ok(Self {
                ptr,
                backing: Backing::Host(layout),
            })
        }

        #[cfg(target_os = "linux")]
        fn mmap(bytes: usize) -> Result<Self, AllocationError> {
            let (mapped, total) =
                mapping_sizes(bytes, page_size()).ok_or(AllocationError::new(bytes))?;
            // SAFETY: an anonymous private mapping with no address hint has no
            // preconditions; failure is reported as MAP_FAILED.
            let base = unsafe {
                libc::mmap(
                    core::ptr::null_mut(),
                    total,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if base == libc::MAP_FAILED {
                return Err(AllocationError::new(bytes));
            }
            let (aligned, head, tail) = trim(base as usize, mapped, total);
            // SAFETY: both ranges lie inside the mapping just created, are
            // page-aligned (mmap returns page-aligned memory, and `trim`'s
            // offsets are multiples of the system's page size: see
            // `mapping_sizes`) and nothing refers to them.
            unsafe {
                if head > 0 {
                    libc::munmap(base, head);
                }
                if tail > 0 {
                    libc::munmap((aligned + mapped) as *mut libc::c_void, tail);
                }
                // Advice only: if THP is disabled the kernel ignores it.
                libc::madvise(aligned as *mut libc::c_void, mapped, libc::MADV_HUGEPAGE);
            }
            let ptr = NonNull::new(aligned as *mut u8).ok_or(AllocationError::new(bytes))?;
            Ok(Self {
                ptr,
                backing: Backing::Mmap { len: mapped },
            })
        }

        /// The first byte.
        #[inline(always)]
        pub(crate) fn as_ptr(&self) -> *mut u8 {
            self.ptr.as_ptr()
        }

        /// Whether [`discard`](Self::discard) gives the memory back: the
        /// region is a mapping of its own, not heap memory.
        pub(crate) fn is_mapped(&self) -> bool {
            !matches!(self.backing, Backing::Heap(_) | Backing::Host(_))
        }

        /// Offers the region's block to `mover` if it is one of the global
        /// allocator's (`relocate.rs`), and keeps its new address if it
        /// moved; a mapping stays where it is.
        pub(crate) fn relocate(
            &mut self,
            mover: &mut dyn crate::relocate::Relocate,
            tally: &mut crate::relocate::Relocated,
        ) {
            let Backing::Heap(layout) = self.backing else {
                return;
            };
            // SAFETY: a heap region is a block of the global allocator for
            // `layout` (`zeroed`), owned by this region; `&mut self` rules
            // out any reference into it (every one is derived from `&self`).
            if let Some(new) = unsafe { crate::relocate::offer(mover, tally, self.ptr, layout) } {
                // The new block holds the region's bytes, for the same
                // layout: `Drop` frees it with `layout`.
                self.ptr = new;
            }
        }

        /// Returns the region's physical memory to the operating system if
        /// it is a mapping (4 MiB and more on Linux), keeping the address
        /// range: every page reads as zero again and is faulted in fresh if
        /// written. `false` if the memory is kept (heap regions, other
        /// systems).
        ///
        /// The caller guarantees every byte is already zero and stays so
        /// while this runs: then no value any thread can observe changes.
        pub(crate) fn discard(&self) -> bool {
            match self.backing {
                Backing::Heap(_) | Backing::Host(_) => false,
                #[cfg(target_os = "linux")]
                // MADV_DONTNEED replaces the pages by zero-fill pages; the
                // caller guarantees they hold zeros and that no thread writes
                // them meanwhile, so every read sees the same value after.
                // SAFETY: the range is the private anonymous mapping this
                // region owns, and its contents stay as they were (above).
                Backing::Mmap { len } => unsafe {
                    libc::madvise(self.ptr.as_ptr().cast(), len, libc::MADV_DONTNEED) == 0
                },
            }
        }
    }

    impl Drop for Region {
        fn drop(&mut self) {
            match self.backing {
                // SAFETY: allocated in `zeroed` with exactly this layout.
                Backing::Heap(layout) => unsafe { std::alloc::dealloc(self.ptr.as_ptr(), layout) },
                // SAFETY: the host's `allocate_zeroed` gave this block for
                // `layout` (`zeroed_aligned`); it goes back once, here.
                // `from_host` wrote the host's reference in the block's last
                // bytes, which nothing else writes.
                Backing::Host(layout) => unsafe {
                    let trailer = layout.size() - size_of::<HostRef>();
                    let host = self.ptr.as_ptr().add(trailer).cast::<HostRef>().read();
                    host.allocator().deallocate(self.ptr.as_ptr(), layout)
                },
                #[cfg(target_os = "linux")]
                // SAFETY: this range is what `mmap` left mapped for us.
                Backing::Mmap { len } => unsafe {
                    libc::munmap(self.ptr.as_ptr().cast(), len);
                },
            }
        }
    }

    /// A fixed-length array that starts zeroed (every element at its
    /// initial value, see [`ZeroInit`]): a table's buckets (all empty),
    /// lock stripes or version words.
    pub(crate) struct ZeroedArray<B> {
        region: Region,
        len: usize,
        _owns: PhantomData<B>,
    }

    // SAFETY: the array owns its buckets exclusively; sending it moves
    // ownership of `B`s, which are `Send`.
    unsafe impl<B: Send> Send for ZeroedArray<B> {}
    // SAFETY: shared access only hands out `&[B]`, sound when `B: Sync`
    // (bucket types are atomics).
    unsafe impl<B: Sync> Sync for ZeroedArray<B> {}

    impl<B: ZeroInit> ZeroedArray<B> {
        /// `len` (`> 0`) zeroed elements, in one allocation from `memory`
        /// sized first (an error, not a panic, when it cannot be had).
        pub(crate) fn zeroed(len: usize, memory: TableMemory) -> Result<Self, AllocationError> {
            let bytes = len
                .checked_mul(core::mem::size_of::<B>())
                .ok_or(AllocationError::new(usize::MAX))?;
            assert!(len > 0 && bytes > 0);
            let align = core::mem::align_of::<B>().max(CACHE_LINE);
            Ok(Self {
                region: Region::zeroed_aligned(bytes, align, memory)?,
                len,
                _owns: PhantomData,
            })
        }

        /// Returns the array's physical memory to the operating system
        /// ([`Region::discard`]). The caller guarantees every bucket is
        /// already empty (zero) and stays so while this runs (an empty
        /// table whose every stripe lock it holds).
        pub(crate) fn discard(&self) -> bool {
            self.region.discard()
        }

        /// Whether [`discard`](Self::discard) gives the array's memory
        /// back (a mapping), or the memory stays held until the array is
        /// dropped (the heap).
        pub(crate) fn is_mapped(&self) -> bool {
            self.region.is_mapped()
        }

        /// [`Region::relocate`] of the array's memory.
        pub(crate) fn relocate(
            &mut self,
            mover: &mut dyn crate::relocate::Relocate,
            tally: &mut crate::relocate::Relocated,
        ) {
            self.region.relocate(mover, tally);
        }
    }

    impl<B> core::ops::Deref for ZeroedArray<B> {
        type Target = [B];
        #[inline(always)]
        fn deref(&self) -> &[B] {
            // SAFETY: the region holds `len` elements' worth of zeroed
            // bytes, aligned for `B` (to `align_of::<B>()` at least, in
            // `zeroed`); `B: ZeroInit` makes zero a valid value; they live
            // as long as `self`, and all later mutation goes through `B`'s
            // atomics.
            unsafe { core::slice::from_raw_parts(self.region.as_ptr().cast::<B>(), self.len) }
        }
    }
}

/// Under loom, buckets, locks and versions are loom types, which must be
/// constructed, so the array is an ordinary boxed slice (whose memory
/// `discard` keeps).
#[cfg(concurrent_cuckoo_loom)]
pub(crate) struct ZeroedArray<B> {
    buckets: Box<[B]>,
}

#[cfg(concurrent_cuckoo_loom)]
impl<B> ZeroedArray<B> {
    pub(crate) fn from_fn(len: usize, f: impl FnMut() -> B) -> Result<Self, AllocationError> {
        Ok(Self {
            buckets: core::iter::repeat_with(f).take(len).collect(),
        })
    }

    pub(crate) fn discard(&self) -> bool {
        false
    }

    pub(crate) fn is_mapped(&self) -> bool {
        false
    }
}

#[cfg(concurrent_cuckoo_loom)]
impl<B> core::ops::Deref for ZeroedArray<B> {
    type Target = [B];
    fn deref(&self) -> &[B] {
        &self.buckets
    }
}

/// Whether [`prefetch_for_write`] may be called: the CPU has `prefetchw`
/// (x86-64 reporting the `PRFCHW` / 3DNow!-prefetch CPUID bit, as AMD's
/// processors and Intel's since Broadwell do). Where it is false
/// [`prefetch_for_write`] is never called and writers use [`prefetch`].
pub(crate) fn write_prefetch_supported() -> bool {
    #[cfg(all(target_arch = "x86_64", not(concurrent_cuckoo_loom)))]
    {
        use core::arch::x86_64::__cpuid;
        // `__cpuid` is a safe function in newer compilers and `unsafe` in
        // the minimum supported one.
        #[allow(unused_unsafe)]
        // SAFETY: `cpuid` exists on every x86-64 processor; leaf
        // 0x8000_0001 is read only if leaf 0x8000_0000 says it exists.
        unsafe {
            __cpuid(0x8000_0000).eax >= 0x8000_0001 && (__cpuid(0x8000_0001).ecx >> 8) & 1 == 1
        }
    }
    #[cfg(not(all(target_arch = "x86_64", not(concurrent_cuckoo_loom))))]
    false
}

/// Starts loading the cache line at `ptr` in exclusive state, for a line
/// this thread is about to write (a stripe lock it will take): where
/// another core wrote the line last, its transfer then overlaps other work
/// instead of being a shared copy that the write must upgrade later
/// (`docs/benchmarks.md`, "Scaling": the two-thread bulk fill). A hint
/// only: it never faults and has no effect on program semantics. Call it
/// only where [`write_prefetch_supported`] said so; elsewhere it is a read
/// prefetch.
#[inline(always)]
pub(crate) fn prefetch_for_write<T>(ptr: *const T) {
    #[cfg(all(target_arch = "x86_64", not(concurrent_cuckoo_loom)))]
    {
        // SAFETY: the caller checked `write_prefetch_supported`, so the CPU
        // has `prefetchw`, a hint that never faults whatever the address
        // and writes no register or flag.
        unsafe {
            core::arch::asm!(
                "prefetchw [{addr}]",
                addr = in(reg) ptr,
                options(nostack, readonly, preserves_flags)
            )
        };
    }
    #[cfg(not(all(target_arch = "x86_64", not(concurrent_cuckoo_loom))))]
    prefetch(ptr)
}

/// Starts loading the cache line at `ptr` into L1 without waiting for it.
/// A hint only: it never faults and has no effect on program semantics.
#[inline(always)]
pub(crate) fn prefetch<T>(ptr: *const T) {
    #[cfg(all(target_arch = "x86_64", not(concurrent_cuckoo_loom)))]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: prefetch is a hint; it does not dereference `ptr` in the
        // language's sense and cannot fault, whatever the address.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(ptr.cast()) };
    }
    #[cfg(all(target_arch = "aarch64", not(concurrent_cuckoo_loom)))]
    {
        // `core::arch::aarch64::_prefetch` is unstable; `prfm` through stable
        // inline assembly is the same instruction.
        // SAFETY: `prfm` is a hint that never faults, reads no register but
        // the address, writes nothing and leaves the flags alone.
        unsafe {
            core::arch::asm!(
                "prfm pldl1keep, [{addr}]",
                addr = in(reg) ptr,
                options(nostack, readonly, preserves_flags)
            )
        };
    }
    #[cfg(any(
        not(any(target_arch = "x86_64", target_arch = "aarch64")),
        concurrent_cuckoo_loom
    ))]
    let _ = ptr;
}

#[cfg(all(test, not(concurrent_cuckoo_loom)))]
mod tests {

    /// The CPUID check agrees with what Linux reports for this CPU (the
    /// `3dnowprefetch` flag is the same CPUID bit), and a write prefetch
    /// of a lock line, where allowed, changes nothing.
    #[test]
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    fn the_write_prefetch_check_matches_the_kernels_cpu_flags() {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap();
        let flags = cpuinfo
            .lines()
            .find(|l| l.starts_with("flags"))
            .expect("a flags line");
        let kernel_says = flags.split_whitespace().any(|f| f == "3dnowprefetch");
        assert_eq!(write_prefetch_supported(), kernel_says);
        let word = core::sync::atomic::AtomicU64::new(7);
        if write_prefetch_supported() {
            prefetch_for_write(&word);
        }
        assert_eq!(word.load(core::sync::atomic::Ordering::Relaxed), 7);
    }
    use super::*;
    // core's atomics, which `crate::sync` re-exports outside loom: storage
    // sits below `sync.rs` (whose lock implements `ZeroInit`), so it does
    // not import it.
    use core::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn small_and_huge_arrays_are_zeroed_and_line_aligned() {
        let memories = [TableMemory::Mapped, TableMemory::GlobalAllocator];
        for (len, memory) in [1usize, 7, 1000, (8 << 20) / 8 + 3]
            .into_iter()
            .flat_map(|len| memories.map(|m| (len, m)))
        {
            let a = ZeroedArray::<AtomicU64>::zeroed(len, memory).unwrap();
            assert_eq!(a.len(), len);
            assert_eq!(a.as_ptr() as usize % CACHE_LINE, 0);
            assert!(a.iter().all(|b| b.load(Ordering::Relaxed) == 0));
            a[len - 1].store(5, Ordering::Relaxed);
            assert_eq!(a[len - 1].load(Ordering::Relaxed), 5);
            prefetch(&a[len / 2]);
        }
    }

    #[test]
    fn discarded_mappings_read_as_zero_and_heap_arrays_are_kept() {
        let big = ZeroedArray::<AtomicU64>::zeroed((8 << 20) / 8, TableMemory::Mapped).unwrap();
        big[12345].store(0, Ordering::Relaxed); // touched, still zero
        assert!(big.discard(), "a mapping returns its pages");
        assert!(big.iter().all(|b| b.load(Ordering::Relaxed) == 0));
        big[7].store(9, Ordering::Relaxed); // faulted in fresh
        assert_eq!(big[7].load(Ordering::Relaxed), 9);
        let small = ZeroedArray::<AtomicU64>::zeroed(16, TableMemory::Mapped).unwrap();
        assert!(!small.discard(), "heap memory is kept");
        // A large array the filter was told to take from the allocator.
        let heap =
            ZeroedArray::<AtomicU64>::zeroed((8 << 20) / 8, TableMemory::GlobalAllocator).unwrap();
        assert!(!heap.is_mapped() && !heap.discard(), "heap memory is kept");
    }

    /// A host's allocator: every block of every size asked of it with its
    /// layout and given back with the same, none kept as a mapping; a
    /// refusal (a null) is an error, not a crash.
    #[test]
    fn a_hosts_allocator_gives_and_takes_back_every_block() {
        use std::sync::Mutex;
        struct Host {
            live: Mutex<Vec<(usize, core::alloc::Layout)>>,
            refuse_from: usize,
        }
        // SAFETY: blocks come from the global allocator's `alloc_zeroed`
        // with the layout asked for, and go back to `dealloc` with it.
        unsafe impl TableAllocator for Host {
            fn allocate_zeroed(&self, layout: core::alloc::Layout) -> *mut u8 {
                if layout.size() >= self.refuse_from {
                    return core::ptr::null_mut();
                }
                // SAFETY: non-zero sizes only (regions hold a byte or more).
                let block = unsafe { std::alloc::alloc_zeroed(layout) };
                self.live.lock().unwrap().push((block as usize, layout));
                block
            }
            unsafe fn deallocate(&self, block: *mut u8, layout: core::alloc::Layout) {
                let mut live = self.live.lock().unwrap();
                let at = live.iter().position(|&b| b == (block as usize, layout));
                live.swap_remove(at.expect("a block this allocator gave, with its layout"));
                // SAFETY: `block` came from `alloc_zeroed` with `layout`.
                unsafe { std::alloc::dealloc(block, layout) }
            }
        }
        let host: &'static Host = Box::leak(Box::new(Host {
            live: Mutex::new(Vec::new()),
            refuse_from: 16 << 20,
        }));
        let named: &'static TableHost = Box::leak(Box::new(TableHost::new(host)));
        let memory = TableMemory::Allocator(named);
        assert_eq!(memory, TableMemory::Allocator(named));
        assert_ne!(memory, TableMemory::GlobalAllocator);
        assert!(format!("{memory:?}").starts_with("Allocator(0x"));
        for len in [1usize, 1000, (8 << 20) / 8 + 3] {
            let a = ZeroedArray::<AtomicU64>::zeroed(len, memory).unwrap();
            assert_eq!(a.as_ptr() as usize % CACHE_LINE, 0);
            assert!(a.iter().all(|b| b.load(Ordering::Relaxed) == 0));
            assert!(!a.is_mapped() && !a.discard());
            assert_eq!(host.live.lock().unwrap().len(), 1);
        }
        assert!(
            host.live.lock().unwrap().is_empty(),
            "every block given back"
        );
        assert!(ZeroedArray::<AtomicU64>::zeroed((32 << 20) / 8, memory).is_err());
        let filter = crate::CuckooFilter::builder()
            .capacity(100_000)
            .table_memory(memory)
            .build()
            .unwrap();
        filter.insert(&1u64).unwrap();
        assert_eq!(filter.table_memory(), memory);
        let blocks = host.live.lock().unwrap().len();
        assert!(
            blocks >= 3,
            "the table's arrays (stripes, versions, buckets): {blocks}"
        );
        drop(filter);
        assert!(host.live.lock().unwrap().is_empty());
    }

    /// A table's mapping, trimmed to a 2 MiB-aligned range, leaves a head
    /// and a tail to unmap that are whole pages of the system's size:
    /// with 4 KiB assumed, a 64 KiB-page kernel (aarch64) refused the
    /// tail's `munmap` and the address space leaked.
    #[cfg(target_os = "linux")]
    #[test]
    fn trimmed_ends_are_whole_pages_of_every_page_size() {
        use super::raw::{mapping_sizes, page_size, trim};
        // SAFETY: `sysconf` has no preconditions.
        let system = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        assert_eq!(page_size(), system);
        for page in [4096usize, 16384, 65536] {
            // Nothing may span more than isize::MAX bytes, mapping included.
            assert_eq!(mapping_sizes(isize::MAX as usize - (1 << 20), page), None);
            assert_eq!(mapping_sizes(usize::MAX - 1, page), None);
            for bytes in [4 << 20, (4 << 20) + 8, 100_000_003, 1 << 30] {
                let (mapped, total) = mapping_sizes(bytes, page).unwrap();
                assert!(mapped >= bytes && mapped % page == 0, "{page} {bytes}");
                // mmap returns page-aligned addresses; these fit 32-bit
                // targets too, with room for the largest mapping.
                for base in [0x4000_0000usize, 0x4000_0000 + page, 0x401f_0000] {
                    let base = base / page * page;
                    let (aligned, head, tail) = trim(base, mapped, total);
                    assert_eq!(aligned % (2 << 20), 0);
                    assert_eq!(head % page, 0, "head of {bytes} on {page}-byte pages");
                    assert_eq!(tail % page, 0, "tail of {bytes} on {page}-byte pages");
                    assert_eq!((aligned + mapped) % page, 0, "the tail starts a page");
                    assert_eq!(head + mapped + tail, total);
                }
            }
        }
    }

    #[test]
    fn absurd_sizes_fail_cleanly() {
        for memory in [TableMemory::Mapped, TableMemory::GlobalAllocator] {
            assert!(ZeroedArray::<AtomicU64>::zeroed(usize::MAX / 4, memory).is_err());
            // Just past isize::MAX bytes: representable, never allocatable
            // (on 32-bit targets `mmap` would have granted it; found under
            // qemu-arm).
            assert!(ZeroedArray::<AtomicU64>::zeroed(isize::MAX as usize / 8 + 1, memory).is_err());
        }
    }
}
