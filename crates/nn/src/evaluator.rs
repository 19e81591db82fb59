//! [`NetEvaluator`]: the network behind the search's `Evaluator` interface. Requests are encoded
//! into a reused [`Batch`], handed to Burn with one copy, run in eval mode, and the policy
//! logits at each request's legal moves are softmaxed over those moves only. On a GPU device
//! each chunk is zero-padded to one of a few batch sizes ([`padded_batch`]), because Burn's
//! CubeCL backends compile and autotune kernels for every new input shape.

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
    /// Whether chunks are zero-padded to [`padded_batch`] sizes.
    pad_batches: bool,
    batch: Mutex<Batch>,
    name: String,
}

/// The batch a chunk of `n` positions (at most `max_batch`) is zero-padded to on a GPU
/// device: the next power of two up to 64, then the next multiple of 64, never above
/// `max_batch`. So a run whose batches take every size from 1 to 256 hands the network 10
/// shapes, not 256, wasting at most 63 rows of a chunk above 64. Burn's CubeCL backends (cuda,
/// wgpu) compile, and CUDA autotunes, kernels for each new shape: on an H200 (2026-11-28)
/// self-play with the default net and batches of every size ran at 527 evaluations/s over its
/// first 143 s, 95.5% of the workers' time inside the network, where `bench net` (fixed
/// batches) runs 96,000 positions/s at batch 512; on lavapipe a forward of 16 positions took
/// 0.4 s, and the first one of 17 and 18 positions 32 s and 1.4 s.
pub fn padded_batch(n: usize, max_batch: usize) -> usize {
    let bucket = if n <= 64 { n.next_power_of_two() } else { n.next_multiple_of(64) };
    bucket.min(max_batch).max(n)
}

/// Whether a [`NetEvaluator`] on `device` pads its chunks ([`padded_batch`]): on GPU devices,
/// not on the CPU (Burn flex runs any shape without compiling). `ATOMZERO_BATCH_PAD=0` or `=1`
/// overrides it on every device (read once per process).
pub fn batch_padding(device: &Device) -> bool {
    static OVERRIDE: std::sync::OnceLock<Option<bool>> = std::sync::OnceLock::new();
    let forced = *OVERRIDE.get_or_init(|| match std::env::var("ATOMZERO_BATCH_PAD").as_deref() {
        Ok("0") => Some(false),
        Ok("1") => Some(true),
        _ => None,
    });
    forced.unwrap_or_else(|| device.clone().without_autodiff() != Device::flex())
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
            pad_batches: batch_padding(&device),
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

    /// Pads (or not) each chunk to a [`padded_batch`] size, whatever the device (the default:
    /// [`batch_padding`]).
    pub fn with_batch_padding(mut self, pad: bool) -> NetEvaluator {
        self.pad_batches = pad;
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
            // The one copy: the batch's contiguous `[n, planes, 8, 8]` slice into Burn's buffer
            // (zero rows after it up to the padded size).
            let rows = if self.pad_batches {
                padded_batch(requests.len(), self.max_batch)
            } else {
                requests.len()
            };
            let mut values = Vec::with_capacity(rows * planes * 64);
            values.extend_from_slice(batch.as_slice());
            values.resize(rows * planes * 64, 0.0);
            TensorData::new(values, [rows, planes, 8, 8])
        };
        // [rows, planes, 8, 8]; the outputs' first n rows are the requests'.
        let input = Tensor::<4>::from_data(input, &self.device);
        let output = self.net.forward(input);
        let policy = read_f32(output.policy); // [rows * 4672]
        let wdl = read_f32(output.wdl); // [rows * 3]

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
    push_softmaxed(out, request.moves.len(), wdl_logits, |priors| {
        for (p, &m) in priors.iter_mut().zip(request.moves) {
            *p = policy_logits[move_to_index(request.position, m)];
        }
    });
}

/// [`push_evaluation`] for a network that computed only the legal moves' logits:
/// `move_logits[i]` is the logit of `request.moves[i]`.
pub fn push_move_logits(
    out: &mut Evaluations,
    request: &EvalRequest<'_>,
    move_logits: &[f32],
    wdl_logits: [f32; 3],
) {
    push_softmaxed(out, request.moves.len(), wdl_logits, |priors| {
        priors.copy_from_slice(&move_logits[..priors.len()]);
    });
}

/// Appends an evaluation of `moves` priors: `logits` fills them with the moves' logits, then
/// both they and `wdl_logits` are softmaxed.
fn push_softmaxed(
    out: &mut Evaluations,
    moves: usize,
    wdl_logits: [f32; 3],
    logits: impl FnOnce(&mut [f32]),
) {
    let mut wdl = wdl_logits;
    softmax_in_place(&mut wdl);
    out.push_with(moves, wdl, |priors| {
        logits(priors);
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

    /// Every chunk size from 1 to 256 lands on one of 10 shapes, never below the chunk, never
    /// above the largest batch, at most 63 rows of waste above 64.
    #[test]
    fn padded_batches_take_few_shapes() {
        let mut shapes = std::collections::BTreeSet::new();
        for n in 1..=256 {
            let b = padded_batch(n, 256);
            assert!(b >= n && b <= 256, "{n} -> {b}");
            assert!(n <= 64 || b - n < 64, "{n} -> {b}");
            shapes.insert(b);
        }
        assert_eq!(shapes.into_iter().collect::<Vec<_>>(), [1, 2, 4, 8, 16, 32, 64, 128, 192, 256]);
        assert_eq!(padded_batch(100, 96), 100);
        assert_eq!(padded_batch(90, 96), 96);
        assert_eq!(padded_batch(5, 7), 7);
    }

    /// The CPU pads nothing by default; a GPU device would (not testable without one).
    #[test]
    fn the_cpu_does_not_pad_batches() {
        if std::env::var_os("ATOMZERO_BATCH_PAD").is_none() {
            assert!(!batch_padding(&Device::flex()));
        }
    }

    #[test]
    fn softmax_is_stable_and_normalised() {
        let mut values = [1000.0, 1000.0, 0.0];
        softmax_in_place(&mut values);
        assert!((values[0] - 0.5).abs() < 1e-6 && values[2] == 0.0);
        let mut empty: [f32; 0] = [];
        softmax_in_place(&mut empty);
    }
}
