//! Appending to evaluation logs the way the run directory expects: `results.jsonl` grows by
//! one complete line per write. Whole files appear by `atomzero_files::write_atomic`.

use std::io::Write;
use std::path::Path;

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
    fn appends_lines() {
        let dir = std::env::temp_dir().join(format!("atomzero-eval-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("results.jsonl");
        append_line(&log, "{}").unwrap();
        append_line(&log, "{\"x\":1}").unwrap();
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "{}\n{\"x\":1}\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
