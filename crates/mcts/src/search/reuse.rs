//! The root's life: its children's nodes and Dirichlet noise at its expansion, the
//! selection inputs of its children ([`crate::root`]) and the positions after its moves, and
//! tree reuse ([`Search::advance`]: the subtree of the move played becomes the new tree).

use super::Search;
use crate::lcb::RootSample;
use crate::root::RootChild;
use crate::tree::{EdgeId, Edges, Expansion, NO_NODE, Node, NodeId, Proven};
use atomzero_rules::Move;

impl Search {
    /// Creates the (unvisited) nodes of all the root's edges at its expansion, as its block of
    /// children: every walk scans all the root's children.
    pub(super) fn give_root_edges_nodes(&mut self) {
        let root = &self.nodes[0];
        debug_assert_eq!(root.n_children, 0);
        let n = root.n_edges;
        let first = self.nodes.len();
        self.nodes.resize(first + n as usize, Node::new());
        let root = &mut self.nodes[0];
        root.first_child = first as NodeId;
        root.n_children = n;
        root.child_capacity = n;
    }

    pub(super) fn add_root_noise(&mut self) {
        let eps = self.config.dirichlet_epsilon;
        let root = &self.nodes[0];
        if eps <= 0.0 || root.n_edges < 2 {
            return;
        }
        let range = root.edges();
        let noise = self.rng.dirichlet(self.config.dirichlet_alpha as f64, range.len());
        for (e, n) in range.zip(noise) {
            let prior = self.edges.get(e).prior;
            self.edges.set_prior(e, (1.0 - eps) * prior + eps * n);
        }
    }

    /// The root's child reached by `m` ([`NO_NODE`] if none).
    pub(super) fn root_child(&self, m: Move) -> NodeId {
        let root = &self.nodes[0];
        self.edges
            .packed(root.edges())
            .iter()
            .position(|e| e.mv == m)
            .map_or(NO_NODE, |i| root.child(i))
    }

    /// Moves the root to the child reached by `m`, keeping its subtree (tree reuse). Pending
    /// leaves are dropped. Fresh noise is mixed into the new root's priors.
    pub fn advance(&mut self, m: Move) {
        self.n_pending = 0;
        let old_root = self.root_position;
        let (mut nodes, mut edges) = std::mem::take(&mut self.spare);
        nodes.clear();
        edges.clear();
        // The new tree will likely grow as large as this one: room for that now, in fresh
        // arenas if the spare ones are too small (growing them would copy their capacity).
        if nodes.capacity() < self.nodes.capacity() {
            nodes = Vec::with_capacity(self.nodes.capacity());
        }
        if edges.capacity() < self.edges.capacity() {
            edges = Edges::with_capacity(self.edges.capacity());
        }
        // Nodes whose only visit was in flight are dropped with it (their edge loses its child).
        let kept = |id: NodeId| {
            id != NO_NODE && {
                let node = &self.nodes[id as usize];
                node.visits > 0 || node.proven != Proven::Unknown
            }
        };
        let old_root_id = self.root_child(m);
        let mut root = Node::new();
        if kept(old_root_id) {
            root = self.nodes[old_root_id as usize].clone();
        }
        root.in_flight = 0;
        if root.expansion == Expansion::Pending {
            root.expansion = Expansion::Unexpanded;
        }
        nodes.push(root);
        let mut queue = std::collections::VecDeque::new();
        if kept(old_root_id) {
            queue.push_back((old_root_id, 0 as NodeId));
        }
        while let Some((old, new)) = queue.pop_front() {
            let old_node = &self.nodes[old as usize];
            let first_child = nodes.len();
            let n = &mut nodes[new as usize];
            n.first_edge = edges.len() as EdgeId;
            n.first_child = first_child as NodeId;
            // Dropping the in-flight visits can leave an edge unvisited between visited ones:
            // the visited ones go first (each group keeps its order) so that they stay a
            // prefix, as `select_edge` requires. Their nodes are copied side by side.
            let is_kept = |i: usize| kept(old_node.child(i));
            let mut n_kept = 0;
            for i in (0..old_node.n_children as usize).filter(|&i| is_kept(i)) {
                let old_child = old_node.child(i);
                let mut child = self.nodes[old_child as usize].clone();
                child.in_flight = 0;
                (child.first_child, child.n_children, child.child_capacity) = (NO_NODE, 0, 0);
                queue.push_back((old_child, nodes.len() as NodeId));
                nodes.push(child);
                n_kept += 1;
            }
            if (0..n_kept).all(is_kept) {
                // The common case: the kept edges are already the first ones.
                edges.extend_from(&self.edges, old_node.edges());
            } else {
                // Copied as stored (no decoding and encoding of the priors).
                let old_edges = self.edges.packed(old_node.edges()).iter().enumerate();
                for (_, &edge) in old_edges.clone().filter(|&(i, _)| is_kept(i)) {
                    edges.push(edge);
                }
                for (_, &edge) in old_edges.filter(|&(i, _)| !is_kept(i)) {
                    edges.push(edge);
                }
            }
            if new == 0 {
                // The root's edges all have nodes (see `give_root_edges_nodes`).
                nodes.resize(first_child + old_node.n_edges as usize, Node::new());
            }
            let n_children = (nodes.len() - first_child) as u16;
            let n = &mut nodes[new as usize];
            (n.n_children, n.child_capacity) = (n_children, n_children);
        }
        self.spare =
            (std::mem::replace(&mut self.nodes, nodes), std::mem::replace(&mut self.edges, edges));
        self.game_hashes.push(old_root.hash());
        self.game_positions.push(old_root);
        if self.game_positions.len() > self.config.history {
            self.game_positions.remove(0);
        }
        self.root_position.play_unchecked(m);
        self.root_excluded.clear();
        self.ab_levels_done.clear();
        self.max_depth = 0;
        // A terminal-for-the-search root (e.g. a two-fold repetition) must be searched anyway.
        if self.nodes[0].expansion == Expansion::Terminal
            && !self.root_position.legal_moves().is_empty()
        {
            self.nodes[0] = Node::new();
        }
        // A root its alpha-beta check proved (`ab_prior_proofs`) has no proven child to
        // play: it is searched again, and proves itself from its children or not at all.
        if self.nodes[0].expansion == Expansion::Expanded && !self.proof_rests_on_children(0) {
            let root = &mut self.nodes[0];
            root.proven = Proven::Unknown;
            root.plies = 0;
        }
        // A new search begins: `ab_prior_playouts` counts its playouts from here.
        self.ab_search_start = self.nodes[0].in_tree();
        if self.nodes[0].expansion == Expansion::Expanded {
            self.add_root_noise();
        }
        self.begin_gumbel_search(None);
        self.rebuild_root_children();
    }

