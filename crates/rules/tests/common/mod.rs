//! Helpers shared by the integration tests: a seeded RNG, random games, test data paths.
#![allow(dead_code)]

use atomzero_rules::{CastlingMode, Position, Setup, Variant};

/// splitmix64: small, seeded, reproducible.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }
}

/// The Chess960 start position number `n` (0..960), Scharnagl numbering.
pub fn chess960_fen(n: usize) -> String {
    let mut rank = [' '; 8];
    let mut n = n % 960;
    let place_nth_free =
        |rank: &mut [char; 8], mut k: usize, piece: char, parity: Option<usize>| {
            for (i, slot) in rank.iter_mut().enumerate() {
                if *slot == ' ' && parity.is_none_or(|p| i % 2 == p) {
                    if k == 0 {
                        *slot = piece;
                        return;
                    }
                    k -= 1;
                }
            }
        };
    place_nth_free(&mut rank, n % 4, 'B', Some(1));
    n /= 4;
    place_nth_free(&mut rank, n % 4, 'B', Some(0));
    n /= 4;
    place_nth_free(&mut rank, n % 6, 'Q', None);
    n /= 6;
    let knights =
        [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)][n];
    // Place the second knight first so the first index is unaffected.
    place_nth_free(&mut rank, knights.1, 'N', None);
    place_nth_free(&mut rank, knights.0, 'N', None);
    for piece in ['R', 'K', 'R'] {
        place_nth_free(&mut rank, 0, piece, None);
    }
    let white: String = rank.iter().collect();
    let black = white.to_ascii_lowercase();
    format!("{black}/pppppppp/8/8/8/8/PPPPPPPP/{white} w KQkq - 0 1")
}

/// A position from a FEN (or `balanced`, the Balanced start's setup position) in a given
/// castling mode.
pub fn position(fen: &str, variant: Variant, mode: CastlingMode) -> Position {
    if fen.trim() != atomzero_rules::BALANCED_FEN && !fen.contains(" bombs:") {
        // Also checks that the FEN parses as a Setup (the CLI reads suites this way).
        Setup::from_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
    }
    Position::from_fen_with_mode(fen, variant, mode).unwrap_or_else(|e| panic!("{fen}: {e}"))
}

/// Plays a random game of at most `max_plies` plies and returns every position reached
/// (including the start).
pub fn random_game(start: Position, rng: &mut Rng, max_plies: usize) -> Vec<Position> {
    let mut positions = vec![start];
    let mut pos = start;
    for _ in 0..max_plies {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            break;
        }
        pos.play_unchecked(moves[rng.below(moves.len())]);
        positions.push(pos);
    }
    positions
}

/// Games to run: the CI default, or more with `ATOMZERO_LONG_TESTS=1`.
pub fn scale(ci: usize, long: usize) -> usize {
    if std::env::var_os("ATOMZERO_LONG_TESTS").is_some() { long } else { ci }
}

pub fn data_path(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}
