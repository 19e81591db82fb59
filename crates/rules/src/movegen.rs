//! Legal move generation for every variant, driven by [`crate::Rules`].
//!
//! Pseudo-legal moves are generated per piece type and tested by [`Position::is_safe`], which in
//! royal-king variants computes only the occupancy after the move (and the blast) and asks
//! whether the mover's king would be attacked; no position is copied. Quiet moves of a piece
//! that pins nothing, while not in check, skip the test (they cannot expose the king).
//!
//! The order of the moves (deterministic; search breaks ties between equal priors by it):
//! knights, then bishops and queens, then rooks and queens, each piece's quiet moves before its
//! captures; then, one pawn at a time (captures first), the pawns that can capture or promote,
//! and those whose pushes need the test (all of them while in check); then the single pushes
//! of the other pawns, then their double pushes; en passant; the king; castling. Within each
//! group, squares go from a1 to h8. In the setup phase of the Balanced start the moves are
//! the removals of the pawns, a1 to h8; in that of the bomb variant the bomb choices of the
//! mover's non-king pieces, a1 to h8. In the bomb variant the detonation, when legal, comes
//! after castling (last).
//!
//! Where captures do not explode (the bomb variant: standard chess) a capture is tested like
//! a quiet move that also removes the captured piece, and kings attack (see
//! `Position::is_attacked_after`).

use crate::attacks;
use crate::bitboard::Bitboard;
use crate::color::Color;
use crate::mv::{Move, MoveKind, MoveList, MoveWriter};
use crate::position::Position;
use crate::role::Role;
use crate::square::Square;
use crate::variant::Rules;

impl Position {
    /// Appends the legal moves to `moves`.
    pub(crate) fn generate(&self, moves: &mut MoveList) {
        if self.special {
            // One branch for everything but the board moves of the perfect-information
            // variants (a test of the variant after castling cost atomic perft 5%).
            self.generate_special(moves);
            return;
        }
        self.generate_board_moves(moves);
    }

    /// The moves of a setup phase, or of the bomb variant (its board moves, then the
    /// detonation).
    #[cold]
    #[inline(never)]
    fn generate_special(&self, moves: &mut MoveList) {
        if self.is_setup_phase() {
            if self.variant == crate::Variant::Bomb {
                self.generate_bomb_choices(moves);
                return;
            }
            // The Balanced start's setup phase: one removal per pawn, a1 to h8.
            let mut writer = MoveWriter::new(moves);
            writer.push_encoded(self.board.pawns(), Move::removal_bits);
            writer.finish();
            return;
        }
        self.generate_board_moves(moves);
        if self.variant_outcome().is_none() {
            self.generate_detonation(moves);
        }
    }

    /// Appends the legal captures (en passant and capturing promotions included): the
    /// moves of [`Position::generate`] for which [`Position::is_capture`] holds, in the same
    /// order, without generating the others (setup phases and the bomb variant filter the
    /// whole list).
    pub(crate) fn generate_captures(&self, moves: &mut MoveList) {
        if self.special {
            self.generate_special(moves);
            moves.retain(|&m| self.is_capture(m));
            return;
        }
        if self.variant_outcome().is_some() {
            return;
        }
        let mut writer = MoveWriter::new(moves);
        self.generate_pieces::<true>(&mut writer);
        writer.finish();
    }

    /// Appends the moves on the board (all but setup moves and detonations).
    #[inline]
    fn generate_board_moves(&self, moves: &mut MoveList) {
        if self.variant_outcome().is_some() {
            return;
        }
        let mut writer = MoveWriter::new(moves);
        let king = self.generate_pieces::<false>(&mut writer);
        let moves = writer.finish();
        // Castling last (its own function: the writer stays local to the one above).
        if let Some(king) = king {
            self.generate_castling(king, moves);
        }
    }

