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
                    interrupt::remove_on_signal(&temp);
                    return Ok(Self {
                        file: Some(file),
                        temp,
                        target: target.to_path_buf(),
                        committed: false,
                    });
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
        interrupt::keep_on_signal();
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
            interrupt::keep_on_signal();
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

/// Ctrl-C (and `SIGTERM`, `SIGHUP`): one line on stderr, the temporary
/// file of an unfinished [`AtomicFile`] removed, exit status 2. A push
/// needs nothing here: its temporary key expires by itself.
#[cfg(unix)]
pub mod interrupt {
    use std::ffi::CString;
    use std::path::Path;
    use std::ptr::null_mut;
    use std::sync::atomic::{AtomicPtr, Ordering::SeqCst};

    /// The temporary file to remove, from `CString::into_raw` (or null).
    static TEMP: AtomicPtr<libc::c_char> = AtomicPtr::new(null_mut());

    const MESSAGE: &[u8] =
        b"ccf: error: interrupted: existing files and keys were left as they were\n";

    extern "C" fn on_signal(_: libc::c_int) {
        // Only async-signal-safe calls: `unlink`, `write`, `_exit`.
        let temp = TEMP.swap(null_mut(), SeqCst);
        // SAFETY: a non-null `temp` is a NUL-terminated string from
        // `CString::into_raw`; taking it out of `TEMP` made this handler
        // its only user, so nothing frees it meanwhile (it is leaked,
        // as the process ends). `MESSAGE` is a valid buffer of its length.
        unsafe {
            if !temp.is_null() {
                libc::unlink(temp);
            }
            libc::write(2, MESSAGE.as_ptr().cast(), MESSAGE.len());
            libc::_exit(2);
        }
    }

    /// Installs the handler (once, at start).
    pub fn install() {
        let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: `on_signal` makes only async-signal-safe calls and
            // touches only an atomic.
            unsafe {
                libc::signal(signal, handler);
            }
        }
    }

    /// `path` is removed if a signal ends the process.
    pub fn remove_on_signal(path: &Path) {
        use std::os::unix::ffi::OsStrExt;
        if let Ok(c) = CString::new(path.as_os_str().as_bytes()) {
            let old = TEMP.swap(c.into_raw(), SeqCst);
            free(old);
        }
    }

    /// Nothing to remove any more.
    pub fn keep_on_signal() {
        free(TEMP.swap(null_mut(), SeqCst));
    }

    fn free(ptr: *mut libc::c_char) {
        if !ptr.is_null() {
            // SAFETY: every pointer stored in `TEMP` came from
            // `CString::into_raw`, and swapping it out gave it to us alone.
            drop(unsafe { CString::from_raw(ptr) });
        }
    }
}

/// No signal handling elsewhere: the temporary file may stay behind.
#[cfg(not(unix))]
pub mod interrupt {
    pub fn install() {}
    pub fn remove_on_signal(_: &std::path::Path) {}
    pub fn keep_on_signal() {}
}
