//! `atomzero gauntlet`: rates the networks of one or more runs against a ladder of fixed
//! players and each other, on one Elo scale, by the CPU time each run had spent (the schedule
//! and the chart: `atomzero_eval::gauntlet`). Matches already in the output's `results.jsonl`
//! (by label) are not replayed, so a gauntlet can be stopped and re-run, or extended with more
//! runs, rungs or networks.

use crate::config::{Config, ConfigFile};
use crate::fsutil;
use crate::models::NetLoader;
use anyhow::{Context, Result, anyhow, bail};
use atomzero_eval::gauntlet::{Entrant, LadderPolicy, entrants_csv, series, spread, table};
use atomzero_eval::{
    MatchConfig, NoModels, Openings, PlayerSpec, RatingOptions, ResultsLine, elo_chart_svg, rate,
    read_results, run_match,
};
use atomzero_run::records::{TimelineLine, append_result_once, find_result, read_timeline};
use atomzero_store::Store;
use clap::Args;
use std::path::{Path, PathBuf};

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

/// The default ladder, weakest first (as measured: fsf:depth=1 and alphabeta:depth=2 are
/// within 50 Elo of each other; depth 3 plays depth 1 about evenly, depth 5 scores 75% against
/// it; the hour run's last network scored 68% against depth 5 and 50% against depth 7 at 128
/// nodes, docs/experiments.md): the built-in baselines with Fairy-Stockfish at depths 1, 2, 5
/// and 7 if it is built (and the start is standard: Fairy-Stockfish cannot choose the Balanced
/// start's removal).
fn default_ladder(variant: atomzero_rules::Variant, start: atomzero_rules::Start) -> Vec<String> {
    if variant == atomzero_rules::Variant::Bomb {
        // Hidden information: only players that take their own view (no alphabeta, no UCI).
        return vec!["random".into(), "greedy".into()];
    }
    let balanced = start == atomzero_rules::Start::Balanced;
    let fsf = atomzero_eval::spec::fairy_stockfish_path().is_some() && !balanced;
    let rungs: &[&str] = if fsf {
        &[
            "random",
            "greedy",
            "fsf:depth=1",
            "alphabeta:depth=2",
            "fsf:depth=2",
            "fsf:depth=5",
            "fsf:depth=7",
        ]
    } else {
        &["random", "greedy", "alphabeta:depth=2"]
    };
    let ladder: Vec<String> = rungs.iter().map(|s| s.to_string()).collect();
    if balanced {
        eprintln!(
            "note: the ladder stops at alphabeta:depth=2 on the balanced start (Fairy-Stockfish \
             cannot choose White's removal)"
        );
    } else if !fsf {
        eprintln!(
            "note: Fairy-Stockfish is not built (bash scripts/fairy-stockfish.sh): the ladder \
             stops at alphabeta:depth=2"
        );
    }
    ladder
}

/// A run taking part: its name, directory, config and chosen networks.
struct Run {
    name: String,
    dir: PathBuf,
    config: Config,
    entrants: Vec<(Entrant, PathBuf)>,
}

/// The networks of a run's timeline (each promoted network at the CPU time it first became
/// the best), up to `points` of them spread over the CPU time.
fn choose(
    name: &str,
    dir: &Path,
    timeline: &[TimelineLine],
    points: usize,
) -> Vec<(Entrant, PathBuf)> {
    let mut firsts: Vec<&TimelineLine> = Vec::new();
    for line in timeline {
        if !firsts.iter().any(|l| l.best == line.best) {
            firsts.push(line);
        }
    }
    let hours: Vec<f64> = firsts.iter().map(|l| l.cpu_secs / 3600.0).collect();
    spread(&hours, points)
        .into_iter()
        .map(|i| {
            let line = firsts[i];
            let entrant = Entrant {
                name: format!("{name}/{}", line.best),
                run: name.to_string(),
                cpu_hours: line.cpu_secs / 3600.0,
                wall_hours: line.elapsed_secs / 3600.0,
            };
            (entrant, dir.join("models").join(format!("{}.safetensors", line.best)))
        })
        .collect()
}

