//! FEN, X-FEN and Shredder-FEN reading and writing.
//!
//! Castling rights may be written `KQkq` (the outermost rook on that side), X-FEN file letters
//! (`Hh`, or `Bb` for an inner rook) or Shredder-FEN letters (`HAha`). Written FENs use
//! `KQkq` in standard castling and X-FEN in Chess960; the en-passant square is written only when
//! an en-passant capture is legal. The setup position of the Balanced start, which no FEN can
//! describe, is written and read as the keyword `balanced` ([`crate::BALANCED_FEN`]).
//! A position of the bomb variant has a seventh field, its bombs (`bombs:d1,g8`: see
//! [`crate::bomb`]), which that variant requires and every other rejects.

use crate::bitboard::Bitboard;
use crate::board::Board;
use crate::bomb::{BombFieldError, parse_bombs_field, split_bombs_field};
use crate::color::Color;
use crate::position::{Position, PositionError};
use crate::role::Piece;
use crate::setup::{CastlingMode, Setup};
use crate::square::{File, Rank, Square};
use crate::start::{BALANCED_FEN, Start};
use crate::variant::Variant;
use std::fmt;

/// The FEN field that could not be parsed, with what was found.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum ParseFenError {
    /// No text at all.
    Empty,
    /// Piece placement (field 1).
    Board(String),
    /// Side to move (field 2).
    Turn(String),
    /// Castling rights (field 3).
    Castling(String),
    /// En-passant square (field 4).
    EnPassant(String),
    /// Half-move clock (field 5).
    HalfmoveClock(String),
    /// Full-move number (field 6).
    FullmoveNumber(String),
    /// More than six fields.
    TooManyFields(String),
}

impl fmt::Display for ParseFenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseFenError::Empty => write!(f, "invalid fen: empty"),
            ParseFenError::Board(s) => write!(f, "invalid fen: bad piece placement '{s}'"),
            ParseFenError::Turn(s) => {
                write!(f, "invalid fen: bad side to move '{s}' (expected w or b)")
            }
            ParseFenError::Castling(s) => write!(f, "invalid fen: bad castling rights '{s}'"),
            ParseFenError::EnPassant(s) => write!(f, "invalid fen: bad en-passant square '{s}'"),
            ParseFenError::HalfmoveClock(s) => write!(f, "invalid fen: bad half-move clock '{s}'"),
            ParseFenError::FullmoveNumber(s) => {
                write!(f, "invalid fen: bad full-move number '{s}'")
            }
            ParseFenError::TooManyFields(s) => {
                write!(f, "invalid fen: unexpected extra field '{s}'")
            }
        }
    }
}

impl std::error::Error for ParseFenError {}

/// A FEN that does not parse, or parses to an illegal position.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum FenError {
    /// Syntax error.
    Parse(ParseFenError),
    /// Parsed, but illegal under the variant.
    Position(PositionError),
    /// The bomb variant's bombs field: missing, malformed, not fitting the position, or
    /// given for another variant.
    Bombs(BombFieldError),
}

