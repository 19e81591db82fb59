//! Reading a net's tensors from safetensors bytes (the file Burn's `SafetensorsStore` writes;
//! names, shapes and order from `atomzero_nn::layout`) into plain `Vec<f32>`, with batch norm
//! folded into the preceding convolution:
//!
//! ```text
//! s = γ / sqrt(running_var + ε)      W'[o] = W[o] · s[o]      b'[o] = β[o] − running_mean[o] · s[o]
//! ```
//!
//! Every tensor is checked for name, dtype (F32), shape and finiteness; a tensor the
//! architecture does not have is an error too, so a file of another architecture never loads.

use std::collections::HashSet;

use atomzero_encoding::POLICY_PLANES;
use atomzero_nn::{Layer, LayerKind, NetConfig, NetLayout, TensorSpec};
use safetensors::{Dtype, SafeTensors};

use crate::error::InferError;

/// Burn's `BatchNormConfig` default, which `atomzero_nn` uses (it is not stored in the file).
pub(crate) const BATCH_NORM_EPSILON: f64 = 1e-5;

/// A convolution (batch norm folded in, if any): `weight [c_out][c_in][k][k]`, `bias [c_out]`.
#[derive(Clone, Debug)]
pub(crate) struct ConvWeights {
    pub c_in: usize,
    pub c_out: usize,
    pub weight: Vec<f32>,
    pub bias: Vec<f32>,
}

/// A fully connected layer in Burn's layout: `weight [d_in][d_out]`, `bias [d_out]`.
#[derive(Clone, Debug)]
pub(crate) struct DenseWeights {
    pub d_in: usize,
    pub d_out: usize,
    pub weight: Vec<f32>,
    pub bias: Vec<f32>,
}

/// Squeeze-excitation: `squeeze [F → H]`, `excite [H → 2F]` (gate then bias).
#[derive(Clone, Debug)]
pub(crate) struct SeWeights {
    pub squeeze: DenseWeights,
    pub excite: DenseWeights,
}

/// One residual block.
#[derive(Clone, Debug)]
pub(crate) struct BlockWeights {
    pub first: ConvWeights,
    pub second: ConvWeights,
    pub se: Option<SeWeights>,
}

/// Every layer of the net, batch norm folded.
#[derive(Clone, Debug)]
pub(crate) struct NetWeights {
    pub stem: ConvWeights,
    pub tower: Vec<BlockWeights>,
    pub policy_conv: ConvWeights,
    pub policy_out: ConvWeights,
    pub value_conv: ConvWeights,
    pub value_hidden: DenseWeights,
    pub value_out: DenseWeights,
}

/// Reads the weights of a net of architecture `config` from safetensors `bytes`, as
/// [`NetLayout`] describes them.
pub(crate) fn parse(config: &NetConfig, bytes: &[u8]) -> Result<NetWeights, InferError> {
    config.validate()?;
    let tensors =
        SafeTensors::deserialize(bytes).map_err(|e| InferError::Safetensors(e.to_string()))?;
    let mut reader = Reader { tensors: &tensors, used: HashSet::new() };
    let layout = NetLayout::of(config);

    let stem = reader.conv(&layout.stem)?;
    let mut tower = Vec::with_capacity(layout.tower.len());
    for block in &layout.tower {
        let first = reader.conv(&block.first)?;
        let second = reader.conv(&block.second)?;
        let se = match &block.se {
            Some((squeeze, excite)) => {
                Some(SeWeights { squeeze: reader.dense(squeeze)?, excite: reader.dense(excite)? })
            }
            None => None,
        };
        tower.push(BlockWeights { first, second, se });
    }
    let policy_conv = reader.conv(&layout.policy_conv)?;
    let mut policy_out = reader.conv(&layout.policy_out)?;
    // The opponent-policy planes (a training target) are not computed.
    let filters = config.filters;
    policy_out.weight.truncate(POLICY_PLANES * filters);
    policy_out.bias.truncate(POLICY_PLANES);
    policy_out.c_out = POLICY_PLANES;
    let value_conv = reader.conv(&layout.value_conv)?;
    let value_hidden = reader.dense(&layout.value_hidden)?;
    let value_out = reader.dense(&layout.value_out)?;

    let mut unused: Vec<&str> =
        tensors.names().into_iter().filter(|name| !reader.used.contains(*name)).collect();
    unused.sort_unstable();
    if let Some(name) = unused.first() {
        return Err(InferError::UnexpectedTensor((*name).to_string()));
    }
    Ok(NetWeights { stem, tower, policy_conv, policy_out, value_conv, value_hidden, value_out })
}