struct Gauntlet {
    args: GauntletArgs,
    results: PathBuf,
    /// The output directory as a store (`results.jsonl` in it).
    out: Store,
    openings: Openings,
    variant: atomzero_rules::Variant,
    start: atomzero_rules::Start,
    concurrency: usize,
    matches: u64,
}

impl Gauntlet {
    /// The score of `first` against `second` (from the results if recorded, else played).
    fn play(&mut self, first: &PlayerSpec, second: &PlayerSpec, games: usize) -> Result<f64> {
        let mut label = format!(
            "gauntlet {} vs {} games={games} nodes={}",
            first.name(),
            second.name(),
            self.args.nodes
        );
        if self.start != atomzero_rules::Start::Standard {
            label.push_str(&format!(" start={}", self.start));
        }
        if let Some(line) = find_result(&self.out, "results.jsonl", &label)? {
            return Ok(score(&line));
        }
        self.matches += 1;
        let config = MatchConfig {
            games,
            openings: self.openings.clone(),
            variant: self.variant,
            start: self.start,
            concurrency: self.concurrency,
            sprt: None,
            max_plies: self.args.max_plies,
            seed: self.args.seed ^ self.matches.wrapping_mul(0x9E37_79B9_7F4A_7C15),
            event: "atomzero gauntlet".into(),
            interrupt: Some(crate::selfplay_cmd::interrupt_flag()),
        };
        let result = run_match(first, second, &config, &mut |_| {}).map_err(|e| anyhow!("{e}"))?;
        if result.interrupted {
            bail!("interrupted: finished matches are saved; run the same command to go on");
        }
        let line = ResultsLine::from_match(&result, Some(&label));
        append_result_once(&self.out, "results.jsonl", &line)?;
        let elo = result.wdl.elo();
        println!(
            "{} vs {}: +{} ={} -{} ({:.1}%), Elo {:+.0} ± {:.0}",
            first.name(),
            second.name(),
            result.wdl.wins,
            result.wdl.draws,
            result.wdl.losses,
            100.0 * result.wdl.score(),
            elo.diff,
            elo.error
        );
        if self.start != atomzero_rules::Start::Standard {
            for report_line in result.colour_report().lines() {
                println!("  {report_line}");
            }
        }
        if let Some(report) = result.bomb_report() {
            for report_line in report.lines() {
                println!("  {report_line}");
            }
        }
        Ok(score(&line))
    }
}

fn score(line: &ResultsLine) -> f64 {
    let n = (line.wins + line.draws + line.losses).max(1) as f64;
    (line.wins as f64 + line.draws as f64 / 2.0) / n
}

