//! A generation's self-play games: played in this process (counting the games already in
//! its shards, so a resumed generation plays only the rest), or taken from workers' shards
//! that no earlier manifest lists (each shard counted in exactly one generation); and the
//! shard files of the training window, which a new run may seed with another run's newest
//! shards (`--init-window`: they become generation 0's shards).

use super::{Generations, Inspected, Interrupted, shard_meta};
use crate::error::{Result, RunError, io};
use crate::games::{PlayOptions, Tally, play_games};
use crate::layout::{self, model_key};
use crate::manifest::{MANIFEST_FORMAT, Manifest, ShardEntry, create_manifest, read_manifest};
use crate::models;
use crate::report::GenerationReport;
use atomzero_replay::{GameRecord, ShardMeta, decode_shard, encode_shard};
use atomzero_selfplay::Openings;
use atomzero_store::PutMode;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

impl Generations<'_> {
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
    pub(super) fn selfplay_here(
        &mut self,
        generation: u64,
        report: &mut GenerationReport,
    ) -> Result<()> {
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
    pub(super) fn selfplay_from_workers(
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
            tally.merge(&Tally {
                games: s.games,
                plies: s.plies,
                targets: s.targets,
                white_wins: s.white_wins,
                draws: s.draws,
                black_wins: s.black_wins,
                removals: s.removals.clone(),
                ..Tally::default()
            });
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
    pub(super) fn window_files(&mut self, generation: u64) -> Result<Vec<PathBuf>> {
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
        // Generation 0 has no games of its own: its shards are those a new run was seeded with.
        for g in (0..=generation).rev() {
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
}

/// The shards a new run's window starts with (`TrainerOptions::init_window`): the newest
/// `.shard` files of a directory, checked, before anything of the run is written.
#[derive(Clone, Debug)]
pub struct WindowSeed {
    /// The directory they come from.
    pub dir: PathBuf,
    /// The chosen files, oldest first (file-name order, as the window reads a directory).
    pub files: Vec<PathBuf>,
    /// Training targets in them.
    pub targets: usize,
    /// `.shard` files in the directory.
    pub available: usize,
}

impl WindowSeed {
    /// Chooses the newest `.shard` files of `dir` (by name: the order `atomzero selfplay`,
    /// a run's `selfplay/` and the window use) that together hold `window` training targets,
    /// or all of them; each is decoded, and one that is corrupt, of another format, or of
    /// another variant than `variant` is an error that names it.
    pub fn choose(
        dir: &Path,
        window: usize,
        variant: atomzero_rules::Variant,
    ) -> Result<WindowSeed> {
        let paths = atomzero_replay::window::shard_paths(dir).map_err(io(dir))?;
        if paths.is_empty() {
            return Err(RunError::Config(format!(
                "--init-window {}: no .shard files in it (a run's selfplay/ directory, or \
                 `atomzero selfplay --out`)",
                dir.display()
            )));
        }
        let mut files = Vec::new();
        let mut targets = 0usize;
        for path in paths.iter().rev() {
            if targets >= window {
                break;
            }
            let (_, games) = atomzero_replay::read_shard(path).map_err(|e| RunError::Corrupt {
                location: path.display().to_string(),
                reason: e.problem(),
            })?;
            if let Some(game) = games.iter().find(|g| g.variant != variant) {
                return Err(RunError::Config(format!(
                    "--init-window: {} holds {} games; this run plays {variant}",
                    path.display(),
                    game.variant
                )));
            }
            targets += games.iter().map(GameRecord::n_targets).sum::<usize>();
            files.push(path.clone());
        }
        files.reverse();
        Ok(WindowSeed { dir: dir.to_path_buf(), files, targets, available: paths.len() })
    }
}

impl Generations<'_> {
    /// Copies the window's seed (if any) into the run as generation 0's shards, byte for byte.
    /// Idempotent: a resumed generation 0 copies them again over the same keys.
    pub(super) fn seed_window(&mut self) -> Result<()> {
        let Some(seed) = self.init_window.clone() else { return Ok(()) };
        for (sequence, path) in seed.files.iter().enumerate() {
            let bytes = std::fs::read(path).map_err(io(path))?;
            let key = layout::local_shard_key(0, sequence as u64);
            self.dir.put(&key, &bytes, PutMode::Overwrite)?;
        }
        self.observer.line(&format!(
            "the window starts with {} positions: the newest {} of the {} shards in {}",
            seed.targets,
            seed.files.len(),
            seed.available,
            seed.dir.display()
        ));
        Ok(())
    }
}

/// The worker that uploaded a shard, from its key.
fn worker_of(key: &str) -> Option<&str> {
    key.strip_prefix(layout::SELFPLAY)?.split('/').next()
}
