//! The optimizer on flat buffers, with the semantics of Burn's (0.22) that the GPU path uses,
//! so a recipe means the same on either trainer:
//!
//! - gradient clipping by norm is per tensor: each tensor's gradient is scaled down to norm
//!   `clip` if it is longer;
//! - AdamW: `m ← β₁m + (1−β₁)g`, `v ← β₂v + (1−β₂)g²`, `θ ← θ(1 − lr·λ) − lr · m̂ / (√v̂ + ε)`
//!   with bias-corrected `m̂`, `v̂`; the decay applies to every trainable tensor;
//! - SGD: `g ← g + λθ`, Nesterov momentum without dampening (the first step's velocity is
//!   the gradient), `θ ← θ − lr · (g + μv)`.
//!
//! The state saves to safetensors bytes (tensors `first` and `second`, metadata `kind` and
//! `time`), format version [`OPTIMIZER_FORMAT_VERSION`].

use std::collections::HashMap;

use safetensors::{Dtype, SafeTensors};

use crate::params::{ParamsError, TensorInfo};

/// Version of the optimizer-state bytes.
pub const OPTIMIZER_FORMAT_VERSION: u32 = 1;

/// Which update rule, with its constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OptimizerConfig {
    /// AdamW with decoupled weight decay.
    AdamW {
        /// β₁.
        beta1: f32,
        /// β₂.
        beta2: f32,
        /// ε.
        epsilon: f32,
        /// λ.
        weight_decay: f32,
    },
    /// SGD with L2 weight decay and Nesterov momentum.
    Sgd {
        /// μ.
        momentum: f32,
        /// λ.
        weight_decay: f32,
    },
}

impl OptimizerConfig {
    fn kind(&self) -> &'static str {
        match self {
            OptimizerConfig::AdamW { .. } => "adamw",
            OptimizerConfig::Sgd { .. } => "sgd",
        }
    }
}

/// An optimizer with its state for a flat parameter buffer.
#[derive(Clone, Debug)]
pub struct Optimizer {
    config: OptimizerConfig,
    clip: Option<f32>,
    /// Steps taken.
    time: u64,
    /// AdamW's first moment, or SGD's velocity.
    first: Vec<f32>,
    /// AdamW's second moment (empty for SGD).
    second: Vec<f32>,
}

impl Optimizer {
    /// A fresh optimizer for `len` parameters; `clip` is the per-tensor gradient norm limit.
    pub fn new(config: OptimizerConfig, clip: Option<f32>, len: usize) -> Optimizer {
        let second = match config {
            OptimizerConfig::AdamW { .. } => vec![0.0; len],
            OptimizerConfig::Sgd { .. } => Vec::new(),
        };
        Optimizer { config, clip, time: 0, first: vec![0.0; len], second }
    }

    /// Steps taken so far.
    pub fn time(&self) -> u64 {
        self.time
    }

    /// One update of `values` by `grads` (clipped in place first) at `learning_rate`.
    pub fn step(
        &mut self,
        values: &mut [f32],
        grads: &mut [f32],
        tensors: &[TensorInfo],
        learning_rate: f64,
    ) {
        if let Some(clip) = self.clip {
            for info in tensors {
                let g = &mut grads[info.range.clone()];
                let norm = g.iter().map(|&v| v * v).sum::<f32>().sqrt();
                let coefficient = (clip / (norm + f32::MIN_POSITIVE)).min(1.0);
                g.iter_mut().for_each(|v| *v *= coefficient);
            }
        }
        self.time += 1;
        let lr = learning_rate as f32;
        match self.config {
            OptimizerConfig::AdamW { beta1, beta2, epsilon, weight_decay } => {
                let time = i32::try_from(self.time).unwrap_or(i32::MAX);
                let (c1, c2) = (1.0 - beta1.powi(time), 1.0 - beta2.powi(time));
                let keep = (1.0 - learning_rate * f64::from(weight_decay)) as f32;
                for (((theta, &g), m), v) in values
                    .iter_mut()
                    .zip(grads.iter())
                    .zip(self.first.iter_mut())
                    .zip(self.second.iter_mut())
                {
                    *m = *m * beta1 + g * (1.0 - beta1);
                    *v = *v * beta2 + g * g * (1.0 - beta2);
                    let delta = (*m / c1) / ((*v / c2).sqrt() + epsilon);
                    *theta = *theta * keep - delta * lr;
                }
            }
            OptimizerConfig::Sgd { momentum, weight_decay } => {
                let first_step = self.time == 1;
                for ((theta, &g), velocity) in
                    values.iter_mut().zip(grads.iter()).zip(self.first.iter_mut())
                {
                    let g = *theta * weight_decay + g;
                    *velocity = if first_step { g } else { g + *velocity * momentum };
                    *theta -= (*velocity * momentum + g) * lr;
                }
            }
        }
    }

