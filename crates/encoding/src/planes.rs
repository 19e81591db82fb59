//! Input planes.
//!
//! Layout for encoding version 2, each plane 8×8 in rank-major order from the side to move's
//! view (rank 0 = the mover's first rank, file 0 = the a-file):
//!
//! | planes | content |
//! |---|---|
//! | 0–5 | the mover's pawns, knights, bishops, rooks, queens, king (1.0 where present) |
//! | 6–11 | the opponent's pieces, same order |
//! | 12 | 1.0 everywhere if the position occurred once before |
//! | 13 | 1.0 everywhere if it occurred twice or more before |
//! | 14 | the mover's rooks that may still castle (1.0 on their squares: Chess960-proof) |
//! | 15 | the opponent's castling rooks |
//! | 16 | the en-passant square (only when a capture there is legal); in the setup phase of the Balanced start, the squares of the pawns that may be removed (all 16) |
//! | 17 | the half-move clock / 100, everywhere |
//! | 18 | 1.0 everywhere (lets zero-padded convolutions see the board edge) |
//! | 19–23 | the variant, one-hot over `Variant::ALL` order (atomic, nocheckatomic, atomar, deathmatch, pawnblast), everywhere |
//! | 24 + 12·k … | with `history = H`: for k = 0..H, the 12 piece planes of the position k+1 plies earlier (same view as now: the current mover's pieces first, flipped as now); zeros before the game's start |
//! | 24 + 12·H + b | with `bomb = true`, the bomb variant's [`BOMB_PLANES`] planes, b = 0..6, below |
//!
//! The bomb variant's planes (all zero in the other variants; a bomb position has no variant
//! one-hot in planes 19–23). They are written from the side to move's view
//! ([`atomzero_rules::Position::view`]) only, never from the opponent's hidden bomb:
//!
//! | b | content |
//! |---|---|
//! | 0 | the mover's own bomb (1.0 on its square, while it is on the board) |
//! | 1 | 1.0 everywhere in the setup phase: the mover chooses its bomb now |
//! | 2 | 1.0 everywhere if the mover has detonated its bomb |
//! | 3 | 1.0 everywhere if the opponent's bomb is hidden (chosen, not detonated; it may be gone with a lost piece) |
//! | 4 | 1.0 everywhere if the opponent has detonated its bomb |
//! | 5 | 1.0 everywhere if the opponent may have lost its bomb with a piece (`BombCandidates::may_be_gone` while hidden) |
//!
//! Every input of a bomb position is public or the mover's own: the board, castling rights,
//! en passant and clocks are public, the bomb planes come from the mover's view, and the
//! repetition count is the caller's (count it over the mover's views:
//! [`atomzero_rules::view_repetitions`]).
//! Two full states that differ only in the opponent's bomb encode identically (tested).
//!
//! The colour of the side to move is deliberately absent: a position and its colour-flipped
//! mirror encode identically.
//!
//! Versions: 2 added the Balanced start's setup phase (plane 16 above; without it the setup
//! position would encode as the standard start). Every other position encodes exactly as in
//! version 1, so version-1 networks are read ([`READABLE_ENCODING_VERSIONS`]) and play the
//! standard start unchanged; only the setup position is new to them. The bomb variant's
//! planes are an option of the encoder (`bomb = true`, like `history`), not a new version: an
//! encoder without them has exactly version 2's planes and every position of the other
//! variants encodes as before; a build older than the option refuses a network that has it
//! (its config has an unknown field).

use atomzero_rules::{Bitboard, Color, OpponentBomb, Position, Role, Variant};
use ndarray::{Array4, ArrayViewMut3};
use serde::{Deserialize, Serialize};

/// Bumped whenever the plane layout changes; saved nets record it. The bomb variant's planes
/// did not change it: they are an option of the encoder (`bomb`, as `history` is), and a
/// network without them has exactly version 2's planes.
pub const ENCODING_VERSION: u32 = 2;

