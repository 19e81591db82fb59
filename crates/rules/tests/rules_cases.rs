//! Hand-built positions for each lichess atomic subtlety listed in ../shared/rules-notes.md,
//! and for every way a game ends.

use atomzero_rules::{
    CastlingMode, Color, Game, Position, PositionErrorKind, Square, Termination, Variant,
};

fn pos(fen: &str) -> Position {
    Position::from_fen(fen, Variant::Atomic).unwrap_or_else(|e| panic!("{fen}: {e}"))
}

fn ucis(p: &Position) -> Vec<String> {
    let mut v: Vec<String> = p.legal_moves().iter().map(|&m| p.uci(m)).collect();
    v.sort();
    v
}

fn sq(name: &str) -> Square {
    name.parse().unwrap()
}

#[test]
fn exploding_both_kings_is_illegal_even_as_a_check_evasion() {
    // python-chess test_atomic_mate_legality: Nxc4 would blow up both kings.
    let p = pos("8/8/8/2K5/2P5/2k1n3/8/2R5 b - - 0 1");
    assert!(!ucis(&p).contains(&"e3c4".to_string()));
}

#[test]
fn exploding_the_enemy_king_beats_check() {
    // White is in check from the e8 rook but Qxf7 explodes the g8 king.
    let p = pos("4r1k1/5pp1/8/3Q4/8/8/8/4K3 w - - 0 1");
    assert!(p.is_check());
    let moves = ucis(&p);
    assert!(moves.contains(&"d5f7".to_string()), "{moves:?}");
    assert!(!moves.contains(&"d5d4".to_string()), "a move ignoring the check: {moves:?}");
    let m = p.parse_uci("d5f7").unwrap();
    assert_eq!(p.san(m), "Qxf7#");
    let after = p.play(m).unwrap();
    let outcome = after.outcome().unwrap();
    assert_eq!(outcome.winner, Some(Color::White));
    assert_eq!(outcome.termination, Termination::KingExploded);
    assert!(after.legal_moves().is_empty());
}

#[test]
fn adjacent_kings_nullify_check() {
    let p = pos("4r3/8/8/8/8/3kK3/8/8 w - - 0 1");
    assert!(!p.is_check());
    // Leaving the enemy king for the f-file under the f8 rook is illegal; staying adjacent is fine.
    let p = pos("5r2/8/8/8/8/3kK3/8/8 w - - 0 1");
    let moves = ucis(&p);
    for illegal in ["e3f2", "e3f3", "e3f4"] {
        assert!(!moves.contains(&illegal.to_string()), "{illegal} in {moves:?}");
    }
    for legal in ["e3d2", "e3d4", "e3e2", "e3e4"] {
        assert!(moves.contains(&legal.to_string()), "{legal} missing from {moves:?}");
    }
}

#[test]
fn kings_cannot_capture_and_own_king_may_not_explode() {
    // scalachess "Not allow a king to capture a piece".
    let p = pos("8/8/8/1k6/8/8/8/1Kr5 w - - 0 1");
    assert!(p.legal_moves().iter().all(|m| m.to() != sq("c1")));
    // Qxd2 would blow up the white king on e1; Kxd2 is a king capture.
    let p = pos("4k3/8/8/8/8/8/3p4/3QK3 w - - 0 1");
    assert!(p.is_check());
    assert!(p.legal_moves().iter().all(|m| m.to() != sq("d2")), "{:?}", ucis(&p));
}

#[test]
fn castling_follows_lichess_fics_rules() {
    // rules-notes item 5.
    let legal = |fen: &str, uci: &str| ucis(&pos(fen)).contains(&uci.to_string());
    assert!(legal("8/8/8/8/8/8/4k3/R3K2r w Q - 0 1", "e1c1"));
    assert!(!legal("8/8/8/8/8/8/5k2/R3K2r w Q - 0 1", "e1c1"));
    assert!(legal("r3k2R/4K3/8/8/8/8/8/8 b q - 0 1", "e8c8"));
    // The b1 rook is the castling rook (Chess960 by itself); with it gone from b1 the a1 rook
    // attacks c1.
    let p = pos("4k3/8/8/8/8/8/8/rR2K3 w Q - 0 1");
    assert_eq!(p.castling_mode(), CastlingMode::Chess960);
    assert!(!p.legal_moves().iter().any(|m| m.is_castle()));
    // UCI notation: e1g1 in standard mode, king takes rook in Chess960 mode.
    let p = pos("4k3/8/8/8/8/8/8/4K2R w K - 0 1");
    assert!(ucis(&p).contains(&"e1g1".to_string()));
    let p960 = p.with_castling_mode(CastlingMode::Chess960).unwrap();
    assert!(ucis(&p960).contains(&"e1h1".to_string()));
    assert_eq!(p.parse_uci("e1h1"), p.parse_uci("e1g1"));
}

