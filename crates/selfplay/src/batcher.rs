//! One evaluation batch for all the workers (`batching = "shared"`), the alternative to each
//! worker evaluating its own batch on its own thread (`batching = "worker"`, the default).
//!
//! Every worker that takes part [`SharedBatcher::join`]s and evaluates through its
//! [`Member`]. Each round, a member's requests are copied into the shared batch and the
//! member waits; the last member to hand in its requests (or to leave while the others wait)
//! evaluates the whole batch with the inner evaluator on its own thread and hands every
//! member its share (flat combining: no extra thread, no timeout). So there is one call to
//! the network per round with every worker's leaves, where per-worker batching makes one call
//! per worker, concurrently. `atomzero bench selfplay` measures both; on a CPU, where the
//! network runs on the same cores as the search, the other workers wait during that call.
//!
//! An evaluator that panics while evaluating for others, or a worker that panics while others
//! wait for its leaves, makes every waiting member panic too (rather than wait for ever).

use atomzero_mcts::{EvalRequest, Evaluations, Evaluator};
use atomzero_rules::{Move, Position};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// An evaluator shared by several threads that merges their requests into one batch a round.
#[derive(Debug)]
pub struct SharedBatcher<E> {
    inner: E,
    state: Mutex<State>,
    evaluated: Condvar,
}

/// What the members share.
#[derive(Debug, Default)]
struct State {
    /// Members that joined and have not left.
    members: usize,
    /// The batch being collected: the requests of the members waiting, in order of arrival.
    batch: Vec<OwnedRequest>,
    /// Each waiting member's share of `batch` (start, length), by ticket.
    shares: Vec<(usize, usize)>,
    /// The round being collected.
    round: u64,
    /// The evaluations of the last round evaluated, by ticket, until their members take them.
    results: Vec<Option<Evaluations>>,
    /// The round `results` belong to.
    results_round: Option<u64>,
    /// The inner evaluator panicked.
    failed: bool,
    /// Calls to the inner evaluator so far.
    batches: u64,
}

/// A copy of an [`EvalRequest`] that outlives the member's call.
#[derive(Debug)]
struct OwnedRequest {
    position: Position,
    history: Vec<Position>,
    repetitions: usize,
    moves: Vec<Move>,
}

impl OwnedRequest {
    fn new(r: &EvalRequest<'_>) -> OwnedRequest {
        OwnedRequest {
            position: *r.position,
            history: r.history.to_vec(),
            repetitions: r.repetitions,
            moves: r.moves.to_vec(),
        }
    }

    fn request(&self) -> EvalRequest<'_> {
        EvalRequest {
            position: &self.position,
            history: &self.history,
            repetitions: self.repetitions,
            moves: &self.moves,
        }
    }
}

impl<E: Evaluator> SharedBatcher<E> {
    /// A batcher in front of `inner`, without members.
    pub fn new(inner: E) -> SharedBatcher<E> {
        SharedBatcher { inner, state: Mutex::new(State::default()), evaluated: Condvar::new() }
    }

    /// The evaluator behind the batcher.
    pub fn inner(&self) -> &E {
        &self.inner
    }

    /// Calls made to the inner evaluator so far (one per round).
    pub fn batches(&self) -> u64 {
        self.lock().batches
    }

    /// Takes part in the rounds: until the member is dropped, no round is evaluated before it
    /// hands in its requests.
    pub fn join(&self) -> Member<'_, E> {
        self.lock().members += 1;
        Member { batcher: self }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The lock is never held while evaluating, so nothing can poison it halfway.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Evaluates the collected batch (the caller is the last member in), stores every share's
    /// evaluations and wakes the members.
    fn evaluate_round(&self, mut state: MutexGuard<'_, State>) -> MutexGuard<'_, State> {
        let batch = std::mem::take(&mut state.batch);
        let shares = std::mem::take(&mut state.shares);
        let round = state.round;
        state.round += 1;
        state.batches += 1;
        drop(state);
        // Wakes the waiting members with `failed` set if `evaluate` panics.
        let guard = FailOnUnwind { batcher: self };
        let requests: Vec<EvalRequest<'_>> = batch.iter().map(OwnedRequest::request).collect();
        let evaluations = self.inner.evaluate(&requests);
        std::mem::forget(guard);
        let results = shares
            .iter()
            .map(|&(start, len)| {
                let mut share = Evaluations::with_capacity(len, 0);
                for e in evaluations.range(start..start + len) {
                    share.push(e.priors.iter().copied(), e.wdl);
                }
                Some(share)
            })
            .collect();
        let mut state = self.lock();
        state.results = results;
        state.results_round = Some(round);
        self.evaluated.notify_all();
        state
    }
}

/// Sets `failed` and wakes the members when dropped (only during a panic).
struct FailOnUnwind<'a, E> {
    batcher: &'a SharedBatcher<E>,
}

