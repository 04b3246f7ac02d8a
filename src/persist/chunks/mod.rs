//! Encodings handed out and taken in, a bounded piece at a time.
//!
//! [`ChunkEncoder`] produces exactly the bytes of `to_bytes` (of a
//! [`CuckooFilter`](crate::CuckooFilter) or a [`ScalableCuckooFilter`](crate::ScalableCuckooFilter)) in pieces of at most a
//! given size, keeping the running checksum between calls; [`ChunkDecoder`]
//! takes such pieces in order, of any sizes, and builds the filter as they
//! arrive, checking exactly what `from_bytes` checks. Each call costs time
//! proportional to its piece, never to the whole filter: what a server
//! that must not stall (a Redis module's `CF.SCANDUMP`/`CF.LOADCHUNK` and
//! its RDB callbacks) needs to move a filter of many GiB.
//!
//! [`ChunkEncoder`] is in `encoder.rs`, [`ChunkDecoder`] in `decoder.rs`.

mod decoder;
mod encoder;

pub use decoder::{ChunkDecoder, DecodedFilter};
pub use encoder::ChunkEncoder;
