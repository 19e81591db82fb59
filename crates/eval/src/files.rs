//! Writing evaluation artifacts the way the run directory expects: whole files appear by
//! rename (a reader never sees half a file), and `results.jsonl` grows by appending one
//! complete line per write.

use std::io::Write;
use std::path::Path;

/// Writes `contents` to `path` through a temporary file in the same directory and a rename.
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{file_name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(contents)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Appends `line` and a newline to `path` (created if missing) in one write, so concurrent
/// appenders never interleave within a line.
pub fn append_line(path: &Path, line: &str) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
    file.write_all(format!("{line}\n").as_bytes())?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_by_rename_and_appends_lines() {
        let dir = std::env::temp_dir().join(format!("atomzero-eval-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("ratings.csv");
        write_atomic(&path, b"a\n").unwrap();
        write_atomic(&path, b"b\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "b\n");
        let log = dir.join("results.jsonl");
        append_line(&log, "{}").unwrap();
        append_line(&log, "{\"x\":1}").unwrap();
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "{}\n{\"x\":1}\n");
        let leftovers = std::fs::read_dir(&dir).unwrap().count();
        assert_eq!(leftovers, 2, "no temporary files left");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