pub fn run(args: GauntletArgs) -> Result<()> {
    // The runs and their networks.
    let mut runs: Vec<Run> = Vec::new();
    for dir in &args.runs {
        let name = dir
            .canonicalize()
            .with_context(|| format!("run directory {}", dir.display()))?
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "run".into());
        if runs.iter().any(|r| r.name == name) {
            bail!("two runs are named {name}: give run directories with different names");
        }
        let config = Config::load(Some(&dir.join("config.toml")))?;
        let timeline = read_timeline(&atomzero_store::open(&dir.display().to_string())?)?;
        if timeline.is_empty() {
            bail!(
                "{}: no timeline.jsonl (a run of this build writes one line per generation)",
                dir.display()
            );
        }
        let entrants = choose(&name, dir, &timeline, args.points);
        runs.push(Run { name, dir: dir.clone(), config, entrants });
    }
    let variant = runs[0].config.variant()?;
    if let Some(other) = runs.iter().find(|r| r.config.variant().ok() != Some(variant)) {
        bail!(
            "{} plays {}, {} plays {variant}",
            other.dir.display(),
            other.config.variant,
            runs[0].dir.display()
        );
    }
    let start = runs[0].config.start()?;
    if let Some(other) = runs.iter().find(|r| r.config.start().ok() != Some(start)) {
        bail!(
            "{} starts {}, {} starts {start}",
            other.dir.display(),
            other.config.start,
            runs[0].dir.display()
        );
    }
    let ladder_text =
        if args.ladder.is_empty() { default_ladder(variant, start) } else { args.ladder.clone() };
    let ladder: Vec<PlayerSpec> = ladder_text
        .iter()
        .map(|s| PlayerSpec::parse(s, &NoModels).map_err(|e| anyhow!("--ladder {s}: {e}")))
        .collect::<Result<_>>()?;
    let out = args.out.clone().unwrap_or_else(|| runs[0].dir.join("gauntlet"));
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let openings = match &args.openings {
        Some(path) => Openings::from_epd_file(path, variant).map_err(|e| anyhow!("{e}"))?,
        None => Openings::default(),
    };
    let concurrency = match args.concurrency {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    println!(
        "gauntlet: {} run(s), {} networks, ladder {}; {} games a match at {} nodes; results in {}",
        runs.len(),
        runs.iter().map(|r| r.entrants.len()).sum::<usize>(),
        ladder.iter().map(|l| l.name()).collect::<Vec<_>>().join(" < "),
        args.games,
        args.nodes,
        out.display()
    );
    let mut gauntlet = Gauntlet {
        results: out.join("results.jsonl"),
        out: atomzero_store::open(&out.display().to_string())?,
        openings,
        variant,
        start,
        concurrency,
        matches: 0,
        args,
    };
    let games = gauntlet.args.games;
    let policy = LadderPolicy::default();
    let mut lasts = Vec::new();
    for run in &runs {
        let loader = NetLoader { device: run.config.device()? };
        let mut previous: Vec<(usize, f64)> = Vec::new();
        let mut before: Option<PlayerSpec> = None;
        for (entrant, path) in &run.entrants {
            let spec = PlayerSpec::parse(
                &format!(
                    "net:{},nodes={},name={}",
                    path.display(),
                    gauntlet.args.nodes,
                    entrant.name
                ),
                &loader,
            )
            .map_err(|e| anyhow!("{}: {e}", path.display()))?;
            let first = policy.first_rung(&previous);
            let mut played = Vec::new();
            while let Some(rung) = policy.next_rung(ladder.len(), first, &played) {
                let s = gauntlet.play(&spec, &ladder[rung], games)?;
                played.push((rung, s));
            }
            if let Some(before) = &before {
                gauntlet.play(&spec, before, games)?;
            }
            previous = played;
            before = Some(spec);
        }
        lasts.extend(before);
    }
    if gauntlet.args.head_to_head > 0 {
        for i in 0..lasts.len() {
            for j in i + 1..lasts.len() {
                gauntlet.play(&lasts[i], &lasts[j], gauntlet.args.head_to_head)?;
            }
        }
    }

    // Ratings, table, chart.
    let text = std::fs::read_to_string(&gauntlet.results)
        .with_context(|| format!("cannot read {}", gauntlet.results.display()))?;
    let lines = read_results(&text).map_err(|e| anyhow!("{}: {e}", gauntlet.results.display()))?;
    let anchor = ladder[0].name().to_string();
    let list = rate(&lines, &RatingOptions { anchor: anchor.clone(), ..Default::default() })
        .map_err(|e| anyhow!("{e}"))?;
    let entrants: Vec<Entrant> =
        runs.iter().flat_map(|r| r.entrants.iter().map(|(e, _)| e.clone())).collect();
    print!("{}", table(&list, &entrants));
    fsutil::write_atomic(&out.join("ratings.csv"), list.to_csv().as_bytes())?;
    fsutil::write_atomic(&out.join("networks.csv"), entrants_csv(&list, &entrants).as_bytes())?;
    let baselines: Vec<(String, f64)> = ladder
        .iter()
        .filter_map(|l| list.get(l.name()).map(|r| (l.name().to_string(), r.elo)))
        .collect();
    let title = format!("atomzero {variant}: Elo by CPU time ({anchor} = 0)");
    let svg = elo_chart_svg(&title, "CPU hours", false, &series(&list, &entrants), &baselines)
        .map_err(|e| anyhow!("{e}"))?;
    fsutil::write_atomic(&out.join("elo-cpu.svg"), svg.as_bytes())?;
    println!(
        "ratings in {}, networks in {}, chart in {}",
        out.join("ratings.csv").display(),
        out.join("networks.csv").display(),
        out.join("elo-cpu.svg").display()
    );
    Ok(())
}
