//! Alpha-beta priors ([`crate::SearchConfig::ab_prior_nodes`]): a short tactical search that
//! raises the priors of the moves a position's tactics single out.
//!
//! The engine loses to forced lines its network's policy does not propose
//! (`docs/experiments.md`, "Why the engine loses at longer time controls"): after a blunder,
//! the refutation had a prior too low for the search to visit. When a node reaches
//! [`crate::SearchConfig::ab_prior_visits`] visits (so only the nodes the search keeps coming
//! back to pay for it), [`AlphaBeta::check_root`] searches its position for a fixed number of
//! nodes. If at most [`MAX_RAISED`] moves are not refuted (every other move scores
//! [`AB_PRIOR_MARGIN`] centipawns or more below the best: it loses material or the king by force
//! within the horizon), those moves' priors are raised to at least
//! [`crate::SearchConfig::ab_prior_weight`] shared among them, and the other priors are
//! scaled down so that the sum stays what it was. The check does not veto a move (the
//! material search misjudges sacrifices) and does not prove anything: it only tells the PUCT
//! search where to look first. Raising to a floor is idempotent, so a node checked twice
//! (a walk that collided and came back at the same visit count) ends as if checked once.
//! A Gumbel root (self-play's) is not checked by its visits: `begin_gumbel_search` checks it
//! once as each search begins, before the draws choose the actions considered.
//!
//! With [`crate::SearchConfig::ab_prior_proofs`] a check that finds a game end by force (a
//! score within [`WIN_THRESHOLD`] of a win or a loss: the side to move explodes the enemy king
//! or mates whatever the opponent does, or loses whatever it does) also proves the node, as the
//! MCTS-solver proves a terminal position, with the check's distance to the end; the walk then
//! backs the exact result up and propagates the proof. Such a score is a proof of the line
//! searched: the capture search lets only a side in check go without standing pat, so a loss
//! there is forced; draws by repetition count the game's history and the line.
//!
//! Pure and deterministic: the alpha-beta search stops by its node count, not a clock; its
//! transposition table is kept between checks (the positions of one tree overlap).

use super::Search;
use crate::alphabeta::{AlphaBeta, WIN, WIN_THRESHOLD};
use crate::tree::{Expansion, NodeId, Proven};
use atomzero_rules::Position;

/// Most moves a check raises: more than this many moves that keep the material is a quiet
/// position, where the network's priors are better than a material count.
const MAX_RAISED: usize = 3;

/// Centipawns below the alpha-beta search's best at which a move counts as refuted.
pub const AB_PRIOR_MARGIN: i32 = 150;

/// Growth of the visits and the nodes from one level of checks to the next
/// ([`crate::SearchConfig::ab_prior_levels`]).
pub const AB_LEVEL_GROWTH: u64 = 8;

/// Deepest node (plies below the root) that gets the checks above the first level: the root
/// (which move to play) and its children (the opponent's replies, where a refutation hides).
pub const AB_DEEP_CHECK_DEPTH: usize = 1;

/// Transposition-table size of the checks' alpha-beta search (2^16 entries, ~2 MB).
pub(super) const AB_TABLE_BITS: u32 = 16;

/// Counters of the alpha-beta checks of one search (since it was created).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AbPriorStats {
    /// Checks run.
    pub checks: u64,
    /// Checks that raised priors.
    pub raised: u64,
    /// Alpha-beta nodes searched.
    pub nodes: u64,
    /// Checks that proved their node ([`crate::SearchConfig::ab_prior_proofs`]).
    pub proofs: u64,
}

impl Search {
    /// Lets alpha-beta checks ([`crate::SearchConfig::ab_prior_nodes`]) start from now on
    /// (`true`, the default) or starts none (`false`) until told otherwise, leaving the
    /// settings, and so the tree's reuse, untouched: the UCI engine turns the checks off for
    /// moves with a long time budget (`AlphaBetaPriorMaxTime`). Priors raised earlier stay.
    pub fn set_alpha_beta_priors(&mut self, enabled: bool) {
        self.ab_enabled = enabled;
    }

    /// Whether alpha-beta checks may start ([`Search::set_alpha_beta_priors`]).
    pub fn alpha_beta_priors_enabled(&self) -> bool {
        self.ab_enabled
    }

    /// The node budget of node `id`, `depth` plies below the root, for an alpha-beta check
    /// now (it is about to be selected from), if it gets one: check 0,
    /// [`crate::SearchConfig::ab_prior_nodes`] nodes, when its visits reach
    /// [`crate::SearchConfig::ab_prior_visits`]; within [`AB_DEEP_CHECK_DEPTH`] plies of the
    /// root also check `k` < [`crate::SearchConfig::ab_prior_levels`], with 8^k times the
    /// nodes, once its visits have reached 8^k times as many. A node that comes within reach
    /// with its visits already past several levels (a subtree kept by [`Search::advance`])
    /// gets the deepest one due, once.
    #[inline]
    pub(super) fn ab_check_budget(&mut self, id: NodeId, depth: usize) -> Option<u64> {
        let config = &self.config;
        if config.ab_prior_nodes == 0 || !self.ab_enabled {
            return None;
        }
        let node = &self.nodes[id as usize];
        let visits = u64::from(node.in_tree());
        let first = u64::from(config.ab_prior_visits.max(1));
        if visits < first || node.n_edges <= 1 || (id == 0 && config.gumbel.is_some()) {
            return None;
        }
        if config.ab_prior_playouts > 0
            && self.nodes[0].in_tree().saturating_sub(self.ab_search_start)
                >= config.ab_prior_playouts
        {
            return None;
        }
        let nodes = u64::from(config.ab_prior_nodes);
        if visits == first {
            return Some(nodes);
        }
        if depth > AB_DEEP_CHECK_DEPTH {
            return None;
        }
        // The deepest level due at these visits.
        let (mut level, mut at, mut budget) = (0u8, first, nodes);
        while level + 1 < config.ab_prior_levels && visits >= at.saturating_mul(AB_LEVEL_GROWTH) {
            level += 1;
            at = at.saturating_mul(AB_LEVEL_GROWTH);
            budget = budget.saturating_mul(AB_LEVEL_GROWTH);
        }
        if level == 0 {
            return None;
        }
        match self.ab_levels_done.iter_mut().find(|(node, _)| *node == id) {
            Some((_, done)) if *done >= level => None,
            Some((_, done)) => {
                *done = level;
                Some(budget)
            }
            None => {
                self.ab_levels_done.push((id, level));
                Some(budget)
            }
        }
    }

