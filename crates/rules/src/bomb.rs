//! The **bomb** variant ([`crate::Variant::Bomb`]): standard chess in which each side secretly
//! makes one of its pieces a bomb and may detonate it as a move. A game of hidden information.
//!
//! # Rules (issue 26, after the ItsYourTurn variant in the seed article)
//!
//! - **Setup phase.** Before move 1, White chooses its bomb ([`Move::bomb_choice`], a move of
//!   the game), then Black chooses; then normal play starts with White to move. Both choices
//!   are ordinary moves of the move tree, so search and perft treat them like any other
//!   (perft 1 of [`Position::new`] is 15, perft 2 is 225). They change neither clock.
//! - **Which pieces.** Any piece but the king (15 choices from the start). Our reading of "one
//!   of its pieces": a king bomb would make detonating it suicide (a loss, or a draw if it
//!   took the other king along) while its owner could never be rid of it, and the text speaks
//!   of a piece identified to be blown up at will. Pawns may be bombs; a pawn bomb that
//!   promotes stays the bomb (the new piece), a rook bomb that castles moves with the rook.
//! - **Captures never explode**: check, checkmate, stalemate, castling, en passant and
//!   promotion are those of standard chess (kings attack and may capture; two kings never
//!   touch). A captured bomb is simply gone (nobody is told).
//! - **Detonation** ([`Move::detonation`]): a move of the side whose bomb is still on the
//!   board. It removes the bomb and every piece on the 8 squares around it: pawns, both
//!   colours, kings included. Killing the opponent's bomb this way starts no chain reaction
//!   (it is gone, silently).
//! - **Legality of a detonation** (our reading of "legal only if the explosion removes the
//!   check and does not expose the king to a new check"): a detonation that removes the
//!   mover's own king is legal and loses (a draw if the enemy king goes too); one that removes
//!   the enemy king alone wins; any other is legal exactly when the mover's king is not
//!   attacked afterwards, which covers both resolving a check and not exposing the king.
//! - **Ends**: own king blown up: loss; enemy king blown up: win; both: draw
//!   ([`crate::Termination::BothKingsExploded`]); checkmate; stalemate (draw); only two bare
//!   kings left (a lone bomb piece can still blow a king up, so nothing else is insufficient);
//!   the 50-move rule and threefold repetition, where the position includes both bombs (the
//!   full state: [`Position::hash`] has a key per bomb).
//!
//! # State and views
//!
//! A [`Position`] of the bomb variant is the **full state**: both bombs
//! ([`Position::bomb`]) and whether each side has detonated ([`Position::has_detonated`]).
//! No player sees it. [`Position::view`] gives what one player sees ([`BombView`]): the board,
//! the clocks, its own bomb, and of the opponent's bomb only whether it has been chosen and
//! whether it was detonated (the explosion is public; a bomb lost to a capture or to the
//! viewer's own blast is never revealed). [`BombView::candidates`] lists the states of the
//! opponent's bomb consistent with the view and [`BombView::determinize`] rebuilds a full
//! state from one of them (Perfect-Information Monte Carlo samples these).
//!
//! # Notation (this crate's tokens)
//!
//! | where | White chooses the queen on d1 | White detonates its bomb on d1 (a queen) | the bombs |
//! |---|---|---|---|
//! | UCI ([`crate::UciMove`]) | `@d1` | `d1*` | |
//! | SAN ([`Position::san`]) | `@d1` | `Qd1*` (pawn: `e4*`; read also as `d1*`), `#` if it blows up the enemy king alone or mates, `+` if it checks | |
//! | FEN ([`Position::fen`]) | | | a seventh field `bombs:<white>,<black>` |
//! | PGN ([`crate::pgn`]) | `[WhiteBomb "d1"]` | `Qd1*` in the movetext | `[WhiteBomb "d1"]` `[BlackBomb "g8"]`: the choices, revealed at the end; the movetext starts with White's first move |
//!
//! The FEN's bombs field gives each side's bomb as a square (`d1`), `-` (no bomb on the
//! board: captured or blown up by the opponent), `*` (detonated by its owner: no bomb, and
//! everyone knows it) or `?` (not chosen yet: the setup phase). The setup phase is either
//! `bombs:?,?` with White to move or `bombs:<square>,?` with Black to move. Examples:
//!
//! - `rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 bombs:?,?` ([`Position::new`])
//! - `rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1 bombs:d1,?` (after `@d1`)
//! - `rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 bombs:d1,g8` (play begins)
//! - `4k3/8/8/8/8/8/8/4K3 w - - 0 40 bombs:*,-`
//!
//! A view's FEN ([`BombView::fen`]) writes a hidden bomb as `x` (e.g. `bombs:d1,x`); a position
//! cannot be read from it ([`BombFieldError::Hidden`]: determinize first). Every other variant
//! rejects the field, and the bomb variant requires it.

