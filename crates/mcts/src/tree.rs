//! The arena tree: nodes in one `Vec`, children of a node stored contiguously: the visited
//! ones first, then the others in descending order of prior (so selection below the root can
//! stop at the first unvisited child; see `Search::select_child`).
//!
//! A node stands for the position reached by its move; its statistics (`win_loss_sum`,
//! `proven`) are from the point of view of the player who made that move. The root's move is
//! unused. A node is 32 bytes: two to a cache line.

use atomzero_rules::{Move, MoveKind, Square};

/// Index of a node in the arena.
pub type NodeId = u32;

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
    /// Has children (or is terminal).
    Expanded,
    /// The game is over in this position.
    Terminal,
}

/// One node.
#[derive(Clone, Debug)]
pub struct Node {
    /// The move that leads here.
    pub mv: Move,
    /// Prior probability of that move.
    pub prior: f32,
    /// Completed visits.
    pub visits: u32,
    /// Visits gathered but not yet applied (virtual loss).
    pub in_flight: u32,
    /// Sums of the win and loss probabilities of all completed visits, for the player who
    /// made `mv` (each visit adds a WDL summing to 1, so the draw sum is `visits` minus both).
    pub win_loss_sum: [f32; 2],
    /// First child in the arena (valid if `n_children > 0`).
    pub first_child: NodeId,
    /// Number of children.
    pub n_children: u16,
    /// Expansion state.
    pub expansion: Expansion,
    /// Proven value for the player who made `mv`.
    pub proven: Proven,
}

impl Node {
    /// A fresh node for `mv` with prior `prior`.
    pub fn new(mv: Move, prior: f32) -> Node {
        Node {
            mv,
            prior,
            visits: 0,
            in_flight: 0,
            win_loss_sum: [0.0; 2],
            first_child: 0,
            n_children: 0,
            expansion: Expansion::Unexpanded,
            proven: Proven::Unknown,
        }
    }

    /// The root placeholder.
    pub fn root() -> Node {
        Node::new(Move::new(Square::A1, Square::A1, MoveKind::Normal), 1.0)
    }

    /// Mean value (win − loss) for the player who made `mv`; 0 without visits.
    pub fn q(&self) -> f32 {
        if self.visits == 0 {
            return 0.0;
        }
        (self.win_loss_sum[0] - self.win_loss_sum[1]) / self.visits as f32
    }

    /// Mean WDL for the player who made `mv`.
    pub fn wdl(&self) -> [f32; 3] {
        if self.visits == 0 {
            return [0.0, 1.0, 0.0];
        }
        let n = self.visits as f32;
        let [w, l] = self.win_loss_sum.map(|x| x / n);
        [w, (1.0 - w - l).max(0.0), l]
    }

    /// Range of the children in the arena.
    pub fn children(&self) -> std::ops::Range<usize> {
        let first = self.first_child as usize;
        first..first + self.n_children as usize
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
    fn a_node_is_half_a_cache_line() {
        assert_eq!(std::mem::size_of::<Node>(), 32);
    }

    #[test]
    fn mean_wdl_recovers_the_draw_share() {
        let mut node = Node::root();
        node.visits = 4;
        node.win_loss_sum = [1.5, 0.5];
        assert_eq!(node.wdl(), [0.375, 0.5, 0.125]);
        assert_eq!(node.q(), 0.25);
    }
}
