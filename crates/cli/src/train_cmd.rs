//! `atomzero train`: train on replay shards, resuming from the newest checkpoint in `--out`.

use crate::config::{Config, ConfigFile};
use crate::fsutil;
use crate::selfplay_cmd::{interrupt_flag, progress_bar};
use anyhow::{Result, anyhow};
use atomzero_belief::BeliefModel;
use atomzero_nn::Net;
use atomzero_nn::Provenance;
use atomzero_nn::burn::tensor::Device;
use atomzero_replay::ReplayWindow;
use atomzero_train::tensorboard::EventWriter;
use atomzero_train::{TrainOptions, train, validation_losses};
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct TrainArgs {
    /// Directory of replay shards.
    #[arg(long)]
    data: PathBuf,
    /// Output directory: checkpoints/, tensorboard/, model.safetensors (+ .json).
    #[arg(long)]
    out: PathBuf,
    /// Train until the step count (counted across resumes) reaches this.
    #[arg(long, default_value_t = 1000)]
    steps: u64,
    /// Config file (default: the embedded configs/tiny.toml).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Start from this network when there is no checkpoint yet (`shipped`: the network in
    /// the binary).
    #[arg(long)]
    init: Option<String>,
    /// Held-out replay shards (a directory not in `--data`; its newest `train.window_positions`
    /// targets): after training, print the network's losses on them in inference mode (and
    /// log them to TensorBoard as `validation/*`). With `--steps 0` and `--init NET` this
    /// measures NET alone.
    #[arg(long)]
    validation: Option<PathBuf>,
}

/// Measures `net` on the shards of `dir` and prints (and logs) its losses.
fn validate(
    dir: &Path,
    net: &Net,
    config: &Config,
    device: &Device,
    tensorboard: &Path,
    step: u64,
) -> Result<()> {
    let mut window = ReplayWindow::load(dir, config.train.window_positions)
        .map_err(|e| anyhow!("validation data: {e}"))?;
    for e in std::mem::take(&mut window.skipped) {
        eprintln!("warning: validation data: {e} (skipped: its games are not measured)");
    }
    let v = validation_losses(net, &window, &config.train, device)
        .map_err(|e| anyhow!("validation data {}: {e}", dir.display()))?;
    println!(
        "validation: {} positions of {}: loss {:.4} (policy {:.4}, value {:.4}{})",
        v.positions,
        dir.display(),
        v.total,
        v.policy,
        v.value,
        if v.reply > 0.0 { format!(", opponent policy {:.4}", v.reply) } else { String::new() },
    );
    let mut tb = EventWriter::create(tensorboard)
        .map_err(|e| anyhow!("tensorboard {}: {e}", tensorboard.display()))?;
    for (tag, value) in [
        ("validation/total", v.total),
        ("validation/policy", v.policy),
        ("validation/value", v.value),
    ] {
        tb.scalar(tag, step, value as f32)
            .and_then(|()| tb.flush())
            .map_err(|e| anyhow!("tensorboard {}: {e}", tensorboard.display()))?;
    }
    Ok(())
}

pub fn run(args: TrainArgs) -> Result<()> {
    let config = Config::load(args.config.as_deref())?;
    let device = config.device()?.device().map_err(|e| anyhow!("{e}"))?;
    let checkpoints = args.out.join("checkpoints");
    let init = crate::shipped::init_path(args.init.as_deref())?;
    let tensorboard = args.out.join("tensorboard");
    std::fs::create_dir_all(&args.out)
        .map_err(|e| anyhow!("cannot create {}: {e}", args.out.display()))?;
    let interrupted = interrupt_flag();
    let bar = progress_bar(args.steps, "train");
    let summary = train(
        TrainOptions {
            data: atomzero_train::Data::Dir(&args.data),
            checkpoint_dir: &checkpoints,
            tensorboard_dir: Some(&tensorboard),
            target_step: args.steps,
            init: init.as_deref(),
            net: config.net.clone(),
            config: config.train.clone(),
            variant: config.variant.clone(),
            device: device.clone(),
            seed: config.seed,
            interrupted: Some(&interrupted),
        },
        |r| {
            bar.set_position(r.step);
            bar.set_message(format!(
                "loss {:.3} (policy {:.3}, value {:.3}), lr {:.2e}, {:.0} samples/s",
                r.total_loss, r.policy_loss, r.value_loss, r.learning_rate, r.samples_per_sec
            ));
        },
    )
    .map_err(|e| anyhow!("{e}"))?;
    bar.finish_and_clear();
    // Nothing is lost without a word: every shard left out of the window is named.
    for e in &summary.skipped {
        eprintln!("warning: {e} (skipped: its games are not in the training window)");
    }
    fsutil::write_atomic(&args.out.join("train-config.toml"), config.to_toml()?.as_bytes())?;
    let model = args.out.join("model.safetensors");
    let provenance = Provenance {
        variant: config.variant.clone(),
        training_step: summary.end_step,
        parent: args.init.clone(),
        belief: summary.belief.as_ref().map(BeliefModel::to_json),
    };
    summary.net.save(&model, &provenance).map_err(|e| anyhow!("{e}"))?;
    let secs = summary.data_secs + summary.compute_secs;
    let steps = summary.end_step - summary.start_step;
    println!(
        "train: steps {} -> {} on a window of {} positions{}{}{}{}; {}; engine {}",
        summary.start_step,
        summary.end_step,
        summary.window_len,
        summary.resumed_from.as_ref().map_or(String::new(), |p| format!(
            ", resumed from {}{}",
            p.display(),
            if summary.optimizer_restarted {
                " (written by the other engine: fresh optimizer state)"
            } else {
                ""
            }
        )),
        if summary.capped { ", cut by max_samples_per_position" } else { "" },
        match summary.surprise_measured {
            Some(0) => ", no policy surprise in its shards (before format 5): sampled uniformly"
                .to_string(),
            Some(m) if m < summary.window_len => format!(
                ", policy surprise measured at {m} of them (the others weighted as the average)"
            ),
            _ => String::new(),
        },
        match summary.skipped.len() {
            0 => String::new(),
            1 => " (1 unreadable shard skipped, see the warning above)".to_string(),
            n => format!(" ({n} unreadable shards skipped, see the warnings above)"),
        },
        if steps == 0 {
            "no steps to run".to_string()
        } else {
            format!(
                "loss {:.3} -> {:.3}; {:.0} samples/s (data {:.0}%, forward/backward {:.0}%)",
                summary.first_loss,
                summary.last_loss,
                (steps as f64 * config.train.batch_size as f64) / secs.max(1e-9),
                100.0 * summary.data_secs / secs.max(1e-9),
                100.0 * summary.compute_secs / secs.max(1e-9),
            )
        },
        match summary.engine {
            atomzero_train::Engine::Burn => "burn",
            atomzero_train::Engine::Atomzero => "atomzero",
        },
    );
    println!("model: {}", model.display());
    if let Some(dir) = &args.validation {
        validate(dir, &summary.net, &config, &device, &tensorboard, summary.end_step)?;
    }
    if let Some(report) = summary.belief.as_ref().and_then(|b| b.report.as_ref()) {
        println!(
            "belief over the opponent's bomb (in the model's sidecar): held-out {} ({} games)",
            report.heldout, report.heldout_games
        );
    }
    Ok(())
}
