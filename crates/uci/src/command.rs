//! Parsing one line of GUI input into a typed [`Command`].
//!
//! Following the UCI specification, unknown tokens before a command are skipped
//! (`joho debug on` is `debug on`); they, and unknown or malformed arguments of `go`, are
//! reported as [`Parsed::warnings`] while the rest of the command still counts. A line with no
//! command at all is an error, and so is a line that is not text (control characters, or
//! bytes that were not UTF-8): binary garbage that happens to end in `go` must not start a
//! search.

use std::fmt;

/// A GUI-to-engine command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// `uci`: identify and list the options.
    Uci,
    /// `debug on|off` (`debug` alone is on): with it on, each search ends with an `info
    /// string` of the evaluation cache's hits.
    Debug(bool),
    /// `isready`.
    IsReady,
    /// `setoption name <name> [value <value>]`.
    SetOption {
        /// The option's name (may contain spaces).
        name: String,
        /// The value: the rest of the line after `value`, if present.
        value: Option<String>,
    },
    /// `register ...`: accepted and ignored.
    Register,
    /// `ucinewgame`.
    UciNewGame,
    /// `position startpos|fen <fen> [moves <m1> ...]`.
    Position {
        /// The start position.
        start: StartPosition,
        /// The moves played from it, as written.
        moves: Vec<String>,
    },
    /// `go ...`.
    Go(GoParams),
    /// `stop`.
    Stop,
    /// `ponderhit`.
    PonderHit,
    /// `quit`.
    Quit,
}

/// Where `position` starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StartPosition {
    /// `startpos`.
    StartPos,
    /// `fen <fields>` (the fields joined by single spaces).
    Fen(String),
}

/// The arguments of `go`. Times are in milliseconds and may be negative (some GUIs send a
/// negative remaining time after an overstep).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GoParams {
    /// `wtime`.
    pub wtime: Option<i64>,
    /// `btime`.
    pub btime: Option<i64>,
    /// `winc`.
    pub winc: Option<i64>,
    /// `binc`.
    pub binc: Option<i64>,
    /// `movestogo`.
    pub movestogo: Option<u64>,
    /// `movetime`.
    pub movetime: Option<i64>,
    /// `nodes`.
    pub nodes: Option<u64>,
    /// `depth`.
    pub depth: Option<u64>,
    /// `mate`.
    pub mate: Option<u64>,
    /// `infinite`.
    pub infinite: bool,
    /// `ponder`.
    pub ponder: bool,
    /// `searchmoves` (as written).
    pub searchmoves: Vec<String>,
}

/// A parsed line: the command and what was skipped or ignored on the way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed {
    /// The command.
    pub command: Command,
    /// Problems that did not prevent the command (reported as `info string`).
    pub warnings: Vec<CommandError>,
}

/// A problem with a line of input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CommandError {
    /// No known command on the line.
    UnknownCommand(String),
    /// Tokens skipped before the command.
    SkippedTokens(String),
    /// A required argument is missing.
    MissingArgument {
        /// The command.
        command: &'static str,
        /// What is missing.
        what: &'static str,
    },
    /// An argument that is not understood (ignored).
    UnexpectedToken {
        /// The command.
        command: &'static str,
        /// The token.
        token: String,
    },
    /// The line holds control characters or bytes that were not UTF-8 (it is ignored
    /// whole); the excerpt is escaped.
    NotText(String),
    /// A number that does not parse (the argument is ignored).
    InvalidNumber {
        /// The argument (e.g. `wtime`).
        argument: &'static str,
        /// The text given, or empty if the number was missing.
        value: String,
    },
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommandError::UnknownCommand(line) => write!(f, "unknown command '{line}'"),
            CommandError::SkippedTokens(tokens) => write!(f, "skipped unknown tokens '{tokens}'"),
            CommandError::NotText(excerpt) => write!(
                f,
                "ignoring a line that is not text (control characters or invalid UTF-8): \"{excerpt}\""
            ),
            CommandError::MissingArgument { command, what } => {
                write!(f, "{command}: missing {what}")
            }
            CommandError::UnexpectedToken { command, token } => {
                write!(f, "{command}: ignoring unexpected token '{token}'")
            }
            CommandError::InvalidNumber { argument, value } if value.is_empty() => {
                write!(f, "go: {argument} needs a number (ignored)")
            }
            CommandError::InvalidNumber { argument, value } => {
                write!(f, "go: invalid number '{value}' for {argument} (ignored)")
            }
        }
    }
}

impl std::error::Error for CommandError {}

const COMMANDS: [&str; 11] = [
    "uci",
    "debug",
    "isready",
    "setoption",
    "register",
    "ucinewgame",
    "position",
    "go",
    "stop",
    "ponderhit",
    "quit",
];

const GO_KEYWORDS: [&str; 12] = [
    "searchmoves",
    "ponder",
    "wtime",
    "btime",
    "winc",
    "binc",
    "movestogo",
    "depth",
    "nodes",
    "mate",
    "movetime",
    "infinite",
];

