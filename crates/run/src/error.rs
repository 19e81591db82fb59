//! Why a run could not go on.

use atomzero_store::StoreError;
use std::fmt;

/// Why a run, a trainer or a worker stopped with an error.
#[derive(Debug)]
pub enum RunError {
    /// The run location failed (after its retries).
    Store(StoreError),
    /// A config the run cannot use.
    Config(String),
    /// A file of the run that this build cannot read.
    Corrupt { location: String, reason: String },
    /// Another process wrote a file this one owns (a second trainer on the same run).
    AnotherTrainer { location: String },
    /// A network could not be made, loaded or saved.
    Network(String),
    /// Training failed.
    Train(atomzero_train::TrainError),
    /// A gating or evaluation match could not be played.
    Match(String),
    /// Self-play could not run.
    Selfplay(String),
    /// A local file (cache, checkpoint) could not be read or written.
    Io { path: String, source: std::io::Error },
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Store(e) => e.fmt(f),
            RunError::Config(m) | RunError::Network(m) | RunError::Match(m) => f.write_str(m),
            RunError::Selfplay(m) => write!(f, "self-play: {m}"),
            RunError::Corrupt { location, reason } => write!(f, "{location}: {reason}"),
            RunError::AnotherTrainer { location } => write!(
                f,
                "{location} was changed by another process: is a second trainer running on this run? stopping"
            ),
            RunError::Train(e) => e.fmt(f),
            RunError::Io { path, source } => write!(f, "{path}: {source}"),
        }
    }
}

impl std::error::Error for RunError {}

impl From<StoreError> for RunError {
    fn from(e: StoreError) -> RunError {
        match e {
            StoreError::Conflict { location } => RunError::AnotherTrainer { location },
            e => RunError::Store(e),
        }
    }
}

impl From<atomzero_train::TrainError> for RunError {
    fn from(e: atomzero_train::TrainError) -> RunError {
        RunError::Train(e)
    }
}

/// `Result` with [`RunError`].
pub type Result<T> = std::result::Result<T, RunError>;

/// A local I/O error on `path`.
pub(crate) fn io(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> RunError + '_ {
    move |source| RunError::Io { path: path.display().to_string(), source }
}
