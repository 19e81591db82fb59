//! One shard of a training batch: its activations (the tape the backward pass reads), its
//! gradient buffers, and the forward and backward work that needs no other shard. Batch
//! norm's statistics and its backward sums span the whole batch, so the trainer runs every
//! shard up to a batch norm, combines their partial sums, and hands each shard the result
//! (`crate::trainer`). Activations are `[C][64][nb]` (channel, square, position), as in
//! `atomzero_infer`.
//!
//! ```text
//! input [P][64][nb]
//!   3×3 conv k (stem, each block's two, policy): V_k = Bᵀ x B (kept) → M = U·V → z (Aᵀ M A)
//!       → x̂_k = (z − μ)/σ (kept) → out_k = relu(γ x̂ + β [+ out_{k−2}, a block's second])
//!   value: 1×1 conv → x̂_v → hv = relu(γ x̂ + β) [C·64][nb] → u = relu(Whᵀ hv + bh) [H][nb]
//!       → wdl = Woᵀ u + bo [3][nb]
//!   policy: logits = Wpo · out_policy + bpo [73·64][nb] (row = plane · 64 + square; with an
//!       opponent-policy head [146·64][nb], the rows from 4672 on the opponent's reply)
//! ```
//!
//! Backward through a 3×3 convolution stays in the Winograd domain: `dM = A dZ Aᵀ`,
//! `dV[ξ] = U[ξ]ᵀ dM[ξ]`, `dX = Σ B dV Bᵀ`, `dU[ξ] = dM[ξ] V[ξ]ᵀ`, `dW = Gᵀ dU G`.

use atomzero_encoding::POLICY_SIZE;
use atomzero_infer::gemm::{gemm, gemm_abt};
use atomzero_infer::winograd::{
    Epilogue, TILE_POINTS, TILES, input_transform, input_transform_adjoint, output_transform,
    output_transform_adjoint, transform_weights_adjoint,
};

use crate::batch::SparseBatch;
use crate::params::{ConvBnAt, Layers};
use crate::prepared::Prepared;

/// Per-channel mean and sum of squared deviations of one shard (Chan's parallel variance).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Moments {
    pub count: f64,
    pub mean: f64,
    pub m2: f64,
}

impl Moments {
    /// Folds `other` into `self` (the combination is exact for the two sets' union).
    pub fn merge(&mut self, other: Moments) {
        let count = self.count + other.count;
        if count == 0.0 {
            return;
        }
        let delta = other.mean - self.mean;
        self.mean += delta * other.count / count;
        self.m2 += other.m2 + delta * delta * self.count * other.count / count;
        self.count = count;
    }
}

/// A shard's sums for batch norm's backward pass, per channel: `Σ dA` and `Σ dA · x̂`.
pub(crate) type BackSums = Vec<(f64, f64)>;

/// What a batch norm's backward pass needs per channel once the whole batch's sums are known:
/// `dz = scale · (dA − mean_da − x̂ · mean_da_xhat)`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct BackCoefficients {
    pub scale: f32,
    pub mean_da: f32,
    pub mean_da_xhat: f32,
}

/// Loss figures of one shard (sums over its positions, not yet divided by the batch size).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LossSums {
    pub policy: f64,
    /// The opponent-policy cross-entropy, weighted by its targets' sum.
    pub reply: f64,
    pub value: f64,
    pub entropy: f64,
    pub correct: f64,
}

/// A 3×3 convolution's saved activations.
#[derive(Clone, Debug, Default)]
struct ConvTape {
    /// Winograd-transformed input `[36][c_in][4 · nb]`.
    v: Vec<f32>,
    /// Pre-norm output, then normalised in place: `[c_out][64][nb]`.
    xhat: Vec<f32>,
    /// After the activation: `[c_out][64][nb]`.
    out: Vec<f32>,
}

/// One shard's buffers.
#[derive(Debug, Default)]
pub(crate) struct Shard {
    /// First position of the shard in the batch.
    pub start: usize,
    /// Positions in the shard.
    pub nb: usize,
    input: Vec<f32>,
    convs: Vec<ConvTape>,
    /// Value head: normalised 1×1 conv output, `hv`, `u`, `wdl`.
    value_xhat: Vec<f32>,
    value_h: Vec<f32>,
    value_u: Vec<f32>,
    wdl: Vec<f32>,
    logits: Vec<f32>,
    /// Gradients w.r.t. activations.
    g_trunk: Vec<f32>,
    g_h: Vec<f32>,
    g_skip: Vec<f32>,
    g_a: Vec<f32>,
    g_value: Vec<f32>,
    g_logits: Vec<f32>,
    g_wdl: Vec<f32>,
    g_u: Vec<f32>,
    /// This shard's share of the weight gradients (the optimizer's layout; batch-norm
    /// `gamma`/`beta` are left to the trainer).
    pub grad: Vec<f32>,
    /// Scratch.
    m: Vec<f32>,
    dv: Vec<f32>,
    du: Vec<f32>,
    tmp: Vec<f32>,
    zeros: Vec<f32>,
}

