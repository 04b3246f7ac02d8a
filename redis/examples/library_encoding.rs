//! Writes to stdout the library's encoding of a growing filter built with
//! settings the module's own commands never choose, for the Python tests
//! to send with `CF.LOADCHUNK` (`redis/tests/python`).
//!
//! ```text
//! library_encoding CAPACITY GROWTH [ITEMS]
//! ```
//!
//! `ScalableCuckooFilter::builder().capacity(CAPACITY)
//! .growth_factor(GROWTH)`, seed 1, holding the items `0..ITEMS` (as
//! decimal text, how redis-py sends integers). Exits 2 on bad usage or
//! settings the library refuses.

use concurrent_cuckoo::ScalableCuckooFilter;
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = match std::env::args()
        .skip(1)
        .map(|a| a.parse::<usize>())
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(args) if (2..=3).contains(&args.len()) => args,
        _ => {
            eprintln!("usage: library_encoding CAPACITY GROWTH [ITEMS]");
            return ExitCode::from(2);
        }
    };
    let filter = match ScalableCuckooFilter::builder()
        .capacity(args[0])
        .growth_factor(args[1])
        .seed(1)
        .build()
    {
        Ok(filter) => filter,
        Err(e) => {
            eprintln!("library_encoding: {e}");
            return ExitCode::from(2);
        }
    };
    for i in 0..args.get(2).copied().unwrap_or(0) {
        if let Err(e) = filter.insert(i.to_string().as_bytes()) {
            eprintln!("library_encoding: item {i}: {e}");
            return ExitCode::from(2);
        }
    }
    match std::io::stdout().lock().write_all(&filter.to_bytes()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("library_encoding: {e}");
            ExitCode::FAILURE
        }
    }
}
