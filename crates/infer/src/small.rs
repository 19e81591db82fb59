//! The forward pass for small batches ([`takes_small_path`]: the UCI engine's rounds, match
//! and gate players' batches of 8, and for nets of up to 96 filters every batch of
//! [`crate::InferNet::forward_moves_into`], self-play's included, in parts of 16), where the
//! main path's layout has too few positions to fill a vector. Activations are channel-inner,
//! `[nb][64][C]` (position, square, channel), so every transform and epilogue runs over
//! channels as lanes, and each 3×3 convolution is Winograd F(4×4, 3×3) with its 36 products
//! turned around, `Mᵀ[ξ] = V[ξ] · Uᵀ[ξ]` (`[4·nb × C_in] · [C_in × C_out]`): the few tile
//! rows are the broadcast side, the weights the vector side (`gemm::gemm_rm`, nothing packed
//! per call).
//!
//! ```text
//! input [nb, planes, 64] → [nb][64][planes]
//! stem, tower, policy conv   Winograd as above, bias (batch norm folded), ReLU / SE / residual
//! policy    1×1: [nb·64][F] · [F][73] + b   → [nb, 4672] (index plane · 64 + square)
//! value     1×1: [nb·64][F] · [F][C] + b, ReLU → [nb][C·64] (Burn's flattening) → linear,
//!           ReLU → linear → [nb, 3]
//! ```

use atomzero_encoding::{POLICY_PLANES, POLICY_SIZE};

use crate::bf16::{PackedBf16, PairScratch, Precision};
use crate::direct::DirectConv;
use crate::f16::PackedF16;
use crate::gemm::gemm_rm;
use crate::weights::{ConvWeights, DenseWeights, NetWeights};
use crate::wino256;
use crate::wino512::{self, Narrow};
use crate::winograd::{
    Epilogue, TILE_POINTS, TILES, input_transform_rows, output_transform_rows, transform_weights,
    xi_stride,
};

/// Whether a chunk of `nb` positions of a net with `filters` channels takes this path.
/// Measured on a 2-core AVX-512 EPYC (crate README): up to 96 filters it beats the main path
/// and the direct convolution at 1 to 16 positions (2.3–3.1× at 1 position); wider nets'
/// Winograd weights (36 · F² floats a convolution) are used by too few tiles to stay cheap, and
/// there it wins only at 2 to 4 positions.
pub fn takes_small_path(nb: usize, filters: usize) -> bool {
    if filters <= NARROW_FILTERS { (1..=NARROW_PART).contains(&nb) } else { (1..=4).contains(&nb) }
}

/// Whether the f32 products and transforms run in AVX2 ([`crate::wino256`]): on hosts with
/// AVX2 and FMA but not the AVX-512 that [`crate::wino512`] and the portable code's 16 lanes
/// use, where they give the same floats faster (docs/performance.md).
fn avx2_f32() -> bool {
    !crate::wino512::supported() && wino256::supported()
}

/// The widest net that takes the small path at up to [`NARROW_PART`] positions.
pub(crate) const NARROW_FILTERS: usize = 96;
/// The most positions a net of up to [`NARROW_FILTERS`] filters takes the small path at.
pub(crate) const NARROW_PART: usize = 16;

/// A 3×3 convolution: `Uᵀ[ξ]` (`c_in × c_out` each, row-major) and the bias.
#[derive(Clone, Debug)]
struct Conv3 {
    c_in: usize,
    c_out: usize,
    ut: Vec<f32>,
    bias: Vec<f32>,
    /// Wide convolutions at one position run directly ([`DIRECT_MIN_FILTERS`]).
    direct: Option<DirectConv>,
    /// `Uᵀ[ξ]` packed for the bf16 or f16 products (none under f32).
    ut_packed: Option<PackedPoints>,
    /// Whether the transforms run in AVX-512 ([`crate::wino512`]) rather than portably.
    avx512: bool,
    /// Whether, without AVX-512, the f32 transforms and products run in AVX2
    /// ([`crate::wino256`]) rather than portably.
    avx2: bool,
    /// Whether the bf16 products run on AMX tiles ([`Precision::Amx`], where they fit).
    amx: bool,
}

