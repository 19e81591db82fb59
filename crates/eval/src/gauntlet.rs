//! A gauntlet: the networks of one or more runs rated on one scale against a fixed ladder of
//! players and against each other, by the CPU time each run had spent to make them.
//!
//! Which games to play (the caller plays them and appends the results):
//! - each chosen network of a run ([`spread`]: evenly over the run's CPU time, the first and
//!   last always) climbs the ladder ([`LadderPolicy`]): it starts at the highest rung its
//!   predecessor in the same run scored at least `skip_above` against, and plays the next rung
//!   up after each match until it scores below `stop_below` or the ladder ends, so every
//!   network meets the rungs near its own strength and the rungs far below are not replayed;
//! - consecutive networks of a run play each other (a chain that ties the run together);
//! - the last networks of different runs play each other (the head-to-head of an A/B).
//!
//! All matches go into one `results.jsonl`, rated together by maximum likelihood
//! ([`crate::rating`]), so ratings from different runs are comparable as long as they share the
//! anchor (the first rung). [`series`] turns the list into one line per run over CPU hours.

use crate::plot::PlotPoint;
use crate::rating::RatingList;

/// A network taking part in a gauntlet.
#[derive(Clone, Debug, PartialEq)]
pub struct Entrant {
    /// Its player name (`<run>/<model>`).
    pub name: String,
    /// The run it comes from (one line on the chart).
    pub run: String,
    /// CPU hours the run had spent when the network was made (all threads).
    pub cpu_hours: f64,
    /// Wall-clock hours the run had spent.
    pub wall_hours: f64,
}

/// Up to `k` indices of `xs` (ascending values, e.g. CPU hours), spread evenly over the range
/// of values: the first and the last always, the others the nearest to evenly spaced targets,
/// each index at most once, in ascending order.
pub fn spread(xs: &[f64], k: usize) -> Vec<usize> {
    let n = xs.len();
    if n == 0 || k == 0 {
        return Vec::new();
    }
    if k >= n {
        return (0..n).collect();
    }
    if k == 1 {
        return vec![n - 1];
    }
    let (lo, hi) = (xs[0], xs[n - 1]);
    let mut chosen = vec![0, n - 1];
    for j in 1..k - 1 {
        let target = lo + (hi - lo) * j as f64 / (k - 1) as f64;
        let best = (0..n)
            .filter(|i| !chosen.contains(i))
            .min_by(|&a, &b| (xs[a] - target).abs().total_cmp(&(xs[b] - target).abs()));
        if let Some(i) = best {
            chosen.push(i);
        }
    }
    chosen.sort_unstable();
    chosen
}

/// How a network climbs the ladder.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LadderPolicy {
    /// Stop climbing after a match scored below this.
    pub stop_below: f64,
    /// A successor starts at the highest rung its predecessor scored at least this against.
    pub skip_above: f64,
}

impl Default for LadderPolicy {
    /// Stop below 15%, skip what the predecessor scored 90% against.
    fn default() -> LadderPolicy {
        LadderPolicy { stop_below: 0.15, skip_above: 0.9 }
    }
}

impl LadderPolicy {
    /// The first rung for a network whose predecessor scored `previous` (rung, score) — empty
    /// for the first network of a run.
    pub fn first_rung(&self, previous: &[(usize, f64)]) -> usize {
        previous.iter().filter(|(_, s)| *s >= self.skip_above).map(|&(r, _)| r).max().unwrap_or(0)
    }

    /// The next rung of a ladder of `rungs` for a network that started at `first` and has
    /// played `played` (rung, score) so far, in order; `None` when it is done.
    pub fn next_rung(&self, rungs: usize, first: usize, played: &[(usize, f64)]) -> Option<usize> {
        let next = match played.last() {
            None => first,
            Some(&(_, score)) if score < self.stop_below => return None,
            Some(&(rung, _)) => rung + 1,
        };
        (next < rungs).then_some(next)
    }
}

/// One line per run: its entrants that have a rating, by CPU hours.
pub fn series(list: &RatingList, entrants: &[Entrant]) -> Vec<(String, Vec<PlotPoint>)> {
    let mut out: Vec<(String, Vec<PlotPoint>)> = Vec::new();
    for e in entrants {
        let Some(r) = list.get(&e.name) else { continue };
        let point = PlotPoint { x: e.cpu_hours, elo: r.elo, error: r.error };
        match out.iter_mut().find(|(run, _)| *run == e.run) {
            Some((_, points)) => points.push(point),
            None => out.push((e.run.clone(), vec![point])),
        }
    }
    for (_, points) in &mut out {
        points.sort_by(|a, b| a.x.total_cmp(&b.x));
    }
    out
}

