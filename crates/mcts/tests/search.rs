//! Search behaviour with the uniform evaluator and fixed seeds.

use atomzero_mcts::{Evaluator, Proven, RandomEvaluator, Search, SearchConfig, UniformEvaluator};
use atomzero_rules::{Game, Position, Variant};

fn search_at(fen: &str, visits: u32, seed: u64) -> Search {
    let pos = Position::from_fen(fen, Variant::Atomic).unwrap();
    let mut search = Search::new(&Game::new(pos), SearchConfig::default().without_noise(), seed);
    search.run(&UniformEvaluator, visits, 8);
    search
}

#[test]
fn finds_a_one_move_king_explosion() {
    // Qxf7 explodes the g8 king (while White is even in check).
    let s = search_at("4r1k1/5pp1/8/3Q4/8/8/8/4K3 w - - 0 1", 400, 1);
    let best = s.best_move().unwrap();
    assert_eq!(s.root_position().uci(best), "d5f7");
    assert_eq!(s.root_proven(), Proven::Win);
}

#[test]
fn finds_a_mate_in_one() {
    // Back-rank mate: Ra8# (no capture can explode anything near the black king).
    let s = search_at("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", 400, 2);
    let best = s.best_move().unwrap();
    assert_eq!(s.root_position().uci(best), "a1a8");
    assert_eq!(s.root_proven(), Proven::Win);
}

#[test]
fn never_walks_into_an_explosion_in_one() {
    // Black threatens Bxf2, exploding the white king on g1 next to the f2 pawn. Some White
    // moves (Kf1, Kg2, Kh1?, ...) leave or walk into the blast; the search must pick a safe one.
    let fen = "4k3/8/8/2b5/8/8/5P2/6K1 w - - 0 1";
    let pos = Position::from_fen(fen, Variant::Atomic).unwrap();
    let explodes_after = |m| {
        let after = pos.play(m).unwrap();
        after.legal_moves().iter().any(|&reply| {
            after.play(reply).unwrap().board().king_of(atomzero_rules::Color::White).is_none()
        })
    };
    let unsafe_moves = pos.legal_moves().iter().filter(|&&m| explodes_after(m)).count();
    assert!(unsafe_moves >= 2, "the test position should have traps");
    for seed in 0..5 {
        let s = search_at(fen, 2000, seed);
        let best = s.best_move().unwrap();
        assert!(!explodes_after(best), "seed {seed}: {} allows an explosion", pos.uci(best));
    }
}

#[test]
fn visit_counts_add_up() {
    let s = search_at(atomzero_rules::STARTING_FEN, 500, 4);
    let children: u32 = s.root_children().iter().map(|&(_, n)| n).sum();
    assert!(s.root_visits() >= 500);
    // The root's first visit expanded it; every later visit went through a child.
    assert_eq!(children + 1, s.root_visits());
    assert_eq!(s.root_children().len(), 20);
}

#[test]
fn same_seed_same_search() {
    let run = |seed| {
        let pos = Position::new(Variant::Atomic);
        let mut s = Search::new(&Game::new(pos), SearchConfig::default(), seed);
        s.run(&RandomEvaluator { seed: 9 }, 300, 16);
        (s.root_children(), s.pv(10))
    };
    assert_eq!(run(5), run(5));
    assert_ne!(run(5).0, run(6).0, "noise should depend on the seed");
}

#[test]
fn gather_and_apply_batch_across_trees() {
    // Two trees, one evaluator call per round.
    let game = Game::new(Position::new(Variant::Atomic));
    let mut trees = vec![
        Search::new(&game, SearchConfig::default(), 1),
        Search::new(&game, SearchConfig::default(), 2),
    ];
    for _ in 0..20 {
        for t in trees.iter_mut() {
            t.gather(8);
        }
        let requests: Vec<_> =
            trees.iter().flat_map(|t| t.pending().iter().map(|l| l.request())).collect();
        let evals = UniformEvaluator.evaluate(&requests);
        let mut offset = 0;
        for t in trees.iter_mut() {
            let n = t.pending().len();
            t.apply(evals.range(offset..offset + n));
            offset += n;
        }
    }
    for t in &trees {
        assert!(t.root_visits() > 20, "{}", t.root_visits());
        assert!(t.pending().is_empty());
    }
}

