//! The two implementations of a training step behind one type: Burn's autodiff
//! ([`crate::burn`]) and atomzero-backprop's CPU step. Both take the same [`SparseBatch`],
//! apply the same losses and optimizers (Burn's semantics) and save checkpoints that the
//! other can resume from (weights only).

use atomzero_backprop::{CpuTrainer, Optimizer, OptimizerConfig, Params, SparseBatch};
use atomzero_nn::burn::grad_clipping::GradientClippingConfig;
use atomzero_nn::burn::optim::decay::WeightDecayConfig;
use atomzero_nn::burn::optim::momentum::MomentumConfig;
use atomzero_nn::burn::optim::{ModuleOptimizer, SgdConfig};
use atomzero_nn::burn::tensor::Device;
use atomzero_nn::burn::tensor::activation::{log_softmax, softmax};
use atomzero_nn::{DeviceKind, Net, NetConfig};

use crate::burn::{BurnTrainer, MASKED_LOGIT, StepConfig, TrainBatch};
use crate::checkpoint::{self, CheckpointError, Engine, Saved, TrainState};
use crate::config::{Backend, OptimizerKind, TrainerConfig};

/// Which engine `backend` means for `net` on `device`.
pub fn resolve(backend: Backend, net: &NetConfig, device: &Device) -> Result<Engine, String> {
    let cpu = DeviceKind::of(device) == Some(DeviceKind::Cpu);
    let supported = Params::zeros(net).map(|_| ());
    match backend {
        Backend::Burn => Ok(Engine::Burn),
        Backend::Auto => Ok(if cpu && supported.is_ok() { Engine::Atomzero } else { Engine::Burn }),
        Backend::Atomzero if !cpu => {
            Err("train.backend = \"atomzero\" runs on the cpu device only".to_string())
        }
        Backend::Atomzero => supported
            .map(|_| Engine::Atomzero)
            .map_err(|e| format!("train.backend = \"atomzero\": {e} (use \"burn\" or \"auto\")")),
    }
}

/// The figures of one step.
#[derive(Clone, Copy, Debug)]
pub struct Figures {
    /// Total, policy, value and (weighted) opponent-policy loss before the update.
    pub total: f32,
    pub policy: f32,
    pub value: f32,
    pub reply: f32,
    /// Global gradient norm before clipping.
    pub grad_norm: f32,
}

/// A net being trained, with its optimizer.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // One per training call.
pub enum Trainer {
    /// Burn's autodiff.
    Burn {
        trainer: BurnTrainer,
        /// The last step's batch, for the logged entropy and accuracy.
        last: Option<TrainBatch>,
    },
    /// atomzero-backprop; the last step's entropy and accuracy.
    Atomzero { trainer: CpuTrainer, entropy: f32, accuracy: f32 },
}

fn burn_optimizer(config: &TrainerConfig) -> ModuleOptimizer {
    let clip = (config.grad_clip_norm > 0.0)
        .then_some(GradientClippingConfig::Norm(config.grad_clip_norm));
    match config.optimizer {
        OptimizerKind::Adamw => StepConfig {
            weight_decay: config.weight_decay,
            grad_clip_norm: clip.map(|_| config.grad_clip_norm),
            value_loss_weight: config.value_loss_weight,
            ..StepConfig::default()
        }
        .optimizer(),
        OptimizerKind::Sgd => SgdConfig::new()
            .with_momentum(Some(MomentumConfig {
                momentum: config.momentum,
                dampening: 0.0,
                nesterov: true,
            }))
            .with_weight_decay(
                (config.weight_decay > 0.0)
                    .then_some(WeightDecayConfig { penalty: config.weight_decay }),
            )
            .with_gradient_clipping(clip)
            .init(),
    }
}

