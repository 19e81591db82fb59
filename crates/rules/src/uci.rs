//! UCI long algebraic move notation: `e2e4`, `e7e8q`, castling `e1g1` (standard) or
//! king-takes-rook `e1h1` (Chess960), null move `0000`, and this project's tokens for the
//! moves from a square to itself: `@e2` for a setup move (White's removal of the pawn on e2 in
//! the setup phase of the Balanced start, see [`crate::start`]; in the bomb variant's setup
//! phase the choice of the piece on e2 as the mover's bomb, see [`crate::bomb`]) and `d1*` for
//! the bomb variant's detonation of the mover's bomb on d1.

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
    /// `@e2`: the setup move on a square: the removal of the pawn there in the Balanced
    /// start's setup phase, the choice of the piece there as the bomb in the bomb variant's.
    Setup(Square),
    /// `d1*`: the detonation of the mover's bomb on a square (bomb variant).
    Detonation(Square),
}

/// Text that is not UCI move notation.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ParseUciError(pub String);

impl fmt::Display for ParseUciError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid uci move '{}' (expected e.g. e2e4, e7e8q, @e2 or d1*)", self.0)
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
            return square.parse().map(UciMove::Setup).map_err(|_| err());
        }
        if let Some(square) = s.strip_suffix('*') {
            return square.parse().map(UciMove::Detonation).map_err(|_| err());
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
            UciMove::Setup(square) => write!(f, "@{square}"),
            UciMove::Detonation(square) => write!(f, "{square}*"),
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
        if m.is_removal() || m.is_bomb_choice() {
            return UciMove::Setup(m.from());
        }
        if m.is_detonation() {
            return UciMove::Detonation(m.from());
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
        let special = match *self {
            UciMove::Setup(square) if pos.variant().rules().hidden_bombs => {
                Some(Move::bomb_choice(square))
            }
            UciMove::Setup(square) => Some(Move::removal(square)),
            UciMove::Detonation(square) => Some(Move::detonation(square)),
            _ => None,
        };
        if let Some(m) = special {
            return if pos.is_legal(m) { Ok(m) } else { Err(illegal()) };
        }
        let UciMove::Normal { from, to, promotion } = *self else { return Err(illegal()) };
        pos.legal_moves()
            .iter()
            .copied()
            .find(|m| {
                m.from() == from
                    && !m.is_on_one_square()
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
