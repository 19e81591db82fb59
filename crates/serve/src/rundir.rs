//! The run directory as the server sees it: request paths resolved to files strictly inside
//! it, listings of the files the pages read, and a fingerprint of everything that changes while
//! a run is live.
//!
//! [`resolve`] is the one door from a request to the file system. A relative path is accepted
//! only if every `/`-separated component is a plain name (not empty, not `.` or `..`, not
//! starting with `.`, no `\` or NUL); the joined path is canonicalized (symlinks followed) and
//! must still lie under the canonical run directory and be a regular file. Anything else is
//! `None`, which the HTTP layer answers with 404 whatever the reason, so a probe learns nothing
//! about files outside.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The file `relative` names under `root` (canonical), if it is a regular file inside it.
pub fn resolve(root: &Path, relative: &str) -> Option<PathBuf> {
    if relative.is_empty() || relative.contains(['\\', '\0']) {
        return None;
    }
    let mut path = root.to_path_buf();
    for component in relative.split('/') {
        if component.is_empty() || component.starts_with('.') {
            return None;
        }
        path.push(component);
    }
    let canonical = path.canonicalize().ok()?;
    (canonical.starts_with(root) && canonical.is_file()).then_some(canonical)
}

/// A file of the run directory, listed for the pages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Path relative to the run directory, `/`-separated.
    pub relative: String,
    /// Size in bytes.
    pub len: u64,
    /// Last modification.
    pub modified: Option<SystemTime>,
}

/// The regular files of `root/dir` whose name ends with `suffix` (hidden and temporary files
/// skipped, and symlinks: an entry's own type is read, not its target's), sorted by name. A
/// missing directory, or one that resolves outside the run directory, lists nothing.
pub fn list(root: &Path, dir: &str, suffix: &str) -> Vec<Entry> {
    let Some(dir_path) = resolve_dir(root, dir) else { return Vec::new() };
    let Ok(read) = std::fs::read_dir(dir_path) else { return Vec::new() };
    let mut entries: Vec<Entry> = read
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            if name.starts_with('.') || !name.ends_with(suffix) {
                return None;
            }
            // `DirEntry::metadata` does not follow symlinks: a link is not a regular file.
            let meta = e.metadata().ok().filter(|m| m.is_file())?;
            Some(Entry {
                relative: format!("{dir}/{name}"),
                len: meta.len(),
                modified: meta.modified().ok(),
            })
        })
        .collect();
    entries.sort_by(|a, b| a.relative.cmp(&b.relative));
    entries
}

/// The text of `root/relative` (`root` canonical), or `None` if it is missing, not UTF-8, or
/// not a regular file inside the run directory: the path goes through [`resolve`], so a
/// symlink that leads out of the run (`log.txt -> /etc/passwd`) reads as missing.
pub fn read_text(root: &Path, relative: &str) -> Option<String> {
    std::fs::read_to_string(resolve(root, relative)?).ok()
}

/// The directory `root/relative` (`root` canonical) if it is a directory inside the run
/// directory after symlinks are followed (`tensorboard -> /elsewhere` is `None`).
pub fn resolve_dir(root: &Path, relative: &str) -> Option<PathBuf> {
    if relative.is_empty()
        || relative.contains(['\\', '\0'])
        || relative.split('/').any(|c| c.is_empty() || c.starts_with('.'))
    {
        return None;
    }
    let canonical = root.join(relative).canonicalize().ok()?;
    (canonical.starts_with(root) && canonical.is_dir()).then_some(canonical)
}

/// Files and directories whose changes the pages show (see [`fingerprint`]).
const WATCHED_FILES: [&str; 8] = [
    "run.json",
    "log.txt",
    "timeline.jsonl",
    "config.toml",
    "models/best.json",
    "eval/results.jsonl",
    "eval/gates.jsonl",
    "eval/ratings.csv",
];
const WATCHED_DIRS: [(&str, &str); 6] = [
    ("selfplay", ".shard"),
    ("eval", ".pgn"),
    ("models", ".safetensors"),
    ("tensorboard", ""),
    ("play", ".pgn"),
    ("checkpoints", ""),
];

/// A number that changes when anything the pages show changes (size or modification time of
/// the watched files, the entries of the watched directories), and the newest modification time
/// among them.
pub fn fingerprint(root: &Path) -> (u64, Option<SystemTime>) {
    // FNV-1a over the names, sizes and times.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    let mut newest: Option<SystemTime> = None;
    let mut note =
        |name: &str, len: u64, modified: Option<SystemTime>, eat: &mut dyn FnMut(&[u8])| {
            eat(name.as_bytes());
            eat(&len.to_le_bytes());
            let nanos = modified
                .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            eat(&nanos.to_le_bytes());
            if let Some(t) = modified {
                newest = Some(newest.map_or(t, |n| n.max(t)));
            }
        };
    for file in WATCHED_FILES {
        if let Some(meta) = resolve(root, file).and_then(|path| std::fs::metadata(path).ok()) {
            note(file, meta.len(), meta.modified().ok(), &mut eat);
        }
    }
    for (dir, suffix) in WATCHED_DIRS {
        if dir == "checkpoints" {
            // Directories, not files: their names are the training steps.
            for name in checkpoint_steps(root) {
                note(&name.to_string(), 0, None, &mut eat);
            }
            continue;
        }
        for entry in list(root, dir, suffix) {
            note(&entry.relative, entry.len, entry.modified, &mut eat);
        }
    }
    (hash, newest)
}

/// The training steps of the trainer checkpoints kept in `checkpoints/step-NNNNNNNN/`.
pub fn checkpoint_steps(root: &Path) -> Vec<u64> {
    let Some(dir) = resolve_dir(root, "checkpoints") else { return Vec::new() };
    let Ok(read) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut steps: Vec<u64> = read
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.strip_prefix("step-")?.parse().ok())
        .collect();
    steps.sort_unstable();
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_accepts_plain_paths_and_nothing_else() {
        let root =
            std::env::temp_dir().join(format!("atomzero-serve-rundir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("eval")).unwrap();
        std::fs::write(root.join("eval/a.pgn"), "x").unwrap();
        std::fs::write(root.join(".hidden"), "x").unwrap();
        let root = root.canonicalize().unwrap();
        assert_eq!(resolve(&root, "eval/a.pgn"), Some(root.join("eval/a.pgn")));
        for bad in [
            "",
            "eval",
            "eval/",
            "/etc/passwd",
            "../x",
            "eval/../eval/a.pgn",
            "./eval/a.pgn",
            "eval//a.pgn",
            ".hidden",
            "eval\\a.pgn",
            "eval/a.pgn\0",
            "missing",
        ] {
            assert_eq!(resolve(&root, bad), None, "{bad:?}");
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/etc/hostname", root.join("eval/link.pgn")).unwrap();
            assert_eq!(resolve(&root, "eval/link.pgn"), None, "a symlink out of the run");
        }
        let listed: Vec<String> =
            list(&root, "eval", ".pgn").into_iter().map(|e| e.relative).collect();
        assert!(listed.contains(&"eval/a.pgn".to_string()));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
