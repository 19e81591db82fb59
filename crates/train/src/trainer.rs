//! The training loop.

use crate::checkpoint::{self, CHECKPOINT_FORMAT_VERSION, CheckpointError, Engine, TrainState};
use crate::config::TrainerConfig;
use crate::data::{ValueTarget, build_batch_with};
use crate::engine::{self, Trainer};
use crate::tensorboard::EventWriter;
use atomzero_backprop::SparseBatch;
use atomzero_encoding::{ENCODING_VERSION, Encoder, READABLE_ENCODING_VERSIONS};
use atomzero_mcts::Rng as Sampler;
use atomzero_nn::burn::tensor::Device;
use atomzero_nn::{CheckpointError as NetError, Net, NetConfig};
use atomzero_replay::{ReplayWindow, WindowError};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Why training could not run.
#[derive(Debug)]
pub enum TrainError {
    /// Bad settings.
    Config(String),
    /// No usable data.
    Data(WindowError),
    /// A checkpoint could not be read or written.
    Checkpoint(CheckpointError),
    /// The initial network could not be loaded.
    Init(NetError),
    /// TensorBoard files could not be written.
    Log(std::io::Error),
}

impl fmt::Display for TrainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrainError::Config(m) => write!(f, "{m}"),
            TrainError::Data(e) => e.fmt(f),
            TrainError::Checkpoint(e) => e.fmt(f),
            TrainError::Init(e) => write!(f, "initial network: {e}"),
            TrainError::Log(e) => write!(f, "tensorboard: {e}"),
        }
    }
}

impl std::error::Error for TrainError {}

/// Where the replay shards come from.
#[derive(Clone, Copy, Debug)]
pub enum Data<'a> {
    /// Every shard in a directory (ordered by name, oldest first).
    Dir(&'a Path),
    /// These shard files, oldest first; the `Path` names them in errors (a run's `selfplay/`).
    Files(&'a [PathBuf], &'a Path),
}

/// What one call of [`train`] is asked to do.
#[derive(Debug)]
pub struct TrainOptions<'a> {
    /// Replay shards.
    pub data: Data<'a>,
    /// Checkpoints go to `checkpoint_dir` (resumed from there).
    pub checkpoint_dir: &'a Path,
    /// TensorBoard event files (none if `None`).
    pub tensorboard_dir: Option<&'a Path>,
    /// Train until the step count reaches this (absolute, counted across resumes).
    pub target_step: u64,
    /// Start from these weights when there is no checkpoint (else a fresh net from `seed`).
    pub init: Option<&'a Path>,
    /// Architecture.
    pub net: NetConfig,
    /// Trainer settings.
    pub config: TrainerConfig,
    /// Variant name recorded in checkpoints.
    pub variant: String,
    /// Where to train.
    pub device: Device,
    /// Seed of the batch sampler (and of a fresh net's initialisation).
    pub seed: u64,
    /// Stop at the next step when set (a checkpoint is written first).
    pub interrupted: Option<&'a AtomicBool>,
}

/// Figures of one step, for progress displays.
#[derive(Clone, Copy, Debug)]
pub struct StepReport {
    /// Steps done.
    pub step: u64,
    /// Final step of this call.
    pub target_step: u64,
    /// Losses before the update.
    pub total_loss: f32,
    /// Policy cross-entropy.
    pub policy_loss: f32,
    /// Value cross-entropy.
    pub value_loss: f32,
    /// Learning rate used.
    pub learning_rate: f64,
    /// Samples per second over this step.
    pub samples_per_sec: f64,
    /// Seconds spent building the batch (replay, encoding, upload).
    pub data_secs: f64,
    /// Seconds spent in forward, backward and update.
    pub compute_secs: f64,
}

/// What a call of [`train`] did.
#[derive(Debug)]
pub struct TrainSummary {
    /// Step count when the call started (0 or the checkpoint resumed).
    pub start_step: u64,
    /// Step count at the end.
    pub end_step: u64,
    /// The checkpoint resumed from, if any.
    pub resumed_from: Option<PathBuf>,
    /// Mean total loss over the first and the last tenth of the steps run (NaN if none).
    pub first_loss: f32,
    /// See `first_loss`.
    pub last_loss: f32,
    /// Training targets in the window.
    pub window_len: usize,
    /// The steps were cut to respect `max_samples_per_position`.
    pub capped: bool,
    /// With `policy_surprise_weight` above 0: how many of the window's targets have a
    /// measured policy surprise (the others were weighted as the average); `None` otherwise.
    pub surprise_measured: Option<usize>,
    /// Total seconds in data preparation and in compute.
    pub data_secs: f64,
    /// See `data_secs`.
    pub compute_secs: f64,
    /// The engine that ran the steps.
    pub engine: Engine,
    /// The checkpoint resumed from was written by the other engine: its weights were kept,
    /// its optimizer state (moments) started afresh.
    pub optimizer_restarted: bool,
    /// The trained network.
    pub net: Net,
    /// The bomb variant's belief over the opponent's bomb, fitted on the window's newest
    /// games ([`crate::belief`]); `None` for other variants.
    pub belief: Option<atomzero_belief::BeliefModel>,
    /// Shards of the window that could not be read (each names its file and what is wrong):
    /// their games are not in the window, and the caller must say so.
    pub skipped: Vec<atomzero_replay::ShardError>,
}

