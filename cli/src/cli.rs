//! The command line: subcommands, options, and their `--help`.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::path::PathBuf;

/// Build, inspect, query and move cuckoo filters (concurrent-cuckoo's
/// saved format) between files and Redis/Valkey.
///
/// Exit status: 0 on success; for `query`, 0 when every item is present
/// and 1 when one is absent (or there is none); 2 on any error (one line
/// on stderr, and existing output files and keys are left as they were);
/// 130 on Ctrl-C, 143 on SIGTERM. `-` names stdin or stdout wherever a
/// file is named. Summaries and progress go to stderr.
#[derive(Parser, Debug)]
#[command(name = "ccf", version, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    Build(BuildArgs),
    Info(InfoArgs),
    Query(QueryArgs),
    Push(PushArgs),
    Pull(PullArgs),
    Completions(CompletionsArgs),
    Man(ManArgs),
}

/// Print a completion script for a shell.
#[derive(Args, Debug)]
#[command(after_help = "Examples:
  ccf completions bash > ~/.local/share/bash-completion/completions/ccf
  ccf completions zsh > ~/.zfunc/_ccf
  ccf completions fish > ~/.config/fish/completions/ccf.fish")]
pub struct CompletionsArgs {
    /// The shell.
    pub shell: clap_complete::Shell,
}

/// Print the manual page (roff) of `ccf`.
#[derive(Args, Debug)]
#[command(after_help = "Examples:
  ccf man > ~/.local/share/man/man1/ccf.1
  ccf man | man -l -")]
pub struct ManArgs {}

/// Build a filter from items: lines of files or stdin, or one column of a
/// CSV/TSV file, gzip read transparently.
///
/// Every line (without its line ending) is one item, hashed as its bytes,
/// exactly as the Redis module hashes `CF.ADD key item`, so a pushed
/// filter answers `CF.EXISTS` for the same strings. Empty lines are
/// skipped. The output is written atomically: a failed build leaves an
/// existing file as it was.
#[derive(Args, Debug)]
#[command(after_help = "Examples:
  ccf build urls.txt --capacity 100000000 -o urls.ccf
  zcat day.log.gz | cut -f3 | ccf build - --grow -o flows.ccf
  ccf build leaked.csv.gz --column sha1 --capacity 1e9 --error-rate 1e-6 -o pw.ccf
  ccf build a.tsv b.tsv --column 2 --capacity 5000000 --unique -o ids.ccf")]
pub struct BuildArgs {
    /// Input files; `-` is stdin. `.gz` files (or any input starting with
    /// the gzip magic) are decompressed.
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,

    /// Output file (replaced atomically; never one of the inputs), or `-`
    /// for stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,

    /// A fixed filter for this many items (`1e9` and `100M` work too). A
    /// full filter is an error that says how many items went in. Without
    /// it (and without `--grow`), the inputs' lines are counted first (one
    /// extra pass; regular, uncompressed files only). With `--grow`: the
    /// first level's capacity (default 1048576).
    #[arg(long, value_name = "N", value_parser = parse_count)]
    pub capacity: Option<usize>,

    /// A growing filter (a `ScalableCuckooFilter`): adds larger levels as
    /// needed, for when the item count is unknown.
    #[arg(long)]
    pub grow: bool,

    /// Target false-positive rate: picks the fingerprint width (fixed
    /// filter) or the bound over every level (growing filter). Default:
    /// 16-bit fingerprints, a bound of 0.0122% (fixed); 0.1% over every
    /// level (growing).
    #[arg(long, value_name = "RATE")]
    pub error_rate: Option<f64>,

    /// Fingerprint width: 8, 16 or 32 bits (fixed filter only; default 16,
    /// a false-positive bound of 0.0122%).
    #[arg(long, value_name = "BITS", conflicts_with_all = ["error_rate", "grow"])]
    pub fingerprint_bits: Option<u32>,

    /// Hash seed (default: random). A fixed seed with `--threads 1` gives
    /// the same file for the same input.
    #[arg(long, value_name = "SEED")]
    pub seed: Option<u64>,

    /// Insert threads, 1 to 1024 (default: every core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,

    /// Set semantics: an item already present is skipped (and counted as
    /// a duplicate) instead of stored again. Slower: one insert at a time.
    #[arg(long)]
    pub unique: bool,