#[test]
fn en_passant_blast_is_centred_on_the_landing_square() {
    // After python-chess test_atomic_en_passant (fewer knights: that one exceeds the material
    // any real game can reach, which validation rejects).
    let p = pos("3kK3/8/8/8/3N1p2/2NN1NN1/3NPN2/8 w - - 0 1");
    let p = p.play(p.parse_uci("e2e4").unwrap()).unwrap();
    assert_eq!(p.ep_square(), Some(sq("e3")));
    let m = p.parse_uci("f4e3").unwrap();
    assert!(m.is_en_passant());
    let after = p.play(m).unwrap();
    for gone in ["d2", "d3", "d4", "e3", "e4", "f2", "f3", "f4"] {
        assert_eq!(after.board().piece_at(sq(gone)), None, "{gone}");
    }
    for kept in ["c3", "g3", "d8", "e8"] {
        assert!(after.board().piece_at(sq(kept)).is_some(), "{kept}");
    }
}

#[test]
fn exploded_rooks_and_kings_lose_castling_rights() {
    let p = pos("r3k2r/7p/8/8/8/8/8/R3K2R w KQkq - 0 1");
    let after = p.play(p.parse_uci("h1h7").unwrap()).unwrap();
    assert!(after.fen().contains(" Qq "), "{}", after.fen());
}

#[test]
fn capture_promotions_are_four_moves_with_one_result() {
    let p = pos("1r2k3/P7/8/8/8/8/8/4K3 w - - 0 1");
    let captures: Vec<_> = p.legal_moves().iter().copied().filter(|m| m.to() == sq("b8")).collect();
    assert_eq!(captures.len(), 4);
    let results: Vec<_> = captures.iter().map(|&m| p.play(m).unwrap()).collect();
    assert!(results.windows(2).all(|w| w[0] == w[1]));
    assert_eq!(p.san(captures[0]), "axb8=Q");
}

#[test]
fn a_side_without_a_king_has_lost() {
    let p = pos("8/8/8/8/8/8/8/4K3 b - - 0 1");
    assert!(p.legal_moves().is_empty());
    assert_eq!(p.outcome().unwrap().winner, Some(Color::White));
    // The side NOT to move cannot be without a king in atomic (it would have lost already).
    let err = Position::from_fen("8/8/8/8/8/8/8/4K3 w - - 0 1", Variant::Atomic).unwrap_err();
    assert!(err.to_string().contains("black has no king"), "{err}");
}

#[test]
fn checkmate_and_stalemate() {
    let mate = pos("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3");
    assert!(mate.is_checkmate());
    let o = mate.outcome().unwrap();
    assert_eq!((o.winner, o.termination), (Some(Color::Black), Termination::Checkmate));
    let stalemate = pos("k7/8/1Q6/8/8/8/8/4K3 b - - 0 1");
    let o = stalemate.outcome().unwrap();
    assert_eq!((o.winner, o.termination), (None, Termination::Stalemate));
}

#[test]
fn insufficient_material_follows_lichess() {
    let draw = |fen: &str| pos(fen).is_insufficient_material();
    assert!(draw("8/8/8/4k3/8/8/8/4K3 w - - 0 1"), "K v K");
    assert!(draw("8/8/8/4k3/8/8/8/4KN2 w - - 0 1"), "KN v K");
    assert!(draw("8/8/8/4k3/8/8/8/4KR2 w - - 0 1"), "KR v K");
    assert!(draw("8/8/8/4k3/8/8/8/3NKN2 w - - 0 1"), "KNN v K");
    assert!(!draw("8/8/8/4k3/8/8/8/2NNKN2 w - - 0 1"), "KNNN v K");
    assert!(!draw("8/8/8/4k3/8/8/8/4KQ2 w - - 0 1"), "KQ v K");
    assert!(!draw("8/8/8/4k3/8/8/4P3/4K3 w - - 0 1"), "KP v K");
    assert!(draw("8/8/8/4kb2/8/8/8/2B1K3 w - - 0 1"), "KB v KB, opposite colours");
    assert!(!draw("8/8/8/3bk3/8/8/8/3BK3 w - - 0 1"), "KB v KB, same colour");
    assert!(!draw("8/8/8/4kn2/8/8/8/3RK3 w - - 0 1"), "KR v KN");
    assert!(draw("4k3/8/8/p1p1p1p1/P1P1P1P1/8/8/4K3 w - - 0 1"), "closed pawns");
    assert!(!draw("4k3/8/8/p1p1p3/P1P1P1P1/8/8/4K3 w - - 0 1"), "a free pawn");
    let o = pos("8/8/8/4k3/8/8/8/4K3 w - - 0 1").outcome().unwrap();
    assert_eq!(o.termination, Termination::InsufficientMaterial);
}

