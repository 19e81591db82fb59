//! The training step on Burn (the GPU path, and the CPU path for nets `atomzero-backprop`
//! does not implement): losses, autodiff, Burn's optimizers.
//!
//! Policy loss: cross-entropy between a target distribution over the 4672 policy indices and
//! the network's policy, with illegal moves masked (their logits set to [`MASKED_LOGIT`] before
//! the log-softmax, so they get no probability and no gradient). Value loss: cross-entropy
//! between a target WDL distribution and the WDL head. Total: `policy + value_loss_weight *
//! value`. Both are cross-entropies, so their minimum is the targets' entropy, not zero.

use std::fmt;

use atomzero_encoding::POLICY_SIZE;
use atomzero_nn::burn::grad_clipping::GradientClippingConfig;
use atomzero_nn::burn::module::{Module, ModuleVisitor, Param};
use atomzero_nn::burn::optim::{AdamWConfig, GradientsParams, ModuleOptimizer};
use atomzero_nn::burn::tensor::activation::log_softmax;
use atomzero_nn::burn::tensor::{Bool, Device, Tensor, TensorData};
use atomzero_nn::{Net, NetOutput};
use serde::{Deserialize, Serialize};

/// The logit given to illegal moves before the log-softmax.
pub const MASKED_LOGIT: f32 = -1.0e9;

/// Optimizer and loss settings (AdamW; the learning rate is passed to each step, so schedules
/// live with the caller).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StepConfig {
    /// AdamW's decoupled weight decay.
    pub weight_decay: f32,
    /// AdamW's β₁.
    pub beta1: f32,
    /// AdamW's β₂.
    pub beta2: f32,
    /// AdamW's ε.
    pub epsilon: f32,
    /// Clip the gradient to this L2 norm (none if absent).
    pub grad_clip_norm: Option<f32>,
    /// Weight of the value loss in the total.
    pub value_loss_weight: f32,
}

impl Default for StepConfig {
    fn default() -> StepConfig {
        StepConfig {
            weight_decay: 1.0e-4,
            beta1: 0.9,
            beta2: 0.999,
            epsilon: 1.0e-8,
            grad_clip_norm: None,
            value_loss_weight: 1.0,
        }
    }
}

impl StepConfig {
    /// The AdamW optimizer this config describes.
    pub fn optimizer(&self) -> ModuleOptimizer {
        AdamWConfig::new()
            .with_weight_decay(self.weight_decay)
            .with_beta_1(self.beta1)
            .with_beta_2(self.beta2)
            .with_epsilon(self.epsilon)
            .with_grad_clipping(self.grad_clip_norm.map(GradientClippingConfig::Norm))
            .init()
    }
}

/// One training batch on the device.
#[derive(Clone, Debug)]
pub struct TrainBatch {
    /// Encoded positions `[B, planes, 8, 8]`.
    pub inputs: Tensor<4>,
    /// Target policy `[B, 4672]`: a distribution over each position's legal moves (zero
    /// elsewhere).
    pub policy_target: Tensor<2>,
    /// Legal moves `[B, 4672]`: true where the index is a legal move.
    pub legal: Tensor<2, Bool>,
    /// Target WDL `[B, 3]`: a distribution for the side to move.
    pub wdl_target: Tensor<2>,
    /// The opponent's reply for an opponent-policy head, `[B, 4672]` each: targets (each row
    /// sums to the auxiliary loss's weight, or is zero) and the legal replies.
    pub reply: Option<(Tensor<2>, Tensor<2, Bool>)>,
}

