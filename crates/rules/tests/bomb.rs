//! The bomb variant (issue 26): the setup phase, detonation legality and ends, the bombs'
//! bookkeeping, the standard-chess part against shakmaty's `Chess` on random games, views and
//! determinization, and the notation (FEN bombs field, UCI, SAN, PGN). The perft table
//! (`tests/data/bomb.perft`) runs in `perft_suites.rs` and against the independent Python count
//! in `scripts/checks/bomb-python-chess.sh`.

mod common;

use atomzero_rules::bomb::parse_bombs_field;
use atomzero_rules::{
    BombFieldError, BombSlot, Color, FenError, Move, OpponentBomb, Position, Square, Termination,
    Variant, perft, read_pgn,
};
use common::Rng;
use shakmaty::fen::Fen;
use shakmaty::{Chess, EnPassantMode, Position as _};

fn pos(fen: &str) -> Position {
    Position::from_fen(fen, Variant::Bomb).unwrap_or_else(|e| panic!("{fen}: {e}"))
}

fn ucis(p: &Position) -> Vec<String> {
    let mut v: Vec<String> = p.legal_moves().iter().map(|&m| p.uci(m)).collect();
    v.sort();
    v
}

#[test]
fn the_setup_phase_is_two_moves_of_fifteen_choices() {
    let start = Position::new(Variant::Bomb);
    assert!(start.is_setup_phase());
    assert_eq!(start.fen(), format!("{} bombs:?,?", atomzero_rules::STARTING_FEN));
    assert_eq!(start.legal_moves().len(), 15);
    assert!(start.legal_moves().iter().all(|m| m.is_bomb_choice()));
    assert!(!start.legal_moves().contains(&Move::bomb_choice(Square::E1)), "no king bomb");
    assert_eq!(perft(&start, 1), 15);
    assert_eq!(perft(&start, 2), 225);
    let white = start.play(Move::bomb_choice(Square::D1)).unwrap();
    assert_eq!(white.turn(), Color::Black);
    assert!(white.is_setup_phase());
    assert!(
        white.legal_moves().iter().all(|&m| m.is_bomb_choice() && m.from().rank().index() >= 6)
    );
    let both = white.play(Move::bomb_choice(Square::G8)).unwrap();
    assert!(!both.is_setup_phase());
    assert_eq!(both.turn(), Color::White);
    assert_eq!(
        (both.bomb(Color::White), both.bomb(Color::Black)),
        (Some(Square::D1), Some(Square::G8))
    );
    assert_eq!(both.fen(), format!("{} bombs:d1,g8", atomzero_rules::STARTING_FEN));
    // 20 chess moves and the detonation of d1 (beside White's own king: legal, it loses).
    assert_eq!(both.legal_moves().len(), 21);
    assert_eq!(both.hash(), both.compute_hash());
    // Position::start with any start is the bomb setup position (no Balanced start here).
    assert_eq!(Position::start(Variant::Bomb, atomzero_rules::Start::Balanced), start);
}

#[test]
fn detonation_legality_follows_the_three_cases() {
    // In check from e5: detonating d4 removes the checker.
    let p = pos("4k3/8/8/4r3/3B4/8/8/4K3 w - - 0 1 bombs:d4,-");
    assert!(p.is_check());
    assert!(p.legal_moves().contains(&Move::detonation(Square::D4)));
    // In check; detonating b2 leaves the check: illegal.
    let p = pos("4k3/8/8/4r3/8/8/1N6/4K3 w - - 0 1 bombs:b2,-");
    assert!(!p.legal_moves().contains(&Move::detonation(Square::B2)));
    // Not in check, but the blast opens the e-file to the rook: illegal.
    let p = pos("4k3/4r3/8/8/8/4N3/4P3/4K3 w - - 0 1 bombs:e3,-");
    assert!(!p.legal_moves().contains(&Move::detonation(Square::E3)));
    // The same knight as bomb elsewhere may go.
    let p = pos("4k3/8/8/8/8/4N3/4P3/4K3 w - - 0 1 bombs:e3,-");
    assert!(p.legal_moves().contains(&Move::detonation(Square::E3)));
}

