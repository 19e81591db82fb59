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

    /// Convolution then batch norm, no activation; the convolution's input channels
    /// zero-padded to a multiple of `pad` where they are not one already (0: never; see
    /// [`conv_padding`]).
    fn forward(&self, x: Tensor<4>, pad: usize) -> Tensor<4> {
        let x = conv_forward(&self.conv, x, pad); // [B, C_out, 8, 8]
        self.norm.forward(x) // [B, C_out, 8, 8]
    }
}

/// `conv.forward(x)` with the input channels (and the weight's) zero-padded to a multiple of
/// `multiple` (0: not padded): the same function and the same gradient for the real weights,
/// computed by a convolution of another shape (stride 1, "same" padding, as every convolution
/// of the net).
fn conv_forward(conv: &Conv2d, x: Tensor<4>, multiple: usize) -> Tensor<4> {
    use burn::tensor::module::conv2d;
    use burn::tensor::ops::ConvOptions;
    let weight = conv.weight.val(); // [C_out, C_in, k, k]
    let [c_out, c_in, k, _] = weight.dims();
    if multiple == 0 || c_in % multiple == 0 {
        return conv.forward(x);
    }
    let pad = c_in.next_multiple_of(multiple) - c_in;
    let [batch, _, h, w] = x.dims();
    let device = x.device();
    let x = Tensor::cat(vec![x, Tensor::zeros([batch, pad, h, w], &device)], 1);
    let weight = Tensor::cat(vec![weight, Tensor::zeros([c_out, pad, k, k], &device)], 1);
    let bias = conv.bias.as_ref().map(|b| b.val());
    conv2d(x, weight, bias, ConvOptions::new([1, 1], [k / 2, k / 2], [1, 1], 1))
}