impl TrainBatch {
    /// Builds a batch from host buffers laid out row-major: `inputs` `[B, planes, 8, 8]`,
    /// `policy_target` and `legal` `[B, 4672]`, `wdl_target` `[B, 3]`. Each buffer is copied
    /// once into the device's memory.
    pub fn from_slices(
        planes: usize,
        inputs: &[f32],
        policy_target: &[f32],
        legal: &[bool],
        wdl_target: &[f32],
        device: &Device,
    ) -> Result<TrainBatch, BatchShapeError> {
        let batch = wdl_target.len() / 3;
        let expect = |buffer: &'static str, len: usize, per_position: usize| {
            if len == batch * per_position && batch > 0 && wdl_target.len() == 3 * batch {
                Ok(())
            } else {
                Err(BatchShapeError { buffer, len, per_position, batch })
            }
        };
        expect("wdl_target", wdl_target.len(), 3)?;
        expect("inputs", inputs.len(), planes * 64)?;
        expect("policy_target", policy_target.len(), POLICY_SIZE)?;
        expect("legal", legal.len(), POLICY_SIZE)?;
        Ok(TrainBatch {
            inputs: Tensor::from_data(
                TensorData::new(inputs.to_vec(), [batch, planes, 8, 8]),
                device,
            ),
            policy_target: Tensor::from_data(
                TensorData::new(policy_target.to_vec(), [batch, POLICY_SIZE]),
                device,
            ),
            legal: Tensor::from_data(TensorData::new(legal.to_vec(), [batch, POLICY_SIZE]), device),
            wdl_target: Tensor::from_data(TensorData::new(wdl_target.to_vec(), [batch, 3]), device),
            reply: None,
        })
    }

    /// The batch of a sparse host batch (`atomzero_backprop::SparseBatch`, as the trainer's
    /// sampler builds it), its opponent's replies included when it has them.
    pub fn from_sparse(
        batch: &atomzero_backprop::SparseBatch,
        device: &Device,
    ) -> Result<TrainBatch, BatchShapeError> {
        let (policy, legal) = batch.dense();
        let b = TrainBatch::from_slices(
            batch.planes,
            &batch.inputs,
            &policy,
            &legal,
            &batch.wdl,
            device,
        )?;
        if batch.has_replies() {
            let (target, legal) = batch.reply_dense();
            b.with_reply(&target, &legal, device)
        } else {
            Ok(b)
        }
    }

    /// Adds the opponent's replies, laid out as `policy_target` and `legal`.
    pub fn with_reply(
        mut self,
        target: &[f32],
        legal: &[bool],
        device: &Device,
    ) -> Result<TrainBatch, BatchShapeError> {
        let [batch, _] = self.wdl_target.dims();
        for (buffer, len) in [("reply_target", target.len()), ("reply_legal", legal.len())] {
            if len != batch * POLICY_SIZE {
                return Err(BatchShapeError { buffer, len, per_position: POLICY_SIZE, batch });
            }
        }
        self.reply = Some((
            Tensor::from_data(TensorData::new(target.to_vec(), [batch, POLICY_SIZE]), device),
            Tensor::from_data(TensorData::new(legal.to_vec(), [batch, POLICY_SIZE]), device),
        ));
        Ok(self)
    }
}

/// A host buffer whose length does not fit the batch (`B` is taken from `wdl_target`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchShapeError {
    /// The buffer.
    pub buffer: &'static str,
    /// Its length.
    pub len: usize,
    /// Values it should hold per position.
    pub per_position: usize,
    /// Positions in the batch.
    pub batch: usize,
}

impl fmt::Display for BatchShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} has {} values, expected {} positions × {} (batch size is taken from wdl_target, \
             which must be a non-empty multiple of 3)",
            self.buffer, self.len, self.batch, self.per_position
        )
    }
}

impl std::error::Error for BatchShapeError {}

/// The losses of one batch (scalar tensors `[1]`, differentiable on an autodiff device).
#[derive(Clone, Debug)]
pub struct Losses {
    /// `policy + reply + value_loss_weight * value`.
    pub total: Tensor<1>,
    /// Masked policy cross-entropy, averaged over the batch.
    pub policy: Tensor<1>,
    /// The opponent-policy cross-entropy (weighted by its targets' sums; zero without an
    /// opponent-policy head or replies), averaged over the batch.
    pub reply: Tensor<1>,
    /// WDL cross-entropy, averaged over the batch.
    pub value: Tensor<1>,
}

/// The losses of `output` against `batch`'s targets.
pub fn losses(output: NetOutput, batch: &TrainBatch, value_loss_weight: f32) -> Losses {
    let cross_entropy = |logits: Tensor<2>, target: Tensor<2>, legal: Tensor<2, Bool>| {
        let masked = logits.mask_fill(legal.bool_not(), MASKED_LOGIT); // [B, 4672]
        (target * log_softmax(masked, 1)).sum_dim(1).neg().mean() // [1]
    };
    let policy = cross_entropy(output.policy, batch.policy_target.clone(), batch.legal.clone());
    let log_wdl = log_softmax(output.wdl, 1); // [B, 3]
    let value = (batch.wdl_target.clone() * log_wdl).sum_dim(1).neg().mean(); // [1]
    let reply = match (output.opponent_policy, &batch.reply) {
        (Some(logits), Some((target, legal))) => {
            cross_entropy(logits, target.clone(), legal.clone())
        }
        _ => policy.zeros_like(),
    };
    let total = policy.clone() + reply.clone() + value.clone().mul_scalar(value_loss_weight); // [1]
    Losses { total, policy, reply, value }
}

/// Loss values read back to the host.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossValues {
    /// Total loss.
    pub total: f32,
    /// Policy cross-entropy.
    pub policy: f32,
    /// Opponent-policy cross-entropy (weighted).
    pub reply: f32,
    /// Value cross-entropy.
    pub value: f32,
}

impl Losses {
    /// Reads the four values back (one transfer).
    pub fn values(&self) -> LossValues {
        let all = Tensor::cat(
            vec![
                self.total.clone().detach(),
                self.policy.clone().detach(),
                self.value.clone().detach(),
                self.reply.clone().detach(),
            ],
            0,
        ); // [4]
        let values: Vec<f32> = match all.into_data().try_into_vec_as::<f32>() {
            Ok(values) => values,
            Err(error) => panic!("loss is not f32: {error:?}"),
        };
        LossValues { total: values[0], policy: values[1], value: values[2], reply: values[3] }
    }
}

/// A network with its optimizer: `step` runs forward, backward and one AdamW update.
pub struct BurnTrainer {
    /// `Some` except while `step` holds the net (Burn's optimizer takes it by value).
    net: Option<Net>,
    optimizer: ModuleOptimizer,
    config: StepConfig,
    device: Device,
    grad_norm: f32,
}

