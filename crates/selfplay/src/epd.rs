//! Opening books in EPD: the one reader that self-play, matches, gating and the gauntlet use.
//!
//! One position per line, the four FEN fields first; anything after them (EPD operations such
//! as `bm e4;`, or a FEN's move counters) and a trailing `;` are ignored; blank lines and `#`
//! comments are skipped; a UTF-8 byte-order mark at the start is skipped. Every position must
//! be legal for the variant and not already over (a game cannot start from a finished one).
//! Errors name the file (when read from one) and the 1-based line.

use atomzero_rules::{Position, Variant};
use std::fmt;
use std::path::{Path, PathBuf};

/// The positions of an EPD book, in the order of the file (never empty, none over).
#[derive(Clone, Debug, PartialEq)]
pub struct EpdBook {
    positions: Vec<Position>,
}

impl EpdBook {
    /// Reads the book at `path` for `variant`; errors name the file.
    pub fn read(path: &Path, variant: Variant) -> Result<EpdBook, EpdError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| EpdError::Io { path: path.to_path_buf(), source })?;
        EpdBook::parse(&text, variant).map_err(|error| error.in_file(path))
    }

    /// Parses EPD text for `variant` (the format in the module docs).
    pub fn parse(text: &str, variant: Variant) -> Result<EpdBook, EpdError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut positions = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> =
                line.split(';').next().unwrap_or("").split_whitespace().take(4).collect();
            let fen = fields.join(" ");
            let error = |reason: String| EpdError::Position { path: None, line: i + 1, reason };
            let pos = Position::from_fen(&fen, variant).map_err(|e| error(e.to_string()))?;
            if let Some(outcome) = pos.outcome() {
                return Err(error(format!("the game is already over ({outcome})")));
            }
            positions.push(pos);
        }
        if positions.is_empty() {
            return Err(EpdError::Empty { path: None });
        }
        Ok(EpdBook { positions })
    }

    /// The positions, in the order of the file.
    pub fn positions(&self) -> &[Position] {
        &self.positions
    }

    /// The positions, in the order of the file.
    pub fn into_positions(self) -> Vec<Position> {
        self.positions
    }
}

/// An opening book that could not be used.
#[derive(Debug)]
pub enum EpdError {
    /// The file could not be read.
    Io {
        /// The book's path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A line is not a legal position for the variant, or the game is already over there.
    Position {
        /// The book's path (`None` for text parsed by [`EpdBook::parse`]).
        path: Option<PathBuf>,
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// The book has no position.
    Empty {
        /// The book's path (`None` for text parsed by [`EpdBook::parse`]).
        path: Option<PathBuf>,
    },
}

impl EpdError {
    /// The same error, naming the file `path`.
    fn in_file(self, path: &Path) -> EpdError {
        let path = Some(path.to_path_buf());
        match self {
            EpdError::Position { line, reason, .. } => EpdError::Position { path, line, reason },
            EpdError::Empty { .. } => EpdError::Empty { path },
            io @ EpdError::Io { .. } => io,
        }
    }
}

impl fmt::Display for EpdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EpdError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            EpdError::Position { path: Some(path), line, reason } => {
                write!(f, "{}: line {line}: {reason}", path.display())
            }
            EpdError::Position { path: None, line, reason } => {
                write!(f, "book line {line}: {reason}")
            }
            EpdError::Empty { path: Some(path) } => {
                write!(f, "{}: opening book has no positions", path.display())
            }
            EpdError::Empty { path: None } => f.write_str("opening book has no positions"),
        }
    }
}

impl std::error::Error for EpdError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            EpdError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_finished_games_and_names_the_file_and_line() {
        // An operation glued to the fourth field is cut off with it.
        let start = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -; bm e5;";
        assert_eq!(EpdBook::parse(start, Variant::Atomic).unwrap().positions().len(), 1);
        // Bare kings: a legal position, but the game is over (a draw).
        let text = format!("\u{feff}{start}\n# two bare kings\n8/8/8/4k3/8/8/8/4K3 w - -\n");
        let error = EpdBook::parse(&text, Variant::Atomic).unwrap_err();
        assert!(matches!(&error, EpdError::Position { path: None, line: 3, .. }), "{error:?}");
        assert!(error.to_string().contains("already over"), "{error}");
        let error = error.in_file(Path::new("books/b.epd"));
        assert!(error.to_string().starts_with("books/b.epd: line 3: "), "{error}");
        let empty = EpdBook::parse("# nothing\n", Variant::Atomic).unwrap_err();
        assert_eq!(
            empty.in_file(Path::new("e.epd")).to_string(),
            "e.epd: opening book has no positions"
        );
    }
}