/// Trains until `options.target_step`, resuming from the newest checkpoint if there is one.
pub fn train(
    options: TrainOptions<'_>,
    mut on_step: impl FnMut(&StepReport),
) -> Result<TrainSummary, TrainError> {
    let config = &options.config;
    config.validate().map_err(TrainError::Config)?;
    options.net.validate().map_err(|e| TrainError::Config(format!("net: {e}")))?;
    crate::memory::check(&options.net, config.batch_size, crate::memory::machine_memory())
        .map_err(TrainError::Config)?;
    let device = options.device.clone();

    let engine =
        engine::resolve(config.backend, &options.net, &device).map_err(TrainError::Config)?;

    // Resume or start.
    let newest = checkpoint::list(options.checkpoint_dir).pop();
    let (mut trainer, start_step, mut sampler, parent, resumed_from, optimizer_restarted) =
        match newest {
            Some((_, path)) => {
                let state = checkpoint::read_state(&path).map_err(TrainError::Checkpoint)?;
                let differences = options.net.differences(&state.net);
                if !differences.is_empty() {
                    return Err(TrainError::Checkpoint(CheckpointError::Mismatch {
                        path,
                        differences,
                    }));
                }
                if !READABLE_ENCODING_VERSIONS.contains(&state.encoding_version) {
                    return Err(TrainError::Checkpoint(CheckpointError::Corrupt {
                        path,
                        reason: format!(
                            "encoding version {}, this build uses {ENCODING_VERSION}",
                            state.encoding_version
                        ),
                    }));
                }
                let (trainer, restored) = Trainer::resume(engine, &path, &state, config, &device)
                    .map_err(TrainError::Checkpoint)?;
                (
                    trainer,
                    state.step,
                    Sampler::from_state(state.sampler_state),
                    state.parent,
                    Some(path),
                    !restored,
                )
            }
            None => {
                let (net, parent) = match options.init {
                    Some(path) => {
                        let (net, _) = atomzero_nn::load_with_config(path, &options.net, &device)
                            .map_err(TrainError::Init)?;
                        (net, Some(path.display().to_string()))
                    }
                    None => {
                        device.seed(options.seed);
                        (
                            options
                                .net
                                .init(&device)
                                .map_err(|e| TrainError::Config(e.to_string()))?,
                            None,
                        )
                    }
                };
                let trainer =
                    Trainer::new(engine, net, config, &device).map_err(TrainError::Config)?;
                (trainer, 0, Sampler::new(options.seed), parent, None, false)
            }
        };

    let mut window = match options.data {
        Data::Dir(dir) => ReplayWindow::load(dir, config.window_positions),
        Data::Files(files, origin) => {
            ReplayWindow::load_files(files, config.window_positions, origin)
        }
    }
    .map_err(TrainError::Data)?;
    let skipped = std::mem::take(&mut window.skipped);
    let wanted = options.target_step.saturating_sub(start_step);
    let allowed = ((window.len() as f64 * config.max_samples_per_position)
        / config.batch_size as f64)
        .floor() as u64;
    let capped = wanted > allowed;
    let target_step = start_step + wanted.min(allowed.max(1));
    if window.games().iter().any(|g| g.variant == atomzero_rules::Variant::Bomb)
        && !options.net.encoder.bomb
    {
        return Err(TrainError::Config(
            "games of the bomb variant need a network with its input planes (net.encoder.bomb = true)"
                .to_string(),
        ));
    }
    let (surprise_table, surprise_measured) =
        match surprise_table(&window, config.policy_surprise_weight) {
            Some((table, measured)) => (Some(table), Some(measured)),
            None if config.policy_surprise_weight > 0.0 => (None, Some(0)),
            None => (None, None),
        };
    let encoder = Encoder::new(options.net.encoder);
    let mut tensorboard = match options.tensorboard_dir {
        Some(dir) => Some(EventWriter::create(dir).map_err(TrainError::Log)?),
        None => None,
    };

    let mut batch = SparseBatch::new(encoder.planes());
    let mut indices = Vec::with_capacity(config.batch_size);
    let mut losses: Vec<f32> = Vec::new();
    let (mut data_total, mut compute_total) = (0.0, 0.0);
    let mut step = start_step;
    let save = |trainer: &Trainer, step: u64, sampler: &Sampler| -> Result<(), TrainError> {
        let state = TrainState {
            format_version: CHECKPOINT_FORMAT_VERSION,
            step,
            sampler_state: sampler.state(),
            net: options.net.clone(),
            encoding_version: ENCODING_VERSION,
            variant: options.variant.clone(),
            config: config.clone(),
            parent: parent.clone(),
            backend: trainer.engine(),
        };
        trainer
            .save(options.checkpoint_dir, &state, config.keep_checkpoints)
            .map(|_| ())
            .map_err(TrainError::Checkpoint)
    };
    let reply_weight =
        if options.net.opponent_policy { config.opponent_policy_weight } else { 0.0 };
    while step < target_step {
        let t0 = Instant::now();
        indices.clear();
        indices.extend((0..config.batch_size).map(|_| match &surprise_table {
            Some(table) => pick_weighted(table, sampler.uniform()),
            None => sampler.below(window.len()),
        }));
        build_batch_with(
            &window,
            &indices,
            &encoder,
            &ValueTarget::of(config),
            reply_weight,
            &mut batch,
        );
        let t1 = Instant::now();
        let learning_rate = config.learning_rate_at(step);
        let figures = trainer
            .step(&batch, learning_rate, config.value_loss_weight)
            .map_err(TrainError::Config)?;
        let t2 = Instant::now();
        step += 1;
        let (data_secs, compute_secs) = ((t1 - t0).as_secs_f64(), (t2 - t1).as_secs_f64());
        data_total += data_secs;
        compute_total += compute_secs;
        losses.push(figures.total);
        let report = StepReport {
            step,
            target_step,
            total_loss: figures.total,
            policy_loss: figures.policy,
            value_loss: figures.value,
            learning_rate,
            samples_per_sec: batch.len as f64 / (data_secs + compute_secs).max(1e-9),
            data_secs,
            compute_secs,
        };
        on_step(&report);
        let stop = options.interrupted.is_some_and(|f| f.load(Ordering::Relaxed));
        // Every `log_every` steps, and always the last step of the call (a run whose training
        // ends between two cadence steps still shows its final state).
        if let Some(tb) = tensorboard.as_mut()
            && (step.is_multiple_of(config.log_every) || step == target_step || stop)
        {
            let (entropy, accuracy) = trainer.entropy_and_accuracy();
            let scalars = [
                ("loss/total", figures.total),
                ("loss/policy", figures.policy),
                ("loss/value", figures.value),
                ("loss/opponent_policy", figures.reply),
                ("policy/entropy", entropy),
                ("value/accuracy", accuracy),
                ("train/learning_rate", learning_rate as f32),
                ("train/grad_norm", figures.grad_norm),
                ("train/samples_per_sec", report.samples_per_sec as f32),
                ("train/data_fraction", (data_secs / (data_secs + compute_secs).max(1e-9)) as f32),
            ];
            for (tag, value) in scalars {
                tb.scalar(tag, step, value).map_err(TrainError::Log)?;
            }
            tb.flush().map_err(TrainError::Log)?;
        }
        if step.is_multiple_of(config.checkpoint_every) || step == target_step || stop {
            save(&trainer, step, &sampler)?;
        }
        if stop {
            break;
        }
    }
    let belief = crate::belief::fit_belief(&window);
    let tenth = (losses.len() / 10).max(1);
    let mean = |xs: &[f32]| {
        if xs.is_empty() { f32::NAN } else { xs.iter().sum::<f32>() / xs.len() as f32 }
    };
    Ok(TrainSummary {
        start_step,
        end_step: step,
        resumed_from,
        first_loss: mean(&losses[..tenth.min(losses.len())]),
        last_loss: mean(&losses[losses.len().saturating_sub(tenth)..]),
        window_len: window.len(),
        capped,
        surprise_measured,
        data_secs: data_total,
        compute_secs: compute_total,
        engine: trainer.engine(),
        optimizer_restarted,
        net: trainer.into_net(&device).map_err(TrainError::Config)?,
        belief,
        skipped,
    })
}

