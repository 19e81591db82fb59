//! Match statistics as pure functions: W/D/L, Elo with a 95% error bar, LOS and draw ratio
//! computed and printed exactly as cutechess-cli does, and a sequential probability ratio test
//! (SPRT) with fishtest's conventions over game pairs (pentanomial statistics).
//!
//! # Elo (cutechess-cli `Elo` class)
//! With `n` games, fractions `w`, `d`, `l` and score `mu = w + d/2`:
//! - Elo of a score `s`: `-400 * log10(1/s - 1)` (75% is +190.8).
//! - standard deviation of the mean score:
//!   `stdev = sqrt(w*(1-mu)^2 + l*(0-mu)^2 + d*(0.5-mu)^2) / sqrt(n)`;
//! - 95% error bar: `(elo(mu + 1.95996*stdev) - elo(mu - 1.95996*stdev)) / 2`;
//! - likelihood of superiority: `100 * (0.5 + 0.5 * erf((W - L) / sqrt(2*(W + L))))` percent.
//!
//! # SPRT (fishtest `stat_util.py` / `LLRcalc.py`)
//! Games are counted in pairs (the same opening with colours swapped); a pair scores 0, ½, 1,
//! 1½ or 2 points for the first player ([`Pentanomial`]). Bounds are
//! `lbound = ln(beta / (1 - alpha))`, `ubound = ln((1 - beta) / alpha)`; H0 is accepted when the
//! log-likelihood ratio falls below `lbound`, H1 when it rises above `ubound`. The LLR is
//! fishtest's generalized LLR (`LLR_normalized` for normalized Elo, `LLR_logistic` for
//! logistic Elo): the maximum-likelihood pentanomial distributions under H0 and H1, found by
//! solving the secular equation; zero counts are regularized to 1e-3 as fishtest does.
//! [`llr_normalized_approx`] is the closed-form approximation of the same statistic
//! (`LLR_normalized_alt`). Fishtest's dynamic overshoot correction is not applied.

use std::fmt;

/// The result of one game for the player whose view is taken.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum GameResult {
    /// A win.
    Win,
    /// A draw.
    Draw,
    /// A loss.
    Loss,
}

impl GameResult {
    /// Points times two: 2, 1 or 0.
    pub const fn half_points(self) -> u32 {
        match self {
            GameResult::Win => 2,
            GameResult::Draw => 1,
            GameResult::Loss => 0,
        }
    }

    /// The opponent's view.
    pub const fn flip(self) -> GameResult {
        match self {
            GameResult::Win => GameResult::Loss,
            GameResult::Draw => GameResult::Draw,
            GameResult::Loss => GameResult::Win,
        }
    }
}

/// Elo difference of a score fraction: `-400 * log10(1/s - 1)`.
pub fn elo_from_score(score: f64) -> f64 {
    -400.0 * (1.0 / score - 1.0).log10()
}

/// Expected score of an Elo difference (the logistic curve): `1 / (1 + 10^(-elo/400))`.
pub fn score_from_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// Wins, draws and losses of one player.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Wdl {
    /// Games won.
    pub wins: u64,
    /// Games drawn.
    pub draws: u64,
    /// Games lost.
    pub losses: u64,
}

impl Wdl {
    /// A W/D/L record.
    pub const fn new(wins: u64, draws: u64, losses: u64) -> Wdl {
        Wdl { wins, draws, losses }
    }

    /// Counts one game.
    pub fn add(&mut self, result: GameResult) {
        match result {
            GameResult::Win => self.wins += 1,
            GameResult::Draw => self.draws += 1,
            GameResult::Loss => self.losses += 1,
        }
    }

    /// The opponent's record.
    pub const fn flip(self) -> Wdl {
        Wdl { wins: self.losses, draws: self.draws, losses: self.wins }
    }

    /// Games played.
    pub const fn games(&self) -> u64 {
        self.wins + self.draws + self.losses
    }

    /// Points: wins plus half the draws.
    pub fn points(&self) -> f64 {
        self.wins as f64 + self.draws as f64 / 2.0
    }

    /// Points per game (NaN without games).
    pub fn score(&self) -> f64 {
        self.points() / self.games() as f64
    }

