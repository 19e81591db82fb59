//! The network: a residual tower (AlphaZero) with optional squeeze-excitation (lc0), a
//! convolutional policy head whose `[73, 8, 8]` output flattens straight into the encoding
//! crate's policy index (`plane * 64 + square`), and a WDL value head.
//!
//! ```text
//! input [B, planes, 8, 8]
//!   stem: conv3x3 → BN → ReLU                          [B, F, 8, 8]
//!   tower: blocks × (conv3x3-BN-ReLU-conv3x3-BN [-SE] + skip, ReLU)
//!   policy: conv3x3 → BN → ReLU → conv1x1 (73)         [B, 73, 8, 8] → [B, 4672]
//!           (with `opponent_policy`: conv1x1 (146), the second 73 planes the opponent's reply)
//!   value: conv1x1 (C) → BN → ReLU → flatten → linear (H) → ReLU → linear (3)   [B, 3]
//! ```
//!
//! Convolutions followed by batch norm carry no bias (the norm's β plays that role).

use atomzero_encoding::{POLICY_PLANES, POLICY_SIZE};
use burn::module::Module;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::{BatchNorm, BatchNormConfig, Linear, LinearConfig, PaddingConfig2d};
use burn::tensor::activation::{relu, sigmoid};
use burn::tensor::{Device, Tensor};

use crate::config::{ConfigError, NetConfig};

/// What the network says about a batch of positions.
#[derive(Clone, Debug)]
pub struct NetOutput {
    /// Policy logits `[B, 4672]`, index `plane * 64 + from_square` (see `atomzero_encoding::policy`).
    pub policy: Tensor<2>,
    /// Win/draw/loss logits for the side to move, `[B, 3]`.
    pub wdl: Tensor<2>,
    /// The auxiliary head's logits for the opponent's reply `[B, 4672]` (nets with
    /// `opponent_policy`): the reply's index in the opponent's own frame with its square
    /// turned back into the side to move's (see `atomzero_encoding::reply_index`).
    pub opponent_policy: Option<Tensor<2>>,
}

/// A convolution without bias followed by batch norm.
#[derive(Module, Debug)]
pub struct ConvBn {
    pub(crate) conv: Conv2d,
    pub(crate) norm: BatchNorm,
}

impl ConvBn {
    fn new(channels_in: usize, channels_out: usize, kernel: usize, device: &Device) -> ConvBn {
        ConvBn {
            conv: Conv2dConfig::new([channels_in, channels_out], [kernel, kernel])
                .with_padding(PaddingConfig2d::Same)
                .with_bias(false)
                .init(device),
            norm: BatchNormConfig::new(channels_out).init(device),
        }
    }

    /// Convolution then batch norm, no activation.
    fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        let x = self.conv.forward(x); // [B, C_out, 8, 8]
        self.norm.forward(x) // [B, C_out, 8, 8]
    }

    /// [`ConvBn::forward`] with the input channels (and the weight's) zero-padded to a
    /// multiple of `multiple`: the same function and the same gradient for the real weights,
    /// computed by a convolution of another shape. A diagnostic for GPU kernels that go wrong
    /// on one channel count (see [`stem_padding`]).
    fn forward_padded(&self, x: Tensor<4>, multiple: usize) -> Tensor<4> {
        use burn::tensor::module::conv2d;
        use burn::tensor::ops::ConvOptions;
        let weight = self.conv.weight.val(); // [C_out, C_in, k, k]
        let [c_out, c_in, k, _] = weight.dims();
        let pad = c_in.next_multiple_of(multiple.max(1)) - c_in;
        if pad == 0 {
            return self.forward(x);
        }
        let [batch, _, h, w] = x.dims();
        let device = x.device();
        let x = Tensor::cat(vec![x, Tensor::zeros([batch, pad, h, w], &device)], 1);
        let weight = Tensor::cat(vec![weight, Tensor::zeros([c_out, pad, k, k], &device)], 1);
        let x = conv2d(x, weight, None, ConvOptions::new([1, 1], [k / 2, k / 2], [1, 1], 1));
        self.norm.forward(x)
    }
}

