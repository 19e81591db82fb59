//! The network's tensors as stored, in one place: every layer's name, kind and shapes, in
//! forward order, for a [`NetConfig`]. Every engine that reads or writes the weights follows
//! it: the Burn model's record (`Net::to_safetensors`, checked against this description in the
//! tests), the CPU inference (`atomzero-infer`), the CPU trainer (`atomzero-backprop`) and the
//! ONNX export's layer names.
//!
//! ```text
//! stem                      conv-bn   [F, planes, 3, 3]
//! tower.{i}.first|second    conv-bn   [F, F, 3, 3]                  (i < blocks)
//! tower.{i}.se.squeeze      dense     [F, F / se_ratio]            (se_ratio > 0)
//! tower.{i}.se.excite       dense     [F / se_ratio, 2F]
//! policy_conv               conv-bn   [F, F, 3, 3]
//! policy_out                conv+bias [73 or 146, F, 1, 1]
//! value_conv                conv-bn   [C, F, 1, 1]
//! value_hidden              dense     [64 C, H]
//! value_out                 dense     [H, 3]
//! ```
//!
//! A conv-bn layer stores `{name}.conv.weight` and its batch norm's `{name}.norm.gamma`,
//! `.beta` (learned) and `.running_mean`, `.running_var` (statistics); a convolution with bias
//! `{name}.weight`, `{name}.bias`; a dense layer (Burn's layout, `input · W + b`)
//! `{name}.weight [d_in, d_out]`, `{name}.bias [d_out]`. All tensors are f32.

use crate::config::NetConfig;

/// How a layer stores its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayerKind {
    /// A convolution without bias followed by batch norm.
    ConvBn {
        /// Input channels.
        c_in: usize,
        /// Output channels.
        c_out: usize,
        /// Kernel size (3 or 1).
        kernel: usize,
    },
    /// A convolution with its own bias.
    ConvBias {
        /// Input channels.
        c_in: usize,
        /// Output channels.
        c_out: usize,
        /// Kernel size.
        kernel: usize,
    },
    /// A linear layer.
    Dense {
        /// Inputs.
        d_in: usize,
        /// Outputs.
        d_out: usize,
    },
}

/// Whether a tensor is trained by gradient or is a batch norm's running statistic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TensorRole {
    /// A weight, bias, γ or β.
    Learned,
    /// A running mean or variance.
    Statistic,
}

/// One stored tensor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorSpec {
    /// Its name in the safetensors file (`tower.3.first.norm.running_var`).
    pub name: String,
    /// Its shape.
    pub shape: Vec<usize>,
    /// Learned or a statistic.
    pub role: TensorRole,
}

impl TensorSpec {
    /// The number of values.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// True for a tensor without values (no layer has one).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One layer: its name prefix and kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layer {
    /// The prefix of its tensors' names (`tower.3.first`); also its name in the ONNX graph.
    pub name: String,
    /// How it stores its parameters.
    pub kind: LayerKind,
}

impl Layer {
    fn new(name: impl Into<String>, kind: LayerKind) -> Layer {
        Layer { name: name.into(), kind }
    }

    /// The name of its tensor `suffix` (`conv.weight`, `norm.gamma`, `weight`, `bias`, ...).
    pub fn tensor_name(&self, suffix: &str) -> String {
        format!("{}.{suffix}", self.name)
    }

    /// Its tensors in stored order: a conv-bn layer's weight, γ, β, running mean, running
    /// variance; otherwise weight, bias.
    pub fn tensors(&self) -> Vec<TensorSpec> {
        let spec = |suffix: &str, shape: Vec<usize>, role| TensorSpec {
            name: self.tensor_name(suffix),
            shape,
            role,
        };
        use TensorRole::{Learned, Statistic};
        match self.kind {
            LayerKind::ConvBn { c_in, c_out, kernel } => vec![
                spec("conv.weight", vec![c_out, c_in, kernel, kernel], Learned),
                spec("norm.gamma", vec![c_out], Learned),
                spec("norm.beta", vec![c_out], Learned),
                spec("norm.running_mean", vec![c_out], Statistic),
                spec("norm.running_var", vec![c_out], Statistic),
            ],
            LayerKind::ConvBias { c_in, c_out, kernel } => vec![
                spec("weight", vec![c_out, c_in, kernel, kernel], Learned),
                spec("bias", vec![c_out], Learned),
            ],
            LayerKind::Dense { d_in, d_out } => {
                vec![spec("weight", vec![d_in, d_out], Learned), spec("bias", vec![d_out], Learned)]
            }
        }
    }
}

/// A residual block's layers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockLayout {
    /// The first 3×3 conv-bn.
    pub first: Layer,
    /// The second 3×3 conv-bn.
    pub second: Layer,
    /// Squeeze-excitation (`squeeze`, `excite`), if the net has it.
    pub se: Option<(Layer, Layer)>,
}

