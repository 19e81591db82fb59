//! `atomzero run`: the whole loop in one process, generation after generation:
//! self-play with the best network → train on the replay window → gate the candidate →
//! promote or not → evaluate the best network against the fixed baselines → log.
//!
//! Everything lives in the run directory (`../shared/design.md`):
//!
//! ```text
//! runs/<name>/
//!   config.toml     the resolved config (every key); later runs of the same dir must match it
//!   run.json        where the loop is: generation, stage, elapsed and CPU time (rewritten by rename)
//!   log.txt         the summary line of every finished generation
//!   timeline.jsonl  one JSON line per finished generation: the best network then, and the
//!                   wall and CPU time spent to get there (`atomzero gauntlet` plots Elo by it)
//!   models/         promoted networks NNNNNN.safetensors + .json (NNNNNN = generation), best.json
//!   candidates/     the trainer's network of the generation in progress
//!   selfplay/       replay shards genNNNNNN-SSSSSS.shard
//!   checkpoints/    trainer state (weights, optimizer, step, sampler), newest few kept
//!   eval/           results.jsonl, gates.jsonl, ratings.csv, elo.svg, match PGNs
//!   tensorboard/    event files: training scalars by step, self-play/gate/eval by generation
//! ```
//!
//! Resuming: every stage is either idempotent or skips what is already on disk. Self-play
//! counts the games already in this generation's shards and plays only the rest (new seeds);
//! the trainer resumes from its newest checkpoint towards the step target fixed in `run.json`;
//! a gating or evaluation match killed half-way is replayed (its games are not training data);
//! match results are appended under a label and never appended twice; promotion copies files
//! by rename and rewrites `best.json` last.

use crate::config::Config;
use crate::fsutil;
use crate::models::{self, NetLoader};
use crate::selfplay_cmd::{Tally, interrupt_flag, play_and_write, progress_bar};
use anyhow::{Context, Result, anyhow, bail};
use atomzero_eval::{
    GateConfig, MatchConfig, MatchResult, Openings as MatchOpenings, PlayerSpec, RatingOptions,
    ResultsLine, elo_plot_svg, generation_of, generation_series, rate, read_results,
};
use atomzero_nn::{NetConfig, Provenance};
use atomzero_replay::read_shard;
use atomzero_replay::window::SHARD_EXTENSION;
use atomzero_selfplay::Openings;
use atomzero_train::tensorboard::EventWriter;
use atomzero_train::{TrainOptions, train};
use clap::Args;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Config file (default: the run directory's saved config.toml, else the embedded
    /// configs/tiny.toml).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Run directory (default: runs/<config file name>, e.g. runs/tiny).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Override `run.generations` (e.g. to extend a finished run).
    #[arg(long)]
    generations: Option<u64>,
    /// Override `run.max_minutes`.
    #[arg(long)]
    max_minutes: Option<f64>,
}

/// Format version of `run.json`.
const STATE_FORMAT: u32 = 1;

/// Where the loop is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RunState {
    /// Always [`STATE_FORMAT`].
    format: u32,
    /// The generation in progress (1-based; 0 while the initial network is made).
    generation: u64,
    /// The stage of that generation.
    stage: Stage,
    /// Wall time spent in earlier sessions and finished stages of this one.
    elapsed_secs: f64,
    /// CPU time (all threads of the process) spent in the same (0 in runs from before it was
    /// recorded).
    #[serde(default)]
    cpu_secs: f64,
    /// The trainer's step target of this generation (fixed when training starts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    train_target: Option<u64>,
    /// The gate's decision of this generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    gate: Option<GateRecord>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Stage {
    Init,
    Selfplay,
    Train,
    Gate,
    Promote,
    Eval,
}

/// A gating decision kept in `run.json` until the promotion is done.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct GateRecord {
    passed: bool,
    describe: String,
    line: Option<ResultsLine>,
}

/// The files of one run directory.
struct RunDir {
    root: PathBuf,
}

impl RunDir {
    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }
    fn models(&self) -> PathBuf {
        self.path("models")
    }
    fn model(&self, name: &str) -> PathBuf {
        self.models().join(format!("{name}.safetensors"))
    }
    fn candidate(&self, generation: u64) -> PathBuf {
        self.path("candidates").join(format!("{generation:06}.safetensors"))
    }
    fn eval(&self, file: &str) -> PathBuf {
        self.path("eval").join(file)
    }
}

/// Figures of one generation for its summary line.
#[derive(Default)]
struct GenerationReport {
    tally: Option<Tally>,
    selfplay_secs: f64,
    train: Option<(u64, u64, f32, f32, f64)>,
    gate: Option<GateRecord>,
    evals: Vec<(String, ResultsLine)>,
}

