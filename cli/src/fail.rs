//! The one error type of the tool: a message for the user's terminal.

use std::fmt;

/// What went wrong, as one line for stderr (exit status 2).
#[derive(Debug)]
pub struct Failure {
    message: String,
    /// Nothing to print: the output pipe closed (`ccf query ... | head`).
    quiet: bool,
}

/// Results of the subcommands.
pub type Result<T> = std::result::Result<T, Failure>;

impl Failure {
    /// A failure with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            quiet: false,
        }
    }

    /// The reader of our output went away: stop without a message.
    pub fn broken_pipe() -> Self {
        Self {
            message: "broken pipe".into(),
            quiet: true,
        }
    }

    /// Whether to stay silent about it.
    pub fn is_quiet(&self) -> bool {
        self.quiet
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Attaches what was being done to a lower-level error.
pub trait Context<T> {
    /// `"{what}: {error}"`.
    fn context(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T, E: fmt::Display> Context<T> for std::result::Result<T, E> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| Failure::new(format!("{}: {e}", what())))
    }
}

/// An output write error: a closed pipe is quiet, anything else is a failure.
pub fn output_error(e: std::io::Error) -> Failure {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Failure::broken_pipe()
    } else {
        Failure::new(format!("writing the output: {e}"))
    }
}
