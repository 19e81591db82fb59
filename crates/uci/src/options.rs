//! The UCI options, each defined once (lc0's style): its UCI name, type, range and help live in
//! [`OptionId`]; [`Options`] holds the current values, prints the `option` lines for `uci` and
//! applies `setoption`.
//!
//! | option | type | meaning |
//! |---|---|---|
//! | `UCI_Variant` | combo | the rule variant of the next `position` (`atomic` first, as lichess-bot expects) |
//! | `UCI_Chess960` | check | castling written king-takes-rook and X-FEN castling rights |
//! | `Start` | combo | what `position startpos` means: `standard`, or `balanced` (the Balanced start's setup position, where the engine's move is White's removal of a pawn, written `@e2`) |
//! | `Threads` | spin | handed to the model loader (evaluator threads); the tree search itself runs on one thread |
//! | `Hash` | spin (MiB) | memory bound of the search tree; the search stops growing the tree when it is full |
//! | `Nodes` | spin | playouts per move when > 0 (still within the clock); 0 = use the time control |
//! | `MultiPV` | spin | number of root moves reported in `info` lines |
//! | `Move Overhead` | spin (ms) | safety margin subtracted from every time budget |
//! | `Ponder` | check | accepted for GUIs that set it; `go ponder` works either way |
//! | `UCI_ShowWDL` | check | `info` lines carry `wdl W D L` (permille for the side to move); off by default, as in Stockfish |
//! | `Model` | string | weights to load (through the embedder's loader) at the next `isready` or `go`; `<empty>` = none |
//! | `MinibatchSize` | spin | most leaves gathered (with virtual loss) for one network call; fewer when time is short (lc0's name) |
//! | `CPuct` | string (number) | PUCT exploration constant at low visit counts (AlphaZero's `c_init`) |
//! | `CPuctBase` | string (number) | visit scale of the exploration constant's growth (AlphaZero's `c_base`, 19652): at a node of `N` visits it is `CPuct + CPuctFactor · ln((N + CPuctBase + 1) / CPuctBase)` |
//! | `CPuctFactor` | string (number) | weight of that growth (AlphaZero 1; lc0 3.894 with base 38739, KataGo 0.45 with base 500) |
//! | `FpuReduction` | string (number) | first-play urgency below the root: an unvisited child's value is the parent's minus this times the square root of the visited prior mass |
//! | `FpuReductionAtRoot` | string (number) | the same at the root |
//! | `PolicyTemperature` | string (number) | softmax temperature of the network's priors (lc0's `PolicySoftmaxTemp`): above 1 the search spreads wider |
//! | `LcbStdevs` | string (number) | play the root move with the highest lower confidence bound of its value, this many standard errors below its mean (KataGo's `lcbStdevs`), instead of the most visited one (default 5); 0 = most visited |
//! | `AlphaBetaShare` | spin (0–90, %) | share of each move's time spent first on an alpha-beta search over material ([`atomzero_mcts::alphabeta`]); the root moves it finds 3 pawns or more worse than its best (a lost piece or king within its horizon) are left out of the MCTS; 0 = off |
//! | `AlphaBetaRootShare` | spin (0–50, %) | share of each move's time spent first on the same alpha-beta search of the root, which here only raises priors: when it leaves at most three root moves unrefuted (every other one 1.5 pawns or more below its best), their priors are raised to `AlphaBetaPriorWeight` between them, as `AlphaBetaPriorNodes`' checks do; nothing is left out; 0 = off |
//! | `NNCacheSize` | spin (entries) | network evaluations kept by position ([`atomzero_mcts::EvalCache`], lc0's name): a transposition or the next move's search does not ask the network again; 0 = no cache |
//! | `MinimaxWeight` | string (number, 0–1) | weight `α` of each node's implicit minimax value (the minimax of the network's evaluations below it, Lanctot et al. 2014) in selection: a visited child scores `(1 − α) · Q + α · minimax`; 0 (default) = plain PUCT |
//! | `AlphaBetaPriorNodes` | spin (nodes) | alpha-beta priors ([`atomzero_mcts::SearchConfig::ab_prior_nodes`]): a tactical alpha-beta search of this many nodes at each node reaching `AlphaBetaPriorVisits` visits; when it leaves at most three moves unrefuted, their priors are raised to `AlphaBetaPriorWeight` between them (default 1000; 0 = off) |
//! | `AlphaBetaPriorVisits` | spin | visits at which a node gets that check |
//! | `AlphaBetaPriorPlayouts` | spin | playouts of each search (from `go`, reused visits not counted) after which no check starts; 0 = no limit |
//! | `AlphaBetaPriorMaxTime` | spin (ms) | the longest move time budget whose search runs the checks: a move with more time to think (`go movetime`, or the clock's share) starts none, its playouts all going to the network; `go nodes`, `infinite` and a bare `go` keep them (default 400: on at 0.1 s, off at 0.5 s; 0 = no limit) |
//! | `AlphaBetaPriorLevels` | spin | checks a node gets as its visits grow, each at 8 times the visits and the nodes of the last ([`atomzero_mcts::SearchConfig::ab_prior_levels`]; default 1) |
//! | `AlphaBetaPriorWeight` | string (number, 0–1) | prior mass the moves the check singles out get at least |
//! | `AlphaBetaProofs` | check | a check that finds a forced game end (a king explosion or mate within its horizon, for either side) proves its node for the MCTS-solver ([`atomzero_mcts::SearchConfig::ab_prior_proofs`]) |
//! | `QuiescenceWeight` | string (number, 0–1) | weight `λ` of the quiescence correction of a new leaf's value ([`atomzero_mcts::SearchConfig::quiescence_weight`]): `v + λ · (tanh(q / s) − tanh(m / s))`, `m` the side to move's material and `q` what a capture search says it keeps; 0 (default) = off |
//! | `QuiescenceScale` | string (number, centipawns) | the scale `s` of that correction (default 400) |
//! | `CPuctUtilityStdevScale` | string (number, 0–10) | KataGo's dynamic exploration ([`atomzero_mcts::SearchConfig::cpuct_stdev_scale`]): the exploration term at a node is multiplied by `1 + s · (σ / σ₀ − 1)`, `σ` the spread of the values its visits backed up; 0 (default) = off; not together with `MinimaxWeight` |
//! | `CPuctUtilityStdevPrior` | string (number) | the prior spread `σ₀` of a node's values (KataGo's 0.4, the default) |
//! | `Tactics` | spin (0–3) | short forced lines proved at leaves before the network sees them ([`atomzero_mcts::tactics`]): 2 = a leaf whose every move lets the king explode at once is lost, 3 = also a threat nothing parries wins; 0 = only the one-move explosions |

use crate::worker::SharedEvaluator;
use atomzero_mcts::{PolicyTemperature, SearchConfig};
use atomzero_rules::{Start, Variant};
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// `PolicyTemperature`'s default: priors flattened as lc0 does in play (its `PolicySoftmaxTemp`
/// defaults to 1.359). Measured with the shipped network at 1,000 playouts a move (200 games
/// each, `docs/experiments.md`, "Engine settings"): 1.4 beat 1.0 by 83 ± 43 Elo, 1.8 beat
/// 1.4 by 47 ± 44, 2.5 lost to 1.8 by 33 ± 44.
pub const DEFAULT_POLICY_TEMPERATURE: f32 = 1.8;

