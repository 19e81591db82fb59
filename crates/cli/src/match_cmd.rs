//! `atomzero match` and `atomzero gate`: games between players, cutechess-style output, then
//! the colour balance (White's score ± 95%; on the Balanced start each player's removals; in
//! the bomb variant how often each player detonated and how well its belief guessed the
//! opponent's bomb).

use crate::config::{Config, ConfigFile};
use crate::fsutil;
use crate::models::NetLoader;
use anyhow::{Context, Result, anyhow, bail};
use atomzero_eval::{GateConfig, MatchConfig, Openings, PlayerSpec, SprtConfig, gate, run_match};
use atomzero_run::promotion::{Models, Part};
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct MatchArgs {
    /// A player: random, greedy, alphabeta[:depth=N], net:PATH[,nodes=N], policy:PATH,
    /// uci:COMMAND[,nodes=N|movetime=MS|depth=D] (give exactly two).
    #[arg(long = "engine", required = true, num_args = 1)]
    engines: Vec<String>,
    /// Games to play (pairs of games share an opening, colours swapped).
    #[arg(long, default_value_t = 100)]
    games: usize,
    /// Number of the first game (from 1): `--first-game 101 --games 100` plays games 101-200
    /// of the 200-game match the same seed and book define (same openings, colours and
    /// numbering), to extend a match or split one across machines.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    first_game: u64,
    /// EPD opening book (default: random balanced openings of a few plies).
    #[arg(long)]
    openings: Option<PathBuf>,
    /// Rule variant (bomb: each player sees only its own bomb; random, greedy, net and
    /// policy players; net:PATH,cheat=1 sees both bombs, as a reference).
    #[arg(long, default_value = "atomic")]
    variant: String,
    /// Start: standard, or balanced (White's player first removes one of the 16 pawns).
    #[arg(long, default_value = "standard")]
    start: String,
    /// Write every game to this PGN file.
    #[arg(long)]
    pgn: Option<PathBuf>,
    /// Games played at once.
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// Sequential test: elo0=0,elo1=10,alpha=0.05,beta=0.05.
    #[arg(long)]
    sprt: Option<String>,
    /// Adjudicate a draw after this many plies.
    #[arg(long, default_value_t = 400)]
    max_plies: usize,
    /// Seed for openings and players.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Config file (for the network device).
    #[arg(long)]
    config: Option<PathBuf>,
}

/// `--sprt` / `run.gate_sprt`: `SprtConfig`'s `key=value` form (atomzero-eval).
fn parse_sprt(text: &str) -> Result<SprtConfig> {
    text.parse().map_err(|e| anyhow!("--sprt: {e}"))
}

fn openings(path: Option<&Path>, variant: atomzero_rules::Variant) -> Result<Openings> {
    match path {
        Some(p) => Openings::from_epd_file(p, variant).map_err(|e| anyhow!("{e}")),
        None => Ok(Openings::default()),
    }
}

/// `--variant`, parsed (the bomb variant included: players get their own view).
fn parse_variant(name: &str) -> Result<atomzero_rules::Variant> {
    name.parse().map_err(|e| anyhow!("{e}"))
}

/// In the bomb variant, every network named by `engines` (`net:PATH...`, `policy:PATH...`)
/// must have the variant's input planes ([`crate::models::require_bomb_network`]).
fn require_bomb_networks(variant: atomzero_rules::Variant, engines: &[&str]) -> Result<()> {
    for engine in engines {
        if let Some(rest) = engine.strip_prefix("net:").or_else(|| engine.strip_prefix("policy:")) {
            let spec = rest.split(',').next().unwrap_or_default().trim();
            crate::models::require_bomb_network(variant, spec)?;
        }
    }
    Ok(())
}

pub fn run(args: MatchArgs) -> Result<()> {
    if args.engines.len() != 2 {
        bail!("give exactly two --engine specs (got {})", args.engines.len());
    }
    // Outputs are checked before the games: a bad --pgn must not cost the whole match.
    if let Some(pgn) = &args.pgn {
        fsutil::check_writable(pgn).map_err(|e| anyhow!("--pgn: {e:#}"))?;
    }
    let config = Config::load(args.config.as_deref())?;
    let variant = parse_variant(&args.variant)?;
    require_bomb_networks(variant, &[&args.engines[0], &args.engines[1]])?;
    let start: atomzero_rules::Start = args.start.parse().map_err(|e| anyhow!("--start: {e}"))?;
    let loader = NetLoader { device: config.device()? };
    let first = PlayerSpec::parse(&args.engines[0], &loader)
        .map_err(|e| anyhow!("--engine {}: {e}", args.engines[0]))?;
    let second = PlayerSpec::parse(&args.engines[1], &loader)
        .map_err(|e| anyhow!("--engine {}: {e}", args.engines[1]))?;
    let match_config = MatchConfig {
        games: args.games,
        first_game: usize::try_from(args.first_game - 1)
            .map_err(|_| anyhow!("--first-game {} is too large", args.first_game))?,
        openings: openings(args.openings.as_deref(), variant)?,
        variant,
        start,
        concurrency: args.concurrency.max(1),
        sprt: args.sprt.as_deref().map(parse_sprt).transpose()?,
        max_plies: args.max_plies,
        seed: args.seed,
        event: "atomzero match".into(),
        interrupt: None,
    };
    let result =
        run_match(&first, &second, &match_config, &mut |p| println!("{}", p.game.finished_line()))
            .map_err(|e| anyhow!("{e}"))?;
    println!("{}", result.summary());
    println!("{}", result.colour_report());
    if let Some(report) = result.bomb_report() {
        println!("{report}");
    }
    if let Some(pgn) = &args.pgn {
        fsutil::write_atomic(pgn, result.pgn().as_bytes())?;
    }
    Ok(())
}

