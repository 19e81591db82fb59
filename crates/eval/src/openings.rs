//! Where match games start: the standard start position, an EPD book, or random balanced
//! openings. Each opening is played by a pair of games with colours swapped, so the opening
//! of pair `p` must be a pure function of `(p, seed)`: books are shuffled once by the seed,
//! random openings are drawn from a generator seeded by `(seed, p)`.
//!
//! On the Balanced start (`atomzero_rules::start`) every game starts from the setup position
//! and the player with White chooses the removal; random openings then play their random
//! plies after the removal, drawn from a generator seeded by `(seed, p, removed square)`, so
//! the two games of a pair share their random plies whenever both Whites remove the same pawn.
//! A book cannot be combined with the Balanced start (its positions are past the setup).
//!
//! The bomb variant starts every game from its setup phase (each player chooses its bomb,
//! hidden from the other); random openings then play their random plies after both choices:
//! quiet moves (never a detonation) drawn from a generator seeded by `(seed, p)` alone, not
//! checked for balance, so that they do not depend on the bombs chosen and the two games of a
//! pair share them (the bombs never change which board moves are legal). A book cannot be
//! used (its positions would need both players' hidden bombs).

use crate::alphabeta;
use atomzero_mcts::Rng;
use atomzero_rules::{Move, Position, Start, Variant};
use atomzero_selfplay::{EpdBook, EpdError};
use std::path::Path;

/// A random opening is balanced if a 2-ply alpha-beta search (with quiescence) scores it
/// within this many centipawns of level for the side to move.
pub const BALANCE_MARGIN: i32 = 100;

/// Random openings drawn before giving up on balance and taking the last one that is not over.
const MAX_OPENING_ATTEMPTS: usize = 200;

/// The openings of a match.
#[derive(Clone, Debug, PartialEq)]
pub enum Openings {
    /// Every pair starts from the variant's standard start position.
    StartPosition,
    /// Book positions, used in an order shuffled by the match seed (cycling if the match has
    /// more pairs than the book has positions).
    Book(Vec<Position>),
    /// The start position followed by `plies` random legal moves, redrawn until the result is
    /// not over and balanced (see [`BALANCE_MARGIN`]).
    Random {
        /// Random half-moves from the start position.
        plies: usize,
    },
}

impl Default for Openings {
    /// Four random balanced plies.
    fn default() -> Openings {
        Openings::Random { plies: 4 }
    }
}

impl Openings {
    /// Reads an EPD book for `variant` (`atomzero_selfplay::EpdBook::read`: errors name the
    /// file and line).
    pub fn from_epd_file(path: &Path, variant: Variant) -> Result<Openings, EpdError> {
        Ok(Openings::Book(EpdBook::read(path, variant)?.into_positions()))
    }

    /// Parses EPD text for `variant` (`atomzero_selfplay::EpdBook::parse`: the four FEN fields
    /// of each line, operations ignored; every position legal and not already over).
    pub fn parse_epd(text: &str, variant: Variant) -> Result<Openings, EpdError> {
        Ok(Openings::Book(EpdBook::parse(text, variant)?.into_positions()))
    }

    /// True for book positions (written with `[FEN]` in PGN and counted as "book").
    pub fn is_book(&self) -> bool {
        matches!(self, Openings::Book(_))
    }

    /// The variant of the book's positions (`None` for the other kinds).
    pub fn book_variant(&self) -> Option<Variant> {
        match self {
            Openings::Book(book) => book.first().map(Position::variant),
            _ => None,
        }
    }

    /// A picker for a match with this seed.
    pub(crate) fn picker(&self, variant: Variant, start: Start, seed: u64) -> OpeningPicker<'_> {
        let order = match self {
            Openings::Book(book) => {
                let mut order: Vec<usize> = (0..book.len()).collect();
                let mut rng = Rng::new(seed ^ 0x0B00_C0DE);
                for i in (1..order.len()).rev() {
                    order.swap(i, rng.below(i + 1));
                }
                order
            }
            _ => Vec::new(),
        };
        OpeningPicker { openings: self, variant, start, seed, order }
    }
}

/// The opening of each pair of a match.
#[derive(Debug)]
pub(crate) struct OpeningPicker<'a> {
    openings: &'a Openings,
    variant: Variant,
    start: Start,
    seed: u64,
    order: Vec<usize>,
}

impl OpeningPicker<'_> {
    /// The opening of pair `pair` (the setup position on the Balanced start and in the bomb
    /// variant).
    pub(crate) fn opening(&self, pair: usize) -> Position {
        if self.start == Start::Balanced {
            return Position::start(self.variant, Start::Balanced);
        }
        if self.variant == Variant::Bomb {
            return Position::new(self.variant);
        }
        match self.openings {
            Openings::StartPosition => Position::new(self.variant),
            Openings::Book(book) => book[self.order[pair % self.order.len()]],
            Openings::Random { plies } => {
                let mut rng = Rng::new(mix(self.seed ^ 0x09E2_1A95, pair as u64));
                random_balanced(self.variant, *plies, &mut rng)
            }
        }
    }
}

