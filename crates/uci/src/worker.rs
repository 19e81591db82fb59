//! The search thread: drives one [`Search`] with gather/evaluate/apply rounds until a limit,
//! `stop` or the end of the search, writing `info` lines every `info_interval` and at the end,
//! then `bestmove`.
//!
//! The clock and the signals (`stop`, `ponderhit`) are checked between rounds, so a round must
//! be short: the batch starts at one leaf and doubles per round up to `max_batch`, and is held
//! to what the evaluator can finish in a quarter of the time left (at most 100 ms), measured
//! from its throughput so far. The search always makes at least one playout before answering.
//! An evaluator that panics or returns too few evaluations is reported and survived.

use crate::limits::SearchLimits;
use crate::output::Output;
use crate::report::{self, MateCache, Progress};
use atomzero_mcts::alphabeta::{AlphaBeta, RootCheck};
use atomzero_mcts::{
    AB_PRIOR_MARGIN, CacheStats, EvalCache, EvalRequest, Evaluations, Evaluator, Leaf, MateLimits,
    Proven, Search, UniformEvaluator,
};
use atomzero_rules::{Move, Position};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, Instant};

/// An evaluator shared between the engine and its search thread.
pub type SharedEvaluator = Arc<dyn Evaluator + Send + Sync>;

/// The answer to `go` when the game is over: `bestmove (none)`, as Stockfish and lc0 write it.
pub(crate) const NO_MOVE: &str = "(none)";

/// The longest a single round should take when time is not short.
const MAX_ROUND_TIME: Duration = Duration::from_millis(100);

/// A message from the command handler to the search thread.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Signal {
    /// `stop`: answer as soon as there is a move.
    Stop,
    /// `ponderhit`: the pondered move was played; the limits start now.
    PonderHit,
}

/// Everything one search needs.
pub(crate) struct Job {
    /// The tree, rooted at the position to search (maybe reused).
    pub search: Search,
    /// The evaluator.
    pub evaluator: SharedEvaluator,
    /// When to stop.
    pub limits: SearchLimits,
    /// When `go` arrived.
    pub started: Instant,
    /// Largest batch of leaves per round.
    pub max_batch: usize,
    /// The tree stops growing at this many bytes.
    pub max_tree_bytes: usize,
    /// Root moves per `info` report.
    pub multipv: usize,
    /// `info` lines carry `wdl` (the `UCI_ShowWDL` option).
    pub show_wdl: bool,
    /// Share of the move's time (0 to 0.9) for the alpha-beta check of the root moves
    /// ([`alphabeta_check`]); 0 = none.
    pub alphabeta_share: f64,
    /// Share of the move's time (0 to 0.5) for the alpha-beta check whose unrefuted root
    /// moves get their priors raised ([`alphabeta_root_priors`]); 0 = none.
    pub alphabeta_root_share: f64,
    /// Time between periodic `info` lines.
    pub info_interval: Duration,
    /// Where lines go.
    pub output: Output,
    /// Set just before `bestmove` is written: from then on the search is over for the
    /// protocol, and the thread only returns its tree.
    pub answered: Arc<AtomicBool>,
    /// The evaluation cache behind `evaluator` (the `NNCacheSize` option) when `debug on`:
    /// this search reports its hits in an `info string` before `bestmove`.
    pub cache: Option<Arc<EvalCache<SharedEvaluator>>>,
}

/// The signal state of a running search.
struct Control {
    signals: Receiver<Signal>,
    /// No bestmove may be sent yet (`go infinite`, or `go ponder` before `ponderhit`).
    waiting: bool,
    pondering: bool,
    infinite: bool,
    stopped: bool,
    /// When the limits started counting.
    clock_start: Instant,
}

impl Control {
    /// Takes the pending signals; with `block`, waits for one if nothing may happen otherwise.
    fn poll(&mut self, block: bool) {
        loop {
            let signal = if block && self.waiting && !self.stopped {
                self.signals.recv().unwrap_or(Signal::Stop)
            } else {
                match self.signals.try_recv() {
                    Ok(signal) => signal,
                    Err(TryRecvError::Empty) => return,
                    Err(TryRecvError::Disconnected) => Signal::Stop,
                }
            };
            match signal {
                Signal::Stop => {
                    self.stopped = true;
                    return;
                }
                Signal::PonderHit if self.pondering => {
                    self.pondering = false;
                    self.waiting = self.infinite;
                    self.clock_start = Instant::now();
                }
                Signal::PonderHit => {}
            }
            if block {
                return;
            }
        }
    }
}