/// `Uᵀ[ξ]` packed for a narrower arithmetic than f32, one per Winograd point.
#[derive(Clone, Debug)]
enum PackedPoints {
    Bf16(Vec<PackedBf16>),
    F16(Vec<PackedF16>),
}

/// Weights packed for a narrower arithmetic than f32 ([`Precision`]).
#[derive(Clone, Debug)]
enum Packed {
    Bf16(PackedBf16),
    F16(PackedF16),
}

impl Packed {
    /// Row-major `b [k × n]` packed for `precision`; none for f32.
    fn new(precision: Precision, b: &[f32], k: usize, n: usize) -> Option<Packed> {
        match precision {
            Precision::F32 => None,
            Precision::Bf16 | Precision::Amx => Some(Packed::Bf16(PackedBf16::new(b, k, n))),
            Precision::F16 => Some(Packed::F16(PackedF16::new(b, k, n))),
        }
    }

    /// `c [m × n] = a [m × k] · b` in this arithmetic.
    fn products(&self, a: &[f32], m: usize, c: &mut [f32], scratch: &mut PairScratch) {
        match self {
            Packed::Bf16(b) => crate::bf16::products(a, m, b, c, scratch),
            Packed::F16(b) => crate::f16::products(a, m, b, c, scratch),
        }
    }
}

/// Convolutions with at least this many output channels run one position directly
/// ([`crate::direct`]) instead of as Winograd products, whose `36 · c_in · c_out` weights four
/// tiles use too little (measured: crate README).
const DIRECT_MIN_FILTERS: usize = 97;

impl Conv3 {
    fn new(w: &ConvWeights) -> Conv3 {
        let u = transform_weights(&w.weight, w.c_out, w.c_in); // [36][c_out][c_in]
        let mut ut = vec![0.0f32; u.len()];
        let per = w.c_out * w.c_in;
        for xi in 0..TILE_POINTS {
            for o in 0..w.c_out {
                for i in 0..w.c_in {
                    ut[xi * per + i * w.c_out + o] = u[xi * per + o * w.c_in + i];
                }
            }
        }
        let direct =
            (w.c_out >= DIRECT_MIN_FILTERS).then(|| DirectConv::new(&w.weight, w.c_out, w.c_in));
        Conv3 {
            c_in: w.c_in,
            c_out: w.c_out,
            ut,
            bias: w.bias.clone(),
            direct,
            ut_packed: None,
            amx: false,
            avx512: crate::wino512::supported(),
            avx2: avx2_f32(),
        }
    }

    fn set_precision(&mut self, precision: Precision) {
        let (k, n) = (self.c_in, self.c_out);
        self.amx = precision == Precision::Amx;
        let point = |xi: usize| &self.ut[xi * k * n..(xi + 1) * k * n];
        self.ut_packed = match precision {
            Precision::F32 => None,
            Precision::Bf16 | Precision::Amx => Some(PackedPoints::Bf16(
                (0..TILE_POINTS).map(|xi| PackedBf16::new(point(xi), k, n)).collect(),
            )),
            Precision::F16 => Some(PackedPoints::F16(
                (0..TILE_POINTS).map(|xi| PackedF16::new(point(xi), k, n)).collect(),
            )),
        };
    }

