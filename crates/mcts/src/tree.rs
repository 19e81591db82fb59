//! The arena tree, lc0-style: a node's moves are *edges* (move, prior) stored contiguously
//! in one `Vec`, and a *node* (the statistics of the position an edge leads to) exists in
//! another `Vec` only once the search walked through its edge. An expansion writes ~30 edges
//! of 8 bytes; only the positions actually visited get a 32-byte node.
//!
//! A node's edges are ordered: the ones whose child was visited first, then the others in
//! descending order of prior, so selection below the root can stop at the first unvisited
//! edge (see `Search::select_edge`). A node's children are therefore its first
//! `n_children` edges', and they sit side by side in the node arena, `first_child +
//! i` for edge `i`, so a selection scan reads its children's statistics from a few
//! contiguous cache lines (scattered nodes cost one cache miss per child with 64 trees per
//! thread, the largest share of the tree work). Room for `child_capacity` children is
//! reserved; when it is full, the children move to a block twice as large at the end of the
//! arena (the old block is left unused until `Search::advance` compacts the tree). The
//! root's children all get nodes when it is expanded: every walk scans them all.
//!
//! A node's statistics (`win_loss_sum`, `proven`) are from the point of view of the player
//! who made the move of the edge leading to it.

use atomzero_rules::Move;

/// Index of a node in the node arena. The root is node 0, which is nobody's child, so
/// [`NO_NODE`] (0) can stand for "no child".
pub type NodeId = u32;

/// Index of an edge in the edge arena.
pub type EdgeId = u32;

/// The child of an edge never walked through.
pub const NO_NODE: NodeId = 0;

/// A game-theoretic value known for certain, from the point of view of the player who made
/// the node's move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proven {
    /// Not known.
    Unknown,
    /// The move wins.
    Win,
    /// The move draws.
    Draw,
    /// The move loses.
    Loss,
}

impl Proven {
    /// The same result seen by the other player.
    #[inline]
    pub fn flip(self) -> Proven {
        match self {
            Proven::Win => Proven::Loss,
            Proven::Loss => Proven::Win,
            other => other,
        }
    }

    /// The exact WDL of a proven result.
    pub fn wdl(self) -> Option<[f32; 3]> {
        match self {
            Proven::Win => Some([1.0, 0.0, 0.0]),
            Proven::Draw => Some([0.0, 1.0, 0.0]),
            Proven::Loss => Some([0.0, 0.0, 1.0]),
            Proven::Unknown => None,
        }
    }
}

/// Expansion state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expansion {
    /// Not evaluated yet.
    Unexpanded,
    /// Sent to the evaluator, waiting for `apply`.
    Pending,
    /// Has edges (or is terminal).
    Expanded,
    /// The game is over in this position.
    Terminal,
}

/// A legal move of an expanded node (its child, if any, is found through the node: see
/// [`Node::child`]).
#[derive(Clone, Copy, Debug)]
pub struct Edge {
    /// Prior probability of the move.
    pub prior: f32,
    /// The move.
    pub mv: Move,
}

impl Edge {
    /// An edge.
    #[inline]
    pub fn new(mv: Move, prior: f32) -> Edge {
        Edge { prior, mv }
    }
}

/// The statistics of one position of the tree.
#[derive(Clone, Debug)]
pub struct Node {
    /// Completed visits.
    pub visits: u32,
    /// Visits gathered but not yet applied (virtual loss).
    pub in_flight: u32,
    /// Sums of the win and loss probabilities of all completed visits, for the player who
    /// moved into this position (each visit adds a WDL summing to 1, so the draw sum is
    /// `visits` minus both).
    pub win_loss_sum: [f32; 2],
    /// First edge in the edge arena (valid if `n_edges > 0`).
    pub first_edge: EdgeId,
    /// First child in the node arena (valid if `child_capacity > 0`): edge `i`'s child is
    /// `first_child + i` for `i < n_children`.
    pub first_child: NodeId,
    /// Number of edges (legal moves) once expanded.
    pub n_edges: u16,
    /// Number of children: the first `n_children` edges have one.
    pub n_children: u16,
    /// Node slots reserved for children from `first_child` on (at most `n_edges`).
    pub child_capacity: u16,
    /// Expansion state.
    pub expansion: Expansion,
    /// Proven value for the player who moved into this position.
    pub proven: Proven,
}

impl Node {
    /// A node without visits or edges.
    #[inline]
    pub const fn new() -> Node {
        Node {
            visits: 0,
            in_flight: 0,
            win_loss_sum: [0.0; 2],
            first_edge: 0,
            first_child: NO_NODE,
            n_edges: 0,
            n_children: 0,
            child_capacity: 0,
            expansion: Expansion::Unexpanded,
            proven: Proven::Unknown,
        }
    }

    /// Visits completed or in flight.
    #[inline]
    pub fn in_tree(&self) -> u32 {
        self.visits + self.in_flight
    }

    /// Whether selection treats the node as visited (a visit completed or in flight, or a
    /// proven result).
    #[inline]
    pub fn is_visited(&self) -> bool {
        self.in_tree() > 0 || self.proven != Proven::Unknown
    }

    /// Mean value (win − loss) for the player who moved here; 0 without visits.
    #[inline]
    pub fn q(&self) -> f32 {
        if self.visits == 0 {
            return 0.0;
        }
        (self.win_loss_sum[0] - self.win_loss_sum[1]) / self.visits as f32
    }

    /// Mean WDL for the player who moved here.
    pub fn wdl(&self) -> [f32; 3] {
        if self.visits == 0 {
            return [0.0, 1.0, 0.0];
        }
        let n = self.visits as f32;
        let [w, l] = self.win_loss_sum.map(|x| x / n);
        [w, (1.0 - w - l).max(0.0), l]
    }

    /// Range of the edges in the edge arena.
    #[inline]
    pub fn edges(&self) -> std::ops::Range<usize> {
        let first = self.first_edge as usize;
        first..first + self.n_edges as usize
    }

    /// Range of the children in the node arena (those of the first `n_children` edges).
    #[inline]
    pub fn children(&self) -> std::ops::Range<usize> {
        let first = self.first_child as usize;
        first..first + self.n_children as usize
    }

    /// The child of edge `i` (counted from `first_edge`), or [`NO_NODE`] if none.
    #[inline]
    pub fn child(&self, i: usize) -> NodeId {
        if i < self.n_children as usize { self.first_child + i as NodeId } else { NO_NODE }
    }
}

impl Default for Node {
    fn default() -> Node {
        Node::new()
    }
}

/// Flips a WDL to the other player's point of view.
#[inline]
pub fn flip_wdl(wdl: [f32; 3]) -> [f32; 3] {
    [wdl[2], wdl[1], wdl[0]]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_and_nodes_stay_small() {
        assert_eq!(std::mem::size_of::<Edge>(), 8);
        assert_eq!(std::mem::size_of::<Node>(), 32);
    }

    #[test]
    fn mean_wdl_recovers_the_draw_share() {
        let mut node = Node::new();
        node.visits = 4;
        node.win_loss_sum = [1.5, 0.5];
        assert_eq!(node.wdl(), [0.375, 0.5, 0.125]);
        assert_eq!(node.q(), 0.25);
    }
}
