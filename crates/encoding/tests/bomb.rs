//! The bomb variant's encoding: its policy indices are a bijection on legal moves (choices and
//! detonations included), and what the network sees is the side to move's view only: two full
//! states that differ only in the opponent's bomb encode identically.

use atomzero_encoding::{
    BOMB_PLANES, DETONATION_PLANE, Encoder, EncoderConfig, POLICY_SIZE, REMOVAL_PLANE,
    index_to_move, move_to_index,
};
use atomzero_rules::{Move, OpponentBomb, Position, Role, Square, Variant, view_repetitions};
use ndarray::Array3;
use std::collections::HashSet;

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

/// Random bomb games from the setup phase, each position with the game before it (oldest
/// first). Detonations are played only now and then, so that games last.
fn random_bomb_positions(n: usize, seed: u64) -> Vec<(Position, Vec<Position>)> {
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    while out.len() < n {
        let mut pos = Position::new(Variant::Bomb);
        let mut before: Vec<Position> = Vec::new();
        for _ in 0..160 {
            let moves = pos.legal_moves();
            if moves.is_empty() || pos.outcome().is_some() {
                break;
            }
            out.push((pos, before.clone()));
            before.push(pos);
            let quiet: Vec<Move> = moves.iter().copied().filter(|m| !m.is_detonation()).collect();
            let m = if quiet.is_empty() || rng.below(12) == 0 {
                moves[rng.below(moves.len())]
            } else {
                quiet[rng.below(quiet.len())]
            };
            pos.play_unchecked(m);
        }
    }
    out
}

fn encode(encoder: &Encoder, pos: &Position, before: &[Position]) -> Array3<f32> {
    let history: Vec<Position> =
        before.iter().rev().take(encoder.config().history).copied().collect();
    let mut x = Array3::zeros((encoder.planes(), 8, 8));
    encoder.encode(pos, &history, view_repetitions(pos, before), x.view_mut());
    x
}

#[test]
fn bomb_policy_indices_round_trip_for_every_legal_move() {
    let (mut n, mut choices, mut detonations, mut knight_detonations) = (0, 0, 0, 0);
    for (pos, _) in random_bomb_positions(6_000, 3) {
        let mut seen = HashSet::new();
        for &m in pos.legal_moves().iter() {
            let index = move_to_index(&pos, m);
            assert!(index < POLICY_SIZE);
            assert!(seen.insert(index), "two legal moves share index {index} in {}", pos.fen());
            assert_eq!(index_to_move(&pos, index), Some(m), "{} in {}", pos.uci(m), pos.fen());
            n += 1;
            if m.is_bomb_choice() {
                choices += 1;
                assert_eq!(index / 64, REMOVAL_PLANE);
            }
            if m.is_detonation() {
                detonations += 1;
                let knight = pos.board().role_at(m.from()) == Some(Role::Knight);
                knight_detonations += usize::from(knight);
                let plane = if knight { REMOVAL_PLANE } else { DETONATION_PLANE };
                assert_eq!(index / 64, plane, "{}", pos.fen());
            }
        }
    }
    assert!(n > 100_000, "{n}");
    assert!(
        choices > 500 && detonations > 1_000 && knight_detonations > 50,
        "choices {choices}, detonations {detonations}, knight detonations {knight_detonations}"
    );
}

#[test]
fn spot_checks_of_the_bomb_indices() {
    let setup = Position::new(Variant::Bomb);
    let d1 = Move::bomb_choice(Square::D1);
    assert_eq!(move_to_index(&setup, d1), REMOVAL_PLANE * 64 + 3);
    assert_eq!(index_to_move(&setup, REMOVAL_PLANE * 64 + 3), Some(d1));
    assert_eq!(index_to_move(&setup, REMOVAL_PLANE * 64 + 4), None, "the king cannot be the bomb");
    // White chose the queen on d1, Black its knight on g8: play begins.
    let pos = Position::from_fen(
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 bombs:d1,g8",
        Variant::Bomb,
    )
    .unwrap();
    let boom = Move::detonation(Square::D1);
    assert!(pos.is_legal(boom));
    assert_eq!(move_to_index(&pos, boom), DETONATION_PLANE * 64 + 3);
    assert_eq!(index_to_move(&pos, DETONATION_PLANE * 64 + 3), Some(boom));
    // Black's knight bomb on g8 is seen from Black's side (mirrored to g1 = 6).
    let pos = Position::from_fen(
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1 bombs:d1,g8",
        Variant::Bomb,
    )
    .unwrap();
    let boom = Move::detonation(Square::G8);
    assert_eq!(move_to_index(&pos, boom), REMOVAL_PLANE * 64 + 6);
    assert_eq!(index_to_move(&pos, REMOVAL_PLANE * 64 + 6), Some(boom));
    // The knight's own first knight step from g8 keeps its usual index (g8-h6).
    let h6 = pos.parse_uci("g8h6").unwrap();
    assert_eq!(index_to_move(&pos, move_to_index(&pos, h6)), Some(h6));
}

