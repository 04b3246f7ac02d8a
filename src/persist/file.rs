//! Crash-safe file replacement: a temporary file, `fsync`, `rename`.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::Path;

/// Writes a file through `write` into a fresh temporary file next to
/// `path`, syncs it, and renames it over `path`; removes the temporary file
/// if anything fails. See [`CuckooFilter::write_to_path`](crate::CuckooFilter::write_to_path).
pub(crate) fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    // Unique per process and call, so concurrent saves never share one.
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(
        ".{}-{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let tmp = dir.join(tmp_name);
    let mut file = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
    let result = write(&mut file)
        .and_then(|()| file.sync_all())
        .and_then(|()| {
            drop(file);
            fs::rename(&tmp, path)
        });
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    // The rename is in the directory: sync it so it is durable too. Best
    // effort: some file systems refuse to open or sync a directory.
    #[cfg(unix)]
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A directory of its own under the system temp dir, removed on drop.
    struct TempDir(std::path::PathBuf);

    impl TempDir {
        fn new(tag: &str) -> Self {
            use std::sync::atomic::{AtomicU64, Ordering};
            static N: AtomicU64 = AtomicU64::new(0);
            let dir = std::env::temp_dir().join(format!(
                "ccf-{tag}-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            fs::create_dir_all(&dir).unwrap();
            Self(dir)
        }

        fn entries(&self) -> Vec<String> {
            let mut names: Vec<String> = fs::read_dir(&self.0)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary() {
        let dir = TempDir::new("atomic");
        let path = dir.0.join("filter.ccf");
        fs::write(&path, b"old contents").unwrap();
        // The writer fails half-way, as a full disk would.
        let err = write_atomically(&path, |f| {
            f.write_all(b"half of a new encoding")?;
            Err(io::Error::other("disk full"))
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "disk full");
        assert_eq!(fs::read(&path).unwrap(), b"old contents");
        assert_eq!(
            dir.entries(),
            ["filter.ccf"],
            "the temporary file is removed"
        );
        // A successful write replaces the file, again leaving nothing else.
        write_atomically(&path, |f| f.write_all(b"new contents")).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new contents");
        assert_eq!(dir.entries(), ["filter.ccf"]);
    }

    #[test]
    fn a_path_without_a_file_name_is_refused() {
        let err = write_atomically(Path::new("/"), |_| Ok(())).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }
}
