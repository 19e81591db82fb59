//! # atomzero-run
//!
//! A training run as a library: the binary parses arguments and config files and draws
//! progress bars; everything a run does is here.
//!
//! - [`config`]: the typed config of a run (every component's section and the loop's `[run]`).
//! - [`layout`]: the run directory's keys, in a local directory or an object store
//!   (`atomzero-store`), and the local mirror of a remote run.
//! - [`state`]: `run.json` (where the trainer is) and `best.json`, both written by
//!   compare-and-swap.
//! - [`trainer`]: the generation loop: self-play (in this process, or from workers) → train →
//!   gate → promote → evaluate → summary line; resumable at any point.
//! - [`worker`]: a self-play worker that uploads shards for a trainer elsewhere.
//! - [`promotion`]: a network becomes the best one (the trainer's and `atomzero gate`'s).
//! - [`gauntlet`]: `atomzero gauntlet`'s driver (networks of runs against a ladder and each
//!   other).
//! - [`manifest`]: which workers' shards each generation counted (each shard exactly once).
//! - [`games`]: self-play into shards with a tally; [`models`]: networks as evaluators.
//! - [`records`]: results, log and timeline files; [`report`]: the summary line.
//! - [`observer`]: how a run reports lines, warnings and progress to its caller.

pub mod config;
pub mod error;
pub mod games;
pub mod gauntlet;
pub mod layout;
pub mod manifest;
pub mod models;
pub mod observer;
pub mod promotion;
pub mod records;
pub mod report;
pub mod state;
pub mod trainer;
pub mod worker;

pub use config::{Config, RunConfig};
pub use error::RunError;
pub use layout::RunDir;
pub use observer::{Collect, Observer};
