//! # atomzero-rules
//!
//! Atomic chess rules as played on lichess, and the rule variants of the atomic literature
//! (see [`variant`]), with bitboard move generation fast enough that search never waits on it.
//!
//! - [`Setup`] is an unchecked position (as read from a FEN); [`Position::from_setup`] validates
//!   it under a [`Variant`] and reports every problem. A [`Position`] is always legal.
//! - [`Position::legal_moves`], [`Position::play`] (checked) and [`Position::play_unchecked`].
//! - [`Start`]: the standard start or the Balanced start, whose setup phase has White remove
//!   one pawn before Black moves first ([`Position::start`], [`start`]).
//! - The bomb variant ([`bomb`]): standard chess with a secret bomb per side, detonated as a
//!   move; a game of hidden information, with per-player views ([`Position::view`]).
//! - Notation: FEN/X-FEN/Shredder-FEN ([`fen`]), UCI ([`uci`]), SAN ([`san`]), PGN ([`pgn`]).
//! - Game ends: [`Position::outcome`] for the position alone, [`Game::outcome`] with repetitions.
//! - [`perft()`] for testing move generation.
//!
//! The crate does no I/O and starts no threads.
//!
//! ```
//! use atomzero_rules::{Position, Variant, perft};
//! let pos = Position::new(Variant::Atomic);
//! assert_eq!(perft(&pos, 3), 8902);
//! let pos = pos.play(pos.parse_uci("e2e4").unwrap()).unwrap();
//! assert_eq!(pos.fen(), "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
//! ```

pub mod attacks;
pub mod bitboard;
pub mod board;
pub mod bomb;
pub mod color;
pub mod fen;
pub mod game;
mod magics;
mod movegen;
pub mod mv;
pub mod outcome;
pub mod perft;
pub mod pgn;
pub mod position;
pub mod role;
pub mod san;
pub mod setup;
pub mod square;
pub mod start;
pub mod uci;
pub mod variant;
pub mod zobrist;

pub use bitboard::Bitboard;
pub use board::Board;
pub use bomb::{
    BombCandidates, BombFieldError, BombSlot, BombView, DeterminizeError, OpponentBomb,
    view_repetitions,
};
pub use color::{ByColor, Color};
pub use fen::{FenError, ParseFenError, STARTING_FEN};
pub use game::Game;
pub use mv::{Move, MoveKind, MoveList};
pub use outcome::{Outcome, Termination};
pub use perft::{divide, perft};
pub use pgn::{MoveNote, PgnError, PgnGame, read_pgn};
pub use position::{PlayError, Position, PositionError, PositionErrorKind};
pub use role::{Piece, Role};
pub use san::SanError;
pub use setup::{CastlingMode, Setup};
pub use square::{File, Rank, Square};
pub use start::{BALANCED_FEN, Start, UnknownStart};
pub use uci::{UciError, UciMove};
pub use variant::{Rules, UnknownVariant, UnsupportedVariant, Variant};
