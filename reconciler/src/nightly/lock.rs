//! One nightly run per knowledge base at a time: a second run started while one is going
//! stops at once with a clear message, before it opens the store or touches a checkout. The
//! lock is the operating system's lock on a file beside the store, released when the
//! process ends however it ends, so a crashed run never leaves a stale lock behind.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

/// Why the lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another run holds it.
    #[error(
        "another `retrace nightly` is running on the knowledge base {store} (it holds {lock}); wait for it to finish and run again"
    )]
    Busy {
        /// The knowledge base.
        store: String,
        /// The lock file.
        lock: String,
    },
    /// The lock file could not be created or locked.
    #[error("cannot lock {lock} for the knowledge base: {message}")]
    Io {
        /// The lock file.
        lock: String,
        /// What went wrong.
        message: String,
    },
}

/// The held lock; dropping it releases it.
#[derive(Debug)]
pub struct RunLock {
    _file: File,
    path: PathBuf,
}

impl RunLock {
    /// Takes the lock of the knowledge base at `store` (the file `STORE.lock`), or fails at
    /// once when another run holds it.
    pub fn acquire(store: &Path) -> Result<RunLock, LockError> {
        let mut name = store.as_os_str().to_owned();
        name.push(".lock");
        let path = PathBuf::from(name);
        let io = |e: std::io::Error| LockError::Io {
            lock: path.display().to_string(),
            message: e.to_string(),
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => Ok(RunLock { _file: file, path }),
            Err(TryLockError::WouldBlock) => Err(LockError::Busy {
                store: store.display().to_string(),
                lock: path.display().to_string(),
            }),
            Err(TryLockError::Error(e)) => Err(io(e)),
        }
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_run_is_refused_until_the_first_ends() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = dir.path().join("kb.sqlite");
        let first = RunLock::acquire(&store).expect("the first run locks");
        let second = RunLock::acquire(&store).expect_err("the second is refused");
        let text = second.to_string();
        assert!(
            text.contains("another `retrace nightly` is running"),
            "{text}"
        );
        assert!(text.contains("kb.sqlite.lock"), "{text}");
        assert_eq!(first.path(), dir.path().join("kb.sqlite.lock"));
        drop(first);
        RunLock::acquire(&store).expect("free again");
    }
}
