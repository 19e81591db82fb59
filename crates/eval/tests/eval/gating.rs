//! Gating decisions: by SPRT (both ways) and by score when the budget runs out.

use atomzero_eval::{
    EloModel, GateConfig, GateReason, Hypothesis, MatchConfig, PlayerSpec, SprtConfig, gate,
};

fn sprt() -> SprtConfig {
    SprtConfig { elo0: 0.0, elo1: 100.0, alpha: 0.05, beta: 0.05, model: EloModel::Logistic }
}

#[test]
fn a_stronger_candidate_passes_by_sprt() {
    let config = GateConfig {
        match_config: MatchConfig {
            games: 200,
            max_plies: 200,
            seed: 11,
            sprt: Some(sprt()),
            concurrency: 2,
            ..Default::default()
        },
        threshold: Some(0.55),
    };
    let mut seen = 0;
    let result =
        gate(&PlayerSpec::alpha_beta(2), &PlayerSpec::random(), &config, &mut |_| seen += 1)
            .unwrap();
    assert!(result.passed, "{}", result.describe());
    assert_eq!(result.reason, GateReason::Sprt(Hypothesis::H1));
    assert!(result.result.games.len() < 200);
    assert_eq!(seen, result.result.games.len());
    assert!(result.describe().starts_with("passed: SPRT accepted H1"), "{}", result.describe());
}

#[test]
fn a_weaker_candidate_fails_by_sprt() {
    let config = GateConfig {
        match_config: MatchConfig {
            games: 200,
            max_plies: 200,
            seed: 12,
            sprt: Some(sprt()),
            ..Default::default()
        },
        threshold: Some(0.55),
    };
    let result =
        gate(&PlayerSpec::random(), &PlayerSpec::alpha_beta(2), &config, &mut |_| {}).unwrap();
    assert!(!result.passed);
    assert_eq!(result.reason, GateReason::Sprt(Hypothesis::H0));
}

#[test]
fn without_a_verdict_the_threshold_decides() {
    let match_config = MatchConfig { games: 10, max_plies: 200, seed: 13, ..Default::default() };
    let config = GateConfig { match_config: match_config.clone(), threshold: Some(0.55) };
    let result = gate(&PlayerSpec::greedy(), &PlayerSpec::random(), &config, &mut |_| {}).unwrap();
    let score = result.result.wdl.score();
    assert_eq!(result.result.games.len(), 10);
    assert!(score >= 0.55, "{}", result.result.summary());
    assert!(result.passed, "{}", result.describe());
    assert_eq!(result.reason, GateReason::Score { score, threshold: Some(0.55) });
    // A threshold above the score fails; no threshold fails without an SPRT verdict.
    let strict = GateConfig { match_config: match_config.clone(), threshold: Some(score + 0.01) };
    assert!(
        !gate(&PlayerSpec::greedy(), &PlayerSpec::random(), &strict, &mut |_| {}).unwrap().passed
    );
    let none = GateConfig { match_config, threshold: None };
    let result = gate(&PlayerSpec::greedy(), &PlayerSpec::random(), &none, &mut |_| {}).unwrap();
    assert!(!result.passed);
    assert!(result.describe().contains("no threshold"));
}
