//! PGN: writing games (Seven Tag Roster, `[Variant]`, `[SetUp]`/`[FEN]` for non-standard
//! starts, `[Termination]`; with [`PgnGame::write_annotated`] also NAGs, comments and
//! variations after moves, as an analysis writes them) and reading them back (comments, NAGs
//! and variations skipped).
//!
//! A game from the Balanced start ([`crate::start`]) records White's removal in a tag,
//! `[Balanced "e2"]` (the removed pawn's square), followed by `[SetUp "1"]` and the `[FEN]` of
//! the position after the removal; the movetext starts with Black's first move. Any PGN reader
//! can replay such a game as an ordinary one from that FEN; this crate reads it back as the
//! setup position plus the removal and checks that the FEN is the position the removal leaves.
//! `[Balanced "-"]` (no `[FEN]`) is a game still in the setup phase, whose movetext may start
//! with the removal in SAN (`@e2`).
//!
//! A game of the bomb variant ([`crate::bomb`]) records the two hidden choices in tags,
//! `[WhiteBomb "d1"]` and `[BlackBomb "g8"]` (the chosen pieces' squares, revealed when the
//! game is written, so write it when the game is over; `-` for a side that has not chosen
//! yet), and its movetext starts with White's first move; detonations are SAN tokens such as
//! `Qd1*`. A `[FEN]` is written only for a game that does not start at the standard setup
//! position; it carries its own bombs field (e.g. `bombs:?,?`).

use crate::color::Color;
use crate::fen::{FenError, STARTING_FEN};
use crate::mv::Move;
use crate::position::Position;
use crate::san::SanError;
use crate::setup::{CastlingMode, Setup};
use crate::square::Square;
use crate::start::Start;
use crate::variant::{UnknownVariant, Variant};
use std::fmt;

/// A game as stored in PGN.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgnGame {
    /// Tags in file order (the Seven Tag Roster is written first regardless).
    pub tags: Vec<(String, String)>,
    /// The start position.
    pub initial: Position,
    /// The moves, all legal from `initial`.
    pub moves: Vec<Move>,
    /// `1-0`, `0-1`, `1/2-1/2` or `*`.
    pub result: String,
}

const ROSTER: [(&str, &str); 6] = [
    ("Event", "?"),
    ("Site", "?"),
    ("Date", "????.??.??"),
    ("Round", "?"),
    ("White", "?"),
    ("Black", "?"),
];

impl PgnGame {
    /// An empty game from `initial`, result `*`.
    pub fn new(initial: Position) -> PgnGame {
        PgnGame { tags: Vec::new(), initial, moves: Vec::new(), result: "*".into() }
    }