impl<E> Drop for FailOnUnwind<'_, E> {
    fn drop(&mut self) {
        let mut state = self.batcher.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.failed = true;
        self.batcher.evaluated.notify_all();
    }
}

/// A thread's place in a [`SharedBatcher`]; evaluates through the shared batch.
#[derive(Debug)]
pub struct Member<'a, E: Evaluator> {
    batcher: &'a SharedBatcher<E>,
}

impl<E: Evaluator> Evaluator for Member<'_, E> {
    fn evaluate(&self, requests: &[EvalRequest<'_>]) -> Evaluations {
        let b = self.batcher;
        let mut state = b.lock();
        let ticket = state.shares.len();
        let start = state.batch.len();
        state.batch.extend(requests.iter().map(OwnedRequest::new));
        state.shares.push((start, requests.len()));
        let round = state.round;
        if state.shares.len() >= state.members {
            state = b.evaluate_round(state);
        }
        let mut state = b
            .evaluated
            .wait_while(state, |s| s.results_round != Some(round) && !s.failed)
            .unwrap_or_else(PoisonError::into_inner);
        if state.failed {
            drop(state);
            panic!("the shared batch's evaluator panicked on another worker");
        }
        state.results.get_mut(ticket).and_then(Option::take).unwrap_or_default()
    }

    fn name(&self) -> String {
        self.batcher.inner.name()
    }
}