    /// `input [nb][64][c_in]` → `out [nb][64][c_out]` through `epilogue` (the residual's skip
    /// input read from `out`).
    fn forward(
        &self,
        input: &[f32],
        nb: usize,
        epilogue: Epilogue,
        out: &mut [f32],
        s: &mut Scratch,
    ) {
        if let (1, Some(direct)) = (nb, &self.direct) {
            let m = sized(&mut s.m, 64 * self.c_out);
            direct.forward(input, m);
            for (dst, src) in out.chunks_exact_mut(self.c_out).zip(m.chunks_exact(self.c_out)) {
                match epilogue {
                    Epilogue::Linear => {
                        dst.iter_mut().zip(src).zip(&self.bias).for_each(|((d, &v), &b)| *d = v + b)
                    }
                    Epilogue::Relu => dst
                        .iter_mut()
                        .zip(src)
                        .zip(&self.bias)
                        .for_each(|((d, &v), &b)| *d = (v + b).max(0.0)),
                    Epilogue::ResidualRelu => dst
                        .iter_mut()
                        .zip(src)
                        .zip(&self.bias)
                        .for_each(|((d, &v), &b)| *d = (v + b + *d).max(0.0)),
                }
            }
            return;
        }
        let rows = TILES * nb;
        match &self.ut_packed {
            Some(PackedPoints::F16(points)) => {
                // The input transform rounds into the products' pairs itself, and the sums
                // stay in the f16 they are summed in until the output transform.
                let stride = wino512::pairs_stride(rows, self.c_in);
                let pairs = s.pairs.words(TILE_POINTS * stride);
                wino512::input_transform_pairs(input, self.c_in, nb, Narrow::F16, pairs);
                let c_stride = wino512::sums_stride(rows, self.c_out);
                if s.halves.len() < TILE_POINTS * c_stride {
                    s.halves.resize(TILE_POINTS * c_stride, 0);
                }
                for (xi, b) in points.iter().enumerate() {
                    let c = &mut s.halves[xi * c_stride..xi * c_stride + rows * self.c_out];
                    crate::f16::products_of_pairs_f16(&pairs[xi * stride..], rows, b, c);
                }
                wino512::output_transform_f16(&s.halves, self.c_out, nb, &self.bias, epilogue, out);
            }
            Some(PackedPoints::Bf16(points)) => {
                // The input transform rounds into the products' pairs itself.
                let stride = wino512::pairs_stride(rows, self.c_in);
                let pairs = s.pairs.words(TILE_POINTS * stride);
                wino512::input_transform_pairs(input, self.c_in, nb, Narrow::Bf16, pairs);
                let c_stride = xi_stride(nb, self.c_out);
                let m = sized(&mut s.m, TILE_POINTS * c_stride);
                if self.amx && crate::amx::fits(rows, self.c_in, self.c_out) {
                    crate::amx::products_points(pairs, stride, rows, points, m, c_stride);
                } else {
                    for (xi, b) in points.iter().enumerate() {
                        let c = &mut m[xi * c_stride..xi * c_stride + rows * self.c_out];
                        crate::bf16::products_of_pairs(&pairs[xi * stride..], rows, b, c);
                    }
                }
                wino512::output_transform_f32(m, self.c_out, nb, &self.bias, epilogue, out);
            }
            None => {
                let (a_stride, c_stride) = (xi_stride(nb, self.c_in), xi_stride(nb, self.c_out));
                let v = sized(&mut s.v, TILE_POINTS * a_stride);
                if self.avx512 {
                    wino512::input_transform_f32(input, self.c_in, nb, v);
                } else if self.avx2 {
                    wino256::input_transform_f32(input, self.c_in, nb, v);
                } else {
                    input_transform_rows(input, self.c_in, nb, v);
                }
                let m = sized(&mut s.m, TILE_POINTS * c_stride);
                let (a_len, b_len, c_len) =
                    (rows * self.c_in, self.c_in * self.c_out, rows * self.c_out);
                let products = if self.avx2 { wino256::products_f32 } else { gemm_rm };
                for xi in 0..TILE_POINTS {
                    products(
                        &v[xi * a_stride..xi * a_stride + a_len],
                        rows,
                        self.c_in,
                        &self.ut[xi * b_len..(xi + 1) * b_len],
                        self.c_out,
                        &mut m[xi * c_stride..xi * c_stride + c_len],
                    );
                }
                if self.avx512 {
                    wino512::output_transform_f32(m, self.c_out, nb, &self.bias, epilogue, out);
                } else if self.avx2 {
                    wino256::output_transform_f32(m, self.c_out, nb, &self.bias, epilogue, out);
                } else {
                    output_transform_rows(m, self.c_out, nb, &self.bias, epilogue, out);
                }
            }
        }
    }
}

