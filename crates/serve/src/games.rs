//! Games for the viewer: the game files of a run (self-play shards, gating and evaluation PGNs,
//! games played against a network), the games in one file, and one game move by move.
//!
//! Every game is replayed on the rules crate, so SAN, the FEN after each ply and the squares a
//! capture blew up come from the same rules that produced the game, for every variant. A move
//! that is not legal where it stands (a damaged file) is an error naming the ply, never a
//! panic. A self-play move that was a training target carries the search's policy target
//! (normalised to sum to 1, largest first) and root WDL for the side to move.

use crate::rundir::{self, Entry};
use atomzero_replay::{GameRecord, read_shard};
use atomzero_rules::{Bitboard, CastlingMode, Color, Move, PgnGame, Position, Start, read_pgn};
use serde::Serialize;
use std::path::Path;

/// The kinds of game file, by where they are in the run directory.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileKind {
    /// `selfplay/genNNNNNN-SSSSSS.shard`.
    Selfplay,
    /// `eval/gate-NNNNNN.pgn`.
    Gate,
    /// `eval/*.pgn` other than gating.
    Eval,
    /// `play/*.pgn`: games played on the play page.
    Play,
}

/// A game file of the run.
#[derive(Clone, Debug, Serialize)]
pub struct GameFile {
    /// Path relative to the run directory.
    pub file: String,
    /// Its kind.
    pub kind: FileKind,
    /// The generation in its name, if any.
    pub generation: Option<u64>,
    /// Size in bytes.
    pub bytes: u64,
}

/// The kind of `relative` if it is a game file the viewer reads.
pub fn kind_of(relative: &str) -> Option<FileKind> {
    let (dir, name) = relative.split_once('/')?;
    match dir {
        "selfplay" if name.ends_with(".shard") => Some(FileKind::Selfplay),
        "eval" if name.starts_with("gate-") && name.ends_with(".pgn") => Some(FileKind::Gate),
        "eval" if name.ends_with(".pgn") => Some(FileKind::Eval),
        "play" if name.ends_with(".pgn") => Some(FileKind::Play),
        _ => None,
    }
}

/// The first run of digits in a file name (`gen000003-000001.shard` → 3).
fn generation_in(name: &str) -> Option<u64> {
    let start = name.find(|c: char| c.is_ascii_digit())?;
    let digits: String = name[start..].chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Every game file of the run, self-play first, each group in name order.
pub fn list_files(root: &Path) -> Vec<GameFile> {
    let entries: Vec<Entry> = [("selfplay", ".shard"), ("eval", ".pgn"), ("play", ".pgn")]
        .into_iter()
        .flat_map(|(dir, suffix)| rundir::list(root, dir, suffix))
        .collect();
    entries
        .into_iter()
        .filter_map(|e| {
            let kind = kind_of(&e.relative)?;
            let name = e.relative.rsplit('/').next().unwrap_or(&e.relative);
            let generation = match kind {
                FileKind::Play => None,
                _ => generation_in(name),
            };
            Some(GameFile { file: e.relative, kind, generation, bytes: e.len })
        })
        .collect()
}

/// A game as the viewer lists it.
#[derive(Clone, Debug, Serialize)]
pub struct GameHeader {
    /// Index in its file (0-based).
    pub index: usize,
    /// White's name.
    pub white: String,
    /// Black's name.
    pub black: String,
    /// `1-0`, `0-1`, `1/2-1/2` or `*`.
    pub result: String,
    /// Why it ended.
    pub termination: String,
    /// Plies played.
    pub plies: usize,
}

/// One ply of a game.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PlyView {
    /// The move in UCI.
    pub uci: String,
    /// The move in SAN.
    pub san: String,
    /// Its from-square (for highlighting).
    pub from: String,
    /// Its to-square (the king's destination for castling in standard mode).
    pub to: String,
    /// The squares the move blew up (empty if it exploded nothing).
    pub explosion: Vec<String>,
    /// The FEN after the move.
    pub fen: String,
    /// The search of the position before the move, where recorded.
    pub search: Option<SearchView>,
}

/// What the search saw before a move.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SearchView {
    /// Root win/draw/loss for the side to move.
    pub wdl: [f32; 3],
    /// The policy target (visit distribution or improved policy), normalised, largest first.
    pub policy: Vec<PolicyEntry>,
}