    /// Fraction of draws (NaN without games).
    pub fn draw_ratio(&self) -> f64 {
        self.draws as f64 / self.games() as f64
    }

    /// The score per game and the half-width of its 95% confidence interval (cutechess-cli's
    /// trinomial estimate of the score's spread, normal approximation); NaN without games.
    pub fn score_interval(&self) -> (f64, f64) {
        let n = self.games() as f64;
        let (w, d, l) = (self.wins as f64 / n, self.draws as f64 / n, self.losses as f64 / n);
        let (mu, stdev) = score_mean_stdev(w, d, l, n);
        (mu, phi_inv(0.975) * stdev)
    }

    /// Elo difference, 95% error bar, LOS and draw ratio as cutechess-cli computes them, with
    /// one change that keeps every figure finite: where cutechess's normal interval on the
    /// score leaves (0, 1) (a perfect or zero score, or nearly so: it prints `inf +/- nan`),
    /// the estimate adds one drawn game as a prior (as BayesElo and Ordo use priors) and takes
    /// the interval in Elo space by the delta method. NaN only without games.
    pub fn elo(&self) -> EloEstimate {
        let n = self.games() as f64;
        let (w, d, l) = (self.wins as f64 / n, self.draws as f64 / n, self.losses as f64 / n);
        let (mu, stdev) = score_mean_stdev(w, d, l, n);
        let mu_min = mu + phi_inv(0.025) * stdev;
        let mu_max = mu + phi_inv(0.975) * stdev;
        let decisive = (self.wins + self.losses) as f64;
        let los = if decisive > 0.0 {
            100.0
                * (0.5
                    + 0.5 * erf((self.wins as f64 - self.losses as f64) / (2.0 * decisive).sqrt()))
        } else {
            50.0
        };
        let (diff, error) = if mu_min > 0.0 && mu_max < 1.0 {
            (elo_from_score(mu), (elo_from_score(mu_max) - elo_from_score(mu_min)) / 2.0)
        } else {
            // One pseudo-draw: the score moves inside (0, 1) and its spread stays positive.
            let m = n + 1.0;
            let (w, d, l) =
                (self.wins as f64 / m, (self.draws as f64 + 1.0) / m, self.losses as f64 / m);
            let (mu, stdev) = score_mean_stdev(w, d, l, m);
            let slope = 400.0 / (std::f64::consts::LN_10 * mu * (1.0 - mu));
            (elo_from_score(mu), phi_inv(0.975) * stdev * slope)
        };
        EloEstimate { diff, error, los, draw_ratio: self.draw_ratio() }
    }
}

/// Mean score per game and its standard error over `n` games with outcome frequencies
/// `w`, `d`, `l` (cutechess-cli's trinomial estimate).
fn score_mean_stdev(w: f64, d: f64, l: f64, n: f64) -> (f64, f64) {
    let mu = w + d / 2.0;
    let dev_w = w * (1.0 - mu).powi(2);
    let dev_l = l * (0.0 - mu).powi(2);
    let dev_d = d * (0.5 - mu).powi(2);
    (mu, (dev_w + dev_l + dev_d).sqrt() / n.sqrt())
}

/// An Elo estimate from W/D/L (see the module docs for the formulas).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct EloEstimate {
    /// Elo difference.
    pub diff: f64,
    /// Half-width of the 95% confidence interval, in Elo.
    pub error: f64,
    /// Likelihood of superiority, in percent.
    pub los: f64,
    /// Fraction of games drawn (0 to 1).
    pub draw_ratio: f64,
}

/// cutechess-cli's score line: `Score of A vs B: W - L - D  [0.750] N` (note the order:
/// wins, losses, draws).
pub fn score_line(first: &str, second: &str, wdl: &Wdl) -> String {
    format!(
        "Score of {first} vs {second}: {} - {} - {}  [{}] {}",
        wdl.wins,
        wdl.losses,
        wdl.draws,
        fixed(wdl.score(), 3),
        wdl.games()
    )
}

/// cutechess-cli's Elo line: `Elo difference: 190.8 +/- 32.1, LOS: 100.0 %, DrawRatio: 20.0 %`.
pub fn elo_line(wdl: &Wdl) -> String {
    let e = wdl.elo();
    format!(
        "Elo difference: {} +/- {}, LOS: {} %, DrawRatio: {} %",
        fixed(e.diff, 1),
        fixed(e.error, 1),
        fixed(e.los, 1),
        fixed(e.draw_ratio * 100.0, 1)
    )
}