use crate::attacks;
use crate::bitboard::Bitboard;
use crate::color::{ByColor, Color};
use crate::mv::{Move, MoveList};
use crate::position::Position;
use crate::role::Role;
use crate::square::Square;
use crate::variant::Variant;
use crate::zobrist;
use std::fmt;

/// The prefix of the FEN's bombs field.
pub const BOMBS_FIELD_PREFIX: &str = "bombs:";

/// The bombs in a [`Position`], packed in 16 bits: each side's bomb in 7 bits (bits 0–6
/// White's, 7–13 Black's: a square 0–63, 64 none, 65 not chosen yet) and a bit per side that
/// has detonated (14 White, 15 Black). Two bytes: a `Position` stays 104 bytes (at 112 atomic
/// perft was slower).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub(crate) struct BombState(u16);

impl BombState {
    /// No bombs, no detonation.
    pub(crate) const NONE: BombState = BombState(64 | (64 << 7));

    /// Neither side has chosen its bomb yet (the start of the setup phase).
    pub(crate) const UNCHOSEN: BombState = BombState(65 | (65 << 7));

    /// True if `color` has not chosen its bomb yet.
    #[inline]
    pub(crate) fn unchosen(self, color: Color) -> bool {
        (self.0 >> (7 * color.index())) & 127 == 65
    }

    /// Marks `color`'s bomb as not chosen yet.
    pub(crate) fn set_unchosen(&mut self, color: Color) {
        let shift = 7 * color.index();
        self.0 = (self.0 & !(127 << shift)) | (65 << shift);
    }

    /// `color`'s bomb.
    #[inline]
    pub(crate) fn get(self, color: Color) -> Option<Square> {
        Square::new(((self.0 >> (7 * color.index())) & 127) as u8)
    }

    /// Sets `color`'s bomb; returns the one it replaces.
    #[inline]
    pub(crate) fn set(&mut self, color: Color, square: Option<Square>) -> Option<Square> {
        let old = self.get(color);
        let shift = 7 * color.index();
        let bits = square.map_or(64, |sq| sq.index() as u16);
        self.0 = (self.0 & !(127 << shift)) | (bits << shift);
        old
    }

    /// True if `color` has detonated its bomb.
    #[inline]
    pub(crate) fn detonated(self, color: Color) -> bool {
        self.0 & (1 << (14 + color.index())) != 0
    }

    /// Records that `color` has detonated its bomb.
    pub(crate) fn set_detonated(&mut self, color: Color) {
        self.0 |= 1 << (14 + color.index());
    }

    /// The same bombs with the colours swapped and the squares mirrored top to bottom.
    pub(crate) fn flip_colors(self) -> BombState {
        let mut flipped = BombState::NONE;
        for color in Color::ALL {
            flipped.set(!color, self.get(color).map(Square::flip_vertical));
            if self.unchosen(color) {
                flipped.set_unchosen(!color);
            }
            if self.detonated(color) {
                flipped.set_detonated(!color);
            }
        }
        flipped
    }
}

