//! [`Game`]: a start position and the moves played from it, with the game's outcome
//! including repetitions.

use crate::mv::Move;
use crate::outcome::{Outcome, Termination};
use crate::position::{PlayError, Position};

/// A game: start position, moves, and the hash of every position reached.
#[derive(Clone, Debug)]
pub struct Game {
    initial: Position,
    current: Position,
    moves: Vec<Move>,
    /// `hashes[i]` is the hash of the position before move `i`; the last entry is `current`'s.
    hashes: Vec<u64>,
}

impl Game {
    /// A game starting at `initial`.
    pub fn new(initial: Position) -> Game {
        Game { initial, current: initial, moves: Vec::new(), hashes: vec![initial.hash()] }
    }

    /// The start position.
    pub fn initial(&self) -> &Position {
        &self.initial
    }

    /// The current position.
    pub fn position(&self) -> &Position {
        &self.current
    }

    /// The moves played so far.
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// Number of half-moves played.
    pub fn ply(&self) -> usize {
        self.moves.len()
    }

    /// Plays a legal move (checked).
    pub fn play(&mut self, m: Move) -> Result<(), PlayError> {
        self.current = self.current.play(m)?;
        self.moves.push(m);
        self.hashes.push(self.current.hash());
        Ok(())
    }

    /// Plays a move known to be legal in the current position.
    pub fn play_unchecked(&mut self, m: Move) {
        self.current.play_unchecked(m);
        self.moves.push(m);
        self.hashes.push(self.current.hash());
    }

    /// How many times the current position occurred before (0 the first time), looking back
    /// only as far as the last irreversible move.
    pub fn repetitions(&self) -> usize {
        let Some((&now, earlier)) = self.hashes.split_last() else { return 0 };
        let window = (self.current.halfmoves() as usize).min(earlier.len());
        earlier[earlier.len() - window..]
            .iter()
            .rev()
            .skip(1)
            .step_by(2)
            .filter(|&&h| h == now)
            .count()
    }

    /// The outcome: [`Position::outcome`] (variant end, mate, stalemate, insufficient material,
    /// 50 moves) and then threefold repetition, all automatic.
    pub fn outcome(&self) -> Option<Outcome> {
        if let Some(outcome) = self.current.outcome() {
            return Some(outcome);
        }
        if self.repetitions() >= 2 {
            return Some(Outcome::draw(Termination::ThreefoldRepetition));
        }
        None
    }
}
