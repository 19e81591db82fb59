//! [`InferNet`]: the residual net's forward pass on plain `f32` buffers, and the [`Workspace`]
//! of buffers it reuses between calls.
//!
//! A batch runs in chunks of at most [`CHUNK`] positions, each through the whole net, so the
//! activations of a chunk stay in the core's cache. Within a chunk activations are
//! `[C][64][nb]` (channel, square, position; see `winograd`):
//!
//! ```text
//! input [n, planes, 64] (NCHW) → per chunk: transpose     [planes][64][nb]
//! stem      Winograd conv3x3 + bias, ReLU                 [F][64][nb]            (x)
//! tower     conv3x3 + bias, ReLU                          [F][64][nb]            (h)
//!           conv3x3 + bias [SE gate and bias] + x, ReLU   [F][64][nb]            (x)
//! policy    conv3x3 + bias, ReLU; 1×1 conv (73) + bias    [73][64][nb] → [n, 4672]
//! value     1×1 conv + bias, ReLU → [nb][C·64] → linear, ReLU → linear           [n, 3]
//! ```
//!
//! Batch norm is folded into each convolution's weights and bias at load (`weights`).

use std::path::Path;

use atomzero_encoding::{POLICY_PLANES, POLICY_SIZE};
use atomzero_nn::burn::module::Module;
use atomzero_nn::burn::store::{ModuleSnapshot, SafetensorsStore};
use atomzero_nn::{DeviceKind, Net, NetConfig, NetMetadata};

use crate::error::InferError;
use crate::gemm::gemm;
use crate::weights::{self, ConvWeights, DenseWeights, NetWeights, SeWeights};
use crate::winograd::{self, Epilogue, TILE_POINTS, TILES};

/// Positions per chunk of a forward pass (measured: see the crate README).
pub const CHUNK: usize = 32;

/// A 3×3 convolution in the Winograd domain: `u [36][c_out][c_in]`.
#[derive(Clone, Debug)]
struct Conv3x3 {
    c_in: usize,
    c_out: usize,
    u: Vec<f32>,
    bias: Vec<f32>,
}

impl Conv3x3 {
    fn new(w: &ConvWeights) -> Conv3x3 {
        Conv3x3 {
            c_in: w.c_in,
            c_out: w.c_out,
            u: winograd::transform_weights(&w.weight, w.c_out, w.c_in),
            bias: w.bias.clone(),
        }
    }

    /// `input [c_in][64][nb]` → `ws.m`, the products in the Winograd domain. The output
    /// transform ([`Conv3x3::finish`]) may then write over `input`.
    fn products(&self, input: &[f32], nb: usize, scratch: &mut Scratch) {
        let columns = TILES * nb;
        let v = sized(&mut scratch.v, TILE_POINTS * self.c_in * columns);
        let m = sized(&mut scratch.m, TILE_POINTS * self.c_out * columns);
        let zeros = sized(&mut scratch.zeros, nb);
        zeros.fill(0.0);
        let tmp = sized(&mut scratch.tmp, TILE_POINTS * nb);
        winograd::input_transform(input, self.c_in, nb, v, zeros, tmp);
        let (a_len, b_len, c_len) =
            (self.c_out * self.c_in, self.c_in * columns, self.c_out * columns);
        for xi in 0..TILE_POINTS {
            gemm(
                self.c_out,
                self.c_in,
                columns,
                &self.u[xi * a_len..(xi + 1) * a_len],
                &v[xi * b_len..(xi + 1) * b_len],
                &mut m[xi * c_len..(xi + 1) * c_len],
            );
        }
    }

    /// The output transform of the last [`Conv3x3::products`] into `out [c_out][64][nb]`.
    fn finish(&self, nb: usize, epilogue: Epilogue, out: &mut [f32], scratch: &mut Scratch) {
        let m = &scratch.m[..TILE_POINTS * self.c_out * TILES * nb];
        let tmp = sized(&mut scratch.tmp, TILE_POINTS * nb);
        winograd::output_transform(m, self.c_out, nb, &self.bias, epilogue, out, tmp);
    }
}

/// A 1×1 convolution: `w [c_out][c_in]`.
#[derive(Clone, Debug)]
struct Conv1x1 {
    c_in: usize,
    c_out: usize,
    w: Vec<f32>,
    bias: Vec<f32>,
}

