//! [`Position`]: a validated position of one [`Variant`], with move generation (see
//! `movegen.rs`), move making with incremental Zobrist hashing, and position-level game ends.
//! A position may be in the setup phase of the Balanced start ([`crate::start`]), where the
//! legal moves are pawn removals, or of the bomb variant ([`crate::bomb`]), where they are
//! bomb choices. In the bomb variant a position is the full state, both bombs included.

use crate::attacks;
use crate::bitboard::Bitboard;
use crate::board::Board;
use crate::bomb::BombState;
use crate::color::Color;
use crate::mv::{Move, MoveKind, MoveList};
use crate::outcome::{Outcome, Termination};
use crate::role::{Piece, Role};
use crate::setup::{CastlingMode, Setup};
use crate::square::Square;
use crate::start::Start;
use crate::variant::{InsufficientMaterial, Variant};
use crate::zobrist;
use std::fmt;

/// One problem found while validating a [`Setup`].
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum PositionErrorKind {
    /// There are no pieces at all.
    EmptyBoard,
    /// A side has no king where the variant requires one.
    MissingKing(Color),
    /// A side has more than one king.
    TooManyKings(Color),
    /// A pawn stands on the first or eighth rank.
    PawnsOnBackrank,
    /// A side has more material than promotions could produce (over 16 pieces, over 8 pawns,
    /// or more promoted pieces than missing pawns).
    TooMuchMaterial(Color),
    /// A castling right names no rook of the right colour, or the king is not on its back rank
    /// between the rooks (or not on e1/e8 with corner rooks in standard castling).
    InvalidCastlingRights,
    /// The en-passant square is not the square a pawn just skipped over.
    InvalidEnPassant,
    /// The side not to move is in check.
    OppositeCheck,
}

impl fmt::Display for PositionErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PositionErrorKind::EmptyBoard => write!(f, "the board is empty"),
            PositionErrorKind::MissingKing(c) => write!(f, "{c} has no king"),
            PositionErrorKind::TooManyKings(c) => write!(f, "{c} has more than one king"),
            PositionErrorKind::PawnsOnBackrank => write!(f, "pawns on the first or eighth rank"),
            PositionErrorKind::TooMuchMaterial(c) => write!(f, "{c} has too much material"),
            PositionErrorKind::InvalidCastlingRights => write!(f, "invalid castling rights"),
            PositionErrorKind::InvalidEnPassant => write!(f, "invalid en-passant square"),
            PositionErrorKind::OppositeCheck => write!(f, "the side not to move is in check"),
        }
    }
}

/// Every problem found in a [`Setup`] (never empty).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct PositionError {
    /// The problems, in the order they were found.
    pub kinds: Vec<PositionErrorKind>,
}

impl fmt::Display for PositionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("illegal position: ")?;
        for (i, kind) in self.kinds.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{kind}")?;
        }
        Ok(())
    }
}

impl std::error::Error for PositionError {}

/// A move that is not legal in the position it was played in. The position is handed back
/// unchanged.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct PlayError {
    /// The rejected move.
    pub mv: Move,
    /// The position, unchanged.
    pub position: Position,
}

impl fmt::Display for PlayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "illegal move {:?} in {}", self.mv, self.position.fen())
    }
}

impl std::error::Error for PlayError {}

/// A legal position of a variant. Constructed only through validation ([`Position::from_setup`],
/// [`Position::from_fen`]) or by playing legal moves from a legal position.
///
/// Invariant: `ep_square` is `Some` only if an en-passant capture is legal, so that equal
/// positions compare and hash equal; `hash` equals [`Position::compute_hash`]. Only
/// [`Position::start`] makes a position in the setup phase (the standard board, White to
/// remove a pawn); it is left by playing a removal. In the bomb variant the setup phase is
/// that of [`Position::new`] (each side chooses its bomb, White first) and `bombs` holds
/// each side's bomb square (`None`: not chosen yet, captured or detonated).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Position {
    pub(crate) board: Board,
    pub(crate) turn: Color,
    pub(crate) castling_rights: Bitboard,
    pub(crate) castling_mode: CastlingMode,
    pub(crate) ep_square: Option<Square>,
    pub(crate) halfmoves: u32,
    pub(crate) fullmoves: u32,
    pub(crate) variant: Variant,
    /// True in the Balanced start's setup phase (the side to move removes a pawn) and always
    /// in the bomb variant (whose setup phase is in `bombs`: the side to move has not chosen
    /// yet): move generation and move making test this one flag and leave the standard path
    /// for a cold one.
    pub(crate) special: bool,
    /// The bomb variant's bomb of each side (always a square holding a non-king piece of
    /// that side; none in every other variant),
    /// and which sides have detonated (public; not in the hash: it changes no rule, and a
    /// detonation is irreversible). Two bytes, so that a `Position` stays 104 bytes (at 112
    /// atomic perft was slower).
    pub(crate) bombs: BombState,
    pub(crate) hash: u64,
}

