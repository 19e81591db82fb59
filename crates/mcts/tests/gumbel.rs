//! Gumbel root search: the visits follow sequential halving (also with several leaves in
//! flight), the budget counts only this search's simulations after tree reuse, the move played
//! is never a proven loss, and the improved policy is a distribution.

use atomzero_mcts::{GumbelConfig, Proven, RandomEvaluator, Search, SearchConfig};
use atomzero_rules::{Game, Position, Variant};

fn gumbel_config() -> SearchConfig {
    SearchConfig { gumbel: Some(GumbelConfig::default()), ..SearchConfig::default() }
}

fn gumbel_search(fen: &str, seed: u64) -> Search {
    let pos = Position::from_fen(fen, Variant::Atomic).unwrap();
    Search::new(&Game::new(pos), gumbel_config(), seed)
}

/// This search's visits per root child, sorted from most to least.
fn sorted_visits(search: &Search) -> Vec<u32> {
    let mut visits: Vec<u32> = search.root_children().iter().map(|&(_, n)| n).collect();
    visits.sort_unstable_by(|a, b| b.cmp(a));
    visits
}

#[test]
fn visits_follow_sequential_halving_whatever_the_batch() {
    // 20 legal moves at the start; 16 considered, 48 simulations: 16 actions once, 8 of them
    // once more, 4 of those three more times, the last 2 six more times (mctx's schedule).
    // The first simulation expands the root (a visit of the root, not of a child).
    let mut expected = vec![11, 11, 5, 5, 2, 2, 2, 2];
    expected.extend([1; 8]);
    expected.extend([0; 4]);
    for batch in [1, 4, 16] {
        let mut s = gumbel_search(atomzero_rules::STARTING_FEN, 7);
        s.set_simulations(48);
        // One simulation expands the root; 48 more go through its children.
        s.run(&RandomEvaluator { seed: 3 }, 49, batch);
        assert_eq!(s.budget_visits(), 49, "batch {batch}");
        assert_eq!(sorted_visits(&s), expected, "batch {batch}");
    }
}

#[test]
fn the_schedule_counts_only_this_search_after_tree_reuse() {
    let evaluator = RandomEvaluator { seed: 11 };
    let mut s = gumbel_search(atomzero_rules::STARTING_FEN, 3);
    s.set_simulations(32);
    s.run(&evaluator, 33, 4);
    let mv = s.gumbel_move().unwrap();
    s.advance(mv);
    // The reused subtree brings visits, but the new search's budget starts at zero.
    assert!(s.root_visits() > 1, "the played move's subtree is kept");
    assert_eq!(s.budget_visits(), 0);
    let before: Vec<u32> = s.root_children().iter().map(|&(_, n)| n).collect();
    s.set_simulations(16);
    s.run(&evaluator, 16, 4);
    assert_eq!(s.budget_visits(), 16);
    // 16 new simulations over 16 considered actions (or all of them if fewer): one each.
    let gained: Vec<u32> =
        s.root_children().iter().zip(&before).map(|(&(_, n), &b)| n - b).collect();
    let considered = 16.min(gained.len());
    assert_eq!(gained.iter().filter(|&&g| g == 1).count(), considered, "{gained:?}");
    assert_eq!(gained.iter().sum::<u32>(), 16);
}

#[test]
fn the_improved_policy_is_a_distribution_over_the_legal_moves() {
    let mut s = gumbel_search(atomzero_rules::STARTING_FEN, 5);
    s.set_simulations(24);
    s.run(&RandomEvaluator { seed: 2 }, 25, 4);
    let policy = s.improved_policy();
    assert_eq!(policy.len(), 20);
    let total: f32 = policy.iter().map(|&(_, p)| p).sum();
    assert!((total - 1.0).abs() < 1e-5, "{total}");
    assert!(policy.iter().all(|&(_, p)| p > 0.0 && p.is_finite()));
    // The move played is one of the two most visited.
    let mv = s.gumbel_move().unwrap();
    let visits = s.root_children();
    let played = visits.iter().find(|&&(m, _)| m == mv).unwrap().1;
    assert_eq!(played, sorted_visits(&s)[0]);
}

#[test]
fn a_proven_win_is_played_and_proven_losses_are_not() {
    // Qxf7 explodes the g8 king.
    let mut s = gumbel_search("4r1k1/5pp1/8/3Q4/8/8/8/4K3 w - - 0 1", 1);
    s.set_simulations(64);
    s.run(&RandomEvaluator { seed: 4 }, 65, 4);
    assert_eq!(s.root_position().uci(s.gumbel_move().unwrap()), "d5f7");
    // Black threatens Bxf2, exploding the white king on g1: White moves that allow it are
    // proven losses once the search sees the reply, and the search never plays one.
    let fen = "4k3/8/8/2b5/8/8/5P2/6K1 w - - 0 1";
    let mut proven_losses = 0;
    for seed in 0..6 {
        let mut s = gumbel_search(fen, seed);
        s.set_simulations(200);
        s.run(&RandomEvaluator { seed }, 201, 4);
        let mv = s.gumbel_move().unwrap();
        let stats = s.root_child_stats();
        proven_losses += stats.iter().filter(|c| c.proven == Proven::Loss).count();
        let child = stats.iter().find(|c| c.mv == mv).unwrap();
        assert_ne!(child.proven, Proven::Loss, "seed {seed}: {}", s.root_position().uci(mv));
    }
    assert!(proven_losses > 0, "the searches should prove some moves lost");
}

#[test]
fn without_noise_the_choice_does_not_depend_on_the_seed() {
    let play = |seed| {
        let pos = Position::new(Variant::Atomic);
        let mut s = Search::new(&Game::new(pos), gumbel_config().without_noise(), seed);
        s.set_simulations(32);
        s.run(&RandomEvaluator { seed: 8 }, 33, 4);
        s.gumbel_move().unwrap()
    };
    assert_eq!(play(1), play(2));
    // With draws of scale 1, different seeds consider different moves.
    let noisy = |seed| {
        let pos = Position::new(Variant::Atomic);
        let mut s = Search::new(&Game::new(pos), gumbel_config(), seed);
        s.set_simulations(8);
        s.run(&RandomEvaluator { seed: 8 }, 9, 4);
        s.root_children()
    };
    assert_ne!(noisy(1), noisy(2));
}