    /// Recomputes the selection inputs of all the root's children.
    pub(super) fn rebuild_root_children(&mut self) {
        let mut inputs = std::mem::take(&mut self.root_children);
        let (virtual_loss, minimax_weight) = (self.config.virtual_loss, self.config.minimax_weight);
        let expanded = self.nodes[0].expansion == Expansion::Expanded;
        let mut excluded = std::mem::take(&mut self.excluded);
        excluded.clear();
        if expanded {
            excluded.extend(self.root_edges().map(|(e, _)| self.root_excluded.contains(&e.mv)));
        }
        inputs.rebuild(self.root_edges().filter(|_| expanded).zip(&excluded).map(
            |((e, c), &out)| {
                if out {
                    RootChild::EXCLUDED
                } else {
                    RootChild::new(e.prior, c, virtual_loss, minimax_weight)
                }
            },
        ));
        self.excluded = excluded;
        self.root_children = inputs;
        self.root_samples.clear();
        if self.config.lcb_stdevs > 0.0 && expanded {
            self.root_samples.resize(self.nodes[0].n_edges as usize, RootSample::default());
        }
        let mut positions = std::mem::take(&mut self.root_positions);
        positions.clear();
        if expanded {
            let root = &self.nodes[0];
            positions.extend(self.edges.iter(root.edges()).map(|e| {
                let mut pos = self.root_position;
                pos.play_unchecked(e.mv);
                pos
            }));
        }
        self.root_positions = positions;
    }

    /// Recomputes the selection inputs of root child `id` (nothing for another node).
    #[inline]
    pub(super) fn refresh_root_child(&mut self, id: NodeId) {
        let root = &self.nodes[0];
        let k = id.wrapping_sub(root.first_child) as usize;
        if k < self.root_children.len() {
            let edge = self.edges.get(root.first_edge as usize + k);
            let inputs = if self.excluded.get(k).copied().unwrap_or(false) {
                RootChild::EXCLUDED
            } else {
                let config = &self.config;
                RootChild::new(
                    edge.prior,
                    &self.nodes[id as usize],
                    config.virtual_loss,
                    config.minimax_weight,
                )
            };
            self.root_children.set(k, inputs);
        }
    }
}