/// The multiple the convolutions' input channels are zero-padded to on `device`: 32 on a GPU
/// (cuda, wgpu), 0 (none) on the CPU. On an H200 (burn-cubecl 0.22.1), the weight gradient of a
/// 3×3 convolution with 16, 20 or 24 input channels came out 67–77% off while 32 and 128 were
/// right, and padded to 32 the same gradients agreed with the CPU to 2.4e-4 (docs/gpu.md): the
/// stem, whose input channels are the encoder's planes, is the convolution it hits. Padding
/// changes neither the function nor the weights' gradient, only the kernel's shape.
/// `ATOMZERO_CONV_PAD=N` overrides it on every device (0: no padding, to see the fault; read
/// once per process).
pub fn conv_padding(device: &Device) -> usize {
    static OVERRIDE: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    let forced = *OVERRIDE.get_or_init(|| {
        std::env::var("ATOMZERO_CONV_PAD").ok().and_then(|v| v.trim().parse().ok())
    });
    forced
        .unwrap_or_else(|| if device.clone().without_autodiff() == Device::flex() { 0 } else { 32 })
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
    fn forward(&self, x: Tensor<4>, pad: usize) -> Tensor<4> {
        let y = relu(self.first.forward(x.clone(), pad)); // [B, F, 8, 8]
        let y = self.second.forward(y, pad); // [B, F, 8, 8]
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
        let pad = conv_padding(&input.device());
        self.forward_padded(input, pad)
    }

    /// [`Net::forward`] with the convolutions' input channels padded to a multiple of `pad`
    /// (0: none) whatever the device.
    pub(crate) fn forward_padded(&self, input: Tensor<4>, pad: usize) -> NetOutput {
        let [batch, _, _, _] = input.dims();
        let mut x = relu(self.stem.forward(input, pad)); // [B, F, 8, 8]
        for block in &self.tower {
            x = block.forward(x, pad); // [B, F, 8, 8]
        }

        let p = relu(self.policy_conv.forward(x.clone(), pad)); // [B, F, 8, 8]
        let p = conv_forward(&self.policy_out, p, pad); // [B, 73 or 146, 8, 8]
        let (policy, opponent_policy) = if self.config.opponent_policy {
            let reply = p.clone().narrow(1, POLICY_PLANES, POLICY_PLANES); // [B, 73, 8, 8]
            (p.narrow(1, 0, POLICY_PLANES), Some(reply.reshape([batch, POLICY_SIZE])))
        } else {
            (p, None)
        };
        let policy = policy.reshape([batch, POLICY_SIZE]); // [B, 4672], NCHW: plane * 64 + square

        let v = relu(self.value_conv.forward(x, pad)); // [B, C, 8, 8]
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

    /// A padded convolution is the same function: the tiny net's stem (24 input planes)
    /// padded to 32 and to 64 channels against the plain convolution, in eval mode, and a
    /// 1×1 convolution with a bias (as the policy head's last layer).
    #[test]
    fn a_padded_convolution_computes_the_same() {
        let device = Device::flex();
        let stem = ConvBn::new(24, 32, 3, &device);
        let head = Conv2dConfig::new([24, 73], [1, 1]).init(&device);
        let values: Vec<f32> =
            (0..2 * 24 * 64).map(|i| ((i * 37 % 101) as f32 / 50.0) - 1.0).collect();
        let x = Tensor::<4>::from_data(TensorData::new(values, [2, 24, 8, 8]), &device);
        let host = |t: Tensor<4>| t.into_data().try_to_vec::<f32>().unwrap();
        for (plain, padded) in [
            (host(stem.forward(x.clone(), 0)), host(stem.forward(x.clone(), 32))),
            (host(stem.forward(x.clone(), 0)), host(stem.forward(x.clone(), 64))),
            (host(head.forward(x.clone())), host(conv_forward(&head, x.clone(), 32))),
        ] {
            assert_eq!(plain.len(), padded.len());
            let worst = plain.iter().zip(&padded).fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
            assert!(worst < 1e-4, "{worst}");
            assert!(plain.iter().any(|v| v.abs() > 0.1), "outputs of zeros prove nothing");
        }
    }

    /// A whole net whose every convolution is padded (24 filters, 24 input planes: stem,
    /// tower, both heads) computes the same outputs and the same gradient for every weight as
    /// the plain net, in training mode: what the GPU devices run by default.
    #[test]
    fn a_padded_net_has_the_same_outputs_and_gradients() {
        let device = Device::flex().autodiff();
        device.seed(5);
        let config = NetConfig { blocks: 2, filters: 24, ..NetConfig::tiny() };
        let net = config.init(&device).unwrap();
        let planes = config.input_planes();
        let values: Vec<f32> =
            (0..3 * planes * 64).map(|i| if (i * 7919) % 13 < 3 { 1.0 } else { 0.0 }).collect();
        let x = Tensor::<4>::from_data(TensorData::new(values, [3, planes, 8, 8]), &device);
        let run = |pad: usize| {
            let out = net.forward_padded(x.clone(), pad);
            let loss = out.policy.clone().powf_scalar(2.0).mean() + out.wdl.clone().sum();
            let grads = loss.backward();
            let weights: Vec<Vec<f32>> =
                [&net.stem.conv, &net.tower[1].second.conv, &net.policy_out]
                    .iter()
                    .map(|c| {
                        c.weight.grad(&grads).unwrap().into_data().try_to_vec::<f32>().unwrap()
                    })
                    .collect();
            let policy = out.policy.into_data().try_to_vec::<f32>().unwrap();
            (policy, weights)
        };
        let (plain, plain_grads) = run(0);
        let (padded, padded_grads) = run(32);
        let close = |a: &[f32], b: &[f32]| {
            let scale = a.iter().fold(0.0f32, |m, v| m.max(v.abs()));
            assert!(scale > 0.0, "all zeros prove nothing");
            let worst = a.iter().zip(b).fold(0.0f32, |m, (p, q)| m.max((p - q).abs()));
            assert!(a.len() == b.len() && worst <= 1e-4 * scale, "{worst} of {scale}");
        };
        close(&plain, &padded);
        for (a, b) in plain_grads.iter().zip(&padded_grads) {
            close(a, b);
        }
    }

    /// The CPU pads nothing (without `ATOMZERO_CONV_PAD` in the environment).
    #[test]
    fn the_cpu_pads_nothing() {
        assert_eq!(conv_padding(&Device::flex()), 0);
        assert_eq!(conv_padding(&Device::flex().autodiff()), 0);
    }
}