/// The encoding versions of networks this build reads: version 1 encodes every position it
/// had exactly as version 2 does.
pub const READABLE_ENCODING_VERSIONS: std::ops::RangeInclusive<u32> = 1..=ENCODING_VERSION;

const PIECE_PLANES: usize = 12;
const BASE_PLANES: usize = 24;

/// The bomb variant's planes (after the history planes) of an encoder with `bomb = true`.
pub const BOMB_PLANES: usize = 6;

/// Encoder settings (part of a network's architecture).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EncoderConfig {
    /// Earlier positions to include (0 = none).
    #[serde(default)]
    pub history: usize,
    /// The bomb variant's planes ([`BOMB_PLANES`] more inputs; a network of the bomb variant
    /// needs them). Absent from a saved config when false, so the configs of other networks
    /// read and write as before.
    #[serde(default, skip_serializing_if = "is_false")]
    pub bomb: bool,
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// Turns positions into input planes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Encoder {
    config: EncoderConfig,
}

impl Encoder {
    /// An encoder with `config`.
    pub fn new(config: EncoderConfig) -> Encoder {
        Encoder { config }
    }

    /// The settings.
    pub fn config(&self) -> EncoderConfig {
        self.config
    }

    /// Number of input planes.
    pub fn planes(&self) -> usize {
        BASE_PLANES + PIECE_PLANES * self.config.history + self.bomb_planes()
    }

    /// The bomb variant's planes: [`BOMB_PLANES`] with `bomb`, else none.
    fn bomb_planes(&self) -> usize {
        if self.config.bomb { BOMB_PLANES } else { 0 }
    }

    /// Writes the planes of `pos` into `out` (`[planes, 8, 8]`, overwritten entirely).
    /// `history` holds earlier positions, most recent first (extra entries are ignored);
    /// `repetitions` is how often `pos` occurred before ([`atomzero_rules::Game::repetitions`]).
    pub fn encode(
        &self,
        pos: &Position,
        history: &[Position],
        repetitions: usize,
        mut out: ArrayViewMut3<'_, f32>,
    ) {
        out.fill(0.0);
        let us = pos.turn();
        let flat = out.as_slice_mut();
        match flat {
            Some(flat) => self.encode_flat(pos, us, history, repetitions, flat),
            None => {
                // Non-contiguous view: encode into a scratch buffer, then copy once.
                let mut scratch = vec![0.0f32; self.planes() * 64];
                self.encode_flat(pos, us, history, repetitions, &mut scratch);
                for (dst, src) in out.iter_mut().zip(scratch) {
                    *dst = src;
                }
            }
        }
    }

