//! The trainer's matches: the gate (candidate against the best; its games are not training
//! data, so a gate killed half-way is replayed), promotion (`crate::promotion`), the best
//! network's evaluation against the fixed baselines (a match recorded under its label is not
//! replayed), and the ratings and chart rewritten from `eval/results.jsonl`.

use super::Generations;
use crate::error::{Result, RunError};
use crate::layout::{self, model_key, model_name};
use crate::models::NetLoader;
use crate::promotion::{Models, Part};
use crate::records::{Labelled, append_result_once, labelled_match, read_results_at};
use crate::report::GenerationReport;
use crate::state::{GateRecord, read_best};
use atomzero_eval::{
    GateConfig, MatchConfig, MatchResult, Openings as MatchOpenings, PlayerSpec, RatingOptions,
    ResultsLine, elo_plot_svg, generation_of, generation_series, rate,
};
use atomzero_store::PutMode;
use std::path::Path;

impl Generations<'_> {
    fn openings(&self) -> Result<MatchOpenings> {
        let variant = self.config.variant()?;
        if self.config.run.openings.trim().is_empty() {
            Ok(MatchOpenings::default())
        } else {
            MatchOpenings::from_epd_file(Path::new(&self.config.run.openings), variant)
                .map_err(|e| RunError::Config(format!("run.openings: {e}")))
        }
    }

    /// `net:` player for the network at `path`, named `name` in results and ratings (in the
    /// bomb variant with as many worlds per move as self-play draws).
    fn net_player(&self, path: &Path, name: &str, nodes: u32) -> Result<PlayerSpec> {
        let loader = NetLoader { device: self.config.device()? };
        let worlds = self.config.selfplay.determinizations;
        let spec = format!("net:{},nodes={nodes},worlds={worlds},name={name}", path.display());
        PlayerSpec::parse(&spec, &loader)
            .map_err(|e| RunError::Network(format!("{}: {e}", path.display())))
    }

    fn match_config(&self, games: usize, seed: u64, event: &str) -> Result<MatchConfig> {
        Ok(MatchConfig {
            games,
            first_game: 0,
            openings: self.openings()?,
            variant: self.config.variant()?,
            start: self.config.start()?,
            concurrency: self.concurrency,
            sprt: None,
            max_plies: self.config.run.match_max_plies,
            seed,
            event: event.to_string(),
            interrupt: Some(self.interrupted.clone()),
        })
    }

    /// Plays a match with progress reports; `None` if interrupted.
    fn play(
        &mut self,
        first: &PlayerSpec,
        second: &PlayerSpec,
        config: &MatchConfig,
        threshold: Option<f64>,
    ) -> Result<Option<atomzero_eval::GateResult>> {
        let observer = &mut *self.observer;
        observer.start(&format!("{} vs {}", first.name(), second.name()), config.games as u64, 0);
        let mut on_game = |p: &atomzero_eval::Progress<'_>| {
            observer.progress(
                p.finished as u64,
                &format!(
                    "+{} ={} -{} ({:.1}%)",
                    p.wdl.wins,
                    p.wdl.draws,
                    p.wdl.losses,
                    100.0 * p.wdl.score()
                ),
            );
        };
        let result = atomzero_eval::gate(
            first,
            second,
            &GateConfig { match_config: config.clone(), threshold },
            &mut on_game,
        )
        .map_err(|e| RunError::Match(e.to_string()))?;
        observer.finish();
        if result.result.interrupted {
            return Ok(None);
        }
        Ok(Some(result))
    }

    fn write_pgn(&self, file: &str, result: &MatchResult) -> Result<()> {
        self.dir.put(&layout::eval_key(file), result.pgn().as_bytes(), PutMode::Overwrite)?;
        Ok(())
    }

    /// Plays the gate; `Ok(false)` if interrupted.
    pub(super) fn gate(&mut self, generation: u64) -> Result<bool> {
        let run = &self.config.run;
        let (best, _) = self.best()?;
        let candidate = model_name(generation);
        let record = if run.gate_games == 0 {
            GateRecord {
                passed: true,
                describe: "passed: no gating (run.gate_games = 0)".into(),
                line: None,
            }
        } else {
            let candidate_path =
                self.dir.fetch_network(&layout::candidate_key(generation), true)?;
            let best_path = self.dir.fetch_network(&model_key(&best), false)?;
            let first = self.net_player(&candidate_path, &candidate, run.gate_nodes)?;
            let second = self.net_player(&best_path, &best, run.gate_nodes)?;
            let mut config = self.match_config(
                run.gate_games,
                self.config.seed ^ generation.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x6A7E,
                &format!("atomzero gate {candidate} vs {best}"),
            )?;
            if !run.gate_sprt.trim().is_empty() {
                config.sprt = Some(
                    run.gate_sprt
                        .parse()
                        .map_err(|e| RunError::Config(format!("run.gate_sprt: {e}")))?,
                );
            }
            let threshold = run.gate_threshold;
            let Some(result) = self.play(&first, &second, &config, Some(threshold))? else {
                return Ok(false);
            };
            self.write_pgn(&format!("gate-{candidate}.pgn"), &result.result)?;
            let line = ResultsLine::from_match(&result.result, Some(&format!("gate {generation}")));
            append_result_once(self.dir.store(), layout::GATES, &line)?;
            self.scalar("gate/score", generation, result.result.wdl.score());
            self.scalar("gate/passed", generation, if result.passed { 1.0 } else { 0.0 });
            self.flush_tensorboard();
            GateRecord { passed: result.passed, describe: result.describe(), line: Some(line) }
        };
        self.state.gate = Some(record);
        Ok(true)
    }

    /// Promotes the candidate if the gate passed (the gate's line goes into the results
    /// first, once), then removes the candidate; a promotion cut short by a kill is finished
    /// on resume ([`Models::promote`]).
    pub(super) fn promote(&mut self, generation: u64) -> Result<()> {
        let record = self.state.gate.clone().ok_or_else(|| RunError::Corrupt {
            location: self.dir.describe(layout::STATE),
            reason: "no gate result".into(),
        })?;
        let name = model_name(generation);
        let candidate = layout::candidate_key(generation);
        let store = self.dir.store();
        if record.passed {
            if let Some(line) = &record.line {
                append_result_once(store, layout::RESULTS, line)?;
            }
            Models::of_run(store).promote(&name, |part| {
                let from = match part {
                    Part::Weights => candidate.clone(),
                    Part::Sidecar => layout::sidecar_key(&candidate),
                };
                match store.get(&from)? {
                    Some(object) => Ok(object.bytes),
                    None => Err(RunError::Corrupt {
                        location: self.dir.describe(&from),
                        reason: "the candidate to promote is missing".into(),
                    }),
                }
            })?;
        }
        for key in [layout::sidecar_key(&candidate), candidate] {
            store.delete(&key)?;
            let _ = std::fs::remove_file(self.dir.local(&key));
        }
        Ok(())
    }

    /// Evaluates the best network against every baseline (matches already recorded under
    /// their label are not replayed); `Ok(false)` if interrupted.
    pub(super) fn evaluate(
        &mut self,
        generation: u64,
        report: &mut GenerationReport,
    ) -> Result<bool> {
        let run = &self.config.run;
        if run.eval_games == 0 {
            return Ok(true);
        }
        let (best, _) = self.best()?;
        let dir = self.dir;
        for (i, baseline) in run.baselines.iter().enumerate() {
            let label = format!("eval {best} {baseline}");
            let played = labelled_match(dir.store(), layout::RESULTS, &label, || {
                let path = dir.fetch_network(&model_key(&best), false)?;
                let net = self.net_player(&path, &best, run.eval_nodes)?;
                let opponent = PlayerSpec::parse(baseline, &atomzero_eval::NoModels)
                    .map_err(|e| RunError::Config(format!("run.baselines: {baseline}: {e}")))?;
                let config = self.match_config(
                    run.eval_games,
                    self.config.seed ^ generation.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ i as u64,
                    &format!("atomzero eval {best} vs {baseline}"),
                )?;
                let Some(result) = self.play(&net, &opponent, &config, None)? else {
                    return Ok(None);
                };
                // `alphabeta:depth=2` → `eval-000003-alphabeta_depth_2.pgn`.
                let safe: String = baseline
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() || "-._".contains(c) { c } else { '_' })
                    .collect();
                self.write_pgn(&format!("eval-{best}-{safe}.pgn"), &result.result)?;
                Ok(Some(result.result))
            })?;
            let line = match played {
                Labelled::Recorded(line) => line,
                Labelled::Played(line, result) => {
                    let score = result.wdl.score();
                    self.scalar(&format!("eval/score_vs_{baseline}"), generation, score);
                    line
                }
                Labelled::Interrupted => return Ok(false),
            };
            report.evals.push((baseline.clone(), line));
        }
        self.write_ratings(generation)?;
        Ok(true)
    }

    /// Rewrites ratings.csv and elo.svg from results.jsonl.
    fn write_ratings(&mut self, generation: u64) -> Result<()> {
        let lines = read_results_at(self.dir.store(), layout::RESULTS)?;
        if lines.is_empty() {
            return Ok(());
        }
        let anchor = self.config.run.baselines.first().cloned().unwrap_or_else(|| "random".into());
        let Ok(list) =
            rate(&lines, &RatingOptions { anchor: anchor.clone(), ..Default::default() })
        else {
            return Ok(());
        };
        self.dir.put(layout::RATINGS, list.to_csv().as_bytes(), PutMode::Overwrite)?;
        let (points, baselines) = generation_series(&list, generation_of);
        let title =
            format!("atomzero {}: Elo of promoted networks ({anchor} = 0)", self.config.variant);
        match elo_plot_svg(&title, &points, &baselines) {
            Ok(svg) => {
                self.dir.put(layout::ELO_SVG, svg.as_bytes(), PutMode::Overwrite)?;
            }
            Err(e) => self.observer.warning(&e.to_string()),
        }
        if let Some(best) = read_best(self.dir.store())?.and_then(|(b, _)| list.get(&b).cloned()) {
            self.scalar("eval/elo", generation, best.elo);
        }
        self.flush_tensorboard();
        Ok(())
    }
}
