//! The dashboard's data, read from the run directory each time it is asked for (the files are
//! small; a live run changes them under us, so nothing is cached):
//!
//! | field | from |
//! |---|---|
//! | `status` | `run.json` (generation, stage, times), the newest modification time of the run's files, this generation's shards, the newest trainer checkpoint, `models/best.json` |
//! | `generations` | `timeline.jsonl` (best network and times per finished generation), `eval/gates.jsonl` (gate W/D/L), `models/NNNNNN.safetensors` (promoted or not), `eval/ratings.csv` (Elo), TensorBoard `selfplay/*` and `loss/*` scalars |
//! | `elo` | `eval/ratings.csv`, split into networks (by generation) and baselines as `eval/elo.svg` is drawn |
//! | `losses` | TensorBoard `loss/total`, `loss/policy`, `loss/value` by training step |
//! | `config`, `log` | `config.toml` and `log.txt` as text |
//! | `rating_hint` | for a run with `eval_games = 0` (it rates no network): the `atomzero gauntlet` command that rates them, and whether its chart (`gauntlet/elo-cpu.svg`) exists |
//!
//! A file that cannot be read is skipped with a line in `warnings`; the rest is still shown.

use crate::rundir;
use crate::{Scalar, ScalarReader};
use atomzero_eval::{generation_of, read_results};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::SystemTime;

/// Everything the dashboard shows.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// The run directory's name.
    pub name: String,
    /// The run's variant.
    pub variant: String,
    /// What the run is doing now.
    pub status: Status,
    /// One row per generation, oldest first.
    pub generations: Vec<GenerationRow>,
    /// The Elo chart.
    pub elo: EloChart,
    /// Training losses by step.
    pub losses: Vec<LossPoint>,
    /// `config.toml` as text.
    pub config: String,
    /// `log.txt`, one entry per line.
    pub log: Vec<String>,
    /// How to rate the run's networks, for a run that plays no evaluation games.
    pub rating_hint: Option<RatingHint>,
    /// Files that could not be read, and why.
    pub warnings: Vec<String>,
}

/// What the dashboard says about rating a run that plays no evaluation games.
#[derive(Clone, Debug, Serialize)]
pub struct RatingHint {
    /// The command that rates the run's networks.
    pub command: String,
    /// `gauntlet/elo-cpu.svg` exists (that command's chart, at its default output).
    pub gauntlet_chart: bool,
}

/// Where the run is.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Status {
    /// The generation in progress (`run.json`).
    pub generation: Option<u64>,
    /// Its stage: `init`, `selfplay`, `train`, `gate`, `promote` or `eval`.
    pub stage: Option<String>,
    /// Wall seconds the run has spent.
    pub elapsed_secs: Option<f64>,
    /// CPU seconds the run has spent.
    pub cpu_secs: Option<f64>,
    /// Seconds since any file the dashboard reads last changed.
    pub seconds_since_change: Option<f64>,
    /// Shards written so far in the generation in progress.
    pub shards_in_generation: usize,
    /// The newest trainer checkpoint's step.
    pub checkpoint_step: Option<u64>,
    /// The best network (`models/best.json`).
    pub best: Option<String>,
    /// Generations finished (`timeline.jsonl`).
    pub finished_generations: usize,
}

/// One generation.
#[derive(Clone, Debug, Default, Serialize)]
pub struct GenerationRow {
    /// The generation (0: the initial network).
    pub generation: u64,
    /// The best network after it.
    pub best: Option<String>,
    /// Whether its candidate was promoted (`None` for generation 0 or while undecided).
    pub promoted: Option<bool>,
    /// The gating match: candidate's wins, draws, losses.
    pub gate: Option<[u64; 3]>,
    /// Elo and 95% half-interval of this generation's network, if it was rated.
    pub elo: Option<f64>,
    /// See `elo`.
    pub elo_error: Option<f64>,
    /// Self-play positions per second.
    pub positions_per_sec: Option<f64>,
    /// Self-play games per hour (positions per second × 3600 / mean game length).
    pub games_per_hour: Option<f64>,
    /// Mean self-play game length in plies.
    pub game_length: Option<f64>,
    /// Wall seconds of the run when the generation finished.
    pub elapsed_secs: Option<f64>,
    /// CPU seconds of the run when the generation finished.
    pub cpu_secs: Option<f64>,
}

/// The Elo chart's data.
#[derive(Clone, Debug, Default, Serialize)]
pub struct EloChart {
    /// Rated networks, by generation.
    pub points: Vec<EloPoint>,
    /// Fixed baselines (a horizontal line each).
    pub baselines: Vec<Baseline>,
}

/// A rated network.
#[derive(Clone, Debug, Serialize)]
pub struct EloPoint {
    /// Its generation.
    pub generation: u32,
    /// Its name.
    pub name: String,
    /// Elo.
    pub elo: f64,
    /// Half-width of the 95% interval.
    pub error: f64,
}