impl Default for Position {
    fn default() -> Position {
        Position::new(Variant::Atomic)
    }
}

impl Position {
    /// The standard starting position of `variant` (in the bomb variant, in the setup phase:
    /// White to choose its bomb).
    pub fn new(variant: Variant) -> Position {
        let setup = Setup::standard();
        let mut pos = Position {
            board: setup.board,
            turn: setup.turn,
            castling_rights: setup.castling_rights,
            castling_mode: CastlingMode::Standard,
            ep_square: None,
            halfmoves: 0,
            fullmoves: 1,
            variant,
            special: variant.rules().hidden_bombs,
            bombs: if variant.rules().hidden_bombs { BombState::UNCHOSEN } else { BombState::NONE },
            hash: 0,
        };
        pos.hash = pos.compute_hash();
        pos
    }

    /// The position a game of `variant` starts from: [`Position::new`] for the standard start,
    /// the same board in the setup phase for the Balanced start (White to remove a pawn).
    /// The bomb variant has its own setup phase and no Balanced start: it always starts at
    /// [`Position::new`] (callers that take a start refuse the pair, e.g. `atomzero perft`).
    pub fn start(variant: Variant, start: Start) -> Position {
        let mut pos = Position::new(variant);
        if start == Start::Balanced && !variant.rules().hidden_bombs {
            pos.special = true;
            pos.hash = pos.compute_hash();
        }
        pos
    }

    /// True in a setup phase: of the Balanced start, before White's removal (the legal moves
    /// are [`Move::removal`]s of the pawns); of the bomb variant, before both sides have chosen
    /// their bombs (the legal moves are [`Move::bomb_choice`]s of the mover's non-king pieces).
    #[inline]
    pub fn is_setup_phase(&self) -> bool {
        self.special && (self.variant != Variant::Bomb || self.bombs.unchosen(self.turn))
    }

    /// Validates `setup` under the rules of `variant`, reporting every problem found. A
    /// [`Setup`] has no bombs: a position of the bomb variant made here has none (both `-`);
    /// [`Position::with_bombs`] adds them (as [`Position::from_fen`] does from the FEN's
    /// bombs field).
    pub fn from_setup(
        setup: Setup,
        variant: Variant,
        mode: CastlingMode,
    ) -> Result<Position, PositionError> {
        let rules = variant.rules();
        let mut errors = Vec::new();
        let board = setup.board;
        let turn = setup.turn;

        // Kings: royal variants and atomar lose kings only to the opponent's move, so only the
        // side to move may be without one; in no-check variants the mover can lose its own king
        // (even both kings and everything else: an empty board is a reachable final position).
        // The bomb variant: a detonation may remove either king or both (the game is over).
        let only_mover_may_lack_king =
            (rules.royal_kings || rules.kings_blast_immune) && !rules.hidden_bombs;
        if board.occupied().is_empty() && only_mover_may_lack_king {
            errors.push(PositionErrorKind::EmptyBoard);
        }
        let has_king = |c: Color| (board.kings() & board.by_color(c)).any();
        for color in Color::ALL {
            let kings = board.kings() & board.by_color(color);
            if kings.more_than_one() {
                errors.push(PositionErrorKind::TooManyKings(color));
            }
            if kings.is_empty() && board.occupied().any() {
                let allowed =
                    if only_mover_may_lack_king { color == turn && has_king(!turn) } else { true };
                if !allowed {
                    errors.push(PositionErrorKind::MissingKing(color));
                }
            }
        }
        if (board.pawns() & Bitboard::BACKRANKS).any() {
            errors.push(PositionErrorKind::PawnsOnBackrank);
        }
        for color in Color::ALL {
            if !is_standard_material(&board, color) {
                errors.push(PositionErrorKind::TooMuchMaterial(color));
            }
        }
        if !castling_rights_valid(&setup, mode) {
            errors.push(PositionErrorKind::InvalidCastlingRights);
        }
        let ep_candidate = match setup.ep_square {
            None => None,
            Some(ep) if ep_square_plausible(&board, turn, ep) => Some(ep),
            Some(_) => {
                errors.push(PositionErrorKind::InvalidEnPassant);
                None
            }
        };

        let mut pos = Position {
            board,
            turn,
            castling_rights: setup.castling_rights,
            castling_mode: mode,
            ep_square: None,
            halfmoves: setup.halfmoves,
            fullmoves: setup.fullmoves.max(1),
            variant,
            special: rules.hidden_bombs,
            bombs: BombState::NONE,
            hash: 0,
        };
        if rules.royal_kings
            && let (Some(their_king), Some(_)) = (board.king_of(!turn), board.king_of(turn))
            && pos.is_attacked_for_king(their_king, !turn, board.occupied())
        {
            errors.push(PositionErrorKind::OppositeCheck);
        }
        if !errors.is_empty() {
            return Err(PositionError { kinds: errors });
        }
        if let Some(ep) = ep_candidate
            && pos.has_legal_en_passant(ep)
        {
            pos.ep_square = Some(ep);
        }
        pos.hash = pos.compute_hash();
        Ok(pos)
    }