impl Conv1x1 {
    fn new(w: &ConvWeights) -> Conv1x1 {
        Conv1x1 { c_in: w.c_in, c_out: w.c_out, w: w.weight.clone(), bias: w.bias.clone() }
    }

    /// `out [c_out][64 · nb] = w · input [c_in][64 · nb] + bias`, then ReLU if `relu`.
    fn forward(&self, input: &[f32], nb: usize, relu: bool, out: &mut [f32]) {
        let columns = 64 * nb;
        let out = &mut out[..self.c_out * columns];
        gemm(self.c_out, self.c_in, columns, &self.w, &input[..self.c_in * columns], out);
        for (row, &b) in out.chunks_exact_mut(columns).zip(&self.bias) {
            if relu {
                row.iter_mut().for_each(|v| *v = (*v + b).max(0.0));
            } else {
                row.iter_mut().for_each(|v| *v += b);
            }
        }
    }
}

/// `out [nb][d_out] = input [nb][d_in] · w + bias`, then ReLU if `relu`.
fn dense(layer: &DenseWeights, input: &[f32], nb: usize, relu: bool, out: &mut [f32]) {
    let out = &mut out[..nb * layer.d_out];
    gemm(nb, layer.d_in, layer.d_out, &input[..nb * layer.d_in], &layer.weight, out);
    for row in out.chunks_exact_mut(layer.d_out) {
        for (v, &b) in row.iter_mut().zip(&layer.bias) {
            *v += b;
            if relu {
                *v = v.max(0.0);
            }
        }
    }
}

#[derive(Clone, Debug)]
struct Block {
    first: Conv3x3,
    second: Conv3x3,
    se: Option<SeWeights>,
}

/// The residual net, ready for CPU inference: batch norm folded, 3×3 weights in the Winograd
/// domain. Immutable; [`InferNet::forward_into`] takes a [`Workspace`] per thread.
#[derive(Clone, Debug)]
pub struct InferNet {
    config: NetConfig,
    planes: usize,
    stem: Conv3x3,
    tower: Vec<Block>,
    policy_conv: Conv3x3,
    policy_out: Conv1x1,
    value_conv: Conv1x1,
    value_hidden: DenseWeights,
    value_out: DenseWeights,
}

/// What a forward pass returns: `policy [n, 4672]` logits (index `plane * 64 + square`) and
/// `wdl [n, 3]` logits, like `atomzero_nn::NetOutput`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Output {
    /// Policy logits, `n * 4672`.
    pub policy: Vec<f32>,
    /// Win/draw/loss logits, `n * 3`.
    pub wdl: Vec<f32>,
}

impl InferNet {
    /// Reads a net of architecture `config` from safetensors bytes as `atomzero_nn` saves them.
    pub fn from_safetensors(config: &NetConfig, bytes: &[u8]) -> Result<InferNet, InferError> {
        Ok(InferNet::from_weights(config, &weights::parse(config, bytes)?))
    }

    /// Copies a Burn net's weights (its running batch-norm statistics, as in eval mode).
    pub fn from_net(net: &Net) -> Result<InferNet, InferError> {
        let mut store = SafetensorsStore::from_bytes(None);
        net.valid().save_into(&mut store).map_err(|e| InferError::Store(e.to_string()))?;
        let bytes = store.get_bytes().map_err(|e| InferError::Store(e.to_string()))?;
        InferNet::from_safetensors(net.config(), &bytes)
    }

    /// Loads `<name>.safetensors` with its sidecar through `atomzero_nn::load` (every check of
    /// that loader: format and encoding version, size, checksum, architecture).
    pub fn load(path: &Path) -> Result<(InferNet, NetMetadata), InferError> {
        let device = DeviceKind::Cpu
            .device()
            .map_err(|e| InferError::Store(format!("no CPU device for loading: {e}")))?;
        let (net, metadata) = atomzero_nn::load(path, &device)?;
        Ok((InferNet::from_net(&net)?, metadata))
    }

