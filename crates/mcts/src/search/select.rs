//! PUCT selection: one pass over a node's edges below the root (visited edges first, the rest
//! in descending order of prior, so the scan stops at the first unvisited one), the root's
//! scan over its children's stored inputs ([`crate::root`]), and KataGo's forced playouts.

use super::Search;
use crate::root::RootPick;
use crate::tree::{EdgeId, NodeId, Proven};

impl Search {
    /// PUCT selection among the edges of `parent`, in one pass: unvisited edges all share the
    /// first-play-urgency value, so among them only the largest prior can win, and the FPU
    /// (which needs the visited edges' prior mass) is applied at the end.
    ///
    /// Below the root the scan stops at the first unvisited edge. That is exact because the
    /// visited edges form a prefix and the unvisited ones follow in descending order of prior:
    /// `apply` sorts edges by prior, an edge is first visited only when it is the first
    /// unvisited one, and `advance` moves edges whose in-flight visit it dropped behind the
    /// visited ones. The root's priors change with noise after expansion, so the root is
    /// scanned in full, over its children's stored inputs (`select_root_edge`).
    pub(super) fn select_edge(&self, parent: NodeId) -> EdgeId {
        let p = &self.nodes[parent as usize];
        let c_sqrt_n = self.exploration(p);
        if parent == 0 {
            return self.select_root_edge(c_sqrt_n);
        }
        let virtual_loss = self.config.virtual_loss;
        let minimax_weight = self.config.minimax_weight;
        let mut visited_prior = 0.0f32;
        let mut best = EdgeId::MAX;
        let mut best_score = f32::NEG_INFINITY;
        let mut fresh = EdgeId::MAX;
        let mut fresh_prior = f32::NEG_INFINITY;
        let edges = self.edges.packed(p.edges());
        let children = &self.nodes[p.children()];
        // The visited edges come first and the rest in descending order of prior: the edge
        // after the children (all visited: a child is created by the walk that visits it, and
        // `advance` keeps only visited ones) is the only unvisited one that can win.
        let unvisited = children.len();
        for (i, (edge, child)) in edges.iter().zip(children).enumerate() {
            debug_assert!(child.is_visited());
            let prior = edge.prior.get();
            let e = p.first_edge + i as EdgeId;
            let in_tree = child.in_tree();
            // The common case first, as a plain branch (a `match` on `proven` compiles to a
            // jump table that mispredicts).
            let score = if child.proven == Proven::Unknown {
                visited_prior += prior;
                let n = in_tree as f32;
                let q = (child.win_loss_sum[0]
                    - child.win_loss_sum[1]
                    - virtual_loss * child.in_flight as f32)
                    / n;
                child.mixed_q(q, minimax_weight) + c_sqrt_n * prior / (1.0 + n)
            } else {
                if in_tree > 0 {
                    visited_prior += prior;
                }
                match child.proven {
                    Proven::Win => return e,
                    Proven::Loss => -1e6 + child.visits as f32 * 1e-3,
                    _ => c_sqrt_n * prior / (1.0 + in_tree as f32),
                }
            };
            if score > best_score {
                best_score = score;
                best = e;
            }
        }
        if let Some(prior) = edges.get(unvisited).map(|e| e.prior.get())
            && prior > fresh_prior
        {
            fresh_prior = prior;
            fresh = p.first_edge + unvisited as EdgeId;
        }
        if fresh != EdgeId::MAX {
            // The parent's value from the point of view of its side to move (the children's
            // movers), reduced by the prior mass already explored.
            let fpu = -p.q() - self.config.fpu_reduction * visited_prior.sqrt();
            let score = fpu + c_sqrt_n * fresh_prior;
            // Ties go to the earlier edge, as a plain scan would.
            if score > best_score || (score == best_score && fresh < best) {
                best = fresh;
            }
        }
        if best == EdgeId::MAX { p.first_edge } else { best }
    }

