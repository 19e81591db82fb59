//! `atomzero reanalyse`: the training targets of replay shards searched again with a model
//! (MuZero Reanalyse; `atomzero_selfplay::reanalyse`), written as new shards of the same
//! names. Resumable: a shard already in the output directory is not done again.

use crate::config::{Config, ConfigFile};
use crate::fsutil;
use crate::models;
use crate::selfplay_cmd::{interrupt_flag, progress_bar};
use anyhow::{Context, Result, bail};
use atomzero_replay::window::shard_paths;
use atomzero_replay::{ShardMeta, read_shard, write_shard};
use atomzero_selfplay::{ReanalyseTally, reanalyse_games};
use clap::Args;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Instant;

#[derive(Args, Debug)]
pub struct ReanalyseArgs {
    /// Model to search with: a network path, `shipped`, `random` or `uniform`.
    #[arg(long)]
    model: String,
    /// Directory of the replay shards to reanalyse.
    #[arg(long)]
    data: PathBuf,
    /// Directory for the new shards (same file names; must not be `--data`).
    #[arg(long)]
    out: PathBuf,
    /// Simulations per target (default: the config's `selfplay.visits`).
    #[arg(long)]
    visits: Option<u32>,
    /// Config file whose `[selfplay]` search is used (default: the embedded
    /// configs/tiny.toml; a run's own config for its data).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Reanalyse only the first N shards (in name order).
    #[arg(long)]
    shards: Option<usize>,
    /// Worker threads (overrides the config; 0 = one per core).
    #[arg(long)]
    threads: Option<usize>,
}

pub fn run(args: ReanalyseArgs) -> Result<()> {
    let mut config = Config::load(args.config.as_deref())?;
    if let Some(t) = args.threads {
        config.selfplay.threads = t;
    }
    let visits = args.visits.unwrap_or(config.selfplay.visits);
    if visits == 0 {
        bail!("--visits must be at least 1");
    }
    let same = |a: &std::path::Path, b: &std::path::Path| {
        a.canonicalize().ok().zip(b.canonicalize().ok()).is_some_and(|(a, b)| a == b)
    };
    if same(&args.data, &args.out) {
        bail!("--out must not be --data ({}): the shards would be replaced", args.data.display());
    }
    let mut inputs = shard_paths(&args.data)
        .with_context(|| format!("cannot list the shards of {}", args.data.display()))?;
    if inputs.is_empty() {
        bail!("no replay shards (*.shard) in {}", args.data.display());
    }
    inputs.truncate(args.shards.unwrap_or(usize::MAX));
    let model = models::load(&args.model, config.seed, config.device()?)?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    fsutil::write_atomic(&args.out.join("reanalyse-config.toml"), config.to_toml()?.as_bytes())?;
    let todo: Vec<PathBuf> = inputs
        .into_iter()
        .filter(|p| p.file_name().is_none_or(|name| !args.out.join(name).exists()))
        .collect();
    let interrupted = interrupt_flag();
    let bar = progress_bar(todo.len() as u64, "reanalysis");
    let started = Instant::now();
    let mut tally = ReanalyseTally::default();
    let (mut shards, mut refused) = (0usize, 0usize);
    for path in &todo {
        if interrupted.load(Ordering::Relaxed) {
            break;
        }
        let (meta, games) = read_shard(path)?;
        let seed = config.seed ^ (shards as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let threads = config.selfplay.threads;
        let results = reanalyse_games(
            &games,
            model.evaluator.as_ref(),
            &config.selfplay,
            visits,
            model.history,
            seed,
            threads,
        );
        let mut out = Vec::with_capacity(games.len());
        for (i, result) in results.into_iter().enumerate() {
            match result {
                Ok((game, t)) => {
                    tally.add(&t);
                    out.push(game);
                }
                Err(e) => {
                    // Left out of the new shard, and said.
                    refused += 1;
                    bar.println(format!("{}: game {i} left out: {e}", path.display()));
                }
            }
        }
        let meta = ShardMeta {
            model: model.name.clone(),
            note: format!(
                "reanalysed at {visits} visits from {} (played by {}: {})",
                path.display(),
                meta.model,
                meta.note
            ),
            ..meta
        };
        let name = path.file_name().context("a shard path without a file name")?;
        write_shard(&args.out.join(name), &meta, &out)?;
        shards += 1;
        bar.inc(1);
        let secs = started.elapsed().as_secs_f64().max(1e-9);
        bar.set_message(format!("{:.0} targets/s", tally.targets as f64 / secs));
    }
    bar.finish_and_clear();
    let secs = started.elapsed().as_secs_f64();
    let n = tally.targets.max(1) as f64;
    println!(
        "reanalyse: {shards} shards, {} targets at {visits} visits in {secs:.1} s, {:.0} targets/s ({:.0} visits/s); best move changed at {:.1}% of targets, mean KL(new || old) {:.3} nats, mean |value change| {:.3}",
        tally.targets,
        tally.targets as f64 / secs.max(1e-9),
        tally.visits as f64 / secs.max(1e-9),
        100.0 * tally.best_changed as f64 / n,
        tally.divergence / n,
        tally.value_change / n,
    );
    if refused > 0 {
        println!("{refused} games left out (see above)");
    }
    if todo.len() > shards {
        println!(
            "interrupted: {} shards not done; run the same command again to finish",
            todo.len() - shards
        );
    }
    println!("shards in {}", args.out.display());
    Ok(())
}
