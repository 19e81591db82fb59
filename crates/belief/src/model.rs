//! The learned belief over the opponent's bomb: a conditional-logit model (a softmax over the
//! candidates, each scored by a linear function of its [`crate::features`]). It is fitted on
//! finished self-play games, where the truth is known ([`samples_from_game`]: one sample per
//! position at which the side to move could not see the opponent's bomb), by full-batch Adam
//! on the mean negative log-likelihood with an L2 penalty: deterministic, a second or so for a
//! generation's games. With all weights zero it is the uniform belief over the candidates'
//! origins ([`BeliefModel::uniform`]).
//!
//! The player's question is "which square is the bomb on, or is it gone?": a guess
//! ([`Guess`]) is the most likely of the candidate squares and "none" (the summed probability
//! of the lost pieces). [`Accuracy`] compares the model's top-1 guess with two baselines: a
//! uniform guess among the view's candidates (each square and, if the opponent may have lost
//! it, "none"), and the untrained model, uniform over the pieces the opponent had when it
//! chose (which already knows that the more pieces it lost, the likelier "none" is; the
//! difference between the two is what following the pieces by origin gives, the difference
//! to it what the learned weights give).
//!
//! Saved as JSON ([`BeliefModel::to_json`], the `belief` field of a network's sidecar):
//! `{"format": 1, "weights": [...95 numbers], "report": {...} | null}`.

use crate::features::{FEATURES, candidate_features};
use crate::info::{InfoError, InformationSet};
use atomzero_rules::{Color, Move, Position, Square};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The JSON format of a saved model.
pub const BELIEF_FORMAT: u32 = 1;

/// The learned belief.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BeliefModel {
    /// [`BELIEF_FORMAT`].
    pub format: u32,
    /// One weight per feature ([`FEATURES`]).
    pub weights: Vec<f32>,
    /// How it was fitted, and its accuracy on held-out games (`None`: not fitted).
    pub report: Option<FitReport>,
}

/// How a model was fitted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FitReport {
    /// Games and positions fitted on.
    pub train_games: usize,
    /// Positions fitted on.
    pub train_positions: usize,
    /// Games held out (not fitted on).
    pub heldout_games: usize,
    /// The model's accuracy on the held-out games' positions.
    pub heldout: Accuracy,
}

/// Top-1 accuracy of a belief on positions whose truth is known.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Accuracy {
    /// Positions.
    pub positions: usize,
    /// Positions where the top-1 guess (a square, or "none") was right.
    pub hits: usize,
    /// The expected hits of a uniform guess among the view's candidates (the sum of
    /// 1 / candidates over the positions).
    pub uniform_hits: f64,
    /// The hits of the untrained model's top-1 guess (uniform over the opponent's pieces at
    /// its choice, [`BeliefModel::uniform`]).
    #[serde(default)]
    pub prior_hits: usize,
    /// Mean negative log-likelihood of the truth (over origins; nats).
    pub log_loss: f64,
}

impl Accuracy {
    /// The model's top-1 accuracy (NaN without positions).
    pub fn top1(&self) -> f64 {
        self.hits as f64 / self.positions as f64
    }

    /// The uniform guess's expected top-1 accuracy.
    pub fn uniform_top1(&self) -> f64 {
        self.uniform_hits / self.positions as f64
    }

    /// The untrained model's top-1 accuracy.
    pub fn prior_top1(&self) -> f64 {
        self.prior_hits as f64 / self.positions as f64
    }

    /// Adds another count.
    pub fn merge(&mut self, other: &Accuracy) {
        let n = (self.positions + other.positions).max(1) as f64;
        self.log_loss =
            (self.log_loss * self.positions as f64 + other.log_loss * other.positions as f64) / n;
        self.positions += other.positions;
        self.hits += other.hits;
        self.uniform_hits += other.uniform_hits;
        self.prior_hits += other.prior_hits;
    }
}

