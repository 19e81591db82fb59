//! The root's selection inputs, kept up to date between walks.
//!
//! Every walk scans all the root's children, and computing each one's score from its node
//! and edge took ~48 instructions. Only the walked child's statistics change between two
//! walks, so the parts of a child's score that do not depend on the parent are stored
//! ([`RootChild`]) and refreshed after every walk and backup through the child. They sit in
//! chunks of eight children (`q`, `p` and `d` arrays), and the scan computes `q + c_sqrt_n *
//! p / d` a chunk at a time, which the compiler turns into SIMD: the same operations on each
//! child as the node-by-node formula, so the same bits. It keeps the chunk with the highest
//! score, then finds the first child with that score in it. The two sums the first-play
//! urgency needs (the visited prior mass and the largest unvisited prior) change only when a
//! child is first visited or proven, and are recomputed then, in child order, rather than in
//! every scan.

use crate::tree::{Node, Proven};

/// Children per chunk (the last chunk is padded).
const LANES: usize = 8;

/// What selection at the root needs from one root child.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RootChild {
    /// Value part of the score: the virtual-loss Q of a visited child, `-1e6 + visits/1000`
    /// for a proven loss, +∞ for a proven win, 0 for a proven draw and −∞ for an unvisited
    /// child (which is scored with the first-play urgency instead).
    pub q: f32,
    /// Prior in the exploration part (0 where the score has none).
    pub p: f32,
    /// Divisor of the exploration part: `1 + visits in tree`.
    pub d: f32,
    /// Prior counted in the visited prior mass (0 if the child does not count).
    pub visited_prior: f32,
    /// Prior of an unvisited child (−∞ for a visited one).
    pub fresh_prior: f32,
}

impl RootChild {
    /// The inputs of a child left out of the search ([`crate::Search::exclude_root_moves`]):
    /// no score and no prior, so it is never picked while another child can be.
    pub const EXCLUDED: RootChild = RootChild {
        q: f32::NEG_INFINITY,
        p: 0.0,
        d: 1.0,
        visited_prior: 0.0,
        fresh_prior: f32::NEG_INFINITY,
    };

    /// The inputs of a child reached by an edge with `prior` (its Q mixed with its minimax
    /// value by `minimax_weight`, [`Node::mixed_q`]).
    #[inline]
    pub fn new(prior: f32, child: &Node, virtual_loss: f32, minimax_weight: f32) -> RootChild {
        let unscored = RootChild {
            q: f32::NEG_INFINITY,
            p: 0.0,
            d: 1.0,
            visited_prior: 0.0,
            fresh_prior: f32::NEG_INFINITY,
        };
        if !child.is_visited() {
            return RootChild { fresh_prior: prior, ..unscored };
        }
        let in_tree = child.in_tree();
        if child.proven == Proven::Unknown {
            let n = in_tree as f32;
            let q = (child.win_loss_sum[0]
                - child.win_loss_sum[1]
                - virtual_loss * child.in_flight as f32)
                / n;
            let q = child.mixed_q(q, minimax_weight);
            return RootChild { q, p: prior, d: 1.0 + n, visited_prior: prior, ..unscored };
        }
        let visited_prior = if in_tree > 0 { prior } else { 0.0 };
        match child.proven {
            Proven::Win => RootChild { q: f32::INFINITY, visited_prior, ..unscored },
            Proven::Loss => {
                RootChild { q: -1e6 + child.visits as f32 * 1e-3, visited_prior, ..unscored }
            }
            _ => RootChild { q: 0.0, p: prior, d: 1.0 + in_tree as f32, visited_prior, ..unscored },
        }
    }
}

/// The stored inputs of all the root's children, in edge order.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct RootInputs {
    /// The children's `q`, `p` and `d`, [`LANES`] children per chunk; the last chunk is
    /// padded with children that never win (q −∞, p 0, d 1).
    chunks: Vec<Chunk>,
    /// The children's `visited_prior` and `fresh_prior`.
    fpu_inputs: Vec<[f32; 2]>,
    /// Sum of `visited_prior` in child order.
    visited_prior: f32,
    /// The first child with the largest `fresh_prior` (if any is above −∞), and that prior.
    fresh: Option<(usize, f32)>,
}

/// The score inputs of [`LANES`] children.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Chunk {
    q: [f32; LANES],
    p: [f32; LANES],
    d: [f32; LANES],
}

