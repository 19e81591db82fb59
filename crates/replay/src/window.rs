//! The replay window: the newest N training targets of a directory of shards, addressable by
//! index so the trainer can sample them with its own (checkpointed) random generator.

use crate::format::{GameRecord, MoveRecord, SearchTarget};
use crate::shard::{ShardError, read_shard};
use atomzero_rules::{CastlingMode, Move, Position, view_repetitions};
use std::fmt;
use std::path::{Path, PathBuf};

/// File extension of shards.
pub const SHARD_EXTENSION: &str = "shard";

/// The file name of shard `sequence` of `generation`; names sort oldest first.
pub fn shard_file_name(generation: u64, sequence: u64) -> String {
    format!("gen{generation:06}-{sequence:06}.{SHARD_EXTENSION}")
}

/// The `.shard` files of `dir` (not its subdirectories), oldest first: sorted by name, the
/// order [`shard_file_name`] gives.
pub fn shard_paths(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == SHARD_EXTENSION))
        .collect();
    paths.sort();
    Ok(paths)
}

/// Why a window could not be built.
#[derive(Debug)]
pub enum WindowError {
    /// The directory could not be listed.
    Io { path: PathBuf, source: std::io::Error },
    /// No readable shard with training targets.
    Empty { path: PathBuf, skipped: usize },
}

impl fmt::Display for WindowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WindowError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            WindowError::Empty { path, skipped } => write!(
                f,
                "{}: no training data (no readable .{SHARD_EXTENSION} files with targets; {skipped} corrupt shards skipped)",
                path.display()
            ),
        }
    }
}

impl std::error::Error for WindowError {}

/// One training example, rebuilt by replaying its game.
#[derive(Clone, Debug)]
pub struct Sample<'a> {
    /// The position.
    pub position: Position,
    /// Earlier positions, most recent first (as many as asked for and available).
    pub history: Vec<Position>,
    /// Earlier occurrences of the position in its game, as its side to move sees them
    /// (`atomzero_rules::view_repetitions`).
    pub repetitions: usize,
    /// The search's target.
    pub target: &'a SearchTarget,
    /// Game result for the side to move: win, draw, loss one-hot.
    pub result_wdl: [f32; 3],
    /// The game was cut by the ply limit (its draw is an adjudication, not a result).
    pub adjudicated: bool,
    /// The game's moves from this position on (the first is `played`).
    pub rest: &'a [MoveRecord],
    /// The move played from the position.
    pub played: Move,
    /// The opponent's reply to it, with its search target if it was a training target too
    /// (`None` when the game ended with `played`).
    pub reply: Option<&'a MoveRecord>,
}

impl Sample<'_> {
    /// The game's last position if the ply limit cut it (`None` otherwise), replayed from
    /// this one on demand: only a value target that adjudicates cut games needs it.
    pub fn cut_position(&self) -> Option<Position> {
        self.adjudicated.then(|| {
            let mut end = self.position;
            for m in self.rest {
                end.play_unchecked(m.mv);
            }
            end
        })
    }
}

/// The newest training targets of a shard directory.
#[derive(Debug)]
pub struct ReplayWindow {
    games: Vec<GameRecord>,
    /// (game index, ply) of every target in the window, oldest first.
    index: Vec<(u32, u16)>,
    /// Shards that could not be read, with the reason.
    pub skipped: Vec<ShardError>,
    /// Shards read.
    pub shards_read: usize,
}

impl ReplayWindow {
    /// Reads shards from `dir`, newest first, until `max_targets` training targets are
    /// covered; keeps exactly the newest `max_targets`. Corrupt shards are skipped and listed
    /// in [`ReplayWindow::skipped`].
    pub fn load(dir: &Path, max_targets: usize) -> Result<ReplayWindow, WindowError> {
        let paths = shard_paths(dir)
            .map_err(|source| WindowError::Io { path: dir.to_path_buf(), source })?;
        ReplayWindow::load_files(&paths, max_targets, dir)
    }

