//! The trainer: the generation loop over a run directory, generation after generation:
//! self-play with the best network (in this process, or waiting for workers' shards) → train
//! the candidate on the replay window → gate it against the best → promote or not → evaluate
//! the best network against the fixed baselines → one summary line. The first
//! `run.warmup_generations` generations stop after self-play (the window fills first).
//!
//! Resuming: every stage is either idempotent or skips what is already stored. In-process
//! self-play counts the games already in this generation's shards and plays only the rest
//! (new seeds); with workers, a generation's shards are fixed by its manifest once written.
//! The trainer resumes from its newest checkpoint towards the step target fixed in
//! `run.json`; a gating or evaluation match killed half-way is replayed (its games are not
//! training data); match results are appended under a label and never appended twice;
//! promotion creates the network's objects, then moves `best.json` by compare-and-swap.
//!
//! One `impl Generations` block per job, each in its own file (KataGo's `cpp/search/` layout):
//! - this file: the options, [`run`], the state machine (`Generations::run`), time and budget,
//!   the summary line and the log;
//! - `selfplay.rs`: a generation's games, played here or taken from workers' shards (the
//!   manifest), and the training window's shard files;
//! - `training.rs`: generation 0's network and each generation's candidate (training);
//! - `checkpoints.rs`: the trainer's checkpoints in a remote run's store;
//! - `matches.rs`: gating, promotion (`crate::promotion`), evaluation and ratings.

mod checkpoints;
mod matches;
mod selfplay;
mod training;

pub use selfplay::WindowSeed;

use crate::config::Config;
use crate::error::{Result, RunError, io};
use crate::layout::{self, RunDir};
use crate::manifest::{Manifest, ShardEntry};
use crate::observer::Observer;
use crate::records::{TIMELINE_FORMAT, TimelineLine, append_line_unless, read_text, read_timeline};
use crate::report::{GenerationReport, selfplay_parts, summary_line_after, train_parts};
use crate::state::{RunState, Stage, load_state, read_best, save_state};
use atomzero_replay::ShardMeta;
use atomzero_store::{PutMode, StoreError, Version};
use atomzero_train::tensorboard::EventWriter;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Where a generation's self-play games come from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Selfplay {
    /// The trainer plays them (`atomzero run`).
    InProcess,
    /// Workers upload them; the trainer looks for new shards every `poll`.
    Workers {
        /// Time between two listings of the store while waiting.
        poll: Duration,
    },
}

/// What [`run`] is asked to do.
#[derive(Debug)]
pub struct TrainerOptions {
    /// The resolved config (with this session's budget).
    pub config: Config,
    /// The text of `config.toml` for a new run (`None` when resuming).
    pub new_run_config: Option<String>,
    /// Where self-play games come from.
    pub selfplay: Selfplay,
    /// Set on Ctrl-C: the current step finishes, everything finished is kept.
    pub interrupted: Arc<AtomicBool>,
    /// Generation 0 of a new run is this network (its architecture must be the config's)
    /// instead of random weights from the seed: a run that continues or fine-tunes a net
    /// (lc0's and KataGo's initial weights). Refused for a run past generation 0.
    pub init: Option<PathBuf>,
    /// A new run's training window starts with the newest shards of this directory (another
    /// run's `selfplay/`, enough for `train.window_positions`), copied in as generation 0's:
    /// a continued network trains on its line's games from its first step instead of on a
    /// window of its own first games. Refused for a run past generation 0.
    pub init_window: Option<PathBuf>,
}

/// How [`run`] ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The budget is spent.
    Finished {
        /// Generations finished in all.
        generations: u64,
        /// Wall time of the run, all sessions.
        elapsed_secs: f64,
        /// The best network's name.
        best: String,
    },
    /// Stopped by the interrupt flag; the state is saved.
    Interrupted,
}

/// The loop was stopped by the interrupt flag.
struct Interrupted;

