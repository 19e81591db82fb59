//! Matches between the built-in players: baseline strength, every variant, concurrency,
//! openings, and PGN read-back of every game.

use crate::common::assert_pgn_round_trips;
use atomzero_eval::{
    GameEnd, MatchConfig, MatchResult, ModelLoader, Openings, PlayerSpec, SharedEvaluator,
    run_match,
};
use atomzero_mcts::{RandomEvaluator, UniformEvaluator};
use atomzero_rules::{Start, Variant};
use std::path::Path;
use std::sync::Arc;

fn play(first: &PlayerSpec, second: &PlayerSpec, config: &MatchConfig) -> MatchResult {
    let mut finished = 0;
    let result = run_match(first, second, config, &mut |p| {
        finished += 1;
        assert_eq!(p.finished, finished);
        assert_eq!(p.wdl.games() as usize, finished);
    })
    .unwrap();
    assert_eq!(finished, result.games.len());
    result
}

/// Test networks: `uniform` and `random` (a seeded random evaluator).
struct TestNets;

impl ModelLoader for TestNets {
    fn load(&self, path: &str) -> Result<SharedEvaluator, String> {
        match path {
            "uniform" => Ok(Arc::new(UniformEvaluator)),
            "random" => Ok(Arc::new(RandomEvaluator { seed: 5 })),
            other => Err(format!("no test network '{other}'")),
        }
    }
}

#[test]
fn alphabeta_depth_2_scores_at_least_90_percent_against_random() {
    let config =
        MatchConfig { games: 40, max_plies: 300, seed: 1, concurrency: 2, ..Default::default() };
    let result = play(&PlayerSpec::alpha_beta(2), &PlayerSpec::random(), &config);
    println!("{}", result.summary());
    assert_eq!(result.games.len(), 40);
    assert!(result.wdl.score() >= 0.9, "{}", result.summary());
    assert_pgn_round_trips(&result);
}

#[test]
fn greedy_scores_at_least_80_percent_against_random() {
    let config =
        MatchConfig { games: 40, max_plies: 300, seed: 2, concurrency: 2, ..Default::default() };
    let result = play(&PlayerSpec::greedy(), &PlayerSpec::random(), &config);
    println!("{}", result.summary());
    assert!(result.wdl.score() >= 0.8, "{}", result.summary());
    assert_pgn_round_trips(&result);
}

#[test]
fn every_player_kind_plays_every_variant() {
    let players = [
        PlayerSpec::random(),
        PlayerSpec::greedy(),
        PlayerSpec::parse("alphabeta:depth=1", &TestNets).unwrap(),
        PlayerSpec::parse("net:uniform,nodes=16,batch=4", &TestNets).unwrap(),
        PlayerSpec::parse("net:random,nodes=8,temperature=1,temp_plies=6,name=sampler", &TestNets)
            .unwrap(),
        PlayerSpec::parse("policy:random", &TestNets).unwrap(),
    ];
    for variant in Variant::ALL {
        for (i, first) in players.iter().enumerate() {
            let second = &players[(i + 1) % players.len()];
            let config = MatchConfig {
                games: 2,
                variant,
                max_plies: 80,
                seed: 3 + i as u64,
                ..Default::default()
            };
            let result = play(first, second, &config);
            assert_eq!(result.games.len(), 2, "{variant}: {} vs {}", first.name(), second.name());
            for game in &result.games {
                assert!(
                    !matches!(game.end, GameEnd::Forfeit { .. }),
                    "{variant}: {}",
                    game.finished_line()
                );
                assert_eq!(game.opening.variant(), variant);
            }
            assert_eq!(result.games[0].white, first.name());
            assert_eq!(result.games[1].white, second.name());
            assert_eq!(
                result.games[0].opening, result.games[1].opening,
                "a pair shares its opening"
            );
            assert_pgn_round_trips(&result);
        }
    }
}

#[test]
fn results_do_not_depend_on_concurrency() {
    let run = |concurrency| {
        let config =
            MatchConfig { games: 8, max_plies: 120, seed: 9, concurrency, ..Default::default() };
        play(&PlayerSpec::greedy(), &PlayerSpec::alpha_beta(1), &config)
    };
    let (one, three) = (run(1), run(3));
    assert_eq!(one.pgn(), three.pgn());
    assert_eq!(one.wdl, three.wdl);
    assert_eq!(one.pentanomial, three.pentanomial);
    assert_eq!(one.pentanomial.pairs(), 4);
}