impl Chunk {
    const PADDING: Chunk =
        Chunk { q: [f32::NEG_INFINITY; LANES], p: [0.0; LANES], d: [1.0; LANES] };
}

/// The outcome of a scan: which child selection picks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RootPick {
    /// No child can be picked (none has a score or a prior).
    Nothing,
    /// This child (index in edge order).
    Child(usize),
}

impl RootInputs {
    /// Inputs for `children`, in edge order.
    #[cfg(test)]
    pub fn from_children(children: impl IntoIterator<Item = RootChild>) -> RootInputs {
        let mut inputs = RootInputs::default();
        inputs.rebuild(children);
        inputs
    }

    /// Replaces all inputs (the buffers are reused).
    pub fn rebuild(&mut self, children: impl IntoIterator<Item = RootChild>) {
        self.chunks.clear();
        self.fpu_inputs.clear();
        for (k, child) in children.into_iter().enumerate() {
            if k % LANES == 0 {
                self.chunks.push(Chunk::PADDING);
            }
            self.fpu_inputs.push([0.0; 2]);
            self.write(k, child);
        }
        self.sum_fpu_inputs();
    }

    /// Number of children.
    pub fn len(&self) -> usize {
        self.fpu_inputs.len()
    }

    /// Replaces child `k`'s inputs.
    #[inline]
    pub fn set(&mut self, k: usize, child: RootChild) {
        if self.write(k, child) {
            self.sum_fpu_inputs();
        }
    }

    /// Stores child `k`'s inputs; tells whether its first-play-urgency inputs changed.
    #[inline]
    fn write(&mut self, k: usize, child: RootChild) -> bool {
        let chunk = &mut self.chunks[k / LANES];
        let j = k % LANES;
        (chunk.q[j], chunk.p[j], chunk.d[j]) = (child.q, child.p, child.d);
        let fpu = [child.visited_prior, child.fresh_prior];
        let old = std::mem::replace(&mut self.fpu_inputs[k], fpu);
        old.map(f32::to_bits) != fpu.map(f32::to_bits)
    }

    fn sum_fpu_inputs(&mut self) {
        let mut visited_prior = 0.0f32;
        let mut fresh: Option<(usize, f32)> = None;
        for (k, &[visited, fresh_prior]) in self.fpu_inputs.iter().enumerate() {
            visited_prior += visited;
            if fresh_prior > fresh.map_or(f32::NEG_INFINITY, |(_, p)| p) {
                fresh = Some((k, fresh_prior));
            }
        }
        self.visited_prior = visited_prior;
        self.fresh = fresh;
    }

    /// PUCT at the root: the child with the highest score `q + c_sqrt_n * p / d` (the first
    /// one on ties; a proven win at once), unless the first-play urgency `fpu(visited prior
    /// mass) + c_sqrt_n * prior` of the best unvisited child is higher (or equal, when that
    /// child comes first).
    #[inline]
    pub fn select(&self, c_sqrt_n: f32, fpu: impl FnOnce(f32) -> f32) -> RootPick {
        let (best, best_score) = self.best_scored(c_sqrt_n);
        if best_score == f32::INFINITY {
            return RootPick::Child(best);
        }
        let mut best = if best_score == f32::NEG_INFINITY { usize::MAX } else { best };
        if let Some((fresh, prior)) = self.fresh {
            let score = fpu(self.visited_prior) + c_sqrt_n * prior;
            if score > best_score || (score == best_score && fresh < best) {
                best = fresh;
            }
        }
        if best == usize::MAX { RootPick::Nothing } else { RootPick::Child(best) }
    }