    fn from_weights(config: &NetConfig, w: &NetWeights) -> InferNet {
        InferNet {
            config: config.clone(),
            planes: config.input_planes(),
            stem: Conv3x3::new(&w.stem),
            tower: w
                .tower
                .iter()
                .map(|b| Block {
                    first: Conv3x3::new(&b.first),
                    second: Conv3x3::new(&b.second),
                    se: b.se.clone(),
                })
                .collect(),
            policy_conv: Conv3x3::new(&w.policy_conv),
            policy_out: Conv1x1::new(&w.policy_out),
            value_conv: Conv1x1::new(&w.value_conv),
            value_hidden: w.value_hidden.clone(),
            value_out: w.value_out.clone(),
        }
    }

    /// The architecture.
    pub fn config(&self) -> &NetConfig {
        &self.config
    }

    /// Input planes per position.
    pub fn planes(&self) -> usize {
        self.planes
    }

    /// Forward pass with fresh buffers; `input` is `[batch, planes, 8, 8]` row-major (as
    /// `atomzero_encoding::Batch::as_slice` lays it out).
    pub fn forward(&self, input: &[f32], batch: usize) -> Result<Output, InferError> {
        let mut output =
            Output { policy: vec![0.0; batch * POLICY_SIZE], wdl: vec![0.0; batch * 3] };
        self.forward_into(
            input,
            batch,
            &mut Workspace::default(),
            &mut output.policy,
            &mut output.wdl,
        )?;
        Ok(output)
    }

    /// Forward pass into caller buffers: `policy` `[batch, 4672]`, `wdl` `[batch, 3]` (logits).
    /// `workspace` is grown on first use and reused after; single-threaded.
    pub fn forward_into(
        &self,
        input: &[f32],
        batch: usize,
        workspace: &mut Workspace,
        policy: &mut [f32],
        wdl: &mut [f32],
    ) -> Result<(), InferError> {
        let check = |buffer: &'static str, len: usize, per_position: usize| {
            if len == batch * per_position {
                Ok(())
            } else {
                Err(InferError::BufferShape { buffer, len, batch, per_position })
            }
        };
        let per_input = self.planes * 64;
        check("input", input.len(), per_input)?;
        check("policy", policy.len(), POLICY_SIZE)?;
        check("wdl", wdl.len(), 3)?;
        let mut start = 0;
        while start < batch {
            let nb = CHUNK.min(batch - start);
            self.forward_chunk(
                &input[start * per_input..(start + nb) * per_input],
                nb,
                workspace,
                &mut policy[start * POLICY_SIZE..(start + nb) * POLICY_SIZE],
                &mut wdl[start * 3..(start + nb) * 3],
            );
            start += nb;
        }
        Ok(())
    }

    fn forward_chunk(
        &self,
        input: &[f32],
        nb: usize,
        ws: &mut Workspace,
        policy: &mut [f32],
        wdl: &mut [f32],
    ) {
        let filters = self.config.filters;
        let Workspace { input: input_t, x, h, scratch, head, .. } = ws;

        // [nb][planes][64] → [planes][64][nb].
        let input_t = sized(input_t, self.planes * 64 * nb);
        for (b, position) in input.chunks_exact(self.planes * 64).enumerate() {
            for (i, &value) in position.iter().enumerate() {
                input_t[i * nb + b] = value;
            }
        }

        let activations = filters * 64 * nb;
        let x = sized(x, activations);
        let h = sized(h, activations);
        self.stem.products(input_t, nb, scratch);
        self.stem.finish(nb, Epilogue::Relu, x, scratch);
        for block in &self.tower {
            block.first.products(x, nb, scratch);
            block.first.finish(nb, Epilogue::Relu, h, scratch);
            block.second.products(h, nb, scratch);
            match &block.se {
                None => block.second.finish(nb, Epilogue::ResidualRelu, x, scratch),
                Some(se) => {
                    block.second.finish(nb, Epilogue::Linear, h, scratch);
                    squeeze_excite(se, h, x, filters, nb, head);
                }
            }
        }

        // Policy head.
        self.policy_conv.products(x, nb, scratch);
        self.policy_conv.finish(nb, Epilogue::Relu, h, scratch);
        let logits = sized(&mut head.policy, POLICY_PLANES * 64 * nb);
        self.policy_out.forward(h, nb, false, logits);
        // [73 · 64][nb] → [nb][73 · 64].
        for (i, row) in logits.chunks_exact(nb).enumerate() {
            for (b, &value) in row.iter().enumerate() {
                policy[b * POLICY_SIZE + i] = value;
            }
        }

        // Value head.
        let channels = self.value_conv.c_out;
        let v = sized(&mut head.value, channels * 64 * nb);
        self.value_conv.forward(x, nb, true, v);
        let flat = sized(&mut head.value_flat, channels * 64 * nb);
        for (i, row) in v.chunks_exact(nb).enumerate() {
            for (b, &value) in row.iter().enumerate() {
                flat[b * channels * 64 + i] = value;
            }
        }
        let hidden = sized(&mut head.value_hidden, nb * self.value_hidden.d_out);
        dense(&self.value_hidden, flat, nb, true, hidden);
        dense(&self.value_out, hidden, nb, false, wdl);
    }
}