    /// Appends the legal moves other than castling (only the captures if `CAPTURES`);
    /// returns the mover's king.
    #[inline(always)]
    fn generate_pieces<const CAPTURES: bool>(&self, moves: &mut MoveWriter<'_>) -> Option<Square> {
        let rules = self.variant.rules();
        let b = &self.board;
        let us = self.turn;
        let our = b.by_color(us);
        let their = b.by_color(!us);
        let occ = b.occupied();
        let targets = if CAPTURES { their } else { !our };

        let ctx = self.legality_context(&rules);
        // A quiet move of a piece that shields nothing, while not in check, cannot expose the
        // king (the shortcut `is_safe_in` starts with): such moves skip the test.
        let free_from = if !rules.royal_kings {
            Bitboard::FULL
        } else if ctx.in_check {
            Bitboard::EMPTY
        } else {
            !ctx.blockers
        };

        for from in b.knights() & our {
            self.piece_moves(moves, &ctx, free_from, from, attacks::knight_attacks(from) & targets);
        }
        for from in b.bishops_and_queens() & our {
            let to = attacks::bishop_attacks(from, occ) & targets;
            self.piece_moves(moves, &ctx, free_from, from, to);
        }
        for from in b.rooks_and_queens() & our {
            let to = attacks::rook_attacks(from, occ) & targets;
            self.piece_moves(moves, &ctx, free_from, from, to);
        }

        // Pawns.
        let pawns = b.pawns() & our;
        let (forward, start_rank, last_rank): (i32, u8, u8) = match us {
            Color::White => (1, 1, 7),
            Color::Black => (-1, 6, 0),
        };
        // Pawns that can capture or promote, and those that are not free, go one by one
        // (captures are tested, and so are the pushes of a pawn that is not free); the pushes
        // of the others are generated as sets: all single pushes, then all double pushes (a
        // loop per pawn mispredicted whether each was blocked, and its own end).
        let promoting = Bitboard::rank(last_rank ^ 1);
        let capturing = attacks::pawn_attacks_set(!us, their);
        let step = |sq: Square| Square::from_index_masked((sq.index() as i32 + 8 * forward) as u32);
        let one_by_one = if CAPTURES { capturing } else { capturing | promoting | !free_from };
        for from in pawns & one_by_one {
            for to in attacks::pawn_attacks(us, from) & their {
                self.pawn_moves(moves, &ctx, from, to, last_rank, false);
            }
            let free = free_from.contains(from);
            if CAPTURES || (free && !promoting.contains(from)) {
                // Its pushes are among the sets below.
                continue;
            }
            if let Some(to) = from.offset(0, forward)
                && !occ.contains(to)
            {
                self.pawn_moves(moves, &ctx, from, to, last_rank, free);
                let to2 = step(to);
                if from.rank().index() == start_rank && !occ.contains(to2) {
                    self.add(moves, &ctx, Move::new(from, to2, MoveKind::DoublePush), false);
                }
            }
        }
        let pushing = pawns & free_from & !promoting;
        let singles = pushing.shift_ranks(forward) & !occ;
        let doubles = (singles & Bitboard::rank((start_rank as i32 + forward) as u8))
            .shift_ranks(forward)
            & !occ;
        // The square behind a target, in u16 arithmetic that wraps (a push back by -8 or
        // -16 is an addition): never a multiplication in u16, which overflows (and panics in
        // builds with overflow checks) for Black.
        let back = (8 * forward) as u16;
        let back2 = (16 * forward) as u16;
        let normal = (MoveKind::Normal as u16) << 12;
        let double_push = (MoveKind::DoublePush as u16) << 12;
        if !CAPTURES {
            moves.push_encoded(singles, |to| (to.wrapping_sub(back) & 63) | (to << 6) | normal);
            moves.push_encoded(doubles, |to| {
                (to.wrapping_sub(back2) & 63) | (to << 6) | double_push
            });
        }
        if let Some(ep) = self.ep_square {
            for from in attacks::pawn_attacks(!us, ep) & pawns {
                self.add(moves, &ctx, Move::new(from, ep, MoveKind::EnPassant), false);
            }
        }

        // King and castling.
        if let Some(king) = b.king_of(us) {
            let mut king_targets = if rules.king_captures { !our } else { !occ };
            if !rules.king_captures_king {
                king_targets &= !(b.kings() & their);
            }
            if CAPTURES {
                king_targets &= their;
            }
            for to in attacks::king_attacks(king) & king_targets {
                let m = Move::new(king, to, MoveKind::Normal);
                if rules.royal_kings && !occ.contains(to) {
                    // A quiet king step: the test `is_safe_in` ends with, without the call.
                    let attacked =
                        self.is_attacked_after(to, occ ^ king ^ to, their, rules.kings_attack);
                    moves.push_if(m, !attacked);
                } else {
                    self.add(moves, &ctx, m, false);
                }
            }
        }
        b.king_of(us)
    }

