//! The rating list over every match ever played: results are appended to `results.jsonl`, one
//! JSON object per match, and rated together by maximum likelihood under the Bradley–Terry
//! (Elo) model, as BayesElo and Ordo do.
//!
//! # `results.jsonl`, format 1
//! One line per match, the counts seen from `first`'s side:
//!
//! ```json
//! {"format":1,"first":"gen-000004","second":"random","wins":37,"draws":2,"losses":1,"pentanomial":[0,0,1,2,17],"variant":"atomic","label":"gate"}
//! ```
//!
//! | field | type | meaning |
//! |---|---|---|
//! | `format` | integer | always 1; other values are rejected |
//! | `first`, `second` | string | player names (as in PGN) |
//! | `wins`, `draws`, `losses` | integer | `first`'s results |
//! | `pentanomial` | 5 integers, optional | game pairs by `first`'s points in the pair: 0, ½, 1, 1½, 2 |
//! | `variant` | string, optional | the variant played |
//! | `label` | string, optional | free text (e.g. `gate`, `baseline`) |
//!
//! Unknown fields are rejected. Colour is not recorded: matches play each opening with both
//! colours, and the model has no first-move advantage.
//!
//! # The model
//! Player `i` has strength `g_i = 10^(r_i / 400)`; the expected score of `i` against `j` is
//! `g_i / (g_i + g_j)`. Draws count as half a win for each side. The maximum-likelihood
//! ratings solve `S_i = sum_j n_ij g_i / (g_i + g_j)` (`S_i`: points of `i`, `n_ij`: games
//! between `i` and `j`), found by Hunter's MM iteration `g_i <- S_i / sum_j n_ij / (g_i + g_j)`.
//! A player with all wins or all losses has no finite maximum, so by default every pair that
//! met gets one virtual draw (`prior_draws`, BayesElo's idea of a prior). Ratings are shifted
//! so that the anchor (e.g. `random`) has `anchor_elo`; the error bars are 95% intervals from
//! the inverse Fisher information with the anchor fixed. Players not connected to the anchor by
//! games cannot be placed on its scale and are listed apart.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt;

/// One match in `results.jsonl`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultsLine {
    /// Always [`ResultsLine::FORMAT`].
    pub format: u32,
    /// The first player.
    pub first: String,
    /// The second player.
    pub second: String,
    /// The first player's wins.
    pub wins: u64,
    /// Draws.
    pub draws: u64,
    /// The first player's losses.
    pub losses: u64,
    /// Game pairs by the first player's points (0, ½, 1, 1½, 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pentanomial: Option<[u64; 5]>,
    /// The variant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// Free text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

impl ResultsLine {
    /// The format version written and accepted.
    pub const FORMAT: u32 = 1;

    /// A line for a finished match.
    pub fn from_match(result: &crate::runner::MatchResult, label: Option<&str>) -> ResultsLine {
        ResultsLine {
            format: ResultsLine::FORMAT,
            first: result.first.clone(),
            second: result.second.clone(),
            wins: result.wdl.wins,
            draws: result.wdl.draws,
            losses: result.wdl.losses,
            pentanomial: Some(result.pentanomial.counts),
            variant: Some(result.variant.name().to_string()),
            label: label.map(str::to_string),
        }
    }

    /// The JSON line (without the newline).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("results lines always serialize")
    }
}

/// A line of `results.jsonl` that could not be read.
#[derive(Debug)]
pub struct ResultsError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ResultsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "results line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ResultsError {}

/// Reads `results.jsonl` text (blank lines are skipped).
pub fn read_results(text: &str) -> Result<Vec<ResultsLine>, ResultsError> {
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        let error = |message: String| ResultsError { line: i + 1, message };
        let line: ResultsLine = serde_json::from_str(raw).map_err(|e| error(e.to_string()))?;
        if line.format != ResultsLine::FORMAT {
            return Err(error(format!(
                "format {} (this build reads format {})",
                line.format,
                ResultsLine::FORMAT
            )));
        }
        if line.first == line.second {
            return Err(error(format!("a player against itself ({})", line.first)));
        }
        lines.push(line);
    }
    Ok(lines)
}

