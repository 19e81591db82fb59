//! The self-play loop: workers on a rayon pool, each playing `games_per_worker` games at once
//! and evaluating all their leaves in one batch per round (its own, or with `batching =
//! "shared"` one for all the workers: [`crate::batcher`]).
//!
//! At the end of a run the workers run out of games one by one. With their own batches on a
//! CPU network, a worker that has stopped leaves its core to the others: they split each batch
//! into one part per thread ([`Helped`]), which the stopped workers' threads take (rayon's work
//! stealing), instead of leaving that core idle while the last long games finish.

use crate::batcher::SharedBatcher;
use crate::config::{Batching, RootSearch, SelfplayConfig};
use crate::openings::Openings;
use atomzero_belief::{BeliefModel, InformationSet};
use atomzero_mcts::{EvalRequest, Evaluations, Evaluator, Proven, Rng, Search, pending_requests};
use atomzero_pimc::Pimc;
use atomzero_replay::{EndReason, GameRecord, MoveRecord, SearchTarget};
use atomzero_rules::{CastlingMode, Color, Game, Move, PgnGame, Position, Variant};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

/// Figures about one finished game.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GameStats {
    /// Game number (0-based, the order games were started in).
    pub index: usize,
    /// Plies played.
    pub plies: usize,
    /// Moves recorded as training targets.
    pub targets: usize,
    /// Leaves evaluated for this game.
    pub evaluations: u64,
    /// A resignation in a played-out game that the result proved wrong.
    pub false_resignation: bool,
}

/// What self-play reports to its caller.
#[derive(Debug)]
pub enum SelfplayEvent {
    /// A game finished.
    Game(Box<GameRecord>, GameStats),
    /// Evaluator calls since the last report: (batches, positions). With a shared batch these
    /// are the worker's hand-ins, several of which make one call to the network.
    Batches { batches: u64, positions: u64 },
}

/// The search of one game in progress. The tree stays inline (the common case; one slot per
/// game, so the size does not matter) and the bomb variant's worlds are boxed.
#[allow(clippy::large_enum_variant)]
enum Searcher {
    /// A perfect-information variant: one tree, reused from move to move.
    Tree(Search),
    /// The bomb variant: Perfect-Information Monte Carlo over worlds drawn from the side to
    /// move's information set and the belief, set up anew for every move.
    Worlds(Box<Pimc>),
    /// The bomb variant's worlds could not be set up (an inconsistent game): dropped.
    Failed,
}

impl Searcher {
    /// The trees whose pending leaves go to the evaluator, in order.
    fn searches(&self) -> &[Search] {
        match self {
            Searcher::Tree(search) => std::slice::from_ref(search),
            Searcher::Worlds(pimc) => pimc.searches(),
            Searcher::Failed => &[],
        }
    }

    /// Visits of all the trees' roots.
    fn root_visits(&self) -> u32 {
        self.searches().iter().map(Search::root_visits).sum()
    }
}

/// The bomb variant's state of a game in progress.
struct Hidden {
    /// What each player knows (White's, Black's).
    infos: [InformationSet; 2],
    /// Random plies still to play once both bombs are chosen.
    plies_after_setup: usize,
}

/// One game in progress inside a worker.
struct Slot {
    index: usize,
    game: Game,
    searcher: Searcher,
    /// The bomb variant's information sets (`None` in the other variants).
    hidden: Option<Hidden>,
    rng: Rng,
    full: bool,
    records: Vec<MoveRecord>,
    resign_disabled: bool,
    resign_point: Option<(u16, Color)>,
    low_value_streak: [usize; 2],
    start_fen: String,
    chess960: bool,
    evaluations: u64,
    /// Random plies still to play after the first move (the Balanced start's removal).
    plies_after_first_move: usize,
}

fn mix(seed: u64, index: u64) -> u64 {
    let mut z = seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 33)).wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    z ^ (z >> 33)
}

