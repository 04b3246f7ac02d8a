//! `ccf completions` and `ccf man`: generated from the command line's own
//! definition (clap_complete, clap_mangen), so they never drift from
//! `--help`.

use crate::cli::Cli;
use crate::fail::{output_error, Result};
use clap::CommandFactory;
use std::io::Write;

/// The completion script for `shell` on stdout.
pub fn completions(shell: clap_complete::Shell) -> Result<()> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "ccf", &mut script);
    write_out(&script)
}

/// The manual page, in roff, on stdout.
pub fn man() -> Result<()> {
    let mut page = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut page)
        .map_err(output_error)?;
    write_out(&page)
}

fn write_out(bytes: &[u8]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(output_error)
}
