//! # atomzero-train
//!
//! The trainer: a plain Burn training loop (as in Burn's custom-training-loop example) over the
//! replay window.
//!
//! - [`TrainerConfig`]: batch size, optimizer (AdamW or SGD with Nesterov momentum), warm-up
//!   then constant, cosine or step learning rate, gradient clipping, value-target mixing,
//!   window size and the bound on how often a position is sampled, checkpoint cadence.
//! - [`data`]: batches sampled from the window; positions are rebuilt by replaying the stored
//!   games and encoded on the fly.
//! - [`checkpoint`]: weights (Burn record, parameter ids included), optimizer state, step and
//!   sampler state, written as a directory renamed into place; the newest M are kept, and
//!   training resumes from the newest exactly (same step, same learning rate, same batches).
//! - [`tensorboard`]: a small TensorBoard event-file writer and reader of our own.
//! - [`train`](train()): the loop.

pub mod checkpoint;
pub mod config;
pub mod data;
pub mod tensorboard;
pub mod trainer;

pub use checkpoint::{CheckpointError, TrainState};
pub use config::{OptimizerKind, Schedule, TrainerConfig};
pub use trainer::{StepReport, TrainError, TrainOptions, TrainSummary, train};