/// `out [rows][d_out] = input [rows][d_in] · w [d_in][d_out] + bias`, ReLU if `relu`: a 1×1
/// convolution (weights transposed at load) or a linear layer (Burn's layout as it is).
#[derive(Clone, Debug)]
struct Linear {
    d_in: usize,
    d_out: usize,
    w: Vec<f32>,
    bias: Vec<f32>,
    /// `w` packed for the bf16 or f16 products (the policy convolution; none under f32).
    w_packed: Option<Packed>,
}

impl Linear {
    /// A 1×1 convolution `[c_out][c_in]`.
    fn conv1x1(w: &ConvWeights) -> Linear {
        let mut t = vec![0.0f32; w.c_in * w.c_out];
        for o in 0..w.c_out {
            for i in 0..w.c_in {
                t[i * w.c_out + o] = w.weight[o * w.c_in + i];
            }
        }
        Linear { d_in: w.c_in, d_out: w.c_out, w: t, bias: w.bias.clone(), w_packed: None }
    }

    fn dense(w: &DenseWeights) -> Linear {
        Linear {
            d_in: w.d_in,
            d_out: w.d_out,
            w: w.weight.clone(),
            bias: w.bias.clone(),
            w_packed: None,
        }
    }

    fn set_precision(&mut self, precision: Precision) {
        self.w_packed = Packed::new(precision, &self.w, self.d_in, self.d_out);
    }

    fn forward(
        &self,
        input: &[f32],
        rows: usize,
        relu: bool,
        out: &mut [f32],
        pairs: &mut PairScratch,
    ) {
        let out = &mut out[..rows * self.d_out];
        match &self.w_packed {
            Some(packed) => packed.products(input, rows, out, pairs),
            // The same floats as `gemm_rm`, on any host with AVX2 and FMA: AVX-512 hosts too,
            // where the value head's 1×1 convolution (8 outputs, half of `gemm_rm`'s 16 lanes)
            // and hidden layer ran in `gemm_rm` (5% of one profile, docs/experiments.md, Change 29).
            None if wino256::supported() => {
                wino256::products_f32(input, rows, self.d_in, &self.w, self.d_out, out)
            }
            None => gemm_rm(input, rows, self.d_in, &self.w, self.d_out, out),
        }
        for row in out.chunks_exact_mut(self.d_out) {
            for (v, &b) in row.iter_mut().zip(&self.bias) {
                *v = if relu { (*v + b).max(0.0) } else { *v + b };
            }
        }
    }
}

#[derive(Clone, Debug)]
struct Block {
    first: Conv3,
    second: Conv3,
    se: Option<(Linear, Linear)>,
}

/// The net's weights laid out for the small-batch path.
#[derive(Clone, Debug)]
pub(crate) struct SmallNet {
    stem: Conv3,
    tower: Vec<Block>,
    policy_conv: Conv3,
    policy_out: Linear,
    /// The policy's 1×1 convolution as `[73][F]` (a plane's weights together), for
    /// [`SmallNet::forward_moves`], which computes only the logits asked for, in f32.
    policy_planes: Vec<f32>,
    value_conv: Linear,
    value_hidden: Linear,
    value_out: Linear,
}

/// Scratch of the convolutions.
#[derive(Clone, Debug, Default)]
struct Scratch {
    v: Vec<f32>,
    m: Vec<f32>,
    pairs: PairScratch,
    /// The f16 products of a convolution (f16 arithmetic only).
    halves: Vec<u16>,
}

/// Buffers of the small-batch path (part of a `Workspace`).
#[derive(Clone, Debug, Default)]
pub(crate) struct SmallWorkspace {
    input: Vec<f32>,
    x: Vec<f32>,
    h: Vec<f32>,
    scratch: Scratch,
    logits: Vec<f32>,
    value: Vec<f32>,
    features: Vec<f32>,
    hidden: Vec<f32>,
    out: Vec<f32>,
    pooled: Vec<f32>,
    excited: Vec<f32>,
}

fn sized(buffer: &mut Vec<f32>, len: usize) -> &mut [f32] {
    if buffer.len() < len {
        buffer.resize(len, 0.0);
    }
    &mut buffer[..len]
}