/// Text shortened for error messages (input may be arbitrarily long).
fn excerpt(text: &str) -> String {
    const MAX: usize = 80;
    if text.chars().count() <= MAX {
        text.to_string()
    } else {
        format!("{}...", text.chars().take(MAX).collect::<String>())
    }
}

/// True for characters no GUI sends: control characters other than whitespace, and the
/// replacement character that stands for bytes that were not UTF-8.
fn is_garbage(c: char) -> bool {
    (c.is_control() && !c.is_ascii_whitespace()) || c == char::REPLACEMENT_CHARACTER
}

/// Parses one line. `Ok(None)` for a blank line.
pub fn parse(line: &str) -> Result<Option<Parsed>, CommandError> {
    if line.chars().any(is_garbage) {
        let escaped: String = line.trim().chars().take(40).flat_map(char::escape_debug).collect();
        return Err(CommandError::NotText(escaped));
    }
    // Tokens with their byte offsets, so that `setoption` values keep their inner spacing.
    let tokens: Vec<(usize, &str)> = line
        .split_ascii_whitespace()
        .map(|t| (t.as_ptr() as usize - line.as_ptr() as usize, t))
        .collect();
    if tokens.is_empty() {
        return Ok(None);
    }
    let Some(start) = tokens.iter().position(|(_, t)| COMMANDS.contains(t)) else {
        return Err(CommandError::UnknownCommand(excerpt(line.trim())));
    };
    let mut warnings = Vec::new();
    if start > 0 {
        let skipped: Vec<&str> = tokens[..start].iter().map(|(_, t)| *t).collect();
        warnings.push(CommandError::SkippedTokens(excerpt(&skipped.join(" "))));
    }
    let name = tokens[start].1;
    let args = &tokens[start + 1..];
    let command = match name {
        "uci" => Command::Uci,
        "debug" => Command::Debug(args.first().is_none_or(|(_, t)| *t != "off")),
        "isready" => Command::IsReady,
        "register" => Command::Register,
        "ucinewgame" => Command::UciNewGame,
        "stop" => Command::Stop,
        "ponderhit" => Command::PonderHit,
        "quit" => Command::Quit,
        "setoption" => parse_setoption(line, args)?,
        "position" => parse_position(args, &mut warnings)?,
        "go" => Command::Go(parse_go(args, &mut warnings)),
        _ => return Err(CommandError::UnknownCommand(excerpt(line.trim()))),
    };
    Ok(Some(Parsed { command, warnings }))
}

fn parse_setoption(line: &str, args: &[(usize, &str)]) -> Result<Command, CommandError> {
    let missing_name = CommandError::MissingArgument { command: "setoption", what: "name" };
    let Some(((_, "name"), rest)) = args.split_first() else { return Err(missing_name) };
    let value_at = rest.iter().position(|(_, t)| *t == "value");
    let name_tokens = &rest[..value_at.unwrap_or(rest.len())];
    if name_tokens.is_empty() {
        return Err(missing_name);
    }
    let name = name_tokens.iter().map(|(_, t)| *t).collect::<Vec<_>>().join(" ");
    let value = value_at.map(|i| {
        let (offset, token) = rest[i];
        line[offset + token.len()..].trim().to_string()
    });
    Ok(Command::SetOption { name, value })
}

fn parse_position(
    args: &[(usize, &str)],
    warnings: &mut Vec<CommandError>,
) -> Result<Command, CommandError> {
    let words: Vec<&str> = args.iter().map(|(_, t)| *t).collect();
    let moves_at = words.iter().position(|t| *t == "moves");
    let head = &words[..moves_at.unwrap_or(words.len())];
    let start = match head.split_first() {
        Some((&"startpos", extra)) => {
            if !extra.is_empty() {
                warnings.push(CommandError::UnexpectedToken {
                    command: "position",
                    token: excerpt(&extra.join(" ")),
                });
            }
            StartPosition::StartPos
        }
        Some((&"fen", fields)) if !fields.is_empty() => StartPosition::Fen(fields.join(" ")),
        Some((&"fen", _)) => {
            return Err(CommandError::MissingArgument { command: "position", what: "FEN" });
        }
        _ => {
            return Err(CommandError::MissingArgument {
                command: "position",
                what: "'startpos' or 'fen <fen>'",
            });
        }
    };
    let moves = moves_at
        .map_or_else(Vec::new, |i| words[i + 1..].iter().map(|m| (*m).to_string()).collect());
    Ok(Command::Position { start, moves })
}

