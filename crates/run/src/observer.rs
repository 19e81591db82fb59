//! What a run tells its user: lines to print, warnings, and progress of long stages. The
//! binary implements [`Observer`] with stdout, stderr and progress bars; tests collect lines.

/// Receives what a run, a trainer or a worker reports.
pub trait Observer {
    /// A line for the user (a generation's summary, a worker's upload).
    fn line(&mut self, line: &str);
    /// Something went wrong but the run goes on.
    fn warning(&mut self, text: &str);
    /// A stage with `total` units of work starts; `done` of them were done earlier.
    fn start(&mut self, _what: &str, _total: u64, _done: u64) {}
    /// Progress of the current stage.
    fn progress(&mut self, _done: u64, _message: &str) {}
    /// The current stage ended.
    fn finish(&mut self) {}
}

/// Collects lines and warnings (tests, callers that print at the end).
#[derive(Debug, Default)]
pub struct Collect {
    /// Every line, in order.
    pub lines: Vec<String>,
    /// Every warning, in order.
    pub warnings: Vec<String>,
}

impl Observer for Collect {
    fn line(&mut self, line: &str) {
        self.lines.push(line.to_string());
    }
    fn warning(&mut self, text: &str) {
        self.warnings.push(text.to_string());
    }
}