    /// Read one column of CSV (or TSV: `.tsv` files, or `--delimiter`)
    /// records instead of lines: a 1-based number, or a name from the
    /// header row.
    #[arg(long, value_name = "COLUMN")]
    pub column: Option<String>,

    /// The first record is a header (implied when `--column` is a name).
    #[arg(long, requires = "column")]
    pub header: bool,

    /// Field delimiter for `--column`: one ASCII character, or `'\t'` for
    /// a tab (default `,`, or a tab for `.tsv`).
    #[arg(long, value_name = "CHAR", requires = "column")]
    pub delimiter: Option<String>,

    /// Longest item accepted, in bytes; a longer line is an error.
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 20)]
    pub max_line: usize,

    /// No progress bar and no summary (errors and warnings still print).
    #[arg(short, long)]
    pub quiet: bool,

    /// More detail on stderr: the plan (inputs, threads, queue, filter)
    /// before the work.
    #[arg(short, long, conflicts_with = "quiet")]
    pub verbose: bool,
}

/// Describe a saved filter: kind, items, capacity, load, fingerprint
/// bits, levels, false-positive bound, memory, format version. Verifies
/// the checksum (one pass over the file).
#[derive(Args, Debug)]
#[command(after_help = "Examples:
  ccf info urls.ccf
  ccf info --json urls.ccf | jq .items")]
pub struct InfoArgs {
    /// A file written by `ccf build`, `ccf pull` or the library; `-`:
    /// stdin.
    pub file: PathBuf,

    /// One JSON object on stdout. `fingerprint_bits` is the first
    /// level's (a fixed filter's only one); `level_details` gives every
    /// level's items, capacity, fingerprint bits and memory.
    #[arg(long)]
    pub json: bool,
}

/// What `query` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Show {
    /// `item<TAB>1` or `item<TAB>0` for every item.
    All,
    /// Only the items present.
    Hits,
    /// Only the items absent.
    Misses,
    /// Only the counts: `present<TAB>N`, then `absent<TAB>M`.
    Count,
}

/// Ask whether items are in a saved filter: through a read-only view of
/// the mapped file (no load time), in batches.
///
/// Items are the arguments, or lines on stdin when there are none (read
/// as `build` reads them: `\r\n` or `\n` endings, empty lines skipped,
/// gzip decompressed). Exit status as grep's: 0 when every item is
/// present, 1 when one is absent or there is no item, 2 on an error.
/// "Present" may be a false positive (at most the filter's bound);
/// "absent" is always right.
#[derive(Args, Debug)]
#[command(after_help = "Examples:
  ccf query urls.ccf https://example.com/a https://example.com/b
  ccf query urls.ccf --show misses < candidates.txt > new.txt
  ccf query urls.ccf --show count < candidates.txt
  ccf query urls.ccf --show count --json < candidates.txt
  ccf query -q urls.ccf evil.example && echo blocked")]
pub struct QueryArgs {
    /// The filter file; `-`: stdin (the items are then the arguments).
    pub file: PathBuf,

    /// Items (any bytes); none: read lines from stdin.
    pub items: Vec<OsString>,

    /// What to print.
    #[arg(long, value_enum, default_value_t = Show::All)]
    pub show: Show,

    /// JSON: one object per item (`{"item":..,"present":..}`, an item
    /// that is not UTF-8 shown with U+FFFD), or with `--show count` one
    /// object `{"present":N,"absent":M}`.
    #[arg(long)]
    pub json: bool,

    /// Print nothing: only the exit status.
    #[arg(short, long)]
    pub quiet: bool,

    /// Read the file into memory instead of mapping it (for a file that
    /// another program may change in place while `ccf` runs).
    #[arg(long)]
    pub no_mmap: bool,

    /// Longest stdin line accepted, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 20)]
    pub max_line: usize,
}

/// Options shared by `push` and `pull`.
#[derive(Args, Debug)]
pub struct ServerArgs {
    /// The URL is a node of a Redis/Valkey cluster: commands are routed
    /// by the key's slot.
    #[arg(long)]
    pub cluster: bool,

    /// Seconds to wait for a connection or a reply.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    pub timeout: u64,

