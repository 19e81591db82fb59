//! The arena tree, lc0-style: a node's moves are *edges* (move, prior) stored contiguously
//! in one arena ([`Edges`]), and a *node* (the statistics of the position an edge leads to)
//! exists in another `Vec` only once the search walked through its edge. An expansion writes
//! ~30 edges of 4 bytes; only the positions actually visited get a 32-byte node.
//!
//! An edge is its move and its prior side by side, the prior in 16 bits as lc0 keeps it
//! ([`Prior`]: 12 significant bits, ample for a probability a network outputs to a few
//! digits). Priors and moves took 6 bytes an edge in two `f32`/`u16` arrays before; at 4
//! bytes a tree of `atomzero bench selfplay` (800 visits) takes a quarter less memory (mean
//! 122,857 bytes instead of 163,837), and the prior a scan reads and the move it picks share
//! a cache line.
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

/// A prior probability in 16 bits (lc0's `Edge::p_` format): the bits of an `f32` in
/// [0, 2) keep 11 bits of mantissa (rounded to nearest) and a 5-bit exponent, so priors down
/// to 2^-31 keep a relative precision of 2^-12. Decoding is a shift, an or and a move; the
/// codes order as the priors do. Negative priors and NaN store as the smallest code, whose
/// value is 2^-31 (4.7e-10), not zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Prior(u16);

impl Prior {
    /// The exponent bits every stored prior has (values in [2^-31, 2)).
    const FIXED: u32 = 3 << 28;

    /// The nearest prior to `p` (clamped to [2^-31, 2); NaN gives the smallest).
    #[inline]
    pub fn new(p: f32) -> Prior {
        // Adding half of the dropped mantissa bits rounds to nearest; subtracting the fixed
        // exponent bits moves [2^-31, 2) to the codes' range. Without branches, so that a
        // loop of them vectorizes: negative values (sign bit set) clamp to 0 first.
        const ROUNDING: i32 = (1 << 11) - (3 << 28);
        let bits = (p.to_bits() as i32).max(0);
        let code = ((bits + ROUNDING).max(0) >> 12).min(i32::from(u16::MAX));
        Prior(if p.is_nan() { 0 } else { code as u16 })
    }

    /// The prior as an `f32`.
    #[inline]
    pub fn get(self) -> f32 {
        f32::from_bits((u32::from(self.0) << 12) | Prior::FIXED)
    }
}

/// One edge as the arena keeps it: its prior and move side by side (4 bytes), so the
/// selection scan and the move it picks read the same cache line.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct PackedEdge {
    /// The prior.
    pub prior: Prior,
    /// The move.
    pub mv: Move,
}

/// The edge arena: a node's edges are a contiguous range of it (see [`Node::edges`]).
#[derive(Clone, Debug, Default)]
pub struct Edges {
    edges: Vec<PackedEdge>,
}

impl Edges {
    /// Bytes per edge.
    pub const BYTES: usize = std::mem::size_of::<PackedEdge>();

    /// An empty arena with room for `n` edges.
    pub fn with_capacity(n: usize) -> Edges {
        Edges { edges: Vec::with_capacity(n) }
    }

    /// Number of edges.
    #[inline]
    pub fn len(&self) -> usize {
        self.edges.len()
    }

    /// True without edges.
    pub fn is_empty(&self) -> bool {
        self.edges.is_empty()
    }

    /// Edges there is room for without reallocating.
    pub fn capacity(&self) -> usize {
        self.edges.capacity()
    }

    /// Removes all edges (keeping the memory).
    pub fn clear(&mut self) {
        self.edges.clear();
    }

    /// Edge `e`.
    #[inline]
    pub fn get(&self, e: usize) -> Edge {
        let edge = self.edges[e];
        Edge { prior: edge.prior.get(), mv: edge.mv }
    }

    /// The move of edge `e`.
    #[inline]
    pub fn mv(&self, e: usize) -> Move {
        self.edges[e].mv
    }

    /// Edge `e`, by reference (for prefetching).
    #[inline]
    pub fn at(&self, e: usize) -> Option<&PackedEdge> {
        self.edges.get(e)
    }

    /// The edges in `range`, as stored.
    #[inline]
    pub fn packed(&self, range: std::ops::Range<usize>) -> &[PackedEdge] {
        &self.edges[range]
    }

    /// Sets the prior of edge `e` (rounded to a [`Prior`]).
    #[inline]
    pub fn set_prior(&mut self, e: usize, prior: f32) {
        self.edges[e].prior = Prior::new(prior);
    }