/// One side's bomb as the FEN's bombs field writes it.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum BombSlot {
    /// `?`: not chosen yet (the setup phase).
    Unchosen,
    /// A square: the bomb stands there.
    At(Square),
    /// `-`: no bomb on the board (captured, or blown up by the opponent's detonation).
    Gone,
    /// `*`: detonated by its owner.
    Detonated,
    /// `x`: hidden (only in a view's FEN; never read into a position).
    Hidden,
}

impl BombSlot {
    fn parse(text: &str) -> Option<BombSlot> {
        Some(match text {
            "?" => BombSlot::Unchosen,
            "-" => BombSlot::Gone,
            "*" => BombSlot::Detonated,
            "x" | "X" => BombSlot::Hidden,
            square => BombSlot::At(square.parse().ok()?),
        })
    }
}

impl fmt::Display for BombSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BombSlot::Unchosen => f.write_str("?"),
            BombSlot::At(square) => write!(f, "{square}"),
            BombSlot::Gone => f.write_str("-"),
            BombSlot::Detonated => f.write_str("*"),
            BombSlot::Hidden => f.write_str("x"),
        }
    }
}

/// A FEN's bombs field that is missing, malformed or does not fit the position.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum BombFieldError {
    /// A FEN of the bomb variant without the field.
    Missing,
    /// The field in a FEN of a variant without bombs.
    NotBombVariant(Variant),
    /// Not `bombs:<white>,<black>` with each a square, `-`, `*` or `?`.
    Syntax(String),
    /// A bomb square that holds no non-king piece of its side.
    NotAPiece {
        /// Whose bomb.
        color: Color,
        /// The square given.
        square: Square,
    },
    /// `?` where the setup phase cannot be: only `?,?` with White to move and
    /// `<square>,?` with Black to move are setup positions, with both kings, no king in
    /// check, and a non-king piece for each side still to choose.
    SetupPhase(String),
    /// A hidden bomb (`x`): a view's FEN, not a position.
    Hidden,
    /// The Balanced start's keyword `balanced`, which the bomb variant does not have.
    BalancedStart,
}

impl fmt::Display for BombFieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BombFieldError::Missing => write!(
                f,
                "invalid fen: the bomb variant needs a seventh field '{BOMBS_FIELD_PREFIX}<white>,<black>' (e.g. bombs:d1,g8, bombs:?,? in the setup phase)"
            ),
            BombFieldError::NotBombVariant(v) => {
                write!(
                    f,
                    "invalid fen: a bombs field in a {v} position (only the bomb variant has bombs)"
                )
            }
            BombFieldError::Syntax(s) => write!(
                f,
                "invalid fen: bad bombs field '{s}' (expected bombs:<white>,<black>, each a square, -, * or ?)"
            ),
            BombFieldError::NotAPiece { color, square } => {
                write!(
                    f,
                    "invalid fen: {color}'s bomb on {square}, which holds no non-king {color} piece"
                )
            }
            BombFieldError::SetupPhase(s) => write!(
                f,
                "invalid fen: {s} (the setup phase is bombs:?,? with White to move or bombs:<square>,? with Black to move, both kings on the board, no king in check)"
            ),
            BombFieldError::BalancedStart => {
                write!(
                    f,
                    "invalid fen: the bomb variant has no Balanced start (it has its own setup phase: bombs:?,?)"
                )
            }
            BombFieldError::Hidden => write!(
                f,
                "invalid fen: a hidden bomb (x) is a player's view, not a position (determinize it first)"
            ),
        }
    }
}

impl std::error::Error for BombFieldError {}

/// Parses a bombs field (`bombs:d1,g8`).
pub fn parse_bombs_field(text: &str) -> Result<ByColor<BombSlot>, BombFieldError> {
    let syntax = || BombFieldError::Syntax(text.chars().take(32).collect());
    let body = text.strip_prefix(BOMBS_FIELD_PREFIX).ok_or_else(syntax)?;
    let (white, black) = body.split_once(',').ok_or_else(syntax)?;
    let slots = ByColor {
        white: BombSlot::parse(white).ok_or_else(syntax)?,
        black: BombSlot::parse(black).ok_or_else(syntax)?,
    };
    if slots.white == BombSlot::Hidden || slots.black == BombSlot::Hidden {
        return Err(BombFieldError::Hidden);
    }
    Ok(slots)
}

