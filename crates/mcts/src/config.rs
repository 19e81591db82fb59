//! Search settings. Defaults are AlphaZero's published constants where it has them.

pub use crate::gumbel::GumbelConfig;

/// PUCT search settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SearchConfig {
    /// Exploration constant at low visit counts (AlphaZero `c_init`).
    pub c_init: f32,
    /// Visit scale at which exploration grows logarithmically (AlphaZero `c_base`).
    pub c_base: f32,
    /// Weight of that growth: the exploration constant at a node of `N` visits is
    /// `c_init + c_factor · ln((N + c_base + 1) / c_base)`. AlphaZero: 1; lc0 plays with
    /// 3.894 (base 38,739), KataGo with 0.45 (base 500).
    pub c_factor: f32,
    /// First-play urgency: an unvisited child's value is the parent's minus this times the
    /// square root of the prior mass already visited (lc0's FPU reduction).
    pub fpu_reduction: f32,
    /// FPU reduction at the root (self-play noise makes the root special).
    pub fpu_reduction_root: f32,
    /// Dirichlet noise concentration at the root.
    pub dirichlet_alpha: f32,
    /// Weight of the noise in the root priors (0 disables noise).
    pub dirichlet_epsilon: f32,
    /// Value counted per in-flight visit while leaves of one tree are gathered (as losses).
    pub virtual_loss: f32,
    /// Score a position that repeats one already on the path from the root (or in the game)
    /// as a draw, instead of waiting for the third occurrence.
    pub twofold_draw: bool,
    /// Earlier positions handed to the evaluator with each leaf (the encoder's history).
    pub history: usize,
    /// Gumbel root search with sequential halving instead of PUCT at the root (see
    /// [`crate::gumbel`]); `None`: PUCT everywhere. Below the root the search stays PUCT.
    pub gumbel: Option<GumbelConfig>,
    /// KataGo's forced playouts at a PUCT root (Wu 2019, section 3.1): a root child with
    /// (noised) prior `P` is chosen while it has fewer than `sqrt(k · P · N)` of the root's `N`
    /// visits; `k` is this value (KataGo: 2), 0 disables. The forced visits are taken out of
    /// the training target again by [`crate::Search::pruned_root_children`]. Ignored by a
    /// Gumbel root.
    pub forced_playouts: f32,
    /// Prove a leaf lost for the player who moved into it, without evaluating it, when the
    /// side to move there can end the game at once by the variant's king rules
    /// ([`atomzero_rules::Position::winning_move`]: a blast that takes the enemy king). With
    /// it the search sees every one-move threat against a king as soon as it reaches the
    /// position that allows it.
    pub instant_wins: bool,
    /// Play the root child with the highest lower confidence bound, `z` = this many standard
    /// errors of its value, rather than simply the most visited one ([`crate::lcb`]; KataGo
    /// plays with 5); 0 disables. It changes only [`crate::Search::best_move`] (and the PV
    /// that starts with it), never the search.
    pub lcb_stdevs: f32,
    /// Prove leaves by short forced lines before evaluating them ([`crate::tactics`]): 2 marks
    /// a leaf whose every move lets the opponent explode the king at once as lost (two plies),
    /// 3 also a leaf whose side to move has a threat nothing parries as won (three plies);
    /// 0 (or 1) checks nothing beyond [`SearchConfig::instant_wins`].
    pub tactics: u8,
    /// Weight `α` of the implicit minimax value in selection (Lanctot, Winands, Pepels and
    /// Sturtevant, "Monte Carlo Tree Search with Heuristic Evaluations using Implicit Minimax
    /// Backups", 2014): every node also keeps the minimax value of the network's evaluations
    /// below it ([`crate::tree::Node::minimax`]), and a visited child is scored by
    /// `(1 − α) · Q + α · minimax` instead of `Q`. 0 (the default) is plain PUCT.
    pub minimax_weight: f32,
    /// Alpha-beta priors ([`crate::search`], `ab_priors.rs`): when a node reaches
    /// [`SearchConfig::ab_prior_visits`] visits, a tactical alpha-beta search of this many
    /// nodes ([`crate::alphabeta`]) looks at its position, and if it finds at most three moves
    /// that do not lose material or the king by force within its horizon (the others all
    /// scoring 1.5 pawns or more below its best), their priors are raised to at least
    /// [`SearchConfig::ab_prior_weight`] shared among them. Under a Gumbel root search
    /// ([`SearchConfig::gumbel`]) the root is instead checked once as each search begins,
    /// before its draws pick the actions considered, so the raised priors choose them and
    /// enter the improved policy. 0 (the default) is off.
    pub ab_prior_nodes: u32,
    /// Visits (completed or in flight) at which a node gets its alpha-beta check.
    pub ab_prior_visits: u32,
    /// Playouts of each search (from its start or the last [`crate::Search::advance`]) after
    /// which no alpha-beta check starts: the checks guide the first playouts, where a tactic
    /// the priors miss costs the most, and a long search spends its later playouts on the
    /// network instead. 0 (the default) checks throughout.
    pub ab_prior_playouts: u32,
    /// Checks a node gets as its visits grow: check `k` (from 0) comes at
    /// [`SearchConfig::ab_prior_visits`] · 8^k visits with [`SearchConfig::ab_prior_nodes`] ·
    /// 8^k nodes, so the nodes the search keeps returning to (the principal line and its
    /// rivals) are searched deeper, a fixed number of alpha-beta nodes per visit at every
    /// level. 1 (the default) is one check a node.
    pub ab_prior_levels: u8,
    /// Prior mass the moves an alpha-beta check singles out get at least, shared equally
    /// (the other moves' priors are scaled down to make room).
    pub ab_prior_weight: f32,
    /// Alpha-beta proofs: when a node's alpha-beta check (below the root) finds a game end by
    /// force within its horizon (the side to move wins, or every move loses), the node is
    /// proven as the MCTS-solver proves a terminal one, with the check's distance to the end,
    /// and the proof propagates up the tree. Off (the default): the check only raises priors.
    pub ab_prior_proofs: bool,
    /// Weight `λ` of the quiescence correction of a leaf's value (AlphaGo's mix of the value
    /// network with a fast evaluation, here a capture search): a new leaf's value becomes
    /// `v + λ · (tanh(q / s) − tanh(m / s))`, where `m` is the side to move's material, `q`
    /// what [`crate::alphabeta::AlphaBeta::quiescence_score`] says it keeps after the captures
    /// worth making, and `s` is [`SearchConfig::quiescence_scale`]. The correction is zero
    /// where no capture pays, so it adds only what the captures change. 0 (the default) is off.
    pub quiescence_weight: f32,
    /// The scale `s` (centipawns) of the quiescence correction.
    pub quiescence_scale: f32,
    /// KataGo's exploration scaled by each node's spread of values (`cpuctUtilityStdevScale`,
    /// KataGo pull request 449, 2021): the exploration term at a node is multiplied by
    /// `1 + s · (σ / σ₀ − 1)`, where `s` is this value, `σ₀` is
    /// [`SearchConfig::cpuct_stdev_prior`] and `σ` the standard deviation of the values
    /// (win − loss) its completed visits backed up, mixed with `σ₀` at the weight of
    /// [`SearchConfig::cpuct_stdev_prior_weight`] visits ([`crate::tree::Node::value_stdev`]).
    /// A node whose lines all agree explores less, one whose lines disagree (a tactic some
    /// lines find and others miss) more. KataGo plays with 0.85. The mean square it needs is
    /// kept in [`crate::tree::Node::plies`]'s bits, as the implicit minimax value is, so the
    /// two exclude each other: with [`SearchConfig::minimax_weight`] above 0 this is ignored.
    /// 0 (the default) is off.
    pub cpuct_stdev_scale: f32,
    /// The prior standard deviation `σ₀` of a node's values (KataGo: 0.4).
    pub cpuct_stdev_prior: f32,
    /// Visits' worth of weight the prior `σ₀` gets in a node's estimate (KataGo: 2).
    pub cpuct_stdev_prior_weight: f32,
}

