//! A self-play worker: waits for the run to exist, plays games with the current best network
//! and uploads each full shard as `selfplay/<worker>/<sequence>.shard` (create-only, so two
//! workers never overwrite each other). Between rounds of games it looks at `best.json` and
//! picks up a newly promoted network, and at `run.json`: when the trainer has finished the
//! run, the worker stops.
//!
//! A round is as many games as the self-play threads play at once, rounded up to whole
//! shards, so no game is played with two networks and a round's shards are all full. A worker
//! killed at any moment loses its unfinished games and the finished ones not yet in an
//! uploaded shard (fewer than `run.games_per_shard`); everything uploaded stays.

use crate::config::Config;
use crate::error::{Result, RunError};
use crate::games::{PlayOptions, Tally, play_games};
use crate::layout::{self, RunDir, model_generation, model_key, worker_shard_key};
use crate::models::{self, LoadedModel};
use crate::observer::Observer;
use crate::state::{load_state, read_best};
use crate::trainer::shard_meta;
use atomzero_replay::{GameRecord, encode_shard};
use atomzero_selfplay::Openings;
use atomzero_store::{PutMode, Store, StoreError};
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What [`run`] is asked to do.
#[derive(Debug)]
pub struct WorkerOptions {
    /// The worker's name in shard keys (see [`worker_name`]); unique per process.
    pub name: String,
    /// Self-play threads (`None`: the run's `selfplay.threads`).
    pub threads: Option<usize>,
    /// Where the network runs (the run's `device` is the trainer's; a worker is usually a
    /// CPU machine).
    pub device: atomzero_nn::DeviceKind,
    /// Set on Ctrl-C: the round stops, finished games are uploaded.
    pub interrupted: Arc<AtomicBool>,
}

/// How a worker ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorkerOutcome {
    /// The trainer finished the run.
    RunFinished {
        /// Games uploaded by this worker.
        games: usize,
        /// Shards uploaded.
        shards: u64,
    },
    /// Stopped by the interrupt flag.
    Interrupted {
        /// Games uploaded by this worker.
        games: usize,
        /// Shards uploaded.
        shards: u64,
    },
}

/// A worker name that no other process picks: `prefix` (default: the host name), a dash and
/// 8 random hex digits, in the characters keys allow.
pub fn worker_name(prefix: Option<&str>) -> String {
    let host = rustix::system::uname().nodename().to_string_lossy().into_owned();
    let prefix = prefix.unwrap_or(&host);
    let mut clean: String = prefix
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '-' })
        .take(48)
        .collect();
    if clean.is_empty() || clean.starts_with(['-', '_']) {
        clean.insert(0, 'w');
    }
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    format!("{clean}-{:08x}", hasher.finish() as u32)
}

/// Waits until the run at `store` exists (its best network is named), checking every `poll`;
/// returns the text of its `config.toml`, or `None` if interrupted first.
pub fn wait_for_run(
    store: &Store,
    poll: Duration,
    interrupted: &AtomicBool,
    observer: &mut dyn Observer,
) -> Result<Option<String>> {
    let mut told = false;
    loop {
        if read_best(store)?.is_some() {
            let object = store.get(layout::CONFIG)?.ok_or_else(|| RunError::Corrupt {
                location: store.describe(layout::CONFIG),
                reason: "missing although models/best.json exists".into(),
            })?;
            let text = String::from_utf8(object.bytes).map_err(|_| RunError::Corrupt {
                location: store.describe(layout::CONFIG),
                reason: "not UTF-8 text".into(),
            })?;
            return Ok(Some(text));
        }
        if !told {
            observer.line(&format!(
                "waiting for the run at {} (a trainer creates it)",
                store.location()
            ));
            told = true;
        }
        if !sleep_unless(poll, interrupted) {
            return Ok(None);
        }
    }
}

/// Sleeps `time` in short steps; `false` if `interrupted` was set meanwhile.
fn sleep_unless(time: Duration, interrupted: &AtomicBool) -> bool {
    let until = Instant::now() + time;
    while Instant::now() < until {
        if interrupted.load(Ordering::SeqCst) {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100).min(time));
    }
    !interrupted.load(Ordering::SeqCst)
}