    /// Reads the shards `paths` (oldest first) from the newest backwards until `max_targets`
    /// training targets are covered, as [`ReplayWindow::load`] does for a directory; `origin`
    /// names the data in errors.
    pub fn load_files(
        paths: &[PathBuf],
        max_targets: usize,
        origin: &Path,
    ) -> Result<ReplayWindow, WindowError> {
        let dir = origin;
        let mut newest_first: Vec<Vec<GameRecord>> = Vec::new();
        let mut skipped = Vec::new();
        let mut covered = 0usize;
        for path in paths.iter().rev() {
            if covered >= max_targets {
                break;
            }
            match read_shard(path) {
                Ok((_, games)) => {
                    covered += games.iter().map(GameRecord::n_targets).sum::<usize>();
                    newest_first.push(games);
                }
                Err(e) => skipped.push(e),
            }
        }
        let shards_read = newest_first.len();
        let games: Vec<GameRecord> = newest_first.into_iter().rev().flatten().collect();
        let mut index: Vec<(u32, u16)> = Vec::new();
        for (g, game) in games.iter().enumerate() {
            for (ply, m) in game.moves.iter().enumerate() {
                if m.target.is_some() {
                    index.push((g as u32, ply as u16));
                }
            }
        }
        if index.len() > max_targets {
            index.drain(..index.len() - max_targets);
        }
        if index.is_empty() {
            return Err(WindowError::Empty { path: dir.to_path_buf(), skipped: skipped.len() });
        }
        Ok(ReplayWindow { games, index, skipped, shards_read })
    }

    /// Builds a window from games in memory (tests, benchmarks).
    pub fn from_games(games: Vec<GameRecord>) -> ReplayWindow {
        let mut index = Vec::new();
        for (g, game) in games.iter().enumerate() {
            for (ply, m) in game.moves.iter().enumerate() {
                if m.target.is_some() {
                    index.push((g as u32, ply as u16));
                }
            }
        }
        ReplayWindow { games, index, skipped: Vec::new(), shards_read: 0 }
    }

    /// Number of training targets.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// True if there is no target.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Number of games the window draws from.
    pub fn n_games(&self) -> usize {
        self.games.len()
    }

    /// Training example `i` (0 = oldest), with up to `history` earlier positions.
    /// Games were validated when read, so replaying them cannot fail.
    pub fn get(&self, i: usize, history: usize) -> Option<Sample<'_>> {
        let &(g, ply) = self.index.get(i)?;
        let game = &self.games[g as usize];
        let mode = if game.chess960 { CastlingMode::Chess960 } else { CastlingMode::Standard };
        let mut pos = Position::from_fen_with_mode(&game.start_fen, game.variant, mode).ok()?;
        let mut earlier: Vec<Position> = Vec::with_capacity(ply as usize);
        for m in &game.moves[..ply as usize] {
            earlier.push(pos);
            pos.play_unchecked(m.mv);
        }
        // As the side to move sees them (in the bomb variant, without the opponent's bomb).
        let repetitions = view_repetitions(&pos, &earlier);
        let target = game.moves[ply as usize].target.as_ref()?;
        let result_wdl = match game.winner {
            None => [0.0, 1.0, 0.0],
            Some(w) if w == pos.turn() => [1.0, 0.0, 0.0],
            Some(_) => [0.0, 0.0, 1.0],
        };
        let history = earlier.iter().rev().take(history).copied().collect();
        let adjudicated = game.reason == crate::format::EndReason::MaxLength;
        let played = game.moves[ply as usize].mv;
        let reply = game.moves.get(ply as usize + 1);
        Some(Sample {
            position: pos,
            history,
            repetitions,
            target,
            result_wdl,
            adjudicated,
            rest: &game.moves[ply as usize..],
            played,
            reply,
        })
    }

    /// The search target of training example `i` (0 = oldest), without replaying its game.
    pub fn target(&self, i: usize) -> Option<&SearchTarget> {
        let &(g, ply) = self.index.get(i)?;
        self.games[g as usize].moves[ply as usize].target.as_ref()
    }

    /// The games in the window.
    pub fn games(&self) -> &[GameRecord] {
        &self.games
    }
}
