//! Move-by-move differential test against shakmaty's atomic implementation (an independent
//! implementation of the lichess rules): on thousands of random games, the same legal-move
//! sets, the same position after every move (placement, side, castling rights, en passant,
//! clocks), the same check status and the same game ends where both define them
//! (exploded king, checkmate, stalemate; insufficient-material rules differ by design).
//! `ATOMZERO_LONG_TESTS=1` plays ten times more games.

mod common;

use atomzero_rules::{CastlingMode, Color, Position, Termination, Variant};
use common::Rng;
use shakmaty::fen::Fen;
use shakmaty::variant::Atomic;
use shakmaty::{EnPassantMode, KnownOutcome, Outcome as SkOutcome, Position as _};

fn sk_mode(mode: CastlingMode) -> shakmaty::CastlingMode {
    match mode {
        CastlingMode::Standard => shakmaty::CastlingMode::Standard,
        CastlingMode::Chess960 => shakmaty::CastlingMode::Chess960,
    }
}

fn sk_position(fen: &str, mode: CastlingMode) -> Atomic {
    fen.parse::<Fen>().unwrap().into_position(sk_mode(mode)).unwrap()
}

fn sk_color(c: shakmaty::Color) -> Color {
    if c == shakmaty::Color::White { Color::White } else { Color::Black }
}

/// Compares everything both implementations define for one position.
fn compare(ours: &Position, theirs: &Atomic, mode: CastlingMode, context: &str) {
    let fen = ours.fen();
    // Position after the move.
    let their_fen = Fen::from_position(theirs, EnPassantMode::Legal).to_string();
    assert_eq!(ours.to_setup().board_fen(), their_fen.split(' ').next().unwrap(), "{context}");
    assert_eq!(ours.turn() == Color::White, theirs.turn() == shakmaty::Color::White, "{fen}");
    assert_eq!(
        ours.castling_rights().0,
        theirs.castles().castling_rights().0,
        "castling: {fen} vs {their_fen}"
    );
    assert_eq!(
        ours.ep_square().map(|s| s.index()),
        theirs.ep_square(EnPassantMode::Legal).map(|s| s as usize),
        "en passant: {fen} vs {their_fen}"
    );
    assert_eq!(ours.halfmoves(), theirs.halfmoves(), "{fen}");
    assert_eq!(ours.fullmoves(), theirs.fullmoves().get(), "{fen}");
    if mode == CastlingMode::Standard {
        assert_eq!(fen, their_fen, "{context}");
    }
    assert_eq!(ours.hash(), ours.compute_hash(), "incremental zobrist: {fen}");

    // Legal moves as UCI strings.
    let mut our_moves: Vec<String> = ours.legal_moves().iter().map(|&m| ours.uci(m)).collect();
    let mut their_moves: Vec<String> =
        theirs.legal_moves().iter().map(|m| m.to_uci(sk_mode(mode)).to_string()).collect();
    our_moves.sort();
    their_moves.sort();
    assert_eq!(our_moves, their_moves, "legal moves differ in {fen} ({context})");

    // Check and game ends.
    assert_eq!(ours.is_check(), theirs.is_check(), "check status: {fen}");
    match theirs.variant_outcome() {
        SkOutcome::Known(KnownOutcome::Decisive { winner }) => {
            let outcome = ours.variant_outcome().unwrap_or_else(|| panic!("no variant end: {fen}"));
            assert_eq!(outcome.winner, Some(sk_color(winner)), "{fen}");
            assert_eq!(outcome.termination, Termination::KingExploded, "{fen}");
        }
        _ => assert_eq!(ours.variant_outcome(), None, "{fen}"),
    }
    assert_eq!(ours.is_checkmate(), theirs.is_checkmate(), "checkmate: {fen}");
    let our_stalemate = ours.outcome().is_some_and(|o| o.termination == Termination::Stalemate);
    assert_eq!(our_stalemate, theirs.is_stalemate(), "stalemate: {fen}");
}

fn play_games(n_games: usize, seed: u64, chess960_percent: u64) -> (usize, usize) {
    let mut rng = Rng::new(seed);
    let mut plies = 0;
    let mut castles = 0;
    for game in 0..n_games {
        let (fen, mode) = if rng.chance(chess960_percent) {
            (common::chess960_fen(rng.below(960)), CastlingMode::Chess960)
        } else {
            (atomzero_rules::STARTING_FEN.to_string(), CastlingMode::Standard)
        };
        let mut ours = common::position(&fen, Variant::Atomic, mode);
        let mut theirs = sk_position(&fen, mode);
        compare(&ours, &theirs, mode, &format!("game {game} start"));
        for ply in 0..400 {
            let moves = ours.legal_moves();
            if moves.is_empty() {
                break;
            }
            let m = moves[rng.below(moves.len())];
            castles += usize::from(m.is_castle());
            let uci = ours.uci(m);
            let their_move = uci
                .parse::<shakmaty::uci::UciMove>()
                .unwrap()
                .to_move(&theirs)
                .unwrap_or_else(|e| panic!("shakmaty rejects {uci} in {}: {e}", ours.fen()));
            let before = ours.fen();
            ours.play_unchecked(m);
            theirs.play_unchecked(their_move);
            compare(&ours, &theirs, mode, &format!("game {game} ply {ply}: {before} + {uci}"));
            plies += 1;
        }
    }
    (plies, castles)
}

#[test]
fn random_games_standard_start() {
    let (plies, castles) = play_games(common::scale(4_000, 40_000), 1, 0);
    assert!(plies > 100_000, "only {plies} plies");
    assert!(castles > 100, "castling barely exercised: {castles}");
}

#[test]
fn random_games_chess960_starts() {
    let (plies, castles) = play_games(common::scale(1_500, 15_000), 2, 100);
    assert!(plies > 30_000, "only {plies} plies");
    assert!(castles > 50, "castling barely exercised: {castles}");
}