/// The bomb variant's search of the side to move in `game`: PIMC over worlds drawn from its
/// information set and the belief.
fn worlds(
    hidden: &Hidden,
    game: &Game,
    shared: &Shared<'_>,
    config: atomzero_mcts::SearchConfig,
    visits: u32,
    seed: u64,
) -> Searcher {
    let info = &hidden.infos[game.position().turn().index()];
    let worlds = shared.config.determinizations;
    match Pimc::new(info, shared.belief, config, worlds, visits, seed) {
        Ok(pimc) => Searcher::Worlds(Box::new(pimc)),
        Err(_) => Searcher::Failed,
    }
}

impl Slot {
    fn new(index: usize, shared: &Shared<'_>) -> Slot {
        let (config, variant, openings) = (shared.config, shared.variant, shared.openings);
        let mut rng = Rng::new(mix(shared.seed, index as u64));
        // The bomb variant: both bombs are chosen by search (the first two moves), and the
        // random opening plies follow the choices.
        let bomb = variant == Variant::Bomb;
        let (start, plies_after_setup) = match openings {
            Openings::RandomPlies(plies) if bomb => (Position::new(variant), *plies),
            _ => (openings.opening(index, variant, &mut rng), 0),
        };
        let full = rng.uniform() < config.full_search_fraction;
        let game = Game::new(start);
        let visits = if full { config.visits } else { config.cheap_visits };
        let search_config = config.search_config(full, shared.history);
        let (searcher, hidden) = if bomb {
            let infos = [
                InformationSet::new(&start, Color::White),
                InformationSet::new(&start, Color::Black),
            ];
            let hidden = Hidden { infos, plies_after_setup };
            let searcher = worlds(&hidden, &game, shared, search_config, visits, rng.next_u64());
            (searcher, Some(hidden))
        } else {
            let mut search = Search::new(&game, search_config, rng.next_u64());
            search.set_simulations(visits);
            (Searcher::Tree(search), None)
        };
        Slot {
            index,
            game,
            searcher,
            hidden,
            full,
            records: Vec::new(),
            resign_disabled: rng.uniform() < config.resign_playthrough,
            resign_point: None,
            low_value_streak: [0, 0],
            start_fen: start.fen(),
            chess960: start.castling_mode() == CastlingMode::Chess960,
            evaluations: 0,
            plies_after_first_move: openings.plies_after_first_move(),
            rng,
        }
    }

    fn target_visits(&self, config: &SelfplayConfig) -> u32 {
        if self.full { config.visits } else { config.cheap_visits }
    }

