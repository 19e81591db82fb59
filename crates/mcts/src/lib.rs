//! # atomzero-mcts
//!
//! The search side of atomzero. No threads, no I/O: the search never calls a network
//! directly; callers batch [`EvalRequest`]s from many trees and hand them to an
//! [`Evaluator`]. [`Search::run`] is that loop for a lone search (gather, evaluate through
//! the [`Evaluator`] trait, apply).
//!
//! - [`Search`]: an arena tree with PUCT (AlphaZero's `c_init`/`c_base`), FPU reduction,
//!   Dirichlet noise at the root, WDL values, virtual loss, tree reuse, and exact scoring of
//!   terminal positions with proof propagation (MCTS-solver).
//! - Alpha-beta priors (`SearchConfig::ab_prior_nodes`): a short [`alphabeta`] search at the
//!   nodes the search returns to raises the priors of the moves it leaves unrefuted.
//! - [`Search::gather`] / [`Search::apply`]: the split that lets one thread drive many trees.
//! - [`gumbel`]: Gumbel root search with sequential halving and the improved policy
//!   (`softmax(logit + σ(completed Q))`) as the training target, as an alternative to PUCT
//!   at the root (`SearchConfig::gumbel`).
//! - [`cache`]: evaluations kept by position, so a transposition or the next move's search
//!   does not ask the network again (lc0's NNCache).
//! - [`lcb`]: the move to play by lower confidence bound (`SearchConfig::lcb_stdevs`).
//! - [`mate`]: the exact distance of a proven win or loss (`score mate N`), by a small
//!   search on the rules.
//!
//! The bomb variant's search under hidden information (Perfect-Information Monte Carlo over
//! worlds drawn from a belief) is `atomzero-pimc`, on top of this crate: the core search
//! knows nothing of the variant's beliefs.

pub mod alphabeta;
pub mod cache;
pub mod config;
pub mod evaluator;
pub mod gumbel;
pub mod lcb;
pub mod mate;
pub mod rng;
mod root;
pub mod search;
pub mod tactics;
pub mod tree;

pub use cache::{CacheStats, EvalCache};
pub use config::{GumbelConfig, SearchConfig};
pub use evaluator::{
    EvalRequest, Evaluation, Evaluations, Evaluator, PolicyTemperature, RandomEvaluator,
    UniformEvaluator,
};
pub use mate::{Mate, MateLimits, mate_distance};
pub use rng::Rng;
pub use search::{AB_PRIOR_MARGIN, AbPriorStats, ChildStats, Leaf, Search, pending_requests};
pub use tree::Proven;