impl fmt::Display for Accuracy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.positions == 0 {
            return f.write_str("no positions");
        }
        write!(
            f,
            "top-1 {:.1}% vs uniform {:.1}% (untrained, uniform over its pieces: {:.1}%) over {} positions",
            100.0 * self.top1(),
            100.0 * self.uniform_top1(),
            100.0 * self.prior_top1(),
            self.positions
        )
    }
}

/// One position of a finished game, as the side to move saw it, with the truth.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// The features of each candidate origin.
    pub candidates: Vec<Vec<(u16, f32)>>,
    /// Whether each candidate is still on the board (its own guess) or lost ("none").
    pub on_board: Vec<bool>,
    /// The index of the true origin in `candidates`.
    pub truth: usize,
    /// Candidates of the view (squares, plus "none" if the bomb may be gone).
    pub view_candidates: usize,
}

/// A top-1 guess of where the opponent's bomb is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Guess {
    /// The square, or `None`: the opponent has no bomb any more.
    pub square: Option<Square>,
    /// Its probability under the model.
    pub probability: f32,
}

/// A saved model that cannot be used.
#[derive(Clone, Debug, PartialEq)]
pub enum BeliefError {
    /// Not JSON of a model.
    Json(String),
    /// Another format.
    Format(u32),
    /// Wrong number of weights, or a weight that is not finite.
    Weights(String),
}

impl fmt::Display for BeliefError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BeliefError::Json(e) => write!(f, "belief model: {e}"),
            BeliefError::Format(v) => {
                write!(f, "belief model of format {v}, this build reads {BELIEF_FORMAT}")
            }
            BeliefError::Weights(e) => write!(f, "belief model: {e}"),
        }
    }
}

impl std::error::Error for BeliefError {}

/// Settings of [`BeliefModel::fit`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FitOptions {
    /// Full-batch Adam steps.
    pub iterations: usize,
    /// Adam's step size.
    pub learning_rate: f64,
    /// L2 penalty on the weights.
    pub l2: f64,
}

impl Default for FitOptions {
    fn default() -> FitOptions {
        FitOptions { iterations: 300, learning_rate: 0.05, l2: 1e-4 }
    }
}

impl Default for BeliefModel {
    fn default() -> BeliefModel {
        BeliefModel::uniform()
    }
}

impl BeliefModel {
    /// The uniform belief: every candidate origin equally likely.
    pub fn uniform() -> BeliefModel {
        BeliefModel { format: BELIEF_FORMAT, weights: vec![0.0; FEATURES], report: None }
    }

    /// The model as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// A model from JSON, checked.
    pub fn from_json(value: &serde_json::Value) -> Result<BeliefModel, BeliefError> {
        let model: BeliefModel =
            serde_json::from_value(value.clone()).map_err(|e| BeliefError::Json(e.to_string()))?;
        if model.format != BELIEF_FORMAT {
            return Err(BeliefError::Format(model.format));
        }
        if model.weights.len() != FEATURES || !model.weights.iter().all(|w| w.is_finite()) {
            return Err(BeliefError::Weights(format!(
                "expected {FEATURES} finite weights, found {}",
                model.weights.len()
            )));
        }
        Ok(model)
    }

    fn score(&self, features: &[(u16, f32)]) -> f64 {
        features
            .iter()
            .map(|&(i, v)| f64::from(self.weights.get(i as usize).copied().unwrap_or(0.0) * v))
            .sum()
    }

    /// Softmax of the candidates' scores.
    fn probabilities(&self, candidates: &[Vec<(u16, f32)>]) -> Vec<f64> {
        let scores: Vec<f64> = candidates.iter().map(|c| self.score(c)).collect();
        softmax(&scores)
    }