/// Every layer of a net, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetLayout {
    /// The input convolution.
    pub stem: Layer,
    /// The residual blocks.
    pub tower: Vec<BlockLayout>,
    /// The policy head's 3×3 conv-bn.
    pub policy_conv: Layer,
    /// The policy head's 1×1 convolution with bias (73 planes, or 146 with the opponent's
    /// reply: inference reads the first 73).
    pub policy_out: Layer,
    /// The value head's 1×1 conv-bn.
    pub value_conv: Layer,
    /// The value head's hidden dense layer.
    pub value_hidden: Layer,
    /// The value head's WDL output.
    pub value_out: Layer,
}

impl NetLayout {
    /// The layout of `config`'s net (the config is not validated here).
    pub fn of(config: &NetConfig) -> NetLayout {
        let f = config.filters;
        let conv_bn = |c_in, c_out, kernel| LayerKind::ConvBn { c_in, c_out, kernel };
        let dense = |d_in, d_out| LayerKind::Dense { d_in, d_out };
        let tower = (0..config.blocks)
            .map(|i| BlockLayout {
                first: Layer::new(format!("tower.{i}.first"), conv_bn(f, f, 3)),
                second: Layer::new(format!("tower.{i}.second"), conv_bn(f, f, 3)),
                se: config.se_hidden().map(|hidden| {
                    (
                        Layer::new(format!("tower.{i}.se.squeeze"), dense(f, hidden)),
                        Layer::new(format!("tower.{i}.se.excite"), dense(hidden, 2 * f)),
                    )
                }),
            })
            .collect();
        NetLayout {
            stem: Layer::new("stem", conv_bn(config.input_planes(), f, 3)),
            tower,
            policy_conv: Layer::new("policy_conv", conv_bn(f, f, 3)),
            policy_out: Layer::new(
                "policy_out",
                LayerKind::ConvBias { c_in: f, c_out: config.policy_out_planes(), kernel: 1 },
            ),
            value_conv: Layer::new("value_conv", conv_bn(f, config.value_channels, 1)),
            value_hidden: Layer::new(
                "value_hidden",
                dense(config.value_channels * 64, config.value_hidden),
            ),
            value_out: Layer::new("value_out", dense(config.value_hidden, 3)),
        }
    }

    /// Every layer in forward order.
    pub fn layers(&self) -> Vec<&Layer> {
        let mut all = vec![&self.stem];
        for block in &self.tower {
            all.push(&block.first);
            all.push(&block.second);
            if let Some((squeeze, excite)) = &block.se {
                all.push(squeeze);
                all.push(excite);
            }
        }
        all.extend([
            &self.policy_conv,
            &self.policy_out,
            &self.value_conv,
            &self.value_hidden,
            &self.value_out,
        ]);
        all
    }

    /// Every tensor, layer by layer in forward order.
    pub fn tensors(&self) -> Vec<TensorSpec> {
        self.layers().into_iter().flat_map(Layer::tensors).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_values_the_config_counts() {
        for config in [
            NetConfig::tiny(),
            NetConfig::default_size(),
            NetConfig { se_ratio: 2, opponent_policy: true, ..NetConfig::tiny() },
            NetConfig { blocks: 0, ..NetConfig::tiny() },
        ] {
            let layout = NetLayout::of(&config);
            let values: usize = layout.tensors().iter().map(TensorSpec::len).sum();
            assert_eq!(values as u64, config.parameters(), "{config:?}");
            let names: std::collections::BTreeSet<String> =
                layout.tensors().into_iter().map(|t| t.name).collect();
            assert_eq!(names.len(), layout.tensors().len(), "names are unique");
        }
    }

    #[test]
    fn names_and_orders_the_layers() {
        let config = NetConfig { blocks: 2, se_ratio: 4, ..NetConfig::tiny() };
        let layout = NetLayout::of(&config);
        let names: Vec<&str> = layout.layers().iter().map(|l| l.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "stem",
                "tower.0.first",
                "tower.0.second",
                "tower.0.se.squeeze",
                "tower.0.se.excite",
                "tower.1.first",
                "tower.1.second",
                "tower.1.se.squeeze",
                "tower.1.se.excite",
                "policy_conv",
                "policy_out",
                "value_conv",
                "value_hidden",
                "value_out",
            ]
        );
        let stem: Vec<(String, Vec<usize>, TensorRole)> =
            layout.stem.tensors().into_iter().map(|t| (t.name, t.shape, t.role)).collect();
        let planes = config.input_planes();
        assert_eq!(
            stem[0],
            ("stem.conv.weight".into(), vec![32, planes, 3, 3], TensorRole::Learned)
        );
        assert_eq!(stem[4], ("stem.norm.running_var".into(), vec![32], TensorRole::Statistic));
        let hidden = layout.value_hidden.tensors();
        assert_eq!(hidden[0].shape, vec![config.value_channels * 64, config.value_hidden]);
    }
}
