//! Trainer checkpoints (format version 2; version 1 is still read), one directory per
//! checkpoint. What holds the weights and the optimizer state depends on the backend that
//! wrote it (`state.json`'s `backend`; absent in version 1, which only Burn wrote):
//!
//! ```text
//! checkpoints/step-00001500/
//!   state.json              TrainState: step, sampler state, architecture, encoding version,
//!                           variant, the resolved trainer config, parent net, backend
//!   backend "burn":
//!   model.bpk               the network's parameters as a Burn record (burnpack), parameter
//!                           ids included, so the optimizer state below maps onto them
//!   optimizer.bin           the optimizer state (Burn's OptimizerRecord bytes)
//!   backend "atomzero":
//!   model.safetensors       the weights, as `atomzero_nn`'s net files hold them
//!   optimizer.safetensors   atomzero-backprop's optimizer state (moments, step count)
//! ```
//!
//! A checkpoint of the other backend resumes with its weights and a fresh optimizer state.
//!
//! A checkpoint is written into a temporary directory and renamed into place, so a directory
//! named `step-*` is always complete; the newest `keep_checkpoints` are kept.

use crate::config::TrainerConfig;
use atomzero_backprop::{Optimizer, OptimizerConfig, Params};
use atomzero_nn::burn::module::Module;
use atomzero_nn::burn::optim::ModuleOptimizer;
use atomzero_nn::burn::store::ModuleRecord;
use atomzero_nn::burn::tensor::Bytes;
use atomzero_nn::{FieldDifference, Net, NetConfig};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Version of the checkpoint layout.
pub const CHECKPOINT_FORMAT_VERSION: u32 = 2;

/// Which backend wrote a checkpoint (and so which files hold its weights and optimizer).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// Burn's autodiff (`model.bpk`, `optimizer.bin`).
    #[default]
    Burn,
    /// atomzero-backprop (`model.safetensors`, `optimizer.safetensors`).
    Atomzero,
}

/// What a checkpoint records besides tensors.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainState {
    /// [`CHECKPOINT_FORMAT_VERSION`].
    pub format_version: u32,
    /// Optimizer steps done.
    pub step: u64,
    /// The batch sampler's generator state.
    pub sampler_state: u64,
    /// Architecture.
    pub net: NetConfig,
    /// Input encoding version.
    pub encoding_version: u32,
    /// Variant trained.
    pub variant: String,
    /// The resolved trainer config.
    pub config: TrainerConfig,
    /// The net training started from, if any.
    pub parent: Option<String>,
    /// The backend that wrote the checkpoint (version 1: always Burn).
    #[serde(default)]
    pub backend: Engine,
}

/// What a checkpoint saves besides its [`TrainState`].
#[derive(Clone, Copy)]
#[allow(missing_debug_implementations)] // Burn's optimizer has no `Debug`.
pub enum Saved<'a> {
    /// A Burn net (any device) and Burn's optimizer.
    Burn { net: &'a Net, optimizer: &'a ModuleOptimizer },
    /// atomzero-backprop's parameters and optimizer.
    Atomzero { params: &'a Params, optimizer: &'a Optimizer },
}

/// A checkpoint that cannot be written or used.
#[derive(Debug)]
pub enum CheckpointError {
    /// File system error.
    Io { path: PathBuf, source: std::io::Error },
    /// Unreadable or inconsistent content.
    Corrupt { path: PathBuf, reason: String },
    /// A checkpoint of another architecture than the config asks for.
    Mismatch { path: PathBuf, differences: Vec<FieldDifference> },
}

impl fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckpointError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            CheckpointError::Corrupt { path, reason } => {
                write!(f, "{}: unreadable checkpoint: {reason}", path.display())
            }
            CheckpointError::Mismatch { path, differences } => {
                write!(f, "{}: checkpoint of another architecture:", path.display())?;
                for d in differences {
                    write!(f, " {d};")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for CheckpointError {}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> CheckpointError + '_ {
    move |source| CheckpointError::Io { path: path.to_path_buf(), source }
}

fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), CheckpointError> {
    let mut file = std::fs::File::create(path).map_err(io(path))?;
    file.write_all(bytes).map_err(io(path))?;
    file.sync_all().map_err(io(path))
}

/// Directory name of the checkpoint at `step`.
pub fn checkpoint_name(step: u64) -> String {
    format!("step-{step:08}")
}

/// Complete checkpoints in `dir`, oldest first.
pub fn list(dir: &Path) -> Vec<(u64, PathBuf)> {
    let mut found: Vec<(u64, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let step = name.strip_prefix("step-")?.parse::<u64>().ok()?;
            Some((step, e.path()))
        })
        .filter(|(_, p)| p.join("state.json").is_file())
        .collect();
    found.sort();
    found
}

