//! The Gumbel root search (see [`crate::gumbel`]): a search's Gumbel draws and halving
//! schedule, sequential halving at the root, the move it plays and the improved policy.

use super::Search;
use crate::gumbel::{self, ActionStats};
use crate::tree::{EdgeId, Expansion, Proven};
use atomzero_rules::Move;

impl Search {
    /// Starts a Gumbel search at the root (nothing without `config.gumbel`): the root's
    /// alpha-beta check (with [`crate::SearchConfig::ab_prior_nodes`], before the draws, so
    /// that the moves it singles out are considered and weigh in the improved policy), fresh
    /// draws, the children's visits so far, the root's value and the halving schedule.
    pub(super) fn begin_gumbel_search(&mut self, raw_value: Option<f32>) {
        let Some(config) = self.config.gumbel else { return };
        let root = &self.nodes[0];
        if self.config.ab_prior_nodes > 0
            && root.expansion == Expansion::Expanded
            && root.n_edges > 1
        {
            // The root is never proved by its check; a reused root checked again ends as if
            // checked once (the raise is to a floor).
            let pos = *self.root_position();
            self.ab_check(0, &pos, &[], u64::from(self.config.ab_prior_nodes));
        }
        let mut g = std::mem::take(&mut self.gumbel);
        let root = &self.nodes[0];
        let expanded = root.expansion == Expansion::Expanded;
        let n = if expanded { root.n_edges as usize } else { 0 };
        g.root_start = root.visits;
        // A reused root's value for its side to move is minus its mover's mean.
        g.raw_value = raw_value.unwrap_or(-root.q());
        g.start.clear();
        g.start.extend((0..n).map(|i| self.stats(root, i).visits));
        g.draws.clear();
        for _ in 0..n {
            let draw = config.noise_scale * self.rng.gumbel() as f32;
            g.draws.push(draw);
        }
        g.sequence = gumbel::considered_visits(config.considered.min(n as u32), g.simulations);
        self.gumbel = g;
    }

    /// Sets the number of simulations a Gumbel search plans for (sequential halving spreads
    /// them over its phases), for the search in progress and the next ones; 800 until set.
    /// Without `config.gumbel` it only records the number.
    pub fn set_simulations(&mut self, simulations: u32) {
        if self.gumbel.simulations == simulations {
            return;
        }
        self.gumbel.simulations = simulations;
        if let Some(config) = self.config.gumbel {
            let n = self.gumbel.draws.len() as u32;
            self.gumbel.sequence = gumbel::considered_visits(config.considered.min(n), simulations);
        }
    }

    /// Visits counted against a search's budget: the root's visits under PUCT (those a
    /// reused subtree brought included); under Gumbel, the simulations of this search.
    #[inline]
    pub fn budget_visits(&self) -> u32 {
        if self.config.gumbel.is_some() {
            self.nodes[0].visits.saturating_sub(self.gumbel.root_start)
        } else {
            self.nodes[0].visits
        }
    }

    /// The root actions' statistics for the Gumbel arithmetic, into `out` (edge order).
    pub(super) fn root_action_stats(&self, out: &mut Vec<ActionStats>) {
        out.clear();
        out.extend(self.root_edges().map(|(e, c)| {
            let exact = c.proven != Proven::Unknown;
            let q = match c.proven {
                Proven::Win => 1.0,
                Proven::Loss => -1.0,
                Proven::Draw => 0.0,
                Proven::Unknown => c.q(),
            };
            ActionStats { prior: e.prior, visits: c.visits, q, exact }
        }));
    }