/// `buffer` resized to `len` (contents unspecified where it grew).
fn sized(buffer: &mut Vec<f32>, len: usize) -> &mut [f32] {
    buffer.resize(len, 0.0);
    &mut buffer[..len]
}

/// Lanes of the sums below: independent f32 accumulators the compiler keeps in vector
/// registers, added up in f64 at the end.
const LANES: usize = 16;

/// `Σ f(x[i], y[i])` in [`LANES`] f32 accumulators (`y` as long as `x`).
#[inline(always)]
fn lane_sum(x: &[f32], y: &[f32], f: impl Fn(f32, f32) -> f32) -> f64 {
    let y = &y[..x.len()];
    let mut acc = [0.0f32; LANES];
    let (xs, ys) = (x.chunks_exact(LANES), y.chunks_exact(LANES));
    let (x_tail, y_tail) = (xs.remainder(), ys.remainder());
    for (xc, yc) in xs.zip(ys) {
        for l in 0..LANES {
            acc[l] += f(xc[l], yc[l]);
        }
    }
    let tail: f64 = x_tail.iter().zip(y_tail).map(|(&a, &b)| f64::from(f(a, b))).sum();
    acc.iter().map(|&v| f64::from(v)).sum::<f64>() + tail
}

/// Mean and sum of squared deviations of each channel's row (`rows` of `len` values).
fn row_moments(data: &[f32], rows: usize, len: usize) -> Vec<Moments> {
    (0..rows)
        .map(|r| {
            let row = &data[r * len..(r + 1) * len];
            let mean = lane_sum(row, row, |x, _| x) / len as f64;
            let centre = mean as f32;
            let m2 = lane_sum(row, row, |x, _| (x - centre) * (x - centre));
            Moments { count: len as f64, mean, m2 }
        })
        .collect()
}

/// Per channel `(Σ dA, Σ dA · x̂)` over rows of `len` values.
fn back_sums(da: &[f32], xhat: &[f32], rows: usize, len: usize) -> BackSums {
    (0..rows)
        .map(|r| {
            let (da, xhat) = (&da[r * len..(r + 1) * len], &xhat[r * len..(r + 1) * len]);
            (lane_sum(da, da, |d, _| d), lane_sum(da, xhat, |d, x| d * x))
        })
        .collect()
}

/// `z ← (z − mean) · inv_std` per channel, then `out = relu(γ z + β [+ skip])`.
#[allow(clippy::too_many_arguments)]
fn normalize(
    z: &mut [f32],
    out: &mut [f32],
    skip: Option<&[f32]>,
    mean: &[f32],
    inv_std: &[f32],
    gamma: &[f32],
    beta: &[f32],
    len: usize,
) {
    for c in 0..mean.len() {
        let (mu, s, g, b) = (mean[c], inv_std[c], gamma[c], beta[c]);
        let zr = &mut z[c * len..(c + 1) * len];
        let or = &mut out[c * len..(c + 1) * len];
        match skip {
            Some(skip) => {
                let sr = &skip[c * len..(c + 1) * len];
                for ((zv, ov), &sv) in zr.iter_mut().zip(or.iter_mut()).zip(sr) {
                    let x = (*zv - mu) * s;
                    *zv = x;
                    *ov = (g * x + b + sv).max(0.0);
                }
            }
            None => {
                for (zv, ov) in zr.iter_mut().zip(or.iter_mut()) {
                    let x = (*zv - mu) * s;
                    *zv = x;
                    *ov = (g * x + b).max(0.0);
                }
            }
        }
    }
}

/// `da ← da · [out > 0]` (through a ReLU).
fn relu_backward(da: &mut [f32], out: &[f32]) {
    // A select, not a branch: the loop vectorises.
    for (d, &o) in da.iter_mut().zip(out) {
        *d = if o > 0.0 { *d } else { 0.0 };
    }
}