/// The cumulative sampling weights of policy-surprise weighting over the window's targets
/// (KataGo): target `i` weighs `(1 − share) + share · s_i / mean(s)`, so the weights average 1
/// and `share` of the total follows the surprise; a target without a measured surprise counts
/// as the mean. With the number of targets measured; `None` (uniform sampling) when `share`
/// is 0 or no target has a positive measured surprise.
pub fn surprise_table(window: &ReplayWindow, share: f64) -> Option<(Vec<f64>, usize)> {
    if share <= 0.0 {
        return None;
    }
    let surprises: Vec<Option<f64>> = (0..window.len())
        .map(|i| window.target(i).and_then(|t| t.surprise).map(f64::from))
        .collect();
    let measured = surprises.iter().flatten().count();
    let mean = surprises.iter().flatten().sum::<f64>() / measured.max(1) as f64;
    if measured == 0 || !(mean > 0.0 && mean.is_finite()) {
        return None;
    }
    let mut total = 0.0;
    let table = surprises
        .iter()
        .map(|s| {
            total += (1.0 - share) + share * s.map_or(1.0, |s| s / mean);
            total
        })
        .collect();
    Some((table, measured))
}

/// The index that the uniform draw `u` in [0, 1) picks from cumulative weights `table`.
pub fn pick_weighted(table: &[f64], u: f64) -> usize {
    let total = table.last().copied().unwrap_or(0.0);
    table.partition_point(|&c| c <= u * total).min(table.len().saturating_sub(1))
}