/// Runs the search, writes `bestmove`, and hands the tree back for reuse (`None` if the
/// evaluator panicked).
pub(crate) fn run(job: Job, signals: Receiver<Signal>) -> Option<Search> {
    let Job {
        mut search,
        evaluator,
        limits,
        started,
        max_batch,
        max_tree_bytes,
        multipv,
        show_wdl,
        alphabeta_share,
        alphabeta_root_share,
        info_interval,
        output,
        answered,
        cache,
    } = job;
    let cache_before = cache.as_ref().map(|c| c.stats());
    let ab_before = search.ab_prior_stats();
    let mut mates = MateCache::new(mate_limits(&limits));
    let root = *search.root_position();
    let legal = root.legal_moves();
    let mut control = Control {
        signals,
        waiting: limits.infinite || limits.ponder,
        pondering: limits.ponder,
        infinite: limits.infinite,
        stopped: false,
        clock_start: started,
    };
    if alphabeta_share > 0.0 && legal.len() > 1 {
        alphabeta_check(&mut search, &limits, started, alphabeta_share, &mut control, &output);
    }
    // The root moves to raise once the root is expanded (a fresh tree's root is expanded by
    // the search's first round).
    let mut raise_pending = None;
    if alphabeta_root_share > 0.0 && legal.len() > 1 {
        raise_pending = alphabeta_root_priors(
            &search,
            &limits,
            started,
            alphabeta_root_share,
            &mut control,
            &output,
        );
    }
    if raise_pending.as_ref().is_some_and(|refuted| search.raise_root_priors(refuted)) {
        raise_pending = None;
    }
    let start_visits = search.root_visits();
    let progress = |search: &Search| Progress {
        nodes: u64::from(search.root_visits().saturating_sub(start_visits)),
        elapsed: started.elapsed(),
        max_tree_bytes,
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mut rounds = Rounds { max_batch, batch_cap: 1, rate: None, reported_bad_output: false };
        let mut exhausted = is_exhausted(&search, max_tree_bytes);
        let mut last_info = Instant::now();
        let mut reported_exhausted = false;
        loop {
            // With nothing more to search, report once before waiting for `stop` or
            // `ponderhit` (the poll below blocks).
            if exhausted && control.waiting && !reported_exhausted {
                reported_exhausted = true;
                for line in
                    report::info_lines(&search, &progress(&search), multipv, show_wdl, &mut mates)
                {
                    output.line(&line);
                }
            }
            control.poll(exhausted);
            let have_move = search.root_visits() > 0 || exhausted;
            if control.stopped && have_move {
                break;
            }
            if exhausted {
                if control.waiting {
                    continue;
                }
                break;
            }
            let nodes_done = u64::from(search.root_visits().saturating_sub(start_visits));
            let time_left = if control.waiting {
                None
            } else {
                limits.budget.map(|b| b.saturating_sub(control.clock_start.elapsed()))
            };
            if !control.waiting && have_move {
                let out_of_nodes = limits.nodes.is_some_and(|n| nodes_done >= n);
                let out_of_time = time_left.is_some_and(|t| t.is_zero());
                let forced = legal.len() == 1 && limits.is_time_only();
                if out_of_nodes || out_of_time || forced {
                    break;
                }
            }
            let nodes_left = if control.waiting {
                None
            } else {
                limits.nodes.map(|n| n.saturating_sub(nodes_done))
            };
            let before = search.root_visits();
            let n_leaves = rounds.play(&mut search, &*evaluator, time_left, nodes_left, &output);
            if raise_pending.as_ref().is_some_and(|refuted| search.raise_root_priors(refuted)) {
                raise_pending = None;
            }
            exhausted = is_exhausted(&search, max_tree_bytes)
                || (n_leaves == 0 && search.root_visits() == before);
            if last_info.elapsed() >= info_interval {
                last_info = Instant::now();
                for line in
                    report::info_lines(&search, &progress(&search), multipv, show_wdl, &mut mates)
                {
                    output.line(&line);
                }
            }
        }
    }));
    match outcome {
        Ok(()) => {
            for line in
                report::info_lines(&search, &progress(&search), multipv, show_wdl, &mut mates)
            {
                output.line(&line);
            }
            if let (Some(cache), Some(before)) = (&cache, cache_before) {
                output.info_string(&cache_line(cache.stats(), before));
                if search.config().ab_prior_nodes > 0 && !search.alpha_beta_priors_enabled() {
                    output.info_string(
                        "alpha-beta priors: off for this move (its time is over AlphaBetaPriorMaxTime)",
                    );
                } else if search.config().ab_prior_nodes > 0 {
                    let now = search.ab_prior_stats();
                    output.info_string(&format!(
                        "alpha-beta priors: {} checks, {} raised priors, {} proofs, {} nodes",
                        now.checks - ab_before.checks,
                        now.raised - ab_before.raised,
                        now.proofs - ab_before.proofs,
                        now.nodes - ab_before.nodes
                    ));
                }
            }
            answered.store(true, Ordering::Release);
            answer(&output, &root, &legal, search.best_move(), &search.pv(2));
            Some(search)
        }
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            output.info_string(&format!("error: the search failed: {message}"));
            answered.store(true, Ordering::Release);
            answer(&output, &root, &legal, None, &[]);
            None
        }
    }
}

