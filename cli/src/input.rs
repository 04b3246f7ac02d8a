//! Items from files or stdin: lines, or one column of CSV/TSV records,
//! gzip decompressed transparently, handed out in large batches so that
//! insert threads can work on several at once.
//!
//! Line splitting happens in the insert threads ([`Batch::for_each`]): the
//! reader only cuts the input at a line end, so reading is one `read` per
//! few MiB and parsing runs on every core.

use crate::fail::{Context, Failure, Result};
use flate2::read::MultiGzDecoder;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Bytes of input per batch.
pub const BATCH_BYTES: usize = 4 << 20;

/// The two bytes every gzip member starts with.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// How to cut the input into items.
#[derive(Clone, Debug)]
pub enum Format {
    /// One item per line (`\n` or `\r\n`).
    Lines,
    /// One column of delimited records.
    Column {
        column: ColumnRef,
        header: bool,
        delimiter: Option<u8>,
    },
}

/// A column by position or by header name.
#[derive(Clone, Debug)]
pub enum ColumnRef {
    /// 0-based.
    Index(usize),
    Name(String),
}

impl ColumnRef {
    /// `"3"` is the third column; anything else a header name.
    pub fn parse(s: &str) -> Result<Self> {
        match s.parse::<usize>() {
            Ok(0) => Err(Failure::new("--column numbers start at 1")),
            Ok(n) => Ok(Self::Index(n - 1)),
            Err(_) => Ok(Self::Name(s.to_string())),
        }
    }
}

/// A piece of the input holding whole items.
pub enum Batch {
    /// Whole lines of one input, starting at `offset` in its (decompressed)
    /// bytes.
    Lines {
        data: Vec<u8>,
        origin: Arc<str>,
        offset: u64,
    },
    /// Items already cut: item `i` is `data[ends[i-1]..ends[i]]`.
    Items { data: Vec<u8>, ends: Vec<usize> },
}

impl Batch {
    /// Calls `f` on every non-empty item, in order; fails on an item longer
    /// than `max_len`.
    pub fn for_each<'a>(&'a self, max_len: usize, mut f: impl FnMut(&'a [u8])) -> Result<()> {
        match self {
            Self::Lines {
                data,
                origin,
                offset,
            } => {
                let mut start = 0;
                let mut emit = |start: usize, end: usize| -> Result<()> {
                    let mut line = &data[start..end];
                    if let [rest @ .., b'\r'] = line {
                        line = rest;
                    }
                    if line.len() > max_len {
                        return Err(too_long(origin, offset + start as u64, max_len));
                    }
                    if !line.is_empty() {
                        f(line);
                    }
                    Ok(())
                };
                for end in memchr::memchr_iter(b'\n', data) {
                    emit(start, end)?;
                    start = end + 1;
                }
                if start < data.len() {
                    emit(start, data.len())?;
                }
                Ok(())
            }
            Self::Items { data, ends } => {
                let mut start = 0;
                for &end in ends {
                    f(&data[start..end]);
                    start = end;
                }
                Ok(())
            }
        }
    }
}

fn too_long(origin: &str, offset: u64, max_len: usize) -> Failure {
    Failure::new(format!(
        "{origin}: the line at byte {offset} is longer than {max_len} bytes \
         (--max-line raises the limit)"
    ))
}

/// Counts the raw (possibly compressed) bytes read, for the progress bar.
struct Counted<R> {
    inner: R,
    progress: indicatif::ProgressBar,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.progress.inc(n as u64);
        Ok(n)
    }
}

/// The display name of an input.
pub fn name_of(path: &Path) -> String {
    if path.as_os_str() == "-" {
        "<stdin>".into()
    } else {
        path.display().to_string()
    }
}

/// Total size of the inputs that are regular files (`None` with stdin or
/// any input whose size is unknown).
pub fn total_size(inputs: &[PathBuf]) -> Option<u64> {
    let mut total = 0u64;
    for path in inputs {
        if path.as_os_str() == "-" {
            return None;
        }
        let meta = std::fs::metadata(path).ok()?;
        if !meta.is_file() {
            return None;
        }
        total += meta.len();
    }
    Some(total)
}

/// An input opened before any is read, so that a missing one is
/// reported before the work, not after it.
pub struct Source {
    path: PathBuf,
    /// `None`: stdin.
    file: Option<File>,
}

/// Opens every input (stdin only says it is there).
pub fn open_all(inputs: &[PathBuf]) -> Result<Vec<Source>> {
    inputs
        .iter()
        .map(|path| {
            if path.as_os_str() == "-" {
                return Ok(Source {
                    path: path.clone(),
                    file: None,
                });
            }
            let name = name_of(path);
            let file = File::open(path).context(|| format!("cannot open {name}"))?;
            if file.metadata().map(|m| m.is_dir()).unwrap_or(false) {
                return Err(Failure::new(format!("{name} is a directory")));
            }
            Ok(Source {
                path: path.clone(),
                file: Some(file),
            })
        })
        .collect()
}