/// `ATOMZERO_STEM_PAD=N`: the stem's convolution runs with its input channels zero-padded to a
/// multiple of N (0 or unset: not padded). A diagnostic switch for the GPU check (the stem is
/// the one convolution whose input channel count, the encoder's planes, is not a multiple of
/// 32); the function and the weights' gradient are unchanged. Read once per process.
pub fn stem_padding() -> usize {
    static PADDING: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *PADDING.get_or_init(|| {
        std::env::var("ATOMZERO_STEM_PAD").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(0)
    })
}

/// lc0's squeeze-excitation: global average pool, a bottleneck MLP, then a per-channel gate
/// (sigmoid) and bias: `y = sigmoid(g) * x + b`.
#[derive(Module, Debug)]
pub struct SqueezeExcitation {
    pub(crate) squeeze: Linear,
    pub(crate) excite: Linear,
}

impl SqueezeExcitation {
    fn new(filters: usize, hidden: usize, device: &Device) -> SqueezeExcitation {
        SqueezeExcitation {
            squeeze: LinearConfig::new(filters, hidden).init(device),
            excite: LinearConfig::new(hidden, 2 * filters).init(device),
        }
    }

    fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        let [batch, filters, _, _] = x.dims();
        let pooled = x.clone().reshape([batch, filters, 64]).mean_dim(2); // [B, F, 1]
        let pooled = pooled.reshape([batch, filters]); // [B, F]
        let hidden = relu(self.squeeze.forward(pooled)); // [B, H]
        let excited = self.excite.forward(hidden); // [B, 2F]
        let gate = sigmoid(excited.clone().narrow(1, 0, filters)); // [B, F]
        let bias = excited.narrow(1, filters, filters); // [B, F]
        let gate = gate.reshape([batch, filters, 1, 1]); // [B, F, 1, 1]
        let bias = bias.reshape([batch, filters, 1, 1]); // [B, F, 1, 1]
        x * gate + bias // [B, F, 8, 8]
    }
}

/// conv3x3-BN-ReLU-conv3x3-BN, optional SE, plus the skip connection, then ReLU.
#[derive(Module, Debug)]
pub struct ResidualBlock {
    pub(crate) first: ConvBn,
    pub(crate) second: ConvBn,
    pub(crate) se: Option<SqueezeExcitation>,
}

impl ResidualBlock {
    fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        let y = relu(self.first.forward(x.clone())); // [B, F, 8, 8]
        let y = self.second.forward(y); // [B, F, 8, 8]
        let y = match &self.se {
            Some(se) => se.forward(y), // [B, F, 8, 8]
            None => y,
        };
        relu(y + x) // [B, F, 8, 8]
    }
}

/// The whole network. Build one with [`NetConfig::init`].
#[derive(Module, Debug)]
pub struct Net {
    // `pub(crate)` for the ONNX exporter (`crate::export`), which folds these layers.
    pub(crate) stem: ConvBn,
    pub(crate) tower: Vec<ResidualBlock>,
    pub(crate) policy_conv: ConvBn,
    pub(crate) policy_out: Conv2d,
    pub(crate) value_conv: ConvBn,
    pub(crate) value_hidden: Linear,
    pub(crate) value_out: Linear,
    /// The architecture this net was built from (not a parameter).
    #[module(skip)]
    config: NetConfig,
}

impl NetConfig {
    /// Builds a freshly initialised network on `device` (use `device.autodiff()` to train).
    pub fn init(&self, device: &Device) -> Result<Net, ConfigError> {
        self.validate()?;
        let filters = self.filters;
        let tower = (0..self.blocks)
            .map(|_| ResidualBlock {
                first: ConvBn::new(filters, filters, 3, device),
                second: ConvBn::new(filters, filters, 3, device),
                se: self.se_hidden().map(|hidden| SqueezeExcitation::new(filters, hidden, device)),
            })
            .collect();
        Ok(Net {
            stem: ConvBn::new(self.input_planes(), filters, 3, device),
            tower,
            policy_conv: ConvBn::new(filters, filters, 3, device),
            policy_out: Conv2dConfig::new([filters, self.policy_out_planes()], [1, 1]).init(device),
            value_conv: ConvBn::new(filters, self.value_channels, 1, device),
            value_hidden: LinearConfig::new(self.value_channels * 64, self.value_hidden)
                .init(device),
            value_out: LinearConfig::new(self.value_hidden, 3).init(device),
            config: self.clone(),
        })
    }