impl<E: Evaluator> Drop for Member<'_, E> {
    fn drop(&mut self) {
        let b = self.batcher;
        let mut state = b.lock();
        state.members = state.members.saturating_sub(1);
        // The members still waiting no longer wait for this one.
        if !state.shares.is_empty() && state.shares.len() >= state.members && !state.failed {
            if std::thread::panicking() {
                // This worker is going down: the others go down with it rather than have it
                // evaluate for them (a second panic here would abort).
                state.failed = true;
                b.evaluated.notify_all();
            } else {
                drop(b.evaluate_round(state));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use atomzero_mcts::RandomEvaluator;
    use atomzero_rules::{MoveList, Variant};
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts calls and positions.
    struct Counting {
        inner: RandomEvaluator,
        calls: AtomicUsize,
        positions: AtomicUsize,
    }

    impl Evaluator for Counting {
        fn evaluate(&self, requests: &[EvalRequest<'_>]) -> Evaluations {
            self.calls.fetch_add(1, Ordering::SeqCst);
            self.positions.fetch_add(requests.len(), Ordering::SeqCst);
            self.inner.evaluate(requests)
        }
    }

    /// Positions after a few moves of a fixed line, different for every `seed`.
    fn positions(seed: usize, n: usize) -> Vec<Position> {
        let mut pos = Position::new(Variant::Atomic);
        let mut out = Vec::new();
        for k in 0..n {
            let legal = pos.legal_moves();
            pos.play_unchecked(legal[(seed * 7 + k * 3) % legal.len()]);
            out.push(pos);
        }
        out
    }

    /// Requests for `positions` with their `moves`, without history.
    fn requests<'a>(positions: &'a [Position], moves: &'a [MoveList]) -> Vec<EvalRequest<'a>> {
        positions
            .iter()
            .zip(moves)
            .map(|(p, m)| EvalRequest { position: p, history: &[], repetitions: 0, moves: m })
            .collect()
    }

    #[test]
    fn every_member_gets_the_evaluations_of_its_own_requests_from_merged_batches() {
        let batcher = SharedBatcher::new(Counting {
            inner: RandomEvaluator { seed: 5 },
            calls: AtomicUsize::new(0),
            positions: AtomicUsize::new(0),
        });
        let threads = 3;
        let rounds = 20;
        std::thread::scope(|scope| {
            let members: Vec<_> = (0..threads).map(|_| batcher.join()).collect();
            for (t, member) in members.into_iter().enumerate() {
                let batcher = &batcher;
                scope.spawn(move || {
                    for round in 0..rounds {
                        // Thread t asks for 1 + (t + round) % 4 positions of its own.
                        let batch = positions(t * 100 + round, 1 + (t + round) % 4);
                        let moves: Vec<_> = batch.iter().map(|p| p.legal_moves()).collect();
                        let requests = requests(&batch, &moves);
                        let got = member.evaluate(&requests);
                        let direct = batcher.inner().inner.evaluate(&requests);
                        assert_eq!(got, direct, "thread {t} round {round}");
                    }
                    // Dropping the member lets the others' last rounds go on without it.
                });
            }
        });
        let calls = batcher.inner().calls.load(Ordering::SeqCst);
        let positions: usize = batcher.inner().positions.load(Ordering::SeqCst);
        let asked: usize =
            (0..threads).flat_map(|t| (0..rounds).map(move |r| 1 + (t + r) % 4)).sum();
        assert_eq!(positions, asked);
        // Every round merges the three threads' requests: one call per round.
        assert_eq!(calls, rounds);
        assert_eq!(batcher.batches(), rounds as u64);
    }

    #[test]
    fn a_member_leaving_lets_the_waiting_ones_go_on() {
        let batcher = SharedBatcher::new(RandomEvaluator { seed: 1 });
        let batch = positions(3, 2);
        let moves: Vec<_> = batch.iter().map(|p| p.legal_moves()).collect();
        std::thread::scope(|scope| {
            let waiting = batcher.join();
            let leaving = batcher.join();
            let (batch, moves) = (&batch, &moves);
            let handle = scope.spawn(move || waiting.evaluate(&requests(batch, moves)).len());
            // Whether or not the other thread already waits, leaving must not strand it.
            drop(leaving);
            assert_eq!(handle.join().unwrap(), 2);
        });
        assert_eq!(batcher.batches(), 1);
    }

    #[test]
    fn a_member_panicking_while_another_waits_stops_that_one_too() {
        let batcher = SharedBatcher::new(RandomEvaluator { seed: 1 });
        let outcomes = std::thread::scope(|scope| {
            let waiting = batcher.join();
            let failing = batcher.join();
            let a = scope.spawn(move || waiting.evaluate(&[]).len());
            let batcher = &batcher;
            let b = scope.spawn(move || {
                let _member = failing;
                // Panic only once the other member waits for this one.
                while batcher.lock().shares.is_empty() {
                    std::thread::yield_now();
                }
                panic!("a worker's bug");
            });
            (a.join().is_err(), b.join().is_err())
        });
        assert_eq!(outcomes, (true, true), "the waiting member panics instead of hanging");
        assert_eq!(batcher.batches(), 0, "nobody evaluated for the panicking worker");
    }

    #[test]
    fn a_panicking_evaluator_stops_the_waiting_members_instead_of_hanging_them() {
        struct Panics;
        impl Evaluator for Panics {
            fn evaluate(&self, _: &[EvalRequest<'_>]) -> Evaluations {
                panic!("broken evaluator");
            }
        }
        let batcher = SharedBatcher::new(Panics);
        let outcomes: Vec<bool> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..2)
                .map(|_| {
                    let member = batcher.join();
                    scope.spawn(move || member.evaluate(&[]).len())
                })
                .collect();
            handles.into_iter().map(|h| h.join().is_err()).collect()
        });
        assert_eq!(outcomes, [true, true], "both members panic, neither hangs");
    }
}