    /// The state as safetensors bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>, ParamsError> {
        let error = |e: safetensors::SafeTensorError| ParamsError::Weights(e.to_string());
        let first: Vec<u8> = self.first.iter().flat_map(|v| v.to_le_bytes()).collect();
        let second: Vec<u8> = self.second.iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut views = vec![(
            "first",
            safetensors::tensor::TensorView::new(Dtype::F32, vec![self.first.len()], &first)
                .map_err(error)?,
        )];
        if !self.second.is_empty() {
            views.push((
                "second",
                safetensors::tensor::TensorView::new(Dtype::F32, vec![self.second.len()], &second)
                    .map_err(error)?,
            ));
        }
        let metadata = HashMap::from([
            ("format_version".to_string(), OPTIMIZER_FORMAT_VERSION.to_string()),
            ("kind".to_string(), self.config.kind().to_string()),
            ("time".to_string(), self.time.to_string()),
        ]);
        safetensors::serialize(views, Some(metadata)).map_err(error)
    }

    /// Restores a state saved by [`Optimizer::to_bytes`] for an optimizer of this kind and
    /// parameter count.
    pub fn from_bytes(
        config: OptimizerConfig,
        clip: Option<f32>,
        len: usize,
        bytes: &[u8],
    ) -> Result<Optimizer, ParamsError> {
        let bad = |what: String| ParamsError::Weights(format!("optimizer state: {what}"));
        let (_, header) = SafeTensors::read_metadata(bytes).map_err(|e| bad(e.to_string()))?;
        let metadata = header.metadata().clone().unwrap_or_default();
        let field = |key: &str| metadata.get(key).cloned().unwrap_or_default();
        if field("format_version") != OPTIMIZER_FORMAT_VERSION.to_string() {
            return Err(bad(format!(
                "format version '{}', this build reads {OPTIMIZER_FORMAT_VERSION}",
                field("format_version")
            )));
        }
        if field("kind") != config.kind() {
            return Err(bad(format!("saved for '{}', not '{}'", field("kind"), config.kind())));
        }
        let time: u64 = field("time").parse().map_err(|_| bad("no step count".to_string()))?;
        let file = SafeTensors::deserialize(bytes).map_err(|e| bad(e.to_string()))?;
        let mut optimizer = Optimizer::new(config, clip, len);
        optimizer.time = time;
        let wanted = if optimizer.second.is_empty() { 1 } else { 2 };
        if file.len() != wanted {
            return Err(bad(format!("{} tensors, expected {wanted}", file.len())));
        }
        for (name, buffer) in [("first", &mut optimizer.first), ("second", &mut optimizer.second)] {
            if buffer.is_empty() {
                continue;
            }
            let view = file.tensor(name).map_err(|_| bad(format!("missing tensor {name}")))?;
            if view.dtype() != Dtype::F32 || view.shape() != [len] || view.data().len() != 4 * len {
                return Err(bad(format!(
                    "tensor {name}: {:?} {:?}, expected F32 [{len}]",
                    view.dtype(),
                    view.shape()
                )));
            }
            for (d, b) in buffer.iter_mut().zip(view.data().chunks_exact(4)) {
                *d = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
        }
        Ok(optimizer)
    }
}
