//! Training batches from the replay window (sampled uniformly by the trainer with
//! `atomzero_mcts::Rng`, whose state is checkpointed), rebuilt by replaying games, encoded on
//! the fly into a [`SparseBatch`]: each position's legal moves with the search's target on
//! each (Burn's step densifies it; `atomzero-backprop` uses it as it is). For a net with an
//! opponent-policy head each position also carries the opponent's reply: the next ply's search
//! target when that ply was searched in full, else the move the opponent played, over its
//! legal replies (`atomzero_encoding::reply_index`), scaled to the auxiliary loss's weight.

use crate::config::{MATERIAL_MARGIN, MaxLengthTarget};
use atomzero_backprop::SparseBatch;
use atomzero_encoding::{Encoder, move_to_index, reply_index};
use atomzero_mcts::tree::flip_wdl;
use atomzero_replay::{MoveRecord, ReplayWindow, SearchTarget};
use atomzero_rules::{Color, Move, Position, Role};

/// Refills `out` with the window examples `indices` (those the window cannot rebuild are
/// skipped). The value target is `(1 − root_mix) · result + root_mix · the search's root WDL`;
/// with `reply_weight > 0` each example also carries the opponent's reply, its targets summing
/// to `reply_weight`.
pub fn build_batch(
    window: &ReplayWindow,
    indices: &[usize],
    encoder: &Encoder,
    root_mix: f32,
    reply_weight: f32,
    out: &mut SparseBatch,
) {
    let value =
        ValueTarget { root_mix, lambda: 0.0, greedy: false, max_length: MaxLengthTarget::Draw };
    build_batch_with(window, indices, encoder, &value, reply_weight, out);
}

/// How a position's value target is made from its game's result and the searches' root values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ValueTarget {
    /// Target = (1 − `root_mix`) · result + `root_mix` · the searched part (below).
    pub root_mix: f32,
    /// The searched part: with `lambda` = 0 the position's own root WDL; above 0, the
    /// λ-return over the game's searched positions from this one on (Sutton's TD(λ), over
    /// searched plies): `(1 − λ) Σ_j λ^j v_j + λ^M z`, where `v_j` is the root WDL of the
    /// `j`-th searched position from this one (this one is `j` = 0), seen from this side to
    /// move, `M` how many there are, and `z` the result. Later searches know what the game
    /// showed a few plies on (KataGo's short-term value targets average future search values
    /// the same way).
    pub lambda: f32,
    /// With `lambda` above 0: the λ-return stops at the first searched position whose played
    /// move was not the search's choice (its policy target's largest weight: a move sampled
    /// for exploration), taking that position's root WDL for all the weight left (Watkins's
    /// Q(λ) cut), so that exploratory moves of either side do not reach back into the targets
    /// of the positions before them.
    pub greedy: bool,
    /// The value target of positions from games cut by the ply limit
    /// ([`MaxLengthTarget::Search`]: the searched part alone, its result weight spread over
    /// the searched positions).
    pub max_length: MaxLengthTarget,
}

impl ValueTarget {
    /// The target `config` asks for.
    pub fn of(config: &crate::TrainerConfig) -> ValueTarget {
        ValueTarget {
            root_mix: config.value_target_root_mix,
            lambda: config.value_target_lambda,
            greedy: config.value_target_lambda_greedy,
            max_length: config.max_length_target,
        }
    }
}

/// The searched part of a value target ([`ValueTarget::lambda`]): the λ-return over the
/// searched positions of `rest` (the game from this position on), with `result` for this
/// side to move; `None` for `result` spreads its weight over the searched positions. With
/// `greedy`, the return stops at the first searched position whose move was not the search's
/// choice ([`ValueTarget::greedy`]).
fn lambda_return(
    rest: &[MoveRecord],
    lambda: f32,
    greedy: bool,
    result: Option<[f32; 3]>,
) -> [f32; 3] {
    let mut sum = [0.0f32; 3];
    let mut weight = 1.0f32;
    let mut total = 0.0f32;
    for (k, record) in rest.iter().enumerate() {
        let Some(target) = &record.target else { continue };
        let v = if k % 2 == 0 { target.root_wdl } else { flip_wdl(target.root_wdl) };
        // The weights so far and this one's sum to 1 at a cut: no result, no normalising.
        let cut = greedy && !searched_choice(target, record.mv);
        let share = if cut { weight } else { (1.0 - lambda) * weight };
        for (s, x) in sum.iter_mut().zip(v) {
            *s += share * x;
        }
        if cut {
            return sum;
        }
        total += share;
        weight *= lambda;
    }
    match result {
        Some(z) => std::array::from_fn(|i| sum[i] + weight * z[i]),
        None if total > 0.0 => sum.map(|s| s / total),
        None => sum,
    }
}