/// Lines in every input (a last line without its newline counted), in
/// one pass, each file rewound after: an upper bound on the items, as
/// empty lines are skipped and a CSV record may span lines. `None` when an
/// input is stdin, not a regular file, or gzip (only reading it tells).
pub fn count_lines(sources: &[Source]) -> Result<Option<u64>> {
    use std::io::{Seek, SeekFrom};
    let mut total = 0u64;
    for source in sources {
        let Some(mut file) = source.file.as_ref() else {
            return Ok(None);
        };
        if !file.metadata().is_ok_and(|m| m.is_file()) {
            return Ok(None);
        }
        let name = name_of(&source.path);
        let mut buf = vec![0u8; 1 << 20];
        let mut first = true;
        let mut last = b'\n';
        loop {
            let n = match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Failure::new(format!("cannot read {name}: {e}"))),
            };
            if first && buf[..n].starts_with(&GZIP_MAGIC) {
                file.seek(SeekFrom::Start(0))
                    .context(|| format!("cannot rewind {name}"))?;
                return Ok(None);
            }
            first = false;
            total += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64;
            last = buf[n - 1];
        }
        if last != b'\n' {
            total += 1;
        }
        file.seek(SeekFrom::Start(0))
            .context(|| format!("cannot rewind {name}"))?;
    }
    Ok(Some(total))
}

/// Fails when `output` is the same file as one of the inputs (same device
/// and inode, whatever the paths), which the build would replace.
pub fn refuse_output_among(inputs: &[Source], output: &Path) -> Result<()> {
    if output.as_os_str() == "-" {
        return Ok(());
    }
    let Ok(out) = std::fs::metadata(output) else {
        return Ok(()); // a new file is no input
    };
    for source in inputs {
        let Some(file) = &source.file else { continue };
        if let Ok(meta) = file.metadata() {
            if same_file(&meta, &out) {
                return Err(Failure::new(format!(
                    "{} is also an input ({}): refusing to replace it; name another output",
                    output.display(),
                    source.path.display()
                )));
            }
        }
    }
    Ok(())
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_: &std::fs::Metadata, _: &std::fs::Metadata) -> bool {
    false
}

/// `--delimiter` as typed in a shell: one ASCII character, or `\t` /
/// `tab` for a tab (a literal tab is awkward to type).
pub fn parse_delimiter(s: &str) -> Result<u8> {
    match s {
        "\\t" | "tab" | "TAB" => Ok(b'\t'),
        _ => match s.as_bytes() {
            [b] if b.is_ascii() => Ok(*b),
            _ => Err(Failure::new(format!(
                "--delimiter {s:?}: one ASCII character, or '\\t' for a tab"
            ))),
        },
    }
}

/// Starts reading an input, decompressed if it starts with the gzip magic.
fn open(source: Source, progress: &indicatif::ProgressBar) -> Result<Box<dyn Read + Send>> {
    let name = name_of(&source.path);
    let raw: Box<dyn Read + Send> = match source.file {
        None => Box::new(io::stdin()),
        Some(file) => Box::new(file),
    };
    let mut buffered = BufReader::with_capacity(
        1 << 20,
        Counted {
            inner: raw,
            progress: progress.clone(),
        },
    );
    let head = buffered
        .fill_buf()
        .context(|| format!("cannot read {name}"))?;
    if head.starts_with(&GZIP_MAGIC) {
        Ok(Box::new(BufReader::with_capacity(
            1 << 20,
            MultiGzDecoder::new(buffered),
        )))
    } else {
        Ok(Box::new(buffered))
    }
}

/// Reads every input in order and hands its items to `sink`, a batch at
/// a time. Stops at the first error, or when `sink` returns `false`.
pub fn read_all(
    inputs: Vec<Source>,
    format: &Format,
    max_len: usize,
    progress: &indicatif::ProgressBar,
    mut sink: impl FnMut(Batch) -> bool,
) -> Result<()> {
    for source in inputs {
        let path = source.path.clone();
        let name: Arc<str> = name_of(&path).into();
        let reader = open(source, progress)?;
        let go_on = match format {
            Format::Lines => read_lines(reader, &name, max_len, &mut sink)?,
            Format::Column {
                column,
                header,
                delimiter,
            } => {
                let delimiter = delimiter.unwrap_or_else(|| default_delimiter(&path));
                read_column(
                    reader, &name, column, *header, delimiter, max_len, &mut sink,
                )?
            }
        };
        if !go_on {
            break;
        }
    }
    Ok(())
}