    /// The unchecked form of this position (a [`Setup`] has no setup phase: that of the
    /// Balanced start's setup position is the standard start).
    pub fn to_setup(&self) -> Setup {
        Setup {
            board: self.board,
            turn: self.turn,
            castling_rights: self.castling_rights,
            ep_square: self.ep_square,
            halfmoves: self.halfmoves,
            fullmoves: self.fullmoves,
        }
    }

    /// The pieces.
    #[inline]
    pub fn board(&self) -> &Board {
        &self.board
    }
    /// Side to move.
    #[inline]
    pub fn turn(&self) -> Color {
        self.turn
    }
    /// The rule variant.
    #[inline]
    pub fn variant(&self) -> Variant {
        self.variant
    }
    /// Squares of the rooks that may still castle.
    #[inline]
    pub fn castling_rights(&self) -> Bitboard {
        self.castling_rights
    }
    /// Standard or Chess960 castling.
    #[inline]
    pub fn castling_mode(&self) -> CastlingMode {
        self.castling_mode
    }
    /// The en-passant square, present only when an en-passant capture is legal.
    #[inline]
    pub fn ep_square(&self) -> Option<Square> {
        self.ep_square
    }
    /// Half-moves since the last capture or pawn move.
    #[inline]
    pub fn halfmoves(&self) -> u32 {
        self.halfmoves
    }
    /// Move number.
    #[inline]
    pub fn fullmoves(&self) -> u32 {
        self.fullmoves
    }
    /// Zobrist hash (see [`crate::zobrist`]).
    #[inline]
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// Switches between standard and Chess960 castling notation and validation.
    /// Fails if the castling rights are not valid under `mode`.
    pub fn with_castling_mode(&self, mode: CastlingMode) -> Result<Position, PositionError> {
        if mode == self.castling_mode {
            return Ok(*self);
        }
        let mut pos = Position::from_setup(self.to_setup(), self.variant, mode)?;
        pos.special = self.special;
        pos.bombs = self.bombs;
        pos.hash = pos.compute_hash();
        Ok(pos)
    }

    /// Recomputes the Zobrist hash from scratch.
    pub fn compute_hash(&self) -> u64 {
        let mut hash = 0;
        for (sq, piece) in self.board.pieces() {
            hash ^= zobrist::piece_key(piece, sq);
        }
        hash ^= zobrist::castling_keys(self.castling_rights);
        if let Some(ep) = self.ep_square {
            hash ^= zobrist::en_passant_key(ep.file().index());
        }
        if self.turn == Color::Black {
            hash ^= zobrist::black_to_move_key();
        }
        if self.is_setup_phase() {
            hash ^= zobrist::setup_phase_key();
        }
        for color in Color::ALL {
            if let Some(bomb) = self.bombs.get(color) {
                hash ^= zobrist::bomb_key(color, bomb);
            }
        }
        hash
    }

    /// True if `sq` would be attacked for a king of `defender` standing there, given
    /// `occupied`: some non-king enemy piece attacks it, the enemy has a king, and that king is
    /// not adjacent (touching kings nullify check). Where kings attack (the bomb variant's
    /// standard chess), any enemy piece attacking it, the king included.
    #[inline]
    pub(crate) fn is_attacked_for_king(
        &self,
        sq: Square,
        defender: Color,
        occupied: Bitboard,
    ) -> bool {
        self.is_attacked_for_king_in(sq, defender, occupied, self.variant.rules().kings_attack)
    }