/// `m`'s weight in `target`'s policy (the sum of its entries; 0 where absent).
fn policy_weight(target: &SearchTarget, m: Move) -> f32 {
    target.policy.iter().filter(|&&(t, _)| t == m).map(|&(_, w)| w).sum()
}

/// Whether `played` has the largest weight of `target`'s policy (ties count as chosen).
fn searched_choice(target: &SearchTarget, played: Move) -> bool {
    let best = target.policy.iter().map(|&(_, w)| w).fold(0.0f32, f32::max);
    policy_weight(target, played) >= best
}

/// [`build_batch`], with the value target chosen by `value` ([`ValueTarget`]).
pub fn build_batch_with(
    window: &ReplayWindow,
    indices: &[usize],
    encoder: &Encoder,
    value: &ValueTarget,
    reply_weight: f32,
    out: &mut SparseBatch,
) {
    let ValueTarget { root_mix, lambda, greedy, max_length } = *value;
    let planes = encoder.planes();
    if out.planes != planes {
        *out = SparseBatch::new(planes);
    }
    out.clear();
    let mut input = vec![0.0f32; planes * 64];
    let mut policy: Vec<(usize, f32)> = Vec::new();
    let mut reply: Vec<(usize, f32)> = Vec::new();
    for &i in indices {
        let Some(sample) = window.get(i, encoder.config().history) else { continue };
        let pos = &sample.position;
        // `encode_flat` only sets the planes' ones.
        input.fill(0.0);
        encoder.encode_flat(pos, pos.turn(), &sample.history, sample.repetitions, &mut input);
        let total: f32 = sample.target.policy.iter().map(|&(_, w)| w).sum();
        policy.clear();
        for &m in pos.legal_moves().iter() {
            let weight = policy_weight(sample.target, m);
            let weight = if total > 0.0 { weight / total } else { 0.0 };
            policy.push((move_to_index(pos, m), weight));
        }
        let unresolved = sample.adjudicated && max_length == MaxLengthTarget::Search;
        let mix = if unresolved { 1.0 } else { root_mix };
        let cut = match max_length {
            MaxLengthTarget::Material => sample.cut_position(),
            _ => None,
        };
        let result = match cut {
            Some(end) => {
                let lead = material(&end, pos.turn()) - material(&end, !pos.turn());
                if lead >= MATERIAL_MARGIN {
                    [1.0, 0.0, 0.0]
                } else if lead <= -MATERIAL_MARGIN {
                    [0.0, 0.0, 1.0]
                } else {
                    [0.0, 1.0, 0.0]
                }
            }
            _ => sample.result_wdl,
        };
        let searched = if lambda > 0.0 {
            lambda_return(sample.rest, lambda, greedy, (!unresolved).then_some(result))
        } else {
            sample.target.root_wdl
        };
        let wdl: [f32; 3] = std::array::from_fn(|k| (1.0 - mix) * result[k] + mix * searched[k]);
        reply.clear();
        if let Some(record) = sample.reply.filter(|_| reply_weight > 0.0) {
            let mut after = *pos;
            after.play_unchecked(sample.played);
            let weight_of = |m| match &record.target {
                Some(target) => policy_weight(target, m),
                None => f32::from(m == record.mv),
            };
            let start = reply.len();
            for &m in after.legal_moves().iter() {
                reply.push((reply_index(&after, m), weight_of(m)));
            }
            let total: f32 = reply[start..].iter().map(|&(_, w)| w).sum();
            if total > 0.0 {
                reply.iter_mut().for_each(|(_, w)| *w *= reply_weight / total);
            } else {
                reply.clear();
            }
        }
        // Indices come from `move_to_index` and the input from the encoder: always valid.
        if out.push_with_reply(&input, policy.iter().copied(), reply.iter().copied(), wdl).is_err()
        {
            continue;
        }
    }
}

/// `color`'s material on `pos` (pawn 1, knight and bishop 3, rook 5, queen 9).
pub fn material(pos: &Position, color: Color) -> i32 {
    let board = pos.board();
    let ours = board.by_color(color);
    [(Role::Pawn, 1), (Role::Knight, 3), (Role::Bishop, 3), (Role::Rook, 5), (Role::Queen, 9)]
        .iter()
        .map(|&(role, value)| value * (board.by_role(role) & ours).count() as i32)
        .sum()
}