/// Counts of game pairs by the first player's points in the pair: index 0 = 0 points (LL),
/// 1 = ½ (LD), 2 = 1 (DD or WL), 3 = 1½ (WD), 4 = 2 (WW). This is fishtest's order.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Pentanomial {
    /// Pair counts by half-points scored in the pair.
    pub counts: [u64; 5],
}

impl Pentanomial {
    /// From counts in fishtest's order (LL, LD, DD+WL, WD, WW).
    pub const fn new(counts: [u64; 5]) -> Pentanomial {
        Pentanomial { counts }
    }

    /// Counts one pair of games.
    pub fn add_pair(&mut self, a: GameResult, b: GameResult) {
        self.counts[(a.half_points() + b.half_points()) as usize] += 1;
    }

    /// Number of pairs.
    pub fn pairs(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The opponent's view.
    pub fn flip(&self) -> Pentanomial {
        let mut counts = self.counts;
        counts.reverse();
        Pentanomial { counts }
    }
}

/// The Elo scale SPRT bounds are given in.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum EloModel {
    /// Normalized Elo (fishtest's default): Elo scaled by the spread of the results, so that
    /// a bound means the same test difficulty whatever the draw rate.
    #[default]
    Normalized,
    /// Logistic Elo: the usual Elo of a score (`-400 * log10(1/s - 1)`).
    Logistic,
}

/// SPRT settings: H0 is `elo = elo0`, H1 is `elo = elo1`; `alpha` and `beta` are the error
/// probabilities of type I and II.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct SprtConfig {
    /// Elo under H0.
    pub elo0: f64,
    /// Elo under H1.
    pub elo1: f64,
    /// Probability of accepting H1 when H0 holds.
    pub alpha: f64,
    /// Probability of accepting H0 when H1 holds.
    pub beta: f64,
    /// The scale of `elo0` and `elo1`.
    pub model: EloModel,
}

/// Why a `key=value,...` SPRT setting (`elo0`, `elo1`, `alpha`, `beta`) could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SprtParseError(String);

impl fmt::Display for SprtParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SprtParseError {}

impl std::str::FromStr for SprtConfig {
    type Err = SprtParseError;

    /// Reads `elo0=0,elo1=10,alpha=0.05,beta=0.05` (any subset, in any order; the others keep
    /// their [`Default`]). An empty string is the default test.
    fn from_str(text: &str) -> Result<SprtConfig, SprtParseError> {
        let mut sprt = SprtConfig::default();
        for part in text.split(',').filter(|p| !p.trim().is_empty()) {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| SprtParseError(format!("expected key=value, got '{part}'")))?;
            let (key, value) = (key.trim(), value.trim());
            let v: f64 = value
                .parse()
                .map_err(|_| SprtParseError(format!("{key}: not a number: '{value}'")))?;
            match key {
                "elo0" => sprt.elo0 = v,
                "elo1" => sprt.elo1 = v,
                "alpha" => sprt.alpha = v,
                "beta" => sprt.beta = v,
                _ => {
                    return Err(SprtParseError(format!(
                        "unknown key '{key}' (elo0, elo1, alpha, beta)"
                    )));
                }
            }
        }
        sprt.validate()?;
        Ok(sprt)
    }
}

impl SprtConfig {
    /// Checks that the test is one: finite Elo bounds with `elo0 < elo1`, error rates
    /// `alpha` and `beta` in (0, 1) with `alpha + beta < 1` (else the bounds
    /// `ln(beta / (1 - alpha)) < 0 < ln((1 - beta) / alpha)` cross or are not numbers, and
    /// any result "accepts" a hypothesis).
    pub fn validate(&self) -> Result<(), SprtParseError> {
        let fail = |m: String| Err(SprtParseError(m));
        for (key, v) in [("elo0", self.elo0), ("elo1", self.elo1)] {
            if !v.is_finite() {
                return fail(format!("{key} = {v} is not a finite number"));
            }
        }
        if self.elo0 >= self.elo1 {
            return fail(format!(
                "elo0 = {} must be below elo1 = {} (H1 is the better hypothesis)",
                self.elo0, self.elo1
            ));
        }
        for (key, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            if !(v > 0.0 && v < 1.0) {
                return fail(format!("{key} = {v} must be a probability strictly between 0 and 1"));
            }
        }
        if self.alpha + self.beta >= 1.0 {
            return fail(format!(
                "alpha + beta = {} must be below 1 (the test's bounds would cross)",
                self.alpha + self.beta
            ));
        }
        Ok(())
    }
}

