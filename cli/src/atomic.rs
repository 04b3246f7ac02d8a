//! Files replaced atomically: written beside the target under a temporary
//! name, flushed to disk, then renamed over it. A failure at any point
//! leaves the target as it was (the temporary file is removed).

use crate::fail::{Context, Result};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// A temporary file that becomes `target` on [`commit`](Self::commit), or
/// disappears when dropped.
pub struct AtomicFile {
    file: Option<File>,
    temp: PathBuf,
    target: PathBuf,
    committed: bool,
}

impl AtomicFile {
    /// Creates the temporary file in `target`'s directory (the rename
    /// must not cross file systems).
    pub fn create(target: &Path) -> Result<Self> {
        let dir = parent_dir(target);
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "filter".into());
        let mut attempt = 0u32;
        loop {
            let temp = dir.join(format!(".{name}.ccf-tmp-{}-{attempt}", std::process::id()));
            match OpenOptions::new().write(true).create_new(true).open(&temp) {
                Ok(file) => {
                    return Ok(Self {
                        file: Some(file),
                        temp,
                        target: target.to_path_buf(),
                        committed: false,
                    })
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 100 => {
                    attempt += 1;
                }
                Err(e) => {
                    return Err(e).context(|| format!("creating a file in {}", dir.display()))
                }
            }
        }
    }

    /// Appends bytes.
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<()> {
        let file = self.file.as_mut().expect("written before commit");
        file.write_all(bytes)
            .context(|| format!("writing {}", self.temp.display()))
    }

    /// Starts over with an empty file (a retried transfer).
    pub fn truncate(&mut self) -> Result<()> {
        use std::io::Seek;
        let file = self.file.as_mut().expect("truncated before commit");
        file.set_len(0)
            .and_then(|()| file.rewind())
            .context(|| format!("truncating {}", self.temp.display()))
    }

    /// Flushes the file to disk and renames it over the target.
    pub fn commit(mut self) -> Result<()> {
        let file = self.file.take().expect("committed once");
        file.sync_all()
            .context(|| format!("flushing {}", self.temp.display()))?;
        drop(file);
        std::fs::rename(&self.temp, &self.target)
            .context(|| format!("renaming into {}", self.target.display()))?;
        self.committed = true;
        // The rename is durable once the directory is: best effort (some
        // file systems refuse to sync a directory).
        if let Ok(dir) = File::open(parent_dir(&self.target)) {
            let _ = dir.sync_all();
        }
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}
