//! Backing values up a walk's path (with the root children's value samples for LCB) and
//! proving ancestors from proven children (MCTS-solver), with their distance to the end.

use super::Search;
use crate::tree::{NodeId, Proven, flip_wdl};

impl Search {
    /// Adds `wdl` (for the player who moved into the last node of `path`) to every node of the
    /// path, flipping the point of view at each level.
    pub(super) fn backup(&mut self, path: &[NodeId], mut wdl: [f32; 3], virtual_loss: bool) {
        if self.config.lcb_stdevs > 0.0 && path.len() >= 2 {
            // The value the root child (`path[1]`) gets: flipped once per ply above the leaf.
            let at_child = if path.len().is_multiple_of(2) { wdl } else { flip_wdl(wdl) };
            let k = path[1].wrapping_sub(self.nodes[0].first_child) as usize;
            if let Some(sample) = self.root_samples.get_mut(k) {
                sample.add(at_child[0] - at_child[2]);
            }
        }
        let leaf_value = wdl[0] - wdl[2];
        // The square of the value is the same from either side.
        let value_sq = self.config.scales_by_stdev().then_some(leaf_value * leaf_value);
        for &id in path.iter().rev() {
            let node = &mut self.nodes[id as usize];
            node.visits += 1;
            if virtual_loss {
                node.in_flight = node.in_flight.saturating_sub(1);
            }
            node.win_loss_sum[0] += wdl[0];
            node.win_loss_sum[1] += wdl[2];
            if let Some(sq) = value_sq {
                node.add_value_sq(sq);
            }
            wdl = flip_wdl(wdl);
        }
        if self.config.minimax_weight > 0.0 {
            self.backup_minimax(path, leaf_value);
        }
    }

    /// Updates the implicit minimax values ([`crate::tree::Node::minimax`]) of the nodes of
    /// `path`, from the last up: a node with a child that has a completed visit (or a proof)
    /// takes the best of its children's values for its side to move, flipped; the last node
    /// without such a child takes `leaf_value` (its evaluation, for the player who moved into
    /// it). Children without a completed visit are left out, as Lanctot et al. leave out
    /// unexpanded ones.
    pub(super) fn backup_minimax(&mut self, path: &[NodeId], leaf_value: f32) {
        for (depth, &id) in path.iter().enumerate().rev() {
            let node = &self.nodes[id as usize];
            if node.proven != Proven::Unknown {
                continue;
            }
            let mut best = f32::NEG_INFINITY;
            for child in &self.nodes[node.children()] {
                let value = match child.proven.wdl() {
                    Some([win, _, loss]) => win - loss,
                    None if child.visits > 0 => child.minimax(),
                    None => continue,
                };
                best = best.max(value);
            }
            let node = &mut self.nodes[id as usize];
            if best > f32::NEG_INFINITY {
                node.set_minimax(-best);
            } else if depth + 1 == path.len() {
                node.set_minimax(leaf_value);
            }
        }
    }

    /// Proves the last node of `path` (`proven` for the player who moved into it, `plies` to
    /// the end of the game), backs its exact value up the path and proves the ancestors that
    /// follow from it.
    pub(super) fn prove_last(&mut self, path: &[NodeId], proven: Proven, plies: u16) {
        if let Some(&id) = path.last() {
            let node = &mut self.nodes[id as usize];
            node.proven = proven;
            node.plies = plies;
            self.backup(path, proven.wdl().unwrap_or([0.0, 1.0, 0.0]), false);
            self.propagate_proof(path);
        }
    }

    /// After the last node of `path` became proven, proves its ancestors where possible, each
    /// with its distance to the end ([`Node::plies`]): one more than the winning child's for
    /// a parent whose side to move wins, one more than the longest of its lost children's for
    /// a parent whose every move loses.
    pub(super) fn propagate_proof(&mut self, path: &[NodeId]) {
        for window in path.windows(2).rev() {
            let (parent, child) = (window[0] as usize, window[1] as usize);
            if self.nodes[parent].proven != Proven::Unknown {
                break;
            }
            let (proven, plies) = if self.nodes[child].proven == Proven::Win {
                (Proven::Loss, self.nodes[child].plies)
            } else {
                let node = &self.nodes[parent];
                let children = (0..node.n_edges as usize).map(|i| self.stats(node, i));
                if children.clone().all(|c| c.proven != Proven::Unknown) {
                    if children.clone().any(|c| c.proven == Proven::Draw) {
                        (Proven::Draw, 0)
                    } else {
                        (Proven::Win, children.map(|c| c.plies).max().unwrap_or(0))
                    }
                } else {
                    (Proven::Unknown, 0)
                }
            };
            if proven == Proven::Unknown {
                break;
            }
            let node = &mut self.nodes[parent];
            node.proven = proven;
            node.plies = plies.saturating_add(1);
        }
        // The backup before the proof used the proven nodes' estimates.
        if self.config.minimax_weight > 0.0 {
            self.backup_minimax(path, 0.0);
        }
    }

    /// Whether node `id`'s proof (if any) follows from its children's, as the MCTS-solver
    /// proves a node: a win for its side to move needs a child lost for the side to move
    /// there, a loss or a draw needs every child proven. False for an expanded node that its
    /// alpha-beta check proved ([`crate::SearchConfig::ab_prior_proofs`]).
    pub(super) fn proof_rests_on_children(&self, id: NodeId) -> bool {
        let node = &self.nodes[id as usize];
        let mut children = (0..node.n_edges as usize).map(|i| self.stats(node, i));
        match node.proven {
            Proven::Unknown => true,
            Proven::Loss => children.any(|c| c.proven == Proven::Win),
            Proven::Win => children.all(|c| c.proven == Proven::Loss),
            Proven::Draw => children.all(|c| c.proven != Proven::Unknown),
        }
    }

    /// The root's proven result for its side to move and the plies to the end of the game
    /// under the play that proved it (see [`Node::plies`]); `None` while unproven or drawn.
    ///
    /// A root move that wins proves the root at once; a root whose every move loses is
    /// proven once each of them is.
    pub fn root_proof(&self) -> Option<(Proven, u16)> {
        let root = &self.nodes[0];
        // The quickest win among the root's moves (the root's own proof kept the first found).
        let quickest =
            self.root_edges().filter(|(_, c)| c.proven == Proven::Win).map(|(_, c)| c.plies).min();
        match (root.proven.flip(), quickest) {
            (Proven::Win, Some(plies)) => Some((Proven::Win, plies.saturating_add(1))),
            (proven @ (Proven::Win | Proven::Loss), _) => Some((proven, root.plies)),
            _ => None,
        }
    }
}