fn model_name(generation: u64) -> String {
    format!("{generation:06}")
}

fn read_best(dir: &RunDir) -> Result<String> {
    let path = dir.models().join("best.json");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("{}: not valid JSON", path.display()))?;
    let file = value
        .get("best")
        .and_then(|v| v.as_str())
        .ok_or_else(|| anyhow!("{}: no \"best\" entry", path.display()))?;
    let stem = file.strip_suffix(".safetensors").unwrap_or(file).to_string();
    if !dir.model(&stem).exists() {
        bail!("{}: names {file}, which does not exist", path.display());
    }
    Ok(stem)
}

fn write_best(dir: &RunDir, name: &str) -> Result<()> {
    let text = format!("{{\"best\": \"{name}.safetensors\"}}\n");
    fsutil::write_atomic(&dir.models().join("best.json"), text.as_bytes())
}

fn save_state(dir: &RunDir, state: &RunState) -> Result<()> {
    let text = serde_json::to_string_pretty(state)?;
    fsutil::write_atomic(&dir.path("run.json"), text.as_bytes())
}

fn load_state(dir: &RunDir) -> Result<Option<RunState>> {
    let path = dir.path("run.json");
    if !path.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let state: RunState = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a run state this build can read", path.display()))?;
    if state.format != STATE_FORMAT {
        bail!("{}: format {} (this build reads {STATE_FORMAT})", path.display(), state.format);
    }
    Ok(Some(state))
}

/// Games already in this generation's shards (unreadable shards are reported and not counted).
fn games_on_disk(dir: &Path, generation: u64) -> Result<usize> {
    let prefix = format!("gen{generation:06}-");
    let mut games = 0;
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(0) };
    for entry in entries.filter_map(|e| e.ok()) {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(&prefix) && name.ends_with(&format!(".{SHARD_EXTENSION}")) {
            match read_shard(&entry.path()) {
                Ok((_, records)) => games += records.len(),
                Err(e) => eprintln!("warning: {e} (not counted)"),
            }
        }
    }
    Ok(games)
}

/// Temporary files left by a killed process (`.name.PID.tmp`): never read, safe to remove.
fn remove_stale_temporaries(root: &Path) {
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.filter_map(|e| e.ok()) {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                stack.push(path);
            } else if name.starts_with('.') && name.ends_with(".tmp") {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
}

/// Keys whose values differ between two TOML tables (dotted paths).
fn differing_keys(a: &toml::Value, b: &toml::Value, prefix: &str, out: &mut Vec<String>) {
    match (a, b) {
        (toml::Value::Table(x), toml::Value::Table(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                match (x.get(k), y.get(k)) {
                    (Some(v), Some(w)) => differing_keys(v, w, &path, out),
                    _ => out.push(path),
                }
            }
        }
        _ if a != b => out.push(prefix.to_string()),
        _ => {}
    }
}

/// The config of this run: the saved one when resuming (a given config must agree with it
/// except for the budget), else the given one or the embedded default.
fn resolve_config(args: &RunArgs, dir: &RunDir) -> Result<(Config, bool)> {
    let saved_path = dir.path("config.toml");
    let saved = if saved_path.exists() { Some(Config::load(Some(&saved_path))?) } else { None };
    let mut config = match (&args.config, &saved) {
        (None, Some(saved)) => saved.clone(),
        (path, _) => Config::load(path.as_deref())?,
    };
    if let Some(saved) = &saved {
        let strip = |c: &Config| -> Result<toml::Value> {
            let mut c = c.clone();
            c.run.generations = 0;
            c.run.max_minutes = 0.0;
            Ok(toml::Value::try_from(&c)?)
        };
        let mut keys = Vec::new();
        differing_keys(&strip(saved)?, &strip(&config)?, "", &mut keys);
        if !keys.is_empty() {
            bail!(
                "{} was started with another config (differs in {}); give the same config, only the budget (run.generations, run.max_minutes) may change, or choose a new --dir",
                dir.root.display(),
                keys.join(", ")
            );
        }
    }
    if let Some(g) = args.generations {
        config.run.generations = g;
    }
    if let Some(m) = args.max_minutes {
        config.run.max_minutes = m;
    }
    let resumed = saved.is_some();
    Ok((config, resumed))
}

fn default_dir(config: Option<&Path>) -> PathBuf {
    let name = config
        .and_then(|p| p.file_stem())
        .map_or("tiny".to_string(), |s| s.to_string_lossy().into_owned());
    PathBuf::from("runs").join(name)
}

/// Appends `line` to `path` unless a line with the same label is there already.
pub fn append_result_once(path: &Path, line: &ResultsLine) -> Result<()> {
    let existing = match std::fs::read_to_string(path) {
        Ok(text) => read_results(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(anyhow!("cannot read {}: {e}", path.display())),
    };
    if existing.iter().any(|l| l.label.is_some() && l.label == line.label) {
        return Ok(());
    }
    fsutil::append(path, &format!("{}\n", line.to_json()))
}

pub fn find_result(path: &Path, label: &str) -> Result<Option<ResultsLine>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(read_results(&text)
            .map_err(|e| anyhow!("{}: {e}", path.display()))?
            .into_iter()
            .find(|l| l.label.as_deref() == Some(label))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(anyhow!("cannot read {}: {e}", path.display())),
    }
}

/// Copies `from` to `to` by temporary file and rename.
fn copy_atomic(from: &Path, to: &Path) -> Result<()> {
    let bytes = std::fs::read(from).with_context(|| format!("cannot read {}", from.display()))?;
    fsutil::write_atomic(to, &bytes)
}

struct Loop<'a> {
    config: &'a Config,
    dir: RunDir,
    interrupted: Arc<AtomicBool>,
    tensorboard: Option<EventWriter>,
    concurrency: usize,
    session_start: Instant,
    /// The process's CPU time when `session_start` was taken.
    session_cpu_start: f64,
    state: RunState,
}

