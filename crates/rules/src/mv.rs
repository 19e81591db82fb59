//! Moves, and a fixed-capacity list of them.

use crate::bitboard::Bitboard;
use crate::role::Role;
use crate::square::Square;
use std::fmt;
use std::ops::Deref;

/// What kind of move a [`Move`] is. Captures are not a kind: whether a move captures depends on
/// the position it is played in.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
#[repr(u8)]
pub enum MoveKind {
    /// Any move without a special rule (captures included).
    Normal = 0,
    /// A pawn's two-square advance.
    DoublePush = 1,
    /// An en-passant capture.
    EnPassant = 2,
    /// Castling; `to` is the castling rook's square.
    Castle = 3,
    /// Promotion to a knight.
    PromoteKnight = 4,
    /// Promotion to a bishop.
    PromoteBishop = 5,
    /// Promotion to a rook.
    PromoteRook = 6,
    /// Promotion to a queen.
    PromoteQueen = 7,
}

/// A move in a position. Obtain moves from [`crate::Position::legal_moves`] or by parsing
/// UCI/SAN against a position; castling is encoded king square -> rook square.
///
/// The removal of a pawn in the setup phase of the Balanced start ([`crate::start`]) is a
/// move too: [`Move::removal`] packs it as `from == to` (the pawn's square) with kind
/// `Normal`, which no move on the board can be, so the packing (and every file that stores
/// it) is unchanged.
///
/// The two moves of the bomb variant ([`crate::bomb`]) are packed the same way, `from == to`
/// with another kind: [`Move::bomb_choice`] (kind bits 1) and [`Move::detonation`] (kind
/// bits 2). Their [`Move::kind`] reads `DoublePush` and `EnPassant` respectively, which means
/// nothing for them: ask [`Move::is_bomb_choice`] and [`Move::is_detonation`] (or
/// [`Move::is_on_one_square`] for all three moves from a square to itself) first.
///
/// Stored packed as [`Move::to_u16`] gives it (from, to, kind in 16 bits): move lists and the
/// search tree write each move with one store.
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct Move(u16);

impl Move {
    /// Builds a move (no legality implied).
    #[inline]
    pub const fn new(from: Square, to: Square, kind: MoveKind) -> Move {
        Move((from.index() as u16) | ((to.index() as u16) << 6) | ((kind as u16) << 12))
    }

    /// White's removal of the pawn on `square` in the setup phase of the Balanced start
    /// (no legality implied).
    #[inline]
    pub const fn removal(square: Square) -> Move {
        Move::new(square, square, MoveKind::Normal)
    }

    /// The bits of [`Move::removal`] of the square with index `square` (for
    /// [`MoveWriter::push_encoded`]).
    #[inline]
    pub(crate) const fn removal_bits(square: u16) -> u16 {
        square * 65
    }

    /// True for a removal ([`Move::removal`]).
    #[inline]
    pub const fn is_removal(self) -> bool {
        self.0 == (self.0 & 63) * 65
    }

    /// The bomb variant's setup move: the side to move chooses its piece on `square` as its
    /// bomb (no legality implied).
    #[inline]
    pub const fn bomb_choice(square: Square) -> Move {
        Move::new(square, square, MoveKind::DoublePush)
    }

    /// The bits of [`Move::bomb_choice`] of the square with index `square`.
    #[inline]
    pub(crate) const fn bomb_choice_bits(square: u16) -> u16 {
        (square * 65) | ((MoveKind::DoublePush as u16) << 12)
    }

    /// True for a bomb choice ([`Move::bomb_choice`]).
    #[inline]
    pub const fn is_bomb_choice(self) -> bool {
        self.0 == Move::bomb_choice_bits(self.0 & 63)
    }

    /// The bomb variant's detonation of the mover's bomb standing on `square` (no legality
    /// implied).
    #[inline]
    pub const fn detonation(square: Square) -> Move {
        Move::new(square, square, MoveKind::EnPassant)
    }

