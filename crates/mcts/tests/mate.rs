//! Mate distances against Fairy-Stockfish: `tests/data/fsf-mates.txt` holds atomic positions
//! with Fairy-Stockfish's `score mate N` (recorded by `scripts/fsf_mates.py` from real runs of
//! the engine); the exact mate search must find the same N for every one, and a search that
//! proves the position must agree with it.

use atomzero_mcts::{
    Mate, MateLimits, Proven, Search, SearchConfig, UniformEvaluator, mate_distance,
};
use atomzero_rules::{Game, Position, Variant};

fn positions() -> Vec<(Position, i32)> {
    include_str!("data/fsf-mates.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (fen, n) = l.rsplit_once(';').expect("FEN;N");
            let pos = Position::from_fen(fen, Variant::Atomic).expect(fen);
            (pos, n.trim().parse().expect("N"))
        })
        .collect()
}

#[test]
fn the_exact_search_finds_fairy_stockfishs_mate_distances() {
    let positions = positions();
    assert!(positions.len() >= 30, "{} positions", positions.len());
    for n in [-3, -2, -1, 1, 2, 3] {
        assert!(positions.iter().any(|(_, m)| *m == n), "no position with mate {n}");
    }
    let limits = MateLimits { max_plies: 10, max_nodes: 5_000_000 };
    for (pos, expected) in &positions {
        let found = mate_distance(pos, *expected > 0, limits);
        assert_eq!(found.map(Mate::uci_moves), Some(*expected), "{}: {found:?}", pos.fen());
        // One ply less is not enough: the distance is the shortest (or the longest defence).
        let shorter = MateLimits { max_plies: found.unwrap().plies() - 1, ..limits };
        assert_eq!(mate_distance(pos, *expected > 0, shorter), None, "{}", pos.fen());
        // Asked the other way round (within 4 plies: deeper is slow and proves nothing more),
        // a decided position has no answer.
        let other = MateLimits { max_plies: 4, ..limits };
        assert_eq!(mate_distance(pos, *expected < 0, other), None, "{}", pos.fen());
    }
}

#[test]
fn a_proven_search_root_agrees_with_the_mate_distance() {
    // The search proves most of these within a few thousand playouts with uniform priors;
    // whatever it proves must be the side the mate search finds.
    let config = SearchConfig { instant_wins: true, ..SearchConfig::default() }.without_noise();
    let mut proven = 0;
    for (pos, expected) in positions() {
        let mut search = Search::new(&Game::new(pos), config, 1);
        search.run(&UniformEvaluator, 4000, 8);
        match search.root_proven() {
            // `root_proven` is the result for the side to move.
            Proven::Win => assert!(expected > 0, "{}: proven won, FSF says {expected}", pos.fen()),
            Proven::Loss => {
                assert!(expected < 0, "{}: proven lost, FSF says {expected}", pos.fen())
            }
            Proven::Draw => panic!("{}: proven drawn, FSF says mate {expected}", pos.fen()),
            Proven::Unknown => continue,
        }
        proven += 1;
    }
    assert!(proven >= 20, "only {proven} roots proven");
}
