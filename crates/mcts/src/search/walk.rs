//! One walk down the tree ([`Search::gather`]'s step): selection at every expanded node,
//! the node of a move created on its first walk (children side by side, a block that doubles
//! when full), and at the end a new leaf with its history and repetitions, or an exact result
//! (a terminal position, a draw by rule, a forced line of [`crate::tactics`], a win at once
//! with `instant_wins`) backed up and proven at once.

use super::ab_priors::AB_TABLE_BITS;
use super::{Leaf, Scratch, Search, Walk};
use crate::alphabeta::AlphaBeta;
use crate::tactics;
use crate::tree::{Expansion, NO_NODE, Node, NodeId, Proven};
use atomzero_rules::{MoveList, Outcome, Position};

/// Nodes of a leaf's capture search ([`crate::SearchConfig::quiescence_weight`]).
const QUIESCENCE_NODES: u64 = 256;

impl Search {
    /// One walk down the tree into `leaf`: a new leaf, or what the walk found instead.
    /// `waiting` are the leaves gathered before (their paths follow nodes that move).
    pub(super) fn walk(&mut self, leaf: &mut Leaf, waiting: &mut [Leaf]) -> Walk {
        let mut scratch = self.scratch.take().unwrap_or_default();
        let Scratch { hashes, positions } = &mut *scratch;
        hashes.clear();
        positions.clear();
        let mut path = std::mem::take(&mut leaf.path);
        path.clear();
        let walk = self.walk_with(hashes, positions, &mut path, leaf, waiting);
        leaf.path = path;
        self.scratch = Some(scratch);
        walk
    }

    /// Walks from the root along `path` (empty on entry); on [`Walk::Leaf`] fills `leaf`'s
    /// node, position, history, repetitions and moves.
    pub(super) fn walk_with(
        &mut self,
        path_hashes: &mut Vec<u64>,
        path_positions: &mut Vec<Position>,
        path: &mut Vec<NodeId>,
        leaf: &mut Leaf,
        waiting: &mut [Leaf],
    ) -> Walk {
        path.push(0);
        let mut pos = self.root_position;
        let mut id: NodeId = 0;
        loop {
            let node = &self.nodes[id as usize];
            if id != 0 && node.proven != Proven::Unknown {
                let wdl = node.proven.wdl().unwrap_or([0.0, 1.0, 0.0]);
                self.backup(path, wdl, false);
                return Walk::Exact;
            }
            match node.expansion {
                Expansion::Pending => return Walk::Collision,
                // Non-root terminal nodes are proven and returned above.
                Expansion::Terminal => return Walk::Nothing,
                Expansion::Unexpanded => {
                    // Generated straight into the leaf (no copy).
                    pos.legal_moves_into(&mut leaf.moves);
                    let repetitions = self.repetitions(&pos, path_hashes);
                    if let Some(proven) = self.terminal(&pos, &leaf.moves, repetitions, id == 0) {
                        let node = &mut self.nodes[id as usize];
                        node.expansion = Expansion::Terminal;
                        node.proven = proven;
                        node.plies = 0;
                        if id == 0 {
                            return Walk::Nothing;
                        }
                        self.backup(path, proven.wdl().unwrap_or([0.0, 1.0, 0.0]), false);
                        self.propagate_proof(path);
                        return Walk::Exact;
                    }
                    if id != 0
                        && self.config.instant_wins
                        && pos.winning_move(&leaf.moves).is_some()
                    {
                        // The side to move wins at once: lost for the player who moved here.
                        // (Marked terminal for the search; `advance` searches such a root.)
                        self.nodes[id as usize].expansion = Expansion::Terminal;
                        self.prove_last(path, Proven::Loss, 1);
                        return Walk::Exact;
                    }
                    if id != 0
                        && let Some((proven, plies)) =
                            self.leaf_tactics(&pos, &leaf.moves, path_hashes)
                    {
                        self.nodes[id as usize].expansion = Expansion::Terminal;
                        self.prove_last(path, proven, plies);
                        return Walk::Exact;
                    }
                    self.max_depth = self.max_depth.max(path.len() - 1);
                    leaf.correction = self.quiescence_correction(&pos);
                    self.leaf_history(path_positions, &mut leaf.history);
                    leaf.node = id;
                    leaf.position = pos;
                    leaf.repetitions = repetitions;
                    return Walk::Leaf;
                }
                Expansion::Expanded => {
                    if node.n_edges == 0 {
                        return Walk::Nothing;
                    }
                    if let Some(budget) = self.ab_check_budget(id, path.len() - 1)
                        && let Some((proven, plies)) = self.ab_check(id, &pos, path_hashes, budget)
                    {
                        // Proved by the check (never the root): exact from now on.
                        self.prove_last(path, proven, plies);
                        return Walk::Exact;
                    }
                    let e = if id == 0 && self.config.gumbel.is_some() {
                        self.select_root_gumbel()
                    } else {
                        self.select_edge(id)
                    } as usize;
                    let node = &self.nodes[id as usize];
                    let i = e - node.first_edge as usize;
                    let mv = self.edges.mv(e);
                    let child = match node.child(i) {
                        // First walk through this move: its node is created now.
                        NO_NODE => self.add_child(id, waiting),
                        child => child,
                    };
                    // The next scan reads the child's edges and children: start loading them
                    // while the move is played (with 64 trees they are rarely in cache).
                    self.prefetch_below(child);
                    if self.config.history > 0 {
                        path_positions.push(pos);
                    }
                    path_hashes.push(pos.hash());
                    match self.root_positions.get(i) {
                        Some(after) if id == 0 => pos = *after,
                        _ => pos.play_unchecked(mv),
                    }
                    path.push(child);
                    id = child;
                }
            }
        }
    }

