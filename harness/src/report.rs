//! Markdown output, progress bars and a description of the machine.

use indicatif::{ProgressBar, ProgressStyle};
use std::fmt::Write as _;

/// A progress bar on stderr for one phase.
pub fn bar(len: u64, msg: impl Into<String>) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template(
            "{elapsed_precise:.dim} {bar:32.cyan/blue} {percent:>3}% {msg}",
        )
        .expect("valid template")
        .progress_chars("##-"),
    );
    let msg = msg.into();
    if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        // indicatif draws nothing into a pipe or file: log the phase instead.
        eprintln!("  {msg}");
    }
    pb.set_message(msg);
    pb
}

/// A markdown table.
pub struct Table {
    head: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(head: &[&str]) -> Self {
        Self {
            head: head.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn render(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "| {} |", self.head.join(" | "));
        let align: Vec<&str> = self
            .head
            .iter()
            .enumerate()
            .map(|(i, _)| if i == 0 { "---" } else { "---:" })
            .collect();
        let _ = writeln!(s, "|{}|", align.join("|"));
        for r in &self.rows {
            let _ = writeln!(s, "| {} |", r.join(" | "));
        }
        s
    }
}

pub fn f1(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.1}")
    } else {
        "-".into()
    }
}

pub fn f2(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2}")
    } else {
        "-".into()
    }
}

pub fn opt(x: Option<f64>, f: fn(f64) -> String) -> String {
    x.map_or_else(|| "-".into(), f)
}

/// Percentage with enough digits for small false-positive rates.
pub fn pct(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else if x < 0.0001 {
        format!("{:.4}%", x * 100.0)
    } else {
        format!("{:.3}%", x * 100.0)
    }
}

pub fn mib(bytes: usize) -> String {
    format!("{:.0} MiB", bytes as f64 / (1u64 << 20) as f64)
}

pub fn millions(n: u64) -> String {
    format!("{:.1}M", n as f64 / 1e6)
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// nproc, CPU model, memory, THP setting, load, and the build.
pub fn machine() -> String {
    let cpuinfo = read("/proc/cpuinfo");
    let model = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .map(|r| r.trim_start_matches([' ', '\t', ':']))
        })
        .unwrap_or("unknown")
        .to_string();
    let mem = read("/proc/meminfo")
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:").map(|r| r.trim().to_string()))
        .unwrap_or_default();
    let mem_gib = mem
        .trim_end_matches("kB")
        .trim()
        .parse::<f64>()
        .map(|kb| format!("{:.1} GiB", kb / (1 << 20) as f64))
        .unwrap_or(mem);
    let thp = read("/sys/kernel/mm/transparent_hugepage/enabled");
    let defrag = read("/sys/kernel/mm/transparent_hugepage/defrag");
    let load = read("/proc/loadavg");
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!(
        "- CPU: {model}, {cpus} logical CPUs\n- memory: {mem_gib}\n- transparent huge pages: enabled `{}`, defrag `{}`\n- load average at start: {}\n- probe backend: {}; built {}\n",
        thp.trim(),
        defrag.trim(),
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" "),
        concurrent_cuckoo::probe_backend(),
        if cfg!(debug_assertions) { "WITHOUT optimisations (use --release)" } else { "--release" },
    )
}