/// `da ← scale · (da − mean_da − x̂ · mean_da_xhat)` per channel: batch norm's backward.
fn bn_backward(da: &mut [f32], xhat: &[f32], coefficients: &[BackCoefficients], len: usize) {
    for (c, k) in coefficients.iter().enumerate() {
        let (d, x) = (&mut da[c * len..(c + 1) * len], &xhat[c * len..(c + 1) * len]);
        for (dv, &xv) in d.iter_mut().zip(x) {
            *dv = k.scale * (*dv - k.mean_da - xv * k.mean_da_xhat);
        }
    }
}

impl Shard {
    /// A shard of positions `start..start + nb` with buffers for `convs` 3×3 convolutions.
    pub fn new(start: usize, nb: usize, convs: usize) -> Shard {
        Shard { start, nb, convs: vec![ConvTape::default(); convs], ..Shard::default() }
    }

    /// Copies the shard's positions from `batch` (`[B][P][64]`) into `[P][64][nb]` and zeroes
    /// its gradient.
    pub fn load(&mut self, batch: &SparseBatch, grad_len: usize) {
        let (nb, per) = (self.nb, batch.planes * 64);
        let input = sized(&mut self.input, per * nb);
        for b in 0..nb {
            let position = &batch.inputs[(self.start + b) * per..(self.start + b + 1) * per];
            for (i, &value) in position.iter().enumerate() {
                input[i * nb + b] = value;
            }
        }
        self.grad.clear();
        self.grad.resize(grad_len, 0.0);
    }

    /// Forward through 3×3 convolution `k` up to its pre-norm output; returns its moments.
    pub fn conv_forward(&mut self, k: usize, at: &ConvBnAt, prepared: &Prepared) -> Vec<Moments> {
        let nb = self.nb;
        let columns = TILES * nb;
        let (before, after) = self.convs.split_at_mut(k);
        let tape = &mut after[0];
        let input: &[f32] = if k == 0 { &self.input } else { &before[k - 1].out };
        let zeros = sized(&mut self.zeros, nb);
        zeros.fill(0.0);
        let tmp = sized(&mut self.tmp, 72 * nb);
        let v = sized(&mut tape.v, TILE_POINTS * at.c_in * columns);
        input_transform(input, at.c_in, nb, v, zeros, tmp);
        let m = sized(&mut self.m, TILE_POINTS * at.c_out * columns);
        let (b_len, c_len) = (at.c_in * columns, at.c_out * columns);
        for (xi, u) in prepared.convs[k].u.iter().enumerate() {
            gemm(
                u,
                &v[xi * b_len..(xi + 1) * b_len],
                columns,
                &mut m[xi * c_len..(xi + 1) * c_len],
            );
        }
        let z = sized(&mut tape.xhat, at.c_out * 64 * nb);
        output_transform(m, at.c_out, nb, &prepared.zero_bias, Epilogue::Linear, z, tmp);
        sized(&mut tape.out, at.c_out * 64 * nb);
        row_moments(z, at.c_out, 64 * nb)
    }

    /// Normalises convolution `k` and applies its activation (with the residual input
    /// `out_{k−2}` if `residual`).
    pub fn conv_normalize(
        &mut self,
        k: usize,
        residual: bool,
        mean: &[f32],
        inv_std: &[f32],
        gamma: &[f32],
        beta: &[f32],
    ) {
        let len = 64 * self.nb;
        let (before, after) = self.convs.split_at_mut(k);
        let tape = &mut after[0];
        let skip = residual.then(|| &before[k - 2].out[..]);
        normalize(&mut tape.xhat, &mut tape.out, skip, mean, inv_std, gamma, beta, len);
    }

    /// The value head's 1×1 convolution up to its pre-norm output; returns its moments.
    pub fn value_conv_forward(&mut self, layers: &Layers, prepared: &Prepared) -> Vec<Moments> {
        let trunk = self.trunk_index(layers);
        let columns = 64 * self.nb;
        let c = layers.value_conv.c_out;
        let z = sized(&mut self.value_xhat, c * columns);
        gemm(&prepared.value_conv_w, &self.convs[trunk].out, columns, z);
        row_moments(z, c, columns)
    }

    /// Index of the convolution whose output is the tower's output.
    fn trunk_index(&self, layers: &Layers) -> usize {
        2 * layers.tower.len()
    }

