//! Reanalysis (MuZero Reanalyse, Schrittwieser et al. 2021): the training targets of recorded
//! games searched again, with a newer network or more visits than the games were played with.
//! The moves and the result stay as played; each target's policy, root value and policy
//! surprise become the new search's, found exactly as self-play finds them (the config's root
//! search, PUCT or Gumbel, its alpha-beta priors) but without root noise, so that a target is
//! the search's judgement rather than its exploration. Positions that were not targets stay
//! without one.
//!
//! One search tree per game, reused from target to target as self-play reuses it. Games are
//! independent: [`reanalyse_games`] spreads them over a rayon pool. No file I/O; the caller
//! reads and writes the shards.

use crate::config::{RootSearch, SelfplayConfig};
use crate::worker::policy_surprise;
use atomzero_mcts::{Evaluator, Search};
use atomzero_replay::{GameRecord, SearchTarget};
use atomzero_rules::{CastlingMode, Game, Position, Variant};
use std::fmt;

/// A recorded game that cannot be searched again.
#[derive(Clone, Debug, PartialEq)]
pub enum ReanalyseError {
    /// The start position does not parse.
    Start {
        /// The recorded start.
        fen: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A recorded move is not legal where it was played.
    IllegalMove {
        /// The ply (0 = the first move).
        ply: usize,
        /// The move, as UCI.
        uci: String,
    },
    /// The bomb variant's targets come from determinized searches over the mover's
    /// information set, which reanalysis does not redo.
    Bomb,
}

impl fmt::Display for ReanalyseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReanalyseError::Start { fen, reason } => write!(f, "start position {fen:?}: {reason}"),
            ReanalyseError::IllegalMove { ply, uci } => {
                write!(f, "move {uci} at ply {ply} is not legal there")
            }
            ReanalyseError::Bomb => write!(
                f,
                "a bomb-variant game: its targets come from determinized searches, which \
                 reanalysis does not redo"
            ),
        }
    }
}

impl std::error::Error for ReanalyseError {}

/// What reanalysing some games changed.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ReanalyseTally {
    /// Targets searched again.
    pub targets: usize,
    /// Targets whose largest policy weight moved to another move.
    pub best_changed: usize,
    /// Sum over the targets of the policy surprise of the new target against the old one
    /// (KL(new ‖ old), nats).
    pub divergence: f64,
    /// Sum over the targets of |new root value − old root value| (win − loss).
    pub value_change: f64,
    /// Visits the searches added at their roots (those a reused subtree brought not counted).
    pub visits: u64,
}

impl ReanalyseTally {
    /// Adds `other`'s counts.
    pub fn add(&mut self, other: &ReanalyseTally) {
        self.targets += other.targets;
        self.best_changed += other.best_changed;
        self.divergence += other.divergence;
        self.value_change += other.value_change;
        self.visits += other.visits;
    }
}

/// The move with the largest weight of a policy target (the first on ties).
fn best(policy: &[(atomzero_rules::Move, f32)]) -> Option<atomzero_rules::Move> {
    let mut best = None;
    let mut weight = f32::NEG_INFINITY;
    for &(m, w) in policy {
        if w > weight {
            (best, weight) = (Some(m), w);
        }
    }
    best
}