    /// Runs the alpha-beta check of node `id`, whose position is `pos` (after the path's
    /// positions `path_hashes`), and raises its edges' priors if the check singles out moves.
    /// With [`crate::SearchConfig::ab_prior_proofs`], returns the node's proof (for the player
    /// who moved into it) and its plies to the end when the check found a forced game end
    /// below the root; the caller proves the node.
    pub(super) fn ab_check(
        &mut self,
        id: NodeId,
        pos: &Position,
        path_hashes: &[u64],
        budget: u64,
    ) -> Option<(Proven, u16)> {
        let mut ab =
            self.alphabeta.take().unwrap_or_else(|| Box::new(AlphaBeta::new(AB_TABLE_BITS)));
        let mut before = Vec::with_capacity(self.game_hashes.len() + path_hashes.len());
        before.extend_from_slice(&self.game_hashes);
        before.extend_from_slice(path_hashes);
        let check = ab.check_root(pos, &before, 64, AB_PRIOR_MARGIN, &mut |n| n < budget);
        self.ab_stats.checks += 1;
        self.ab_stats.nodes += ab.nodes();
        self.alphabeta = Some(ab);
        let check = check?;
        if self.config.ab_prior_proofs && id != 0 && check.score.abs() >= WIN_THRESHOLD {
            // The side to move wins (a loss for the player who moved here), or loses whatever
            // it plays; `WIN - |score|` plies to the end.
            let plies = u16::try_from(WIN - check.score.abs()).unwrap_or(u16::MAX);
            self.ab_stats.proofs += 1;
            let proven = if check.score > 0 { Proven::Loss } else { Proven::Win };
            return Some((proven, plies));
        }
        self.raise_unrefuted(id, &check.refuted);
        None
    }

    /// Raises the priors of the root's moves that are not in `refuted` (an alpha-beta check of
    /// the root position, e.g. the engine's deeper one before its search) as a check of
    /// [`crate::SearchConfig::ab_prior_nodes`] would: if at most three moves are left, their
    /// priors become at least [`crate::SearchConfig::ab_prior_weight`] shared among them.
    /// Returns false, changing nothing, while the root is not expanded (call again once it
    /// is) or when the search is a Gumbel one (its root is chosen by another rule).
    pub fn raise_root_priors(&mut self, refuted: &[atomzero_rules::Move]) -> bool {
        if self.nodes[0].expansion != Expansion::Expanded || self.config.gumbel.is_some() {
            return false;
        }
        self.raise_unrefuted(0, refuted);
        true
    }

    /// The raise of node `id`'s priors for the alpha-beta check that refuted `refuted`.
    fn raise_unrefuted(&mut self, id: NodeId, refuted: &[atomzero_rules::Move]) {
        let node = &self.nodes[id as usize];
        let range = node.edges();
        let n_refuted = self.edges.iter(range.clone()).filter(|e| refuted.contains(&e.mv)).count();
        let kept = range.len().saturating_sub(n_refuted);
        if n_refuted == 0 || kept == 0 || kept > MAX_RAISED {
            return;
        }
        let floor = self.config.ab_prior_weight.clamp(0.0, 1.0) / kept as f32;
        let raised = |mv| !refuted.contains(&mv);
        let (mut total, mut old, mut new) = (0.0f32, 0.0f32, 0.0f32);
        for edge in self.edges.iter(range.clone()) {
            total += edge.prior;
            if raised(edge.mv) {
                old += edge.prior;
                new += edge.prior.max(floor);
            }
        }
        let rest = total - old;
        let scale = if rest > 0.0 { (total - new).max(0.0) / rest } else { 1.0 };
        for e in range.clone() {
            let edge = self.edges.get(e);
            let prior = if raised(edge.mv) { edge.prior.max(floor) } else { edge.prior * scale };
            self.edges.set_prior(e, prior);
        }
        self.ab_stats.raised += 1;
        let node = &self.nodes[id as usize];
        let (children, n_children) = (node.children(), node.n_children as usize);
        if id == 0 {
            // Every root edge has a node: refresh each child's selection inputs.
            for child in children {
                self.refresh_root_child(child as NodeId);
            }
        } else {
            // Below the root the unvisited edges must follow the visited ones in descending
            // order of prior (`select_edge` stops at the first): a uniform scale keeps the
            // order of the others, a raised one moves up.
            self.edges.sort_by_prior(range.start + n_children..range.end);
        }
    }

    /// The alpha-beta checks' counters since the search was created.
    pub fn ab_prior_stats(&self) -> AbPriorStats {
        self.ab_stats
    }
}