    /// [`Position::is_attacked_for_king`] with the variant's `Rules::kings_attack` given by a
    /// caller that holds the rules (looking them up again here cost atomic perft a few
    /// percent). The flag is read only when the enemy king is adjacent, where it alone
    /// decides; without an enemy king nothing attacks (the game is over).
    #[inline]
    pub(crate) fn is_attacked_for_king_in(
        &self,
        sq: Square,
        defender: Color,
        occupied: Bitboard,
        kings_attack: bool,
    ) -> bool {
        let attacker = !defender;
        match self.board.king_of(attacker) {
            None => false,
            // Touching kings: no check in atomic, an attack where kings attack.
            Some(k) if attacks::king_attacks(sq).contains(k) => kings_attack,
            Some(_) => self.board.attackers_without_king(sq, attacker, occupied).any(),
        }
    }

    /// Enemy pieces giving check to the side to move (empty in variants without check).
    pub fn checkers(&self) -> Bitboard {
        if !self.variant.rules().royal_kings {
            return Bitboard::EMPTY;
        }
        let Some(king) = self.board.king_of(self.turn) else { return Bitboard::EMPTY };
        if !self.is_attacked_for_king(king, self.turn, self.board.occupied()) {
            return Bitboard::EMPTY;
        }
        self.board.attackers_without_king(king, !self.turn, self.board.occupied())
    }

    /// True if the side to move is in check.
    #[inline]
    pub fn is_check(&self) -> bool {
        self.checkers().any()
    }

    /// True if `m` captures something (en passant included; castling never does).
    #[inline]
    pub fn is_capture(&self, m: Move) -> bool {
        match m.kind() {
            MoveKind::EnPassant => true,
            MoveKind::Castle => false,
            _ => self.board.by_color(!self.turn).contains(m.to()),
        }
    }

    /// The role of the piece that makes move `m`.
    #[inline]
    pub fn moving_role(&self, m: Move) -> Option<Role> {
        self.board.role_at(m.from())
    }

    /// The square where the king ends up after castling move `m` (king square -> rook square).
    pub fn castle_king_to(m: Move) -> Square {
        let file = if m.to().file() > m.from().file() { 6 } else { 2 };
        Square::new(m.from().rank().index() * 8 + file).unwrap_or(m.from())
    }

    /// The square where the rook ends up after castling move `m`.
    pub fn castle_rook_to(m: Move) -> Square {
        let file = if m.to().file() > m.from().file() { 5 } else { 3 };
        Square::new(m.from().rank().index() * 8 + file).unwrap_or(m.to())
    }

    /// The squares a capture on `to` by a piece of role `capturer` would remove, for the
    /// current board (capturer and captured piece included); empty if the capture does not
    /// explode under this variant.
    pub fn blast(&self, capturer: Role, to: Square) -> Bitboard {
        let rules = self.variant.rules();
        if !rules.captures_explode || (capturer == Role::Pawn && !rules.pawn_captures_explode) {
            return Bitboard::EMPTY;
        }
        let mut blast = attacks::king_attacks(to) & self.board.occupied();
        if !rules.blast_destroys_pawns {
            blast &= !self.board.pawns();
        }
        if rules.kings_blast_immune {
            blast &= !self.board.kings();
        }
        // The capturer, standing on `to` after the capture, explodes too, unless it is an
        // immune king.
        if !(rules.kings_blast_immune && capturer == Role::King) {
            blast = blast.with(to);
        }
        blast
    }

    /// Plays a legal move; an illegal one returns the position unchanged inside the error.
    pub fn play(self, m: Move) -> Result<Position, PlayError> {
        if self.is_legal(m) {
            let mut next = self;
            next.play_unchecked(m);
            Ok(next)
        } else {
            Err(PlayError { mv: m, position: self })
        }
    }

    /// True if `m` is one of [`Position::legal_moves`].
    pub fn is_legal(&self, m: Move) -> bool {
        self.legal_moves().contains(&m)
    }

