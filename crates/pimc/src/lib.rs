//! # atomzero-pimc
//!
//! Search under hidden information for the bomb variant: **Perfect-Information Monte Carlo**
//! (PIMC; Long, Sturtevant, Buro and Furtak, AAAI 2010), in the AlphaZero setting.
//!
//! The searcher knows only its [`InformationSet`]. [`Pimc::new`] draws `worlds` origins of
//! the opponent's bomb from a [`BeliefModel`] (independent draws, so a likely origin is drawn
//! more often; equal draws share one tree), replays the game in each world
//! ([`InformationSet::world`]) and searches each with an ordinary [`Search`] over the
//! world's full state and history, with a share of the visits proportional to its draws. The
//! result is the draw-weighted mean of the trees' root policies (a Gumbel root's improved
//! policy, or a PUCT root's visit distribution after pruning) and of their root values. The
//! move is the aggregate's most likely (or one sampled from it with a temperature), a move
//! proven won in every world first.
//!
//! No tree sees the truth, and the network is always given a position's side-to-move view:
//! at the opponent's nodes of a world, the sampled bomb is the opponent's own and ours is not
//! seen (the encoder reads only the mover's bomb, `atomzero_encoding`). PIMC's known
//! weaknesses remain (strategy fusion: each world's tree plays as if it knew that world; and
//! below an opponent's node the search itself knows our bomb, only the network's inputs do
//! not): it cannot value hiding information for its own sake. Bluffing is still learnable in
//! the sense that the choice to detonate or hold comes out of the search like any move.
//!
//! The core search (`atomzero-mcts`) knows nothing of the variant or of beliefs; this crate
//! puts the two together, so only the players of the bomb variant (self-play, matches)
//! depend on it.
//!
//! Like [`Search`], [`Pimc`] never calls a network directly: its trees' leaves are gathered
//! with [`Pimc::gather`], evaluated by the caller (with those of other games) and handed back
//! with [`Pimc::apply`]; [`Pimc::run`] is that loop for a lone search, through the
//! [`Evaluator`] trait.

use atomzero_belief::{BeliefModel, InfoError, InformationSet};
use atomzero_mcts::{
    Evaluation, Evaluator, Leaf, Proven, Rng, Search, SearchConfig, pending_requests,
};
use atomzero_rules::{Move, Square};
use std::collections::BTreeMap;

/// True once `search` has spent `budget` visits or proven its root.
fn finished(search: &Search, budget: u32) -> bool {
    search.budget_visits() >= budget || search.root_proven() != Proven::Unknown
}

/// A determinized search over one information set: one [`Search`] per distinct world drawn.
#[derive(Debug, Clone)]
pub struct Pimc {
    searches: Vec<Search>,
    /// The origin of the opponent's bomb in each world (`None`: nothing hidden).
    origins: Vec<Option<Square>>,
    /// The share of the draws of each world (they sum to 1).
    weights: Vec<f32>,
    /// Visits each world's search is given.
    budgets: Vec<u32>,
    /// Worlds whose search is over (budget spent, root proven, or no progress).
    done: Vec<bool>,
    /// The root visits of each world when its leaves were last gathered.
    visits_before: Vec<u32>,
}