impl Default for SprtConfig {
    /// Fishtest's usual short test: normalized Elo 0 against 2, alpha = beta = 0.05.
    fn default() -> SprtConfig {
        SprtConfig { elo0: 0.0, elo1: 2.0, alpha: 0.05, beta: 0.05, model: EloModel::Normalized }
    }
}

/// Which hypothesis an SPRT accepted.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Hypothesis {
    /// `elo = elo0`: the first player is not better by `elo1`.
    H0,
    /// `elo = elo1`: the first player is better.
    H1,
}

/// Where an SPRT stands.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct SprtStatus {
    /// Log-likelihood ratio of H1 against H0.
    pub llr: f64,
    /// `ln(beta / (1 - alpha))`.
    pub lower_bound: f64,
    /// `ln((1 - beta) / alpha)`.
    pub upper_bound: f64,
    /// The accepted hypothesis, if a bound was crossed.
    pub verdict: Option<Hypothesis>,
}

impl fmt::Display for SprtStatus {
    /// cutechess-cli's SPRT line: `SPRT: llr 2.96 (100.5%), lbound -2.94, ubound 2.94 - H1 was
    /// accepted` (the percentage is `llr / ubound`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "SPRT: llr {} ({}%), lbound {}, ubound {}",
            general(self.llr, 3),
            fixed(self.llr / self.upper_bound * 100.0, 1),
            general(self.lower_bound, 3),
            general(self.upper_bound, 3)
        )?;
        match self.verdict {
            Some(Hypothesis::H0) => f.write_str(" - H0 was accepted"),
            Some(Hypothesis::H1) => f.write_str(" - H1 was accepted"),
            None => Ok(()),
        }
    }
}

impl SprtConfig {
    /// `ln(beta / (1 - alpha))`.
    pub fn lower_bound(&self) -> f64 {
        (self.beta / (1.0 - self.alpha)).ln()
    }

    /// `ln((1 - beta) / alpha)`.
    pub fn upper_bound(&self) -> f64 {
        ((1.0 - self.beta) / self.alpha).ln()
    }

    /// The log-likelihood ratio of the pairs so far (0 without pairs).
    pub fn llr(&self, pairs: &Pentanomial) -> f64 {
        if pairs.pairs() == 0 {
            return 0.0;
        }
        match self.model {
            EloModel::Normalized => llr_normalized(pairs, self.elo0, self.elo1),
            EloModel::Logistic => llr_logistic(pairs, self.elo0, self.elo1),
        }
    }

    /// The test's state after `pairs`.
    pub fn status(&self, pairs: &Pentanomial) -> SprtStatus {
        let llr = self.llr(pairs);
        let (lower_bound, upper_bound) = (self.lower_bound(), self.upper_bound());
        let verdict = if llr < lower_bound {
            Some(Hypothesis::H0)
        } else if llr > upper_bound {
            Some(Hypothesis::H1)
        } else {
            None
        };
        SprtStatus { llr, lower_bound, upper_bound, verdict }
    }
}

/// Normalized Elo per unit of t-value: `800 / ln(10)` (fishtest's `nelo_divided_by_nt`).
pub const NELO_DIVIDED_BY_NT: f64 = 800.0 / std::f64::consts::LN_10;

/// A discrete distribution: (value, probability) pairs.
type Pdf = Vec<(f64, f64)>;

/// Fishtest's `results_to_pdf`: zero counts become 1e-3, then the pair scores 0, ¼, ½, ¾, 1
/// (points per game) with their frequencies. Returns (number of pairs, pdf).
fn pentanomial_pdf(pairs: &Pentanomial) -> (f64, Pdf) {
    let counts: Vec<f64> =
        pairs.counts.iter().map(|&c| if c == 0 { 1e-3 } else { c as f64 }).collect();
    let n: f64 = counts.iter().sum();
    let pdf = counts.iter().enumerate().map(|(i, &c)| (i as f64 / 4.0, c / n)).collect();
    (n, pdf)
}

