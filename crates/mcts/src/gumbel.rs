//! Gumbel root search (Danihelka, Guez, Schrittwieser, Silver, "Policy improvement by planning
//! with Gumbel", ICLR 2022), as DeepMind's `mctx` implements it (`gumbel_muzero_policy`,
//! `qtransform_completed_by_mix_value`, `seq_halving`).
//!
//! At the root every legal action `a` gets a Gumbel draw `g(a)`. Simulations follow
//! sequential halving: the `k`-th simulation of a search visits, among the actions that have
//! exactly [`considered_visits`]`(m, n)[k]` visits of this search, the one with the highest
//! `g(a) + logit(a) + σ(q̂(a))`. With `m` considered actions and `n` simulations that visits
//! the top `m` by `g + logit` once, then keeps the better half by the full score, and so on
//! down to two, each phase splitting its share of the budget evenly. The move played is the
//! best of the most visited actions by the same score, and the policy target is
//! `softmax(logit + σ(completed Q))` over all legal actions ([`improved_policy`]): an
//! improvement on the prior even with a handful of simulations.
//!
//! `σ(q̂) = (c_visit + max_b N(b)) · c_scale · q̂`, with `q̂` the completed Q-values rescaled
//! to [0, 1] over the root's children; an unvisited action's Q is completed with the mixed
//! value `(v̂ + Σ_b N(b) · Σ_visited π(b) q(b) / Σ_visited π(b)) / (1 + Σ_b N(b))` (the
//! network's value `v̂` mixed with the prior-weighted Q of the visited actions).
//!
//! This module holds the pure arithmetic; [`crate::search::Search`] keeps the per-search
//! state (draws, visits at the start of the search) and calls it.

/// Gumbel root search settings (mctx's defaults).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GumbelConfig {
    /// Actions considered at the root (`max_num_considered_actions`; mctx: 16).
    pub considered: u32,
    /// `c_visit` (mctx's `maxvisit_init`: 50).
    pub c_visit: f32,
    /// `c_scale` (mctx's `value_scale`: 0.1).
    pub c_scale: f32,
    /// Scale of the Gumbel draws: 1 in self-play, 0 for deterministic play.
    pub noise_scale: f32,
}

impl Default for GumbelConfig {
    fn default() -> GumbelConfig {
        GumbelConfig { considered: 16, c_visit: 50.0, c_scale: 0.1, noise_scale: 1.0 }
    }
}

/// The visit count of this search that the action visited by simulation `k` must have, for
/// `k` in `0..simulations`, with `considered` actions (mctx `get_sequence_of_considered_visits`).
///
/// For `considered` = 4 and 8 simulations: `[0, 0, 0, 0, 1, 1, 2, 2]`: each of four actions
/// once, then two of them twice more.
pub fn considered_visits(considered: u32, simulations: u32) -> Vec<u32> {
    let simulations = simulations as usize;
    if considered <= 1 {
        return (0..simulations as u32).collect();
    }
    let log2max = (u32::BITS - (considered - 1).leading_zeros()) as usize; // ceil(log2(m))
    let mut sequence = Vec::with_capacity(simulations);
    let mut visits = vec![0u32; considered as usize];
    let mut n_considered = considered as usize;
    while sequence.len() < simulations {
        let extra = (simulations / (log2max * n_considered)).max(1);
        for _ in 0..extra {
            sequence.extend_from_slice(&visits[..n_considered]);
            for v in &mut visits[..n_considered] {
                *v += 1;
            }
        }
        n_considered = (n_considered / 2).max(2);
    }
    sequence.truncate(simulations);
    sequence
}

/// What the Gumbel arithmetic needs of one root action.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ActionStats {
    /// The network's prior probability.
    pub prior: f32,
    /// Completed visits (all searches; reused subtrees included).
    pub visits: u32,
    /// Mean value (win − loss) for the player to move at the root; only read if `visits > 0`
    /// or `exact` is set.
    pub q: f32,
    /// The value is exact (a proven result): it counts as visited.
    pub exact: bool,
}

impl ActionStats {
    fn visited(&self) -> bool {
        self.visits > 0 || self.exact
    }
}

