//! # atomzero-encoding
//!
//! What the network sees and what its policy output means; no Burn here.
//!
//! - [`Encoder`]: position (+ optional history) → input planes, always from the side to move's
//!   view (the board is mirrored top to bottom when Black is to move, and "our" pieces come
//!   first). [`ENCODING_VERSION`] is recorded by every saved network.
//! - [`policy`]: move ↔ policy index in AlphaZero's 8×8×73 layout (4672 logits).
//! - [`Batch`]: an `ndarray` batch `[B, planes, 8, 8]` filled in place (no per-element copies).

pub mod planes;
pub mod policy;

pub use planes::{Batch, ENCODING_VERSION, Encoder, EncoderConfig};
pub use policy::{POLICY_PLANES, POLICY_SIZE, index_to_move, move_to_index};
