//! Fuzzes FEN parsing under every variant. Whatever parses must be a consistent position: its
//! FEN reads back to the same position, and every legal move survives SAN and UCI round trips
//! and leads to a position whose FEN reads back too.

#![no_main]

use atomzero_rules::{Position, Variant};
use libfuzzer_sys::fuzz_target;

fn check_fen_round_trip(pos: &Position, context: &str) {
    let fen = pos.fen();
    let again = Position::from_fen_with_mode(&fen, pos.variant(), pos.castling_mode())
        .unwrap_or_else(|e| panic!("{context}: own FEN {fen} rejected: {e}"));
    assert_eq!(&again, pos, "{context}: FEN {fen} reads back differently");
    let shredder = pos.shredder_fen();
    let again = Position::from_fen_with_mode(&shredder, pos.variant(), pos.castling_mode())
        .unwrap_or_else(|e| panic!("{context}: own Shredder-FEN {shredder} rejected: {e}"));
    assert_eq!(&again, pos, "{context}: Shredder-FEN {shredder} reads back differently");
}

fn check(pos: &Position, input: &str) {
    let context = format!("{} {input:?}", pos.variant());
    check_fen_round_trip(pos, &context);
    // `from_fen` detects the castling mode; on its own FEN it must find the same position.
    let fen = pos.fen();
    let detected = Position::from_fen(&fen, pos.variant())
        .unwrap_or_else(|e| panic!("{context}: own FEN {fen} rejected: {e}"));
    assert_eq!(&detected, pos, "{context}: from_fen({fen}) differs");
    assert_eq!(pos.hash(), pos.compute_hash(), "{context}: stale hash");

    let moves = pos.legal_moves();
    let _ = pos.outcome();
    let _ = pos.is_checkmate();
    let _ = pos.is_insufficient_material();
    for &m in &moves {
        assert!(pos.is_legal(m), "{context}: generated move {m:?} is not legal");
        let san = pos.san(m);
        assert_eq!(pos.parse_san(&san), Ok(m), "{context}: SAN {san} of {m:?} does not read back");
        let uci = pos.uci(m);
        assert_eq!(pos.parse_uci(&uci), Ok(m), "{context}: UCI {uci} of {m:?} does not read back");
        let child = pos.play(m).unwrap_or_else(|e| panic!("{context}: {san} not playable: {e}"));
        assert_eq!(child.hash(), child.compute_hash(), "{context}: stale hash after {san}");
        // A king capturing the adjacent king in the no-check variants can clear the board: that
        // game-over position is reachable by play, but no FEN of an empty board is accepted.
        if child.board().occupied().any() {
            check_fen_round_trip(&child, &format!("{context} after {san}"));
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for variant in Variant::EVERY {
        if let Ok(pos) = Position::from_fen(text, variant) {
            check(&pos, text);
        }
    }
});
