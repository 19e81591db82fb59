//! The binary's file writes: atomic writes (`atomzero_files`) with the directory created and
//! errors in words; the check, before a long job, that its output file can be written at the
//! end; appends for PGN.

use anyhow::{Context, Result, bail};
use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` so that readers see either the old or the new file, never half
/// (`atomzero_files::write_atomic`), creating its directory if needed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    atomzero_files::write_atomic(path, bytes)
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Checks, before any work, that [`write_atomic`] will be able to write `path`: it is not a
/// directory, and its directory exists (or can be made) and takes a new file. A match that
/// plays every game and only then finds `--pgn` pointing at a directory loses the games.
pub fn check_writable(path: &Path) -> Result<()> {
    if path.is_dir() {
        bail!("{} is a directory, not a file to write", path.display());
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let probe = dir.join(format!(".{name}.{}.probe", std::process::id()));
    std::fs::File::create(&probe).with_context(|| {
        format!("cannot write {} (its directory takes no new file)", path.display())
    })?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Appends `text` to `path` in one write (used for PGN: a crash loses at most the game being
/// written, never an earlier one).
pub fn append(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    file.write_all(text.as_bytes()).with_context(|| format!("cannot write {}", path.display()))
}
