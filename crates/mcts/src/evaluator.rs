//! The narrow interface between search and network (lc0's backend interface in spirit): a
//! batch of positions in, priors over each position's legal moves and WDL probabilities out.
//! [`UniformEvaluator`] and [`RandomEvaluator`] serve tests and generation 0.

use atomzero_rules::{Move, Position};

/// One position to evaluate.
#[derive(Clone, Copy, Debug)]
pub struct EvalRequest<'a> {
    /// The position.
    pub position: &'a Position,
    /// Earlier positions of the game, most recent first (for history planes).
    pub history: &'a [Position],
    /// How often `position` occurred before in the game.
    pub repetitions: usize,
    /// The legal moves; priors come back in this order.
    pub moves: &'a [Move],
}

/// The network's view of one position (borrowed from an [`Evaluations`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Evaluation<'a> {
    /// Prior probability of each requested move (sums to 1 over the legal moves).
    pub priors: &'a [f32],
    /// Win, draw, loss probabilities for the side to move (sum to 1).
    pub wdl: [f32; 3],
}

impl Evaluation<'_> {
    /// Expected score for the side to move in [-1, 1]: win − loss.
    #[inline]
    pub fn value(&self) -> f32 {
        self.wdl[0] - self.wdl[2]
    }
}

/// The evaluations of a batch, one per request in order, stored flat: every position's
/// priors in one buffer (three allocations per batch instead of one per position).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evaluations {
    priors: Vec<f32>,
    /// End of each position's priors in `priors`.
    ends: Vec<usize>,
    wdl: Vec<[f32; 3]>,
}

impl Evaluations {
    /// No evaluations.
    pub fn new() -> Evaluations {
        Evaluations::default()
    }

    /// Room for `positions` evaluations with `moves` priors in all.
    pub fn with_capacity(positions: usize, moves: usize) -> Evaluations {
        Evaluations {
            priors: Vec::with_capacity(moves),
            ends: Vec::with_capacity(positions),
            wdl: Vec::with_capacity(positions),
        }
    }

    /// Number of evaluations.
    pub fn len(&self) -> usize {
        self.wdl.len()
    }

    /// True without evaluations.
    pub fn is_empty(&self) -> bool {
        self.wdl.is_empty()
    }

    /// Appends one evaluation.
    pub fn push(&mut self, priors: impl IntoIterator<Item = f32>, wdl: [f32; 3]) {
        self.priors.extend(priors);
        self.ends.push(self.priors.len());
        self.wdl.push(wdl);
    }

    /// Appends one evaluation whose `n` priors are all `prior`.
    pub fn push_repeated(&mut self, prior: f32, n: usize, wdl: [f32; 3]) {
        self.priors.resize(self.priors.len() + n, prior);
        self.ends.push(self.priors.len());
        self.wdl.push(wdl);
    }

    /// Appends one evaluation of `n` priors that `fill` writes (they start at 0).
    pub fn push_with(&mut self, n: usize, wdl: [f32; 3], fill: impl FnOnce(&mut [f32])) {
        let start = self.priors.len();
        self.priors.resize(start + n, 0.0);
        fill(&mut self.priors[start..]);
        self.ends.push(self.priors.len());
        self.wdl.push(wdl);
    }

    /// Keeps the first `n` evaluations.
    pub fn truncate(&mut self, n: usize) {
        if n < self.len() {
            self.priors.truncate(if n == 0 { 0 } else { self.ends[n - 1] });
            self.ends.truncate(n);
            self.wdl.truncate(n);
        }
    }

    /// Appends all of `other`'s evaluations.
    pub fn append(&mut self, other: &Evaluations) {
        for e in other {
            self.push(e.priors.iter().copied(), e.wdl);
        }
    }