/// CPU time of this process so far (all threads), in seconds.
fn process_cpu_secs() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// Runs the trainer on `dir` until the budget is spent or `options.interrupted` is set.
pub fn run(dir: &RunDir, options: TrainerOptions, observer: &mut dyn Observer) -> Result<Outcome> {
    let config = &options.config;
    config.validate()?;
    // Check the device before writing anything.
    let device = config.device()?.device().map_err(|e| RunError::Config(e.to_string()))?;
    if let Some(path) = &options.init {
        // An initial network that does not fit the config is refused before anything is written.
        atomzero_nn::load_with_config(path, &config.net, &device)
            .map_err(|e| RunError::Network(format!("initial network: {e}")))?;
    }
    // So are shards that the window cannot use.
    let init_window = match &options.init_window {
        Some(path) => {
            Some(WindowSeed::choose(path, config.train.window_positions, config.variant()?)?)
        }
        None => None,
    };
    let root = dir.local_root().to_path_buf();
    if dir.is_remote() {
        std::fs::create_dir_all(&root).map_err(io(&root))?;
    } else {
        for sub in layout::LOCAL_DIRS {
            let path = root.join(sub);
            std::fs::create_dir_all(&path).map_err(io(&path))?;
        }
    }
    if !dir.is_remote() {
        // Workers sharing the directory may be writing theirs now: only old ones go.
        layout::remove_stale_temporaries(&root);
    }
    if let Some(text) = &options.new_run_config {
        match dir.put(layout::CONFIG, text.as_bytes(), PutMode::Create) {
            Ok(_) => {}
            Err(RunError::Store(StoreError::Exists { location })) => {
                return Err(RunError::Config(format!(
                    "{location} appeared while this run was being created: another trainer started it"
                )));
            }
            Err(e) => return Err(e),
        }
    }
    dir.claim_mirror()?;
    if dir.is_remote() {
        // The mirror (emptied if it held another run) gets the same directories: libraries
        // write networks, checkpoints and event files there before they are uploaded.
        for sub in layout::LOCAL_DIRS {
            let path = root.join(sub);
            std::fs::create_dir_all(&path).map_err(io(&path))?;
        }
    }
    let (state, state_version) = match load_state(dir.store())? {
        Some((state, version)) => (state, Some(version)),
        None => (RunState::new(), None),
    };
    let new_run_only = options.init.is_some() || options.init_window.is_some();
    if new_run_only && state_version.is_some() && state.stage != Stage::Init {
        return Err(RunError::Config(format!(
            "an initial network or window names generation 0 of a new run; {} is at generation {}",
            dir.describe(layout::STATE),
            state.generation
        )));
    }
    let tensorboard = match EventWriter::create(&dir.local(layout::TENSORBOARD)) {
        Ok(w) => Some(w),
        Err(e) => {
            observer.warning(&format!("tensorboard: {e}"));
            None
        }
    };
    let concurrency = if config.run.concurrency == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        config.run.concurrency
    };
    let mut generations = Generations {
        config,
        dir,
        selfplay: options.selfplay,
        interrupted: options.interrupted.clone(),
        tensorboard,
        concurrency,
        session_start: Instant::now(),
        session_cpu_start: process_cpu_secs(),
        state,
        state_version,
        observer,
        manifests: BTreeMap::new(),
        lr_drop_reported: false,
        inspected: BTreeMap::new(),
        init: options.init.clone(),
        init_window,
    };
    match generations.run()? {
        Ok(()) => {
            generations.state.finished = true;
            generations.advance(generations.state.stage)?;
            generations.publish_tensorboard()?;
            let best = read_best(dir.store())?.map(|(name, _)| name).unwrap_or_default();
            Ok(Outcome::Finished {
                generations: generations.state.generation.saturating_sub(1),
                elapsed_secs: generations.state.elapsed_secs,
                best,
            })
        }
        Err(Interrupted) => {
            generations.advance(generations.state.stage)?;
            generations.publish_tensorboard()?;
            Ok(Outcome::Interrupted)
        }
    }
}

/// A shard looked at while waiting for workers: what it holds, or why it is not counted.
type Inspected = std::result::Result<ShardEntry, String>;