    /// Plays `m`, which must come from [`Position::legal_moves`] (otherwise the result is an
    /// unspecified but memory-safe position; a move from an empty square does nothing).
    pub fn play_unchecked(&mut self, m: Move) {
        if self.special && self.play_special(m) {
            return;
        }
        let us = self.turn;
        let them = !us;
        let (from, to) = (m.from(), m.to());
        let Some(moving) = self.board.piece_at(from) else { return };
        let mut hash = self.hash;
        if let Some(ep) = self.ep_square.take() {
            hash ^= zobrist::en_passant_key(ep.file().index());
        }
        let old_rights = self.castling_rights;
        let mut rights = old_rights;
        let mut new_ep = None;
        self.halfmoves = self.halfmoves.saturating_add(1);

        if m.kind() == MoveKind::Castle {
            let rook = Role::Rook.of(us);
            let (king_to, rook_to) = (Position::castle_king_to(m), Position::castle_rook_to(m));
            self.toggle(moving, from, &mut hash);
            if self.board.piece_at(to) == Some(rook) {
                self.toggle(rook, to, &mut hash);
            }
            for sq in [king_to, rook_to] {
                // Empty for legal moves (the castling path is clear).
                if let Some(piece) = self.board.remove_piece_at(sq) {
                    hash ^= zobrist::piece_key(piece, sq);
                }
            }
            self.toggle(moving, king_to, &mut hash);
            self.toggle(rook, rook_to, &mut hash);
            rights &= !Bitboard::rank(us.back_rank());
        } else {
            let captured_sq = if m.is_en_passant() {
                Square::new(to.index() as u8 ^ 8).unwrap_or(to)
            } else {
                to
            };
            // Looked up once (an own piece there only comes with a bogus move: it is removed
            // without a blast).
            let target = self.board.piece_at(captured_sq);
            let blast = match target {
                Some(p) if p.color == them => self.blast(moving.role, to),
                _ => Bitboard::EMPTY,
            };
            self.toggle(moving, from, &mut hash);
            if let Some(piece) = target
                && captured_sq != from
            {
                self.toggle(piece, captured_sq, &mut hash);
                self.halfmoves = 0;
            }
            if captured_sq != to
                && let Some(piece) = self.board.remove_piece_at(to)
            {
                // Only reachable through play_unchecked with a bogus move.
                hash ^= zobrist::piece_key(piece, to);
            }
            let placed = m.promotion().map_or(moving, |role| role.of(us));
            self.toggle(placed, to, &mut hash);
            if moving.role == Role::Pawn {
                self.halfmoves = 0;
                if m.kind() == MoveKind::DoublePush {
                    new_ep = Square::new((from.index() as u8 + to.index() as u8) / 2);
                }
            }
            rights &= !(Bitboard::from(from) | to);
            if moving.role == Role::King {
                rights &= !Bitboard::rank(us.back_rank());
            }
            if blast.any() {
                for sq in blast & self.board.occupied() {
                    if let Some(piece) = self.board.remove_piece_at(sq) {
                        hash ^= zobrist::piece_key(piece, sq);
                    }
                }
                rights &= !blast;
                for color in Color::ALL {
                    if self.board.king_of(color).is_none() {
                        rights &= !Bitboard::rank(color.back_rank());
                    }
                }
            }
        }

        self.castling_rights = rights;
        hash ^= zobrist::castling_keys(old_rights ^ rights);
        // Without a branch: it would mispredict on every other ply of a walk.
        self.fullmoves = self.fullmoves.saturating_add(u32::from(us == Color::Black));
        self.turn = them;
        hash ^= zobrist::black_to_move_key();
        self.hash = hash;
        if let Some(ep) = new_ep
            && self.has_legal_en_passant(ep)
        {
            self.ep_square = Some(ep);
            self.hash ^= zobrist::en_passant_key(ep.file().index());
        }
    }

    /// The moves that are not played on the standard path: the Balanced start's removal, the
    /// bomb variant's choices and detonations (true: played), and the bomb variant's
    /// bookkeeping before a board move (false: the board move is still to be played).
    #[cold]
    #[inline(never)]
    fn play_special(&mut self, m: Move) -> bool {
        if self.variant == Variant::Bomb {
            self.play_bomb_move(m)
        } else {
            self.play_removal(m);
            true
        }
    }

    /// Plays a move of the setup phase: removes the piece on the move's origin square (a pawn
    /// for a legal removal), ends the setup phase and passes the turn. The half-move clock
    /// restarts (a pawn left the board); the move number advances after Black as usual.
    #[cold]
    fn play_removal(&mut self, m: Move) {
        let mut hash = self.hash ^ zobrist::setup_phase_key() ^ zobrist::black_to_move_key();
        if let Some(piece) = self.board.remove_piece_at(m.from()) {
            hash ^= zobrist::piece_key(piece, m.from());
        }
        // Removing a piece never gives an en-passant square; a castling right goes with its
        // rook (never for a legal removal: pawns stand on no rook's square).
        if let Some(ep) = self.ep_square.take() {
            hash ^= zobrist::en_passant_key(ep.file().index());
        }
        let rights = self.castling_rights & !Bitboard::from(m.from());
        hash ^= zobrist::castling_keys(self.castling_rights ^ rights);
        self.castling_rights = rights;
        self.special = false;
        self.halfmoves = 0;
        self.fullmoves = self.fullmoves.saturating_add(u32::from(self.turn == Color::Black));
        self.turn = !self.turn;
        self.hash = hash;
    }