/// lc0's squeeze-excitation on `y` (the block's second convolution), then the residual and
/// ReLU into `x`: `x = max(y · sigmoid(g) + b + x, 0)`, `(g, b)` from the pooled `y`.
fn squeeze_excite(
    se: &SeWeights,
    y: &[f32],
    x: &mut [f32],
    filters: usize,
    nb: usize,
    head: &mut HeadBuffers,
) {
    let pooled = sized(&mut head.se_pooled, nb * filters);
    let sums = sized(&mut head.se_sums, nb);
    for (c, channel) in y.chunks_exact(64 * nb).enumerate() {
        sums.fill(0.0);
        for row in channel.chunks_exact(nb) {
            for (s, &v) in sums.iter_mut().zip(row) {
                *s += v;
            }
        }
        for (b, &s) in sums.iter().enumerate() {
            pooled[b * filters + c] = s / 64.0;
        }
    }
    let hidden = sized(&mut head.se_hidden, nb * se.squeeze.d_out);
    dense(&se.squeeze, pooled, nb, true, hidden);
    let excited = sized(&mut head.se_excited, nb * 2 * filters);
    dense(&se.excite, hidden, nb, false, excited);

    let gate = sized(&mut head.se_gate, nb);
    let shift = sized(&mut head.se_shift, nb);
    for (c, (channel_x, channel_y)) in
        x.chunks_exact_mut(64 * nb).zip(y.chunks_exact(64 * nb)).enumerate()
    {
        for b in 0..nb {
            gate[b] = 1.0 / (1.0 + (-excited[b * 2 * filters + c]).exp());
            shift[b] = excited[b * 2 * filters + filters + c];
        }
        for (row_x, row_y) in channel_x.chunks_exact_mut(nb).zip(channel_y.chunks_exact(nb)) {
            for l in 0..nb {
                row_x[l] = (row_y[l] * gate[l] + shift[l] + row_x[l]).max(0.0);
            }
        }
    }
}

/// Scratch of the Winograd convolutions.
#[derive(Clone, Debug, Default)]
struct Scratch {
    v: Vec<f32>,
    m: Vec<f32>,
    tmp: Vec<f32>,
    zeros: Vec<f32>,
}

/// Buffers of the heads and SE layers.
#[derive(Clone, Debug, Default)]
struct HeadBuffers {
    policy: Vec<f32>,
    value: Vec<f32>,
    value_flat: Vec<f32>,
    value_hidden: Vec<f32>,
    se_pooled: Vec<f32>,
    se_sums: Vec<f32>,
    se_hidden: Vec<f32>,
    se_excited: Vec<f32>,
    se_gate: Vec<f32>,
    se_shift: Vec<f32>,
}

/// Buffers of one forward pass, grown on first use and reused by later calls (one per thread).
#[derive(Clone, Debug, Default)]
pub struct Workspace {
    input: Vec<f32>,
    x: Vec<f32>,
    h: Vec<f32>,
    scratch: Scratch,
    head: HeadBuffers,
}

impl Workspace {
    /// An empty workspace.
    pub fn new() -> Workspace {
        Workspace::default()
    }
}

/// The first `len` values of `buffer`, growing it with zeros if shorter.
fn sized(buffer: &mut Vec<f32>, len: usize) -> &mut [f32] {
    if buffer.len() < len {
        buffer.resize(len, 0.0);
    }
    &mut buffer[..len]
}
