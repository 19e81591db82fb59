//! The gauntlet's driver (`atomzero gauntlet`): the networks of one or more runs rated against
//! a ladder of fixed players and each other, on one Elo scale, by the CPU time each run had
//! spent. Which matches to play, the ladder policy and the chart are
//! `atomzero_eval::gauntlet`'s; this module chooses each run's networks from its
//! `timeline.jsonl`, plays the schedule (a match recorded under its label in the output's
//! `results.jsonl` is not replayed: [`crate::records::labelled_match`], so a gauntlet can be
//! stopped and re-run, or extended with more runs, rungs or networks), then rates everything
//! and writes `ratings.csv`, `networks.csv` and `elo-cpu.svg`. The binary parses the arguments
//! and prints what the [`Observer`] is told.

use crate::config::Config;
use crate::error::{Result, RunError};
use crate::models::NetLoader;
use crate::observer::Observer;
use crate::records::{Labelled, TimelineLine, labelled_match, read_results_at, read_timeline};
use atomzero_eval::gauntlet::{Entrant, LadderPolicy, entrants_csv, series, spread, table};
use atomzero_eval::{
    MatchConfig, NoModels, Openings, PlayerSpec, RatingOptions, ResultsLine, elo_chart_svg, rate,
    run_match,
};
use atomzero_rules::{Start, Variant};
use atomzero_store::{PutMode, Store};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// A run taking part: its directory and its config (read by the caller: only the binary
/// knows TOML).
#[derive(Debug)]
pub struct GauntletRun {
    /// The run directory.
    pub dir: PathBuf,
    /// Its `config.toml`.
    pub config: Config,
}

/// What [`run`] plays.
#[derive(Debug)]
pub struct GauntletOptions {
    /// The runs (each one line on the chart).
    pub runs: Vec<GauntletRun>,
    /// The rungs of the ladder, weakest first; empty: [`default_ladder`].
    pub ladder: Vec<String>,
    /// Networks rated per run, spread evenly over its CPU time (the first and last always).
    pub points: usize,
    /// Games per match.
    pub games: usize,
    /// Games between the last networks of every two runs (0: none).
    pub head_to_head: usize,
    /// Playouts per move of the networks.
    pub nodes: u32,
    /// EPD opening book (`None`: random balanced openings).
    pub openings: Option<PathBuf>,
    /// Games played at once (0: one per CPU core).
    pub concurrency: usize,
    /// The output directory (`None`: `<first run>/gauntlet`).
    pub out: Option<PathBuf>,
    /// Games longer than this are adjudicated draws.
    pub max_plies: usize,
    /// Seed of the openings and players.
    pub seed: u64,
    /// Set on Ctrl-C: the match in progress stops, finished ones are kept.
    pub interrupt: Option<Arc<AtomicBool>>,
}

/// What a finished gauntlet wrote.
#[derive(Debug)]
pub struct GauntletReport {
    /// The ratings table (one row per player).
    pub table: String,
    /// `ratings.csv`.
    pub ratings: PathBuf,
    /// `networks.csv`.
    pub networks: PathBuf,
    /// `elo-cpu.svg`.
    pub chart: PathBuf,
}

/// The default ladder, weakest first, and a note when it is cut short (as measured:
/// fsf:depth=1 and alphabeta:depth=2 are within 50 Elo of each other; depth 3 plays depth 1
/// about evenly, depth 5 scores 75% against it; the hour run's last network scored 68% against
/// depth 5 and 50% against depth 7 at 128 nodes, docs/experiments.md): the built-in baselines
/// with Fairy-Stockfish at depths 1, 2, 5 and 7 if it is built (and the start is standard:
/// Fairy-Stockfish cannot choose the Balanced start's removal).
pub fn default_ladder(variant: Variant, start: Start) -> (Vec<String>, Option<&'static str>) {
    if variant == Variant::Bomb {
        // Hidden information: only players that take their own view (no alphabeta, no UCI).
        return (vec!["random".into(), "greedy".into()], None);
    }
    let balanced = start == Start::Balanced;
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
    let note = if balanced {
        Some(
            "the ladder stops at alphabeta:depth=2 on the balanced start (Fairy-Stockfish cannot \
             choose White's removal)",
        )
    } else if !fsf {
        Some(
            "Fairy-Stockfish is not built (bash scripts/fairy-stockfish.sh): the ladder stops at \
             alphabeta:depth=2",
        )
    } else {
        None
    };
    (rungs.iter().map(|s| s.to_string()).collect(), note)
}

/// The networks of a run's timeline (each promoted network at the CPU time it first became
/// the best), up to `points` of them spread over the CPU time, with their files.
pub fn choose(
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

/// A run with its chosen networks.
struct Chosen<'a> {
    run: &'a GauntletRun,
    entrants: Vec<(Entrant, PathBuf)>,
}