    /// Gumbel root selection: sequential halving over the root's actions (a proven win at
    /// once). Visits in flight count as visits of this search, so the walks of one `gather`
    /// go to different actions.
    pub(super) fn select_root_gumbel(&mut self) -> EdgeId {
        let config = self.config.gumbel.unwrap_or_default();
        let mut g = std::mem::take(&mut self.gumbel);
        let root = &self.nodes[0];
        let first_edge = root.first_edge;
        self.root_action_stats(&mut g.stats);
        let children = &self.nodes[root.children()];
        let pick = match children.iter().position(|c| c.proven == Proven::Win) {
            Some(win) => win,
            None => {
                g.counts.clear();
                g.counts.extend(
                    children
                        .iter()
                        .zip(&g.start)
                        .map(|(c, &start)| c.in_tree().saturating_sub(start)),
                );
                let simulation: u32 = g.counts.iter().sum();
                // Past the planned budget: keep visiting the leaders.
                let wanted = g
                    .sequence
                    .get(simulation as usize)
                    .copied()
                    .unwrap_or_else(|| g.counts.iter().copied().max().unwrap_or(0));
                gumbel::transformed_q(&config, g.raw_value, &g.stats, &mut g.sigma);
                gumbel::select(&g.draws, &g.stats, &g.sigma, &g.counts, wanted).unwrap_or(0)
            }
        };
        self.gumbel = g;
        first_edge + pick as EdgeId
    }

    /// The move a Gumbel search plays: a proven win if there is one; else, among the actions
    /// that are not proven losses (unless all are), the best by `g + logit + σ(q̂)` of those
    /// with the most visits of this search. `None` before the root is expanded or without
    /// `config.gumbel`.
    pub fn gumbel_move(&self) -> Option<Move> {
        let config = self.config.gumbel?;
        let root = &self.nodes[0];
        if root.expansion != Expansion::Expanded || root.n_edges == 0 {
            return None;
        }
        if let Some((win, _)) = self.root_edges().find(|(_, c)| c.proven == Proven::Win) {
            return Some(win.mv);
        }
        let g = &self.gumbel;
        let mut stats = Vec::new();
        self.root_action_stats(&mut stats);
        let mut sigma = Vec::new();
        gumbel::transformed_q(&config, g.raw_value, &stats, &mut sigma);
        let children = &self.nodes[root.children()];
        let all_lost = children.iter().all(|c| c.proven == Proven::Loss);
        let eligible = |k: usize| all_lost || children[k].proven != Proven::Loss;
        let count =
            |k: usize| children[k].visits.saturating_sub(g.start.get(k).copied().unwrap_or(0));
        let most = (0..children.len()).filter(|&k| eligible(k)).map(count).max()?;
        let score = |k: usize| {
            g.draws.get(k).copied().unwrap_or(0.0) + gumbel::logit(stats[k].prior) + sigma[k]
        };
        let best = (0..children.len()).filter(|&k| eligible(k) && count(k) == most).fold(
            None,
            |best: Option<usize>, k| match best {
                Some(b) if score(b) >= score(k) => Some(b),
                _ => Some(k),
            },
        )?;
        Some(self.edges.mv(root.first_edge as usize + best))
    }

    /// The improved policy `softmax(logit + σ(completed Q))` over the root's moves (edge
    /// order; empty before the root is expanded): a Gumbel search's training target. With
    /// PUCT it is computed with mctx's default constants all the same.
    pub fn improved_policy(&self) -> Vec<(Move, f32)> {
        let config = self.config.gumbel.unwrap_or_default();
        let root = &self.nodes[0];
        if root.expansion != Expansion::Expanded {
            return Vec::new();
        }
        let raw_value =
            if self.config.gumbel.is_some() { self.gumbel.raw_value } else { -root.q() };
        let mut stats = Vec::new();
        self.root_action_stats(&mut stats);
        let mut policy = Vec::new();
        gumbel::improved_policy(&config, raw_value, &stats, &mut policy);
        self.edges.iter(root.edges()).map(|e| e.mv).zip(policy).collect()
    }

    /// The root's moves with the priors the search uses (the network's policy, with
    /// Dirichlet noise mixed in where it is on; edge order; empty before the root is
    /// expanded): what self-play's policy surprise compares the policy target with.
    pub fn root_priors(&self) -> Vec<(Move, f32)> {
        let root = &self.nodes[0];
        if root.expansion != Expansion::Expanded {
            return Vec::new();
        }
        self.edges.iter(root.edges()).map(|e| (e.mv, e.prior)).collect()
    }
}