    /// True for a detonation ([`Move::detonation`]).
    #[inline]
    pub const fn is_detonation(self) -> bool {
        self.0 == ((self.0 & 63) * 65) | ((MoveKind::EnPassant as u16) << 12)
    }

    /// True for the moves from a square to itself: removals, bomb choices, detonations (and
    /// bit patterns no legal move has).
    #[inline]
    pub const fn is_on_one_square(self) -> bool {
        (self.0 & 63) == (self.0 >> 6) & 63
    }

    /// The bits of a move from `from` of `kind` without its destination (for
    /// [`MoveWriter::push_targets`]).
    #[inline]
    pub(crate) const fn base_bits(from: Square, kind: MoveKind) -> u16 {
        (from.index() as u16) | ((kind as u16) << 12)
    }

    /// The origin square (the king's for castling).
    #[inline]
    pub const fn from(self) -> Square {
        Square::from_index_masked(self.0 as u32)
    }

    /// The destination square (the rook's square for castling).
    #[inline]
    pub const fn to(self) -> Square {
        Square::from_index_masked(self.0 as u32 >> 6)
    }

    /// The kind of move.
    #[inline]
    pub const fn kind(self) -> MoveKind {
        match (self.0 >> 12) & 7 {
            0 => MoveKind::Normal,
            1 => MoveKind::DoublePush,
            2 => MoveKind::EnPassant,
            3 => MoveKind::Castle,
            4 => MoveKind::PromoteKnight,
            5 => MoveKind::PromoteBishop,
            6 => MoveKind::PromoteRook,
            _ => MoveKind::PromoteQueen,
        }
    }

    /// The promotion role, if any.
    #[inline]
    pub const fn promotion(self) -> Option<Role> {
        match self.kind() {
            MoveKind::PromoteKnight => Some(Role::Knight),
            MoveKind::PromoteBishop => Some(Role::Bishop),
            MoveKind::PromoteRook => Some(Role::Rook),
            MoveKind::PromoteQueen => Some(Role::Queen),
            _ => None,
        }
    }

    /// The move kind that promotes to `role` (`Normal` for non-promotable roles).
    pub const fn promotion_kind(role: Role) -> MoveKind {
        match role {
            Role::Knight => MoveKind::PromoteKnight,
            Role::Bishop => MoveKind::PromoteBishop,
            Role::Rook => MoveKind::PromoteRook,
            Role::Queen => MoveKind::PromoteQueen,
            _ => MoveKind::Normal,
        }
    }

    /// True for castling.
    #[inline]
    pub const fn is_castle(self) -> bool {
        matches!(self.kind(), MoveKind::Castle)
    }

    /// True for en passant.
    #[inline]
    pub const fn is_en_passant(self) -> bool {
        matches!(self.kind(), MoveKind::EnPassant)
    }

    /// Packs the move into 16 bits: from (6), to (6), kind (3). Stable: used by data files.
    #[inline]
    pub const fn to_u16(self) -> u16 {
        self.0
    }

    /// Unpacks [`Move::to_u16`]; `None` for values no move packs to.
    pub const fn from_u16(bits: u16) -> Option<Move> {
        if bits >> 12 > 7 { None } else { Some(Move(bits)) }
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_removal() {
            return write!(f, "@{}", self.from());
        }
        if self.is_bomb_choice() {
            return write!(f, "bomb@{}", self.from());
        }
        if self.is_detonation() {
            return write!(f, "{}*", self.from());
        }
        write!(f, "{}{}", self.from(), self.to())?;
        match self.kind() {
            MoveKind::Castle => write!(f, "(castle)"),
            MoveKind::EnPassant => write!(f, "(ep)"),
            _ => match self.promotion() {
                Some(role) => write!(f, "{}", role.char()),
                None => Ok(()),
            },
        }
    }
}

/// Upper bound on the moves of a valid position: 9 queens, 2 rooks, 2 bishops, 2 knights and a
/// king of one side reach at most 321 squares, plus two castling moves.
pub const MAX_MOVES: usize = 384;

/// A list of moves without heap allocation.
#[derive(Clone)]
pub struct MoveList {
    moves: [Move; MAX_MOVES],
    len: usize,
}