    /// Earlier positions for a leaf into `out`: the path (most recent first), then the game.
    pub(super) fn leaf_history(&self, path_positions: &[Position], out: &mut Vec<Position>) {
        out.clear();
        if self.config.history == 0 {
            return;
        }
        out.extend(
            path_positions
                .iter()
                .rev()
                .chain(self.game_positions.iter().rev())
                .take(self.config.history)
                .copied(),
        );
    }

    /// Earlier occurrences of `pos` since the last irreversible move (game and path).
    ///
    /// Only every other earlier position has the same side to move, and the hash includes the
    /// side to move, so the others are skipped: counted back from two plies ago, in steps of
    /// two, while within the half-move clock (the path's positions first, then the game's).
    pub(super) fn repetitions(&self, pos: &Position, path_hashes: &[u64]) -> usize {
        self.repetitions_after(pos, path_hashes, &[])
    }

    /// [`Search::repetitions`] of a position reached by a short `line` from the end of the path
    /// (`line`: the hashes of the positions after the path's, most recent last).
    pub(super) fn repetitions_after(
        &self,
        pos: &Position,
        path_hashes: &[u64],
        line: &[u64],
    ) -> usize {
        let window = pos.halfmoves() as usize;
        let hash = pos.hash();
        let (path, game) = (path_hashes, &self.game_hashes);
        let mut count = 0;
        let mut back = 2;
        while back <= window {
            let earlier = if back <= line.len() {
                line[line.len() - back]
            } else if back - line.len() <= path.len() {
                path[path.len() - (back - line.len())]
            } else {
                match game.len().checked_sub(back - line.len() - path.len()) {
                    Some(i) => game[i],
                    None => break,
                }
            };
            count += usize::from(earlier == hash);
            back += 2;
        }
        count
    }

    /// Whether a position reached by a short `line` below the path is scored as a draw (as
    /// [`Search::terminal`] scores a non-root position with moves).
    pub(super) fn is_drawn_after(&self, pos: &Position, path_hashes: &[u64], line: &[u64]) -> bool {
        pos.is_insufficient_material() || pos.halfmoves() >= 100 || {
            let repetitions = self.repetitions_after(pos, path_hashes, line);
            repetitions >= 2 || (self.config.twofold_draw && repetitions >= 1)
        }
    }

    /// [`crate::SearchConfig::quiescence_weight`]'s correction of a new leaf's value (0 when off,
    /// when no capture pays, or when the capture search runs out of its budget).
    fn quiescence_correction(&mut self, pos: &Position) -> f32 {
        let weight = self.config.quiescence_weight;
        if weight == 0.0 {
            return 0.0;
        }
        let ab = self.alphabeta.get_or_insert_with(|| Box::new(AlphaBeta::new(AB_TABLE_BITS)));
        match ab.quiescence_score(pos, QUIESCENCE_NODES) {
            Some((material, score)) if score != material => {
                let scale = self.config.quiescence_scale.max(1.0);
                weight * ((score as f32 / scale).tanh() - (material as f32 / scale).tanh())
            }
            _ => 0.0,
        }
    }