    /// The value of tag `name`.
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// Sets (or replaces) tag `name`.
    pub fn set_tag(&mut self, name: &str, value: impl Into<String>) {
        let value = value.into();
        match self.tags.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = value,
            None => self.tags.push((name.to_string(), value)),
        }
    }

    /// The position after all moves.
    pub fn final_position(&self) -> Position {
        let mut pos = self.initial;
        for &m in &self.moves {
            pos.play_unchecked(m);
        }
        pos
    }

    /// Writes the game as PGN text (ends with a blank line).
    pub fn write(&self) -> String {
        self.write_annotated(&[])
    }

    /// Writes the game as PGN text with `notes[i]` (NAGs, a comment, a variation) after move
    /// `i` of [`PgnGame::moves`]; missing notes are empty. Notes of moves written in tags (the
    /// Balanced start's removal, the bomb variant's choices) are not written.
    pub fn write_annotated(&self, notes: &[MoveNote]) -> String {
        let mut out = String::new();
        let mut tag = |name: &str, value: &str| {
            out.push_str(&format!(
                "[{} \"{}\"]\n",
                name,
                value.replace('\\', "\\\\").replace('"', "\\\"")
            ));
        };
        for (name, default) in ROSTER {
            tag(name, self.tag(name).unwrap_or(default));
        }
        // Only the four PGN result tokens can end the movetext; anything else is written as "*".
        let result = if is_result(&self.result) { self.result.as_str() } else { "*" };
        tag("Result", result);
        let variant = match self.initial.castling_mode() {
            CastlingMode::Standard => self.initial.variant().pgn_name().to_string(),
            CastlingMode::Chess960 => format!("{}960", self.initial.variant().pgn_name()),
        };
        tag("Variant", self.tag("Variant").unwrap_or(&variant));
        // The Balanced start: the removal goes into a tag and the movetext starts after it.
        // The bomb variant: so do the two choices.
        let mut movetext_start = self.initial;
        let mut moves = self.moves.as_slice();
        let bombs = self.initial.variant().rules().hidden_bombs;
        if bombs {
            while movetext_start.is_setup_phase() {
                let name = bomb_tag(movetext_start.turn());
                match moves.split_first() {
                    Some((&choice, rest)) if choice.is_bomb_choice() => {
                        tag(name, &choice.from().to_string());
                        movetext_start.play_unchecked(choice);
                        moves = rest;
                    }
                    _ => {
                        tag(name, "-");
                        if movetext_start.turn() == Color::White {
                            tag(bomb_tag(Color::Black), "-");
                        }
                        break;
                    }
                }
            }
        } else if self.initial.is_setup_phase() {
            match moves.split_first() {
                Some((&removal, rest)) if removal.is_removal() => {
                    tag("Balanced", &removal.from().to_string());
                    movetext_start.play_unchecked(removal);
                    moves = rest;
                }
                _ => tag("Balanced", "-"),
            }
        }
        if bombs {
            // The choices are in the tags: the [FEN] is the position before them.
            if self.initial != Position::new(crate::Variant::Bomb) {
                tag("SetUp", "1");
                tag("FEN", &self.initial.fen());
            }
        } else {
            let standard_start = movetext_start.fen() == STARTING_FEN
                && movetext_start.castling_mode() == CastlingMode::Standard;
            if !standard_start && !movetext_start.is_setup_phase() {
                tag("SetUp", "1");
                tag("FEN", &movetext_start.fen());
            }
        }
        for (name, value) in &self.tags {
            let written = ROSTER.iter().any(|(n, _)| n == name)
                || matches!(
                    name.as_str(),
                    "Result" | "Variant" | "SetUp" | "FEN" | "Balanced" | "WhiteBomb" | "BlackBomb"
                );
            if !written {
                tag(name, value);
            }
        }
        out.push('\n');

        let mut tokens = Vec::with_capacity(moves.len() * 3 / 2 + 1);
        let mut pos = movetext_start;
        // Notes are indexed by `self.moves`; the movetext starts `skipped` moves in.
        let skipped = self.moves.len() - moves.len();
        let mut numbered = false;
        for (i, &m) in moves.iter().enumerate() {
            push_move(&mut tokens, &pos, m, !numbered);
            let note = notes.get(skipped + i);
            let before = pos;
            pos.play_unchecked(m);
            numbered = true;
            let Some(note) = note else { continue };
            tokens.extend(note.nags.iter().map(|nag| format!("${nag}")));
            let comment = note.comment.replace('}', ")");
            if !comment.trim().is_empty() {
                tokens.push(format!("{{ {} }}", comment.trim()));
                numbered = false;
            }
            let mut line = before;
            let mut variation = Vec::new();
            for &v in &note.variation {
                if !line.legal_moves().contains(&v) {
                    break;
                }
                let first = variation.is_empty();
                push_move(&mut variation, &line, v, first);
                line.play_unchecked(v);
            }
            if !variation.is_empty() {
                variation[0].insert(0, '(');
                if let Some(last) = variation.last_mut() {
                    last.push(')');
                }
                tokens.extend(variation);
                numbered = false;
            }
        }
        tokens.push(result.to_string());
        let mut line_len = 0;
        for token in tokens {
            if line_len > 0 && line_len + 1 + token.len() > 79 {
                out.push('\n');
                line_len = 0;
            } else if line_len > 0 {
                out.push(' ');
                line_len += 1;
            }
            line_len += token.len();
            out.push_str(&token);
        }
        out.push_str("\n\n");
        out
    }
}

/// What [`PgnGame::write_annotated`] writes after a move.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MoveNote {
    /// Numeric annotation glyphs, written `$n` (`$2` mistake, `$4` blunder, `$6` dubious).
    pub nags: Vec<u8>,
    /// A comment, written in braces (a `}` in it becomes `)`); empty: none.
    pub comment: String,
    /// A variation in place of the move: moves from the position before it, written as far
    /// as they are legal; empty: none.
    pub variation: Vec<Move>,
}

/// Pushes the SAN of `m` in `pos`, after its move number when White moves or when
/// `number_black` asks for Black's (`12...`: at the start and after a comment or variation).
fn push_move(tokens: &mut Vec<String>, pos: &Position, m: Move, number_black: bool) {
    if pos.turn() == Color::White {
        tokens.push(format!("{}.", pos.fullmoves()));
    } else if number_black {
        tokens.push(format!("{}...", pos.fullmoves()));
    }
    tokens.push(pos.san(m));
}

