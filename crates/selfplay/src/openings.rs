//! Opening positions: an EPD book (read by [`crate::epd`]: one position per line, EPD
//! operations ignored, finished games refused), random first plies from the start position,
//! or the Balanced start (White's removal is searched like any move, random plies follow it).

use crate::epd::{EpdBook, EpdError};
use atomzero_mcts::Rng;
use atomzero_rules::{Position, Start, Variant};
use std::path::Path;

/// Where games start.
#[derive(Clone, Debug)]
pub enum Openings {
    /// Positions from a book, used in order (cycling).
    Book(Vec<Position>),
    /// The start position followed by this many random legal plies.
    RandomPlies(usize),
    /// The Balanced start's setup position (`atomzero_rules::start`): the game's first move,
    /// White's removal of a pawn, is searched and recorded like any other, so the network
    /// learns the choice; this many random legal plies (not training targets) follow it.
    Balanced(usize),
}

impl Openings {
    /// Reads an EPD book for `variant` ([`EpdBook::read`]: errors name the file and line).
    pub fn from_epd(path: &Path, variant: Variant) -> Result<Openings, EpdError> {
        Ok(Openings::Book(EpdBook::read(path, variant)?.into_positions()))
    }

    /// Parses EPD text for `variant` ([`EpdBook::parse`]).
    pub fn parse_epd(text: &str, variant: Variant) -> Result<Openings, EpdError> {
        Ok(Openings::Book(EpdBook::parse(text, variant)?.into_positions()))
    }

    /// The random plies for `start` (the config's `random_opening_plies`): played from the
    /// start position, or after the removal in the Balanced start.
    pub fn random(start: Start, plies: usize) -> Openings {
        match start {
            Start::Standard => Openings::RandomPlies(plies),
            Start::Balanced => Openings::Balanced(plies),
        }
    }

    /// Random plies to play after the first move (the Balanced start's removal).
    pub fn plies_after_first_move(&self) -> usize {
        match self {
            Openings::Balanced(plies) => *plies,
            _ => 0,
        }
    }

    /// The opening of game number `index`.
    pub fn opening(&self, index: usize, variant: Variant, rng: &mut Rng) -> Position {
        match self {
            Openings::Book(book) => book[index % book.len()],
            Openings::Balanced(_) => Position::start(variant, Start::Balanced),
            Openings::RandomPlies(n) => loop {
                let mut pos = Position::new(variant);
                for _ in 0..*n {
                    let moves = pos.legal_moves();
                    if moves.is_empty() {
                        break;
                    }
                    pos.play_unchecked(moves[rng.below(moves.len())]);
                }
                if pos.outcome().is_none() {
                    break pos;
                }
            },
        }
    }

    /// Number of book positions (0 for random openings).
    pub fn len(&self) -> usize {
        match self {
            Openings::Book(b) => b.len(),
            Openings::RandomPlies(_) | Openings::Balanced(_) => 0,
        }
    }

    /// True for random openings.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