/// `record` with each target searched again by `evaluator`: `visits` simulations per target
/// (self-play's full searches have `config.visits`), `config`'s search without root noise,
/// `history` earlier positions handed to the evaluator, `seed` for the search's tie-breaks.
pub fn reanalyse_game<E: Evaluator + ?Sized>(
    record: &GameRecord,
    evaluator: &E,
    config: &SelfplayConfig,
    visits: u32,
    history: usize,
    seed: u64,
) -> Result<(GameRecord, ReanalyseTally), ReanalyseError> {
    if record.variant == Variant::Bomb {
        return Err(ReanalyseError::Bomb);
    }
    let mode = if record.chess960 { CastlingMode::Chess960 } else { CastlingMode::Standard };
    let start =
        Position::from_fen_with_mode(&record.start_fen, record.variant, mode).map_err(|e| {
            ReanalyseError::Start { fen: record.start_fen.clone(), reason: e.to_string() }
        })?;
    let mut game = Game::new(start);
    let search_config = config.search_config(false, history).without_noise();
    let gumbel = config.root_search == RootSearch::Gumbel;
    let mut search: Option<Search> = None;
    let mut out = record.clone();
    let mut tally = ReanalyseTally::default();
    for (ply, played) in out.moves.iter_mut().enumerate() {
        if !game.position().legal_moves().contains(&played.mv) {
            return Err(ReanalyseError::IllegalMove { ply, uci: game.position().uci(played.mv) });
        }
        if let Some(old) = &played.target {
            let search = search.get_or_insert_with(|| Search::new(&game, search_config, seed));
            search.set_simulations(visits);
            let before = search.root_visits();
            search.run(evaluator, visits, config.leaves_per_tree.max(1));
            tally.visits += u64::from(search.root_visits().saturating_sub(before));
            let policy: Vec<_> = if gumbel {
                search.improved_policy().into_iter().filter(|&(_, w)| w > 0.0).collect()
            } else {
                let children = search.root_children().into_iter().filter(|&(_, n)| n > 0);
                children.map(|(m, n)| (m, n as f32)).collect()
            };
            let root_wdl = search.root_wdl();
            let surprise = Some(policy_surprise(&policy, &search.root_priors()));
            tally.targets += 1;
            tally.best_changed += usize::from(best(&policy) != best(&old.policy));
            let total: f32 = old.policy.iter().map(|&(_, w)| w).sum();
            let old_normalised: Vec<_> =
                old.policy.iter().map(|&(m, w)| (m, w / total.max(f32::MIN_POSITIVE))).collect();
            tally.divergence += f64::from(policy_surprise(&policy, &old_normalised));
            tally.value_change += f64::from(
                ((root_wdl[0] - root_wdl[2]) - (old.root_wdl[0] - old.root_wdl[2])).abs(),
            );
            played.target = Some(SearchTarget { policy, root_wdl, surprise });
        }
        game.play_unchecked(played.mv);
        if let Some(search) = &mut search {
            search.advance(played.mv);
        }
    }
    Ok((out, tally))
}

