//! The bomb variant's search (PIMC): it knows only the player's information set, so with a
//! fixed seed and belief its result cannot depend on where the opponent's bomb really is;
//! its worlds follow the belief; exact results (a detonation that wins) are found.

use atomzero_belief::{BeliefModel, FEATURES, InformationSet};
use atomzero_mcts::{GumbelConfig, RandomEvaluator, Search, SearchConfig};
use atomzero_pimc::Pimc;
use atomzero_rules::{Color, Game, Move, OpponentBomb, Position, Square, Variant};

struct Rng(u64);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % n.max(1) as u64) as usize
    }
}

fn random_game(rng: &mut Rng, plies: usize) -> Vec<Move> {
    let mut pos = Position::new(Variant::Bomb);
    let mut moves = Vec::new();
    for _ in 0..plies {
        let legal = pos.legal_moves();
        if legal.is_empty() || pos.outcome().is_some() {
            break;
        }
        let quiet: Vec<Move> = legal.iter().copied().filter(|m| !m.is_detonation()).collect();
        let m = if quiet.is_empty() || rng.below(15) == 0 {
            legal[rng.below(legal.len())]
        } else {
            quiet[rng.below(quiet.len())]
        };
        moves.push(m);
        pos = pos.play(m).unwrap();
    }
    moves
}

fn configs() -> [SearchConfig; 2] {
    let puct = SearchConfig::default();
    let gumbel = SearchConfig { gumbel: Some(GumbelConfig::default()), ..SearchConfig::default() };
    [puct, gumbel]
}

/// A belief that prefers pieces near the player's king and unmoved ones (not uniform, so that
/// the draws depend on the information set's details).
fn some_belief() -> BeliefModel {
    let mut belief = BeliefModel::uniform();
    belief.weights = (0..FEATURES).map(|i| ((i * 37 % 11) as f32 - 5.0) / 4.0).collect();
    belief
}

#[test]
fn the_search_never_depends_on_the_true_opponent_bomb() {
    let mut rng = Rng(21);
    let setup = Position::new(Variant::Bomb);
    let evaluator = RandomEvaluator { seed: 3 };
    let (mut compared, mut truth_visible_to_a_plain_search) = (0, 0);
    for game in 0..24 {
        let moves = random_game(&mut rng, 60);
        for end in (3..moves.len()).step_by(9) {
            let game_moves = &moves[..end];
            let truth = game_moves.iter().fold(setup, |p, &m| p.play(m).unwrap());
            let viewer = truth.turn();
            if truth.view(viewer).opponent_bomb() != OpponentBomb::Hidden {
                continue;
            }
            // The opponent's choice (ply 0 for White, 1 for Black) swapped for another piece,
            // as long as the game stays legal.
            let ply = usize::from(viewer == Color::White);
            let others = setup.board().by_color(!viewer) & !setup.board().kings();
            let Some(swapped) = others.into_iter().find_map(|other| {
                let mut swapped = game_moves.to_vec();
                swapped[ply] = Move::bomb_choice(other);
                (other != game_moves[ply].from()
                    && swapped.iter().try_fold(setup, |p, &m| p.play(m).ok()).is_some())
                .then_some(swapped)
            }) else {
                continue;
            };
            let a = InformationSet::from_moves(&setup, game_moves, viewer).unwrap();
            let b = InformationSet::from_moves(&setup, &swapped, viewer).unwrap();
            assert_eq!(a, b);
            for (c, config) in configs().into_iter().enumerate() {
                let seed = (game * 100 + end * 10 + c) as u64;
                let run = |info: &InformationSet| {
                    let mut pimc = Pimc::new(info, &some_belief(), config, 4, 48, seed).unwrap();
                    pimc.run(&evaluator, 4);
                    (pimc.policy(), pimc.best_move(), pimc.root_wdl(), pimc.worlds())
                };
                let (ra, rb) = (run(&a), run(&b));
                assert_eq!(ra, rb, "the search saw the truth at ply {end} of game {game}");
                compared += 1;
                // Control: a plain search handed the full state does see it.
                let plain = |moves: &[Move]| {
                    let mut game = Game::new(setup);
                    moves.iter().for_each(|&m| game.play_unchecked(m));
                    let mut search = Search::new(&game, config, seed);
                    search.run(&evaluator, 48, 4);
                    search.improved_policy()
                };
                truth_visible_to_a_plain_search +=
                    usize::from(plain(game_moves) != plain(&swapped));
            }
        }
    }
    assert!(compared >= 40, "{compared}");
    assert!(truth_visible_to_a_plain_search * 2 > compared, "{truth_visible_to_a_plain_search}");
}

#[test]
fn the_worlds_follow_the_belief() {
    let setup = Position::new(Variant::Bomb);
    let mut pos = setup;
    let mut moves = Vec::new();
    for uci in ["@d1", "@b8", "e2e4", "e7e5"] {
        let m = pos.parse_uci(uci).unwrap();
        moves.push(m);
        pos = pos.play(m).unwrap();
    }
    let info = InformationSet::from_moves(&setup, &moves, Color::White).unwrap();
    let config = SearchConfig::default();
    // Uniform: 64 draws over 15 origins give many worlds, each weighted by its draws.
    let uniform = Pimc::new(&info, &BeliefModel::uniform(), config, 64, 640, 1).unwrap();
    let worlds = uniform.worlds();
    assert!(worlds.len() >= 10, "{worlds:?}");
    assert!((worlds.iter().map(|w| w.1).sum::<f32>() - 1.0).abs() < 1e-5);
    // A belief sure of the knight that started on b8 (the origin one-hot of b1 from Black's
    // side): every draw is that world.
    let mut sure = BeliefModel::uniform();
    sure.weights[Square::B1.index()] = 30.0;
    let pimc = Pimc::new(&info, &sure, config, 8, 64, 1).unwrap();
    assert_eq!(pimc.worlds(), [(Some(Square::B8), 1.0)]);
    assert_eq!(pimc.searches()[0].root_position(), &pos, "that world is the truth here");
    // Nothing hidden at the start: one world, whatever the belief.
    let start = InformationSet::new(&setup, Color::White);
    let pimc = Pimc::new(&start, &sure, config, 8, 64, 1).unwrap();
    assert_eq!(pimc.worlds(), [(None, 1.0)]);
    // Not the side to move's information set.
    let black = InformationSet::from_moves(&setup, &moves, Color::Black).unwrap();
    assert!(Pimc::new(&black, &sure, config, 8, 64, 1).is_err());
}

#[test]
fn a_detonation_that_blows_up_the_king_is_played() {
    // White's knight bomb on d7 stands next to the black king; Black's bomb is one of its
    // pawns (hidden from White). Detonating wins in every world.
    let pos =
        Position::from_fen("4k3/3N4/8/8/8/8/p6p/4K3 w - - 0 1 bombs:d7,h2", Variant::Bomb).unwrap();
    let info = InformationSet::new(&pos, Color::White);
    assert_eq!(info.hidden_origins().len(), 2);
    for config in configs() {
        let mut pimc = Pimc::new(&info, &BeliefModel::uniform(), config, 4, 64, 2).unwrap();
        pimc.run(&RandomEvaluator { seed: 1 }, 4);
        assert_eq!(pimc.best_move(), Some(Move::detonation(Square::D7)));
    }
}
