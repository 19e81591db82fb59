//! An evaluation cache in front of another evaluator (lc0's NNCache): a position the network
//! has seen is not sent to it again, whether it comes back by transposition within one search,
//! in the next move's search, or twice in one batch.
//!
//! The key is everything the network's input is made of: the position's Zobrist hash (pieces,
//! side to move, castling rights, en passant), its variant, the repetition count (the encoder
//! reads 0, 1 or 2+), the half-move clock and the hashes of the history positions the request
//! carries (none for a net without history planes). An entry also keeps how many moves it has
//! priors for, and a hit whose move count differs is treated as a miss, so a key collision
//! can cost an evaluation but never hand a position priors of the wrong length.
//!
//! The table is direct-mapped and always replaces (a new evaluation is likelier to be asked
//! for again than an old one), its size fixed at construction. A cached evaluation is the
//! inner evaluator's bits: with the cache, a search asks the same questions and gets the same
//! answers, only some of them sooner.

use crate::evaluator::{EvalRequest, Evaluations, Evaluator};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Hits and lookups of an [`EvalCache`] since it was made (or last [`EvalCache::clear`]ed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Positions asked for.
    pub lookups: u64,
    /// Positions answered from the cache.
    pub hits: u64,
}

impl CacheStats {
    /// Share of lookups answered from the cache (0 without lookups).
    pub fn hit_rate(&self) -> f64 {
        if self.lookups == 0 { 0.0 } else { self.hits as f64 / self.lookups as f64 }
    }
}

struct Entry {
    key: u64,
    wdl: [f32; 3],
    priors: Box<[f32]>,
}

/// `inner` with a cache of its evaluations in front (see the module docs).
pub struct EvalCache<E> {
    inner: E,
    table: Mutex<Vec<Option<Entry>>>,
    mask: usize,
    lookups: AtomicU64,
    hits: AtomicU64,
}

impl<E> std::fmt::Debug for EvalCache<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvalCache").field("entries", &(self.mask + 1)).finish_non_exhaustive()
    }
}

/// SplitMix64's finaliser: spreads every input bit over the whole word.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The cache key of a request: everything the encoder reads (see the module docs).
pub fn cache_key(request: &EvalRequest<'_>) -> u64 {
    let position = request.position;
    let mut key = position.hash();
    key = mix(key ^ (position.variant() as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    key = mix(key ^ ((request.repetitions.min(2) as u64) << 32) ^ u64::from(position.halfmoves()));
    for (i, earlier) in request.history.iter().enumerate() {
        key = mix(key ^ earlier.hash().rotate_left(i as u32 + 1));
    }
    key
}

impl<E> EvalCache<E> {
    /// A cache of `entries` evaluations (rounded up to a power of two, at least 1) in front of
    /// `inner`.
    pub fn new(inner: E, entries: usize) -> EvalCache<E> {
        let size = entries.max(1).next_power_of_two();
        let mut table = Vec::new();
        table.resize_with(size, || None);
        EvalCache {
            inner,
            table: Mutex::new(table),
            mask: size - 1,
            lookups: AtomicU64::new(0),
            hits: AtomicU64::new(0),
        }
    }

    /// The number of entries the table holds.
    pub fn capacity(&self) -> usize {
        self.mask + 1
    }

    /// Hits and lookups so far.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            lookups: self.lookups.load(Ordering::Relaxed),
            hits: self.hits.load(Ordering::Relaxed),
        }
    }

    /// Empties the table and zeroes the counters.
    pub fn clear(&self) {
        let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        table.iter_mut().for_each(|e| *e = None);
        self.lookups.store(0, Ordering::Relaxed);
        self.hits.store(0, Ordering::Relaxed);
    }

    /// The evaluator behind the cache.
    pub fn inner(&self) -> &E {
        &self.inner
    }
}

