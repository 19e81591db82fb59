//! Self-play settings (a section of the run config; every field has a default).

use serde::{Deserialize, Serialize};

/// Self-play settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SelfplayConfig {
    /// Worker threads (0 = one per CPU core).
    pub threads: usize,
    /// Games each worker plays at once (their leaves share one evaluation batch).
    pub games_per_worker: usize,
    /// How the workers' leaves reach the network: each worker evaluates its own batch on its
    /// own thread, or one batch a round holds every worker's leaves (see [`Batching`]).
    pub batching: Batching,
    /// Leaves gathered per tree per round (virtual loss spreads them).
    pub leaves_per_tree: usize,
    /// Visits of a full search (its move becomes a training target).
    pub visits: u32,
    /// Visits of a cheap search (playout-cap randomisation; not a training target).
    pub cheap_visits: u32,
    /// Probability that a move gets the full search.
    pub full_search_fraction: f64,
    /// Temperature for the first `temperature_plies` plies (PUCT; in the bomb variant with
    /// either root search: its move is drawn from the worlds' aggregate policy).
    pub temperature: f32,
    /// Plies played with `temperature`.
    pub temperature_plies: usize,
    /// Temperature afterwards (0 = most visited move).
    pub final_temperature: f32,
    /// Resign when the side to move's value (win − loss) stays below this...
    pub resign_threshold: f32,
    /// ...for this many of its own consecutive moves (0 disables resignation).
    pub resign_consecutive: usize,
    /// Fraction of games in which nobody resigns, to measure false resignations.
    pub resign_playthrough: f64,
    /// Games longer than this many plies are adjudicated a draw.
    pub max_plies: usize,
    /// Random legal plies played from the start position when no book is given.
    pub random_opening_plies: usize,
    /// Dirichlet noise concentration at the root.
    pub dirichlet_alpha: f32,
    /// Dirichlet noise weight at the root (full searches only).
    pub dirichlet_epsilon: f32,
    /// PUCT exploration constant `c_init`.
    pub c_init: f32,
    /// First-play-urgency reduction.
    pub fpu_reduction: f32,
    /// How the root is searched and what a full search records (see [`RootSearch`]).
    pub root_search: RootSearch,
    /// Gumbel: actions considered at the root (mctx: 16).
    pub gumbel_considered: u32,
    /// Gumbel: `c_visit` of `σ(q̂) = (c_visit + max N) · c_scale · q̂` (mctx: 50).
    pub gumbel_c_visit: f32,
    /// Gumbel: `c_scale` of the same (mctx: 0.1).
    pub gumbel_c_scale: f32,
    /// PUCT only: KataGo's forced playouts `k` in full searches (a root child with prior `P`
    /// gets at least `sqrt(k · P · N)` of `N` visits; KataGo: 2), with those visits pruned
    /// from the policy target again; 0 disables.
    pub forced_playouts: f32,
    /// The bomb variant only: worlds drawn from the belief per move (Perfect-Information
    /// Monte Carlo, `atomzero_pimc::Pimc`: each a full state in which the opponent's bomb is
    /// one the player cannot rule out; the move's visits are shared among them).
    pub determinizations: usize,
    /// Alpha-beta priors in self-play's searches (the engine's `AlphaBetaPriorNodes`,
    /// `atomzero_mcts::SearchConfig::ab_prior_nodes`): when a node reaches
    /// `ab_prior_visits` visits, a material alpha-beta search of this many nodes raises the
    /// priors of the one to three moves that keep the material, so a full search's policy
    /// target carries them (Gumbel's target is built from the raised priors). 0 (the
    /// default) is off.
    pub ab_prior_nodes: u32,
    /// Visits at which a node gets its alpha-beta check (with `ab_prior_nodes` > 0).
    pub ab_prior_visits: u32,
}

/// How self-play searches the root (`root_search` in the config).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RootSearch {
    /// AlphaZero: PUCT with Dirichlet noise on full searches; the move is sampled from the
    /// visit counts (temperature schedule); the policy target is the visit counts.
    #[default]
    Puct,
    /// Gumbel root search with sequential halving (Danihelka et al. 2022,
    /// `atomzero_mcts::gumbel`): the move played is the search's choice (the Gumbel draws
    /// are the exploration; Dirichlet noise and temperatures are not used); the policy target
    /// is `softmax(logit + σ(completed Q))` over all legal moves.
    Gumbel,
}

/// How the workers' leaves reach the network (`atomzero bench selfplay` measures both).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Batching {
    /// Each worker evaluates its games' leaves in one batch on its own thread; the workers'
    /// batches run concurrently. Keeps a CPU network busiest (measured: README).
    #[default]
    Worker,
    /// One batch a round with every worker's leaves, evaluated by the last worker to hand its
    /// leaves in while the others wait ([`crate::batcher::SharedBatcher`]): one large call to
    /// the network instead of one per worker.
    Shared,
}

impl Batching {
    /// The name in config files.
    pub fn name(self) -> &'static str {
        match self {
            Batching::Worker => "worker",
            Batching::Shared => "shared",
        }
    }
}

