//! [`NetEvaluator`]: the network behind the search's `Evaluator` interface. Requests are encoded
//! into a reused [`Batch`], handed to Burn with one copy, run in eval mode, and the policy
//! logits at each request's legal moves are softmaxed over those moves only.

use std::sync::{Mutex, PoisonError};

use atomzero_encoding::{Batch, Encoder, POLICY_SIZE, move_to_index};
use atomzero_mcts::{EvalRequest, Evaluations, Evaluator};
use burn::module::Module;
use burn::tensor::{Device, Tensor, TensorData};

use crate::model::Net;

/// Batch size used when none is given: large enough to keep a CPU busy, small enough for
/// modest GPU memory.
pub const DEFAULT_MAX_BATCH: usize = 256;

/// Evaluates positions with a network. `evaluate` takes `&self`; the encoding buffer sits
/// behind a mutex that is held only while encoding, so several threads may run forward passes
/// at once.
#[derive(Debug)]
pub struct NetEvaluator {
    net: Net,
    device: Device,
    encoder: Encoder,
    max_batch: usize,
    batch: Mutex<Batch>,
    name: String,
}

impl NetEvaluator {
    /// An evaluator running `net` in eval mode (running batch-norm statistics, no autodiff) on
    /// `device` (its autodiff flag is ignored). Larger requests are split into chunks of
    /// `max_batch` positions (at least 1).
    pub fn new(net: &Net, device: &Device, max_batch: usize) -> NetEvaluator {
        let device = device.clone().without_autodiff();
        let net = net.valid().to_device(&device);
        let encoder = Encoder::new(net.config().encoder);
        let max_batch = max_batch.max(1);
        NetEvaluator {
            batch: Mutex::new(Batch::new(encoder, max_batch)),
            name: format!(
                "net({}x{}{})",
                net.config().blocks,
                net.config().filters,
                if net.config().se_ratio > 0 { "-se" } else { "" }
            ),
            net,
            device,
            encoder,
            max_batch,
        }
    }

    /// Sets the name reported by [`Evaluator::name`] (e.g. the model's path).
    pub fn with_name(mut self, name: impl Into<String>) -> NetEvaluator {
        self.name = name.into();
        self
    }

    /// The network (in eval mode).
    pub fn net(&self) -> &Net {
        &self.net
    }

    /// The device the network runs on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The largest batch handed to the network at once.
    pub fn max_batch(&self) -> usize {
        self.max_batch
    }

    fn evaluate_chunk(&self, requests: &[EvalRequest<'_>], out: &mut Evaluations) {
        let planes = self.encoder.planes();
        let input = {
            let mut batch = self.batch.lock().unwrap_or_else(PoisonError::into_inner);
            batch.clear();
            for request in requests {
                batch.push(request.position, request.history, request.repetitions);
            }
            // The one copy: the batch's contiguous `[n, planes, 8, 8]` slice into Burn's buffer.
            TensorData::new(batch.as_slice().to_vec(), [requests.len(), planes, 8, 8])
        };
        let input = Tensor::<4>::from_data(input, &self.device); // [n, planes, 8, 8]
        let output = self.net.forward(input);
        let policy = read_f32(output.policy); // [n * 4672]
        let wdl = read_f32(output.wdl); // [n * 3]

        for (i, request) in requests.iter().enumerate() {
            let logits = &policy[i * POLICY_SIZE..(i + 1) * POLICY_SIZE];
            push_evaluation(out, request, logits, [wdl[3 * i], wdl[3 * i + 1], wdl[3 * i + 2]]);
        }
    }
}

/// Appends the search's view of one position to `out`, from the net's raw outputs:
/// `policy_logits` (4672, index `plane * 64 + from_square`) softmaxed over the request's legal
/// moves only (in their order), and `wdl_logits` softmaxed into probabilities. Shared by every
/// evaluator over this net's outputs (Burn's here, `atomzero-infer`'s own CPU path), so they
/// agree by construction.
pub fn push_evaluation(
    out: &mut Evaluations,
    request: &EvalRequest<'_>,
    policy_logits: &[f32],
    wdl_logits: [f32; 3],
) {
    let mut wdl = wdl_logits;
    softmax_in_place(&mut wdl);
    out.push_with(request.moves.len(), wdl, |priors| {
        for (p, &m) in priors.iter_mut().zip(request.moves) {
            *p = policy_logits[move_to_index(request.position, m)];
        }
        softmax_in_place(priors);
    });
}

impl Evaluator for NetEvaluator {
    fn evaluate(&self, requests: &[EvalRequest<'_>]) -> Evaluations {
        let moves = requests.iter().map(|r| r.moves.len()).sum();
        let mut out = Evaluations::with_capacity(requests.len(), moves);
        for chunk in requests.chunks(self.max_batch) {
            self.evaluate_chunk(chunk, &mut out);
        }
        out
    }

    fn name(&self) -> String {
        self.name.clone()
    }
}

/// Reads a tensor back as f32 values. A backend failure here (a lost GPU) leaves the search
/// nothing to continue with, so it panics with Burn's message.
fn read_f32<const D: usize>(tensor: Tensor<D>) -> Vec<f32> {
    let data = match tensor.try_into_data() {
        Ok(data) => data,
        Err(error) => panic!("network forward pass failed: {error:?}"),
    };
    match data.try_into_vec_as::<f32>() {
        Ok(values) => values,
        Err(error) => panic!("network output is not f32: {error:?}"),
    }
}

/// Numerically stable softmax; an empty slice stays empty.
pub(crate) fn softmax_in_place(values: &mut [f32]) {
    let max = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for value in values.iter_mut() {
        *value = (*value - max).exp();
        sum += *value;
    }
    for value in values.iter_mut() {
        *value /= sum;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softmax_is_stable_and_normalised() {
        let mut values = [1000.0, 1000.0, 0.0];
        softmax_in_place(&mut values);
        assert!((values[0] - 0.5).abs() < 1e-6 && values[2] == 0.0);
        let mut empty: [f32; 0] = [];
        softmax_in_place(&mut empty);
    }
}