impl Pimc {
    /// Draws `worlds` origins of the opponent's hidden bomb from `belief` (none when nothing
    /// is hidden: one world) and sets up a search of each, `visits` in all. `config` as for
    /// [`Search`] (its history length is the encoder's); `seed` drives the draws and seeds
    /// the searches. Fails if the information set is not the side to move's.
    pub fn new(
        info: &InformationSet,
        belief: &BeliefModel,
        config: SearchConfig,
        worlds: usize,
        visits: u32,
        seed: u64,
    ) -> Result<Pimc, InfoError> {
        if info.view().turn() != info.viewer() {
            return Err(InfoError::NotCurrent);
        }
        let mut rng = Rng::new(seed);
        let probabilities = belief.origin_probabilities(info);
        let mut draws: BTreeMap<Option<u8>, usize> = BTreeMap::new();
        if probabilities.is_empty() {
            draws.insert(None, 1);
        } else {
            for _ in 0..worlds.max(1) {
                let mut r = rng.uniform() as f32;
                let mut pick = probabilities.len() - 1;
                for (k, &(_, p)) in probabilities.iter().enumerate() {
                    if r < p {
                        pick = k;
                        break;
                    }
                    r -= p;
                }
                *draws.entry(Some(probabilities[pick].0.index() as u8)).or_default() += 1;
            }
        }
        let total: usize = draws.values().sum();
        let mut pimc = Pimc {
            searches: Vec::with_capacity(draws.len()),
            origins: Vec::with_capacity(draws.len()),
            weights: Vec::with_capacity(draws.len()),
            budgets: Vec::with_capacity(draws.len()),
            done: vec![false; draws.len()],
            visits_before: vec![0; draws.len()],
        };
        for (origin, count) in draws {
            let origin = origin.and_then(Square::new);
            let world = info.world(origin)?;
            let mut search =
                Search::from_history(world.position, &world.before, config, rng.next_u64());
            let budget = ((visits as f64 * count as f64 / total as f64).round() as u32).max(1);
            search.set_simulations(budget);
            pimc.searches.push(search);
            pimc.origins.push(origin);
            pimc.weights.push(count as f32 / total as f32);
            pimc.budgets.push(budget);
        }
        Ok(pimc)
    }

    /// The searches, one per world (their pending leaves, in this order, are what
    /// [`Pimc::apply`] expects evaluations for).
    pub fn searches(&self) -> &[Search] {
        &self.searches
    }

    /// The worlds: the origin of the opponent's bomb in each and its weight.
    pub fn worlds(&self) -> Vec<(Option<Square>, f32)> {
        self.origins.iter().copied().zip(self.weights.iter().copied()).collect()
    }

    /// True when every world's search is over.
    pub fn is_done(&self) -> bool {
        self.done.iter().all(|&d| d)
    }

    /// Gathers up to `leaves_per_tree` leaves in each world whose search is not over; returns
    /// how many are pending in all. A search is over once its budget is spent or its root
    /// proven, or when a gather neither finds a leaf nor adds a visit (nothing left to
    /// search), so that rounds without any leaf to evaluate still end the search.
    pub fn gather(&mut self, leaves_per_tree: usize) -> usize {
        for (k, search) in self.searches.iter_mut().enumerate() {
            self.done[k] = self.done[k] || finished(search, self.budgets[k]);
            if self.done[k] {
                continue;
            }
            let before = search.root_visits();
            self.visits_before[k] = before;
            let wanted = self.budgets[k].saturating_sub(search.budget_visits()) as usize;
            search.gather(leaves_per_tree.min(wanted.max(1)).max(1));
            if search.pending().is_empty() && search.root_visits() == before {
                self.done[k] = true;
            }
        }
        self.pending().count()
    }

