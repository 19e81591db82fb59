//! [`CpuTrainer`]: one optimizer step on a batch, data-parallel over a fixed number of shards
//! of the batch (rayon), with batch-norm statistics synchronised across shards at every norm
//! (forward: per-shard moments merged by Chan's formula; backward: per-shard sums). Shards are
//! combined in their order, so a step's result does not depend on how many threads ran it.
//!
//! Batch norm as in Burn's training mode: batch statistics (biased variance, ε = 1e-5), and
//! the running statistics move 10% towards them at every step (momentum 0.1).

use std::fmt;

use rayon::prelude::*;

use crate::batch::SparseBatch;
use crate::optim::Optimizer;
use crate::params::{ConvBnAt, Params};
use crate::prepared::Prepared;
use crate::shard::{BackCoefficients, BackSums, LossSums, Moments, Shard};

/// Batch norm's ε (Burn's default, which `atomzero_nn` uses).
const EPSILON: f64 = 1e-5;
/// Batch norm's running-statistics momentum (Burn's default).
const MOMENTUM: f32 = 0.1;
/// Shards a batch is split into (at most; each holds at least one position). Fixed, so that
/// results do not depend on the thread count.
pub const SHARDS: usize = 4;

/// Why a step could not run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StepError {
    /// The batch is empty.
    Empty,
    /// The batch's positions have another number of input planes than the net.
    Planes { net: usize, batch: usize },
}

impl fmt::Display for StepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StepError::Empty => write!(f, "empty batch"),
            StepError::Planes { net, batch } => {
                write!(f, "the batch has {batch} input planes, the net {net}")
            }
        }
    }
}

impl std::error::Error for StepError {}

/// Figures of one step, measured on the batch before the update.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepStats {
    /// `policy + reply + value_weight · value`.
    pub total: f32,
    /// Policy cross-entropy (mean over the batch).
    pub policy: f32,
    /// Opponent-policy cross-entropy weighted by its targets' sums (mean over the batch; 0
    /// without replies).
    pub reply: f32,
    /// WDL cross-entropy (mean over the batch).
    pub value: f32,
    /// Mean entropy of the (legal-masked) policy.
    pub entropy: f32,
    /// How often the most likely WDL outcome is the target's most likely one.
    pub accuracy: f32,
    /// Global L2 norm of the gradient, before clipping.
    pub grad_norm: f32,
}

/// A net's parameters with their optimizer.
#[derive(Debug)]
pub struct CpuTrainer {
    params: Params,
    optimizer: Optimizer,
    shards: Vec<Shard>,
    grad: Vec<f32>,
}

/// Per-channel batch statistics of one norm, merged over the shards.
struct Stats {
    mean: Vec<f32>,
    inv_std: Vec<f32>,
}