    /// The short forced lines of [`crate::tactics`] at a new leaf (not the root), per
    /// [`SearchConfig::tactics`]: the leaf's proof for the player who moved into it, and its
    /// plies to the end.
    pub(super) fn leaf_tactics(
        &mut self,
        pos: &Position,
        moves: &MoveList,
        path_hashes: &[u64],
    ) -> Option<(Proven, u16)> {
        if self.config.tactics < 2 {
            return None;
        }
        let mut scratch = self.tactics.take().unwrap_or_default();
        let drawn = |p: &Position, line: &[u64]| self.is_drawn_after(p, path_hashes, line);
        let found = if tactics::loses_in_two(pos, moves, &drawn, &mut scratch) {
            Some((Proven::Win, 2))
        } else if self.config.tactics >= 3
            && tactics::wins_in_three(pos, moves, &drawn, &mut scratch).is_some()
        {
            Some((Proven::Loss, 3))
        } else {
            None
        };
        self.tactics = Some(scratch);
        found
    }

    /// The exact result of a position for the player who moved into it, if the game is over.
    pub(super) fn terminal(
        &self,
        pos: &Position,
        moves: &MoveList,
        repetitions: usize,
        is_root: bool,
    ) -> Option<Proven> {
        // A position the variant's king rules end has no legal moves (`generate` checks
        // them first), so with moves only the draws remain to look at.
        let outcome: Option<Outcome> = if moves.is_empty() {
            pos.outcome()
        } else if is_root {
            // The root is searched even if a draw could be claimed: a move must come out.
            None
        } else if pos.is_insufficient_material()
            || pos.halfmoves() >= 100
            || repetitions >= 2
            || (self.config.twofold_draw && repetitions >= 1)
        {
            Some(Outcome::draw(atomzero_rules::Termination::ThreefoldRepetition))
        } else {
            None
        };
        let outcome = outcome?;
        Some(match outcome.winner {
            None => Proven::Draw,
            Some(w) if w == pos.turn() => Proven::Loss,
            Some(_) => Proven::Win,
        })
    }

    /// Starts loading the first edges (priors and moves) and children of node `id`, which the
    /// next selection scan and the move it picks read. Without branches on the node's state
    /// (they mispredicted): a node without edges or children points at edge 0 or node 0,
    /// which a prefetch may load for nothing.
    #[inline]
    pub(super) fn prefetch_below(&self, id: NodeId) {
        let node = &self.nodes[id as usize];
        let first = node.first_edge as usize;
        if let Some(edge) = self.edges.at(first) {
            prefetch(edge);
        }
        if let Some(child) = self.nodes.get(node.first_child as usize) {
            prefetch(child);
        }
    }

    /// Creates the node of `parent`'s first edge without one, in the reserved slots after
    /// its other children, and returns it. When the slots are full, the children move to a
    /// block twice as large at the end of the arena, and the paths of the `waiting` leaves
    /// follow them.
    pub(super) fn add_child(&mut self, parent: NodeId, waiting: &mut [Leaf]) -> NodeId {
        let p = &self.nodes[parent as usize];
        let (first, n, capacity) = (p.first_child, p.n_children, p.child_capacity);
        debug_assert!(n < p.n_edges);
        if n == capacity {
            let new_capacity = (capacity * 2).clamp(1, p.n_edges);
            let new_first = self.nodes.len() as NodeId;
            let old = first as usize..(first + NodeId::from(n)) as usize;
            self.nodes.extend_from_within(old.clone());
            self.nodes.resize(new_first as usize + new_capacity as usize, Node::new());
            if n > 0 {
                let moved = |id: &mut NodeId| {
                    if old.contains(&(*id as usize)) {
                        *id = *id - first + new_first;
                    }
                };
                for leaf in waiting.iter_mut() {
                    leaf.path.iter_mut().for_each(moved);
                    moved(&mut leaf.node);
                }
            }
            let p = &mut self.nodes[parent as usize];
            p.first_child = new_first;
            p.child_capacity = new_capacity;
        }
        let p = &mut self.nodes[parent as usize];
        p.n_children += 1;
        p.first_child + NodeId::from(n)
    }
}

/// Asks the CPU to load the cache line holding `x` without waiting for it.
#[inline(always)]
fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint: it neither faults nor changes memory, and `x` is a valid
    // reference anyway. SSE is part of x86_64's baseline.
    #[allow(unsafe_code)]
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>((x as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}