/// `LcbStdevs`' default: KataGo's `lcbStdevs`. Measured with the shipped network at 1,000
/// playouts a move (`docs/experiments.md`, "Engine settings"): 5 against 0 (the most visited
/// move) scored 162 − 140 − 98 over 400 games, +19 ± 30 Elo: probably better, never clearly
/// worse, and KataGo plays with it.
pub const DEFAULT_LCB_STDEVS: f32 = 5.0;

/// `Tactics`' default (see [`atomzero_mcts::tactics`]): off until a match says otherwise.
pub const DEFAULT_TACTICS: u64 = 0;

/// `NNCacheSize`'s default: entries of the evaluation cache (rounded up to 262,144; about 200
/// bytes each with ~35 legal moves a position: some 50 MB when full). Measured at equal time
/// against the same engine without it (`docs/experiments.md`, "Change 3"): +31 ± 43 Elo at 0.1
/// s a move, +81 ± 61 at 0.5 s.
pub const DEFAULT_NN_CACHE_SIZE: u64 = 200_000;

/// `AlphaBetaPriorNodes`' default: a 1,000-node alpha-beta check at every node reaching
/// `AlphaBetaPriorVisits` (32) visits. Measured at equal time against the same engine without
/// it (`docs/experiments.md`, "Change 7"): +35 ± 42 Elo at 0.1 s a move, +33 ± 41 at 0.5 s.
pub const DEFAULT_AB_PRIOR_NODES: u64 = 1000;

/// `AlphaBetaPriorPlayouts`' default: no limit, until a match says otherwise.
pub const DEFAULT_AB_PRIOR_PLAYOUTS: u64 = 0;

/// `AlphaBetaPriorMaxTime`'s default (milliseconds): a move of more than 0.4 s runs no
/// alpha-beta checks. Measured against Fairy-Stockfish at equal time (`docs/experiments.md`,
/// "Change 26"): at 0.1 s the engine is the one it was (the checks earn their time there); at
/// 0.5 s it is the engine without checks, which scored 19.0% against the checks' 12.8% on a
/// fast Intel host (200 games each, paired) and 16.5% against 16.0% on Zen 3 (200 each,
/// paired: 27 games better, 27 worse).
pub const DEFAULT_AB_PRIOR_MAX_TIME_MS: u64 = 400;

/// `AlphaBetaPriorLevels`' default: one check a node, until a match says otherwise.
pub const DEFAULT_AB_PRIOR_LEVELS: u64 = 1;

/// `AlphaBetaProofs`' default: off until a match says otherwise.
pub const DEFAULT_AB_PROOFS: bool = false;

/// `AlphaBetaShare`'s default (percent of the move time): off until a match says otherwise.
pub const DEFAULT_ALPHABETA_SHARE: u64 = 0;

/// `AlphaBetaRootShare`'s default (percent of the move time): off until a match says
/// otherwise.
pub const DEFAULT_ALPHABETA_ROOT_SHARE: u64 = 0;

/// One UCI option.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OptionId {
    /// `UCI_Variant`.
    Variant,
    /// `UCI_Chess960`.
    Chess960,
    /// `Start`.
    Start,
    /// `Threads`.
    Threads,
    /// `Hash`.
    Hash,
    /// `Nodes`.
    Nodes,
    /// `MultiPV`.
    MultiPv,
    /// `Move Overhead`.
    MoveOverhead,
    /// `Ponder`.
    Ponder,
    /// `UCI_ShowWDL`.
    ShowWdl,
    /// `Model`.
    Model,
    /// `MinibatchSize`.
    MinibatchSize,
    /// `CPuct`.
    CPuct,
    /// `CPuctBase`.
    CPuctBase,
    /// `CPuctFactor`.
    CPuctFactor,
    /// `FpuReduction`.
    FpuReduction,
    /// `FpuReductionAtRoot`.
    FpuReductionAtRoot,
    /// `PolicyTemperature`.
    PolicyTemperature,
    /// `LcbStdevs`.
    LcbStdevs,
    /// `Tactics`.
    Tactics,
    /// `AlphaBetaShare`.
    AlphaBetaShare,
    /// `AlphaBetaRootShare`.
    AlphaBetaRootShare,
    /// `NNCacheSize`.
    NnCacheSize,
    /// `MinimaxWeight`.
    MinimaxWeight,
    /// `AlphaBetaPriorNodes`.
    AbPriorNodes,
    /// `AlphaBetaPriorVisits`.
    AbPriorVisits,
    /// `AlphaBetaPriorPlayouts`.
    AbPriorPlayouts,
    /// `AlphaBetaPriorMaxTime`.
    AbPriorMaxTime,
    /// `AlphaBetaPriorLevels`.
    AbPriorLevels,
    /// `AlphaBetaPriorWeight`.
    AbPriorWeight,
    /// `AlphaBetaProofs`.
    AbProofs,
    /// `QuiescenceWeight`.
    QuiescenceWeight,
    /// `QuiescenceScale`.
    QuiescenceScale,
    /// `CPuctUtilityStdevScale`.
    CPuctStdevScale,
    /// `CPuctUtilityStdevPrior`.
    CPuctStdevPrior,
}

/// The range of a `spin` option.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SpinRange {
    /// Smallest value.
    pub min: u64,
    /// Largest value.
    pub max: u64,
}

impl OptionId {
    /// Every option, in the order `uci` lists them.
    pub const ALL: [OptionId; 35] = [
        OptionId::Variant,
        OptionId::Chess960,
        OptionId::Start,
        OptionId::Threads,
        OptionId::Hash,
        OptionId::Nodes,
        OptionId::MultiPv,
        OptionId::MoveOverhead,
        OptionId::Ponder,
        OptionId::ShowWdl,
        OptionId::Model,
        OptionId::MinibatchSize,
        OptionId::CPuct,
        OptionId::CPuctBase,
        OptionId::CPuctFactor,
        OptionId::FpuReduction,
        OptionId::FpuReductionAtRoot,
        OptionId::PolicyTemperature,
        OptionId::LcbStdevs,
        OptionId::Tactics,
        OptionId::AlphaBetaShare,
        OptionId::AlphaBetaRootShare,
        OptionId::NnCacheSize,
        OptionId::MinimaxWeight,
        OptionId::AbPriorNodes,
        OptionId::AbPriorVisits,
        OptionId::AbPriorPlayouts,
        OptionId::AbPriorMaxTime,
        OptionId::AbPriorLevels,
        OptionId::AbPriorWeight,
        OptionId::AbProofs,
        OptionId::QuiescenceWeight,
        OptionId::QuiescenceScale,
        OptionId::CPuctStdevScale,
        OptionId::CPuctStdevPrior,
    ];

