//! Information sets on random bomb games (detonations, captures, castling and promotions
//! included): the truth is always one of the worlds, every world is a full state the player
//! cannot tell from the truth, and swapping the opponent's hidden choice for another leaves
//! the information set unchanged.

use atomzero_belief::InformationSet;
use atomzero_rules::{Color, Move, OpponentBomb, Position, Square, Variant};

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

/// A random game from the setup phase (detonations one move in ten when legal).
fn random_game(rng: &mut Rng, plies: usize) -> Vec<Move> {
    let mut pos = Position::new(Variant::Bomb);
    let mut moves = Vec::new();
    for _ in 0..plies {
        let legal = pos.legal_moves();
        if legal.is_empty() || pos.outcome().is_some() {
            break;
        }
        let quiet: Vec<Move> = legal.iter().copied().filter(|m| !m.is_detonation()).collect();
        let m = if quiet.is_empty() || rng.below(10) == 0 {
            legal[rng.below(legal.len())]
        } else {
            quiet[rng.below(quiet.len())]
        };
        moves.push(m);
        pos = pos.play(m).unwrap();
    }
    moves
}

fn replay(moves: &[Move]) -> Position {
    moves.iter().fold(Position::new(Variant::Bomb), |pos, &m| pos.play(m).unwrap())
}

#[test]
fn the_truth_is_one_of_the_worlds_and_every_world_looks_the_same() {
    let mut rng = Rng(5);
    let setup = Position::new(Variant::Bomb);
    let (mut hidden, mut worlds, mut revealed, mut gone) = (0, 0, 0, 0);
    for _ in 0..60 {
        let moves = random_game(&mut rng, 120);
        for end in (2..=moves.len()).step_by(7) {
            let truth = replay(&moves[..end]);
            for viewer in Color::ALL {
                let info = InformationSet::from_moves(&setup, &moves[..end], viewer).unwrap();
                assert_eq!(*info.view(), truth.view(viewer));
                // White chooses at ply 0, Black at ply 1.
                let opponent_choice = moves[usize::from(viewer == Color::White)];
                let true_origin = opponent_choice.from();
                match info.view().opponent_bomb() {
                    OpponentBomb::Hidden => {
                        hidden += 1;
                        let origins: Vec<Square> =
                            info.hidden_origins().iter().map(|p| p.origin).collect();
                        assert!(origins.contains(&true_origin));
                        assert_eq!(info.world(Some(true_origin)).unwrap().position, truth);
                        gone += usize::from(truth.bomb(!viewer).is_none());
                        for &origin in &origins {
                            let world = info.world(Some(origin)).unwrap();
                            assert_eq!(world.position.view(viewer), truth.view(viewer));
                            assert_eq!(world.before.len(), end);
                            worlds += 1;
                        }
                    }
                    OpponentBomb::Detonated => {
                        revealed += 1;
                        assert_eq!(info.revealed(), Some(true_origin));
                        assert_eq!(info.world(None).unwrap().position, truth);
                    }
                    OpponentBomb::Unchosen => {
                        assert_eq!(info.world(None).unwrap().position, truth);
                    }
                }
            }
        }
    }
    assert!(
        hidden > 500 && worlds > 5_000 && revealed > 30 && gone > 30,
        "{hidden} {worlds} {revealed} {gone}"
    );
}

#[test]
fn another_hidden_choice_gives_the_same_information_set() {
    let mut rng = Rng(8);
    let setup = Position::new(Variant::Bomb);
    let mut compared = 0;
    for _ in 0..80 {
        let moves = random_game(&mut rng, 80);
        // Black's choice (ply 1) swapped for each of Black's other pieces: White's knowledge is
        // the same as long as the game stays legal (Black's own detonation depends on it).
        let Some(&black_choice) = moves.get(1) else { continue };
        let white = InformationSet::from_moves(&setup, &moves, Color::White).unwrap();
        for other in setup.board().by_color(Color::Black) & !setup.board().kings() {
            if other == black_choice.from() {
                continue;
            }
            let mut swapped = moves.clone();
            swapped[1] = Move::bomb_choice(other);
            if swapped.iter().try_fold(setup, |pos, &m| pos.play(m).ok()).is_none() {
                continue;
            }
            let info = InformationSet::from_moves(&setup, &swapped, Color::White).unwrap();
            assert_eq!(info, white);
            compared += 1;
        }
    }
    assert!(compared > 800, "{compared}");
}
