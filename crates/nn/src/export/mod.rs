//! ONNX export of the inference graph, so that programs without Burn (onnxruntime, TensorRT,
//! lc0-style engines, browsers) can run an atomzero network.
//!
//! [`to_onnx`] turns a [`Net`] into the bytes of an ONNX model (IR version [`IR_VERSION`],
//! default opset [`OPSET`]) built from the prost-generated ONNX messages in [`onnx`]:
//!
//! | | name | type | meaning |
//! |---|---|---|---|
//! | input | `planes` | float32 `[batch, planes, 8, 8]` | `atomzero_encoding::Encoder` planes (side to move's view) |
//! | output | `policy` | float32 `[batch, 4672]` | policy logits, index `plane * 64 + from_square` (`atomzero_encoding::policy`) |
//! | output | `wdl` | float32 `[batch, 3]` | win, draw, loss logits for the side to move |
//!
//! `batch` is a symbolic (dynamic) dimension. The graph is the inference graph of
//! [`Net::forward`] in eval mode: every batch norm is folded into the convolution before it
//! (`w' = w·γ/√(σ²+ε)`, `b' = β − μ·γ/√(σ²+ε)`, computed in f64), so the graph holds only
//! `Conv`, `Relu`, `Add`, `Flatten`, `Gemm` and, with squeeze-excitation, `GlobalAveragePool`,
//! `Sigmoid`, `Reshape` and `Mul`. The SE layer's excitation (`[B, 2F]`, gate then bias) is
//! exported as two `Gemm`s over the two halves of its weights.
//!
//! The model's `metadata_props` document what the numbers mean, so the file stands alone:
//! see [`METADATA_KEYS`] (input encoding version and plane list, policy layout, value
//! layout, variant, architecture as the sidecar's JSON).

#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod onnx;

use std::fmt;

use atomzero_encoding::{ENCODING_VERSION, Encoder, POLICY_PLANES, POLICY_SIZE, REMOVAL_PLANE};
use atomzero_rules::Variant;
use burn::module::Module;
use burn::nn::conv::Conv2d;
use burn::nn::{BatchNorm, Linear};
use burn::tensor::{Device, Tensor, TensorData};
use prost::Message;

use crate::layout::NetLayout;
use crate::model::{ConvBn, Net, SqueezeExcitation};
use onnx::tensor_proto::DataType;
use onnx::tensor_shape_proto::{Dimension, dimension};
use onnx::type_proto;
use onnx::{
    AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, StringStringEntryProto,
    TensorProto, TensorShapeProto, TypeProto, ValueInfoProto, attribute_proto::AttributeType,
};

/// ONNX IR version written (IR 8 = ONNX 1.10; every runtime of the last years reads it).
pub const IR_VERSION: i64 = 8;
/// Version of the default (`ai.onnx`) operator set the graph uses.
pub const OPSET: i64 = 17;
/// Name of the graph's input.
pub const INPUT_NAME: &str = "planes";
/// Name of the policy output.
pub const POLICY_OUTPUT: &str = "policy";
/// Name of the value output.
pub const WDL_OUTPUT: &str = "wdl";
/// Name of the dynamic batch dimension of the input and outputs.
pub const BATCH_DIM: &str = "batch";
/// Version of the metadata written by [`to_onnx`] (`atomzero.onnx_format`).
pub const ONNX_FORMAT_VERSION: u32 = 1;

/// The `metadata_props` keys written by [`to_onnx`], each with what its value holds.
pub const METADATA_KEYS: [(&str, &str); 10] = [
    ("atomzero.onnx_format", "version of this metadata layout (1)"),
    ("atomzero.encoding_version", "atomzero_encoding::ENCODING_VERSION of the input planes"),
    ("atomzero.input_planes", "number of input planes (the `planes` input's dimension 1)"),
    ("atomzero.input_encoding", "how the planes are laid out, one line per plane or plane group"),
    ("atomzero.policy_layout", "what each of the 4672 policy logits means"),
    ("atomzero.value_layout", "what the 3 wdl logits mean"),
    ("atomzero.variant", "the rule variant the net was trained for"),
    ("atomzero.architecture", "the NetConfig as JSON (as in the sidecar's `net` field)"),
    ("atomzero.training_step", "optimizer steps behind the weights"),
    ("atomzero.source", "the weights file the export was made from (empty if none)"),
];