#[test]
fn fifty_moves_and_threefold_repetition() {
    let p = pos("4k3/8/8/8/8/8/4P3/R3K3 w - - 100 80");
    assert_eq!(p.outcome().unwrap().termination, Termination::FiftyMoves);
    let p = pos("4k3/8/8/8/8/8/4P3/R3K3 w - - 99 80");
    assert_eq!(p.outcome(), None);

    let mut game = Game::new(Position::new(Variant::Atomic));
    for (i, uci) in
        ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8"].iter().enumerate()
    {
        assert_eq!(game.outcome(), None, "after {i} plies");
        let m = game.position().parse_uci(uci).unwrap();
        game.play(m).unwrap();
    }
    assert_eq!(game.repetitions(), 2);
    assert_eq!(game.outcome().unwrap().termination, Termination::ThreefoldRepetition);
}

#[test]
fn validation_reports_every_problem() {
    let err = Position::from_fen("kk6/8/8/8/8/8/8/P3K3 w - - 0 1", Variant::Atomic).unwrap_err();
    let kinds = match err {
        atomzero_rules::FenError::Position(e) => e.kinds,
        e => panic!("{e}"),
    };
    assert!(kinds.contains(&PositionErrorKind::TooManyKings(Color::Black)));
    assert!(kinds.contains(&PositionErrorKind::PawnsOnBackrank));
    // The side not to move in check.
    let err = Position::from_fen("4k3/8/8/8/8/8/8/4R1K1 w - - 0 1", Variant::Atomic).unwrap_err();
    assert!(err.to_string().contains("not to move is in check"), "{err}");
    // ...but not when the kings touch.
    assert!(Position::from_fen("8/8/8/8/8/3k4/3K4/3R4 b - - 0 1", Variant::Atomic).is_ok());
    // Many checkers are fine in atomic (a king stepping away can uncover them all).
    assert!(Position::from_fen("8/8/8/1r1k4/8/8/3K4/r2Q1q2 w - - 0 1", Variant::Atomic).is_ok());
    // A bogus en-passant square is an error; a plausible one without a legal capture is dropped.
    assert!(Position::from_fen("4k3/8/8/8/8/8/8/4K3 w - e6 0 1", Variant::Atomic).is_err());
    let p = pos("4k3/8/8/3p4/8/8/8/4K3 w - d6 0 1");
    assert_eq!(p.ep_square(), None);
}

#[test]
fn winning_move_finds_the_blast_that_takes_the_enemy_king_and_nothing_else() {
    // Qxf7 explodes the g8 king; Qxa8?? is no capture here and Qd5-d8 is only a check.
    let p = pos("4r1k1/5pp1/8/3Q4/8/8/8/4K3 w - - 0 1");
    let m = p.winning_move(&p.legal_moves()).map(|m| p.uci(m));
    assert_eq!(m.as_deref(), Some("d5f7"));
    // No capture reaches the king's neighbourhood: nothing wins at once (a mate in one is not
    // looked for).
    let p = pos("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1");
    assert_eq!(p.winning_move(&p.legal_moves()), None);
    // A capture next to the king that would also blow up the mover's own king is illegal,
    // so it is not in the list and not found.
    let p = pos("8/8/8/2K5/2P5/2k1n3/8/2R5 b - - 0 1");
    assert_eq!(p.winning_move(&p.legal_moves()), None);
    // Only the moves it is given are looked at.
    let p = pos("4r1k1/5pp1/8/3Q4/8/8/8/4K3 w - - 0 1");
    let others: Vec<_> = p.legal_moves().iter().copied().filter(|&m| p.uci(m) != "d5f7").collect();
    assert_eq!(p.winning_move(&others), None);
}

#[test]
fn winning_move_follows_the_variant() {
    // Atomar: kings are immune to blasts, so Qxf7 next to the g8 king wins nothing; capturing
    // the king itself wins.
    let fen = "4r1k1/5pp1/8/3Q4/8/8/8/4K3 w - - 0 1";
    let p = Position::from_fen(fen, Variant::Atomar).unwrap();
    assert_eq!(p.winning_move(&p.legal_moves()), None);
    let p = Position::from_fen("6k1/8/8/8/8/8/8/K5R1 w - - 0 1", Variant::Atomar).unwrap();
    let m = p.winning_move(&p.legal_moves()).map(|m| p.uci(m));
    assert_eq!(m.as_deref(), Some("g1g8"));
}