/// Plays self-play rounds for the run in `dir` until the trainer finishes it or
/// `options.interrupted` is set.
pub fn run(
    dir: &RunDir,
    config: &Config,
    options: &WorkerOptions,
    observer: &mut dyn Observer,
) -> Result<WorkerOutcome> {
    config.validate()?;
    atomzero_store::check_key(&worker_shard_key(&options.name, 0))?;
    dir.claim_mirror()?;
    let mut selfplay = config.selfplay.clone();
    if let Some(threads) = options.threads {
        selfplay.threads = threads;
    }
    let threads = if selfplay.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        selfplay.threads
    };
    let per_shard = config.run.games_per_shard.max(1);
    let round_games = (threads * selfplay.games_per_worker.max(1)).div_ceil(per_shard) * per_shard;
    let variant = config.variant()?;
    let device = options.device;
    let openings = Openings::random(config.start()?, selfplay.random_opening_plies);
    let name_hash = {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in options.name.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        h
    };
    let mut loaded: Option<(String, LoadedModel)> = None;
    let (mut sequence, mut games_uploaded, mut round) = (0u64, 0usize, 0u64);
    let outcome = |finished: bool, games: usize, shards: u64| {
        if finished {
            WorkerOutcome::RunFinished { games, shards }
        } else {
            WorkerOutcome::Interrupted { games, shards }
        }
    };
    loop {
        if options.interrupted.load(Ordering::SeqCst) {
            return Ok(outcome(false, games_uploaded, sequence));
        }
        if load_state(dir.store())?.is_some_and(|(state, _)| state.finished) {
            return Ok(outcome(true, games_uploaded, sequence));
        }
        let (best, _) = read_best(dir.store())?.ok_or_else(|| RunError::Corrupt {
            location: dir.describe(layout::BEST),
            reason: "missing".into(),
        })?;
        if loaded.as_ref().is_none_or(|(name, _)| *name != best) {
            let path = dir.fetch_network(&model_key(&best), false)?;
            let model =
                models::load(&path.display().to_string(), 0, device).map_err(RunError::Network)?;
            observer.line(&format!("worker {}: playing with network {best}", options.name));
            loaded = Some((best.clone(), model));
        }
        let Some((best, model)) = &loaded else { continue };
        let seed = config.seed ^ name_hash ^ round.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let play = PlayOptions {
            selfplay: &selfplay,
            variant,
            openings: &openings,
            games: round_games,
            seed,
            games_per_shard: per_shard,
            interrupted: &options.interrupted,
        };
        let start = Instant::now();
        let store = dir.store();
        let generation = model_generation(best).unwrap_or(0);
        let name = &options.name;
        let uploaded = std::cell::Cell::new(0usize);
        let observer_cell = std::cell::RefCell::new(&mut *observer);
        let sink = |games: &[GameRecord]| -> Result<()> {
            let key = worker_shard_key(name, sequence);
            let meta =
                shard_meta(best, generation, format!("worker {name}: {} games", games.len()));
            match store.put(&key, &encode_shard(&meta, games), PutMode::Create) {
                Ok(_) => {}
                Err(StoreError::Exists { location }) => {
                    return Err(RunError::Selfplay(format!(
                        "{location} exists: another worker uses the name {name}"
                    )));
                }
                Err(e) => return Err(e.into()),
            }
            sequence += 1;
            uploaded.set(uploaded.get() + games.len());
            observer_cell
                .borrow_mut()
                .line(&format!("worker {name}: uploaded {key} ({} games)", games.len()));
            Ok(())
        };
        let on_game = |_: Option<&GameRecord>, t: &Tally| -> Result<()> {
            let secs = start.elapsed().as_secs_f64().max(1e-9);
            observer_cell.borrow_mut().progress(
                uploaded.get() as u64,
                &format!(
                    "{} games, {:.0} positions/s, network {:.0} positions/s",
                    t.games,
                    t.plies as f64 / secs,
                    t.network_positions as f64 / secs
                ),
            );
            Ok(())
        };
        observer_cell.borrow_mut().start(&format!("self-play with {best}"), round_games as u64, 0);
        let result = play_games(model, &play, sink, on_game);
        observer_cell.borrow_mut().finish();
        result?;
        games_uploaded += uploaded.get();
        round += 1;
    }
}