impl Default for SelfplayConfig {
    fn default() -> SelfplayConfig {
        SelfplayConfig {
            threads: 0,
            games_per_worker: 32,
            batching: Batching::Worker,
            leaves_per_tree: 4,
            visits: 200,
            cheap_visits: 40,
            full_search_fraction: 0.25,
            temperature: 1.0,
            temperature_plies: 12,
            final_temperature: 0.0,
            resign_threshold: -0.95,
            resign_consecutive: 3,
            resign_playthrough: 0.1,
            max_plies: 300,
            random_opening_plies: 2,
            dirichlet_alpha: 0.3,
            dirichlet_epsilon: 0.25,
            c_init: 1.25,
            fpu_reduction: 0.25,
            root_search: RootSearch::Puct,
            gumbel_considered: 16,
            gumbel_c_visit: 50.0,
            gumbel_c_scale: 0.1,
            forced_playouts: 0.0,
            determinizations: 4,
            ab_prior_nodes: 0,
            ab_prior_visits: 32,
        }
    }
}

impl SelfplayConfig {
    /// The search settings for a full (`noise`) or cheap search.
    pub fn search_config(&self, noise: bool, history: usize) -> atomzero_mcts::SearchConfig {
        atomzero_mcts::SearchConfig {
            c_init: self.c_init,
            fpu_reduction: self.fpu_reduction,
            dirichlet_alpha: self.dirichlet_alpha,
            dirichlet_epsilon: self.dirichlet_epsilon(noise),
            history,
            gumbel: self.gumbel(),
            forced_playouts: self.forced_playouts(noise),
            ab_prior_nodes: self.ab_prior_nodes,
            ab_prior_visits: self.ab_prior_visits,
            ..atomzero_mcts::SearchConfig::default()
        }
    }

    /// The Gumbel settings, if the root search is Gumbel (draws of scale 1: self-play).
    pub fn gumbel(&self) -> Option<atomzero_mcts::GumbelConfig> {
        (self.root_search == RootSearch::Gumbel).then_some(atomzero_mcts::GumbelConfig {
            considered: self.gumbel_considered,
            c_visit: self.gumbel_c_visit,
            c_scale: self.gumbel_c_scale,
            noise_scale: 1.0,
        })
    }

    /// The noise weight of a full (`full`) or cheap search.
    pub fn dirichlet_epsilon(&self, full: bool) -> f32 {
        if full && self.root_search == RootSearch::Puct { self.dirichlet_epsilon } else { 0.0 }
    }

    /// The forced-playout constant of a full (`full`) or cheap search.
    pub fn forced_playouts(&self, full: bool) -> f32 {
        if full && self.root_search == RootSearch::Puct { self.forced_playouts } else { 0.0 }
    }

    /// Checks the values; the message names the field.
    pub fn validate(&self) -> Result<(), String> {
        let check = |ok: bool, msg: &str| if ok { Ok(()) } else { Err(msg.to_string()) };
        check(self.games_per_worker >= 1, "selfplay.games_per_worker must be at least 1")?;
        check(self.leaves_per_tree >= 1, "selfplay.leaves_per_tree must be at least 1")?;
        check(self.visits >= 1, "selfplay.visits must be at least 1")?;
        check(self.cheap_visits >= 1, "selfplay.cheap_visits must be at least 1")?;
        check(
            (0.0..=1.0).contains(&self.full_search_fraction),
            "selfplay.full_search_fraction must be in [0, 1]",
        )?;
        check(
            (0.0..=1.0).contains(&self.resign_playthrough),
            "selfplay.resign_playthrough must be in [0, 1]",
        )?;
        check(self.max_plies >= 1, "selfplay.max_plies must be at least 1")?;
        check(
            self.forced_playouts.is_finite() && self.forced_playouts >= 0.0,
            "selfplay.forced_playouts must be a number >= 0",
        )?;
        check(
            finite_at_least(self.temperature, 0.0) && finite_at_least(self.final_temperature, 0.0),
            "selfplay temperatures must be numbers >= 0",
        )?;
        check(self.resign_threshold.is_finite(), "selfplay.resign_threshold must be a number")?;
        // The noise's Gamma sampler needs a positive finite shape (a huge negative one
        // recursed until the stack overflowed).
        check(
            self.dirichlet_alpha.is_finite() && self.dirichlet_alpha > 0.0,
            "selfplay.dirichlet_alpha must be a number > 0",
        )?;
        check(
            (0.0..=1.0).contains(&self.dirichlet_epsilon),
            "selfplay.dirichlet_epsilon must be in [0, 1]",
        )?;
        check(finite_at_least(self.c_init, 0.0), "selfplay.c_init must be a number >= 0")?;
        check(self.fpu_reduction.is_finite(), "selfplay.fpu_reduction must be a number")?;
        check(self.gumbel_considered >= 1, "selfplay.gumbel_considered must be at least 1")?;
        check(
            (1..=256).contains(&self.determinizations),
            "selfplay.determinizations must be from 1 to 256",
        )?;
        check(
            finite_at_least(self.gumbel_c_visit, 0.0) && finite_at_least(self.gumbel_c_scale, 0.0),
            "selfplay.gumbel_c_visit and gumbel_c_scale must be numbers >= 0",
        )?;
        check(
            self.ab_prior_nodes <= 100_000_000,
            "selfplay.ab_prior_nodes must be at most 100000000",
        )?;
        check(self.ab_prior_visits >= 1, "selfplay.ab_prior_visits must be at least 1")?;
        Ok(())
    }
}

/// `value` is a finite number of at least `min` (NaN and infinities are not).
fn finite_at_least(value: f32, min: f32) -> bool {
    value.is_finite() && value >= min
}