    /// Plays the searched move; returns the finished game if it ended.
    fn make_move(&mut self, shared: &Shared<'_>) -> Option<(GameRecord, GameStats)> {
        let config = shared.config;
        let turn = self.game.position().turn();
        let ply = self.game.ply();
        let (wdl, proven) = match &self.searcher {
            Searcher::Tree(search) => (search.root_wdl(), search.root_proven()),
            Searcher::Worlds(pimc) => (pimc.root_wdl(), pimc.root_proven()),
            Searcher::Failed => return None,
        };
        let value = wdl[0] - wdl[2];
        let streak = &mut self.low_value_streak[turn.index()];
        *streak = if value < config.resign_threshold { *streak + 1 } else { 0 };
        if config.resign_consecutive > 0
            && *streak >= config.resign_consecutive
            && proven != Proven::Win
        {
            if !self.resign_disabled {
                return Some(self.finish(Some(!turn), EndReason::Resignation));
            }
            self.resign_point.get_or_insert((ply.min(u16::MAX as usize) as u16, turn));
        }
        let gumbel = config.root_search == RootSearch::Gumbel;
        let temperature = if ply < config.temperature_plies {
            config.temperature
        } else {
            config.final_temperature
        };
        let (mv, policy, surprise) = match &mut self.searcher {
            Searcher::Tree(search) => {
                let mv =
                    if gumbel { search.gumbel_move()? } else { search.sample_move(temperature)? };
                let policy = self.full.then(|| {
                    if gumbel {
                        search.improved_policy().into_iter().filter(|&(_, w)| w > 0.0).collect()
                    } else {
                        // Visit counts, less the forced playouts' (KataGo's pruning; unchanged
                        // without forced playouts).
                        let visits =
                            search.pruned_root_children().into_iter().filter(|&(_, n)| n > 0);
                        visits.map(|(m, n)| (m, n as f32)).collect::<Vec<_>>()
                    }
                });
                let surprise =
                    policy.as_ref().map(|policy| policy_surprise(policy, &search.root_priors()));
                (mv, policy, surprise)
            }
            Searcher::Worlds(pimc) => {
                // The move is drawn from the worlds' aggregate (PUCT or Gumbel), which is
                // also the policy target.
                let mv = pimc.sample_move(temperature, &mut self.rng)?;
                let policy = self.full.then(|| {
                    pimc.policy().into_iter().filter(|&(_, w)| w > 0.0).collect::<Vec<_>>()
                });
                // Each world's search has its own priors: no one prior to compare with.
                (mv, policy, None)
            }
            Searcher::Failed => return None,
        };
        let target = policy.map(|policy| SearchTarget { policy, root_wdl: wdl, surprise });
        self.records.push(MoveRecord { mv, target });
        if let Some(finished) = self.play(mv, config) {
            return Some(finished);
        }
        self.full = self.rng.uniform() < config.full_search_fraction;
        let visits = self.target_visits(config);
        match &mut self.searcher {
            Searcher::Tree(search) => {
                search.set_dirichlet_epsilon(config.dirichlet_epsilon(self.full));
                search.set_forced_playouts(config.forced_playouts(self.full));
                search.set_simulations(visits);
                search.advance(mv);
                // The Balanced start: random plies (not targets) after the searched removal.
                for _ in 0..std::mem::take(&mut self.plies_after_first_move) {
                    let moves = self.game.position().legal_moves();
                    let Some(&random) = moves.get(self.rng.below(moves.len().max(1))) else {
                        break;
                    };
                    self.records.push(MoveRecord { mv: random, target: None });
                    self.game.play_unchecked(random);
                    if let Some(outcome) = self.game.outcome() {
                        return Some(
                            self.finish(outcome.winner, EndReason::Rules(outcome.termination)),
                        );
                    }
                    if self.game.ply() >= config.max_plies {
                        return Some(self.finish(None, EndReason::MaxLength));
                    }
                    if let Searcher::Tree(search) = &mut self.searcher {
                        search.advance(random);
                    }
                }
            }
            Searcher::Worlds(_) | Searcher::Failed => {
                // The bomb variant: random plies (not targets, never a detonation) once both
                // bombs are chosen; then a new search from the next mover's information set.
                let setup_done = !self.game.position().is_setup_phase();
                let plies = match self.hidden.as_mut() {
                    Some(hidden) if setup_done => std::mem::take(&mut hidden.plies_after_setup),
                    _ => 0,
                };
                for _ in 0..plies {
                    let quiet: Vec<Move> = self
                        .game
                        .position()
                        .legal_moves()
                        .iter()
                        .copied()
                        .filter(|m| !m.is_detonation())
                        .collect();
                    let Some(&random) = quiet.get(self.rng.below(quiet.len().max(1))) else {
                        break;
                    };
                    self.records.push(MoveRecord { mv: random, target: None });
                    if let Some(finished) = self.play(random, config) {
                        return Some(finished);
                    }
                }
                let search_config = config.search_config(self.full, shared.history);
                let seed = self.rng.next_u64();
                self.searcher = match &self.hidden {
                    Some(hidden) => worlds(hidden, &self.game, shared, search_config, visits, seed),
                    None => Searcher::Failed,
                };
            }
        }
        None
    }

    /// Plays `mv` (recorded already) in the game and in the bomb variant's information sets;
    /// returns the finished game if it ended.
    fn play(&mut self, mv: Move, config: &SelfplayConfig) -> Option<(GameRecord, GameStats)> {
        if let Some(hidden) = self.hidden.as_mut() {
            let before = *self.game.position();
            for info in &mut hidden.infos {
                if info.push(&before, mv).is_err() {
                    self.searcher = Searcher::Failed;
                }
            }
        }
        self.game.play_unchecked(mv);
        if let Some(outcome) = self.game.outcome() {
            return Some(self.finish(outcome.winner, EndReason::Rules(outcome.termination)));
        }
        if self.game.ply() >= config.max_plies {
            return Some(self.finish(None, EndReason::MaxLength));
        }
        None
    }