/// One move of a policy target.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PolicyEntry {
    /// UCI.
    pub uci: String,
    /// SAN.
    pub san: String,
    /// From-square.
    pub from: String,
    /// To-square.
    pub to: String,
    /// Share of the target (0..1).
    pub weight: f32,
    /// Visits, where the search reports them (the play page's engine moves).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub visits: Option<u32>,
}

/// A whole game, ply by ply.
#[derive(Clone, Debug, Serialize)]
pub struct GameView {
    /// Its file.
    pub file: String,
    /// Index in the file, names, result and termination (flattened: `index` appears once).
    #[serde(flatten)]
    pub header: GameHeader,
    /// The variant's name.
    pub variant: String,
    /// The start position.
    pub start_fen: String,
    /// Every ply.
    pub plies: Vec<PlyView>,
    /// PGN tags (for PGN games).
    pub tags: Vec<(String, String)>,
}

/// A game could not be shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GameError {
    /// Not a game file of the run, or no game with that index.
    NotFound(String),
    /// The file is damaged.
    Corrupt(String),
    /// The file could not be read (the run directory is unreadable).
    Unreadable(String),
}

impl std::fmt::Display for GameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GameError::NotFound(m) | GameError::Corrupt(m) | GameError::Unreadable(m) => {
                f.write_str(m)
            }
        }
    }
}

impl std::error::Error for GameError {}

/// The squares `m` blows up in `pos` (the capture square and every piece the blast removes;
/// empty for a move that explodes nothing, like a pawn's capture in pawnblast).
pub fn explosion(pos: &Position, m: Move) -> Bitboard {
    if !pos.is_capture(m) {
        return Bitboard::EMPTY;
    }
    let Some(role) = pos.moving_role(m) else { return Bitboard::EMPTY };
    let blast = pos.blast(role, m.to());
    if blast.is_empty() {
        return Bitboard::EMPTY;
    }
    // Squares emptied by the move (the en-passant victim included), the centre, never the
    // square the capturer left.
    let mut after = *pos;
    after.play_unchecked(m);
    let emptied = pos.board().occupied() & !after.board().occupied();
    (emptied | blast).with(m.to()).without(m.from())
}

fn square_names(bb: Bitboard) -> Vec<String> {
    bb.into_iter().map(|sq| sq.to_string()).collect()
}

/// The from and to squares of a UCI move string.
fn uci_squares(uci: &str) -> (String, String) {
    // A removal of the Balanced start (`@e2`) is from and to the pawn's square.
    if let Some(square) = uci.strip_prefix('@') {
        return (square.to_string(), square.to_string());
    }
    (uci.get(0..2).unwrap_or_default().to_string(), uci.get(2..4).unwrap_or_default().to_string())
}

/// A FEN the board can draw: the Balanced start's setup position (FEN keyword `balanced`) is
/// drawn as the standard start, White to choose a pawn.
pub fn board_fen(pos: &Position) -> String {
    if pos.is_setup_phase() {
        return Position::start(pos.variant(), Start::Standard).fen();
    }
    pos.fen()
}

/// One ply: `m` played in `pos` (which must allow it), with `search` attached.
pub fn ply_view(pos: &Position, m: Move, search: Option<SearchView>) -> (PlyView, Position) {
    let uci = pos.uci(m);
    let (from, to) = uci_squares(&uci);
    let san = pos.san(m);
    let explosion = square_names(explosion(pos, m));
    let mut next = *pos;
    next.play_unchecked(m);
    (PlyView { uci, san, from, to, explosion, fen: board_fen(&next), search }, next)
}

/// A policy target over the legal moves of `pos`, normalised and largest first.
pub fn policy_view(pos: &Position, policy: &[(Move, f32, Option<u32>)]) -> Vec<PolicyEntry> {
    let total: f32 = policy.iter().map(|p| p.1.max(0.0)).sum();
    let mut entries: Vec<PolicyEntry> = policy
        .iter()
        .filter(|p| p.1 > 0.0 && pos.is_legal(p.0))
        .map(|&(m, weight, visits)| {
            let uci = pos.uci(m);
            let (from, to) = uci_squares(&uci);
            PolicyEntry {
                san: pos.san(m),
                uci,
                from,
                to,
                weight: if total > 0.0 { weight / total } else { 0.0 },
                visits,
            }
        })
        .collect();
    entries.sort_by(|a, b| b.weight.total_cmp(&a.weight));
    entries
}

