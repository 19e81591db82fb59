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
