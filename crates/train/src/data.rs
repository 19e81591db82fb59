//! Training batches from the replay window (sampled uniformly by the trainer with
//! `atomzero_mcts::Rng`, whose state is checkpointed), rebuilt by replaying games, encoded on
//! the fly.

use atomzero_encoding::{Encoder, POLICY_SIZE, move_to_index};
use atomzero_replay::ReplayWindow;

/// A batch in host memory, row-major, ready for `atomzero_nn::TrainBatch::from_slices`.
#[derive(Clone, Debug, Default)]
pub struct HostBatch {
    /// `[B, planes, 8, 8]`.
    pub inputs: Vec<f32>,
    /// `[B, 4672]`: the search's policy target, normalised.
    pub policy: Vec<f32>,
    /// `[B, 4672]`: legal moves.
    pub legal: Vec<bool>,
    /// `[B, 3]`: value target for the side to move.
    pub wdl: Vec<f32>,
    /// Positions in the batch.
    pub len: usize,
}

/// Fills `out` with the window examples `indices`.
pub fn build_batch(
    window: &ReplayWindow,
    indices: &[usize],
    encoder: &Encoder,
    root_mix: f32,
    out: &mut HostBatch,
) {
    let planes = encoder.planes();
    let n = indices.len();
    out.inputs.clear();
    out.inputs.resize(n * planes * 64, 0.0);
    out.policy.clear();
    out.policy.resize(n * POLICY_SIZE, 0.0);
    out.legal.clear();
    out.legal.resize(n * POLICY_SIZE, false);
    out.wdl.clear();
    out.wdl.resize(n * 3, 0.0);
    out.len = 0;
    for (row, &i) in indices.iter().enumerate() {
        let Some(sample) = window.get(i, encoder.config().history) else { continue };
        let pos = &sample.position;
        let input = &mut out.inputs[row * planes * 64..(row + 1) * planes * 64];
        encoder.encode_flat(pos, pos.turn(), &sample.history, sample.repetitions, input);
        let policy = &mut out.policy[row * POLICY_SIZE..(row + 1) * POLICY_SIZE];
        let total: f32 = sample.target.policy.iter().map(|&(_, w)| w).sum();
        if total > 0.0 {
            for &(m, weight) in &sample.target.policy {
                policy[move_to_index(pos, m)] += weight / total;
            }
        }
        let legal = &mut out.legal[row * POLICY_SIZE..(row + 1) * POLICY_SIZE];
        for &m in pos.legal_moves().iter() {
            legal[move_to_index(pos, m)] = true;
        }
        for k in 0..3 {
            out.wdl[row * 3 + k] =
                (1.0 - root_mix) * sample.result_wdl[k] + root_mix * sample.target.root_wdl[k];
        }
        out.len += 1;
    }
}