    fn finish(&mut self, winner: Option<Color>, reason: EndReason) -> (GameRecord, GameStats) {
        let record = GameRecord {
            variant: self.game.position().variant(),
            start_fen: std::mem::take(&mut self.start_fen),
            chess960: self.chess960,
            moves: std::mem::take(&mut self.records),
            winner,
            reason,
            resign_disabled: self.resign_disabled,
            resign_point: self.resign_point,
        };
        let stats = GameStats {
            index: self.index,
            plies: record.moves.len(),
            targets: record.n_targets(),
            evaluations: self.evaluations,
            false_resignation: self.resign_point.is_some_and(|(_, side)| winner != Some(!side)),
        };
        (record, stats)
    }
}

struct Shared<'a> {
    config: &'a SelfplayConfig,
    /// The belief over the opponent's bomb (the bomb variant's worlds are drawn from it).
    belief: &'a BeliefModel,
    variant: Variant,
    openings: &'a Openings,
    history: usize,
    seed: u64,
    n_games: usize,
    next_game: AtomicUsize,
    stop: AtomicBool,
    /// Workers started.
    workers: usize,
    /// Workers still playing (the others' threads are free to help).
    playing: AtomicUsize,
}

/// A worker's own evaluator: while some workers have stopped (no games left), each batch is
/// split into one part per free thread plus one, evaluated in parallel on the pool, and the
/// results joined in order. Only for evaluators that compute on the calling thread.
struct Helped<'a, E: ?Sized> {
    inner: &'a E,
    shared: &'a Shared<'a>,
}

impl<E: Evaluator + Sync + ?Sized> Evaluator for Helped<'_, E> {
    fn evaluate(&self, requests: &[EvalRequest<'_>]) -> Evaluations {
        let free = self.shared.workers.saturating_sub(self.shared.playing.load(Ordering::Relaxed));
        let parts = if free > 0 && self.inner.computes_on_calling_thread() { 1 + free } else { 1 };
        evaluate_in_parts(self.inner, requests, parts)
    }

    fn name(&self) -> String {
        self.inner.name()
    }
}