impl<E: Evaluator> Evaluator for EvalCache<E> {
    fn evaluate(&self, requests: &[EvalRequest<'_>]) -> Evaluations {
        /// Where a request's evaluation comes from.
        enum Source {
            /// The table: the `n`-th of the evaluations copied out of it.
            Table(usize),
            /// The inner evaluator: the `n`-th of the evaluations it returns.
            Fresh(usize),
        }
        let keys: Vec<u64> = requests.iter().map(cache_key).collect();
        let mut sources = Vec::with_capacity(requests.len());
        let mut cached = Evaluations::new();
        // The requests the inner evaluator is asked, each distinct position once (a batch can
        // hold one position twice, reached by two paths).
        let mut missing: Vec<usize> = Vec::new();
        let mut hits = 0u64;
        {
            let table = self.table.lock().unwrap_or_else(|e| e.into_inner());
            for (i, (request, &key)) in requests.iter().zip(&keys).enumerate() {
                let moves = request.moves.len();
                if let Some(entry) = &table[key as usize & self.mask]
                    && entry.key == key
                    && entry.priors.len() == moves
                {
                    hits += 1;
                    sources.push(Source::Table(cached.len()));
                    cached.push(entry.priors.iter().copied(), entry.wdl);
                } else if let Some(n) =
                    missing.iter().position(|&j| keys[j] == key && requests[j].moves.len() == moves)
                {
                    hits += 1;
                    sources.push(Source::Fresh(n));
                } else {
                    sources.push(Source::Fresh(missing.len()));
                    missing.push(i);
                }
            }
        }
        self.lookups.fetch_add(requests.len() as u64, Ordering::Relaxed);
        self.hits.fetch_add(hits, Ordering::Relaxed);
        if missing.is_empty() {
            // Every request came from the table, in order: the copies are the answer.
            return cached;
        }
        let asked: Vec<EvalRequest<'_>> = missing.iter().map(|&i| requests[i]).collect();
        let fresh = self.inner.evaluate(&asked);
        let moves = requests.iter().map(|r| r.moves.len()).sum();
        let mut out = Evaluations::with_capacity(requests.len(), moves);
        for source in &sources {
            let e = match *source {
                Source::Table(n) => cached.get(n),
                Source::Fresh(n) => fresh.get(n),
            };
            // An inner evaluator that returns too few evaluations breaks the trait's contract;
            // the answer stops where its did, as it would without the cache.
            let Some(e) = e else { break };
            out.push(e.priors.iter().copied(), e.wdl);
        }
        {
            let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
            for (&i, e) in missing.iter().zip(&fresh) {
                if e.priors.len() == requests[i].moves.len() {
                    let key = keys[i];
                    table[key as usize & self.mask] =
                        Some(Entry { key, wdl: e.wdl, priors: e.priors.into() });
                }
            }
        }
        out
    }

    fn name(&self) -> String {
        format!("{} (cache of {} evaluations)", self.inner.name(), self.capacity())
    }

    fn computes_on_calling_thread(&self) -> bool {
        self.inner.computes_on_calling_thread()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluator::RandomEvaluator;
    use crate::{Search, SearchConfig};
    use atomzero_rules::{Game, Move, Position, Variant};
    use std::sync::atomic::AtomicUsize;

    /// A [`RandomEvaluator`] that counts the positions it is asked for.
    #[derive(Default)]
    struct Counting {
        asked: AtomicUsize,
        calls: AtomicUsize,
    }

    impl Evaluator for Counting {
        fn evaluate(&self, requests: &[EvalRequest<'_>]) -> Evaluations {
            self.asked.fetch_add(requests.len(), Ordering::Relaxed);
            self.calls.fetch_add(1, Ordering::Relaxed);
            RandomEvaluator { seed: 9 }.evaluate(requests)
        }
    }

    fn request<'a>(position: &'a Position, moves: &'a [Move]) -> EvalRequest<'a> {
        EvalRequest { position, history: &[], repetitions: 0, moves }
    }

    #[test]
    fn answers_are_the_inner_evaluators_and_each_position_is_asked_once() {
        let a = Position::new(Variant::Atomic);
        let b = a.play(a.legal_moves()[3]).unwrap();
        let (ma, mb) = (a.legal_moves(), b.legal_moves());
        let cache = EvalCache::new(Counting::default(), 64);
        let batch = [request(&a, &ma), request(&b, &mb), request(&a, &ma)];
        let direct = RandomEvaluator { seed: 9 }.evaluate(&batch);
        // The same position twice in one batch goes to the network once.
        assert_eq!(cache.evaluate(&batch), direct);
        assert_eq!(cache.inner().asked.load(Ordering::Relaxed), 2);
        assert_eq!(cache.stats(), CacheStats { lookups: 3, hits: 1 });
        // Asked again, the table answers without calling the network.
        assert_eq!(cache.evaluate(&batch), direct);
        assert_eq!(cache.inner().calls.load(Ordering::Relaxed), 1);
        assert_eq!(cache.stats(), CacheStats { lookups: 6, hits: 4 });
        cache.clear();
        assert_eq!(cache.stats(), CacheStats::default());
        assert_eq!(cache.evaluate(&batch[..1]), RandomEvaluator { seed: 9 }.evaluate(&batch[..1]));
        assert_eq!(cache.inner().asked.load(Ordering::Relaxed), 3);
    }

    #[test]
    fn what_the_encoder_reads_is_in_the_key() {
        let start = Position::new(Variant::Atomic);
        let moves = start.legal_moves();
        let base = cache_key(&request(&start, &moves));
        let repeated = EvalRequest { repetitions: 1, ..request(&start, &moves) };
        assert_ne!(cache_key(&repeated), base);
        let twice = EvalRequest { repetitions: 2, ..request(&start, &moves) };
        let thrice = EvalRequest { repetitions: 3, ..request(&start, &moves) };
        assert_ne!(cache_key(&twice), cache_key(&repeated));
        assert_eq!(cache_key(&twice), cache_key(&thrice), "the encoder reads 2+ as one");
        // The same placement after knights went out and back: another half-move clock.
        let mut later = start;
        for uci in ["g1f3", "g8f6", "f3g1", "f6g8"] {
            later = later.play(later.parse_uci(uci).unwrap()).unwrap();
        }
        assert_eq!(later.hash(), start.hash());
        assert_ne!(cache_key(&request(&later, &moves)), base);
        // Another variant, the same pieces.
        let nocheck = Position::new(Variant::NoCheckAtomic);
        assert_ne!(cache_key(&request(&nocheck, &moves)), base);
        // History positions count, in order.
        let after = start.play(moves[0]).unwrap();
        let with =
            |h: &[Position]| cache_key(&EvalRequest { history: h, ..request(&start, &moves) });
        assert_ne!(with(&[after]), base);
        assert_ne!(with(&[after, start]), with(&[start, after]));
    }

    #[test]
    fn an_entry_for_another_move_count_is_a_miss() {
        let start = Position::new(Variant::Atomic);
        let moves = start.legal_moves();
        let cache = EvalCache::new(Counting::default(), 8);
        cache.evaluate(&[request(&start, &moves)]);
        // The same key with fewer moves (as a key collision would look): asked again, and the
        // answer has the right length.
        let out = cache.evaluate(&[request(&start, &moves[..5])]);
        assert_eq!(out.get(0).unwrap().priors.len(), 5);
        assert_eq!(cache.inner().asked.load(Ordering::Relaxed), 2);
        assert_eq!(cache.stats().hits, 0);
    }

    #[test]
    fn an_inner_evaluator_that_answers_short_gets_a_short_answer_in_order() {
        struct FirstOnly;
        impl Evaluator for FirstOnly {
            fn evaluate(&self, requests: &[EvalRequest<'_>]) -> Evaluations {
                RandomEvaluator { seed: 1 }.evaluate(&requests[..1])
            }
        }
        let a = Position::new(Variant::Atomic);
        let b = a.play(a.legal_moves()[0]).unwrap();
        let (ma, mb) = (a.legal_moves(), b.legal_moves());
        let cache = EvalCache::new(FirstOnly, 8);
        cache.evaluate(&[request(&b, &mb)]);
        // b is cached; a and a second new position go to the inner evaluator, which answers
        // only a: the answer is [a, b], never [a, b, (a's answer for the other one)].
        let c = b.play(b.legal_moves()[0]).unwrap();
        let mc = c.legal_moves();
        let out = cache.evaluate(&[request(&a, &ma), request(&b, &mb), request(&c, &mc)]);
        assert_eq!(out.len(), 2);
        let expect = RandomEvaluator { seed: 1 }.evaluate(&[request(&a, &ma), request(&b, &mb)]);
        assert_eq!(out, expect);
    }

    #[test]
    fn a_search_through_the_cache_is_the_same_search_with_fewer_evaluations() {
        let game = Game::new(Position::new(Variant::Atomic));
        let config = SearchConfig::default().without_noise();
        let plain_net = Counting::default();
        let mut plain = Search::new(&game, config, 11);
        plain.run(&plain_net, 3000, 4);
        let cache = EvalCache::new(Counting::default(), 1 << 14);
        let mut cached = Search::new(&game, config, 11);
        cached.run(&cache, 3000, 4);
        assert_eq!(cached.root_children(), plain.root_children());
        assert_eq!(cached.best_move(), plain.best_move());
        let stats = cache.stats();
        let asked = cache.inner().asked.load(Ordering::Relaxed) as u64;
        assert_eq!(asked + stats.hits, stats.lookups);
        assert_eq!(stats.lookups, plain_net.asked.load(Ordering::Relaxed) as u64);
        assert!(stats.hits > 0, "transpositions in a 3000-playout tree: {stats:?}");
        // The next move's search reuses the tree, and the cache answers what the tree dropped.
        let m = cached.best_move().unwrap();
        let reply = cached.root_position().play(m).unwrap().legal_moves()[0];
        for s in [&mut plain, &mut cached] {
            s.advance(m);
            s.advance(reply);
        }
        plain.run(&plain_net, plain.root_visits() + 1000, 4);
        cached.run(&cache, cached.root_visits() + 1000, 4);
        assert_eq!(cached.root_children(), plain.root_children());
    }
}