impl fmt::Display for FenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FenError::Parse(e) => e.fmt(f),
            FenError::Position(e) => e.fmt(f),
            FenError::Bombs(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for FenError {}

impl From<ParseFenError> for FenError {
    fn from(e: ParseFenError) -> FenError {
        FenError::Parse(e)
    }
}

impl From<BombFieldError> for FenError {
    fn from(e: BombFieldError) -> FenError {
        FenError::Bombs(e)
    }
}

impl From<PositionError> for FenError {
    fn from(e: PositionError) -> FenError {
        FenError::Position(e)
    }
}

fn parse_board(text: &str) -> Option<Board> {
    let mut board = Board::empty();
    let ranks: Vec<&str> = text.split('/').collect();
    if ranks.len() != 8 {
        return None;
    }
    for (i, rank_text) in ranks.iter().enumerate() {
        let rank = Rank::new(7 - i as u8)?;
        let mut file = 0u8;
        let mut last_was_digit = false;
        for ch in rank_text.chars() {
            if let Some(d) = ch.to_digit(10) {
                if !(1..=8).contains(&d) || last_was_digit {
                    return None;
                }
                file += d as u8;
                last_was_digit = true;
            } else {
                let piece = Piece::from_char(ch)?;
                let sq = Square::from_coords(File::new(file)?, rank);
                board.set_piece_at(sq, piece);
                file += 1;
                last_was_digit = false;
            }
            if file > 8 {
                return None;
            }
        }
        if file != 8 {
            return None;
        }
    }
    Some(board)
}

fn parse_castling(text: &str, board: &Board) -> Option<Bitboard> {
    let mut rights = Bitboard::EMPTY;
    if text == "-" {
        return Some(rights);
    }
    if text.is_empty() || text.len() > 16 {
        return None;
    }
    // A Setup only to find outermost rooks.
    let probe = Setup { board: *board, castling_rights: Bitboard::EMPTY, ..Setup::standard() };
    for ch in text.chars() {
        let color = if ch.is_ascii_uppercase() { Color::White } else { Color::Black };
        let rank = Rank::new(color.back_rank())?;
        let sq = match ch.to_ascii_lowercase() {
            'k' => probe
                .outermost_rook(color, true)
                .unwrap_or(Square::from_coords(File::new(7)?, rank)),
            'q' => probe
                .outermost_rook(color, false)
                .unwrap_or(Square::from_coords(File::new(0)?, rank)),
            c => Square::from_coords(File::from_char(c)?, rank),
        };
        if rights.contains(sq) {
            return None;
        }
        rights = rights.with(sq);
    }
    Some(rights)
}

impl Setup {
    /// Parses a FEN (X-FEN and Shredder-FEN castling accepted). The clocks may be omitted.
    pub fn from_fen(fen: &str) -> Result<Setup, ParseFenError> {
        let mut fields = fen.split_ascii_whitespace();
        let board_text = fields.next().ok_or(ParseFenError::Empty)?;
        let board =
            parse_board(board_text).ok_or_else(|| ParseFenError::Board(board_text.into()))?;
        let turn = match fields.next() {
            None => Color::White,
            Some(t) => {
                let mut chars = t.chars();
                match (chars.next().and_then(Color::from_char), chars.next()) {
                    (Some(c), None) => c,
                    _ => return Err(ParseFenError::Turn(t.into())),
                }
            }
        };
        let castling_rights = match fields.next() {
            None => Bitboard::EMPTY,
            Some(c) => {
                parse_castling(c, &board).ok_or_else(|| ParseFenError::Castling(c.into()))?
            }
        };
        let ep_square = match fields.next() {
            None | Some("-") => None,
            Some(e) => Some(e.parse::<Square>().map_err(|_| ParseFenError::EnPassant(e.into()))?),
        };
        let halfmoves = match fields.next() {
            None => 0,
            Some(h) => h.parse::<u32>().map_err(|_| ParseFenError::HalfmoveClock(h.into()))?,
        };
        let fullmoves = match fields.next() {
            None => 1,
            Some(n) => {
                n.parse::<u32>().map_err(|_| ParseFenError::FullmoveNumber(n.into()))?.max(1)
            }
        };
        if let Some(extra) = fields.next() {
            return Err(ParseFenError::TooManyFields(extra.into()));
        }
        Ok(Setup { board, turn, castling_rights, ep_square, halfmoves, fullmoves })
    }

    /// Writes the placement field.
    pub fn board_fen(&self) -> String {
        let mut out = String::with_capacity(72);
        for rank in (0..8u8).rev() {
            let mut empty = 0;
            for file in 0..8u8 {
                let sq = Square::new(rank * 8 + file).unwrap_or(Square::A1);
                match self.board.piece_at(sq) {
                    Some(piece) => {
                        if empty > 0 {
                            out.push(char::from(b'0' + empty));
                            empty = 0;
                        }
                        out.push(piece.char());
                    }
                    None => empty += 1,
                }
            }
            if empty > 0 {
                out.push(char::from(b'0' + empty));
            }
            if rank > 0 {
                out.push('/');
            }
        }
        out
    }

    fn castling_fen(&self, mode: CastlingMode, shredder: bool) -> String {
        let mut out = String::new();
        for color in Color::ALL {
            for king_side in [true, false] {
                let Some(rook) = self.castling_rook(color, king_side) else { continue };
                let ch = if !shredder
                    && (mode == CastlingMode::Standard
                        || self.outermost_rook(color, king_side) == Some(rook))
                {
                    if king_side { 'k' } else { 'q' }
                } else {
                    rook.file().char()
                };
                out.push(if color == Color::White { ch.to_ascii_uppercase() } else { ch });
            }
        }
        // Rights that name no rook beside a king (cannot happen in a Position) are dropped.
        if out.is_empty() { "-".to_string() } else { out }
    }

    fn write_fen(&self, mode: CastlingMode, shredder: bool) -> String {
        format!(
            "{} {} {} {} {} {}",
            self.board_fen(),
            self.turn.char(),
            self.castling_fen(mode, shredder),
            self.ep_square.map_or_else(|| "-".to_string(), |sq| sq.to_string()),
            self.halfmoves,
            self.fullmoves
        )
    }
}

impl Position {
    /// Parses a FEN/X-FEN/Shredder-FEN for `variant`. Castling rights that name rooks other
    /// than the corner rooks of an e-file king switch to Chess960 castling. `balanced` is the
    /// setup position of the Balanced start.
    pub fn from_fen(fen: &str, variant: Variant) -> Result<Position, FenError> {
        Position::read_fen(fen, variant, None)
    }

    /// [`Position::from_fen`] and [`Position::from_fen_with_mode`] (`None`: detect the mode).
    fn read_fen(
        fen: &str,
        variant: Variant,
        mode: Option<CastlingMode>,
    ) -> Result<Position, FenError> {
        let bombs = variant.rules().hidden_bombs;
        if is_balanced_keyword(fen) {
            if bombs {
                return Err(BombFieldError::BalancedStart.into());
            }
            let pos = Position::start(variant, Start::Balanced);
            return Ok(match mode {
                Some(mode) => pos.with_castling_mode(mode)?,
                None => pos,
            });
        }
        let (head, field) = split_bombs_field(fen);
        let slots = match (field, bombs) {
            (Some(field), true) => Some(parse_bombs_field(field)?),
            (None, false) => None,
            (None, true) => return Err(BombFieldError::Missing.into()),
            (Some(_), false) => return Err(BombFieldError::NotBombVariant(variant).into()),
        };
        let setup = Setup::from_fen(head)?;
        let mode = mode.unwrap_or_else(|| CastlingMode::detect(&setup));
        let pos = Position::from_setup(setup, variant, mode)?;
        Ok(match slots {
            Some(slots) => pos.with_bombs(slots)?,
            None => pos,
        })
    }

    /// Parses a FEN with an explicit castling mode.
    pub fn from_fen_with_mode(
        fen: &str,
        variant: Variant,
        mode: CastlingMode,
    ) -> Result<Position, FenError> {
        Position::read_fen(fen, variant, Some(mode))
    }

    /// The FEN (X-FEN in Chess960 mode); `balanced` in the Balanced start's setup phase; with
    /// the bombs field in the bomb variant.
    pub fn fen(&self) -> String {
        self.write_fen(false)
    }

    /// The Shredder-FEN (castling rights as rook files); `balanced` in the setup phase.
    pub fn shredder_fen(&self) -> String {
        self.write_fen(true)
    }

    fn write_fen(&self, shredder: bool) -> String {
        let bombs = self.variant.rules().hidden_bombs;
        if self.is_setup_phase() && !bombs {
            return BALANCED_FEN.to_string();
        }
        let fen = self.to_setup().write_fen(self.castling_mode, shredder);
        if bombs { format!("{fen} {}", self.bombs_field()) } else { fen }
    }

    /// The FEN without the two clocks (EPD style), as used to compare positions (the bomb
    /// variant's bombs field kept).
    pub fn epd(&self) -> String {
        let fen = self.fen();
        let (head, bombs) = split_bombs_field(&fen);
        let head = head.rsplitn(3, ' ').nth(2).unwrap_or(head);
        match bombs {
            Some(bombs) => format!("{head} {bombs}"),
            None => head.to_string(),
        }
    }
}

/// True if `fen` is the keyword of the Balanced start's setup position (any case, surrounding
/// space allowed).
fn is_balanced_keyword(fen: &str) -> bool {
    fen.trim().eq_ignore_ascii_case(BALANCED_FEN)
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.fen())
    }
}