/// `nncache hits H of L lookups (x.x%)`: the cache's work in this search, from its counters
/// `now` and `before` it.
fn cache_line(now: CacheStats, before: CacheStats) -> String {
    let search = CacheStats {
        lookups: now.lookups.saturating_sub(before.lookups),
        hits: now.hits.saturating_sub(before.hits),
    };
    format!(
        "nncache hits {} of {} lookups ({:.1}%)",
        search.hits,
        search.lookups,
        100.0 * search.hit_rate()
    )
}

/// Alpha-beta nodes per playout the search would have made in the same time (the alpha-beta
/// search runs ~2.5 million nodes a second, the engine ~12,000 playouts with the shipped net).
const ALPHABETA_NODES_PER_PLAYOUT: f64 = 200.0;

/// Alpha-beta nodes for a search without a time or node limit (`go infinite`, `go ponder`):
/// about half a second.
const ALPHABETA_UNTIMED_NODES: u64 = 1_500_000;

/// The margin below the alpha-beta search's best score at which a root move is left out of
/// the MCTS (centipawns: a lost minor piece or worse, or a forced loss of the king).
pub const ALPHABETA_MARGIN: i32 = 300;

/// Runs [`AlphaBeta::check_root`] on the root for `share` of the move's time (or the node
/// equivalent) and leaves the root moves it refutes out of `search`. A `stop` ends it early.
fn alphabeta_check(
    search: &mut Search,
    limits: &SearchLimits,
    started: Instant,
    share: f64,
    control: &mut Control,
    output: &Output,
) {
    let root = *search.root_position();
    let t0 = Instant::now();
    let Some(check) = root_check(search, limits, started, share, ALPHABETA_MARGIN, 20, control)
    else {
        return;
    };
    search.exclude_root_moves(&check.refuted);
    let refuted = search.excluded_root_moves().len();
    output.info_string(&check_line("alphabeta", &check, refuted, t0, &root));
}

/// Runs [`AlphaBeta::check_root`] on the root for `share` of the move's time (or the node
/// equivalent) with the alpha-beta priors' margin ([`AB_PRIOR_MARGIN`]) and returns the root
/// moves it refutes, for [`Search::raise_root_priors`] (which raises the others' priors when
/// at most three are left). A `stop` ends it early; `None` when it finished no depth.
fn alphabeta_root_priors(
    search: &Search,
    limits: &SearchLimits,
    started: Instant,
    share: f64,
    control: &mut Control,
    output: &Output,
) -> Option<Vec<Move>> {
    let root = *search.root_position();
    let t0 = Instant::now();
    // A table of 2^17 entries (4 MB): this check runs at every move, and a fresh table of
    // 2^20 (32 MB) cost the search a few percent of its playouts on top of the check's share.
    let check = root_check(search, limits, started, share, AB_PRIOR_MARGIN, 17, control)?;
    let refuted = check.refuted.len();
    output.info_string(&check_line("alphabeta root priors", &check, refuted, t0, &root));
    Some(check.refuted)
}

