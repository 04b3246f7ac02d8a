#!/usr/bin/env bash
# The packages as crates.io would get them (CI runs this):
#
#   scripts/check-package.sh
#
# 1. `cargo publish --dry-run --workspace --no-verify`: every publishable
#    member (the library, `ccf`, the C ABI) packages, with its metadata,
#    and the members that depend on the library resolve against the
#    library's package, not a registry copy (nothing is published yet);
# 2. the library's package, unpacked, builds and its tests compile as a
#    user who downloads it would build them: without this workspace's
#    self dev-dependency (cargo strips it), so the tests that need the
#    `unstable` hooks are skipped (`required-features`; with
#    `--features unstable` they compile too, as the workspace's own test
#    build shows every run).
# The unpacked crate builds into this workspace's target/ (its own
# artefacts; the dependencies' are shared).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
cargo publish --dry-run --workspace --no-verify --allow-dirty
version=$(cargo metadata --no-deps --format-version 1 |
    python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "concurrent-cuckoo"))')
# The library's package on its own, fresh: the workspace dry run leaves
# its crates under target/package/tmp-*/ (where they lie is cargo's
# business), and an older .crate at the usual path must not stand in.
crate=target/package/concurrent-cuckoo-$version.crate
rm -f "$crate"
cargo package -p concurrent-cuckoo --no-verify --allow-dirty
[[ -f $crate ]] || { echo "check-package: cargo package made no $crate" >&2; exit 1; }
unpacked=$(mktemp -d)
trap 'rm -rf "$unpacked"' EXIT
tar -xzf "$crate" -C "$unpacked"
cd "$unpacked/concurrent-cuckoo-$version"
for f in LICENSE-MIT LICENSE-APACHE README.md CHANGELOG.md; do
    [[ -f $f ]] || { echo "check-package: $f is missing from the package" >&2; exit 1; }
done
export CARGO_TARGET_DIR="$root/target"
cargo build --locked
cargo test --locked --all-targets --no-run
echo "check-package: every publishable crate packages; the library's package builds and its tests compile"