/// The output's `results.jsonl` and how to play a match into it.
struct Schedule<'a> {
    options: &'a GauntletOptions,
    out: Store,
    openings: Openings,
    variant: Variant,
    start: Start,
    concurrency: usize,
    matches: u64,
}

/// The gauntlet's results file, in the output directory.
const RESULTS: &str = "results.jsonl";

impl Schedule<'_> {
    /// The score of `first` against `second` (from the results if recorded, else played).
    fn play(
        &mut self,
        first: &PlayerSpec,
        second: &PlayerSpec,
        games: usize,
        observer: &mut dyn Observer,
    ) -> Result<f64> {
        let mut label = format!(
            "gauntlet {} vs {} games={games} nodes={}",
            first.name(),
            second.name(),
            self.options.nodes
        );
        if self.start != Start::Standard {
            label.push_str(&format!(" start={}", self.start));
        }
        let played = labelled_match(&self.out, RESULTS, &label, || {
            // Each match played gets its own seed (matches found in the results do not count).
            self.matches += 1;
            let config = MatchConfig {
                games,
                first_game: 0,
                openings: self.openings.clone(),
                variant: self.variant,
                start: self.start,
                concurrency: self.concurrency,
                sprt: None,
                max_plies: self.options.max_plies,
                seed: self.options.seed ^ self.matches.wrapping_mul(0x9E37_79B9_7F4A_7C15),
                event: "atomzero gauntlet".into(),
                interrupt: self.options.interrupt.clone(),
            };
            let result = run_match(first, second, &config, &mut |_| {})
                .map_err(|e| RunError::Match(e.to_string()))?;
            Ok((!result.interrupted).then_some(result))
        })?;
        let line = match played {
            Labelled::Recorded(line) => line,
            Labelled::Played(line, result) => {
                let elo = result.wdl.elo();
                observer.line(&format!(
                    "{} vs {}: +{} ={} -{} ({:.1}%), Elo {:+.0} ± {:.0}",
                    first.name(),
                    second.name(),
                    result.wdl.wins,
                    result.wdl.draws,
                    result.wdl.losses,
                    100.0 * result.wdl.score(),
                    elo.diff,
                    elo.error
                ));
                if self.start != Start::Standard {
                    for report_line in result.colour_report().lines() {
                        observer.line(&format!("  {report_line}"));
                    }
                }
                if let Some(report) = result.bomb_report() {
                    for report_line in report.lines() {
                        observer.line(&format!("  {report_line}"));
                    }
                }
                line
            }
            Labelled::Interrupted => {
                return Err(RunError::Match(
                    "interrupted: finished matches are saved; run the same command to go on".into(),
                ));
            }
        };
        Ok(score(&line))
    }
}

fn score(line: &ResultsLine) -> f64 {
    let n = (line.wins + line.draws + line.losses).max(1) as f64;
    (line.wins as f64 + line.draws as f64 / 2.0) / n
}

/// The name a run goes by in the gauntlet: its directory's name.
fn run_name(dir: &Path) -> Result<String> {
    let canonical = dir.canonicalize().map_err(|source| RunError::Io {
        path: format!("run directory {}", dir.display()),
        source,
    })?;
    Ok(canonical.file_name().map_or_else(|| "run".into(), |n| n.to_string_lossy().into_owned()))
}

