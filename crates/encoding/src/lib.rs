//! # atomzero-encoding
//!
//! What the network sees and what its policy output means; no Burn here.
//!
//! - [`Encoder`]: position (+ optional history) → input planes, always from the side to move's
//!   view (the board is mirrored top to bottom when Black is to move, and "our" pieces come
//!   first). [`ENCODING_VERSION`] is recorded by every saved network; the Balanced start's
//!   setup phase marks the removable pawns (plane 16, version 2); the bomb variant has
//!   [`BOMB_PLANES`] planes of its own, from the side to move's view only (in a network
//!   whose encoder has `bomb = true`).
//! - [`policy`]: move ↔ policy index in AlphaZero's 8×8×73 layout (4672 logits); a pawn
//!   removal of the Balanced start is a from-square action on [`REMOVAL_PLANE`], and so are
//!   the bomb variant's choice and detonation (with [`DETONATION_PLANE`]).
//! - [`Batch`]: an `ndarray` batch `[B, planes, 8, 8]` filled in place (no per-element copies).

pub mod planes;
pub mod policy;

pub use planes::{
    BOMB_PLANES, Batch, ENCODING_VERSION, Encoder, EncoderConfig, READABLE_ENCODING_VERSIONS,
};
pub use policy::{
    DETONATION_PLANE, POLICY_PLANES, POLICY_SIZE, REMOVAL_PLANE, index_to_move, move_to_index,
    reply_index,
};