/// The rating list as a table: networks with their run's CPU and wall hours, then the other
/// players, strongest first within each part.
pub fn table(list: &RatingList, entrants: &[Entrant]) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "{:<28} {:>8} {:>8} {:>8} {:>7} {:>6} {:>6}\n",
        "player", "Elo", "+/-", "CPU h", "wall h", "games", "score"
    ));
    let row = |name: &str, cpu: String, wall: String, out: &mut String| {
        if let Some(r) = list.get(name) {
            let score = if r.games > 0 { 100.0 * r.points / r.games as f64 } else { 0.0 };
            out.push_str(&format!(
                "{name:<28} {:>8.1} {:>8.1} {cpu:>8} {wall:>7} {:>6} {:>5.1}%\n",
                r.elo, r.error, r.games, score
            ));
        }
    };
    for e in entrants {
        row(&e.name, format!("{:.3}", e.cpu_hours), format!("{:.3}", e.wall_hours), &mut out);
    }
    for r in &list.ratings {
        if !entrants.iter().any(|e| e.name == r.name) {
            row(&r.name, String::new(), String::new(), &mut out);
        }
    }
    out
}

/// CSV of the networks: `run,name,cpu_hours,wall_hours,elo,error,games,score`.
pub fn entrants_csv(list: &RatingList, entrants: &[Entrant]) -> String {
    let mut out = String::from("run,name,cpu_hours,wall_hours,elo,error,games,score\n");
    for e in entrants {
        let Some(r) = list.get(&e.name) else { continue };
        let score = if r.games > 0 { 100.0 * r.points / r.games as f64 } else { 0.0 };
        out.push_str(&format!(
            "{},{},{:.4},{:.4},{:.1},{:.1},{},{:.1}\n",
            e.run, e.name, e.cpu_hours, e.wall_hours, r.elo, r.error, r.games, score
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rating::Rating;

    #[test]
    fn spread_keeps_the_ends_and_spaces_the_rest() {
        let xs = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0];
        assert_eq!(spread(&xs, 3), vec![0, 5, 10]);
        assert_eq!(spread(&xs, 2), vec![0, 10]);
        assert_eq!(spread(&xs, 1), vec![10]);
        assert_eq!(spread(&xs, 20), (0..11).collect::<Vec<_>>());
        assert_eq!(spread(&[], 4), Vec::<usize>::new());
        // Uneven times: the nearest to each target, never twice.
        let xs = [0.0, 0.01, 0.02, 0.9, 1.0];
        assert_eq!(spread(&xs, 4), vec![0, 2, 3, 4]);
    }

    #[test]
    fn a_network_climbs_until_it_loses_clearly() {
        let policy = LadderPolicy::default();
        assert_eq!(policy.next_rung(4, 0, &[]), Some(0));
        assert_eq!(policy.next_rung(4, 0, &[(0, 1.0)]), Some(1));
        assert_eq!(policy.next_rung(4, 0, &[(0, 1.0), (1, 0.5)]), Some(2));
        assert_eq!(policy.next_rung(4, 0, &[(0, 1.0), (1, 0.1)]), None);
        assert_eq!(policy.next_rung(4, 0, &[(0, 1.0), (1, 0.9), (2, 0.8), (3, 0.7)]), None);
        // A successor skips what its predecessor beat by far, but replays that rung.
        assert_eq!(policy.first_rung(&[(0, 1.0), (1, 0.95), (2, 0.6), (3, 0.1)]), 1);
        assert_eq!(policy.first_rung(&[(0, 0.5)]), 0);
        assert_eq!(policy.first_rung(&[]), 0);
        assert_eq!(policy.next_rung(4, 1, &[]), Some(1));
        assert_eq!(policy.next_rung(4, 9, &[]), None);
    }

    fn list() -> RatingList {
        let rating = |name: &str, elo: f64| Rating {
            name: name.into(),
            elo,
            error: 20.0,
            games: 10,
            points: 5.0,
        };
        RatingList {
            ratings: vec![
                rating("b/000002", 300.0),
                rating("a/000004", 250.0),
                rating("random", 0.0),
            ],
            unrated: vec![],
            iterations: 1,
        }
    }

    fn entrant(name: &str, cpu_hours: f64) -> Entrant {
        Entrant {
            name: name.into(),
            run: name.split('/').next().unwrap().into(),
            cpu_hours,
            wall_hours: cpu_hours / 2.0,
        }
    }

    #[test]
    fn series_and_tables_follow_the_runs() {
        let entrants =
            [entrant("a/000004", 0.5), entrant("a/000009", 1.0), entrant("b/000002", 0.25)];
        let s = series(&list(), &entrants);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].0, "a");
        // Only rated entrants appear.
        assert_eq!(s[0].1, vec![PlotPoint { x: 0.5, elo: 250.0, error: 20.0 }]);
        assert_eq!(s[1].1[0].x, 0.25);
        let table = table(&list(), &entrants);
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[0].starts_with("player"));
        assert!(lines[1].starts_with("a/000004") && lines[1].contains("0.500"), "{table}");
        assert!(lines[3].starts_with("random"), "{table}");
        let csv = entrants_csv(&list(), &entrants);
        assert!(csv.contains("a,a/000004,0.5000,0.2500,250.0,20.0,10,50.0"), "{csv}");
        assert_eq!(csv.lines().count(), 3);
    }
}
