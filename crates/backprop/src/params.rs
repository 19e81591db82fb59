//! The net's parameters as two flat `f32` buffers, laid out as `atomzero_nn::layout` describes
//! the stored tensors (Burn's names, shapes and order), so that they convert to and from the
//! safetensors bytes `atomzero_nn` reads and writes:
//!
//! - `values`: everything the optimizer updates (convolution weights, batch-norm `gamma` and
//!   `beta`, the policy output's weight and bias, the linear layers' weights `[d_in][d_out]`
//!   and biases), one tensor after another in the order of [`Params::tensors`];
//! - `stats`: the batch norms' running means and variances (updated by training steps, not by
//!   the optimizer).
//!
//! Squeeze-excitation blocks are not supported (the caller trains such nets with Burn).

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;

use atomzero_nn::{Layer, LayerKind, NetConfig, NetLayout, TensorRole};
use safetensors::{Dtype, SafeTensors};

/// Why parameters could not be built, read or written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamsError {
    /// The architecture is invalid or has a part this trainer does not implement.
    Unsupported(String),
    /// The safetensors bytes are unreadable, or a tensor is missing, extra, of another
    /// dtype or shape, or not finite.
    Weights(String),
}

impl fmt::Display for ParamsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamsError::Unsupported(what) => write!(f, "not supported by the CPU trainer: {what}"),
            ParamsError::Weights(what) => write!(f, "weights: {what}"),
        }
    }
}

impl std::error::Error for ParamsError {}

/// One named tensor of a flat buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorInfo {
    /// Burn's name, e.g. `tower.0.first.conv.weight`.
    pub name: String,
    /// Burn's shape.
    pub shape: Vec<usize>,
    /// Where its values are in the buffer.
    pub range: Range<usize>,
}

/// A convolution without bias followed by batch norm: where its tensors are.
#[derive(Clone, Debug)]
pub(crate) struct ConvBnAt {
    pub c_in: usize,
    pub c_out: usize,
    /// `[c_out][c_in][k][k]` in `values`.
    pub weight: Range<usize>,
    /// `[c_out]` in `values`.
    pub gamma: Range<usize>,
    /// `[c_out]` in `values`.
    pub beta: Range<usize>,
    /// `[c_out]` in `stats`.
    pub mean: Range<usize>,
    /// `[c_out]` in `stats`.
    pub var: Range<usize>,
}

/// A 1×1 convolution with bias (the policy output).
#[derive(Clone, Debug)]
pub(crate) struct ConvBiasAt {
    pub c_in: usize,
    pub c_out: usize,
    /// `[c_out][c_in][1][1]`.
    pub weight: Range<usize>,
    /// `[c_out]`.
    pub bias: Range<usize>,
}

/// A linear layer (Burn's layout).
#[derive(Clone, Debug)]
pub(crate) struct DenseAt {
    pub d_in: usize,
    pub d_out: usize,
    /// `[d_in][d_out]`.
    pub weight: Range<usize>,
    /// `[d_out]`.
    pub bias: Range<usize>,
}

/// Every layer of the net.
#[derive(Clone, Debug)]
pub(crate) struct Layers {
    pub stem: ConvBnAt,
    /// `(first, second)` convolution of each residual block.
    pub tower: Vec<(ConvBnAt, ConvBnAt)>,
    pub policy_conv: ConvBnAt,
    pub policy_out: ConvBiasAt,
    pub value_conv: ConvBnAt,
    pub value_hidden: DenseAt,
    pub value_out: DenseAt,
}

impl Layers {
    /// The 3×3 convolutions in forward order: stem, each block's two, the policy head's.
    pub fn convs3(&self) -> Vec<&ConvBnAt> {
        let mut all = vec![&self.stem];
        for (first, second) in &self.tower {
            all.push(first);
            all.push(second);
        }
        all.push(&self.policy_conv);
        all
    }
}

/// The parameters of one net.
#[derive(Clone, Debug)]
pub struct Params {
    config: NetConfig,
    pub(crate) values: Vec<f32>,
    pub(crate) stats: Vec<f32>,
    pub(crate) tensors: Vec<TensorInfo>,
    stat_tensors: Vec<TensorInfo>,
    pub(crate) layers: Layers,
}