impl MoveList {
    /// An empty list.
    #[inline]
    pub fn new() -> MoveList {
        MoveList { moves: [Move::new(Square::A1, Square::A1, MoveKind::Normal); MAX_MOVES], len: 0 }
    }

    /// Appends a move. Valid positions never exceed the capacity; an overflow is dropped
    /// (and caught by debug assertions) rather than panicking.
    #[inline]
    pub fn push(&mut self, m: Move) {
        let mut writer = MoveWriter::new(self);
        writer.push(m);
        writer.finish();
    }

    /// Keeps the moves for which `keep` returns true.
    pub fn retain(&mut self, mut keep: impl FnMut(&Move) -> bool) {
        let mut j = 0;
        for i in 0..self.len {
            let m = self.moves[i];
            if keep(&m) {
                self.moves[j] = m;
                j += 1;
            }
        }
        self.len = j;
    }

    /// Removes all moves.
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }
}

/// A [`MoveList`] being filled by move generation. The length is kept in the writer, a
/// local variable, and stored once by [`MoveWriter::finish`]: pushing through the list
/// itself loaded and stored its length in memory for every move, a chain of dependent
/// memory operations.
pub(crate) struct MoveWriter<'a> {
    list: &'a mut MoveList,
    len: usize,
}

impl<'a> MoveWriter<'a> {
    /// A writer appending to `list`.
    #[inline(always)]
    pub fn new(list: &'a mut MoveList) -> MoveWriter<'a> {
        let len = list.len;
        MoveWriter { list, len }
    }

    /// Appends a move (see [`MoveList::push`]).
    #[inline(always)]
    pub fn push(&mut self, m: Move) {
        self.push_if(m, true);
    }

    /// Appends `m` if `keep`, without a branch on `keep` (the slot is written either way).
    #[inline(always)]
    pub fn push_if(&mut self, m: Move, keep: bool) {
        debug_assert!(self.len < MAX_MOVES);
        if let Some(slot) = self.list.moves.get_mut(self.len) {
            *slot = m;
            self.len += usize::from(keep);
        }
    }

    /// Appends a move to every square of `targets` (lowest first): `base` with the square in
    /// the `to` bits (see [`MoveWriter::push_encoded`]).
    #[inline(always)]
    pub fn push_targets(&mut self, base: u16, targets: Bitboard) {
        self.push_encoded(targets, |to| base | (to << 6));
    }

    /// Appends the move `encode` makes of each square of `targets` (lowest first; the square
    /// comes as its index). Four moves are written per step whatever the set holds (the slots
    /// past its end are scratch: the length only grows by the set's size), so a set of up to
    /// four squares costs one predictable step and an empty set costs no branch. A loop per
    /// square mispredicted its exit once per set.
    #[inline(always)]
    pub fn push_encoded(&mut self, targets: Bitboard, encode: impl Fn(u16) -> u16) {
        const STEP: usize = 4;
        let mut bits = targets.0;
        let mut at = self.len;
        loop {
            let Some(slots) = self.list.moves.get_mut(at..at + STEP) else {
                // Near the end of the list (never for a real position): one at a time, after
                // the full steps written so far.
                self.len = at;
                for sq in Bitboard(bits) {
                    self.push(Move(encode(sq.index() as u16)));
                }
                return;
            };
            for slot in slots {
                *slot = Move(encode((bits.trailing_zeros() & 63) as u16));
                bits &= bits.wrapping_sub(1);
            }
            at += STEP;
            if bits == 0 {
                break;
            }
        }
        self.len += targets.count() as usize;
    }

    /// Stores the length and hands the list back.
    #[inline(always)]
    pub fn finish(self) -> &'a mut MoveList {
        self.list.len = self.len;
        self.list
    }
}

impl Default for MoveList {
    fn default() -> MoveList {
        MoveList::new()
    }
}

impl Deref for MoveList {
    type Target = [Move];
    #[inline]
    fn deref(&self) -> &[Move] {
        &self.moves[..self.len]
    }
}

