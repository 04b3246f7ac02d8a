//! The default key hasher against the same hasher calling `xxhash-rust`
//! for its short inputs, hashing alone and inside `contains`.
//!
//! ```text
//! cargo bench --bench hashing                        # everything, ~3 min
//! cargo bench --bench hashing -- contains/           # criterion's filter syntax
//! CUCKOO_BENCH_SWAP=1 cargo bench --bench hashing    # the same, `library` timed first
//! ```
//!
//! Two hashers, both XXH3-64 over the same canonical bytes and with the
//! same state (up to 16 bytes in a `u128`, 17 to 128 bytes in an inline
//! buffer, longer input streamed), differing only in `finish()` for input
//! of up to 16 bytes:
//! * `shipped`: [`DefaultHashBuilder`], whose `finish()` runs its own
//!   transcription of XXH3's 0-16 byte path on the `u128`, and
//!   `xxh3_64_with_seed` on the buffer for 17-128 bytes;
//! * `library`: a copy of it here (`mod library`) whose `finish()` passes
//!   the 0-16 bytes too to `xxhash_rust::xxh3::xxh3_64_with_seed`, as a
//!   slice of the `u128`'s little-endian bytes.
//!
//! This is the comparison that decided, per input range, between a
//! transcription and the library (issue 14; the figures and the decision
//! are in `src/hashing.rs`, "Speed"). The 17-128 byte path was transcribed
//! too until it measured no faster than the library; now the two hashers
//! run the same code for the 40- and 64-byte keys, whose rows show the
//! noise of a run. `scripts/bench-hashing.sh` runs this bench several
//! times, alternating the order, and summarises it.
//!
//! They must give the same hash (asserted before anything is timed), so
//! the filters built with them hold identical tables and do identical work
//! apart from hashing. Keys: a `u64`, a 13-byte 5-tuple, an 11-byte `str`
//! (12 canonical bytes with std's `0xFF` terminator), a struct of five
//! `u64`s (40 bytes) and a 64-byte `[u8]` (72 bytes with std's length
//! prefix; the compiler does not know its length, like the `str`'s).
//! Groups:
//! * `hash/<key>`: `hash_one` of one key;
//! * `contains/<key>`: `contains` on a filter of about 1 MiB (16-bit
//!   fingerprints, 90% load), one lookup per iteration, cycling through
//!   4096 queries of which half are present.
//!
//! Times are the benchmark thread's **CPU time** on Linux
//! (`CLOCK_THREAD_CPUTIME_ID`), wall clock elsewhere: the development
//! machine is shared, and CPU time does not count the slices another
//! process holds the core. Criterion runs a group's functions in the order
//! they are registered; `CUCKOO_BENCH_SWAP=1` swaps it, so two runs with
//! and without it show whether order matters.

use concurrent_cuckoo::{CuckooFilter, DefaultHashBuilder};
use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion};
use std::borrow::Borrow;
use std::hash::{BuildHasher, Hash};
use std::hint::black_box;

/// `DefaultHashBuilder`'s hasher, copied verbatim apart from `finish()`,
/// which calls `xxh3_64_with_seed` for 0-16 bytes too, instead of the
/// transcribed short path.
mod library {
    use core::hash::{BuildHasher, Hasher};
    use core::mem::MaybeUninit;
    use xxhash_rust::xxh3::{xxh3_64_with_seed, Xxh3};

    const INLINE_BYTES: usize = 128;
    const SMALL_BYTES: usize = 16;
    const SPILLED: usize = INLINE_BYTES + 1;

    #[derive(Clone)]
    pub struct Build(pub u64);

    impl BuildHasher for Build {
        type Hasher = LibraryHasher;
        #[inline]
        fn build_hasher(&self) -> LibraryHasher {
            LibraryHasher {
                seed: self.0,
                len: 0,
                small: 0,
                buf: [MaybeUninit::uninit(); INLINE_BYTES],
                stream: None,
            }
        }
    }

    pub struct LibraryHasher {
        seed: u64,
        len: usize,
        small: u128,
        buf: [MaybeUninit<u8>; INLINE_BYTES],
        stream: Option<Xxh3>,
    }