/// Lays tensors out one after another.
#[derive(Default)]
struct Builder {
    values: usize,
    stats: usize,
    tensors: Vec<TensorInfo>,
    stat_tensors: Vec<TensorInfo>,
}

impl Builder {
    fn value(&mut self, name: String, shape: Vec<usize>) -> Range<usize> {
        let range = self.values..self.values + shape.iter().product::<usize>();
        self.values = range.end;
        self.tensors.push(TensorInfo { name, shape, range: range.clone() });
        range
    }

    fn stat(&mut self, name: String, shape: Vec<usize>) -> Range<usize> {
        let range = self.stats..self.stats + shape.iter().product::<usize>();
        self.stats = range.end;
        self.stat_tensors.push(TensorInfo { name, shape, range: range.clone() });
        range
    }

    /// Lays out `layer`'s tensors in stored order: learned ones in `values`, statistics in
    /// `stats`; their ranges.
    fn layer(&mut self, layer: &Layer) -> Vec<Range<usize>> {
        layer
            .tensors()
            .into_iter()
            .map(|t| match t.role {
                TensorRole::Learned => self.value(t.name, t.shape),
                TensorRole::Statistic => self.stat(t.name, t.shape),
            })
            .collect()
    }

    /// A conv-bn layer (weight, γ, β; running mean, variance).
    fn conv_bn(&mut self, layer: &Layer) -> ConvBnAt {
        let (c_in, c_out) = dims(layer);
        let r = self.layer(layer);
        ConvBnAt {
            c_in,
            c_out,
            weight: r[0].clone(),
            gamma: r[1].clone(),
            beta: r[2].clone(),
            mean: r[3].clone(),
            var: r[4].clone(),
        }
    }

    /// A convolution with bias (weight, bias).
    fn conv_bias(&mut self, layer: &Layer) -> ConvBiasAt {
        let (c_in, c_out) = dims(layer);
        let r = self.layer(layer);
        ConvBiasAt { c_in, c_out, weight: r[0].clone(), bias: r[1].clone() }
    }

    /// A dense layer (weight, bias).
    fn dense(&mut self, layer: &Layer) -> DenseAt {
        let (d_in, d_out) = dims(layer);
        let r = self.layer(layer);
        DenseAt { d_in, d_out, weight: r[0].clone(), bias: r[1].clone() }
    }
}

/// A layer's input and output sizes (channels or units).
fn dims(layer: &Layer) -> (usize, usize) {
    match layer.kind {
        LayerKind::ConvBn { c_in, c_out, .. } | LayerKind::ConvBias { c_in, c_out, .. } => {
            (c_in, c_out)
        }
        LayerKind::Dense { d_in, d_out } => (d_in, d_out),
    }
}

impl Params {
    /// The layout of `config`'s parameters, with every value zero, every running mean 0 and
    /// every running variance 1 (a fresh batch norm's statistics).
    pub fn zeros(config: &NetConfig) -> Result<Params, ParamsError> {
        config.validate().map_err(|e| ParamsError::Unsupported(e.to_string()))?;
        if config.se_hidden().is_some() {
            return Err(ParamsError::Unsupported(
                "squeeze-excitation (net.se_ratio > 0)".to_string(),
            ));
        }
        let mut b = Builder::default();
        // The layers in `atomzero_nn::layout`'s order (no squeeze-excitation here).
        let layout = NetLayout::of(config);
        let stem = b.conv_bn(&layout.stem);
        let tower = layout
            .tower
            .iter()
            .map(|block| (b.conv_bn(&block.first), b.conv_bn(&block.second)))
            .collect();
        let policy_conv = b.conv_bn(&layout.policy_conv);
        // 73 planes, or 146 with the opponent's reply (`NetConfig::opponent_policy`).
        let policy_out = b.conv_bias(&layout.policy_out);
        let value_conv = b.conv_bn(&layout.value_conv);
        let value_hidden = b.dense(&layout.value_hidden);
        let value_out = b.dense(&layout.value_out);
        let layers =
            Layers { stem, tower, policy_conv, policy_out, value_conv, value_hidden, value_out };
        let mut stats = vec![0.0f32; b.stats];
        for info in &b.stat_tensors {
            if info.name.ends_with("running_var") {
                stats[info.range.clone()].fill(1.0);
            }
        }
        Ok(Params {
            config: config.clone(),
            values: vec![0.0; b.values],
            stats,
            tensors: b.tensors,
            stat_tensors: b.stat_tensors,
            layers,
        })
    }