fn default_delimiter(path: &Path) -> u8 {
    let name = path.to_string_lossy();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    if name.ends_with(".tsv") || name.ends_with(".tab") {
        b'\t'
    } else {
        b','
    }
}

/// Cuts the input at line ends into batches of about [`BATCH_BYTES`].
fn read_lines(
    mut reader: Box<dyn Read + Send>,
    name: &Arc<str>,
    max_len: usize,
    sink: &mut impl FnMut(Batch) -> bool,
) -> Result<bool> {
    let mut offset = 0u64;
    let mut buf: Vec<u8> = Vec::with_capacity(BATCH_BYTES);
    loop {
        // Fill up to the batch size (more when one line is longer).
        let want = BATCH_BYTES.max(buf.len() + (64 << 10));
        let mut eof = false;
        while buf.len() < want {
            let len = buf.len();
            buf.resize(want, 0);
            match reader.read(&mut buf[len..]) {
                Ok(0) => {
                    buf.truncate(len);
                    eof = true;
                    break;
                }
                Ok(n) => buf.truncate(len + n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => buf.truncate(len),
                Err(e) => {
                    return Err(Failure::new(format!("cannot read {name}: {e}")));
                }
            }
        }
        if eof {
            if buf.len() > max_len && memchr::memrchr(b'\n', &buf).is_none() {
                return Err(too_long(name, offset, max_len));
            }
            if !buf.is_empty() {
                return Ok(sink(Batch::Lines {
                    data: buf,
                    origin: name.clone(),
                    offset,
                }));
            }
            return Ok(true);
        }
        match memchr::memrchr(b'\n', &buf) {
            Some(last) => {
                let rest = buf[last + 1..].to_vec();
                buf.truncate(last + 1);
                let len = buf.len() as u64;
                let mut next = Vec::with_capacity(BATCH_BYTES.max(rest.len() * 2));
                next.extend_from_slice(&rest);
                let batch = Batch::Lines {
                    data: std::mem::replace(&mut buf, next),
                    origin: name.clone(),
                    offset,
                };
                offset += len;
                if !sink(batch) {
                    return Ok(false);
                }
            }
            None if buf.len() > max_len => return Err(too_long(name, offset, max_len)),
            None => {} // one long line: read on
        }
    }
}

/// Cuts one column out of delimited records (the `csv` crate's parser:
/// quoted fields, embedded delimiters and line ends).
fn read_column(
    reader: Box<dyn Read + Send>,
    name: &str,
    column: &ColumnRef,
    header: bool,
    delimiter: u8,
    max_len: usize,
    sink: &mut impl FnMut(Batch) -> bool,
) -> Result<bool> {
    let mut csv = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delimiter)
        .buffer_capacity(1 << 20)
        .from_reader(reader);
    let mut record = csv::ByteRecord::new();
    let read = |csv: &mut csv::Reader<_>, record: &mut csv::ByteRecord| {
        csv.read_byte_record(record)
            .map_err(|e| Failure::new(format!("{name}: {e}")))
    };
    let index = match column {
        ColumnRef::Index(i) => {
            if header && !read(&mut csv, &mut record)? {
                return Ok(true);
            }
            *i
        }
        ColumnRef::Name(wanted) => {
            if !read(&mut csv, &mut record)? {
                return Ok(true);
            }
            record
                .iter()
                .position(|field| field == wanted.as_bytes())
                .ok_or_else(|| {
                    Failure::new(format!(
                        "{name}: the header row has no column {wanted:?} (delimiter {:?})",
                        delimiter as char
                    ))
                })?
        }
    };
    let mut data = Vec::with_capacity(BATCH_BYTES);
    let mut ends = Vec::new();
    while read(&mut csv, &mut record)? {
        let field = record.get(index).ok_or_else(|| {
            let line = record.position().map_or(0, |p| p.line());
            Failure::new(format!(
                "{name}: the record on line {line} has {} fields (delimiter {:?}), no column {}",
                record.len(),
                delimiter as char,
                index + 1
            ))
        })?;
        if field.len() > max_len {
            let line = record.position().map_or(0, |p| p.line());
            return Err(Failure::new(format!(
                "{name}: the field on line {line} is longer than {max_len} bytes \
                 (--max-line raises the limit)"
            )));
        }
        if field.is_empty() {
            continue;
        }
        data.extend_from_slice(field);
        ends.push(data.len());
        if data.len() >= BATCH_BYTES {
            let batch = Batch::Items {
                data: std::mem::replace(&mut data, Vec::with_capacity(BATCH_BYTES)),
                ends: std::mem::take(&mut ends),
            };
            if !sink(batch) {
                return Ok(false);
            }
        }
    }
    if !ends.is_empty() {
        return Ok(sink(Batch::Items { data, ends }));
    }
    Ok(true)
}