fn result_of(winner: Option<Color>) -> &'static str {
    match winner {
        Some(Color::White) => "1-0",
        Some(Color::Black) => "0-1",
        None => "1/2-1/2",
    }
}

/// The games of one game file: shard records or PGN games.
enum Games {
    Shard { model: String, records: Vec<GameRecord> },
    Pgn(Vec<Result<PgnGame, String>>),
}

fn load(root: &Path, relative: &str) -> Result<Games, GameError> {
    let not_found = || GameError::NotFound(format!("no game file '{relative}' in the run"));
    let kind = kind_of(relative).ok_or_else(not_found)?;
    let path = rundir::resolve(root, relative).ok_or_else(not_found)?;
    match kind {
        FileKind::Selfplay => {
            let (meta, records) = read_shard(&path).map_err(|e| match e {
                atomzero_replay::ShardError::Io { source, .. } => {
                    GameError::Unreadable(format!("{relative}: {source}"))
                }
                e => GameError::Corrupt(format!("{relative}: {}", e.problem())),
            })?;
            Ok(Games::Shard { model: meta.model, records })
        }
        _ => {
            let text = std::fs::read_to_string(&path).map_err(|e| {
                if e.kind() == std::io::ErrorKind::InvalidData {
                    GameError::Corrupt(format!("{relative}: not UTF-8 text"))
                } else {
                    GameError::Unreadable(format!("{relative}: {e}"))
                }
            })?;
            Ok(Games::Pgn(
                read_pgn(&text).into_iter().map(|g| g.map_err(|e| e.to_string())).collect(),
            ))
        }
    }
}

/// The self-play network's name as players are named elsewhere (`models/000003.safetensors` → `000003`).
fn model_name(model: &str) -> String {
    let file = model.rsplit(['/', '\\']).next().unwrap_or(model);
    file.strip_suffix(".safetensors").unwrap_or(file).to_string()
}

fn shard_header(index: usize, model: &str, record: &GameRecord) -> GameHeader {
    let name = model_name(model);
    GameHeader {
        index,
        white: name.clone(),
        black: name,
        result: result_of(record.winner).to_string(),
        termination: record.reason.description().to_string(),
        plies: record.moves.len(),
    }
}

fn pgn_header(index: usize, game: &Result<PgnGame, String>) -> GameHeader {
    match game {
        Ok(g) => GameHeader {
            index,
            white: g.tag("White").unwrap_or("?").to_string(),
            black: g.tag("Black").unwrap_or("?").to_string(),
            result: g.result.clone(),
            termination: g.tag("Termination").unwrap_or("").to_string(),
            plies: g.moves.len(),
        },
        Err(e) => GameHeader {
            index,
            white: "?".into(),
            black: "?".into(),
            result: "*".into(),
            termination: format!("unreadable: {e}"),
            plies: 0,
        },
    }
}

/// The games of `relative` (a game file of the run).
pub fn list_games(root: &Path, relative: &str) -> Result<Vec<GameHeader>, GameError> {
    Ok(match load(root, relative)? {
        Games::Shard { model, records } => {
            records.iter().enumerate().map(|(i, r)| shard_header(i, &model, r)).collect()
        }
        Games::Pgn(games) => games.iter().enumerate().map(|(i, g)| pgn_header(i, g)).collect(),
    })
}