    /// Normalises the value convolution and runs the rest of both heads forward.
    #[allow(clippy::too_many_arguments)]
    pub fn heads_forward(
        &mut self,
        layers: &Layers,
        values: &[f32],
        prepared: &Prepared,
        mean: &[f32],
        inv_std: &[f32],
    ) {
        let nb = self.nb;
        let columns = 64 * nb;
        let vc = &layers.value_conv;
        let hv = sized(&mut self.value_h, vc.c_out * columns);
        normalize(
            &mut self.value_xhat,
            hv,
            None,
            mean,
            inv_std,
            &values[vc.gamma.clone()],
            &values[vc.beta.clone()],
            columns,
        );
        // `[C][64][nb]` is the flattened `[C · 64][nb]` the linear layer takes.
        let hidden = &layers.value_hidden;
        let u = sized(&mut self.value_u, hidden.d_out * nb);
        gemm(&prepared.value_hidden_wt, hv, nb, u);
        let bias = &values[hidden.bias.clone()];
        for (row, &b) in u.chunks_exact_mut(nb).zip(bias) {
            row.iter_mut().for_each(|v| *v = (*v + b).max(0.0));
        }
        let out = &layers.value_out;
        let wdl = sized(&mut self.wdl, 3 * nb);
        gemm(&prepared.value_out_wt, u, nb, wdl);
        for (row, &b) in wdl.chunks_exact_mut(nb).zip(&values[out.bias.clone()]) {
            row.iter_mut().for_each(|v| *v += b);
        }
        // Policy output (and the opponent's reply, if the head has it).
        let policy_k = self.convs.len() - 1;
        let logits = sized(&mut self.logits, layers.policy_out.c_out * columns);
        gemm(&prepared.policy_out_w, &self.convs[policy_k].out, columns, logits);
        let bias = &values[layers.policy_out.bias.clone()];
        for (row, &b) in logits.chunks_exact_mut(columns).zip(bias) {
            row.iter_mut().for_each(|v| *v += b);
        }
    }

    /// The losses of the shard's positions and their gradients w.r.t. the logits (scaled by
    /// `1 / batch_len`, the value part also by `value_weight`).
    fn losses(&mut self, batch: &SparseBatch, value_weight: f32, logit_rows: usize) -> LossSums {
        let nb = self.nb;
        let scale = 1.0 / batch.len as f64;
        let mut sums = LossSums::default();
        let g_logits = sized(&mut self.g_logits, logit_rows * nb);
        g_logits.fill(0.0);
        let g_wdl = sized(&mut self.g_wdl, 3 * nb);
        let mut probabilities: Vec<f64> = Vec::new();
        for b in 0..nb {
            let position = self.start + b;
            // The policy over the legal moves; the opponent's reply (rows from 4672 on) over
            // its legal replies, only for heads that have it.
            let reply =
                if logit_rows > POLICY_SIZE { batch.reply(position) } else { (&[][..], &[][..]) };
            for (offset, (legal, targets)) in [(0, batch.policy(position)), (POLICY_SIZE, reply)] {
                if legal.is_empty() {
                    continue;
                }
                let row = |i: usize| (offset + usize::from(legal[i])) * nb + b;
                let logit = |i: usize| f64::from(self.logits[row(i)]);
                let max = (0..legal.len()).map(logit).fold(f64::NEG_INFINITY, f64::max);
                probabilities.clear();
                probabilities.extend((0..legal.len()).map(|i| (logit(i) - max).exp()));
                let total: f64 = probabilities.iter().sum();
                let log_total = total.ln();
                let target_sum: f64 = targets.iter().map(|&t| f64::from(t)).sum();
                for i in 0..legal.len() {
                    let log_p = logit(i) - max - log_total;
                    let p = probabilities[i] / total;
                    let t = f64::from(targets[i]);
                    if offset == 0 {
                        sums.policy -= t * log_p;
                        if p > 0.0 {
                            sums.entropy -= p * log_p;
                        }
                    } else {
                        sums.reply -= t * log_p;
                    }
                    g_logits[row(i)] = ((p * target_sum - t) * scale) as f32;
                }
            }
            // Value: a 3-way softmax.
            let z: [f64; 3] = std::array::from_fn(|k| f64::from(self.wdl[k * nb + b]));
            let t: [f64; 3] = std::array::from_fn(|k| f64::from(batch.wdl[position * 3 + k]));
            let max = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let log_total = z.iter().map(|&v| (v - max).exp()).sum::<f64>().ln();
            let target_sum: f64 = t.iter().sum();
            for k in 0..3 {
                let log_p = z[k] - max - log_total;
                sums.value -= t[k] * log_p;
                g_wdl[k * nb + b] =
                    ((log_p.exp() * target_sum - t[k]) * scale * f64::from(value_weight)) as f32;
            }
            let argmax =
                |v: &[f64; 3]| (0..3).fold(0, |best, k| if v[k] > v[best] { k } else { best });
            if argmax(&z) == argmax(&t) {
                sums.correct += 1.0;
            }
        }
        sums
    }