impl OpeningPicker<'_> {
    /// The random plies that follow White's removal `removal` on the Balanced start, in pair
    /// `pair` (none unless the openings are random).
    pub(crate) fn plies_after_removal(
        &self,
        pair: usize,
        after: &Position,
        removal: Move,
    ) -> Vec<Move> {
        let Openings::Random { plies } = self.openings else { return Vec::new() };
        let removed = removal.from().index() as u64;
        let mut rng = Rng::new(mix(mix(self.seed ^ 0xBA1A_9CED, pair as u64), removed));
        random_balanced_moves(after, *plies, &mut rng)
    }
}

impl OpeningPicker<'_> {
    /// The random plies that follow both bomb choices in pair `pair` of a bomb-variant match
    /// (none unless the openings are random): quiet moves from `after`, redrawn until the
    /// game is not over.
    pub(crate) fn plies_after_bomb_choices(&self, pair: usize, after: &Position) -> Vec<Move> {
        let Openings::Random { plies } = self.openings else { return Vec::new() };
        let mut rng = Rng::new(mix(self.seed ^ 0xB0B_B0B5, pair as u64));
        for _ in 0..MAX_OPENING_ATTEMPTS {
            let mut pos = *after;
            let mut played = Vec::with_capacity(*plies);
            for _ in 0..*plies {
                let quiet: Vec<Move> =
                    pos.legal_moves().iter().copied().filter(|m| !m.is_detonation()).collect();
                if quiet.is_empty() || pos.outcome().is_some() {
                    break;
                }
                let m = quiet[rng.below(quiet.len())];
                pos.play_unchecked(m);
                played.push(m);
            }
            if played.len() == *plies && pos.outcome().is_none() {
                return played;
            }
        }
        Vec::new()
    }
}

/// Random plies from the start position until the position is not over and balanced.
pub fn random_balanced(variant: Variant, plies: usize, rng: &mut Rng) -> Position {
    let mut pos = Position::new(variant);
    for m in random_balanced_moves(&pos, plies, rng) {
        pos.play_unchecked(m);
    }
    pos
}

/// `plies` random moves from `start`, redrawn until the position they reach is not over and
/// balanced (see [`BALANCE_MARGIN`]); after [`MAX_OPENING_ATTEMPTS`] draws, the last that is
/// not over (or none).
pub fn random_balanced_moves(start: &Position, plies: usize, rng: &mut Rng) -> Vec<Move> {
    let mut fallback = Vec::new();
    for _ in 0..MAX_OPENING_ATTEMPTS {
        let mut pos = *start;
        let mut moves_played = Vec::with_capacity(plies);
        let mut over = false;
        for _ in 0..plies {
            let moves = pos.legal_moves();
            if moves.is_empty() || pos.outcome().is_some() {
                over = true;
                break;
            }
            let m = moves[rng.below(moves.len())];
            pos.play_unchecked(m);
            moves_played.push(m);
        }
        if over || pos.outcome().is_some() {
            continue;
        }
        if alphabeta::evaluate(&pos, 2).abs() <= BALANCE_MARGIN {
            return moves_played;
        }
        fallback = moves_played;
    }
    fallback
}

/// Mixes two numbers into a well-spread seed (splitmix64 finaliser).
pub(crate) fn mix(a: u64, b: u64) -> u64 {
    let mut z = a ^ b.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_shared_book_format() {
        let text = "# comment\n\
            r1bqkb1r/pppppppp/n4n2/1N6/8/5P2/PPPPP1PP/R1BQKBNR b KQkq - 2 3;\n\
            \n\
            rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - bm e5; id \"x\";\n";
        let book = Openings::parse_epd(text, Variant::Atomic).unwrap();
        let Openings::Book(positions) = &book else { panic!() };
        assert_eq!(positions.len(), 2);
        assert_eq!(book.book_variant(), Some(Variant::Atomic));
        assert!(matches!(
            Openings::parse_epd("8/8/8/8/8/8/8/8 w - -\n", Variant::Atomic),
            Err(EpdError::Position { line: 1, .. })
        ));
        assert!(matches!(
            Openings::parse_epd("\n# x\n", Variant::Atomic),
            Err(EpdError::Empty { .. })
        ));
    }

    #[test]
    fn random_openings_are_reproducible_balanced_and_varied() {
        let openings = Openings::Random { plies: 4 };
        let picker = openings.picker(Variant::Atomic, Start::Standard, 11);
        let again = openings.picker(Variant::Atomic, Start::Standard, 11);
        let mut distinct = std::collections::HashSet::new();
        for pair in 0..20 {
            let pos = picker.opening(pair);
            assert_eq!(pos, again.opening(pair));
            assert!(pos.outcome().is_none());
            assert!(alphabeta::evaluate(&pos, 2).abs() <= BALANCE_MARGIN, "{}", pos.fen());
            distinct.insert(pos.fen());
        }
        assert!(distinct.len() >= 15);
    }

    #[test]
    fn book_order_is_a_seeded_permutation() {
        let book = Openings::Book(vec![Position::new(Variant::Atomic); 5]);
        let picker = book.picker(Variant::Atomic, Start::Standard, 3);
        let mut seen = picker.order.clone();
        seen.sort_unstable();
        assert_eq!(seen, vec![0, 1, 2, 3, 4]);
    }
}
