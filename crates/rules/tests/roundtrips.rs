//! Round trips over many random positions of every variant: FEN, Zobrist (incremental equals
//! recomputed), UCI and SAN print -> parse for every legal move, PGN write -> read, `Move`
//! packing, and colour-flip symmetry of move generation.

mod common;

use atomzero_rules::{CastlingMode, Game, Move, MoveNote, PgnGame, Position, Variant, read_pgn};
use common::Rng;

/// Random positions of every variant, some from Chess960 starts.
fn random_positions(n_games: usize, seed: u64) -> Vec<Position> {
    let mut rng = Rng::new(seed);
    let mut all = Vec::new();
    for game in 0..n_games {
        let variant = Variant::ALL[game % Variant::ALL.len()];
        let start = if rng.chance(20) {
            common::position(&common::chess960_fen(rng.below(960)), variant, CastlingMode::Chess960)
        } else {
            Position::new(variant)
        };
        all.extend(common::random_game(start, &mut rng, 300));
    }
    all
}

#[test]
fn fen_round_trip_and_zobrist() {
    let positions = random_positions(600, 10);
    assert!(positions.len() > 20_000);
    for pos in &positions {
        let fen = pos.fen();
        let back = Position::from_fen_with_mode(&fen, pos.variant(), pos.castling_mode())
            .unwrap_or_else(|e| panic!("{fen}: {e}"));
        assert_eq!(&back, pos, "{fen}");
        assert_eq!(back.fen(), fen);
        // Shredder-FEN reads back to the same position too.
        let shredder =
            Position::from_fen_with_mode(&pos.shredder_fen(), pos.variant(), pos.castling_mode())
                .unwrap();
        assert_eq!(&shredder, pos, "{}", pos.shredder_fen());
        assert_eq!(pos.hash(), pos.compute_hash(), "{fen}");
    }
}

#[test]
fn uci_san_and_packing_round_trip_for_every_legal_move() {
    let positions = random_positions(300, 11);
    let mut n_moves = 0;
    for pos in positions.iter().step_by(3) {
        for &m in pos.legal_moves().iter() {
            n_moves += 1;
            assert_eq!(pos.parse_uci(&pos.uci(m)), Ok(m), "uci {} in {}", pos.uci(m), pos.fen());
            let san = pos.san(m);
            assert_eq!(pos.parse_san(&san), Ok(m), "san {san} in {}", pos.fen());
            assert_eq!(Move::from_u16(m.to_u16()), Some(m));
            assert!(pos.play(m).is_ok());
        }
    }
    assert!(n_moves > 50_000, "{n_moves}");
}

#[test]
fn play_rejects_illegal_moves_and_returns_the_position() {
    let mut rng = Rng::new(12);
    for pos in random_positions(100, 13) {
        let legal = pos.legal_moves();
        for _ in 0..20 {
            let m = Move::from_u16((rng.next_u64() & 0x7FFF) as u16).unwrap();
            if legal.contains(&m) {
                continue;
            }
            let err = pos.play(m).unwrap_err();
            assert_eq!(err.position, pos);
        }
    }
}

#[test]
fn colour_flip_mirrors_the_legal_moves() {
    for pos in random_positions(150, 14).iter().step_by(2) {
        let flipped = pos.flip_colors();
        let mut ours: Vec<(usize, usize, Option<_>)> = pos
            .legal_moves()
            .iter()
            .map(|m| {
                (m.from().flip_vertical().index(), m.to().flip_vertical().index(), m.promotion())
            })
            .collect();
        let mut theirs: Vec<_> = flipped
            .legal_moves()
            .iter()
            .map(|m| (m.from().index(), m.to().index(), m.promotion()))
            .collect();
        ours.sort();
        theirs.sort();
        assert_eq!(ours, theirs, "{} vs {}", pos.fen(), flipped.fen());
        assert_eq!(pos.outcome().map(|o| o.termination), flipped.outcome().map(|o| o.termination));
    }
}