fn parse_go(args: &[(usize, &str)], warnings: &mut Vec<CommandError>) -> GoParams {
    let words: Vec<&str> = args.iter().map(|(_, t)| *t).collect();
    let mut go = GoParams::default();
    let mut i = 0;
    while i < words.len() {
        let word = words[i];
        i += 1;
        let keyword = GO_KEYWORDS.iter().find(|k| **k == word).copied();
        let Some(keyword) = keyword else {
            warnings.push(CommandError::UnexpectedToken { command: "go", token: excerpt(word) });
            continue;
        };
        match keyword {
            "infinite" => go.infinite = true,
            "ponder" => go.ponder = true,
            "searchmoves" => {
                while i < words.len() && !GO_KEYWORDS.contains(&words[i]) {
                    go.searchmoves.push(words[i].to_string());
                    i += 1;
                }
            }
            _ => {
                let value = words.get(i).copied().filter(|v| !GO_KEYWORDS.contains(v));
                if value.is_some() {
                    i += 1;
                }
                let bad = || CommandError::InvalidNumber {
                    argument: keyword,
                    value: excerpt(value.unwrap_or("")),
                };
                let signed = || value.and_then(|v| v.parse::<i64>().ok()).ok_or_else(bad);
                let unsigned = || value.and_then(|v| v.parse::<u64>().ok()).ok_or_else(bad);
                let result = match keyword {
                    "wtime" => signed().map(|v| go.wtime = Some(v)),
                    "btime" => signed().map(|v| go.btime = Some(v)),
                    "winc" => signed().map(|v| go.winc = Some(v)),
                    "binc" => signed().map(|v| go.binc = Some(v)),
                    "movetime" => signed().map(|v| go.movetime = Some(v)),
                    "movestogo" => unsigned().map(|v| go.movestogo = Some(v)),
                    "nodes" => unsigned().map(|v| go.nodes = Some(v)),
                    "depth" => unsigned().map(|v| go.depth = Some(v)),
                    _ => unsigned().map(|v| go.mate = Some(v)),
                };
                if let Err(e) = result {
                    warnings.push(e);
                }
            }
        }
    }
    go
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(line: &str) -> Command {
        parse(line).unwrap().unwrap().command
    }

    #[test]
    fn parses_the_commands() {
        assert_eq!(parse("   ").unwrap(), None);
        assert_eq!(command("uci"), Command::Uci);
        assert_eq!(command("isready\r"), Command::IsReady);
        assert_eq!(
            command("setoption name Move Overhead value 100"),
            Command::SetOption { name: "Move Overhead".into(), value: Some("100".into()) }
        );
        assert_eq!(
            command("setoption name Model value /a b/c  d.safetensors "),
            Command::SetOption {
                name: "Model".into(),
                value: Some("/a b/c  d.safetensors".into())
            }
        );
        assert_eq!(
            command("setoption name Ponder"),
            Command::SetOption { name: "Ponder".into(), value: None }
        );
        assert_eq!(
            command("position startpos moves e2e4 e7e5"),
            Command::Position {
                start: StartPosition::StartPos,
                moves: vec!["e2e4".into(), "e7e5".into()]
            }
        );
        assert_eq!(
            command("position fen 8/8/8/8/8/8/8/K1k5 w - - 0 1"),
            Command::Position {
                start: StartPosition::Fen("8/8/8/8/8/8/8/K1k5 w - - 0 1".into()),
                moves: vec![]
            }
        );
        let Command::Go(go) = command("go wtime 1000 btime -20 winc 10 binc 10 movestogo 5") else {
            panic!()
        };
        assert_eq!(
            (go.wtime, go.btime, go.winc, go.movestogo),
            (Some(1000), Some(-20), Some(10), Some(5))
        );
        let Command::Go(go) = command("go searchmoves e2e4 d2d4 infinite") else { panic!() };
        assert!(go.infinite);
        assert_eq!(go.searchmoves, vec!["e2e4", "d2d4"]);
    }

    #[test]
    fn reports_problems() {
        assert!(matches!(parse("hello world"), Err(CommandError::UnknownCommand(_))));
        assert!(matches!(parse("position"), Err(CommandError::MissingArgument { .. })));
        assert!(matches!(parse("position fen"), Err(CommandError::MissingArgument { .. })));
        assert!(matches!(parse("setoption value 3"), Err(CommandError::MissingArgument { .. })));
        let parsed = parse("joho debug on").unwrap().unwrap();
        assert_eq!(parsed.command, Command::Debug(true));
        assert_eq!(parsed.warnings.len(), 1);
        assert_eq!(parse("debug off").unwrap().unwrap().command, Command::Debug(false));
        let parsed = parse("go nodes lots movetime 100 wibble").unwrap().unwrap();
        let Command::Go(go) = parsed.command else { panic!() };
        assert_eq!((go.nodes, go.movetime), (None, Some(100)));
        assert_eq!(parsed.warnings.len(), 2);
        let parsed = parse("go wtime").unwrap().unwrap();
        assert_eq!(
            parsed.warnings,
            vec![CommandError::InvalidNumber { argument: "wtime", value: String::new() }]
        );
    }
}
