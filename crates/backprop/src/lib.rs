//! # atomzero-backprop
//!
//! The residual net's training step on the CPU without Burn: what `atomzero-infer` is to
//! Burn's forward pass, this crate is to Burn's autodiff. On a 2-core CPU Burn's `flex`
//! backend trains the tiny net at ~22% of the machine's measured peak, and training took
//! ~70% of a generation of `atomzero run`; this crate runs the same step on the matrix
//! kernel of `atomzero-infer`, with every 3×3 convolution as Winograd F(4×4, 3×3) products
//! forwards and backwards (a quarter of the direct multiply-adds).
//!
//! - [`Params`] (`params`): the parameters as flat buffers under Burn's names and layouts;
//!   to and from the safetensors bytes `atomzero_nn` reads and writes.
//! - [`SparseBatch`] (`batch`): inputs, each position's legal policy indices with their
//!   targets, WDL targets.
//! - [`CpuTrainer`] (`trainer`): one step — forward with a tape, the losses (masked policy
//!   cross-entropy + weighted WDL cross-entropy, as `atomzero_nn::losses`), backward, the
//!   [`Optimizer`] (`optim`: AdamW or Nesterov SGD with Burn's semantics) — data-parallel
//!   over shards of the batch with batch norm synchronised (`shard` holds one shard's work,
//!   `prepared` the packed weights of a step).
//!
//! Gradients equal Burn's autodiff to within float rounding and AdamW and SGD steps equal
//! Burn's (tested in `atomzero-train`'s `tests/engines.rs`, which has both engines). Squeeze-excitation is not implemented: [`Params`] refuses
//! such nets and the caller trains them with Burn.

pub mod batch;
pub mod optim;
pub mod params;
mod prepared;
mod shard;
pub mod trainer;

pub use batch::{BatchError, SparseBatch};
pub use optim::{OPTIMIZER_FORMAT_VERSION, Optimizer, OptimizerConfig};
pub use params::{Params, ParamsError, TensorInfo};
pub use trainer::{CpuTrainer, SHARDS, StepError, StepStats};
