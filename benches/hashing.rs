//! Micro-benchmark of the default key hasher on short and long keys.
//!
//! ```text
//! cargo bench --bench hashing -- --warm-up-time 1 --measurement-time 3
//! ```
//!
//! Each case hashes one key with [`DefaultHashBuilder`] (`new`) and with
//! `old`: a verbatim copy of the hasher as it was before the short-input
//! work (XXH3 one-shot over a buffer filled byte by byte), kept here so
//! the two are compared in the same run on the same (noisy) machine. Both
//! must give the same hash; the bench asserts it before timing.

use concurrent_cuckoo::DefaultHashBuilder;
use criterion::{criterion_group, criterion_main, Criterion};
use std::hash::{BuildHasher, Hash};
use std::hint::black_box;

/// The previous `PortableHasher`, unchanged (minus docs).
mod old {
    use core::hash::{BuildHasher, Hasher};
    use core::mem::MaybeUninit;
    use xxhash_rust::xxh3::{xxh3_64_with_seed, Xxh3};

    const INLINE_BYTES: usize = 128;
    const SPILLED: usize = INLINE_BYTES + 1;

    pub struct Builder(pub u64);

    impl BuildHasher for Builder {
        type Hasher = OldHasher;
        #[inline]
        fn build_hasher(&self) -> OldHasher {
            OldHasher {
                seed: self.0,
                len: 0,
                buf: [MaybeUninit::uninit(); INLINE_BYTES],
                stream: None,
            }
        }
    }

    pub struct OldHasher {
        seed: u64,
        len: usize,
        buf: [MaybeUninit<u8>; INLINE_BYTES],
        stream: Option<Xxh3>,
    }

    impl OldHasher {
        #[inline(always)]
        fn buffered(&self) -> &[u8] {
            let len = self.len.min(INLINE_BYTES);
            // SAFETY: as in the original: `buf[..len]` is initialised.
            unsafe { core::slice::from_raw_parts(self.buf.as_ptr().cast::<u8>(), len) }
        }

        #[cold]
        #[inline(never)]
        fn spill(&mut self, bytes: &[u8]) {
            if self.stream.is_none() {
                let mut stream = Xxh3::with_seed(self.seed);
                stream.update(self.buffered());
                self.stream = Some(stream);
                self.len = SPILLED;
            }
            if let Some(stream) = &mut self.stream {
                stream.update(bytes);
            }
        }
    }

    impl Hasher for OldHasher {
        #[inline]
        fn write(&mut self, bytes: &[u8]) {
            let end = self.len + bytes.len();
            if end <= INLINE_BYTES {
                for (dst, &src) in self.buf[self.len..end].iter_mut().zip(bytes) {
                    dst.write(src);
                }
                self.len = end;
            } else {
                self.spill(bytes);
            }
        }

        #[inline]
        fn finish(&self) -> u64 {
            match &self.stream {
                None if self.len == 8 => xxh3_64_with_seed(&self.buffered()[..8], self.seed),
                None => xxh3_64_with_seed(self.buffered(), self.seed),
                Some(stream) => stream.digest(),
            }
        }

        #[inline]
        fn write_u8(&mut self, i: u8) {
            self.write(&[i]);
        }
        #[inline]
        fn write_u16(&mut self, i: u16) {
            self.write(&i.to_le_bytes());
        }
        #[inline]
        fn write_u32(&mut self, i: u32) {
            self.write(&i.to_le_bytes());
        }
        #[inline]
        fn write_u64(&mut self, i: u64) {
            self.write(&i.to_le_bytes());
        }
        #[inline]
        fn write_u128(&mut self, i: u128) {
            self.write(&i.to_le_bytes());
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

/// A router's flow key: 13 canonical bytes in 5 `write_*` calls.
#[derive(Hash)]
struct FlowKey {
    src: u32,
    dst: u32,
    src_port: u16,
    dst_port: u16,
    proto: u8,
}

const SEED: u64 = 0x5EED_CAFE_F00D_D00D;

fn case<K: Hash + ?Sized>(c: &mut Criterion, name: &str, key: &K) {
    let new = DefaultHashBuilder::with_seed(SEED);
    let old = old::Builder(SEED);
    assert_eq!(
        new.hash_one(key),
        old.hash_one(key),
        "{name}: outputs differ"
    );
    let mut g = c.benchmark_group(format!("hash/{name}"));
    g.bench_function("new", |b| b.iter(|| new.hash_one(black_box(key))));
    g.bench_function("old", |b| b.iter(|| old.hash_one(black_box(key))));
    g.finish();
}

fn hashing(c: &mut Criterion) {
    case(c, "u64", &0x0123_4567_89AB_CDEFu64);
    let flow = FlowKey {
        src: 0x0A00_0001,
        dst: 0xC0A8_0101,
        src_port: 49_152,
        dst_port: 443,
        proto: 6,
    };
    case(c, "flow5", &flow);
    case(c, "str11", "example.com");
    let bytes: Vec<u8> = (0..1024u32).map(|i| (i * 31 + 7) as u8).collect();
    case(c, "slice64", &bytes[..64]);
    case(c, "slice1k", &bytes[..]);
}

criterion_group!(benches, hashing);
criterion_main!(benches);