impl fmt::Debug for BurnTrainer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BurnTrainer")
            .field("config", &self.config)
            .field("device", &self.device)
            .finish_non_exhaustive()
    }
}

impl BurnTrainer {
    /// Moves `net` to `device` with autodiff enabled and in training mode, with a fresh
    /// optimizer.
    pub fn new(net: Net, config: &StepConfig, device: &Device) -> BurnTrainer {
        let device = device.clone().autodiff();
        let net = net.to_device(&device).train();
        BurnTrainer {
            net: Some(net),
            optimizer: config.optimizer(),
            config: config.clone(),
            device,
            grad_norm: f32::NAN,
        }
    }

    /// The network being trained (autodiff device, training mode).
    pub fn net(&self) -> &Net {
        self.net.as_ref().expect("the net is only absent inside `step`")
    }

    /// The optimizer (its state can be saved with `to_record` / `into_bytes`).
    pub fn optimizer(&self) -> &ModuleOptimizer {
        &self.optimizer
    }

    /// Replaces the optimizer (e.g. with one restored from a checkpoint).
    pub fn set_optimizer(&mut self, optimizer: ModuleOptimizer) {
        self.optimizer = optimizer;
    }

    /// The autodiff device batches must live on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The trained network, for saving or inference.
    pub fn into_net(self) -> Net {
        self.net.expect("the net is only absent inside `step`")
    }

    /// One optimizer step on `batch` at `learning_rate`; returns the losses before the update.
    pub fn step(&mut self, batch: &TrainBatch, learning_rate: f64) -> LossValues {
        let net = self.net.take().expect("the net is only absent inside `step`");
        let losses =
            losses(net.forward(batch.inputs.clone()), batch, self.config.value_loss_weight);
        let gradients = GradientsParams::from_grads(losses.total.backward(), &net);
        self.grad_norm = gradient_norm(&net, &gradients);
        self.net = Some(self.optimizer.step(learning_rate, net, gradients));
        losses.values()
    }

    /// The global L2 norm of the gradients of the last [`BurnTrainer::step`], before clipping
    /// (NaN before the first step).
    pub fn last_grad_norm(&self) -> f32 {
        self.grad_norm
    }
}

/// One parameter's gradient, read back to the host.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedGradient {
    /// The parameter's name in the weights file, e.g. `tower.0.first.conv.weight`.
    pub name: String,
    /// The gradient, row-major in the parameter's shape.
    pub values: Vec<f32>,
}

/// The losses of `net` on `batch` and the gradient of the total loss for every float
/// parameter that has one, in the module's order: what one step of [`BurnTrainer::step`]
/// computes before the optimizer, without changing `net`'s weights (its batch norms' running
/// statistics advance, as in any training-mode forward pass: Burn keeps them in shared state).
/// `net` must live on an autodiff device (training mode normalises with the batch's
/// statistics, as a step does); `batch` on the same device. For comparing backends
/// (`atomzero gpu-check`).
pub fn gradients(
    net: &Net,
    batch: &TrainBatch,
    value_loss_weight: f32,
) -> (LossValues, Vec<NamedGradient>) {
    struct Collect<'a> {
        gradients: &'a GradientsParams,
        path: Vec<String>,
        out: Vec<NamedGradient>,
    }
    impl ModuleVisitor for Collect<'_> {
        fn enter_module(&mut self, name: &str, _container_type: &str) {
            self.path.push(name.to_string());
        }
        fn exit_module(&mut self, _name: &str, _container_type: &str) {
            self.path.pop();
        }
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            if let Some(g) = self.gradients.get::<D>(param.id) {
                let values = g.into_data().try_into_vec_as::<f32>().unwrap_or_default();
                self.out.push(NamedGradient { name: self.path.join("."), values });
            }
        }
    }
    let losses = losses(net.forward(batch.inputs.clone()), batch, value_loss_weight);
    let gradients = GradientsParams::from_grads(losses.total.backward(), net);
    let mut visitor = Collect { gradients: &gradients, path: Vec::new(), out: Vec::new() };
    net.visit(&mut visitor);
    (losses.values(), visitor.out)
}

/// The global L2 norm of `gradients` over the float parameters of `net`.
pub fn gradient_norm(net: &Net, gradients: &GradientsParams) -> f32 {
    struct SumOfSquares<'a> {
        gradients: &'a GradientsParams,
        sum: Option<Tensor<1>>,
    }
    impl ModuleVisitor for SumOfSquares<'_> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            if let Some(g) = self.gradients.get::<D>(param.id) {
                let squares = g.powi_scalar(2).sum(); // [1]
                self.sum = Some(match self.sum.take() {
                    Some(acc) => acc + squares,
                    None => squares,
                });
            }
        }
    }
    let mut visitor = SumOfSquares { gradients, sum: None };
    net.visit(&mut visitor);
    visitor
        .sum
        .and_then(|t| t.into_data().try_into_vec_as::<f32>().ok())
        .and_then(|v| v.first().copied())
        .map_or(0.0, f32::sqrt)
}