impl fmt::Debug for MoveList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for &'a MoveList {
    type Item = &'a Move;
    type IntoIter = std::slice::Iter<'a, Move>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The moves `push_targets` must write: one per square, lowest first.
    fn expected(base: u16, targets: Bitboard) -> Vec<Move> {
        targets.into_iter().map(|sq| Move(base | ((sq.index() as u16) << 6))).collect()
    }

    #[test]
    fn removals_are_exactly_the_moves_from_a_square_to_itself_of_kind_normal() {
        for sq in (0..64).filter_map(Square::new) {
            let removal = Move::removal(sq);
            assert!(removal.is_removal());
            assert_eq!((removal.from(), removal.to(), removal.kind()), (sq, sq, MoveKind::Normal));
            assert_eq!(Move::from_u16(removal.to_u16()), Some(removal));
            assert_eq!(format!("{removal:?}"), format!("@{sq}"));
            for kind in [MoveKind::DoublePush, MoveKind::Castle, MoveKind::PromoteQueen] {
                assert!(!Move::new(sq, sq, kind).is_removal());
            }
            for other in (0..64).filter_map(Square::new).filter(|&o| o != sq) {
                assert!(!Move::new(sq, other, MoveKind::Normal).is_removal());
            }
        }
    }

    #[test]
    fn bomb_moves_are_their_own_kinds_of_moves_from_a_square_to_itself() {
        for sq in (0..64).filter_map(Square::new) {
            let (choice, detonation) = (Move::bomb_choice(sq), Move::detonation(sq));
            assert!(choice.is_bomb_choice() && !choice.is_detonation() && !choice.is_removal());
            assert!(detonation.is_detonation() && !detonation.is_bomb_choice());
            assert!(!detonation.is_removal() && !Move::removal(sq).is_bomb_choice());
            assert!(choice.is_on_one_square() && detonation.is_on_one_square());
            assert_eq!(Move::from_u16(choice.to_u16()), Some(choice));
            assert_eq!(Move::from_u16(detonation.to_u16()), Some(detonation));
            assert_eq!(format!("{detonation:?}"), format!("{sq}*"));
            for other in (0..64).filter_map(Square::new).filter(|&o| o != sq) {
                for kind in [MoveKind::DoublePush, MoveKind::EnPassant] {
                    let m = Move::new(sq, other, kind);
                    assert!(!m.is_bomb_choice() && !m.is_detonation() && !m.is_on_one_square());
                }
            }
        }
    }

    #[test]
    fn bulk_pushes_write_one_move_per_target_in_order_and_nothing_else() {
        let base = Move::base_bits(Square::D4, MoveKind::Normal);
        let sets = [0u64, 1, 0x8000_0000_0000_0000, 0b1011, 0b11111, 0xFF00_0000_00FF_0001, !0];
        for bits in sets {
            let mut list = MoveList::new();
            list.push(Move::new(Square::A1, Square::A2, MoveKind::Normal));
            let mut writer = MoveWriter::new(&mut list);
            writer.push_targets(base, Bitboard(bits));
            let list = writer.finish();
            assert_eq!(list.len(), 1 + bits.count_ones() as usize, "{bits:#x}");
            assert_eq!(list[1..], expected(base, Bitboard(bits))[..], "{bits:#x}");
        }
    }

    #[test]
    fn bulk_pushes_near_the_end_of_the_list_keep_every_move_that_fits() {
        // From MAX_MOVES - 6 on, a step of four fits once, then the last two go one at a time.
        let base = Move::base_bits(Square::H8, MoveKind::Normal);
        let targets = Bitboard(0x0000_0003_0000_0F00);
        let mut list = MoveList::new();
        let filler = Move::new(Square::A1, Square::A2, MoveKind::Normal);
        let mut writer = MoveWriter::new(&mut list);
        for _ in 0..MAX_MOVES - 6 {
            writer.push(filler);
        }
        writer.push_targets(base, targets);
        let list = writer.finish();
        assert_eq!(list.len(), MAX_MOVES);
        assert_eq!(list[MAX_MOVES - 6..], expected(base, targets)[..]);
    }
}
