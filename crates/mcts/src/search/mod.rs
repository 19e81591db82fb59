//! PUCT search with a gather/apply split.
//!
//! [`Search::gather`] walks down the tree (PUCT with virtual loss) and collects leaves to
//! evaluate; [`Search::apply`] expands them with the evaluations and backs the values up.
//! One thread can drive many searches and evaluate all their leaves in one batch. Terminal
//! positions are scored exactly and proven results propagate up (MCTS-solver), so the search
//! never walks into a forced king explosion once it has seen it.
//!
//! The search is one type, [`Search`], with one `impl` block per job (as KataGo's
//! `cpp/search/`):
//!
//! | file | job |
//! |---|---|
//! | `mod.rs` | the types, construction, [`Search::gather`], [`Search::apply`] (a leaf's expansion), [`Search::run`], root moves left out |
//! | `walk.rs` | one walk down the tree: new nodes, leaves with history and repetitions, exact results at terminal positions and forced lines |
//! | `select.rs` | PUCT selection (one pass below the root, the root's stored inputs, forced playouts) |
//! | `ab_priors.rs` | alpha-beta priors: a tactical check of the nodes the search returns to, raising the priors of the moves it singles out |
//! | `backup.rs` | backing values up, proofs (MCTS-solver) and the root's proof |
//! | `gumbel_root.rs` | the Gumbel root search: draws, sequential halving, its move, the improved policy |
//! | `results.rs` | what a search reports: root children and statistics, value, best move, sampling, PV |
//! | `reuse.rs` | the root's expansion (children's nodes, noise), its children's selection inputs, tree reuse ([`Search::advance`]) |
//! | `tests.rs` | tests of the internals (one-pass selection against the two-pass reference, ...) |

mod ab_priors;
mod backup;
mod gumbel_root;
mod results;
mod reuse;
mod select;
#[cfg(test)]
mod tests;
mod walk;

pub use ab_priors::{AB_PRIOR_MARGIN, AbPriorStats};
pub use results::ChildStats;

use crate::alphabeta::AlphaBeta;
use crate::config::SearchConfig;
use crate::evaluator::{EvalRequest, Evaluation, Evaluator};
use crate::gumbel::ActionStats;
use crate::lcb::RootSample;
use crate::rng::Rng;
use crate::root::RootInputs;
use crate::tactics;
use crate::tree::{EdgeId, Edges, Expansion, NO_NODE, Node, NodeId, Proven, flip_wdl};
use atomzero_rules::{Game, Move, MoveList, Position};

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
    /// What [`SearchConfig::quiescence_weight`] adds to its value (side to move's view).
    correction: f32,
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
            correction: 0.0,
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
    /// The alpha-beta search of [`SearchConfig::ab_prior_nodes`]'s checks (created at the
    /// first), and their counters.
    alphabeta: Option<Box<AlphaBeta>>,
    ab_stats: AbPriorStats,
    /// The deepest level of check ([`SearchConfig::ab_prior_levels`]) each node near the
    /// root has had above the first, by node; cleared by [`Search::advance`] (which renumbers
    /// the nodes and brings new ones within reach of the deeper checks).
    ab_levels_done: Vec<(NodeId, u8)>,
    /// The root's visits when this search began (0, or what [`Search::advance`] kept), for
    /// [`SearchConfig::ab_prior_playouts`].
    ab_search_start: u32,
    /// Whether alpha-beta checks may start ([`Search::set_alpha_beta_priors`]; `true` unless
    /// the caller turned them off for this search).
    ab_enabled: bool,
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
            alphabeta: None,
            ab_stats: AbPriorStats::default(),
            ab_levels_done: Vec::new(),
            ab_search_start: 0,
            ab_enabled: true,
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
        let wdl = corrected(sanitize(eval.wdl), leaf.correction);
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

    /// The statistics of the child of `node`'s edge `i` (no visits if it has none yet).
    fn stats(&self, node: &Node, i: usize) -> &Node {
        static UNVISITED: Node = Node::new();
        match node.child(i) {
            NO_NODE => &UNVISITED,
            child => &self.nodes[child as usize],
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

/// Whether `priors` never increase. One pass without early exit (it vectorizes).
#[inline]
fn descending(priors: &[f32]) -> bool {
    let Some(rest) = priors.get(1..) else { return true };
    priors.iter().zip(rest).map(|(&a, &b)| u32::from(a < b)).sum::<u32>() == 0
}

#[inline]
/// `wdl` (normalised) with `correction` added to its value `w − l`: the value clamped to
/// [−1, 1], the draw share kept where the new value leaves room for it.
fn corrected(wdl: [f32; 3], correction: f32) -> [f32; 3] {
    if correction == 0.0 {
        return wdl;
    }
    let value = (wdl[0] - wdl[2] + correction).clamp(-1.0, 1.0);
    let draw = wdl[1].min(1.0 - value.abs());
    [(1.0 - draw + value) / 2.0, draw, (1.0 - draw - value) / 2.0]
}

fn sanitize(wdl: [f32; 3]) -> [f32; 3] {
    let clean = |p: f32| if p.is_finite() && p > 0.0 { p } else { 0.0 };
    let [w, d, l] = [clean(wdl[0]), clean(wdl[1]), clean(wdl[2])];
    let sum = w + d + l;
    if sum > 0.0 { [w / sum, d / sum, l / sum] } else { [0.0, 1.0, 0.0] }
}