/// What [`to_onnx`] records about the net besides its weights.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExportInfo {
    /// The variant the net plays (`atomic`, ...).
    pub variant: String,
    /// Optimizer steps behind the weights.
    pub training_step: u64,
    /// Where the weights came from (e.g. the safetensors file name), if anywhere.
    pub source: Option<String>,
}

/// Why a net could not be exported (or run for reference outputs).
#[derive(Debug)]
pub enum ExportError {
    /// A weight tensor could not be read back from the backend.
    Tensor {
        /// Which layer.
        layer: String,
        /// The backend's message.
        message: String,
    },
    /// A layer has a shape or setting the exporter does not handle.
    Unsupported {
        /// Which layer.
        layer: String,
        /// What is unexpected about it.
        reason: String,
    },
    /// The reference input does not have `batch * planes * 64` values.
    InputSize {
        /// Values expected.
        expected: usize,
        /// Values given.
        found: usize,
    },
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExportError::Tensor { layer, message } => {
                write!(f, "cannot read the weights of {layer}: {message}")
            }
            ExportError::Unsupported { layer, reason } => {
                write!(f, "cannot export {layer}: {reason}")
            }
            ExportError::InputSize { expected, found } => {
                write!(f, "input has {found} values, the net expects {expected}")
            }
        }
    }
}

impl std::error::Error for ExportError {}

/// The bytes of an ONNX model computing `net`'s inference forward pass. See the module docs
/// for the inputs, outputs and metadata.
pub fn to_onnx(net: &Net, info: &ExportInfo) -> Result<Vec<u8>, ExportError> {
    Ok(to_onnx_model(net, info)?.encode_to_vec())
}

/// [`to_onnx`] before encoding: the ONNX model as a message.
pub fn to_onnx_model(net: &Net, info: &ExportInfo) -> Result<ModelProto, ExportError> {
    // Eval mode: batch norm uses (and `valid` folds in) the running statistics.
    let net = net.valid();
    let config = net.config().clone();
    let planes = config.input_planes();
    let mut graph = GraphBuilder::default();

    // Layer names (and so initializer names) are the stored tensors' (`crate::layout`).
    let layout = NetLayout::of(&config);
    let mut x = graph.conv_bn(&layout.stem.name, &net.stem, INPUT_NAME)?;
    x = graph.node("Relu", &format!("{}/relu", layout.stem.name), &[&x], vec![]);
    for (i, (block, names)) in net.tower.iter().zip(&layout.tower).enumerate() {
        let name = format!("tower.{i}");
        let y = graph.conv_bn(&names.first.name, &block.first, &x)?;
        let y = graph.node("Relu", &format!("{name}/relu1"), &[&y], vec![]);
        let mut y = graph.conv_bn(&names.second.name, &block.second, &y)?;
        if let (Some(se), Some((squeeze, _))) = (&block.se, &names.se) {
            // `tower.{i}.se`: its two dense layers are `.squeeze` and `.excite`.
            let prefix = squeeze.name.strip_suffix(".squeeze").unwrap_or(&squeeze.name);
            y = graph.squeeze_excitation(prefix, se, &y)?;
        }
        let sum = graph.node("Add", &format!("{name}/skip"), &[&y, &x], vec![]);
        x = graph.node("Relu", &format!("{name}/relu2"), &[&sum], vec![]);
    }

    let policy_conv = layout.policy_conv.name.as_str();
    let p = graph.conv_bn(policy_conv, &net.policy_conv, &x)?;
    let p = graph.node("Relu", &format!("{policy_conv}/relu"), &[&p], vec![]);
    // The opponent-policy planes (a training target) are left out.
    let p = graph.conv_planes(&layout.policy_out.name, &net.policy_out, None, &p, POLICY_PLANES)?; // [B, 73, 8, 8]
    graph.node("Flatten", POLICY_OUTPUT, &[&p], vec![int_attr("axis", 1)]); // [B, 4672]

    let value_conv = layout.value_conv.name.as_str();
    let v = graph.conv_bn(value_conv, &net.value_conv, &x)?; // [B, C, 8, 8]
    let v = graph.node("Relu", &format!("{value_conv}/relu"), &[&v], vec![]);
    let v = graph.node("Flatten", "value/flatten", &[&v], vec![int_attr("axis", 1)]); // [B, C*64]
    let hidden = layout.value_hidden.name.as_str();
    let v = graph.linear(hidden, &net.value_hidden, &v, &format!("{hidden}/gemm"))?; // [B, H]
    let v = graph.node("Relu", &format!("{hidden}/relu"), &[&v], vec![]);
    graph.linear(&layout.value_out.name, &net.value_out, &v, WDL_OUTPUT)?; // [B, 3]

    let batch = || Dimension {
        denotation: String::new(),
        value: Some(dimension::Value::DimParam(BATCH_DIM.into())),
    };
    let fixed = |n: usize| Dimension {
        denotation: String::new(),
        value: Some(dimension::Value::DimValue(n as i64)),
    };
    let graph = GraphProto {
        name: "atomzero".into(),
        node: graph.nodes,
        initializer: graph.initializers,
        input: vec![value_info(
            INPUT_NAME,
            vec![batch(), fixed(planes), fixed(8), fixed(8)],
            "encoded positions (atomzero.input_encoding)",
        )],
        output: vec![
            value_info(
                POLICY_OUTPUT,
                vec![batch(), fixed(POLICY_SIZE)],
                "policy logits (atomzero.policy_layout)",
            ),
            value_info(WDL_OUTPUT, vec![batch(), fixed(3)], "win/draw/loss logits, side to move"),
        ],
        ..GraphProto::default()
    };

    let architecture = serde_json::to_string(&config)
        .map_err(|e| ExportError::Unsupported { layer: "config".into(), reason: e.to_string() })?;
    let metadata = [
        ONNX_FORMAT_VERSION.to_string(),
        ENCODING_VERSION.to_string(),
        planes.to_string(),
        input_encoding(Encoder::new(config.encoder)),
        policy_layout(),
        "wdl = [win, draw, loss] logits for the side to move; softmax gives probabilities; \
         value = P(win) - P(loss)"
            .to_string(),
        info.variant.clone(),
        architecture,
        info.training_step.to_string(),
        info.source.clone().unwrap_or_default(),
    ];
    let metadata_props = METADATA_KEYS
        .iter()
        .zip(metadata)
        .map(|(&(key, _), value)| StringStringEntryProto { key: key.into(), value })
        .collect();

    Ok(ModelProto {
        ir_version: IR_VERSION,
        opset_import: vec![OperatorSetIdProto { domain: String::new(), version: OPSET }],
        producer_name: "atomzero".into(),
        producer_version: env!("CARGO_PKG_VERSION").into(),
        model_version: i64::try_from(info.training_step).unwrap_or(i64::MAX),
        doc_string: format!(
            "atomzero network ({}x{}{}) for {}: input `planes` [batch, {planes}, 8, 8], \
             outputs `policy` [batch, {POLICY_SIZE}] and `wdl` [batch, 3] (logits); \
             see metadata_props",
            config.blocks,
            config.filters,
            if config.se_ratio > 0 { " SE" } else { "" },
            info.variant,
        ),
        graph: Some(graph),
        metadata_props,
        ..ModelProto::default()
    })
}