/// CPU time of this process so far (all threads), in seconds.
fn process_cpu_secs() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// Format version of `timeline.jsonl` lines.
const TIMELINE_FORMAT: u32 = 1;

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
    /// CPU time of the run so far, all sessions, all threads (seconds).
    pub cpu_secs: f64,
    /// CPU cores the process could use.
    pub cores: usize,
}

/// Reads a run's `timeline.jsonl` (missing file: empty).
pub fn read_timeline(run_dir: &Path) -> Result<Vec<TimelineLine>> {
    let path = run_dir.join("timeline.jsonl");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(anyhow!("cannot read {}: {e}", path.display())),
    };
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let line: TimelineLine = serde_json::from_str(raw)
            .map_err(|e| anyhow!("{} line {}: {e}", path.display(), i + 1))?;
        if line.format != TIMELINE_FORMAT {
            bail!(
                "{} line {}: format {} (this build reads {TIMELINE_FORMAT})",
                path.display(),
                i + 1,
                line.format
            );
        }
        lines.push(line);
    }
    Ok(lines)
}

/// The loop was stopped by Ctrl-C; everything finished is on disk.
struct Interrupted;

impl Loop<'_> {
    fn elapsed(&self) -> f64 {
        self.state.elapsed_secs + self.session_start.elapsed().as_secs_f64()
    }

    fn cpu(&self) -> f64 {
        self.state.cpu_secs + (process_cpu_secs() - self.session_cpu_start).max(0.0)
    }

    /// Moves to `stage` and saves the state (time spent so far included).
    fn advance(&mut self, stage: Stage) -> Result<()> {
        let now = self.elapsed();
        self.state.cpu_secs = self.cpu();
        self.session_cpu_start = process_cpu_secs();
        self.state.elapsed_secs = now;
        self.session_start = Instant::now();
        self.state.stage = stage;
        save_state(&self.dir, &self.state)
    }

    fn check_interrupt(&self) -> std::result::Result<(), Interrupted> {
        if self.interrupted.load(Ordering::SeqCst) { Err(Interrupted) } else { Ok(()) }
    }

    fn scalar(&mut self, tag: &str, step: u64, value: f64) {
        if let Some(tb) = self.tensorboard.as_mut()
            && let Err(e) = tb.scalar(tag, step, value as f32)
        {
            eprintln!("warning: tensorboard: {e}; no more run scalars this session");
            self.tensorboard = None;
        }
    }

    fn flush_tensorboard(&mut self) {
        if let Some(tb) = self.tensorboard.as_mut() {
            let _ = tb.flush();
        }
    }

    fn openings(&self) -> Result<MatchOpenings> {
        let variant = self.config.variant()?;
        if self.config.run.openings.trim().is_empty() {
            Ok(MatchOpenings::default())
        } else {
            MatchOpenings::from_epd_file(Path::new(&self.config.run.openings), variant)
                .map_err(|e| anyhow!("run.openings: {e}"))
        }
    }

    /// `net:` player for the network at `path`, named `name` in results and ratings.
    fn net_player(&self, path: &Path, name: &str, nodes: u32) -> Result<PlayerSpec> {
        let loader = NetLoader { device: self.config.device()? };
        PlayerSpec::parse(&format!("net:{},nodes={nodes},name={name}", path.display()), &loader)
            .map_err(|e| anyhow!("{}: {e}", path.display()))
    }

    fn match_config(&self, games: usize, seed: u64, event: &str) -> Result<MatchConfig> {
        Ok(MatchConfig {
            games,
            openings: self.openings()?,
            variant: self.config.variant()?,
            start: self.config.start()?,
            concurrency: self.concurrency,
            sprt: None,
            max_plies: self.config.run.match_max_plies,
            seed,
            event: event.to_string(),
            interrupt: Some(self.interrupted.clone()),
        })
    }

    /// Plays a match with a progress bar; `None` if interrupted.
    fn play(
        &self,
        first: &PlayerSpec,
        second: &PlayerSpec,
        config: &MatchConfig,
        threshold: Option<f64>,
    ) -> Result<Option<atomzero_eval::GateResult>> {
        let bar =
            progress_bar(config.games as u64, &format!("{} vs {}", first.name(), second.name()));
        let mut on_game = |p: &atomzero_eval::Progress<'_>| {
            bar.set_position(p.finished as u64);
            bar.set_message(format!(
                "+{} ={} -{} ({:.1}%)",
                p.wdl.wins,
                p.wdl.draws,
                p.wdl.losses,
                100.0 * p.wdl.score()
            ));
        };
        let result = atomzero_eval::gate(
            first,
            second,
            &GateConfig { match_config: config.clone(), threshold },
            &mut on_game,
        )
        .map_err(|e| anyhow!("{e}"))?;
        bar.finish_and_clear();
        if result.result.interrupted {
            return Ok(None);
        }
        Ok(Some(result))
    }

    fn write_pgn(&self, file: &str, result: &MatchResult) -> Result<()> {
        fsutil::write_atomic(&self.dir.eval(file), result.pgn().as_bytes())
    }

    /// Generation 0: the initial network (random weights from the seed), best.json.
    fn init(&mut self) -> Result<()> {
        let name = model_name(0);
        let path = self.dir.model(&name);
        // Weights and sidecar are written in that order: both present means the save finished.
        if !(path.exists() && atomzero_nn::sidecar_path(&path).exists()) {
            let device = self.config.device()?.device().map_err(|e| anyhow!("{e}"))?;
            device.seed(self.config.seed);
            let net = self.config.net.init(&device).map_err(|e| anyhow!("{e}"))?;
            let provenance =
                Provenance { variant: self.config.variant.clone(), training_step: 0, parent: None };
            net.save(&path, &provenance).map_err(|e| anyhow!("{e}"))?;
        }
        write_best(&self.dir, &name)
    }

    fn selfplay(&mut self, generation: u64, report: &mut GenerationReport) -> Result<()> {
        let run = &self.config.run;
        let shards = self.dir.path("selfplay");
        let done = games_on_disk(&shards, generation)?;
        let wanted = run.games_per_generation.saturating_sub(done);
        let best = read_best(&self.dir)?;
        let start = Instant::now();
        let mut tally = Tally::default();
        if wanted > 0 {
            let model = models::load(
                &self.dir.model(&best).display().to_string(),
                0,
                self.config.device()?,
            )?;
            let openings =
                Openings::random(self.config.start()?, self.config.selfplay.random_opening_plies);
            let bar = progress_bar(run.games_per_generation as u64, "self-play");
            bar.set_position(done as u64);
            tally = play_and_write(
                self.config,
                &model,
                &openings,
                wanted,
                &shards,
                None,
                generation,
                run.games_per_shard,
                &self.interrupted,
                &bar,
            )?;
            bar.finish_and_clear();
        }
        report.selfplay_secs = start.elapsed().as_secs_f64();
        if tally.games > 0 {
            let g = generation;
            let n = tally.games as f64;
            self.scalar("selfplay/game_length", g, tally.plies as f64 / n);
            self.scalar("selfplay/white_wins", g, tally.white_wins as f64 / n);
            self.scalar("selfplay/draws", g, tally.draws as f64 / n);
            self.scalar("selfplay/black_wins", g, tally.black_wins as f64 / n);
            self.scalar("selfplay/resignations", g, tally.resignations as f64 / n);
            if tally.playthroughs_with_resign_point > 0 {
                self.scalar(
                    "selfplay/resign_false_positive_rate",
                    g,
                    tally.false_resignations as f64 / tally.playthroughs_with_resign_point as f64,
                );
            }
            self.scalar(
                "selfplay/positions_per_sec",
                g,
                tally.plies as f64 / report.selfplay_secs.max(1e-9),
            );
            self.flush_tensorboard();
        }
        report.tally = Some(tally);
        Ok(())
    }

    fn train(&mut self, generation: u64, report: &mut GenerationReport) -> Result<()> {
        let target = self.state.train_target.ok_or_else(|| anyhow!("run.json: no train target"))?;
        let device = self.config.device()?.device().map_err(|e| anyhow!("{e}"))?;
        let bar = progress_bar(self.config.run.steps_per_generation, "train");
        let first_step = target.saturating_sub(self.config.run.steps_per_generation);
        let init = self.dir.model(&model_name(0));
        let summary = train(
            TrainOptions {
                data_dir: &self.dir.path("selfplay"),
                checkpoint_dir: &self.dir.path("checkpoints"),
                tensorboard_dir: Some(&self.dir.path("tensorboard")),
                target_step: target,
                init: Some(&init),
                net: self.config.net.clone(),
                config: self.config.train.clone(),
                variant: self.config.variant.clone(),
                device,
                seed: self.config.seed,
                interrupted: Some(&self.interrupted),
            },
            |r| {
                bar.set_position(r.step.saturating_sub(first_step));
                bar.set_message(format!(
                    "loss {:.3} (policy {:.3}, value {:.3}), {:.0} samples/s",
                    r.total_loss, r.policy_loss, r.value_loss, r.samples_per_sec
                ));
            },
        )
        .map_err(|e| anyhow!("{e}"))?;
        bar.finish_and_clear();
        if summary.optimizer_restarted {
            eprintln!(
                "note: the newest checkpoint was written by the other training engine; its \
                 weights were resumed with a fresh optimizer state"
            );
        }
        if self.interrupted.load(Ordering::SeqCst) {
            return Ok(());
        }
        let provenance = Provenance {
            variant: self.config.variant.clone(),
            training_step: summary.end_step,
            parent: Some(format!("{}.safetensors", read_best(&self.dir)?)),
        };
        summary
            .net
            .save(&self.dir.candidate(generation), &provenance)
            .map_err(|e| anyhow!("{e}"))?;
        let secs = summary.data_secs + summary.compute_secs;
        let samples = (summary.end_step - summary.start_step) * self.config.train.batch_size as u64;
        report.train = Some((
            summary.start_step,
            summary.end_step,
            summary.first_loss,
            summary.last_loss,
            samples as f64 / secs.max(1e-9),
        ));
        Ok(())
    }

    /// Plays the gate; `Ok(false)` if interrupted.
    fn gate(&mut self, generation: u64) -> Result<bool> {
        let run = &self.config.run;
        let best = read_best(&self.dir)?;
        let candidate = model_name(generation);
        let record = if run.gate_games == 0 {
            GateRecord {
                passed: true,
                describe: "passed: no gating (run.gate_games = 0)".into(),
                line: None,
            }
        } else {
            let first =
                self.net_player(&self.dir.candidate(generation), &candidate, run.gate_nodes)?;
            let second = self.net_player(&self.dir.model(&best), &best, run.gate_nodes)?;
            let mut config = self.match_config(
                run.gate_games,
                self.config.seed ^ generation.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x6A7E,
                &format!("atomzero gate {candidate} vs {best}"),
            )?;
            if !run.gate_sprt.trim().is_empty() {
                config.sprt =
                    Some(run.gate_sprt.parse().map_err(|e| anyhow!("run.gate_sprt: {e}"))?);
            }
            let Some(result) = self.play(&first, &second, &config, Some(run.gate_threshold))?
            else {
                return Ok(false);
            };
            self.write_pgn(&format!("gate-{candidate}.pgn"), &result.result)?;
            let line = ResultsLine::from_match(&result.result, Some(&format!("gate {generation}")));
            append_result_once(&self.dir.eval("gates.jsonl"), &line)?;
            self.scalar("gate/score", generation, result.result.wdl.score());
            self.scalar("gate/passed", generation, if result.passed { 1.0 } else { 0.0 });
            self.flush_tensorboard();
            GateRecord { passed: result.passed, describe: result.describe(), line: Some(line) }
        };
        self.state.gate = Some(record);
        Ok(true)
    }

    fn promote(&mut self, generation: u64) -> Result<()> {
        let record = self.state.gate.clone().ok_or_else(|| anyhow!("run.json: no gate result"))?;
        let name = model_name(generation);
        let candidate = self.dir.candidate(generation);
        if record.passed {
            let target = self.dir.model(&name);
            if candidate.exists() {
                // Weights, then sidecar (the order the network crate writes), then best.json.
                copy_atomic(&candidate, &target)?;
                copy_atomic(
                    &atomzero_nn::sidecar_path(&candidate),
                    &atomzero_nn::sidecar_path(&target),
                )?;
            } else if !target.exists() {
                bail!("{}: the candidate to promote is missing", candidate.display());
            }
            if let Some(line) = &record.line {
                append_result_once(&self.dir.eval("results.jsonl"), line)?;
            }
            write_best(&self.dir, &name)?;
        }
        for path in [atomzero_nn::sidecar_path(&candidate), candidate] {
            let _ = std::fs::remove_file(path);
        }
        Ok(())
    }

    /// Evaluates the best network against every baseline (matches already recorded under
    /// their label are not replayed); `Ok(false)` if interrupted.
    fn evaluate(&mut self, generation: u64, report: &mut GenerationReport) -> Result<bool> {
        let run = &self.config.run;
        if run.eval_games == 0 {
            return Ok(true);
        }
        let best = read_best(&self.dir)?;
        let results = self.dir.eval("results.jsonl");
        for (i, baseline) in run.baselines.iter().enumerate() {
            let label = format!("eval {best} {baseline}");
            let line = match find_result(&results, &label)? {
                Some(line) => line,
                None => {
                    let net = self.net_player(&self.dir.model(&best), &best, run.eval_nodes)?;
                    let opponent = PlayerSpec::parse(baseline, &atomzero_eval::NoModels)
                        .map_err(|e| anyhow!("run.baselines: {baseline}: {e}"))?;
                    let config = self.match_config(
                        run.eval_games,
                        self.config.seed
                            ^ generation.wrapping_mul(0x2545_F491_4F6C_DD1D)
                            ^ i as u64,
                        &format!("atomzero eval {best} vs {baseline}"),
                    )?;
                    let Some(result) = self.play(&net, &opponent, &config, None)? else {
                        return Ok(false);
                    };
                    let file =
                        format!("eval-{best}-{}.pgn", baseline.replace([':', '=', ','], "_"));
                    self.write_pgn(&file, &result.result)?;
                    let line = ResultsLine::from_match(&result.result, Some(&label));
                    append_result_once(&results, &line)?;
                    let score = result.result.wdl.score();
                    self.scalar(&format!("eval/score_vs_{baseline}"), generation, score);
                    line
                }
            };
            report.evals.push((baseline.clone(), line));
        }
        self.write_ratings(generation)?;
        Ok(true)
    }

    /// Rewrites ratings.csv and elo.svg from results.jsonl.
    fn write_ratings(&mut self, generation: u64) -> Result<()> {
        let path = self.dir.eval("results.jsonl");
        let Ok(text) = std::fs::read_to_string(&path) else { return Ok(()) };
        let lines = read_results(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?;
        let anchor = self.config.run.baselines.first().cloned().unwrap_or_else(|| "random".into());
        let Ok(list) =
            rate(&lines, &RatingOptions { anchor: anchor.clone(), ..Default::default() })
        else {
            return Ok(());
        };
        fsutil::write_atomic(&self.dir.eval("ratings.csv"), list.to_csv().as_bytes())?;
        let (points, baselines) = generation_series(&list, generation_of);
        let title =
            format!("atomzero {}: Elo of promoted networks ({anchor} = 0)", self.config.variant);
        match elo_plot_svg(&title, &points, &baselines) {
            Ok(svg) => fsutil::write_atomic(&self.dir.eval("elo.svg"), svg.as_bytes())?,
            Err(e) => eprintln!("warning: {e}"),
        }
        if let Some(best) = read_best(&self.dir).ok().and_then(|b| list.get(&b).cloned()) {
            self.scalar("eval/elo", generation, best.elo);
        }
        self.flush_tensorboard();
        Ok(())
    }

    fn summary_line(&self, generation: u64, report: &GenerationReport, secs: f64) -> String {
        let mut parts = vec![format!("gen {generation:>3}")];
        if let Some(t) = &report.tally {
            if t.games > 0 {
                parts.push(format!(
                    "self-play {} games (+{} ={} -{}) {} positions, {:.0} pos/s",
                    t.games,
                    t.white_wins,
                    t.draws,
                    t.black_wins,
                    t.plies,
                    t.plies as f64 / report.selfplay_secs.max(1e-9)
                ));
                let removals = t.top_removals(3);
                if !removals.is_empty() {
                    parts.push(format!("removes {removals}"));
                }
            } else {
                parts.push("self-play done earlier".into());
            }
        }
        if let Some((from, to, first, last, rate)) = report.train {
            parts.push(format!(
                "train steps {from}->{to} loss {first:.3}->{last:.3} ({rate:.0} samples/s)"
            ));
        }
        if let Some(g) = &report.gate {
            let score = g.line.as_ref().map_or(String::new(), |l| {
                let n = (l.wins + l.draws + l.losses).max(1) as f64;
                format!(
                    " +{} ={} -{} ({:.1}%)",
                    l.wins,
                    l.draws,
                    l.losses,
                    100.0 * (l.wins as f64 + l.draws as f64 / 2.0) / n
                )
            });
            let verdict = if g.passed { "promoted" } else { "kept best" };
            parts.push(format!("gate{score} {verdict}"));
        }
        let best = read_best(&self.dir).unwrap_or_default();
        let mut evals = Vec::new();
        for (baseline, l) in &report.evals {
            let n = (l.wins + l.draws + l.losses).max(1) as f64;
            evals.push(format!(
                "{baseline} {:.0}% (+{} ={} -{})",
                100.0 * (l.wins as f64 + l.draws as f64 / 2.0) / n,
                l.wins,
                l.draws,
                l.losses
            ));
        }
        let elo = std::fs::read_to_string(self.dir.eval("ratings.csv")).ok().and_then(|csv| {
            csv.lines().find_map(|row| {
                let cols: Vec<&str> = row.split(',').collect();
                (cols.len() >= 4 && cols[1] == best)
                    .then(|| format!("Elo {} ± {}", cols[2], cols[3]))
            })
        });
        if generation == 0 && evals.is_empty() && elo.is_none() {
            parts.push(format!("initial network {best} (not evaluated: run.eval_games = 0)"));
        }
        if !evals.is_empty() || elo.is_some() {
            parts.push(format!(
                "best {best}{}{}",
                elo.map_or(String::new(), |e| format!(" {e}")),
                if evals.is_empty() { String::new() } else { format!(": {}", evals.join(", ")) }
            ));
        }
        parts.push(format!("{secs:.0} s"));
        parts.join(" | ")
    }

    fn budget_left(&self) -> bool {
        let run = &self.config.run;
        let generations_left = run.generations == 0 || self.state.generation <= run.generations;
        let time_left = run.max_minutes <= 0.0 || self.elapsed() < run.max_minutes * 60.0;
        generations_left && time_left
    }

    /// Runs stages until the budget is spent; `Err(Interrupted)` on Ctrl-C.
    fn run(&mut self) -> Result<std::result::Result<(), Interrupted>> {
        if self.state.stage == Stage::Init {
            self.init()?;
            let mut report = GenerationReport::default();
            if !self.evaluate(0, &mut report)? {
                return Ok(Err(Interrupted));
            }
            let line = self.summary_line(0, &report, self.elapsed());
            self.log(0, &line)?;
            self.state.generation = 1;
            self.advance(Stage::Selfplay)?;
        }
        while self.budget_left() {
            let generation = self.state.generation;
            let generation_start = Instant::now();
            let mut report = GenerationReport::default();
            if self.state.stage == Stage::Selfplay {
                self.selfplay(generation, &mut report)?;
                if let Err(i) = self.check_interrupt() {
                    return Ok(Err(i));
                }
                let step = atomzero_train::checkpoint::list(&self.dir.path("checkpoints"))
                    .pop()
                    .map_or(Ok(0), |(_, path)| {
                        atomzero_train::checkpoint::read_state(&path).map(|s| s.step)
                    })
                    .map_err(|e| anyhow!("{e}"))?;
                self.state.train_target = Some(step + self.config.run.steps_per_generation);
                self.advance(Stage::Train)?;
            }
            if self.state.stage == Stage::Train {
                self.train(generation, &mut report)?;
                if let Err(i) = self.check_interrupt() {
                    return Ok(Err(i));
                }
                self.advance(Stage::Gate)?;
            }
            if self.state.stage == Stage::Gate {
                if !self.gate(generation)? {
                    return Ok(Err(Interrupted));
                }
                self.advance(Stage::Promote)?;
            }
            if self.state.stage == Stage::Promote {
                self.promote(generation)?;
                report.gate = self.state.gate.clone();
                self.advance(Stage::Eval)?;
            }
            if self.state.stage == Stage::Eval {
                report.gate = report.gate.or_else(|| self.state.gate.clone());
                let promoted = self.state.gate.as_ref().is_none_or(|g| g.passed);
                if promoted && !self.evaluate(generation, &mut report)? {
                    return Ok(Err(Interrupted));
                }
                let line = self.summary_line(
                    generation,
                    &report,
                    generation_start.elapsed().as_secs_f64(),
                );
                self.log(generation, &line)?;
                self.state.generation += 1;
                self.state.train_target = None;
                self.state.gate = None;
                self.advance(Stage::Selfplay)?;
            }
        }
        Ok(Ok(()))
    }

    /// Prints the summary line of `generation` and appends it to log.txt, unless an earlier
    /// session (killed before it saved the next stage) already did.
    fn log(&self, generation: u64, line: &str) -> Result<()> {
        println!("{line}");
        let path = self.dir.path("log.txt");
        let prefix = format!("gen {generation:>3} |");
        let logged = std::fs::read_to_string(&path)
            .is_ok_and(|text| text.lines().any(|l| l.starts_with(&prefix)));
        if !logged {
            fsutil::append(&path, &format!("{line}\n"))?;
        }
        if !read_timeline(&self.dir.root)?.iter().any(|l| l.generation == generation) {
            let entry = TimelineLine {
                format: TIMELINE_FORMAT,
                generation,
                best: read_best(&self.dir)?,
                elapsed_secs: self.elapsed(),
                cpu_secs: self.cpu(),
                cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            };
            let text = serde_json::to_string(&entry)?;
            fsutil::append(&self.dir.path("timeline.jsonl"), &format!("{text}\n"))?;
        }
        Ok(())
    }
}

