//! `atomzero analyse`: the games of a PGN searched position by position with the engine's
//! settings and written back with `[%eval]` comments, the engine's moves and lichess-style
//! judgements (the work is `atomzero_uci::analyse`; this file parses, loads and prints).

use crate::config::{Config, ConfigFile};
use crate::models;
use crate::selfplay_cmd::progress_bar;
use anyhow::{Context, Result, anyhow, bail};
use atomzero_rules::{Color, read_pgn};
use atomzero_uci::analyse::{self, AnalysisConfig};
use atomzero_uci::{EngineConfig, Options};
use clap::Args;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct AnalyseArgs {
    /// The PGN to analyse (every game in it); `-` reads standard input.
    pgn: PathBuf,
    /// Network to search with: `shipped` (the network in the binary), a path, or `uniform`
    /// (pure MCTS).
    #[arg(long, default_value = "shipped")]
    model: String,
    /// Playouts per position (0: no limit; then give --movetime).
    #[arg(long, default_value_t = 800)]
    nodes: u32,
    /// Milliseconds per position (with --nodes, whichever ends first).
    #[arg(long)]
    movetime: Option<u64>,
    /// Positions searched at once, one thread each (default: the CPU cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Write the annotated PGN here instead of standard output.
    #[arg(long, short)]
    out: Option<PathBuf>,
    /// Config file (for the network device).
    #[arg(long)]
    config: Option<PathBuf>,
    /// No progress bar and no summary on standard error.
    #[arg(long, short)]
    quiet: bool,
}

pub fn run(args: AnalyseArgs) -> Result<()> {
    if args.nodes == 0 && args.movetime.is_none() {
        bail!("--nodes 0 needs --movetime: a search needs a budget");
    }
    if args.movetime == Some(0) {
        bail!("--movetime must be at least 1 ms");
    }
    let name = if args.pgn.as_os_str() == "-" {
        "standard input".to_string()
    } else {
        args.pgn.display().to_string()
    };
    let mut text = String::new();
    if args.pgn.as_os_str() == "-" {
        std::io::stdin().read_to_string(&mut text).context("cannot read standard input")?;
    } else {
        let bytes = std::fs::read(&args.pgn).with_context(|| format!("cannot read {name}"))?;
        text = String::from_utf8(bytes).map_err(|_| anyhow!("{name}: not UTF-8 text"))?;
    }
    let mut games = Vec::new();
    for game in read_pgn(&text) {
        let game = game.map_err(|e| anyhow!("{name}: {e}"))?;
        game.initial
            .variant()
            .require_perfect_information("atomzero analyse")
            .map_err(|e| anyhow!("{name}: {e}"))?;
        games.push(game);
    }
    if games.is_empty() {
        bail!("{name}: no games in it");
    }

    let config = Config::load(args.config.as_deref())?;
    let model = models::load(&args.model, 0, config.device()?)
        .map_err(|e| anyhow!("--model {}: cannot load: {e:#}", args.model))?;
    // The UCI engine's defaults: the same search, priors and move choice as `atomzero uci`.
    let options = Options::default();
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let analysis = AnalysisConfig {
        nodes: args.nodes,
        movetime: args.movetime.map(Duration::from_millis),
        threads,
        max_batch: usize::try_from(options.minibatch_size).unwrap_or(4),
        search: atomzero_mcts::SearchConfig {
            history: model.history,
            ..options.search_config(EngineConfig::default().search)
        },
        ..AnalysisConfig::default()
    };
    let evaluator = options.tempered(model.evaluator);

    let positions: usize = games.iter().map(|g| g.moves.len() + 1).sum();
    let bar = progress_bar(positions as u64, "analysing");
    if args.quiet {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let evals = analyse::evaluate_games(&games, &*evaluator, &analysis, &|| bar.inc(1));
    bar.finish_and_clear();

    let budget = match (args.nodes, args.movetime) {
        (0, Some(ms)) => format!("{ms} ms a position"),
        (n, None) => format!("{n} playouts a position"),
        (n, Some(ms)) => format!("{n} playouts or {ms} ms a position"),
    };
    let annotator = format!("atomzero {} ({}, {budget})", env!("CARGO_PKG_VERSION"), model.name);
    let mut out = String::new();
    for (i, (game, evals)) in games.iter().zip(evals).enumerate() {
        let result = analyse::judge_game(game, evals);
        out.push_str(&analyse::annotated_pgn(game, &result, &annotator));
        if !args.quiet {
            let side = |color: Color| {
                let name = if color == Color::White { "White" } else { "Black" };
                let (inaccuracies, mistakes, blunders) = result.counts(game, color);
                let count = |n: usize, one: &str, many: &str| match n {
                    0 => None,
                    1 => Some(format!("1 {one}")),
                    n => Some(format!("{n} {many}")),
                };
                let marks: Vec<String> = [
                    count(inaccuracies, "inaccuracy", "inaccuracies"),
                    count(mistakes, "mistake", "mistakes"),
                    count(blunders, "blunder", "blunders"),
                ]
                .into_iter()
                .flatten()
                .collect();
                let marks =
                    if marks.is_empty() { "no marks".to_string() } else { marks.join(", ") };
                format!("{name} ({}) {marks}", game.tag(name).unwrap_or("?"))
            };
            eprintln!(
                "game {} ({} plies): {}; {}",
                i + 1,
                game.moves.len(),
                side(Color::White),
                side(Color::Black)
            );
        }
    }
    match &args.out {
        Some(path) => crate::fsutil::write_atomic(path, out.as_bytes())?,
        None => std::io::stdout().lock().write_all(out.as_bytes()).context("cannot write")?,
    }
    Ok(())
}