/// Why a game in a PGN could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PgnErrorKind {
    /// A malformed tag pair.
    Tag(String),
    /// An unknown `[Variant]`.
    Variant(UnknownVariant),
    /// A bad `[FEN]`.
    Fen(FenError),
    /// A bad `[Balanced]` tag (not a square, not a pawn's square, or a `[FEN]` that is not the
    /// position the removal leaves).
    Balanced(String),
    /// A bad `[WhiteBomb]`/`[BlackBomb]` tag (not a square, or not a piece its side could
    /// choose).
    Bomb(String),
    /// A move that does not parse or is illegal.
    Move {
        /// 1-based half-move number within the game.
        ply: usize,
        /// The error.
        error: SanError,
    },
}

/// A game of a PGN that could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgnError {
    /// 1-based index of the game in the text.
    pub game: usize,
    /// What went wrong.
    pub kind: PgnErrorKind,
}

impl fmt::Display for PgnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pgn game {}: ", self.game)?;
        match &self.kind {
            PgnErrorKind::Tag(t) => write!(f, "malformed tag '{t}'"),
            PgnErrorKind::Variant(e) => e.fmt(f),
            PgnErrorKind::Fen(e) => e.fmt(f),
            PgnErrorKind::Balanced(e) => write!(f, "[Balanced]: {e}"),
            PgnErrorKind::Bomb(e) => write!(f, "bomb tags: {e}"),
            PgnErrorKind::Move { ply, error } => write!(f, "ply {ply}: {error}"),
        }
    }
}

impl std::error::Error for PgnError {}

/// Raw tokens of one game.
#[derive(Default)]
struct RawGame {
    tags: Vec<(String, String)>,
    bad_tag: Option<String>,
    sans: Vec<String>,
    result: Option<String>,
}

impl RawGame {
    fn is_empty(&self) -> bool {
        self.tags.is_empty()
            && self.sans.is_empty()
            && self.result.is_none()
            && self.bad_tag.is_none()
    }
}

fn parse_tag(inner: &str) -> Option<(String, String)> {
    let inner = inner.trim();
    let name_end = inner.find(|c: char| c.is_whitespace())?;
    let name = &inner[..name_end];
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let rest = inner[name_end..].trim();
    let body = rest.strip_prefix('"')?.strip_suffix('"')?;
    let mut value = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            value.push(chars.next()?);
        } else {
            value.push(c);
        }
    }
    Some((name.to_string(), value))
}

fn is_result(token: &str) -> bool {
    matches!(token, "1-0" | "0-1" | "1/2-1/2" | "*")
}

fn split_games(text: &str) -> Vec<RawGame> {
    let mut games = Vec::new();
    let mut game = RawGame::default();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let mut depth = 0usize; // variation nesting
    while i < chars.len() {
        let c = chars[i];
        match c {
            '[' if depth == 0 => {
                if !game.sans.is_empty() || game.result.is_some() {
                    games.push(std::mem::take(&mut game));
                }
                let start = i + 1;
                let mut j = start;
                let mut in_string = false;
                while j < chars.len() {
                    match chars[j] {
                        '\\' if in_string => j += 1,
                        '"' => in_string = !in_string,
                        ']' if !in_string => break,
                        '\n' if !in_string => break,
                        _ => {}
                    }
                    j += 1;
                }
                let inner: String = chars[start..j.min(chars.len())].iter().collect();
                match parse_tag(&inner) {
                    Some(tag) => game.tags.push(tag),
                    None => {
                        game.bad_tag.get_or_insert(inner);
                    }
                }
                i = j + 1;
            }
            '{' => {
                while i < chars.len() && chars[i] != '}' {
                    i += 1;
                }
                i += 1;
            }
            ';' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '%' if i == 0 || chars[i - 1] == '\n' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '(' => {
                depth += 1;
                i += 1;
            }
            ')' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            c if c.is_whitespace() => i += 1,
            _ => {
                let start = i;
                while i < chars.len() && !chars[i].is_whitespace() && !"{}();[".contains(chars[i]) {
                    i += 1;
                }
                if i == start {
                    // A stray closing bracket (or '[' inside a variation): skip it.
                    i += 1;
                    continue;
                }
                if depth > 0 {
                    continue;
                }
                let raw: String = chars[start..i].iter().collect();
                let token = if is_result(&raw) {
                    raw
                } else {
                    // Strip a move number, alone or glued to the move ("12.", "12.e4", "12...e5").
                    let digits = raw.trim_start_matches(|c: char| c.is_ascii_digit());
                    if digits.len() < raw.len() && digits.starts_with('.') {
                        let rest = digits.trim_start_matches('.');
                        if rest.is_empty() {
                            continue;
                        }
                        rest.to_string()
                    } else {
                        raw
                    }
                };
                if is_result(&token) {
                    game.result = Some(token);
                    games.push(std::mem::take(&mut game));
                } else if token.starts_with('$') || token == "--" {
                    // NAG or null move marker: skipped (a null move makes the game unreadable
                    // below, as it should).
                    if token == "--" {
                        game.sans.push(token);
                    }
                } else {
                    game.sans.push(token);
                }
            }
        }
    }
    if !game.is_empty() {
        games.push(game);
    }
    games
}