/// Game `index` of `relative`, ply by ply.
pub fn game_view(root: &Path, relative: &str, index: usize) -> Result<GameView, GameError> {
    let missing = || GameError::NotFound(format!("{relative} has no game {index}"));
    let corrupt = |what: String| GameError::Corrupt(format!("{relative}, game {index}: {what}"));
    match load(root, relative)? {
        Games::Shard { model, records } => {
            let record = records.get(index).ok_or_else(missing)?;
            let mode =
                if record.chess960 { CastlingMode::Chess960 } else { CastlingMode::Standard };
            let start = Position::from_fen_with_mode(&record.start_fen, record.variant, mode)
                .map_err(|e| corrupt(format!("start position: {e}")))?;
            let mut pos = start;
            let mut plies = Vec::with_capacity(record.moves.len());
            for (ply, mr) in record.moves.iter().enumerate() {
                if !pos.is_legal(mr.mv) {
                    return Err(corrupt(format!("ply {} is not a legal move", ply + 1)));
                }
                let search = mr.target.as_ref().map(|t| {
                    let policy: Vec<(Move, f32, Option<u32>)> =
                        t.policy.iter().map(|&(m, w)| (m, w, None)).collect();
                    SearchView { wdl: t.root_wdl, policy: policy_view(&pos, &policy) }
                });
                let (view, next) = ply_view(&pos, mr.mv, search);
                plies.push(view);
                pos = next;
            }
            Ok(GameView {
                file: relative.to_string(),
                header: shard_header(index, &model, record),
                variant: record.variant.name().to_string(),
                start_fen: board_fen(&start),
                plies,
                tags: Vec::new(),
            })
        }
        Games::Pgn(games) => {
            let entry = games.get(index).ok_or_else(missing)?;
            let game = entry.as_ref().map_err(|e| corrupt(e.clone()))?;
            let mut pos = game.initial;
            let mut plies = Vec::with_capacity(game.moves.len());
            for (ply, &m) in game.moves.iter().enumerate() {
                if !pos.is_legal(m) {
                    return Err(corrupt(format!("ply {} is not a legal move", ply + 1)));
                }
                let (view, next) = ply_view(&pos, m, None);
                plies.push(view);
                pos = next;
            }
            Ok(GameView {
                file: relative.to_string(),
                header: pgn_header(index, entry),
                variant: game.initial.variant().name().to_string(),
                start_fen: board_fen(&game.initial),
                plies,
                tags: game.tags.clone(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use atomzero_rules::Variant;

    #[test]
    fn the_balanced_start_is_drawn_as_the_standard_board_and_a_removal_marks_its_square() {
        let setup = Position::from_fen("balanced", Variant::Atomic).unwrap();
        assert!(board_fen(&setup).starts_with("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w "));
        let removal = *setup.legal_moves().iter().find(|m| setup.uci(**m) == "@d7").unwrap();
        let (view, next) = ply_view(&setup, removal, None);
        assert_eq!((view.from.as_str(), view.to.as_str()), ("d7", "d7"));
        assert!(
            view.fen.starts_with("rnbqkbnr/ppp1pppp/8/8/8/8/PPPPPPPP/RNBQKBNR b "),
            "{}",
            view.fen
        );
        assert_eq!(view.fen, next.fen());
    }
    #[test]
    fn explosion_lists_the_centre_and_the_removed_pieces() {
        // White's knight takes on d7: the knight, the pawn on d7 and the non-pawns around blow
        // up; pawns next to it stay.
        let pos = Position::from_fen(
            "rnbqkbnr/pppppppp/8/2N5/8/8/PPPPPPPP/R1BQKBNR w KQkq - 0 1",
            Variant::Atomic,
        )
        .unwrap();
        let m = pos.parse_uci("c5d7").unwrap();
        let names = square_names(explosion(&pos, m));
        assert!(names.contains(&"d7".to_string()));
        for piece in ["c8", "d8", "e8"] {
            assert!(names.contains(&piece.to_string()), "{piece} in {names:?}");
        }
        assert!(!names.contains(&"c7".to_string()), "pawns survive atomic blasts");
        assert!(!names.contains(&"c5".to_string()), "the square the knight left");
        // A quiet move explodes nothing.
        let quiet = pos.parse_uci("e2e4").unwrap();
        assert!(explosion(&pos, quiet).is_empty());
    }

    #[test]
    fn a_pawn_capture_in_pawnblast_explodes_nothing() {
        let pos =
            Position::from_fen("4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1", Variant::Pawnblast).unwrap();
        let m = pos.parse_uci("e4d5").unwrap();
        assert!(explosion(&pos, m).is_empty());
        let pos = Position::from_fen("4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1", Variant::Atomic).unwrap();
        let m = pos.parse_uci("e4d5").unwrap();
        assert_eq!(square_names(explosion(&pos, m)), vec!["d5".to_string()]);
    }

    #[test]
    fn game_files_are_recognised_by_place_and_name() {
        assert_eq!(kind_of("selfplay/gen000001-000000.shard"), Some(FileKind::Selfplay));
        assert_eq!(kind_of("eval/gate-000002.pgn"), Some(FileKind::Gate));
        assert_eq!(kind_of("eval/eval-000002-random.pgn"), Some(FileKind::Eval));
        assert_eq!(kind_of("play/1.pgn"), Some(FileKind::Play));
        assert_eq!(kind_of("config.toml"), None);
        assert_eq!(kind_of("models/000001.safetensors"), None);
        assert_eq!(generation_in("gen000003-000001.shard"), Some(3));
        assert_eq!(generation_in("eval-000002-random.pgn"), Some(2));
    }
}