    /// The first child with the highest score, and the score (−∞ if none is above it).
    #[inline]
    fn best_scored(&self, c_sqrt_n: f32) -> (usize, f32) {
        let scores = |c: &Chunk| -> [f32; LANES] {
            std::array::from_fn(|j| c.q[j] + c_sqrt_n * c.p[j] / c.d[j])
        };
        // The largest score above −∞ (a NaN never wins), as halves folded onto each other
        // (vector maxima, three steps deep) rather than a chain of eight dependent
        // comparisons: the maximum is exact whatever the order.
        let max = |s: &[f32; LANES]| {
            let wider = |a: f32, b: f32| if b > a { b } else { a };
            let h: [f32; 4] =
                std::array::from_fn(|j| wider(wider(f32::NEG_INFINITY, s[j]), s[j + 4]));
            let q: [f32; 2] = std::array::from_fn(|j| wider(h[j], h[j + 2]));
            wider(q[0], q[1])
        };
        // The chunk with the highest score (the first one on ties)...
        let (mut best_chunk, mut best_score) = (0, f32::NEG_INFINITY);
        for (k, chunk) in self.chunks.iter().enumerate() {
            let chunk_best = max(&scores(chunk));
            // Selects, not a branch (which mispredicted).
            let better = chunk_best > best_score;
            best_chunk = if better { k } else { best_chunk };
            best_score = if better { chunk_best } else { best_score };
        }
        // ...and its first child with that score (the same operations give the same bits).
        let best = self.chunks.get(best_chunk).and_then(|chunk| {
            let lane = scores(chunk).iter().position(|&s| s == best_score)?;
            Some(best_chunk * LANES + lane)
        });
        (best.unwrap_or(usize::MAX), best_score)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scan of the search before the inputs were stored as arrays: one child at a time.
    fn reference(
        children: &[RootChild],
        c_sqrt_n: f32,
        fpu_reduction: f32,
        parent_q: f32,
    ) -> RootPick {
        let mut best = usize::MAX;
        let mut best_score = f32::NEG_INFINITY;
        let mut visited_prior = 0.0f32;
        let mut fresh = usize::MAX;
        let mut fresh_prior = f32::NEG_INFINITY;
        for (k, r) in children.iter().enumerate() {
            let score = r.q + c_sqrt_n * r.p / r.d;
            if score > best_score {
                best_score = score;
                best = k;
            }
            visited_prior += r.visited_prior;
            if r.fresh_prior > fresh_prior {
                fresh_prior = r.fresh_prior;
                fresh = k;
            }
        }
        if best_score == f32::INFINITY {
            return RootPick::Child(best);
        }
        if fresh != usize::MAX {
            let fpu = -parent_q - fpu_reduction * visited_prior.sqrt();
            let score = fpu + c_sqrt_n * fresh_prior;
            if score > best_score || (score == best_score && fresh < best) {
                best = fresh;
            }
        }
        if best == usize::MAX { RootPick::Nothing } else { RootPick::Child(best) }
    }

    #[test]
    fn the_lane_scan_picks_what_the_one_by_one_scan_picks() {
        let mut rng = crate::Rng::new(7);
        let mut checked = 0;
        for round in 0..4000 {
            let n = 1 + rng.below(40);
            let mut children = Vec::new();
            for _ in 0..n {
                let prior = [0.0, 0.5, rng.uniform() as f32, 1.0 / 3.0][rng.below(4)];
                let kind = rng.below(10);
                let mut node = Node::new();
                match kind {
                    0..=2 => {}
                    _ => {
                        node.visits = rng.below(5) as u32;
                        node.in_flight = rng.below(2) as u16;
                        // Few distinct values: ties are common.
                        node.win_loss_sum = [node.visits as f32 * 0.5, rng.below(2) as f32];
                        node.proven = match kind {
                            3 => Proven::Win,
                            4 => Proven::Loss,
                            5 => Proven::Draw,
                            _ => Proven::Unknown,
                        };
                    }
                }
                children.push(RootChild::new(prior, &node, 1.0, 0.0));
            }
            let c_sqrt_n = [0.0, 1.25, 2.5 * (round % 7) as f32][round % 3];
            let parent_q = [-0.0, 0.0, 0.25, -1.0][round % 4];
            let mut inputs = RootInputs::from_children(children.iter().copied());
            // Inputs changed one child at a time end where a rebuild does.
            let k = round % n;
            let mut changed = children[k];
            changed.fresh_prior = f32::NEG_INFINITY;
            changed.visited_prior = 0.25;
            inputs.set(k, changed);
            children[k] = changed;
            assert_eq!(inputs, RootInputs::from_children(children.iter().copied()));
            let picked = inputs.select(c_sqrt_n, |v| -parent_q - 0.25 * v.sqrt());
            assert_eq!(picked, reference(&children, c_sqrt_n, 0.25, parent_q), "round {round}");
            checked += usize::from(picked != RootPick::Nothing);
        }
        assert!(checked > 3000, "{checked}");
    }
}