#[test]
fn detonation_ends_win_lose_or_draw() {
    let cases = [
        ("8/8/8/8/2k5/3N4/8/5K2 w - - 0 1 bombs:d3,-", Square::D3, Some(Color::White)),
        ("8/8/8/8/8/8/3NK3/7k w - - 0 1 bombs:d2,-", Square::D2, Some(Color::Black)),
        ("8/8/8/2k5/3N4/4K3/8/8 w - - 0 1 bombs:d4,-", Square::D4, None),
    ];
    for (fen, bomb, winner) in cases {
        let p = pos(fen);
        let after = p.play(Move::detonation(bomb)).unwrap();
        let outcome = after.outcome().unwrap_or_else(|| panic!("{fen}: not over"));
        assert_eq!(outcome.winner, winner, "{fen}");
        let reason = if winner.is_some() {
            Termination::KingExploded
        } else {
            Termination::BothKingsExploded
        };
        assert_eq!(outcome.termination, reason, "{fen}");
        assert!(after.legal_moves().is_empty());
        assert!(after.has_detonated(Color::White) && after.bomb(Color::White).is_none());
        // The finished position reads back (a king may be missing in this variant).
        assert_eq!(pos(&after.fen()), after, "{}", after.fen());
    }
}

#[test]
fn bombs_move_with_their_piece_and_vanish_when_captured() {
    // Castling carries a rook bomb to the rook's new square.
    let p = pos("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1 bombs:a1,h8");
    let p = p.play(p.parse_uci("e1c1").unwrap()).unwrap();
    assert_eq!(p.bomb(Color::White), Some(Square::D1));
    let p = p.play(p.parse_uci("e8g8").unwrap()).unwrap();
    assert_eq!(p.bomb(Color::Black), Some(Square::F8));
    assert_eq!(p.hash(), p.compute_hash());
    // A promoting pawn bomb stays the bomb.
    let p = pos("4k3/1P6/8/8/8/8/6p1/4K3 w - - 0 1 bombs:b7,g2");
    let p = p.play(p.parse_uci("b7b8n").unwrap()).unwrap();
    assert_eq!(p.bomb(Color::White), Some(Square::B8));
    assert_eq!(p.bomb_role(Color::White), Some(atomzero_rules::Role::Knight));
    // En passant captures a pawn bomb.
    let p = pos("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2 bombs:e5,d5");
    let p = p.play(p.parse_uci("e5d6").unwrap()).unwrap();
    assert_eq!((p.bomb(Color::White), p.bomb(Color::Black)), (Some(Square::D6), None));
    assert!(!p.has_detonated(Color::Black), "a captured bomb is not a detonated one");
    assert_eq!(p.fen(), "4k3/8/3P4/8/8/8/8/4K3 b - - 0 2 bombs:d6,-");
    // A king captures as in chess, here the black bomb (no explosion).
    let p = pos("8/8/3k4/8/8/3p4/3K4/8 w - - 0 1 bombs:-,d3");
    let p = p.play(p.parse_uci("d2d3").unwrap()).unwrap();
    assert_eq!(p.board().king_of(Color::White), Some(Square::D3));
    assert_eq!(p.bomb(Color::Black), None);
    // A detonation kills the opponent's bomb in the blast, silently.
    let p = pos("4k3/8/8/8/8/2nN4/8/4K3 w - - 0 1 bombs:d3,c3");
    let p = p.play(Move::detonation(Square::D3)).unwrap();
    assert_eq!(p.bomb(Color::Black), None);
    assert!(!p.has_detonated(Color::Black));
    assert_eq!(p.fen(), "4k3/8/8/8/8/8/8/4K3 b - - 0 1 bombs:*,-");
}