impl Default for SearchConfig {
    fn default() -> SearchConfig {
        SearchConfig {
            c_init: 1.25,
            c_base: 19652.0,
            c_factor: 1.0,
            fpu_reduction: 0.25,
            fpu_reduction_root: 0.0,
            dirichlet_alpha: 0.3,
            dirichlet_epsilon: 0.25,
            virtual_loss: 1.0,
            twofold_draw: true,
            history: 0,
            gumbel: None,
            forced_playouts: 0.0,
            instant_wins: false,
            lcb_stdevs: 0.0,
            tactics: 0,
            minimax_weight: 0.0,
            ab_prior_nodes: 0,
            ab_prior_visits: 32,
            ab_prior_playouts: 0,
            ab_prior_levels: 1,
            ab_prior_weight: 0.5,
            ab_prior_proofs: false,
            quiescence_weight: 0.0,
            quiescence_scale: 400.0,
            cpuct_stdev_scale: 0.0,
            cpuct_stdev_prior: 0.4,
            cpuct_stdev_prior_weight: 2.0,
        }
    }
}

impl SearchConfig {
    /// Whether selection scales exploration by each node's spread of values
    /// ([`SearchConfig::cpuct_stdev_scale`]; never together with implicit minimax, whose value
    /// takes the same bits).
    pub fn scales_by_stdev(&self) -> bool {
        self.cpuct_stdev_scale > 0.0 && self.minimax_weight <= 0.0
    }

    /// The same settings without root noise (evaluation and engine play): no Dirichlet
    /// noise, Gumbel draws of scale 0 and no forced playouts.
    pub fn without_noise(self) -> SearchConfig {
        let gumbel = self.gumbel.map(|g| GumbelConfig { noise_scale: 0.0, ..g });
        SearchConfig { dirichlet_epsilon: 0.0, gumbel, forced_playouts: 0.0, ..self }
    }
}