/// `requests` evaluated as up to `parts` consecutive parts of near-equal size, in parallel
/// (`rayon::join`: a part nobody takes is run by the calling thread), joined in order.
fn evaluate_in_parts<E: Evaluator + Sync + ?Sized>(
    evaluator: &E,
    requests: &[EvalRequest<'_>],
    parts: usize,
) -> Evaluations {
    let parts = parts.min(requests.len());
    if parts <= 1 {
        return evaluator.evaluate(requests);
    }
    let left_parts = parts / 2;
    let (left, right) = requests.split_at(requests.len() * left_parts / parts);
    let (mut out, right) = rayon::join(
        || evaluate_in_parts(evaluator, left, left_parts),
        || evaluate_in_parts(evaluator, right, parts - left_parts),
    );
    out.append(&right);
    out
}

/// One worker's loop, evaluating through `evaluator` (the shared evaluator itself, or the
/// worker's membership of the shared batch).
fn worker<E: Evaluator + ?Sized>(
    shared: &Shared<'_>,
    evaluator: &E,
    tx: mpsc::Sender<SelfplayEvent>,
) {
    let config = shared.config;
    // No more slots than games: `games_per_worker` is the user's number (a huge one
    // overflowed the capacity here).
    let mut slots: Vec<Slot> = Vec::with_capacity(config.games_per_worker.min(shared.n_games));
    let (mut batches, mut positions) = (0u64, 0u64);
    loop {
        while slots.len() < config.games_per_worker && !shared.stop.load(Ordering::Relaxed) {
            let index = shared.next_game.fetch_add(1, Ordering::Relaxed);
            if index >= shared.n_games {
                break;
            }
            slots.push(Slot::new(index, shared));
        }
        if slots.is_empty() {
            break;
        }
        let mut visits_before: Vec<u32> = slots.iter().map(|s| s.searcher.root_visits()).collect();
        for slot in slots.iter_mut() {
            let wanted = slot.target_visits(config);
            match &mut slot.searcher {
                Searcher::Tree(search) => {
                    let wanted = wanted.saturating_sub(search.budget_visits()) as usize;
                    search.gather(config.leaves_per_tree.min(wanted.max(1)));
                }
                Searcher::Worlds(pimc) => {
                    pimc.gather(config.leaves_per_tree);
                }
                Searcher::Failed => {}
            }
        }
        let requests = pending_requests(slots.iter().flat_map(|s| s.searcher.searches()));
        if !requests.is_empty() {
            let evals = evaluator.evaluate(&requests);
            batches += 1;
            positions += requests.len() as u64;
            drop(requests);
            let mut offset = 0;
            for slot in slots.iter_mut() {
                let n: usize = slot.searcher.searches().iter().map(|s| s.pending().len()).sum();
                slot.evaluations += n as u64;
                let evaluations = evals.range(offset..offset + n);
                match &mut slot.searcher {
                    Searcher::Tree(search) => search.apply(evaluations),
                    Searcher::Worlds(pimc) => pimc.apply(evaluations),
                    Searcher::Failed => {}
                }
                offset += n;
            }
        }
        let mut i = 0;
        while i < slots.len() {
            let slot = &mut slots[i];
            let (done_searching, no_moves) = match &slot.searcher {
                Searcher::Tree(search) => (
                    search.budget_visits() >= slot.target_visits(config)
                        || search.root_proven() != Proven::Unknown
                        || search.root_visits() == visits_before[i],
                    search.root_children().is_empty(),
                ),
                Searcher::Worlds(pimc) => (pimc.is_done(), pimc.policy().is_empty()),
                Searcher::Failed => (true, true),
            };
            // A root without children after searching has no legal move although the game is
            // not over: impossible for legal positions; drop such a game rather than loop.
            let stuck = done_searching && no_moves;
            let finished = if done_searching && !stuck { slot.make_move(shared) } else { None };
            if let Some((record, stats)) = finished {
                if tx.send(SelfplayEvent::Game(Box::new(record), stats)).is_err() {
                    shared.stop.store(true, Ordering::Relaxed);
                }
                slots.swap_remove(i);
                visits_before.swap_remove(i);
                continue;
            }
            if stuck {
                slots.swap_remove(i);
                visits_before.swap_remove(i);
                continue;
            }
            i += 1;
        }
        if batches >= 16 {
            let _ = tx.send(SelfplayEvent::Batches { batches, positions });
            (batches, positions) = (0, 0);
        }
        if shared.stop.load(Ordering::Relaxed) {
            break;
        }
    }
    shared.playing.fetch_sub(1, Ordering::Relaxed);
    let _ = tx.send(SelfplayEvent::Batches { batches, positions });
}

/// Plays `n_games` games with `evaluator` and hands every event to `on_event` on the calling
/// thread; `on_event` returning `false` stops self-play (games in progress are abandoned).
/// Games are seeded by `seed` and their index, so a game's moves do not depend on the thread
/// that played it, nor on how leaves were batched, as long as an evaluation does not depend on
/// the batch it is in (atomzero-infer's may differ in the last bits between the paths a batch's
/// size picks: `InferNet::forward_moves_into`).
#[allow(clippy::too_many_arguments)]
pub fn run<E: Evaluator + Sync + ?Sized>(
    evaluator: &E,
    config: &SelfplayConfig,
    variant: Variant,
    openings: &Openings,
    n_games: usize,
    history: usize,
    seed: u64,
    on_event: impl FnMut(SelfplayEvent) -> bool,
) {
    let belief = BeliefModel::uniform();
    run_with_belief(
        evaluator, &belief, config, variant, openings, n_games, history, seed, on_event,
    );
}

/// [`run`] with a belief over the opponent's bomb for the bomb variant's searches (which
/// draw their worlds from it; [`run`] uses the uniform belief). Other variants ignore it.
#[allow(clippy::too_many_arguments)]
pub fn run_with_belief<E: Evaluator + Sync + ?Sized>(
    evaluator: &E,
    belief: &BeliefModel,
    config: &SelfplayConfig,
    variant: Variant,
    openings: &Openings,
    n_games: usize,
    history: usize,
    seed: u64,
    mut on_event: impl FnMut(SelfplayEvent) -> bool,
) {
    let threads = if config.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        config.threads
    };
    let workers = threads.min(n_games.div_ceil(config.games_per_worker.max(1))).max(1);
    let shared = Shared {
        config,
        belief,
        variant,
        openings,
        history,
        seed,
        n_games,
        next_game: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
        workers,
        playing: AtomicUsize::new(workers),
    };
    let (tx, rx) = mpsc::channel();
    let pool = match rayon::ThreadPoolBuilder::new().num_threads(workers).build() {
        Ok(pool) => pool,
        Err(_) => {
            // Could not start threads: play on this thread.
            worker(&shared, evaluator, tx);
            for event in rx.try_iter() {
                if !on_event(event) {
                    break;
                }
            }
            return;
        }
    };
    let batcher = SharedBatcher::new(evaluator);
    std::thread::scope(|scope| {
        let (shared, batcher) = (&shared, &batcher);
        scope.spawn(move || {
            // With a shared batch, every worker joins before any starts, so the first round
            // waits for all of them.
            let members: Vec<_> = (0..workers)
                .map(|_| (config.batching == Batching::Shared).then(|| batcher.join()))
                .collect();
            pool.scope(|s| {
                for member in members {
                    let tx = tx.clone();
                    match member {
                        None => s.spawn(move |_| {
                            worker(shared, &Helped { inner: evaluator, shared }, tx)
                        }),
                        Some(member) => s.spawn(move |_| worker(shared, &member, tx)),
                    }
                }
            });
            drop(tx);
        });
        for event in rx.iter() {
            if !on_event(event) {
                shared.stop.store(true, Ordering::Relaxed);
                break;
            }
        }
        // Drain so workers never block (the channel is unbounded; this only waits for them).
    });
}