/// atomzero-backprop's optimizer for `config` (the same constants as Burn's).
fn cpu_optimizer(config: &TrainerConfig) -> (OptimizerConfig, Option<f32>) {
    let defaults = StepConfig::default();
    let kind = match config.optimizer {
        OptimizerKind::Adamw => OptimizerConfig::AdamW {
            beta1: defaults.beta1,
            beta2: defaults.beta2,
            epsilon: defaults.epsilon,
            weight_decay: config.weight_decay,
        },
        OptimizerKind::Sgd => OptimizerConfig::Sgd {
            momentum: config.momentum as f32,
            weight_decay: config.weight_decay,
        },
    };
    (kind, (config.grad_clip_norm > 0.0).then_some(config.grad_clip_norm))
}

fn burn_trainer(net: Net, config: &TrainerConfig, device: &Device) -> BurnTrainer {
    let step = StepConfig { value_loss_weight: config.value_loss_weight, ..StepConfig::default() };
    let mut trainer = BurnTrainer::new(net, &step, device);
    trainer.set_optimizer(burn_optimizer(config));
    trainer
}

fn params_of(net: &Net) -> Result<Params, String> {
    let bytes = net.to_safetensors().map_err(|e| e.to_string())?;
    Params::from_safetensors(net.config(), &bytes).map_err(|e| e.to_string())
}

impl Trainer {
    /// A trainer of kind `engine` for `net` (a plain-device net) with a fresh optimizer.
    pub fn new(
        engine: Engine,
        net: Net,
        config: &TrainerConfig,
        device: &Device,
    ) -> Result<Trainer, String> {
        Ok(match engine {
            Engine::Burn => {
                Trainer::Burn { trainer: burn_trainer(net, config, device), last: None }
            }
            Engine::Atomzero => {
                let params = params_of(&net)?;
                let (kind, clip) = cpu_optimizer(config);
                let optimizer = Optimizer::new(kind, clip, params.values().len());
                Trainer::Atomzero {
                    trainer: CpuTrainer::new(params, optimizer),
                    entropy: f32::NAN,
                    accuracy: f32::NAN,
                }
            }
        })
    }

    /// A trainer of kind `engine` resumed from checkpoint `path` (whose state is `state`).
    /// Returns whether the optimizer state was restored (false for a checkpoint of the
    /// other engine: its weights, with a fresh optimizer).
    pub fn resume(
        engine: Engine,
        path: &std::path::Path,
        state: &TrainState,
        config: &TrainerConfig,
        device: &Device,
    ) -> Result<(Trainer, bool), CheckpointError> {
        let corrupt =
            |reason: String| CheckpointError::Corrupt { path: path.to_path_buf(), reason };
        let fresh_net = || state.net.init(device).map_err(|e| corrupt(e.to_string()));
        Ok(match (engine, state.backend) {
            (Engine::Burn, Engine::Burn) => {
                let (net, optimizer) =
                    checkpoint::load_burn(path, fresh_net()?, burn_optimizer(config))?;
                let mut trainer = burn_trainer(net, config, device);
                trainer.set_optimizer(optimizer);
                (Trainer::Burn { trainer, last: None }, true)
            }
            (Engine::Atomzero, Engine::Atomzero) => {
                let params = checkpoint::load_params(path, &state.net)?;
                let (kind, clip) = cpu_optimizer(config);
                let optimizer =
                    checkpoint::load_optimizer(path, kind, clip, params.values().len())?;
                let trainer = CpuTrainer::new(params, optimizer);
                (Trainer::Atomzero { trainer, entropy: f32::NAN, accuracy: f32::NAN }, true)
            }
            (Engine::Burn, Engine::Atomzero) => {
                let params = checkpoint::load_params(path, &state.net)?;
                let bytes = params.to_safetensors().map_err(|e| corrupt(e.to_string()))?;
                let net = state
                    .net
                    .load_safetensors(bytes, device)
                    .map_err(|e| corrupt(e.to_string()))?;
                (Trainer::new(engine, net, config, device).map_err(corrupt)?, false)
            }
            (Engine::Atomzero, Engine::Burn) => {
                let net = checkpoint::load_burn_net(path, fresh_net()?)?;
                (Trainer::new(engine, net, config, device).map_err(corrupt)?, false)
            }
        })
    }

    /// Which engine this is.
    pub fn engine(&self) -> Engine {
        match self {
            Trainer::Burn { .. } => Engine::Burn,
            Trainer::Atomzero { .. } => Engine::Atomzero,
        }
    }

