//! Fuzzes the PGN reader. Every game it accepts must survive being written and read back:
//! one game, the same start position and the same moves.

#![no_main]

use atomzero_rules::read_pgn;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for game in read_pgn(text).into_iter().flatten() {
        let written = game.write();
        let mut back = read_pgn(&written);
        assert_eq!(back.len(), 1, "written game reads as {} games:\n{written}", back.len());
        let again = back
            .remove(0)
            .unwrap_or_else(|e| panic!("written game does not read back: {e}\n{written}"));
        assert_eq!(again.initial, game.initial, "start position differs:\n{written}");
        assert_eq!(again.moves, game.moves, "moves differ:\n{written}");
        let _ = game.final_position().outcome();
    }
});