    /// The exploration term's factor at node `p` without its children's priors and visits:
    /// the exploration constant (growing with `p`'s visits) times the square root of its
    /// visits, scaled by the spread of its values when [`crate::SearchConfig::cpuct_stdev_scale`]
    /// asks (KataGo's `1 + s · (σ / σ₀ − 1)`).
    #[inline]
    pub(super) fn exploration(&self, p: &crate::tree::Node) -> f32 {
        let (log, sqrt_n) = exploration_terms(self.config.c_base, p.in_tree());
        let c_sqrt_n = (self.config.c_init + self.config.c_factor * log) * sqrt_n;
        if !self.config.scales_by_stdev() {
            return c_sqrt_n;
        }
        let prior = self.config.cpuct_stdev_prior;
        let stdev = p.value_stdev(prior, self.config.cpuct_stdev_prior_weight);
        c_sqrt_n * (1.0 + self.config.cpuct_stdev_scale * (stdev / prior - 1.0))
    }

    /// [`Search::select_edge`] at the root, from the stored inputs of its children: the same
    /// scores, visited prior mass and first-play urgency, computed in the same order.
    pub(super) fn select_root_edge(&self, c_sqrt_n: f32) -> EdgeId {
        let root = &self.nodes[0];
        if self.config.forced_playouts > 0.0
            && let Some(k) = self.forced_root_child()
        {
            return root.first_edge + k as EdgeId;
        }
        let fpu =
            |visited_prior: f32| -root.q() - self.config.fpu_reduction_root * visited_prior.sqrt();
        match self.root_children.select(c_sqrt_n, fpu) {
            RootPick::Child(k) => root.first_edge + k as EdgeId,
            RootPick::Nothing => root.first_edge,
        }
    }

    /// The root child (edge order) that forced playouts pick now: of the children not yet
    /// proven, the one furthest below `sqrt(k · P · N)` visits (in-flight ones counted; `N`
    /// the root's), the first on ties; `None` when every child has its share.
    pub(super) fn forced_root_child(&self) -> Option<usize> {
        let k = self.config.forced_playouts;
        let total = self.nodes[0].in_tree() as f32;
        let mut pick = None;
        let mut largest = 0.0f32;
        for (i, (edge, child)) in self.root_edges().enumerate() {
            if child.proven != Proven::Unknown {
                continue;
            }
            let deficit = (k * edge.prior * total).sqrt() - child.in_tree() as f32;
            if deficit > largest {
                largest = deficit;
                pick = Some(i);
            }
        }
        pick
    }
}

/// `ln((n + c_base + 1) / c_base)`, the growth of the exploration constant with the parent's
/// visits `n`, and `sqrt(max(n, 1))`, the visits' share of the exploration term. A `logf`
/// call per selection was 2.5% of the tree work, and the square root waits ~15 cycles before
/// the first score, so for AlphaZero's `c_base` and the visit counts most nodes have, both come
/// from a table computed once (with the same `f32` operations, so the same bits) for the
/// first `c_base` the process asks about (an engine or a self-play run uses one); another
/// `c_base` computes them.
#[inline]
pub(super) fn exploration_terms(c_base: f32, n: u32) -> (f32, f32) {
    const TABLE_LEN: usize = 4096;
    /// The `c_base` a table was computed for, and the table.
    type Table = (f32, Box<[(f32, f32)]>);
    static TABLE: std::sync::OnceLock<Table> = std::sync::OnceLock::new();
    let compute = |c_base: f32, n: u32| {
        (((n as f32 + c_base + 1.0) / c_base).ln(), (n as f32).max(1.0).sqrt())
    };
    if (n as usize) < TABLE_LEN {
        let (base, table) = TABLE
            .get_or_init(|| (c_base, (0..TABLE_LEN as u32).map(|n| compute(c_base, n)).collect()));
        if *base == c_base {
            return table[n as usize];
        }
    }
    compute(c_base, n)
}
