//! atomzero-eval's integration tests (one test binary, as ripgrep does).

mod bomb;
mod common;
mod gating;
mod hostile;
mod matches;
mod rating;
mod stats;
mod uci;