/// Reads every game of a PGN text. Each game is read on its own: a bad game yields an error
/// and the following games are still read.
pub fn read_pgn(text: &str) -> Vec<Result<PgnGame, PgnError>> {
    // A UTF-8 byte-order mark (some editors write one) is not part of the first tag.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    split_games(text).into_iter().enumerate().map(|(i, raw)| build_game(i + 1, raw)).collect()
}

fn build_game(index: usize, raw: RawGame) -> Result<PgnGame, PgnError> {
    let err = |kind| PgnError { game: index, kind };
    if let Some(bad) = raw.bad_tag {
        return Err(err(PgnErrorKind::Tag(bad.chars().take(80).collect())));
    }
    let tag = |name: &str| raw.tags.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str());
    let variant = match tag("Variant") {
        None => Variant::Atomic,
        Some(v) => Variant::from_name(v)
            .ok_or_else(|| err(PgnErrorKind::Variant(UnknownVariant(v.into()))))?,
    };
    // "Atomic960" (and the like) asks for Chess960 castling; otherwise the FEN decides.
    let chess960 = tag("Variant").is_some_and(|v| v.trim().ends_with("960"));
    if variant.rules().hidden_bombs {
        return build_bomb_game(index, &raw, variant, chess960);
    }
    if let Some(value) = tag("Balanced") {
        return build_balanced_game(index, &raw, variant, chess960, value);
    }
    let initial = match tag("FEN") {
        Some(fen) => {
            let setup = Setup::from_fen(fen).map_err(|e| err(PgnErrorKind::Fen(e.into())))?;
            let mode = if chess960 { CastlingMode::Chess960 } else { CastlingMode::detect(&setup) };
            Position::from_setup(setup, variant, mode)
                .map_err(|e| err(PgnErrorKind::Fen(e.into())))?
        }
        None if chess960 => Position::new(variant)
            .with_castling_mode(CastlingMode::Chess960)
            .map_err(|e| err(PgnErrorKind::Fen(e.into())))?,
        None => Position::new(variant),
    };
    let moves = read_moves(index, &raw, initial, Vec::new())?;
    Ok(PgnGame { result: result_of(&raw), tags: raw.tags, initial, moves })
}

/// A game with a `[Balanced]` tag: the setup position, the removal the tag names (if any) and
/// the moves after it. The `[FEN]`, when present, must be the position after the removal.
fn build_balanced_game(
    index: usize,
    raw: &RawGame,
    variant: Variant,
    chess960: bool,
    value: &str,
) -> Result<PgnGame, PgnError> {
    let err = |kind| PgnError { game: index, kind };
    let bad = |why: String| err(PgnErrorKind::Balanced(why));
    let tag = |name: &str| raw.tags.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str());
    let mode = if chess960 { CastlingMode::Chess960 } else { CastlingMode::Standard };
    let initial = Position::start(variant, Start::Balanced)
        .with_castling_mode(mode)
        .map_err(|e| err(PgnErrorKind::Fen(e.into())))?;
    let value = value.trim();
    if matches!(value, "-" | "?" | "") {
        if tag("FEN").is_some() {
            return Err(bad("a game still in the setup phase ('-') cannot have a [FEN]".into()));
        }
        let moves = read_moves(index, raw, initial, Vec::new())?;
        return Ok(PgnGame { result: result_of(raw), tags: raw.tags.clone(), initial, moves });
    }
    let short: String = value.chars().take(16).collect();
    let square: Square =
        value.parse().map_err(|_| bad(format!("'{short}' is not a square (e.g. e2)")))?;
    let removal = Move::removal(square);
    let after = initial
        .play(removal)
        .map_err(|_| bad(format!("{square} holds no pawn White could remove")))?;
    if let Some(fen) = tag("FEN") {
        let given = Position::from_fen_with_mode(fen, variant, mode)
            .map_err(|e| err(PgnErrorKind::Fen(e)))?;
        if given != after {
            return Err(bad(format!(
                "[FEN] {} is not the position after removing the {square} pawn ({})",
                given.fen(),
                after.fen()
            )));
        }
    }
    let moves = read_moves(index, raw, after, vec![removal])?;
    Ok(PgnGame { result: result_of(raw), tags: raw.tags.clone(), initial, moves })
}