    /// The probability of each possible origin of the opponent's hidden bomb
    /// ([`InformationSet::hidden_origins`], in that order; empty when nothing is hidden).
    pub fn origin_probabilities(&self, info: &InformationSet) -> Vec<(Square, f32)> {
        let mut features = Vec::new();
        let candidates: Vec<Vec<(u16, f32)>> = info
            .hidden_origins()
            .iter()
            .map(|piece| {
                candidate_features(info, piece, &mut features);
                features.clone()
            })
            .collect();
        let p = self.probabilities(&candidates);
        info.hidden_origins().iter().zip(p).map(|(piece, p)| (piece.origin, p as f32)).collect()
    }

    /// The top-1 guess of where the opponent's bomb is now (`None` when nothing is hidden).
    pub fn guess(&self, info: &InformationSet) -> Option<Guess> {
        let probabilities = self.origin_probabilities(info);
        let pieces = info.hidden_origins();
        let mut none = 0.0f32;
        let mut best: Option<Guess> = None;
        for (piece, &(_, p)) in pieces.iter().zip(&probabilities) {
            match piece.square {
                None => none += p,
                Some(square) => {
                    if best.is_none_or(|b| p > b.probability) {
                        best = Some(Guess { square: Some(square), probability: p });
                    }
                }
            }
        }
        let lost = pieces.iter().any(|p| p.square.is_none());
        match best {
            Some(b) if !lost || b.probability >= none => Some(b),
            _ if lost => Some(Guess { square: None, probability: none }),
            other => other,
        }
    }

    /// Accuracy on `samples`.
    pub fn evaluate(&self, samples: &[Sample]) -> Accuracy {
        let mut accuracy = Accuracy::default();
        let mut loss = 0.0;
        for sample in samples {
            let p = self.probabilities(&sample.candidates);
            loss -= p.get(sample.truth).copied().unwrap_or(0.0).max(1e-12).ln();
            accuracy.positions += 1;
            accuracy.hits += usize::from(top1_right(&p, sample));
            accuracy.uniform_hits += 1.0 / sample.view_candidates.max(1) as f64;
            let n = sample.candidates.len().max(1);
            accuracy.prior_hits += usize::from(top1_right(&vec![1.0 / n as f64; n], sample));
        }
        accuracy.log_loss = loss / accuracy.positions.max(1) as f64;
        accuracy
    }

    /// Fits a model on `samples` (full-batch Adam from zero weights; deterministic).
    pub fn fit(samples: &[Sample], options: &FitOptions) -> BeliefModel {
        let mut weights = vec![0.0f64; FEATURES];
        let (mut m, mut v) = (vec![0.0f64; FEATURES], vec![0.0f64; FEATURES]);
        let (beta1, beta2, eps) = (0.9f64, 0.999f64, 1e-8f64);
        let n = samples.len().max(1) as f64;
        let mut gradient = vec![0.0f64; FEATURES];
        let mut scores = Vec::new();
        for step in 1..=options.iterations {
            gradient.iter_mut().for_each(|g| *g = 0.0);
            for sample in samples {
                scores.clear();
                scores.extend(sample.candidates.iter().map(|c| {
                    c.iter().map(|&(i, x)| weights[i as usize] * f64::from(x)).sum::<f64>()
                }));
                let p = softmax(&scores);
                for (k, candidate) in sample.candidates.iter().enumerate() {
                    let error = p[k] - f64::from(u8::from(k == sample.truth));
                    for &(i, x) in candidate {
                        gradient[i as usize] += error * f64::from(x) / n;
                    }
                }
            }
            for i in 0..FEATURES {
                let g = gradient[i] + options.l2 * weights[i];
                m[i] = beta1 * m[i] + (1.0 - beta1) * g;
                v[i] = beta2 * v[i] + (1.0 - beta2) * g * g;
                let m_hat = m[i] / (1.0 - beta1.powi(step as i32));
                let v_hat = v[i] / (1.0 - beta2.powi(step as i32));
                weights[i] -= options.learning_rate * m_hat / (v_hat.sqrt() + eps);
            }
        }
        BeliefModel {
            format: BELIEF_FORMAT,
            weights: weights.iter().map(|&w| w as f32).collect(),
            report: None,
        }
    }

