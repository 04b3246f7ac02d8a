//! `ccf query`: membership answers from a frozen view of the mapped file,
//! a batch of items at a time.

use crate::cli::{QueryArgs, Show};
use crate::fail::{output_error, Failure, Result};
use crate::filter_file::{self, Opened};
use std::io::{BufRead, BufWriter, Read, Write};
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
    let (_, filter) = filter_file::open(&args.file, !args.no_mmap)?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut tally = Tally::default();
    if args.items.is_empty() {
        let stdin = std::io::stdin();
        let mut input = stdin.lock();
        let mut lines: Vec<Vec<u8>> = Vec::with_capacity(BATCH);
        let mut line_no = 0u64;
        loop {
            let mut line = Vec::new();
            let n = Read::take(&mut input, args.max_line as u64 + 2)
                .read_until(b'\n', &mut line)
                .map_err(|e| Failure::new(format!("cannot read stdin: {e}")))?;
            if n > 0 {
                line_no += 1;
                if line.last() == Some(&b'\n') {
                    line.pop();
                }
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                if line.len() > args.max_line {
                    return Err(Failure::new(format!(
                        "<stdin>: line {line_no} is longer than {} bytes (--max-line raises the limit)",
                        args.max_line
                    )));
                }
                lines.push(line);
            }
            if lines.len() == BATCH || (n == 0 && !lines.is_empty()) {
                let keys: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
                answer(&filter, &keys, args, &mut out, &mut tally)?;
                lines.clear();
            }
            if n == 0 {
                break;
            }
        }
    } else {
        let keys: Vec<&[u8]> = args.items.iter().map(|s| s.as_bytes()).collect();
        for chunk in keys.chunks(BATCH) {
            answer(&filter, chunk, args, &mut out, &mut tally)?;
        }
    }
    if args.show == Show::Count && !args.quiet {
        writeln!(out, "{}\t{}", tally.hits, tally.misses).map_err(output_error)?;
    }
    out.flush().map_err(output_error)?;
    Ok(if tally.misses == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
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
        if print {
            out.write_all(key).map_err(output_error)?;
            if args.show == Show::All {
                out.write_all(if hit { b"\t1\n" } else { b"\t0\n" })
            } else {
                out.write_all(b"\n")
            }
            .map_err(output_error)?;
        }
    }
    Ok(())
}
