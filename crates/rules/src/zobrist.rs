//! Zobrist hashing keys, generated at compile time from a fixed seed (splitmix64).
//!
//! The hash of a position XORs: one key per (piece, square), one per castling-right rook square,
//! one per en-passant file (only when an en-passant capture is legal), one when Black is to
//! move, one in the setup phase (of the Balanced start, before White's removal: see
//! [`crate::start`]; of the bomb variant, before both bombs are chosen), and in the bomb
//! variant one per (colour, square) of each side's bomb ([`crate::bomb`]). Keys are drawn in
//! that order, so adding the last ones changed no other. [`crate::Position::hash`] is updated incrementally by `play` and always equals
//! [`crate::Position::compute_hash`].

use crate::bitboard::Bitboard;
use crate::color::Color;
use crate::role::Piece;
use crate::square::Square;

const fn splitmix(state: u64) -> (u64, u64) {
    let state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (state, z ^ (z >> 31))
}

const N_KEYS: usize = 12 * 64 + 64 + 8 + 1 + 1 + 2 * 64;

static KEYS: [u64; N_KEYS] = {
    let mut keys = [0u64; N_KEYS];
    let mut state = 0x4174_6F6D_5A65_726F_u64; // "AtomZero"
    let mut i = 0;
    while i < N_KEYS {
        let (next, value) = splitmix(state);
        state = next;
        keys[i] = value;
        i += 1;
    }
    keys
};

/// Key of `piece` standing on `sq`.
#[inline]
pub fn piece_key(piece: Piece, sq: Square) -> u64 {
    KEYS[(piece.color.index() * 6 + piece.role.index()) * 64 + sq.index()]
}

/// Key of a castling right held by the rook on `sq`.
#[inline]
pub fn castling_key(sq: Square) -> u64 {
    KEYS[12 * 64 + sq.index()]
}

/// XOR of the castling keys of every square in `rights`.
#[inline]
pub fn castling_keys(rights: Bitboard) -> u64 {
    rights.into_iter().fold(0, |h, sq| h ^ castling_key(sq))
}

/// Key of an en-passant square on file `file` (0..8).
#[inline]
pub fn en_passant_key(file: u8) -> u64 {
    KEYS[12 * 64 + 64 + (file as usize & 7)]
}

/// Key XORed in when Black is to move.
#[inline]
pub fn black_to_move_key() -> u64 {
    KEYS[12 * 64 + 64 + 8]
}

/// Key XORed in during the setup phase of the Balanced start.
#[inline]
pub fn setup_phase_key() -> u64 {
    KEYS[12 * 64 + 64 + 8 + 1]
}

/// Key of `color`'s bomb standing on `sq` (bomb variant).
#[inline]
pub fn bomb_key(color: Color, sq: Square) -> u64 {
    KEYS[12 * 64 + 64 + 8 + 1 + 1 + color.index() * 64 + sq.index()]
}
