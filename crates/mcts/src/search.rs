//! PUCT search with a gather/apply split.
//!
//! [`Search::gather`] walks down the tree (PUCT with virtual loss) and collects leaves to
//! evaluate; [`Search::apply`] expands them with the evaluations and backs the values up.
//! One thread can drive many searches and evaluate all their leaves in one batch. Terminal
//! positions are scored exactly and proven results propagate up (MCTS-solver), so the search
//! never walks into a forced king explosion once it has seen it.

use crate::config::SearchConfig;
use crate::evaluator::{EvalRequest, Evaluation, Evaluator};
use crate::gumbel::{self, ActionStats};
use crate::lcb::{self, RootSample};
use crate::rng::Rng;
use crate::root::{RootChild, RootInputs, RootPick};
use crate::tactics;
use crate::tree::{Edge, EdgeId, Edges, Expansion, NO_NODE, Node, NodeId, Proven, flip_wdl};
use atomzero_rules::{Game, Move, MoveList, Outcome, Position};

/// A position waiting for its evaluation.
#[derive(Clone, Debug)]
pub struct Leaf {
    /// The node to expand.
    pub node: NodeId,
    /// Its position.
    pub position: Position,
    /// Earlier positions, most recent first (at most `config.history`).
    pub history: Vec<Position>,
    /// How often the position occurred before (game and search path).
    pub repetitions: usize,
    /// Its legal moves.
    pub moves: MoveList,
    path: Vec<NodeId>,
}

impl Leaf {
    /// An unused leaf whose buffers `walk` fills.
    fn empty(position: Position) -> Leaf {
        Leaf {
            node: 0,
            position,
            history: Vec::new(),
            repetitions: 0,
            moves: MoveList::new(),
            path: Vec::with_capacity(16),
        }
    }

    /// The evaluator's view of this leaf.
    #[inline]
    pub fn request(&self) -> EvalRequest<'_> {
        EvalRequest {
            position: &self.position,
            history: &self.history,
            repetitions: self.repetitions,
            moves: &self.moves,
        }
    }
}

/// What one walk down the tree found.
enum Walk {
    /// A new leaf to evaluate (in the leaf handed to `walk_with`).
    Leaf,
    /// A terminal or proven node, already backed up.
    Exact,
    /// The walk reached a leaf already waiting for evaluation.
    Collision,
    /// No move at the root.
    Nothing,
}

/// Buffers of one walk down the tree.
#[derive(Debug, Clone, Default)]
struct Scratch {
    /// Hashes of the positions along the path.
    hashes: Vec<u64>,
    /// Positions along the path (only with history planes).
    positions: Vec<Position>,
}

/// One search tree over a game position.
#[derive(Debug, Clone)]
pub struct Search {
    nodes: Vec<Node>,
    edges: Edges,
    root_position: Position,
    /// Hashes of the game's positions before the root, oldest first.
    game_hashes: Vec<u64>,
    /// The game's positions before the root, most recent last (at most `config.history`).
    game_positions: Vec<Position>,
    config: SearchConfig,
    rng: Rng,
    /// Leaf slots: the first `n_pending` wait for evaluation; the rest keep their buffers
    /// (moves, path, history) for the next walks. Leaves are filled in place, never moved.
    pending: Vec<Leaf>,
    n_pending: usize,
    max_depth: usize,
    /// Reused buffers of `walk`, boxed so that taking them out is a pointer move.
    scratch: Option<Box<Scratch>>,
    /// Buffers of the leaf checks of [`crate::tactics`].
    tactics: Option<Box<tactics::Scratch>>,
    /// The arenas of the previous tree, kept so `advance` reuses their memory.
    spare: (Vec<Node>, Edges),
    /// The selection inputs of the root's children, one per root edge in edge order (none
    /// while the root is not expanded); see [`crate::root`].
    root_children: RootInputs,
    /// The position after each root edge's move, in edge order (none while the root is not
    /// expanded): every walk starts with a root move, and copying its result is cheaper than
    /// playing it again.
    root_positions: Vec<Position>,
    /// Gumbel root search state (unused without `config.gumbel`).
    gumbel: GumbelRoot,
    /// The values this search's visits backed up through each root child, in edge order
    /// (kept only with `config.lcb_stdevs` > 0; reset with the root's children).
    root_samples: Vec<RootSample>,
    /// Root moves left out of this search ([`Search::exclude_root_moves`]), and for each
    /// root edge (edge order, while the root is expanded) whether its move is one of them.
    root_excluded: Vec<Move>,
    excluded: Vec<bool>,
}

/// The state of a Gumbel root search (see [`crate::gumbel`]): a search begins when the root
/// is expanded and after every [`Search::advance`].
#[derive(Debug, Clone, Default)]
struct GumbelRoot {
    /// Simulations of one search (the budget the sequential-halving schedule is built for).
    simulations: u32,
    /// Gumbel draw of each root edge (edge order), times the noise scale.
    draws: Vec<f32>,
    /// Visits of each root child when the search began (a reused subtree brings some).
    start: Vec<u32>,
    /// The root's visits when the search began.
    root_start: u32,
    /// The root's value for its side to move: the network's at its expansion, the search's
    /// mean for a reused root.
    raw_value: f32,
    /// [`gumbel::considered_visits`] for this root and budget.
    sequence: Vec<u32>,
    /// Buffers: the root actions' statistics, their σ(q̂), their visits of this search.
    stats: Vec<ActionStats>,
    sigma: Vec<f32>,
    counts: Vec<u32>,
}

/// The budget a Gumbel search plans for until [`Search::set_simulations`] says otherwise.
const DEFAULT_GUMBEL_SIMULATIONS: u32 = 800;

impl Search {
    /// A search at the current position of `game`.
    pub fn new(game: &Game, config: SearchConfig, seed: u64) -> Search {
        let mut positions = vec![*game.initial()];
        let mut pos = *game.initial();
        for &m in game.moves() {
            pos.play_unchecked(m);
            positions.push(pos);
        }
        let root_position = positions.pop().unwrap_or(*game.position());
        Search::from_history(root_position, &positions, config, seed)
    }

    /// A search at `root`, after the earlier game positions `before` (oldest first).
    pub fn from_history(
        root: Position,
        before: &[Position],
        config: SearchConfig,
        seed: u64,
    ) -> Search {
        let keep = before.len().saturating_sub(config.history);
        Search {
            nodes: vec![Node::new()],
            edges: Edges::default(),
            root_position: root,
            game_hashes: before.iter().map(Position::hash).collect(),
            game_positions: before[keep..].to_vec(),
            config,
            rng: Rng::new(seed),
            pending: Vec::new(),
            n_pending: 0,
            max_depth: 0,
            scratch: None,
            tactics: None,
            spare: (Vec::new(), Edges::default()),
            root_children: RootInputs::default(),
            root_positions: Vec::new(),
            gumbel: GumbelRoot { simulations: DEFAULT_GUMBEL_SIMULATIONS, ..GumbelRoot::default() },
            root_samples: Vec::new(),
            root_excluded: Vec::new(),
            excluded: Vec::new(),
        }
    }