#[test]
fn tree_reuse_keeps_the_subtree() {
    let pos = Position::new(Variant::Atomic);
    let mut s = Search::new(&Game::new(pos), SearchConfig::default().without_noise(), 7);
    s.run(&UniformEvaluator, 800, 8);
    let best = s.best_move().unwrap();
    let child_visits = s.root_children().iter().find(|(m, _)| *m == best).unwrap().1;
    s.advance(best);
    assert_eq!(s.root_visits(), child_visits);
    assert_eq!(s.root_position(), &pos.play(best).unwrap());
    let before = s.root_visits();
    s.run(&UniformEvaluator, before + 100, 8);
    assert!(s.root_visits() >= before + 100);
}

#[test]
fn the_root_of_a_finished_game_has_no_move() {
    let pos = Position::from_fen("8/8/8/8/8/8/8/4K3 b - - 0 1", Variant::Atomic).unwrap();
    let mut s = Search::new(&Game::new(pos), SearchConfig::default(), 1);
    s.run(&UniformEvaluator, 100, 8);
    assert_eq!(s.best_move(), None);
}

/// A PUCT search from the start position with random priors, `k` forced playouts.
fn forced_search(k: f32, visits: u32) -> Search {
    let config =
        SearchConfig { forced_playouts: k, dirichlet_epsilon: 0.0, ..SearchConfig::default() };
    let pos = Position::new(Variant::Atomic);
    let mut search = Search::new(&Game::new(pos), config, 7);
    search.run(&RandomEvaluator { seed: 11 }, visits, 1);
    search
}

#[test]
fn forced_playouts_give_every_root_child_its_share() {
    let (k, visits) = (2.0f32, 600);
    let forced = forced_search(k, visits);
    let plain = forced_search(0.0, visits);
    let n = forced.root_visits() as f32;
    let stats = forced.root_child_stats();
    for child in &stats {
        let share = (k * child.prior * n).sqrt();
        assert!(
            child.visits as f32 + 2.0 >= share,
            "{child:?} has {} of its {share}",
            child.visits
        );
    }
    // Forcing moved visits to the children PUCT alone visits least.
    let low = |s: &Search| -> u32 {
        let mut v: Vec<u32> = s.root_children().iter().map(|&(_, n)| n).collect();
        v.sort_unstable();
        v[..10].iter().sum()
    };
    assert!(low(&forced) > low(&plain) + 10, "{} vs {}", low(&forced), low(&plain));
}

#[test]
fn policy_target_pruning_takes_back_forced_visits_only() {
    let (k, visits) = (2.0f32, 600);
    let search = forced_search(k, visits);
    let raw = search.root_children();
    let pruned = search.pruned_root_children();
    let stats = search.root_child_stats();
    let best = (0..raw.len()).fold(0, |b, i| if raw[i].1 > raw[b].1 { i } else { b });
    assert_eq!(pruned[best], raw[best], "the most visited child keeps its visits");
    let n = search.root_visits();
    let c_sqrt_n = (1.25 + ((n as f32 + 19652.0 + 1.0) / 19652.0).ln()) * (n as f32).sqrt();
    let q = |i: usize| stats[i].wdl[0] - stats[i].wdl[2];
    let score = |i: usize, v: u32| q(i) + c_sqrt_n * stats[i].prior / (1.0 + v as f32);
    let best_score = score(best, raw[best].1);
    let mut taken = 0;
    for i in 0..raw.len() {
        let (mv, kept) = pruned[i];
        assert_eq!(mv, raw[i].0);
        assert!(kept <= raw[i].1);
        if i != best && stats[i].proven == Proven::Unknown && raw[i].1 > 0 {
            // KataGo's rule, by search rather than by formula: take back up to the forced
            // visits, but keep at least as many as hold the score at most the best's.
            let forced = (k * stats[i].prior * n as f32).sqrt();
            let floor =
                (0..=raw[i].1).find(|&v| score(i, v) <= best_score + 1e-4).unwrap_or(raw[i].1);
            let expected = ((raw[i].1 as f32 - forced).ceil().max(0.0) as u32).max(floor);
            let expected = if expected <= 1 { 0 } else { expected };
            assert!(kept.abs_diff(expected) <= 1, "child {i}: kept {kept}, expected {expected}");
        }
        assert_ne!(kept, 1, "a single remaining visit is pruned");
        taken += raw[i].1 - kept;
    }
    assert!(taken > 0, "forced visits were taken back");
    // Without forced playouts the target is the visit counts.
    let plain = forced_search(0.0, visits);
    assert_eq!(plain.pruned_root_children(), plain.root_children());
}

