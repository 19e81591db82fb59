//! Self-play into shards: plays games with a loaded model and hands every full shard's games
//! to a sink (a run's store, a directory), keeping a [`Tally`] for reports. Used by the
//! trainer's own self-play, by workers and by `atomzero selfplay`. The bomb variant's
//! searches draw their worlds from the belief saved with the network (uniform without one).

use crate::models::LoadedModel;
use atomzero_belief::BeliefModel;
use atomzero_replay::{EndReason, GameRecord};
use atomzero_rules::Color;
use atomzero_selfplay::{GameStats, Openings, SelfplayConfig, SelfplayEvent};
use std::sync::atomic::{AtomicBool, Ordering};

/// Totals over finished games, for summary lines and logs.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Tally {
    /// Games.
    pub games: usize,
    /// Plies played (positions).
    pub plies: usize,
    /// Moves that became training targets.
    pub targets: usize,
    /// Games White won.
    pub white_wins: usize,
    /// Games Black won.
    pub black_wins: usize,
    /// Drawn games.
    pub draws: usize,
    /// Games ended by resignation.
    pub resignations: usize,
    /// Games played on past a resignation point (to measure false resignations).
    pub playthroughs_with_resign_point: usize,
    /// Of those, games the resigning side did not lose.
    pub false_resignations: usize,
    /// Network evaluations of the finished games.
    pub evaluations: u64,
    /// Positions the network has evaluated so far, games in progress included (self-play's
    /// reports of its batches; a tally of stored games has none).
    pub network_positions: u64,
    /// Games from the Balanced start by the square of White's removal (index a1 = 0; empty
    /// without such games).
    pub removals: Vec<usize>,
    /// Games of the bomb variant.
    pub bomb_games: usize,
    /// Of those, the games in which White, and in which Black, detonated its bomb.
    pub detonations: [usize; 2],
}

impl Tally {
    /// Counts a game just played.
    pub fn add(&mut self, record: &GameRecord, stats: &GameStats) {
        self.add_record(record);
        self.evaluations += stats.evaluations;
        self.false_resignations += usize::from(stats.false_resignation);
    }

    /// Counts a stored game (what a record alone tells: no evaluations, no false-resignation
    /// check).
    pub fn add_record(&mut self, record: &GameRecord) {
        self.games += 1;
        self.plies += record.moves.len();
        self.targets += record.n_targets();
        match record.winner {
            Some(Color::White) => self.white_wins += 1,
            Some(Color::Black) => self.black_wins += 1,
            None => self.draws += 1,
        }
        self.resignations += usize::from(record.reason == EndReason::Resignation);
        self.playthroughs_with_resign_point +=
            usize::from(record.resign_disabled && record.resign_point.is_some());
        if let Some(first) = record.moves.first().filter(|m| m.mv.is_removal()) {
            self.removals.resize(64, 0);
            self.removals[first.mv.from().index()] += 1;
        }
        if record.variant == atomzero_rules::Variant::Bomb {
            self.bomb_games += 1;
            // Sides alternate from the start's side to move (its FEN's second field).
            let black_first = record.start_fen.split_whitespace().nth(1) == Some("b");
            for colour in [Color::White, Color::Black] {
                let first = usize::from((colour == Color::Black) != black_first);
                let detonated =
                    record.moves.iter().skip(first).step_by(2).any(|m| m.mv.is_detonation());
                self.detonations[colour.index()] += usize::from(detonated);
            }
        }
    }

    /// Adds another tally.
    pub fn merge(&mut self, other: &Tally) {
        self.games += other.games;
        self.plies += other.plies;
        self.targets += other.targets;
        self.white_wins += other.white_wins;
        self.black_wins += other.black_wins;
        self.draws += other.draws;
        self.resignations += other.resignations;
        self.playthroughs_with_resign_point += other.playthroughs_with_resign_point;
        self.false_resignations += other.false_resignations;
        self.evaluations += other.evaluations;
        if self.removals.len() < other.removals.len() {
            self.removals.resize(other.removals.len(), 0);
        }
        for (mine, theirs) in self.removals.iter_mut().zip(&other.removals) {
            *mine += theirs;
        }
        self.bomb_games += other.bomb_games;
        for (mine, theirs) in self.detonations.iter_mut().zip(other.detonations) {
            *mine += theirs;
        }
    }