    /// Adds `m` if it is `free` (needs no test) or passes the legality test.
    #[inline(always)]
    fn add(&self, moves: &mut MoveWriter<'_>, ctx: &LegalityContext, m: Move, free: bool) {
        if free || self.is_safe_in(m, ctx) {
            moves.push(m);
        }
    }

    /// The moves of a piece on `from` to `to_squares` (quiet ones first, then captures).
    #[inline(always)]
    fn piece_moves(
        &self,
        moves: &mut MoveWriter<'_>,
        ctx: &LegalityContext,
        free_from: Bitboard,
        from: Square,
        to_squares: Bitboard,
    ) {
        let occ = self.board.occupied();
        if free_from.contains(from) {
            moves.push_targets(Move::base_bits(from, MoveKind::Normal), to_squares & !occ);
        } else {
            for to in to_squares & !occ {
                self.add(moves, ctx, Move::new(from, to, MoveKind::Normal), false);
            }
        }
        for to in to_squares & occ {
            self.add(moves, ctx, Move::new(from, to, MoveKind::Normal), false);
        }
    }

    /// A pawn move to `to`, or its four promotions.
    #[inline(always)]
    fn pawn_moves(
        &self,
        moves: &mut MoveWriter<'_>,
        ctx: &LegalityContext,
        from: Square,
        to: Square,
        last_rank: u8,
        free: bool,
    ) {
        if to.rank().index() == last_rank {
            for role in Role::PROMOTIONS {
                self.add(moves, ctx, Move::new(from, to, Move::promotion_kind(role)), free);
            }
        } else {
            self.add(moves, ctx, Move::new(from, to, MoveKind::Normal), free);
        }
    }

    fn generate_castling(&self, king: Square, moves: &mut MoveList) {
        let us = self.turn;
        let back_rank = Bitboard::rank(us.back_rank());
        let rights = self.castling_rights & back_rank;
        if rights.is_empty() || !back_rank.contains(king) {
            return;
        }
        let occ = self.board.occupied();
        let rules = self.variant.rules();
        let royal = rules.royal_kings;
        for rook in rights {
            let m = Move::new(king, rook, MoveKind::Castle);
            let king_to = Position::castle_king_to(m);
            let rook_to = Position::castle_rook_to(m);
            let path = (attacks::between(king, king_to)
                | attacks::between(rook, rook_to)
                | king_to
                | rook_to)
                & !Bitboard::from(king)
                & !Bitboard::from(rook);
            if (path & occ).any() {
                continue;
            }
            if royal {
                // Lichess/FICS: the king's start and path squares are tested with the rook still
                // in place; its destination as if castling were complete.
                let king_path = attacks::between(king, king_to).with(king);
                let occ_path = occ ^ king;
                let attacked = |sq: Square, occupied: Bitboard| {
                    self.is_attacked_for_king_in(sq, us, occupied, rules.kings_attack)
                };
                if king_path.into_iter().any(|sq| attacked(sq, occ_path)) {
                    continue;
                }
                let occ_after = occ ^ king ^ rook ^ rook_to;
                if attacked(king_to, occ_after) {
                    continue;
                }
            }
            moves.push(m);
        }
    }

    /// What every legality test of one generation shares: the rules, the mover's king, whether
    /// it is in check, and the mover's pieces that shield it from an enemy slider (pins).
    fn legality_context(&self, rules: &Rules) -> LegalityContext {
        let b = &self.board;
        let us = self.turn;
        let king = b.king_of(us);
        let mut ctx = LegalityContext {
            rules: *rules,
            king,
            in_check: true,
            blockers: Bitboard::FULL,
            rays: Bitboard::FULL,
        };
        let Some(king) = king else { return ctx };
        if !rules.royal_kings {
            return ctx;
        }
        let occ = b.occupied();
        ctx.in_check = self.is_attacked_for_king_in(king, us, occ, rules.kings_attack);
        let their = b.by_color(!us);
        let snipers = their
            & ((attacks::rook_attacks(king, Bitboard::EMPTY) & b.rooks_and_queens())
                | (attacks::bishop_attacks(king, Bitboard::EMPTY) & b.bishops_and_queens()));
        let (mut blockers, mut rays) = (Bitboard::EMPTY, Bitboard::EMPTY);
        for sniper in snipers {
            let ray = attacks::between(king, sniper);
            rays |= ray;
            let between = ray & occ;
            if !between.more_than_one() {
                blockers |= between;
            }
        }
        ctx.blockers = blockers;
        ctx.rays = rays;
        ctx
    }