/// Writes a checkpoint into `dir` and keeps the newest `keep`.
pub fn save(
    dir: &Path,
    state: &TrainState,
    saved: Saved<'_>,
    keep: usize,
) -> Result<PathBuf, CheckpointError> {
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let final_dir = dir.join(checkpoint_name(state.step));
    // A temporary directory named by `atomzero_files`' rule (`.step-N.<pid>-<n>.tmp`).
    let tmp = atomzero_files::temporary_path(&final_dir);
    std::fs::create_dir_all(&tmp).map_err(io(&tmp))?;
    let corrupt = |reason: String| CheckpointError::Corrupt { path: tmp.clone(), reason };
    match saved {
        Saved::Burn { net, optimizer } => {
            // `valid` folds batch norm's pending running-statistics update into the values
            // (the training module's statistics lag one step); parameter ids are kept.
            let model =
                net.valid().into_record().into_bytes().map_err(|e| corrupt(e.to_string()))?;
            write_synced(&tmp.join("model.bpk"), &model)?;
            let optim = optimizer.into_bytes().map_err(|e| corrupt(e.to_string()))?;
            write_synced(&tmp.join("optimizer.bin"), &optim)?;
        }
        Saved::Atomzero { params, optimizer } => {
            let model = params.to_safetensors().map_err(|e| corrupt(e.to_string()))?;
            write_synced(&tmp.join("model.safetensors"), &model)?;
            let optim = optimizer.to_bytes().map_err(|e| corrupt(e.to_string()))?;
            write_synced(&tmp.join("optimizer.safetensors"), &optim)?;
        }
    }
    let json = serde_json::to_vec_pretty(state).map_err(|e| corrupt(e.to_string()))?;
    write_synced(&tmp.join("state.json"), &json)?;
    if final_dir.exists() {
        std::fs::remove_dir_all(&final_dir).map_err(io(&final_dir))?;
    }
    std::fs::rename(&tmp, &final_dir).map_err(io(&final_dir))?;
    let _ = atomzero_files::sync_dir(dir);
    let all = list(dir);
    for (_, old) in all.iter().take(all.len().saturating_sub(keep.max(1))) {
        let _ = std::fs::remove_dir_all(old);
    }
    Ok(final_dir)
}

/// Reads a checkpoint's state.
pub fn read_state(path: &Path) -> Result<TrainState, CheckpointError> {
    let file = path.join("state.json");
    let bytes = std::fs::read(&file).map_err(io(&file))?;
    let state: TrainState = serde_json::from_slice(&bytes)
        .map_err(|e| CheckpointError::Corrupt { path: file.clone(), reason: e.to_string() })?;
    if !(1..=CHECKPOINT_FORMAT_VERSION).contains(&state.format_version) {
        return Err(CheckpointError::Corrupt {
            path: file,
            reason: format!(
                "format version {}, this build reads 1 to {CHECKPOINT_FORMAT_VERSION}",
                state.format_version
            ),
        });
    }
    Ok(state)
}

/// Loads the Burn parameters and optimizer state of checkpoint `path` (backend `burn`) into
/// `net` (built with the checkpoint's architecture) and `optimizer` (fresh, of the
/// checkpoint's kind).
pub fn load_burn(
    path: &Path,
    net: Net,
    optimizer: ModuleOptimizer,
) -> Result<(Net, ModuleOptimizer), CheckpointError> {
    let net = load_burn_net(path, net)?;
    let optim_file = path.join("optimizer.bin");
    let bytes = std::fs::read(&optim_file).map_err(io(&optim_file))?;
    let optimizer = optimizer.from_bytes(Bytes::from_bytes_vec(bytes)).map_err(|e| {
        CheckpointError::Corrupt { path: optim_file.clone(), reason: e.to_string() }
    })?;
    Ok((net, optimizer))
}

/// The Burn parameters of checkpoint `path` (backend `burn`), loaded into `net`.
pub fn load_burn_net(path: &Path, net: Net) -> Result<Net, CheckpointError> {
    let model_file = path.join("model.bpk");
    let corrupt = |reason: String| CheckpointError::Corrupt { path: model_file.clone(), reason };
    let bytes = std::fs::read(&model_file).map_err(io(&model_file))?;
    let record = ModuleRecord::from_bytes(Bytes::from_bytes_vec(bytes))
        .map_err(|e| corrupt(e.to_string()))?;
    net.try_load_record(record).map_err(|e| corrupt(e.to_string()))
}

/// The weights of checkpoint `path` (backend `atomzero`) for architecture `config`.
pub fn load_params(path: &Path, config: &NetConfig) -> Result<Params, CheckpointError> {
    let file = path.join("model.safetensors");
    let bytes = std::fs::read(&file).map_err(io(&file))?;
    Params::from_safetensors(config, &bytes)
        .map_err(|e| CheckpointError::Corrupt { path: file, reason: e.to_string() })
}

/// The optimizer state of checkpoint `path` (backend `atomzero`), for an optimizer of
/// `config` over `len` parameters.
pub fn load_optimizer(
    path: &Path,
    config: OptimizerConfig,
    clip: Option<f32>,
    len: usize,
) -> Result<Optimizer, CheckpointError> {
    let file = path.join("optimizer.safetensors");
    let bytes = std::fs::read(&file).map_err(io(&file))?;
    Optimizer::from_bytes(config, clip, len, &bytes)
        .map_err(|e| CheckpointError::Corrupt { path: file, reason: e.to_string() })
}
