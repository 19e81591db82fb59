//! [`InferNet`]: the residual net's forward pass on plain `f32` buffers, and the [`Workspace`]
//! of buffers it reuses between calls.
//!
//! A batch runs in chunks of at most [`CHUNK`] positions, each through the whole net, so the
//! activations of a chunk stay in the core's cache. Within a chunk activations are
//! `[C][64][nb]` (channel, square, position; see `winograd`):
//!
//! ```text
//! input [n, planes, 64] (NCHW) → per chunk: transpose     [planes][64][nb]
//! stem      conv3x3 + bias, ReLU                          [F][64][nb]            (x)
//! tower     conv3x3 + bias, ReLU                          [F][64][nb]            (h)
//!           conv3x3 + bias [SE gate and bias] + x, ReLU   [F][64][nb]            (x)
//! policy    conv3x3 + bias, ReLU; 1×1 conv (73) + bias    [73][64][nb] → [n, 4672]
//! value     1×1 conv + bias, ReLU → [nb][C·64] → linear, ReLU → linear           [n, 3]
//! ```
//!
//! 3×3 convolutions run as Winograd F(4×4, 3×3) products. Chunks of few positions take the
//! small-batch path instead (`small`, [`takes_small_path`]). Batch norm is folded into each
//! convolution's weights and bias at load (`weights`).

use std::path::Path;

use atomzero_encoding::{POLICY_PLANES, POLICY_SIZE};
use atomzero_nn::{DeviceKind, Net, NetConfig, NetMetadata};

use crate::bf16::Precision;
use crate::error::InferError;
use crate::gemm::{PackedA, gemm};
pub use crate::small::takes_small_path;
use crate::small::{NARROW_FILTERS, NARROW_PART, SmallNet, SmallWorkspace};
use crate::weights::{self, ConvWeights, DenseWeights, NetWeights};
use crate::winograd::{self, Epilogue, TILE_POINTS, TILES};

/// Default positions per chunk of a forward pass (measured: see the crate README).
pub const CHUNK: usize = 32;

/// A 3×3 convolution: its weights in the Winograd domain (`u[ξ]`, `c_out × c_in` each).
#[derive(Clone, Debug)]
struct Conv3x3 {
    c_in: usize,
    c_out: usize,
    u: Vec<PackedA>,
    bias: Vec<f32>,
}

impl Conv3x3 {
    fn new(w: &ConvWeights) -> Conv3x3 {
        let u = winograd::transform_weights(&w.weight, w.c_out, w.c_in);
        let per = w.c_out * w.c_in;
        Conv3x3 {
            c_in: w.c_in,
            c_out: w.c_out,
            u: u.chunks_exact(per).map(|a| PackedA::new(a, w.c_out, w.c_in)).collect(),
            bias: w.bias.clone(),
        }
    }

    /// `input [c_in][64][nb]` → `scratch.m`: the Winograd products. [`Conv3x3::finish`] may
    /// then overwrite `input`.
    fn products(&self, input: &[f32], nb: usize, scratch: &mut Scratch) {
        let columns = TILES * nb;
        let v = sized(&mut scratch.v, TILE_POINTS * self.c_in * columns);
        let m = sized(&mut scratch.m, TILE_POINTS * self.c_out * columns);
        let zeros = sized(&mut scratch.zeros, nb);
        zeros.fill(0.0);
        let tmp = sized(&mut scratch.tmp, TILE_POINTS * nb);
        winograd::input_transform(input, self.c_in, nb, v, zeros, tmp);
        let (b_len, c_len) = (self.c_in * columns, self.c_out * columns);
        for (xi, u) in self.u.iter().enumerate() {
            gemm(
                u,
                &v[xi * b_len..(xi + 1) * b_len],
                columns,
                &mut m[xi * c_len..(xi + 1) * c_len],
            );
        }
    }

    /// The output of the last [`Conv3x3::products`], plus bias, through `epilogue`, into
    /// `out [c_out][64][nb]`.
    fn finish(&self, nb: usize, epilogue: Epilogue, out: &mut [f32], scratch: &mut Scratch) {
        let m = &scratch.m[..TILE_POINTS * self.c_out * TILES * nb];
        let tmp = sized(&mut scratch.tmp, TILE_POINTS * nb);
        winograd::output_transform(m, self.c_out, nb, &self.bias, epilogue, out, tmp);
    }
}