/// A network's raw outputs for a batch.
#[derive(Clone, Debug, PartialEq)]
pub struct RawOutputs {
    /// Policy logits, `[batch * 4672]`.
    pub policy: Vec<f32>,
    /// Win/draw/loss logits, `[batch * 3]`.
    pub wdl: Vec<f32>,
}

/// The net's own raw outputs on encoded planes `[batch, planes, 8, 8]` (row-major, as
/// `atomzero_encoding::Batch::as_slice` lays them out), in eval mode on `device`: the reference
/// an exported file must match.
pub fn reference_outputs(
    net: &Net,
    planes: &[f32],
    batch: usize,
    device: &Device,
) -> Result<RawOutputs, ExportError> {
    let channels = net.config().input_planes();
    let expected = batch * channels * 64;
    if planes.len() != expected || batch == 0 {
        return Err(ExportError::InputSize { expected, found: planes.len() });
    }
    let device = device.clone().without_autodiff();
    let net = net.valid().to_device(&device);
    let input =
        Tensor::<4>::from_data(TensorData::new(planes.to_vec(), [batch, channels, 8, 8]), &device); // [B, planes, 8, 8]
    let output = net.forward(input);
    let policy = floats(output.policy, "policy output")?; // [B * 4672]
    let wdl = floats(output.wdl, "wdl output")?; // [B * 3]
    Ok(RawOutputs { policy, wdl })
}

