//! [`InferEvaluator`]: [`InferNet`] behind the search's `Evaluator` interface, a drop-in for
//! `atomzero_nn::NetEvaluator` (same encoding, same priors and WDL through
//! `atomzero_nn::evaluator::push_evaluation`).
//!
//! `evaluate` takes `&self` and one evaluator is shared by every self-play worker, so the
//! buffers of a forward pass (encoded batch, workspace, outputs) sit in a pool: a call takes a
//! set (or makes one), runs single-threaded without holding any lock, and puts it back.

use std::path::Path;
use std::sync::{Mutex, PoisonError};

use atomzero_encoding::{Batch, Encoder, move_to_index};
use atomzero_mcts::{EvalRequest, Evaluations, Evaluator};
use atomzero_nn::evaluator::push_move_logits;
use atomzero_nn::{DEFAULT_MAX_BATCH, Net, NetMetadata};

use crate::error::InferError;
use crate::net::{InferNet, Workspace};

/// Buffers of one forward pass.
#[derive(Debug)]
struct Slot {
    batch: Batch,
    workspace: Workspace,
    /// The requests' legal moves as policy indices, request after request.
    moves: Vec<u32>,
    counts: Vec<usize>,
    logits: Vec<f32>,
    wdl: Vec<f32>,
}

/// Evaluates positions with an [`InferNet`] on the calling thread.
#[derive(Debug)]
pub struct InferEvaluator {
    net: InferNet,
    encoder: Encoder,
    max_batch: usize,
    pool: Mutex<Vec<Slot>>,
    name: String,
}

impl InferEvaluator {
    /// An evaluator over `net`; requests are split into chunks of `max_batch` (at least 1).
    pub fn new(net: InferNet, max_batch: usize) -> InferEvaluator {
        let config = net.config();
        let name = format!(
            "infer({}x{}{})",
            config.blocks,
            config.filters,
            if config.se_ratio > 0 { "-se" } else { "" }
        );
        InferEvaluator {
            encoder: Encoder::new(config.encoder),
            net,
            max_batch: max_batch.max(1),
            pool: Mutex::new(Vec::new()),
            name,
        }
    }

    /// An evaluator over a Burn net's weights (eval mode), with [`DEFAULT_MAX_BATCH`].
    pub fn from_net(net: &Net) -> Result<InferEvaluator, InferError> {
        Ok(InferEvaluator::new(InferNet::from_net(net)?, DEFAULT_MAX_BATCH))
    }

    /// Loads `<name>.safetensors` and its sidecar (all of `atomzero_nn::load`'s checks), with
    /// [`DEFAULT_MAX_BATCH`].
    pub fn load(path: &Path) -> Result<(InferEvaluator, NetMetadata), InferError> {
        let (net, metadata) = InferNet::load(path)?;
        Ok((InferEvaluator::new(net, DEFAULT_MAX_BATCH), metadata))
    }

    /// Sets the name reported by [`Evaluator::name`] (e.g. the model's path).
    pub fn with_name(mut self, name: impl Into<String>) -> InferEvaluator {
        self.name = name.into();
        self
    }

    /// The network.
    pub fn net(&self) -> &InferNet {
        &self.net
    }

    /// The largest batch handed to the network at once.
    pub fn max_batch(&self) -> usize {
        self.max_batch
    }

    fn take_slot(&self) -> Slot {
        let popped = self.pool.lock().unwrap_or_else(PoisonError::into_inner).pop();
        popped.unwrap_or_else(|| Slot {
            batch: Batch::new(self.encoder, self.max_batch),
            workspace: Workspace::new(),
            moves: Vec::new(),
            counts: Vec::new(),
            logits: Vec::new(),
            wdl: Vec::new(),
        })
    }

    fn evaluate_chunk(&self, requests: &[EvalRequest<'_>], slot: &mut Slot, out: &mut Evaluations) {
        let n = requests.len();
        slot.batch.clear();
        for request in requests {
            slot.batch.push(request.position, request.history, request.repetitions);
        }
        slot.moves.clear();
        slot.counts.clear();
        for request in requests {
            let moves = request.moves.iter().map(|&m| move_to_index(request.position, m) as u32);
            slot.moves.extend(moves);
            slot.counts.push(request.moves.len());
        }
        slot.logits.resize(slot.moves.len(), 0.0);
        slot.wdl.resize(n * 3, 0.0);
        // Only the legal moves' logits: the search reads nothing else.
        let result = self.net.forward_moves_into(
            slot.batch.as_slice(),
            n,
            &mut slot.workspace,
            &slot.moves,
            &slot.counts,
            &mut slot.logits[..slot.moves.len()],
            &mut slot.wdl[..n * 3],
        );
        if let Err(error) = result {
            // The batch was encoded for this net's planes and the indices come from
            // `move_to_index`, so the shapes always fit.
            panic!("atomzero-infer forward pass: {error}");
        }
        let mut at = 0;
        for (i, request) in requests.iter().enumerate() {
            let logits = &slot.logits[at..at + request.moves.len()];
            let wdl = [slot.wdl[3 * i], slot.wdl[3 * i + 1], slot.wdl[3 * i + 2]];
            push_move_logits(out, request, logits, wdl);
            at += request.moves.len();
        }
    }
}

impl Evaluator for InferEvaluator {
    fn evaluate(&self, requests: &[EvalRequest<'_>]) -> Evaluations {
        let moves = requests.iter().map(|r| r.moves.len()).sum();
        let mut out = Evaluations::with_capacity(requests.len(), moves);
        let mut slot = self.take_slot();
        for chunk in requests.chunks(self.max_batch) {
            self.evaluate_chunk(chunk, &mut slot, &mut out);
        }
        self.pool.lock().unwrap_or_else(PoisonError::into_inner).push(slot);
        out
    }

    fn name(&self) -> String {
        self.name.clone()
    }

    fn computes_on_calling_thread(&self) -> bool {
        true
    }
}
