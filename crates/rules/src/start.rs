//! Where a game starts: the standard position, or the **Balanced** start.
//!
//! The Balanced start (described on vchess's atomic page; proposed by a strong atomic player in
//! 2020 to even out White's first-move advantage) adds a setup phase before the first move:
//! White chooses any one of the 16 pawns, of either colour, and removes it; then Black moves
//! and the game goes on under the variant's ordinary rules. It composes with every variant
//! ([`crate::Variant`]): all of them start from the standard position with 16 pawns.
//!
//! In this crate the setup phase is a flag of [`crate::Position`]
//! ([`crate::Position::is_setup_phase`]): the legal moves of a position in the setup phase are
//! the removals ([`crate::Move::removal`], one per pawn on the board, squares a1 to h8), and
//! playing one clears the flag and passes the turn. The flag is part of the Zobrist hash, so
//! the setup position and the standard start hash differently.
//!
//! Notation (written and read by this crate):
//!
//! | where | the setup position | White's removal of the e2 pawn |
//! |---|---|---|
//! | FEN ([`crate::Position::fen`]) | `balanced` ([`BALANCED_FEN`]) | the position after it is ordinary FEN: `rnbqkbnr/pppppppp/8/8/8/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1` |
//! | UCI ([`crate::UciMove`]) | `position fen balanced` | `@e2` |
//! | SAN ([`crate::Position::san`]) | | `@e2` |
//! | PGN ([`crate::pgn`]) | `[Balanced "-"]` (no removal yet) | `[Balanced "e2"]` `[SetUp "1"]` `[FEN "<after the removal>"]`, movetext from Black's first move |
//!
//! The removal's clocks: the half-move clock is 0 after it (a pawn left the board) and the
//! full-move number stays 1 (Black's reply is the second half of move 1).

use std::fmt;
use std::str::FromStr;

/// The FEN-field notation of the Balanced setup position.
pub const BALANCED_FEN: &str = "balanced";

/// How a game starts.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Start {
    /// The standard start position, White to move.
    #[default]
    Standard,
    /// The standard position in the setup phase: White removes one of the 16 pawns, then
    /// Black moves first.
    Balanced,
}

impl Start {
    /// Every start, the default first.
    pub const ALL: [Start; 2] = [Start::Standard, Start::Balanced];

    /// The stable command-line / config / UCI name.
    pub const fn name(self) -> &'static str {
        match self {
            Start::Standard => "standard",
            Start::Balanced => "balanced",
        }
    }

    /// Parses a name in any case.
    pub fn from_name(name: &str) -> Option<Start> {
        Start::ALL.into_iter().find(|s| s.name().eq_ignore_ascii_case(name.trim()))
    }

    /// A comma-separated list of every start name, for error messages.
    pub fn names() -> String {
        Start::ALL.iter().map(|s| s.name()).collect::<Vec<_>>().join(", ")
    }
}

impl fmt::Display for Start {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown start name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownStart(pub String);

impl fmt::Display for UnknownStart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown start '{}' (valid: {})", self.0, Start::names())
    }
}

impl std::error::Error for UnknownStart {}

impl FromStr for Start {
    type Err = UnknownStart;
    fn from_str(s: &str) -> Result<Start, UnknownStart> {
        Start::from_name(s).ok_or_else(|| UnknownStart(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_errors() {
        for start in Start::ALL {
            assert_eq!(start.name().parse::<Start>(), Ok(start));
            assert_eq!(start.to_string().to_uppercase().parse::<Start>(), Ok(start));
        }
        let e = "balance".parse::<Start>().unwrap_err();
        assert_eq!(e.to_string(), "unknown start 'balance' (valid: standard, balanced)");
    }
}
