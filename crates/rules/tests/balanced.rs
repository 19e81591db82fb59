//! The Balanced start (`atomzero_rules::start`): its setup phase, perft against an independent
//! count (shakmaty's atomic on the 16 positions after a removal, Black to move, built here
//! from text without this crate), notation round trips (FEN keyword, UCI/SAN `@e2`, PGN
//! `[Balanced]` tag) and its composition with every variant.

mod common;

use atomzero_rules::{
    Color, Game, Move, PgnGame, Position, Square, Start, Variant, perft, read_pgn,
};
use shakmaty::fen::Fen;
use shakmaty::variant::Atomic;

/// The 16 pawn squares of the start position, a1 to h8.
fn pawn_squares() -> Vec<Square> {
    (8..16).chain(48..56).map(|i| Square::new(i).unwrap()).collect()
}

/// The FEN after White removes the pawn on `square` (file 0..8, rank 1 or 6 counted from 0),
/// written out from the standard start's text, Black to move.
fn fen_without_pawn(file: usize, rank: usize) -> String {
    let mut ranks: Vec<Vec<char>> =
        ["rnbqkbnr", "pppppppp", "", "", "", "", "PPPPPPPP", "RNBQKBNR"]
            .iter()
            .map(|r| {
                let mut cells: Vec<char> = r.chars().collect();
                cells.resize(8, ' ');
                cells
            })
            .collect();
    ranks[7 - rank][file] = ' ';
    let rows: Vec<String> = ranks
        .iter()
        .map(|cells| {
            let mut row = String::new();
            let mut empty = 0;
            for &c in cells {
                if c == ' ' {
                    empty += 1;
                } else {
                    if empty > 0 {
                        row.push_str(&empty.to_string());
                        empty = 0;
                    }
                    row.push(c);
                }
            }
            if empty > 0 {
                row.push_str(&empty.to_string());
            }
            row
        })
        .collect();
    format!("{} b KQkq - 0 1", rows.join("/"))
}

/// Shakmaty's count of the Balanced start at `depth`: the 16 removals are ply 1.
fn shakmaty_balanced_perft(depth: u32) -> u64 {
    let mut total = 0;
    for rank in [1, 6] {
        for file in 0..8 {
            let fen = fen_without_pawn(file, rank);
            let pos: Atomic = fen
                .parse::<Fen>()
                .unwrap()
                .into_position(shakmaty::CastlingMode::Standard)
                .unwrap();
            total += shakmaty::perft(&pos, depth - 1);
        }
    }
    total
}

/// Our perft table, as in tests/data/balanced.perft (the suite test checks the file itself).
const ATOMIC_TABLE: [u64; 6] = [16, 348, 7_463, 181_488, 4_330_808, 115_777_503];

#[test]
fn perft_of_the_balanced_start_matches_shakmaty() {
    let start = Position::start(Variant::Atomic, Start::Balanced);
    for (i, &expected) in ATOMIC_TABLE.iter().enumerate() {
        let depth = i as u32 + 1;
        let ours = perft(&start, depth);
        assert_eq!(ours, shakmaty_balanced_perft(depth), "depth {depth}");
        assert_eq!(ours, expected, "depth {depth}");
    }
}