    /// The name GUIs use.
    pub const fn uci_name(self) -> &'static str {
        match self {
            OptionId::Variant => "UCI_Variant",
            OptionId::Chess960 => "UCI_Chess960",
            OptionId::Start => "Start",
            OptionId::Threads => "Threads",
            OptionId::Hash => "Hash",
            OptionId::Nodes => "Nodes",
            OptionId::MultiPv => "MultiPV",
            OptionId::MoveOverhead => "Move Overhead",
            OptionId::Ponder => "Ponder",
            OptionId::ShowWdl => "UCI_ShowWDL",
            OptionId::Model => "Model",
            OptionId::MinibatchSize => "MinibatchSize",
            OptionId::CPuct => "CPuct",
            OptionId::CPuctBase => "CPuctBase",
            OptionId::CPuctFactor => "CPuctFactor",
            OptionId::FpuReduction => "FpuReduction",
            OptionId::FpuReductionAtRoot => "FpuReductionAtRoot",
            OptionId::PolicyTemperature => "PolicyTemperature",
            OptionId::LcbStdevs => "LcbStdevs",
            OptionId::Tactics => "Tactics",
            OptionId::AlphaBetaShare => "AlphaBetaShare",
            OptionId::AlphaBetaRootShare => "AlphaBetaRootShare",
            OptionId::NnCacheSize => "NNCacheSize",
            OptionId::MinimaxWeight => "MinimaxWeight",
            OptionId::AbPriorNodes => "AlphaBetaPriorNodes",
            OptionId::AbPriorVisits => "AlphaBetaPriorVisits",
            OptionId::AbPriorPlayouts => "AlphaBetaPriorPlayouts",
            OptionId::AbPriorMaxTime => "AlphaBetaPriorMaxTime",
            OptionId::AbPriorLevels => "AlphaBetaPriorLevels",
            OptionId::AbPriorWeight => "AlphaBetaPriorWeight",
            OptionId::AbProofs => "AlphaBetaProofs",
            OptionId::QuiescenceWeight => "QuiescenceWeight",
            OptionId::QuiescenceScale => "QuiescenceScale",
            OptionId::CPuctStdevScale => "CPuctUtilityStdevScale",
            OptionId::CPuctStdevPrior => "CPuctUtilityStdevPrior",
        }
    }

    /// What the option does (for documentation and error messages).
    pub const fn help(self) -> &'static str {
        match self {
            OptionId::Variant => "rule variant of the next position",
            OptionId::Chess960 => "Chess960 castling notation (king takes rook)",
            OptionId::Start => "start of `position startpos`: standard or balanced (remove a pawn)",
            OptionId::Threads => "threads for the evaluator (passed to the model loader)",
            OptionId::Hash => "memory for the search tree in MiB",
            OptionId::Nodes => "playouts per move (0 = use the time control)",
            OptionId::MultiPv => "number of root moves reported",
            OptionId::MoveOverhead => "safety margin per move in milliseconds",
            OptionId::Ponder => "pondering allowed (go ponder works either way)",
            OptionId::ShowWdl => "info lines carry wdl (win/draw/loss permille)",
            OptionId::Model => "path of the network weights (<empty> = pure MCTS)",
            OptionId::MinibatchSize => "most leaves evaluated in one network call",
            OptionId::CPuct => "PUCT exploration constant",
            OptionId::CPuctBase => "visit scale of the exploration constant's growth",
            OptionId::CPuctFactor => "weight of the exploration constant's growth with visits",
            OptionId::FpuReduction => "first-play urgency reduction below the root",
            OptionId::FpuReductionAtRoot => "first-play urgency reduction at the root",
            OptionId::PolicyTemperature => "softmax temperature of the network's priors",
            OptionId::LcbStdevs => {
                "standard errors of the lower confidence bound the move is chosen by (0: most visited)"
            }
            OptionId::Tactics => "plies of forced king explosions proved at leaves (0, 2 or 3)",
            OptionId::AlphaBetaShare => {
                "percent of the move time for the alpha-beta check of the root moves (0: off)"
            }
            OptionId::AlphaBetaRootShare => {
                "percent of the move time for an alpha-beta check raising root priors (0: off)"
            }
            OptionId::NnCacheSize => "network evaluations kept by position (0: no cache)",
            OptionId::MinimaxWeight => {
                "weight of the implicit minimax value in selection (0: plain PUCT)"
            }
            OptionId::AbPriorNodes => {
                "alpha-beta nodes of the tactical check that raises priors (0: off)"
            }
            OptionId::AbPriorVisits => "visits at which a node gets the alpha-beta check",
            OptionId::AbPriorPlayouts => {
                "playouts of a search after which no alpha-beta check starts (0 = no limit)"
            }
            OptionId::AbPriorMaxTime => {
                "longest move time (ms) whose search runs alpha-beta checks (0 = no limit)"
            }
            OptionId::AbPriorLevels => {
                "alpha-beta checks a node gets, each at 8x the visits and nodes of the last"
            }
            OptionId::AbPriorWeight => "prior mass the moves the alpha-beta check keeps get",
            OptionId::AbProofs => "the alpha-beta check's forced game ends prove its node",
            OptionId::QuiescenceWeight => {
                "weight of the capture search's correction of a leaf's value (0: off)"
            }
            OptionId::QuiescenceScale => "centipawn scale of the capture search's correction",
            OptionId::CPuctStdevScale => {
                "scaling of exploration by the spread of each node's values (0: off)"
            }
            OptionId::CPuctStdevPrior => "prior spread of a node's values for that scaling",
        }
    }

    /// The range of a spin option.
    pub const fn range(self) -> Option<SpinRange> {
        match self {
            OptionId::Threads => Some(SpinRange { min: 1, max: 256 }),
            OptionId::Hash => Some(SpinRange { min: 1, max: 65_536 }),
            OptionId::Nodes => Some(SpinRange { min: 0, max: 1_000_000_000 }),
            OptionId::MultiPv => Some(SpinRange { min: 1, max: 256 }),
            OptionId::MoveOverhead => Some(SpinRange { min: 0, max: 10_000 }),
            OptionId::MinibatchSize => Some(SpinRange { min: 1, max: 1024 }),
            OptionId::Tactics => Some(SpinRange { min: 0, max: 3 }),
            OptionId::AlphaBetaShare => Some(SpinRange { min: 0, max: 90 }),
            OptionId::AlphaBetaRootShare => Some(SpinRange { min: 0, max: 50 }),
            OptionId::NnCacheSize => Some(SpinRange { min: 0, max: 100_000_000 }),
            OptionId::AbPriorNodes => Some(SpinRange { min: 0, max: 100_000_000 }),
            OptionId::AbPriorVisits => Some(SpinRange { min: 1, max: 1_000_000_000 }),
            OptionId::AbPriorPlayouts => Some(SpinRange { min: 0, max: 1_000_000_000 }),
            OptionId::AbPriorMaxTime => Some(SpinRange { min: 0, max: 86_400_000 }),
            OptionId::AbPriorLevels => Some(SpinRange { min: 1, max: 4 }),
            _ => None,
        }
    }

    /// Finds an option by its UCI name (case-insensitive, as the protocol asks).
    pub fn from_uci_name(name: &str) -> Option<OptionId> {
        OptionId::ALL.into_iter().find(|id| id.uci_name().eq_ignore_ascii_case(name.trim()))
    }

    /// What [`Options::set`] does to a spin value outside the range, said for an `info
    /// string` (`None` for other options and values in range): `Threads 0 is below its
    /// minimum 1: using 1`.
    pub fn clamp_note(self, value: &str) -> Option<String> {
        let range = self.range()?;
        let n: i128 = value.trim().parse().ok()?;
        let name = self.uci_name();
        if n < i128::from(range.min) {
            Some(format!("{name} {n} is below its minimum {}: using {}", range.min, range.min))
        } else if n > i128::from(range.max) {
            Some(format!("{name} {n} is above its maximum {}: using {}", range.max, range.max))
        } else {
            None
        }
    }
}

