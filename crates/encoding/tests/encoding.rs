//! Policy mapping is a bijection on legal moves; encodings are colour-symmetric; batches match
//! single encodings.

use atomzero_encoding::{
    Batch, Encoder, EncoderConfig, POLICY_SIZE, REMOVAL_PLANE, index_to_move, move_to_index,
    reply_index,
};
use atomzero_rules::{CastlingMode, Move, Position, Setup, Square, Start, Variant};
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

/// Random positions of every variant (some from a Chess960 start, some from the Balanced
/// start's setup position), with their histories.
fn random_positions(n: usize, seed: u64) -> Vec<(Position, Vec<Position>)> {
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    let mut game = 0;
    while out.len() < n {
        let variant = Variant::ALL[game % Variant::ALL.len()];
        let mut pos = if game % 4 == 3 {
            let setup = Setup::from_fen("rnbkqbrn/pppppppp/8/8/8/8/PPPPPPPP/RNBKQBRN w KQkq - 0 1")
                .unwrap();
            Position::from_setup(setup, variant, CastlingMode::Chess960).unwrap()
        } else if game % 4 == 1 {
            Position::start(variant, Start::Balanced)
        } else {
            Position::new(variant)
        };
        game += 1;
        let mut history: Vec<Position> = Vec::new();
        for _ in 0..200 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            out.push((pos, history.iter().rev().take(4).copied().collect()));
            history.push(pos);
            pos.play_unchecked(moves[rng.below(moves.len())]);
        }
    }
    out
}

#[test]
fn policy_index_round_trips_for_every_legal_move() {
    let positions = random_positions(10_000, 1);
    let (mut n_moves, mut castles, mut underpromotions, mut removals) = (0, 0, 0, 0);
    for (pos, _) in &positions {
        let mut seen = HashSet::new();
        for &m in pos.legal_moves().iter() {
            let index = move_to_index(pos, m);
            assert!(index < POLICY_SIZE);
            assert!(seen.insert(index), "two legal moves share index {index} in {}", pos.fen());
            assert_eq!(index_to_move(pos, index), Some(m), "{} in {}", pos.uci(m), pos.fen());
            n_moves += 1;
            castles += usize::from(m.is_castle());
            removals += usize::from(m.is_removal());
            underpromotions +=
                usize::from(matches!(m.promotion(), Some(r) if r != atomzero_rules::Role::Queen));
        }
    }
    assert!(n_moves > 200_000, "{n_moves}");
    assert!(
        castles > 100 && underpromotions > 100 && removals >= 16 * 10,
        "castles {castles}, underpromotions {underpromotions}, removals {removals}"
    );
}

#[test]
fn reply_indices_are_distinct_and_sit_where_the_side_to_move_sees_the_piece() {
    let mut checked = 0;
    for (pos, _) in random_positions(2_000, 3) {
        let Some(&first) = pos.legal_moves().first() else { continue };
        let mut after = pos;
        after.play_unchecked(first);
        let mut seen = HashSet::new();
        for &reply in after.legal_moves().iter() {
            let index = reply_index(&after, reply);
            assert!(index < POLICY_SIZE);
            assert!(seen.insert(index), "two replies share index {index} in {}", after.fen());
            // The square of the index is the reply's from-square as the side to move at `pos`
            // sees the board (mirrored for Black), and the plane is the one the opponent's
            // own policy uses.
            let ours = match pos.turn() {
                atomzero_rules::Color::White => reply.from(),
                atomzero_rules::Color::Black => reply.from().flip_vertical(),
            };
            assert_eq!(index % 64, ours.index(), "{} after {}", after.uci(reply), after.fen());
            assert_eq!(index / 64, move_to_index(&after, reply) / 64);
            checked += 1;
        }
    }
    assert!(checked > 20_000, "{checked}");
    // 1. e4 e5: Black's pawn leaves e7 (square 52 as White sees it) one step "north" as Black
    // sees it (plane 1: N, distance 2).
    let fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
    let after = Position::from_fen(fen, Variant::Atomic).unwrap();
    let e5 = *after.legal_moves().iter().find(|&&m| after.uci(m) == "e7e5").unwrap();
    assert_eq!(reply_index(&after, e5), 64 + 52);
}

