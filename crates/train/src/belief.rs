//! The bomb variant's belief over the opponent's bomb (`atomzero_belief::BeliefModel`),
//! fitted at the end of a training call on the newest games of the replay window: the truth
//! of each game (both hidden choices) is in its record once it is over, and the features of
//! each position come from the side to move's information set alone. Every fifth game is
//! held out to measure the model's top-1 accuracy against a uniform guess
//! ([`atomzero_belief::FitReport`]). The network is not involved: the belief is its own small
//! model, saved in the network's sidecar and used by the search to weight its worlds.

use atomzero_belief::{BeliefModel, FitOptions, Sample, samples_from_game};
use atomzero_replay::{GameRecord, ReplayWindow};
use atomzero_rules::{CastlingMode, Position, Variant};

/// The newest games of the window the belief is fitted on (a few seconds at most).
pub const BELIEF_GAMES: usize = 200;

/// Full-batch Adam steps of the fit.
pub const BELIEF_ITERATIONS: usize = 200;

/// The belief fitted on the newest [`BELIEF_GAMES`] bomb-variant games of `window` (`None`
/// without such games).
pub fn fit_belief(window: &ReplayWindow) -> Option<BeliefModel> {
    let games: Vec<&GameRecord> =
        window.games().iter().filter(|g| g.variant == Variant::Bomb).collect();
    if games.is_empty() {
        return None;
    }
    let newest = &games[games.len().saturating_sub(BELIEF_GAMES)..];
    let samples: Vec<Vec<Sample>> = newest.iter().filter_map(|g| game_samples(g)).collect();
    let options = FitOptions { iterations: BELIEF_ITERATIONS, ..FitOptions::default() };
    Some(BeliefModel::fit_with_holdout(&samples, &options))
}

/// The belief's samples of one recorded game (`None` if it does not replay).
pub fn game_samples(game: &GameRecord) -> Option<Vec<Sample>> {
    let mode = if game.chess960 { CastlingMode::Chess960 } else { CastlingMode::Standard };
    let initial = Position::from_fen_with_mode(&game.start_fen, game.variant, mode).ok()?;
    let moves: Vec<_> = game.moves.iter().map(|m| m.mv).collect();
    samples_from_game(&initial, &moves).ok()
}
