//! Signals, as the shell expects them: Ctrl-C (`SIGINT`), `SIGTERM` and
//! `SIGHUP` print one line, remove the temporary file of an unfinished
//! [`Output`](crate::atomic::Output) and end with status 128 + the
//! signal's number (130 for Ctrl-C, 143 for `SIGTERM`); a closed output
//! pipe ends the process as it ends `grep`: by `SIGPIPE`, silently. A
//! push needs nothing here: its temporary key expires by itself.

#[cfg(unix)]
mod imp {
    use std::ffi::CString;
    use std::path::Path;
    use std::ptr::null_mut;
    use std::sync::atomic::{AtomicPtr, Ordering::SeqCst};

    /// The temporary file to remove, from `CString::into_raw` (or null).
    static TEMP: AtomicPtr<libc::c_char> = AtomicPtr::new(null_mut());

    const MESSAGE: &[u8] =
        b"ccf: error: interrupted: existing files and keys were left as they were\n";

    extern "C" fn on_signal(signal: libc::c_int) {
        // Only async-signal-safe calls: `unlink`, `write`, `_exit`.
        let temp = TEMP.swap(null_mut(), SeqCst);
        // SAFETY: a non-null `temp` is a NUL-terminated string from
        // `CString::into_raw`; taking it out of `TEMP` made this handler
        // its only user, so nothing frees it meanwhile (it is leaked, as
        // the process ends). `MESSAGE` is a valid buffer of its length.
        unsafe {
            if !temp.is_null() {
                libc::unlink(temp);
            }
            libc::write(2, MESSAGE.as_ptr().cast(), MESSAGE.len());
            libc::_exit(128 + signal);
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

    /// Ends the process by `SIGPIPE` (Rust ignores it, so a closed pipe
    /// arrives as an error; the shell expects the signal).
    pub fn die_of_broken_pipe() -> std::process::ExitCode {
        // SAFETY: restoring the default action and raising a signal touch
        // no memory of ours.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            libc::raise(libc::SIGPIPE);
        }
        // Not reached where SIGPIPE ends the process.
        std::process::ExitCode::from(141)
    }
}

/// No signal handling elsewhere: the temporary file may stay behind.
#[cfg(not(unix))]
mod imp {
    pub fn install() {}
    pub fn remove_on_signal(_: &std::path::Path) {}
    pub fn keep_on_signal() {}
    pub fn die_of_broken_pipe() -> std::process::ExitCode {
        std::process::ExitCode::from(2)
    }
}

pub use imp::{die_of_broken_pipe, install, keep_on_signal, remove_on_signal};