    /// Encodes into a flat, zeroed slice of `planes * 64` floats.
    pub fn encode_flat(
        &self,
        pos: &Position,
        us: Color,
        history: &[Position],
        repetitions: usize,
        flat: &mut [f32],
    ) {
        debug_assert_eq!(flat.len(), self.planes() * 64);
        let plane = |flat: &mut [f32], p: usize, bb: Bitboard| {
            let base = p * 64;
            for sq in bb {
                flat[base + view_index(sq.index(), us)] = 1.0;
            }
        };
        let fill = |flat: &mut [f32], p: usize, value: f32| {
            flat[p * 64..(p + 1) * 64].fill(value);
        };
        write_pieces(pos, us, flat, 0, &plane);
        if repetitions >= 1 {
            fill(flat, 12, 1.0);
        }
        if repetitions >= 2 {
            fill(flat, 13, 1.0);
        }
        let rights = pos.castling_rights();
        plane(flat, 14, rights & pos.board().by_color(us));
        plane(flat, 15, rights & pos.board().by_color(!us));
        if let Some(ep) = pos.ep_square() {
            plane(flat, 16, Bitboard::from(ep));
        }
        let bomb = pos.variant() == Variant::Bomb;
        if pos.is_setup_phase() && !bomb {
            plane(flat, 16, pos.board().pawns());
        }
        fill(flat, 17, (pos.halfmoves().min(100) as f32) / 100.0);
        fill(flat, 18, 1.0);
        // The variants of `Variant::ALL`; the bomb variant has its own planes instead.
        if let Some(variant_index) = Variant::ALL.iter().position(|&v| v == pos.variant()) {
            fill(flat, 19 + variant_index, 1.0);
        }
        for (k, earlier) in history.iter().take(self.config.history).enumerate() {
            write_pieces(earlier, us, flat, BASE_PLANES + PIECE_PLANES * k, &plane);
        }
        if bomb && self.config.bomb {
            // Only what `us` sees: its own bomb and what is public about the other.
            let first = BASE_PLANES + PIECE_PLANES * self.config.history;
            let view = pos.view(us);
            if let Some(own) = view.own_bomb() {
                plane(flat, first, Bitboard::from(own));
            }
            if view.is_setup_phase() {
                fill(flat, first + 1, 1.0);
            }
            if view.own_detonated() {
                fill(flat, first + 2, 1.0);
            }
            match view.opponent_bomb() {
                OpponentBomb::Hidden => {
                    fill(flat, first + 3, 1.0);
                    if view.candidates().may_be_gone {
                        fill(flat, first + 5, 1.0);
                    }
                }
                OpponentBomb::Detonated => fill(flat, first + 4, 1.0),
                OpponentBomb::Unchosen => {}
            }
        }
    }
}

/// Index within a plane of square `sq` seen by `us` (mirrored top to bottom for Black).
#[inline]
fn view_index(sq: usize, us: Color) -> usize {
    match us {
        Color::White => sq,
        Color::Black => sq ^ 56,
    }
}

fn write_pieces(
    pos: &Position,
    us: Color,
    flat: &mut [f32],
    first: usize,
    plane: &impl Fn(&mut [f32], usize, Bitboard),
) {
    let board = pos.board();
    for (i, role) in Role::ALL.into_iter().enumerate() {
        plane(flat, first + i, board.by_role(role) & board.by_color(us));
        plane(flat, first + 6 + i, board.by_role(role) & board.by_color(!us));
    }
}

/// A batch of encoded positions, `[B, planes, 8, 8]`, reused between batches.
#[derive(Clone, Debug)]
pub struct Batch {
    encoder: Encoder,
    data: Array4<f32>,
    len: usize,
}

impl Batch {
    /// An empty batch with room for `capacity` positions.
    pub fn new(encoder: Encoder, capacity: usize) -> Batch {
        Batch { encoder, data: Array4::zeros((capacity.max(1), encoder.planes(), 8, 8)), len: 0 }
    }

    /// Number of positions added since the last [`Batch::clear`].
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if no position was added.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Forgets the positions (keeps the memory).
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Encodes a position into the next slot, growing the buffer if needed.
    pub fn push(&mut self, pos: &Position, history: &[Position], repetitions: usize) {
        if self.len == self.data.shape()[0] {
            let mut bigger = Array4::zeros((self.len * 2, self.encoder.planes(), 8, 8));
            bigger.slice_mut(ndarray::s![..self.len, .., .., ..]).assign(&self.data);
            self.data = bigger;
        }
        let slot = self.data.index_axis_mut(ndarray::Axis(0), self.len);
        self.encoder.encode(pos, history, repetitions, slot);
        self.len += 1;
    }

    /// The filled part, `[len, planes, 8, 8]`, contiguous (row-major).
    pub fn as_slice(&self) -> &[f32] {
        let n = self.len * self.encoder.planes() * 64;
        &self.data.as_slice().unwrap_or(&[])[..n]
    }

    /// The filled part as an array view.
    pub fn view(&self) -> ndarray::ArrayView4<'_, f32> {
        self.data.slice(ndarray::s![..self.len, .., .., ..])
    }

    /// The encoder.
    pub fn encoder(&self) -> Encoder {
        self.encoder
    }
}
