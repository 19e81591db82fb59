//! Move ↔ policy index, AlphaZero's 8×8×73 layout, from the side to move's view.
//!
//! `index = plane * 64 + from`, where `from` is the origin square as the mover sees it (mirrored
//! top to bottom for Black) and `plane` is the move type:
//!
//! | planes | move type |
//! |---|---|
//! | 0–55 | "queen" moves: `direction * 7 + (distance - 1)`, directions N, NE, E, SE, S, SW, W, NW (from the mover's view), distance 1–7; queen promotions included |
//! | 56–63 | knight moves: (+1,+2), (+2,+1), (+2,−1), (+1,−2), (−1,−2), (−2,−1), (−2,+1), (−1,+2) as (file, rank) steps |
//! | 64–72 | under-promotions: `64 + 3 * piece + direction`, piece knight/bishop/rook, direction capture-left (file −1), straight, capture-right (file +1) |
//!
//! Castling is encoded as the king moving onto its own rook (lc0's convention; the same in
//! standard and Chess960 castling), a horizontal "queen" move that no other move can have.
//! The plane-major order matches a convolutional policy head's `[73, 8, 8]` output flattened.
//!
//! The removal of a pawn in the setup phase of the Balanced start (`atomzero_rules::start`) is
//! a from-square-only action on [`REMOVAL_PLANE`] (plane 28, the "queen" move south by one) at
//! the pawn's square. Only removals are legal in the setup phase, so the index clashes with no
//! legal move there; elsewhere no removal is legal. The layout is unchanged: a network of any
//! version has these logits.
//!
//! The bomb variant's two moves from a square to itself (`atomzero_rules::bomb`) use the same
//! from-square logits:
//!
//! - the choice of the bomb (`@d1`, only legal in the setup phase, where nothing else is) is
//!   [`REMOVAL_PLANE`] at the piece's square, as a removal;
//! - a detonation (`d1*`, legal beside the board moves) is [`DETONATION_PLANE`] (the first
//!   knight step) at the bomb's square, or [`REMOVAL_PLANE`] (the "queen" step south) when the
//!   bomb is a knight: the piece on the square is the only one that moves from it, a knight
//!   never makes a "queen" step and no other piece a knight step, so neither clashes with a
//!   legal move.

use atomzero_rules::{Color, Move, Position, Role, Square, Variant};

/// Move types per square.
pub const POLICY_PLANES: usize = 73;
/// Policy logits: 8 × 8 × 73.
pub const POLICY_SIZE: usize = 64 * POLICY_PLANES;
/// The plane of a removal in the Balanced start's setup phase: "queen" move S, distance 1.
/// Also the bomb variant's choice of a bomb, and the detonation of a knight bomb.
pub const REMOVAL_PLANE: usize = 4 * 7;
/// The plane of the bomb variant's detonation of a bomb that is not a knight: the first knight
/// step, (+1, +2).
pub const DETONATION_PLANE: usize = 56;

const DIRECTIONS: [(i32, i32); 8] =
    [(0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1)];
const KNIGHT: [(i32, i32); 8] =
    [(1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2)];

#[inline]
fn view(sq: Square, us: Color) -> Square {
    match us {
        Color::White => sq,
        Color::Black => sq.flip_vertical(),
    }
}

/// The policy index of legal move `m` in `pos`.
pub fn move_to_index(pos: &Position, m: Move) -> usize {
    let us = pos.turn();
    let from = view(m.from(), us);
    if m.is_removal() || m.is_bomb_choice() {
        return REMOVAL_PLANE * 64 + from.index();
    }
    if m.is_detonation() {
        return detonation_plane(pos, m.from()) * 64 + from.index();
    }
    let to = view(m.to(), us); // for castling: the rook's square
    let df = to.file().index() as i32 - from.file().index() as i32;
    let dr = to.rank().index() as i32 - from.rank().index() as i32;
    let plane = match m.promotion() {
        Some(role @ (Role::Knight | Role::Bishop | Role::Rook)) => {
            let piece = match role {
                Role::Knight => 0,
                Role::Bishop => 1,
                _ => 2,
            };
            64 + 3 * piece + (df.clamp(-1, 1) + 1) as usize
        }
        _ => {
            if let Some(k) = KNIGHT.iter().position(|&d| d == (df, dr)) {
                56 + k
            } else {
                let step = (df.signum(), dr.signum());
                let dir = DIRECTIONS.iter().position(|&d| d == step).unwrap_or(0);
                let distance = df.abs().max(dr.abs()).clamp(1, 7) as usize;
                dir * 7 + distance - 1
            }
        }
    };
    plane * 64 + from.index()
}

/// The plane of a detonation of the bomb on `square`: see the module docs.
fn detonation_plane(pos: &Position, square: Square) -> usize {
    if pos.board().role_at(square) == Some(Role::Knight) { REMOVAL_PLANE } else { DETONATION_PLANE }
}

/// The index of the opponent's reply `m`, a legal move of `after` (the position after the
/// side to move's move), for the side to move's auxiliary opponent-policy head (KataGo's
/// opponent policy): the move's plane as the opponent sees it, at its from-square mirrored
/// back into the side to move's view (`after`'s board is the opponent's view, upside down from
/// ours). A convolutional head then finds the opponent's piece at the square where it sees it.
pub fn reply_index(after: &Position, m: Move) -> usize {
    let index = move_to_index(after, m);
    (index / 64) * 64 + ((index % 64) ^ 56)
}

/// The legal move of `pos` with policy index `index`, if any.
pub fn index_to_move(pos: &Position, index: usize) -> Option<Move> {
    if index >= POLICY_SIZE {
        return None;
    }
    let us = pos.turn();
    let (plane, from_view) = (index / 64, index % 64);
    let from_view = Square::new(from_view as u8)?;
    if pos.is_setup_phase() {
        let square = view(from_view, us);
        let setup_move = if pos.variant() == Variant::Bomb {
            Move::bomb_choice(square)
        } else {
            Move::removal(square)
        };
        return (plane == REMOVAL_PLANE && pos.is_legal(setup_move)).then_some(setup_move);
    }
    if pos.variant() == Variant::Bomb && (plane == REMOVAL_PLANE || plane == DETONATION_PLANE) {
        let square = view(from_view, us);
        let detonation = Move::detonation(square);
        if plane == detonation_plane(pos, square) && pos.is_legal(detonation) {
            return Some(detonation);
        }
    }
    let (df, dr, promotion) = match plane {
        0..=55 => {
            let (f, r) = DIRECTIONS[plane / 7];
            let distance = (plane % 7 + 1) as i32;
            (f * distance, r * distance, None)
        }
        56..=63 => {
            let (f, r) = KNIGHT[plane - 56];
            (f, r, None)
        }
        _ => {
            let piece = [Role::Knight, Role::Bishop, Role::Rook][(plane - 64) / 3];
            ((plane - 64) as i32 % 3 - 1, 1, Some(piece))
        }
    };
    let to_view = from_view.offset(df, dr)?;
    let (from, to) = (view(from_view, us), view(to_view, us));
    pos.legal_moves().iter().copied().find(|m| {
        m.from() == from
            && m.to() == to
            && match promotion {
                Some(role) => m.promotion() == Some(role),
                None => matches!(m.promotion(), None | Some(Role::Queen)),
            }
    })
}
