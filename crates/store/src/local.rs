//! A run in a local directory (or a shared file system): keys are relative paths.
//!
//! - Whole writes (`atomzero_files`): the bytes go to `.<name>.<pid>-<n>.tmp` beside the
//!   target, are synced and renamed over it, and the directory is synced (a reader sees the
//!   old file or the new one). Temporary files of a killed process start with `.` and end in
//!   `.tmp`; they are never listed and may be removed.
//! - Create-only: the synced temporary file is hard-linked to the name, which fails if the
//!   name exists (atomic also on NFS), then removed; the directory is synced.
//! - Compare-and-swap: under an exclusive lock on `<root>/.store.lock`, the current file's
//!   content hash is compared with the expected version before the rename. Every process
//!   that writes with [`PutMode::Replace`] takes the lock, so two of them cannot interleave.
//! - A version is the length and 64-bit FNV-1a hash of the content.

use crate::{Backend, BackendError, Entry, Object, PutMode, Version};
use atomzero_files::Temporary;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// Objects as files under a directory.
#[derive(Debug)]
pub struct LocalBackend {
    root: PathBuf,
}

impl LocalBackend {
    /// A store rooted at `root` (created on the first write).
    pub fn new(root: PathBuf) -> LocalBackend {
        LocalBackend { root }
    }

    fn path(&self, key: &str) -> PathBuf {
        self.root.join(key)
    }
}

/// The version of a local object: its length and FNV-1a hash.
pub(crate) fn content_version(bytes: &[u8]) -> Version {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    Version::new(format!("{}-{hash:016x}", bytes.len()), None)
}

fn io_error(what: &str, path: &Path, e: &std::io::Error) -> BackendError {
    let message = format!("{what} {}: {e}", path.display());
    match e.kind() {
        ErrorKind::Interrupted | ErrorKind::TimedOut | ErrorKind::WouldBlock => {
            BackendError::Transient(message)
        }
        _ => BackendError::Permanent(message),
    }
}

/// Writes `bytes` to a synced temporary file beside `path` (`atomzero_files`' name rule),
/// creating the directory if needed.
fn write_temporary(path: &Path, bytes: &[u8]) -> Result<Temporary, BackendError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io_error("cannot create", dir, &e))?;
    }
    Temporary::write(path, bytes).map_err(|e| io_error("cannot write", path, &e))
}

fn read(path: &Path) -> Result<Option<Vec<u8>>, BackendError> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error("cannot read", path, &e)),
    }
}

impl Backend for LocalBackend {
    fn get(&self, key: &str) -> Result<Option<Object>, BackendError> {
        let path = self.path(key);
        Ok(read(&path)?.map(|bytes| {
            let version = content_version(&bytes);
            let modified_ms = std::fs::metadata(&path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_millis() as i64);
            Object { bytes, version, modified_ms }
        }))
    }

    fn put(&self, key: &str, bytes: &[u8], mode: &PutMode) -> Result<Version, BackendError> {
        let path = self.path(key);
        let tmp = write_temporary(&path, bytes)?;
        match mode {
            PutMode::Overwrite => {
                tmp.rename_over(&path).map_err(|e| io_error("cannot write", &path, &e))?;
            }
            PutMode::Create => match tmp.link_new(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::AlreadyExists => return Err(BackendError::Exists),
                Err(e) => return Err(io_error("cannot create", &path, &e)),
            },
            PutMode::Replace(expected) => {
                std::fs::create_dir_all(&self.root)
                    .map_err(|e| io_error("cannot create", &self.root, &e))?;
                let lock_path = self.root.join(".store.lock");
                let lock = std::fs::OpenOptions::new()
                    .create(true)
                    .truncate(false)
                    .write(true)
                    .open(&lock_path)
                    .map_err(|e| io_error("cannot open", &lock_path, &e))?;
                lock.lock().map_err(|e| io_error("cannot lock", &lock_path, &e))?;
                let current = read(&path)?.map(|b| content_version(&b));
                if current.as_ref() != Some(expected) {
                    return Err(BackendError::Conflict);
                }
                tmp.rename_over(&path).map_err(|e| io_error("cannot write", &path, &e))?;
                // The lock is released when `lock` is dropped.
            }
        }
        // On every early return above the temporary is dropped, which removes it.
        Ok(content_version(bytes))
    }

    fn list(&self, prefix: &str) -> Result<Vec<Entry>, BackendError> {
        // Walk the deepest directory the prefix names, then filter by the whole prefix.
        let dir_part = match prefix.rfind('/') {
            Some(i) => &prefix[..i],
            None => "",
        };
        let mut entries = Vec::new();
        let mut stack = vec![(self.root.join(dir_part), dir_part.to_string())];
        while let Some((dir, key_dir)) = stack.pop() {
            let listing = match std::fs::read_dir(&dir) {
                Ok(listing) => listing,
                Err(e) if e.kind() == ErrorKind::NotFound => continue,
                Err(e) if e.kind() == ErrorKind::NotADirectory => continue,
                Err(e) => return Err(io_error("cannot list", &dir, &e)),
            };
            for entry in listing {
                let entry = entry.map_err(|e| io_error("cannot list", &dir, &e))?;
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.starts_with('.') {
                    continue; // temporary files and the lock
                }
                let key =
                    if key_dir.is_empty() { name.clone() } else { format!("{key_dir}/{name}") };
                let file_type = entry.file_type().map_err(|e| io_error("cannot list", &dir, &e))?;
                if file_type.is_dir() {
                    if key.starts_with(prefix) || prefix.starts_with(&format!("{key}/")) {
                        stack.push((entry.path(), key));
                    }
                } else if key.starts_with(prefix) {
                    let size = entry.metadata().map_or(0, |m| m.len());
                    entries.push(Entry { key, size });
                }
            }
        }
        Ok(entries)
    }

    fn delete(&self, key: &str) -> Result<(), BackendError> {
        let path = self.path(key);
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io_error("cannot remove", &path, &e)),
        }
    }

    fn describe(&self, key: &str) -> String {
        self.path(key).display().to_string()
    }

    fn local_root(&self) -> Option<&Path> {
        Some(&self.root)
    }
}
