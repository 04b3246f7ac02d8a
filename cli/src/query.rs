//! `ccf query`: membership answers from a frozen view of the mapped file,
//! a batch of items at a time. Items from stdin are read by `build`'s own
//! reader ([`input::read_all`]), so a filter answers "present" for every
//! line of the file it was built from.

use crate::cli::{QueryArgs, Show};
use crate::fail::{output_error, Failure, Result};
use crate::filter_file::{self, Opened};
use crate::input::{self, Format};
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// Items looked up together (the batch lookup overlaps their cache misses).
const BATCH: usize = 4096;

/// Present and absent items so far.
#[derive(Default)]
struct Tally {
    hits: u64,
    misses: u64,
}

pub fn run(args: &QueryArgs) -> Result<ExitCode> {
    let from_stdin = args.items.is_empty();
    if from_stdin && args.file.as_os_str() == "-" {
        return Err(Failure::new(
            "the filter and the items cannot both come from stdin: give the items as arguments",
        ));
    }
    let (_, filter, _) = filter_file::open(&args.file, !args.no_mmap)?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut tally = Tally::default();
    if from_stdin {
        let sources = input::open_all(&[PathBuf::from("-")])?;
        let hidden = indicatif::ProgressBar::hidden();
        let mut failed = None;
        input::read_all(sources, &Format::Lines, args.max_line, &hidden, |batch| {
            let mut keys: Vec<&[u8]> = Vec::with_capacity(BATCH);
            let answered = batch
                .for_each(args.max_line, |k| keys.push(k))
                .and_then(|()| {
                    keys.chunks(BATCH)
                        .try_for_each(|chunk| answer(&filter, chunk, args, &mut out, &mut tally))
                });
            match answered {
                Ok(()) => true,
                Err(e) => {
                    failed = Some(e);
                    false
                }
            }
        })?;
        if let Some(e) = failed {
            return Err(e);
        }
    } else {
        let keys: Vec<&[u8]> = args.items.iter().map(|s| item_bytes(s)).collect();
        for chunk in keys.chunks(BATCH) {
            answer(&filter, chunk, args, &mut out, &mut tally)?;
        }
    }
    if args.show == Show::Count && !args.quiet {
        if args.json {
            let v = serde_json::json!({"present": tally.hits, "absent": tally.misses});
            writeln!(out, "{v}")
        } else {
            writeln!(out, "present\t{}\nabsent\t{}", tally.hits, tally.misses)
        }
        .map_err(output_error)?;
    }
    out.flush().map_err(output_error)?;
    // As grep: 0 when every item was found, 1 when one was not or there
    // was none to find.
    Ok(if tally.misses == 0 && tally.hits > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// An argument's bytes, exactly as given (not necessarily UTF-8).
#[cfg(unix)]
fn item_bytes(s: &std::ffi::OsStr) -> &[u8] {
    use std::os::unix::ffi::OsStrExt;
    s.as_bytes()
}

/// An argument's bytes (WTF-8 where it is not Unicode).
#[cfg(not(unix))]
fn item_bytes(s: &std::ffi::OsStr) -> &[u8] {
    s.as_encoded_bytes()
}

fn answer(
    filter: &Opened,
    keys: &[&[u8]],
    args: &QueryArgs,
    out: &mut impl Write,
    tally: &mut Tally,
) -> Result<()> {
    let mut found = vec![false; keys.len()];
    filter.contains_batch(keys, &mut found);
    for (key, &hit) in keys.iter().zip(&found) {
        if hit {
            tally.hits += 1;
        } else {
            tally.misses += 1;
        }
        if args.quiet {
            continue;
        }
        let print = match args.show {
            Show::All => true,
            Show::Hits => hit,
            Show::Misses => !hit,
            Show::Count => false,
        };
        if !print {
            continue;
        }
        if args.json {
            let v = serde_json::json!({
                "item": String::from_utf8_lossy(key),
                "present": hit,
            });
            writeln!(out, "{v}")
        } else {
            out.write_all(key).and_then(|()| {
                if args.show == Show::All {
                    out.write_all(if hit { b"\t1\n" } else { b"\t0\n" })
                } else {
                    out.write_all(b"\n")
                }
            })
        }
        .map_err(output_error)?;
    }
    Ok(())
}
