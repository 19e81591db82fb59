//! Losses of a network on held-out replay data, without training on it: how a user tells
//! whether a net trained on one set of shards generalises, and whether a bigger net beats a
//! smaller one on the same positions (the validation sets of KataGo's and lc0's trainers).
//!
//! The network runs in inference mode (batch norm with its running statistics, as in play),
//! on every training target of the window in order, with the same targets the trainer builds
//! (`value_target_root_mix`, `value_target_lambda`, `max_length_target`, the opponent-policy
//! target when the net has that head). The losses are the trainer's: masked policy
//! cross-entropy, WDL cross-entropy, and the total `policy + reply + value_loss_weight ·
//! value`, each averaged over the positions.

use crate::burn::{TrainBatch, losses};
use crate::config::TrainerConfig;
use crate::data::{ValueTarget, build_batch_with};
use atomzero_backprop::SparseBatch;
use atomzero_encoding::Encoder;
use atomzero_nn::Net;
use atomzero_nn::burn::module::Module;
use atomzero_nn::burn::tensor::Device;
use atomzero_replay::ReplayWindow;

/// Positions per forward pass.
const CHUNK: usize = 256;

/// A network's mean losses over a window's targets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Validation {
    /// Targets measured.
    pub positions: usize,
    /// `policy + reply + value_loss_weight · value`.
    pub total: f64,
    /// Masked policy cross-entropy (nats).
    pub policy: f64,
    /// WDL cross-entropy (nats).
    pub value: f64,
    /// Opponent-policy cross-entropy, weighted (0 without that head).
    pub reply: f64,
}

/// The losses of `net` on every target of `window`, with `config`'s targets and weights.
/// Errors name what could not be built; a window without targets is an error.
pub fn validation_losses(
    net: &Net,
    window: &ReplayWindow,
    config: &TrainerConfig,
    device: &Device,
) -> Result<Validation, String> {
    if window.is_empty() {
        return Err("the validation data holds no training targets".to_string());
    }
    let device = device.clone().without_autodiff();
    let net = net.valid().to_device(&device);
    let net_config = net.config().clone();
    let encoder = Encoder::new(net_config.encoder);
    let reply_weight = if net_config.opponent_policy { config.opponent_policy_weight } else { 0.0 };
    let mut batch = SparseBatch::new(encoder.planes());
    let mut sums = [0.0f64; 4];
    let mut positions = 0usize;
    let indices: Vec<usize> = (0..window.len()).collect();
    for chunk in indices.chunks(CHUNK) {
        build_batch_with(
            window,
            chunk,
            &encoder,
            &ValueTarget::of(config),
            reply_weight,
            &mut batch,
        );
        if batch.len == 0 {
            continue;
        }
        let b = TrainBatch::from_sparse(&batch, &device).map_err(|e| e.to_string())?;
        let values = losses(net.forward(b.inputs.clone()), &b, config.value_loss_weight).values();
        let n = batch.len as f64;
        for (sum, v) in
            sums.iter_mut().zip([values.total, values.policy, values.value, values.reply])
        {
            *sum += f64::from(v) * n;
        }
        positions += batch.len;
    }
    if positions == 0 {
        return Err("no target of the validation data could be rebuilt".to_string());
    }
    let mean = |s: f64| s / positions as f64;
    Ok(Validation {
        positions,
        total: mean(sums[0]),
        policy: mean(sums[1]),
        value: mean(sums[2]),
        reply: mean(sums[3]),
    })
}