/// A 1×1 convolution: `w [c_out][c_in]`.
#[derive(Clone, Debug)]
struct Conv1x1 {
    w: PackedA,
    bias: Vec<f32>,
}

impl Conv1x1 {
    fn new(w: &ConvWeights) -> Conv1x1 {
        Conv1x1 { w: PackedA::new(&w.weight, w.c_out, w.c_in), bias: w.bias.clone() }
    }

    fn c_out(&self) -> usize {
        self.w.rows()
    }

    /// `out [c_out][64 · nb] = w · input [c_in][64 · nb] + bias`, then ReLU if `relu`.
    fn forward(&self, input: &[f32], nb: usize, relu: bool, out: &mut [f32]) {
        forward_linear(&self.w, &self.bias, input, 64 * nb, relu, out);
    }
}

/// A fully connected layer applied to features laid out `[d_in][nb]` (feature-major, as the
/// activations are): `out [d_out][nb] = wᵀ · input + bias`.
#[derive(Clone, Debug)]
struct Dense {
    w_t: PackedA,
    bias: Vec<f32>,
}

impl Dense {
    /// From Burn's `weight [d_in][d_out]`.
    fn new(w: &DenseWeights) -> Dense {
        let mut transposed = vec![0.0f32; w.d_in * w.d_out];
        for i in 0..w.d_in {
            for o in 0..w.d_out {
                transposed[o * w.d_in + i] = w.weight[i * w.d_out + o];
            }
        }
        Dense { w_t: PackedA::new(&transposed, w.d_out, w.d_in), bias: w.bias.clone() }
    }

    fn d_out(&self) -> usize {
        self.w_t.rows()
    }

    fn forward(&self, input: &[f32], nb: usize, relu: bool, out: &mut [f32]) {
        forward_linear(&self.w_t, &self.bias, input, nb, relu, out);
    }
}

/// `out [rows][columns] = w · input [w.cols()][columns] + bias` (per row), ReLU if `relu`.
fn forward_linear(
    w: &PackedA,
    bias: &[f32],
    input: &[f32],
    columns: usize,
    relu: bool,
    out: &mut [f32],
) {
    let out = &mut out[..w.rows() * columns];
    gemm(w, &input[..w.cols() * columns], columns, out);
    let epilogue = if relu { Epilogue::Relu } else { Epilogue::Linear };
    for (row, &b) in out.chunks_exact_mut(columns).zip(bias) {
        winograd::apply_epilogue_in_place(row, b, epilogue);
    }
}

#[derive(Clone, Debug)]
struct Block {
    first: Conv3x3,
    second: Conv3x3,
    se: Option<Se>,
}

