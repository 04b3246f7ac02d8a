//! The tool's one way of writing an output: a file replaced atomically
//! (a `tempfile` beside the target, flushed to disk, then renamed over
//! it), or stdout for `-`. A failure or a signal at any point leaves the
//! target as it was: the temporary file is removed.

use crate::fail::{Context, Failure, Result};
use crate::signals;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use tempfile::NamedTempFile;

/// Where an output goes. Created before the work, so that an output that
/// cannot be written is reported before any input is read.
pub enum Output {
    /// A temporary file that becomes `target` on [`commit`](Self::commit),
    /// or disappears when dropped (or on Ctrl-C).
    File {
        /// `None` once committed or removed.
        temp: Option<NamedTempFile>,
        target: PathBuf,
    },
    /// `-`: held in memory and written on commit, so that a failed or
    /// restarted transfer writes nothing (`pull` may start again).
    Stdout(Vec<u8>),
}

impl Output {
    /// Creates the temporary file in `target`'s directory (the rename must
    /// not cross file systems), or an in-memory buffer for `-`.
    pub fn create(target: &Path) -> Result<Self> {
        if target.as_os_str() == "-" {
            return Ok(Self::Stdout(Vec::new()));
        }
        if target.is_dir() {
            return Err(Failure::new(format!(
                "{} is a directory: name the output file",
                target.display()
            )));
        }
        let dir = parent_dir(target);
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "filter".into());
        let temp = tempfile::Builder::new()
            .prefix(&format!(".{name}.ccf-tmp-"))
            .tempfile_in(&dir)
            .context(|| format!("cannot create a file in {}", dir.display()))?;
        signals::remove_on_signal(temp.path());
        Ok(Self::File {
            temp: Some(temp),
            target: target.to_path_buf(),
        })
    }

    /// The name to show: the path, or `<stdout>`.
    pub fn name(&self) -> String {
        match self {
            Self::File { target, .. } => target.display().to_string(),
            Self::Stdout(_) => "<stdout>".into(),
        }
    }

    /// Starts over with an empty output (a retried transfer).
    pub fn truncate(&mut self) -> Result<()> {
        use std::io::Seek;
        match self {
            Self::File { temp, .. } => {
                let temp = temp.as_mut().expect("truncated before commit");
                let file = temp.as_file_mut();
                file.set_len(0)
                    .and_then(|()| file.rewind())
                    .context(|| format!("truncating {}", temp.path().display()))
            }
            Self::Stdout(buffer) => {
                buffer.clear();
                Ok(())
            }
        }
    }

    /// Flushes the file to disk and renames it over the target, or writes
    /// the buffer to stdout.
    pub fn commit(mut self) -> Result<()> {
        match &mut self {
            Self::File { temp, target } => {
                let file = temp.take().expect("committed once");
                file.as_file()
                    .sync_all()
                    .context(|| format!("flushing {}", file.path().display()))?;
                // From here the file is the target's: a signal must not
                // remove it.
                signals::keep_on_signal();
                file.persist(&*target)
                    .map_err(|e| e.error)
                    .context(|| format!("renaming into {}", target.display()))?;
                // The rename is durable once the directory is: best effort
                // (some file systems refuse to sync a directory).
                if let Ok(dir) = File::open(parent_dir(target)) {
                    let _ = dir.sync_all();
                }
                Ok(())
            }
            Self::Stdout(buffer) => {
                let mut out = std::io::stdout().lock();
                out.write_all(buffer)
                    .and_then(|()| out.flush())
                    .map_err(crate::fail::output_error)
            }
        }
    }
}

impl Write for Output {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        match self {
            Self::File { temp, .. } => temp.as_mut().expect("written before commit").write(bytes),
            Self::Stdout(buffer) => buffer.write(bytes),
        }
    }

    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match self {
            Self::File { temp, .. } => temp
                .as_mut()
                .expect("written before commit")
                .write_all(bytes),
            Self::Stdout(buffer) => buffer.write_all(bytes),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Self::File { temp, .. } => temp.as_mut().expect("flushed before commit").flush(),
            Self::Stdout(_) => Ok(()),
        }
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if let Self::File { temp, .. } = self {
            if let Some(temp) = temp.take() {
                // Removed first, then forgotten by the handler: a signal in
                // between unlinks a name that is gone, which is harmless.
                let _ = temp.close();
                signals::keep_on_signal();
            }
        }
    }
}

fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}