/// Rating settings.
#[derive(Clone, Debug, PartialEq)]
pub struct RatingOptions {
    /// The player whose rating is fixed.
    pub anchor: String,
    /// The anchor's rating.
    pub anchor_elo: f64,
    /// Virtual draws added to every pair of players that met (0: pure maximum likelihood).
    pub prior_draws: f64,
    /// Iteration limit of the MM algorithm.
    pub max_iterations: usize,
    /// Stop when no rating moves by more than this (Elo).
    pub tolerance: f64,
}

impl Default for RatingOptions {
    /// `random` = 0, one virtual draw per pair.
    fn default() -> RatingOptions {
        RatingOptions {
            anchor: "random".to_string(),
            anchor_elo: 0.0,
            prior_draws: 1.0,
            max_iterations: 100_000,
            tolerance: 1e-7,
        }
    }
}

/// Ratings that could not be computed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RatingError {
    /// The anchor has played no rated game.
    UnknownAnchor(String),
}

impl fmt::Display for RatingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RatingError::UnknownAnchor(a) => write!(f, "anchor player '{a}' has no games"),
        }
    }
}

impl std::error::Error for RatingError {}

/// One player's rating.
#[derive(Clone, Debug, PartialEq)]
pub struct Rating {
    /// The player.
    pub name: String,
    /// Elo on the anchor's scale.
    pub elo: f64,
    /// Half-width of the 95% interval (0 for the anchor).
    pub error: f64,
    /// Games played (virtual draws not counted).
    pub games: u64,
    /// Points scored (virtual draws not counted).
    pub points: f64,
}

/// A rating list, strongest first.
#[derive(Clone, Debug, PartialEq)]
pub struct RatingList {
    /// Rated players, by decreasing Elo.
    pub ratings: Vec<Rating>,
    /// Players with games but no path of games to the anchor.
    pub unrated: Vec<String>,
    /// MM iterations used.
    pub iterations: usize,
}

impl RatingList {
    /// The rating of `name`.
    pub fn get(&self, name: &str) -> Option<&Rating> {
        self.ratings.iter().find(|r| r.name == name)
    }