/// The PGN form of a recorded game.
pub fn record_to_pgn(record: &GameRecord) -> Option<PgnGame> {
    let mode = if record.chess960 { CastlingMode::Chess960 } else { CastlingMode::Standard };
    let start = Position::from_fen_with_mode(&record.start_fen, record.variant, mode).ok()?;
    let mut pgn = PgnGame::new(start);
    pgn.moves = record.moves.iter().map(|m| m.mv).collect();
    pgn.result = match record.winner {
        Some(Color::White) => "1-0",
        Some(Color::Black) => "0-1",
        None => "1/2-1/2",
    }
    .to_string();
    pgn.set_tag("Termination", record.reason.description());
    Some(pgn)
}

/// KataGo's policy surprise of a training target: the Kullback–Leibler divergence
/// `Σ π(m) ln(π(m) / p(m))` of the normalised policy target `π` from the priors `p` the search
/// started from, in nats (priors floored at 1e-6, so a target on a move the network all but
/// ruled out is very surprising, not infinitely). 0 for an empty or all-zero target.
pub(crate) fn policy_surprise(target: &[(Move, f32)], priors: &[(Move, f32)]) -> f32 {
    let total: f32 = target.iter().map(|&(_, w)| w).sum();
    if !(total > 0.0 && total.is_finite()) {
        return 0.0;
    }
    let kl: f32 = target
        .iter()
        .filter(|&&(_, w)| w > 0.0)
        .map(|&(m, w)| {
            let pi = w / total;
            let p = priors.iter().find(|&&(n, _)| n == m).map_or(0.0, |&(_, p)| p).max(1e-6);
            pi * (pi / p).ln()
        })
        .sum();
    // Rounding can take a divergence of nearly equal distributions a hair below zero.
    kl.max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use atomzero_mcts::RandomEvaluator;
    use std::sync::Mutex;

    /// A position-wise evaluator that records the size of every call.
    struct Recording {
        on_calling_thread: bool,
        sizes: Mutex<Vec<usize>>,
    }

    impl Evaluator for Recording {
        fn evaluate(&self, requests: &[EvalRequest<'_>]) -> Evaluations {
            self.sizes.lock().unwrap().push(requests.len());
            RandomEvaluator { seed: 5 }.evaluate(requests)
        }

        fn computes_on_calling_thread(&self) -> bool {
            self.on_calling_thread
        }
    }

    #[test]
    fn policy_surprise_is_the_divergence_of_the_target_from_the_priors() {
        let moves = Position::new(Variant::Atomic).legal_moves();
        let (a, b, c) = (moves[0], moves[1], moves[2]);
        let priors = [(a, 0.25), (b, 0.75)];
        // A target equal to the priors (unnormalised) surprises nobody.
        assert!(policy_surprise(&[(a, 1.0), (b, 3.0)], &priors).abs() < 1e-6);
        // All of it on a move with prior 1/4: ln 4.
        let s = policy_surprise(&[(a, 2.0)], &priors);
        assert!((s - 4f32.ln()).abs() < 1e-5, "{s}");
        // Half on each: 0.5 ln 2 + 0.5 ln(2/3).
        let s = policy_surprise(&[(a, 0.5), (b, 0.5)], &priors);
        assert!((s - (0.5 * 2f32.ln() + 0.5 * (2.0f32 / 3.0).ln())).abs() < 1e-5, "{s}");
        // A move without a prior is floored at 1e-6, not infinite.
        let s = policy_surprise(&[(c, 1.0)], &priors);
        assert!((s - 1e6f32.ln()).abs() < 1e-3, "{s}");
        assert_eq!(policy_surprise(&[], &priors), 0.0);
        assert_eq!(policy_surprise(&[(a, 0.0)], &priors), 0.0);
    }

    #[test]
    fn stopped_workers_take_parts_of_the_batch_and_the_results_keep_their_order() {
        let mut positions = Vec::new();
        let mut pos = Position::new(Variant::Atomic);
        for i in 0..23 {
            positions.push(pos);
            let moves = pos.legal_moves();
            pos.play_unchecked(moves[(i * 7) % moves.len()]);
        }
        let moves: Vec<_> = positions.iter().map(|p| p.legal_moves()).collect();
        let requests: Vec<EvalRequest<'_>> = positions
            .iter()
            .zip(&moves)
            .map(|(position, moves)| EvalRequest { position, history: &[], repetitions: 0, moves })
            .collect();
        let expected = RandomEvaluator { seed: 5 }.evaluate(&requests);
        let config = SelfplayConfig::default();
        let openings = Openings::RandomPlies(0);
        for (workers, playing, on_calling_thread, n, parts) in [
            // Everybody still playing: one call.
            (2, 2, true, 23, vec![23]),
            // One of two stopped: two halves.
            (2, 1, true, 23, vec![11, 12]),
            // Three of four stopped: four parts.
            (4, 1, true, 23, vec![5, 6, 6, 6]),
            // Never more parts than positions.
            (4, 1, true, 2, vec![1, 1]),
            (4, 1, true, 1, vec![1]),
            (4, 1, true, 0, vec![0]),
            // An evaluator that does not compute on the calling thread is never split.
            (2, 1, false, 23, vec![23]),
        ] {
            let belief = BeliefModel::uniform();
            let shared = Shared {
                config: &config,
                belief: &belief,
                variant: Variant::Atomic,
                openings: &openings,
                history: 0,
                seed: 0,
                n_games: 0,
                next_game: AtomicUsize::new(0),
                stop: AtomicBool::new(false),
                workers,
                playing: AtomicUsize::new(playing),
            };
            let inner = Recording { on_calling_thread, sizes: Mutex::new(Vec::new()) };
            let out = Helped { inner: &inner, shared: &shared }.evaluate(&requests[..n]);
            let mut sizes = inner.sizes.into_inner().unwrap();
            sizes.sort_unstable();
            assert_eq!(sizes, parts, "{workers} workers, {playing} playing, {n} positions");
            assert_eq!(out.len(), n);
            for (got, want) in out.iter().zip(&expected) {
                assert_eq!(got, want);
            }
        }
    }
}