/// Plays the gauntlet and writes its ratings, table and chart.
pub fn run(options: &GauntletOptions, observer: &mut dyn Observer) -> Result<GauntletReport> {
    let Some(first_run) = options.runs.first() else {
        return Err(RunError::Config("a gauntlet needs at least one run".into()));
    };
    // The runs and their networks.
    let mut chosen: Vec<Chosen<'_>> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for run in &options.runs {
        let name = run_name(&run.dir)?;
        if names.contains(&name) {
            return Err(RunError::Config(format!(
                "two runs are named {name}: give run directories with different names"
            )));
        }
        let timeline = read_timeline(&atomzero_store::open(&run.dir.display().to_string())?)?;
        if timeline.is_empty() {
            return Err(RunError::Config(format!(
                "{}: no timeline.jsonl (a run of this build writes one line per generation)",
                run.dir.display()
            )));
        }
        chosen.push(Chosen { run, entrants: choose(&name, &run.dir, &timeline, options.points) });
        names.push(name);
    }
    let variant = first_run.config.variant()?;
    if let Some(other) = options.runs.iter().find(|r| r.config.variant().ok() != Some(variant)) {
        return Err(RunError::Config(format!(
            "{} plays {}, {} plays {variant}",
            other.dir.display(),
            other.config.variant,
            first_run.dir.display()
        )));
    }
    let start = first_run.config.start()?;
    if let Some(other) = options.runs.iter().find(|r| r.config.start().ok() != Some(start)) {
        return Err(RunError::Config(format!(
            "{} starts {}, {} starts {start}",
            other.dir.display(),
            other.config.start,
            first_run.dir.display()
        )));
    }
    let ladder_text = if options.ladder.is_empty() {
        let (ladder, note) = default_ladder(variant, start);
        if let Some(note) = note {
            observer.warning(note);
        }
        ladder
    } else {
        options.ladder.clone()
    };
    let ladder: Vec<PlayerSpec> = ladder_text
        .iter()
        .map(|s| {
            PlayerSpec::parse(s, &NoModels)
                .map_err(|e| RunError::Config(format!("--ladder {s}: {e}")))
        })
        .collect::<Result<_>>()?;
    let out = options.out.clone().unwrap_or_else(|| first_run.dir.join("gauntlet"));
    std::fs::create_dir_all(&out).map_err(crate::error::io(&out))?;
    let openings = match &options.openings {
        Some(path) => {
            Openings::from_epd_file(path, variant).map_err(|e| RunError::Config(e.to_string()))?
        }
        None => Openings::default(),
    };
    let concurrency = match options.concurrency {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    observer.line(&format!(
        "gauntlet: {} run(s), {} networks, ladder {}; {} games a match at {} nodes; results in {}",
        chosen.len(),
        chosen.iter().map(|r| r.entrants.len()).sum::<usize>(),
        ladder.iter().map(|l| l.name()).collect::<Vec<_>>().join(" < "),
        options.games,
        options.nodes,
        out.display()
    ));
    let mut schedule = Schedule {
        options,
        out: atomzero_store::open(&out.display().to_string())?,
        openings,
        variant,
        start,
        concurrency,
        matches: 0,
    };
    let policy = LadderPolicy::default();
    let mut lasts = Vec::new();
    for run in &chosen {
        let loader = NetLoader { device: run.run.config.device()? };
        let mut previous: Vec<(usize, f64)> = Vec::new();
        let mut before: Option<PlayerSpec> = None;
        for (entrant, path) in &run.entrants {
            let spec = PlayerSpec::parse(
                &format!("net:{},nodes={},name={}", path.display(), options.nodes, entrant.name),
                &loader,
            )
            .map_err(|e| RunError::Network(format!("{}: {e}", path.display())))?;
            let first = policy.first_rung(&previous);
            let mut played = Vec::new();
            while let Some(rung) = policy.next_rung(ladder.len(), first, &played) {
                let s = schedule.play(&spec, &ladder[rung], options.games, observer)?;
                played.push((rung, s));
            }
            if let Some(before) = &before {
                schedule.play(&spec, before, options.games, observer)?;
            }
            previous = played;
            before = Some(spec);
        }
        lasts.extend(before);
    }
    if options.head_to_head > 0 {
        for i in 0..lasts.len() {
            for j in i + 1..lasts.len() {
                schedule.play(&lasts[i], &lasts[j], options.head_to_head, observer)?;
            }
        }
    }

    // Ratings, table, chart.
    let store = &schedule.out;
    let lines = read_results_at(store, RESULTS)?;
    let anchor = ladder[0].name().to_string();
    let list = rate(&lines, &RatingOptions { anchor: anchor.clone(), ..Default::default() })
        .map_err(|e| RunError::Match(e.to_string()))?;
    let entrants: Vec<Entrant> =
        chosen.iter().flat_map(|r| r.entrants.iter().map(|(e, _)| e.clone())).collect();
    store.put("ratings.csv", list.to_csv().as_bytes(), PutMode::Overwrite)?;
    store.put("networks.csv", entrants_csv(&list, &entrants).as_bytes(), PutMode::Overwrite)?;
    let baselines: Vec<(String, f64)> = ladder
        .iter()
        .filter_map(|l| list.get(l.name()).map(|r| (l.name().to_string(), r.elo)))
        .collect();
    let title = format!("atomzero {variant}: Elo by CPU time ({anchor} = 0)");
    let svg = elo_chart_svg(&title, "CPU hours", false, &series(&list, &entrants), &baselines)
        .map_err(|e| RunError::Match(e.to_string()))?;
    store.put("elo-cpu.svg", svg.as_bytes(), PutMode::Overwrite)?;
    Ok(GauntletReport {
        table: table(&list, &entrants),
        ratings: out.join("ratings.csv"),
        networks: out.join("networks.csv"),
        chart: out.join("elo-cpu.svg"),
    })
}