    /// Reads a net of architecture `config` from safetensors bytes as `atomzero_nn` writes
    /// them: every tensor present, F32, of its shape and finite; no other tensor.
    pub fn from_safetensors(config: &NetConfig, bytes: &[u8]) -> Result<Params, ParamsError> {
        let mut params = Params::zeros(config)?;
        let file =
            SafeTensors::deserialize(bytes).map_err(|e| ParamsError::Weights(e.to_string()))?;
        let mut expected = 0;
        for (infos, buffer) in
            [(&params.tensors, &mut params.values), (&params.stat_tensors, &mut params.stats)]
        {
            for info in infos {
                expected += 1;
                let view = file
                    .tensor(&info.name)
                    .map_err(|_| ParamsError::Weights(format!("missing tensor {}", info.name)))?;
                if view.dtype() != Dtype::F32 || view.shape() != info.shape.as_slice() {
                    return Err(ParamsError::Weights(format!(
                        "tensor {}: {:?} {:?}, expected F32 {:?}",
                        info.name,
                        view.dtype(),
                        view.shape(),
                        info.shape
                    )));
                }
                let dst = &mut buffer[info.range.clone()];
                if view.data().len() != 4 * dst.len() {
                    return Err(ParamsError::Weights(format!(
                        "tensor {}: wrong byte length",
                        info.name
                    )));
                }
                for (d, b) in dst.iter_mut().zip(view.data().chunks_exact(4)) {
                    *d = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                }
                if dst.iter().any(|v| !v.is_finite()) {
                    return Err(ParamsError::Weights(format!(
                        "tensor {} has a value that is not finite",
                        info.name
                    )));
                }
            }
        }
        if file.len() != expected {
            let known: Vec<&str> = params
                .tensors
                .iter()
                .chain(&params.stat_tensors)
                .map(|t| t.name.as_str())
                .collect();
            let mut extra: Vec<String> =
                file.names().into_iter().filter(|n| !known.contains(n)).map(String::from).collect();
            extra.sort();
            return Err(ParamsError::Weights(format!("unexpected tensors: {}", extra.join(", "))));
        }
        Ok(params)
    }

    /// The safetensors bytes of these parameters (Burn's names and shapes; what
    /// [`Params::from_safetensors`] and `atomzero_nn::NetConfig::load_safetensors` read).
    pub fn to_safetensors(&self) -> Result<Vec<u8>, ParamsError> {
        let mut bytes: HashMap<&str, (Vec<usize>, Vec<u8>)> = HashMap::new();
        for (infos, buffer) in [(&self.tensors, &self.values), (&self.stat_tensors, &self.stats)] {
            for info in infos {
                let data: Vec<u8> =
                    buffer[info.range.clone()].iter().flat_map(|v| v.to_le_bytes()).collect();
                bytes.insert(info.name.as_str(), (info.shape.clone(), data));
            }
        }
        let views: Vec<(&str, safetensors::tensor::TensorView<'_>)> = bytes
            .iter()
            .map(|(name, (shape, data))| {
                safetensors::tensor::TensorView::new(Dtype::F32, shape.clone(), data)
                    .map(|view| (*name, view))
                    .map_err(|e| ParamsError::Weights(e.to_string()))
            })
            .collect::<Result<_, _>>()?;
        safetensors::serialize(views, None).map_err(|e| ParamsError::Weights(e.to_string()))
    }

    /// The architecture.
    pub fn config(&self) -> &NetConfig {
        &self.config
    }

    /// The trainable tensors, in the order of the flat buffer.
    pub fn tensors(&self) -> &[TensorInfo] {
        &self.tensors
    }

    /// The trainable values, one tensor after another (see [`Params::tensors`]).
    pub fn values(&self) -> &[f32] {
        &self.values
    }

    /// The trainable values, to change in place.
    pub fn values_mut(&mut self) -> &mut [f32] {
        &mut self.values
    }

    /// The running batch-norm statistics (each norm's means, then its variances, in the
    /// order of the layers).
    pub fn stats(&self) -> &[f32] {
        &self.stats
    }

    /// The running statistics, to change in place.
    pub fn stats_mut(&mut self) -> &mut [f32] {
        &mut self.stats
    }
}