    /// One step on `batch` at `learning_rate`.
    pub fn step(
        &mut self,
        batch: &SparseBatch,
        learning_rate: f64,
        value_loss_weight: f32,
    ) -> Result<Figures, String> {
        match self {
            Trainer::Burn { trainer, last } => {
                let b =
                    TrainBatch::from_sparse(batch, trainer.device()).map_err(|e| e.to_string())?;
                let values = trainer.step(&b, learning_rate);
                *last = Some(b);
                Ok(Figures {
                    total: values.total,
                    policy: values.policy,
                    value: values.value,
                    reply: values.reply,
                    grad_norm: trainer.last_grad_norm(),
                })
            }
            Trainer::Atomzero { trainer, entropy, accuracy } => {
                let stats = trainer
                    .step(batch, learning_rate, value_loss_weight)
                    .map_err(|e| e.to_string())?;
                (*entropy, *accuracy) = (stats.entropy, stats.accuracy);
                Ok(Figures {
                    total: stats.total,
                    policy: stats.policy,
                    value: stats.value,
                    reply: stats.reply,
                    grad_norm: stats.grad_norm,
                })
            }
        }
    }

    /// Mean policy entropy and value accuracy on the last step's batch (Burn: measured again
    /// after the update; atomzero: before it, during the step).
    pub fn entropy_and_accuracy(&self) -> (f32, f32) {
        match self {
            Trainer::Burn { trainer, last: Some(batch) } => {
                policy_entropy_and_value_accuracy(trainer.net(), batch)
            }
            Trainer::Burn { last: None, .. } => (f32::NAN, f32::NAN),
            Trainer::Atomzero { entropy, accuracy, .. } => (*entropy, *accuracy),
        }
    }

    /// Writes a checkpoint of the weights and optimizer.
    pub fn save(
        &self,
        dir: &std::path::Path,
        state: &TrainState,
        keep: usize,
    ) -> Result<std::path::PathBuf, CheckpointError> {
        let saved = match self {
            Trainer::Burn { trainer, .. } => {
                Saved::Burn { net: trainer.net(), optimizer: trainer.optimizer() }
            }
            Trainer::Atomzero { trainer, .. } => {
                Saved::Atomzero { params: trainer.params(), optimizer: trainer.optimizer() }
            }
        };
        checkpoint::save(dir, state, saved, keep)
    }

    /// The trained network on `device`.
    pub fn into_net(self, device: &Device) -> Result<Net, String> {
        match self {
            Trainer::Burn { trainer, .. } => Ok(trainer.into_net()),
            Trainer::Atomzero { trainer, .. } => {
                let params = trainer.params();
                let bytes = params.to_safetensors().map_err(|e| e.to_string())?;
                params.config().load_safetensors(bytes, device).map_err(|e| e.to_string())
            }
        }
    }
}

/// Mean entropy of the network's (legal-masked) policy, and how often its most likely WDL
/// outcome is the target's, on `batch` (no gradient).
fn policy_entropy_and_value_accuracy(net: &Net, batch: &TrainBatch) -> (f32, f32) {
    let out = net.forward(batch.inputs.clone());
    let masked = out.policy.detach().mask_fill(batch.legal.clone().bool_not(), MASKED_LOGIT); // [B, 4672]
    let log_p = log_softmax(masked.clone(), 1); // [B, 4672]
    let p = softmax(masked, 1); // [B, 4672]
    let entropy = (p * log_p).sum_dim(1).neg().mean(); // [1]
    let predicted = out.wdl.detach().argmax(1); // [B, 1]
    let wanted = batch.wdl_target.clone().argmax(1); // [B, 1]
    let accuracy = predicted.equal(wanted).float().mean(); // [1]
    let read = |t: atomzero_nn::burn::tensor::Tensor<1>| {
        t.into_data()
            .try_into_vec_as::<f32>()
            .ok()
            .and_then(|v| v.first().copied())
            .unwrap_or(f32::NAN)
    };
    (read(entropy), read(accuracy))
}