#[test]
fn the_encoding_sees_the_movers_view_and_never_the_opponents_bomb() {
    let encoder = Encoder::new(EncoderConfig { history: 2, bomb: true });
    assert_eq!(encoder.planes(), 24 + 24 + BOMB_PLANES);
    let (mut compared, mut own_bomb_differs) = (0, 0);
    for (pos, before) in random_bomb_positions(3_000, 11).iter().step_by(2) {
        let us = pos.turn();
        let view = pos.view(us);
        let base = encode(&encoder, pos, before);
        if view.opponent_bomb() == OpponentBomb::Hidden {
            let candidates = view.candidates();
            let others = candidates
                .squares
                .into_iter()
                .map(Some)
                .chain(candidates.may_be_gone.then_some(None));
            for other in others.filter(|&o| o != pos.bomb(!us)) {
                let world = view.determinize(other).unwrap();
                assert_ne!(world.hash(), pos.hash(), "another full state");
                assert_eq!(world.view(us), view);
                // The same game before, as far as `us` can tell: the repetition count is the
                // view's, so it cannot differ either.
                assert_eq!(view_repetitions(&world, before), view_repetitions(pos, before));
                assert_eq!(
                    encode(&encoder, &world, before),
                    base,
                    "{} vs {}",
                    pos.fen(),
                    world.fen()
                );
                compared += 1;
            }
        }
        // The mover's own bomb is seen: moving it to another of its pieces changes plane 0.
        if let Some(own) = pos.bomb(us)
            && let Some(other) =
                (pos.board().by_color(us) & !pos.board().kings()).into_iter().find(|&sq| sq != own)
        {
            let their_view = pos.view(!us);
            if let Ok(world) = their_view.determinize(Some(other)) {
                assert_ne!(encode(&encoder, &world, before), base);
                own_bomb_differs += 1;
            }
        }
    }
    assert!(compared > 10_000 && own_bomb_differs > 500, "{compared} {own_bomb_differs}");
}

#[test]
fn bomb_planes_follow_the_view() {
    let encoder = Encoder::new(EncoderConfig { history: 0, bomb: true });
    let planes = |pos: &Position| {
        let x = encode(&encoder, pos, &[]);
        (0..BOMB_PLANES).map(|b| x.index_axis(ndarray::Axis(0), 24 + b).sum()).collect::<Vec<_>>()
    };
    let setup = Position::new(Variant::Bomb);
    assert_eq!(planes(&setup), [0.0, 64.0, 0.0, 0.0, 0.0, 0.0], "White chooses; Black has not");
    let after_choice = |square| setup.play(Move::bomb_choice(square)).unwrap();
    let after = after_choice(Square::D1);
    assert_eq!(
        planes(&after),
        [0.0, 64.0, 0.0, 64.0, 0.0, 0.0],
        "Black chooses; White's is hidden"
    );
    let pos = after.play(Move::bomb_choice(Square::B8)).unwrap();
    assert_eq!(planes(&pos), [1.0, 0.0, 0.0, 64.0, 0.0, 0.0], "White's own bomb on d1");
    let x = encode(&encoder, &pos, &[]);
    assert_eq!(x[[24, 0, 3]], 1.0, "d1");
    // No variant one-hot for the bomb variant (planes 19-23).
    for p in 19..24 {
        assert_eq!(x.index_axis(ndarray::Axis(0), p).sum(), 0.0);
    }
    // White chose its a2 pawn instead and detonates it: Black, to move, sees its own bomb and
    // White's detonation.
    let pos = after_choice(Square::A2).play(Move::bomb_choice(Square::B8)).unwrap();
    let boom = pos.play(Move::detonation(Square::A2)).unwrap();
    assert_eq!(planes(&boom), [1.0, 0.0, 0.0, 0.0, 64.0, 0.0]);
    let reply = boom.play(boom.parse_uci("e7e5").unwrap()).unwrap();
    assert_eq!(
        planes(&reply),
        [0.0, 0.0, 64.0, 64.0, 0.0, 0.0],
        "White detonated; Black's is hidden"
    );
    // An encoder without bomb planes has version 2's planes only.
    let plain = Encoder::new(EncoderConfig::default());
    assert_eq!(plain.planes(), 24);
    let json = serde_json::to_string(&EncoderConfig { history: 1, bomb: false }).unwrap();
    assert_eq!(json, r#"{"history":1}"#, "configs without bombs are written as before");
    let read: EncoderConfig = serde_json::from_str(r#"{"history":0,"bomb":true}"#).unwrap();
    assert!(read.bomb);
}

#[test]
fn other_variants_encode_alike_with_and_without_bomb_planes() {
    let with = Encoder::new(EncoderConfig { history: 1, bomb: true });
    let without = Encoder::new(EncoderConfig { history: 1, bomb: false });
    for variant in Variant::ALL {
        let mut pos = Position::new(variant);
        let mut rng = Rng(variant.name().len() as u64);
        let mut before = Vec::new();
        for _ in 0..30 {
            let a = encode(&with, &pos, &before);
            let b = encode(&without, &pos, &before);
            assert_eq!(a.slice(ndarray::s![..without.planes(), .., ..]), b);
            assert_eq!(a.slice(ndarray::s![without.planes().., .., ..]).sum(), 0.0);
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            before.push(pos);
            pos.play_unchecked(moves[rng.below(moves.len())]);
        }
    }
}
