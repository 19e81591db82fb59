//! Files that appear whole: the one way every atomzero crate writes a file.
//!
//! A write goes to a temporary file beside the target (same directory, so the rename cannot
//! cross file systems), which is written, synced, renamed over the target; then the directory
//! is synced so the rename itself survives a power cut. A reader, or a process that starts
//! after a crash at any point, sees the old file or the new one, never a partial one
//! (`tests` kill a writer after every [`Step`]).
//!
//! Temporary names follow one rule, [`temporary_path`]: `.<name>.<pid>-<n>.tmp` (hidden, the
//! writer's process id and a per-process counter, so two threads writing the same target do
//! not share a temporary). [`is_temporary`] recognises them (`.` first, `.tmp` last, which
//! also matches the `.<name>.<pid>.tmp` names of earlier versions, though not eval's old
//! `.<name>.tmp-<pid>`) and [`remove_stale_temporaries`] removes the ones a killed process
//! left. A temporary directory (a checkpoint written file by file, then renamed
//! whole) is named by the same rule.
//!
//! Errors are [`std::io::Error`]s; callers add the path in their own error types.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The points a write passes, in order; a writer killed right after any of them leaves the
/// old file or the new one under the target's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The temporary file exists, empty.
    Created,
    /// Half of the bytes are in the temporary file.
    HalfWritten,
    /// All of the bytes are in the temporary file.
    Written,
    /// The temporary file is synced to disk.
    FileSynced,
    /// The temporary file has been renamed over the target.
    Renamed,
    /// The directory is synced: the write is durable.
    DirectorySynced,
}

impl Step {
    /// Every step, in the order a write passes them.
    pub const ALL: [Step; 6] = [
        Step::Created,
        Step::HalfWritten,
        Step::Written,
        Step::FileSynced,
        Step::Renamed,
        Step::DirectorySynced,
    ];
}

/// A fresh temporary name beside `target`: `.<name>.<pid>-<n>.tmp`.
pub fn temporary_path(target: &Path) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    target.with_file_name(format!(".{name}.{}-{n}.tmp", std::process::id()))
}

/// Whether a file name is a temporary's (the rule of [`temporary_path`]: a hidden name ending
/// in `.tmp`). Such files are never read as data and may be removed once their writer is gone.
pub fn is_temporary(file_name: &str) -> bool {
    file_name.starts_with('.') && file_name.ends_with(".tmp")
}

/// The directory `path` is in (`.` for a bare file name).
fn parent_dir(path: &Path) -> &Path {
    path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// Syncs a directory, so that a rename or link inside it survives a crash. Platforms that
/// cannot open a directory skip it.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    match File::open(dir) {
        Ok(dir) => dir.sync_all(),
        Err(_) => Ok(()),
    }
}

/// Writes `bytes` to `path` so that readers see either the old or the new file, never a
/// partial one: a synced temporary beside it, renamed over it, the directory synced. The
/// directory must exist. On an error the temporary is removed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_until(path, bytes, None)
}

/// [`write_atomic`] as a process killed right after `step` would leave it: the remaining
/// steps are not taken and nothing is cleaned up. For tests of what a crash leaves behind.
#[doc(hidden)]
pub fn write_atomic_killed_after(path: &Path, bytes: &[u8], step: Step) -> io::Result<()> {
    write_until(path, bytes, Some(step))
}

fn write_until(path: &Path, bytes: &[u8], killed_after: Option<Step>) -> io::Result<()> {
    let killed = |step| killed_after == Some(step);
    let (temporary, mut file) = Temporary::create(path)?;
    if killed(Step::Created) {
        temporary.abandon();
        return Ok(());
    }
    let half = bytes.len() / 2;
    file.write_all(&bytes[..half])?;
    if killed(Step::HalfWritten) {
        file.flush()?;
        temporary.abandon();
        return Ok(());
    }
    file.write_all(&bytes[half..])?;
    if killed(Step::Written) {
        temporary.abandon();
        return Ok(());
    }
    file.sync_all()?;
    drop(file);
    if killed(Step::FileSynced) {
        temporary.abandon();
        return Ok(());
    }
    temporary.rename_over_unsynced(path)?;
    if killed(Step::Renamed) {
        return Ok(());
    }
    sync_dir(parent_dir(path))
}

/// A temporary file beside a target, removed when dropped unless it has been moved into place.
#[derive(Debug)]
pub struct Temporary {
    path: PathBuf,
    placed: bool,
}

impl Temporary {
    /// Creates an empty temporary beside `target` (named by [`temporary_path`]).
    fn create(target: &Path) -> io::Result<(Temporary, File)> {
        let path = temporary_path(target);
        let file = File::create(&path)?;
        Ok((Temporary { path, placed: false }, file))
    }

    /// Writes `bytes` to a synced temporary beside `target`, to be put in place by
    /// [`Temporary::rename_over`] or [`Temporary::link_new`].
    pub fn write(target: &Path, bytes: &[u8]) -> io::Result<Temporary> {
        let (temporary, mut file) = Temporary::create(target)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        Ok(temporary)
    }

    /// The temporary's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Renames the temporary over `target` (replacing what is there) and syncs the directory.
    pub fn rename_over(self, target: &Path) -> io::Result<()> {
        self.rename_over_unsynced(target)?;
        sync_dir(parent_dir(target))
    }

    /// Puts the temporary at `target` only if no file has that name (a hard link, atomic also
    /// on NFS: an existing name fails with [`io::ErrorKind::AlreadyExists`]), removes the
    /// temporary and syncs the directory.
    pub fn link_new(self, target: &Path) -> io::Result<()> {
        std::fs::hard_link(&self.path, target)?;
        drop(self);
        sync_dir(parent_dir(target))
    }

    fn rename_over_unsynced(mut self, target: &Path) -> io::Result<()> {
        std::fs::rename(&self.path, target)?;
        self.placed = true;
        Ok(())
    }

    /// Leaves the temporary on disk, as a killed process would.
    fn abandon(mut self) {
        self.placed = true;
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        if !self.placed {
            // Best effort: the temporary is useless now.
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Removes the temporary files ([`is_temporary`]) under `root`, in every directory below it,
/// last modified more than `min_age` ago: a younger one may be a write in progress (another
/// process sharing the directory). Temporary directories are left alone; what cannot be read
/// or removed is skipped.
pub fn remove_stale_temporaries(root: &Path, min_age: Duration) {
    let stale = |path: &Path| {
        std::fs::metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age >= min_age)
    };
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.filter_map(|e| e.ok()) {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                stack.push(path);
            } else if is_temporary(&name) && stale(&path) {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
}
