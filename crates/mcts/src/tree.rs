//! The arena tree, lc0-style: a node's moves are *edges* (move, prior) stored contiguously
//! in one arena ([`Edges`]), and a *node* (the statistics of the position an edge leads to)
//! exists in another `Vec` only once the search walked through its edge. An expansion writes
//! ~30 edges of 6 bytes; only the positions actually visited get a 32-byte node.
//!
//! The edge arena keeps priors and moves in two arrays: selection scans read priors only
//! (sixteen per cache line), an expansion copies the leaf's move list as it is, and the
//! priors' order is checked on a plain `f32` slice.
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

/// The edge arena: edge `e` is (`moves[e]`, `priors[e]`). A node's edges are a contiguous
/// range (see [`Node::edges`]).
#[derive(Clone, Debug, Default)]
pub struct Edges {
    priors: Vec<f32>,
    moves: Vec<Move>,
    /// Reused by [`Edges::sort_by_prior`].
    scratch: Vec<Edge>,
}

impl Edges {
    /// Bytes per edge.
    pub const BYTES: usize = std::mem::size_of::<f32>() + std::mem::size_of::<Move>();

    /// An empty arena with room for `n` edges.
    pub fn with_capacity(n: usize) -> Edges {
        Edges { priors: Vec::with_capacity(n), moves: Vec::with_capacity(n), scratch: Vec::new() }
    }

    /// Number of edges.
    #[inline]
    pub fn len(&self) -> usize {
        self.moves.len()
    }

    /// True without edges.
    pub fn is_empty(&self) -> bool {
        self.moves.is_empty()
    }

    /// Edges there is room for without reallocating.
    pub fn capacity(&self) -> usize {
        self.moves.capacity().min(self.priors.capacity())
    }

    /// Removes all edges (keeping the memory).
    pub fn clear(&mut self) {
        self.priors.clear();
        self.moves.clear();
    }

    /// Edge `e`.
    #[inline]
    pub fn get(&self, e: usize) -> Edge {
        Edge { prior: self.priors[e], mv: self.moves[e] }
    }

    /// The move of edge `e`.
    #[inline]
    pub fn mv(&self, e: usize) -> Move {
        self.moves[e]
    }

    /// The prior of edge `e`, by reference (for prefetching).
    #[inline]
    pub fn prior_at(&self, e: usize) -> Option<&f32> {
        self.priors.get(e)
    }

    /// The move of edge `e`, by reference (for prefetching).
    #[inline]
    pub fn move_at(&self, e: usize) -> Option<&Move> {
        self.moves.get(e)
    }

    /// The priors of the edges in `range`.
    #[inline]
    pub fn priors(&self, range: std::ops::Range<usize>) -> &[f32] {
        &self.priors[range]
    }

    /// The priors of the edges in `range`, to change.
    #[inline]
    pub fn priors_mut(&mut self, range: std::ops::Range<usize>) -> &mut [f32] {
        &mut self.priors[range]
    }

    /// The moves of the edges in `range`.
    #[inline]
    pub fn moves(&self, range: std::ops::Range<usize>) -> &[Move] {
        &self.moves[range]
    }

    /// The edges in `range`, in order.
    pub fn iter(
        &self,
        range: std::ops::Range<usize>,
    ) -> impl DoubleEndedIterator<Item = Edge> + ExactSizeIterator + Clone + '_ {
        self.priors[range.clone()]
            .iter()
            .zip(&self.moves[range])
            .map(|(&prior, &mv)| Edge { prior, mv })
    }

    /// Appends an edge.
    #[inline]
    pub fn push(&mut self, edge: Edge) {
        self.priors.push(edge.prior);
        self.moves.push(edge.mv);
    }

    /// Appends an edge per move of `moves` with the priors `priors` yields (one per move).
    #[inline]
    pub fn extend(&mut self, moves: &[Move], priors: impl ExactSizeIterator<Item = f32>) {
        debug_assert_eq!(moves.len(), priors.len());
        self.moves.extend_from_slice(moves);
        self.priors.extend(priors);
    }

    /// Appends copies of `other`'s edges in `range`.
    pub fn extend_from(&mut self, other: &Edges, range: std::ops::Range<usize>) {
        self.priors.extend_from_slice(&other.priors[range.clone()]);
        self.moves.extend_from_slice(&other.moves[range]);
    }

    /// Sorts the edges in `range` by descending prior ([`f32::total_cmp`]), keeping the order
    /// of equal priors.
    pub fn sort_by_prior(&mut self, range: std::ops::Range<usize>) {
        let mut edges = std::mem::take(&mut self.scratch);
        edges.clear();
        edges.extend(self.iter(range.clone()));
        edges.sort_by(|a, b| b.prior.total_cmp(&a.prior));
        for (k, edge) in range.zip(&edges) {
            (self.priors[k], self.moves[k]) = (edge.prior, edge.mv);
        }
        self.scratch = edges;
    }
}

/// The statistics of one position of the tree.
///
/// Aligned to its size, 32 bytes: two nodes per cache line and none across two, whatever
/// alignment the allocator gives the arena (a selection scan reads a node's children side by
/// side; with glibc's 16-byte alignment every other child straddled two lines).
#[derive(Clone, Debug)]
#[repr(align(32))]
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
        assert_eq!(Edges::BYTES, 6);
        assert_eq!(std::mem::size_of::<Node>(), 32);
        assert_eq!(std::mem::align_of::<Node>(), 32);
    }

    #[test]
    fn sorting_edges_by_prior_is_stable_and_keeps_moves_with_their_priors() {
        use atomzero_rules::Position;
        let moves = Position::default().legal_moves();
        let mut edges = Edges::default();
        edges.push(Edge::new(moves[0], 9.0));
        let priors = [0.25, 0.5, 0.25, 0.0, -0.0, 0.5, 1.0];
        edges.extend(&moves[1..8], priors.iter().copied());
        edges.sort_by_prior(1..8);
        let sorted: Vec<(f32, Move)> = edges.iter(0..8).map(|e| (e.prior, e.mv)).collect();
        let m = |i: usize| moves[i];
        let expected: [(f32, Move); 8] = [
            (9.0, m(0)),
            (1.0, m(7)),
            (0.5, m(2)),
            (0.5, m(6)),
            (0.25, m(1)),
            (0.25, m(3)),
            (0.0, m(4)),
            (-0.0, m(5)),
        ];
        assert_eq!(sorted.len(), expected.len());
        for (got, want) in sorted.iter().zip(expected) {
            assert_eq!((got.0.to_bits(), got.1), (want.0.to_bits(), want.1));
        }
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
