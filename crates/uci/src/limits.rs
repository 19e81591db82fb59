//! Turning `go` arguments into search limits: time management and node budgets.
//!
//! **Clock** (`wtime`/`btime`, `winc`/`binc`, `movestogo`): the budget for one move is
//!
//! ```text
//! min(remaining / moves_to_go + 0.75 · increment, remaining / 2) − overhead
//! ```
//!
//! with `moves_to_go` = `movestogo` if given, else 30, and `overhead` the `Move Overhead`
//! option (50 ms by default; it covers process and GUI latency). Spending at most half of what
//! is left and subtracting the overhead keeps the clock positive in fast games such as 1+0.1:
//! with 200 ms left and a 100 ms increment the engine thinks ~32 ms and gets 100 ms back.
//!
//! **`movetime t`**: `max(t − overhead, 0.98 · t)`: a fixed time a move has no clock to lose,
//! so a move time is used nearly whole, as Stockfish spends all of it (at 0.1 s a move the
//! engine thinks 98 ms; the search stops within one network call of its budget and answers at
//! once). The overhead trims only long move times. With a clock too, the smaller budget wins.
//!
//! **Nodes**: `go nodes n` searches `n` playouts; `go depth d` (MCTS has no depth iterations)
//! is a budget of `100 · d²` playouts; otherwise the `Nodes` option, when above 0, is the
//! budget. A node budget never lifts a time budget: both apply, whichever ends first.
//!
//! **`infinite`** and **`ponder`**: no bestmove before `stop` (or, when pondering, before
//! `ponderhit` plus the budget). A bare `go` searches until `stop` or until the search cannot
//! continue (root proven, tree full), then answers at once.
//!
//! The search always makes at least one playout, so a move comes out even with no time left.

use crate::command::GoParams;
use atomzero_rules::Color;
use std::time::Duration;

/// `moves_to_go` when the GUI does not say.
pub const DEFAULT_MOVES_TO_GO: u64 = 30;
/// The share of the increment spent on each move.
pub const INCREMENT_SHARE: f64 = 0.75;
/// The largest share of the remaining time spent on one move.
pub const MAX_SHARE_OF_REMAINING: f64 = 0.5;
/// Playouts per `go depth` unit squared.
pub const NODES_PER_DEPTH_SQUARED: u64 = 100;
/// The least share of a `go movetime` spent searching.
pub const MOVETIME_SHARE: f64 = 0.98;

/// When a search must end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SearchLimits {
    /// Time for this move, counted from `go` (or from `ponderhit` when pondering).
    pub budget: Option<Duration>,
    /// Playouts for this move (not counting visits reused from an earlier search).
    pub nodes: Option<u64>,
    /// `go infinite`: answer only after `stop`.
    pub infinite: bool,
    /// `go ponder`: answer only after `stop`, or after `ponderhit` once the limits are met.
    pub ponder: bool,
}

impl SearchLimits {
    /// The limits of `go` for the side `turn` to move, with the `Nodes` option `nodes_option`
    /// (0 = none) and the safety margin `overhead`.
    pub fn from_go(
        go: &GoParams,
        turn: Color,
        nodes_option: u64,
        overhead: Duration,
    ) -> SearchLimits {
        let (time, inc) = match turn {
            Color::White => (go.wtime, go.winc),
            Color::Black => (go.btime, go.binc),
        };
        let clock = time.map(|t| clock_budget(t, inc.unwrap_or(0), go.movestogo, overhead));
        let movetime = go.movetime.map(|t| movetime_budget(t, overhead));
        let budget = match (clock, movetime) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let depth_nodes =
            go.depth.map(|d| d.saturating_mul(d).saturating_mul(NODES_PER_DEPTH_SQUARED));
        let nodes = match (go.nodes, depth_nodes) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
        .or((nodes_option > 0).then_some(nodes_option));
        if go.infinite {
            return SearchLimits { budget: None, nodes: None, infinite: true, ponder: go.ponder };
        }
        SearchLimits { budget, nodes, infinite: false, ponder: go.ponder }
    }

    /// True if only time ends the search (no node budget, not infinite): then a single legal
    /// move is played at once.
    pub fn is_time_only(&self) -> bool {
        self.budget.is_some() && self.nodes.is_none() && !self.infinite
    }
}