/// The standard starting FEN.
pub const STARTING_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_round_trip() {
        let pos = Position::from_fen(STARTING_FEN, Variant::Atomic).unwrap();
        assert_eq!(pos, Position::new(Variant::Atomic));
        assert_eq!(pos.fen(), STARTING_FEN);
    }

    #[test]
    fn shredder_and_xfen() {
        let pos =
            Position::from_fen("rk2r3/8/8/8/8/8/8/RK2R3 w EAea - 0 1", Variant::Atomic).unwrap();
        assert_eq!(pos.castling_mode(), CastlingMode::Chess960);
        assert_eq!(pos.fen(), "rk2r3/8/8/8/8/8/8/RK2R3 w KQkq - 0 1");
        assert_eq!(pos.shredder_fen(), "rk2r3/8/8/8/8/8/8/RK2R3 w EAea - 0 1");
        // An inner rook needs its file letter in X-FEN.
        let pos = Position::from_fen("4k3/8/8/8/8/8/8/1R1K2RR w G - 0 1", Variant::Atomic).unwrap();
        assert_eq!(pos.fen(), "4k3/8/8/8/8/8/8/1R1K2RR w G - 0 1");
    }

    #[test]
    fn errors_name_the_field() {
        let e = Position::from_fen(
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN w KQkq - 0 1",
            Variant::Atomic,
        );
        assert!(matches!(e, Err(FenError::Parse(ParseFenError::Board(_)))));
        let e = Position::from_fen(&STARTING_FEN.replace(" w ", " x "), Variant::Atomic);
        assert!(matches!(e, Err(FenError::Parse(ParseFenError::Turn(_)))));
        let e = Position::from_fen("8/8/8/8/8/8/8/8 w - - 0 1", Variant::Atomic).unwrap_err();
        assert!(e.to_string().contains("empty"), "{e}");
        let e = Position::from_fen("4k3/8/8/8/8/8/8/4K3 w KQ - 0 1", Variant::Atomic).unwrap_err();
        assert!(e.to_string().contains("castling"), "{e}");
    }
}