/// The `info string` of a root check that started at `t0` and refuted `refuted` of `root`'s
/// moves: `LABEL depth D nodes N time MS best MOVE cp S refuted R of L`.
fn check_line(
    label: &str,
    check: &RootCheck,
    refuted: usize,
    t0: Instant,
    root: &Position,
) -> String {
    format!(
        "{label} depth {} nodes {} time {} best {} cp {} refuted {refuted} of {}",
        check.depth,
        check.nodes,
        t0.elapsed().as_millis(),
        root.uci(check.best),
        check.score,
        root.legal_moves().len()
    )
}

/// [`AlphaBeta::check_root`] of `search`'s root with `margin` and a transposition table of
/// 2^`table_bits` entries, for `share` of the move's time (or the node equivalent); a `stop`
/// ends it early.
fn root_check(
    search: &Search,
    limits: &SearchLimits,
    started: Instant,
    share: f64,
    margin: i32,
    table_bits: u32,
    control: &mut Control,
) -> Option<RootCheck> {
    let deadline = match (limits.budget, control.waiting) {
        (Some(budget), false) => Some(started + budget.mul_f64(share.clamp(0.0, 0.9))),
        _ => None,
    };
    let max_nodes = match (deadline, limits.nodes) {
        (Some(_), _) => u64::MAX,
        (None, Some(nodes)) => {
            (nodes as f64 * ALPHABETA_NODES_PER_PLAYOUT * share / (1.0 - share).max(0.1)) as u64
        }
        (None, None) => ALPHABETA_UNTIMED_NODES,
    };
    let root = *search.root_position();
    let history = search.game_hashes().to_vec();
    let mut ab = AlphaBeta::new(table_bits);
    let mut keep_going = |nodes: u64| {
        control.poll(false);
        !control.stopped && nodes < max_nodes && deadline.is_none_or(|d| Instant::now() < d)
    };
    ab.check_root(&root, &history, 64, margin, &mut keep_going)
}

/// The exact mate search's budget ([`MateCache`]): [`MateLimits::default`], and under a time
/// budget at most 1,000 positions per millisecond of it (the search plays 5–10 million a
/// second: a fifth of the move's time at worst, once per proven position).
fn mate_limits(limits: &SearchLimits) -> MateLimits {
    let default = MateLimits::default();
    let max_nodes = limits.budget.map_or(default.max_nodes, |budget| {
        u64::try_from(budget.as_millis())
            .unwrap_or(u64::MAX)
            .saturating_mul(1000)
            .clamp(10_000, default.max_nodes)
    });
    MateLimits { max_nodes, ..default }
}

/// True if the search cannot usefully go on: the root is proven or terminal, or the tree is
/// full.
fn is_exhausted(search: &Search, max_tree_bytes: usize) -> bool {
    (search.root_proven() != Proven::Unknown && search.root_visits() > 0)
        || search.tree_bytes() >= max_tree_bytes
}

/// Writes `bestmove` (with `ponder` when the principal variation has a reply). A finished
/// game has no move: as Stockfish does, the score of the end (`mate 0` for the side that has
/// lost, `cp 0` for a draw) and `bestmove (none)`.
fn answer(output: &Output, root: &Position, legal: &[Move], best: Option<Move>, pv: &[Move]) {
    if legal.is_empty() {
        let outcome = root.outcome();
        // A decided game was lost by the side to move: a position whose side to move has won
        // (the other king gone) is not a valid `Position`.
        let score = if outcome.is_some_and(|o| o.winner.is_some()) { "mate 0" } else { "cp 0" };
        let reason = outcome.map_or_else(|| "no legal moves".to_string(), |o| o.to_string());
        output.line(&format!("info depth 0 score {score}"));
        output.info_string(&format!("the game is over ({reason}): no move to play"));
        output.line(&format!("bestmove {NO_MOVE}"));
        return;
    }
    let best = match best.filter(|m| legal.contains(m)) {
        Some(m) => m,
        None => {
            output.info_string("error: the search found no move; playing the first legal move");
            legal[0]
        }
    };
    let mut line = format!("bestmove {}", root.uci(best));
    if pv.len() >= 2 && pv[0] == best {
        let mut after = *root;
        after.play_unchecked(best);
        if after.legal_moves().contains(&pv[1]) {
            line.push_str(&format!(" ponder {}", after.uci(pv[1])));
        }
    }
    output.line(&line);
}

