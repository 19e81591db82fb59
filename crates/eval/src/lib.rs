//! # atomzero-eval
//!
//! Matches between players and what they tell: who is stronger, by how much, and whether a new
//! network should replace the best one.
//!
//! - Players ([`Player`], created per game from a [`PlayerSpec`]): network + MCTS
//!   ([`MctsPlayer`]), the raw policy ([`PolicyPlayer`]), the fixed baselines `random`,
//!   [`greedy`] and [`alphabeta`], and any external UCI engine ([`uci_engine`]). Networks are
//!   plain [`atomzero_mcts::Evaluator`]s loaded through a [`ModelLoader`] the binary provides,
//!   so this crate does not depend on Burn.
//! - Matches ([`run_match`]): paired openings ([`Openings`]: EPD book, random balanced plies,
//!   or the start position), threads, max-ply adjudication, forfeits for failing engines,
//!   progress callbacks, an early stop by SPRT, PGN of every game.
//! - Statistics ([`stats`]): W/D/L, Elo ± 95% and LOS as cutechess-cli prints them, SPRT with
//!   fishtest's pentanomial LLR.
//! - Gating ([`gate()`]): pass/fail by SPRT or by score at the end of a game budget.
//! - Rating list ([`rating`]): `results.jsonl`, maximum-likelihood Bradley–Terry ratings,
//!   CSV; the Elo-over-generations chart ([`plot`]).
//!
//! - The bomb variant (hidden information): each player is handed its own information set
//!   (`atomzero_belief`), network players search it by PIMC over worlds drawn from their
//!   belief, greedy detonates when that wins material or the king, `net:...,cheat=1` is the
//!   reference that sees the opponent's bomb; a match counts detonations and scores beliefs
//!   ([`MatchResult::bomb_report`]).
//!
//! The crate trains nothing and knows no file format but its own (PGN through the rules crate,
//! `results.jsonl`, CSV, SVG); [`files`] writes them by rename or append.

pub mod alphabeta;
pub mod files;
pub mod gate;
pub mod gauntlet;
pub mod greedy;
pub mod material;
pub mod openings;
pub mod player;
pub mod plot;
pub mod rating;
pub mod runner;
pub mod spec;
pub mod stats;
pub mod uci_engine;

pub use alphabeta::AlphaBetaPlayer;
pub use atomzero_selfplay::{EpdBook, EpdError};
pub use gate::{GateConfig, GateReason, GateResult, decide, gate};
pub use greedy::GreedyPlayer;
pub use openings::Openings;
pub use player::{MctsPlayer, Player, PlayerError, PolicyPlayer, RandomPlayer, SharedEvaluator};
pub use plot::{
    PlotError, PlotPoint, elo_chart_svg, elo_plot_svg, generation_of, generation_series,
};
pub use rating::{
    Rating, RatingError, RatingList, RatingOptions, ResultsError, ResultsLine, rate, read_results,
};
pub use runner::{
    BombStats, GameEnd, GameRecord, MatchConfig, MatchError, MatchResult, Progress, run_match,
};
pub use spec::{ModelLoader, NoModels, PlayerKind, PlayerSpec, SpecError};
pub use stats::{
    EloEstimate, EloModel, GameResult, Hypothesis, Pentanomial, SprtConfig, SprtStatus, Wdl,
};
pub use uci_engine::{UciEngineConfig, UciLimit, UciPlayer};
