//! Squares of the board, numbered 0 (a1) to 63 (h8), rank by rank.

use crate::color::Color;
use std::fmt;
use std::str::FromStr;

/// A file (column), 0 = a to 7 = h.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct File(u8);

impl File {
    /// Builds a file from 0..8.
    pub const fn new(index: u8) -> Option<File> {
        if index < 8 { Some(File(index)) } else { None }
    }
    /// 0..8.
    #[inline]
    pub const fn index(self) -> u8 {
        self.0
    }
    /// `'a'..='h'`.
    pub const fn char(self) -> char {
        (b'a' + self.0) as char
    }
    /// Upper-case letter, as in Shredder-FEN castling rights.
    pub const fn upper_char(self) -> char {
        (b'A' + self.0) as char
    }
    /// Parses `'a'..='h'` (either case).
    pub const fn from_char(ch: char) -> Option<File> {
        let lower = ch.to_ascii_lowercase();
        if lower >= 'a' && lower <= 'h' { Some(File(lower as u8 - b'a')) } else { None }
    }
}

/// A rank (row), 0 = first rank to 7 = eighth rank.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Rank(u8);

impl Rank {
    /// Builds a rank from 0..8.
    pub const fn new(index: u8) -> Option<Rank> {
        if index < 8 { Some(Rank(index)) } else { None }
    }
    /// 0..8.
    #[inline]
    pub const fn index(self) -> u8 {
        self.0
    }
    /// `'1'..='8'`.
    pub const fn char(self) -> char {
        (b'1' + self.0) as char
    }
    /// Parses `'1'..='8'`.
    pub const fn from_char(ch: char) -> Option<Rank> {
        if ch >= '1' && ch <= '8' { Some(Rank(ch as u8 - b'1')) } else { None }
    }
}

/// A square of the board. The inner index is always below 64.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(try_from = "u8", into = "u8"))]
pub struct Square(u8);

impl From<Square> for u8 {
    fn from(sq: Square) -> u8 {
        sq.0
    }
}

impl TryFrom<u8> for Square {
    type Error = &'static str;
    fn try_from(index: u8) -> Result<Square, &'static str> {
        Square::new(index).ok_or("square index out of range")
    }
}

impl Square {
    /// Builds a square from an index 0..64.
    #[inline]
    pub const fn new(index: u8) -> Option<Square> {
        if index < 64 { Some(Square(index)) } else { None }
    }

    /// Builds a square from `index & 63`: total, for internal use on known-good indices.
    #[inline]
    pub(crate) const fn from_index_masked(index: u32) -> Square {
        Square((index & 63) as u8)
    }

    /// The square on `file` and `rank`.
    #[inline]
    pub const fn from_coords(file: File, rank: Rank) -> Square {
        Square(rank.0 * 8 + file.0)
    }

    /// 0..64.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The file of the square.
    #[inline]
    pub const fn file(self) -> File {
        File(self.0 & 7)
    }

    /// The rank of the square.
    #[inline]
    pub const fn rank(self) -> Rank {
        Rank(self.0 >> 3)
    }

    /// Mirrors the square top to bottom (a1 <-> a8).
    #[inline]
    pub const fn flip_vertical(self) -> Square {
        Square(self.0 ^ 56)
    }

    /// Mirrors the square left to right (a1 <-> h1).
    #[inline]
    pub const fn flip_horizontal(self) -> Square {
        Square(self.0 ^ 7)
    }

    /// The square as seen by `color`: unchanged for White, flipped vertically for Black.
    #[inline]
    pub const fn relative_to(self, color: Color) -> Square {
        match color {
            Color::White => self,
            Color::Black => self.flip_vertical(),
        }
    }

    /// Moves by `delta` files and ranks, if that stays on the board.
    pub const fn offset(self, file_delta: i32, rank_delta: i32) -> Option<Square> {
        let file = (self.0 & 7) as i32 + file_delta;
        let rank = (self.0 >> 3) as i32 + rank_delta;
        if file >= 0 && file < 8 && rank >= 0 && rank < 8 {
            Some(Square((rank * 8 + file) as u8))
        } else {
            None
        }
    }

    /// True for light squares (h1 is light, a1 is dark).
    #[inline]
    pub const fn is_light(self) -> bool {
        ((self.0 & 7) + (self.0 >> 3)) % 2 == 1
    }

    /// King-move distance between two squares.
    pub const fn distance(self, other: Square) -> u32 {
        let df = ((self.0 & 7) as i32 - (other.0 & 7) as i32).unsigned_abs();
        let dr = ((self.0 >> 3) as i32 - (other.0 >> 3) as i32).unsigned_abs();
        if df > dr { df } else { dr }
    }

    /// All 64 squares, a1 first.
    pub const ALL: [Square; 64] = {
        let mut all = [Square(0); 64];
        let mut i = 0;
        while i < 64 {
            all[i] = Square(i as u8);
            i += 1;
        }
        all
    };
}

macro_rules! square_consts {
    ($($name:ident = $index:expr),* $(,)?) => {
        impl Square {
            $(
                #[allow(missing_docs)]
                pub const $name: Square = Square($index);
            )*
        }
    };
}

square_consts! {
    A1 = 0, B1 = 1, C1 = 2, D1 = 3, E1 = 4, F1 = 5, G1 = 6, H1 = 7,
    A2 = 8, B2 = 9, C2 = 10, D2 = 11, E2 = 12, F2 = 13, G2 = 14, H2 = 15,
    A3 = 16, B3 = 17, C3 = 18, D3 = 19, E3 = 20, F3 = 21, G3 = 22, H3 = 23,
    A4 = 24, B4 = 25, C4 = 26, D4 = 27, E4 = 28, F4 = 29, G4 = 30, H4 = 31,
    A5 = 32, B5 = 33, C5 = 34, D5 = 35, E5 = 36, F5 = 37, G5 = 38, H5 = 39,
    A6 = 40, B6 = 41, C6 = 42, D6 = 43, E6 = 44, F6 = 45, G6 = 46, H6 = 47,
    A7 = 48, B7 = 49, C7 = 50, D7 = 51, E7 = 52, F7 = 53, G7 = 54, H7 = 55,
    A8 = 56, B8 = 57, C8 = 58, D8 = 59, E8 = 60, F8 = 61, G8 = 62, H8 = 63,
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.file().char(), self.rank().char())
    }
}

/// A string that is not a square name like `e4`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseSquareError;

impl fmt::Display for ParseSquareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid square name (expected a file a-h and a rank 1-8, like e4)")
    }
}

impl std::error::Error for ParseSquareError {}

impl FromStr for Square {
    type Err = ParseSquareError;
    fn from_str(s: &str) -> Result<Square, ParseSquareError> {
        let mut chars = s.chars();
        match (chars.next(), chars.next(), chars.next()) {
            (Some(f), Some(r), None) => match (File::from_char(f), Rank::from_char(r)) {
                (Some(file), Some(rank)) if f.is_ascii_lowercase() => {
                    Ok(Square::from_coords(file, rank))
                }
                _ => Err(ParseSquareError),
            },
            _ => Err(ParseSquareError),
        }
    }
}
