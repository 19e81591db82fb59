//! Self-play with the uniform/random evaluators: games finish, records are legal and
//! consistent, targets appear at the configured rate, resignation and max length work, and the
//! same seed gives the same games.

use atomzero_mcts::{EvalRequest, Evaluations, Evaluator, RandomEvaluator, UniformEvaluator};
use atomzero_replay::{EndReason, GameRecord};
use atomzero_rules::{PgnGame, Variant, read_pgn};
use atomzero_selfplay::{Batching, Openings, SelfplayConfig, SelfplayEvent, record_to_pgn, run};

fn small_config() -> SelfplayConfig {
    SelfplayConfig {
        threads: 2,
        games_per_worker: 4,
        visits: 32,
        cheap_visits: 8,
        full_search_fraction: 0.5,
        max_plies: 80,
        ..SelfplayConfig::default()
    }
}

fn play(config: &SelfplayConfig, variant: Variant, n: usize, seed: u64) -> Vec<GameRecord> {
    play_with(&RandomEvaluator { seed: 1 }, config, variant, n, seed)
}

fn play_with(
    evaluator: &(impl Evaluator + Sync),
    config: &SelfplayConfig,
    variant: Variant,
    n: usize,
    seed: u64,
) -> Vec<GameRecord> {
    let mut games = Vec::new();
    run(evaluator, config, variant, &Openings::RandomPlies(2), n, 0, seed, |event| {
        if let SelfplayEvent::Game(record, stats) = event {
            assert_eq!(stats.plies, record.moves.len());
            games.push((stats.index, *record));
        }
        true
    });
    games.sort_by_key(|(i, _)| *i);
    games.into_iter().map(|(_, g)| g).collect()
}

#[test]
fn games_finish_with_legal_consistent_records() {
    let config = small_config();
    for variant in Variant::ALL {
        let games = play(&config, variant, 6, 1);
        assert_eq!(games.len(), 6);
        let (mut targets, mut moves, mut short) = (0, 0, 0);
        for g in &games {
            assert!(g.moves.len() <= config.max_plies);
            let pgn: PgnGame = record_to_pgn(g).unwrap();
            let back = read_pgn(&pgn.write());
            assert_eq!(back[0].as_ref().unwrap().moves, pgn.moves, "{variant}");
            targets += g.n_targets();
            moves += g.moves.len();
            for m in &g.moves {
                if let Some(t) = &m.target {
                    // A full search stops early only when it proves the result.
                    // PUCT: the policy target is the root's visit counts.
                    let total: f32 = t.policy.iter().map(|v| v.1).sum();
                    assert!(total >= 1.0 && t.policy.iter().all(|v| v.1.fract() == 0.0));
                    short += usize::from(total < (config.visits - 1) as f32);
                    assert!((t.root_wdl.iter().sum::<f32>() - 1.0).abs() < 1e-3);
                }
            }
            if g.reason == EndReason::MaxLength {
                assert_eq!(g.winner, None);
            }
        }
        assert!(short * 5 < targets, "{variant}: {short} of {targets} targets stopped early");
        let fraction = targets as f64 / moves as f64;
        assert!((0.3..0.7).contains(&fraction), "{variant}: target fraction {fraction}");
    }
}

#[test]
fn same_seed_same_games_whatever_the_threads() {
    let mut config = small_config();
    let a = play(&config, Variant::Atomic, 6, 7);
    config.threads = 1;
    config.games_per_worker = 2;
    let b = play(&config, Variant::Atomic, 6, 7);
    assert_eq!(a, b);
    // One thread, so the slot layout is fixed: all games in one worker, then one at a time.
    // A game's moves must not depend on which games share its worker's batch.
    for games_per_worker in [6, 1, 4] {
        config.games_per_worker = games_per_worker;
        let c = play(&config, Variant::Atomic, 6, 7);
        assert_eq!(a, c, "games_per_worker = {games_per_worker}");
    }
    let c = play(&small_config(), Variant::Atomic, 6, 8);
    assert_ne!(a, c);
}

/// [`RandomEvaluator`] claiming to compute on the calling thread, so that self-play splits its
/// batches across the threads of workers that have run out of games.
struct Splittable(RandomEvaluator);