struct Reader<'a, 'data> {
    tensors: &'a SafeTensors<'data>,
    used: HashSet<String>,
}

impl Reader<'_, '_> {
    /// The tensor `spec` as f32 values, checked against its shape.
    fn tensor(&mut self, spec: &TensorSpec) -> Result<Vec<f32>, InferError> {
        let (name, shape) = (spec.name.as_str(), spec.shape.as_slice());
        let view =
            self.tensors.tensor(name).map_err(|_| InferError::MissingTensor(name.to_string()))?;
        if view.dtype() != Dtype::F32 {
            return Err(InferError::TensorDtype {
                name: name.to_string(),
                found: format!("{:?}", view.dtype()),
            });
        }
        if view.shape() != shape {
            return Err(InferError::TensorShape {
                name: name.to_string(),
                expected: shape.to_vec(),
                found: view.shape().to_vec(),
            });
        }
        // The safetensors parser checks that each tensor's byte range fits its shape and dtype.
        let values: Vec<f32> = view
            .data()
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        if values.len() != spec.len() {
            return Err(InferError::Safetensors(format!(
                "tensor {name} has the wrong byte length"
            )));
        }
        if values.iter().any(|v| !v.is_finite()) {
            return Err(InferError::NonFinite(name.to_string()));
        }
        self.used.insert(name.to_string());
        Ok(values)
    }

    /// A convolution: with its batch norm folded in (conv-bn), or with its own bias.
    fn conv(&mut self, layer: &Layer) -> Result<ConvWeights, InferError> {
        let specs = layer.tensors();
        match layer.kind {
            LayerKind::ConvBn { c_in, c_out, kernel } => {
                // conv.weight, norm.gamma, norm.beta, norm.running_mean, norm.running_var.
                let mut weight = self.tensor(&specs[0])?;
                let gamma = self.tensor(&specs[1])?;
                let beta = self.tensor(&specs[2])?;
                let mean = self.tensor(&specs[3])?;
                let var = self.tensor(&specs[4])?;
                if var.iter().any(|&v| v < 0.0) {
                    return Err(InferError::NonFinite(specs[4].name.clone()));
                }
                let per_output = c_in * kernel * kernel;
                let mut bias = vec![0.0f32; c_out];
                for o in 0..c_out {
                    let scale =
                        f64::from(gamma[o]) / (f64::from(var[o]) + BATCH_NORM_EPSILON).sqrt();
                    for w in &mut weight[o * per_output..(o + 1) * per_output] {
                        *w = (f64::from(*w) * scale) as f32;
                    }
                    bias[o] = (f64::from(beta[o]) - f64::from(mean[o]) * scale) as f32;
                }
                Ok(ConvWeights { c_in, c_out, weight, bias })
            }
            LayerKind::ConvBias { c_in, c_out, .. } => {
                let weight = self.tensor(&specs[0])?;
                let bias = self.tensor(&specs[1])?;
                Ok(ConvWeights { c_in, c_out, weight, bias })
            }
            LayerKind::Dense { .. } => Err(InferError::Safetensors(format!(
                "layer {} is dense, not a convolution",
                layer.name
            ))),
        }
    }

    /// A linear layer (`weight [d_in, d_out]`, `bias [d_out]`).
    fn dense(&mut self, layer: &Layer) -> Result<DenseWeights, InferError> {
        let LayerKind::Dense { d_in, d_out } = layer.kind else {
            return Err(InferError::Safetensors(format!("layer {} is not dense", layer.name)));
        };
        let specs = layer.tensors();
        let weight = self.tensor(&specs[0])?;
        let bias = self.tensor(&specs[1])?;
        Ok(DenseWeights { d_in, d_out, weight, bias })
    }
}
