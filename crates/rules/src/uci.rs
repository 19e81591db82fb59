//! UCI long algebraic move notation: `e2e4`, `e7e8q`, castling `e1g1` (standard) or
//! king-takes-rook `e1h1` (Chess960), null move `0000`, and `@e2` for White's removal of the
//! pawn on e2 in the setup phase of the Balanced start (this project's token: see
//! [`crate::start`]).

use crate::mv::Move;
use crate::position::Position;
use crate::role::Role;
use crate::setup::CastlingMode;
use crate::square::Square;
use std::fmt;
use std::str::FromStr;

/// A move as written in UCI, not yet matched against a position.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum UciMove {
    /// A move from one square to another, maybe promoting.
    Normal { from: Square, to: Square, promotion: Option<Role> },
    /// `0000`.
    Null,
    /// `@e2`: the removal of the pawn on a square in the Balanced start's setup phase.
    Removal(Square),
}

/// Text that is not UCI move notation.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ParseUciError(pub String);

impl fmt::Display for ParseUciError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid uci move '{}' (expected e.g. e2e4, e7e8q or @e2)", self.0)
    }
}

impl std::error::Error for ParseUciError {}

/// A UCI move that is not legal in the position.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct IllegalUciError {
    /// The move as given.
    pub uci: String,
    /// The position's FEN.
    pub fen: String,
}

impl fmt::Display for IllegalUciError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "illegal move '{}' in position {}", self.uci, self.fen)
    }
}

impl std::error::Error for IllegalUciError {}

impl FromStr for UciMove {
    type Err = ParseUciError;
    fn from_str(s: &str) -> Result<UciMove, ParseUciError> {
        let err = || ParseUciError(s.chars().take(32).collect());
        if s == "0000" {
            return Ok(UciMove::Null);
        }
        if let Some(square) = s.strip_prefix('@') {
            return square.parse().map(UciMove::Removal).map_err(|_| err());
        }
        if !(4..=5).contains(&s.len()) || !s.is_ascii() {
            return Err(err());
        }
        let from: Square = s[0..2].parse().map_err(|_| err())?;
        let to: Square = s[2..4].parse().map_err(|_| err())?;
        let promotion = match s.chars().nth(4) {
            None => None,
            Some(c) if c.is_ascii_lowercase() => match Role::from_char(c) {
                Some(Role::Pawn) | None => return Err(err()),
                Some(role) => Some(role),
            },
            Some(_) => return Err(err()),
        };
        Ok(UciMove::Normal { from, to, promotion })
    }
}

impl fmt::Display for UciMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UciMove::Null => f.write_str("0000"),
            UciMove::Removal(square) => write!(f, "@{square}"),
            UciMove::Normal { from, to, promotion } => {
                write!(f, "{from}{to}")?;
                if let Some(role) = promotion {
                    write!(f, "{}", role.char())?;
                }
                Ok(())
            }
        }
    }
}

impl UciMove {
    /// The UCI form of a move, castling written as the king's two-square move in standard mode
    /// and as king-takes-rook in Chess960 mode.
    pub fn from_move(m: Move, mode: CastlingMode) -> UciMove {
        if m.is_removal() {
            return UciMove::Removal(m.from());
        }
        let to = if m.is_castle() && mode == CastlingMode::Standard {
            Position::castle_king_to(m)
        } else {
            m.to()
        };
        UciMove::Normal { from: m.from(), to, promotion: m.promotion() }
    }

    /// Finds the legal move this denotes in `pos`. Castling is accepted both as king-takes-rook
    /// and, in standard mode, as the king's two-square move.
    pub fn to_move(&self, pos: &Position) -> Result<Move, IllegalUciError> {
        let illegal = || IllegalUciError { uci: self.to_string(), fen: pos.fen() };
        if let UciMove::Removal(square) = *self {
            let removal = Move::removal(square);
            return if pos.is_setup_phase() && pos.is_legal(removal) {
                Ok(removal)
            } else {
                Err(illegal())
            };
        }
        let UciMove::Normal { from, to, promotion } = *self else { return Err(illegal()) };
        pos.legal_moves()
            .iter()
            .copied()
            .find(|m| {
                m.from() == from
                    && !m.is_removal()
                    && m.promotion() == promotion
                    && (m.to() == to
                        || (m.is_castle()
                            && pos.castling_mode() == CastlingMode::Standard
                            && Position::castle_king_to(*m) == to))
            })
            .ok_or_else(illegal)
    }
}

impl Position {
    /// The UCI notation of `m` in this position's castling mode.
    pub fn uci(&self, m: Move) -> String {
        UciMove::from_move(m, self.castling_mode).to_string()
    }

    /// Parses a UCI move and finds it among the legal moves.
    pub fn parse_uci(&self, text: &str) -> Result<Move, UciError> {
        let uci: UciMove = text.parse().map_err(UciError::Parse)?;
        uci.to_move(self).map_err(UciError::Illegal)
    }
}

/// Parsing or legality failure of a UCI move.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum UciError {
    /// Not UCI notation.
    Parse(ParseUciError),
    /// Not legal here.
    Illegal(IllegalUciError),
}

impl fmt::Display for UciError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UciError::Parse(e) => e.fmt(f),
            UciError::Illegal(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for UciError {}