/// The current value of every option.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// `UCI_Variant`.
    pub variant: Variant,
    /// `UCI_Chess960`.
    pub chess960: bool,
    /// `Start`.
    pub start: Start,
    /// `Threads`.
    pub threads: u64,
    /// `Hash` in MiB.
    pub hash_mib: u64,
    /// `Nodes` (0 = use the time control).
    pub nodes: u64,
    /// `MultiPV`.
    pub multipv: u64,
    /// `Move Overhead` in milliseconds.
    pub move_overhead_ms: u64,
    /// `Ponder`.
    pub ponder: bool,
    /// `UCI_ShowWDL`.
    pub show_wdl: bool,
    /// `Model` (`None` = no model: the built-in fallback evaluator).
    pub model: Option<PathBuf>,
    /// `MinibatchSize`.
    pub minibatch_size: u64,
    /// `CPuct`.
    pub cpuct: f32,
    /// `CPuctBase`.
    pub cpuct_base: f32,
    /// `CPuctFactor`.
    pub cpuct_factor: f32,
    /// `FpuReduction`.
    pub fpu_reduction: f32,
    /// `FpuReductionAtRoot`.
    pub fpu_reduction_root: f32,
    /// `PolicyTemperature`.
    pub policy_temperature: f32,
    /// `LcbStdevs`.
    pub lcb_stdevs: f32,
    /// `Tactics` ([`SearchConfig::tactics`]).
    pub tactics: u64,
    /// `AlphaBetaShare` (percent).
    pub alphabeta_share: u64,
    /// `AlphaBetaRootShare` (percent).
    pub alphabeta_root_share: u64,
    /// `NNCacheSize` (entries; 0 = no cache).
    pub nn_cache_size: u64,
    /// `MinimaxWeight` ([`SearchConfig::minimax_weight`]).
    pub minimax_weight: f32,
    /// `AlphaBetaPriorNodes` ([`SearchConfig::ab_prior_nodes`]).
    pub ab_prior_nodes: u64,
    /// `AlphaBetaPriorVisits` ([`SearchConfig::ab_prior_visits`]).
    pub ab_prior_visits: u64,
    /// `AlphaBetaPriorPlayouts` ([`SearchConfig::ab_prior_playouts`]).
    pub ab_prior_playouts: u64,
    /// `AlphaBetaPriorMaxTime` (milliseconds; [`Options::alpha_beta_priors_for`]).
    pub ab_prior_max_time_ms: u64,
    /// `AlphaBetaPriorLevels` ([`SearchConfig::ab_prior_levels`]).
    pub ab_prior_levels: u64,
    /// `AlphaBetaPriorWeight` ([`SearchConfig::ab_prior_weight`]).
    pub ab_prior_weight: f32,
    /// `AlphaBetaProofs` ([`SearchConfig::ab_prior_proofs`]).
    pub ab_proofs: bool,
    /// `QuiescenceWeight` ([`SearchConfig::quiescence_weight`]).
    pub quiescence_weight: f32,
    /// `QuiescenceScale` ([`SearchConfig::quiescence_scale`]).
    pub quiescence_scale: f32,
    /// `CPuctUtilityStdevScale` ([`SearchConfig::cpuct_stdev_scale`]).
    pub cpuct_stdev_scale: f32,
    /// `CPuctUtilityStdevPrior` ([`SearchConfig::cpuct_stdev_prior`]).
    pub cpuct_stdev_prior: f32,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            variant: Variant::Atomic,
            chess960: false,
            start: Start::Standard,
            threads: 1,
            hash_mib: 256,
            nodes: 0,
            multipv: 1,
            move_overhead_ms: 50,
            ponder: false,
            show_wdl: false,
            model: None,
            minibatch_size: 4,
            cpuct: SearchConfig::default().c_init,
            cpuct_base: SearchConfig::default().c_base,
            cpuct_factor: SearchConfig::default().c_factor,
            fpu_reduction: SearchConfig::default().fpu_reduction,
            fpu_reduction_root: SearchConfig::default().fpu_reduction_root,
            policy_temperature: DEFAULT_POLICY_TEMPERATURE,
            lcb_stdevs: DEFAULT_LCB_STDEVS,
            tactics: DEFAULT_TACTICS,
            alphabeta_share: DEFAULT_ALPHABETA_SHARE,
            alphabeta_root_share: DEFAULT_ALPHABETA_ROOT_SHARE,
            nn_cache_size: DEFAULT_NN_CACHE_SIZE,
            minimax_weight: SearchConfig::default().minimax_weight,
            ab_prior_nodes: DEFAULT_AB_PRIOR_NODES,
            ab_prior_visits: u64::from(SearchConfig::default().ab_prior_visits),
            ab_prior_playouts: DEFAULT_AB_PRIOR_PLAYOUTS,
            ab_prior_max_time_ms: DEFAULT_AB_PRIOR_MAX_TIME_MS,
            ab_prior_levels: DEFAULT_AB_PRIOR_LEVELS,
            ab_prior_weight: SearchConfig::default().ab_prior_weight,
            ab_proofs: DEFAULT_AB_PROOFS,
            quiescence_weight: SearchConfig::default().quiescence_weight,
            quiescence_scale: SearchConfig::default().quiescence_scale,
            cpuct_stdev_scale: SearchConfig::default().cpuct_stdev_scale,
            cpuct_stdev_prior: SearchConfig::default().cpuct_stdev_prior,
        }
    }
}

/// A `setoption` that could not be applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OptionError {
    /// No option has this name.
    Unknown(String),
    /// The option needs a value and none was given.
    MissingValue(OptionId),
    /// The value does not fit the option's type.
    InvalidValue {
        /// The option.
        option: OptionId,
        /// The value given.
        value: String,
        /// What was expected.
        expected: String,
    },
}