impl SmallNet {
    pub(crate) fn new(w: &NetWeights) -> SmallNet {
        SmallNet {
            stem: Conv3::new(&w.stem),
            tower: w
                .tower
                .iter()
                .map(|b| Block {
                    first: Conv3::new(&b.first),
                    second: Conv3::new(&b.second),
                    se: b
                        .se
                        .as_ref()
                        .map(|se| (Linear::dense(&se.squeeze), Linear::dense(&se.excite))),
                })
                .collect(),
            policy_conv: Conv3::new(&w.policy_conv),
            policy_out: Linear::conv1x1(&w.policy_out),
            policy_planes: w.policy_out.weight.clone(),
            value_conv: Linear::conv1x1(&w.value_conv),
            value_hidden: Linear::dense(&w.value_hidden),
            value_out: Linear::dense(&w.value_out),
        }
    }

    /// Runs the Winograd products and the policy convolution in `precision` (the value head
    /// and squeeze-excitation stay f32: the value is what the search adds up).
    pub(crate) fn set_precision(&mut self, precision: Precision) {
        self.stem.set_precision(precision);
        for block in &mut self.tower {
            block.first.set_precision(precision);
            block.second.set_precision(precision);
        }
        self.policy_conv.set_precision(precision);
        self.policy_out.set_precision(precision);
    }

    /// Forward pass of `nb` positions `input [nb][planes][64]` into `policy [nb][4672]` and
    /// `wdl [nb][3]` (logits).
    pub(crate) fn forward(
        &self,
        input: &[f32],
        planes: usize,
        nb: usize,
        ws: &mut SmallWorkspace,
        policy: &mut [f32],
        wdl: &mut [f32],
    ) {
        self.body(input, planes, nb, ws);
        let SmallWorkspace { h, scratch, logits, .. } = ws;
        let logits = sized(logits, nb * 64 * POLICY_PLANES);
        self.policy_out.forward(h, nb * 64, false, logits, &mut scratch.pairs);
        for b in 0..nb {
            let dst = &mut policy[b * POLICY_SIZE..(b + 1) * POLICY_SIZE];
            let src = &logits[b * 64 * POLICY_PLANES..(b + 1) * 64 * POLICY_PLANES];
            for sq in 0..64 {
                for p in 0..POLICY_PLANES {
                    dst[p * 64 + sq] = src[sq * POLICY_PLANES + p];
                }
            }
        }
        self.value_head(nb, ws, wdl);
    }