    #[inline]
    fn toggle(&mut self, piece: Piece, sq: Square, hash: &mut u64) {
        self.board.toggle(piece, sq);
        *hash ^= zobrist::piece_key(piece, sq);
    }

    /// True if the side to move could legally capture en passant onto `ep`.
    fn has_legal_en_passant(&self, ep: Square) -> bool {
        if self.variant_outcome().is_some() {
            return false;
        }
        let pawns = self.board.pawns() & self.board.by_color(self.turn);
        let candidates = attacks::pawn_attacks(!self.turn, ep) & pawns;
        candidates.into_iter().any(|from| self.is_safe(Move::new(from, ep, MoveKind::EnPassant)))
    }

    /// The game result decided by the variant's king rules alone (exploded or captured kings,
    /// kingless endings), without looking at legal moves or material.
    pub fn variant_outcome(&self) -> Option<Outcome> {
        let rules = self.variant.rules();
        let reason = if rules.kings_blast_immune {
            Termination::KingCaptured
        } else {
            Termination::KingExploded
        };
        let has_king = |c: Color| (self.board.kings() & self.board.by_color(c)).any();
        match (has_king(Color::White), has_king(Color::Black)) {
            (true, true) => None,
            (true, false) => Some(Outcome::decisive(Color::White, reason)),
            (false, true) => Some(Outcome::decisive(Color::Black, reason)),
            (false, false) if rules.kingless_play => {
                let has_pieces = |c: Color| self.board.by_color(c).any();
                match (has_pieces(Color::White), has_pieces(Color::Black)) {
                    (true, true) => None,
                    (true, false) => {
                        Some(Outcome::decisive(Color::White, Termination::NoPiecesLeft))
                    }
                    (false, true) => {
                        Some(Outcome::decisive(Color::Black, Termination::NoPiecesLeft))
                    }
                    (false, false) => Some(Outcome::draw(Termination::BoardCleared)),
                }
            }
            // The bomb variant: a detonation that removes both kings draws.
            (false, false) if rules.hidden_bombs => {
                Some(Outcome::draw(Termination::BothKingsExploded))
            }
            // One move removed both kings: the mover (the side not to move) loses.
            (false, false) => Some(Outcome::decisive(self.turn, reason)),
        }
    }

    /// The result decided by this position alone: variant end, checkmate, stalemate,
    /// insufficient material, or the 50-move rule (100 half-moves). Repetitions need the game
    /// history: see [`crate::Game::outcome`].
    pub fn outcome(&self) -> Option<Outcome> {
        if let Some(outcome) = self.variant_outcome() {
            return Some(outcome);
        }
        if self.legal_moves().is_empty() {
            return Some(if self.is_check() {
                Outcome::decisive(!self.turn, Termination::Checkmate)
            } else {
                Outcome::draw(Termination::Stalemate)
            });
        }
        if self.is_insufficient_material() {
            return Some(Outcome::draw(Termination::InsufficientMaterial));
        }
        if self.halfmoves >= 100 {
            return Some(Outcome::draw(Termination::FiftyMoves));
        }
        None
    }

    /// True if the side to move is checkmated.
    pub fn is_checkmate(&self) -> bool {
        self.variant_outcome().is_none() && self.is_check() && self.legal_moves().is_empty()
    }

    /// Insufficient material under the variant's rule.
    ///
    /// Lichess (scalachess `Atomic.isInsufficientMaterial`): if both sides have two or more
    /// pieces, only kings and bishops, at most four pieces, with bishops on both square colours;
    /// otherwise (a bare king) kings and at most two knights, or at most three pieces of kings,
    /// rooks and minor pieces without bishops on both colours; or a closed position where every
    /// pawn is blocked by a pawn and cannot move, with no pieces but kings, pawns and bishops that
    /// can never reach an enemy piece ("pawnitized" bishops).
    pub fn is_insufficient_material(&self) -> bool {
        let b = &self.board;
        match self.variant.rules().insufficient_material {
            InsufficientMaterial::BareKings => b.occupied() == b.kings() && b.kings().count() == 2,
            InsufficientMaterial::Lichess => {
                // The common case, cheaply: pawns rule out every insufficient-material set,
                // and knights, rooks or queens rule out a closed position.
                if b.pawns().any() && (b.knights() | b.rooks() | b.queens()).any() {
                    return false;
                }
                if b.king_of(Color::White).is_none() || b.king_of(Color::Black).is_none() {
                    return false;
                }
                self.lichess_insufficient_winning_material() || self.lichess_closed_position()
            }
        }
    }