/// The logit of a prior (clamped, so a zero prior is a very unlikely action, not −∞).
#[inline]
pub fn logit(prior: f32) -> f32 {
    prior.max(1e-12).ln()
}

/// mctx's `_compute_mixed_value`: the root's value `raw_value` (the network's, for the player
/// to move) mixed with the prior-weighted mean Q of the visited actions.
pub fn mixed_value(raw_value: f32, actions: &[ActionStats]) -> f32 {
    let total_visits: f32 = actions.iter().map(|a| a.visits as f32).sum();
    let visited_prior: f32 =
        actions.iter().filter(|a| a.visited()).map(|a| a.prior.max(f32::MIN_POSITIVE)).sum();
    if visited_prior <= 0.0 {
        return raw_value;
    }
    let weighted_q: f32 = actions
        .iter()
        .filter(|a| a.visited())
        .map(|a| a.prior.max(f32::MIN_POSITIVE) * a.q / visited_prior)
        .sum();
    (raw_value + total_visits * weighted_q) / (total_visits + 1.0)
}

/// `σ(q̂(a))` for every action (mctx `qtransform_completed_by_mix_value` with its defaults:
/// mixed value, values rescaled to [0, 1]), into `out`.
pub fn transformed_q(
    config: &GumbelConfig,
    raw_value: f32,
    actions: &[ActionStats],
    out: &mut Vec<f32>,
) {
    out.clear();
    let value = mixed_value(raw_value, actions);
    out.extend(actions.iter().map(|a| if a.visited() { a.q } else { value }));
    let (min, max) =
        out.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &q| (lo.min(q), hi.max(q)));
    let range = (max - min).max(1e-8);
    let max_visits = actions.iter().map(|a| a.visits).max().unwrap_or(0) as f32;
    let scale = (config.c_visit + max_visits) * config.c_scale;
    for q in out.iter_mut() {
        *q = scale * (*q - min) / range;
    }
}

/// The improved policy `softmax(logit + σ(completed Q))` over `actions`, into `out` (sums to 1).
pub fn improved_policy(
    config: &GumbelConfig,
    raw_value: f32,
    actions: &[ActionStats],
    out: &mut Vec<f32>,
) {
    transformed_q(config, raw_value, actions, out);
    for (x, a) in out.iter_mut().zip(actions) {
        *x += logit(a.prior);
    }
    let max = out.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for x in out.iter_mut() {
        *x = (*x - max).exp();
        sum += *x;
    }
    if sum > 0.0 && sum.is_finite() {
        out.iter_mut().for_each(|x| *x /= sum);
    } else {
        let uniform = 1.0 / out.len().max(1) as f32;
        out.iter_mut().for_each(|x| *x = uniform);
    }
}

