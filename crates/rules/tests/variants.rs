//! Hand-built positions for the rule variants: king captures, double king explosions,
//! immune kings, castling without check, the kingless deathmatch endings, and pawnblast's
//! pawn-killing blasts and non-exploding pawn captures. (Fairy-Stockfish's `nocheckatomic` and
//! `atomar` are also cross-checked move by move in scripts/checks/fsf-variants.sh.)

mod common;

use atomzero_rules::{
    BALANCED_FEN, CastlingMode, Color, Move, MoveList, Position, Square, Termination, Variant,
};

fn pos(fen: &str, variant: Variant) -> Position {
    Position::from_fen(fen, variant).unwrap_or_else(|e| panic!("{fen}: {e}"))
}

fn play(p: Position, uci: &str) -> Position {
    let m = p.parse_uci(uci).unwrap_or_else(|e| panic!("{e}"));
    p.play(m).unwrap()
}

fn sq(name: &str) -> Square {
    name.parse().unwrap()
}

fn has(p: &Position, uci: &str) -> bool {
    p.legal_moves().iter().any(|&m| p.uci(m) == uci)
}

#[test]
fn names_round_trip_and_unknown_names_list_the_valid_ones() {
    for v in Variant::ALL {
        assert_eq!(v.name().parse::<Variant>(), Ok(v));
        assert_eq!(Variant::from_name(v.pgn_name()), Some(v));
    }
    let err = "crazyhouse".parse::<Variant>().unwrap_err().to_string();
    assert!(err.contains("atomic, nocheckatomic, atomar, deathmatch, pawnblast"), "{err}");
}

#[test]
fn nocheck_kings_capture_and_explode_themselves() {
    let p = pos("8/8/8/8/3k4/8/3p4/3K4 w - - 0 1", Variant::NoCheckAtomic);
    assert!(!p.is_check());
    let after = play(p, "d1d2");
    let o = after.outcome().unwrap();
    assert_eq!((o.winner, o.termination), (Some(Color::Black), Termination::KingExploded));
    // The same capture is illegal in atomic (kings never capture).
    let p = pos("8/8/8/8/3k4/8/3p4/3K4 w - - 0 1", Variant::Atomic);
    assert!(!has(&p, "d1d2"));
}

#[test]
fn nocheck_moving_into_attack_is_legal() {
    let p = pos("3r4/8/8/8/8/8/8/4K2k w - - 0 1", Variant::NoCheckAtomic);
    assert!(has(&p, "e1d1"));
    let p = pos("3r4/8/8/8/8/8/8/4K2k w - - 0 1", Variant::Atomic);
    assert!(!has(&p, "e1d1"));
}

#[test]
fn nocheck_a_move_removing_both_kings_loses_for_the_mover() {
    let p = pos("8/8/8/8/8/3k4/3p4/3K4 w - - 0 1", Variant::NoCheckAtomic);
    let after = play(p, "d1d2");
    assert!(after.board().kings().is_empty());
    let o = after.outcome().unwrap();
    assert_eq!(o.winner, Some(Color::Black));
    assert!(after.legal_moves().is_empty());
}

#[test]
fn castling_ignores_attacks_without_check() {
    let fen = "4kr2/8/8/8/8/8/8/4K2R w K - 0 1";
    assert!(!has(&pos(fen, Variant::Atomic), "e1g1"));
    for v in [Variant::NoCheckAtomic, Variant::Atomar, Variant::Deathmatch] {
        assert!(has(&pos(fen, v), "e1g1"), "{v}");
    }
}

#[test]
fn atomar_kings_are_immune_and_may_capture_but_not_the_king() {
    let p = pos("8/8/8/8/8/4k3/3n4/3K4 w - - 0 1", Variant::Atomar);
    let after = play(p, "d1d2");
    assert_eq!(after.board().king_of(Color::White), Some(sq("d2")));
    assert_eq!(after.board().king_of(Color::Black), Some(sq("e3")));
    assert_eq!(after.board().occupied().count(), 2);
    // Kings never capture kings.
    let p = pos("8/8/8/8/8/8/3k4/3K4 w - - 0 1", Variant::Atomar);
    assert!(!has(&p, "d1d2"));
    // Capturing the king itself (with a non-king piece) wins.
    let p = pos("8/8/8/8/8/4k3/3n4/3KR3 w - - 0 1", Variant::Atomar);
    let after = play(p, "e1e3");
    assert_eq!(after.outcome().unwrap().termination, Termination::KingCaptured);
}

