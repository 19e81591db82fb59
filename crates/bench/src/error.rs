//! [`BenchError`]: what stopped a measurement, as one line naming the step.

use std::fmt;

/// A measurement that could not be made (bad arguments, a net that cannot be built, a store
/// that cannot be reached, a report that cannot be written).
#[derive(Debug)]
pub struct BenchError {
    message: String,
}

/// The result of a measurement.
pub type Result<T, E = BenchError> = std::result::Result<T, E>;

impl BenchError {
    /// An error with this message.
    pub(crate) fn msg(message: impl Into<String>) -> BenchError {
        BenchError { message: message.into() }
    }
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BenchError {}

impl From<std::io::Error> for BenchError {
    fn from(e: std::io::Error) -> BenchError {
        BenchError::msg(format!("cannot write the report: {e}"))
    }
}

/// Names the step that failed: `what: cause`.
pub(crate) trait Context<T> {
    fn context(self, what: impl fmt::Display) -> Result<T>;
}

impl<T, E: fmt::Display> Context<T> for std::result::Result<T, E> {
    fn context(self, what: impl fmt::Display) -> Result<T> {
        self.map_err(|e| BenchError::msg(format!("{what}: {e}")))
    }
}

impl<T> Context<T> for Option<T> {
    fn context(self, what: impl fmt::Display) -> Result<T> {
        self.ok_or_else(|| BenchError::msg(what.to_string()))
    }
}