    /// CSV: `rank,name,elo,error,games,points,score` (Elo to 0.1, score in percent), one row
    /// per rated player, strongest first.
    pub fn to_csv(&self) -> String {
        let mut out = String::from("rank,name,elo,error,games,points,score\n");
        for (rank, r) in self.ratings.iter().enumerate() {
            out.push_str(&format!(
                "{},{},{:.1},{:.1},{},{},{:.1}\n",
                rank + 1,
                csv_field(&r.name),
                r.elo,
                r.error,
                r.games,
                r.points,
                if r.games > 0 { 100.0 * r.points / r.games as f64 } else { 0.0 }
            ));
        }
        out
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Rates every player of `lines` (see the module docs).
pub fn rate(lines: &[ResultsLine], options: &RatingOptions) -> Result<RatingList, RatingError> {
    // Players in name order, so results do not depend on line order.
    let names: Vec<String> = lines
        .iter()
        .flat_map(|l| [l.first.clone(), l.second.clone()])
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let index: HashMap<&str, usize> =
        names.iter().enumerate().map(|(i, n)| (n.as_str(), i)).collect();
    // Games and points per unordered pair (i < j), points for i.
    let mut pairs: BTreeMap<(usize, usize), (f64, f64)> = BTreeMap::new();
    let mut games = vec![0u64; names.len()];
    let mut points = vec![0.0; names.len()];
    for l in lines {
        let (a, b) = (index[l.first.as_str()], index[l.second.as_str()]);
        let n = (l.wins + l.draws + l.losses) as f64;
        if n == 0.0 {
            continue;
        }
        let score_a = l.wins as f64 + l.draws as f64 / 2.0;
        games[a] += l.wins + l.draws + l.losses;
        games[b] += l.wins + l.draws + l.losses;
        points[a] += score_a;
        points[b] += n - score_a;
        let key = (a.min(b), a.max(b));
        let entry = pairs.entry(key).or_insert((0.0, 0.0));
        entry.0 += n;
        entry.1 += if a < b { score_a } else { n - score_a };
    }
    let anchor = *index
        .get(options.anchor.as_str())
        .filter(|&&i| games[i] > 0)
        .ok_or_else(|| RatingError::UnknownAnchor(options.anchor.clone()))?;

    // The anchor's connected component.
    let mut neighbours = vec![Vec::new(); names.len()];
    for &(i, j) in pairs.keys() {
        neighbours[i].push(j);
        neighbours[j].push(i);
    }
    let mut connected = vec![false; names.len()];
    connected[anchor] = true;
    let mut queue = VecDeque::from([anchor]);
    while let Some(i) = queue.pop_front() {
        for &j in &neighbours[i] {
            if !connected[j] {
                connected[j] = true;
                queue.push_back(j);
            }
        }
    }
    let members: Vec<usize> = (0..names.len()).filter(|&i| connected[i]).collect();
    let local: HashMap<usize, usize> = members.iter().enumerate().map(|(k, &i)| (i, k)).collect();
    let m = members.len();
    // Games and points with the prior, between members (local indices).
    let mut edges: Vec<(usize, usize, f64, f64)> = Vec::new();
    for (&(i, j), &(n, s)) in &pairs {
        if let (Some(&a), Some(&b)) = (local.get(&i), local.get(&j)) {
            edges.push((a, b, n + options.prior_draws, s + options.prior_draws / 2.0));
        }
    }
    let mut score = vec![0.0; m];
    for &(a, b, n, s) in &edges {
        score[a] += s;
        score[b] += n - s;
    }

    // MM iterations on g = 10^(r/400).
    let mut gamma = vec![1.0f64; m];
    let mut iterations = 0;
    let elo_per_ln = 400.0 / std::f64::consts::LN_10;
    while iterations < options.max_iterations {
        iterations += 1;
        let mut denominator = vec![0.0; m];
        for &(a, b, n, _) in &edges {
            let d = n / (gamma[a] + gamma[b]);
            denominator[a] += d;
            denominator[b] += d;
        }
        let mut next: Vec<f64> = (0..m)
            .map(|k| {
                if denominator[k] > 0.0 {
                    (score[k] / denominator[k]).max(1e-300)
                } else {
                    gamma[k]
                }
            })
            .collect();
        // Keep the anchor at 1 so the scale stays put.
        let anchor_gamma = next[local[&anchor]];
        for g in &mut next {
            *g /= anchor_gamma;
        }
        let change = gamma
            .iter()
            .zip(&next)
            .map(|(a, b)| ((b / a).ln() * elo_per_ln).abs())
            .fold(0.0, f64::max);
        gamma = next;
        if change < options.tolerance {
            break;
        }
    }

    let errors = standard_errors(&gamma, &edges, local[&anchor]);
    let mut ratings: Vec<Rating> = members
        .iter()
        .enumerate()
        .map(|(k, &i)| Rating {
            name: names[i].clone(),
            elo: options.anchor_elo + gamma[k].ln() * elo_per_ln,
            error: 1.959_963_984_540_054 * errors[k] * elo_per_ln,
            games: games[i],
            points: points[i],
        })
        .collect();
    ratings.sort_by(|a, b| b.elo.total_cmp(&a.elo).then_with(|| a.name.cmp(&b.name)));
    let unrated = (0..names.len()).filter(|&i| !connected[i]).map(|i| names[i].clone()).collect();
    Ok(RatingList { ratings, unrated, iterations })
}

/// Standard errors of the natural-log strengths `ln g`, the anchor fixed: the square roots of
/// the diagonal of the inverse observed information `I_kk = sum_j n p (1-p)`,
/// `I_kj = -n p (1-p)`, with the anchor's row and column removed.
fn standard_errors(gamma: &[f64], edges: &[(usize, usize, f64, f64)], anchor: usize) -> Vec<f64> {
    let m = gamma.len();
    let free: Vec<usize> = (0..m).filter(|&k| k != anchor).collect();
    let position: HashMap<usize, usize> = free.iter().enumerate().map(|(p, &k)| (k, p)).collect();
    let f = free.len();
    let mut info = vec![vec![0.0; f]; f];
    for &(a, b, n, _) in edges {
        let p = gamma[a] / (gamma[a] + gamma[b]);
        let w = n * p * (1.0 - p);
        match (position.get(&a), position.get(&b)) {
            (Some(&x), Some(&y)) => {
                info[x][x] += w;
                info[y][y] += w;
                info[x][y] -= w;
                info[y][x] -= w;
            }
            (Some(&x), None) | (None, Some(&x)) => info[x][x] += w,
            (None, None) => {}
        }
    }
    let mut errors = vec![0.0; m];
    if let Some(inverse) = invert(info) {
        for (p, &k) in free.iter().enumerate() {
            errors[k] = inverse[p][p].max(0.0).sqrt();
        }
    } else {
        for &k in &free {
            errors[k] = f64::INFINITY;
        }
    }
    errors
}

/// Gauss–Jordan inversion with partial pivoting; `None` if singular.
fn invert(mut a: Vec<Vec<f64>>) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let mut inv: Vec<Vec<f64>> =
        (0..n).map(|i| (0..n).map(|j| if i == j { 1.0 } else { 0.0 }).collect()).collect();
    for col in 0..n {
        let pivot = (col..n).max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))?;
        if a[pivot][col].abs() < 1e-300 {
            return None;
        }
        a.swap(col, pivot);
        inv.swap(col, pivot);
        let d = a[col][col];
        for j in 0..n {
            a[col][j] /= d;
            inv[col][j] /= d;
        }
        for row in 0..n {
            if row != col {
                let factor = a[row][col];
                if factor != 0.0 {
                    for j in 0..n {
                        a[row][j] -= factor * a[col][j];
                        inv[row][j] -= factor * inv[col][j];
                    }
                }
            }
        }
    }
    Some(inv)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(first: &str, second: &str, w: u64, d: u64, l: u64) -> ResultsLine {
        ResultsLine {
            format: 1,
            first: first.into(),
            second: second.into(),
            wins: w,
            draws: d,
            losses: l,
            pentanomial: None,
            variant: None,
            label: None,
        }
    }

    #[test]
    fn two_players_rate_at_the_elo_of_their_score() {
        // Without a prior the MLE of two players is the Elo of the score: 75% -> +190.85.
        let options = RatingOptions { anchor: "b".into(), prior_draws: 0.0, ..Default::default() };
        let list = rate(&[line("a", "b", 70, 10, 20)], &options).unwrap();
        let a = list.get("a").unwrap();
        assert!((a.elo - 190.848_501_887_864_98).abs() < 1e-4, "{}", a.elo);
        assert_eq!(list.get("b").unwrap().elo, 0.0);
        // The error bar of ln g is 1/sqrt(n p (1-p)): 1/sqrt(100 * 0.75 * 0.25).
        let expected = 1.959_963_984_540_054 / (100.0f64 * 0.75 * 0.25).sqrt() * 400.0
            / std::f64::consts::LN_10;
        assert!((a.error - expected).abs() < 1e-3, "{} vs {expected}", a.error);
    }

    #[test]
    fn reads_and_writes_lines() {
        let text = "{\"format\":1,\"first\":\"a\",\"second\":\"b\",\"wins\":3,\"draws\":1,\"losses\":0}\n\n";
        let lines = read_results(text).unwrap();
        assert_eq!(lines, vec![line("a", "b", 3, 1, 0)]);
        assert_eq!(read_results(&lines[0].to_json()).unwrap(), lines);
        let bad = read_results(
            "{\"format\":2,\"first\":\"a\",\"second\":\"b\",\"wins\":3,\"draws\":1,\"losses\":0}",
        );
        assert_eq!(bad.unwrap_err().line, 1);
        let unknown = read_results(
            "\n{\"format\":1,\"first\":\"a\",\"second\":\"b\",\"wins\":3,\"draws\":1,\"losses\":0,\"x\":1}",
        );
        assert_eq!(unknown.unwrap_err().line, 2);
    }

    #[test]
    fn disconnected_players_are_listed_apart() {
        let list = rate(
            &[line("a", "random", 5, 0, 5), line("x", "y", 3, 0, 1)],
            &RatingOptions::default(),
        )
        .unwrap();
        assert_eq!(list.ratings.len(), 2);
        assert_eq!(list.unrated, vec!["x".to_string(), "y".to_string()]);
        assert_eq!(
            rate(&[line("x", "y", 1, 0, 0)], &RatingOptions::default()),
            Err(RatingError::UnknownAnchor("random".into()))
        );
    }

    #[test]
    fn csv_quotes_odd_names() {
        let list =
            rate(&[line("net:a,nodes=5", "random", 1, 0, 1)], &RatingOptions::default()).unwrap();
        let csv = list.to_csv();
        assert!(csv.starts_with("rank,name,elo,error,games,points,score\n"));
        assert!(csv.contains("\"net:a,nodes=5\",0.0,"), "{csv}");
    }
}