#[test]
fn repetitions_count_the_bombs_too() {
    // The two knights swap squares: the board repeats, but the bomb went from b1 to g1.
    let start = pos("4k3/8/8/8/8/8/8/1N2K1N1 w - - 0 1 bombs:b1,-");
    let mut game = atomzero_rules::Game::new(start);
    let tour = [
        "b1c3", "e8d8", "g1f3", "d8e8", "c3e2", "e8d8", "f3d2", "d8e8", "e2g1", "e8d8", "d2b1",
        "d8e8",
    ];
    for uci in tour {
        game.play(game.position().parse_uci(uci).unwrap()).unwrap();
    }
    let now = game.position();
    assert_eq!(now.board(), start.board());
    assert_eq!(now.bomb(Color::White), Some(Square::G1));
    assert_eq!(game.repetitions(), 0, "not the start position: the bomb moved");
    // The same tour again brings the bomb back to b1: now the start position repeats.
    for uci in tour {
        game.play(game.position().parse_uci(uci).unwrap()).unwrap();
    }
    assert_eq!(game.position().bomb(Color::White), Some(Square::B1));
    assert_eq!(game.repetitions(), 1);
}

#[test]
fn standard_chess_rules_kings_attack_and_captures_do_not_explode() {
    // Kings never touch.
    let p = pos("8/8/8/3k4/8/3K4/8/8 w - - 0 1 bombs:-,-");
    let moves = ucis(&p);
    assert!(!moves.iter().any(|m| m.ends_with('4')), "{moves:?}");
    assert_eq!(moves.len(), 5);
    // Adjacent kings are no position.
    assert!(Position::from_fen("8/8/8/3k4/3K4/8/8/8 w - - 0 1 bombs:-,-", Variant::Bomb).is_err());
    // Bare kings draw; a lone bomb piece does not.
    assert!(p.is_insufficient_material());
    assert!(!pos("8/8/8/3k4/8/3K4/8/7N w - - 0 1 bombs:h1,-").is_insufficient_material());
    // A capture removes only the captured piece.
    let p = pos("4k3/8/8/3ppp2/4Q3/8/8/4K3 w - - 0 1 bombs:-,-");
    let after = p.play(p.parse_uci("e4e5").unwrap()).unwrap();
    assert_eq!(after.board().occupied().count(), 5);
}

#[test]
fn the_chess_part_matches_shakmaty_on_random_games() {
    let mut rng = Rng::new(26);
    let (mut plies, mut detonations, mut compared) = (0, 0, 0);
    for game in 0..common::scale(300, 3_000) {
        let mut ours = Position::new(Variant::Bomb);
        for ply in 0..300 {
            let moves = ours.legal_moves();
            if moves.is_empty() {
                break;
            }
            if !ours.is_setup_phase() {
                compare_with_shakmaty(&ours, &format!("game {game} ply {ply}"));
                compared += 1;
            }
            // Detonations end most games: take them rarely so the chess part gets long games.
            let chess: Vec<Move> = moves.iter().copied().filter(|m| !m.is_detonation()).collect();
            let m = if chess.is_empty() || (chess.len() < moves.len() && rng.chance(3)) {
                moves[moves.len() - 1]
            } else {
                chess[rng.below(chess.len())]
            };
            detonations += usize::from(m.is_detonation());
            ours.play_unchecked(m);
            assert_eq!(ours.hash(), ours.compute_hash(), "zobrist after {m:?}: {}", ours.fen());
            assert_eq!(pos(&ours.fen()), ours, "fen round trip {}", ours.fen());
            plies += 1;
        }
    }
    assert!(plies > 20_000 && compared > 10_000, "{plies} plies, {compared} compared");
    assert!(detonations > 50, "{detonations} detonations");
}