    fn lichess_insufficient_winning_material(&self) -> bool {
        let b = &self.board;
        let occ = b.occupied();
        let total = occ.count();
        let bishops_opposite = (b.bishops() & Bitboard::LIGHT_SQUARES).any()
            && (b.bishops() & Bitboard::DARK_SQUARES).any();
        if b.by_color(Color::White).count() >= 2 && b.by_color(Color::Black).count() >= 2 {
            occ == b.kings() | b.bishops() && total <= 4 && bishops_opposite
        } else if occ == b.kings() | b.knights() {
            total <= 4
        } else {
            let rooks_and_minors = b.kings() | b.rooks() | b.bishops() | b.knights();
            occ == rooks_and_minors && !bishops_opposite && total <= 3
        }
    }

    fn lichess_closed_position(&self) -> bool {
        let b = &self.board;
        if (b.knights() | b.rooks() | b.queens()).any() || b.pawns().is_empty() {
            return false;
        }
        let all_pawns_blocked = b.pawns().into_iter().all(|sq| self.pawn_blocked_by_pawn(sq));
        if !all_pawns_blocked {
            return false;
        }
        let Some(bishop) = b.bishops().first() else { return true };
        let Some(side) = b.color_at(bishop) else { return true };
        let light = bishop.is_light();
        let bishop_colour_squares =
            if light { Bitboard::LIGHT_SQUARES } else { Bitboard::DARK_SQUARES };
        let our = b.by_color(side);
        let their = b.by_color(!side);
        // Our pawns anywhere; their pawns only on the other square colour; our bishops only on
        // the bishop's colour; no enemy bishops; kings anywhere.
        (their & b.pawns() & bishop_colour_squares).is_empty()
            && (their & b.bishops()).is_empty()
            && (our & b.bishops() & !bishop_colour_squares).is_empty()
    }

    /// A pawn whose square ahead holds a pawn and that has no legal move when its side is to
    /// move (scalachess `pawnBlockedByPawn`).
    fn pawn_blocked_by_pawn(&self, sq: Square) -> bool {
        let Some(color) = self.board.color_at(sq) else { return false };
        let ahead = match color {
            Color::White => sq.offset(0, 1),
            Color::Black => sq.offset(0, -1),
        };
        let Some(ahead) = ahead else { return false };
        if !self.board.pawns().contains(ahead) {
            return false;
        }
        let mut view = *self;
        view.turn = color;
        view.ep_square = None;
        !view.legal_moves().iter().any(|m| m.from() == sq)
    }

    /// The same position seen from the other side: board mirrored top to bottom, colours,
    /// side to move and rights swapped. Legal moves correspond one to one.
    pub fn flip_colors(&self) -> Position {
        let mut pos = Position {
            board: self.board.flip_colors(),
            turn: !self.turn,
            castling_rights: self.castling_rights.flip_vertical(),
            castling_mode: self.castling_mode,
            ep_square: self.ep_square.map(Square::flip_vertical),
            halfmoves: self.halfmoves,
            fullmoves: self.fullmoves,
            variant: self.variant,
            special: self.special,
            bombs: self.bombs.flip_colors(),
            hash: 0,
        };
        pos.hash = pos.compute_hash();
        pos
    }

    /// The first of `moves` (legal moves of this position) after which the variant's king
    /// rules give the side to move the game at once: a capture (or a bomb detonation) whose
    /// blast removes the enemy king, or in `atomar` its capture. Checkmates are not looked
    /// for. Only moves landing on the enemy king's square or next to it are played to check,
    /// so this is cheap enough for every leaf of a search.
    pub fn winning_move(&self, moves: &[Move]) -> Option<Move> {
        let king = self.board.king_of(!self.turn)?;
        let near = attacks::king_attacks(king).with(king);
        moves.iter().copied().find(|&m| {
            near.contains(m.to()) && (self.is_capture(m) || m.from() == m.to()) && {
                let mut after = *self;
                after.play_unchecked(m);
                after.variant_outcome().is_some_and(|o| o.winner == Some(self.turn))
            }
        })
    }

