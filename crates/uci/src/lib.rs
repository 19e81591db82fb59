//! # atomzero-uci
//!
//! A UCI engine over the MCTS search, for cutechess-cli, python-chess's `chess.engine` and
//! lichess-bot. It plays every rule variant of `atomzero-rules` (`UCI_Variant`, `atomic`
//! first), Chess960 castling (`UCI_Chess960`), and manages its time so that it does not lose
//! on time in fast games.
//!
//! - [`Engine`]: the protocol state machine, fed one line at a time ([`Engine::handle`]); the
//!   search runs on its own thread and writes through an [`Output`].
//! - [`run_stdio`]: the loop the binary runs (`atomzero uci`).
//! - The crate does not know about networks: a [`ModelLoader`] supplied by the binary turns the
//!   `Model` option into an [`atomzero_mcts::Evaluator`]; without one the engine plays pure
//!   MCTS with uniform priors.
//! - [`options`]: the option table; [`limits`]: time management; [`report`]: `info` lines, the
//!   value-to-centipawn mapping and mate distances; [`command`]: parsing.
//! - [`analyse`]: game analysis (`atomzero analyse`): every position of a PGN searched with
//!   the engine's settings, moves judged as lichess does, written back with `[%eval]`.
//!
//! ```
//! use atomzero_uci::{Engine, EngineConfig, NoModelLoader, Output};
//! let (output, lines) = Output::channel();
//! let mut engine = Engine::new(EngineConfig::default(), NoModelLoader, output);
//! engine.handle("position startpos moves e2e4");
//! engine.handle("go nodes 50");
//! let bestmove = lines.iter().find(|l| l.starts_with("bestmove")).unwrap();
//! assert!(bestmove.starts_with("bestmove "));
//! ```

pub mod analyse;
pub mod command;
pub mod engine;
pub mod limits;
pub mod options;
pub mod output;
pub mod report;
mod worker;

pub use command::{Command, CommandError, GoParams, StartPosition};
pub use engine::{
    Engine, EngineConfig, Flow, LoadedModel, ModelLoadError, ModelLoader, NO_MODEL_MESSAGE,
    NoModelLoader, run, run_stdio,
};
pub use limits::SearchLimits;
pub use options::{OptionError, OptionId, Options};
pub use output::Output;
pub use report::{MateCache, Score};
pub use worker::SharedEvaluator;
