//! Piece placement: one bitboard per role and per colour.

use crate::attacks;
use crate::bitboard::Bitboard;
use crate::color::Color;
use crate::role::{Piece, Role};
use crate::square::Square;

/// Where the pieces stand. Knows nothing about whose turn it is or about rules.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Board {
    by_role: [Bitboard; 6],
    by_color: [Bitboard; 2],
    occupied: Bitboard,
}

impl Default for Board {
    fn default() -> Board {
        Board::standard()
    }
}

impl Board {
    /// A board with no pieces.
    pub const fn empty() -> Board {
        Board {
            by_role: [Bitboard::EMPTY; 6],
            by_color: [Bitboard::EMPTY; 2],
            occupied: Bitboard::EMPTY,
        }
    }

    /// The standard starting placement.
    pub const fn standard() -> Board {
        Board {
            by_role: [
                Bitboard(0x00FF_0000_0000_FF00),
                Bitboard(0x4200_0000_0000_0042),
                Bitboard(0x2400_0000_0000_0024),
                Bitboard(0x8100_0000_0000_0081),
                Bitboard(0x0800_0000_0000_0008),
                Bitboard(0x1000_0000_0000_0010),
            ],
            by_color: [Bitboard(0xFFFF), Bitboard(0xFFFF_0000_0000_0000)],
            occupied: Bitboard(0xFFFF_0000_0000_FFFF),
        }
    }

    /// All occupied squares.
    #[inline]
    pub fn occupied(&self) -> Bitboard {
        self.occupied
    }

    /// Squares holding pieces of `color`.
    #[inline]
    pub fn by_color(&self, color: Color) -> Bitboard {
        self.by_color[color.index()]
    }

    /// Squares holding pieces of `role`, either colour.
    #[inline]
    pub fn by_role(&self, role: Role) -> Bitboard {
        self.by_role[role.index()]
    }

    /// Squares holding `piece`.
    #[inline]
    pub fn by_piece(&self, piece: Piece) -> Bitboard {
        self.by_role(piece.role) & self.by_color(piece.color)
    }

    /// Pawns of both colours.
    #[inline]
    pub fn pawns(&self) -> Bitboard {
        self.by_role[0]
    }
    /// Knights of both colours.
    #[inline]
    pub fn knights(&self) -> Bitboard {
        self.by_role[1]
    }
    /// Bishops of both colours.
    #[inline]
    pub fn bishops(&self) -> Bitboard {
        self.by_role[2]
    }
    /// Rooks of both colours.
    #[inline]
    pub fn rooks(&self) -> Bitboard {
        self.by_role[3]
    }
    /// Queens of both colours.
    #[inline]
    pub fn queens(&self) -> Bitboard {
        self.by_role[4]
    }
    /// Kings of both colours.
    #[inline]
    pub fn kings(&self) -> Bitboard {
        self.by_role[5]
    }
    /// Rooks and queens.
    #[inline]
    pub fn rooks_and_queens(&self) -> Bitboard {
        self.by_role[3] | self.by_role[4]
    }
    /// Bishops and queens.
    #[inline]
    pub fn bishops_and_queens(&self) -> Bitboard {
        self.by_role[2] | self.by_role[4]
    }

    /// The (first) king of `color`.
    #[inline]
    pub fn king_of(&self, color: Color) -> Option<Square> {
        (self.kings() & self.by_color(color)).first()
    }

    /// The colour of the piece on `sq`.
    #[inline]
    pub fn color_at(&self, sq: Square) -> Option<Color> {
        if self.by_color[0].contains(sq) {
            Some(Color::White)
        } else if self.by_color[1].contains(sq) {
            Some(Color::Black)
        } else {
            None
        }
    }

    /// The role of the piece on `sq`.
    #[inline]
    pub fn role_at(&self, sq: Square) -> Option<Role> {
        // The role's index assembled from the six bits without a branch: a search to the
        // first set bit mispredicted whenever the piece moved changed kind.
        let bit = |role: Role| (self.by_role[role.index()].0 >> sq.index()) as usize & 1;
        let index = bit(Role::Knight)
            | (bit(Role::Bishop) << 1)
            | (bit(Role::Rook) * 3)
            | (bit(Role::Queen) << 2)
            | (bit(Role::King) * 5);
        let found = bit(Role::Pawn) | (index != 0) as usize;
        if found == 0 {
            return None;
        }
        Role::ALL.get(index).copied()
    }

    /// The piece on `sq`.
    #[inline]
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        let role = self.role_at(sq)?;
        // A select, not a branch (the colour of the piece moved alternates along a walk).
        let color = if self.by_color[1].contains(sq) { Color::Black } else { Color::White };
        Some(Piece { color, role })
    }

    /// Removes whatever stands on `sq` and returns it.
    #[inline]
    pub fn remove_piece_at(&mut self, sq: Square) -> Option<Piece> {
        let piece = self.piece_at(sq)?;
        self.toggle(piece, sq);
        Some(piece)
    }

    /// Puts `piece` on `sq`, replacing whatever stood there.
    #[inline]
    pub fn set_piece_at(&mut self, sq: Square, piece: Piece) {
        self.remove_piece_at(sq);
        self.toggle(piece, sq);
    }

    /// Flips the presence of `piece` on `sq` (caller keeps the board consistent).
    #[inline]
    pub(crate) fn toggle(&mut self, piece: Piece, sq: Square) {
        let bb = Bitboard::from_square(sq);
        self.by_role[piece.role.index()] ^= bb;
        self.by_color[piece.color.index()] ^= bb;
        self.occupied ^= bb;
    }

    /// Pieces of `attacker` other than its king that attack `sq`, given `occupied`.
    /// (In atomic chess kings never give check: a king cannot capture.)
    #[inline]
    pub fn attackers_without_king(
        &self,
        sq: Square,
        attacker: Color,
        occupied: Bitboard,
    ) -> Bitboard {
        self.by_color(attacker)
            & ((attacks::rook_attacks(sq, occupied) & self.rooks_and_queens())
                | (attacks::bishop_attacks(sq, occupied) & self.bishops_and_queens())
                | (attacks::knight_attacks(sq) & self.knights())
                | (attacks::pawn_attacks(!attacker, sq) & self.pawns()))
    }

    /// Pieces of `attacker` that attack `sq`, given `occupied`, its king included (standard
    /// chess, where kings attack: the bomb variant).
    #[inline]
    pub fn attackers(&self, sq: Square, attacker: Color, occupied: Bitboard) -> Bitboard {
        self.attackers_without_king(sq, attacker, occupied)
            | (attacks::king_attacks(sq) & self.kings() & self.by_color(attacker))
    }

    /// Iterates over `(square, piece)` pairs, a1 first.
    pub fn pieces(&self) -> impl Iterator<Item = (Square, Piece)> + '_ {
        self.occupied.into_iter().filter_map(move |sq| self.piece_at(sq).map(|p| (sq, p)))
    }

    /// The board mirrored top to bottom with the colours swapped: the same position seen by
    /// the other side.
    pub fn flip_colors(&self) -> Board {
        let mut by_role = self.by_role;
        for bb in &mut by_role {
            *bb = bb.flip_vertical();
        }
        Board {
            by_role,
            by_color: [self.by_color[1].flip_vertical(), self.by_color[0].flip_vertical()],
            occupied: self.occupied.flip_vertical(),
        }
    }
}