#[test]
fn the_setup_phase_offers_the_16_removals_and_each_leaves_the_expected_fen() {
    for variant in Variant::ALL {
        let start = Position::start(variant, Start::Balanced);
        assert!(start.is_setup_phase());
        assert_eq!(start.turn(), Color::White);
        assert_eq!(start.outcome(), None);
        assert!(!start.is_check());
        assert_ne!(start.hash(), Position::new(variant).hash(), "{variant}");
        assert_eq!(start.hash(), start.compute_hash());
        assert_eq!(Position::start(variant, Start::Standard), Position::new(variant));
        let moves = start.legal_moves();
        let removals: Vec<Move> = pawn_squares().into_iter().map(Move::removal).collect();
        assert_eq!(moves.to_vec(), removals, "{variant}: removals a1 to h8");
        for &m in &moves {
            let square = m.from();
            let after = start.play(m).unwrap();
            assert!(!after.is_setup_phase());
            assert_eq!(after.turn(), Color::Black);
            assert_eq!(after.hash(), after.compute_hash(), "{variant} {square}");
            let (file, rank) = (square.file().index() as usize, square.rank().index() as usize);
            assert_eq!(after.fen(), fen_without_pawn(file, rank));
            assert_eq!(Position::from_fen(&after.fen(), variant).unwrap(), after);
            // Notation: UCI and SAN `@e2`.
            assert_eq!(start.uci(m), format!("@{square}"));
            assert_eq!(start.san(m), format!("@{square}"));
            assert_eq!(start.parse_uci(&format!("@{square}")).unwrap(), m);
            assert_eq!(start.parse_san(&format!("@{square}")).unwrap(), m);
            // The board's own moves are not legal in the setup phase, nor removals after it.
            assert!(after.parse_uci(&format!("@{square}")).is_err());
            assert!(start.parse_uci(&format!("{square}{square}")).is_err());
        }
        assert!(start.parse_uci("e2e4").is_err());
        assert!(start.parse_san("e4").is_err());
        assert!(start.parse_san("Nf3").is_err());
        assert!(start.parse_uci("@e4").is_err(), "no pawn on e4");
        assert!(start.parse_uci("@e1").is_err(), "a king is not a pawn");
        assert!(start.play(Move::removal(Square::E1)).is_err());
        assert!(Position::new(variant).parse_uci("@e2").is_err());
        assert!(Position::new(variant).parse_san("@e2").is_err());
    }
}

#[test]
fn every_variant_composes_with_the_balanced_start() {
    // Perft of the setup position is the sum over the 16 positions after a removal, each read
    // back from its FEN (so the setup phase leaves nothing behind but the position).
    for variant in Variant::ALL {
        let start = Position::start(variant, Start::Balanced);
        for depth in 1..=4 {
            let by_fen: u64 = start
                .legal_moves()
                .iter()
                .map(|&m| {
                    let after = start.play(m).unwrap();
                    let reread = Position::from_fen(&after.fen(), variant).unwrap();
                    perft(&reread, depth - 1)
                })
                .sum();
            assert_eq!(perft(&start, depth), by_fen, "{variant} depth {depth}");
        }
    }
    // Our tables for the other variants (tests/data/balanced.perft): no capture is possible
    // before ply 4, so pawnblast (which changes only blasts) agrees with atomic up to depth 3,
    // and the no-check variants differ from ply 3 on (moves into check, kings next to kings).
    let table = |variant| -> Vec<u64> {
        let start = Position::start(variant, Start::Balanced);
        (1..=5).map(|d| perft(&start, d)).collect()
    };
    assert_eq!(table(Variant::Atomic), ATOMIC_TABLE[..5]);
    assert_eq!(table(Variant::NoCheckAtomic), [16, 348, 7_469, 181_938, 4_364_141]);
    assert_eq!(table(Variant::Atomar), [16, 348, 7_490, 182_875, 4_401_741]);
    assert_eq!(table(Variant::Deathmatch), [16, 348, 7_469, 181_938, 4_364_141]);
    assert_eq!(table(Variant::Pawnblast), [16, 348, 7_463, 181_514, 4_332_418]);
}

#[test]
fn fen_keyword_round_trips_and_keeps_the_castling_mode() {
    let start = Position::start(Variant::Atomar, Start::Balanced);
    assert_eq!(start.fen(), "balanced");
    assert_eq!(start.to_string(), "balanced");
    assert_eq!(Position::from_fen("balanced", Variant::Atomar).unwrap(), start);
    assert_eq!(Position::from_fen("  Balanced ", Variant::Atomar).unwrap(), start);
    let c960 = start.with_castling_mode(atomzero_rules::CastlingMode::Chess960).unwrap();
    assert!(c960.is_setup_phase());
    assert_eq!(c960.legal_moves().len(), 16);
    // A Setup has no setup phase: the keyword is no FEN.
    assert!(atomzero_rules::Setup::from_fen("balanced").is_err());
}

