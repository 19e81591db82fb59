//! A generation's summary line: what self-play, training, the gate and the evaluation did,
//! and the best network's rating (`gen   3 | self-play ... | train ... | gate ... | best ...`).

use crate::games::Tally;
use crate::state::GateRecord;
use atomzero_eval::ResultsLine;

/// Figures of one generation for its summary line.
#[derive(Debug, Default)]
pub struct GenerationReport {
    /// Self-play games of this session (`None`: self-play was not in this session).
    pub tally: Option<Tally>,
    /// Seconds self-play took (or the trainer waited for workers).
    pub selfplay_secs: f64,
    /// Workers whose shards made up the generation (`None`: played in this process).
    pub workers: Option<usize>,
    /// Steps from, to; first and last loss; samples per second.
    pub train: Option<(u64, u64, f32, f32, f64)>,
    /// The bomb variant: the belief fitted with the candidate, on its held-out games.
    pub belief: Option<atomzero_belief::Accuracy>,
    /// The gate's decision.
    pub gate: Option<GateRecord>,
    /// Evaluation results by baseline.
    pub evals: Vec<(String, ResultsLine)>,
}

fn score_percent(l: &ResultsLine) -> f64 {
    let n = (l.wins + l.draws + l.losses).max(1) as f64;
    100.0 * (l.wins as f64 + l.draws as f64 / 2.0) / n
}

/// The summary line of `generation`: `best` is the best network's name, `ratings` the text
/// of `eval/ratings.csv` (may be empty), `secs` the generation's wall time.
pub fn summary_line(
    generation: u64,
    report: &GenerationReport,
    best: &str,
    ratings: &str,
    secs: f64,
) -> String {
    let mut done = selfplay_parts(report);
    done.extend(train_parts(report));
    summary_line_after(generation, &done, report, best, ratings, secs)
}

/// [`summary_line`] with the self-play and training parts given as text (`done`: what
/// [`selfplay_parts`] and [`train_parts`] said when those stages finished, perhaps in an
/// earlier session that was killed later in the generation); the gate and the evaluation
/// come from `report`.
pub fn summary_line_after(
    generation: u64,
    done: &[String],
    report: &GenerationReport,
    best: &str,
    ratings: &str,
    secs: f64,
) -> String {
    let mut parts = vec![format!("gen {generation:>3}")];
    parts.extend(done.iter().cloned());
    parts.extend(final_parts(report, best, ratings, generation));
    parts.push(format!("{secs:.0} s"));
    parts.join(" | ")
}

/// The self-play parts of the summary line (none if self-play was not in this session).
pub fn selfplay_parts(report: &GenerationReport) -> Vec<String> {
    let mut parts = Vec::new();
    if let Some(t) = &report.tally {
        if t.games > 0 {
            let from = match report.workers {
                Some(n) => format!(" from {n} worker{}", if n == 1 { "" } else { "s" }),
                None => String::new(),
            };
            parts.push(format!(
                "self-play {} games (+{} ={} -{}) {} positions{from}, {:.0} pos/s",
                t.games,
                t.white_wins,
                t.draws,
                t.black_wins,
                t.plies,
                t.plies as f64 / report.selfplay_secs.max(1e-9)
            ));
            let removals = t.top_removals(3);
            if !removals.is_empty() {
                parts.push(format!("removes {removals}"));
            }
            if t.bomb_games > 0 {
                let percent = |n: usize| 100.0 * n as f64 / t.bomb_games as f64;
                parts.push(format!(
                    "detonated in {:.0}% (W) {:.0}% (B) of games",
                    percent(t.detonations[0]),
                    percent(t.detonations[1])
                ));
            }
        } else {
            parts.push("self-play done earlier".into());
        }
    }
    parts
}

/// The training parts of the summary line (none if training was not in this session).
pub fn train_parts(report: &GenerationReport) -> Vec<String> {
    let mut parts = Vec::new();
    if let Some((from, to, first, last, rate)) = report.train {
        parts.push(format!(
            "train steps {from}->{to} loss {first:.3}->{last:.3} ({rate:.0} samples/s)"
        ));
    }
    if let Some(belief) = report.belief.filter(|b| b.positions > 0) {
        parts.push(format!(
            "belief top-1 {:.1}% vs uniform {:.1}% (untrained {:.1}%, held out)",
            100.0 * belief.top1(),
            100.0 * belief.uniform_top1(),
            100.0 * belief.prior_top1()
        ));
    }
    parts
}

/// The gate's and the evaluation's parts.
fn final_parts(
    report: &GenerationReport,
    best: &str,
    ratings: &str,
    generation: u64,
) -> Vec<String> {
    let mut parts = Vec::new();
    if let Some(g) = &report.gate {
        let score = g.line.as_ref().map_or(String::new(), |l| {
            format!(" +{} ={} -{} ({:.1}%)", l.wins, l.draws, l.losses, score_percent(l))
        });
        let verdict = if g.passed { "promoted" } else { "kept best" };
        parts.push(format!("gate{score} {verdict}"));
    }
    let evals: Vec<String> = report
        .evals
        .iter()
        .map(|(baseline, l)| {
            format!("{baseline} {:.0}% (+{} ={} -{})", score_percent(l), l.wins, l.draws, l.losses)
        })
        .collect();
    let elo = ratings.lines().find_map(|row| {
        let cols: Vec<&str> = row.split(',').collect();
        (cols.len() >= 4 && cols[1] == best).then(|| format!("Elo {} ± {}", cols[2], cols[3]))
    });
    if generation == 0 && evals.is_empty() && elo.is_none() {
        parts.push(format!("initial network {best} (not evaluated: run.eval_games = 0)"));
    }
    if !evals.is_empty() || elo.is_some() {
        parts.push(format!(
            "best {best}{}{}",
            elo.map_or(String::new(), |e| format!(" {e}")),
            if evals.is_empty() { String::new() } else { format!(": {}", evals.join(", ")) }
        ));
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::Tally;

    /// Issue 44: after a kill during the gate, the resumed session's report has no self-play
    /// or training; the line keeps the parts saved with those stages.
    #[test]
    fn the_line_after_a_resume_keeps_the_stages_finished_before_the_kill() {
        let earlier = GenerationReport {
            tally: Some(Tally {
                games: 8,
                plies: 300,
                white_wins: 5,
                black_wins: 3,
                ..Tally::default()
            }),
            selfplay_secs: 2.0,
            train: Some((0, 10, 4.5, 4.0, 1000.0)),
            ..GenerationReport::default()
        };
        let mut done = selfplay_parts(&earlier);
        done.extend(train_parts(&earlier));
        let whole = summary_line(1, &earlier, "000001", "", 30.0);
        let resumed =
            summary_line_after(1, &done, &GenerationReport::default(), "000001", "", 30.0);
        assert_eq!(resumed, whole);
        assert!(
            resumed.contains("self-play 8 games (+5 =0 -3) 300 positions, 150 pos/s"),
            "{resumed}"
        );
        assert!(resumed.contains("train steps 0->10 loss 4.500->4.000"), "{resumed}");
        assert!(resumed.ends_with("| 30 s"), "{resumed}");
    }
}
