//! Saved filter files opened for reading: a fixed filter as a frozen view
//! (mapped, or read into memory), a growing one decoded; `-` is stdin, read
//! into memory. Opening verifies the checksum, so a damaged or truncated
//! file is an error here.

use crate::fail::{Failure, Result};
use concurrent_cuckoo::{FrozenBytes, FrozenFilter, ScalableCuckooFilter};
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

/// The saved format's magic (docs/format.md).
const MAGIC: &[u8; 8] = b"\x89CUCKOO\n";

/// The format version of a growing filter's container.
pub const VERSION_SCALABLE: u16 = 3;

/// An opened, verified filter file.
pub enum Opened {
    /// A fixed filter (format 1 or 2), mapped read-only.
    Mapped(FrozenFilter<concurrent_cuckoo::MappedFile>),
    /// A fixed filter read into memory.
    Loaded(FrozenFilter<FrozenBytes>),
    /// A fixed filter read from stdin.
    Piped(FrozenFilter<Vec<u8>>),
    /// A growing filter (format 3), decoded.
    Grow(ScalableCuckooFilter),
}

/// The file's format version, from its first 10 bytes.
pub fn format_version(path: &Path) -> Result<u16> {
    let name = path.display();
    let mut file =
        File::open(path).map_err(|e| Failure::new(format!("cannot open {name}: {e}")))?;
    if file.metadata().map(|m| m.is_dir()).unwrap_or(false) {
        return Err(Failure::new(format!("{name} is a directory")));
    }
    let mut head = [0u8; 10];
    let mut got = 0;
    while got < head.len() {
        match file.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Failure::new(format!("cannot read {name}: {e}"))),
        }
    }
    version_of(&name.to_string(), &head[..got])
}

/// The format version in the first bytes of a filter file named `name`.
pub fn version_of(name: &str, head: &[u8]) -> Result<u16> {
    let got = head.len().min(10);
    if head[..got.min(8)] != MAGIC[..got.min(8)] {
        return Err(Failure::new(format!(
            "{name} is not a filter file (bad magic)"
        )));
    }
    if got < 10 {
        return Err(Failure::new(format!(
            "{name}: truncated: the file ends inside the header"
        )));
    }
    Ok(u16::from_le_bytes([head[8], head[9]]))
}

/// The whole of stdin (a filter file piped in).
pub fn read_stdin() -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .read_to_end(&mut bytes)
        .map_err(|e| Failure::new(format!("cannot read stdin: {e}")))?;
    Ok(bytes)
}

/// The display name of a filter file.
pub fn name_of(path: &Path) -> String {
    if path.as_os_str() == "-" {
        "<stdin>".into()
    } else {
        path.display().to_string()
    }
}

/// Opens and verifies `path` (`-`: stdin); `map`: map a fixed filter
/// instead of reading it. Returns the format version, the filter and the
/// file's size.
pub fn open(path: &Path, map: bool) -> Result<(u16, Opened, u64)> {
    let name = name_of(path);
    let bad = |e: concurrent_cuckoo::DecodeError| Failure::new(format!("{name}: {e}"));
    if path.as_os_str() == "-" {
        let bytes = read_stdin()?;
        let version = version_of(&name, &bytes)?;
        let size = bytes.len() as u64;
        let opened = if version == VERSION_SCALABLE {
            Opened::Grow(ScalableCuckooFilter::from_bytes(&bytes).map_err(bad)?)
        } else {
            Opened::Piped(FrozenFilter::from_bytes(bytes).map_err(bad)?)
        };
        return Ok((version, opened, size));
    }
    let version = format_version(path)?;
    let size = std::fs::metadata(path).map_or(0, |m| m.len());
    let opened = if version == VERSION_SCALABLE {
        let file = File::open(path)
            .map_err(|e| Failure::new(format!("cannot open {}: {e}", path.display())))?;
        let len = file.metadata().map_or(u64::MAX, |m| m.len());
        Opened::Grow(
            ScalableCuckooFilter::read_from_limited(BufReader::new(file), len).map_err(bad)?,
        )
    } else if map {
        // SAFETY: `open` requires that the file not change while mapped.
        // `ccf` and the library replace filter files by renaming a new file
        // over them, which leaves this mapping on the old file intact; a
        // program that rewrites the file in place while `ccf` runs breaks
        // the contract, which `ccf query --help` points out (`--no-mmap`).
        Opened::Mapped(unsafe { FrozenFilter::open(path) }.map_err(bad)?)
    } else {
        Opened::Loaded(FrozenFilter::load(path).map_err(bad)?)
    };
    Ok((version, opened, size))
}

impl Opened {
    /// Answers for `keys` into `out`.
    pub fn contains_batch(&self, keys: &[&[u8]], out: &mut [bool]) {
        match self {
            Self::Mapped(f) => f.contains_batch(keys, out),
            Self::Loaded(f) => f.contains_batch(keys, out),
            Self::Piped(f) => f.contains_batch(keys, out),
            Self::Grow(f) => f.contains_batch(keys, out),
        }
    }
}
