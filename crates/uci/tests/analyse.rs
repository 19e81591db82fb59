//! Game analysis end to end in the library: a game with a planted blunder (a move after which
//! the opponent blows up the king at once) is analysed, and the blunder must be marked `$4`
//! with the engine's better move, the winning reply `#0`, and the PGN must read back as the
//! same game. Pure MCTS (uniform priors) finds these: the solver proves the mate.

use atomzero_mcts::UniformEvaluator;
use atomzero_rules::{Game, Move, PgnGame, Position, Variant, read_pgn};
use atomzero_uci::Score;
use atomzero_uci::analyse::{self, AnalysisConfig, Judgement};

/// A move of `pos` after which the opponent has an immediate winning capture, in a position
/// where another move avoids it.
fn blunder_in(pos: &Position) -> Option<Move> {
    let loses = |m: Move| {
        let mut after = *pos;
        after.play_unchecked(m);
        after.outcome().is_none() && after.winning_move(&after.legal_moves()).is_some()
    };
    let moves = pos.legal_moves();
    if moves.iter().all(|&m| loses(m)) || pos.winning_move(&moves).is_some() {
        return None;
    }
    moves.iter().copied().find(|&m| loses(m))
}

/// A game of seeded random moves that give nothing away, up to the first position (from
/// ply 4) where a blunder is possible, then the blunder and the opponent's winning capture;
/// and the blunder's ply.
fn planted_game() -> (PgnGame, usize) {
    let mut game = Game::new(Position::new(Variant::Atomic));
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    while game.ply() < 60 {
        let pos = *game.position();
        if game.ply() >= 4
            && let Some(blunder) = blunder_in(&pos)
        {
            let at = game.ply();
            game.play(blunder).unwrap();
            let after = *game.position();
            game.play(after.winning_move(&after.legal_moves()).unwrap()).unwrap();
            let mut pgn = PgnGame::new(*game.initial());
            pgn.moves = game.moves().to_vec();
            pgn.result = game.outcome().unwrap().result_str().to_string();
            return (pgn, at);
        }
        let safe: Vec<Move> = pos
            .legal_moves()
            .iter()
            .copied()
            .filter(|&m| {
                let mut after = pos;
                after.play_unchecked(m);
                after.outcome().is_none() && after.winning_move(&after.legal_moves()).is_none()
            })
            .collect();
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        game.play(safe[(seed >> 33) as usize % safe.len()]).unwrap();
    }
    panic!("no position with a blunder in 60 plies");
}

#[test]
fn a_planted_blunder_is_marked_and_the_pgn_reads_back() {
    let (game, at) = planted_game();
    let config = AnalysisConfig { nodes: 300, threads: 2, ..AnalysisConfig::default() };
    let evals =
        analyse::evaluate_games(std::slice::from_ref(&game), &UniformEvaluator, &config, &|| {});
    assert_eq!(evals.len(), 1);
    assert_eq!(evals[0].len(), game.moves.len() + 1, "one evaluation per position");
    let analysis = analyse::judge_game(&game, evals.into_iter().next().unwrap());

    let blunder = &analysis.moves[at];
    assert_eq!(blunder.judgement, Some(Judgement::Blunder), "{blunder:?}");
    let better = blunder.better.expect("the engine prefers another move");
    assert_ne!(better, game.moves[at]);
    // After the blunder the opponent mates in one; after its capture the game is over.
    let mover_is_white = at % 2 == 0;
    let mate_in_one = Score::Mate(if mover_is_white { -1 } else { 1 });
    assert_eq!(blunder.eval_after, mate_in_one);
    assert_eq!(analysis.moves[at + 1].eval_after, Score::Mate(0));
    // Moves before it are not blunders of that kind: no mate was allowed.
    for m in &analysis.moves[..at] {
        assert!(!matches!(m.eval_after, Score::Mate(_)), "{m:?}");
    }

    let text = analyse::annotated_pgn(&game, &analysis, "atomzero test");
    assert!(text.contains("[Annotator \"atomzero test\"]"), "{text}");
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("$4 { [%eval #"), "{text}");
    assert!(text.contains("Blunder."), "{text}");
    assert!(text.contains("[%eval #0]"), "{text}");
    assert_eq!(text.matches("[%eval ").count(), game.moves.len(), "{text}");
    let back = read_pgn(&text).pop().unwrap().unwrap();
    assert_eq!(back.moves, game.moves);
    assert_eq!(back.result, game.result);
}

#[test]
fn the_thread_count_does_not_change_the_analysis() {
    let (game, _) = planted_game();
    let run = |threads| {
        let config = AnalysisConfig { nodes: 100, threads, ..AnalysisConfig::default() };
        analyse::evaluate_games(std::slice::from_ref(&game), &UniformEvaluator, &config, &|| {})
    };
    assert_eq!(run(1), run(3));
}