/// Mean and variance of a distribution.
fn mean_var(pdf: &[(f64, f64)]) -> (f64, f64) {
    let mean: f64 = pdf.iter().map(|(a, p)| a * p).sum();
    let var: f64 = pdf.iter().map(|(a, p)| p * (a - mean).powi(2)).sum();
    (mean, var)
}

/// Solves the secular equation `sum_i p_i a_i / (1 + x a_i) = 0` for `x` in
/// `(-1/max a, -1/min a)`, where the left side decreases monotonically. `None` if the values
/// do not straddle zero.
fn secular(pdf: &[(f64, f64)]) -> Option<f64> {
    let v = pdf.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let w = pdf.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    if !(v < 0.0 && w > 0.0) {
        return None;
    }
    let f = |x: f64| pdf.iter().map(|(a, p)| p * a / (1.0 + x * a)).sum::<f64>();
    let epsilon = 1e-9;
    let (mut lo, mut hi) = (-1.0 / w + epsilon, -1.0 / v - epsilon);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if f(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(0.5 * (lo + hi))
}

/// Fishtest's `MLE_expected`: the distribution on the same values closest (in likelihood) to
/// `pdf` with expectation `s`.
fn mle_expected(pdf: &[(f64, f64)], s: f64) -> Option<Pdf> {
    let shifted: Pdf = pdf.iter().map(|&(a, p)| (a - s, p)).collect();
    let x = secular(&shifted)?;
    Some(pdf.iter().map(|&(a, p)| (a, p / (1.0 + x * (a - s)))).collect())
}

/// Fishtest's `MLE_t_value`: the distribution on the same values closest to `pdf` with
/// t-value `(mu - reference) / sigma = t`, by its fixed-point iteration (at most 10 steps).
fn mle_t_value(pdf: &[(f64, f64)], reference: f64, t: f64) -> Option<Pdf> {
    let n = pdf.len();
    let mut mle: Pdf = pdf.iter().map(|&(a, _)| (a, 1.0 / n as f64)).collect();
    for _ in 0..10 {
        let previous = mle.clone();
        let (mu, var) = mean_var(&mle);
        let sigma = var.sqrt();
        let shifted: Pdf = pdf
            .iter()
            .map(|&(a, p)| {
                (a - reference - t * sigma * (1.0 + ((mu - a) / sigma).powi(2)) / 2.0, p)
            })
            .collect();
        let x = secular(&shifted)?;
        mle = pdf.iter().zip(&shifted).map(|(&(a, p), &(b, _))| (a, p / (1.0 + x * b))).collect();
        let change = previous.iter().zip(&mle).map(|(a, b)| (a.1 - b.1).abs()).fold(0.0, f64::max);
        if change < 1e-9 {
            break;
        }
    }
    Some(mle)
}

/// Mean over `pdf` of `ln(p1_i) - ln(p0_i)`: the LLR per sample.
fn llr_per_sample(pdf: &[(f64, f64)], pdf0: &[(f64, f64)], pdf1: &[(f64, f64)]) -> f64 {
    pdf.iter()
        .zip(pdf0.iter().zip(pdf1))
        .map(|(&(_, p), (q0, q1))| p * (q1.1.ln() - q0.1.ln()))
        .sum()
}

/// Fishtest's `LLR_normalized` on pentanomial results: the generalized log-likelihood ratio of
/// normalized Elo `nelo1` against `nelo0` (t-value statistic). Falls back to
/// [`llr_normalized_approx`] in the degenerate cases where the secular equation has no root.
pub fn llr_normalized(pairs: &Pentanomial, nelo0: f64, nelo1: f64) -> f64 {
    let (n, pdf) = pentanomial_pdf(pairs);
    // A pair is two games: the per-pair t-value is sqrt(2) times the per-game one.
    let t0 = nelo0 / NELO_DIVIDED_BY_NT * std::f64::consts::SQRT_2;
    let t1 = nelo1 / NELO_DIVIDED_BY_NT * std::f64::consts::SQRT_2;
    match (mle_t_value(&pdf, 0.5, t0), mle_t_value(&pdf, 0.5, t1)) {
        (Some(pdf0), Some(pdf1)) => n * llr_per_sample(&pdf, &pdf0, &pdf1),
        _ => llr_normalized_approx(pairs, nelo0, nelo1),
    }
}

/// Fishtest's `LLR_normalized_alt` on pentanomial results: with the regularized pair
/// distribution's mean `mu` and variance `var` (per game scores), `sigma = sqrt(2 var)`,
/// `t = (mu - 1/2) / sigma`, `t_i = nelo_i / (800 / ln 10)` and `games = 2 * pairs`:
/// `LLR = games/2 * ln((1 + (t - t0)^2) / (1 + (t - t1)^2))`.
pub fn llr_normalized_approx(pairs: &Pentanomial, nelo0: f64, nelo1: f64) -> f64 {
    let (n, pdf) = pentanomial_pdf(pairs);
    let (mu, var) = mean_var(&pdf);
    let sigma = (2.0 * var).sqrt();
    let games = 2.0 * n;
    let (t0, t1) = (nelo0 / NELO_DIVIDED_BY_NT, nelo1 / NELO_DIVIDED_BY_NT);
    let t = (mu - 0.5) / sigma;
    games / 2.0 * ((1.0 + (t - t0).powi(2)) / (1.0 + (t - t1).powi(2))).ln()
}

/// Fishtest's `LLR_logistic` on pentanomial results: the generalized log-likelihood ratio of
/// logistic Elo `elo1` against `elo0` (expectation statistic).
pub fn llr_logistic(pairs: &Pentanomial, elo0: f64, elo1: f64) -> f64 {
    let (n, pdf) = pentanomial_pdf(pairs);
    let (s0, s1) = (score_from_elo(elo0), score_from_elo(elo1));
    match (mle_expected(&pdf, s0), mle_expected(&pdf, s1)) {
        (Some(pdf0), Some(pdf1)) => n * llr_per_sample(&pdf, &pdf0, &pdf1),
        // The regularized distribution always straddles any score strictly inside (0, 1).
        _ => 0.0,
    }
}

/// The error function, to about 1e-15: Taylor series below 2.5, Lentz's continued fraction
/// for `erfc` above.
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    let ax = x.abs();
    let value = if ax < 2.5 {
        // erf(x) = 2/sqrt(pi) * sum_n (-1)^n x^(2n+1) / (n! (2n+1))
        let mut term = ax;
        let mut sum = ax;
        let x2 = ax * ax;
        let mut n = 0.0;
        while term.abs() > 1e-17 * sum.abs() {
            n += 1.0;
            term *= -x2 / n;
            sum += term / (2.0 * n + 1.0);
        }
        sum * std::f64::consts::FRAC_2_SQRT_PI
    } else if ax > 27.0 {
        1.0
    } else {
        1.0 - erfc_continued_fraction(ax)
    };
    value.copysign(x)
}