/// One line per plane (or group of planes) of `encoder`'s input, as `atomzero.input_encoding`
/// records it. Mirrors the table in `atomzero_encoding::planes`.
pub fn input_encoding(encoder: Encoder) -> String {
    const PIECES: [&str; 6] = ["pawns", "knights", "bishops", "rooks", "queens", "king"];
    let mut lines = vec![
        format!(
            "encoding version {ENCODING_VERSION}: {} planes of 8x8, index rank * 8 + file from \
             the side to move's view (rank 0 = the mover's first rank: the board is mirrored \
             top to bottom when Black is to move; file 0 = the a-file); the colour to move is \
             not encoded",
            encoder.planes()
        ),
        "0-5: the side to move's pawns, knights, bishops, rooks, queens, king (1 on occupied \
         squares)"
            .to_string(),
        "6-11: the opponent's pieces, same order".to_string(),
        "12: all 1 if the position occurred once or more before".to_string(),
        "13: all 1 if it occurred twice or more before".to_string(),
        "14: the side to move's rooks that may still castle (1 on their squares)".to_string(),
        "15: the opponent's rooks that may still castle".to_string(),
        "16: the en-passant target square, only when an en-passant capture is legal; in the \
         setup phase of the Balanced start (White to remove a pawn) the squares of the 16 \
         pawns instead"
            .to_string(),
        "17: the half-move clock / 100 (capped at 1) on every square".to_string(),
        "18: all 1".to_string(),
    ];
    for (i, variant) in Variant::ALL.iter().enumerate() {
        lines.push(format!("{}: all 1 if the variant is {variant}", 19 + i));
    }
    for k in 0..encoder.config().history {
        let first = 24 + 12 * k;
        lines.push(format!(
            "{}-{}: the position {} plies earlier, pieces as in 0-11 (same view as now: the \
             current mover's pieces first, mirrored as now; zeros before the game's start); {}",
            first,
            first + 11,
            k + 1,
            PIECES.join(", ")
        ));
    }
    lines.join("\n")
}

/// The policy layout as `atomzero.policy_layout` records it. Mirrors the table in
/// `atomzero_encoding::policy`.
pub fn policy_layout() -> String {
    format!(
        "{POLICY_SIZE} logits, index = plane * 64 + from, where from = rank * 8 + file of the \
         origin square from the side to move's view (mirrored top to bottom for Black), and \
         plane ({POLICY_PLANES}) is the move type:\n\
         0-55: queen-like moves, plane = direction * 7 + (distance - 1), directions N, NE, E, \
         SE, S, SW, W, NW from the mover's view, distance 1-7 (queen promotions included)\n\
         56-63: knight moves, (file, rank) steps (+1,+2), (+2,+1), (+2,-1), (+1,-2), (-1,-2), \
         (-2,-1), (-2,+1), (-1,+2)\n\
         64-72: under-promotions, plane = 64 + 3 * piece + direction, piece knight, bishop, \
         rook; direction capture towards file - 1, straight, capture towards file + 1\n\
         castling is the king moving onto its own rook (a horizontal queen-like move)\n\
         the Balanced start's removal of a pawn (its setup phase, where only removals are \
         legal) is plane {REMOVAL_PLANE} (S, distance 1) at the pawn's square\n\
         mask to the legal moves and softmax over them for move probabilities"
    )
}

/// Nodes and initializers of the graph under construction.
#[derive(Default)]
struct GraphBuilder {
    nodes: Vec<NodeProto>,
    initializers: Vec<TensorProto>,
}

impl GraphBuilder {
    /// Adds a node whose single output is named after the node; returns the output's name.
    fn node(
        &mut self,
        op: &str,
        name: &str,
        inputs: &[&str],
        attribute: Vec<AttributeProto>,
    ) -> String {
        self.nodes.push(NodeProto {
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec![name.to_string()],
            name: name.to_string(),
            op_type: op.to_string(),
            attribute,
            ..NodeProto::default()
        });
        name.to_string()
    }

    /// Adds a float32 initializer; returns its name.
    fn initializer(&mut self, name: String, dims: &[usize], values: Vec<f32>) -> String {
        let raw_data = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.initializers.push(TensorProto {
            name: name.clone(),
            dims: dims.iter().map(|&d| d as i64).collect(),
            data_type: DataType::Float as i32,
            raw_data,
            ..TensorProto::default()
        });
        name
    }

    /// A convolution with batch norm folded into its weights and bias.
    fn conv_bn(&mut self, name: &str, layer: &ConvBn, input: &str) -> Result<String, ExportError> {
        self.conv(name, &layer.conv, Some(&layer.norm), input)
    }

    /// `Conv` with "same" padding and stride 1, with `norm` folded in if given.
    fn conv(
        &mut self,
        name: &str,
        conv: &Conv2d,
        norm: Option<&BatchNorm>,
        input: &str,
    ) -> Result<String, ExportError> {
        self.conv_planes(name, conv, norm, input, usize::MAX)
    }

