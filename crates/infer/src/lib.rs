//! # atomzero-infer
//!
//! A CPU inference path of our own for `atomzero_nn`'s residual network, for self-play: Burn's
//! `flex` backend runs the same net several times slower than onnxruntime, and self-play is
//! bound by inference. Measured figures are in this crate's README and `atomzero bench net`.
//!
//! - [`InferNet`] (`net`): the forward pass on plain `f32` buffers, one thread per call, in
//!   chunks of positions that stay in cache; a reusable [`Workspace`].
//! - `weights`: the tensors from the safetensors bytes `atomzero_nn` writes, checked by name,
//!   dtype and shape, with batch norm folded into the convolutions.
//! - [`winograd`]: 3×3 convolutions as Winograd F(4×4, 3×3) (36 matrix products per
//!   convolution, a quarter of the direct multiply-adds), activations `[C][64][B]`; and the
//!   transforms' adjoints, with which the trainer runs the same convolutions backwards.
//! - [`gemm`]: the matrix products (weights packed once, activations read in place; SIMD
//!   through `pulp`), public for the trainer (`atomzero-backprop`).
//! - [`bf16`] and [`f16`]: the small-batch path's products in bfloat16 on hosts with AVX-512
//!   BF16 and in IEEE half precision on hosts with AVX-512 FP16 ([`Precision`]); [`amx`]: the
//!   bf16 Winograd products on Intel AMX tiles where the host lends them;
//!   [`calibrate`]: `--precision auto` keeps one only where it is measured faster on the
//!   loaded net (and, for f16, its outputs agree with f32's).
//! - [`wino512`] and [`wino256`]: the small path's transforms (and, in AVX2, its f32
//!   products) in AVX-512 or AVX2 intrinsics, the portable code's floats, chosen at run time.
//! - [`InferEvaluator`] (`evaluator`): `atomzero_mcts::Evaluator`, a drop-in for
//!   `atomzero_nn::NetEvaluator` with the same encoding and output handling.
//!
//! Outputs equal Burn's `Net::forward` in eval mode to within 1e-4 (tested).

pub mod amx;
pub mod bf16;
pub mod calibrate;
mod direct;
pub mod error;
pub mod evaluator;
pub mod f16;
pub mod gemm;
pub mod net;
mod small;
mod weights;
pub mod wino256;
pub mod wino512;
pub mod winograd;

pub use bf16::{Precision, PrecisionChoice};
pub use calibrate::Calibration;
pub use error::InferError;
pub use evaluator::InferEvaluator;
pub use net::{CHUNK, InferNet, Output, Workspace};