impl Evaluator for Splittable {
    fn evaluate(&self, requests: &[EvalRequest<'_>]) -> Evaluations {
        self.0.evaluate(requests)
    }

    fn computes_on_calling_thread(&self) -> bool {
        true
    }
}

#[test]
fn batches_split_across_stopped_workers_play_the_same_games() {
    // Games of very different lengths (5 to 57 plies), so that workers run out of games at
    // different times and the last ones split their batches. A game's moves must not change.
    let mut config = small_config();
    config.threads = 3;
    config.games_per_worker = 1;
    let split = play_with(&Splittable(RandomEvaluator { seed: 1 }), &config, Variant::Atomic, 7, 5);
    config.threads = 1;
    let alone = play(&config, Variant::Atomic, 7, 5);
    assert_eq!(split.len(), 7);
    let lengths = split.iter().map(|g| g.moves.len());
    let (shortest, longest) = (lengths.clone().min().unwrap(), lengths.max().unwrap());
    assert!(longest >= 4 * shortest, "{shortest} to {longest} plies");
    assert_eq!(split, alone);
}

#[test]
fn a_shared_batch_plays_the_games_per_worker_batches_play() {
    // The evaluator is a function of the position, so how leaves are batched must not change
    // a single move: three workers merging their leaves into one batch a round play the same
    // games as the same workers evaluating their own.
    let mut config = small_config();
    config.threads = 3;
    config.games_per_worker = 2;
    let own = play(&config, Variant::Atomic, 8, 11);
    config.batching = Batching::Shared;
    let shared = play(&config, Variant::Atomic, 8, 11);
    assert_eq!(own.len(), 8);
    assert_eq!(own, shared);
    // Stopping early with a shared batch returns too (workers waiting in a round are let go).
    let mut seen = 0;
    run(
        &RandomEvaluator { seed: 1 },
        &config,
        Variant::Atomic,
        &Openings::RandomPlies(2),
        50,
        0,
        3,
        |event| {
            seen += usize::from(matches!(event, SelfplayEvent::Game(..)));
            seen < 2
        },
    );
    assert_eq!(seen, 2);
}

#[test]
fn uniform_self_play_uses_the_book_and_respects_max_length() {
    let book = Openings::parse_epd(
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1;\n# comment\nrnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2 bm Nf3;\n",
        Variant::Atomic,
    )
    .unwrap();
    let config = SelfplayConfig { max_plies: 6, resign_consecutive: 0, ..small_config() };
    let mut games = Vec::new();
    run(&UniformEvaluator, &config, Variant::Atomic, &book, 4, 0, 3, |e| {
        if let SelfplayEvent::Game(r, s) = e {
            games.push((s.index, *r));
        }
        true
    });
    games.sort_by_key(|(i, _)| *i);
    assert_eq!(games.len(), 4);
    assert!(games[0].1.start_fen.contains(" b KQkq"));
    assert!(games[1].1.start_fen.contains("4p3/4P3"));
    for (_, g) in &games {
        assert!(g.moves.len() <= 6);
    }
    assert!(Openings::parse_epd("not a fen;", Variant::Atomic).is_err());
}

#[test]
fn a_huge_games_per_worker_plays_the_games_asked_for() {
    // Issue 44: `games_per_worker = 9223372036854775807` in a config passed validation and
    // then panicked ("capacity overflow") when a worker reserved its game slots.
    let config = SelfplayConfig { games_per_worker: usize::MAX, ..small_config() };
    let games = play(&config, Variant::Atomic, 3, 7);
    assert_eq!(games.len(), 3);
}

#[test]
fn stopping_early_returns() {
    let mut seen = 0;
    run(
        &RandomEvaluator::default(),
        &small_config(),
        Variant::Atomic,
        &Openings::RandomPlies(0),
        1000,
        0,
        1,
        |e| {
            if matches!(e, SelfplayEvent::Game(..)) {
                seen += 1;
            }
            seen < 3
        },
    );
    assert!((3..1000).contains(&seen));
}

#[test]
fn gumbel_self_play_records_the_improved_policy_over_every_legal_move() {
    use atomzero_rules::{CastlingMode, Position, Setup};
    let config =
        SelfplayConfig { root_search: atomzero_selfplay::RootSearch::Gumbel, ..small_config() };
    let games = play(&config, Variant::Atomic, 6, 21);
    assert_eq!(games.len(), 6);
    let (mut targets, mut surprising) = (0, 0);
    for g in &games {
        let setup = Setup::from_fen(&g.start_fen).unwrap();
        let mut pos = Position::from_setup(setup, g.variant, CastlingMode::Standard).unwrap();
        for m in &g.moves {
            if let Some(t) = &m.target {
                targets += 1;
                // softmax(logit + sigma): every legal move, weights summing to 1.
                let legal = pos.legal_moves();
                assert_eq!(t.policy.len(), legal.len());
                assert!(t.policy.iter().all(|(mv, w)| legal.contains(mv) && *w > 0.0));
                let total: f32 = t.policy.iter().map(|p| p.1).sum();
                assert!((total - 1.0).abs() < 1e-4, "{total}");
                // The policy surprise is measured at every target of a tree search.
                let surprise = t.surprise.expect("a surprise at every target");
                assert!(surprise.is_finite() && surprise >= 0.0, "{surprise}");
                surprising += usize::from(surprise > 1e-3);
            }
            pos.play_unchecked(m.mv);
        }
    }
    assert!(targets > 20, "{targets} targets");
    // The search moves the random evaluator's priors at most targets.
    assert!(surprising * 2 > targets, "{surprising} of {targets} targets with a surprise");
    // Seeded like PUCT self-play: the same seed gives the same games.
    assert_eq!(play(&config, Variant::Atomic, 6, 21), games);
    assert_ne!(play(&config, Variant::Atomic, 6, 22), games);
}

#[test]
fn balanced_start_games_search_the_removal_then_play_random_plies() {
    let config = SelfplayConfig { full_search_fraction: 1.0, ..small_config() };
    for variant in Variant::ALL {
        let mut games = Vec::new();
        let openings = Openings::random(atomzero_rules::Start::Balanced, 2);
        run(&RandomEvaluator { seed: 3 }, &config, variant, &openings, 8, 0, 5, |event| {
            if let SelfplayEvent::Game(record, _) = event {
                games.push(*record);
            }
            true
        });
        assert_eq!(games.len(), 8);
        let mut removed = std::collections::HashSet::new();
        for g in &games {
            assert_eq!(g.start_fen, "balanced");
            // The removal is a searched move with a target over the 16 removals.
            let first = &g.moves[0];
            assert!(first.mv.is_removal(), "{variant}");
            let target = first.target.as_ref().expect("a full search");
            assert!(target.policy.iter().all(|(m, _)| m.is_removal()));
            assert!(target.policy.len() >= 2);
            removed.insert(first.mv);
            // Then the two random plies (no targets), then searched moves again.
            assert!(g.moves[1..3].iter().all(|m| m.target.is_none()), "{variant}");
            assert!(g.moves.len() <= 3 || g.moves[3].target.is_some(), "{variant}");
            // The record reads back as PGN with its [Balanced] tag.
            let pgn = record_to_pgn(g).unwrap();
            let text = pgn.write();
            assert!(text.contains(&format!("[Balanced \"{}\"]", first.mv.from())), "{text}");
            assert_eq!(read_pgn(&text)[0].as_ref().unwrap().moves, pgn.moves);
        }
        assert!(removed.len() >= 2, "{variant}: the removal varies between games");
    }
}

/// Bomb-variant games played by PIMC with `belief` (random plies: 2, after both choices).
fn play_bomb(config: &SelfplayConfig, n: usize, seed: u64) -> Vec<GameRecord> {
    let mut games = Vec::new();
    let belief = atomzero_belief::BeliefModel::uniform();
    atomzero_selfplay::run_with_belief(
        &RandomEvaluator { seed: 1 },
        &belief,
        config,
        Variant::Bomb,
        &Openings::RandomPlies(2),
        n,
        0,
        seed,
        |event| {
            if let SelfplayEvent::Game(record, _) = event {
                games.push(*record);
            }
            true
        },
    );
    games.sort_by_key(|g| format!("{:?}", g.moves));
    games
}

#[test]
fn bomb_games_search_both_choices_and_record_legal_targets() {
    for root_search in [atomzero_selfplay::RootSearch::Puct, atomzero_selfplay::RootSearch::Gumbel]
    {
        let config = SelfplayConfig { determinizations: 3, root_search, ..small_config() };
        let games = play_bomb(&config, 6, 3);
        assert_eq!(games.len(), 6);
        let (mut targets, mut detonations, mut choice_targets) = (0, 0, 0);
        for g in &games {
            assert_eq!(g.variant, Variant::Bomb);
            assert!(g.start_fen.ends_with("bombs:?,?"), "{}", g.start_fen);
            assert!(g.moves[0].mv.is_bomb_choice() && g.moves[1].mv.is_bomb_choice());
            // The two random plies follow the choices and are not targets.
            assert!(g.moves[2..4].iter().all(|m| m.target.is_none() && !m.mv.is_detonation()));
            let mut pos = atomzero_rules::Position::from_fen(&g.start_fen, Variant::Bomb).unwrap();
            for (ply, m) in g.moves.iter().enumerate() {
                assert!(pos.is_legal(m.mv), "ply {ply}");
                if let Some(t) = &m.target {
                    targets += 1;
                    choice_targets += usize::from(ply < 2);
                    let legal = pos.legal_moves();
                    assert!(t.policy.iter().all(|(mv, w)| legal.contains(mv) && *w > 0.0));
                    let total: f32 = t.policy.iter().map(|(_, w)| w).sum();
                    assert!((total - 1.0).abs() < 1e-3, "the aggregate policy sums to 1: {total}");
                    assert!((t.root_wdl.iter().sum::<f32>() - 1.0).abs() < 1e-3);
                    // The worlds' searches have no one prior: no surprise is measured.
                    assert_eq!(t.surprise, None);
                }
                detonations += usize::from(m.mv.is_detonation());
                pos.play_unchecked(m.mv);
            }
            // The PGN reveals both bombs.
            let pgn = record_to_pgn(g).unwrap().write();
            assert!(pgn.contains("[WhiteBomb ") && pgn.contains("[BlackBomb "), "{pgn}");
        }
        assert!(targets > 20 && choice_targets > 0, "{targets} {choice_targets}");
        assert!(
            detonations > 0,
            "{root_search:?}: no detonation searched in {} games",
            games.len()
        );
    }
}

#[test]
fn bomb_games_depend_on_the_seed_only() {
    let mut config = SelfplayConfig { determinizations: 2, ..small_config() };
    let a = play_bomb(&config, 4, 7);
    config.threads = 1;
    config.games_per_worker = 1;
    assert_eq!(play_bomb(&config, 4, 7), a);
    assert_ne!(play_bomb(&config, 4, 8), a);
}

/// Regression (tiny bomb run, generation 14): a game whose search had nothing left to
/// evaluate (its root proven) while no other game had leaves either never moved on.
#[test]
fn a_bomb_game_alone_with_a_proven_root_moves_on() {
    // White's knight bomb stands next to the black king: detonating wins at once.
    let pos = atomzero_rules::Position::from_fen(
        "4k3/3N4/8/8/8/8/p6p/4K3 w - - 0 1 bombs:d7,h2",
        Variant::Bomb,
    )
    .unwrap();
    let config = SelfplayConfig {
        threads: 1,
        games_per_worker: 1,
        visits: 64,
        full_search_fraction: 1.0,
        temperature_plies: 0,
        ..small_config()
    };
    let mut games = Vec::new();
    atomzero_selfplay::run(
        &UniformEvaluator,
        &config,
        Variant::Bomb,
        &Openings::Book(vec![pos]),
        2,
        0,
        1,
        |event| {
            if let SelfplayEvent::Game(record, _) = event {
                games.push(*record);
            }
            true
        },
    );
    assert_eq!(games.len(), 2);
    for game in &games {
        assert_eq!(game.moves[0].mv, atomzero_rules::Move::detonation(atomzero_rules::Square::D7));
        assert_eq!(game.winner, Some(atomzero_rules::Color::White));
    }
}

#[test]
fn alpha_beta_priors_put_the_tactic_into_the_policy_target() {
    // White's knight takes the lone queen (Nxd5: the blast removes both) and every other
    // move keeps the material at best: the material alpha-beta check singles it out. With
    // the uniform evaluator the network's prior gives it no more than any other move, so
    // only the check can put it in the Gumbel target.
    let book =
        Openings::parse_epd("4k3/8/8/3q4/8/2N5/8/4K3 w - - 0 1;\n", Variant::Atomic).unwrap();
    let target_of_nxd5 = |ab_prior_nodes: u32| {
        let config = SelfplayConfig {
            root_search: atomzero_selfplay::RootSearch::Gumbel,
            full_search_fraction: 1.0,
            max_plies: 1,
            resign_consecutive: 0,
            ab_prior_nodes,
            ab_prior_visits: 8,
            ..small_config()
        };
        let mut games = Vec::new();
        run(&UniformEvaluator, &config, Variant::Atomic, &book, 1, 0, 5, |e| {
            if let SelfplayEvent::Game(r, _) = e {
                games.push(*r);
            }
            true
        });
        use atomzero_rules::{CastlingMode, Position, Setup};
        let setup = Setup::from_fen(&games[0].start_fen).unwrap();
        let pos = Position::from_setup(setup, Variant::Atomic, CastlingMode::Standard).unwrap();
        let nxd5 = pos.parse_uci("c3d5").unwrap();
        let target = games[0].moves[0].target.as_ref().expect("a full search's target");
        let weight = target.policy.iter().find(|(mv, _)| *mv == nxd5).map(|p| p.1).unwrap();
        (weight, target.policy.len())
    };
    let (with_check, n) = target_of_nxd5(1000);
    let (without, _) = target_of_nxd5(0);
    assert!(without < 2.0 / n as f32, "without the check Nxd5 gets {without} of {n} moves");
    assert!(with_check > 0.4, "with the check Nxd5 gets {with_check}");
    let bad = SelfplayConfig { ab_prior_visits: 0, ..small_config() };
    assert_eq!(bad.validate().unwrap_err(), "selfplay.ab_prior_visits must be at least 1");
}