impl fmt::Display for OptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptionError::Unknown(name) => {
                // The options whose names contain the one given, or are contained in it
                // (case-insensitive); the whole list is `uci`'s, too long for one line.
                let given = name.to_ascii_lowercase();
                let close: Vec<&str> = OptionId::ALL
                    .map(OptionId::uci_name)
                    .into_iter()
                    .filter(|known| {
                        let known = known.to_ascii_lowercase();
                        given.len() >= 3 && (known.contains(&given) || given.contains(&known))
                    })
                    .collect();
                if close.is_empty() {
                    write!(f, "unknown option '{name}' (`uci` lists every option)")
                } else {
                    write!(f, "unknown option '{name}' (did you mean {}?)", close.join(", "))
                }
            }
            OptionError::MissingValue(id) => write!(f, "option {} needs a value", id.uci_name()),
            OptionError::InvalidValue { option, value, expected } => {
                write!(
                    f,
                    "invalid value '{value}' for option {}: expected {expected}",
                    option.uci_name()
                )
            }
        }
    }
}

impl std::error::Error for OptionError {}

impl Options {
    /// Whether a search with the time budget `budget` (`None`: no time limit) runs the
    /// alpha-beta checks: always when `AlphaBetaPriorMaxTime` is 0, otherwise when there is
    /// no budget or it is at most that many milliseconds. A switch beside the settings, not
    /// one of them ([`atomzero_mcts::Search::set_alpha_beta_priors`]), so a change of move
    /// time keeps the tree.
    pub fn alpha_beta_priors_for(&self, budget: Option<Duration>) -> bool {
        self.ab_prior_max_time_ms == 0
            || budget.is_none_or(|b| b <= Duration::from_millis(self.ab_prior_max_time_ms))
    }

    /// The search settings these options set (`CPuct`, `CPuctBase`, `CPuctFactor`,
    /// `FpuReduction`, `FpuReductionAtRoot`,
    /// `LcbStdevs`) on top of `base`.
    pub fn search_config(&self, base: SearchConfig) -> SearchConfig {
        SearchConfig {
            c_init: self.cpuct,
            c_base: self.cpuct_base,
            c_factor: self.cpuct_factor,
            fpu_reduction: self.fpu_reduction,
            fpu_reduction_root: self.fpu_reduction_root,
            lcb_stdevs: self.lcb_stdevs,
            tactics: u8::try_from(self.tactics).unwrap_or(u8::MAX),
            minimax_weight: self.minimax_weight,
            ab_prior_nodes: u32::try_from(self.ab_prior_nodes).unwrap_or(u32::MAX),
            ab_prior_visits: u32::try_from(self.ab_prior_visits).unwrap_or(u32::MAX),
            ab_prior_playouts: u32::try_from(self.ab_prior_playouts).unwrap_or(u32::MAX),
            ab_prior_levels: u8::try_from(self.ab_prior_levels.clamp(1, 4)).unwrap_or(1),
            ab_prior_weight: self.ab_prior_weight,
            ab_prior_proofs: self.ab_proofs,
            quiescence_weight: self.quiescence_weight,
            quiescence_scale: self.quiescence_scale,
            cpuct_stdev_scale: self.cpuct_stdev_scale,
            cpuct_stdev_prior: self.cpuct_stdev_prior,
            ..base
        }
    }

    /// `evaluator` with the `PolicyTemperature` applied to its priors (itself at 1).
    pub fn tempered(&self, evaluator: SharedEvaluator) -> SharedEvaluator {
        if self.policy_temperature == 1.0 {
            evaluator
        } else {
            Arc::new(PolicyTemperature { inner: evaluator, temperature: self.policy_temperature })
        }
    }

    /// The `option name ... type ...` lines announcing these values as the defaults.
    pub fn declarations(&self) -> Vec<String> {
        OptionId::ALL
            .into_iter()
            .map(|id| {
                let name = id.uci_name();
                let check = |b: bool| format!("option name {name} type check default {b}");
                // Numbers are `string` options (UCI's spin is integers only).
                let number = |v: f32| format!("option name {name} type string default {v}");
                let spin = |v: u64| {
                    let r = id.range().unwrap_or(SpinRange { min: 0, max: u64::MAX });
                    format!("option name {name} type spin default {v} min {} max {}", r.min, r.max)
                };
                match id {
                    OptionId::Variant => {
                        let vars: String =
                            Variant::ALL.iter().map(|v| format!(" var {}", v.name())).collect();
                        format!("option name {name} type combo default {}{vars}", self.variant)
                    }
                    OptionId::Chess960 => check(self.chess960),
                    OptionId::Start => {
                        let vars: String =
                            Start::ALL.iter().map(|s| format!(" var {}", s.name())).collect();
                        format!("option name {name} type combo default {}{vars}", self.start)
                    }
                    OptionId::Ponder => check(self.ponder),
                    OptionId::ShowWdl => check(self.show_wdl),
                    OptionId::Threads => spin(self.threads),
                    OptionId::Hash => spin(self.hash_mib),
                    OptionId::Nodes => spin(self.nodes),
                    OptionId::MultiPv => spin(self.multipv),
                    OptionId::MoveOverhead => spin(self.move_overhead_ms),
                    OptionId::MinibatchSize => spin(self.minibatch_size),
                    OptionId::CPuct => number(self.cpuct),
                    OptionId::CPuctBase => number(self.cpuct_base),
                    OptionId::CPuctFactor => number(self.cpuct_factor),
                    OptionId::FpuReduction => number(self.fpu_reduction),
                    OptionId::FpuReductionAtRoot => number(self.fpu_reduction_root),
                    OptionId::PolicyTemperature => number(self.policy_temperature),
                    OptionId::LcbStdevs => number(self.lcb_stdevs),
                    OptionId::Tactics => spin(self.tactics),
                    OptionId::AlphaBetaShare => spin(self.alphabeta_share),
                    OptionId::AlphaBetaRootShare => spin(self.alphabeta_root_share),
                    OptionId::NnCacheSize => spin(self.nn_cache_size),
                    OptionId::MinimaxWeight => number(self.minimax_weight),
                    OptionId::AbPriorNodes => spin(self.ab_prior_nodes),
                    OptionId::AbPriorVisits => spin(self.ab_prior_visits),
                    OptionId::AbPriorPlayouts => spin(self.ab_prior_playouts),
                    OptionId::AbPriorMaxTime => spin(self.ab_prior_max_time_ms),
                    OptionId::AbPriorLevels => spin(self.ab_prior_levels),
                    OptionId::AbPriorWeight => number(self.ab_prior_weight),
                    OptionId::AbProofs => check(self.ab_proofs),
                    OptionId::QuiescenceWeight => number(self.quiescence_weight),
                    OptionId::QuiescenceScale => number(self.quiescence_scale),
                    OptionId::CPuctStdevScale => number(self.cpuct_stdev_scale),
                    OptionId::CPuctStdevPrior => number(self.cpuct_stdev_prior),
                    OptionId::Model => {
                        let default = self
                            .model
                            .as_ref()
                            .map_or_else(|| "<empty>".to_string(), |p| p.display().to_string());
                        format!("option name {name} type string default {default}")
                    }
                }
            })
            .collect()
    }