#[test]
fn atomar_wins_by_capturing_the_king_and_bare_kings_draw() {
    let p = pos("4k3/4r3/8/8/8/8/8/4K3 b - - 0 1", Variant::Atomar);
    let after = play(p, "e7e1");
    let o = after.outcome().unwrap();
    assert_eq!((o.winner, o.termination), (Some(Color::Black), Termination::KingCaptured));
    let p = pos("8/8/3k4/8/8/3K4/8/8 w - - 0 1", Variant::Atomar);
    assert_eq!(p.outcome().unwrap().termination, Termination::InsufficientMaterial);
    // A lone knight can still capture a king in atomar: not a draw.
    let p = pos("8/8/3k4/8/8/3K4/3N4/8 w - - 0 1", Variant::Atomar);
    assert_eq!(p.outcome(), None);
}

#[test]
fn deathmatch_play_goes_on_without_kings() {
    // Kxd2 removes both kings; Black's g3 knight and White's h1 rook play on.
    let p = pos("8/8/8/8/8/3k2n1/3p4/3K3R w - - 0 1", Variant::Deathmatch);
    let kingless = play(p, "d1d2");
    assert!(kingless.board().kings().is_empty());
    assert_eq!(kingless.outcome(), None);
    assert!(!kingless.legal_moves().is_empty());
    // In nocheckatomic the same move loses at once.
    let p = pos("8/8/8/8/8/3k2n1/3p4/3K3R w - - 0 1", Variant::NoCheckAtomic);
    assert_eq!(play(p, "d1d2").outcome().unwrap().winner, Some(Color::Black));
    // The last explosion clears the board: draw.
    let cleared = play(kingless, "g3h1");
    assert!(cleared.board().occupied().is_empty());
    let o = cleared.outcome().unwrap();
    assert_eq!((o.winner, o.termination), (None, Termination::BoardCleared));
    assert_eq!(Position::from_fen(&cleared.fen(), Variant::Deathmatch).unwrap(), cleared);
}

#[test]
fn deathmatch_a_side_without_pieces_loses() {
    // After Kxd2 White keeps the h1 rook; Black the g3 knight and the a7 pawn.
    let p = pos("8/p7/8/8/8/3k2n1/3p4/3K3R w - - 0 1", Variant::Deathmatch);
    let kingless = play(p, "d1d2");
    assert_eq!(kingless.outcome(), None);
    // Nxh1: knight and rook explode; White has nothing left.
    let end = play(kingless, "g3h1");
    let o = end.outcome().unwrap();
    assert_eq!((o.winner, o.termination), (Some(Color::Black), Termination::NoPiecesLeft));
    assert!(end.legal_moves().is_empty());
}

#[test]
fn deathmatch_kingless_stalemate_is_a_draw() {
    // Both kings gone; Black's only piece is a blocked pawn.
    let p = Position::from_fen("8/8/8/8/8/8/8/8 b - - 0 1", Variant::Deathmatch).unwrap();
    assert_eq!(p.outcome().unwrap().termination, Termination::BoardCleared);
    let p = Position::from_fen("8/8/8/3p4/3P4/8/8/8 b - - 0 1", Variant::Deathmatch).unwrap();
    let o = p.outcome().unwrap();
    assert_eq!((o.winner, o.termination), (None, Termination::Stalemate));
    // One king gone only: that side lost, as in nocheckatomic.
    let p = Position::from_fen("8/8/8/3p4/3P4/8/8/4K3 b - - 0 1", Variant::Deathmatch).unwrap();
    assert_eq!(p.outcome().unwrap().winner, Some(Color::White));
}

#[test]
fn pawnblast_blasts_kill_neighbouring_pawns() {
    let fen = "4k3/8/8/2p1p3/3r4/2P2N2/8/4K3 w - - 0 1";
    let after = play(pos(fen, Variant::Pawnblast), "f3d4");
    for gone in ["c3", "c5", "e5", "d4", "f3"] {
        assert_eq!(after.board().piece_at(sq(gone)), None, "{gone}");
    }
    // In atomic the pawns survive.
    let after = play(pos(fen, Variant::Atomic), "f3d4");
    assert_eq!(after.board().pawns().count(), 3);
}

#[test]
fn pawnblast_pawn_captures_do_not_explode() {
    let fen = "4k3/8/8/3r4/2n1P3/8/8/4K3 w - - 0 1";
    let after = play(pos(fen, Variant::Pawnblast), "e4d5");
    assert_eq!(after.board().role_at(sq("d5")), Some(atomzero_rules::Role::Pawn));
    assert!(after.board().piece_at(sq("c4")).is_some(), "the knight next door survives");
    let after = play(pos(fen, Variant::Atomic), "e4d5");
    assert_eq!(after.board().piece_at(sq("d5")), None);
    assert_eq!(after.board().piece_at(sq("c4")), None);
}