    /// Legal moves of the side to move (empty once the game is decided by the variant's king
    /// rules).
    pub fn legal_moves(&self) -> MoveList {
        let mut moves = MoveList::new();
        self.generate(&mut moves);
        moves
    }

    /// [`Position::legal_moves`] into `moves` (cleared first): for loops that generate often
    /// and keep one list, which saves initialising and copying a fresh one each time.
    pub fn legal_moves_into(&self, moves: &mut MoveList) {
        moves.clear();
        self.generate(moves);
    }

    /// The legal captures into `moves` (cleared first): the moves of
    /// [`Position::legal_moves`] for which [`Position::is_capture`] holds, in the same order,
    /// without generating the quiet ones (for capture searches).
    pub fn legal_captures_into(&self, moves: &mut MoveList) {
        moves.clear();
        self.generate_captures(moves);
    }
}

/// At most 16 pieces, 8 pawns, and no more promoted pieces than missing pawns.
fn is_standard_material(board: &Board, color: Color) -> bool {
    let our = board.by_color(color);
    let count = |role: Role| (board.by_role(role) & our).count();
    let pawns = count(Role::Pawn);
    let promoted = count(Role::Knight).saturating_sub(2)
        + count(Role::Bishop).saturating_sub(2)
        + count(Role::Rook).saturating_sub(2)
        + count(Role::Queen).saturating_sub(1);
    our.count() <= 16 && pawns <= 8 && promoted <= 8 - pawns
}

fn castling_rights_valid(setup: &Setup, mode: CastlingMode) -> bool {
    let rights = setup.castling_rights;
    if (rights & !Bitboard::BACKRANKS).any() {
        return false;
    }
    for color in Color::ALL {
        let ours = rights & Bitboard::rank(color.back_rank());
        if ours.is_empty() {
            continue;
        }
        let kings = setup.board.kings() & setup.board.by_color(color);
        let Some(king) = kings.single_square() else { return false };
        if king.rank().index() != color.back_rank() {
            return false;
        }
        let rooks = setup.board.by_piece(Role::Rook.of(color));
        if (ours & !rooks).any() {
            return false;
        }
        let king_side = ours.into_iter().filter(|r| r.file() > king.file()).count();
        let queen_side = ours.into_iter().filter(|r| r.file() < king.file()).count();
        if king_side > 1 || queen_side > 1 {
            return false;
        }
        if mode == CastlingMode::Standard
            && (king.file().index() != 4
                || ours.into_iter().any(|r| !matches!(r.file().index(), 0 | 7)))
        {
            return false;
        }
    }
    true
}

/// The en-passant square lies behind an enemy pawn that could just have made a double push.
fn ep_square_plausible(board: &Board, turn: Color, ep: Square) -> bool {
    let (ep_rank, pawn_delta) = match turn {
        Color::White => (5, -1),
        Color::Black => (2, 1),
    };
    if ep.rank().index() != ep_rank {
        return false;
    }
    let (Some(pawn_sq), Some(origin)) = (ep.offset(0, pawn_delta), ep.offset(0, -pawn_delta))
    else {
        return false;
    };
    board.by_piece(Role::Pawn.of(!turn)).contains(pawn_sq)
        && !board.occupied().contains(ep)
        && !board.occupied().contains(origin)
}

/// Positions serialize as `{ "fen": ..., "variant": ..., "chess960": ... }` and are validated
/// again when deserialized, so the variant always travels with the position.
#[cfg(feature = "serde")]
mod serde_impl {
    use super::Position;
    use crate::setup::CastlingMode;
    use crate::variant::Variant;

    #[derive(serde::Serialize, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Repr {
        fen: String,
        variant: Variant,
        #[serde(default)]
        chess960: bool,
    }

    impl serde::Serialize for Position {
        fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            Repr {
                fen: self.fen(),
                variant: self.variant,
                chess960: self.castling_mode == CastlingMode::Chess960,
            }
            .serialize(serializer)
        }
    }

    impl<'de> serde::Deserialize<'de> for Position {
        fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Position, D::Error> {
            let repr = Repr::deserialize(deserializer)?;
            let mode = if repr.chess960 { CastlingMode::Chess960 } else { CastlingMode::Standard };
            Position::from_fen_with_mode(&repr.fen, repr.variant, mode)
                .map_err(serde::de::Error::custom)
        }
    }
}
