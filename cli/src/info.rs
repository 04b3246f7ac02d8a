//! `ccf info`: what a saved filter holds, checked.

use crate::cli::InfoArgs;
use crate::fail::{output_error, Result};
use crate::filter_file::{self, Opened};
use crate::progress::{size, thousands};
use std::fmt::Write as _;
use std::io::Write;

/// One level (a fixed filter is one level).
struct Level {
    items: u64,
    capacity: u64,
    fingerprint_bits: u32,
    memory: u64,
}

/// Everything `info` reports.
struct Report {
    kind: &'static str,
    format_version: u16,
    file_bytes: u64,
    items: u64,
    capacity: u64,
    memory: u64,
    false_positive_bound: f64,
    levels: Vec<Level>,
}

impl Report {
    fn load_factor(&self) -> f64 {
        self.items as f64 / self.capacity.max(1) as f64
    }
}

pub fn run(args: &InfoArgs) -> Result<()> {
    let (format_version, opened, file_bytes) = filter_file::open(&args.file, true)?;
    let report = match &opened {
        Opened::Mapped(f) => fixed(
            f.len(),
            f.capacity(),
            f.fingerprint_bits(),
            f.memory_usage(),
            f.false_positive_bound(),
        ),
        Opened::Piped(f) => fixed(
            f.len(),
            f.capacity(),
            f.fingerprint_bits(),
            f.memory_usage(),
            f.false_positive_bound(),
        ),
        Opened::Loaded(f) => fixed(
            f.len(),
            f.capacity(),
            f.fingerprint_bits(),
            f.memory_usage(),
            f.false_positive_bound(),
        ),
        Opened::Grow(f) => Report {
            kind: "growing",
            format_version: 0,
            file_bytes: 0,
            items: f.len() as u64,
            capacity: f.capacity() as u64,
            memory: f.memory_usage() as u64,
            false_positive_bound: f.false_positive_bound(),
            levels: f
                .level_stats()
                .iter()
                .map(|s| Level {
                    items: s.len as u64,
                    capacity: s.capacity as u64,
                    fingerprint_bits: s.fingerprint_bits,
                    memory: s.memory_usage as u64,
                })
                .collect(),
        },
    };
    let report = Report {
        format_version,
        file_bytes,
        ..report
    };
    let name = filter_file::name_of(&args.file);
    let text = if args.json {
        json(&name, &report)
    } else {
        human(&name, &report)
    };
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(output_error)
}

fn fixed(items: usize, capacity: usize, bits: u32, memory: usize, bound: f64) -> Report {
    Report {
        kind: "fixed",
        format_version: 0,
        file_bytes: 0,
        items: items as u64,
        capacity: capacity as u64,
        memory: memory as u64,
        false_positive_bound: bound,
        levels: vec![Level {
            items: items as u64,
            capacity: capacity as u64,
            fingerprint_bits: bits,
            memory: memory as u64,
        }],
    }
}

fn human(name: &str, r: &Report) -> String {
    let mut s = String::new();
    let bits: Vec<String> = r
        .levels
        .iter()
        .map(|l| l.fingerprint_bits.to_string())
        .collect();
    let _ = writeln!(s, "file                  {name} ({})", size(r.file_bytes));
    let _ = writeln!(s, "checksum              ok");
    let _ = writeln!(s, "kind                  {} filter", r.kind);
    let _ = writeln!(s, "format version        {}", r.format_version);
    let _ = writeln!(s, "items                 {}", thousands(r.items));
    let _ = writeln!(s, "capacity              {}", thousands(r.capacity));
    let _ = writeln!(s, "load                  {:.2}%", 100.0 * r.load_factor());
    let _ = writeln!(s, "fingerprint bits      {}", bits.join(", "));
    let _ = writeln!(s, "levels                {}", r.levels.len());
    let _ = writeln!(
        s,
        "false-positive bound  {:.6}%",
        100.0 * r.false_positive_bound
    );
    let _ = writeln!(s, "memory                {}", size(r.memory));
    if r.levels.len() > 1 {
        for (i, l) in r.levels.iter().enumerate() {
            let _ = writeln!(
                s,
                "  level {i}: {} of {} items, {}-bit fingerprints, {}",
                thousands(l.items),
                thousands(l.capacity),
                l.fingerprint_bits,
                size(l.memory)
            );
        }
    }
    s
}

/// One JSON object and a newline. `fingerprint_bits` is the first
/// level's (a fixed filter's only one); `level_details` gives every level's.
fn json(name: &str, r: &Report) -> String {
    let levels: Vec<serde_json::Value> = r
        .levels
        .iter()
        .map(|l| {
            serde_json::json!({
                "items": l.items,
                "capacity": l.capacity,
                "fingerprint_bits": l.fingerprint_bits,
                "memory_bytes": l.memory,
            })
        })
        .collect();
    let value = serde_json::json!({
        "file": name,
        "file_bytes": r.file_bytes,
        "checksum_ok": true,
        "kind": r.kind,
        "format_version": r.format_version,
        "items": r.items,
        "capacity": r.capacity,
        "load_factor": r.load_factor(),
        "fingerprint_bits": r.levels.first().map_or(0, |l| l.fingerprint_bits),
        "levels": r.levels.len(),
        "false_positive_bound": r.false_positive_bound,
        "memory_bytes": r.memory,
        "level_details": levels,
    });
    format!("{value}\n")
}