/// The name of the tag of `color`'s bomb.
fn bomb_tag(color: Color) -> &'static str {
    color.fold("WhiteBomb", "BlackBomb")
}

/// A game of the bomb variant: its start (a `[FEN]` with a bombs field, or the standard setup
/// position), the choices its `[WhiteBomb]`/`[BlackBomb]` tags name, and the movetext.
fn build_bomb_game(
    index: usize,
    raw: &RawGame,
    variant: Variant,
    chess960: bool,
) -> Result<PgnGame, PgnError> {
    let err = |kind| PgnError { game: index, kind };
    let tag = |name: &str| raw.tags.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str());
    let initial = match tag("FEN") {
        Some(fen) if chess960 => Position::from_fen_with_mode(fen, variant, CastlingMode::Chess960),
        Some(fen) => Position::from_fen(fen, variant),
        None if chess960 => Position::new(variant)
            .with_castling_mode(CastlingMode::Chess960)
            .map_err(crate::FenError::from),
        None => Ok(Position::new(variant)),
    }
    .map_err(|e| err(PgnErrorKind::Fen(e)))?;
    let mut pos = initial;
    let mut moves = Vec::new();
    while pos.is_setup_phase() {
        let name = bomb_tag(pos.turn());
        let value = match tag(name).map(str::trim) {
            None | Some("-" | "?" | "") => break,
            Some(value) => value,
        };
        let short: String = value.chars().take(16).collect();
        let square: Square = value
            .parse()
            .map_err(|_| err(PgnErrorKind::Bomb(format!("[{name}] '{short}' is not a square"))))?;
        let choice = Move::bomb_choice(square);
        pos = pos.play(choice).map_err(|_| {
            err(PgnErrorKind::Bomb(format!(
                "[{name}] {square} holds no piece {} could choose",
                pos.turn()
            )))
        })?;
        moves.push(choice);
    }
    let moves = read_moves(index, raw, pos, moves)?;
    Ok(PgnGame { result: result_of(raw), tags: raw.tags.clone(), initial, moves })
}

/// Appends the game's SAN moves, read from `start`, to `moves`.
fn read_moves(
    index: usize,
    raw: &RawGame,
    start: Position,
    mut moves: Vec<Move>,
) -> Result<Vec<Move>, PgnError> {
    let mut pos = start;
    let first_ply = moves.len();
    moves.reserve(raw.sans.len());
    for (ply, san) in raw.sans.iter().enumerate() {
        let m = pos.parse_san(san).map_err(|error| PgnError {
            game: index,
            kind: PgnErrorKind::Move { ply: first_ply + ply + 1, error },
        })?;
        pos.play_unchecked(m);
        moves.push(m);
    }
    Ok(moves)
}

/// The game's result: its termination marker, else a valid `[Result]` tag, else `*`.
fn result_of(raw: &RawGame) -> String {
    let tag = raw.tags.iter().find(|(n, _)| n == "Result").map(|(_, v)| v.as_str());
    raw.result
        .clone()
        .or_else(|| tag.filter(|r| is_result(r)).map(str::to_string))
        .unwrap_or_else(|| "*".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regression_result_tag_must_be_a_result_token() {
        // Found by the pgn fuzz target: a free-form [Result] was written as a move.
        let games = read_pgn("[Result \"foo\"]\n\n1. e4 e5\n");
        let game = games[0].as_ref().unwrap();
        assert_eq!(game.result, "*");
        let again = read_pgn(&game.write());
        assert_eq!(again[0].as_ref().unwrap().moves.len(), 2);
        let mut odd = game.clone();
        odd.result = "0-0".into();
        assert_eq!(read_pgn(&odd.write())[0].as_ref().unwrap().result, "*");
    }

    #[test]
    fn regression_stray_closing_brackets_do_not_hang_the_reader() {
        // Found by tests/no_panic.rs: a '}' or ')' outside a comment made no progress.
        for text in ["}", "1. e4 } e5 *", "[Event \"x\"]\n\n( [ ) 1. e4 *", "]]]"] {
            let _ = read_pgn(text);
        }
        let games = read_pgn("1. e4 } e5 *");
        assert_eq!(games[0].as_ref().unwrap().moves.len(), 2);
    }
}