/// Annotated PGN (NAGs, comments, variations after moves, as `atomzero analyse` writes it)
/// reads back as the same game, and every note is where it belongs.
#[test]
fn annotated_pgn_reads_back_as_the_same_game() {
    let mut rng = Rng::new(45);
    for i in 0..60 {
        let variant = Variant::ALL[i % Variant::ALL.len()];
        let start = Position::new(variant);
        let mut game = Game::new(start);
        while game.outcome().is_none() && game.ply() < 80 {
            let moves = game.position().legal_moves();
            game.play(moves[rng.below(moves.len())]).unwrap();
        }
        let mut pgn = PgnGame::new(start);
        pgn.moves = game.moves().to_vec();
        let mut notes = Vec::new();
        let mut pos = start;
        for (ply, &m) in pgn.moves.iter().enumerate() {
            let legal = pos.legal_moves();
            notes.push(MoveNote {
                nags: if ply % 3 == 0 { vec![4] } else { Vec::new() },
                comment: if ply % 2 == 0 { format!("[%eval {ply}.5] a}}b") } else { String::new() },
                // Another legal move, when there is one.
                variation: legal.iter().copied().filter(|&v| v != m).take(1).collect(),
            });
            pos.play_unchecked(m);
        }
        let text = pgn.write_annotated(&notes);
        let read = read_pgn(&text).pop().unwrap().unwrap();
        assert_eq!(read.moves, pgn.moves, "{text}");
        if !pgn.moves.is_empty() {
            assert!(text.contains("$4 { [%eval 0.5] a)b }"), "{text}");
        }
        // After a comment or a variation the next move carries its number (`12...` for
        // Black's).
        let movetext = &text[text.find("\n\n").unwrap()..];
        let tokens: Vec<&str> = movetext.split_whitespace().collect();
        for pair in tokens.windows(2) {
            if pair[0].ends_with('}') || pair[0].ends_with(')') {
                let next = pair[1];
                let numbered = next.starts_with(|c: char| c.is_ascii_digit());
                let result = matches!(next, "1-0" | "0-1" | "1/2-1/2" | "*");
                let note = next.starts_with(['(', '{']);
                assert!(numbered || result || note, "{} {next}: {text}", pair[0]);
            }
        }
        assert_eq!(pgn.write_annotated(&[]), pgn.write());
    }
}

#[test]
fn pgn_write_read_round_trip() {
    let mut rng = Rng::new(15);
    let mut text = String::new();
    let mut expected = Vec::new();
    for i in 0..200 {
        let variant = Variant::ALL[i % Variant::ALL.len()];
        let start = if i % 7 == 3 {
            common::position(&common::chess960_fen(rng.below(960)), variant, CastlingMode::Chess960)
        } else if i % 5 == 1 {
            // A non-standard start: a few random plies in.
            *common::random_game(Position::new(variant), &mut rng, 3).last().unwrap()
        } else {
            Position::new(variant)
        };
        let mut game = Game::new(start);
        while game.outcome().is_none() && game.ply() < 250 {
            let moves = game.position().legal_moves();
            game.play(moves[rng.below(moves.len())]).unwrap();
        }
        let mut pgn = PgnGame::new(start);
        pgn.moves = game.moves().to_vec();
        pgn.result = game.outcome().map_or("*", |o| o.result_str()).to_string();
        pgn.set_tag("White", "atomzero \"quoted\" \\ name");
        if let Some(o) = game.outcome() {
            pgn.set_tag("Termination", o.termination.description());
        }
        text.push_str(&pgn.write());
        expected.push(pgn);
    }
    let games = read_pgn(&text);
    assert_eq!(games.len(), expected.len());
    for (read, want) in games.into_iter().zip(&expected) {
        let read = read.unwrap();
        assert_eq!(read.moves, want.moves);
        assert_eq!(read.initial, want.initial);
        assert_eq!(read.result, want.result);
        assert_eq!(read.tag("White"), want.tag("White"));
        assert_eq!(read.tag("Termination"), want.tag("Termination"));
        let variant = read.tag("Variant").unwrap();
        assert_eq!(
            variant.strip_suffix("960").unwrap_or(variant),
            want.initial.variant().pgn_name()
        );
        assert_eq!(
            variant.ends_with("960"),
            want.initial.castling_mode() == CastlingMode::Chess960
        );
    }
}

#[test]
fn reads_a_lichess_style_pgn() {
    let text = r#"[Event "Rated Atomic game"]
[Site "https://lichess.org/xxxxxxxx"]
[Result "1-0"]
[Variant "Atomic"]

1. Nf3 f6 2. Ne5 {comment} ( 2. e4 $1 ) 2... d6 3. e4 dxe5 4. Qh5+ g6 5. Qxh7 1-0

[Event "illegal"]
[Variant "Atomic"]

1. e4 e5 2. Ke3 *

[Event "third"]
[Variant "Atomic"]

1. e4 d5 2. exd5 *
"#;
    let games = read_pgn(text);
    assert_eq!(games.len(), 3);
    let first = games[0].as_ref().unwrap();
    assert_eq!(first.moves.len(), 9);
    assert_eq!(first.result, "1-0");
    // Qxh7 blew up the queen, the h7 pawn, the g8 knight and the h8 rook; g6 (a pawn) survives.
    let end = first.final_position();
    for sq in ["h7", "g8", "h8"] {
        assert_eq!(end.board().piece_at(sq.parse().unwrap()), None, "{sq}");
    }
    assert!(end.board().piece_at("g6".parse().unwrap()).is_some());
    // The second game has an illegal move: reported with its ply, and reading goes on.
    let err = games[1].as_ref().unwrap_err();
    assert!(err.to_string().contains("ply 3"), "{err}");
    let third = games[2].as_ref().unwrap();
    assert_eq!(third.moves.len(), 3);
    assert_eq!(third.result, "*");
    // exd5 explodes: the d8 queen is adjacent to nothing there, but c8/e8... only non-pawns
    // around d5 die: none stand there, so just the two pawns vanish.
    assert_eq!(third.final_position().board().occupied().count(), 30);
}
