//! [`Setup`]: an unchecked position as read from a FEN, before validation turns it into a
//! [`crate::Position`].

use crate::bitboard::Bitboard;
use crate::board::Board;
use crate::color::Color;
use crate::role::Role;
use crate::square::Square;

/// How castling is played and written.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum CastlingMode {
    /// Standard chess: king on e1/e8, rooks on a/h; UCI writes castling as `e1g1`.
    #[default]
    Standard,
    /// Chess960: any king and rook files; UCI writes castling as king-takes-rook (`e1h1`).
    Chess960,
}

impl CastlingMode {
    /// Standard if every castling right is a corner rook with its king on the e-file,
    /// Chess960 otherwise (e.g. X-FEN/Shredder-FEN rights naming other rooks).
    pub fn detect(setup: &Setup) -> CastlingMode {
        let standard = setup.castling_rights.into_iter().all(|rook| {
            let color = if rook.rank().index() == 0 { Color::White } else { Color::Black };
            let king_ok = setup.board.king_of(color) == Some(Square::E1.relative_to(color))
                && (setup.board.kings() & setup.board.by_color(color)).count() == 1;
            king_ok && matches!(rook.file().index(), 0 | 7) && matches!(rook.rank().index(), 0 | 7)
        });
        if standard { CastlingMode::Standard } else { CastlingMode::Chess960 }
    }
}

/// A position that has not been validated: any placement, any rights.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Setup {
    /// The pieces.
    pub board: Board,
    /// Side to move.
    pub turn: Color,
    /// Squares of the rooks that may still castle.
    pub castling_rights: Bitboard,
    /// The square a pawn skipped over on the last move, if any.
    pub ep_square: Option<Square>,
    /// Half-moves since the last capture or pawn move.
    pub halfmoves: u32,
    /// Move number, starting at 1, incremented after Black's move.
    pub fullmoves: u32,
}

impl Default for Setup {
    fn default() -> Setup {
        Setup::standard()
    }
}

impl Setup {
    /// The standard starting position.
    pub fn standard() -> Setup {
        Setup {
            board: Board::standard(),
            turn: Color::White,
            castling_rights: Bitboard::from(Square::A1) | Square::H1 | Square::A8 | Square::H8,
            ep_square: None,
            halfmoves: 0,
            fullmoves: 1,
        }
    }

    /// The castling rook of `color` on the given side of its king, if it has the right.
    /// `king_side` selects the rook on the h-file side.
    pub fn castling_rook(&self, color: Color, king_side: bool) -> Option<Square> {
        let king = self.board.king_of(color)?;
        let rights = self.castling_rights & Bitboard::rank(color.back_rank());
        rights.into_iter().find(|rook| (rook.file() > king.file()) == king_side)
    }

    /// The outermost rook of `color` on its back rank on the given side of its king: the rook
    /// that `K`/`Q` name in X-FEN.
    pub fn outermost_rook(&self, color: Color, king_side: bool) -> Option<Square> {
        let king = self.board.king_of(color)?;
        if king.rank().index() != color.back_rank() {
            return None;
        }
        let rooks = self.board.by_piece(Role::Rook.of(color)) & Bitboard::rank(color.back_rank());
        let side = rooks.into_iter().filter(|rook| (rook.file() > king.file()) == king_side);
        if king_side { side.last() } else { side.into_iter().next() }
    }
}
