//! An external UCI engine as a [`Player`]: a subprocess per game, driven through the UCI
//! protocol. Start-up sends `uci` and reads the advertised options until `uciok`; if the
//! engine offers `UCI_Variant` it gets `setoption name UCI_Variant value <variant>` (and
//! `UCI_Chess960` for Chess960 openings when offered), then the configured options, `isready`,
//! `ucinewgame`. Each move sends `position fen <start> moves ...` and `go` with the limit, and
//! reads until `bestmove`. A reader thread forwards the engine's lines over a channel, so every
//! wait has a deadline and a hung engine is a [`PlayerError::Timeout`], not a hung match.
//!
//! A game from the Balanced start (`atomzero_rules::start`) is sent as `position fen balanced
//! moves @e2 ...` (the setup position's keyword, the removal's token), which only an engine
//! that offers a `Start` option with the value `balanced` (as `atomzero uci` does) understands:
//! such an engine gets `setoption name Start value balanced`; any other (Fairy-Stockfish) is
//! refused at start-up with a [`PlayerError::Protocol`] naming the reason.

use crate::player::{Player, PlayerError};
use atomzero_rules::{CastlingMode, Game, Move, Position, Variant};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// The default search limit when the spec gives none.
pub const DEFAULT_LIMIT: UciLimit = UciLimit::MoveTime(100);

/// The default time an engine may take to answer beyond its own search limit.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long each engine search may run.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum UciLimit {
    /// `go nodes N`.
    Nodes(u64),
    /// `go movetime MS`.
    MoveTime(u64),
    /// `go depth D`.
    Depth(u32),
}

impl UciLimit {
    /// The `go` command.
    pub fn go_command(&self) -> String {
        match self {
            UciLimit::Nodes(n) => format!("go nodes {n}"),
            UciLimit::MoveTime(ms) => format!("go movetime {ms}"),
            UciLimit::Depth(d) => format!("go depth {d}"),
        }
    }
}

/// How to start and drive an engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UciEngineConfig {
    /// The program to run.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// The search limit per move.
    pub limit: UciLimit,
    /// How long the engine may take for each answer (beyond `movetime` for a move).
    pub timeout: Duration,
    /// Extra `setoption name NAME value VALUE` sent after the handshake.
    pub options: Vec<(String, String)>,
}

impl UciEngineConfig {
    /// An engine run as `command` (split at whitespace into program and arguments) with the
    /// default limit and timeout.
    pub fn new(command: &str) -> UciEngineConfig {
        let mut parts = command.split_whitespace().map(str::to_string);
        UciEngineConfig {
            program: parts.next().unwrap_or_default(),
            args: parts.collect(),
            limit: DEFAULT_LIMIT,
            timeout: DEFAULT_TIMEOUT,
            options: Vec::new(),
        }
    }
}

/// A running engine playing one game.
#[derive(Debug)]
pub struct UciPlayer {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    config: UciEngineConfig,
    name: Option<String>,
}

