//! Gives the shared library a SONAME that carries its ABI version, so a
//! program linked against one ABI never loads another: `readelf -d` shows
//! `libconcurrent_cuckoo_ffi.so.0.1` for every 0.1.x release (before 1.0 a
//! minor release may break the ABI, as cargo-c names them), and
//! `libconcurrent_cuckoo_ffi.so.N` from N.0.0 on. `scripts/ffi-install.sh`
//! installs the library under that name with the usual links.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os != "linux" {
        return;
    }
    let part = |name: &str| std::env::var(name).expect("cargo sets the package version");
    let (major, minor) = (
        part("CARGO_PKG_VERSION_MAJOR"),
        part("CARGO_PKG_VERSION_MINOR"),
    );
    let abi = if major == "0" {
        format!("0.{minor}")
    } else {
        major
    };
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libconcurrent_cuckoo_ffi.so.{abi}");
}