/// Splits a FEN into its first fields and its bombs field, if its last field is one.
pub(crate) fn split_bombs_field(fen: &str) -> (&str, Option<&str>) {
    let trimmed = fen.trim_end();
    match trimmed.rsplit_once(char::is_whitespace) {
        Some((head, last)) if last.starts_with(BOMBS_FIELD_PREFIX) => (head, Some(last)),
        _ => (trimmed, None),
    }
}

/// Writes a bombs field.
fn write_bombs_field(slots: ByColor<BombSlot>) -> String {
    format!("{BOMBS_FIELD_PREFIX}{},{}", slots.white, slots.black)
}

/// What a player knows of the opponent's bomb ([`BombView::opponent_bomb`]).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum OpponentBomb {
    /// Not chosen yet (the setup phase), or a variant without bombs.
    Unchosen,
    /// Chosen and not detonated: on one of the opponent's non-king pieces, or gone with a
    /// piece the opponent lost (see [`BombView::candidates`]).
    Hidden,
    /// Detonated: the opponent has no bomb, and everyone knows it.
    Detonated,
}

/// The states of the opponent's bomb consistent with a view.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct BombCandidates {
    /// Squares the bomb may stand on: every non-king piece of the opponent while its bomb is
    /// hidden, none otherwise.
    pub squares: Bitboard,
    /// True if the opponent may have no bomb: it detonated it, or it has lost a piece (to a
    /// capture or to the viewer's blast, which reveal nothing) that may have been the bomb.
    pub may_be_gone: bool,
}

/// A view whose opponent's bomb cannot be the one asked for ([`BombView::determinize`]).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct DeterminizeError {
    /// The bomb asked for.
    pub asked: Option<Square>,
    /// What the view allows.
    pub candidates: BombCandidates,
}

impl fmt::Display for DeterminizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.asked {
            Some(square) => write!(f, "the opponent's bomb cannot be on {square} in this view"),
            None => write!(f, "the opponent must still have its bomb in this view"),
        }
    }
}

impl std::error::Error for DeterminizeError {}

/// What one player of the bomb variant sees ([`Position::view`]): the full position with the
/// opponent's bomb erased, and what is public about it.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct BombView {
    viewer: Color,
    /// The full position with the opponent's bomb erased (its hash recomputed).
    masked: Position,
}

impl BombView {
    /// The player whose view this is.
    pub fn viewer(&self) -> Color {
        self.viewer
    }

    /// The pieces (all public).
    pub fn board(&self) -> &crate::Board {
        self.masked.board()
    }

    /// The side to move.
    pub fn turn(&self) -> Color {
        self.masked.turn()
    }

    /// The variant.
    pub fn variant(&self) -> Variant {
        self.masked.variant()
    }

    /// True in the setup phase.
    pub fn is_setup_phase(&self) -> bool {
        self.masked.is_setup_phase()
    }

    /// The viewer's own bomb.
    pub fn own_bomb(&self) -> Option<Square> {
        self.masked.bomb(self.viewer)
    }

    /// True if the viewer has detonated its bomb.
    pub fn own_detonated(&self) -> bool {
        self.masked.has_detonated(self.viewer)
    }

    /// What the viewer knows of the opponent's bomb.
    pub fn opponent_bomb(&self) -> OpponentBomb {
        let them = !self.viewer;
        if self.masked.has_detonated(them) {
            OpponentBomb::Detonated
        } else if self.masked.variant().rules().hidden_bombs && !self.masked.bomb_unchosen(them) {
            OpponentBomb::Hidden
        } else {
            OpponentBomb::Unchosen
        }
    }