/// The action with the highest `g + logit + σ(q̂)` among those whose count `counts[a]` equals
/// `wanted` (mctx `score_considered`), or, if none has it, among those whose count is nearest
/// to it. Ties go to the first. `None` without actions.
pub fn select(
    gumbel: &[f32],
    actions: &[ActionStats],
    sigma: &[f32],
    counts: &[u32],
    wanted: u32,
) -> Option<usize> {
    let nearest = counts.iter().map(|&c| c.abs_diff(wanted)).min()?;
    let mut best = None;
    let mut best_score = f32::NEG_INFINITY;
    for (i, a) in actions.iter().enumerate() {
        if counts[i].abs_diff(wanted) != nearest {
            continue;
        }
        let score = (gumbel[i] + logit(a.prior) + sigma[i]).max(-1e9);
        if best.is_none() || score > best_score {
            best = Some(i);
            best_score = score;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn considered_visits_follow_mctx() {
        // The cases of mctx's `seq_halving_test.py`.
        let cases: [(u32, u32, &[u32]); 7] = [
            (8, 24, &[0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6]),
            (
                8,
                47,
                &[
                    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 5, 5, 6, 6,
                    7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15, 16, 16, 17,
                ],
            ),
            (8, 2, &[0, 0]),
            (8, 13, &[0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2]),
            (7, 24, &[0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8]),
            (0, 16, &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]),
            (1, 16, &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]),
        ];
        for (considered, simulations, expected) in cases {
            assert_eq!(
                considered_visits(considered, simulations),
                expected,
                "{considered}, {simulations}"
            );
        }
        // Self-play's full search: 16 actions once, 8 once more, 4 three times, 2 six times.
        let s = considered_visits(16, 48);
        assert_eq!(s.len(), 48);
        assert!(s[..16].iter().all(|&v| v == 0));
        assert!(s[16..24].iter().all(|&v| v == 1));
        assert_eq!(&s[24..36], &[2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4]);
        assert_eq!(&s[36..], &[5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10]);
        // Fewer simulations than actions: each simulation a new action.
        assert_eq!(considered_visits(16, 12), vec![0; 12]);
    }

    fn action(prior: f32, visits: u32, q: f32) -> ActionStats {
        ActionStats { prior, visits, q, exact: false }
    }

    #[test]
    fn mixed_value_weights_visited_q_by_prior() {
        let actions = [action(0.5, 3, 0.2), action(0.25, 1, -0.6), action(0.25, 0, 0.9)];
        // (raw + 4 * (0.5*0.2 + 0.25*-0.6)/0.75) / 5
        let expected = (0.4 + 4.0 * ((0.5 * 0.2 + 0.25 * -0.6) / 0.75)) / 5.0;
        assert!((mixed_value(0.4, &actions) - expected).abs() < 1e-6);
        // Nothing visited: the network's value.
        assert_eq!(mixed_value(0.3, &[action(1.0, 0, 0.0)]), 0.3);
    }

    #[test]
    fn improved_policy_moves_mass_to_better_actions() {
        let config = GumbelConfig::default();
        let actions = [action(0.4, 4, -0.5), action(0.3, 4, 0.5), action(0.3, 0, 0.0)];
        let mut pi = Vec::new();
        improved_policy(&config, 0.0, &actions, &mut pi);
        assert!((pi.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        // The better-valued action overtakes the one with the larger prior.
        assert!(pi[1] > pi[0], "{pi:?}");
        // By the formula: sigma = (50 + 4) * 0.1 * rescaled q; q completed with the mix.
        let mut sigma = Vec::new();
        transformed_q(&config, 0.0, &actions, &mut sigma);
        assert!((sigma[0] - 0.0).abs() < 1e-6 && (sigma[1] - 5.4).abs() < 1e-5, "{sigma:?}");
        let logits: Vec<f32> = actions.iter().zip(&sigma).map(|(a, s)| a.prior.ln() + s).collect();
        let z: f32 = logits.iter().map(|l| l.exp()).sum();
        for (p, l) in pi.iter().zip(&logits) {
            assert!((p - l.exp() / z).abs() < 1e-5);
        }
        // No visits: the prior itself.
        let fresh = [action(0.7, 0, 0.0), action(0.2, 0, 0.0), action(0.1, 0, 0.0)];
        improved_policy(&config, 0.1, &fresh, &mut pi);
        for (p, a) in pi.iter().zip(&fresh) {
            assert!((p - a.prior).abs() < 1e-5, "{pi:?}");
        }
    }

    #[test]
    fn select_takes_the_best_score_among_the_wanted_count() {
        let actions = [action(0.5, 2, 0.0), action(0.3, 1, 0.0), action(0.2, 1, 0.0)];
        let sigma = [0.0, 0.0, 0.0];
        let gumbel = [0.0, 0.0, 1.0];
        // Count 1: actions 1 and 2; action 2's draw makes up for its prior.
        assert_eq!(select(&gumbel, &actions, &sigma, &[2, 1, 1], 1), Some(2));
        // Count 2: only action 0.
        assert_eq!(select(&gumbel, &actions, &sigma, &[2, 1, 1], 2), Some(0));
        // Nobody has count 5: the nearest (2).
        assert_eq!(select(&gumbel, &actions, &sigma, &[2, 1, 1], 5), Some(0));
        assert_eq!(select(&[], &[], &[], &[], 0), None);
    }
}