    /// [`GraphBuilder::conv`] keeping only the first `keep` output channels.
    fn conv_planes(
        &mut self,
        name: &str,
        conv: &Conv2d,
        norm: Option<&BatchNorm>,
        input: &str,
        keep: usize,
    ) -> Result<String, ExportError> {
        let unsupported = |reason: String| ExportError::Unsupported { layer: name.into(), reason };
        let [kh, kw] = conv.kernel_size;
        if kh != kw
            || kh % 2 == 0
            || conv.stride != [1, 1]
            || conv.dilation != [1, 1]
            || conv.groups != 1
        {
            return Err(unsupported(format!(
                "kernel {kh}x{kw}, stride {:?}, dilation {:?}, groups {} (only odd square \
                 kernels, stride 1, no dilation, one group)",
                conv.stride, conv.dilation, conv.groups
            )));
        }
        let weight = conv.weight.val();
        let dims = weight.dims(); // [C_out, C_in, k, k]
        let mut weights = floats(weight, name)?;
        let out_channels = dims[0];
        let per_output = weights.len() / out_channels.max(1);
        let mut bias = match &conv.bias {
            Some(bias) => floats(bias.val(), name)?,
            None => vec![0.0; out_channels],
        };
        if bias.len() != out_channels {
            return Err(unsupported(format!("{} biases for {out_channels} channels", bias.len())));
        }
        if let Some(norm) = norm {
            let gamma = floats(norm.gamma.val(), name)?;
            let beta = floats(norm.beta.val(), name)?;
            let mean = floats(norm.running_mean.value(), name)?;
            let var = floats(norm.running_var.value(), name)?;
            if [gamma.len(), beta.len(), mean.len(), var.len()] != [out_channels; 4] {
                return Err(unsupported("batch norm size differs from the channels".into()));
            }
            for o in 0..out_channels {
                let scale = f64::from(gamma[o]) / (f64::from(var[o]) + norm.epsilon).sqrt();
                for w in &mut weights[o * per_output..(o + 1) * per_output] {
                    *w = (f64::from(*w) * scale) as f32;
                }
                bias[o] =
                    (f64::from(beta[o]) + (f64::from(bias[o]) - f64::from(mean[o])) * scale) as f32;
            }
        }
        let kept = out_channels.min(keep);
        weights.truncate(kept * per_output);
        bias.truncate(kept);
        let dims = [kept, dims[1], dims[2], dims[3]];
        let w = self.initializer(format!("{name}.weight"), &dims, weights);
        let b = self.initializer(format!("{name}.bias"), &[kept], bias);
        let pad = (kh / 2) as i64;
        let attrs = vec![
            ints_attr("kernel_shape", &[kh as i64, kw as i64]),
            ints_attr("pads", &[pad; 4]),
            ints_attr("strides", &[1, 1]),
        ];
        Ok(self.node("Conv", &format!("{name}/conv"), &[input, &w, &b], attrs))
    }

    /// `Gemm` computing `input · W + b` (Burn stores linear weights as `[d_in, d_out]`).
    /// `output` names the result.
    fn linear(
        &mut self,
        name: &str,
        linear: &Linear,
        input: &str,
        output: &str,
    ) -> Result<String, ExportError> {
        let LinearParts { weight, bias, d_in, d_out } = linear_parts(name, linear)?;
        let w = self.initializer(format!("{name}.weight"), &[d_in, d_out], weight);
        let b = self.initializer(format!("{name}.bias"), &[d_out], bias);
        Ok(self.node("Gemm", output, &[input, &w, &b], vec![]))
    }