    /// Applies `setoption name <name> [value <value>]` and returns the option changed. Spin
    /// values outside the range are clamped into it (the engine says so with
    /// [`OptionId::clamp_note`]); a check's value is `true` or `false`; a
    /// `Model` of `<empty>` or nothing clears the model.
    pub fn set(&mut self, name: &str, value: Option<&str>) -> Result<OptionId, OptionError> {
        // A name may be arbitrarily long: the error quotes its start only.
        let id = OptionId::from_uci_name(name).ok_or_else(|| {
            OptionError::Unknown(if name.chars().count() > 64 {
                format!("{}...", name.chars().take(64).collect::<String>())
            } else {
                name.to_string()
            })
        })?;
        let value = value.map(str::trim);
        let invalid = |value: &str, expected: String| OptionError::InvalidValue {
            option: id,
            value: value.chars().take(64).collect(),
            expected,
        };
        let required = || value.filter(|v| !v.is_empty()).ok_or(OptionError::MissingValue(id));
        let check = || -> Result<bool, OptionError> {
            let v = required()?;
            match v.to_ascii_lowercase().as_str() {
                "true" => Ok(true),
                "false" => Ok(false),
                _ => Err(invalid(v, "true or false".into())),
            }
        };
        let spin = || -> Result<u64, OptionError> {
            let v = required()?;
            let range = id.range().unwrap_or(SpinRange { min: 0, max: u64::MAX });
            let n: i128 = v.parse().map_err(|_| {
                invalid(v, format!("an integer from {} to {}", range.min, range.max))
            })?;
            Ok(n.clamp(i128::from(range.min), i128::from(range.max)) as u64)
        };
        // A finite number in [min, max] (a string option: UCI's spin is integer-only).
        let number = |min: f32, max: f32| -> Result<f32, OptionError> {
            let v = required()?;
            v.parse::<f32>()
                .ok()
                .filter(|x| (min..=max).contains(x))
                .ok_or_else(|| invalid(v, format!("a number from {min} to {max}")))
        };
        match id {
            OptionId::Variant => {
                let v = required()?;
                let all = || Variant::ALL.map(Variant::name).join(", ");
                let variant = Variant::from_name(v).ok_or_else(|| {
                    // Standard chess (python-chess asks for `chess`; lichess-bot's default
                    // variant is `standard`) gets a reason, not only the list.
                    let standard = ["chess", "standard", "chess960", "fromposition"]
                        .iter()
                        .any(|name| v.eq_ignore_ascii_case(name));
                    let why = if standard {
                        " (atomzero plays atomic chess and its variants, not standard chess)"
                    } else {
                        ""
                    };
                    invalid(v, format!("one of {}{why}", all()))
                })?;
                // The bomb variant (hidden information) is not played by the engine yet.
                self.variant = variant
                    .require_perfect_information("atomzero uci")
                    .map_err(|e| invalid(v, format!("one of {} ({e})", all())))?;
            }
            OptionId::Chess960 => self.chess960 = check()?,
            OptionId::Start => {
                let v = required()?;
                self.start = Start::from_name(v)
                    .ok_or_else(|| invalid(v, format!("one of {}", Start::names())))?;
            }
            OptionId::Ponder => self.ponder = check()?,
            OptionId::ShowWdl => self.show_wdl = check()?,
            OptionId::Threads => self.threads = spin()?,
            OptionId::Hash => self.hash_mib = spin()?,
            OptionId::Nodes => self.nodes = spin()?,
            OptionId::MultiPv => self.multipv = spin()?,
            OptionId::MoveOverhead => self.move_overhead_ms = spin()?,
            OptionId::MinibatchSize => self.minibatch_size = spin()?,
            OptionId::CPuct => self.cpuct = number(0.01, 100.0)?,
            OptionId::CPuctBase => self.cpuct_base = number(1.0, 1e9)?,
            OptionId::CPuctFactor => self.cpuct_factor = number(0.0, 100.0)?,
            OptionId::FpuReduction => self.fpu_reduction = number(0.0, 10.0)?,
            OptionId::FpuReductionAtRoot => self.fpu_reduction_root = number(0.0, 10.0)?,
            OptionId::PolicyTemperature => self.policy_temperature = number(0.1, 10.0)?,
            OptionId::LcbStdevs => self.lcb_stdevs = number(0.0, 100.0)?,
            OptionId::Tactics => self.tactics = spin()?,
            OptionId::AlphaBetaShare => self.alphabeta_share = spin()?,
            OptionId::AlphaBetaRootShare => self.alphabeta_root_share = spin()?,
            OptionId::NnCacheSize => self.nn_cache_size = spin()?,
            OptionId::MinimaxWeight => {
                let weight = number(0.0, 1.0)?;
                if weight > 0.0 && self.cpuct_stdev_scale > 0.0 {
                    return Err(invalid(
                        value.unwrap_or_default(),
                        "0 while CPuctUtilityStdevScale is on (the two keep a node's figures \
                         in the same bits)"
                            .into(),
                    ));
                }
                self.minimax_weight = weight;
            }
            OptionId::AbPriorNodes => self.ab_prior_nodes = spin()?,
            OptionId::AbPriorVisits => self.ab_prior_visits = spin()?,
            OptionId::AbPriorPlayouts => self.ab_prior_playouts = spin()?,
            OptionId::AbPriorMaxTime => self.ab_prior_max_time_ms = spin()?,
            OptionId::AbPriorLevels => self.ab_prior_levels = spin()?,
            OptionId::AbPriorWeight => self.ab_prior_weight = number(0.0, 1.0)?,
            OptionId::AbProofs => self.ab_proofs = check()?,
            OptionId::QuiescenceWeight => self.quiescence_weight = number(0.0, 1.0)?,
            OptionId::QuiescenceScale => self.quiescence_scale = number(1.0, 100_000.0)?,
            OptionId::CPuctStdevScale => {
                let scale = number(0.0, 10.0)?;
                if scale > 0.0 && self.minimax_weight > 0.0 {
                    return Err(invalid(
                        value.unwrap_or_default(),
                        "0 while MinimaxWeight is on (the two keep a node's figures in the \
                         same bits)"
                            .into(),
                    ));
                }
                self.cpuct_stdev_scale = scale;
            }
            OptionId::CPuctStdevPrior => self.cpuct_stdev_prior = number(0.01, 10.0)?,
            OptionId::Model => {
                self.model = match value {
                    None | Some("" | "<empty>") => None,
                    Some(path) => Some(PathBuf::from(path)),
                };
            }
        }
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_option_is_named_with_the_options_close_to_it() {
        let mut o = Options::default();
        let error = o.set("Quiescence", Some("1")).unwrap_err();
        assert_eq!(
            error.to_string(),
            "unknown option 'Quiescence' (did you mean QuiescenceWeight, QuiescenceScale?)"
        );
        let error = o.set("NoSuchOption", Some("3")).unwrap_err();
        assert_eq!(error.to_string(), "unknown option 'NoSuchOption' (`uci` lists every option)");
        assert!(o.set("hashes", Some("3")).unwrap_err().to_string().contains("Hash"));
    }

    #[test]
    fn the_quiescence_options_reach_the_search_within_their_ranges() {
        let mut o = Options::default();
        let base = SearchConfig::default();
        assert_eq!(o.search_config(base).quiescence_weight, 0.0);
        assert_eq!(o.set("QuiescenceWeight", Some("0.3")), Ok(OptionId::QuiescenceWeight));
        assert_eq!(o.set("quiescencescale", Some("250")), Ok(OptionId::QuiescenceScale));
        let config = o.search_config(base);
        assert_eq!((config.quiescence_weight, config.quiescence_scale), (0.3, 250.0));
        for bad in ["-0.1", "1.5", "x"] {
            assert!(o.set("QuiescenceWeight", Some(bad)).is_err(), "{bad}");
        }
        assert!(o.set("QuiescenceScale", Some("0")).is_err());
        assert_eq!(o.search_config(base).quiescence_weight, 0.3);
        let lines = o.declarations();
        assert!(lines.iter().any(|l| l == "option name QuiescenceScale type string default 250"));
    }

    #[test]
    fn the_stdev_scaling_reaches_the_search_and_refuses_implicit_minimax() {
        let mut o = Options::default();
        let base = SearchConfig::default();
        assert_eq!(o.search_config(base).cpuct_stdev_scale, 0.0);
        assert_eq!(o.set("cpuctutilitystdevscale", Some("0.85")), Ok(OptionId::CPuctStdevScale));
        assert_eq!(o.set("CPuctUtilityStdevPrior", Some("0.3")), Ok(OptionId::CPuctStdevPrior));
        let config = o.search_config(base);
        assert_eq!((config.cpuct_stdev_scale, config.cpuct_stdev_prior), (0.85, 0.3));
        assert!(config.scales_by_stdev());
        for bad in ["-0.1", "11", "x"] {
            assert!(o.set("CPuctUtilityStdevScale", Some(bad)).is_err(), "{bad}");
        }
        assert!(o.set("CPuctUtilityStdevPrior", Some("0")).is_err());
        // The two keep their figures in the same bits of a node: one at a time.
        let error = o.set("MinimaxWeight", Some("0.2")).unwrap_err().to_string();
        assert!(error.contains("CPuctUtilityStdevScale"), "{error}");
        assert_eq!(o.search_config(base).minimax_weight, 0.0);
        assert_eq!(o.set("CPuctUtilityStdevScale", Some("0")), Ok(OptionId::CPuctStdevScale));
        assert_eq!(o.set("MinimaxWeight", Some("0.2")), Ok(OptionId::MinimaxWeight));
        assert!(o.set("CPuctUtilityStdevScale", Some("0.5")).is_err());
        let lines = o.declarations();
        assert!(
            lines.iter().any(|l| l == "option name CPuctUtilityStdevPrior type string default 0.3")
        );
    }

    #[test]
    fn the_minimax_weight_reaches_the_search_within_its_range() {
        let mut o = Options::default();
        let base = SearchConfig::default();
        assert_eq!(o.search_config(base).minimax_weight, 0.0);
        assert_eq!(o.set("minimaxweight", Some("0.1")), Ok(OptionId::MinimaxWeight));
        assert_eq!(o.search_config(base).minimax_weight, 0.1);
        for bad in ["-0.1", "1.5", "nan", "x"] {
            assert!(o.set("MinimaxWeight", Some(bad)).is_err(), "{bad}");
        }
        assert_eq!(o.search_config(base).minimax_weight, 0.1);
        let lines = o.declarations();
        assert!(lines.iter().any(|l| l == "option name MinimaxWeight type string default 0.1"));
    }

    #[test]
    fn the_alpha_beta_prior_options_reach_the_search() {
        let mut o = Options::default();
        let base = SearchConfig::default();
        let default = o.search_config(base);
        assert_eq!((default.ab_prior_nodes, default.ab_prior_visits), (1000, 32), "the engine's");
        assert_eq!(o.set("AlphaBetaPriorNodes", Some("0")), Ok(OptionId::AbPriorNodes));
        assert_eq!(o.search_config(base).ab_prior_nodes, 0, "off");
        assert_eq!(o.set("AlphaBetaPriorNodes", Some("1000")), Ok(OptionId::AbPriorNodes));
        assert_eq!(o.set("alphabetapriorvisits", Some("64")), Ok(OptionId::AbPriorVisits));
        assert_eq!(o.set("AlphaBetaPriorWeight", Some("0.3")), Ok(OptionId::AbPriorWeight));
        let config = o.search_config(base);
        assert_eq!((config.ab_prior_nodes, config.ab_prior_visits), (1000, 64));
        assert_eq!(config.ab_prior_weight, 0.3);
        assert_eq!(config.ab_prior_playouts, 0, "no limit by default");
        assert_eq!(o.set("AlphaBetaPriorPlayouts", Some("4096")), Ok(OptionId::AbPriorPlayouts));
        assert_eq!(o.search_config(base).ab_prior_playouts, 4096);
        let (short, long) = (Duration::from_millis(100), Duration::from_millis(500));
        assert!(o.alpha_beta_priors_for(Some(short)), "0.1 s keeps the checks by default");
        assert!(!o.alpha_beta_priors_for(Some(long)), "0.5 s has none by default");
        assert_eq!(o.set("AlphaBetaPriorMaxTime", Some("250")), Ok(OptionId::AbPriorMaxTime));
        assert!(o.alpha_beta_priors_for(Some(short)), "a short move keeps the checks");
        assert!(o.alpha_beta_priors_for(Some(Duration::from_millis(250))), "the limit itself");
        assert!(!o.alpha_beta_priors_for(Some(long)), "a long move has none");
        assert!(o.alpha_beta_priors_for(None), "no time budget: kept");
        assert!(o.set("AlphaBetaPriorMaxTime", Some("x")).is_err());
        // Out-of-range spins clamp, as Stockfish's do: -1 is 0, no limit.
        assert_eq!(o.set("AlphaBetaPriorMaxTime", Some("-1")), Ok(OptionId::AbPriorMaxTime));
        assert!(o.alpha_beta_priors_for(Some(long)), "clamped to 0: no limit");
        for bad in ["-0.1", "1.5", "nan", "x"] {
            assert!(o.set("AlphaBetaPriorWeight", Some(bad)).is_err(), "{bad}");
        }
        assert!(!config.ab_prior_proofs, "off by default");
        assert_eq!(o.set("AlphaBetaProofs", Some("true")), Ok(OptionId::AbProofs));
        assert!(o.search_config(base).ab_prior_proofs);
        assert!(o.set("AlphaBetaProofs", Some("1")).is_err());
        assert!(
            Options::default()
                .declarations()
                .iter()
                .any(|l| l == "option name AlphaBetaProofs type check default false")
        );
        // Visits below 1 clamp to 1.
        assert_eq!(o.set("AlphaBetaPriorVisits", Some("0")), Ok(OptionId::AbPriorVisits));
        assert_eq!(o.search_config(base).ab_prior_visits, 1);
        // Levels: 1 by default, clamped to 1..=4 as spins are, a non-number refused.
        assert_eq!(o.search_config(base).ab_prior_levels, 1);
        assert_eq!(o.set("AlphaBetaPriorLevels", Some("3")), Ok(OptionId::AbPriorLevels));
        assert_eq!(o.search_config(base).ab_prior_levels, 3);
        assert!(o.set("AlphaBetaPriorLevels", Some("deep")).is_err());
        assert_eq!(o.search_config(base).ab_prior_levels, 3, "a refused value changes nothing");
        assert_eq!(o.set("AlphaBetaPriorLevels", Some("9")), Ok(OptionId::AbPriorLevels));
        assert_eq!(o.search_config(base).ab_prior_levels, 4);
        assert_eq!(o.set("AlphaBetaPriorLevels", Some("0")), Ok(OptionId::AbPriorLevels));
        assert_eq!(o.search_config(base).ab_prior_levels, 1);
        assert!(
            o.declarations()
                .iter()
                .any(|l| l == "option name AlphaBetaPriorLevels type spin default 1 min 1 max 4")
        );
        let lines = o.declarations();
        assert!(
            lines.iter().any(|l| l == "option name AlphaBetaPriorWeight type string default 0.3")
        );
        assert!(
            lines.iter().any(|l| l
                == "option name AlphaBetaPriorNodes type spin default 1000 min 0 max 100000000")
        );
    }

    #[test]
    fn the_exploration_growth_options_reach_the_search() {
        let mut o = Options::default();
        let base = SearchConfig::default();
        let default = o.search_config(base);
        assert_eq!((default.c_base, default.c_factor), (19652.0, 1.0));
        assert_eq!(o.set("CPuctBase", Some("500")), Ok(OptionId::CPuctBase));
        assert_eq!(o.set("cpuctfactor", Some("0.45")), Ok(OptionId::CPuctFactor));
        let config = o.search_config(base);
        assert_eq!((config.c_base, config.c_factor), (500.0, 0.45));
        for bad in ["0", "-3", "nan", "x"] {
            assert!(o.set("CPuctBase", Some(bad)).is_err(), "{bad}");
        }
        assert!(o.set("CPuctFactor", Some("-1")).is_err());
        let lines = o.declarations();
        assert!(lines.iter().any(|l| l == "option name CPuctFactor type string default 0.45"));
    }

    #[test]
    fn declarations_list_atomic_first_and_every_variant() {
        let lines = Options::default().declarations();
        let variant = &lines[0];
        assert!(
            variant.starts_with("option name UCI_Variant type combo default atomic var atomic ")
        );
        for v in Variant::ALL {
            assert!(variant.contains(&format!(" var {}", v.name())), "{variant}");
        }
        assert!(lines.iter().any(|l| l == "option name Model type string default <empty>"));
        assert!(lines.iter().any(
            |l| l == "option name Start type combo default standard var standard var balanced"
        ));
        assert!(
            lines.iter().any(|l| l == "option name Nodes type spin default 0 min 0 max 1000000000")
        );
        assert!(lines.iter().any(|l| l == "option name CPuct type string default 1.25"));
        assert!(lines.iter().any(|l| l == "option name FpuReduction type string default 0.25"));
        assert!(lines.iter().any(|l| l == "option name FpuReductionAtRoot type string default 0"));
        assert!(lines.iter().any(|l| l == "option name PolicyTemperature type string default 1.8"));
        assert!(lines.iter().any(|l| l == "option name LcbStdevs type string default 5"));
        assert!(lines.iter().any(|l| l == "option name UCI_ShowWDL type check default false"));
    }

    #[test]
    fn set_parses_clamps_and_rejects() {
        let mut o = Options::default();
        assert_eq!(o.set("uci_variant", Some("NoCheckAtomic")), Ok(OptionId::Variant));
        assert_eq!(o.variant, Variant::NoCheckAtomic);
        o.set("Threads", Some("100000")).unwrap();
        assert_eq!(o.threads, 256);
        o.set("Move Overhead", Some("-5")).unwrap();
        assert_eq!(o.move_overhead_ms, 0);
        o.set("UCI_Chess960", Some("TRUE")).unwrap();
        assert!(o.chess960);
        assert!(!o.show_wdl);
        assert_eq!(o.set("uci_showwdl", Some("true")), Ok(OptionId::ShowWdl));
        assert!(o.show_wdl);
        // No Syzygy probing: the option is not offered, so a GUI that sets it hears so.
        assert!(matches!(o.set("SyzygyPath", Some("./syzygy")), Err(OptionError::Unknown(_))));
        o.set("Model", Some("/tmp/my net.safetensors")).unwrap();
        assert_eq!(o.model, Some(PathBuf::from("/tmp/my net.safetensors")));
        o.set("Model", Some("<empty>")).unwrap();
        assert_eq!(o.model, None);
        assert!(matches!(o.set("Hash", Some("lots")), Err(OptionError::InvalidValue { .. })));
        let err = o.set("UCI_Variant", Some("chess")).unwrap_err().to_string();
        assert!(err.contains("atomic") && err.contains("not standard chess"), "{err}");
        assert_eq!(o.set("Hash", None), Err(OptionError::MissingValue(OptionId::Hash)));
        assert!(matches!(o.set("Contempt", Some("0")), Err(OptionError::Unknown(_))));
        o.set("start", Some("Balanced")).unwrap();
        assert_eq!(o.start, Start::Balanced);
        assert!(matches!(o.set("Start", Some("even")), Err(OptionError::InvalidValue { .. })));
        o.set("MinibatchSize", Some("5000")).unwrap();
        assert_eq!(o.minibatch_size, 1024);
        o.set("cpuct", Some("2.5")).unwrap();
        assert_eq!(o.cpuct, 2.5);
        o.set("FpuReduction", Some("0")).unwrap();
        assert_eq!(o.fpu_reduction, 0.0);
        for bad in ["-1", "nan", "inf", "1e9", "two"] {
            assert!(matches!(o.set("CPuct", Some(bad)), Err(OptionError::InvalidValue { .. })));
        }
        assert_eq!(o.cpuct, 2.5, "unchanged by bad values");
        o.set("PolicyTemperature", Some("1.5")).unwrap();
        assert_eq!(o.policy_temperature, 1.5);
        assert!(o.set("PolicyTemperature", Some("0")).is_err());
        o.set("LcbStdevs", Some("0")).unwrap();
        assert_eq!(o.lcb_stdevs, 0.0);
        assert!(o.set("LcbStdevs", Some("-1")).is_err());
    }

    #[test]
    fn the_bomb_variant_is_refused_not_played_as_chess() {
        let mut o = Options::default();
        let err = o.set("UCI_Variant", Some("bomb")).unwrap_err().to_string();
        assert!(err.contains("the bomb variant is not supported by atomzero uci yet"), "{err}");
        assert_eq!(o.variant, Variant::Atomic, "unchanged");
        assert!(!o.declarations()[0].contains("bomb"));
    }
}
