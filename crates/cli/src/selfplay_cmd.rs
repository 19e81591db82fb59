//! `atomzero selfplay`: play games with a model and write them as replay shards (and PGN).

use crate::config::{Config, ConfigFile};
use crate::fsutil;
use crate::models;
use anyhow::{Context, Result};
use atomzero_replay::window::{SHARD_EXTENSION, shard_file_name};
use atomzero_replay::{GameRecord, ShardMeta, write_shard};
use atomzero_run::games::{PlayOptions, Tally, play_games};
use atomzero_selfplay::{Openings, record_to_pgn};
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

/// The next free shard sequence number of `generation` in `dir`.
fn next_sequence(dir: &Path, generation: u64) -> u64 {
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
fn play_and_write(
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
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut sequence = next_sequence(out, generation);
    let seed = config.seed
        ^ generation.wrapping_mul(0x2545_F491_4F6C_DD1D)
        ^ sequence.wrapping_mul(0x9E37_79B9);
    let start = Instant::now();
    let options = PlayOptions {
        selfplay: &config.selfplay,
        variant: config.variant()?,
        openings,
        games: n_games,
        seed,
        games_per_shard,
        interrupted,
    };
    let sink = |games: &[GameRecord]| -> Result<()> {
        let path = out.join(shard_file_name(generation, sequence));
        let meta = ShardMeta {
            model: model.name.clone(),
            generation,
            created_unix: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            note: format!("{} games", games.len()),
        };
        write_shard(&path, &meta, games)?;
        sequence += 1;
        Ok(())
    };
    let on_game = |record: Option<&GameRecord>, tally: &Tally| -> Result<()> {
        let Some(record) = record else { return Ok(()) };
        if let Some(pgn_path) = pgn
            && let Some(mut game) = record_to_pgn(record)
        {
            game.set_tag("Event", "atomzero self-play");
            game.set_tag("White", &model.name);
            game.set_tag("Black", &model.name);
            fsutil::append(pgn_path, &game.write())?;
        }
        progress.inc(1);
        let secs = start.elapsed().as_secs_f64().max(1e-9);
        progress.set_message(format!("{:.0} positions/s", tally.plies as f64 / secs));
        Ok(())
    };
    play_games(model, &options, sink, on_game)
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
    if variant == atomzero_rules::Variant::Bomb {
        if start == atomzero_rules::Start::Balanced || args.openings.is_some() {
            anyhow::bail!(
                "the bomb variant starts from its own setup phase (each side chooses its hidden \
                 bomb): no balanced start and no --openings"
            );
        }
        models::require_bomb_network(variant, &args.model)?;
    }
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
    let started = Instant::now();
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
    let secs = started.elapsed().as_secs_f64();
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
