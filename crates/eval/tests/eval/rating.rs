//! The rating list: maximum likelihood recovers known ratings; matches flow through
//! `results.jsonl` into a CSV list and an SVG chart.

use atomzero_eval::stats::score_from_elo;
use atomzero_eval::{
    MatchConfig, Openings, PlayerSpec, RatingOptions, ResultsLine, elo_plot_svg, generation_series,
    rate, read_results, run_match,
};
use atomzero_mcts::Rng;

const TRUE_RATINGS: [(&str, f64); 6] = [
    ("random", 0.0),
    ("greedy", 150.0),
    ("alphabeta:depth=1", 310.0),
    ("000001", 420.0),
    ("000002", 560.0),
    ("000003", 700.0),
];

fn line(first: &str, second: &str, wins: u64, draws: u64, losses: u64) -> ResultsLine {
    ResultsLine {
        format: ResultsLine::FORMAT,
        first: first.to_string(),
        second: second.to_string(),
        wins,
        draws,
        losses,
        pentanomial: None,
        variant: None,
        label: None,
    }
}

/// Win and draw probabilities for `a` against `b`: the Elo model's expected score, with a
/// fifth of the decisive mass turned into draws (which keeps the expected score).
fn probabilities(a: f64, b: f64) -> (f64, f64) {
    let p = score_from_elo(a - b);
    let draw = 0.4 * p.min(1.0 - p);
    (p - draw / 2.0, draw)
}

#[test]
fn maximum_likelihood_recovers_a_synthetic_round_robin() {
    // Every pair plays 2000 games with exactly the expected counts (rounded): the maximum
    // likelihood ratings are the true ones up to the rounding.
    let mut lines = Vec::new();
    for (i, &(a, ra)) in TRUE_RATINGS.iter().enumerate() {
        for &(b, rb) in &TRUE_RATINGS[i + 1..] {
            let n = 2000.0;
            let (win, draw) = probabilities(ra, rb);
            let wins = (n * win).round() as u64;
            let draws = (n * draw).round() as u64;
            // Alternate which player is written first.
            if i % 2 == 0 {
                lines.push(line(a, b, wins, draws, 2000 - wins - draws));
            } else {
                lines.push(line(b, a, 2000 - wins - draws, draws, wins));
            }
        }
    }
    let options = RatingOptions { prior_draws: 0.0, ..Default::default() };
    let list = rate(&lines, &options).unwrap();
    for (name, elo) in TRUE_RATINGS {
        let r = list.get(name).unwrap();
        assert!((r.elo - elo).abs() < 1.0, "{name}: {} vs {elo}", r.elo);
        assert_eq!(r.games, 5 * 2000);
    }
    assert_eq!(list.ratings[0].name, "000003");
    assert_eq!(list.get("random").unwrap().error, 0.0);
}

#[test]
fn maximum_likelihood_recovers_sampled_results_within_the_error_bars() {
    let mut rng = Rng::new(42);
    let mut lines = Vec::new();
    for (i, &(a, ra)) in TRUE_RATINGS.iter().enumerate() {
        for &(b, rb) in &TRUE_RATINGS[i + 1..] {
            let (win, draw) = probabilities(ra, rb);
            let (mut w, mut d, mut l) = (0, 0, 0);
            for _ in 0..300 {
                let u = rng.uniform();
                if u < win {
                    w += 1;
                } else if u < win + draw {
                    d += 1;
                } else {
                    l += 1;
                }
            }
            lines.push(line(a, b, w, d, l));
        }
    }
    let list = rate(&lines, &RatingOptions { prior_draws: 0.0, ..Default::default() }).unwrap();
    for (name, elo) in TRUE_RATINGS {
        let r = list.get(name).unwrap();
        // The 95% bar is 1.96 standard errors; allow 2.5 standard errors.
        assert!(
            (r.elo - elo).abs() <= r.error / 1.96 * 2.5 + 1e-9,
            "{name}: {} ± {} vs {elo}",
            r.elo,
            r.error
        );
        if name != "random" {
            assert!(r.error > 20.0 && r.error < 120.0, "{name}: error {}", r.error);
        }
    }
}

#[test]
fn matches_flow_into_a_rating_list_and_a_chart() {
    let players = [PlayerSpec::random(), PlayerSpec::greedy(), PlayerSpec::alpha_beta(1)];
    let mut jsonl = String::new();
    for (i, a) in players.iter().enumerate() {
        for b in &players[i + 1..] {
            let config = MatchConfig {
                games: 6,
                max_plies: 150,
                openings: Openings::Random { plies: 2 },
                seed: i as u64,
                ..Default::default()
            };
            let result = run_match(a, b, &config, &mut |_| {}).unwrap();
            jsonl.push_str(&ResultsLine::from_match(&result, Some("test")).to_json());
            jsonl.push('\n');
        }
    }
    let lines = read_results(&jsonl).unwrap();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0].variant.as_deref(), Some("atomic"));
    assert_eq!(lines[0].pentanomial.map(|p| p.iter().sum::<u64>()), Some(3));
    let list = rate(&lines, &RatingOptions::default()).unwrap();
    assert_eq!(list.ratings.len(), 3);
    let csv = list.to_csv();
    assert_eq!(csv.lines().count(), 4);
    assert!(csv.contains("\nrandom,") || csv.contains(",random,"), "{csv}");
    let (points, baselines) = generation_series(&list, atomzero_eval::generation_of);
    assert!(points.is_empty());
    assert_eq!(baselines.len(), 3);
    let svg = elo_plot_svg("Elo", &points, &baselines).unwrap();
    assert!(svg.contains("alphabeta:depth=1"));
}