    impl LibraryHasher {
        #[inline(always)]
        fn push(&mut self, value: u128, n: usize) {
            let len = self.len;
            if len + n <= SMALL_BYTES {
                self.small |= value.wrapping_shl(8 * len as u32);
                self.len = len + n;
            } else {
                self.push_slow(&value.to_le_bytes()[..n], self.small);
            }
        }

        #[inline]
        fn push_slow(&mut self, bytes: &[u8], small: u128) {
            let len = self.len;
            let end = len + bytes.len();
            if end <= INLINE_BYTES {
                if len <= SMALL_BYTES {
                    // SAFETY: 16 bytes at the start of `buf`; alignment 1.
                    unsafe {
                        self.buf
                            .as_mut_ptr()
                            .cast::<[u8; SMALL_BYTES]>()
                            .write(small.to_le_bytes());
                    }
                }
                // SAFETY: `buf[len..end]` is in bounds and disjoint from `bytes`.
                unsafe { copy_short(bytes, self.buf.as_mut_ptr().add(len).cast::<u8>()) };
                self.len = end;
            } else {
                self.spill(bytes);
            }
        }

        #[inline(never)]
        fn write_long(&mut self, bytes: &[u8], small: u128) {
            self.push_slow(bytes, small);
        }

        #[inline(always)]
        fn buffered(&self) -> &[u8] {
            let len = self.len;
            assert!(len > SMALL_BYTES && len <= INLINE_BYTES);
            // SAFETY: `buf[..len]` is initialised in this state.
            unsafe { core::slice::from_raw_parts(self.buf.as_ptr().cast::<u8>(), len) }
        }

        #[cold]
        #[inline(never)]
        fn spill(&mut self, bytes: &[u8]) {
            if self.stream.is_none() {
                let mut stream = Xxh3::with_seed(self.seed);
                if self.len <= SMALL_BYTES {
                    stream.update(&self.small.to_le_bytes()[..self.len]);
                } else {
                    stream.update(self.buffered());
                }
                self.stream = Some(stream);
                self.len = SPILLED;
            }
            if let Some(stream) = &mut self.stream {
                stream.update(bytes);
            }
        }

        #[cold]
        #[inline(never)]
        fn digest_spilled(&self) -> u64 {
            match &self.stream {
                Some(stream) => stream.digest(),
                None => unreachable!(),
            }
        }
    }

    #[inline(always)]
    fn load_le(src: &[u8]) -> u128 {
        let n = src.len();
        let p = src.as_ptr();
        // SAFETY (all arms): every read is inside `src`.
        unsafe {
            if n >= 8 {
                let head = u64::from_le(p.cast::<u64>().read_unaligned());
                let tail = u64::from_le(p.add(n - 8).cast::<u64>().read_unaligned());
                u128::from(head) | (u128::from(tail) << (8 * (n - 8)))
            } else if n >= 4 {
                let head = u32::from_le(p.cast::<u32>().read_unaligned());
                let tail = u32::from_le(p.add(n - 4).cast::<u32>().read_unaligned());
                u128::from(u64::from(head) | (u64::from(tail) << (8 * (n - 4))))
            } else if n > 0 {
                let first = u32::from(*p);
                let middle = u32::from(*p.add(n / 2));
                let last = u32::from(*p.add(n - 1));
                u128::from(first | (middle << (8 * (n / 2))) | (last << (8 * (n - 1))))
            } else {
                0
            }
        }
    }