/// Squeeze-excitation: `squeeze [F → H]`, `excite [H → 2F]` (gate, then bias).
#[derive(Clone, Debug)]
struct Se {
    squeeze: Dense,
    excite: Dense,
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
    value_hidden: Dense,
    value_out: Dense,
    small: SmallNet,
    chunk: usize,
    precision: Precision,
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
        let bytes = net.to_safetensors().map_err(|e| InferError::Store(e.to_string()))?;
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
                    se: b.se.as_ref().map(|se| Se {
                        squeeze: Dense::new(&se.squeeze),
                        excite: Dense::new(&se.excite),
                    }),
                })
                .collect(),
            policy_conv: Conv3x3::new(&w.policy_conv),
            policy_out: Conv1x1::new(&w.policy_out),
            value_conv: Conv1x1::new(&w.value_conv),
            value_hidden: Dense::new(&w.value_hidden),
            value_out: Dense::new(&w.value_out),
            small: SmallNet::new(w),
            chunk: CHUNK,
            precision: Precision::F32,
        }
    }

    /// Sets the small-batch path's arithmetic ([`Precision`]; default f32). bf16 and f16 are
    /// refused on a CPU without AVX-512 BF16 or FP16 ([`Precision::supported`]). Chunks of
    /// more than 16 positions (the main path) stay f32.
    pub fn with_precision(mut self, precision: Precision) -> Result<InferNet, InferError> {
        if !precision.supported() {
            return Err(InferError::Unsupported(precision));
        }
        self.small.set_precision(precision);
        self.precision = precision;
        Ok(self)
    }

    /// The small-batch path's arithmetic.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// Sets the positions per chunk (at least 1; default [`CHUNK`]).
    pub fn with_chunk(mut self, chunk: usize) -> InferNet {
        self.chunk = chunk.max(1);
        self
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
        let per_input = self.planes * 64;
        buffer_fits("input", input.len(), batch, per_input)?;
        buffer_fits("policy", policy.len(), batch, POLICY_SIZE)?;
        buffer_fits("wdl", wdl.len(), batch, 3)?;
        let mut start = 0;
        while start < batch {
            let nb = self.chunk.min(batch - start);
            let (input, policy, wdl) = (
                &input[start * per_input..(start + nb) * per_input],
                &mut policy[start * POLICY_SIZE..(start + nb) * POLICY_SIZE],
                &mut wdl[start * 3..(start + nb) * 3],
            );
            if takes_small_path(nb, self.config.filters) {
                self.small.forward(input, self.planes, nb, &mut workspace.small, policy, wdl);
            } else {
                self.forward_chunk(input, nb, workspace, policy, wdl);
            }
            start += nb;
        }
        Ok(())
    }

    /// [`InferNet::forward_into`] with only the policy logits asked for: `moves` holds policy
    /// indices (`plane · 64 + square`, below 4,672), `counts[b]` of them for position `b`, in
    /// order, and `move_logits[i]` gets the logit of `moves[i]` (`wdl` as in `forward_into`).
    /// On the small-batch path it computes just those logits, dot products instead of the
    /// policy's whole 1×1 convolution (in f32 under either [`Precision`]): nets of up to 96
    /// filters take it at any batch, in parts of up to 16 positions (the engine's batches and
    /// self-play's alike); a wider net takes it for a batch that fits it whole, and otherwise
    /// runs `forward_into` and picks the logits out.
    #[allow(clippy::too_many_arguments)]
    pub fn forward_moves_into(
        &self,
        input: &[f32],
        batch: usize,
        workspace: &mut Workspace,
        moves: &[u32],
        counts: &[usize],
        move_logits: &mut [f32],
        wdl: &mut [f32],
    ) -> Result<(), InferError> {
        let total: usize = counts.iter().sum();
        if counts.len() != batch || total != moves.len() {
            return Err(InferError::Moves(format!(
                "{} counts adding up to {total} for a batch of {batch} and {} indices",
                counts.len(),
                moves.len()
            )));
        }
        if move_logits.len() != moves.len() {
            return Err(InferError::Moves(format!(
                "{} logits for {} indices",
                move_logits.len(),
                moves.len()
            )));
        }
        if let Some(&index) = moves.iter().find(|&&i| i as usize >= POLICY_SIZE) {
            return Err(InferError::Moves(format!("index {index} is not below {POLICY_SIZE}")));
        }
        // Nets of up to 96 filters take the small-batch path at any batch, in parts of up to
        // 16 positions: its transforms and the legal moves' dot products beat the main path's
        // whole policy (self-play, batches of up to 128: 1.6× the positions/s; crate README).
        // Wider nets take it only for a batch that fits it whole.
        let filters = self.config.filters;
        let narrow = filters <= NARROW_FILTERS;
        let part = if narrow { NARROW_PART.min(self.chunk) } else { batch };
        if takes_small_path(part.min(batch), filters) && (narrow || batch <= self.chunk) {
            let per_input = self.planes * 64;
            buffer_fits("input", input.len(), batch, per_input)?;
            buffer_fits("wdl", wdl.len(), batch, 3)?;
            let ws = &mut workspace.small;
            let (mut first, mut at) = (0, 0);
            while first < batch {
                let nb = part.min(batch - first);
                let n_moves: usize = counts[first..first + nb].iter().sum();
                self.small.forward_moves(
                    &input[first * per_input..(first + nb) * per_input],
                    self.planes,
                    nb,
                    ws,
                    &moves[at..at + n_moves],
                    &counts[first..first + nb],
                    &mut move_logits[at..at + n_moves],
                    &mut wdl[first * 3..(first + nb) * 3],
                );
                (first, at) = (first + nb, at + n_moves);
            }
            return Ok(());
        }
        let mut policy = std::mem::take(&mut workspace.full_policy);
        policy.resize(batch * POLICY_SIZE, 0.0);
        let result = self.forward_into(input, batch, workspace, &mut policy, wdl);
        if result.is_ok() {
            let mut at = 0;
            for (b, &count) in counts.iter().enumerate() {
                let logits = &policy[b * POLICY_SIZE..(b + 1) * POLICY_SIZE];
                for (out, &index) in move_logits[at..at + count].iter_mut().zip(&moves[at..]) {
                    *out = logits[index as usize];
                }
                at += count;
            }
        }
        workspace.full_policy = policy;
        result
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

        // Value head: the 1×1 conv's `[C][64][nb]` is the flattened `[C · 64][nb]` the
        // linear layers take (Burn flattens NCHW, index `c * 64 + square`).
        let v = sized(&mut head.value, self.value_conv.c_out() * 64 * nb);
        self.value_conv.forward(x, nb, true, v);
        let hidden = sized(&mut head.value_hidden, self.value_hidden.d_out() * nb);
        self.value_hidden.forward(v, nb, true, hidden);
        let out = sized(&mut head.wdl, 3 * nb);
        self.value_out.forward(hidden, nb, false, out);
        for (i, row) in out.chunks_exact(nb).enumerate() {
            for (b, &value) in row.iter().enumerate() {
                wdl[b * 3 + i] = value;
            }
        }
    }
}