/// A baseline's rating.
#[derive(Clone, Debug, Serialize)]
pub struct Baseline {
    /// Its name.
    pub name: String,
    /// Elo.
    pub elo: f64,
}

/// Training losses at one step.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LossPoint {
    /// Training step.
    pub step: i64,
    /// Total loss.
    pub total: Option<f32>,
    /// Policy loss.
    pub policy: Option<f32>,
    /// Value loss.
    pub value: Option<f32>,
}

/// One row of `ratings.csv` (`rank,name,elo,error,games,points,score`).
#[derive(Clone, Debug, PartialEq)]
pub struct CsvRating {
    /// Player name.
    pub name: String,
    /// Elo.
    pub elo: f64,
    /// 95% half-interval.
    pub error: f64,
}

/// Splits one CSV line into fields (double quotes around a field, `""` inside one).
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            (true, '"') => quoted = false,
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => fields.push(std::mem::take(&mut field)),
            (_, c) => field.push(c),
        }
    }
    fields.push(field);
    fields
}

/// Reads `ratings.csv` text; a row that does not parse is an error naming it.
pub fn read_ratings_csv(text: &str) -> Result<Vec<CsvRating>, String> {
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        let fields = csv_fields(line);
        let number = |k: usize| fields.get(k).and_then(|f| f.trim().parse::<f64>().ok());
        match (fields.get(1), number(2), number(3)) {
            (Some(name), Some(elo), Some(error)) => {
                rows.push(CsvRating { name: name.clone(), elo, error })
            }
            _ => return Err(format!("line {}: not rank,name,elo,error,...", i + 1)),
        }
    }
    Ok(rows)
}

fn json_lines(text: &str) -> impl Iterator<Item = (usize, Result<serde_json::Value, String>)> + '_ {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (i + 1, serde_json::from_str(l).map_err(|e| e.to_string())))
}