#[test]
fn instant_wins_prove_a_move_that_allows_a_king_explosion_lost_without_evaluating_it() {
    // Black threatens Bxf2 (the blast takes the g1 king). With `instant_wins`, a White move
    // that allows it is proven lost the first time it is visited, so each trap costs one
    // visit and the search picks a safe move with far fewer visits than without.
    let fen = "4k3/8/8/2b5/8/8/5P2/6K1 w - - 0 1";
    let pos = Position::from_fen(fen, Variant::Atomic).unwrap();
    let config = SearchConfig { instant_wins: true, ..SearchConfig::default().without_noise() };
    let mut s = Search::new(&Game::new(pos), config, 3);
    s.run(&UniformEvaluator, 200, 1);
    let stats = s.root_child_stats();
    let lost: Vec<_> = stats.iter().filter(|c| c.proven == Proven::Loss).collect();
    assert!(lost.len() >= 2, "traps proven: {}", lost.len());
    for c in &lost {
        let after = pos.play(c.mv).unwrap();
        assert!(after.winning_move(&after.legal_moves()).is_some(), "{}", pos.uci(c.mv));
        assert_eq!(c.visits, 1, "{}: a proven trap is visited once", pos.uci(c.mv));
    }
    let best = s.best_move().unwrap();
    let after = pos.play(best).unwrap();
    assert_eq!(after.winning_move(&after.legal_moves()), None, "{}", pos.uci(best));
    // Off (the default), a trap is proven, if at all, only by searching below it.
    let mut s = Search::new(&Game::new(pos), SearchConfig::default().without_noise(), 3);
    s.run(&UniformEvaluator, 200, 1);
    let traps: Vec<_> = s
        .root_child_stats()
        .into_iter()
        .filter(|c| {
            let after = pos.play(c.mv).unwrap();
            after.winning_move(&after.legal_moves()).is_some()
        })
        .collect();
    assert_eq!(traps.len(), lost.len());
    for c in &traps {
        assert!(c.proven == Proven::Unknown || c.visits > 1, "{}", pos.uci(c.mv));
    }
}

#[test]
fn lcb_selection_plays_the_best_valued_well_visited_child() {
    // With a vanishing margin the lower bound is the mean: the move played is the best-valued
    // child among those with at least 15% of the most visited one's visits, and with the
    // option off it is the most visited. Random values make the two differ in some searches.
    let mut differed = 0;
    for seed in 0..8 {
        let game = Game::new(Position::new(Variant::Atomic));
        let config = SearchConfig { lcb_stdevs: 1e-4, ..SearchConfig::default().without_noise() };
        let mut lcb = Search::new(&game, config, seed);
        lcb.run(&RandomEvaluator { seed }, 600, 8);
        let stats = lcb.root_child_stats();
        let most = stats.iter().map(|c| c.visits).max().unwrap();
        let value = |c: &atomzero_mcts::ChildStats| c.wdl[0] - c.wdl[2];
        let expected = stats
            .iter()
            .filter(|c| c.visits as f64 >= 0.15 * most as f64)
            .max_by(|a, b| value(a).total_cmp(&value(b)))
            .unwrap();
        assert_eq!(lcb.best_move(), Some(expected.mv), "seed {seed}");
        let mut plain = Search::new(&game, SearchConfig::default().without_noise(), seed);
        plain.run(&RandomEvaluator { seed }, 600, 8);
        let most_visited = stats.iter().find(|c| c.visits == most).unwrap().mv;
        assert_eq!(plain.best_move(), Some(most_visited), "seed {seed}: the search changed");
        differed += usize::from(expected.mv != most_visited);
    }
    assert!(differed > 0, "LCB never chose another move than the most visited");
}