    /// The edges in `range`, in order.
    pub fn iter(
        &self,
        range: std::ops::Range<usize>,
    ) -> impl DoubleEndedIterator<Item = Edge> + ExactSizeIterator + Clone + '_ {
        self.edges[range].iter().map(|e| Edge { prior: e.prior.get(), mv: e.mv })
    }

    /// Appends an edge.
    #[inline]
    pub fn push(&mut self, edge: PackedEdge) {
        self.edges.push(edge);
    }

    /// Appends an edge per move of `moves` with the priors `priors` yields (one per move).
    #[inline]
    pub fn extend(&mut self, moves: &[Move], priors: impl ExactSizeIterator<Item = f32>) {
        debug_assert_eq!(moves.len(), priors.len());
        self.edges.extend(
            moves.iter().zip(priors).map(|(&mv, p)| PackedEdge { prior: Prior::new(p), mv }),
        );
    }

    /// Appends an edge per move of `moves` with its prior from `priors` (as long) times
    /// `scale`, or `fallback` where that is not finite. One branch-free loop over two slices
    /// (it vectorizes): every expansion runs it over ~30 moves.
    #[inline]
    pub fn extend_scaled(&mut self, moves: &[Move], priors: &[f32], scale: f32, fallback: f32) {
        debug_assert_eq!(moves.len(), priors.len());
        self.edges.extend(moves.iter().zip(priors).map(|(&mv, &p)| {
            let p = p * scale;
            PackedEdge { prior: Prior::new(if p.is_finite() { p } else { fallback }), mv }
        }));
    }

    /// Appends copies of `other`'s edges in `range`.
    pub fn extend_from(&mut self, other: &Edges, range: std::ops::Range<usize>) {
        self.edges.extend_from_slice(&other.edges[range]);
    }

    /// Sorts the edges in `range` by descending prior, keeping the order of equal priors.
    ///
    /// Every expansion sorts its ~30 edges (the network's priors come in legal-move order):
    /// as one `u32` per edge, the prior's code inverted above its index, sorted unstably
    /// (distinct keys, so the order is the stable sort's), then the edges gathered by index.
    /// `slice::sort_by_key`'s stable sort of the edges took 1.4–5.8% of the engine's time
    /// (perf, 2026-12-07); integer keys sort in sorting networks.
    pub fn sort_by_prior(&mut self, range: std::ops::Range<usize>) {
        const MOST: usize = atomzero_rules::mv::MAX_MOVES;
        let edges = &mut self.edges[range];
        if edges.len() <= 1 {
            return;
        }
        if edges.len() > MOST {
            edges.sort_by_key(|e| std::cmp::Reverse(e.prior));
            return;
        }
        let mut keys = [0u32; MOST];
        let keys = &mut keys[..edges.len()];
        for (i, (key, edge)) in keys.iter_mut().zip(edges.iter()).enumerate() {
            *key = (u32::from(!edge.prior.0) << 16) | i as u32;
        }
        keys.sort_unstable();
        let mut copy = [edges[0]; MOST];
        copy[..edges.len()].copy_from_slice(edges);
        for (edge, &key) in edges.iter_mut().zip(keys.iter()) {
            *edge = copy[(key & 0xffff) as usize];
        }
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
    /// Visits gathered but not yet applied (virtual loss); at most the leaves of one gather,
    /// which `Search::gather` keeps below 2^16.
    pub in_flight: u16,
    /// For a proven node, the plies from its position to the end of the game under the
    /// play that proved it (0 for a finished game; a proven win counts the quickest end found,
    /// a proven loss the longest resistance). While unproven the same 16 bits hold the node's
    /// implicit minimax value ([`Node::minimax`]; 0 unless the search uses one), so that the
    /// node stays 32 bytes: a proven node's value is exact and needs no estimate.
    pub plies: u16,
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
            plies: 0,
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
        self.visits + u32::from(self.in_flight)
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

    /// The implicit minimax value (win − loss, for the player who moved here) of an unproven
    /// node ([`crate::SearchConfig::minimax_weight`]): the network's value of the position
    /// while none of its children has a completed visit, then the minimax of its children's.
    /// Kept in [`Node::plies`]'s bits in steps of 1/32767; meaningless for a proven node.
    #[inline]
    pub fn minimax(&self) -> f32 {
        f32::from(self.plies as i16) / 32767.0
    }

    /// Stores `value` (clamped to [−1, 1]) as the implicit minimax value; a proven node's
    /// [`Node::plies`] is left alone.
    #[inline]
    pub fn set_minimax(&mut self, value: f32) {
        if self.proven == Proven::Unknown {
            self.plies = ((value.clamp(-1.0, 1.0) * 32767.0).round() as i16) as u16;
        }
    }

    /// The mean of the squared values (win − loss)² its completed visits backed up
    /// ([`crate::SearchConfig::cpuct_stdev_scale`]), kept in [`Node::plies`]'s bits in steps
    /// of 1/65535; meaningless for a proven node or one whose bits hold a minimax value.
    #[inline]
    pub fn value_sq_mean(&self) -> f32 {
        f32::from(self.plies) / 65535.0
    }

    /// Adds the square `sq` of the value of the visit just counted in [`Node::visits`] to
    /// [`Node::value_sq_mean`] (a proven node's [`Node::plies`] is left alone). The running
    /// mean is rounded to its 16 bits with a dither drawn from the visit count, so that at
    /// tens of thousands of visits, where one visit moves the mean by less than a step, the
    /// updates still move it by the right amount on average instead of rounding away.
    #[inline]
    pub fn add_value_sq(&mut self, sq: f32) {
        if self.proven != Proven::Unknown || self.visits == 0 {
            return;
        }
        let n = self.visits as f32;
        let mean = self.value_sq_mean();
        let mean = mean + (sq - mean) / n;
        // Weyl sequence in [0, 1): the fractional part of n times the golden ratio's.
        let dither = (self.visits.wrapping_mul(0x9E37_79B9) >> 8) as f32 / (1u32 << 24) as f32;
        self.plies = (mean.clamp(0.0, 1.0) * 65535.0 + dither).floor().min(65535.0) as u16;
    }

    /// The standard deviation of the values its completed visits backed up, estimated as
    /// KataGo does for its dynamic exploration: the sample variance around [`Node::q`] with
    /// `prior_weight` visits' worth of the variance `prior²` mixed in; `prior` itself at one
    /// visit or none.
    #[inline]
    pub fn value_stdev(&self, prior: f32, prior_weight: f32) -> f32 {
        if self.visits <= 1 {
            return prior;
        }
        let n = self.visits as f32;
        let q = self.q();
        let q_sq = q * q;
        let mean_sq = self.value_sq_mean().max(q_sq);
        (((q_sq + prior * prior) * prior_weight + mean_sq * n) / (prior_weight + n - 1.0) - q_sq)
            .max(0.0)
            .sqrt()
    }

    /// The value selection scores a visited, unproven child by: `q` (its virtual-loss Q)
    /// moved towards its minimax value by `weight`; `q` itself at weight 0 or without a
    /// completed visit.
    #[inline]
    pub fn mixed_q(&self, q: f32, weight: f32) -> f32 {
        if weight > 0.0 && self.visits > 0 { q + weight * (self.minimax() - q) } else { q }
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
        assert_eq!(Edges::BYTES, 4);
        assert_eq!(std::mem::size_of::<Node>(), 32);
        assert_eq!(std::mem::align_of::<Node>(), 32);
    }

    #[test]
    fn the_stored_mean_square_follows_the_values_to_many_thousands_of_visits() {
        // Values cycling through a fixed set for 40,000 visits, then ±0.8 for 20,000: late on,
        // one visit moves the mean square by less than half a step of its 16 bits, which plain
        // rounding would lose (the mean would stay near the cycle's 0.383 instead of reaching
        // 0.469); the dither keeps it. Its rounding errors add up like a random walk,
        // about sqrt(n / 36) steps of 1/65535 (~6e-4 at 60,000 visits).
        let values = [0.9f32, -0.3, 0.5, 0.0, -1.0, 0.2, 0.7];
        let mut node = Node::new();
        let (mut sum, mut sum_sq) = (0.0f64, 0.0f64);
        for k in 0..60_000 {
            let v = if k < 40_000 {
                values[k % values.len()]
            } else if k % 2 == 0 {
                0.8
            } else {
                -0.8
            };
            node.visits += 1;
            node.win_loss_sum[0] += v.max(0.0);
            node.win_loss_sum[1] += (-v).max(0.0);
            node.add_value_sq(v * v);
            sum += f64::from(v);
            sum_sq += f64::from(v * v);
            let n = (k + 1) as f64;
            if [0, 1, 9, 999, 29_999, 39_999, 59_999].contains(&k) {
                let mean_sq = sum_sq / n;
                let got = f64::from(node.value_sq_mean());
                assert!((got - mean_sq).abs() < 2e-3, "{k}: {got} vs {mean_sq}");
                // KataGo's estimate with the prior 0.4 at weight 2.
                let q = sum / n;
                let want = if k == 0 {
                    0.4
                } else {
                    (((q * q + 0.16) * 2.0 + mean_sq * n) / (n + 1.0) - q * q).max(0.0).sqrt()
                };
                let got = f64::from(node.value_stdev(0.4, 2.0));
                assert!((got - want).abs() < 2e-3, "{k}: {got} vs {want}");
            }
        }
        // A proven node's plies are not touched.
        node.proven = Proven::Win;
        node.plies = 3;
        node.visits += 1;
        node.add_value_sq(1.0);
        assert_eq!(node.plies, 3);
    }

    #[test]
    fn priors_keep_twelve_bits_of_precision_and_their_order() {
        // Powers of two in range are exact, and so are the bounds of the format.
        for p in [1.0f32, 0.5, 0.25, 1.0 / 1024.0, 2f32.powi(-31)] {
            assert_eq!(Prior::new(p).get(), p, "{p}");
        }
        // Anything else within half a step (2^-12 relative) of the value.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut previous = (0.0f32, Prior::new(0.0));
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let p = (x >> 40) as f32 / (1u64 << 24) as f32 * 2f32.powi(-((x & 15) as i32));
            let stored = Prior::new(p);
            if p >= 2f32.powi(-31) {
                let error = (stored.get() - p).abs() / p;
                assert!(error <= 2f32.powi(-12), "{p} -> {} ({error})", stored.get());
            }
            // Codes order as the values do (ties allowed).
            assert_eq!(stored.cmp(&previous.1).is_lt(), stored.get() < previous.1.get());
            if p > previous.0 {
                assert!(stored >= previous.1, "{p} vs {}", previous.0);
            }
            previous = (p, stored);
        }
        // Out of range: clamped, never wrapped.
        let smallest = Prior::new(2f32.powi(-31));
        for p in [0.0, -0.0, -0.5, -1e30, f32::NEG_INFINITY, f32::NAN, 1e-20] {
            assert_eq!(Prior::new(p), smallest, "{p}");
        }
        let largest = Prior::new(f32::INFINITY);
        assert_eq!(Prior::new(9.0), largest);
        assert!(largest.get() < 2.0 && largest.get() > 1.999);
        assert!(Prior::new(1.0) < largest);
    }

    #[test]
    fn sorting_edges_by_prior_is_stable_and_keeps_moves_with_their_priors() {
        use atomzero_rules::Position;
        let moves = Position::default().legal_moves();
        let mut edges = Edges::default();
        edges.push(PackedEdge { prior: Prior::new(1.5), mv: moves[0] });
        // 0.25 and 0.2500001 round to the same prior: a tie, as 0.0 and -0.0 are.
        let priors = [0.25, 0.5, 0.250_000_1, 0.0, -0.0, 0.5, 1.0];
        edges.extend(&moves[1..8], priors.iter().copied());
        edges.sort_by_prior(1..8);
        let sorted: Vec<(f32, Move)> = edges.iter(0..8).map(|e| (e.prior, e.mv)).collect();
        let m = |i: usize| moves[i];
        let zero = Prior::new(0.0).get();
        let expected: [(f32, Move); 8] = [
            (1.5, m(0)),
            (1.0, m(7)),
            (0.5, m(2)),
            (0.5, m(6)),
            (0.25, m(1)),
            (0.25, m(3)),
            (zero, m(4)),
            (zero, m(5)),
        ];
        assert_eq!(sorted, expected);
    }

    #[test]
    fn sorting_many_edges_equals_the_stable_sort() {
        use atomzero_rules::Position;
        let moves = Position::default().legal_moves();
        // 300 edges (the key sort) and 500 (more than a move list holds: the fallback), with
        // few distinct priors so that ties are common; a seeded LCG picks them.
        for n in [2, 31, 300, 500] {
            let mut state = 7u64 + n as u64;
            let mut edges = Edges::default();
            for i in 0..n {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let p = ((state >> 33) % 9) as f32 / 8.0;
                edges.push(PackedEdge { prior: Prior::new(p), mv: moves[i % moves.len()] });
            }
            let mut want: Vec<(u16, usize)> =
                edges.iter(0..n).enumerate().map(|(i, e)| (Prior::new(e.prior).0, i)).collect();
            want.sort_by_key(|&(p, _)| std::cmp::Reverse(p));
            let before: Vec<Move> = edges.iter(0..n).map(|e| e.mv).collect();
            edges.sort_by_prior(0..n);
            let got: Vec<(u16, Move)> =
                edges.iter(0..n).map(|e| (Prior::new(e.prior).0, e.mv)).collect();
            let want: Vec<(u16, Move)> = want.iter().map(|&(p, i)| (p, before[i])).collect();
            assert_eq!(got, want, "{n} edges");
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