pub fn run(args: RunArgs) -> Result<ExitCode> {
    let root = args.dir.clone().unwrap_or_else(|| default_dir(args.config.as_deref()));
    let dir = RunDir { root: root.clone() };
    let (config, resumed) = resolve_config(&args, &dir)?;
    // Check the device before writing anything.
    config.device()?.device().map_err(|e| anyhow!("{e}"))?;
    for sub in ["models", "candidates", "selfplay", "checkpoints", "eval", "tensorboard"] {
        std::fs::create_dir_all(dir.path(sub))
            .with_context(|| format!("cannot create {}", dir.path(sub).display()))?;
    }
    remove_stale_temporaries(&root);
    if !resumed {
        let text = format!(
            "# The resolved config of this run (every key). Re-running `atomzero run --dir {}`\n# resumes with it.\n{}",
            root.display(),
            config.to_toml()?
        );
        fsutil::write_atomic(&dir.path("config.toml"), text.as_bytes())?;
    }
    let state = match load_state(&dir)? {
        Some(state) => state,
        None => RunState {
            format: STATE_FORMAT,
            generation: 0,
            stage: Stage::Init,
            elapsed_secs: 0.0,
            cpu_secs: 0.0,
            train_target: None,
            gate: None,
        },
    };
    if resumed {
        println!(
            "resuming {} at generation {} ({:?}), {:.1} min spent so far",
            root.display(),
            state.generation,
            state.stage,
            state.elapsed_secs / 60.0
        );
        if let Ok(log) = std::fs::read_to_string(dir.path("log.txt")) {
            print!("{log}");
        }
    } else {
        let NetConfig { blocks, filters, .. } = config.net;
        println!(
            "new run in {}: {} on {}, net {blocks}x{filters}, {} games + {} steps per generation, \
             budget {}",
            root.display(),
            match config.start()? {
                atomzero_rules::Start::Standard => config.variant.clone(),
                start => format!("{} ({start} start)", config.variant),
            },
            config.device,
            config.run.games_per_generation,
            config.run.steps_per_generation,
            match (config.run.generations, config.run.max_minutes) {
                (0, m) if m > 0.0 => format!("{m} min"),
                (g, m) if m > 0.0 => format!("{g} generations or {m} min"),
                (0, _) => "none (Ctrl-C to stop)".to_string(),
                (g, _) => format!("{g} generations"),
            }
        );
    }
    let tensorboard = match EventWriter::create(&dir.path("tensorboard")) {
        Ok(w) => Some(w),
        Err(e) => {
            eprintln!("warning: tensorboard: {e}");
            None
        }
    };
    let concurrency = if config.run.concurrency == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        config.run.concurrency
    };
    let mut run_loop = Loop {
        config: &config,
        dir,
        interrupted: interrupt_flag(),
        tensorboard,
        concurrency,
        session_start: Instant::now(),
        session_cpu_start: process_cpu_secs(),
        state,
    };
    match run_loop.run()? {
        Ok(()) => {
            let best = read_best(&run_loop.dir).unwrap_or_default();
            println!(
                "run finished after {} generations ({:.1} min): best network {}; ratings in {}, chart in {}",
                run_loop.state.generation.saturating_sub(1),
                run_loop.elapsed() / 60.0,
                run_loop.dir.model(&best).display(),
                run_loop.dir.eval("ratings.csv").display(),
                run_loop.dir.eval("elo.svg").display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(Interrupted) => {
            let _ = save_state(
                &run_loop.dir,
                &RunState {
                    elapsed_secs: run_loop.elapsed(),
                    cpu_secs: run_loop.cpu(),
                    ..run_loop.state.clone()
                },
            );
            eprintln!("interrupted: everything finished is saved; run the same command to resume");
            Ok(ExitCode::from(130))
        }
    }
}
