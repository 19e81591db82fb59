//! Reading a net's tensors from safetensors bytes (the file Burn's `SafetensorsStore` writes,
//! tensor names like `tower.3.first.norm.running_var`) into plain `Vec<f32>`, with batch norm
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
use atomzero_nn::NetConfig;
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

/// Reads the weights of a net of architecture `config` from safetensors `bytes`.
pub(crate) fn parse(config: &NetConfig, bytes: &[u8]) -> Result<NetWeights, InferError> {
    config.validate()?;
    let tensors =
        SafeTensors::deserialize(bytes).map_err(|e| InferError::Safetensors(e.to_string()))?;
    let mut reader = Reader { tensors: &tensors, used: HashSet::new() };

    let filters = config.filters;
    let stem = reader.conv_bn("stem", config.input_planes(), filters, 3)?;
    let mut tower = Vec::with_capacity(config.blocks);
    for i in 0..config.blocks {
        let prefix = format!("tower.{i}");
        let first = reader.conv_bn(&format!("{prefix}.first"), filters, filters, 3)?;
        let second = reader.conv_bn(&format!("{prefix}.second"), filters, filters, 3)?;
        let se = match config.se_hidden() {
            Some(hidden) => Some(SeWeights {
                squeeze: reader.dense(&format!("{prefix}.se.squeeze"), filters, hidden)?,
                excite: reader.dense(&format!("{prefix}.se.excite"), hidden, 2 * filters)?,
            }),
            None => None,
        };
        tower.push(BlockWeights { first, second, se });
    }
    let policy_conv = reader.conv_bn("policy_conv", filters, filters, 3)?;
    let mut policy_out =
        reader.conv_with_bias("policy_out", filters, config.policy_out_planes(), 1)?;
    // The opponent-policy planes (a training target) are not computed.
    policy_out.weight.truncate(POLICY_PLANES * filters);
    policy_out.bias.truncate(POLICY_PLANES);
    policy_out.c_out = POLICY_PLANES;
    let value_conv = reader.conv_bn("value_conv", filters, config.value_channels, 1)?;
    let value_hidden =
        reader.dense("value_hidden", config.value_channels * 64, config.value_hidden)?;
    let value_out = reader.dense("value_out", config.value_hidden, 3)?;

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
    /// The tensor `name` as f32 values, checked against `shape`.
    fn tensor(&mut self, name: &str, shape: &[usize]) -> Result<Vec<f32>, InferError> {
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
        if values.len() != shape.iter().product::<usize>() {
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

    /// `{prefix}.conv.weight` followed by batch norm `{prefix}.norm.*`, folded.
    fn conv_bn(
        &mut self,
        prefix: &str,
        c_in: usize,
        c_out: usize,
        kernel: usize,
    ) -> Result<ConvWeights, InferError> {
        let mut weight =
            self.tensor(&format!("{prefix}.conv.weight"), &[c_out, c_in, kernel, kernel])?;
        let gamma = self.tensor(&format!("{prefix}.norm.gamma"), &[c_out])?;
        let beta = self.tensor(&format!("{prefix}.norm.beta"), &[c_out])?;
        let mean = self.tensor(&format!("{prefix}.norm.running_mean"), &[c_out])?;
        let var_name = format!("{prefix}.norm.running_var");
        let var = self.tensor(&var_name, &[c_out])?;
        if var.iter().any(|&v| v < 0.0) {
            return Err(InferError::NonFinite(var_name));
        }
        let per_output = c_in * kernel * kernel;
        let mut bias = vec![0.0f32; c_out];
        for o in 0..c_out {
            let scale = f64::from(gamma[o]) / (f64::from(var[o]) + BATCH_NORM_EPSILON).sqrt();
            for w in &mut weight[o * per_output..(o + 1) * per_output] {
                *w = (f64::from(*w) * scale) as f32;
            }
            bias[o] = (f64::from(beta[o]) - f64::from(mean[o]) * scale) as f32;
        }
        Ok(ConvWeights { c_in, c_out, weight, bias })
    }

    /// A convolution with its own bias (`{prefix}.weight`, `{prefix}.bias`).
    fn conv_with_bias(
        &mut self,
        prefix: &str,
        c_in: usize,
        c_out: usize,
        kernel: usize,
    ) -> Result<ConvWeights, InferError> {
        let weight = self.tensor(&format!("{prefix}.weight"), &[c_out, c_in, kernel, kernel])?;
        let bias = self.tensor(&format!("{prefix}.bias"), &[c_out])?;
        Ok(ConvWeights { c_in, c_out, weight, bias })
    }

    /// A linear layer (`{prefix}.weight [d_in, d_out]`, `{prefix}.bias [d_out]`).
    fn dense(
        &mut self,
        prefix: &str,
        d_in: usize,
        d_out: usize,
    ) -> Result<DenseWeights, InferError> {
        let weight = self.tensor(&format!("{prefix}.weight"), &[d_in, d_out])?;
        let bias = self.tensor(&format!("{prefix}.bias"), &[d_out])?;
        Ok(DenseWeights { d_in, d_out, weight, bias })
    }
}