    /// The position searched.
    pub fn root_position(&self) -> &Position {
        &self.root_position
    }

    /// Hashes of the game's positions before the root, oldest first (for repetitions).
    pub fn game_hashes(&self) -> &[u64] {
        &self.game_hashes
    }

    /// The settings.
    pub fn config(&self) -> &SearchConfig {
        &self.config
    }

    /// Changes the root noise weight for the next root expansion or [`Search::advance`]
    /// (self-play turns noise off for cheap searches).
    pub fn set_dirichlet_epsilon(&mut self, epsilon: f32) {
        self.config.dirichlet_epsilon = epsilon;
    }

    /// Changes the forced-playout constant `k` ([`SearchConfig::forced_playouts`]) from the
    /// next walk on (self-play forces playouts in full searches only).
    pub fn set_forced_playouts(&mut self, k: f32) {
        self.config.forced_playouts = k;
    }

    /// Completed visits of the root.
    #[inline]
    pub fn root_visits(&self) -> u32 {
        self.nodes[0].visits
    }

    /// The proven result for the side to move at the root, if known.
    #[inline]
    pub fn root_proven(&self) -> Proven {
        self.nodes[0].proven.flip()
    }

    /// Deepest ply reached below the root.
    pub fn max_depth(&self) -> usize {
        self.max_depth
    }

    /// Memory the tree's nodes and edges take, in bytes (the arenas' used length; their
    /// capacity can be up to twice as much).
    pub fn tree_bytes(&self) -> usize {
        self.nodes.len() * std::mem::size_of::<Node>() + self.edges.len() * Edges::BYTES
    }

    /// The leaves gathered and not yet applied.
    #[inline]
    pub fn pending(&self) -> &[Leaf] {
        &self.pending[..self.n_pending]
    }

    /// Walks down the tree up to `max_leaves` times and returns the new leaves to evaluate.
    /// Walks ending in terminal or proven positions are backed up at once (they count as
    /// visits). Stops early on a collision with a leaf already waiting.
    pub fn gather(&mut self, max_leaves: usize) -> &[Leaf] {
        // A node's in-flight count is at most the leaves of one gather (`Node::in_flight`).
        let max_leaves = max_leaves.min(usize::from(u16::MAX));
        let mut leaves = std::mem::take(&mut self.pending);
        let mut attempts = 0;
        while self.n_pending < max_leaves && attempts < max_leaves * 4 + 4 {
            attempts += 1;
            if leaves.len() == self.n_pending {
                leaves.push(Leaf::empty(self.root_position));
            }
            let (waiting, rest) = leaves.split_at_mut(self.n_pending);
            let leaf = &mut rest[0];
            let walk = self.walk(leaf, waiting);
            // The walk changed the statistics of the root child it went through (virtual loss,
            // a backed-up exact result, a proof).
            let root_child = leaf.path.get(1).copied();
            match walk {
                Walk::Leaf => {
                    for &id in &leaf.path {
                        self.nodes[id as usize].in_flight += 1;
                    }
                    self.nodes[leaf.node as usize].expansion = Expansion::Pending;
                    self.n_pending += 1;
                }
                Walk::Exact => {}
                Walk::Collision | Walk::Nothing => break,
            }
            if let Some(child) = root_child {
                self.refresh_root_child(child);
            }
            if self.nodes[0].proven != Proven::Unknown && self.nodes[0].visits > 0 {
                break;
            }
        }
        self.pending = leaves;
        &self.pending[..self.n_pending]
    }