    /// The states of the opponent's bomb consistent with this view. While the bomb is hidden:
    /// any non-king piece of the opponent, and no bomb at all if the opponent has fewer than
    /// 16 pieces (exact for games from the standard start, where pieces only leave the board
    /// and a bomb only goes with its piece; for a position set up from a FEN it assumes that
    /// a side with fewer than 16 pieces may have lost its bomb and one with 16 has not).
    pub fn candidates(&self) -> BombCandidates {
        let them = !self.viewer;
        match self.opponent_bomb() {
            OpponentBomb::Unchosen => {
                BombCandidates { squares: Bitboard::EMPTY, may_be_gone: false }
            }
            OpponentBomb::Detonated => {
                BombCandidates { squares: Bitboard::EMPTY, may_be_gone: true }
            }
            OpponentBomb::Hidden => {
                let b = self.masked.board();
                let theirs = b.by_color(them);
                BombCandidates { squares: theirs & !b.kings(), may_be_gone: theirs.count() < 16 }
            }
        }
    }

    /// The full state in which the opponent's bomb is `opponent_bomb` (`None`: no bomb), if
    /// that is consistent with the view ([`BombView::candidates`]).
    pub fn determinize(&self, opponent_bomb: Option<Square>) -> Result<Position, DeterminizeError> {
        let candidates = self.candidates();
        let hidden = self.opponent_bomb() == OpponentBomb::Hidden;
        let ok = match opponent_bomb {
            Some(square) => hidden && candidates.squares.contains(square),
            None => !hidden || candidates.may_be_gone,
        };
        if !ok {
            return Err(DeterminizeError { asked: opponent_bomb, candidates });
        }
        let mut pos = self.masked;
        if hidden {
            pos.bombs.set(!self.viewer, opponent_bomb);
        }
        pos.hash = pos.compute_hash();
        Ok(pos)
    }

    /// A Zobrist hash of the view: the position's, with the opponent's hidden bomb left out
    /// (equal views hash equal, whatever the opponent's bomb; repetitions as a player sees
    /// them are counted with it).
    pub fn hash(&self) -> u64 {
        self.masked.hash()
    }

    /// The viewer's legal moves when it is to move (the opponent's bomb never changes them);
    /// `None` when the opponent is to move (its detonation is not known).
    pub fn legal_moves(&self) -> Option<MoveList> {
        (self.turn() == self.viewer).then(|| self.masked.legal_moves())
    }

    /// The FEN of the view: the position's FEN with the opponent's hidden bomb written `x`
    /// (also when it is in fact gone).
    pub fn fen(&self) -> String {
        let mut slots = self.masked.bomb_slots();
        if self.opponent_bomb() == OpponentBomb::Hidden {
            *slots.get_mut(!self.viewer) = BombSlot::Hidden;
        }
        if !self.masked.variant().rules().hidden_bombs {
            return self.masked.fen();
        }
        let fen = self.masked.fen();
        let (head, _) = split_bombs_field(&fen);
        format!("{head} {}", write_bombs_field(slots))
    }
}

/// How often `pos` occurred before in a game, as the side to move sees it: `earlier` holds
/// the game's positions before `pos`, oldest first. In the bomb variant two positions count
/// as the same when the mover's views of them are ([`BombView::hash`]), so
/// the count never depends on the opponent's hidden bomb; in the other variants this is the
/// plain count within the half-move clock.
pub fn view_repetitions(pos: &Position, earlier: &[Position]) -> usize {
    let window = pos.halfmoves() as usize;
    let recent = earlier.iter().rev().take(window);
    if pos.variant() == Variant::Bomb {
        let us = pos.turn();
        let hash = pos.view(us).hash();
        recent.filter(|p| p.turn() == us && p.view(us).hash() == hash).count()
    } else {
        recent.filter(|p| p.hash() == pos.hash()).count()
    }
}

impl Position {
    /// `color`'s bomb, if it has one on the board (bomb variant; `None` in every other).
    #[inline]
    pub fn bomb(&self, color: Color) -> Option<Square> {
        self.bombs.get(color)
    }

    /// True if `color` has detonated its bomb (bomb variant).
    #[inline]
    pub fn has_detonated(&self, color: Color) -> bool {
        self.bombs.detonated(color)
    }

