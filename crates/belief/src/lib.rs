//! # atomzero-belief
//!
//! What a player of the bomb variant (`atomzero_rules::bomb`, issue 26) knows of a game, and
//! what it believes about the opponent's hidden bomb. Pure: no I/O, no threads; it depends on
//! the rules crate only.
//!
//! - [`InformationSet`]: one player's knowledge: the start, every public move, its own bomb
//!   choice and never the opponent's (a hidden choice is kept as `None`), and the opponent's
//!   pieces by **origin** ([`Origins`]: where a piece stood when the opponent chose its bomb,
//!   followed move by move from the public boards). Its worlds ([`InformationSet::world`]):
//!   for a possible origin of the opponent's bomb, the full state and the game before it,
//!   replayed with that choice, for determinized search (Perfect-Information Monte Carlo).
//!   Two games that differ only in the opponent's hidden choice give equal information sets
//!   (tested), so nothing built on one can depend on the truth.
//! - [`BeliefModel`]: a learned distribution over the origin of the opponent's bomb (a
//!   conditional-logit model over features of each candidate piece, [`features`]), fitted on
//!   self-play games where the truth is known after the game ([`samples_from_game`]), and its
//!   top-1 accuracy against a uniform guess ([`Accuracy`]).

pub mod features;
pub mod info;
pub mod model;

pub use features::{FEATURES, candidate_features};
pub use info::{InfoError, InformationSet, OriginRecord, Origins, World};
pub use model::{
    Accuracy, BELIEF_FORMAT, BeliefError, BeliefModel, FitOptions, FitReport, Guess, Sample,
    samples_from_game,
};
