//! Line-oriented records of a run, each rewritten whole through the store (one writer, the
//! trainer): match results (`eval/results.jsonl`, `eval/gates.jsonl`, a gauntlet's
//! `results.jsonl`: one [`ResultsLine`] per match, keyed by label), the summary log
//! (`log.txt`) and the timeline (`timeline.jsonl`, format [`TIMELINE_FORMAT`]).

use crate::error::{Result, RunError};
use atomzero_eval::{MatchResult, ResultsLine, read_results};
use atomzero_store::{PutMode, Store};
use serde::{Deserialize, Serialize};

/// The text of `key` (empty if there is no such object).
pub fn read_text(store: &Store, key: &str) -> Result<String> {
    match store.get(key)? {
        None => Ok(String::new()),
        Some(object) => String::from_utf8(object.bytes).map_err(|_| RunError::Corrupt {
            location: store.describe(key),
            reason: "not UTF-8 text".into(),
        }),
    }
}

/// Appends `line` (without its newline) to the text object `key` unless `present` says an
/// existing line already stands for it.
pub fn append_line_unless(
    store: &Store,
    key: &str,
    line: &str,
    present: impl Fn(&str) -> bool,
) -> Result<()> {
    let mut text = read_text(store, key)?;
    if text.lines().any(present) {
        return Ok(());
    }
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(line);
    text.push('\n');
    store.put(key, text.as_bytes(), PutMode::Overwrite)?;
    Ok(())
}

/// Every match result in `key`.
pub fn read_results_at(store: &Store, key: &str) -> Result<Vec<ResultsLine>> {
    let text = read_text(store, key)?;
    read_results(&text)
        .map_err(|e| RunError::Corrupt { location: store.describe(key), reason: e.to_string() })
}

/// Appends `line` to the results in `key` unless a line with the same label is there.
pub fn append_result_once(store: &Store, key: &str, line: &ResultsLine) -> Result<()> {
    let existing = read_results_at(store, key)?;
    if existing.iter().any(|l| l.label.is_some() && l.label == line.label) {
        return Ok(());
    }
    append_line_unless(store, key, &line.to_json(), |_| false)
}

/// The result recorded under `label` in `key`, if any.
pub fn find_result(store: &Store, key: &str, label: &str) -> Result<Option<ResultsLine>> {
    Ok(read_results_at(store, key)?.into_iter().find(|l| l.label.as_deref() == Some(label)))
}

/// What [`labelled_match`] found or played.
#[derive(Debug)]
pub enum Labelled {
    /// Recorded earlier under the label: not replayed.
    Recorded(ResultsLine),
    /// Played now and appended under the label.
    Played(ResultsLine, Box<MatchResult>),
    /// Played now and interrupted: nothing recorded.
    Interrupted,
}

impl Labelled {
    /// The recorded line (`None` if interrupted).
    pub fn line(&self) -> Option<&ResultsLine> {
        match self {
            Labelled::Recorded(line) | Labelled::Played(line, _) => Some(line),
            Labelled::Interrupted => None,
        }
    }
}

/// One labelled match (the trainer's evaluation against a baseline, a gauntlet's pairing):
/// the line recorded under `label` in `key` if there is one, so a match is never played twice;
/// else the match `play` plays (`None`: interrupted, nothing recorded), appended under the
/// label once finished.
pub fn labelled_match(
    store: &Store,
    key: &str,
    label: &str,
    play: impl FnOnce() -> Result<Option<MatchResult>>,
) -> Result<Labelled> {
    if let Some(line) = find_result(store, key, label)? {
        return Ok(Labelled::Recorded(line));
    }
    let Some(result) = play()? else { return Ok(Labelled::Interrupted) };
    let line = ResultsLine::from_match(&result, Some(label));
    append_result_once(store, key, &line)?;
    Ok(Labelled::Played(line, Box::new(result)))
}

/// Format version of `timeline.jsonl` lines.
pub const TIMELINE_FORMAT: u32 = 1;

/// One line of `timeline.jsonl`: the run when a generation ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimelineLine {
    /// Always [`TIMELINE_FORMAT`].
    pub format: u32,
    /// The generation that ended.
    pub generation: u64,
    /// The best network after it (`models/<best>.safetensors`).
    pub best: String,
    /// Wall time of the run so far, all sessions (seconds).
    pub elapsed_secs: f64,
    /// CPU time of the run so far, all sessions, all threads (seconds): the trainer's
    /// process (self-play workers of a distributed run are not counted).
    pub cpu_secs: f64,
    /// CPU cores the process could use.
    pub cores: usize,
}

/// Reads a run's `timeline.jsonl` (no object: empty).
pub fn read_timeline(store: &Store) -> Result<Vec<TimelineLine>> {
    let key = crate::layout::TIMELINE;
    let text = read_text(store, key)?;
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let corrupt = |reason: String| RunError::Corrupt { location: store.describe(key), reason };
        let line: TimelineLine =
            serde_json::from_str(raw).map_err(|e| corrupt(format!("line {}: {e}", i + 1)))?;
        if line.format != TIMELINE_FORMAT {
            return Err(corrupt(format!(
                "line {}: format {} (this build reads {TIMELINE_FORMAT})",
                i + 1,
                line.format
            )));
        }
        lines.push(line);
    }
    Ok(lines)
}
