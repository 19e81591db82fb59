//! What a search reports: the root's children with their visits (and KataGo's policy-target
//! pruning), their statistics, the root's value, the move to play (proven wins, visits,
//! LCB), a move sampled by temperature, the principal variation.

use super::Search;
use crate::lcb;
use crate::tree::{Edge, Expansion, NO_NODE, Node, Proven, flip_wdl};
use atomzero_rules::Move;

impl Search {
    /// The root's edges with the statistics of their children.
    pub(super) fn root_edges(&self) -> impl Iterator<Item = (Edge, &Node)> + '_ {
        let root = &self.nodes[0];
        self.edges.iter(root.edges()).enumerate().map(|(i, e)| (e, self.stats(root, i)))
    }

    /// Visits per root move, in the tree's order (by prior when expanded; empty before the root
    /// is expanded).
    pub fn root_children(&self) -> Vec<(Move, u32)> {
        self.root_edges().map(|(e, c)| (e.mv, c.visits)).collect()
    }

    /// [`Search::root_children`] with KataGo's policy-target pruning (Wu 2019, section 3.1)
    /// when forced playouts are on ([`SearchConfig::forced_playouts`] > 0 at a PUCT root;
    /// otherwise the visits unchanged): every child but the most visited one gives back up to
    /// its `sqrt(k · P · N)` forced visits, as long as its PUCT score with the visits left stays
    /// at most the most visited child's; a child left with one visit or none gets 0. Proven
    /// children and the most visited one keep their visits.
    pub fn pruned_root_children(&self) -> Vec<(Move, u32)> {
        let mut out = self.root_children();
        let k = self.config.forced_playouts;
        let root = &self.nodes[0];
        if k <= 0.0 || self.config.gumbel.is_some() || root.expansion != Expansion::Expanded {
            return out;
        }
        let c_sqrt_n = self.exploration(root);
        let total = root.in_tree() as f32;
        let children: Vec<(Edge, &Node)> = self.root_edges().collect();
        // The most visited child (the first on ties).
        let mut best = 0;
        for (i, (_, child)) in children.iter().enumerate() {
            if child.visits > children[best].1.visits {
                best = i;
            }
        }
        // PUCT's score of a child (its value for the root's mover) with `visits` visits.
        let score = |edge: &Edge, child: &Node, visits: f32| {
            child.q() + c_sqrt_n * edge.prior / (1.0 + visits)
        };
        let (best_edge, best_child) = children[best];
        if best_child.proven != Proven::Unknown || best_child.visits == 0 {
            return out;
        }
        let best_score = score(&best_edge, best_child, best_child.visits as f32);
        for (i, (edge, child)) in children.iter().enumerate() {
            if i == best || child.proven != Proven::Unknown || child.visits == 0 {
                continue;
            }
            let visits = child.visits as f32;
            let forced = (k * edge.prior * total).sqrt();
            // The fewest visits at which the child's score is still at most the best's.
            let gap = best_score - child.q();
            let floor = if gap > 0.0 { c_sqrt_n * edge.prior / gap - 1.0 } else { visits };
            let kept = (visits - forced).max(floor).ceil().clamp(0.0, visits);
            out[i].1 = if kept <= 1.0 { 0 } else { kept as u32 };
        }
        out
    }

    /// Root children with prior, visits, WDL (for the side to move at the root) and proof.
    pub fn root_child_stats(&self) -> Vec<ChildStats> {
        self.root_edges()
            .map(|(e, c)| ChildStats {
                mv: e.mv,
                prior: e.prior,
                visits: c.visits,
                wdl: c.wdl(),
                proven: c.proven,
            })
            .collect()
    }

    /// Mean WDL of the root for its side to move.
    pub fn root_wdl(&self) -> [f32; 3] {
        match self.nodes[0].proven.flip().wdl() {
            Some(exact) => exact,
            None => flip_wdl(self.nodes[0].wdl()),
        }
    }

    /// The move to play: the quickest proven win if there is one, else the most visited move that is not
    /// a proven loss (ties broken by value) or, with [`SearchConfig::lcb_stdevs`] > 0, the
    /// move [`lcb::select`] prefers to it.
    pub fn best_move(&self) -> Option<Move> {
        let wins = self.root_edges().filter(|(_, c)| c.proven == Proven::Win);
        // The quickest proven win (the first in edge order on ties).
        if let Some((win, _)) = wins.min_by_key(|(_, c)| c.plies) {
            return Some(win.mv);
        }
        let out = |i: usize| self.excluded.get(i).copied().unwrap_or(false);
        let key =
            |i: usize, c: &Node| (c.proven != Proven::Loss, !out(i), c.visits, ordered(c.q()));
        let (best, (edge, child)) =
            self.root_edges().enumerate().max_by_key(|&(i, (_, c))| key(i, c))?;
        if self.config.lcb_stdevs <= 0.0 || child.proven == Proven::Loss {
            return Some(edge.mv);
        }
        let candidates: Vec<lcb::Candidate> = self
            .root_edges()
            .enumerate()
            .map(|(i, (_, c))| lcb::Candidate {
                q: if c.proven == Proven::Draw { 0.0 } else { c.q() },
                // A proven loss or a move left out never competes (0 visits are below any
                // share).
                visits: if c.proven == Proven::Loss || out(i) { 0 } else { c.visits },
                sample: self.root_samples.get(i).copied().unwrap_or_default(),
                exact: c.proven == Proven::Draw,
            })
            .collect();
        let pick = lcb::select(&candidates, best, self.config.lcb_stdevs);
        self.root_edges().nth(pick).map(|(e, _)| e.mv)
    }

    /// Samples a root move with probability ∝ visits^(1/temperature) among moves that are not
    /// proven losses; temperature 0 (or less) is [`Search::best_move`].
    pub fn sample_move(&mut self, temperature: f32) -> Option<Move> {
        if temperature <= 0.0 || self.root_edges().any(|(_, c)| c.proven == Proven::Win) {
            return self.best_move();
        }
        let weights: Vec<(Move, f64)> = self
            .root_edges()
            .map(|(e, c)| {
                let w = if c.proven == Proven::Loss {
                    0.0
                } else {
                    (c.visits as f64).powf(1.0 / temperature as f64)
                };
                (e.mv, w)
            })
            .collect();
        let total: f64 = weights.iter().map(|(_, w)| w).sum();
        if total <= 0.0 {
            return self.best_move();
        }
        let mut r = self.rng.uniform() * total;
        for &(mv, w) in &weights {
            if r < w {
                return Some(mv);
            }
            r -= w;
        }
        self.best_move()
    }

    /// The principal variation: most visited children from the root.
    pub fn pv(&self, max_len: usize) -> Vec<Move> {
        let mut pv = Vec::new();
        let mut id = NO_NODE;
        if let Some(best) = self.best_move() {
            pv.push(best);
            id = self.root_child(best);
        }
        while pv.len() < max_len && id != NO_NODE {
            let node = &self.nodes[id as usize];
            let Some((i, edge)) = self
                .edges
                .iter(node.edges())
                .enumerate()
                .filter(|&(i, _)| self.stats(node, i).visits > 0)
                .max_by_key(|&(i, _)| {
                    let c = self.stats(node, i);
                    (c.proven == Proven::Win, c.visits)
                })
            else {
                break;
            };
            id = node.child(i);
            pv.push(edge.mv);
        }
        pv
    }
}

/// Per-move statistics at the root.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChildStats {
    /// The move.
    pub mv: Move,
    /// Its prior.
    pub prior: f32,
    /// Its visits.
    pub visits: u32,
    /// Mean WDL for the side to move at the root.
    pub wdl: [f32; 3],
    /// Proven result for the side to move at the root.
    pub proven: Proven,
}

/// Orders floats for `max_by_key` (NaN sorts lowest).
fn ordered(x: f32) -> i64 {
    if x.is_nan() { i64::MIN } else { (x as f64 * 1e9) as i64 }
}