/// lc0's squeeze-excitation on `y` (the block's second convolution), then the residual and
/// ReLU into `x`: `x = max(y · sigmoid(g) + b + x, 0)`, `(g, b)` from the pooled `y`.
fn squeeze_excite(
    se: &Se,
    y: &[f32],
    x: &mut [f32],
    filters: usize,
    nb: usize,
    head: &mut HeadBuffers,
) {
    // Mean over the squares: pooled [F][nb].
    let pooled = sized(&mut head.se_pooled, filters * nb);
    for (sums, channel) in pooled.chunks_exact_mut(nb).zip(y.chunks_exact(64 * nb)) {
        sums.fill(0.0);
        for row in channel.chunks_exact(nb) {
            for (s, &v) in sums.iter_mut().zip(row) {
                *s += v;
            }
        }
        sums.iter_mut().for_each(|s| *s /= 64.0);
    }
    let hidden = sized(&mut head.se_hidden, se.squeeze.d_out() * nb);
    se.squeeze.forward(pooled, nb, true, hidden);
    let excited = sized(&mut head.se_excited, 2 * filters * nb); // [2F][nb]: gates, then biases
    se.excite.forward(hidden, nb, false, excited);
    let (gates, shifts) = excited.split_at_mut(filters * nb);
    for g in gates.iter_mut() {
        *g = 1.0 / (1.0 + (-*g).exp());
    }

    for (((channel_x, channel_y), gate), shift) in x
        .chunks_exact_mut(64 * nb)
        .zip(y.chunks_exact(64 * nb))
        .zip(gates.chunks_exact(nb))
        .zip(shifts.chunks_exact(nb))
    {
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
    value_hidden: Vec<f32>,
    wdl: Vec<f32>,
    se_pooled: Vec<f32>,
    se_hidden: Vec<f32>,
    se_excited: Vec<f32>,
}

/// Buffers of one forward pass, grown on first use and reused by later calls (one per thread).
#[derive(Clone, Debug, Default)]
pub struct Workspace {
    input: Vec<f32>,
    x: Vec<f32>,
    h: Vec<f32>,
    scratch: Scratch,
    head: HeadBuffers,
    small: SmallWorkspace,
    /// `forward_moves_into`'s whole policy when the batch takes the main path.
    full_policy: Vec<f32>,
}

impl Workspace {
    /// An empty workspace.
    pub fn new() -> Workspace {
        Workspace::default()
    }
}

/// Whether a forward pass's `buffer` of `len` values holds `batch × per_position`.
fn buffer_fits(
    buffer: &'static str,
    len: usize,
    batch: usize,
    per_position: usize,
) -> Result<(), InferError> {
    if len == batch * per_position {
        Ok(())
    } else {
        Err(InferError::BufferShape { buffer, len, batch, per_position })
    }
}

/// The first `len` values of `buffer`, growing it with zeros if shorter.
fn sized(buffer: &mut Vec<f32>, len: usize) -> &mut [f32] {
    if buffer.len() < len {
        buffer.resize(len, 0.0);
    }
    &mut buffer[..len]
}