#[test]
fn a_match_split_in_two_plays_the_games_of_the_whole() {
    let book_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/atomic-openings.epd");
    let openings = Openings::from_epd_file(&book_path, Variant::Atomic).unwrap();
    let whole = MatchConfig { games: 8, openings, max_plies: 80, seed: 11, ..Default::default() };
    let (first, second) = (PlayerSpec::greedy(), PlayerSpec::alpha_beta(1));
    let all = play(&first, &second, &whole);
    let head = play(&first, &second, &MatchConfig { games: 4, ..whole.clone() });
    let tail = play(&first, &second, &MatchConfig { games: 4, first_game: 4, ..whole.clone() });
    // The same games under the same numbers: openings, colours, moves and results.
    let indices: Vec<usize> = tail.games.iter().map(|g| g.index).collect();
    assert_eq!(indices, [4, 5, 6, 7]);
    for (part, range) in [(&head, 0..4), (&tail, 4..8)] {
        for (game, whole_game) in part.games.iter().zip(&all.games[range]) {
            assert_eq!(game.opening, whole_game.opening);
            assert_eq!(game.first_is_white, whole_game.first_is_white);
            assert_eq!(game.moves, whole_game.moves);
            assert_eq!(game.winner, whole_game.winner);
        }
    }
    assert_eq!(tail.pentanomial.pairs(), 2);
    assert_eq!(head.wdl.games() + tail.wdl.games(), all.wdl.games());
    assert_eq!(format!("{}{}", head.pgn(), tail.pgn()), all.pgn());
    // The second half does not replay the first half's openings.
    assert_ne!(tail.games[0].opening, head.games[0].opening);
}

#[test]
fn book_openings_are_paired_and_written_with_fen() {
    let book_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/atomic-openings.epd");
    let openings = Openings::from_epd_file(&book_path, Variant::Atomic).unwrap();
    let config = MatchConfig { games: 6, openings, max_plies: 60, seed: 4, ..Default::default() };
    let result = play(&PlayerSpec::greedy(), &PlayerSpec::random(), &config);
    for pair in result.games.chunks(2) {
        assert_eq!(pair[0].opening, pair[1].opening);
        assert!(pair[0].from_book);
        assert_ne!(pair[0].opening, atomzero_rules::Position::new(Variant::Atomic));
    }
    assert_ne!(result.games[0].opening, result.games[2].opening);
    assert!(result.pgn().contains("[FEN \""));
    assert!(result.pgn().contains("[Opening \"book\"]"));
    assert_pgn_round_trips(&result);
    // A book of another variant is refused.
    let config = MatchConfig { variant: Variant::Atomar, ..config };
    assert!(run_match(&PlayerSpec::greedy(), &PlayerSpec::random(), &config, &mut |_| {}).is_err());
}

#[test]
fn max_plies_adjudicates_a_draw() {
    let config = MatchConfig {
        games: 2,
        max_plies: 6,
        openings: Openings::StartPosition,
        ..Default::default()
    };
    let result = play(&PlayerSpec::alpha_beta(1), &PlayerSpec::alpha_beta(1), &config);
    for game in &result.games {
        assert_eq!(game.end, GameEnd::MaxPlies);
        assert_eq!(game.moves.len(), 6);
        assert_eq!(game.result_str(), "1/2-1/2");
        assert_eq!(game.termination(), "adjudication");
    }
    assert_eq!(result.wdl.draws, 2);
    assert_pgn_round_trips(&result);
}

#[test]
fn an_sprt_stops_the_match_early() {
    let sprt = atomzero_eval::SprtConfig {
        elo0: 0.0,
        elo1: 100.0,
        model: atomzero_eval::EloModel::Logistic,
        ..Default::default()
    };
    let config =
        MatchConfig { games: 400, max_plies: 200, seed: 5, sprt: Some(sprt), ..Default::default() };
    let result = play(&PlayerSpec::alpha_beta(2), &PlayerSpec::random(), &config);
    println!("{}", result.summary());
    assert_eq!(result.sprt_verdict(), Some(atomzero_eval::Hypothesis::H1));
    assert!(result.games.len() < 100, "{} games", result.games.len());
    assert!(result.summary().contains("H1 was accepted"));
}