/// Builds the summary of the run at `root` (canonical), with `variant` and `eval_games` from
/// its config.
pub fn summarize(root: &Path, variant: &str, eval_games: usize, scalars: &ScalarReader) -> Summary {
    let mut warnings = Vec::new();
    let mut status = Status::default();

    if let Some(text) = rundir::read_text(root, "run.json") {
        match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(v) => {
                status.generation = v["generation"].as_u64();
                status.stage = v["stage"].as_str().map(str::to_string);
                status.elapsed_secs = v["elapsed_secs"].as_f64();
                status.cpu_secs = v["cpu_secs"].as_f64();
            }
            Err(e) => warnings.push(format!("run.json: {e}")),
        }
    }
    let (_, newest) = rundir::fingerprint(root);
    status.seconds_since_change =
        newest.and_then(|t| SystemTime::now().duration_since(t).ok()).map(|d| d.as_secs_f64());
    if let Some(g) = status.generation {
        let prefix = format!("selfplay/gen{g:06}-");
        status.shards_in_generation = rundir::list(root, "selfplay", ".shard")
            .iter()
            .filter(|e| e.relative.starts_with(&prefix))
            .count();
    }
    status.checkpoint_step = rundir::checkpoint_steps(root).last().copied();
    status.best = rundir::read_text(root, "models/best.json")
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v["best"].as_str().map(|s| s.trim_end_matches(".safetensors").to_string()));

    // Generations: timeline.jsonl first (finished ones), then whatever else names one.
    let mut rows: BTreeMap<u64, GenerationRow> = BTreeMap::new();
    if let Some(text) = rundir::read_text(root, "timeline.jsonl") {
        for (line, value) in json_lines(&text) {
            match value {
                Ok(v) => {
                    let Some(g) = v["generation"].as_u64() else { continue };
                    let row = rows.entry(g).or_default();
                    row.best = v["best"].as_str().map(str::to_string);
                    row.elapsed_secs = v["elapsed_secs"].as_f64();
                    row.cpu_secs = v["cpu_secs"].as_f64();
                    status.finished_generations += 1;
                }
                Err(e) => warnings.push(format!("timeline.jsonl line {line}: {e}")),
            }
        }
    }
    if let Some(text) = rundir::read_text(root, "eval/gates.jsonl") {
        match read_results(&text) {
            Ok(lines) => {
                for line in lines {
                    let generation = line
                        .label
                        .as_deref()
                        .and_then(|l| l.strip_prefix("gate "))
                        .and_then(|g| g.trim().parse::<u64>().ok())
                        .or_else(|| generation_of(&line.first).map(u64::from));
                    if let Some(g) = generation {
                        rows.entry(g).or_default().gate =
                            Some([line.wins, line.draws, line.losses]);
                    }
                }
            }
            Err(e) => warnings.push(format!("eval/gates.jsonl: {e}")),
        }
    }
    let models: Vec<String> = rundir::list(root, "models", ".safetensors")
        .into_iter()
        .filter_map(|e| {
            Some(e.relative.strip_prefix("models/")?.strip_suffix(".safetensors")?.to_string())
        })
        .collect();
    let mut elo = EloChart::default();
    if let Some(text) = rundir::read_text(root, "eval/ratings.csv") {
        match read_ratings_csv(&text) {
            Ok(ratings) => {
                for r in ratings {
                    match generation_of(&r.name) {
                        Some(generation) => elo.points.push(EloPoint {
                            generation,
                            name: r.name,
                            elo: r.elo,
                            error: r.error,
                        }),
                        None => elo.baselines.push(Baseline { name: r.name, elo: r.elo }),
                    }
                }
                elo.points.sort_by_key(|p| p.generation);
            }
            Err(e) => warnings.push(format!("eval/ratings.csv: {e}")),
        }
    }
    for p in &elo.points {
        let row = rows.entry(u64::from(p.generation)).or_default();
        row.elo = Some(p.elo);
        row.elo_error = Some(p.error);
    }

    // Only a `tensorboard/` that resolves inside the run directory is read.
    let scalars: Vec<Scalar> = if let Some(dir) = rundir::resolve_dir(root, "tensorboard") {
        match scalars(&dir) {
            Ok(s) => s,
            Err(e) => {
                warnings.push(format!("tensorboard: {e}"));
                Vec::new()
            }
        }
    } else {
        Vec::new()
    };
    let mut by_tag: BTreeMap<&str, BTreeMap<i64, f32>> = BTreeMap::new();
    for (tag, step, value) in &scalars {
        // A resumed run may write a step again: the later value wins.
        by_tag.entry(tag.as_str()).or_default().insert(*step, *value);
    }
    let series = |tag: &str| by_tag.get(tag).cloned().unwrap_or_default();
    for (g, pps) in series("selfplay/positions_per_sec") {
        let row = rows.entry(g.max(0) as u64).or_default();
        row.positions_per_sec = Some(f64::from(pps));
    }
    for (g, length) in series("selfplay/game_length") {
        let row = rows.entry(g.max(0) as u64).or_default();
        row.game_length = Some(f64::from(length));
    }
    let mut losses: BTreeMap<i64, LossPoint> = BTreeMap::new();
    for (tag, slot) in [("loss/total", 0), ("loss/policy", 1), ("loss/value", 2)] {
        for (step, value) in series(tag) {
            let point =
                losses.entry(step).or_insert_with(|| LossPoint { step, ..LossPoint::default() });
            match slot {
                0 => point.total = Some(value),
                1 => point.policy = Some(value),
                _ => point.value = Some(value),
            }
        }
    }

    for (&g, row) in rows.iter_mut() {
        row.generation = g;
        if let (Some(pps), Some(length)) = (row.positions_per_sec, row.game_length)
            && length > 0.0
        {
            row.games_per_hour = Some(pps * 3600.0 / length);
        }
        let name = format!("{g:06}");
        row.promoted = if g == 0 {
            None
        } else if models.contains(&name) {
            Some(true)
        } else if row.best.is_some() {
            // Finished without a network of its own: the candidate was rejected.
            Some(false)
        } else {
            None
        };
    }

    let log = rundir::read_text(root, "log.txt")
        .map(|t| t.lines().map(str::to_string).collect())
        .unwrap_or_default();
    Summary {
        name: root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        variant: variant.to_string(),
        status,
        generations: rows.into_values().collect(),
        elo,
        losses: losses.into_values().collect(),
        config: rundir::read_text(root, "config.toml").unwrap_or_default(),
        log,
        warnings,
        rating_hint: (eval_games == 0).then(|| RatingHint {
            command: format!("atomzero gauntlet --run {}", shell_word(&root.display().to_string())),
            gauntlet_chart: rundir::resolve(root, "gauntlet/elo-cpu.svg").is_some(),
        }),
    }
}

/// `word` as one shell word (single-quoted when it holds anything but plain characters).
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:@%,=".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("/home/a/runs/tiny"), "/home/a/runs/tiny");
        assert_eq!(shell_word("/home/a/my runs/x"), "'/home/a/my runs/x'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
    }

    #[test]
    fn ratings_csv_reads_quoted_names_and_rejects_junk() {
        let text = "rank,name,elo,error,games,points,score\n1,\"uci:a,b\",12.5,3.0,10,5,50.0\n2,000003,0.0,0.0,10,5,50.0\n";
        let rows = read_ratings_csv(text).unwrap();
        assert_eq!(rows[0], CsvRating { name: "uci:a,b".into(), elo: 12.5, error: 3.0 });
        assert_eq!(rows[1].name, "000003");
        assert!(read_ratings_csv("header\n1,x,notanumber,1\n").unwrap_err().contains("line 2"));
    }
}