    /// [`SmallNet::forward`] with only some policy logits: `moves` holds policy indices
    /// (`plane · 64 + square`), the first `counts[0]` of position 0, the next `counts[1]` of
    /// position 1 and so on; `move_logits[i]` gets the logit of `moves[i]`. The search asks
    /// for its legal moves' (~30 of 4,672), so the policy's 1×1 convolution shrinks to that
    /// many dot products of `F` (in f32 under either [`Precision`]).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn forward_moves(
        &self,
        input: &[f32],
        planes: usize,
        nb: usize,
        ws: &mut SmallWorkspace,
        moves: &[u32],
        counts: &[usize],
        move_logits: &mut [f32],
        wdl: &mut [f32],
    ) {
        assert!(counts.len() == nb && move_logits.len() >= moves.len());
        self.body(input, planes, nb, ws);
        let filters = self.stem.c_out;
        let bias = &self.policy_out.bias;
        let mut at = 0;
        for (board, &count) in ws.h.chunks_exact(64 * filters).zip(counts) {
            for (logit, &index) in
                move_logits[at..at + count].iter_mut().zip(&moves[at..at + count])
            {
                let (plane, square) = (index as usize / 64, index as usize % 64);
                let w = &self.policy_planes[plane * filters..(plane + 1) * filters];
                *logit = bias[plane] + dot(&board[square * filters..(square + 1) * filters], w);
            }
            at += count;
        }
        self.value_head(nb, ws, wdl);
    }

    /// The stem, the tower and the policy's 3×3 convolution: the tower's output ends in
    /// `ws.x`, the policy convolution's in `ws.h` (both `[nb][64][F]`).
    fn body(&self, input: &[f32], planes: usize, nb: usize, ws: &mut SmallWorkspace) {
        let filters = self.stem.c_out;
        let SmallWorkspace { input: input_t, x, h, scratch, hidden, out, pooled, excited, .. } = ws;
        // [nb][planes][64] → [nb][64][planes].
        let input_t = sized(input_t, nb * 64 * planes);
        for b in 0..nb {
            let src = &input[b * planes * 64..(b + 1) * planes * 64];
            let dst = &mut input_t[b * 64 * planes..(b + 1) * 64 * planes];
            for p in 0..planes {
                for sq in 0..64 {
                    dst[sq * planes + p] = src[p * 64 + sq];
                }
            }
        }
        let len = nb * 64 * filters;
        let (x, h) = (sized(x, len), sized(h, len));
        self.stem.forward(input_t, nb, Epilogue::Relu, x, scratch);
        for block in &self.tower {
            block.first.forward(x, nb, Epilogue::Relu, h, scratch);
            match &block.se {
                None => block.second.forward(h, nb, Epilogue::ResidualRelu, x, scratch),
                Some((squeeze, excite)) => {
                    // y into `out`, then x = relu(y · sigmoid(g) + b + x).
                    let y = sized(out, len);
                    block.second.forward(h, nb, Epilogue::Linear, y, scratch);
                    let pooled = sized(pooled, nb * filters);
                    for (sums, board) in
                        pooled.chunks_exact_mut(filters).zip(y.chunks_exact(64 * filters))
                    {
                        sums.fill(0.0);
                        for row in board.chunks_exact(filters) {
                            for (s, &v) in sums.iter_mut().zip(row) {
                                *s += v;
                            }
                        }
                        sums.iter_mut().for_each(|s| *s /= 64.0);
                    }
                    let hid = sized(hidden, nb * squeeze.d_out);
                    squeeze.forward(pooled, nb, true, hid, &mut scratch.pairs);
                    let ex = sized(excited, nb * 2 * filters);
                    excite.forward(hid, nb, false, ex, &mut scratch.pairs);
                    for ((xb, yb), eb) in x
                        .chunks_exact_mut(64 * filters)
                        .zip(y.chunks_exact(64 * filters))
                        .zip(ex.chunks_exact_mut(2 * filters))
                    {
                        let (gates, shifts) = eb.split_at_mut(filters);
                        gates.iter_mut().for_each(|g| *g = 1.0 / (1.0 + (-*g).exp()));
                        for (xr, yr) in xb.chunks_exact_mut(filters).zip(yb.chunks_exact(filters)) {
                            for c in 0..filters {
                                xr[c] = (yr[c] * gates[c] + shifts[c] + xr[c]).max(0.0);
                            }
                        }
                    }
                }
            }
        }

        self.policy_conv.forward(x, nb, Epilogue::Relu, h, scratch);
    }

    /// The value head from the tower's output in `ws.x` into `wdl [nb][3]` (logits).
    fn value_head(&self, nb: usize, ws: &mut SmallWorkspace, wdl: &mut [f32]) {
        let SmallWorkspace { x, scratch, value, features, hidden, .. } = ws;
        // Value head: Burn flattens the 1×1 convolution's [C, 8, 8] as c · 64 + square.
        let channels = self.value_conv.d_out;
        let value = sized(value, nb * 64 * channels);
        self.value_conv.forward(x, nb * 64, true, value, &mut scratch.pairs);
        let features = sized(features, nb * channels * 64);
        for b in 0..nb {
            for sq in 0..64 {
                for c in 0..channels {
                    features[(b * channels + c) * 64 + sq] = value[(b * 64 + sq) * channels + c];
                }
            }
        }
        let hid = sized(hidden, nb * self.value_hidden.d_out);
        self.value_hidden.forward(features, nb, true, hid, &mut scratch.pairs);
        self.value_out.forward(hid, nb, false, &mut wdl[..nb * 3], &mut scratch.pairs);
    }
}

/// `a · b` over equal lengths, in eight partial sums (so that the compiler vectorises it).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut sums = [0.0f32; 8];
    let (a8, b8) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = a8.remainder().iter().zip(b8.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in a8.zip(b8) {
        for k in 0..8 {
            sums[k] += x[k] * y[k];
        }
    }
    sums.iter().sum::<f32>() + tail
}