#[test]
fn balanced_start_matches_count_each_players_removals_and_score_white_separately() {
    for variant in Variant::ALL {
        let config = MatchConfig {
            games: 20,
            variant,
            start: Start::Balanced,
            max_plies: 120,
            seed: 9,
            concurrency: 2,
            ..Default::default()
        };
        let result = play(&PlayerSpec::greedy(), &PlayerSpec::random(), &config);
        assert_pgn_round_trips(&result);
        for game in &result.games {
            assert!(game.opening.is_setup_phase(), "{variant}");
            let removal = game.removal().expect("every game starts with White's removal");
            // Random openings: four random plies follow the removal, the same in both games
            // of a pair when both Whites removed the same pawn.
            let other = &result.games[game.index ^ 1];
            if other.removal() == Some(removal) && game.moves.len() > 5 && other.moves.len() > 5 {
                assert_eq!(game.moves[..5], other.moves[..5], "{variant} game {}", game.index);
            }
        }
        // Greedy removes one of Black's pawns (material), random any pawn.
        let greedy = result.removals(true);
        assert_eq!(greedy.iter().map(|(_, n)| n).sum::<usize>(), 10);
        assert!(greedy.iter().all(|(sq, _)| sq.rank().index() == 6), "{variant}: {greedy:?}");
        assert_eq!(result.removals(false).iter().map(|(_, n)| n).sum::<usize>(), 10);
        // White's record is the first player's with colours accounted for.
        let white = result.white_wdl();
        assert_eq!(white.games(), 20);
        let first_as_white = result.games.iter().filter(|g| g.first_is_white);
        let first_white_wins =
            first_as_white.filter(|g| g.winner == Some(atomzero_rules::Color::White)).count();
        assert!(white.wins as usize >= first_white_wins);
        let report = result.colour_report();
        assert!(report.starts_with("White: "), "{report}");
        assert!(report.contains("Removals by greedy as White (10 games): "), "{report}");
        assert!(report.contains("Removals by random as White (10 games): "), "{report}");
    }
    // A book cannot be combined with the Balanced start.
    let config = MatchConfig {
        games: 2,
        start: Start::Balanced,
        openings: Openings::Book(vec![atomzero_rules::Position::new(Variant::Atomic)]),
        ..Default::default()
    };
    let err = run_match(&PlayerSpec::random(), &PlayerSpec::random(), &config, &mut |_| {});
    assert!(err.unwrap_err().to_string().contains("cannot be used with the balanced start"));
}

#[test]
fn the_colour_report_of_a_standard_match_gives_whites_score_with_its_interval() {
    let config = MatchConfig { games: 10, max_plies: 200, seed: 3, ..Default::default() };
    let result = play(&PlayerSpec::random(), &PlayerSpec::random(), &config);
    let white = result.white_wdl();
    let (score, half) = result.white_score_interval();
    assert!((score - white.score()).abs() < 1e-12 && half > 0.0 && half < 0.6);
    let report = result.colour_report();
    assert!(report.starts_with(&format!("White: {:.1}% +/- ", score * 100.0)), "{report}");
    assert!(report.ends_with("over 10 games"), "no removals off the Balanced start: {report}");
}

#[test]
fn whites_interval_comes_from_the_pairs_not_from_games_taken_as_independent() {
    // Four pairs whose two games are the same game (equal deterministic players): White wins
    // both games of two pairs and loses both of the other two.
    let game = |index: usize, winner: atomzero_rules::Color| atomzero_eval::GameRecord {
        index,
        white: "a".into(),
        black: "b".into(),
        first_is_white: index.is_multiple_of(2),
        opening: atomzero_rules::Position::new(Variant::Atomic),
        from_book: false,
        moves: Vec::new(),
        winner: Some(winner),
        end: GameEnd::MaxPlies,
        bomb: None,
    };
    use atomzero_rules::Color::{Black, White};
    let winners = [White, White, White, White, Black, Black, Black, Black];
    let result = MatchResult {
        first: "a".into(),
        second: "b".into(),
        variant: Variant::Atomic,
        event: "test".into(),
        games: winners.iter().enumerate().map(|(i, &w)| game(i, w)).collect(),
        wdl: Default::default(),
        pentanomial: Default::default(),
        sprt: None,
        interrupted: false,
    };
    let (score, half) = result.white_score_interval();
    assert_eq!(score, 0.5);
    // Pair means 1, 1, 0, 0: variance 1/3 over 4 pairs.
    let expected = 1.959_964 * (1.0f64 / 3.0 / 4.0).sqrt();
    assert!((half - expected).abs() < 1e-4, "{half} vs {expected}");
    // Taken as 8 independent games the interval would be narrower (0.35): the pairs count.
    let (_, per_game) = result.white_wdl().score_interval();
    assert!(per_game < 0.35 && half > 0.56, "{per_game} {half}");
    assert!(result.colour_report().starts_with("White: 50.0% +/- 56.6% (+4 =0 -4)"));
}