    /// True if `color` has not chosen its bomb yet (the bomb variant's setup phase).
    fn bomb_unchosen(&self, color: Color) -> bool {
        self.bombs.unchosen(color)
    }

    /// Each side's bomb as the FEN's bombs field writes it.
    pub fn bomb_slots(&self) -> ByColor<BombSlot> {
        ByColor::new_with(|color| {
            if self.bomb_unchosen(color) {
                BombSlot::Unchosen
            } else if let Some(square) = self.bomb(color) {
                BombSlot::At(square)
            } else if self.has_detonated(color) {
                BombSlot::Detonated
            } else {
                BombSlot::Gone
            }
        })
    }

    /// The bombs field of the FEN (bomb variant), e.g. `bombs:d1,g8`.
    pub fn bombs_field(&self) -> String {
        write_bombs_field(self.bomb_slots())
    }

    /// What `viewer` sees of this position ([`BombView`]). In the other variants there is
    /// nothing hidden.
    pub fn view(&self, viewer: Color) -> BombView {
        let mut masked = *self;
        if masked.bomb(!viewer).is_some() {
            masked.bombs.set(!viewer, None);
        }
        masked.hash = masked.compute_hash();
        BombView { viewer, masked }
    }

    /// This position (of the bomb variant, as validated from a [`crate::Setup`]) with the
    /// bombs of a FEN's bombs field. Checks that each bomb square holds a non-king piece of
    /// its side and that `?` describes a setup phase (see [`crate::bomb`]).
    pub fn with_bombs(&self, slots: ByColor<BombSlot>) -> Result<Position, BombFieldError> {
        if !self.variant.rules().hidden_bombs {
            return Err(BombFieldError::NotBombVariant(self.variant));
        }
        let mut pos = *self;
        pos.bombs = BombState::NONE;
        for color in Color::ALL {
            match *slots.get(color) {
                BombSlot::At(square) => {
                    let ours = pos.board.by_color(color) & !pos.board.kings();
                    if !ours.contains(square) {
                        return Err(BombFieldError::NotAPiece { color, square });
                    }
                    pos.bombs.set(color, Some(square));
                }
                BombSlot::Detonated => pos.bombs.set_detonated(color),
                BombSlot::Unchosen => pos.bombs.set_unchosen(color),
                BombSlot::Gone => {}
                BombSlot::Hidden => return Err(BombFieldError::Hidden),
            }
        }
        let setup = match (slots.white, slots.black, pos.turn) {
            (BombSlot::Unchosen, BombSlot::Unchosen, Color::White) => true,
            (BombSlot::At(_), BombSlot::Unchosen, Color::Black) => true,
            (BombSlot::Unchosen, _, _) | (_, BombSlot::Unchosen, _) => {
                return Err(BombFieldError::SetupPhase(format!(
                    "{} with {} to move",
                    write_bombs_field(slots),
                    pos.turn
                )));
            }
            _ => false,
        };
        if setup {
            let setup_err = |why: &str| Err(BombFieldError::SetupPhase(why.to_string()));
            if pos.variant_outcome().is_some() {
                return setup_err("a setup position without both kings");
            }
            for color in Color::ALL {
                if pos.bombs.unchosen(color)
                    && (pos.board.by_color(color) & !pos.board.kings()).is_empty()
                {
                    return setup_err("a side to choose a bomb has no piece but its king");
                }
            }
            // Nobody is in check during the choices: Black would be captured when play starts
            // (White moves first), and a White check would make the position after White's
            // choice one whose side not to move is in check.
            for color in Color::ALL {
                if let Some(king) = pos.board.king_of(color)
                    && pos.is_attacked_for_king(king, color, pos.board.occupied())
                {
                    return setup_err("a king in check in a setup position");
                }
            }
            pos.ep_square = None;
        }
        debug_assert_eq!(setup, pos.is_setup_phase());
        pos.hash = pos.compute_hash();
        Ok(pos)
    }