impl CpuTrainer {
    /// Trains `params` with `optimizer` (made for `params.values().len()` parameters).
    pub fn new(params: Params, optimizer: Optimizer) -> CpuTrainer {
        let grad = vec![0.0; params.values.len()];
        CpuTrainer { params, optimizer, shards: Vec::new(), grad }
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The optimizer and its state.
    pub fn optimizer(&self) -> &Optimizer {
        &self.optimizer
    }

    /// The gradient of the last step, after clipping (the optimizer's layout).
    pub fn last_gradient(&self) -> &[f32] {
        &self.grad
    }

    /// Splits a batch of `len` positions into shards (reusing them if the size is the same).
    fn shard(&mut self, len: usize) {
        let count = SHARDS.min(len);
        let sizes: Vec<usize> =
            (0..count).map(|i| len / count + usize::from(i < len % count)).collect();
        let same = self.shards.len() == count
            && self.shards.iter().zip(&sizes).all(|(s, &size)| s.nb == size);
        if !same {
            let convs = self.params.layers.convs3().len();
            let mut start = 0;
            self.shards = sizes
                .iter()
                .map(|&nb| {
                    let shard = Shard::new(start, nb, convs);
                    start += nb;
                    shard
                })
                .collect();
        }
    }

    /// Merges the shards' moments of a norm, moves its running statistics and returns the
    /// batch statistics.
    fn merge_moments(&mut self, per_shard: Vec<Vec<Moments>>, at: &ConvBnAt) -> Stats {
        let channels = at.c_out;
        let mut merged = vec![Moments::default(); channels];
        for shard in per_shard {
            for (m, s) in merged.iter_mut().zip(shard) {
                m.merge(s);
            }
        }
        let mut stats = Stats { mean: Vec::new(), inv_std: Vec::new() };
        for (c, m) in merged.iter().enumerate() {
            let var = if m.count > 0.0 { m.m2 / m.count } else { 0.0 };
            let (mean, var32) = (m.mean as f32, var as f32);
            let rm = &mut self.params.stats[at.mean.start + c];
            *rm = *rm * (1.0 - MOMENTUM) + mean * MOMENTUM;
            let rv = &mut self.params.stats[at.var.start + c];
            *rv = *rv * (1.0 - MOMENTUM) + var32 * MOMENTUM;
            stats.mean.push(mean);
            stats.inv_std.push((1.0 / (var + EPSILON).sqrt()) as f32);
        }
        stats
    }

    /// Merges the shards' backward sums of a norm: writes `dγ`, `dβ` and returns the
    /// coefficients of `dz`.
    fn merge_back(
        &mut self,
        per_shard: Vec<BackSums>,
        at: &ConvBnAt,
        stats: &Stats,
        positions: usize,
    ) -> Vec<BackCoefficients> {
        let n = (positions * 64) as f64;
        let mut sums = vec![(0.0f64, 0.0f64); at.c_out];
        for shard in per_shard {
            for (s, (a, b)) in sums.iter_mut().zip(shard) {
                s.0 += a;
                s.1 += b;
            }
        }
        let gamma = &self.params.values[at.gamma.clone()];
        let mut coefficients = Vec::with_capacity(at.c_out);
        for (c, &(s1, s2)) in sums.iter().enumerate() {
            self.grad[at.beta.start + c] = s1 as f32;
            self.grad[at.gamma.start + c] = s2 as f32;
            coefficients.push(BackCoefficients {
                scale: gamma[c] * stats.inv_std[c],
                mean_da: (s1 / n) as f32,
                mean_da_xhat: (s2 / n) as f32,
            });
        }
        coefficients
    }

    /// One optimizer step on `batch` at `learning_rate`: forward, backward, update. The
    /// returned figures are those of the batch before the update.
    pub fn step(
        &mut self,
        batch: &SparseBatch,
        learning_rate: f64,
        value_weight: f32,
    ) -> Result<StepStats, StepError> {
        if batch.len == 0 {
            return Err(StepError::Empty);
        }
        let planes = self.params.config().input_planes();
        if batch.planes != planes {
            return Err(StepError::Planes { net: planes, batch: batch.planes });
        }
        let prepared = Prepared::new(&self.params);
        let layers = self.params.layers.clone();
        let convs = layers.convs3();
        let grad_len = self.grad.len();
        self.grad.fill(0.0);
        self.shard(batch.len);
        self.shards.par_iter_mut().for_each(|s| s.load(batch, grad_len));

        // Forward.
        let mut conv_stats = Vec::with_capacity(convs.len());
        for (k, at) in convs.iter().enumerate() {
            let moments: Vec<Vec<Moments>> =
                self.shards.par_iter_mut().map(|s| s.conv_forward(k, at, &prepared)).collect();
            let stats = self.merge_moments(moments, at);
            let residual = k >= 2 && k % 2 == 0;
            let values = &self.params.values;
            let (gamma, beta) = (&values[at.gamma.clone()], &values[at.beta.clone()]);
            self.shards.par_iter_mut().for_each(|s| {
                s.conv_normalize(k, residual, &stats.mean, &stats.inv_std, gamma, beta)
            });
            conv_stats.push(stats);
        }
        let moments: Vec<Vec<Moments>> =
            self.shards.par_iter_mut().map(|s| s.value_conv_forward(&layers, &prepared)).collect();
        let value_stats = self.merge_moments(moments, &layers.value_conv);
        let values = &self.params.values;
        self.shards.par_iter_mut().for_each(|s| {
            s.heads_forward(&layers, values, &prepared, &value_stats.mean, &value_stats.inv_std)
        });

        // Backward: the heads.
        let results: Vec<(LossSums, BackSums, BackSums)> = self
            .shards
            .par_iter_mut()
            .map(|s| s.heads_backward_to_norms(batch, value_weight, &layers, &prepared))
            .collect();
        let mut losses = LossSums::default();
        let (mut value_sums, mut policy_sums) = (Vec::new(), Vec::new());
        for (l, v, p) in results {
            losses.policy += l.policy;
            losses.reply += l.reply;
            losses.value += l.value;
            losses.entropy += l.entropy;
            losses.correct += l.correct;
            value_sums.push(v);
            policy_sums.push(p);
        }
        let value_coefficients =
            self.merge_back(value_sums, &layers.value_conv, &value_stats, batch.len);
        let policy_k = convs.len() - 1;
        let policy_coefficients =
            self.merge_back(policy_sums, &layers.policy_conv, &conv_stats[policy_k], batch.len);
        self.shards.par_iter_mut().for_each(|s| {
            s.heads_backward_from_norms(
                &layers,
                &prepared,
                &value_coefficients,
                &policy_coefficients,
            )
        });

        // Backward: the tower, then the stem.
        for k in (0..policy_k).rev() {
            let at = convs[k];
            let residual = k >= 2 && k % 2 == 0;
            let sums: Vec<BackSums> = self
                .shards
                .par_iter_mut()
                .map(|s| s.conv_backward_to_norm(k, at, residual))
                .collect();
            let coefficients = self.merge_back(sums, at, &conv_stats[k], batch.len);
            self.shards
                .par_iter_mut()
                .for_each(|s| s.conv_backward_from_norm(k, at, &prepared, &coefficients));
        }

        // The shards' weight gradients, in order.
        for shard in &self.shards {
            for (g, &s) in self.grad.iter_mut().zip(&shard.grad) {
                *g += s;
            }
        }
        let grad_norm = self.grad.iter().map(|&g| f64::from(g) * f64::from(g)).sum::<f64>().sqrt();
        let Params { values, tensors, .. } = &mut self.params;
        self.optimizer.step(values, &mut self.grad, tensors, learning_rate);

        let n = batch.len as f64;
        let (policy, reply, value) = (losses.policy / n, losses.reply / n, losses.value / n);
        Ok(StepStats {
            total: (policy + reply + f64::from(value_weight) * value) as f32,
            policy: policy as f32,
            reply: reply as f32,
            value: value as f32,
            entropy: (losses.entropy / n) as f32,
            accuracy: (losses.correct / n) as f32,
            grad_norm: grad_norm as f32,
        })
    }
}
