//! Opening positions: an EPD book (one position per line, `;`-terminated operations ignored),
//! random first plies from the start position, or the Balanced start (White's removal is
//! searched like any move, random plies follow it).

use atomzero_mcts::Rng;
use atomzero_rules::{Position, Start, Variant};
use std::fmt;
use std::path::{Path, PathBuf};

/// A book that could not be used.
#[derive(Debug)]
pub enum OpeningError {
    /// The file could not be read.
    Io { path: PathBuf, source: std::io::Error },
    /// A line is not a legal position for the variant.
    Position { path: PathBuf, line: usize, reason: String },
    /// The book has no position.
    Empty { path: PathBuf },
}

impl fmt::Display for OpeningError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpeningError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            OpeningError::Position { path, line, reason } => {
                write!(f, "{}:{line}: {reason}", path.display())
            }
            OpeningError::Empty { path } => write!(f, "{}: no positions", path.display()),
        }
    }
}

impl std::error::Error for OpeningError {}

/// Where games start.
#[derive(Clone, Debug)]
pub enum Openings {
    /// Positions from a book, used in order (cycling).
    Book(Vec<Position>),
    /// The start position followed by this many random legal plies.
    RandomPlies(usize),
    /// The Balanced start's setup position (`atomzero_rules::start`): the game's first move,
    /// White's removal of a pawn, is searched and recorded like any other, so the network
    /// learns the choice; this many random legal plies (not training targets) follow it.
    Balanced(usize),
}

impl Openings {
    /// Reads an EPD book for `variant`. Lines may carry EPD operations after the four fields
    /// (`bm ...;`), which are ignored; blank lines and `#` comments are skipped.
    pub fn from_epd(path: &Path, variant: Variant) -> Result<Openings, OpeningError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| OpeningError::Io { path: path.to_path_buf(), source })?;
        Openings::parse_epd(&text, variant).map_err(|(line, reason)| match line {
            0 => OpeningError::Empty { path: path.to_path_buf() },
            line => OpeningError::Position { path: path.to_path_buf(), line, reason },
        })
    }

    /// Parses EPD text; errors carry the 1-based line (0: empty book). A UTF-8 byte-order
    /// mark at the start is skipped.
    pub fn parse_epd(text: &str, variant: Variant) -> Result<Openings, (usize, String)> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut positions = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim().trim_end_matches(';');
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line.split_whitespace().take(4).collect();
            let fen = fields.join(" ");
            let pos = Position::from_fen(&fen, variant).map_err(|e| (i + 1, e.to_string()))?;
            positions.push(pos);
        }
        if positions.is_empty() {
            return Err((0, "no positions".into()));
        }
        Ok(Openings::Book(positions))
    }

    /// The random plies for `start` (the config's `random_opening_plies`): played from the
    /// start position, or after the removal in the Balanced start.
    pub fn random(start: Start, plies: usize) -> Openings {
        match start {
            Start::Standard => Openings::RandomPlies(plies),
            Start::Balanced => Openings::Balanced(plies),
        }
    }

    /// Random plies to play after the first move (the Balanced start's removal).
    pub fn plies_after_first_move(&self) -> usize {
        match self {
            Openings::Balanced(plies) => *plies,
            _ => 0,
        }
    }

    /// The opening of game number `index`.
    pub fn opening(&self, index: usize, variant: Variant, rng: &mut Rng) -> Position {
        match self {
            Openings::Book(book) => book[index % book.len()],
            Openings::Balanced(_) => Position::start(variant, Start::Balanced),
            Openings::RandomPlies(n) => loop {
                let mut pos = Position::new(variant);
                for _ in 0..*n {
                    let moves = pos.legal_moves();
                    if moves.is_empty() {
                        break;
                    }
                    pos.play_unchecked(moves[rng.below(moves.len())]);
                }
                if pos.outcome().is_none() {
                    break pos;
                }
            },
        }
    }

    /// Number of book positions (0 for random openings).
    pub fn len(&self) -> usize {
        match self {
            Openings::Book(b) => b.len(),
            Openings::RandomPlies(_) | Openings::Balanced(_) => 0,
        }
    }

    /// True for random openings.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