    /// The removals of Balanced-start games, most frequent first, at most `n` of them, e.g.
    /// `e7 40, d7 31, f2 9` (empty without such games).
    pub fn top_removals(&self, n: usize) -> String {
        let mut counts: Vec<(usize, usize)> =
            self.removals.iter().copied().enumerate().filter(|&(_, c)| c > 0).collect();
        counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let named: Vec<String> = counts
            .iter()
            .take(n)
            .filter_map(|&(i, c)| Some(format!("{} {c}", atomzero_rules::Square::new(i as u8)?)))
            .collect();
        named.join(", ")
    }
}

/// What to play: the settings of one call of [`play_games`].
#[derive(Debug)]
pub struct PlayOptions<'a> {
    /// Self-play settings.
    pub selfplay: &'a SelfplayConfig,
    /// The variant.
    pub variant: atomzero_rules::Variant,
    /// Openings.
    pub openings: &'a Openings,
    /// Games to play.
    pub games: usize,
    /// Seed: the same seed plays the same games.
    pub seed: u64,
    /// Games per shard handed to the sink (the last one may have fewer).
    pub games_per_shard: usize,
    /// Stop (keeping every finished game) when set.
    pub interrupted: &'a AtomicBool,
}

/// Plays `options.games` with `model`, hands every `games_per_shard` finished games to
/// `sink` (and the rest at the end, also when stopped by `interrupted` or by an error) and
/// calls `on_game` after each game (with the game) and after each report of the network's
/// batches (with `None`: [`Tally::network_positions`] moved, for progress while games are
/// long). Returns the tally, or the first error of the sink or of `on_game` (play stops
/// there; games already handed over stay handed over).
pub fn play_games<E>(
    model: &LoadedModel,
    options: &PlayOptions<'_>,
    mut sink: impl FnMut(&[GameRecord]) -> Result<(), E>,
    mut on_game: impl FnMut(Option<&GameRecord>, &Tally) -> Result<(), E>,
) -> Result<Tally, E> {
    let mut buffer: Vec<GameRecord> = Vec::new();
    let mut tally = Tally::default();
    let mut error: Option<E> = None;
    let uniform = BeliefModel::uniform();
    atomzero_selfplay::run_with_belief(
        model.evaluator.as_ref(),
        model.belief.as_deref().unwrap_or(&uniform),
        options.selfplay,
        options.variant,
        options.openings,
        options.games,
        model.history,
        options.seed,
        |event| {
            if let SelfplayEvent::Batches { positions, .. } = event {
                tally.network_positions += positions;
                if let Err(e) = on_game(None, &tally) {
                    error = Some(e);
                    return false;
                }
            }
            if let SelfplayEvent::Game(record, stats) = event {
                tally.add(&record, &stats);
                if let Err(e) = on_game(Some(&record), &tally) {
                    error = Some(e);
                    return false;
                }
                buffer.push(*record);
                if buffer.len() >= options.games_per_shard.max(1) {
                    let result = sink(&buffer);
                    buffer.clear();
                    if let Err(e) = result {
                        error = Some(e);
                        return false;
                    }
                }
            }
            !options.interrupted.load(Ordering::Relaxed)
        },
    );
    // Finished games are never lost, also on Ctrl-C or an error of `on_game`.
    if !buffer.is_empty() {
        let result = sink(&buffer);
        if error.is_none()
            && let Err(e) = result
        {
            error = Some(e);
        }
    }
    match error {
        Some(e) => Err(e),
        None => Ok(tally),
    }
}