#[test]
fn pawnblast_en_passant_is_an_ordinary_capture() {
    let p = pos("4k3/2np4/8/4P3/8/8/8/4K3 b - - 0 1", Variant::Pawnblast);
    let p = play(p, "d7d5");
    let m = p.parse_uci("e5d6").unwrap();
    assert!(m.is_en_passant());
    let after = p.play(m).unwrap();
    assert_eq!(after.board().role_at(sq("d6")), Some(atomzero_rules::Role::Pawn));
    assert_eq!(after.board().piece_at(sq("d5")), None);
    assert!(after.board().piece_at(sq("c7")).is_some());
}

#[test]
fn fen_accepts_what_each_variant_allows() {
    // The side not to move "in check" is fine without check.
    let fen = "4k3/8/8/8/8/8/8/4R1K1 w - - 0 1";
    assert!(Position::from_fen(fen, Variant::Atomic).is_err());
    assert!(Position::from_fen(fen, Variant::NoCheckAtomic).is_ok());
    assert!(Position::from_fen(fen, Variant::Atomar).is_ok());
    // A mover without a king (it blew itself up) is fine in nocheckatomic only.
    let fen = "4k3/8/8/8/8/8/8/8 w - - 0 1";
    assert!(Position::from_fen(fen, Variant::NoCheckAtomic).is_ok());
    let fen = "8/8/8/8/8/8/8/4K3 w - - 0 1";
    assert!(Position::from_fen(fen, Variant::NoCheckAtomic).is_ok());
    assert!(Position::from_fen(fen, Variant::Atomar).is_err());
    assert!(Position::from_fen(fen, Variant::Pawnblast).is_err());
    // Regression (found by the fen fuzz target): in nocheckatomic a king capture can clear the
    // board; that final position must read back from its FEN. The mover lost.
    let p = pos("8/8/8/8/8/8/2k5/1RKR4 w - - 0 1", Variant::NoCheckAtomic);
    let end = play(p, "c1c2");
    assert!(end.board().occupied().is_empty());
    assert_eq!(Position::from_fen(&end.fen(), Variant::NoCheckAtomic), Ok(end));
    assert_eq!(end.outcome().unwrap().winner, Some(Color::Black));
    assert!(Position::from_fen("8/8/8/8/8/8/8/8 w - - 0 1", Variant::Atomic).is_err());
}

#[cfg(feature = "serde")]
#[test]
fn the_variant_travels_with_the_position_through_serde() {
    for v in Variant::ALL {
        let p = play(Position::new(v), "e2e4");
        let json = serde_json::to_string(&p).unwrap();
        assert!(json.contains(v.name()), "{json}");
        let back: Position = serde_json::from_str(&json).unwrap();
        assert_eq!(back, p);
        assert_eq!(back.variant(), v);
    }
    let bad = r#"{"fen":"8/8/8/8/8/8/8/8 w - - 0 1","variant":"atomic"}"#;
    assert!(serde_json::from_str::<Position>(bad).is_err());
}

/// `legal_captures_into` is the legal moves that capture, in the same order: over random
/// games of every variant from the standard start, Chess960 starts, and (where the variant
/// has one) the Balanced start's setup position; with castling, en passant, promotions,
/// checks and the bomb variant's detonations along the way.
#[test]
fn the_captures_are_the_legal_moves_that_capture_in_every_variant() {
    let mut rng = common::Rng::new(44);
    let mut captures = MoveList::new();
    let (mut positions, mut found) = (0, 0);
    for variant in Variant::EVERY {
        let mut starts = vec![Position::new(variant)];
        for n in [0, 518, 959] {
            let fen = common::chess960_fen(n);
            if let Ok(p) = Position::from_fen_with_mode(&fen, variant, CastlingMode::Chess960) {
                starts.push(p);
            }
        }
        if let Ok(p) = Position::from_fen(BALANCED_FEN, variant) {
            starts.push(p);
        }
        for start in starts {
            for _ in 0..common::scale(12, 200) {
                for pos in common::random_game(start, &mut rng, 300) {
                    let expected: Vec<Move> =
                        pos.legal_moves().iter().copied().filter(|&m| pos.is_capture(m)).collect();
                    pos.legal_captures_into(&mut captures);
                    assert_eq!(captures.to_vec(), expected, "{} ({variant})", pos.fen());
                    positions += 1;
                    found += expected.len();
                }
            }
        }
    }
    assert!(positions > 10_000 && found > 10_000, "{positions} positions, {found} captures");
}
