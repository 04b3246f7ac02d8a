//! `ccf`: builds, inspects, queries and moves concurrent-cuckoo filters
//! between files and Redis/Valkey (the `concurrent-cuckoo-redis` module's
//! `CF.LOADCHUNK` / `CF.SCANDUMP`).
//!
//! Exit status: 0 on success (for `query`: every item present), 1 when
//! `query` finds an item absent (or has no item), 2 on any error, which is
//! reported as one line on stderr and leaves existing output files and
//! keys as they were; 128 + the signal's number on Ctrl-C (130) or
//! `SIGTERM` (143); a closed output pipe ends it by `SIGPIPE`, as `grep`.

mod atomic;
mod build;
mod cli;
mod fail;
mod filter_file;
mod generate;
mod info;
mod input;
mod progress;
mod query;
mod signals;
mod transfer;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = match cli::Cli::try_parse() {
        Ok(args) => args,
        Err(e) => return usage_error(e),
    };
    signals::install();
    let outcome = match args.command {
        cli::Command::Build(a) => build::run(&a).map(|()| ExitCode::SUCCESS),
        cli::Command::Info(a) => info::run(&a).map(|()| ExitCode::SUCCESS),
        cli::Command::Query(a) => query::run(&a),
        cli::Command::Push(a) => transfer::push(&a).map(|()| ExitCode::SUCCESS),
        cli::Command::Pull(a) => transfer::pull(&a).map(|()| ExitCode::SUCCESS),
        cli::Command::Completions(a) => generate::completions(a.shell).map(|()| ExitCode::SUCCESS),
        cli::Command::Man(_) => generate::man().map(|()| ExitCode::SUCCESS),
    };
    match outcome {
        Ok(code) => code,
        Err(e) if e.is_quiet() => signals::die_of_broken_pipe(),
        Err(e) => {
            eprintln!("ccf: error: {e}");
            ExitCode::from(2)
        }
    }
}

/// A command line clap refuses, as one line like every other error
/// (`--help` and `--version` print as clap prints them).
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
        _ => {
            // The first paragraph (the usage and tips follow), on one line.
            let text = e.render().to_string();
            let first: Vec<&str> = text
                .lines()
                .take_while(|l| !l.trim().is_empty())
                .map(str::trim)
                .collect();
            let first = first.join(" ");
            let first = first.strip_prefix("error: ").unwrap_or(&first);
            eprintln!("ccf: error: {first} (--help for usage)");
            ExitCode::from(2)
        }
    }
}
