//! `atomzero selfplay`: play games with a model and write them as replay shards (and PGN).

use crate::config::Config;
use crate::fsutil;
use crate::models;
use anyhow::{Context, Result};
use atomzero_replay::window::{SHARD_EXTENSION, shard_file_name};
use atomzero_replay::{EndReason, GameRecord, ShardMeta, write_shard};
use atomzero_rules::Color;
use atomzero_selfplay::{GameStats, Openings, SelfplayEvent, record_to_pgn};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

#[derive(Args, Debug)]
pub struct SelfplayArgs {
    /// Model: a network path, `random` (generation 0) or `uniform`.
    #[arg(long)]
    model: String,
    /// Number of games.
    #[arg(long)]
    games: usize,
    /// Directory for the replay shards.
    #[arg(long)]
    out: PathBuf,
    /// Also append every game to this PGN file.
    #[arg(long)]
    pgn: Option<PathBuf>,
    /// Rule variant (overrides the config).
    #[arg(long)]
    variant: Option<String>,
    /// Start: standard, or balanced (the removal is searched like any move; overrides the
    /// config).
    #[arg(long)]
    start: Option<String>,
    /// Config file (default: the embedded configs/tiny.toml).
    #[arg(long)]
    config: Option<PathBuf>,
    /// EPD opening book (default: random first plies).
    #[arg(long)]
    openings: Option<PathBuf>,
    /// Seed (overrides the config).
    #[arg(long)]
    seed: Option<u64>,
    /// Games per shard file.
    #[arg(long, default_value_t = 32)]
    games_per_shard: usize,
    /// Generation number recorded in shard names and metadata.
    #[arg(long, default_value_t = 0)]
    generation: u64,
    /// Worker threads (overrides the config; 0 = one per core).
    #[arg(long)]
    threads: Option<usize>,
}

/// Totals over finished games, for the summary line and logs.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    pub games: usize,
    pub plies: usize,
    pub targets: usize,
    pub white_wins: usize,
    pub black_wins: usize,
    pub draws: usize,
    pub resignations: usize,
    pub playthroughs_with_resign_point: usize,
    pub false_resignations: usize,
    pub evaluations: u64,
    /// Games from the Balanced start by the square of White's removal (index a1 = 0).
    pub removals: Vec<usize>,
}

impl Tally {
    pub fn add(&mut self, record: &GameRecord, stats: &GameStats) {
        self.games += 1;
        self.plies += stats.plies;
        self.targets += stats.targets;
        self.evaluations += stats.evaluations;
        match record.winner {
            Some(Color::White) => self.white_wins += 1,
            Some(Color::Black) => self.black_wins += 1,
            None => self.draws += 1,
        }
        self.resignations += usize::from(record.reason == EndReason::Resignation);
        self.playthroughs_with_resign_point +=
            usize::from(record.resign_disabled && record.resign_point.is_some());
        self.false_resignations += usize::from(stats.false_resignation);
        if let Some(first) = record.moves.first().filter(|m| m.mv.is_removal()) {
            self.removals.resize(64, 0);
            self.removals[first.mv.from().index()] += 1;
        }
    }

    /// The removals of Balanced-start games, most frequent first, at most `n` of them, e.g.
    /// `e7 40, d7 31, f2 9` (empty without such games).
    pub fn top_removals(&self, n: usize) -> String {
        let mut counts: Vec<(usize, usize)> =
            self.removals.iter().copied().enumerate().filter(|&(_, c)| c > 0).collect();
        counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let named: Vec<String> = counts
            .iter()
            .take(n)
            .filter_map(|&(i, c)| Some(format!("{} {c}", atomzero_rules::Square::new(i as u8)?)))
            .collect();
        named.join(", ")
    }
}

/// The next free shard sequence number of `generation` in `dir`.
pub fn next_sequence(dir: &Path, generation: u64) -> u64 {
    let prefix = format!("gen{generation:06}-");
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let seq = name
                .strip_prefix(&prefix)?
                .strip_suffix(&format!(".{SHARD_EXTENSION}"))?
                .parse::<u64>()
                .ok()?;
            Some(seq + 1)
        })
        .max()
        .unwrap_or(0)
}