    /// The pending leaves of all worlds, in order.
    pub fn pending(&self) -> impl Iterator<Item = &Leaf> + '_ {
        self.searches.iter().flat_map(|s| s.pending().iter())
    }

    /// Expands the pending leaves with `evaluations` (one per leaf, in the order of
    /// [`Pimc::pending`]) and marks the searches that are over.
    pub fn apply<'a>(&mut self, evaluations: impl IntoIterator<Item = Evaluation<'a>>) {
        let mut evaluations = evaluations.into_iter();
        for (k, search) in self.searches.iter_mut().enumerate() {
            let n = search.pending().len();
            search.apply(evaluations.by_ref().take(n));
            self.done[k] = self.done[k]
                || finished(search, self.budgets[k])
                || search.root_visits() == self.visits_before[k];
        }
    }

    /// Runs every world's search to its budget with `evaluator`, `batch` leaves a tree at a
    /// time (one evaluator call per round for all worlds).
    pub fn run<E: Evaluator + ?Sized>(&mut self, evaluator: &E, batch: usize) {
        while !self.is_done() {
            if self.gather(batch.max(1)) == 0 {
                continue;
            }
            let requests = pending_requests(self.searches.iter());
            let evaluations = evaluator.evaluate(&requests);
            drop(requests);
            self.apply(&evaluations);
        }
    }

    /// The aggregated root policy over the root's moves (the same in every world: a player's
    /// own moves never depend on the opponent's bomb), summing to 1: the weighted mean of the
    /// worlds' policies, each a Gumbel root's improved policy or a PUCT root's pruned visit
    /// distribution. Moves in legal-move order of the first world's tree.
    pub fn policy(&self) -> Vec<(Move, f32)> {
        let mut total: Vec<(Move, f32)> = Vec::new();
        for (search, &weight) in self.searches.iter().zip(&self.weights) {
            let policy: Vec<(Move, f32)> = if search.config().gumbel.is_some() {
                search.improved_policy()
            } else {
                let visits = search.pruned_root_children();
                let sum: u32 = visits.iter().map(|&(_, n)| n).sum();
                let n = visits.len().max(1) as f32;
                visits
                    .into_iter()
                    .map(|(m, v)| (m, if sum > 0 { v as f32 / sum as f32 } else { 1.0 / n }))
                    .collect()
            };
            for (m, p) in policy {
                match total.iter_mut().find(|(t, _)| *t == m) {
                    Some(entry) => entry.1 += weight * p,
                    None => total.push((m, weight * p)),
                }
            }
        }
        total
    }

    /// The weighted mean of the worlds' root WDL, for the side to move.
    pub fn root_wdl(&self) -> [f32; 3] {
        let mut wdl = [0.0f32; 3];
        for (search, &weight) in self.searches.iter().zip(&self.weights) {
            for (total, x) in wdl.iter_mut().zip(search.root_wdl()) {
                *total += weight * x;
            }
        }
        wdl
    }

    /// The root's result for the side to move if every world proves the same one.
    pub fn root_proven(&self) -> Proven {
        let first = self.searches.first().map_or(Proven::Unknown, Search::root_proven);
        if self.searches.iter().all(|s| s.root_proven() == first) { first } else { Proven::Unknown }
    }

    /// Moves proven won in every world, and moves proven lost in every world.
    fn proofs(&self) -> (Vec<Move>, Vec<Move>) {
        let stats: Vec<_> = self.searches.iter().map(Search::root_child_stats).collect();
        let Some(first) = stats.first() else { return (Vec::new(), Vec::new()) };
        let everywhere = |m: Move, proof: Proven| {
            stats.iter().all(|s| s.iter().any(|c| c.mv == m && c.proven == proof))
        };
        let won = first.iter().map(|c| c.mv).filter(|&m| everywhere(m, Proven::Win)).collect();
        let lost = first.iter().map(|c| c.mv).filter(|&m| everywhere(m, Proven::Loss)).collect();
        (won, lost)
    }

    /// The move to play: one proven won in every world if there is one, else the most likely
    /// move of [`Pimc::policy`] that is not proven lost in every world (unless all are).
    pub fn best_move(&self) -> Option<Move> {
        self.choose(0.0, &mut Rng::new(0))
    }

    /// A move sampled with probability ∝ policy^(1/temperature) (a move proven won in every
    /// world first, moves proven lost in every world never unless all are); temperature 0
    /// is [`Pimc::best_move`].
    pub fn sample_move(&self, temperature: f32, rng: &mut Rng) -> Option<Move> {
        self.choose(temperature, rng)
    }

    fn choose(&self, temperature: f32, rng: &mut Rng) -> Option<Move> {
        let (won, lost) = self.proofs();
        if let Some(&m) = won.first() {
            return Some(m);
        }
        let policy = self.policy();
        let all_lost = policy.iter().all(|(m, _)| lost.contains(m));
        let eligible: Vec<(Move, f32)> =
            policy.into_iter().filter(|(m, _)| all_lost || !lost.contains(m)).collect();
        if temperature <= 0.0 {
            // Ties go to the earlier move.
            return eligible
                .iter()
                .fold(None, |best: Option<(Move, f32)>, &(m, p)| match best {
                    Some((_, b)) if b >= p => best,
                    _ => Some((m, p)),
                })
                .map(|(m, _)| m);
        }
        let weights: Vec<f64> = eligible
            .iter()
            .map(|&(_, p)| f64::from(p).powf(1.0 / f64::from(temperature)))
            .collect();
        let total: f64 = weights.iter().sum();
        if !(total > 0.0 && total.is_finite()) {
            return self.best_move();
        }
        let mut r = rng.uniform() * total;
        for (&(m, _), w) in eligible.iter().zip(&weights) {
            if r < *w {
                return Some(m);
            }
            r -= w;
        }
        eligible.last().map(|&(m, _)| m)
    }
}