/// A random game from the Balanced start, as a Game.
fn random_balanced_game(variant: Variant, seed: u64, max_plies: usize) -> Game {
    let mut rng = common::Rng::new(seed);
    let mut game = Game::new(Position::start(variant, Start::Balanced));
    for _ in 0..max_plies {
        if game.outcome().is_some() {
            break;
        }
        let moves = game.position().legal_moves();
        game.play(moves[rng.below(moves.len())]).unwrap();
        assert_eq!(game.position().hash(), game.position().compute_hash());
    }
    game
}

#[test]
fn pgn_records_the_removal_in_a_tag_and_reads_it_back() {
    for (i, variant) in Variant::ALL.into_iter().enumerate() {
        let game = random_balanced_game(variant, i as u64, 60);
        let mut pgn = PgnGame::new(*game.initial());
        pgn.moves = game.moves().to_vec();
        let text = pgn.write();
        let removed = game.moves()[0].from();
        let mut after = *game.initial();
        after.play_unchecked(game.moves()[0]);
        assert!(text.contains(&format!("[Balanced \"{removed}\"]")), "{text}");
        assert!(text.contains("[SetUp \"1\"]"), "{text}");
        assert!(text.contains(&format!("[FEN \"{}\"]", after.fen())), "{text}");
        assert!(text.contains("\n1... "), "movetext starts with Black's move: {text}");
        assert!(!text.contains('@'), "the removal is not in the movetext: {text}");
        let back = read_pgn(&text).remove(0).unwrap();
        assert_eq!(back.initial, *game.initial(), "{variant}");
        assert_eq!(back.moves, game.moves(), "{variant}");
        assert_eq!(back.write(), text);
    }
    // A game still in the setup phase.
    let pgn = PgnGame::new(Position::start(Variant::Atomic, Start::Balanced));
    let text = pgn.write();
    assert!(text.contains("[Balanced \"-\"]") && !text.contains("[FEN"), "{text}");
    let back = read_pgn(&text).remove(0).unwrap();
    assert_eq!(back.initial, pgn.initial);
    assert!(back.moves.is_empty());
    // ... whose movetext may hold the removal in SAN.
    let back = read_pgn("[Balanced \"-\"]\n\n1. @d7 e6 *\n").remove(0).unwrap();
    assert_eq!(back.moves[0], Move::removal(Square::D7));
    assert_eq!(
        back.final_position().fen(),
        "rnbqkbnr/ppp2ppp/4p3/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 2"
    );
}

#[test]
fn bad_balanced_tags_are_errors_that_say_what_is_wrong() {
    let cases = [
        ("[Balanced \"e4\"]\n\n1... e5 *\n", "e4 holds no pawn"),
        ("[Balanced \"zz\"]\n\n*\n", "'zz' is not a square"),
        ("[Balanced \"e1\"]\n\n*\n", "e1 holds no pawn"),
        (
            "[Balanced \"e2\"]\n[SetUp \"1\"]\n[FEN \"rnbqkbnr/pppppppp/8/8/8/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1\"]\n\n*\n",
            "is not the position after removing the e2 pawn",
        ),
        ("[Balanced \"-\"]\n[FEN \"8/8/8/8/8/8/8/8 w - - 0 1\"]\n\n*\n", "cannot have a [FEN]"),
    ];
    for (text, expected) in cases {
        let error = read_pgn(text).remove(0).unwrap_err().to_string();
        assert!(error.contains(expected), "{text}: {error}");
    }
    // A bad move after the removal is reported at its ply, counting the removal as ply 1.
    let error = read_pgn("[Balanced \"e2\"]\n\n1... e5 2. Ke3 *\n").remove(0).unwrap_err();
    assert!(error.to_string().contains("ply 3"), "{error}");
}