/// Batch sizing across rounds.
struct Rounds {
    max_batch: usize,
    /// Doubles each round up to `max_batch`.
    batch_cap: usize,
    /// Evaluator throughput in positions per second (smoothed).
    rate: Option<f64>,
    reported_bad_output: bool,
}

impl Rounds {
    fn batch_size(&self, time_left: Option<Duration>, nodes_left: Option<u64>) -> usize {
        let mut batch = self.batch_cap.min(self.max_batch);
        if let Some(n) = nodes_left {
            batch = batch.min(n.clamp(1, usize::MAX as u64) as usize);
        }
        if let Some(rate) = self.rate {
            let target = time_left.map_or(MAX_ROUND_TIME, |t| (t / 4).min(MAX_ROUND_TIME));
            let affordable = (rate * target.as_secs_f64()).floor();
            if affordable < batch as f64 {
                batch = affordable as usize;
            }
        }
        batch.max(1)
    }

    /// One gather/evaluate/apply round; returns the number of leaves evaluated.
    fn play(
        &mut self,
        search: &mut Search,
        evaluator: &(dyn Evaluator + Send + Sync),
        time_left: Option<Duration>,
        nodes_left: Option<u64>,
        output: &Output,
    ) -> usize {
        let batch = self.batch_size(time_left, nodes_left);
        let leaves = search.gather(batch);
        if leaves.is_empty() {
            return 0;
        }
        let requests: Vec<EvalRequest<'_>> = leaves.iter().map(Leaf::request).collect();
        let t0 = Instant::now();
        let mut evaluations: Evaluations = evaluator.evaluate(&requests);
        let seconds = t0.elapsed().as_secs_f64().max(1e-6);
        let rate = requests.len() as f64 / seconds;
        self.rate = Some(self.rate.map_or(rate, |r| 0.5 * r + 0.5 * rate));
        if evaluations.len() != requests.len() {
            if !self.reported_bad_output {
                self.reported_bad_output = true;
                output.info_string(&format!(
                    "error: the evaluator returned {} evaluations for {} positions; using uniform priors for the missing ones",
                    evaluations.len(),
                    requests.len()
                ));
            }
            evaluations.truncate(requests.len());
            let missing = UniformEvaluator.evaluate(&requests[evaluations.len()..]);
            evaluations.append(&missing);
        }
        let n = requests.len();
        drop(requests);
        search.apply(&evaluations);
        self.batch_cap = (self.batch_cap * 2).min(self.max_batch.max(1));
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_shrink_when_time_is_short() {
        let mut rounds =
            Rounds { max_batch: 256, batch_cap: 256, rate: None, reported_bad_output: false };
        assert_eq!(rounds.batch_size(None, None), 256);
        assert_eq!(rounds.batch_size(None, Some(10)), 10);
        // 1000 positions per second: a quarter of 40 ms is 10 positions.
        rounds.rate = Some(1000.0);
        assert_eq!(rounds.batch_size(Some(Duration::from_millis(40)), None), 10);
        // Never more than 100 ms per round, never less than one leaf.
        assert_eq!(rounds.batch_size(Some(Duration::from_secs(60)), None), 100);
        assert_eq!(rounds.batch_size(None, None), 100);
        assert_eq!(rounds.batch_size(Some(Duration::ZERO), None), 1);
        rounds.batch_cap = 4;
        assert_eq!(rounds.batch_size(None, None), 4);
    }
}