#[test]
fn the_balanced_setup_position_differs_from_the_start_only_in_plane_16_and_its_removals() {
    let encoder = Encoder::new(EncoderConfig { history: 1, ..EncoderConfig::default() });
    for variant in Variant::ALL {
        let setup = Position::start(variant, Start::Balanced);
        let standard = Position::new(variant);
        let mut a = Array3::zeros((encoder.planes(), 8, 8));
        let mut b = Array3::zeros((encoder.planes(), 8, 8));
        encoder.encode(&setup, &[], 0, a.view_mut());
        encoder.encode(&standard, &[], 0, b.view_mut());
        for plane in 0..encoder.planes() {
            let (pa, pb) =
                (a.index_axis(ndarray::Axis(0), plane), b.index_axis(ndarray::Axis(0), plane));
            if plane == 16 {
                // The 16 removable pawns: ranks 2 and 7.
                assert_eq!(pa.sum(), 16.0);
                assert_eq!(
                    pa.slice(ndarray::s![1, ..]).sum() + pa.slice(ndarray::s![6, ..]).sum(),
                    16.0
                );
                assert_eq!(pb.sum(), 0.0);
            } else {
                assert_eq!(pa, pb, "{variant}: plane {plane}");
            }
        }
        // Removals are from-square actions on the removal plane; board moves' indices mean
        // nothing in the setup phase.
        let e2 = Move::removal(Square::E2);
        assert_eq!(move_to_index(&setup, e2), REMOVAL_PLANE * 64 + 12);
        assert_eq!(move_to_index(&setup, Move::removal(Square::E7)), REMOVAL_PLANE * 64 + 52);
        assert_eq!(index_to_move(&setup, REMOVAL_PLANE * 64 + 12), Some(e2));
        assert_eq!(index_to_move(&setup, 64 + 12), None, "e2e4's index");
        assert_eq!(index_to_move(&setup, REMOVAL_PLANE * 64 + 4), None, "e1 holds no pawn");
        assert_eq!(index_to_move(&standard, REMOVAL_PLANE * 64 + 12), None, "e2e1");
    }
    // Outside the setup phase plane 16 holds at most the en-passant square.
    for (pos, _) in random_positions(2_000, 7) {
        let mut x = Array3::zeros((encoder.planes(), 8, 8));
        encoder.encode(&pos, &[], 0, x.view_mut());
        let marked = x.index_axis(ndarray::Axis(0), 16).sum();
        if pos.is_setup_phase() {
            assert_eq!(marked, 16.0);
        } else {
            assert_eq!(marked, if pos.ep_square().is_some() { 1.0 } else { 0.0 }, "{}", pos.fen());
        }
    }
}

#[test]
fn spot_checks_of_the_layout() {
    let pos = Position::new(Variant::Atomic);
    // e2e4: north, distance 2 -> plane 1; from e2 = 12.
    assert_eq!(move_to_index(&pos, pos.parse_uci("e2e4").unwrap()), 64 + 12);
    // g1f3: knight step (-1, +2) -> plane 56 + 7.
    assert_eq!(move_to_index(&pos, pos.parse_uci("g1f3").unwrap()), 63 * 64 + 6);
    // Black's e7e5 looks like White's e2e4.
    let pos = pos.play(pos.parse_uci("e2e4").unwrap()).unwrap();
    assert_eq!(move_to_index(&pos, pos.parse_uci("e7e5").unwrap()), 64 + 12);
    assert_eq!(index_to_move(&pos, POLICY_SIZE), None);
    assert_eq!(index_to_move(&pos, 0), None); // a1 north 1: no such move
}

#[test]
fn encoding_is_invariant_under_colour_flip() {
    for history in [0, 2] {
        let encoder = Encoder::new(EncoderConfig { history, ..EncoderConfig::default() });
        for (pos, hist) in random_positions(3_000, 2).iter().step_by(3) {
            let mut a = Array3::zeros((encoder.planes(), 8, 8));
            let mut b = Array3::zeros((encoder.planes(), 8, 8));
            encoder.encode(pos, hist, 1, a.view_mut());
            let flipped: Vec<Position> = hist.iter().map(Position::flip_colors).collect();
            encoder.encode(&pos.flip_colors(), &flipped, 1, b.view_mut());
            assert_eq!(a, b, "{}", pos.fen());
        }
    }
}

#[test]
fn planes_of_the_start_position() {
    let encoder = Encoder::new(EncoderConfig::default());
    assert_eq!(encoder.planes(), 24);
    let mut x = Array3::zeros((24, 8, 8));
    encoder.encode(&Position::new(Variant::Atomar), &[], 0, x.view_mut());
    // Our pawns on the second rank, their pawns on the seventh.
    assert_eq!(x.slice(ndarray::s![0, 1, ..]).sum(), 8.0);
    assert_eq!(x.slice(ndarray::s![6, 6, ..]).sum(), 8.0);
    // Castling rooks: a1/h1 ours, a8/h8 theirs.
    assert_eq!(x[[14, 0, 0]], 1.0);
    assert_eq!(x[[14, 0, 7]], 1.0);
    assert_eq!(x[[15, 7, 0]], 1.0);
    assert_eq!(x.slice(ndarray::s![14, .., ..]).sum(), 2.0);
    // The constant plane, and the variant one-hot (atomar is third).
    assert_eq!(x.slice(ndarray::s![18, .., ..]).sum(), 64.0);
    assert_eq!(x.slice(ndarray::s![21, .., ..]).sum(), 64.0);
    assert_eq!(x.slice(ndarray::s![19..24, .., ..]).sum(), 64.0);
}

#[test]
fn batches_equal_single_encodings_and_grow() {
    let encoder = Encoder::new(EncoderConfig { history: 1, ..EncoderConfig::default() });
    let positions = random_positions(50, 3);
    let mut batch = Batch::new(encoder, 4);
    for (pos, hist) in &positions {
        batch.push(pos, hist, 0);
    }
    assert_eq!(batch.len(), positions.len());
    let flat = batch.as_slice();
    assert_eq!(flat.len(), positions.len() * encoder.planes() * 64);
    for (i, (pos, hist)) in positions.iter().enumerate() {
        let mut x = Array3::zeros((encoder.planes(), 8, 8));
        encoder.encode(pos, hist, 0, x.view_mut());
        let n = encoder.planes() * 64;
        assert_eq!(&flat[i * n..(i + 1) * n], x.as_slice().unwrap());
    }
    batch.clear();
    assert!(batch.is_empty());
}
