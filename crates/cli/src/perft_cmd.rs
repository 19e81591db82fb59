//! `atomzero perft`: perft of one position (optionally split by move), or a whole suite file in
//! the shakmaty/python-chess format (`id`, `epd`, `perft DEPTH NODES`). `--start balanced` (or
//! `--fen balanced`, `epd balanced` in a suite) is the Balanced start's setup position, whose
//! 16 removals are ply 1. `--variant bomb` (or `# variant bomb` in a suite) counts the bomb
//! variant's full-information move tree: FENs carry the bombs field (`bombs:d1,g8`), and the
//! start position is the setup phase, whose two bomb choices are plies 1 and 2.

use anyhow::{Context, Result, bail};
use atomzero_rules::{CastlingMode, Position, Start, Variant, divide, perft};
use clap::Args;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args, Debug)]
pub struct PerftArgs {
    /// Rule variant (atomic, nocheckatomic, atomar, deathmatch, pawnblast, bomb).
    #[arg(long, default_value = "atomic")]
    variant: String,
    /// Start of the game (standard, balanced: White first removes one of the 16 pawns).
    #[arg(long, default_value = "standard", conflicts_with = "fen")]
    start: String,
    /// Position as FEN, X-FEN or Shredder-FEN, or `balanced` (default: the start position).
    #[arg(long)]
    fen: Option<String>,
    /// Depth in plies.
    #[arg(long, required_unless_present = "suite")]
    depth: Option<u32>,
    /// Print one line `<uci>: <count>` per legal move.
    #[arg(long)]
    divide: bool,
    /// Force Chess960 castling (king-takes-rook notation).
    #[arg(long)]
    chess960: bool,
    /// Run a perft suite file instead of one position.
    #[arg(long, conflicts_with_all = ["fen", "depth", "divide"])]
    suite: Option<std::path::PathBuf>,
    /// With --suite: skip lines whose expected node count exceeds this.
    #[arg(long)]
    max_nodes: Option<u64>,
}

fn parse_variant(name: &str) -> Result<Variant> {
    name.parse::<Variant>().map_err(|e| anyhow::anyhow!("{e}"))
}

/// Reads a FEN (the castling mode detected unless forced; `balanced`; the bomb variant's
/// bombs field).
fn load_position(fen: &str, variant: Variant, force_960: bool) -> Result<Position> {
    let pos = if force_960 {
        Position::from_fen_with_mode(fen, variant, CastlingMode::Chess960)
    } else {
        Position::from_fen(fen, variant)
    };
    pos.map_err(|e| anyhow::anyhow!("{e}"))
}

pub fn run(args: PerftArgs) -> Result<ExitCode> {
    let variant = parse_variant(&args.variant)?;
    let start: Start = args.start.parse().map_err(|e| anyhow::anyhow!("{e}"))?;
    if variant == Variant::Bomb && start != Start::Standard {
        bail!(
            "the bomb variant has no {start} start (it starts with its own setup phase: each side chooses its bomb)"
        );
    }
    if let Some(path) = &args.suite {
        if start != Start::Standard {
            bail!(
                "--start does not apply to --suite (a suite names its positions: `epd balanced`)"
            );
        }
        return run_suite(path, variant, args.max_nodes, args.chess960);
    }
    let Some(depth) = args.depth else { bail!("--depth is required") };
    if depth > 20 {
        bail!("depth {depth} is too large (at most 20)");
    }
    let pos = match &args.fen {
        Some(fen) => load_position(fen, variant, args.chess960)?,
        None => {
            let pos = Position::start(variant, start);
            if args.chess960 {
                pos.with_castling_mode(CastlingMode::Chess960)
                    .map_err(|e| anyhow::anyhow!("{e}"))?
            } else {
                pos
            }
        }
    };
    let start = Instant::now();
    let nodes = if args.divide {
        let mut total = 0;
        for (m, count) in divide(&pos, depth) {
            println!("{}: {}", pos.uci(m), count);
            total += count;
        }
        println!();
        total
    } else {
        perft(&pos, depth)
    };
    let secs = start.elapsed().as_secs_f64();
    println!("Nodes searched: {nodes}");
    eprintln!("time {:.3} s, {:.0} nodes/s", secs, nodes as f64 / secs.max(1e-9));
    Ok(ExitCode::SUCCESS)
}

/// Runs every `perft` line of a suite; prints `ok`/`MISMATCH` per line.
fn run_suite(
    path: &std::path::Path,
    default_variant: Variant,
    max_nodes: Option<u64>,
    force_960: bool,
) -> Result<ExitCode> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read suite {}", path.display()))?;
    let mut id = String::new();
    let mut variant = default_variant;
    let mut chess960 = force_960;
    let mut pos: Option<Position> = None;
    let (mut passed, mut failed, mut skipped) = (0u32, 0u32, 0u32);
    let start = Instant::now();
    let mut total_nodes = 0u64;
    for (line_no, line) in text.lines().enumerate() {
        let line = line.trim();
        let ctx = || format!("{}:{}", path.display(), line_no + 1);
        if let Some(comment) = line.strip_prefix('#') {
            let comment = comment.trim();
            if let Some(name) = comment.strip_prefix("variant ") {
                variant = parse_variant(name.trim()).with_context(ctx)?;
            } else if comment == "chess960" {
                chess960 = true;
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("id ") {
            id = rest.trim().to_string();
            variant = default_variant;
            chess960 = force_960;
            pos = None;
        } else if let Some(epd) = line.strip_prefix("epd ") {
            pos = Some(load_position(epd.trim(), variant, chess960).with_context(ctx)?);
        } else if let Some(rest) = line.strip_prefix("perft ") {
            let mut parts = rest.split_whitespace();
            let (Some(d), Some(n), None) = (parts.next(), parts.next(), parts.next()) else {
                bail!("{}: expected 'perft DEPTH NODES'", ctx());
            };
            let depth: u32 = d.parse().with_context(|| format!("{}: bad depth '{d}'", ctx()))?;
            let expected: u64 =
                n.parse().with_context(|| format!("{}: bad node count '{n}'", ctx()))?;
            let Some(pos) = &pos else { bail!("{}: perft line before any epd line", ctx()) };
            if max_nodes.is_some_and(|max| expected > max) {
                skipped += 1;
                continue;
            }
            let nodes = perft(pos, depth);
            total_nodes += nodes;
            if nodes == expected {
                passed += 1;
                println!("ok       {id} depth {depth}: {nodes}");
            } else {
                failed += 1;
                println!("MISMATCH {id} depth {depth}: expected {expected}, got {nodes}");
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{passed} passed, {failed} failed, {skipped} skipped ({total_nodes} nodes in {secs:.2} s, {:.0} nodes/s)",
        total_nodes as f64 / secs.max(1e-9)
    );
    Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
