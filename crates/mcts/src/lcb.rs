//! The move to play by lower confidence bound (Leela Zero 0.17, KataGo's `useLcbForSelection`):
//! after the search, a root child whose mean value is better than the most visited one's by
//! more than the uncertainty of both is played instead.
//!
//! PUCT spends its visits on the child it believes best, so the most visited child is usually
//! the best-valued too; but a move found late in a short search (a tactic the priors missed)
//! can have the better value and still fewer visits when the clock stops. Each child's value is
//! a mean of `n` visits' values; its lower bound is
//!
//! ```text
//! lcb = q − z · sqrt(var / n)
//! ```
//!
//! with `var` the variance of the visits' values measured in this search ([`RootSample`],
//! from [`VARIANCE_PRIOR_WEIGHT`] pseudo-visits of [`VARIANCE_PRIOR`] on: KataGo's prior for
//! its utility variance) and `z` the `lcb_stdevs` of [`crate::SearchConfig`] (KataGo: 5). Only
//! children with at least [`MIN_VISIT_SHARE`] of the most visited child's visits compete
//! (KataGo: 0.15); the most visited child wins ties. Values are scores `win − loss` for the
//! root's side to move.

/// Least share of the most visited root child's visits a child needs to be played by LCB.
pub const MIN_VISIT_SHARE: f64 = 0.15;
/// Variance of a visit's value assumed before any is seen (KataGo's utility stdev prior, 0.4).
pub const VARIANCE_PRIOR: f64 = 0.16;
/// Weight, in visits, of [`VARIANCE_PRIOR`].
pub const VARIANCE_PRIOR_WEIGHT: f64 = 2.0;

/// The values one root child's visits backed up in this search (a reused subtree's earlier
/// visits are not in it).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RootSample {
    /// Visits counted.
    pub n: u32,
    /// Sum of their values.
    pub sum: f64,
    /// Sum of their squares.
    pub sum_sq: f64,
}

impl RootSample {
    /// Counts a visit that backed up `value`.
    #[inline]
    pub fn add(&mut self, value: f32) {
        let v = f64::from(value);
        self.n += 1;
        self.sum += v;
        self.sum_sq += v * v;
    }

    /// The variance of a visit's value: the sample's, shrunk towards [`VARIANCE_PRIOR`].
    pub fn variance(&self) -> f64 {
        let n = f64::from(self.n);
        let spread =
            if self.n > 0 { (self.sum_sq - self.sum * self.sum / n).max(0.0) } else { 0.0 };
        (spread + VARIANCE_PRIOR * VARIANCE_PRIOR_WEIGHT) / (n + VARIANCE_PRIOR_WEIGHT)
    }
}

/// One root child as LCB selection sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate {
    /// Mean value over all the child's visits, for the root's side to move.
    pub q: f32,
    /// All the child's visits.
    pub visits: u32,
    /// The values of this search's visits.
    pub sample: RootSample,
    /// The value is exact (a proven draw): no uncertainty.
    pub exact: bool,
}

impl Candidate {
    /// The child's lower confidence bound with `z` standard errors.
    pub fn lower_bound(&self, z: f32) -> f64 {
        if self.exact {
            return f64::from(self.q);
        }
        let n = f64::from(self.visits.max(1));
        f64::from(self.q) - f64::from(z) * (self.sample.variance() / n).sqrt()
    }
}

/// The index of the candidate to play: the one with the highest lower bound among those with
/// at least [`MIN_VISIT_SHARE`] of the most visited one's visits. `best` (the most visited) wins
/// ties and is the answer when nothing beats it.
pub fn select(candidates: &[Candidate], best: usize, z: f32) -> usize {
    let Some(top) = candidates.get(best) else { return best };
    let floor = (MIN_VISIT_SHARE * f64::from(top.visits)).max(1.0);
    let mut pick = (best, top.lower_bound(z));
    for (i, c) in candidates.iter().enumerate() {
        if i != best && f64::from(c.visits) >= floor {
            let lcb = c.lower_bound(z);
            if lcb > pick.1 {
                pick = (i, lcb);
            }
        }
    }
    pick.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(values: &[f32]) -> RootSample {
        let mut s = RootSample::default();
        values.iter().for_each(|&v| s.add(v));
        s
    }

    fn candidate(q: f32, visits: u32, spread: f32) -> Candidate {
        // `visits` values alternating q ± spread: mean q, variance spread².
        let values: Vec<f32> =
            (0..visits).map(|i| if i % 2 == 0 { q + spread } else { q - spread }).collect();
        Candidate { q, visits, sample: sample(&values), exact: false }
    }

    #[test]
    fn variance_is_the_samples_shrunk_towards_the_prior() {
        assert!((RootSample::default().variance() - VARIANCE_PRIOR).abs() < 1e-12);
        // 1000 values of ±0.1 around 0.3: variance 0.01, barely moved by the prior.
        let many = candidate(0.3, 1000, 0.1).sample;
        let expected = (0.01 * 1000.0 + VARIANCE_PRIOR * VARIANCE_PRIOR_WEIGHT) / 1002.0;
        assert!((many.variance() - expected).abs() < 1e-6, "{}", many.variance());
        // Two identical values: the prior's weight against two of no spread.
        assert!((sample(&[0.5, 0.5]).variance() - VARIANCE_PRIOR / 2.0).abs() < 1e-9);
    }

    #[test]
    fn a_clearly_better_child_with_enough_visits_is_played() {
        // Most visited at 0.0, a child with 400 visits at 0.3, both spreads 0.2: bounds
        // 0.0 − 5·0.2/√1000 ≈ −0.03 and 0.3 − 5·0.2/√400 = 0.25.
        let c = [candidate(0.0, 1000, 0.2), candidate(0.3, 400, 0.2)];
        assert_eq!(select(&c, 0, 5.0), 1);
        // Without the bound's margin it would be a coin flip; with z = 0 the mean decides.
        assert_eq!(select(&[candidate(0.0, 1000, 0.2), candidate(0.01, 400, 0.2)], 0, 0.0), 1);
    }

    #[test]
    fn an_uncertain_or_rarely_visited_child_is_not_played() {
        // Better mean but too noisy for its visits: 0.1 − 5·0.5/√200 ≈ −0.077 < −0.03.
        let noisy = [candidate(0.0, 1000, 0.2), candidate(0.1, 200, 0.5)];
        assert_eq!(select(&noisy, 0, 5.0), 0);
        // Far better but under 15% of the most visited child's visits.
        let rare = [candidate(0.0, 1000, 0.01), candidate(0.9, 149, 0.01)];
        assert_eq!(select(&rare, 0, 5.0), 0);
        let enough = [candidate(0.0, 1000, 0.01), candidate(0.9, 150, 0.01)];
        assert_eq!(select(&enough, 0, 5.0), 1);
    }

    #[test]
    fn ties_keep_the_most_visited_and_an_exact_draw_has_no_margin() {
        let c = [candidate(0.2, 500, 0.0), candidate(0.2, 500, 0.0)];
        assert_eq!(select(&c, 1, 5.0), 1);
        // A proven draw (0 exactly) beats a most visited child at −0.01 ± its margin.
        let draw = Candidate { q: 0.0, visits: 200, sample: RootSample::default(), exact: true };
        assert_eq!(select(&[candidate(-0.01, 1000, 0.2), draw], 0, 5.0), 1);
        assert_eq!(select(&[], 0, 5.0), 0);
    }
}