    /// Losses, then backward through both heads' dense and output layers down to their
    /// batch norms: returns the loss sums and the value and policy norms' backward sums.
    pub fn heads_backward_to_norms(
        &mut self,
        batch: &SparseBatch,
        value_weight: f32,
        layers: &Layers,
        prepared: &Prepared,
    ) -> (LossSums, BackSums, BackSums) {
        let sums = self.losses(batch, value_weight, layers.policy_out.c_out * 64);
        let nb = self.nb;
        let columns = 64 * nb;
        let grad = &mut self.grad;

        // Value head: wdl = Woᵀ u + bo.
        let out = &layers.value_out;
        gemm_abt(&self.value_u, out.d_in, &self.g_wdl, 3, nb, &mut grad[out.weight.clone()]);
        for (k, g) in grad[out.bias.clone()].iter_mut().enumerate() {
            *g = self.g_wdl[k * nb..(k + 1) * nb].iter().sum();
        }
        let g_u = sized(&mut self.g_u, out.d_in * nb);
        gemm(&prepared.value_out_w, &self.g_wdl, nb, g_u);
        relu_backward(g_u, &self.value_u);
        // u = relu(Whᵀ hv + bh).
        let hidden = &layers.value_hidden;
        gemm_abt(
            &self.value_h,
            hidden.d_in,
            g_u,
            hidden.d_out,
            nb,
            &mut grad[hidden.weight.clone()],
        );
        for (k, g) in grad[hidden.bias.clone()].iter_mut().enumerate() {
            *g = g_u[k * nb..(k + 1) * nb].iter().sum();
        }
        let g_value = sized(&mut self.g_value, hidden.d_in * nb);
        gemm(&prepared.value_hidden_w, g_u, nb, g_value);
        relu_backward(g_value, &self.value_h);
        let value_sums = back_sums(g_value, &self.value_xhat, layers.value_conv.c_out, columns);

        // Policy head: logits = Wpo · out + bpo.
        let policy_out = &layers.policy_out;
        let policy_k = self.convs.len() - 1;
        gemm_abt(
            &self.g_logits,
            policy_out.c_out,
            &self.convs[policy_k].out,
            policy_out.c_in,
            columns,
            &mut grad[policy_out.weight.clone()],
        );
        for (p, g) in grad[policy_out.bias.clone()].iter_mut().enumerate() {
            *g = self.g_logits[p * columns..(p + 1) * columns].iter().sum();
        }
        let g_a = sized(&mut self.g_a, policy_out.c_in * columns);
        gemm(&prepared.policy_out_wt, &self.g_logits, columns, g_a);
        relu_backward(g_a, &self.convs[policy_k].out);
        let policy_sums = back_sums(g_a, &self.convs[policy_k].xhat, policy_out.c_in, columns);
        (sums, value_sums, policy_sums)
    }

    /// Through the value and policy norms and their convolutions into the tower's output
    /// gradient.
    pub fn heads_backward_from_norms(
        &mut self,
        layers: &Layers,
        prepared: &Prepared,
        value: &[BackCoefficients],
        policy: &[BackCoefficients],
    ) {
        let columns = 64 * self.nb;
        let trunk = self.trunk_index(layers);
        let vc = &layers.value_conv;
        bn_backward(&mut self.g_value, &self.value_xhat, value, columns);
        {
            let grad = &mut self.grad;
            gemm_abt(
                &self.g_value,
                vc.c_out,
                &self.convs[trunk].out,
                vc.c_in,
                columns,
                &mut grad[vc.weight.clone()],
            );
        }
        let g_trunk = sized(&mut self.g_trunk, vc.c_in * columns);
        gemm(&prepared.value_conv_wt, &self.g_value, columns, g_trunk);
        // Policy convolution: its input gradient adds to the trunk's.
        let policy_k = self.convs.len() - 1;
        let policy_conv = &layers.policy_conv;
        let g_a = std::mem::take(&mut self.g_a);
        let mut g_a = g_a;
        bn_backward(&mut g_a, &self.convs[policy_k].xhat, policy, columns);
        let mut d_input = std::mem::take(&mut self.g_h);
        self.conv_backward(policy_k, policy_conv, prepared, &g_a, Some(&mut d_input));
        for (t, &d) in self.g_trunk.iter_mut().zip(&d_input) {
            *t += d;
        }
        self.g_h = d_input;
        self.g_a = g_a;
    }