/// [`reanalyse_game`] for each of `records` on a rayon pool of `threads` threads (0: one per
/// core), game `i` with seed `seed ^ i`; the results in the order of `records`.
pub fn reanalyse_games<E: Evaluator + Sync + ?Sized>(
    records: &[GameRecord],
    evaluator: &E,
    config: &SelfplayConfig,
    visits: u32,
    history: usize,
    seed: u64,
    threads: usize,
) -> Vec<Result<(GameRecord, ReanalyseTally), ReanalyseError>> {
    use rayon::prelude::*;
    let one = |(i, record): (usize, &GameRecord)| {
        reanalyse_game(record, evaluator, config, visits, history, seed ^ i as u64)
    };
    match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(pool) => pool.install(|| records.par_iter().enumerate().map(one).collect()),
        // Could not start threads: on this one.
        Err(_) => records.iter().enumerate().map(one).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use atomzero_mcts::RandomEvaluator;
    use atomzero_replay::{EndReason, MoveRecord};
    use atomzero_rules::Color;

    /// A short recorded game from the start: targets at plies 0, 1 and 3, a made-up old
    /// policy (all weight on the played move) and root value 0.
    fn recorded() -> GameRecord {
        let mut pos = Position::new(Variant::Atomic);
        let mut moves = Vec::new();
        for ply in 0..6 {
            let legal = pos.legal_moves();
            let mv = legal[(ply * 5 + 2) % legal.len()];
            let target = [0, 1, 3].contains(&ply).then(|| SearchTarget {
                policy: vec![(mv, 7.0)],
                root_wdl: [0.2, 0.6, 0.2],
                surprise: None,
            });
            moves.push(MoveRecord { mv, target });
            pos.play_unchecked(mv);
        }
        GameRecord {
            variant: Variant::Atomic,
            start_fen: Position::new(Variant::Atomic).fen(),
            chess960: false,
            moves,
            winner: Some(Color::Black),
            reason: EndReason::Resignation,
            resign_point: None,
            resign_disabled: false,
        }
    }

    #[test]
    fn targets_are_searched_again_and_everything_else_stays() {
        let record = recorded();
        let config = SelfplayConfig::default();
        let evaluator = RandomEvaluator { seed: 9 };
        let (new, tally) = reanalyse_game(&record, &evaluator, &config, 64, 0, 1).unwrap();
        assert_eq!(tally.targets, 3);
        assert!(tally.visits >= 3 * 60, "{tally:?}");
        // The game itself is unchanged.
        assert_eq!((new.winner, new.reason), (record.winner, record.reason));
        assert_eq!(new.start_fen, record.start_fen);
        let mut pos = Position::new(Variant::Atomic);
        for (old, m) in record.moves.iter().zip(&new.moves) {
            assert_eq!(old.mv, m.mv);
            assert_eq!(old.target.is_some(), m.target.is_some());
            if let Some(target) = &m.target {
                // A policy over legal moves with positive weights, a WDL, a surprise.
                let legal = pos.legal_moves();
                assert!(target.policy.len() > 1, "{target:?}");
                assert!(target.policy.iter().all(|&(m, w)| legal.contains(&m) && w > 0.0));
                assert!((target.root_wdl.iter().sum::<f32>() - 1.0).abs() < 1e-4);
                assert_ne!(target.root_wdl, [0.2, 0.6, 0.2]);
                assert!(target.surprise.is_some_and(|s| s >= 0.0));
            }
            pos.play_unchecked(m.mv);
        }
        // The old targets put everything on one move: the new ones spread it.
        assert!(tally.divergence > 0.0);
        // The same inputs give the same targets, one thread or two.
        let again = reanalyse_game(&record, &evaluator, &config, 64, 0, 1).unwrap();
        assert_eq!(again.0, new);
        let pooled = reanalyse_games(&[record.clone(), record], &evaluator, &config, 64, 0, 1, 2);
        assert_eq!(pooled[1].as_ref().unwrap().0, new);
    }

    #[test]
    fn more_visits_give_the_search_more_say() {
        // Under Gumbel the improved policy moves further from the priors with more visits.
        let record = recorded();
        let config = SelfplayConfig { root_search: RootSearch::Gumbel, ..Default::default() };
        let evaluator = RandomEvaluator { seed: 4 };
        let surprise = |visits| {
            let (new, _) = reanalyse_game(&record, &evaluator, &config, visits, 0, 1).unwrap();
            new.moves.iter().filter_map(|m| m.target.as_ref()?.surprise).sum::<f32>()
        };
        assert!(surprise(256) > surprise(16), "{} vs {}", surprise(256), surprise(16));
    }

    #[test]
    fn a_game_that_cannot_be_replayed_is_refused_with_its_ply() {
        let mut record = recorded();
        record.moves[2].mv = record.moves[0].mv;
        let config = SelfplayConfig::default();
        let error =
            reanalyse_game(&record, &RandomEvaluator { seed: 1 }, &config, 16, 0, 1).unwrap_err();
        assert!(matches!(error, ReanalyseError::IllegalMove { ply: 2, .. }), "{error}");
        let mut record = recorded();
        record.start_fen = "not a fen".into();
        let error =
            reanalyse_game(&record, &RandomEvaluator { seed: 1 }, &config, 16, 0, 1).unwrap_err();
        assert!(error.to_string().contains("not a fen"), "{error}");
        let mut record = recorded();
        record.variant = Variant::Bomb;
        let error =
            reanalyse_game(&record, &RandomEvaluator { seed: 1 }, &config, 16, 0, 1).unwrap_err();
        assert_eq!(error, ReanalyseError::Bomb);
    }
}