#[derive(Args, Debug)]
pub struct GateArgs {
    /// The candidate network.
    #[arg(long)]
    candidate: PathBuf,
    /// The current best network (its directory receives the promoted candidate).
    #[arg(long)]
    best: PathBuf,
    /// Game budget.
    #[arg(long, default_value_t = 100)]
    games: usize,
    /// Nodes per move for both.
    #[arg(long, default_value_t = 100)]
    nodes: u32,
    /// Sequential test (default elo0=0,elo1=10,alpha=0.05,beta=0.05).
    #[arg(long, default_value = "elo0=0,elo1=10,alpha=0.05,beta=0.05")]
    sprt: String,
    /// Score needed when the budget runs out without an SPRT verdict.
    #[arg(long, default_value_t = 0.55)]
    threshold: f64,
    /// Rule variant.
    #[arg(long, default_value = "atomic")]
    variant: String,
    /// Start: standard, or balanced (White's player first removes one of the 16 pawns).
    #[arg(long, default_value = "standard")]
    start: String,
    /// Games played at once.
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// Config file (for the network device).
    #[arg(long)]
    config: Option<PathBuf>,
}

/// Promotes `candidate` (and its sidecar) as the next free `NNNNNN.safetensors` of `dir` and
/// points `dir/best.json` at it, the way a run promotes ([`atomzero_run::promotion`]: created
/// once, the pointer moved by compare-and-swap); then removes the candidate's files. Returns
/// the new path.
pub fn promote(candidate: &Path, dir: &Path) -> Result<PathBuf> {
    let next = std::fs::read_dir(dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name().to_string_lossy().strip_suffix(".safetensors")?.parse::<u64>().ok()
        })
        .max()
        .map_or(0, |n| n + 1);
    let name = format!("{next:06}");
    let sidecar = atomzero_nn::sidecar_path(candidate);
    let store = atomzero_store::open(&dir.display().to_string())?;
    Models::at_root(&store).promote(&name, |part| {
        let path = match part {
            Part::Weights => candidate,
            Part::Sidecar => sidecar.as_path(),
        };
        std::fs::read(path).map_err(|source| atomzero_run::RunError::Io {
            path: path.display().to_string(),
            source,
        })
    })?;
    for path in [sidecar.as_path(), candidate] {
        std::fs::remove_file(path).with_context(|| format!("cannot remove {}", path.display()))?;
    }
    Ok(dir.join(format!("{name}.safetensors")))
}

pub fn run_gate(args: GateArgs) -> Result<()> {
    let config = Config::load(args.config.as_deref())?;
    let variant = parse_variant(&args.variant)?;
    let engines = [args.candidate.display().to_string(), args.best.display().to_string()]
        .map(|p| format!("net:{p}"));
    require_bomb_networks(variant, &[&engines[0], &engines[1]])?;
    let start: atomzero_rules::Start = args.start.parse().map_err(|e| anyhow!("--start: {e}"))?;
    let loader = NetLoader { device: config.device()? };
    let spec = |path: &Path, name: &str| {
        PlayerSpec::parse(
            &format!("net:{},nodes={},name={name}", path.display(), args.nodes),
            &loader,
        )
        .map_err(|e| anyhow!("{}: {e}", path.display()))
    };
    let candidate = spec(&args.candidate, "candidate")?;
    let best = spec(&args.best, "best")?;
    let gate_config = GateConfig {
        match_config: MatchConfig {
            games: args.games,
            variant,
            start,
            concurrency: args.concurrency.max(1),
            sprt: Some(parse_sprt(&args.sprt)?),
            seed: config.seed,
            event: "atomzero gate".into(),
            ..MatchConfig::default()
        },
        threshold: Some(args.threshold),
    };
    let result =
        gate(&candidate, &best, &gate_config, &mut |p| println!("{}", p.game.finished_line()))
            .map_err(|e| anyhow!("{e}"))?;
    println!("{}", result.result.summary());
    if let Some(report) = result.result.bomb_report() {
        println!("{report}");
    }
    println!("{}", result.describe());
    if result.passed {
        let dir =
            args.best.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let promoted = promote(&args.candidate, dir)?;
        println!("promoted: {}", promoted.display());
    }
    Ok(())
}