    /// # Safety
    /// `dst` must be valid for writes of `src.len()` bytes and not overlap `src`.
    #[inline(always)]
    unsafe fn copy_short(src: &[u8], dst: *mut u8) {
        let n = src.len();
        let s = src.as_ptr();
        // SAFETY (all arms): reads inside `src`, writes inside `dst[..n]`.
        unsafe {
            if n > 16 {
                let mut i = 0;
                while i + 16 < n {
                    let chunk = s.add(i).cast::<[u8; 16]>().read_unaligned();
                    dst.add(i).cast::<[u8; 16]>().write_unaligned(chunk);
                    i += 16;
                }
                let last = s.add(n - 16).cast::<[u8; 16]>().read_unaligned();
                dst.add(n - 16).cast::<[u8; 16]>().write_unaligned(last);
            } else if n >= 8 {
                let head = s.cast::<u64>().read_unaligned();
                let tail = s.add(n - 8).cast::<u64>().read_unaligned();
                dst.cast::<u64>().write_unaligned(head);
                dst.add(n - 8).cast::<u64>().write_unaligned(tail);
            } else if n >= 4 {
                let head = s.cast::<u32>().read_unaligned();
                let tail = s.add(n - 4).cast::<u32>().read_unaligned();
                dst.cast::<u32>().write_unaligned(head);
                dst.add(n - 4).cast::<u32>().write_unaligned(tail);
            } else if n > 0 {
                *dst = *s;
                *dst.add(n / 2) = *s.add(n / 2);
                *dst.add(n - 1) = *s.add(n - 1);
            }
        }
    }

    impl Hasher for LibraryHasher {
        #[inline(always)]
        fn write(&mut self, bytes: &[u8]) {
            if self.len + bytes.len() <= SMALL_BYTES {
                self.push(load_le(bytes), bytes.len());
            } else {
                self.write_long(bytes, self.small);
            }
        }

        /// The one difference from `PortableHasher::finish`: its first arm.
        #[inline(always)]
        fn finish(&self) -> u64 {
            if self.len <= SMALL_BYTES {
                xxh3_64_with_seed(&self.small.to_le_bytes()[..self.len], self.seed)
            } else if self.len <= INLINE_BYTES {
                xxh3_64_with_seed(self.buffered(), self.seed)
            } else {
                self.digest_spilled()
            }
        }

        #[inline]
        fn write_u8(&mut self, i: u8) {
            self.push(u128::from(i), 1);
        }
        #[inline]
        fn write_u16(&mut self, i: u16) {
            self.push(u128::from(i), 2);
        }
        #[inline]
        fn write_u32(&mut self, i: u32) {
            self.push(u128::from(i), 4);
        }
        #[inline]
        fn write_u64(&mut self, i: u64) {
            self.push(u128::from(i), 8);
        }
        #[inline]
        fn write_u128(&mut self, i: u128) {
            self.push(i, 16);
        }
        #[inline]
        fn write_usize(&mut self, i: usize) {
            self.write_u64(i as u64);
        }
        #[inline]
        fn write_i8(&mut self, i: i8) {
            self.write_u8(i as u8);
        }
        #[inline]
        fn write_i16(&mut self, i: i16) {
            self.write_u16(i as u16);
        }
        #[inline]
        fn write_i32(&mut self, i: i32) {
            self.write_u32(i as u32);
        }
        #[inline]
        fn write_i64(&mut self, i: i64) {
            self.write_u64(i as u64);
        }
        #[inline]
        fn write_i128(&mut self, i: i128) {
            self.write_u128(i as u128);
        }
        #[inline]
        fn write_isize(&mut self, i: isize) {
            self.write_u64(i as i64 as u64);
        }
    }
}

/// The benchmark thread's CPU time (Linux), else the wall clock, in ns.
struct CpuTime;

impl CpuTime {
    #[cfg(target_os = "linux")]
    fn now() -> u64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }

    #[cfg(not(target_os = "linux"))]
    fn now() -> u64 {
        use std::sync::OnceLock;
        use std::time::Instant;
        static START: OnceLock<Instant> = OnceLock::new();
        START.get_or_init(Instant::now).elapsed().as_nanos() as u64
    }
}

impl Measurement for CpuTime {
    type Intermediate = u64;
    type Value = u64;

    fn start(&self) -> u64 {
        Self::now()
    }
    fn end(&self, start: u64) -> u64 {
        Self::now() - start
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, value: &u64) -> f64 {
        *value as f64
    }
    /// Nanoseconds, shown like criterion's wall-clock times.
    fn formatter(&self) -> &dyn ValueFormatter {
        WallTime.formatter()
    }
}

type C = Criterion<CpuTime>;