    /// Floating-point operations per position for one forward pass: multiply-adds of the
    /// convolutions and linear layers × 2 (batch norm, activations and SE pooling ignored).
    pub fn flops_per_position(&self) -> u64 {
        let squares = 64u64;
        let filters = self.filters as u64;
        let conv = |c_in: u64, c_out: u64, kernel: u64| c_in * c_out * kernel * kernel * squares;
        let stem = conv(self.input_planes() as u64, filters, 3);
        let se = self.se_hidden().map_or(0, |hidden| {
            let hidden = hidden as u64;
            filters * hidden + hidden * 2 * filters
        });
        let block = 2 * conv(filters, filters, 3) + se;
        let policy = conv(filters, filters, 3) + conv(filters, self.policy_out_planes() as u64, 1);
        let value_channels = self.value_channels as u64;
        let value_hidden = self.value_hidden as u64;
        let value = conv(filters, value_channels, 1)
            + value_channels * squares * value_hidden
            + value_hidden * 3;
        2 * (stem + self.blocks as u64 * block + policy + value)
    }
}

impl Net {
    /// The architecture.
    pub fn config(&self) -> &NetConfig {
        &self.config
    }

    /// Forward pass. `input` is `[B, planes, 8, 8]` as `atomzero_encoding::Batch` lays it out.
    ///
    /// Batch norm uses batch statistics (and updates its running averages) when the input lives
    /// on an autodiff device; call [`Module::valid`] for inference with running statistics.
    pub fn forward(&self, input: Tensor<4>) -> NetOutput {
        let [batch, _, _, _] = input.dims();
        let stem = match stem_padding() {
            0 => self.stem.forward(input),
            multiple => self.stem.forward_padded(input, multiple),
        };
        let mut x = relu(stem); // [B, F, 8, 8]
        for block in &self.tower {
            x = block.forward(x); // [B, F, 8, 8]
        }

        let p = relu(self.policy_conv.forward(x.clone())); // [B, F, 8, 8]
        let p = self.policy_out.forward(p); // [B, 73 or 146, 8, 8]
        let (policy, opponent_policy) = if self.config.opponent_policy {
            let reply = p.clone().narrow(1, POLICY_PLANES, POLICY_PLANES); // [B, 73, 8, 8]
            (p.narrow(1, 0, POLICY_PLANES), Some(reply.reshape([batch, POLICY_SIZE])))
        } else {
            (p, None)
        };
        let policy = policy.reshape([batch, POLICY_SIZE]); // [B, 4672], NCHW: plane * 64 + square

        let v = relu(self.value_conv.forward(x)); // [B, C, 8, 8]
        let v = v.reshape([batch, self.config.value_channels * 64]); // [B, C * 64]
        let v = relu(self.value_hidden.forward(v)); // [B, H]
        let wdl = self.value_out.forward(v); // [B, 3]

        NetOutput { policy, wdl, opponent_policy }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::TensorData;

    /// The padded stem is the same function: the tiny net's stem (24 input planes) padded to
    /// 32 and to 64 channels against the plain convolution, in eval mode.
    #[test]
    fn the_padded_stem_computes_the_same() {
        let device = Device::flex();
        let stem = ConvBn::new(24, 32, 3, &device);
        let values: Vec<f32> =
            (0..2 * 24 * 64).map(|i| ((i * 37 % 101) as f32 / 50.0) - 1.0).collect();
        let x = Tensor::<4>::from_data(TensorData::new(values, [2, 24, 8, 8]), &device);
        let plain: Vec<f32> = stem.forward(x.clone()).into_data().try_to_vec::<f32>().unwrap();
        for multiple in [32, 64] {
            let padded: Vec<f32> =
                stem.forward_padded(x.clone(), multiple).into_data().try_to_vec::<f32>().unwrap();
            assert_eq!(plain.len(), padded.len());
            let worst = plain.iter().zip(&padded).fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
            assert!(worst < 1e-4, "padded to {multiple}: {worst}");
        }
        assert!(plain.iter().any(|v| v.abs() > 0.1), "a stem that outputs zeros proves nothing");
    }
}