    /// lc0's SE: `sigmoid(gate) * x + bias`, gate and bias from an MLP over the channel means.
    fn squeeze_excitation(
        &mut self,
        name: &str,
        se: &SqueezeExcitation,
        input: &str,
    ) -> Result<String, ExportError> {
        let pooled = self.node("GlobalAveragePool", &format!("{name}/pool"), &[input], vec![]); // [B, F, 1, 1]
        let pooled =
            self.node("Flatten", &format!("{name}/flatten"), &[&pooled], vec![int_attr("axis", 1)]); // [B, F]
        let hidden = self.linear(
            &format!("{name}.squeeze"),
            &se.squeeze,
            &pooled,
            &format!("{name}/squeeze"),
        )?; // [B, H]
        let hidden = self.node("Relu", &format!("{name}/relu"), &[&hidden], vec![]);

        let LinearParts { weight, bias, d_in, d_out } = linear_parts(name, &se.excite)?;
        let filters = d_out / 2;
        if d_out != 2 * filters {
            return Err(ExportError::Unsupported {
                layer: name.into(),
                reason: format!("excitation has {d_out} outputs, expected an even number"),
            });
        }
        // Split the [d_in, 2F] weights by columns: the first F outputs gate, the rest bias.
        let half = |range: std::ops::Range<usize>| -> Vec<f32> {
            (0..d_in).flat_map(|row| weight[row * d_out..][range.clone()].to_vec()).collect()
        };
        let shape = self.int64_initializer(format!("{name}.shape"), &[-1, filters as i64, 1, 1]);
        let mut halves = Vec::new();
        for (part, range) in [("gate", 0..filters), ("bias", filters..d_out)] {
            let w = self.initializer(
                format!("{name}.excite_{part}.weight"),
                &[d_in, filters],
                half(range.clone()),
            );
            let b = self.initializer(
                format!("{name}.excite_{part}.bias"),
                &[filters],
                bias[range].to_vec(),
            );
            let y = self.node("Gemm", &format!("{name}/excite_{part}"), &[&hidden, &w, &b], vec![]); // [B, F]
            halves.push(y);
        }
        let gate = self.node("Sigmoid", &format!("{name}/sigmoid"), &[&halves[0]], vec![]);
        let gate = self.node("Reshape", &format!("{name}/gate"), &[&gate, &shape], vec![]); // [B, F, 1, 1]
        let bias = self.node("Reshape", &format!("{name}/bias"), &[&halves[1], &shape], vec![]); // [B, F, 1, 1]
        let scaled = self.node("Mul", &format!("{name}/scale"), &[input, &gate], vec![]); // [B, F, 8, 8]
        Ok(self.node("Add", &format!("{name}/shift"), &[&scaled, &bias], vec![])) // [B, F, 8, 8]
    }

    /// Adds an int64 initializer (a shape); returns its name.
    fn int64_initializer(&mut self, name: String, values: &[i64]) -> String {
        self.initializers.push(TensorProto {
            name: name.clone(),
            dims: vec![values.len() as i64],
            data_type: DataType::Int64 as i32,
            int64_data: values.to_vec(),
            ..TensorProto::default()
        });
        name
    }
}

/// A linear layer's parameters as plain numbers.
struct LinearParts {
    /// `[d_in * d_out]`, row-major.
    weight: Vec<f32>,
    /// `[d_out]` (zeros without bias).
    bias: Vec<f32>,
    d_in: usize,
    d_out: usize,
}

fn linear_parts(name: &str, linear: &Linear) -> Result<LinearParts, ExportError> {
    let weight = linear.weight.val();
    let [d_in, d_out] = weight.dims();
    let weight = floats(weight, name)?;
    let bias = match &linear.bias {
        Some(bias) => floats(bias.val(), name)?,
        None => vec![0.0; d_out],
    };
    if bias.len() != d_out {
        return Err(ExportError::Unsupported {
            layer: name.into(),
            reason: format!("{} biases for {d_out} outputs", bias.len()),
        });
    }
    Ok(LinearParts { weight, bias, d_in, d_out })
}

/// A tensor's values as f32, row-major.
fn floats<const D: usize>(tensor: Tensor<D>, layer: &str) -> Result<Vec<f32>, ExportError> {
    let error = |message: String| ExportError::Tensor { layer: layer.into(), message };
    let data = tensor.try_into_data().map_err(|e| error(format!("{e:?}")))?;
    data.try_into_vec_as::<f32>().map_err(|e| error(format!("{e:?}")))
}

fn value_info(name: &str, dims: Vec<Dimension>, doc: &str) -> ValueInfoProto {
    ValueInfoProto {
        name: name.into(),
        r#type: Some(TypeProto {
            denotation: String::new(),
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: DataType::Float as i32,
                shape: Some(TensorShapeProto { dim: dims }),
            })),
        }),
        doc_string: doc.into(),
        ..ValueInfoProto::default()
    }
}

fn int_attr(name: &str, value: i64) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: AttributeType::Int as i32,
        i: value,
        ..AttributeProto::default()
    }
}

fn ints_attr(name: &str, values: &[i64]) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: AttributeType::Ints as i32,
        ints: values.to_vec(),
        ..AttributeProto::default()
    }
}
