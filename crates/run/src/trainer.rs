//! The trainer: the generation loop over a run directory, generation after generation:
//! self-play with the best network (in this process, or waiting for workers' shards) → train
//! the candidate on the replay window → gate it against the best → promote or not → evaluate
//! the best network against the fixed baselines → one summary line.
//!
//! Resuming: every stage is either idempotent or skips what is already stored. In-process
//! self-play counts the games already in this generation's shards and plays only the rest
//! (new seeds); with workers, a generation's shards are fixed by its manifest once written.
//! The trainer resumes from its newest checkpoint towards the step target fixed in
//! `run.json`; a gating or evaluation match killed half-way is replayed (its games are not
//! training data); match results are appended under a label and never appended twice;
//! promotion creates the network's objects, then moves `best.json` by compare-and-swap.

use crate::config::Config;
use crate::error::{Result, RunError, io};
use crate::games::{PlayOptions, Tally, play_games};
use crate::layout::{self, RunDir, model_key, model_name};
use crate::manifest::{MANIFEST_FORMAT, Manifest, ShardEntry, create_manifest, read_manifest};
use crate::models::{self, NetLoader};
use crate::observer::Observer;
use crate::records::{
    TIMELINE_FORMAT, TimelineLine, append_line_unless, append_result_once, find_result,
    read_results_at, read_text, read_timeline,
};
use crate::report::{GenerationReport, selfplay_parts, summary_line_after, train_parts};
use crate::state::{GateRecord, RunState, Stage, load_state, read_best, save_state, write_best};
use atomzero_belief::BeliefModel;
use atomzero_eval::{
    GateConfig, MatchConfig, MatchResult, Openings as MatchOpenings, PlayerSpec, RatingOptions,
    ResultsLine, elo_plot_svg, generation_of, generation_series, rate,
};
use atomzero_nn::Provenance;
use atomzero_replay::{GameRecord, ShardMeta, decode_shard, encode_shard};
use atomzero_selfplay::Openings;
use atomzero_store::{PutMode, StoreError, Version};
use atomzero_train::TrainerConfig;
use atomzero_train::tensorboard::EventWriter;
use atomzero_train::{Data, TrainOptions, train};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
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
    if options.init.is_some() && state_version.is_some() && state.stage != Stage::Init {
        return Err(RunError::Config(format!(
            "an initial network names generation 0 of a new run; {} is at generation {}",
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

    fn openings(&self) -> Result<MatchOpenings> {
        let variant = self.config.variant()?;
        if self.config.run.openings.trim().is_empty() {
            Ok(MatchOpenings::default())
        } else {
            MatchOpenings::from_epd_file(Path::new(&self.config.run.openings), variant)
                .map_err(|e| RunError::Config(format!("run.openings: {e}")))
        }
    }

    /// `net:` player for the network at `path`, named `name` in results and ratings (in the
    /// bomb variant with as many worlds per move as self-play draws).
    fn net_player(&self, path: &Path, name: &str, nodes: u32) -> Result<PlayerSpec> {
        let loader = NetLoader { device: self.config.device()? };
        let worlds = self.config.selfplay.determinizations;
        let spec = format!("net:{},nodes={nodes},worlds={worlds},name={name}", path.display());
        PlayerSpec::parse(&spec, &loader)
            .map_err(|e| RunError::Network(format!("{}: {e}", path.display())))
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

    /// Plays a match with progress reports; `None` if interrupted.
    fn play(
        &mut self,
        first: &PlayerSpec,
        second: &PlayerSpec,
        config: &MatchConfig,
        threshold: Option<f64>,
    ) -> Result<Option<atomzero_eval::GateResult>> {
        let observer = &mut *self.observer;
        observer.start(&format!("{} vs {}", first.name(), second.name()), config.games as u64, 0);
        let mut on_game = |p: &atomzero_eval::Progress<'_>| {
            observer.progress(
                p.finished as u64,
                &format!(
                    "+{} ={} -{} ({:.1}%)",
                    p.wdl.wins,
                    p.wdl.draws,
                    p.wdl.losses,
                    100.0 * p.wdl.score()
                ),
            );
        };
        let result = atomzero_eval::gate(
            first,
            second,
            &GateConfig { match_config: config.clone(), threshold },
            &mut on_game,
        )
        .map_err(|e| RunError::Match(e.to_string()))?;
        observer.finish();
        if result.result.interrupted {
            return Ok(None);
        }
        Ok(Some(result))
    }

    fn write_pgn(&self, file: &str, result: &MatchResult) -> Result<()> {
        self.dir.put(&layout::eval_key(file), result.pgn().as_bytes(), PutMode::Overwrite)?;
        Ok(())
    }

    /// Generation 0: the initial network (random weights from the seed, or the `init`
    /// network's), best.json.
    fn init(&mut self) -> Result<()> {
        let name = model_name(0);
        let key = model_key(&name);
        let exists = self.dir.store().get(&layout::sidecar_key(&key))?.is_some();
        if !exists {
            let path = self.dir.local(&key);
            let device =
                self.config.device()?.device().map_err(|e| RunError::Config(e.to_string()))?;
            let (net, parent) = match &self.init {
                Some(init) => {
                    let (net, _) =
                        atomzero_nn::load_with_config(init, &self.config.net, &device)
                            .map_err(|e| RunError::Network(format!("initial network: {e}")))?;
                    self.observer.line(&format!(
                        "generation 0 is the network {} (not random weights)",
                        init.display()
                    ));
                    (net, Some(init.display().to_string()))
                }
                None => {
                    device.seed(self.config.seed);
                    let net = self
                        .config
                        .net
                        .init(&device)
                        .map_err(|e| RunError::Network(e.to_string()))?;
                    (net, None)
                }
            };
            let provenance = Provenance {
                variant: self.config.variant.clone(),
                training_step: 0,
                parent,
                belief: None,
            };
            net.save(&path, &provenance).map_err(|e| RunError::Network(e.to_string()))?;
            self.dir.publish_network(&key, PutMode::Create)?;
        }
        let current = read_best(self.dir.store())?;
        write_best(self.dir.store(), &name, current.as_ref().map(|(_, v)| v))?;
        Ok(())
    }

    /// Decodes the shard under `key` (fetched into the mirror if remote).
    fn read_shard_at(&self, key: &str) -> Result<(ShardMeta, Vec<GameRecord>)> {
        let path = self.dir.fetch(key, false)?;
        let bytes = std::fs::read(&path).map_err(io(&path))?;
        // The error names the shard once (`RunError::Corrupt` puts its location first).
        decode_shard(&bytes, Path::new(&self.dir.describe(key))).map_err(|e| RunError::Corrupt {
            location: self.dir.describe(key),
            reason: e.problem(),
        })
    }

    /// Keys of the shards this process played for `generation`, oldest first.
    fn local_shards(&self, generation: u64) -> Result<Vec<String>> {
        let prefix = format!("{}gen{generation:06}-", layout::SELFPLAY);
        Ok(self.dir.store().list(&prefix)?.into_iter().map(|e| e.key).collect())
    }

    /// Games already in this generation's own shards (unreadable ones are reported, not
    /// counted).
    fn games_stored(&mut self, generation: u64) -> Result<usize> {
        let mut games = 0;
        for key in self.local_shards(generation)? {
            match self.read_shard_at(&key) {
                Ok((_, records)) => games += records.len(),
                Err(e) => self.observer.warning(&format!("{e} (not counted)")),
            }
        }
        Ok(games)
    }

    /// In-process self-play: plays the games this generation still lacks.
    fn selfplay_here(&mut self, generation: u64, report: &mut GenerationReport) -> Result<()> {
        let run = &self.config.run;
        let done = self.games_stored(generation)?;
        let wanted = run.games_per_generation.saturating_sub(done);
        let (best, _) = self.best()?;
        let start = Instant::now();
        let mut tally = Tally::default();
        if wanted > 0 {
            let path = self.dir.fetch_network(&model_key(&best), false)?;
            let model = models::load(&path.display().to_string(), 0, self.config.device()?)
                .map_err(RunError::Network)?;
            let openings =
                Openings::random(self.config.start()?, self.config.selfplay.random_opening_plies);
            let mut sequence = self
                .local_shards(generation)?
                .iter()
                .filter_map(|key| {
                    key.rsplit_once('-')?.1.strip_suffix(".shard")?.parse::<u64>().ok()
                })
                .map(|s| s + 1)
                .max()
                .unwrap_or(0);
            let seed = self.config.seed
                ^ generation.wrapping_mul(0x2545_F491_4F6C_DD1D)
                ^ sequence.wrapping_mul(0x9E37_79B9);
            let options = PlayOptions {
                selfplay: &self.config.selfplay,
                variant: self.config.variant()?,
                openings: &openings,
                games: wanted,
                seed,
                games_per_shard: run.games_per_shard,
                interrupted: &self.interrupted,
            };
            let store = self.dir.store();
            let model_name = model.name.clone();
            let observer = &mut *self.observer;
            observer.start("self-play", run.games_per_generation as u64, done as u64);
            let sink = |games: &[GameRecord]| -> Result<()> {
                let meta = shard_meta(&model_name, generation, format!("{} games", games.len()));
                let key = layout::local_shard_key(generation, sequence);
                store.put(&key, &encode_shard(&meta, games), PutMode::Create)?;
                sequence += 1;
                Ok(())
            };
            let on_game = |_: Option<&GameRecord>, t: &Tally| -> Result<()> {
                let secs = start.elapsed().as_secs_f64().max(1e-9);
                observer.progress(
                    (done + t.games) as u64,
                    &format!(
                        "{:.0} positions/s, network {:.0} positions/s",
                        t.plies as f64 / secs,
                        t.network_positions as f64 / secs
                    ),
                );
                Ok(())
            };
            tally = play_games(&model, &options, sink, on_game)?;
            self.observer.finish();
        }
        report.selfplay_secs = start.elapsed().as_secs_f64();
        if tally.games > 0 {
            self.selfplay_scalars(generation, &tally, report.selfplay_secs);
        }
        report.tally = Some(tally);
        Ok(())
    }

    fn selfplay_scalars(&mut self, g: u64, tally: &Tally, secs: f64) {
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
        self.scalar("selfplay/positions_per_sec", g, tally.plies as f64 / secs.max(1e-9));
        self.flush_tensorboard();
    }

    /// The manifest of `generation`, read once.
    fn manifest(&mut self, generation: u64) -> Result<Option<Manifest>> {
        if let Some(m) = self.manifests.get(&generation) {
            return Ok(m.clone());
        }
        let manifest = read_manifest(self.dir.store(), generation)?;
        // A missing manifest may still be written (the current generation): keep only
        // those found.
        if manifest.is_some() {
            self.manifests.insert(generation, manifest.clone());
        }
        Ok(manifest)
    }

    /// Worker shards counted in generations before `generation`.
    fn claimed_before(&mut self, generation: u64) -> Result<BTreeSet<String>> {
        let mut claimed = BTreeSet::new();
        for g in 1..generation {
            if let Some(m) = self.manifest(g)? {
                claimed.extend(m.shards.into_iter().map(|s| s.key));
            }
        }
        Ok(claimed)
    }

    /// With workers: waits until the shards no manifest lists hold a generation's games,
    /// then writes this generation's manifest with all of them.
    fn selfplay_from_workers(
        &mut self,
        generation: u64,
        poll: Duration,
        report: &mut GenerationReport,
    ) -> Result<std::result::Result<(), Interrupted>> {
        let wanted = self.config.run.games_per_generation;
        let start = Instant::now();
        let manifest = match self.manifest(generation)? {
            Some(m) => m,
            None => {
                let claimed = self.claimed_before(generation)?;
                self.observer.start("waiting for workers' games", wanted as u64, 0);
                let pending = loop {
                    let keys: Vec<String> = self
                        .dir
                        .store()
                        .list(layout::SELFPLAY)?
                        .into_iter()
                        .map(|e| e.key)
                        .filter(|k| layout::is_worker_shard(k) && !claimed.contains(k))
                        .collect();
                    let mut pending = Vec::new();
                    for key in keys {
                        if !self.inspected.contains_key(&key) {
                            let inspected = self.inspect(&key)?;
                            if let Err(reason) = &inspected {
                                self.observer.warning(&format!("{reason} (not counted)"));
                            }
                            self.inspected.insert(key.clone(), inspected);
                        }
                        if let Some(Ok(entry)) = self.inspected.get(&key) {
                            pending.push(entry.clone());
                        }
                    }
                    let games: usize = pending.iter().map(|e| e.games).sum();
                    let workers: BTreeSet<&str> =
                        pending.iter().filter_map(|e| worker_of(&e.key)).collect();
                    self.observer.progress(
                        games.min(wanted) as u64,
                        &format!(
                            "{games} games in {} shards from {} workers",
                            pending.len(),
                            workers.len()
                        ),
                    );
                    if games >= wanted {
                        break pending;
                    }
                    // Wait, but answer Ctrl-C within a tenth of a second.
                    let until = Instant::now() + poll;
                    while Instant::now() < until {
                        if self.check_interrupt().is_err() {
                            self.observer.finish();
                            return Ok(Err(Interrupted));
                        }
                        std::thread::sleep(Duration::from_millis(100).min(poll));
                    }
                };
                self.observer.finish();
                let manifest = Manifest {
                    format: MANIFEST_FORMAT,
                    generation,
                    shards: pending,
                    wait_secs: start.elapsed().as_secs_f64(),
                };
                let manifest = create_manifest(self.dir.store(), &manifest)?;
                self.manifests.insert(generation, Some(manifest.clone()));
                manifest
            }
        };
        let mut tally = Tally::default();
        for s in &manifest.shards {
            tally.games += s.games;
            tally.plies += s.plies;
            tally.targets += s.targets;
            tally.white_wins += s.white_wins;
            tally.draws += s.draws;
            tally.black_wins += s.black_wins;
            tally.merge(&Tally { removals: s.removals.clone(), ..Tally::default() });
        }
        report.selfplay_secs = manifest.wait_secs;
        report.workers = Some(
            manifest.shards.iter().filter_map(|s| worker_of(&s.key)).collect::<BTreeSet<_>>().len(),
        );
        self.selfplay_scalars(generation, &tally, manifest.wait_secs);
        report.tally = Some(tally);
        Ok(Ok(()))
    }

    /// What a worker shard holds (`Err`: why it is not counted).
    fn inspect(&mut self, key: &str) -> Result<Inspected> {
        match self.read_shard_at(key) {
            Ok((meta, records)) => {
                let mut tally = Tally::default();
                for r in &records {
                    tally.add_record(r);
                }
                Ok(Ok(ShardEntry {
                    key: key.to_string(),
                    model: meta.model,
                    games: tally.games,
                    targets: tally.targets,
                    plies: tally.plies,
                    white_wins: tally.white_wins,
                    draws: tally.draws,
                    black_wins: tally.black_wins,
                    removals: tally.removals,
                }))
            }
            Err(e @ RunError::Corrupt { .. }) => Ok(Err(e.to_string())),
            Err(e) => Err(e),
        }
    }

    /// The shard files of the training window of `generation`, oldest first: every
    /// generation's own shards, then its manifest's; only as many of the newest as the
    /// window needs are fetched from a remote store.
    fn window_files(&mut self, generation: u64) -> Result<Vec<PathBuf>> {
        let mut own: BTreeMap<u64, Vec<String>> = BTreeMap::new();
        for entry in self.dir.store().list(&format!("{}gen", layout::SELFPLAY))? {
            if let Some(g) = layout::local_shard_generation(&entry.key)
                && g <= generation
            {
                own.entry(g).or_default().push(entry.key);
            }
        }
        // (key, targets if known), newest first.
        let mut newest_first: Vec<(String, Option<usize>)> = Vec::new();
        for g in (1..=generation).rev() {
            if let Some(m) = self.manifest(g)? {
                newest_first
                    .extend(m.shards.iter().rev().map(|s| (s.key.clone(), Some(s.targets))));
            }
            if let Some(keys) = own.get(&g) {
                newest_first.extend(keys.iter().rev().map(|k| (k.clone(), None)));
            }
        }
        let window = self.config.train.window_positions;
        let mut covered = 0usize;
        let mut files = Vec::new();
        for (key, targets) in newest_first {
            if covered >= window {
                break;
            }
            let path = self.dir.fetch(&key, false)?;
            covered += match targets {
                Some(t) => t,
                // A local run's own shards: the window reader counts them itself.
                None if !self.dir.is_remote() => 0,
                None => match self.read_shard_at(&key) {
                    Ok((_, records)) => records.iter().map(GameRecord::n_targets).sum(),
                    Err(_) => 0,
                },
            };
            files.push(path);
        }
        files.reverse();
        Ok(files)
    }

    /// Brings the newest checkpoint of a remote run into the mirror, unless the mirror has
    /// one as new.
    fn fetch_checkpoint(&mut self) -> Result<()> {
        if !self.dir.is_remote() {
            return Ok(());
        }
        let local_dir = self.dir.local(layout::CHECKPOINTS);
        let local_newest = atomzero_train::checkpoint::list(&local_dir).pop().map(|(s, _)| s);
        let Some((step, files)) = remote_checkpoints(self.dir)?.pop() else { return Ok(()) };
        if local_newest.is_some_and(|s| s >= step) {
            return Ok(());
        }
        let name = checkpoint_dir_name(step);
        let partial = local_dir.join(format!(".{name}.partial"));
        let _ = std::fs::remove_dir_all(&partial);
        for key in &files {
            let object = self.dir.store().get(key)?.ok_or_else(|| RunError::Corrupt {
                location: self.dir.describe(key),
                reason: "vanished while being fetched".into(),
            })?;
            let file = key.rsplit('/').next().unwrap_or_default();
            layout::write_local(&partial.join(file), &object.bytes)?;
        }
        let target = local_dir.join(&name);
        std::fs::rename(&partial, &target).map_err(io(&target))?;
        Ok(())
    }

    /// Uploads the newest local checkpoint of a remote run (its `state.json` last) and removes
    /// remote checkpoints beyond the newest `keep_checkpoints`.
    fn publish_checkpoint(&mut self) -> Result<()> {
        if !self.dir.is_remote() {
            return Ok(());
        }
        let local_dir = self.dir.local(layout::CHECKPOINTS);
        let Some((step, path)) = atomzero_train::checkpoint::list(&local_dir).pop() else {
            return Ok(());
        };
        let remote = remote_checkpoints(self.dir)?;
        if !remote.iter().any(|(s, _)| *s == step) {
            let prefix = format!("{}/{}", layout::CHECKPOINTS, checkpoint_dir_name(step));
            let mut names: Vec<String> = std::fs::read_dir(&path)
                .map_err(io(&path))?
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n != STATE_FILE && !n.starts_with('.'))
                .collect();
            names.sort();
            names.push(STATE_FILE.to_string());
            for name in names {
                let file = path.join(&name);
                let bytes = std::fs::read(&file).map_err(io(&file))?;
                self.dir.put(&format!("{prefix}/{name}"), &bytes, PutMode::Overwrite)?;
            }
        }
        let keep = self.config.train.keep_checkpoints.max(1);
        let remote = remote_checkpoints(self.dir)?;
        if remote.len() > keep {
            for (_, files) in &remote[..remote.len() - keep] {
                // state.json first: the checkpoint stops counting before its parts go.
                let mut files = files.clone();
                files.sort_by_key(|k| !k.ends_with(STATE_FILE));
                for key in files {
                    self.dir.store().delete(&key)?;
                }
            }
        }
        Ok(())
    }

    fn train(&mut self, generation: u64, report: &mut GenerationReport) -> Result<()> {
        let target = self.state.train_target.ok_or_else(|| RunError::Corrupt {
            location: self.dir.describe(layout::STATE),
            reason: "no train target".into(),
        })?;
        let device = self.config.device()?.device().map_err(|e| RunError::Config(e.to_string()))?;
        self.fetch_checkpoint()?;
        let files = self.window_files(generation)?;
        let init = self.dir.fetch_network(&model_key(&model_name(0)), false)?;
        let steps = self.config.run.steps_per_generation;
        let first_step = target.saturating_sub(steps);
        let factor = self.config.run.learning_rate_factor(generation, self.elapsed());
        let learning_rate = self.config.train.learning_rate * factor;
        if factor < 1.0 && !self.lr_drop_reported {
            self.lr_drop_reported = true;
            self.observer.line(&format!(
                "learning rate {} -> {learning_rate} from generation {generation} (run.lr_drop_at = {})",
                self.config.train.learning_rate, self.config.run.lr_drop_at
            ));
        }
        let checkpoints = self.dir.local(layout::CHECKPOINTS);
        let tensorboard = self.dir.local(layout::TENSORBOARD);
        let selfplay_dir = self.dir.local("selfplay");
        let observer = &mut *self.observer;
        observer.start("train", steps, 0);
        let summary = train(
            TrainOptions {
                data: Data::Files(&files, &selfplay_dir),
                checkpoint_dir: &checkpoints,
                tensorboard_dir: Some(&tensorboard),
                target_step: target,
                init: Some(&init),
                net: self.config.net.clone(),
                config: TrainerConfig { learning_rate, ..self.config.train.clone() },
                variant: self.config.variant.clone(),
                device,
                seed: self.config.seed,
                interrupted: Some(&self.interrupted),
            },
            |r| {
                observer.progress(
                    r.step.saturating_sub(first_step),
                    &format!(
                        "loss {:.3} (policy {:.3}, value {:.3}), {:.0} samples/s",
                        r.total_loss, r.policy_loss, r.value_loss, r.samples_per_sec
                    ),
                );
            },
        )?;
        observer.finish();
        for e in &summary.skipped {
            self.observer
                .warning(&format!("{e} (skipped: its games are not in the training window)"));
        }
        if summary.optimizer_restarted {
            self.observer.warning(
                "the newest checkpoint was written by the other training engine; its weights \
                 were resumed with a fresh optimizer state",
            );
        }
        self.publish_checkpoint()?;
        if self.interrupted.load(Ordering::SeqCst) {
            return Ok(());
        }
        let provenance = Provenance {
            variant: self.config.variant.clone(),
            training_step: summary.end_step,
            parent: Some(format!("{}.safetensors", self.best()?.0)),
            belief: summary.belief.as_ref().map(BeliefModel::to_json),
        };
        report.belief = summary.belief.as_ref().and_then(|b| b.report.as_ref()).map(|r| r.heldout);
        if let Some(belief) = report.belief.filter(|b| b.positions > 0) {
            self.scalar("belief/top1", generation, belief.top1());
            self.scalar("belief/uniform_top1", generation, belief.uniform_top1());
        }
        let key = layout::candidate_key(generation);
        summary
            .net
            .save(&self.dir.local(&key), &provenance)
            .map_err(|e| RunError::Network(e.to_string()))?;
        self.dir.publish_network(&key, PutMode::Overwrite)?;
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
        let (best, _) = self.best()?;
        let candidate = model_name(generation);
        let record = if run.gate_games == 0 {
            GateRecord {
                passed: true,
                describe: "passed: no gating (run.gate_games = 0)".into(),
                line: None,
            }
        } else {
            let candidate_path =
                self.dir.fetch_network(&layout::candidate_key(generation), true)?;
            let best_path = self.dir.fetch_network(&model_key(&best), false)?;
            let first = self.net_player(&candidate_path, &candidate, run.gate_nodes)?;
            let second = self.net_player(&best_path, &best, run.gate_nodes)?;
            let mut config = self.match_config(
                run.gate_games,
                self.config.seed ^ generation.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x6A7E,
                &format!("atomzero gate {candidate} vs {best}"),
            )?;
            if !run.gate_sprt.trim().is_empty() {
                config.sprt = Some(
                    run.gate_sprt
                        .parse()
                        .map_err(|e| RunError::Config(format!("run.gate_sprt: {e}")))?,
                );
            }
            let threshold = run.gate_threshold;
            let Some(result) = self.play(&first, &second, &config, Some(threshold))? else {
                return Ok(false);
            };
            self.write_pgn(&format!("gate-{candidate}.pgn"), &result.result)?;
            let line = ResultsLine::from_match(&result.result, Some(&format!("gate {generation}")));
            append_result_once(self.dir.store(), layout::GATES, &line)?;
            self.scalar("gate/score", generation, result.result.wdl.score());
            self.scalar("gate/passed", generation, if result.passed { 1.0 } else { 0.0 });
            self.flush_tensorboard();
            GateRecord { passed: result.passed, describe: result.describe(), line: Some(line) }
        };
        self.state.gate = Some(record);
        Ok(true)
    }

    fn promote(&mut self, generation: u64) -> Result<()> {
        let record = self.state.gate.clone().ok_or_else(|| RunError::Corrupt {
            location: self.dir.describe(layout::STATE),
            reason: "no gate result".into(),
        })?;
        let name = model_name(generation);
        let candidate = layout::candidate_key(generation);
        if record.passed {
            let target = model_key(&name);
            let store = self.dir.store();
            // Weights, then sidecar, each created once; a promotion cut short by a kill
            // finds them in place.
            for (from, to) in [
                (candidate.clone(), target.clone()),
                (layout::sidecar_key(&candidate), layout::sidecar_key(&target)),
            ] {
                if store.get(&to)?.is_some() {
                    continue;
                }
                let bytes = match store.get(&from)? {
                    Some(object) => object.bytes,
                    None => {
                        return Err(RunError::Corrupt {
                            location: self.dir.describe(&from),
                            reason: "the candidate to promote is missing".into(),
                        });
                    }
                };
                match store.put(&to, &bytes, PutMode::Create) {
                    Ok(_) | Err(StoreError::Exists { .. }) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            if let Some(line) = &record.line {
                append_result_once(store, layout::RESULTS, line)?;
            }
            let (current, version) = self.best()?;
            if current != name {
                write_best(store, &name, Some(&version))?;
            }
        }
        for key in [layout::sidecar_key(&candidate), candidate] {
            self.dir.store().delete(&key)?;
            let _ = std::fs::remove_file(self.dir.local(&key));
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
        let (best, _) = self.best()?;
        for (i, baseline) in run.baselines.iter().enumerate() {
            let label = format!("eval {best} {baseline}");
            let line = match find_result(self.dir.store(), layout::RESULTS, &label)? {
                Some(line) => line,
                None => {
                    let path = self.dir.fetch_network(&model_key(&best), false)?;
                    let net = self.net_player(&path, &best, run.eval_nodes)?;
                    let opponent = PlayerSpec::parse(baseline, &atomzero_eval::NoModels)
                        .map_err(|e| RunError::Config(format!("run.baselines: {baseline}: {e}")))?;
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
                    // `alphabeta:depth=2` → `eval-000003-alphabeta_depth_2.pgn`.
                    let safe: String =
                        baseline
                            .chars()
                            .map(|c| {
                                if c.is_ascii_alphanumeric() || "-._".contains(c) { c } else { '_' }
                            })
                            .collect();
                    let file = format!("eval-{best}-{safe}.pgn");
                    self.write_pgn(&file, &result.result)?;
                    let line = ResultsLine::from_match(&result.result, Some(&label));
                    append_result_once(self.dir.store(), layout::RESULTS, &line)?;
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
        let lines = read_results_at(self.dir.store(), layout::RESULTS)?;
        if lines.is_empty() {
            return Ok(());
        }
        let anchor = self.config.run.baselines.first().cloned().unwrap_or_else(|| "random".into());
        let Ok(list) =
            rate(&lines, &RatingOptions { anchor: anchor.clone(), ..Default::default() })
        else {
            return Ok(());
        };
        self.dir.put(layout::RATINGS, list.to_csv().as_bytes(), PutMode::Overwrite)?;
        let (points, baselines) = generation_series(&list, generation_of);
        let title =
            format!("atomzero {}: Elo of promoted networks ({anchor} = 0)", self.config.variant);
        match elo_plot_svg(&title, &points, &baselines) {
            Ok(svg) => {
                self.dir.put(layout::ELO_SVG, svg.as_bytes(), PutMode::Overwrite)?;
            }
            Err(e) => self.observer.warning(&e.to_string()),
        }
        if let Some(best) = read_best(self.dir.store())?.and_then(|(b, _)| list.get(&b).cloned()) {
            self.scalar("eval/elo", generation, best.elo);
        }
        self.flush_tensorboard();
        Ok(())
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
                self.fetch_checkpoint()?;
                let step = atomzero_train::checkpoint::list(&self.dir.local(layout::CHECKPOINTS))
                    .pop()
                    .map_or(Ok(0), |(_, path)| {
                        atomzero_train::checkpoint::read_state(&path).map(|s| s.step)
                    })
                    .map_err(|e| RunError::Train(atomzero_train::TrainError::Checkpoint(e)))?;
                self.state.train_target = Some(step + self.config.run.steps_per_generation);
                self.state.done = selfplay_parts(&report);
                self.advance(Stage::Train)?;
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
                if promoted && !self.evaluate(generation, &mut report)? {
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

/// The worker that uploaded a shard, from its key.
fn worker_of(key: &str) -> Option<&str> {
    key.strip_prefix(layout::SELFPLAY)?.split('/').next()
}

/// A checkpoint's file that says it is complete (written last).
const STATE_FILE: &str = "state.json";

fn checkpoint_dir_name(step: u64) -> String {
    format!("step-{step:08}")
}

/// The complete checkpoints of a remote run (those with `state.json`), oldest first, with
/// their keys.
fn remote_checkpoints(dir: &RunDir) -> Result<Vec<(u64, Vec<String>)>> {
    let mut by_step: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for entry in dir.store().list(&format!("{}/", layout::CHECKPOINTS))? {
        let mut parts = entry.key.split('/').skip(1);
        let Some(step) = parts.next().and_then(|d| d.strip_prefix("step-")?.parse().ok()) else {
            continue;
        };
        by_step.entry(step).or_default().push(entry.key);
    }
    Ok(by_step
        .into_iter()
        .filter(|(_, keys)| keys.iter().any(|k| k.ends_with(&format!("/{STATE_FILE}"))))
        .collect())
}
