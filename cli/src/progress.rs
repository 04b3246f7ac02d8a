//! Progress bars on stderr (hidden when stderr is not a terminal, or with
//! `--quiet`).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::time::Duration;

/// A bar over `total` bytes (ETA shown), or a spinner counting bytes when
/// the total is unknown.
pub fn bytes(total: Option<u64>, quiet: bool) -> ProgressBar {
    let bar = match total {
        Some(total) => ProgressBar::new(total).with_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] [{bar:30}] {bytes}/{total_bytes} \
                 {bytes_per_sec}, ETA {eta} {msg}",
            )
            .expect("a valid template")
            .progress_chars("=> "),
        ),
        None => ProgressBar::no_length().with_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bytes} {bytes_per_sec} {msg}",
            )
            .expect("a valid template"),
        ),
    };
    if quiet {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    } else {
        bar.enable_steady_tick(Duration::from_millis(200));
    }
    bar
}

/// `1234567` as `1,234,567` (indicatif's `HumanCount`).
pub fn thousands(n: u64) -> String {
    indicatif::HumanCount(n).to_string()
}

/// Bytes in binary units: `512 B`, `1.50 MiB`.
pub fn size(bytes: u64) -> String {
    indicatif::BinaryBytes(bytes).to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn thousands() {
        assert_eq!(super::thousands(0), "0");
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::thousands(1000), "1,000");
        assert_eq!(super::thousands(1234567), "1,234,567");
    }
}