    /// Expands the pending leaves with `evaluations` (one per leaf, in order) and backs up.
    pub fn apply<'a>(&mut self, evaluations: impl IntoIterator<Item = Evaluation<'a>>) {
        // The sum of a leaf's priors is a chain of dependent additions (in order: their bits
        // matter), which the rest of the leaf's expansion waits for. Summed a few leaves ahead,
        // the chains of different leaves run side by side.
        const AHEAD: usize = 4;
        let leaves = std::mem::take(&mut self.pending);
        let n = std::mem::take(&mut self.n_pending);
        let mut evaluations = evaluations.into_iter();
        let mut group: [Option<(Evaluation<'a>, f32)>; AHEAD] = [None; AHEAD];
        'leaves: for chunk in leaves[..n].chunks(AHEAD) {
            for slot in group.iter_mut().take(chunk.len()) {
                *slot = evaluations.next().map(|e| (e, e.priors.iter().sum::<f32>()));
            }
            for (leaf, slot) in chunk.iter().zip(&group) {
                // Fewer evaluations than leaves: the rest stay unexpanded (as a zip would).
                let Some((eval, sum)) = *slot else { break 'leaves };
                self.expand(leaf, eval, sum);
            }
        }
        self.pending = leaves;
    }

    /// Expands `leaf` with `eval`, whose priors add up to `sum`, and backs its value up.
    #[inline]
    fn expand(&mut self, leaf: &Leaf, eval: Evaluation<'_>, sum: f32) {
        let first = self.edges.len();
        let norm = if sum > 0.0 && sum.is_finite() { 1.0 / sum } else { 0.0 };
        let uniform = 1.0 / leaf.moves.len().max(1) as f32;
        // Highest prior first (stable: ties keep the legal-move order), so selection below
        // the root can stop at the first unvisited edge.
        let in_order = if norm > 0.0 && eval.priors.len() == leaf.moves.len() {
            self.edges.extend_scaled(&leaf.moves, eval.priors, norm, uniform);
            // Checked on the evaluator's priors, one contiguous `f32` slice (the rounding
            // to `Prior` keeps their order; a sum that is finite and positive means they are
            // all finite). Scaling keeps the order too unless an end overflows.
            let ends = [eval.priors.first(), eval.priors.last()];
            descending(eval.priors) && ends.into_iter().flatten().all(|p| (p * norm).is_finite())
        } else {
            // Priors missing or unusable (an evaluator breaking its contract).
            let priors = (0..leaf.moves.len()).map(|i| {
                let p = eval.priors.get(i).copied().unwrap_or(0.0) * norm;
                if norm > 0.0 && p.is_finite() { p } else { uniform }
            });
            self.edges.extend(&leaf.moves, priors);
            false
        };
        let range = first..self.edges.len();
        if !in_order {
            self.edges.sort_by_prior(range);
        }
        let node = &mut self.nodes[leaf.node as usize];
        node.first_edge = first as EdgeId;
        node.n_edges = leaf.moves.len() as u16;
        node.expansion = Expansion::Expanded;
        let wdl = sanitize(eval.wdl);
        if leaf.node == 0 {
            self.give_root_edges_nodes();
            self.add_root_noise();
            self.begin_gumbel_search(Some(wdl[0] - wdl[2]));
        }
        // The evaluation is for the side to move at the leaf; the node stores the mover's.
        self.backup(&leaf.path, flip_wdl(wdl), true);
        if leaf.node == 0 {
            self.rebuild_root_children();
        } else if let Some(&child) = leaf.path.get(1) {
            self.refresh_root_child(child);
        }
    }

    /// Runs the search alone with `evaluator` until [`Search::budget_visits`] reaches `visits`
    /// (or the root is proven), evaluating up to `batch` leaves at a time.
    pub fn run<E: Evaluator + ?Sized>(&mut self, evaluator: &E, visits: u32, batch: usize) {
        while self.budget_visits() < visits {
            if self.nodes[0].proven != Proven::Unknown && self.nodes[0].visits > 0 {
                break;
            }
            let before = self.root_visits();
            let leaves = self.gather(batch.max(1));
            if leaves.is_empty() {
                if self.root_visits() == before {
                    break;
                }
                continue;
            }
            let requests: Vec<EvalRequest<'_>> = leaves.iter().map(Leaf::request).collect();
            let evals = evaluator.evaluate(&requests);
            self.apply(&evals);
        }
    }

    /// One walk down the tree into `leaf`: a new leaf, or what the walk found instead.
    /// `waiting` are the leaves gathered before (their paths follow nodes that move).
    fn walk(&mut self, leaf: &mut Leaf, waiting: &mut [Leaf]) -> Walk {
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
    fn walk_with(
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
                        let node = &mut self.nodes[id as usize];
                        node.expansion = Expansion::Terminal;
                        node.proven = Proven::Loss;
                        node.plies = 1;
                        self.backup(path, Proven::Loss.wdl().unwrap_or([0.0, 0.0, 1.0]), false);
                        self.propagate_proof(path);
                        return Walk::Exact;
                    }
                    if id != 0
                        && let Some((proven, plies)) =
                            self.leaf_tactics(&pos, &leaf.moves, path_hashes)
                    {
                        let node = &mut self.nodes[id as usize];
                        node.expansion = Expansion::Terminal;
                        node.proven = proven;
                        node.plies = plies;
                        self.backup(path, proven.wdl().unwrap_or([0.0, 1.0, 0.0]), false);
                        self.propagate_proof(path);
                        return Walk::Exact;
                    }
                    self.max_depth = self.max_depth.max(path.len() - 1);
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
    fn leaf_history(&self, path_positions: &[Position], out: &mut Vec<Position>) {
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
    fn repetitions(&self, pos: &Position, path_hashes: &[u64]) -> usize {
        self.repetitions_after(pos, path_hashes, &[])
    }

    /// [`Search::repetitions`] of a position reached by a short `line` from the end of the path
    /// (`line`: the hashes of the positions after the path's, most recent last).
    fn repetitions_after(&self, pos: &Position, path_hashes: &[u64], line: &[u64]) -> usize {
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
    fn is_drawn_after(&self, pos: &Position, path_hashes: &[u64], line: &[u64]) -> bool {
        pos.is_insufficient_material() || pos.halfmoves() >= 100 || {
            let repetitions = self.repetitions_after(pos, path_hashes, line);
            repetitions >= 2 || (self.config.twofold_draw && repetitions >= 1)
        }
    }

    /// The short forced lines of [`crate::tactics`] at a new leaf (not the root), per
    /// [`SearchConfig::tactics`]: the leaf's proof for the player who moved into it, and its
    /// plies to the end.
    fn leaf_tactics(
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
    fn terminal(
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
    fn select_edge(&self, parent: NodeId) -> EdgeId {
        let p = &self.nodes[parent as usize];
        let (log, sqrt_n) = exploration_terms(self.config.c_base, p.in_tree());
        let c_sqrt_n = (self.config.c_init + log) * sqrt_n;
        if parent == 0 {
            return self.select_root_edge(c_sqrt_n);
        }
        let virtual_loss = self.config.virtual_loss;
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
                q + c_sqrt_n * prior / (1.0 + n)
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

    /// [`Search::select_edge`] at the root, from the stored inputs of its children: the same
    /// scores, visited prior mass and first-play urgency, computed in the same order.
    fn select_root_edge(&self, c_sqrt_n: f32) -> EdgeId {
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
    fn forced_root_child(&self) -> Option<usize> {
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

    /// Starts loading the first edges (priors and moves) and children of node `id`, which the
    /// next selection scan and the move it picks read. Without branches on the node's state
    /// (they mispredicted): a node without edges or children points at edge 0 or node 0,
    /// which a prefetch may load for nothing.
    #[inline]
    fn prefetch_below(&self, id: NodeId) {
        let node = &self.nodes[id as usize];
        let first = node.first_edge as usize;
        if let Some(edge) = self.edges.at(first) {
            prefetch(edge);
        }
        if let Some(child) = self.nodes.get(node.first_child as usize) {
            prefetch(child);
        }
    }

    /// The statistics of the child of `node`'s edge `i` (no visits if it has none yet).
    fn stats(&self, node: &Node, i: usize) -> &Node {
        static UNVISITED: Node = Node::new();
        match node.child(i) {
            NO_NODE => &UNVISITED,
            child => &self.nodes[child as usize],
        }
    }

    /// Creates the node of `parent`'s first edge without one, in the reserved slots after
    /// its other children, and returns it. When the slots are full, the children move to a
    /// block twice as large at the end of the arena, and the paths of the `waiting` leaves
    /// follow them.
    fn add_child(&mut self, parent: NodeId, waiting: &mut [Leaf]) -> NodeId {
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

    /// Adds `wdl` (for the player who moved into the last node of `path`) to every node of the
    /// path, flipping the point of view at each level.
    fn backup(&mut self, path: &[NodeId], mut wdl: [f32; 3], virtual_loss: bool) {
        if self.config.lcb_stdevs > 0.0 && path.len() >= 2 {
            // The value the root child (`path[1]`) gets: flipped once per ply above the leaf.
            let at_child = if path.len().is_multiple_of(2) { wdl } else { flip_wdl(wdl) };
            let k = path[1].wrapping_sub(self.nodes[0].first_child) as usize;
            if let Some(sample) = self.root_samples.get_mut(k) {
                sample.add(at_child[0] - at_child[2]);
            }
        }
        for &id in path.iter().rev() {
            let node = &mut self.nodes[id as usize];
            node.visits += 1;
            if virtual_loss {
                node.in_flight = node.in_flight.saturating_sub(1);
            }
            node.win_loss_sum[0] += wdl[0];
            node.win_loss_sum[1] += wdl[2];
            wdl = flip_wdl(wdl);
        }
    }

    /// After the last node of `path` became proven, proves its ancestors where possible, each
    /// with its distance to the end ([`Node::plies`]): one more than the winning child's for
    /// a parent whose side to move wins, one more than the longest of its lost children's for
    /// a parent whose every move loses.
    fn propagate_proof(&mut self, path: &[NodeId]) {
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
    }

    /// Leaves `moves` out of the search at the root from now until [`Search::advance`]: no walk
    /// goes through them and [`Search::best_move`] does not play them while another move is
    /// not a proven loss (a tactical check found them refuted, or `go searchmoves` left them
    /// out). Moves that are not legal at the root are ignored; leaving out every move leaves
    /// out none.
    pub fn exclude_root_moves(&mut self, moves: &[Move]) {
        let legal = self.root_position.legal_moves();
        let mut kept: Vec<Move> = moves.iter().copied().filter(|m| legal.contains(m)).collect();
        kept.sort_unstable_by_key(|m| self.root_position.uci(*m));
        kept.dedup();
        if kept.len() >= legal.len() {
            kept.clear();
        }
        self.root_excluded = kept;
        self.rebuild_root_children();
    }

    /// The root moves left out by [`Search::exclude_root_moves`].
    pub fn excluded_root_moves(&self) -> &[Move] {
        &self.root_excluded
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

    /// Creates the (unvisited) nodes of all the root's edges at its expansion, as its block of
    /// children: every walk scans all the root's children.
    fn give_root_edges_nodes(&mut self) {
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

    /// Starts a Gumbel search at the root (nothing without `config.gumbel`): fresh draws,
    /// the children's visits so far, the root's value and the halving schedule.
    fn begin_gumbel_search(&mut self, raw_value: Option<f32>) {
        let Some(config) = self.config.gumbel else { return };
        let mut g = std::mem::take(&mut self.gumbel);
        let root = &self.nodes[0];
        let expanded = root.expansion == Expansion::Expanded;
        let n = if expanded { root.n_edges as usize } else { 0 };
        g.root_start = root.visits;
        // A reused root's value for its side to move is minus its mover's mean.
        g.raw_value = raw_value.unwrap_or(-root.q());
        g.start.clear();
        g.start.extend((0..n).map(|i| self.stats(root, i).visits));
        g.draws.clear();
        for _ in 0..n {
            let draw = config.noise_scale * self.rng.gumbel() as f32;
            g.draws.push(draw);
        }
        g.sequence = gumbel::considered_visits(config.considered.min(n as u32), g.simulations);
        self.gumbel = g;
    }

    /// Sets the number of simulations a Gumbel search plans for (sequential halving spreads
    /// them over its phases), for the search in progress and the next ones; 800 until set.
    /// Without `config.gumbel` it only records the number.
    pub fn set_simulations(&mut self, simulations: u32) {
        if self.gumbel.simulations == simulations {
            return;
        }
        self.gumbel.simulations = simulations;
        if let Some(config) = self.config.gumbel {
            let n = self.gumbel.draws.len() as u32;
            self.gumbel.sequence = gumbel::considered_visits(config.considered.min(n), simulations);
        }
    }

    /// Visits counted against a search's budget: the root's visits under PUCT (those a
    /// reused subtree brought included); under Gumbel, the simulations of this search.
    #[inline]
    pub fn budget_visits(&self) -> u32 {
        if self.config.gumbel.is_some() {
            self.nodes[0].visits.saturating_sub(self.gumbel.root_start)
        } else {
            self.nodes[0].visits
        }
    }

    /// The root actions' statistics for the Gumbel arithmetic, into `out` (edge order).
    fn root_action_stats(&self, out: &mut Vec<ActionStats>) {
        out.clear();
        out.extend(self.root_edges().map(|(e, c)| {
            let exact = c.proven != Proven::Unknown;
            let q = match c.proven {
                Proven::Win => 1.0,
                Proven::Loss => -1.0,
                Proven::Draw => 0.0,
                Proven::Unknown => c.q(),
            };
            ActionStats { prior: e.prior, visits: c.visits, q, exact }
        }));
    }

    /// Gumbel root selection: sequential halving over the root's actions (a proven win at
    /// once). Visits in flight count as visits of this search, so the walks of one `gather`
    /// go to different actions.
    fn select_root_gumbel(&mut self) -> EdgeId {
        let config = self.config.gumbel.unwrap_or_default();
        let mut g = std::mem::take(&mut self.gumbel);
        let root = &self.nodes[0];
        let first_edge = root.first_edge;
        self.root_action_stats(&mut g.stats);
        let children = &self.nodes[root.children()];
        let pick = match children.iter().position(|c| c.proven == Proven::Win) {
            Some(win) => win,
            None => {
                g.counts.clear();
                g.counts.extend(
                    children
                        .iter()
                        .zip(&g.start)
                        .map(|(c, &start)| c.in_tree().saturating_sub(start)),
                );
                let simulation: u32 = g.counts.iter().sum();
                // Past the planned budget: keep visiting the leaders.
                let wanted = g
                    .sequence
                    .get(simulation as usize)
                    .copied()
                    .unwrap_or_else(|| g.counts.iter().copied().max().unwrap_or(0));
                gumbel::transformed_q(&config, g.raw_value, &g.stats, &mut g.sigma);
                gumbel::select(&g.draws, &g.stats, &g.sigma, &g.counts, wanted).unwrap_or(0)
            }
        };
        self.gumbel = g;
        first_edge + pick as EdgeId
    }

    /// The move a Gumbel search plays: a proven win if there is one; else, among the actions
    /// that are not proven losses (unless all are), the best by `g + logit + σ(q̂)` of those
    /// with the most visits of this search. `None` before the root is expanded or without
    /// `config.gumbel`.
    pub fn gumbel_move(&self) -> Option<Move> {
        let config = self.config.gumbel?;
        let root = &self.nodes[0];
        if root.expansion != Expansion::Expanded || root.n_edges == 0 {
            return None;
        }
        if let Some((win, _)) = self.root_edges().find(|(_, c)| c.proven == Proven::Win) {
            return Some(win.mv);
        }
        let g = &self.gumbel;
        let mut stats = Vec::new();
        self.root_action_stats(&mut stats);
        let mut sigma = Vec::new();
        gumbel::transformed_q(&config, g.raw_value, &stats, &mut sigma);
        let children = &self.nodes[root.children()];
        let all_lost = children.iter().all(|c| c.proven == Proven::Loss);
        let eligible = |k: usize| all_lost || children[k].proven != Proven::Loss;
        let count =
            |k: usize| children[k].visits.saturating_sub(g.start.get(k).copied().unwrap_or(0));
        let most = (0..children.len()).filter(|&k| eligible(k)).map(count).max()?;
        let score = |k: usize| {
            g.draws.get(k).copied().unwrap_or(0.0) + gumbel::logit(stats[k].prior) + sigma[k]
        };
        let best = (0..children.len()).filter(|&k| eligible(k) && count(k) == most).fold(
            None,
            |best: Option<usize>, k| match best {
                Some(b) if score(b) >= score(k) => Some(b),
                _ => Some(k),
            },
        )?;
        Some(self.edges.mv(root.first_edge as usize + best))
    }

    /// The improved policy `softmax(logit + σ(completed Q))` over the root's moves (edge
    /// order; empty before the root is expanded): a Gumbel search's training target. With
    /// PUCT it is computed with mctx's default constants all the same.
    pub fn improved_policy(&self) -> Vec<(Move, f32)> {
        let config = self.config.gumbel.unwrap_or_default();
        let root = &self.nodes[0];
        if root.expansion != Expansion::Expanded {
            return Vec::new();
        }
        let raw_value =
            if self.config.gumbel.is_some() { self.gumbel.raw_value } else { -root.q() };
        let mut stats = Vec::new();
        self.root_action_stats(&mut stats);
        let mut policy = Vec::new();
        gumbel::improved_policy(&config, raw_value, &stats, &mut policy);
        self.edges.iter(root.edges()).map(|e| e.mv).zip(policy).collect()
    }

    fn add_root_noise(&mut self) {
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

    /// The root's edges with the statistics of their children.
    fn root_edges(&self) -> impl Iterator<Item = (Edge, &Node)> + '_ {
        let root = &self.nodes[0];
        self.edges.iter(root.edges()).enumerate().map(|(i, e)| (e, self.stats(root, i)))
    }

    /// Visits per root move, in the tree's order (by prior when expanded; empty before the root
    /// is expanded).
    pub fn root_children(&self) -> Vec<(Move, u32)> {
        self.root_edges().map(|(e, c)| (e.mv, c.visits)).collect()
    }

    /// [`Search::root_children`] with KataGo's policy-target pruning (Wu 2019, section 3.1)
    /// when forced playouts are on ([`SearchConfig::forced_playouts`] > 0 at a PUCT root;
    /// otherwise the visits unchanged): every child but the most visited one gives back up to
    /// its `sqrt(k · P · N)` forced visits, as long as its PUCT score with the visits left stays
    /// at most the most visited child's; a child left with one visit or none gets 0. Proven
    /// children and the most visited one keep their visits.
    pub fn pruned_root_children(&self) -> Vec<(Move, u32)> {
        let mut out = self.root_children();
        let k = self.config.forced_playouts;
        let root = &self.nodes[0];
        if k <= 0.0 || self.config.gumbel.is_some() || root.expansion != Expansion::Expanded {
            return out;
        }
        let (log, sqrt_n) = exploration_terms(self.config.c_base, root.in_tree());
        let c_sqrt_n = (self.config.c_init + log) * sqrt_n;
        let total = root.in_tree() as f32;
        let children: Vec<(Edge, &Node)> = self.root_edges().collect();
        // The most visited child (the first on ties).
        let mut best = 0;
        for (i, (_, child)) in children.iter().enumerate() {
            if child.visits > children[best].1.visits {
                best = i;
            }
        }
        // PUCT's score of a child (its value for the root's mover) with `visits` visits.
        let score = |edge: &Edge, child: &Node, visits: f32| {
            child.q() + c_sqrt_n * edge.prior / (1.0 + visits)
        };
        let (best_edge, best_child) = children[best];
        if best_child.proven != Proven::Unknown || best_child.visits == 0 {
            return out;
        }
        let best_score = score(&best_edge, best_child, best_child.visits as f32);
        for (i, (edge, child)) in children.iter().enumerate() {
            if i == best || child.proven != Proven::Unknown || child.visits == 0 {
                continue;
            }
            let visits = child.visits as f32;
            let forced = (k * edge.prior * total).sqrt();
            // The fewest visits at which the child's score is still at most the best's.
            let gap = best_score - child.q();
            let floor = if gap > 0.0 { c_sqrt_n * edge.prior / gap - 1.0 } else { visits };
            let kept = (visits - forced).max(floor).ceil().clamp(0.0, visits);
            out[i].1 = if kept <= 1.0 { 0 } else { kept as u32 };
        }
        out
    }

    /// Root children with prior, visits, WDL (for the side to move at the root) and proof.
    pub fn root_child_stats(&self) -> Vec<ChildStats> {
        self.root_edges()
            .map(|(e, c)| ChildStats {
                mv: e.mv,
                prior: e.prior,
                visits: c.visits,
                wdl: c.wdl(),
                proven: c.proven,
            })
            .collect()
    }

    /// Mean WDL of the root for its side to move.
    pub fn root_wdl(&self) -> [f32; 3] {
        match self.nodes[0].proven.flip().wdl() {
            Some(exact) => exact,
            None => flip_wdl(self.nodes[0].wdl()),
        }
    }

    /// The move to play: the quickest proven win if there is one, else the most visited move that is not
    /// a proven loss (ties broken by value) or, with [`SearchConfig::lcb_stdevs`] > 0, the
    /// move [`lcb::select`] prefers to it.
    pub fn best_move(&self) -> Option<Move> {
        let wins = self.root_edges().filter(|(_, c)| c.proven == Proven::Win);
        // The quickest proven win (the first in edge order on ties).
        if let Some((win, _)) = wins.min_by_key(|(_, c)| c.plies) {
            return Some(win.mv);
        }
        let out = |i: usize| self.excluded.get(i).copied().unwrap_or(false);
        let key =
            |i: usize, c: &Node| (c.proven != Proven::Loss, !out(i), c.visits, ordered(c.q()));
        let (best, (edge, child)) =
            self.root_edges().enumerate().max_by_key(|&(i, (_, c))| key(i, c))?;
        if self.config.lcb_stdevs <= 0.0 || child.proven == Proven::Loss {
            return Some(edge.mv);
        }
        let candidates: Vec<lcb::Candidate> = self
            .root_edges()
            .enumerate()
            .map(|(i, (_, c))| lcb::Candidate {
                q: if c.proven == Proven::Draw { 0.0 } else { c.q() },
                // A proven loss or a move left out never competes (0 visits are below any
                // share).
                visits: if c.proven == Proven::Loss || out(i) { 0 } else { c.visits },
                sample: self.root_samples.get(i).copied().unwrap_or_default(),
                exact: c.proven == Proven::Draw,
            })
            .collect();
        let pick = lcb::select(&candidates, best, self.config.lcb_stdevs);
        self.root_edges().nth(pick).map(|(e, _)| e.mv)
    }

    /// Samples a root move with probability ∝ visits^(1/temperature) among moves that are not
    /// proven losses; temperature 0 (or less) is [`Search::best_move`].
    pub fn sample_move(&mut self, temperature: f32) -> Option<Move> {
        if temperature <= 0.0 || self.root_edges().any(|(_, c)| c.proven == Proven::Win) {
            return self.best_move();
        }
        let weights: Vec<(Move, f64)> = self
            .root_edges()
            .map(|(e, c)| {
                let w = if c.proven == Proven::Loss {
                    0.0
                } else {
                    (c.visits as f64).powf(1.0 / temperature as f64)
                };
                (e.mv, w)
            })
            .collect();
        let total: f64 = weights.iter().map(|(_, w)| w).sum();
        if total <= 0.0 {
            return self.best_move();
        }
        let mut r = self.rng.uniform() * total;
        for &(mv, w) in &weights {
            if r < w {
                return Some(mv);
            }
            r -= w;
        }
        self.best_move()
    }

    /// The principal variation: most visited children from the root.
    pub fn pv(&self, max_len: usize) -> Vec<Move> {
        let mut pv = Vec::new();
        let mut id = NO_NODE;
        if let Some(best) = self.best_move() {
            pv.push(best);
            id = self.root_child(best);
        }
        while pv.len() < max_len && id != NO_NODE {
            let node = &self.nodes[id as usize];
            let Some((i, edge)) = self
                .edges
                .iter(node.edges())
                .enumerate()
                .filter(|&(i, _)| self.stats(node, i).visits > 0)
                .max_by_key(|&(i, _)| {
                    let c = self.stats(node, i);
                    (c.proven == Proven::Win, c.visits)
                })
            else {
                break;
            };
            id = node.child(i);
            pv.push(edge.mv);
        }
        pv
    }

    /// The root's child reached by `m` ([`NO_NODE`] if none).
    fn root_child(&self, m: Move) -> NodeId {
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
        self.max_depth = 0;
        // A terminal-for-the-search root (e.g. a two-fold repetition) must be searched anyway.
        if self.nodes[0].expansion == Expansion::Terminal
            && !self.root_position.legal_moves().is_empty()
        {
            self.nodes[0] = Node::new();
        }
        if self.nodes[0].expansion == Expansion::Expanded {
            self.add_root_noise();
        }
        self.begin_gumbel_search(None);
        self.rebuild_root_children();
    }

    /// Recomputes the selection inputs of all the root's children.
    fn rebuild_root_children(&mut self) {
        let mut inputs = std::mem::take(&mut self.root_children);
        let virtual_loss = self.config.virtual_loss;
        let expanded = self.nodes[0].expansion == Expansion::Expanded;
        let mut excluded = std::mem::take(&mut self.excluded);
        excluded.clear();
        if expanded {
            excluded.extend(self.root_edges().map(|(e, _)| self.root_excluded.contains(&e.mv)));
        }
        inputs.rebuild(self.root_edges().filter(|_| expanded).zip(&excluded).map(
            |((e, c), &out)| {
                if out { RootChild::EXCLUDED } else { RootChild::new(e.prior, c, virtual_loss) }
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
    fn refresh_root_child(&mut self, id: NodeId) {
        let root = &self.nodes[0];
        let k = id.wrapping_sub(root.first_child) as usize;
        if k < self.root_children.len() {
            let edge = self.edges.get(root.first_edge as usize + k);
            let inputs = if self.excluded.get(k).copied().unwrap_or(false) {
                RootChild::EXCLUDED
            } else {
                RootChild::new(edge.prior, &self.nodes[id as usize], self.config.virtual_loss)
            };
            self.root_children.set(k, inputs);
        }
    }
}

/// The evaluation requests of the pending leaves of `searches`, in order: one batch for a
/// thread driving many trees. Sized up front (collecting through `flat_map` grew the vector
/// from nothing, a reallocation per doubling, in every batch).
pub fn pending_requests<'a, I>(searches: I) -> Vec<EvalRequest<'a>>
where
    I: IntoIterator<Item = &'a Search>,
    I::IntoIter: Clone,
{
    let searches = searches.into_iter();
    let n = searches.clone().map(|s| s.pending().len()).sum();
    let mut requests = Vec::with_capacity(n);
    requests.extend(searches.flat_map(|s| s.pending().iter().map(Leaf::request)));
    requests
}

/// Per-move statistics at the root.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChildStats {
    /// The move.
    pub mv: Move,
    /// Its prior.
    pub prior: f32,
    /// Its visits.
    pub visits: u32,
    /// Mean WDL for the side to move at the root.
    pub wdl: [f32; 3],
    /// Proven result for the side to move at the root.
    pub proven: Proven,
}

/// Whether `priors` never increase. One pass without early exit (it vectorizes).
#[inline]
fn descending(priors: &[f32]) -> bool {
    let Some(rest) = priors.get(1..) else { return true };
    priors.iter().zip(rest).map(|(&a, &b)| u32::from(a < b)).sum::<u32>() == 0
}

#[inline]
fn sanitize(wdl: [f32; 3]) -> [f32; 3] {
    let clean = |p: f32| if p.is_finite() && p > 0.0 { p } else { 0.0 };
    let [w, d, l] = [clean(wdl[0]), clean(wdl[1]), clean(wdl[2])];
    let sum = w + d + l;
    if sum > 0.0 { [w / sum, d / sum, l / sum] } else { [0.0, 1.0, 0.0] }
}

/// `ln((n + c_base + 1) / c_base)`, the growth of the exploration constant with the parent's
/// visits `n`, and `sqrt(max(n, 1))`, the visits' share of the exploration term. A `logf`
/// call per selection was 2.5% of the tree work, and the square root waits ~15 cycles before
/// the first score, so for AlphaZero's `c_base` and the visit counts most nodes have, both come
/// from a table computed once (with the same `f32` operations, so the same bits).
#[inline]
fn exploration_terms(c_base: f32, n: u32) -> (f32, f32) {
    const TABLE_C_BASE: f32 = 19652.0;
    const TABLE_LEN: usize = 4096;
    static TABLE: std::sync::OnceLock<Box<[(f32, f32)]>> = std::sync::OnceLock::new();
    let compute = |c_base: f32, n: u32| {
        (((n as f32 + c_base + 1.0) / c_base).ln(), (n as f32).max(1.0).sqrt())
    };
    if c_base == TABLE_C_BASE && (n as usize) < TABLE_LEN {
        let table =
            TABLE.get_or_init(|| (0..TABLE_LEN as u32).map(|n| compute(c_base, n)).collect());
        table[n as usize]
    } else {
        compute(c_base, n)
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

/// Orders floats for `max_by_key` (NaN sorts lowest).
fn ordered(x: f32) -> i64 {
    if x.is_nan() { i64::MIN } else { (x as f64 * 1e9) as i64 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluator::RandomEvaluator;
    use atomzero_rules::Variant;

    #[test]
    fn lcb_samples_are_each_root_childs_visits_of_this_search() {
        let game = Game::new(Position::new(Variant::Atomic));
        let config = SearchConfig { lcb_stdevs: 5.0, ..SearchConfig::default().without_noise() };
        let mut search = Search::new(&game, config, 3);
        search.run(&RandomEvaluator { seed: 3 }, 400, 4);
        let check = |search: &Search| {
            let root = &search.nodes[0];
            assert_eq!(search.root_samples.len(), root.n_edges as usize);
            for (i, (_, child)) in search.root_edges().enumerate() {
                let sample = search.root_samples[i];
                assert_eq!(sample.n, child.visits, "child {i}");
                let sum = child.win_loss_sum[0] - child.win_loss_sum[1];
                assert!((sample.sum - f64::from(sum)).abs() < 1e-3, "child {i}: {sample:?}");
            }
        };
        check(&search);
        // After tree reuse the new root's children start a fresh sample.
        let m = search.best_move().unwrap();
        let reply = search.root_position().play(m).unwrap().legal_moves()[0];
        search.advance(m);
        search.advance(reply);
        assert!(search.root_samples.iter().all(|s| s.n == 0));
        search.run(&RandomEvaluator { seed: 3 }, search.root_visits() + 200, 4);
        let fresh: u32 = search.root_samples.iter().map(|s| s.n).sum();
        assert!(fresh >= 200, "{fresh}");
        // Without LCB nothing is kept.
        let mut plain = Search::new(&game, SearchConfig::default().without_noise(), 3);
        plain.run(&RandomEvaluator { seed: 3 }, 100, 4);
        assert!(plain.root_samples.is_empty());
        // One leaf at a time (no virtual loss) counts the same way.
        let mut single = Search::new(&game, config, 5);
        single.run(&RandomEvaluator { seed: 5 }, 300, 1);
        check(&single);
    }

    /// The textbook two-pass PUCT selection the one-pass `select_edge` must agree with.
    fn reference_select(search: &Search, parent: NodeId) -> EdgeId {
        let config = &search.config;
        let p = &search.nodes[parent as usize];
        let n_parent = p.in_tree() as f32;
        let c = config.c_init + ((n_parent + config.c_base + 1.0) / config.c_base).ln();
        let c_sqrt_n = c * n_parent.max(1.0).sqrt();
        let stats = |i: usize| search.stats(p, i).clone();
        let visited_prior: f32 = search
            .edges
            .iter(p.edges())
            .enumerate()
            .filter(|&(i, _)| stats(i).in_tree() > 0)
            .map(|(_, e)| e.prior)
            .sum();
        let reduction = if parent == 0 { config.fpu_reduction_root } else { config.fpu_reduction };
        let fpu = -p.q() - reduction * visited_prior.sqrt();
        let mut best = p.first_edge;
        let mut best_score = f32::NEG_INFINITY;
        for (i, edge) in search.edges.iter(p.edges()).enumerate() {
            let id = p.first_edge + i as EdgeId;
            let child = stats(i);
            let n = child.in_tree() as f32;
            let score = match child.proven {
                Proven::Win => return id,
                Proven::Loss => -1e6 + child.visits as f32 * 1e-3,
                Proven::Draw => c_sqrt_n * edge.prior / (1.0 + n),
                Proven::Unknown if n == 0.0 => fpu + c_sqrt_n * edge.prior,
                Proven::Unknown => {
                    (child.win_loss_sum[0]
                        - child.win_loss_sum[1]
                        - config.virtual_loss * child.in_flight as f32)
                        / n
                        + c_sqrt_n * edge.prior / (1.0 + n)
                }
            };
            if score > best_score {
                best_score = score;
                best = id;
            }
        }
        best
    }

    #[test]
    fn one_pass_selection_agrees_with_the_two_pass_reference() {
        let mut checked = 0;
        for seed in 0..6u64 {
            let mut pos = Position::new(Variant::Atomic);
            for k in 0..seed as usize {
                let moves = pos.legal_moves();
                pos.play_unchecked(moves[(k * 7 + 3) % moves.len()]);
            }
            let mut search = Search::new(&Game::new(pos), SearchConfig::default(), seed);
            search.run(&RandomEvaluator { seed }, 300, 4);
            // Leave some leaves in flight so virtual loss takes part.
            search.gather(6);
            checked += check_selection(&search);
            check_counts(&search);
            // Tree reuse with leaves still in flight: their visits are dropped, and the
            // children must still be ordered as the early stop requires.
            let best = search.best_move().unwrap();
            search.advance(best);
            checked += check_selection(&search);
            check_counts(&search);
            search.run(&RandomEvaluator { seed }, 200, 4);
            search.gather(6);
            checked += check_selection(&search);
            check_counts(&search);
        }
        assert!(checked > 400, "{checked} nodes checked");
    }

    #[test]
    fn exploration_table_gives_the_computed_bits() {
        for c_base in [19652.0f32, 500.0] {
            for n in [0u32, 1, 2, 3, 799, 4095, 4096, 100_000] {
                let log = ((n as f32 + c_base + 1.0) / c_base).ln();
                let sqrt = (n as f32).max(1.0).sqrt();
                let (table_log, table_sqrt) = exploration_terms(c_base, n);
                assert_eq!(table_log.to_bits(), log.to_bits(), "{c_base} {n}");
                assert_eq!(table_sqrt.to_bits(), sqrt.to_bits(), "{c_base} {n}");
            }
        }
    }

    #[test]
    fn tree_reuse_keeps_visited_children_first_when_it_drops_in_flight_visits() {
        let game = Game::new(Position::new(Variant::Atomic));
        let mut search = Search::new(&game, SearchConfig::default(), 3);
        search.run(&RandomEvaluator { seed: 3 }, 2000, 1);
        let best = search.best_move().unwrap();
        // A node's edges, each with its child (NO_NODE if none).
        let edges_of = |search: &Search, node: NodeId| -> Vec<(Move, NodeId)> {
            let node = &search.nodes[node as usize];
            let edges = search.edges.iter(node.edges());
            edges.enumerate().map(|(i, e)| (e.mv, node.child(i))).collect()
        };
        let child_by = |search: &Search, node: NodeId, mv: Move| {
            edges_of(search, node).iter().find(|e| e.0 == mv).unwrap().1
        };
        let b = child_by(&search, 0, best);
        // A child of the new root whose first two children were visited: make the first one
        // a leaf still waiting for its evaluation (in flight, no completed visit).
        let c_edge = edges_of(&search, b)
            .into_iter()
            .find(|e| {
                let kids = if e.1 == NO_NODE { Vec::new() } else { edges_of(&search, e.1) };
                kids.len() >= 2 && kids[..2].iter().all(|k| k.1 != NO_NODE)
            })
            .expect("a node with two visited children");
        let kids = edges_of(&search, c_edge.1);
        let (d0_move, d1_move) = (kids[0].0, kids[1].0);
        search.nodes[kids[0].1 as usize] =
            Node { in_flight: 1, expansion: Expansion::Pending, ..Node::new() };
        search.advance(best);
        // The dropped leaf is unvisited again (no node) and must now come after its visited
        // siblings.
        let c = child_by(&search, 0, c_edge.0);
        let kids = edges_of(&search, c);
        assert_eq!(kids[0].0, d1_move);
        let d0 = kids.iter().position(|k| k.0 == d0_move).unwrap();
        assert!(d0 > 0);
        assert_eq!(kids[d0].1, NO_NODE);
        check_selection(&search);
    }

    /// The moves along a gathered leaf's path, from the root.
    fn path_moves(search: &Search, leaf: &Leaf) -> Vec<Move> {
        leaf.path
            .windows(2)
            .map(|pair| {
                let parent = &search.nodes[pair[0] as usize];
                let i = (pair[1] - parent.first_child) as usize;
                assert!(i < parent.n_children as usize);
                search.edges.mv(parent.first_edge as usize + i)
            })
            .collect()
    }

    #[test]
    fn leaves_hold_the_positions_their_paths_lead_to_across_tree_reuse() {
        // Walks copy the position after a root move instead of playing it: the copies must
        // follow the root's expansion and every `advance`.
        let game = Game::new(Position::new(Variant::Atomic));
        let mut search = Search::new(&game, SearchConfig::default(), 11);
        let evaluator = RandomEvaluator { seed: 11 };
        let mut checked = 0;
        for _ in 0..6 {
            for _ in 0..40 {
                let leaves = search.gather(8).len();
                for leaf in search.pending() {
                    let mut pos = search.root_position;
                    for mv in path_moves(&search, leaf) {
                        pos.play_unchecked(mv);
                    }
                    assert_eq!(leaf.position, pos);
                    assert_eq!(leaf.position.hash(), pos.compute_hash());
                    checked += 1;
                }
                let requests: Vec<EvalRequest<'_>> =
                    search.pending().iter().map(Leaf::request).collect();
                let evals = evaluator.evaluate(&requests);
                search.apply(&evals);
                if leaves == 0 {
                    break;
                }
            }
            let Some(best) = search.best_move() else { break };
            search.advance(best);
        }
        assert!(checked > 1000, "{checked}");
    }

    #[test]
    fn leaves_count_the_repetitions_of_the_game_and_their_path() {
        // Few moves (kings, cornered knights, blocked pawns) shuffled out and back: the tree
        // below holds many repeated positions, and the half-move clock reaches into the game.
        let start = "n3k3/4p3/4P3/8/8/8/8/N3K3 w - - 10 30";
        let mut game = Game::new(Position::from_fen(start, Variant::Atomic).unwrap());
        for uci in ["e1d1", "e8d8", "d1e1", "d8e8", "a1b3"] {
            let m = game.position().parse_uci(uci).unwrap();
            game.play(m).unwrap();
        }
        // Two-fold repetitions stay leaves (with the default they end the walk as draws).
        let config = SearchConfig { twofold_draw: false, ..SearchConfig::default() };
        let mut search = Search::new(&game, config, 5);
        let evaluator = RandomEvaluator { seed: 5 };
        let (mut checked, mut repeated) = (0, 0);
        for _ in 0..1000 {
            search.gather(4);
            for leaf in search.pending() {
                // Every earlier position, both sides to move, within the half-move clock.
                let mut hashes = search.game_hashes.clone();
                let mut pos = search.root_position;
                for mv in path_moves(&search, leaf) {
                    hashes.push(pos.hash());
                    pos.play_unchecked(mv);
                }
                let window = pos.halfmoves() as usize;
                let expected =
                    hashes.iter().rev().take(window).filter(|&&h| h == pos.hash()).count();
                assert_eq!(leaf.repetitions, expected);
                checked += 1;
                repeated += usize::from(expected > 0);
            }
            let requests: Vec<EvalRequest<'_>> =
                search.pending().iter().map(Leaf::request).collect();
            let evals = evaluator.evaluate(&requests);
            search.apply(&evals);
        }
        assert!(checked > 2000 && repeated > 40, "{checked} leaves, {repeated} repeated");
    }

    /// The visits of every node of the tree add up: an expanded node's own evaluation and its
    /// children's visits (a proven node also counts the walks that stopped at it); and each
    /// leaf waiting for its evaluation holds one visit in flight on every node of its path,
    /// and its node (only its) is pending.
    fn check_counts(search: &Search) {
        let mut stack = vec![0 as NodeId];
        while let Some(id) = stack.pop() {
            let node = &search.nodes[id as usize];
            stack.extend(node.children().map(|c| c as NodeId));
            let below: u32 = search.nodes[node.children()].iter().map(|c| c.visits).sum();
            if node.expansion == Expansion::Expanded && node.proven == Proven::Unknown {
                assert_eq!(node.visits, 1 + below, "node {id}");
            } else if node.expansion == Expansion::Expanded {
                assert!(node.visits > below, "node {id}");
            }
            let paths = search.pending().iter().flat_map(|l| &l.path);
            let waiting = paths.filter(|&&p| p == id).count();
            assert_eq!(node.in_flight as usize, waiting, "node {id}");
            let is_leaf = search.pending().iter().any(|l| l.node == id);
            assert_eq!(node.expansion == Expansion::Pending, is_leaf, "node {id}");
        }
    }

    /// Every expanded node selects what the reference selects; below the root, the visited
    /// edges form a prefix (and only they have nodes) and the unvisited ones follow in
    /// descending order of prior. Returns the number of nodes checked.
    fn check_selection(search: &Search) -> usize {
        let mut checked = 0;
        // The nodes reachable from the root (the arena also holds blocks children moved out
        // of), each reached once: no two nodes share a child.
        let mut reached = vec![false; search.nodes.len()];
        let mut stack = vec![0 as NodeId];
        while let Some(id) = stack.pop() {
            assert!(!std::mem::replace(&mut reached[id as usize], true), "node {id} twice");
            let node = &search.nodes[id as usize];
            stack.extend(node.children().map(|c| c as NodeId));
            if node.n_edges == 0 {
                continue;
            }
            assert_eq!(search.select_edge(id), reference_select(search, id), "node {id}");
            if id == 0 {
                // The stored selection inputs of the root's children are up to date.
                let fresh = RootInputs::from_children(
                    search
                        .root_edges()
                        .map(|(e, c)| RootChild::new(e.prior, c, search.config.virtual_loss)),
                );
                assert_eq!(search.root_children, fresh);
                // Every walk scans the root's children: they all have nodes.
                assert_eq!(node.n_children, node.n_edges);
            } else {
                // The children are the visited edges' (a prefix) and the unvisited edges
                // follow in descending order of prior.
                let children = &search.nodes[node.children()];
                assert!(children.iter().all(Node::is_visited), "node {id}");
                let rest = &search.edges.packed(node.edges())[children.len()..];
                assert!(rest.windows(2).all(|w| w[0].prior >= w[1].prior), "node {id}");
            }
            assert!(node.n_children <= node.child_capacity, "node {id}");
            assert!(node.child_capacity <= node.n_edges, "node {id}");
            let block = node.first_child as usize + node.child_capacity as usize;
            assert!(block <= search.nodes.len(), "node {id}");
            checked += 1;
        }
        checked
    }
}