/// Our legal moves without the detonation against shakmaty's standard chess, and the check,
/// mate and stalemate status where the detonation does not change them.
fn compare_with_shakmaty(ours: &Position, context: &str) {
    let fen = ours.fen();
    let chess_fen = fen.rsplit_once(' ').unwrap().0;
    let theirs: Chess = chess_fen
        .parse::<Fen>()
        .unwrap()
        .into_position::<Chess>(shakmaty::CastlingMode::Standard)
        .or_else(|e| e.ignore_impossible_check().map_err(Box::new))
        .unwrap_or_else(|e| panic!("shakmaty rejects {chess_fen}: {e}"));
    let detonation = ours.legal_moves().iter().any(|m| m.is_detonation());
    let mut our_moves: Vec<String> =
        ours.legal_moves().iter().filter(|m| !m.is_detonation()).map(|&m| ours.uci(m)).collect();
    let mut their_moves: Vec<String> = theirs
        .legal_moves()
        .iter()
        .map(|m| m.to_uci(shakmaty::CastlingMode::Standard).to_string())
        .collect();
    our_moves.sort();
    their_moves.sort();
    assert_eq!(our_moves, their_moves, "{fen} ({context})");
    assert_eq!(ours.is_check(), theirs.is_check(), "{fen}");
    assert_eq!(
        ours.ep_square().map(|s| s.index()),
        theirs.ep_square(EnPassantMode::Legal).map(|s| s as usize),
        "{fen}"
    );
    if !detonation {
        assert_eq!(ours.is_checkmate(), theirs.is_checkmate(), "{fen}");
    }
}

#[test]
fn views_hide_the_opponents_bomb_and_determinize_back() {
    let mut rng = Rng::new(7);
    let mut hidden_gone = 0;
    for _ in 0..200 {
        let mut p = Position::new(Variant::Bomb);
        for _ in 0..rng.below(120) {
            let moves = p.legal_moves();
            if moves.is_empty() {
                break;
            }
            p.play_unchecked(moves[rng.below(moves.len())]);
        }
        for viewer in Color::ALL {
            let view = p.view(viewer);
            let them = !viewer;
            assert_eq!(view.own_bomb(), p.bomb(viewer));
            let candidates = view.candidates();
            let truth = p.bomb(them);
            match view.opponent_bomb() {
                OpponentBomb::Hidden => {
                    assert!(truth.is_none_or(|sq| candidates.squares.contains(sq)), "{}", p.fen());
                    assert!(truth.is_some() || candidates.may_be_gone, "{}", p.fen());
                    hidden_gone += usize::from(truth.is_none());
                    let hidden = if viewer == Color::White { ",x" } else { "bombs:x," };
                    assert!(view.fen().contains(hidden), "{}", view.fen());
                }
                OpponentBomb::Detonated => assert!(p.has_detonated(them) && truth.is_none()),
                OpponentBomb::Unchosen => assert!(p.is_setup_phase() && truth.is_none()),
            }
            assert_eq!(view.determinize(truth).unwrap(), p, "{}", p.fen());
            // The view is the same whatever the opponent's bomb: nothing leaks.
            for other in candidates.squares {
                let alt = view.determinize(Some(other)).unwrap();
                assert_eq!(alt.view(viewer), view);
                assert_eq!(alt.bomb(them), Some(other));
                assert_eq!(alt.hash(), alt.compute_hash());
            }
            // A square that is no candidate is refused.
            let king = p.board().king_of(them);
            if let Some(king) = king {
                assert!(view.determinize(Some(king)).is_err());
            }
            if view.turn() == viewer {
                assert_eq!(view.legal_moves().unwrap()[..], p.legal_moves()[..]);
            } else {
                assert!(view.legal_moves().is_none());
            }
        }
    }
    assert!(hidden_gone > 0, "no view of a captured bomb");
}

#[test]
fn views_of_the_setup_phase_show_the_choices_still_to_come() {
    let start = Position::new(Variant::Bomb);
    let after_white = start.play(Move::bomb_choice(Square::B1)).unwrap();
    for (pos, viewer, opponent) in [
        (start, Color::White, OpponentBomb::Unchosen),
        (start, Color::Black, OpponentBomb::Unchosen),
        (after_white, Color::White, OpponentBomb::Unchosen),
        (after_white, Color::Black, OpponentBomb::Hidden),
    ] {
        let view = pos.view(viewer);
        assert_eq!(view.opponent_bomb(), opponent, "{viewer} in {}", pos.fen());
        assert!(view.is_setup_phase());
        let truth = pos.bomb(!viewer);
        assert_eq!(view.determinize(truth).unwrap(), pos, "{viewer} in {}", pos.fen());
    }
    assert_eq!(
        after_white.view(Color::Black).fen(),
        format!("{} bombs:x,?", after_white.fen().rsplit_once(' ').unwrap().0)
    );
    assert_eq!(after_white.view(Color::White).fen(), after_white.fen());
    // Black's view after White's choice: any of White's 15 pieces, none lost yet.
    let candidates = after_white.view(Color::Black).candidates();
    assert_eq!((candidates.squares.count(), candidates.may_be_gone), (15, false));
}

