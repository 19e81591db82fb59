//! # atomzero-selfplay
//!
//! Self-play in the manner of KataGo and lc0: a rayon pool of workers, each driving many games
//! at once; every round a worker gathers leaves from all its trees and evaluates them in one
//! batch (or, with `batching = "shared"`, hands them to one batch for all the workers). Per-move temperature, playout-cap randomisation (only full searches become training
//! targets), resignation with a played-out fraction to measure false resignations, a maximum
//! game length, and openings from an EPD book or random first plies.
//!
//! The bomb variant (hidden information) is searched by Perfect-Information Monte Carlo
//! (`atomzero_pimc::Pimc`): for every move, worlds are drawn from the side to move's
//! information set (`atomzero_belief`, which never holds the opponent's bomb) and a belief
//! ([`run_with_belief`]), and the move and its policy target come from the worlds' aggregate.
//! Both bomb choices are searched moves; the random opening plies follow them.
//!
//! [`reanalyse`] searches the targets of recorded games again (MuZero Reanalyse).
//!
//! The crate produces [`GameRecord`](atomzero_replay::GameRecord)s; the caller decides where
//! they go (shards, PGN). It does no file I/O except reading an opening book on request.

pub mod batcher;
pub mod config;
pub mod epd;
pub mod openings;
pub mod reanalyse;
pub mod worker;

pub use batcher::SharedBatcher;
pub use config::{Batching, RootSearch, SelfplayConfig};
pub use epd::{EpdBook, EpdError};
pub use openings::Openings;
pub use reanalyse::{ReanalyseError, ReanalyseTally, reanalyse_game, reanalyse_games};
pub use worker::{GameStats, SelfplayEvent, record_to_pgn, run, run_with_belief};
