//! Plants a loom canary: a deliberate bug that the loom models must catch
//! (`scripts/loom.sh --canary`). `CCF_LOOM_CANARY` names the bug; only a
//! build for the models (`--cfg concurrent_cuckoo_loom` in `RUSTFLAGS`)
//! takes it, so no other build can carry one. Set here rather than in
//! `RUSTFLAGS`, which would rebuild every dependency for every planted bug
//! (loom, tracing, ...: most of each canary's build), only this crate and
//! the models are rebuilt.

use std::env;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CCF_LOOM_CANARY");
    let Ok(bug) = env::var("CCF_LOOM_CANARY") else {
        return;
    };
    if bug.is_empty() {
        return;
    }
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let flags: Vec<&str> = flags.split('\u{1f}').collect();
    let loom = flags.contains(&"--cfg=concurrent_cuckoo_loom")
        || flags
            .windows(2)
            .any(|w| w == ["--cfg", "concurrent_cuckoo_loom"]);
    if !loom {
        println!("cargo:warning=CCF_LOOM_CANARY={bug} ignored: not a loom build");
        return;
    }
    assert!(
        bug.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'),
        "CCF_LOOM_CANARY={bug:?}: a bug's name is letters, digits and underscores"
    );
    println!("cargo:rustc-cfg=concurrent_cuckoo_canary=\"{bug}\"");
}