/// Plays `n_games` and writes shards into `out`; returns the tally. Stops early (keeping every
/// finished game) when `interrupted` is set.
#[allow(clippy::too_many_arguments)]
pub fn play_and_write(
    config: &Config,
    model: &models::LoadedModel,
    openings: &Openings,
    n_games: usize,
    out: &Path,
    pgn: Option<&Path>,
    generation: u64,
    games_per_shard: usize,
    interrupted: &AtomicBool,
    progress: &ProgressBar,
) -> Result<Tally> {
    let variant = config.variant()?;
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut sequence = next_sequence(out, generation);
    let seed = config.seed
        ^ generation.wrapping_mul(0x2545_F491_4F6C_DD1D)
        ^ sequence.wrapping_mul(0x9E37_79B9);
    let meta = |note: String| ShardMeta {
        model: model.name.clone(),
        generation,
        created_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        note,
    };
    let mut buffer: Vec<GameRecord> = Vec::new();
    let mut tally = Tally::default();
    let mut error: Option<anyhow::Error> = None;
    let start = Instant::now();
    let flush = |buffer: &mut Vec<GameRecord>, sequence: &mut u64| -> Result<()> {
        if buffer.is_empty() {
            return Ok(());
        }
        let path = out.join(shard_file_name(generation, *sequence));
        write_shard(&path, &meta(format!("{} games", buffer.len())), buffer)?;
        *sequence += 1;
        buffer.clear();
        Ok(())
    };
    atomzero_selfplay::run(
        model.evaluator.as_ref(),
        &config.selfplay,
        variant,
        openings,
        n_games,
        model.history,
        seed,
        |event| {
            if let SelfplayEvent::Game(record, stats) = event {
                tally.add(&record, &stats);
                if let Some(pgn_path) = pgn
                    && let Some(mut game) = record_to_pgn(&record)
                {
                    game.set_tag("Event", "atomzero self-play");
                    game.set_tag("White", &model.name);
                    game.set_tag("Black", &model.name);
                    if let Err(e) = fsutil::append(pgn_path, &game.write()) {
                        error = Some(e);
                        return false;
                    }
                }
                buffer.push(*record);
                if buffer.len() >= games_per_shard
                    && let Err(e) = flush(&mut buffer, &mut sequence)
                {
                    error = Some(e);
                    return false;
                }
                progress.inc(1);
                let secs = start.elapsed().as_secs_f64().max(1e-9);
                progress.set_message(format!("{:.0} positions/s", tally.plies as f64 / secs));
            }
            !interrupted.load(Ordering::Relaxed)
        },
    );
    // Finished games are never lost, also on Ctrl-C or an error.
    flush(&mut buffer, &mut sequence)?;
    if let Some(e) = error {
        return Err(e);
    }
    Ok(tally)
}

pub fn progress_bar(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    let style = ProgressStyle::with_template(&format!(
        "{{spinner}} {what} [{{bar:30}}] {{pos}}/{{len}} {{msg}} (ETA {{eta}})"
    ))
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ");
    bar.set_style(style);
    bar
}

/// Sets the returned flag on Ctrl-C (once per process; later calls share the flag).
pub fn interrupt_flag() -> Arc<AtomicBool> {
    static FLAG: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let handler_flag = flag.clone();
        let _ = ctrlc::set_handler(move || {
            if handler_flag.swap(true, Ordering::SeqCst) {
                // Second Ctrl-C: leave at once (everything written so far is consistent).
                std::process::exit(130);
            }
            eprintln!("\ninterrupted: finishing the current step (Ctrl-C again to quit now)");
        });
        flag
    })
    .clone()
}

pub fn run(args: SelfplayArgs) -> Result<()> {
    let mut config = Config::load(args.config.as_deref())?;
    if let Some(v) = args.variant {
        config.variant = v;
    }
    if let Some(start) = args.start {
        config.start = start;
    }
    if let Some(seed) = args.seed {
        config.seed = seed;
    }
    if let Some(t) = args.threads {
        config.selfplay.threads = t;
    }
    let variant = config.variant()?;
    let start = config.start()?;
    let model = models::load(&args.model, config.seed, config.device()?)?;
    let openings = match &args.openings {
        Some(_) if start == atomzero_rules::Start::Balanced => anyhow::bail!(
            "--openings cannot be combined with the balanced start (games start from the setup \
             position, where White removes a pawn)"
        ),
        Some(path) => Openings::from_epd(path, variant)?,
        None => Openings::random(start, config.selfplay.random_opening_plies),
    };
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    fsutil::write_atomic(&args.out.join("selfplay-config.toml"), config.to_toml()?.as_bytes())?;
    let interrupted = interrupt_flag();
    let bar = progress_bar(args.games as u64, "self-play");
    let start = Instant::now();
    let tally = play_and_write(
        &config,
        &model,
        &openings,
        args.games,
        &args.out,
        args.pgn.as_deref(),
        args.generation,
        args.games_per_shard.max(1),
        &interrupted,
        &bar,
    )?;
    bar.finish_and_clear();
    let secs = start.elapsed().as_secs_f64();
    println!(
        "self-play: {} games, {} positions ({} training targets) in {:.1} s, {:.0} positions/s; results +{} ={} -{} (white/draw/black); {:.1} plies/game; {} resignations, {} false of {} checked",
        tally.games,
        tally.plies,
        tally.targets,
        secs,
        tally.plies as f64 / secs.max(1e-9),
        tally.white_wins,
        tally.draws,
        tally.black_wins,
        tally.plies as f64 / tally.games.max(1) as f64,
        tally.resignations,
        tally.false_resignations,
        tally.playthroughs_with_resign_point,
    );
    let removals = tally.top_removals(16);
    if !removals.is_empty() {
        println!("removals (Balanced start, White's choice): {removals}");
    }
    println!("shards in {}", args.out.display());
    Ok(())
}