/// The budget for one move from the remaining time and the increment (milliseconds; negative
/// values count as 0). See the module documentation.
pub fn clock_budget(
    remaining_ms: i64,
    increment_ms: i64,
    movestogo: Option<u64>,
    overhead: Duration,
) -> Duration {
    let remaining = remaining_ms.max(0) as f64;
    let increment = increment_ms.max(0) as f64;
    let moves_to_go = movestogo.filter(|&m| m > 0).unwrap_or(DEFAULT_MOVES_TO_GO) as f64;
    let ideal = remaining / moves_to_go + INCREMENT_SHARE * increment;
    let capped = ideal.min(remaining * MAX_SHARE_OF_REMAINING);
    Duration::from_secs_f64(capped / 1000.0).saturating_sub(overhead)
}

/// The budget for `go movetime` (milliseconds; negative counts as 0).
pub fn movetime_budget(movetime_ms: i64, overhead: Duration) -> Duration {
    let movetime = Duration::from_millis(movetime_ms.max(0) as u64);
    movetime.saturating_sub(overhead).max(movetime.mul_f64(MOVETIME_SHARE))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OVERHEAD: Duration = Duration::from_millis(50);

    fn ms(d: Duration) -> u128 {
        d.as_millis()
    }

    #[test]
    fn clock_budgets() {
        // 1+0.1 at the start: 60000/30 + 75 − 50.
        assert_eq!(ms(clock_budget(60_000, 100, None, OVERHEAD)), 2025);
        // The test case of the issue: 1000/30 + 75 − 50 ≈ 58 ms.
        assert_eq!(ms(clock_budget(1000, 100, None, OVERHEAD)), 58);
        // Little time left: half of it minus the overhead.
        assert_eq!(ms(clock_budget(200, 100, None, OVERHEAD)), 31);
        assert_eq!(ms(clock_budget(60, 100, None, OVERHEAD)), 0);
        assert_eq!(ms(clock_budget(-100, 0, None, OVERHEAD)), 0);
        // movestogo 1 still keeps half the time.
        assert_eq!(ms(clock_budget(10_000, 0, Some(1), OVERHEAD)), 4950);
        assert_eq!(ms(clock_budget(10_000, 0, Some(0), OVERHEAD)), 283);
    }

    #[test]
    fn limits_from_go() {
        let go = GoParams {
            wtime: Some(1000),
            btime: Some(9000),
            winc: Some(100),
            binc: Some(100),
            ..GoParams::default()
        };
        let white = SearchLimits::from_go(&go, Color::White, 0, OVERHEAD);
        let black = SearchLimits::from_go(&go, Color::Black, 0, OVERHEAD);
        assert_eq!(white.budget.map(ms), Some(58));
        assert_eq!(black.budget.map(ms), Some(325));
        assert!(white.is_time_only());
        let with_nodes = SearchLimits::from_go(&go, Color::White, 800, OVERHEAD);
        assert_eq!((with_nodes.nodes, with_nodes.budget.map(ms)), (Some(800), Some(58)));
        let go = GoParams { movetime: Some(1000), depth: Some(5), ..GoParams::default() };
        let limits = SearchLimits::from_go(&go, Color::White, 800, OVERHEAD);
        assert_eq!((limits.nodes, limits.budget.map(ms)), (Some(2500), Some(980)));
        // Move times are used nearly whole (not halved by the 50 ms overhead); the overhead
        // trims only long ones.
        assert_eq!(movetime_budget(60, OVERHEAD), Duration::from_micros(58_800));
        assert_eq!(movetime_budget(100, OVERHEAD), Duration::from_millis(98));
        assert_eq!(movetime_budget(10_000, OVERHEAD), Duration::from_millis(9_950));
        let go = GoParams { infinite: true, nodes: Some(5), ..GoParams::default() };
        let limits = SearchLimits::from_go(&go, Color::White, 0, OVERHEAD);
        assert_eq!(limits, SearchLimits { infinite: true, ..SearchLimits::default() });
        let bare = SearchLimits::from_go(&GoParams::default(), Color::White, 0, OVERHEAD);
        assert_eq!(bare, SearchLimits::default());
    }
}
