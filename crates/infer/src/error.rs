//! [`InferError`]: why a network could not be loaded into, or run by, this crate.

use std::fmt;

use atomzero_nn::{CheckpointError, ConfigError};

/// Why a network could not be loaded or a forward pass could not run.
#[derive(Debug)]
pub enum InferError {
    /// The checkpoint (sidecar or weights file) was refused by `atomzero_nn`'s loader.
    Checkpoint(CheckpointError),
    /// The architecture cannot be built.
    Config(ConfigError),
    /// Burn could not serialise a net's weights (only from [`crate::InferNet::from_net`]).
    Store(String),
    /// The bytes are not valid safetensors.
    Safetensors(String),
    /// A tensor the architecture needs is absent.
    MissingTensor(String),
    /// A tensor the architecture does not have.
    UnexpectedTensor(String),
    /// A tensor of the wrong shape.
    TensorShape {
        /// The tensor's name.
        name: String,
        /// The shape the architecture needs.
        expected: Vec<usize>,
        /// The shape in the file.
        found: Vec<usize>,
    },
    /// A tensor that is not f32.
    TensorDtype {
        /// The tensor's name.
        name: String,
        /// Its dtype in the file.
        found: String,
    },
    /// A tensor holding NaN or infinity, or a batch norm whose variance is negative.
    NonFinite(String),
    /// A buffer handed to a forward pass whose length does not fit the batch.
    BufferShape {
        /// Which buffer (`input`, `policy`, `wdl`).
        buffer: &'static str,
        /// Length of the buffer.
        len: usize,
        /// Positions in the batch.
        batch: usize,
        /// Values per position (`planes * 64`, 4672, 3).
        per_position: usize,
    },
    /// An arithmetic asked for on a CPU without its instructions (bf16: AVX-512 BF16; f16:
    /// AVX-512 FP16; amx: AMX-BF16).
    Unsupported(crate::bf16::Precision),
    /// The moves handed to [`crate::InferNet::forward_moves_into`] do not fit its batch (the
    /// counts, the indices or the output buffer).
    Moves(String),
}

impl fmt::Display for InferError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InferError::Checkpoint(error) => write!(f, "{error}"),
            InferError::Config(error) => write!(f, "invalid architecture: {error}"),
            InferError::Store(message) => {
                write!(f, "cannot serialise the net's weights: {message}")
            }
            InferError::Safetensors(message) => write!(f, "invalid safetensors data: {message}"),
            InferError::MissingTensor(name) => write!(f, "weights lack tensor {name}"),
            InferError::UnexpectedTensor(name) => {
                write!(f, "weights have tensor {name}, which this architecture does not")
            }
            InferError::TensorShape { name, expected, found } => {
                write!(f, "tensor {name} has shape {found:?}, the architecture needs {expected:?}")
            }
            InferError::TensorDtype { name, found } => {
                write!(f, "tensor {name} is {found}, only F32 is supported")
            }
            InferError::NonFinite(name) => {
                write!(f, "tensor {name} holds non-finite values (or a negative variance)")
            }
            InferError::BufferShape { buffer, len, batch, per_position } => write!(
                f,
                "{buffer} buffer has {len} values, a batch of {batch} needs {batch} x {per_position}"
            ),
            InferError::Moves(message) => write!(f, "policy moves: {message}"),
            InferError::Unsupported(precision) => write!(
                f,
                "precision {precision} needs a CPU with {} (this one has none); use f32",
                precision.needs()
            ),
        }
    }
}

impl std::error::Error for InferError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            InferError::Checkpoint(error) => Some(error),
            InferError::Config(error) => Some(error),
            _ => None,
        }
    }
}

impl From<CheckpointError> for InferError {
    fn from(error: CheckpointError) -> InferError {
        InferError::Checkpoint(error)
    }
}

impl From<ConfigError> for InferError {
    fn from(error: ConfigError) -> InferError {
        InferError::Config(error)
    }
}