struct Generations<'a> {
    config: &'a Config,
    dir: &'a RunDir,
    selfplay: Selfplay,
    interrupted: Arc<AtomicBool>,
    tensorboard: Option<EventWriter>,
    concurrency: usize,
    session_start: Instant,
    /// The process's CPU time when `session_start` was taken.
    session_cpu_start: f64,
    state: RunState,
    /// The version of `run.json` this trainer last read or wrote.
    state_version: Option<Version>,
    observer: &'a mut dyn Observer,
    /// Manifests read so far (they never change).
    manifests: BTreeMap<u64, Option<Manifest>>,
    /// The learning-rate drop (`run.lr_drop_at`) was announced in this session.
    lr_drop_reported: bool,
    /// Worker shards looked at while waiting (they never change).
    inspected: BTreeMap<String, Inspected>,
    /// Generation 0's weights for a new run (`None`: random from the seed).
    init: Option<PathBuf>,
    /// Generation 0's shards for a new run's window (`None`: none).
    init_window: Option<WindowSeed>,
}

impl Generations<'_> {
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
        let version = save_state(self.dir.store(), &self.state, self.state_version.as_ref())?;
        self.state_version = Some(version);
        Ok(())
    }

    /// Generation `generation` only plays self-play (`run.warmup_generations`).
    fn warming_up(&self, generation: u64) -> bool {
        generation <= self.config.run.warmup_generations
    }

    fn check_interrupt(&self) -> std::result::Result<(), Interrupted> {
        if self.interrupted.load(Ordering::SeqCst) { Err(Interrupted) } else { Ok(()) }
    }

    fn scalar(&mut self, tag: &str, step: u64, value: f64) {
        if let Some(tb) = self.tensorboard.as_mut()
            && let Err(e) = tb.scalar(tag, step, value as f32)
        {
            self.observer.warning(&format!("tensorboard: {e}; no more run scalars this session"));
            self.tensorboard = None;
        }
    }

    fn flush_tensorboard(&mut self) {
        if let Some(tb) = self.tensorboard.as_mut() {
            let _ = tb.flush();
        }
    }

    /// Uploads the TensorBoard files of a remote run.
    fn publish_tensorboard(&mut self) -> Result<()> {
        if !self.dir.is_remote() {
            return Ok(());
        }
        self.flush_tensorboard();
        let local = self.dir.local(layout::TENSORBOARD);
        let Ok(entries) = std::fs::read_dir(&local) else { return Ok(()) };
        for entry in entries.filter_map(|e| e.ok()) {
            let name = entry.file_name().to_string_lossy().into_owned();
            let key = format!("{}/{name}", layout::TENSORBOARD);
            if entry.path().is_file() && atomzero_store::check_key(&key).is_ok() {
                self.dir.publish(&key, PutMode::Overwrite)?;
            }
        }
        Ok(())
    }

    fn best(&self) -> Result<(String, Version)> {
        read_best(self.dir.store())?.ok_or_else(|| RunError::Corrupt {
            location: self.dir.describe(layout::BEST),
            reason: "missing".into(),
        })
    }

    fn budget_left(&self) -> bool {
        let run = &self.config.run;
        let generations_left = run.generations == 0 || self.state.generation <= run.generations;
        let time_left = run.max_minutes <= 0.0 || self.elapsed() < run.max_minutes * 60.0;
        generations_left && time_left
    }

    /// The summary line: the finished stages' parts saved in the state (perhaps by an earlier
    /// session), the gate and evaluation from `report`; `secs` this session's time in the
    /// generation, used only when the state does not say when the generation began.
    fn summary(&self, generation: u64, report: &GenerationReport, secs: f64) -> Result<String> {
        let best = read_best(self.dir.store())?.map(|(b, _)| b).unwrap_or_default();
        let ratings = read_text(self.dir.store(), layout::RATINGS)?;
        let secs = self
            .state
            .generation_start_secs
            .map_or(secs, |start| (self.elapsed() - start).max(0.0));
        Ok(summary_line_after(generation, &self.state.done, report, &best, &ratings, secs))
    }

    /// Runs stages until the budget is spent; `Err(Interrupted)` when interrupted.
    fn run(&mut self) -> Result<std::result::Result<(), Interrupted>> {
        if self.state.stage == Stage::Init {
            self.init()?;
            let mut report = GenerationReport::default();
            if !self.evaluate(0, &mut report)? {
                return Ok(Err(Interrupted));
            }
            let line = self.summary(0, &report, self.elapsed())?;
            self.log(0, &line)?;
            self.state.generation = 1;
            self.state.generation_start_secs = Some(self.elapsed());
            self.advance(Stage::Selfplay)?;
        }
        if self.state.finished && self.budget_left() {
            // A larger budget continues a finished run (and workers may start again).
            self.state.finished = false;
            self.advance(self.state.stage)?;
        }
        while self.budget_left() {
            let generation = self.state.generation;
            let generation_start = Instant::now();
            let mut report = GenerationReport::default();
            if self.state.stage == Stage::Selfplay {
                match self.selfplay {
                    Selfplay::InProcess => self.selfplay_here(generation, &mut report)?,
                    Selfplay::Workers { poll } => {
                        if let Err(i) = self.selfplay_from_workers(generation, poll, &mut report)? {
                            return Ok(Err(i));
                        }
                    }
                }
                if let Err(i) = self.check_interrupt() {
                    return Ok(Err(i));
                }
                self.state.done = selfplay_parts(&report);
                if self.warming_up(generation) {
                    // Self-play only: the window fills before the first training step.
                    self.state.done.push(format!(
                        "window warm-up {generation} of {}: no training",
                        self.config.run.warmup_generations
                    ));
                    self.state.gate = None;
                    self.advance(Stage::Eval)?;
                } else {
                    self.fetch_checkpoint()?;
                    let step =
                        atomzero_train::checkpoint::list(&self.dir.local(layout::CHECKPOINTS))
                            .pop()
                            .map_or(Ok(0), |(_, path)| {
                                atomzero_train::checkpoint::read_state(&path).map(|s| s.step)
                            })
                            .map_err(|e| {
                                RunError::Train(atomzero_train::TrainError::Checkpoint(e))
                            })?;
                    self.state.train_target = Some(step + self.config.run.steps_per_generation);
                    self.advance(Stage::Train)?;
                }
            }
            if self.state.stage == Stage::Train {
                self.train(generation, &mut report)?;
                if let Err(i) = self.check_interrupt() {
                    return Ok(Err(i));
                }
                self.state.done.extend(train_parts(&report));
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
                let evaluate = promoted && !self.warming_up(generation);
                if evaluate && !self.evaluate(generation, &mut report)? {
                    return Ok(Err(Interrupted));
                }
                let line =
                    self.summary(generation, &report, generation_start.elapsed().as_secs_f64())?;
                self.log(generation, &line)?;
                self.publish_tensorboard()?;
                self.state.generation += 1;
                self.state.train_target = None;
                self.state.gate = None;
                self.state.done.clear();
                self.state.generation_start_secs = Some(self.elapsed());
                self.advance(Stage::Selfplay)?;
            }
        }
        Ok(Ok(()))
    }

    /// Reports the summary line of `generation` and appends it to log.txt, unless an earlier
    /// session (killed before it saved the next stage) already did; the same for the
    /// timeline.
    fn log(&mut self, generation: u64, line: &str) -> Result<()> {
        self.observer.line(line);
        let prefix = format!("gen {generation:>3} |");
        append_line_unless(self.dir.store(), layout::LOG, line, |l| l.starts_with(&prefix))?;
        if !read_timeline(self.dir.store())?.iter().any(|l| l.generation == generation) {
            let entry = TimelineLine {
                format: TIMELINE_FORMAT,
                generation,
                best: self.best()?.0,
                elapsed_secs: self.elapsed(),
                cpu_secs: self.cpu(),
                cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            };
            let text = serde_json::to_string(&entry).map_err(|e| RunError::Corrupt {
                location: self.dir.describe(layout::TIMELINE),
                reason: e.to_string(),
            })?;
            append_line_unless(self.dir.store(), layout::TIMELINE, &text, |_| false)?;
        }
        Ok(())
    }
}

/// The metadata of a shard played now with `model`.
pub(crate) fn shard_meta(model: &str, generation: u64, note: String) -> ShardMeta {
    ShardMeta {
        model: model.to_string(),
        generation,
        created_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        note,
    }
}
