//! The measurements behind `atomzero bench`: each prints its figures to a writer, beside a
//! reference measured in the same run (never a constant from another machine).
//!
//! | module | `atomzero bench ...` | reference measured in the same run |
//! |---|---|---|
//! | [`net`] | `net`: inference positions/s (Burn flex, atomzero-infer on one thread and on every core), training samples/s (Burn, atomzero-backprop) | a cache-resident sgemm (the machine's peak), onnxruntime on the same exported graph when the project's venv has it |
//! | [`search`] | `selfplay`, first part: tree work alone with a uniform evaluator | legal-move generation alone on the positions the trees expanded |
//! | [`selfplay`] | `selfplay`, second part: self-play with the config's net | raw inference of the very same batches |
//! | [`ingest`] | `ingest`: a trainer's ingest rate from a run location | decoding the same shards from memory |
//! | [`net::run_device`] | `net --device cuda\|wgpu`: inference positions/s and training samples/s on a GPU | (none: the CPU figures are `net` without `--device`) |
//!
//! [`gpu`] is not a measurement but the check that goes with `net --device`
//! (`atomzero gpu-check`): a GPU's forward pass, losses and gradients against the CPU's.
//!
//! The binary only parses arguments and calls these functions (`crates/cli/src/bench_cmd.rs`).

mod error;
pub mod gpu;
pub mod ingest;
pub mod net;
pub mod search;
pub mod selfplay;
mod util;

pub use error::{BenchError, Result};