/// A router's flow key: 13 canonical bytes in 5 `write_*` calls.
#[derive(Hash)]
struct FlowKey {
    src: u32,
    dst: u32,
    src_port: u16,
    dst_port: u16,
    proto: u8,
}

/// A 40-byte key: five `write_u64` calls. (A `[u64; 5]` field would be
/// hashed as its length, 8 bytes, then one 40-byte `write`.)
#[derive(Hash)]
struct Key40 {
    a: u64,
    b: u64,
    c: u64,
    d: u64,
    e: u64,
}

const SEED: u64 = 0x5EED_CAFE_F00D_D00D;

/// A bijection on `u64` (murmur3's finaliser after a golden-ratio step).
fn mix(i: u64) -> u64 {
    let mut z = i
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(0x1234_5678_9ABC_DEF1);
    z = (z ^ (z >> 33)).wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    z = (z ^ (z >> 33)).wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    z ^ (z >> 33)
}

/// The key kinds: distinct for distinct `i`, built from `i` alone.
trait BenchKey: Hash {
    type Owned: Borrow<Self>;
    const NAME: &'static str;
    fn make(i: u64) -> Self::Owned;
}

impl BenchKey for u64 {
    type Owned = u64;
    const NAME: &'static str = "u64";
    fn make(i: u64) -> u64 {
        mix(i)
    }
}

impl BenchKey for FlowKey {
    type Owned = FlowKey;
    const NAME: &'static str = "flow13";
    fn make(i: u64) -> FlowKey {
        let m = mix(i);
        FlowKey {
            src: i as u32,
            dst: m as u32,
            src_port: (m >> 32) as u16,
            dst_port: (m >> 48) as u16,
            proto: (i >> 32) as u8 | 6,
        }
    }
}

impl BenchKey for str {
    type Owned = String;
    const NAME: &'static str = "str11";
    /// 11 hex digits of a bijection on 44 bits.
    fn make(i: u64) -> String {
        let s = format!(
            "{:011x}",
            i.wrapping_mul(0x9E37_79B9_7F4B) & ((1 << 44) - 1)
        );
        debug_assert_eq!(s.len(), 11);
        s
    }
}

impl BenchKey for Key40 {
    type Owned = Key40;
    const NAME: &'static str = "key40";
    fn make(i: u64) -> Key40 {
        Key40 {
            a: i,
            b: mix(i),
            c: mix(i ^ 1),
            d: mix(i ^ 2),
            e: mix(i ^ 3),
        }
    }
}

impl BenchKey for [u8] {
    type Owned = Vec<u8>;
    const NAME: &'static str = "bytes64";
    /// 64 bytes: `i`, then seven words mixed from it.
    fn make(i: u64) -> Vec<u8> {
        let mut v = i.to_le_bytes().to_vec();
        for j in 1..8 {
            v.extend_from_slice(&mix(i ^ (j << 56)).to_le_bytes());
        }
        v
    }
}

/// Both hashers are XXH3-64 of their input at every length 0..=300, fed
/// in one `write` or byte by byte (through `small`, `buf` and the stream).
fn check_every_length() {
    use std::hash::Hasher;
    let data: Vec<u8> = (0..300u32).map(|i| (i * 31 + 7) as u8).collect();
    let (shipped, library) = (DefaultHashBuilder::with_seed(SEED), library::Build(SEED));
    for len in 0..=data.len() {
        let bytes = &data[..len];
        let want = xxhash_rust::xxh3::xxh3_64_with_seed(bytes, SEED);
        let (mut s1, mut l1) = (shipped.build_hasher(), library.build_hasher());
        s1.write(bytes);
        l1.write(bytes);
        let (mut s2, mut l2) = (shipped.build_hasher(), library.build_hasher());
        for &b in bytes {
            s2.write_u8(b);
            l2.write_u8(b);
        }
        let got = [
            (s1.finish(), "shipped, one write"),
            (l1.finish(), "library, one write"),
            (s2.finish(), "shipped, bytewise"),
            (l2.finish(), "library, bytewise"),
        ];
        for (h, how) in got {
            assert_eq!(h, want, "{how}, len {len}");
        }
    }
}

fn swapped() -> bool {
    std::env::var("CUCKOO_BENCH_SWAP").is_ok_and(|v| v == "1")
}

