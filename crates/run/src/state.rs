//! `run.json`: where the trainer is (format [`STATE_FORMAT`]), and `models/best.json`: the
//! best network. Both are written by compare-and-swap on the version the trainer last read
//! or wrote, so a second trainer on the same run fails on its first write instead of
//! corrupting them.

use crate::error::{Result, RunError};
use crate::layout::STATE;
use crate::promotion::Models;
use atomzero_eval::ResultsLine;
use atomzero_store::{PutMode, Store, Version};
use serde::{Deserialize, Serialize};

/// Format version of `run.json`.
pub const STATE_FORMAT: u32 = 1;

/// Where the loop is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunState {
    /// Always [`STATE_FORMAT`].
    pub format: u32,
    /// The generation in progress (1-based; 0 while the initial network is made).
    pub generation: u64,
    /// The stage of that generation.
    pub stage: Stage,
    /// Wall time spent in earlier sessions and finished stages of this one.
    pub elapsed_secs: f64,
    /// CPU time (all threads of the process) spent in the same (0 in runs from before it was
    /// recorded).
    #[serde(default)]
    pub cpu_secs: f64,
    /// The trainer's step target of this generation (fixed when training starts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub train_target: Option<u64>,
    /// The gate's decision of this generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateRecord>,
    /// The trainer stopped because its budget was spent (workers stop too); cleared when a
    /// larger budget continues the run. Absent (false) in runs from before workers existed.
    #[serde(default, skip_serializing_if = "is_false")]
    pub finished: bool,
    /// The run's wall seconds (`elapsed_secs`) when this generation began, so that its
    /// summary line gives its whole time after a resume (absent in runs from before it was
    /// recorded: the line then counts this session only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation_start_secs: Option<f64>,
    /// The summary-line parts of this generation's finished stages (self-play, training),
    /// saved with the stage, so that the line written after a resume still shows them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub done: Vec<String>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl RunState {
    /// The state of a new run.
    pub fn new() -> RunState {
        RunState {
            format: STATE_FORMAT,
            generation: 0,
            stage: Stage::Init,
            elapsed_secs: 0.0,
            cpu_secs: 0.0,
            train_target: None,
            gate: None,
            finished: false,
            generation_start_secs: None,
            done: Vec::new(),
        }
    }
}

impl Default for RunState {
    fn default() -> RunState {
        RunState::new()
    }
}

/// The stages of a generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Making the initial network and evaluating it.
    Init,
    /// Self-play (or, with workers, waiting for their games).
    Selfplay,
    /// Training the candidate.
    Train,
    /// The gating match.
    Gate,
    /// Promotion.
    Promote,
    /// Evaluation against the baselines.
    Eval,
}

/// A gating decision kept in `run.json` until the promotion is done.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateRecord {
    /// The candidate passed.
    pub passed: bool,
    /// The gate's verdict in words.
    pub describe: String,
    /// The match, if one was played.
    pub line: Option<ResultsLine>,
}

/// Reads `run.json` with its version (`None`: no run yet).
pub fn load_state(store: &Store) -> Result<Option<(RunState, Version)>> {
    let Some(object) = store.get(STATE)? else { return Ok(None) };
    let corrupt = |reason: String| RunError::Corrupt { location: store.describe(STATE), reason };
    let state: RunState = serde_json::from_slice(&object.bytes)
        .map_err(|e| corrupt(format!("not a run state this build can read ({e})")))?;
    if state.format != STATE_FORMAT {
        return Err(corrupt(format!("format {} (this build reads {STATE_FORMAT})", state.format)));
    }
    Ok(Some((state, object.version)))
}

/// Writes `run.json` if it is still at `version` (`None`: if there is none); returns the new
/// version. Another writer in between is [`RunError::AnotherTrainer`].
pub fn save_state(store: &Store, state: &RunState, version: Option<&Version>) -> Result<Version> {
    let text = serde_json::to_string_pretty(state).map_err(|e| RunError::Corrupt {
        location: store.describe(STATE),
        reason: e.to_string(),
    })?;
    let mode = match version {
        Some(v) => PutMode::Replace(v.clone()),
        None => PutMode::Create,
    };
    store.put(STATE, text.as_bytes(), mode).map_err(|e| match e {
        atomzero_store::StoreError::Exists { location } => RunError::AnotherTrainer { location },
        e => e.into(),
    })
}

/// The best network's name (`000003`) and the pointer's version. The pointer must name a
/// network of the run ([`Models::read_best`]).
pub fn read_best(store: &Store) -> Result<Option<(String, Version)>> {
    Models::of_run(store).read_best()
}

/// Points `best.json` at `name` if the pointer is still at `version` (`None`: if there is
/// none).
pub fn write_best(store: &Store, name: &str, version: Option<&Version>) -> Result<Version> {
    Models::of_run(store).write_best(name, version)
}
