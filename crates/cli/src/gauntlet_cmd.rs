//! `atomzero gauntlet`: rates the networks of one or more runs against a ladder of fixed
//! players and each other, on one Elo scale, by the CPU time each run had spent. The driver is
//! `atomzero_run::gauntlet` (the schedule and the chart: `atomzero_eval::gauntlet`); this file
//! reads the runs' configs, hands over the arguments and prints.

use crate::config::{Config, ConfigFile};
use anyhow::{Context, Result};
use atomzero_run::Observer;
use atomzero_run::gauntlet::{self, GauntletOptions, GauntletRun};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct GauntletArgs {
    /// A run directory (repeat for several runs; each is one line on the chart).
    #[arg(long = "run", required = true, num_args = 1)]
    runs: Vec<PathBuf>,
    /// A rung of the ladder, weakest first (repeat). Default: random, greedy, fsf:depth=1,
    /// alphabeta:depth=2, fsf:depth=2, fsf:depth=5, fsf:depth=7 (without Fairy-Stockfish, built by
    /// scripts/fairy-stockfish.sh: the first three baselines). The first rung is the rating
    /// anchor (Elo 0).
    #[arg(long = "ladder", num_args = 1)]
    ladder: Vec<String>,
    /// Networks rated per run, spread evenly over its CPU time (the first and last always).
    #[arg(long, default_value_t = 6)]
    points: usize,
    /// Games per match (pairs of games share an opening, colours swapped).
    #[arg(long, default_value_t = 40)]
    games: usize,
    /// Games between the last networks of every two runs (0 = none).
    #[arg(long, default_value_t = 0)]
    head_to_head: usize,
    /// Nodes per move of the networks.
    #[arg(long, default_value_t = 200)]
    nodes: u32,
    /// EPD opening book (default: random balanced openings).
    #[arg(long)]
    openings: Option<PathBuf>,
    /// Games played at once (0 = one per CPU core).
    #[arg(long, default_value_t = 0)]
    concurrency: usize,
    /// Output directory: results.jsonl, ratings.csv, networks.csv, elo-cpu.svg (default:
    /// <first run>/gauntlet).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Games longer than this are adjudicated draws.
    #[arg(long, default_value_t = 300)]
    max_plies: usize,
    /// Seed of the openings and players.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Prints the gauntlet's lines; its notes go to stderr.
struct Print;

impl Observer for Print {
    fn line(&mut self, line: &str) {
        println!("{line}");
    }
    fn warning(&mut self, text: &str) {
        eprintln!("note: {text}");
    }
}

pub fn run(args: GauntletArgs) -> Result<()> {
    let runs = args
        .runs
        .iter()
        .map(|dir| {
            dir.canonicalize().with_context(|| format!("run directory {}", dir.display()))?;
            let config = Config::load(Some(&dir.join("config.toml")))?;
            Ok(GauntletRun { dir: dir.clone(), config })
        })
        .collect::<Result<Vec<_>>>()?;
    let options = GauntletOptions {
        runs,
        ladder: args.ladder,
        points: args.points,
        games: args.games,
        head_to_head: args.head_to_head,
        nodes: args.nodes,
        openings: args.openings,
        concurrency: args.concurrency,
        out: args.out,
        max_plies: args.max_plies,
        seed: args.seed,
        interrupt: Some(crate::selfplay_cmd::interrupt_flag()),
    };
    let report = gauntlet::run(&options, &mut Print)?;
    print!("{}", report.table);
    println!(
        "ratings in {}, networks in {}, chart in {}",
        report.ratings.display(),
        report.networks.display(),
        report.chart.display()
    );
    Ok(())
}