fn hash_case<K: BenchKey + ?Sized>(c: &mut C) {
    let (shipped, library) = (DefaultHashBuilder::with_seed(SEED), library::Build(SEED));
    let owned = K::make(12_345);
    let key: &K = owned.borrow();
    assert_eq!(shipped.hash_one(key), library.hash_one(key), "{}", K::NAME);
    let mut g = c.benchmark_group(format!("hash/{}", K::NAME));
    let order = if swapped() {
        ["library", "shipped"]
    } else {
        ["shipped", "library"]
    };
    for name in order {
        match name {
            "shipped" => g.bench_function(name, |b| b.iter(|| shipped.hash_one(black_box(key)))),
            _ => g.bench_function(name, |b| b.iter(|| library.hash_one(black_box(key)))),
        };
    }
    g.finish();
}

/// Items in a table of about 1 MiB at 90% load (16-bit fingerprints).
const ITEMS: u64 = (1 << 20) / 2 * 9 / 10;
const QUERIES: usize = 4096;

fn filled<S: BuildHasher, K: BenchKey + ?Sized>(hasher: S) -> CuckooFilter<S> {
    let filter = CuckooFilter::builder()
        .capacity(ITEMS as usize)
        .hasher(hasher)
        .build()
        .expect("build filter");
    for i in 0..ITEMS {
        let k = K::make(i);
        filter.insert::<K>(k.borrow()).expect("fill below capacity");
    }
    filter
}

fn contains_case<K: BenchKey + ?Sized>(c: &mut C) {
    let shipped = filled::<_, K>(DefaultHashBuilder::with_seed(SEED));
    let library = filled::<_, K>(library::Build(SEED));
    // Half present (keys `0..ITEMS`), half absent, in random order.
    let queries: Vec<K::Owned> = (0..QUERIES as u64)
        .map(|q| {
            let r = mix(q ^ 0xABCD);
            if r & 1 == 0 {
                K::make(r % ITEMS)
            } else {
                K::make(ITEMS + (r >> 20))
            }
        })
        .collect();
    let mut hits = 0;
    for q in &queries {
        let q: &K = q.borrow();
        assert_eq!(shipped.hasher().hash_one(q), library.hasher().hash_one(q));
        let found = shipped.contains(q);
        assert_eq!(found, library.contains(q), "{}", K::NAME);
        hits += usize::from(found);
    }
    eprintln!(
        "[contains/{}] {:.2} MiB, load {:.3}, {hits} of {QUERIES} queries found",
        K::NAME,
        shipped.memory_usage() as f64 / (1 << 20) as f64,
        shipped.load_factor()
    );
    let mut g = c.benchmark_group(format!("contains/{}", K::NAME));
    if swapped() {
        time_contains::<_, K>(&mut g, "library", &library, &queries);
        time_contains::<_, K>(&mut g, "shipped", &shipped, &queries);
    } else {
        time_contains::<_, K>(&mut g, "shipped", &shipped, &queries);
        time_contains::<_, K>(&mut g, "library", &library, &queries);
    }
    g.finish();
}

/// One `contains` per iteration, cycling through `queries`.
fn time_contains<S: BuildHasher, K: BenchKey + ?Sized>(
    g: &mut BenchmarkGroup<'_, CpuTime>,
    name: &str,
    filter: &CuckooFilter<S>,
    queries: &[K::Owned],
) {
    let mut i = 0;
    g.bench_function(name, |b| {
        b.iter(|| {
            i = (i + 1) % QUERIES;
            filter.contains::<K>(queries[i].borrow())
        })
    });
}

fn hashing(c: &mut C) {
    check_every_length();
    hash_case::<u64>(c);
    hash_case::<FlowKey>(c);
    hash_case::<str>(c);
    hash_case::<Key40>(c);
    hash_case::<[u8]>(c);
    contains_case::<u64>(c);
    contains_case::<FlowKey>(c);
    contains_case::<str>(c);
    contains_case::<Key40>(c);
    contains_case::<[u8]>(c);
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(CpuTime);
    targets = hashing
}
criterion_main!(benches);