    /// Would pseudo-legal move `m` (not castling, which is checked when generated) be legal?
    /// In variants without royal kings every pseudo-legal move is; otherwise the mover's king
    /// must survive and either the enemy king explodes or the mover's king is not attacked.
    #[inline]
    pub(crate) fn is_safe(&self, m: Move) -> bool {
        let rules = self.variant.rules();
        let ctx = LegalityContext {
            rules,
            king: self.board.king_of(self.turn),
            in_check: true,
            blockers: Bitboard::FULL,
            rays: Bitboard::FULL,
        };
        self.is_safe_in(m, &ctx)
    }

    #[inline]
    fn is_safe_in(&self, m: Move, ctx: &LegalityContext) -> bool {
        let rules = &ctx.rules;
        if !rules.royal_kings || m.is_castle() {
            return true;
        }
        let b = &self.board;
        let us = self.turn;
        let Some(king) = ctx.king else { return false };
        let occ = b.occupied();
        let their = b.by_color(!us);
        let (from, to) = (m.from(), m.to());
        // A quiet move of a piece that shields nothing, while not in check, cannot expose the
        // king (en passant removes a second piece: always tested in full below).
        if !ctx.in_check
            && from != king
            && !ctx.blockers.contains(from)
            && !occ.contains(to)
            && !m.is_en_passant()
        {
            return true;
        }
        let captured_sq =
            if m.is_en_passant() { Square::new(to.index() as u8 ^ 8).unwrap_or(to) } else { to };
        if !their.contains(captured_sq) {
            // A quiet move: only the occupancy changes.
            let king_after = if from == king { to } else { king };
            return !self.is_attacked_after(king_after, occ ^ from ^ to, their, rules.kings_attack);
        }
        let explodes =
            rules.captures_explode && (rules.pawn_captures_explode || !b.pawns().contains(from));
        if !explodes {
            // An ordinary capture (pawnblast's pawn captures, every capture of the bomb
            // variant, where kings capture too).
            if b.kings().contains(captured_sq) {
                return true;
            }
            let king_after = if from == king { to } else { king };
            let occ_after = (occ ^ from ^ captured_sq) | to;
            let their_after = their.without(captured_sq);
            return !self.is_attacked_after(king_after, occ_after, their_after, rules.kings_attack);
        }
        let mut ring = attacks::king_attacks(to) & occ;
        if !rules.blast_destroys_pawns {
            ring &= !b.pawns();
        }
        if rules.kings_blast_immune {
            ring &= !b.kings();
        }
        let removed = ring | from | to | captured_sq;
        if removed.contains(king) {
            return false;
        }
        if (removed & their & b.kings()).any() {
            return true;
        }
        // Not in check, and the blast clears no square between the king and an enemy slider:
        // the blast only removes pieces, so no attack appears.
        if !ctx.in_check && (removed & ctx.rays).is_empty() {
            return true;
        }
        !self.is_attacked_after(king, occ & !removed, their & !removed, rules.kings_attack)
    }

    /// Is a king of the side to move on `king` attacked, given the occupancy and the enemy
    /// pieces that remain after a move? The enemy king has not moved. An adjacent enemy king
    /// decides alone: in atomic touching kings nullify check (not attacked), where kings
    /// attack (`Rules::kings_attack`, standard chess) it attacks; otherwise the enemy's other
    /// pieces. (The flag comes from callers that hold the rules, and is read only in the
    /// adjacent case: a separate test of it cost atomic perft 5%.)
    #[inline]
    fn is_attacked_after(
        &self,
        king: Square,
        occupied: Bitboard,
        their: Bitboard,
        kings_attack: bool,
    ) -> bool {
        let b = &self.board;
        let Some(their_king) = b.king_of(!self.turn) else { return false };
        if attacks::king_attacks(king).contains(their_king) {
            return kings_attack;
        }
        (b.attackers_without_king(king, !self.turn, occupied) & their).any()
    }
}

/// Shared inputs of the legality tests of one move generation.
struct LegalityContext {
    rules: Rules,
    king: Option<Square>,
    in_check: bool,
    /// The mover's pieces that alone stand between its king and an enemy slider.
    blockers: Bitboard,
    /// The squares between the mover's king and every enemy slider on one of its lines,
    /// however many pieces stand between them.
    rays: Bitboard,
}