impl UciPlayer {
    /// Starts the engine for a game from `start` and completes the handshake.
    pub fn start(config: &UciEngineConfig, start: &Position) -> Result<UciPlayer, PlayerError> {
        let mut child = Command::new(&config.program)
            .args(&config.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| PlayerError::Spawn(format!("{}: {e}", config.program)))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(PlayerError::Spawn("no pipes to the engine".into()));
        };
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut player = UciPlayer { child, stdin, lines, config: config.clone(), name: None };
        player.handshake(start.variant(), start.castling_mode(), start.is_setup_phase())?;
        Ok(player)
    }

    /// The engine's `id name`, if it sent one.
    pub fn engine_name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    fn handshake(
        &mut self,
        variant: Variant,
        mode: CastlingMode,
        balanced: bool,
    ) -> Result<(), PlayerError> {
        self.send("uci")?;
        let deadline = Instant::now() + self.config.timeout;
        let mut variant_values: Option<Vec<String>> = None;
        let mut chess960 = false;
        let mut balanced_start = false;
        loop {
            let line = self.next_line(deadline, "uciok")?;
            let line = line.trim();
            if line == "uciok" {
                break;
            }
            if let Some(name) = line.strip_prefix("id name ") {
                self.name = Some(name.trim().to_string());
            } else if let Some(option) = line.strip_prefix("option name ") {
                let name = option.split(" type ").next().unwrap_or("").trim();
                if name == "UCI_Variant" {
                    let mut values = Vec::new();
                    let mut tokens = option.split_whitespace();
                    while let Some(token) = tokens.next() {
                        if token == "var" {
                            values.extend(tokens.next().map(str::to_string));
                        }
                    }
                    variant_values = Some(values);
                } else if name == "UCI_Chess960" {
                    chess960 = true;
                } else if name == "Start" {
                    let mut tokens = option.split_whitespace();
                    while let Some(token) = tokens.next() {
                        balanced_start |= token == "var"
                            && tokens.next().is_some_and(|v| v.eq_ignore_ascii_case("balanced"));
                    }
                }
            }
        }
        if let Some(values) = variant_values {
            if !values.is_empty() && !values.iter().any(|v| v.eq_ignore_ascii_case(variant.name()))
            {
                return Err(PlayerError::Protocol(format!(
                    "engine does not support variant {variant} (it offers {})",
                    values.join(", ")
                )));
            }
            self.send(&format!("setoption name UCI_Variant value {}", variant.name()))?;
        }
        if chess960 && mode == CastlingMode::Chess960 {
            self.send("setoption name UCI_Chess960 value true")?;
        }
        if balanced {
            if !balanced_start {
                return Err(PlayerError::Protocol(
                    "engine cannot play the Balanced start (it offers no 'Start' option with \
                     the value 'balanced', so it cannot choose White's removal)"
                        .to_string(),
                ));
            }
            self.send("setoption name Start value balanced")?;
        }
        for (name, value) in self.config.options.clone() {
            self.send(&format!("setoption name {name} value {value}"))?;
        }
        self.send("ucinewgame")?;
        self.sync()
    }

    /// `isready` / `readyok`.
    fn sync(&mut self) -> Result<(), PlayerError> {
        self.send("isready")?;
        let deadline = Instant::now() + self.config.timeout;
        while self.next_line(deadline, "readyok")?.trim() != "readyok" {}
        Ok(())
    }

    fn send(&mut self, command: &str) -> Result<(), PlayerError> {
        writeln!(self.stdin, "{command}")
            .and_then(|()| self.stdin.flush())
            .map_err(|e| PlayerError::Crashed(format!("cannot send '{command}': {e}")))
    }

    /// The next line before `deadline`; `waiting_for` names the expected answer in errors.
    fn next_line(&mut self, deadline: Instant, waiting_for: &str) -> Result<String, PlayerError> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(left) {
            Ok(line) => Ok(line),
            Err(RecvTimeoutError::Timeout) => Err(PlayerError::Timeout(format!(
                "no '{waiting_for}' within {} ms",
                self.config.timeout.as_millis()
            ))),
            Err(RecvTimeoutError::Disconnected) => {
                let status = self.child.try_wait().ok().flatten();
                Err(PlayerError::Crashed(match status {
                    Some(status) => {
                        format!("engine exited ({status}) while waiting for '{waiting_for}'")
                    }
                    None => format!("engine closed its output while waiting for '{waiting_for}'"),
                }))
            }
        }
    }
}

impl Player for UciPlayer {
    fn choose_move(&mut self, game: &Game) -> Result<Move, PlayerError> {
        let start = game.initial();
        let mut command = format!("position fen {}", start.fen());
        if !game.moves().is_empty() {
            command.push_str(" moves");
            let mut pos = *start;
            for &m in game.moves() {
                command.push(' ');
                command.push_str(&pos.uci(m));
                pos.play_unchecked(m);
            }
        }
        self.send(&command)?;
        let go = self.config.limit.go_command();
        self.send(&go)?;
        let search_time = match self.config.limit {
            UciLimit::MoveTime(ms) => Duration::from_millis(ms),
            _ => Duration::ZERO,
        };
        let deadline = Instant::now() + search_time + self.config.timeout;
        loop {
            let line = self.next_line(deadline, "bestmove")?;
            let mut tokens = line.split_whitespace();
            if tokens.next() != Some("bestmove") {
                continue;
            }
            let text = tokens.next().unwrap_or("").to_string();
            return game.position().parse_uci(&text).map_err(|_| PlayerError::IllegalMove(text));
        }
    }
}

impl Drop for UciPlayer {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        // No waiting for a graceful exit: the engine is killed if it is still running.
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}
