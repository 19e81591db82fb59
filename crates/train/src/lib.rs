//! # atomzero-train
//!
//! The trainer: a plain training loop (as in Burn's custom-training-loop example) over the
//! replay window, with two engines for the step: Burn's autodiff (GPUs, and nets the other
//! does not implement) and `atomzero-backprop` (the CPU; several times faster there).
//!
//! - [`TrainerConfig`]: batch size, optimizer (AdamW or SGD with Nesterov momentum), warm-up
//!   then constant, cosine or step learning rate, gradient clipping, value-target mixing,
//!   window size and the bound on how often a position is sampled, checkpoint cadence.
//! - [`data`]: batches sampled from the window; positions are rebuilt by replaying the stored
//!   games and encoded on the fly into sparse batches (legal moves with their targets).
//! - [`burn`]: the Burn step (losses, autodiff, Burn's optimizers) and its batch.
//! - [`engine`]: the engine a run uses (`train.backend`), one type over both.
//! - [`memory`]: whether a net and batch can be trained in this machine's memory, checked
//!   before anything is allocated.
//! - [`checkpoint`]: weights, optimizer state, step and sampler state, written as a directory
//!   renamed into place; the newest M are kept, and training resumes from the newest exactly
//!   (same step, same learning rate, same batches).
//! - [`tensorboard`]: a small TensorBoard event-file writer and reader of our own.
//! - [`belief`]: the bomb variant's belief over the opponent's bomb, fitted on the window's
//!   newest games at the end of a call ([`TrainSummary::belief`]), with its held-out accuracy.
//! - [`validate`]: a network's losses on held-out shards, in inference mode (no training).
//! - [`train`](train()): the loop.

pub mod belief;
pub mod burn;
pub mod checkpoint;
pub mod config;
pub mod data;
pub mod engine;
pub mod memory;
pub mod tensorboard;
pub mod trainer;
pub mod validate;

pub use checkpoint::{CheckpointError, Engine, TrainState};
pub use config::{Backend, MaxLengthTarget, OptimizerKind, Schedule, TrainerConfig};
pub use trainer::{
    Data, StepReport, TrainError, TrainOptions, TrainSummary, pick_weighted, surprise_table, train,
};
pub use validate::{Validation, validation_losses};
