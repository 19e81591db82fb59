//! # atomzero-replay
//!
//! Training data stored as **games**, not tensors (design.md, "Training data"): a start
//! position, the moves, and for each move that was a training target the search's visit
//! counts over the legal moves (sparse) and the root WDL; then the result. The trainer replays
//! each game to rebuild positions and encodes them itself, so the input encoding can change
//! without regenerating data.
//!
//! - [`format`]: the records and the shard layout, field by field.
//! - [`shard`]: writing a shard atomically (temporary name, fsync, rename) and reading it back
//!   with every checksum verified; a corrupt or truncated shard is an error naming the file.
//! - [`window`]: the newest N recorded positions of a directory of shards, sampled uniformly.

pub mod format;
pub mod shard;
pub mod window;

pub use format::{EndReason, GameRecord, MoveRecord, SearchTarget, ShardMeta};
pub use shard::{ShardError, decode_shard, encode_shard, read_shard, write_shard};
pub use window::{ReplayWindow, Sample, WindowError};
