//! # atomzero-nn
//!
//! The Burn network and everything that touches its weights; no games, no files but weights.
//! Training lives in `atomzero-train` (Burn's autodiff step and `atomzero-backprop`'s).
//!
//! - [`NetConfig`]: the architecture as data (residual tower, optional squeeze-excitation,
//!   convolutional policy head, WDL value head) with the `tiny` and `default_size` presets.
//! - [`layout`]: the stored tensors (names, shapes, order) of a config's net, the one
//!   description the Burn record, the CPU inference, the CPU trainer and the export follow.
//! - [`Net`] (`model`): the Burn module and its `forward`, with shapes on every tensor line.
//! - [`DeviceKind`] (`device`): `cpu` (Burn's `flex` backend), `cuda` and `wgpu` (features of
//!   the same names).
//! - `checkpoint`: safetensors weights plus a versioned JSON sidecar ([`NetMetadata`]), written
//!   atomically and checked on load; the weights as bytes in memory (`Net::to_safetensors`,
//!   `NetConfig::load_safetensors`) for the trainers and the CPU inference.
//! - [`NetEvaluator`]: batched inference behind `atomzero_mcts::Evaluator`.
//! - [`grow`]: a net grown wider and/or deeper that computes what it computed (an old unit
//!   reads only old units), to continue training at a bigger size.
//! - [`export`]: the inference graph as an ONNX model (batch norm folded, dynamic batch,
//!   metadata describing the encoding and the policy layout).
//!
//! Burn 0.22 has no backend type parameter: modules are plain structs, tensors are `Tensor<D>`
//! and the backend is chosen at run time by the [`Device`](burn::tensor::Device).

pub mod checkpoint;
pub mod config;
pub mod device;
pub mod evaluator;
pub mod export;
pub mod grow;
pub mod layout;
pub mod model;

pub use burn;
pub use checkpoint::{
    CheckpointError, NET_FORMAT_VERSION, NetMetadata, Provenance, WeightsError, check_weights,
    load, load_with_config, read_metadata, sidecar_path,
};
pub use config::{ConfigError, FieldDifference, MAX_WEIGHT_BYTES, NetConfig, human_bytes};
pub use device::{DeviceError, DeviceKind, check_device, device_name};
pub use evaluator::{DEFAULT_MAX_BATCH, NetEvaluator, batch_padding, padded_batch};
pub use export::{ExportError, ExportInfo, RawOutputs, reference_outputs, to_onnx};
pub use grow::{GrowError, check_growable, grow};
pub use layout::{Layer, LayerKind, NetLayout, TensorRole, TensorSpec};
pub use model::{Net, NetOutput};