#[test]
fn at_the_start_the_opponent_cannot_have_lost_its_bomb() {
    let p = pos("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 bombs:d1,g8");
    let view = p.view(Color::White);
    assert_eq!(view.fen(), "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 bombs:d1,x");
    assert_eq!(view.candidates().squares.count(), 15);
    assert!(!view.candidates().may_be_gone);
    assert!(view.determinize(None).is_err());
    assert!(matches!(
        Position::from_fen(&view.fen(), Variant::Bomb),
        Err(FenError::Bombs(BombFieldError::Hidden))
    ));
}

#[test]
fn bad_bomb_fields_are_typed_errors() {
    let board = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR";
    type Expected = fn(&BombFieldError) -> bool;
    let cases: [(String, Expected); 10] = [
        (format!("{board} w KQkq - 0 1"), |e| *e == BombFieldError::Missing),
        (format!("{board} w KQkq - 0 1 bombs:e1,g8"), |e| {
            matches!(e, BombFieldError::NotAPiece { .. })
        }),
        (format!("{board} w KQkq - 0 1 bombs:d8,g8"), |e| {
            matches!(e, BombFieldError::NotAPiece { .. })
        }),
        (format!("{board} w KQkq - 0 1 bombs:d4,g8"), |e| {
            matches!(e, BombFieldError::NotAPiece { .. })
        }),
        (format!("{board} b KQkq - 0 1 bombs:?,?"), |e| matches!(e, BombFieldError::SetupPhase(_))),
        (format!("{board} w KQkq - 0 1 bombs:d1,?"), |e| {
            matches!(e, BombFieldError::SetupPhase(_))
        }),
        (format!("{board} w KQkq - 0 1 bombs:?,g8"), |e| {
            matches!(e, BombFieldError::SetupPhase(_))
        }),
        (format!("{board} w KQkq - 0 1 bombs:d1"), |e| matches!(e, BombFieldError::Syntax(_))),
        ("4k3/8/8/8/8/8/8/R3K2r w - - 0 1 bombs:?,?".into(), |e| {
            matches!(e, BombFieldError::SetupPhase(_))
        }),
        ("balanced".to_string(), |e| *e == BombFieldError::BalancedStart),
    ];
    for (fen, expected) in cases {
        match Position::from_fen(&fen, Variant::Bomb) {
            Err(FenError::Bombs(e)) => {
                assert!(expected(&e), "{fen}: {e:?}");
                assert!(e.to_string().starts_with("invalid fen: "), "{e}");
            }
            other => panic!("{fen}: {other:?}"),
        }
    }
    // The field in another variant.
    let e = Position::from_fen(&format!("{board} w KQkq - 0 1 bombs:d1,g8"), Variant::Atomic);
    assert_eq!(e, Err(FenError::Bombs(BombFieldError::NotBombVariant(Variant::Atomic))));
    // Garbage never panics.
    for junk in ["bombs:", "bombs:,,", "x bombs:a1,a1", "8/8/8/8/8/8/8/8 w - - 0 1 bombs:-,-"] {
        let _ = Position::from_fen(junk, Variant::Bomb);
    }
    assert_eq!(parse_bombs_field("bombs:*,?").unwrap().white, BombSlot::Detonated);
}