    /// Fits on the samples of `games` (one list per game) but every fifth game, which is held
    /// out to measure the model's accuracy ([`FitReport::heldout`]).
    pub fn fit_with_holdout(games: &[Vec<Sample>], options: &FitOptions) -> BeliefModel {
        let (mut train, mut heldout) = (Vec::new(), Vec::new());
        let (mut train_games, mut heldout_games) = (0, 0);
        for (i, game) in games.iter().enumerate() {
            if i % 5 == 4 {
                heldout.extend(game.iter().cloned());
                heldout_games += 1;
            } else {
                train.extend(game.iter().cloned());
                train_games += 1;
            }
        }
        let mut model = BeliefModel::fit(&train, options);
        model.report = Some(FitReport {
            train_games,
            train_positions: train.len(),
            heldout_games,
            heldout: model.evaluate(&heldout),
        });
        model
    }
}

/// Whether the top-1 guess (a square, or "none" with the lost pieces' summed probability) is
/// the truth.
fn top1_right(p: &[f64], sample: &Sample) -> bool {
    let none: f64 = p.iter().zip(&sample.on_board).filter(|(_, on)| !**on).map(|(p, _)| p).sum();
    let lost = sample.on_board.iter().any(|on| !on);
    let best = p.iter().zip(&sample.on_board).enumerate().filter(|(_, (_, on))| **on).fold(
        None,
        |best: Option<(usize, f64)>, (k, (&p, _))| match best {
            Some((_, b)) if b >= p => best,
            _ => Some((k, p)),
        },
    );
    let truth_on_board = sample.on_board.get(sample.truth).copied().unwrap_or(false);
    match best {
        Some((k, p)) if !lost || p >= none => truth_on_board && k == sample.truth,
        _ => lost && !truth_on_board,
    }
}

fn softmax(scores: &[f64]) -> Vec<f64> {
    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let exp: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
    let total: f64 = exp.iter().sum();
    exp.iter().map(|e| e / total).collect()
}

/// The samples of one finished game (`moves` from `initial`, the full game): one per position
/// at which the side to move had a legal move and could not see the opponent's bomb, from
/// that side's information set, with the true origin of the opponent's bomb. A game whose
/// truth is not known (the opponent's bomb neither chosen in it nor set in `initial`) gives
/// none.
pub fn samples_from_game(initial: &Position, moves: &[Move]) -> Result<Vec<Sample>, InfoError> {
    let mut samples = Vec::new();
    for viewer in Color::ALL {
        let opponent = !viewer;
        // The truth: the opponent's choice in the game, or its bomb in the start position.
        let mut truth = initial.bomb(opponent);
        let mut pos = *initial;
        for &m in moves {
            if m.is_bomb_choice() && pos.turn() == opponent {
                truth = Some(m.from());
            }
            pos = pos.play(m).map_err(|_| InfoError::IllegalMove { ply: 0, uci: pos.uci(m) })?;
        }
        let Some(truth) = truth else { continue };
        let mut info = InformationSet::new(initial, viewer);
        let mut pos = *initial;
        let mut features = Vec::new();
        for &m in moves {
            if pos.turn() == viewer && !info.hidden_origins().is_empty() {
                let pieces = info.hidden_origins();
                if let Some(index) = pieces.iter().position(|p| p.origin == truth) {
                    let candidates = pieces
                        .iter()
                        .map(|piece| {
                            candidate_features(&info, piece, &mut features);
                            features.clone()
                        })
                        .collect();
                    let view = info.view().candidates();
                    samples.push(Sample {
                        candidates,
                        on_board: pieces.iter().map(|p| p.square.is_some()).collect(),
                        truth: index,
                        view_candidates: view.squares.count() as usize
                            + usize::from(view.may_be_gone),
                    });
                }
            }
            pos = info.push(&pos, m)?;
        }
    }
    Ok(samples)
}