    /// No progress bar and no summary line (errors still print).
    #[arg(short, long)]
    pub quiet: bool,

    /// More detail on stderr: the server, the key, the temporary key and
    /// the chunks.
    #[arg(short, long, conflicts_with = "quiet")]
    pub verbose: bool,
}

/// Load a filter file into a Redis/Valkey key with `CF.LOADCHUNK`
/// (chunks of at most 1 MiB, pipelined; one at a time with --cluster).
///
/// The chunks go into a temporary key in the same cluster slot, which
/// replaces KEY in one atomic step once the filter is complete: a failed
/// or interrupted push leaves KEY as it was (the temporary key expires).
/// Without `--replace` an existing KEY is an error.
#[derive(Args, Debug)]
#[command(after_help = "Examples:
  ccf push urls.ccf redis://127.0.0.1:6379 blocklist
  ccf push urls.ccf redis://:secret@cache.internal:6379/2 blocklist --replace
  ccf push urls.ccf redis://10.0.0.5:7000 blocklist --cluster
  SSL_CERT_FILE=ca.pem ccf push urls.ccf rediss://cache.internal:6380 blocklist")]
pub struct PushArgs {
    /// The filter file; `-`: stdin.
    pub file: PathBuf,

    /// `redis://[user][:password@]host[:port][/db]` (or `rediss://`,
    /// `redis+unix:///path`), as the `redis` crate takes it.
    pub url: String,

    /// The key to write.
    pub key: String,

    /// Replace an existing key (atomically, once the new filter is whole).
    #[arg(long)]
    pub replace: bool,

    #[command(flatten)]
    pub server: ServerArgs,
}

/// Save a Redis/Valkey key's filter to a file with `CF.SCANDUMP`.
///
/// The bytes are decoded and checked as they arrive, then written
/// atomically: the file is exactly what the library's `write_to_path`
/// would write for the server's filter. A dump interrupted because the
/// filter changed is retried from the start (up to `--retries` times).
#[derive(Args, Debug)]
#[command(after_help = "Examples:
  ccf pull redis://127.0.0.1:6379 blocklist blocklist.ccf
  ccf pull redis://10.0.0.5:7000 blocklist blocklist.ccf --cluster")]
pub struct PullArgs {
    /// `redis://[user][:password@]host[:port][/db]`.
    pub url: String,

    /// The key to read.
    pub key: String,

    /// Output file (replaced atomically), or `-` for stdout (written once
    /// the whole dump is in and checked).
    pub file: PathBuf,

    /// How many times to start again when the filter changes mid-dump.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub retries: u32,

    #[command(flatten)]
    pub server: ServerArgs,
}

/// A count: `1000000`, `1_000_000`, `1e6`, `100k`, `100M`, `2G`.
fn parse_count(s: &str) -> Result<usize, String> {
    let t = s.trim().replace('_', "");
    let bad = || format!("not a count: {s:?} (examples: 1000000, 1e6, 100M)");
    let (digits, scale) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1e3),
        Some('m' | 'M') => (&t[..t.len() - 1], 1e6),
        Some('g' | 'G') => (&t[..t.len() - 1], 1e9),
        _ => (&t[..], 1.0),
    };
    if let Ok(n) = digits.parse::<usize>() {
        return n
            .checked_mul(scale as usize)
            .filter(|&n| n > 0)
            .ok_or_else(bad);
    }
    let x: f64 = digits.parse().map_err(|_| bad())?;
    let n = x * scale;
    if !(1.0..=9.0e18).contains(&n) || n.fract() != 0.0 {
        return Err(bad());
    }
    Ok(n as usize)
}

#[cfg(test)]
mod tests {
    use super::parse_count;

    #[test]
    fn counts() {
        assert_eq!(parse_count("1000"), Ok(1000));
        assert_eq!(parse_count("1_000"), Ok(1000));
        assert_eq!(parse_count("1e6"), Ok(1_000_000));
        assert_eq!(parse_count("100M"), Ok(100_000_000));
        assert_eq!(parse_count("2.5k"), Ok(2500));
        assert!(parse_count("0").is_err());
        assert!(parse_count("-5").is_err());
        assert!(parse_count("1.5").is_err());
        assert!(parse_count("lots").is_err());
    }

    #[test]
    fn command_line_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
