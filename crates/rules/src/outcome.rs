//! Game results and the reasons games end.

use crate::color::Color;
use std::fmt;

/// Why a game ended.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Termination {
    /// A king was blown up (in the bomb variant also the mover's own king by its detonation:
    /// the side whose king is left wins).
    KingExploded,
    /// A king was captured (atomar, where kings are immune to blasts).
    KingCaptured,
    /// Traditional checkmate.
    Checkmate,
    /// No legal move and not in check.
    Stalemate,
    /// Neither side can win (variant rule).
    InsufficientMaterial,
    /// 100 half-moves without capture or pawn move.
    FiftyMoves,
    /// The same position for the third time.
    ThreefoldRepetition,
    /// Deathmatch: a side without kings lost its last piece.
    NoPiecesLeft,
    /// Deathmatch: the last explosion cleared the board.
    BoardCleared,
    /// Bomb variant: a detonation removed both kings (a draw).
    BothKingsExploded,
}

impl Termination {
    /// Every termination.
    pub const ALL: [Termination; 10] = [
        Termination::KingExploded,
        Termination::KingCaptured,
        Termination::Checkmate,
        Termination::Stalemate,
        Termination::InsufficientMaterial,
        Termination::FiftyMoves,
        Termination::ThreefoldRepetition,
        Termination::NoPiecesLeft,
        Termination::BoardCleared,
        Termination::BothKingsExploded,
    ];

    /// Lower-case description, also used in PGN `[Termination]` tags.
    pub const fn description(self) -> &'static str {
        match self {
            Termination::KingExploded => "king exploded",
            Termination::KingCaptured => "king captured",
            Termination::Checkmate => "checkmate",
            Termination::Stalemate => "stalemate",
            Termination::InsufficientMaterial => "insufficient material",
            Termination::FiftyMoves => "fifty-move rule",
            Termination::ThreefoldRepetition => "threefold repetition",
            Termination::NoPiecesLeft => "no pieces left",
            Termination::BoardCleared => "board cleared",
            Termination::BothKingsExploded => "both kings exploded",
        }
    }

    /// Parses [`Termination::description`].
    pub fn from_description(s: &str) -> Option<Termination> {
        Termination::ALL.into_iter().find(|t| t.description().eq_ignore_ascii_case(s.trim()))
    }
}

impl fmt::Display for Termination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.description())
    }
}

/// A finished game's result and its reason.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Outcome {
    /// The winner, or `None` for a draw.
    pub winner: Option<Color>,
    /// Why the game ended.
    pub termination: Termination,
}

impl Outcome {
    /// A win for `winner`.
    pub const fn decisive(winner: Color, termination: Termination) -> Outcome {
        Outcome { winner: Some(winner), termination }
    }

    /// A draw.
    pub const fn draw(termination: Termination) -> Outcome {
        Outcome { winner: None, termination }
    }

    /// `"1-0"`, `"0-1"` or `"1/2-1/2"`.
    pub const fn result_str(self) -> &'static str {
        match self.winner {
            Some(Color::White) => "1-0",
            Some(Color::Black) => "0-1",
            None => "1/2-1/2",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.winner {
            Some(c) => write!(f, "{} ({} wins by {})", self.result_str(), c, self.termination),
            None => write!(f, "1/2-1/2 (draw by {})", self.termination),
        }
    }
}