#[test]
fn uci_and_san_tokens_round_trip() {
    let mut rng = Rng::new(11);
    let mut seen_detonation = false;
    for _ in 0..100 {
        let mut p = Position::new(Variant::Bomb);
        for _ in 0..80 {
            let moves = p.legal_moves();
            if moves.is_empty() {
                break;
            }
            for &m in &moves {
                let uci = p.uci(m);
                assert_eq!(p.parse_uci(&uci), Ok(m), "{uci} in {}", p.fen());
                let san = p.san(m);
                assert_eq!(p.parse_san(&san), Ok(m), "{san} in {}", p.fen());
                if m.is_detonation() {
                    seen_detonation = true;
                    assert!(uci.ends_with('*') && san.contains('*'), "{uci} {san}");
                }
                if m.is_bomb_choice() {
                    assert!(uci.starts_with('@') && san.starts_with('@'));
                }
            }
            let chess: Vec<Move> = moves.iter().copied().filter(|m| !m.is_detonation()).collect();
            let pick = if chess.is_empty() { &moves[..] } else { &chess[..] };
            p.play_unchecked(pick[rng.below(pick.len())]);
        }
    }
    assert!(seen_detonation);
    let p = pos("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 bombs:d1,g8");
    let d = Move::detonation(Square::D1);
    assert_eq!((p.uci(d).as_str(), p.san(d).as_str()), ("d1*", "Qd1*"));
    assert_eq!(p.parse_san("d1*"), Ok(d));
    assert!(p.parse_san("Nd1*").is_err(), "the letter must be the bomb's piece");
    assert!(p.parse_uci("e2*").is_err(), "not White's bomb");
    assert!(p.parse_uci("@d1").is_err(), "no choice after the setup phase");
}

#[test]
fn pgn_reveals_the_choices_in_tags_and_reads_back() {
    let mut rng = Rng::new(3);
    for _ in 0..30 {
        let start = Position::new(Variant::Bomb);
        let mut game = atomzero_rules::PgnGame::new(start);
        let mut p = start;
        for _ in 0..rng.below(90) {
            let moves = p.legal_moves();
            if moves.is_empty() {
                break;
            }
            let m = moves[rng.below(moves.len())];
            game.moves.push(m);
            p.play_unchecked(m);
        }
        if let Some(outcome) = p.outcome() {
            game.result = outcome.result_str().into();
        }
        let text = game.write();
        assert!(!text.contains("[FEN"), "{text}");
        let back = read_pgn(&text).remove(0).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(back.moves, game.moves, "{text}");
        assert_eq!(back.final_position(), p);
    }
    let text = "[Variant \"Bomb\"]\n[WhiteBomb \"d1\"]\n[BlackBomb \"g8\"]\n\n1. e4 e5 2. Qd1* *\n";
    let game = read_pgn(text).remove(0).unwrap();
    assert_eq!(game.moves.len(), 5);
    assert_eq!(game.final_position().outcome().unwrap().winner, Some(Color::Black));
    let written = game.write();
    assert!(written.contains("[WhiteBomb \"d1\"]\n[BlackBomb \"g8\"]"), "{written}");
    assert!(written.contains("1. e4 e5 2. Qd1* *"), "{written}");
    // A game from a set-up position carries its FEN (with its bombs field); a winning
    // detonation is written with `#`.
    let start = pos("8/8/8/8/2k5/3N4/8/5K2 w - - 0 1 bombs:d3,-");
    let mut game = atomzero_rules::PgnGame::new(start);
    game.moves.push(Move::detonation(Square::D3));
    game.result = "1-0".into();
    let text = game.write();
    assert!(text.contains("[FEN \"8/8/8/8/2k5/3N4/8/5K2 w - - 0 1 bombs:d3,-\"]"), "{text}");
    assert!(text.contains("1. Nd3*# 1-0"), "{text}");
    let back = read_pgn(&text).remove(0).unwrap();
    assert_eq!((back.initial, &back.moves, &back.result), (start, &game.moves, &game.result));
    let bad = read_pgn("[Variant \"Bomb\"]\n[WhiteBomb \"e1\"]\n\n*\n").remove(0).unwrap_err();
    assert!(bad.to_string().contains("WhiteBomb"), "{bad}");
}