#[cfg(test)]
mod tests {
    use super::*;
    use atomzero_rules::Variant;

    /// Random games in which both sides always choose their queen's knight (b1/b8) as the
    /// bomb, or now and then another piece.
    fn games(n: usize, seed: u64) -> Vec<(Position, Vec<Move>)> {
        let mut state = seed;
        let mut next = |k: usize| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 33) % k.max(1) as u64) as usize
        };
        (0..n)
            .map(|_| {
                let initial = Position::new(Variant::Bomb);
                let mut pos = initial;
                let mut moves = Vec::new();
                for ply in 0..60 {
                    let legal = pos.legal_moves();
                    if legal.is_empty() || pos.outcome().is_some() {
                        break;
                    }
                    let quiet: Vec<Move> =
                        legal.iter().copied().filter(|m| !m.is_detonation()).collect();
                    let m = if ply < 2 {
                        let knight = if ply == 0 { Square::B1 } else { Square::B8 };
                        if next(5) == 0 {
                            quiet[next(quiet.len())]
                        } else {
                            Move::bomb_choice(knight)
                        }
                    } else {
                        quiet[next(quiet.len())]
                    };
                    moves.push(m);
                    pos = pos.play(m).unwrap();
                }
                (initial, moves)
            })
            .collect()
    }

    #[test]
    fn a_fitted_model_beats_uniform_on_held_out_games_and_round_trips() {
        let samples: Vec<Vec<Sample>> = games(40, 9)
            .iter()
            .map(|(initial, moves)| samples_from_game(initial, moves).unwrap())
            .collect();
        assert!(samples.iter().map(Vec::len).sum::<usize>() > 1_000);
        let uniform = BeliefModel::uniform().evaluate(&samples.concat());
        let model = BeliefModel::fit_with_holdout(&samples, &FitOptions::default());
        let report = model.report.clone().unwrap();
        assert_eq!((report.train_games, report.heldout_games), (32, 8));
        let heldout = report.heldout;
        // Four games in five choose the knight: the model finds it, uniform cannot.
        assert!(heldout.top1() > 0.6, "{heldout}");
        assert!(heldout.uniform_top1() < 0.1, "{heldout}");
        assert!(heldout.prior_top1() < 0.2, "{heldout}");
        assert!(
            heldout.log_loss < uniform.log_loss - 0.5,
            "{} vs {}",
            heldout.log_loss,
            uniform.log_loss
        );
        let read = BeliefModel::from_json(&model.to_json()).unwrap();
        assert_eq!(read, model);
        let mut bad = model.to_json();
        bad["weights"] = serde_json::json!([1.0, 2.0]);
        assert!(matches!(BeliefModel::from_json(&bad), Err(BeliefError::Weights(_))));
        bad["format"] = 7.into();
        assert_eq!(BeliefModel::from_json(&bad), Err(BeliefError::Format(7)));
    }

    #[test]
    fn the_guess_names_a_square_or_none() {
        let (initial, moves) = &games(1, 3)[0];
        let info = InformationSet::from_moves(initial, &moves[..10], Color::White).unwrap();
        let uniform = BeliefModel::uniform();
        let p = uniform.origin_probabilities(&info);
        assert_eq!(p.len(), 15);
        assert!((p.iter().map(|&(_, p)| p).sum::<f32>() - 1.0).abs() < 1e-5);
        let guess = uniform.guess(&info).unwrap();
        assert!(guess.square.is_some() || info.hidden_origins().iter().any(|p| p.square.is_none()));
        // Nothing hidden before Black chose (White to move at the start).
        let start = InformationSet::new(initial, Color::White);
        assert!(uniform.origin_probabilities(&start).is_empty());
        assert_eq!(uniform.guess(&start), None);
    }
}