    /// The squares a detonation of a bomb on `square` clears: the bomb's and every occupied
    /// square around it (pawns and kings included).
    pub fn detonation_blast(&self, square: Square) -> Bitboard {
        (attacks::king_attacks(square) & self.board.occupied()).with(square)
    }

    /// True if the side to move may detonate a bomb on `bomb`: the detonation removes its
    /// own king (legal, it loses or draws), or the enemy king, or leaves its king unattacked.
    pub(crate) fn detonation_is_legal(&self, bomb: Square) -> bool {
        let b = &self.board;
        let us = self.turn;
        let Some(king) = b.king_of(us) else { return false };
        let removed = self.detonation_blast(bomb);
        if removed.contains(king) || (removed & b.kings() & b.by_color(!us)).any() {
            return true;
        }
        let occ = b.occupied() & !removed;
        !(b.attackers(king, !us, occ) & !removed).any()
    }

    /// Appends the bomb choices of the side to move (its non-king pieces, a1 to h8).
    pub(crate) fn generate_bomb_choices(&self, moves: &mut MoveList) {
        let ours = self.board.by_color(self.turn) & !self.board.kings();
        for square in ours {
            moves.push(Move::bomb_choice(square));
        }
    }

    /// Appends the side to move's detonation, if it has a bomb and may detonate it.
    pub(crate) fn generate_detonation(&self, moves: &mut MoveList) {
        if let Some(bomb) = self.bomb(self.turn)
            && self.detonation_is_legal(bomb)
        {
            moves.push(Move::detonation(bomb));
        }
    }

    /// Plays a bomb choice: the side to move's bomb is the piece on the move's square; after
    /// Black's choice the setup phase ends. The clocks do not change.
    #[cold]
    pub(crate) fn play_bomb_choice(&mut self, m: Move) {
        let us = self.turn;
        let square = m.from();
        let mut hash = self.hash ^ zobrist::black_to_move_key();
        if let Some(old) = self.bombs.set(us, Some(square)) {
            hash ^= zobrist::bomb_key(us, old);
        }
        hash ^= zobrist::bomb_key(us, square);
        if us == Color::Black {
            // The setup phase ends (Black chooses last).
            hash ^= zobrist::setup_phase_key();
        }
        self.turn = !us;
        self.hash = hash;
    }

    /// Plays a bomb choice or a detonation (then returns true), or carries the bombs before a
    /// board move (then returns false: the board move is still to be played).
    pub(crate) fn play_bomb_move(&mut self, m: Move) -> bool {
        if self.is_setup_phase() {
            self.play_bomb_choice(m);
            true
        } else if m.is_detonation() {
            self.play_detonation(m);
            true
        } else {
            self.carry_bombs(m);
            false
        }
    }

    /// Before a board move of the bomb variant: a bomb that moves goes along (a rook bomb
    /// that castles to the rook's square; a promoting pawn bomb stays the bomb), a captured
    /// bomb is gone.
    pub(crate) fn carry_bombs(&mut self, m: Move) {
        let us = self.turn;
        let mut hash = self.hash;
        if let Some(bomb) = self.bomb(us) {
            let to = if m.is_castle() {
                (bomb == m.to()).then(|| Position::castle_rook_to(m))
            } else {
                (bomb == m.from()).then_some(m.to())
            };
            if let Some(to) = to {
                hash ^= zobrist::bomb_key(us, bomb) ^ zobrist::bomb_key(us, to);
                self.bombs.set(us, Some(to));
            }
        }
        if let Some(bomb) = self.bomb(!us)
            && !m.is_castle()
        {
            let captured = if m.is_en_passant() {
                Square::new(m.to().index() as u8 ^ 8)
            } else {
                Some(m.to())
            };
            if captured == Some(bomb) {
                hash ^= zobrist::bomb_key(!us, bomb);
                self.bombs.set(!us, None);
            }
        }
        self.hash = hash;
    }

