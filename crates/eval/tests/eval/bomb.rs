//! Matches of the bomb variant: players are handed their own information set (the cheating
//! reference the full game), both bombs are chosen by the players, random plies follow the
//! choices, the report counts detonations and scores beliefs, and players that cannot play
//! hidden information are refused.

use crate::common::assert_pgn_round_trips;
use atomzero_belief::BeliefModel;
use atomzero_eval::{
    MatchConfig, MatchError, MatchResult, ModelLoader, Openings, PlayerKind, PlayerSpec,
    SharedEvaluator, run_match,
};
use atomzero_mcts::{RandomEvaluator, UniformEvaluator};
use atomzero_rules::{Square, Variant};
use std::sync::Arc;

/// Test networks (`uniform`, `random`); `sure` carries a belief sure of the queen's knight.
struct BombNets;

impl ModelLoader for BombNets {
    fn load(&self, path: &str) -> Result<SharedEvaluator, String> {
        match path {
            "uniform" | "sure" => Ok(Arc::new(UniformEvaluator)),
            "random" => Ok(Arc::new(RandomEvaluator { seed: 5 })),
            other => Err(format!("no test network '{other}'")),
        }
    }

    fn belief(&self, path: &str) -> Option<Arc<BeliefModel>> {
        let mut belief = BeliefModel::uniform();
        if path == "sure" {
            // The origin one-hot of b1, seen from the opponent's side (b1 for White, b8 for
            // Black): the queen's knight.
            belief.weights[Square::B1.index()] = 20.0;
        }
        Some(Arc::new(belief))
    }
}

fn bomb_config(games: usize, seed: u64) -> MatchConfig {
    MatchConfig {
        games,
        variant: Variant::Bomb,
        openings: Openings::Random { plies: 2 },
        max_plies: 200,
        seed,
        concurrency: 2,
        ..Default::default()
    }
}

fn play(first: &PlayerSpec, second: &PlayerSpec, config: &MatchConfig) -> MatchResult {
    run_match(first, second, config, &mut |_| {}).unwrap()
}

#[test]
fn greedy_beats_random_and_every_game_starts_with_both_choices() {
    let result = play(&PlayerSpec::greedy(), &PlayerSpec::random(), &bomb_config(30, 1));
    assert_eq!(result.games.len(), 30);
    assert!(result.wdl.score() >= 0.75, "{}", result.summary());
    for game in &result.games {
        assert!(game.moves[0].is_bomb_choice() && game.moves[1].is_bomb_choice());
        assert!(game.moves.len() < 4 || game.moves[2..4].iter().all(|m| !m.is_detonation()));
    }
    // The two games of a pair share their random plies (they do not depend on the bombs).
    for pair in result.games.chunks(2).filter(|p| p.len() == 2) {
        if pair[0].moves.len() >= 4 && pair[1].moves.len() >= 4 {
            assert_eq!(pair[0].moves[2..4], pair[1].moves[2..4]);
        }
    }
    assert!(!result.colour_report().contains("Removals"), "no Balanced-start removals");
    let report = result.bomb_report().unwrap();
    assert!(report.starts_with("Detonations: greedy in "), "{report}");
    assert!(!report.contains("Belief"), "neither player has a belief: {report}");
    let detonated =
        result.games.iter().filter(|g| g.bomb.as_ref().unwrap().detonated != [false; 2]);
    assert!(detonated.count() > 0);
    let pgn = result.pgn();
    assert!(pgn.contains("[WhiteBomb \"") && pgn.contains("[BlackBomb \""), "the bombs revealed");
    assert_pgn_round_trips(&result);
}

#[test]
fn network_players_search_their_view_and_beliefs_are_scored() {
    let sure = PlayerSpec::parse("net:sure,nodes=16,worlds=2,batch=4", &BombNets).unwrap();
    let random = PlayerSpec::random();
    let result = play(&sure, &random, &bomb_config(8, 2));
    let belief = result.belief_accuracy(true);
    assert!(belief.positions > 50, "{belief}");
    // Random players choose uniformly: a belief sure of one knight is right about 1 in 15
    // times while the bomb stands, and a uniform guess about as often.
    assert!(belief.top1() < 0.5, "{belief}");
    assert_eq!(result.belief_accuracy(false).positions, 0, "random has no belief");
    let report = result.bomb_report().unwrap();
    assert!(report.contains("Belief of net:sure"), "{report}");
    assert!(report.contains("vs uniform"), "{report}");
    // The cheating reference is handed the full game (and holds no belief to score).
    let cheat = PlayerSpec::parse("net:uniform,nodes=16,cheat=1,name=cheat", &BombNets).unwrap();
    let PlayerKind::Mcts(player) = cheat.kind() else { panic!() };
    assert!(player.cheat);
    let result = play(&cheat, &random, &bomb_config(4, 3));
    assert_eq!(result.belief_accuracy(true).positions, 0);
    assert_eq!(result.games.len(), 4);
    let policy = PlayerSpec::parse("policy:random", &BombNets).unwrap();
    assert_eq!(play(&policy, &random, &bomb_config(2, 4)).games.len(), 2);
}

#[test]
fn players_without_a_view_of_their_own_are_refused() {
    let uci = PlayerSpec::parse("uci:some-engine", &BombNets).unwrap();
    for spec in [PlayerSpec::alpha_beta(1), uci] {
        let err =
            run_match(&spec, &PlayerSpec::random(), &bomb_config(2, 1), &mut |_| {}).unwrap_err();
        assert!(matches!(err, MatchError::Bomb(_)), "{err}");
        assert!(err.to_string().contains("cannot play it"), "{err}");
    }
    let book = MatchConfig {
        openings: Openings::parse_epd(
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -\n",
            Variant::Atomic,
        )
        .unwrap(),
        ..bomb_config(2, 1)
    };
    let err = run_match(&PlayerSpec::random(), &PlayerSpec::random(), &book, &mut |_| {});
    assert!(err.is_err());
}