    /// Backward through convolution `k` given `dz` (the pre-norm output's gradient): its
    /// weight gradient into `grad`, its input gradient into `d_input` if wanted.
    fn conv_backward(
        &mut self,
        k: usize,
        at: &ConvBnAt,
        prepared: &Prepared,
        dz: &[f32],
        d_input: Option<&mut Vec<f32>>,
    ) {
        let nb = self.nb;
        let columns = TILES * nb;
        let tmp = sized(&mut self.tmp, 72 * nb);
        let m = sized(&mut self.m, TILE_POINTS * at.c_out * columns);
        output_transform_adjoint(dz, at.c_out, nb, m, tmp);
        let (b_len, c_len) = (at.c_in * columns, at.c_out * columns);
        let du = sized(&mut self.du, TILE_POINTS * at.c_out * at.c_in);
        let v = &self.convs[k].v;
        for xi in 0..TILE_POINTS {
            gemm_abt(
                &m[xi * c_len..(xi + 1) * c_len],
                at.c_out,
                &v[xi * b_len..(xi + 1) * b_len],
                at.c_in,
                columns,
                &mut du[xi * at.c_out * at.c_in..(xi + 1) * at.c_out * at.c_in],
            );
        }
        transform_weights_adjoint(du, at.c_out, at.c_in, &mut self.grad[at.weight.clone()]);
        if let Some(d_input) = d_input {
            let dv = sized(&mut self.dv, TILE_POINTS * b_len);
            for (xi, ut) in prepared.convs[k].ut.iter().enumerate() {
                gemm(
                    ut,
                    &m[xi * c_len..(xi + 1) * c_len],
                    columns,
                    &mut dv[xi * b_len..(xi + 1) * b_len],
                );
            }
            let d = sized(d_input, at.c_in * 64 * nb);
            input_transform_adjoint(dv, at.c_in, nb, d, tmp);
        }
    }

    /// Gradient w.r.t. convolution `k`'s normalised output from `upstream` (the gradient of
    /// its activation's output) through the ReLU; keeps a copy as the skip gradient when
    /// `residual`. Returns the norm's backward sums.
    pub fn conv_backward_to_norm(&mut self, k: usize, at: &ConvBnAt, residual: bool) -> BackSums {
        let len = 64 * self.nb;
        // A block's second convolution and the stem read the trunk's gradient, a block's
        // first the inner one.
        let upstream = if k.is_multiple_of(2) { &self.g_trunk } else { &self.g_h };
        let g_a = sized(&mut self.g_a, at.c_out * len);
        g_a.copy_from_slice(&upstream[..at.c_out * len]);
        relu_backward(g_a, &self.convs[k].out);
        if residual {
            let skip = sized(&mut self.g_skip, at.c_out * len);
            skip.copy_from_slice(g_a);
        }
        back_sums(g_a, &self.convs[k].xhat, at.c_out, len)
    }

    /// Through convolution `k`'s norm and the convolution itself: a block's second
    /// convolution writes the inner gradient, a first one the trunk's (plus the skip), the
    /// stem none.
    pub fn conv_backward_from_norm(
        &mut self,
        k: usize,
        at: &ConvBnAt,
        prepared: &Prepared,
        coefficients: &[BackCoefficients],
    ) {
        let len = 64 * self.nb;
        let mut g_a = std::mem::take(&mut self.g_a);
        bn_backward(&mut g_a, &self.convs[k].xhat, coefficients, len);
        if k == 0 {
            self.conv_backward(k, at, prepared, &g_a, None);
        } else if k.is_multiple_of(2) {
            let mut d = std::mem::take(&mut self.g_h);
            self.conv_backward(k, at, prepared, &g_a, Some(&mut d));
            self.g_h = d;
        } else {
            let mut d = std::mem::take(&mut self.g_trunk);
            self.conv_backward(k, at, prepared, &g_a, Some(&mut d));
            for (t, &s) in d.iter_mut().zip(&self.g_skip) {
                *t += s;
            }
            self.g_trunk = d;
        }
        self.g_a = g_a;
    }
}