/// erfc(x) for x ≥ 2.5: `exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...))))`.
fn erfc_continued_fraction(x: f64) -> f64 {
    // Modified Lentz on b0 + a1/(b1 + a2/(b2 + ...)) with b_k = x, a_k = k/2.
    let tiny = 1e-300;
    let mut f = x;
    let mut c = x;
    let mut d = 0.0;
    for k in 1..300 {
        let a = k as f64 / 2.0;
        d = x + a * d;
        d = if d.abs() < tiny { tiny } else { d };
        c = x + a / c;
        c = if c.abs() < tiny { tiny } else { c };
        d = 1.0 / d;
        let delta = c * d;
        f *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    (-x * x).exp() / std::f64::consts::PI.sqrt() / f
}

/// The standard normal quantile function (Acklam's rational approximation refined by one
/// Halley step with [`erf`]; accurate to about 1e-15).
pub fn phi_inv(p: f64) -> f64 {
    if !(p > 0.0 && p < 1.0) {
        return match p {
            0.0 => f64::NEG_INFINITY,
            1.0 => f64::INFINITY,
            _ => f64::NAN,
        };
    }
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let low = 0.02425;
    let x = if p < low {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else if p <= 1.0 - low {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        let q = (-2.0 * (1.0 - p).ln()).sqrt();
        -(((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    // One Halley step on Phi(x) - p.
    let e = 0.5 * (1.0 + erf(x / std::f64::consts::SQRT_2)) - p;
    let u = e * (2.0 * std::f64::consts::PI).sqrt() * (x * x / 2.0).exp();
    x - u / (1.0 + x * u / 2.0)
}

/// Fixed-point formatting like Qt's `QString::number(x, 'f', decimals)`: non-finite values
/// print as `inf`, `-inf`, `nan`.
pub fn fixed(x: f64, decimals: usize) -> String {
    if x.is_nan() {
        "nan".to_string()
    } else if x.is_infinite() {
        if x > 0.0 { "inf".to_string() } else { "-inf".to_string() }
    } else {
        // `+ 0.0` turns an exact -0 (an even score's Elo) into 0.
        let x = x + 0.0;
        format!("{x:.decimals$}")
    }
}

/// `%g`-style formatting with `precision` significant digits (Qt's `'g'` format): scientific
/// notation when the exponent is below -4 or at least `precision`, trailing zeros removed.
pub fn general(x: f64, precision: usize) -> String {
    if !x.is_finite() {
        return fixed(x, 0);
    }
    if x == 0.0 {
        return "0".to_string();
    }
    let precision = precision.max(1);
    // The exponent after rounding to `precision` significant digits.
    let sci = format!("{:.*e}", precision - 1, x);
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if exponent < -4 || exponent >= precision as i32 {
        let mantissa = trim_zeros(mantissa);
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    } else {
        let decimals = (precision as i32 - 1 - exponent).max(0) as usize;
        trim_zeros(&format!("{x:.decimals$}")).to_string()
    }
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.') } else { s }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_and_phi_inv_match_known_values() {
        // Values from standard tables (Abramowitz & Stegun 7.1, to 15 digits).
        assert!((erf(0.5) - 0.520_499_877_813_046_5).abs() < 1e-15);
        assert!((erf(1.0) - 0.842_700_792_949_714_9).abs() < 1e-15);
        assert!((erf(2.0) - 0.995_322_265_018_952_7).abs() < 1e-15);
        assert!((erf(3.0) - 0.999_977_909_503_001_4).abs() < 1e-15);
        assert!((erf(-1.0) + 0.842_700_792_949_714_9).abs() < 1e-15);
        assert!((phi_inv(0.975) - 1.959_963_984_540_054).abs() < 1e-12);
        assert!((phi_inv(0.025) + 1.959_963_984_540_054).abs() < 1e-12);
        assert!((phi_inv(0.5)).abs() < 1e-15);
        assert!((phi_inv(0.001) + 3.090_232_306_167_813_6).abs() < 1e-11);
    }

    #[test]
    fn general_formats_like_printf_g() {
        assert_eq!(general(2.944_438_979, 3), "2.94");
        assert_eq!(general(-2.944_438_979, 3), "-2.94");
        assert_eq!(general(0.0, 3), "0");
        assert_eq!(general(12.345, 3), "12.3");
        assert_eq!(general(123.4, 3), "123");
        assert_eq!(general(1234.0, 3), "1.23e+03");
        assert_eq!(general(0.000_123_4, 3), "0.000123");
        assert_eq!(general(0.000_012_34, 3), "1.23e-05");
        assert_eq!(general(1.5, 3), "1.5");
        assert_eq!(general(9.999, 3), "10");
        assert_eq!(fixed(f64::INFINITY, 1), "inf");
        assert_eq!(fixed(f64::NAN, 1), "nan");
    }

    #[test]
    fn pentanomial_counts_pairs_by_points() {
        let mut p = Pentanomial::default();
        p.add_pair(GameResult::Win, GameResult::Loss);
        p.add_pair(GameResult::Draw, GameResult::Draw);
        p.add_pair(GameResult::Win, GameResult::Draw);
        p.add_pair(GameResult::Loss, GameResult::Loss);
        assert_eq!(p.counts, [1, 0, 2, 1, 0]);
        assert_eq!(p.flip().counts, [0, 1, 2, 0, 1]);
        assert_eq!(p.pairs(), 4);
    }
}