    /// The `i`-th evaluation.
    #[inline]
    pub fn get(&self, i: usize) -> Option<Evaluation<'_>> {
        let end = *self.ends.get(i)?;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        Some(Evaluation { priors: &self.priors[start..end], wdl: self.wdl[i] })
    }

    /// The evaluations in `range` (clamped to the ones there are), in order.
    pub fn range(&self, range: std::ops::Range<usize>) -> Iter<'_> {
        let end = range.end.min(self.len());
        Iter { evaluations: self, next: range.start.min(end), end }
    }

    /// All evaluations, in order.
    pub fn iter(&self) -> Iter<'_> {
        self.range(0..self.len())
    }
}

impl<'a> IntoIterator for &'a Evaluations {
    type Item = Evaluation<'a>;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// Iterator over (a range of) an [`Evaluations`].
#[derive(Clone, Debug)]
pub struct Iter<'a> {
    evaluations: &'a Evaluations,
    next: usize,
    end: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = Evaluation<'a>;

    #[inline]
    fn next(&mut self) -> Option<Evaluation<'a>> {
        if self.next >= self.end {
            return None;
        }
        self.next += 1;
        self.evaluations.get(self.next - 1)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end - self.next;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Iter<'_> {}

/// Evaluates batches of positions. Implementations must return one evaluation per request, in
/// order, with as many priors as the request has moves.
pub trait Evaluator {
    /// Evaluates a batch.
    fn evaluate(&self, requests: &[EvalRequest<'_>]) -> Evaluations;

    /// A short description for logs (e.g. the model path).
    fn name(&self) -> String {
        "evaluator".to_string()
    }

    /// Whether `evaluate` does its work on the calling thread (a network on the CPU), so that a
    /// batch split across idle threads finishes sooner. False by default: for an evaluator that
    /// hands the work elsewhere (a GPU, a batch shared between threads), or one too cheap to
    /// be worth splitting.
    fn computes_on_calling_thread(&self) -> bool {
        false
    }
}

impl<E: Evaluator + ?Sized> Evaluator for std::sync::Arc<E> {
    fn evaluate(&self, requests: &[EvalRequest<'_>]) -> Evaluations {
        (**self).evaluate(requests)
    }
    fn name(&self) -> String {
        (**self).name()
    }
    fn computes_on_calling_thread(&self) -> bool {
        (**self).computes_on_calling_thread()
    }
}

impl<E: Evaluator + ?Sized> Evaluator for &E {
    fn evaluate(&self, requests: &[EvalRequest<'_>]) -> Evaluations {
        (**self).evaluate(requests)
    }
    fn name(&self) -> String {
        (**self).name()
    }
    fn computes_on_calling_thread(&self) -> bool {
        (**self).computes_on_calling_thread()
    }
}

/// Another evaluator's priors sharpened or flattened by a softmax temperature `T`: each
/// position's priors become `p^(1/T)`, normalised (the softmax of the logits divided by `T`;
/// lc0's `PolicySoftmaxTemp`). Above 1 the search spreads its visits wider. The order of the
/// priors is kept, and with it the search's tie-breaking.
#[derive(Clone, Debug)]
pub struct PolicyTemperature<E> {
    /// The evaluator whose priors are tempered.
    pub inner: E,
    /// The temperature (positive; 1 changes nothing).
    pub temperature: f32,
}

impl<E: Evaluator> Evaluator for PolicyTemperature<E> {
    fn evaluate(&self, requests: &[EvalRequest<'_>]) -> Evaluations {
        let raw = self.inner.evaluate(requests);
        let inverse = 1.0 / self.temperature;
        let mut out = Evaluations::with_capacity(raw.len(), raw.priors.len());
        for e in &raw {
            out.push_with(e.priors.len(), e.wdl, |priors| {
                for (p, &q) in priors.iter_mut().zip(e.priors) {
                    *p = prior_power(q, inverse);
                }
                let sum: f32 = priors.iter().sum();
                if sum > 0.0 && sum.is_finite() {
                    priors.iter_mut().for_each(|p| *p /= sum);
                } else {
                    priors.copy_from_slice(e.priors);
                }
            });
        }
        out
    }

    fn name(&self) -> String {
        format!("{} (policy temperature {})", self.inner.name(), self.temperature)
    }

    fn computes_on_calling_thread(&self) -> bool {
        self.inner.computes_on_calling_thread()
    }
}

/// `q^y` for a prior `q` and an exponent `y` in (0, 16], within a relative 2.5e-7 · (1 + |x|)
/// of the exact power, `x = y · log2 q` (measured: under 1e-7 · (1 + |x|); an f32 `x` alone is
/// within 3e-8 · |x|); 0 for `q` zero, negative, subnormal or NaN and where the power is below
/// 2^-125, `+∞` for `+∞`.
///
/// `powf` and the `logf` it calls were 1.6–4% of the engine's time (perf, 2026-12-07): a
/// library call per legal move of every evaluation. This is `exp2(y · log2 q)` from
/// polynomials, without branches or calls, so that the loop over a position's priors
/// vectorizes. `log2 q` takes the exponent and `ln m = 2 atanh((m − 1)/(m + 1))` (five terms)
/// for the mantissa `m` in [√½, √2); `2^x` splits `x` into the nearest integer, added to the
/// exponent, and `f` in [−½, ½], whose `e^(f ln 2)` is its Taylor series to the 7th power
/// (remainder below 6e-9). Priors are stored with 2^-12 relative precision
/// ([`crate::tree::Prior`]), far coarser.
#[inline]
pub fn prior_power(q: f32, y: f32) -> f32 {
    // log2(q) = e + log2(m), m in [√½, √2).
    let bits = q.to_bits() as i32;
    let e = (bits.wrapping_sub(0x3f35_04f3)) >> 23;
    let m = f32::from_bits(bits.wrapping_sub(e << 23) as u32);
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let ln_m =
        2.0 * s * (1.0 + s2 * (1.0 / 3.0 + s2 * (0.2 + s2 * (1.0 / 7.0 + s2 * (1.0 / 9.0)))));
    let x = y * (e as f32 + ln_m * std::f32::consts::LOG2_E);
    // 2^x = 2^n · e^(f ln 2), n the nearest integer (the magic constant's low bits), |f| ≤ ½.
    const ROUND: f32 = 12_582_912.0; // 1.5 · 2^23
    let xc = x.clamp(-126.0, 126.0);
    let shifted = xc + ROUND;
    let n = (shifted.to_bits() as i32).wrapping_sub(ROUND.to_bits() as i32);
    let t = (xc - (shifted - ROUND)) * std::f32::consts::LN_2;
    let poly = 1.0
        + t * (1.0
            + t * (0.5
                + t * (1.0 / 6.0
                    + t * (1.0 / 24.0
                        + t * (1.0 / 120.0 + t * (1.0 / 720.0 + t * (1.0 / 5040.0)))))));
    let power = f32::from_bits((poly.to_bits() as i32).wrapping_add(n << 23) as u32);
    if q == f32::INFINITY {
        f32::INFINITY
    } else if q >= f32::MIN_POSITIVE && x >= -125.0 {
        power
    } else {
        0.0
    }
}

/// Equal priors and an even WDL (value 0): search driven by the rules alone.
#[derive(Clone, Copy, Debug, Default)]
pub struct UniformEvaluator;

impl Evaluator for UniformEvaluator {
    fn evaluate(&self, requests: &[EvalRequest<'_>]) -> Evaluations {
        let moves = requests.iter().map(|r| r.moves.len()).sum();
        let mut out = Evaluations::with_capacity(requests.len(), moves);
        for r in requests {
            let p = 1.0 / r.moves.len().max(1) as f32;
            out.push_repeated(p, r.moves.len(), [1.0 / 3.0; 3]);
        }
        out
    }
    fn name(&self) -> String {
        "uniform".to_string()
    }
}

/// Pseudo-random priors and WDL, a pure function of (seed, position, move): reproducible and
/// thread-safe without shared state.
#[derive(Clone, Copy, Debug, Default)]
pub struct RandomEvaluator {
    /// Varies the random values.
    pub seed: u64,
}

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn unit(z: u64) -> f32 {
    ((z >> 40) as f32 + 0.5) / (1u64 << 24) as f32
}

impl Evaluator for RandomEvaluator {
    fn evaluate(&self, requests: &[EvalRequest<'_>]) -> Evaluations {
        let mut out = Evaluations::new();
        for r in requests {
            let base = mix(self.seed ^ r.position.hash());
            let (w, d) = (unit(mix(base ^ 1)), unit(mix(base ^ 2)));
            let total = w + d + unit(mix(base ^ 3));
            let wdl = [w / total, d / total, 1.0 - (w + d) / total];
            out.push_with(r.moves.len(), wdl, |priors| {
                for (p, m) in priors.iter_mut().zip(r.moves) {
                    *p = unit(mix(base ^ u64::from(m.to_u16())));
                }
                let sum: f32 = priors.iter().sum::<f32>().max(f32::MIN_POSITIVE);
                for p in priors {
                    *p /= sum;
                }
            });
        }
        out
    }
    fn name(&self) -> String {
        format!("random(seed={})", self.seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use atomzero_rules::Variant;

    #[test]
    fn evaluators_return_distributions() {
        let pos = Position::new(Variant::Atomic);
        let moves = pos.legal_moves();
        let req = EvalRequest { position: &pos, history: &[], repetitions: 0, moves: &moves };
        for e in [&UniformEvaluator as &dyn Evaluator, &RandomEvaluator { seed: 7 }] {
            let out = e.evaluate(&[req, req]);
            assert_eq!(out.len(), 2);
            assert_eq!(out.iter().len(), 2);
            let (a, b) = (out.get(0).unwrap(), out.get(1).unwrap());
            assert_eq!(a, b, "deterministic");
            assert_eq!(a.priors.len(), 20);
            assert!((a.priors.iter().sum::<f32>() - 1.0).abs() < 1e-5);
            assert!((a.wdl.iter().sum::<f32>() - 1.0).abs() < 1e-5);
            assert!(a.wdl.iter().all(|&p| p >= 0.0));
            assert!(out.get(2).is_none());
        }
        let other = RandomEvaluator { seed: 8 }.evaluate(&[req]);
        assert_ne!(other.get(0), RandomEvaluator { seed: 7 }.evaluate(&[req]).get(0));
    }

    #[test]
    fn policy_temperature_flattens_or_sharpens_and_keeps_the_order() {
        let pos = Position::new(Variant::Atomic);
        let moves = pos.legal_moves();
        let req = EvalRequest { position: &pos, history: &[], repetitions: 0, moves: &moves };
        let raw = RandomEvaluator { seed: 3 }.evaluate(&[req, req]);
        let raw = raw.get(0).unwrap();
        let spread = |p: &[f32]| {
            p.iter().copied().fold(0.0f32, f32::max) - p.iter().copied().fold(1.0f32, f32::min)
        };
        for (t, flatter) in [(2.0, true), (0.5, false)] {
            let tempered = PolicyTemperature { inner: RandomEvaluator { seed: 3 }, temperature: t };
            let out = tempered.evaluate(&[req, req]);
            assert_eq!(out.len(), 2);
            let e = out.get(1).unwrap();
            assert_eq!(e.wdl, raw.wdl, "values untouched");
            assert!((e.priors.iter().sum::<f32>() - 1.0).abs() < 1e-5);
            // p^(1/T) normalised, in the same order.
            let z: f32 = raw.priors.iter().map(|p| p.powf(1.0 / t)).sum();
            for (&q, &p) in e.priors.iter().zip(raw.priors) {
                assert!((q - p.powf(1.0 / t) / z).abs() < 1e-6);
            }
            for i in 0..moves.len() {
                for j in 0..moves.len() {
                    if raw.priors[i] > raw.priors[j] {
                        assert!(e.priors[i] >= e.priors[j]);
                    }
                }
            }
            assert_eq!(spread(e.priors) < spread(raw.priors), flatter, "T = {t}");
        }
        let same = PolicyTemperature { inner: RandomEvaluator { seed: 3 }, temperature: 1.0 };
        let same = same.evaluate(&[req]);
        for (&q, &p) in same.get(0).unwrap().priors.iter().zip(raw.priors) {
            assert!((q - p).abs() < 1e-6);
        }
    }

    #[test]
    fn prior_power_matches_powf() {
        // Priors from 1e-30 to 2 (a log-spaced grid, and the exact powers of two and their
        // neighbours, where the mantissa's range switches), exponents of every temperature
        // from 0.1 to 10 and beyond.
        let mut qs: Vec<f32> = (0..=3100).map(|i| 10f32.powf(-30.0 + i as f32 / 100.0)).collect();
        for k in -40..=1 {
            let p = 2f32.powi(k);
            qs.extend([p, f32::from_bits(p.to_bits() - 1), f32::from_bits(p.to_bits() + 1)]);
            let half = p * std::f32::consts::FRAC_1_SQRT_2;
            qs.extend([
                half,
                f32::from_bits(half.to_bits() - 1),
                f32::from_bits(half.to_bits() + 1),
            ]);
        }
        for y in [0.1f32, 1.0 / 2.2, 1.0 / 1.8, 1.0 / 1.4, 1.0, 2.0, 1.0 / 0.3, 10.0, 16.0] {
            for &q in &qs {
                let want = f64::from(q).powf(f64::from(y));
                let got = f64::from(prior_power(q, y));
                let x = f64::from(y) * f64::from(q).log2();
                if x < -125.0 {
                    assert!(got == 0.0 || (got - want).abs() < 2f64.powi(-124), "{q}^{y}: {got}");
                    continue;
                }
                // Relative to the result; `x` itself, an f32, is within half an ulp, a
                // relative 2^-25 · |x| of the result: the bound allows four times that.
                let error = (got - want).abs() / want;
                let bound = 2.5e-7 * (1.0 + x.abs());
                assert!(error <= bound, "{q}^{y}: {got} against {want} ({error:e})");
            }
        }
        for y in [0.1, 1.0, 10.0] {
            for q in
                [0.0f32, -0.0, -0.5, f32::NAN, f32::NEG_INFINITY, 1e-40, f32::MIN_POSITIVE / 2.0]
            {
                assert_eq!(prior_power(q, y), 0.0, "{q}^{y}");
            }
            assert_eq!(prior_power(f32::INFINITY, y), f32::INFINITY);
            assert_eq!(prior_power(1.0, y), 1.0);
        }
    }

    #[test]
    fn flat_evaluations_keep_each_position_apart() {
        let mut out = Evaluations::new();
        out.push([0.25, 0.75], [1.0, 0.0, 0.0]);
        out.push([], [0.0, 1.0, 0.0]);
        out.push_with(3, [0.0, 0.0, 1.0], |p| p.copy_from_slice(&[0.5, 0.25, 0.25]));
        let mut more = Evaluations::new();
        more.push([1.0], [0.5, 0.5, 0.0]);
        out.append(&more);
        let priors: Vec<&[f32]> = out.iter().map(|e| e.priors).collect();
        assert_eq!(priors, [&[0.25, 0.75][..], &[], &[0.5, 0.25, 0.25], &[1.0]]);
        assert_eq!(out.get(1).unwrap().value(), 0.0);
        assert_eq!(out.get(2).unwrap().value(), -1.0);
        let middle: Vec<[f32; 3]> = out.range(1..3).map(|e| e.wdl).collect();
        assert_eq!(middle, [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]);
        assert_eq!(out.range(3..9).len(), 1);
        assert_eq!(out.range(7..9).len(), 0);
        out.truncate(1);
        out.push([0.5, 0.5], [0.0, 1.0, 0.0]);
        let priors: Vec<&[f32]> = out.iter().map(|e| e.priors).collect();
        assert_eq!(priors, [&[0.25, 0.75][..], &[0.5, 0.5]]);
    }
}
