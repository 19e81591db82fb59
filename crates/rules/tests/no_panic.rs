//! Property tests: arbitrary and mutated input never panics the parsers (FEN, UCI, SAN, PGN),
//! and whatever parses behaves (FEN round trip, legal moves, notation).
//! A `cargo fuzz` setup for the FEN and PGN parsers lives in `fuzz/` (nightly, not in CI).

mod common;

use atomzero_rules::{Position, Variant, read_pgn};
use common::Rng;

const FEN_ALPHABET: &[u8] = b"pnbrqkPNBRQK12345678/ wb-KQkqABCDEFGHabcdefgh0123456789x";

/// Exercises everything a parsed position offers.
fn exercise(pos: &Position) {
    let fen = pos.fen();
    let back = Position::from_fen_with_mode(&fen, pos.variant(), pos.castling_mode())
        .unwrap_or_else(|e| panic!("{fen} does not read back: {e}"));
    assert_eq!(&back, pos, "{fen}");
    let _ = pos.outcome();
    let _ = pos.is_insufficient_material();
    for &m in pos.legal_moves().iter() {
        assert_eq!(pos.parse_uci(&pos.uci(m)), Ok(m), "{fen}");
        assert_eq!(pos.parse_san(&pos.san(m)), Ok(m), "{fen}");
        let mut after = *pos;
        after.play_unchecked(m);
        assert_eq!(after.hash(), after.compute_hash());
    }
}

fn mutate(rng: &mut Rng, text: &str) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for _ in 0..=rng.below(3) {
        let i = rng.below(bytes.len() + 1);
        match rng.below(4) {
            0 if i < bytes.len() => bytes[i] = FEN_ALPHABET[rng.below(FEN_ALPHABET.len())],
            1 if i < bytes.len() => {
                bytes.remove(i);
            }
            2 => bytes.insert(i, FEN_ALPHABET[rng.below(FEN_ALPHABET.len())]),
            _ if i + 1 < bytes.len() => bytes.swap(i, i + 1),
            _ => {}
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[test]
fn random_bytes_as_fen() {
    let mut rng = Rng::new(20);
    for _ in 0..common::scale(50_000, 500_000) {
        let len = rng.below(90);
        let bytes: Vec<u8> = (0..len).map(|_| (rng.next_u64() & 0xFF) as u8).collect();
        let text = String::from_utf8_lossy(&bytes);
        for v in Variant::EVERY {
            if let Ok(pos) = Position::from_fen(&text, v) {
                exercise(&pos);
            }
        }
    }
}

#[test]
fn mutated_valid_fens() {
    let mut rng = Rng::new(21);
    let mut seeds: Vec<String> = Vec::new();
    for i in 0..200 {
        // Every variant, the bomb variant's FENs (with their bombs field) too.
        let variant = Variant::EVERY[i % Variant::EVERY.len()];
        for pos in common::random_game(Position::new(variant), &mut rng, 120).iter().step_by(7) {
            seeds.push(pos.fen());
        }
    }
    seeds.push("8/8/8/8/8/8/2k5/rR4KR w KQ - 0 1".into());
    seeds.push("r3k1rR/5K2/8/8/8/8/8/8 b kq - 0 1".into());
    // The Balanced start's setup position (its keyword mutates into near misses).
    seeds.push("balanced".into());
    let mut parsed = 0;
    for _ in 0..common::scale(30_000, 300_000) {
        let seed = &seeds[rng.below(seeds.len())];
        let text = mutate(&mut rng, seed);
        let variant = Variant::EVERY[rng.below(Variant::EVERY.len())];
        if let Ok(pos) = Position::from_fen(&text, variant) {
            exercise(&pos);
            parsed += 1;
        }
    }
    assert!(parsed > 1_000, "mutations too destructive to test anything: {parsed}");
}

#[test]
fn random_uci_and_san_strings() {
    let mut rng = Rng::new(22);
    const ALPHABET: &[u8] = b"abcdefgh12345678NBRQKxO-=+#0qrbnp @*";
    let mut positions = common::random_game(Position::new(Variant::Atomic), &mut rng, 60);
    positions.extend(common::random_game(Position::new(Variant::Bomb), &mut rng, 60));
    for _ in 0..50_000 {
        let len = rng.below(8);
        let text: String = (0..len).map(|_| ALPHABET[rng.below(ALPHABET.len())] as char).collect();
        let pos = &positions[rng.below(positions.len())];
        if let Ok(m) = pos.parse_uci(&text) {
            assert!(pos.is_legal(m));
        }
        if let Ok(m) = pos.parse_san(&text) {
            assert!(pos.is_legal(m));
        }
    }
}

#[test]
fn random_and_mutated_pgn() {
    let mut rng = Rng::new(23);
    let mut game = atomzero_rules::PgnGame::new(Position::new(Variant::Atomic));
    let positions = common::random_game(Position::new(Variant::Atomic), &mut rng, 80);
    let mut pos = positions[0];
    for next in &positions[1..] {
        let m = pos.legal_moves().iter().copied().find(|&m| {
            let mut p = pos;
            p.play_unchecked(m);
            p == *next
        });
        let Some(m) = m else { break };
        game.moves.push(m);
        pos = *next;
    }
    let valid = game.write();
    // A game from the Balanced start (its removal is a [Balanced] tag).
    let mut balanced = atomzero_rules::PgnGame::new(Position::start(
        Variant::Atomic,
        atomzero_rules::Start::Balanced,
    ));
    let mut pos = balanced.initial;
    for _ in 0..40 {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            break;
        }
        let m = moves[rng.below(moves.len())];
        balanced.moves.push(m);
        pos.play_unchecked(m);
    }
    let valid_balanced = balanced.write();
    const TOKENS: &[&str] = &[
        "[",
        "]",
        "\"",
        "{",
        "}",
        "(",
        ")",
        ";",
        "\n",
        "1.",
        "e4",
        "1-0",
        "*",
        "$1",
        "\\",
        "%",
        "O-O",
        "Nf3",
        " ",
        "@e2",
        "[Balanced \"d7\"]",
    ];
    for i in 0..20_000 {
        let text = if i % 4 == 0 {
            mutate(&mut rng, &valid_balanced)
        } else if i % 2 == 0 {
            mutate(&mut rng, &valid)
        } else {
            (0..rng.below(40)).map(|_| TOKENS[rng.below(TOKENS.len())]).collect::<String>()
        };
        for g in read_pgn(&text).into_iter().flatten() {
            // Whatever reads must write and read back to the same moves.
            let again = read_pgn(&g.write());
            assert_eq!(again.len(), 1);
            assert_eq!(again[0].as_ref().unwrap().moves, g.moves);
        }
    }
}