    /// Plays a detonation: removes the bomb and every piece around it (castling rights go
    /// with their rooks and kings; a bomb of the opponent caught in the blast is gone). The
    /// half-move clock restarts (pieces left the board).
    #[cold]
    pub(crate) fn play_detonation(&mut self, m: Move) {
        let us = self.turn;
        let mut hash = self.hash ^ zobrist::black_to_move_key();
        let removed = self.detonation_blast(m.from());
        for square in removed {
            if let Some(piece) = self.board.remove_piece_at(square) {
                hash ^= zobrist::piece_key(piece, square);
            }
        }
        for color in Color::ALL {
            if let Some(bomb) = self.bomb(color)
                && removed.contains(bomb)
            {
                hash ^= zobrist::bomb_key(color, bomb);
                self.bombs.set(color, None);
            }
        }
        self.bombs.set_detonated(us);
        let mut rights = self.castling_rights & !removed;
        for color in Color::ALL {
            if self.board.king_of(color).is_none() {
                rights &= !Bitboard::rank(color.back_rank());
            }
        }
        hash ^= zobrist::castling_keys(self.castling_rights ^ rights);
        self.castling_rights = rights;
        if let Some(ep) = self.ep_square.take() {
            hash ^= zobrist::en_passant_key(ep.file().index());
        }
        self.halfmoves = 0;
        self.fullmoves = self.fullmoves.saturating_add(u32::from(us == Color::Black));
        self.turn = !us;
        self.hash = hash;
    }

    /// The role of `color`'s bomb, if it has one.
    pub fn bomb_role(&self, color: Color) -> Option<Role> {
        self.bomb(color).and_then(|square| self.board.role_at(square))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bombs_field_parses_and_rejects_what_it_should() {
        let ok = parse_bombs_field("bombs:d1,g8").unwrap();
        assert_eq!(ok.white, BombSlot::At(Square::D1));
        assert_eq!(ok.black, BombSlot::At(Square::G8));
        assert_eq!(parse_bombs_field("bombs:?,?").unwrap().white, BombSlot::Unchosen);
        assert_eq!(parse_bombs_field("bombs:*,-").unwrap().black, BombSlot::Gone);
        for bad in ["bombs:", "bombs:d1", "bombs:d9,g8", "bombs:d1,g8,a1", "bomb:d1,g8", "bombs:,"]
        {
            assert!(matches!(parse_bombs_field(bad), Err(BombFieldError::Syntax(_))), "{bad}");
        }
        assert_eq!(parse_bombs_field("bombs:d1,x"), Err(BombFieldError::Hidden));
    }

    #[test]
    fn bomb_state_packs_both_squares_and_detonations() {
        let mut state = BombState::NONE;
        assert_eq!((state.get(Color::White), state.get(Color::Black)), (None, None));
        for sq in (0..64).filter_map(Square::new) {
            state.set(Color::White, Some(sq));
            state.set(Color::Black, Some(sq.flip_vertical()));
            assert_eq!(state.get(Color::White), Some(sq));
            assert_eq!(state.get(Color::Black), Some(sq.flip_vertical()));
        }
        state.set_detonated(Color::Black);
        assert!(state.detonated(Color::Black) && !state.detonated(Color::White));
        assert_eq!(state.set(Color::Black, None), Some(Square::H1));
        assert_eq!(state.get(Color::White), Some(Square::H8), "the other side untouched");
        let flipped = state.flip_colors();
        assert_eq!(flipped.get(Color::Black), Some(Square::H1));
        assert!(flipped.detonated(Color::White) && !flipped.detonated(Color::Black));
        // The packing keeps a position at 104 bytes (112 was slower in atomic perft).
        assert_eq!(std::mem::size_of::<Position>(), 104);
    }

    #[test]
    fn split_finds_only_a_trailing_bombs_field() {
        assert_eq!(
            split_bombs_field("8/8 w - - 0 1 bombs:a1,b2"),
            ("8/8 w - - 0 1", Some("bombs:a1,b2"))
        );
        assert_eq!(split_bombs_field("8/8 w - - 0 1"), ("8/8 w - - 0 1", None));
        assert_eq!(split_bombs_field("bombs:a1,b2"), ("bombs:a1,b2", None));
    }
}