#[test]
fn tactics_prove_a_threat_nothing_parries_and_report_its_distance() {
    // 7... Qh4 threatens Qxf2 (the blast takes the e1 king) and nothing parries it:
    // Fairy-Stockfish (depth 12) scores the position `mate 2` (d8h4 c2c3 h4f2), and after
    // Qh4 `mate -1` for White. With `tactics` 2 the leaf after Qh4 is proven lost for White
    // before any evaluation (every White move allows the explosion: two plies), so the root
    // is proven a win in three plies after a handful of visits.
    let fen = "rnbqkb1r/1p1p1ppp/p1p5/4p3/1n2PNP1/P2B4/1PPP1P1P/RNBQKR2 b Qkq - 0 7";
    let pos = Position::from_fen(fen, Variant::Atomic).unwrap();
    let base = SearchConfig { instant_wins: true, ..SearchConfig::default().without_noise() };
    let run = |tactics: u8, visits: u32| {
        let mut s = Search::new(&Game::new(pos), SearchConfig { tactics, ..base }, 4);
        s.run(&UniformEvaluator, visits, 4);
        s
    };
    let s = run(2, 2_000);
    assert_eq!(s.root_proven(), Proven::Win);
    assert_eq!(s.root_proof(), Some((Proven::Win, 3)));
    assert_eq!(pos.uci(s.best_move().unwrap()), "d8h4");
    let qh4 = s.root_child_stats().into_iter().find(|c| pos.uci(c.mv) == "d8h4").unwrap();
    assert!(qh4.visits <= 2, "proven at its first visit: {} visits", qh4.visits);
    assert!(s.root_visits() < 100, "{} visits", s.root_visits());
    // Level 3 proves it too (its wins-in-three check runs below the root, not at it).
    let s3 = run(3, 2_000);
    assert_eq!(s3.root_proof(), Some((Proven::Win, 3)));
    // White's side of it: every move loses in two.
    let after = pos.play(s.best_move().unwrap()).unwrap();
    let mut white = Search::new(&Game::new(after), SearchConfig { tactics: 2, ..base }, 5);
    white.run(&UniformEvaluator, 500, 4);
    assert_eq!(white.root_proof(), Some((Proven::Loss, 2)));
    // Without tactics the one-move checks prove it too, but only once every White reply
    // below Qh4 has been visited: many more playouts.
    let plain = run(0, 2_000);
    assert!(
        plain.root_visits() > 5 * s.root_visits(),
        "{} vs {}",
        plain.root_visits(),
        s.root_visits()
    );
}

#[test]
fn excluded_root_moves_get_no_visits_and_are_not_played() {
    // The uniform evaluator would spread visits over every root move; the moves left out
    // get none (fresh tree) or no more (reused tree), and the best move is one of the others.
    let pos = Position::new(Variant::Atomic);
    let moves = pos.legal_moves();
    let out: Vec<_> = moves.iter().copied().take(15).collect();
    let config = SearchConfig::default().without_noise();
    let mut s = Search::new(&Game::new(pos), config, 9);
    s.exclude_root_moves(&out);
    s.run(&UniformEvaluator, 400, 4);
    assert_eq!(s.excluded_root_moves().len(), 15);
    for c in s.root_child_stats() {
        assert_eq!(out.contains(&c.mv), c.visits == 0, "{}", pos.uci(c.mv));
    }
    assert!(!out.contains(&s.best_move().unwrap()));
    // On a searched tree: the most visited move, once left out, is no longer played and
    // gets no more visits.
    let mut s = Search::new(&Game::new(pos), config, 9);
    s.run(&UniformEvaluator, 400, 4);
    let top = s.best_move().unwrap();
    let before = s.root_child_stats().into_iter().find(|c| c.mv == top).unwrap().visits;
    s.exclude_root_moves(&[top]);
    s.run(&UniformEvaluator, 800, 4);
    assert_ne!(s.best_move(), Some(top));
    let after = s.root_child_stats().into_iter().find(|c| c.mv == top).unwrap().visits;
    assert_eq!(before, after);
    // Leaving out every move leaves out none; `advance` forgets the list.
    s.exclude_root_moves(&moves);
    assert!(s.excluded_root_moves().is_empty());
    s.exclude_root_moves(&[top]);
    let m = s.best_move().unwrap();
    s.advance(m);
    assert!(s.excluded_root_moves().is_empty());
}
