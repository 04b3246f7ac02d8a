//! `ccf`: builds, inspects, queries and moves concurrent-cuckoo filters
//! between files and Redis/Valkey (the `concurrent-cuckoo-redis` module's
//! `CF.LOADCHUNK` / `CF.SCANDUMP`).
//!
//! Exit status: 0 on success (for `query`: every item present), 1 when
//! `query` finds an item absent, 2 on any error, which is reported as one
//! line on stderr and leaves existing output files and keys as they were.

mod atomic;
mod build;
mod cli;
mod fail;
mod filter_file;
mod info;
mod input;
mod progress;
mod query;
mod transfer;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    atomic::interrupt::install();
    let outcome = match args.command {
        cli::Command::Build(a) => build::run(&a).map(|()| ExitCode::SUCCESS),
        cli::Command::Info(a) => info::run(&a).map(|()| ExitCode::SUCCESS),
        cli::Command::Query(a) => query::run(&a),
        cli::Command::Push(a) => transfer::push(&a).map(|()| ExitCode::SUCCESS),
        cli::Command::Pull(a) => transfer::pull(&a).map(|()| ExitCode::SUCCESS),
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            if !e.is_quiet() {
                eprintln!("ccf: error: {e}");
            }
            ExitCode::from(2)
        }
    }
}
