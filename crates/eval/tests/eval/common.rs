//! Helpers shared by the tests: PGN read-back checks.

use atomzero_eval::MatchResult;
use atomzero_rules::read_pgn;

/// Every game of `result` written as PGN reads back (with the rules crate's reader) to the
/// same start, moves, result and players.
pub fn assert_pgn_round_trips(result: &MatchResult) {
    let text = result.pgn();
    let games = read_pgn(&text);
    assert_eq!(games.len(), result.games.len(), "one PGN game per match game");
    for (record, parsed) in result.games.iter().zip(games) {
        let parsed = parsed.unwrap_or_else(|e| panic!("game {}: {e}\n{text}", record.index + 1));
        assert_eq!(parsed.initial, record.opening, "game {}", record.index + 1);
        assert_eq!(parsed.moves, record.moves, "game {}", record.index + 1);
        assert_eq!(parsed.result, record.result_str(), "game {}", record.index + 1);
        assert_eq!(parsed.tag("White"), Some(record.white.as_str()));
        assert_eq!(parsed.tag("Black"), Some(record.black.as_str()));
        assert_eq!(parsed.tag("Termination"), Some(record.termination().as_str()));
        assert_eq!(parsed.tag("Variant"), Some(result.variant.pgn_name()));
        assert_eq!(parsed.tag("Result"), Some(record.result_str()));
        if record.from_book {
            assert_eq!(parsed.tag("FEN"), Some(record.opening.fen().as_str()));
        }
    }
}
