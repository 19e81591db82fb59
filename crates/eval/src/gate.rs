//! Gating: should a candidate network replace the best one? A match of the candidate (first
//! player) against the best, stopped early by an SPRT or after a game budget, and a decision:
//!
//! - the SPRT accepts H1 (the candidate is stronger): **pass**;
//! - the SPRT accepts H0: **fail**;
//! - the budget runs out first (or no SPRT runs): pass if the candidate's score reaches
//!   `threshold`, fail if it does not or if no threshold is set.
//!
//! The caller promotes the file; this module only decides.

use crate::runner::{MatchConfig, MatchError, MatchResult, Progress, run_match};
use crate::spec::PlayerSpec;
use crate::stats::Hypothesis;

/// Gating settings.
#[derive(Clone, Debug)]
pub struct GateConfig {
    /// The match: `games` is the budget, `sprt` the early stop.
    pub match_config: MatchConfig,
    /// The candidate's score (0 to 1) that passes when the budget runs out without an SPRT
    /// verdict; `None`: only an SPRT H1 verdict passes.
    pub threshold: Option<f64>,
}

impl Default for GateConfig {
    /// The default match settings with AlphaZero's 55% threshold.
    fn default() -> GateConfig {
        GateConfig { match_config: MatchConfig::default(), threshold: Some(0.55) }
    }
}

/// Why a gate passed or failed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GateReason {
    /// The SPRT accepted H1 or H0.
    Sprt(Hypothesis),
    /// The budget ran out; the score is compared with the threshold.
    Score {
        /// The candidate's score.
        score: f64,
        /// The threshold, if one is set.
        threshold: Option<f64>,
    },
}

/// The decision and the match behind it.
#[derive(Clone, Debug)]
pub struct GateResult {
    /// Promote the candidate.
    pub passed: bool,
    /// Why.
    pub reason: GateReason,
    /// The match (the candidate is the first player).
    pub result: MatchResult,
}

impl GateResult {
    /// A one-line account, e.g. `passed: SPRT accepted H1` or
    /// `failed: score 0.520 < threshold 0.550 after 400 games`.
    pub fn describe(&self) -> String {
        let verdict = if self.passed { "passed" } else { "failed" };
        match self.reason {
            GateReason::Sprt(h) => format!(
                "{verdict}: SPRT accepted {} after {} games",
                match h {
                    Hypothesis::H0 => "H0",
                    Hypothesis::H1 => "H1",
                },
                self.result.games.len()
            ),
            GateReason::Score { score, threshold: Some(t) } => format!(
                "{verdict}: score {score:.3} {} threshold {t:.3} after {} games",
                if score >= t { ">=" } else { "<" },
                self.result.games.len()
            ),
            GateReason::Score { score, threshold: None } => format!(
                "{verdict}: no SPRT verdict after {} games (score {score:.3}, no threshold)",
                self.result.games.len()
            ),
        }
    }
}

/// Plays `candidate` against `best` and decides (see the module docs).
pub fn gate(
    candidate: &PlayerSpec,
    best: &PlayerSpec,
    config: &GateConfig,
    on_game: &mut dyn FnMut(&Progress<'_>),
) -> Result<GateResult, MatchError> {
    let result = run_match(candidate, best, &config.match_config, on_game)?;
    Ok(decide(result, config.threshold))
}

/// The decision for a finished gating match.
pub fn decide(result: MatchResult, threshold: Option<f64>) -> GateResult {
    let (passed, reason) = match result.sprt_verdict() {
        Some(h) => (h == Hypothesis::H1, GateReason::Sprt(h)),
        None => {
            let score = result.wdl.score();
            let passed = threshold.is_some_and(|t| score >= t);
            (passed, GateReason::Score { score, threshold })
        }
    };
    GateResult { passed, reason, result }
}
