//! The engine driven in-process, line by line, as a GUI would: handshake, positions, searches
//! in every variant, stop/ponder/isready during a search, time management, bad input, terminal
//! positions, models, and whole self-play games in which every `bestmove` must be legal.
//!
//! No sleeps: lines are read from a channel with timeouts, and the timeouts are generous
//! bounds that a correct engine stays far below.

use atomzero_mcts::{EvalRequest, Evaluations, Evaluator, RandomEvaluator};
use atomzero_rules::{Position, Variant};
use atomzero_uci::{
    Engine, EngineConfig, Flow, LoadedModel, ModelLoadError, NO_MODEL_MESSAGE, NoModelLoader,
    Output, SharedEvaluator,
};
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// A bound no correct answer comes near; reaching it means the engine hangs.
const HANG: Duration = Duration::from_secs(20);

struct Harness {
    engine: Engine,
    lines: Receiver<String>,
}

impl Harness {
    fn new() -> Harness {
        Harness::with(EngineConfig::default(), NoModelLoader)
    }

    fn with(config: EngineConfig, loader: impl atomzero_uci::ModelLoader + 'static) -> Harness {
        let (output, lines) = Output::channel();
        Harness { engine: Engine::new(config, loader, output), lines }
    }

    /// A config whose periodic info lines come quickly.
    fn fast_info() -> EngineConfig {
        EngineConfig { info_interval: Duration::from_millis(5), ..EngineConfig::default() }
    }

    fn send(&mut self, line: &str) -> Flow {
        self.engine.handle(line)
    }

    /// Lines up to and including the first that satisfies `done`; panics after `timeout`.
    fn until(&self, timeout: Duration, done: impl Fn(&str) -> bool) -> Vec<String> {
        let deadline = Instant::now() + timeout;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let stop = done(&line);
                    seen.push(line);
                    if stop {
                        return seen;
                    }
                }
                Err(RecvTimeoutError::Timeout) => panic!("timed out; lines so far: {seen:#?}"),
                Err(RecvTimeoutError::Disconnected) => panic!("output closed; lines: {seen:#?}"),
            }
        }
    }

    /// The lines up to `bestmove`, and the move.
    fn bestmove(&self) -> (String, Vec<String>) {
        let lines = self.until(HANG, |l| l.starts_with("bestmove"));
        let last = lines.last().unwrap();
        let mv = last.split_whitespace().nth(1).unwrap_or("").to_string();
        (mv, lines)
    }

    /// Every line already written.
    fn drain(&self) -> Vec<String> {
        self.lines.try_iter().collect()
    }

    /// Asserts that `mv` is legal in the engine's current position.
    fn assert_legal(&self, mv: &str, context: &[String]) {
        let pos = self.engine.position();
        assert!(pos.parse_uci(mv).is_ok(), "illegal bestmove {mv} in {} ({context:#?})", pos.fen());
    }
}

fn info_strings(lines: &[String]) -> Vec<&String> {
    lines.iter().filter(|l| l.starts_with("info string")).collect()
}

fn field<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let mut words = line.split_whitespace();
    words.by_ref().find(|w| *w == name)?;
    words.next()
}

/// Sends `limit` (a `go` command), checks the move is legal, and returns it with the
/// `refuted` count of the `info string` containing `marker` (an alpha-beta check's line)
/// and that line.
fn go_with_check(h: &mut Harness, limit: &str, marker: &str) -> (String, usize, String) {
    h.send(limit);
    let (mv, lines) = h.bestmove();
    h.assert_legal(&mv, &lines);
    let note = info_strings(&lines)
        .into_iter()
        .find(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("no '{marker}' line: {lines:#?}"))
        .clone();
    let refuted: usize = field(&note, "refuted").unwrap().parse().unwrap();
    (mv, refuted, note)
}

#[test]
fn handshake() {
    let mut h = Harness::new();
    h.send("uci");
    let lines = h.until(HANG, |l| l == "uciok");
    assert!(lines[0].starts_with("id name atomzero"), "{lines:?}");
    assert!(lines[1].starts_with("id author "), "{lines:?}");
    let variant = lines.iter().find(|l| l.starts_with("option name UCI_Variant ")).unwrap();
    let vars: Vec<&str> = variant.split(" var ").skip(1).collect();
    assert_eq!(vars, Variant::ALL.map(Variant::name), "atomic first, then every variant");
    assert!(variant.contains("type combo default atomic"));
    for option in [
        "option name UCI_Chess960 type check default false",
        "option name Threads type spin default 1 min 1 max 256",
        "option name Nodes type spin default 0 min 0 max 1000000000",
        "option name MultiPV type spin default 1 min 1 max 256",
        "option name Model type string default <empty>",
        "option name UCI_ShowWDL type check default false",
    ] {
        assert!(lines.iter().any(|l| l == option), "missing {option}: {lines:#?}");
    }
    h.send("isready");
    assert_eq!(h.until(HANG, |l| l == "readyok"), vec!["readyok"]);
    h.send("setoption name UCI_Variant value atomic");
    h.send("setoption name Threads value 2");
    h.send("setoption name Hash value 64");
    h.send("setoption name Move Overhead value 30");
    h.send("ucinewgame");
    h.send("isready");
    assert_eq!(h.until(HANG, |l| l == "readyok"), vec!["readyok"], "no complaints");
    assert_eq!(h.engine.options().threads, 2);
    assert_eq!(h.engine.options().move_overhead_ms, 30);
    h.send("debug on");
    h.send("register later");
    assert_eq!(h.send("quit"), Flow::Quit);
    assert!(h.drain().is_empty());
}

#[test]
fn positions_with_castling_and_en_passant_in_atomic() {
    let mut h = Harness::new();
    // Castling written as the king's two-square move, and as king takes rook.
    for castle in ["e1g1", "e1h1"] {
        h.send(&format!("position startpos moves e2e4 e7e5 g1f3 b8c6 f1c4 g8f6 {castle}"));
        assert_eq!(
            h.engine.position().fen(),
            "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQ1RK1 b kq - 5 4"
        );
    }
    // En passant: d5xe6 explodes on e6, removing both pawns (pawns next to the blast survive).
    h.send("position startpos moves d2d4 a7a6 d4d5 e7e5 d5e6");
    assert_eq!(
        h.engine.position().fen(),
        "rnbqkbnr/1ppp1ppp/p7/8/8/8/PPP1PPPP/RNBQKBNR b KQkq - 0 3"
    );
    // From a FEN, with the en-passant square given.
    h.send("position fen rnbqkbnr/1ppp1ppp/p7/3Pp3/8/8/PPP1PPPP/RNBQKBNR w KQkq e6 0 3 moves d5e6");
    assert_eq!(
        h.engine.position().fen(),
        "rnbqkbnr/1ppp1ppp/p7/8/8/8/PPP1PPPP/RNBQKBNR b KQkq - 0 3"
    );
    assert!(info_strings(&h.drain()).is_empty());
    // Chess960 notation: only king takes rook.
    h.send("setoption name UCI_Chess960 value true");
    h.send("position startpos moves e2e4 e7e5 g1f3 b8c6 f1c4 g8f6 e1h1");
    assert_eq!(
        h.engine.position().fen(),
        "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQ1RK1 b kq - 5 4"
    );
    h.send("go nodes 100");
    let (mv, lines) = h.bestmove();
    h.assert_legal(&mv, &lines);
    assert!(info_strings(&lines).iter().all(|l| !l.contains("error")), "{lines:#?}");
}

#[test]
fn illegal_moves_keep_the_last_legal_position() {
    let mut h = Harness::new();
    h.send("position startpos moves e2e4 e7e5 e1e3 g1f3");
    let errors = info_strings(&h.drain()).into_iter().cloned().collect::<Vec<_>>();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].starts_with("info string error: move 3 of position"), "{errors:?}");
    assert!(errors[0].contains("e1e3"), "{errors:?}");
    assert_eq!(
        h.engine.position().fen(),
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"
    );
    // A bad FEN keeps the position from before the command.
    h.send("position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1");
    assert_eq!(info_strings(&h.drain()).len(), 1);
    assert_eq!(
        h.engine.position().fen(),
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"
    );
    h.send("go nodes 50");
    let (mv, lines) = h.bestmove();
    h.assert_legal(&mv, &lines);
}

#[test]
fn go_nodes_gives_a_legal_move_in_every_variant() {
    let mut h = Harness::new();
    h.send("setoption name UCI_ShowWDL value true");
    for variant in Variant::ALL {
        h.send("ucinewgame");
        h.send(&format!("setoption name UCI_Variant value {}", variant.name()));
        h.send("position startpos moves e2e4 d7d5");
        h.send("go nodes 200");
        let (mv, lines) = h.bestmove();
        h.assert_legal(&mv, &lines);
        assert_eq!(h.engine.position().variant(), variant);
        let info = lines.iter().rev().find(|l| l.starts_with("info depth")).expect("final info");
        let nodes: u64 = field(info, "nodes").unwrap().parse().unwrap();
        assert!((200..=230).contains(&nodes), "{info}");
        for name in ["seldepth", "score", "wdl", "nps", "pv"] {
            assert!(field(info, name).is_some(), "{name} missing: {info}");
        }
        let wdl: Vec<u32> = info
            .split(" wdl ")
            .nth(1)
            .unwrap()
            .split_whitespace()
            .take(3)
            .map(|w| w.parse().unwrap())
            .collect();
        assert_eq!(wdl.iter().sum::<u32>(), 1000, "{info}");
        assert_eq!(field(info, "pv"), Some(mv.as_str()), "{info}");
    }
}

#[test]
fn without_a_model_the_engine_says_so_once() {
    let mut h = Harness::new();
    h.send("position startpos");
    h.send("go nodes 10");
    let (_, lines) = h.bestmove();
    assert_eq!(lines[0], format!("info string {NO_MODEL_MESSAGE}"));
    h.send("go nodes 10");
    let (_, lines) = h.bestmove();
    assert!(info_strings(&lines).is_empty(), "{lines:#?}");
}

#[test]
fn go_infinite_then_stop_answers_promptly() {
    let mut h = Harness::new();
    h.send("position startpos moves e2e4");
    let start = Instant::now();
    h.send("go infinite");
    h.send("stop");
    let (mv, lines) = h.bestmove();
    let elapsed = start.elapsed();
    assert!(elapsed < Duration::from_secs(2), "took {elapsed:?}");
    h.assert_legal(&mv, &lines);

    // isready is answered during an infinite search, and stop still works afterwards.
    h.send("go infinite");
    h.send("isready");
    let lines = h.until(HANG, |l| l == "readyok");
    assert!(lines.iter().all(|l| !l.starts_with("bestmove")), "{lines:#?}");
    assert!(h.engine.is_searching());
    let start = Instant::now();
    h.send("stop");
    let (mv, lines) = h.bestmove();
    assert!(start.elapsed() < Duration::from_secs(2));
    h.assert_legal(&mv, &lines);
}

#[test]
fn stop_writes_bestmove_before_anything_that_follows() {
    // A search started by a malformed `go` and stopped among junk lines: its `bestmove` must
    // come before the `readyok` of a later `isready`, or a GUI takes it for the answer to its
    // next `go`.
    let mut h = Harness::new();
    h.send("position startpos moves e2e4 e7e5");
    h.send("go wtime -5 btime x");
    h.send("position startpos moves e2e4 e7e5 e1e3");
    h.send("stop");
    assert!(!h.engine.is_searching());
    h.send("isready");
    let lines = h.until(HANG, |l| l == "readyok");
    let bestmoves = lines.iter().filter(|l| l.starts_with("bestmove")).count();
    assert_eq!(bestmoves, 1, "{lines:#?}");
    // An infinite search: when `stop` returns, its bestmove is already written.
    h.send("go infinite");
    h.send("stop");
    let lines = h.drain();
    assert!(lines.last().is_some_and(|l| l.starts_with("bestmove")), "{lines:#?}");
    h.send("ucinewgame");
    h.send("position startpos");
    h.send("go nodes 32");
    let (mv, lines) = h.bestmove();
    h.assert_legal(&mv, &lines);
}

#[test]
fn go_infinite_waits_for_stop_even_when_the_root_is_proven() {
    let mut h = Harness::with(Harness::fast_info(), NoModelLoader);
    // Atomic: Qxd7 explodes the black king.
    h.send("position fen 4k3/3p4/8/8/8/8/8/3QK3 w - - 0 1");
    h.send("go infinite");
    let lines = h.until(HANG, |l| l.contains(" score mate 1 "));
    assert!(lines.iter().all(|l| !l.starts_with("bestmove")));
    // Nothing more may come until stop: in particular no bestmove.
    match h.lines.recv_timeout(Duration::from_millis(200)) {
        Err(RecvTimeoutError::Timeout) => {}
        Ok(line) if !line.starts_with("bestmove") => {}
        other => panic!("bestmove before stop: {other:?}"),
    }
    h.send("stop");
    let (mv, _) = h.bestmove();
    assert_eq!(mv, "d1d7");
}

#[test]
fn ponder_then_ponderhit() {
    let mut h = Harness::with(Harness::fast_info(), NoModelLoader);
    h.send("position startpos moves e2e4 e7e5");
    h.send("go ponder wtime 1000 btime 1000 winc 100 binc 100");
    let lines = h.until(HANG, |l| l.starts_with("info depth"));
    assert!(lines.iter().all(|l| !l.starts_with("bestmove")));
    let start = Instant::now();
    h.send("ponderhit");
    let (mv, lines) = h.bestmove();
    assert!(start.elapsed() < Duration::from_secs(1), "took {:?}", start.elapsed());
    h.assert_legal(&mv, &lines);
    // A harmless ponderhit and stop with no search running.
    h.send("ponderhit");
    h.send("stop");
    h.send("isready");
    assert_eq!(h.until(HANG, |l| l == "readyok"), vec!["readyok"]);
}

#[test]
fn time_management_returns_well_within_the_clock() {
    let mut h = Harness::new();
    h.send("position startpos moves e2e4 e7e5");
    let start = Instant::now();
    h.send("go wtime 1000 btime 1000 winc 100 binc 100");
    let (mv, lines) = h.bestmove();
    let elapsed = start.elapsed();
    // The budget is 1000/30 + 75 − 50 ≈ 58 ms; allow for a loaded machine.
    assert!(elapsed < Duration::from_millis(500), "took {elapsed:?}");
    h.assert_legal(&mv, &lines);

    // Almost no time left: still a legal move, at once.
    let start = Instant::now();
    h.send("go wtime 10 btime 10");
    let (mv, lines) = h.bestmove();
    assert!(start.elapsed() < Duration::from_millis(500), "took {:?}", start.elapsed());
    h.assert_legal(&mv, &lines);
    // Negative time (an overstepping GUI) and movetime.
    h.send("go wtime -50 btime 100");
    let (mv, lines) = h.bestmove();
    h.assert_legal(&mv, &lines);
    let start = Instant::now();
    h.send("go movetime 100");
    let (mv, lines) = h.bestmove();
    assert!(start.elapsed() < Duration::from_millis(600));
    h.assert_legal(&mv, &lines);
    // The Nodes option limits a timed search. (A fresh game: 1.e4 e5 is lost for Black, mate
    // in 5 by 2.Qh5, which the searches above may have proven, leaving nothing to search.)
    h.send("ucinewgame");
    h.send("position startpos");
    h.send("setoption name Nodes value 40");
    h.send("go wtime 60000 btime 60000");
    let (mv, lines) = h.bestmove();
    h.assert_legal(&mv, &lines);
    let info = lines.iter().rev().find(|l| l.starts_with("info depth")).unwrap();
    let nodes: u64 = field(info, "nodes").unwrap().parse().unwrap();
    assert!((40..=60).contains(&nodes), "{info}");
}

/// A fast game on a simulated clock: the time from `go` to `bestmove`, as the GUI sees it, is
/// charged to the mover, who gets the increment back; nobody may run out of time.
#[test]
fn a_fast_game_on_the_clock_never_flags() {
    let mut h = Harness::new();
    let increment = 100i64;
    let mut clock = [1000i64, 1000i64];
    let mut moves: Vec<String> = Vec::new();
    for ply in 0..40 {
        let position = format!("position startpos moves {}", moves.join(" "));
        h.send(position.trim_end());
        if h.engine.position().legal_moves().is_empty() {
            break;
        }
        let start = Instant::now();
        h.send(&format!(
            "go wtime {} btime {} winc {increment} binc {increment}",
            clock[0], clock[1]
        ));
        let (mv, lines) = h.bestmove();
        let used = start.elapsed().as_millis() as i64;
        let side = ply % 2;
        clock[side] -= used;
        assert!(clock[side] > 0, "flagged at ply {ply}: used {used} ms, clocks {clock:?}");
        clock[side] += increment;
        h.assert_legal(&mv, &lines);
        moves.push(mv);
    }
}

#[test]
fn garbage_is_reported_and_the_engine_keeps_working() {
    let mut h = Harness::new();
    for garbage in [
        "hello world",
        "position",
        "position fen",
        "position fen not/a/fen w - - 0 1",
        "position startpos moves e2e5",
        "position startpos moves zz99",
        "setoption",
        "setoption name",
        "setoption name NoSuchOption value 3",
        "setoption name Hash value lots",
        "setoption name UCI_Variant value crazyhouse",
        "setoption name UCI_Chess960 value maybe",
        "\u{fffd}\u{fffd}\u{0}",
        &"x".repeat(10_000),
    ] {
        assert_eq!(h.send(garbage), Flow::Continue);
        let lines = h.drain();
        assert_eq!(lines.len(), 1, "{garbage:?}: {lines:?}");
        assert!(lines[0].starts_with("info string error: "), "{garbage:?}: {lines:?}");
        assert!(lines[0].len() < 400, "{lines:?}");
    }
    assert_eq!(h.send(""), Flow::Continue);
    assert!(h.drain().is_empty());
    // Unknown tokens before a command are skipped, as the UCI specification asks.
    h.send("joho isready");
    let lines = h.until(HANG, |l| l == "readyok");
    assert_eq!(lines.len(), 2, "{lines:?}");
    // Bad go arguments are reported; the rest of go still counts.
    h.send("position startpos");
    h.send("go nodes many movetime 50 sideways");
    let (mv, lines) = h.bestmove();
    assert!(info_strings(&lines).iter().filter(|l| l.contains("error")).count() >= 2, "{lines:#?}");
    h.assert_legal(&mv, &lines);
    h.send("go nodes 30 searchmoves e2e4");
    let (mv, lines) = h.bestmove();
    h.assert_legal(&mv, &lines);
    assert_eq!(h.engine.options().hash_mib, 256, "bad values leave options alone");
}

#[test]
fn positions_without_moves_answer_bestmove_none() {
    let cases = [
        // Atomic: the white king has exploded; White to move.
        (Variant::Atomic, "rnbqkbnr/ppp2ppp/8/8/8/8/PPPPPPPP/RNBQ1BNR w kq - 0 5"),
        // Atomic: checkmate (fool's mate pattern).
        (Variant::Atomic, "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"),
        // Atomic: stalemate.
        (Variant::Atomic, "k7/8/1Q6/8/8/8/8/7K b - - 0 1"),
        // Atomar: the black king was captured.
        (Variant::Atomar, "8/8/8/8/8/8/8/K7 b - - 0 1"),
    ];
    let mut h = Harness::new();
    for (variant, fen) in cases {
        let pos = Position::from_fen(fen, variant).expect(fen);
        assert!(pos.legal_moves().is_empty(), "{fen}");
        h.send(&format!("setoption name UCI_Variant value {}", variant.name()));
        h.send(&format!("position fen {fen}"));
        // As Stockfish: the score of the end, then `bestmove (none)`.
        let lost = pos.outcome().is_some_and(|o| o.winner.is_some());
        let end = if lost { "info depth 0 score mate 0" } else { "info depth 0 score cp 0" };
        for go in ["go nodes 100", "go wtime 1000 btime 1000", "go movetime 50"] {
            h.send(go);
            let (mv, lines) = h.bestmove();
            assert_eq!(mv, "(none)", "{fen} {go}: {lines:#?}");
            assert!(lines.iter().any(|l| l == end), "{fen}: {lines:#?}");
            assert!(
                info_strings(&lines).iter().any(|l| l.contains("the game is over")),
                "{lines:#?}"
            );
            assert!(info_strings(&lines).iter().all(|l| !l.contains("error")), "{lines:#?}");
        }
        h.send("go infinite");
        h.send("stop");
        assert_eq!(h.bestmove().0, "(none)");
        // Pondering on a finished game (the GUI's guess ended it) waits for `stop` as any
        // ponder search does, then has no move either.
        h.send("go ponder wtime 1000 btime 1000");
        assert!(h.drain().iter().all(|l| !l.starts_with("bestmove")));
        h.send("stop");
        assert_eq!(h.bestmove().0, "(none)");
    }
}

#[test]
fn near_terminal_positions_give_legal_moves() {
    let mut h = Harness::new();
    for fen in [
        // A single legal move (Kg1).
        "7k/8/8/8/8/8/5r2/7K w - - 0 1",
        // Mate in one on the board.
        "4k3/3p4/8/8/8/8/8/3QK3 w - - 0 1",
        // Bare kings with a fifty-move clock at its end.
        "8/8/4k3/8/8/3K4/8/8 w - - 99 80",
        // Only kings and one pawn each.
        "8/4p3/4k3/8/8/4K3/4P3/8 b - - 0 40",
    ] {
        h.send(&format!("position fen {fen}"));
        for go in ["go nodes 50", "go wtime 100 btime 100", "go depth 3"] {
            h.send(go);
            let (mv, lines) = h.bestmove();
            h.assert_legal(&mv, &lines);
        }
    }
}

#[test]
fn multipv_reports_several_root_moves() {
    let mut h = Harness::new();
    h.send("setoption name MultiPV value 3");
    h.send("position startpos");
    h.send("go nodes 300");
    let (_, lines) = h.bestmove();
    for k in 1..=3 {
        assert!(
            lines.iter().any(|l| l.contains(&format!(" multipv {k} "))),
            "multipv {k} missing: {lines:#?}"
        );
    }
}

/// An evaluator that fails, to check that the engine survives it.
struct Broken {
    panic: bool,
}

impl Evaluator for Broken {
    fn evaluate(&self, requests: &[EvalRequest<'_>]) -> Evaluations {
        if self.panic {
            panic!("broken evaluator");
        }
        // Too few evaluations.
        RandomEvaluator { seed: 1 }.evaluate(&requests[..requests.len() / 2])
    }
}

/// Checks that the search hands the evaluator the history the model asked for.
struct WantsHistory(usize);

impl Evaluator for WantsHistory {
    fn evaluate(&self, requests: &[EvalRequest<'_>]) -> Evaluations {
        for r in requests {
            assert!(r.history.len() <= self.0);
            // The root after two moves has two earlier positions.
            assert!(r.history.len() >= 2.min(self.0), "history {}", r.history.len());
        }
        RandomEvaluator { seed: 5 }.evaluate(requests)
    }
}

/// Records the largest batch it was handed.
struct Batches(std::sync::atomic::AtomicUsize);

impl Evaluator for Batches {
    fn evaluate(&self, requests: &[EvalRequest<'_>]) -> Evaluations {
        self.0.fetch_max(requests.len(), std::sync::atomic::Ordering::Relaxed);
        RandomEvaluator { seed: 7 }.evaluate(requests)
    }
}

fn test_loader(path: &Path, threads: usize) -> Result<LoadedModel, ModelLoadError> {
    assert!(threads >= 1);
    let evaluator: SharedEvaluator = match path.to_str() {
        Some("random") => Arc::new(RandomEvaluator { seed: 3 }),
        Some("short") => Arc::new(Broken { panic: false }),
        Some("panics") => Arc::new(Broken { panic: true }),
        Some("history") => return Ok(LoadedModel::new(Arc::new(WantsHistory(4))).with_history(4)),
        _ => return Err(ModelLoadError::new("no such model")),
    };
    Ok(LoadedModel::new(evaluator))
}

#[test]
fn models_load_fail_and_misbehave_without_crashing_the_engine() {
    let mut h = Harness::with(EngineConfig::default(), test_loader);
    h.send("setoption name Model value random");
    h.send("isready");
    let lines = h.until(HANG, |l| l == "readyok");
    // Only `readyok` answers `isready` (python-chess warns about anything else there); the
    // model is named at the next `go`, once.
    assert_eq!(lines, vec!["readyok"]);
    h.send("position startpos");
    h.send("go nodes 100");
    let (mv, lines) = h.bestmove();
    h.assert_legal(&mv, &lines);
    assert_eq!(info_strings(&lines), ["info string model loaded: random (random(seed=3))"]);
    h.send("go nodes 100");
    let (mv, lines) = h.bestmove();
    h.assert_legal(&mv, &lines);
    assert!(info_strings(&lines).is_empty(), "a model is loaded: {lines:#?}");

    h.send("setoption name Model value /no/such/file");
    h.send("isready");
    let lines = h.until(HANG, |l| l == "readyok");
    assert!(
        lines[0].starts_with("info string error: cannot load model '/no/such/file'"),
        "{lines:?}"
    );
    h.send("go nodes 20");
    let (mv, lines) = h.bestmove();
    assert_eq!(lines[0], format!("info string {NO_MODEL_MESSAGE}"));
    h.assert_legal(&mv, &lines);

    h.send("setoption name Model value short");
    h.send("go nodes 100");
    let (mv, lines) = h.bestmove();
    h.assert_legal(&mv, &lines);
    assert!(info_strings(&lines).iter().any(|l| l.contains("returned")), "{lines:#?}");

    h.send("setoption name Model value panics");
    h.send("go nodes 100");
    let (mv, lines) = h.bestmove();
    h.assert_legal(&mv, &lines);
    assert!(info_strings(&lines).iter().any(|l| l.contains("the search failed")), "{lines:#?}");

    h.send("setoption name Model value history");
    h.send("position startpos moves e2e4 e7e5");
    h.send("go nodes 100");
    let (mv, lines) = h.bestmove();
    h.assert_legal(&mv, &lines);
    assert!(info_strings(&lines).iter().all(|l| !l.contains("failed")), "{lines:#?}");

    h.send("setoption name Model value <empty>");
    h.send("go nodes 20");
    let (mv, lines) = h.bestmove();
    h.assert_legal(&mv, &lines);
    assert_eq!(lines[0], format!("info string {NO_MODEL_MESSAGE}"));
}

#[test]
fn minibatch_size_bounds_the_batches_handed_to_the_network() {
    let batches = Arc::new(Batches(0.into()));
    let shared = Arc::clone(&batches);
    let loader = move |_: &Path, _: usize| Ok(LoadedModel::new(shared.clone()));
    let mut h = Harness::with(EngineConfig::default(), loader);
    h.send("setoption name Model value batches");
    // The search's batches as gathered: no cache answering part of them.
    h.send("setoption name NNCacheSize value 0");
    for (size, nodes) in [(3, 300), (64, 2000)] {
        batches.0.store(0, std::sync::atomic::Ordering::Relaxed);
        h.send(&format!("setoption name MinibatchSize value {size}"));
        h.send("ucinewgame");
        h.send("position startpos");
        h.send(&format!("go nodes {nodes}"));
        let (mv, lines) = h.bestmove();
        h.assert_legal(&mv, &lines);
        // The batch doubles from one leaf up to the option's value (a search this size
        // reaches it), never past it.
        assert_eq!(batches.0.load(std::sync::atomic::Ordering::Relaxed), size, "{lines:#?}");
    }
    h.send("setoption name MinibatchSize value 0");
    h.send("isready");
    h.until(HANG, |l| l == "readyok");
    assert_eq!(h.engine.options().minibatch_size, 1, "clamped into its range");
}

#[test]
fn the_evaluation_cache_answers_a_search_seen_before() {
    let batches = Arc::new(Batches(0.into()));
    let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    struct Counted(Arc<Batches>, Arc<std::sync::atomic::AtomicUsize>);
    impl Evaluator for Counted {
        fn evaluate(&self, requests: &[EvalRequest<'_>]) -> Evaluations {
            self.1.fetch_add(requests.len(), std::sync::atomic::Ordering::Relaxed);
            self.0.evaluate(requests)
        }
    }
    let (b, a) = (Arc::clone(&batches), Arc::clone(&asked));
    let loader =
        move |_: &Path, _: usize| Ok(LoadedModel::new(Arc::new(Counted(b.clone(), a.clone()))));
    let mut h = Harness::with(EngineConfig::default(), loader);
    let asked_now = || asked.load(std::sync::atomic::Ordering::Relaxed);
    h.send("setoption name Model value counted");
    h.send("debug on");
    let search = |h: &mut Harness| {
        h.send("ucinewgame");
        h.send("position startpos moves e2e4");
        h.send("go nodes 400");
        let (mv, lines) = h.bestmove();
        h.assert_legal(&mv, &lines);
        let cache: Vec<String> =
            info_strings(&lines).into_iter().filter(|l| l.contains("nncache")).cloned().collect();
        (mv, cache)
    };
    let (first, report) = search(&mut h);
    let asked_first = asked_now();
    assert!(asked_first > 0);
    assert_eq!(report.len(), 1, "{report:?}");
    // The second search, without the tree (a new game) but with the cache, asks the
    // network nothing and plays the same move.
    let (second, report) = search(&mut h);
    assert_eq!(second, first);
    assert_eq!(asked_now(), asked_first, "{report:?}");
    let words: Vec<&str> = report[0].split_whitespace().collect();
    // info string nncache hits H of L lookups (100.0%)
    assert_eq!(words[4], words[6], "every lookup a hit: {report:?}");
    assert!(report[0].ends_with("(100.0%)"), "{report:?}");
    // Without the cache the network is asked again, and nothing is reported.
    h.send("setoption name NNCacheSize value 0");
    let (third, report) = search(&mut h);
    assert_eq!(third, first);
    // (it asks every lookup of the first search, its hits included)
    assert!(asked_now() - asked_first >= asked_first, "{asked_first} then {}", asked_now());
    assert!(report.is_empty(), "{report:?}");
    // With it back and `debug off`, the cache works and says nothing.
    h.send("setoption name NNCacheSize value 1000");
    h.send("debug off");
    let (fourth, report) = search(&mut h);
    assert_eq!(fourth, first);
    assert!(report.is_empty(), "{report:?}");
}

#[test]
fn alpha_beta_checks_run_only_for_moves_within_alpha_beta_prior_max_time() {
    // `debug on` reports each search's checks (with the cache on, the default). A move time
    // over the limit runs none; `go nodes` (no time budget) and a move time within it do, in
    // the same game and tree.
    let mut h = Harness::with(EngineConfig::default(), test_loader);
    h.send("setoption name Model value random");
    h.send("setoption name AlphaBetaPriorVisits value 1");
    h.send("setoption name AlphaBetaPriorMaxTime value 200");
    h.send("debug on");
    let checks = |h: &mut Harness, go: &str| {
        h.send("position startpos moves e2e4");
        h.send(go);
        let (mv, lines) = h.bestmove();
        h.assert_legal(&mv, &lines);
        let report: Vec<String> = info_strings(&lines)
            .into_iter()
            .filter(|l| l.contains("alpha-beta priors"))
            .cloned()
            .collect();
        assert_eq!(report.len(), 1, "{lines:?}");
        report[0].clone()
    };
    // Long enough that 300 playouts end the search first on any machine.
    let off = checks(&mut h, "go movetime 100000 nodes 300");
    assert!(off.contains("off for this move"), "{off}");
    let on = checks(&mut h, "go nodes 300");
    let words: Vec<&str> = on.split_whitespace().collect();
    // info string alpha-beta priors: N checks, ...
    assert_eq!(words[5], "checks,", "{on}");
    assert!(words[4].parse::<u64>().unwrap() > 0, "{on}");
    let short = checks(&mut h, "go movetime 150 nodes 300");
    assert!(!short.contains("off for this move"), "{short}");
    // 0 lifts the limit.
    h.send("setoption name AlphaBetaPriorMaxTime value 0");
    let unlimited = checks(&mut h, "go movetime 100000 nodes 300");
    assert!(!unlimited.contains("off for this move"), "{unlimited}");
}

#[test]
fn cpuct_and_fpu_options_change_the_search() {
    // Root moves visited in 300 playouts (one `multipv` line each): little exploration with a
    // large first-play-urgency reduction keeps to a few moves; much exploration with none
    // tries every one of the 20.
    let visited = |cpuct: &str, fpu: &str| {
        let mut h = Harness::with(EngineConfig::default(), test_loader);
        h.send("setoption name Model value random");
        h.send(&format!("setoption name CPuct value {cpuct}"));
        h.send(&format!("setoption name FpuReductionAtRoot value {fpu}"));
        h.send("setoption name MultiPV value 40");
        h.send("position startpos");
        h.send("go nodes 300");
        let (_, lines) = h.bestmove();
        let last_info = lines.iter().rposition(|l| l.contains(" multipv 1 ")).unwrap();
        lines[last_info..].iter().filter(|l| l.contains(" multipv ")).count()
    };
    let narrow = visited("0.05", "5");
    let wide = visited("50", "0");
    assert_eq!(wide, 20);
    assert!(narrow < 10, "{narrow} moves visited");
    // Bad values are reported and leave the option as it was.
    let mut h = Harness::new();
    h.send("setoption name CPuct value 0");
    h.send("setoption name FpuReduction value x");
    h.send("isready");
    let lines = h.until(HANG, |l| l == "readyok");
    assert!(lines.iter().any(|l| l.contains("invalid value '0' for option CPuct")), "{lines:?}");
    assert!(lines.iter().any(|l| l.contains("invalid value 'x' for option FpuReduction")));
    assert_eq!(h.engine.options().cpuct, 1.25);
}

/// The engine plays itself in every variant, as a GUI would drive it (a growing `position
/// startpos moves ...`, so trees are reused), until the game ends: every move must be legal,
/// and once the game is over the answer is `(none)`.
#[test]
fn self_play_games_have_only_legal_moves() {
    let mut h = Harness::new();
    for variant in Variant::ALL {
        h.send("ucinewgame");
        h.send(&format!("setoption name UCI_Variant value {}", variant.name()));
        let mut moves: Vec<String> = Vec::new();
        for ply in 0..300 {
            let position = format!("position startpos moves {}", moves.join(" "));
            h.send(position.trim_end());
            assert_eq!(h.engine.position().variant(), variant);
            let over = h.engine.position().legal_moves().is_empty();
            h.send(if ply % 2 == 0 {
                "go nodes 40"
            } else {
                "go wtime 2000 btime 2000 winc 10 binc 10"
            });
            let (mv, lines) = h.bestmove();
            if over {
                assert_eq!(mv, "(none)", "{variant} ply {ply}");
                break;
            }
            h.assert_legal(&mv, &lines);
            assert!(info_strings(&lines).iter().all(|l| !l.contains("error")), "{lines:#?}");
            moves.push(mv);
        }
    }
}

#[test]
fn run_reads_until_quit_or_end_of_input() {
    use std::io::Write;
    #[derive(Clone, Default)]
    struct Shared(Arc<std::sync::Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    for ending in ["quit\nisready\n", ""] {
        let buffer = Shared::default();
        let mut input = b"uci\r\nisready\nposition startpos moves e2e4\n\xff garbage\n".to_vec();
        input.extend_from_slice(format!("go nodes 30\n{ending}").as_bytes());
        atomzero_uci::run(
            EngineConfig::default(),
            NoModelLoader,
            std::io::Cursor::new(input),
            Output::writer(buffer.clone()),
        )
        .unwrap();
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.contains(&"uciok"));
        assert_eq!(lines.iter().filter(|l| **l == "readyok").count(), 1, "{text}");
        assert!(lines.iter().any(|l| l.starts_with("bestmove ")), "{text}");
        if ending.is_empty() {
            // At the end of the input a search with a limit finishes.
            let info = lines.iter().rev().find(|l| l.starts_with("info depth")).unwrap();
            let nodes: u64 = field(info, "nodes").unwrap().parse().unwrap();
            assert!(nodes >= 30, "{text}");
        }
    }
    // At the end of the input an infinite search is stopped.
    let buffer = Shared::default();
    atomzero_uci::run(
        EngineConfig::default(),
        NoModelLoader,
        std::io::Cursor::new(b"go infinite\n".to_vec()),
        Output::writer(buffer.clone()),
    )
    .unwrap();
    let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
    assert!(text.lines().any(|l| l.starts_with("bestmove ")), "{text}");
}

#[test]
fn the_balanced_start_asks_for_whites_removal_and_plays_on_after_it() {
    let mut h = Harness::new();
    for variant in Variant::ALL {
        // `Start balanced`: `position startpos` is the setup position; bestmove is a removal.
        h.send("ucinewgame");
        h.send(&format!("setoption name UCI_Variant value {}", variant.name()));
        h.send("setoption name Start value balanced");
        h.send("position startpos");
        assert!(h.engine.position().is_setup_phase());
        h.send("go nodes 64");
        let (removal, lines) = h.bestmove();
        h.assert_legal(&removal, &lines);
        assert!(removal.starts_with('@') && removal.len() == 3, "{removal}");
        // Moves after the removal, by keyword or by option.
        h.send(&format!("position fen balanced moves {removal} e7e6"));
        assert!(!h.engine.position().is_setup_phase());
        assert_eq!(h.engine.position().turn(), atomzero_rules::Color::White);
        h.send("go nodes 64");
        let (mv, lines) = h.bestmove();
        h.assert_legal(&mv, &lines);
        h.send("setoption name Start value standard");
        h.send("position startpos");
        assert_eq!(*h.engine.position(), Position::new(variant));
    }
    // The keyword works whatever the option, and bad removals are reported.
    h.send("position fen balanced moves @e4");
    let errors = info_strings(&h.drain()).len();
    assert!(errors >= 1, "an illegal removal is reported");
    assert!(h.engine.position().is_setup_phase(), "the position before it is kept");
}

/// Positions with a forced mate, with Fairy-Stockfish's `score mate N` for each (recorded from
/// real runs by `scripts/fsf_mates.py`, shared with `crates/mcts/tests/mate.rs`): once the
/// search has proven the result, the engine reports the same N, where it used to say
/// `cp 20000`.
#[test]
fn proven_positions_report_fairy_stockfishs_mate_distance() {
    let mut h = Harness::new();
    let mut reported = 0;
    let mut total = 0;
    for line in include_str!("../../mcts/tests/data/fsf-mates.txt").lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let (fen, n) = line.rsplit_once(';').unwrap();
        let expected: i32 = n.parse().unwrap();
        total += 1;
        h.send("ucinewgame");
        h.send(&format!("position fen {fen}"));
        h.send("go nodes 3000");
        let (mv, lines) = h.bestmove();
        h.assert_legal(&mv, &lines);
        let info = lines.iter().rev().find(|l| l.starts_with("info depth")).expect("info");
        assert!(!info.contains(" cp 20000") && !info.contains(" cp -20000"), "{fen}: {info}");
        if let Some(mate) = field(info, "mate") {
            assert_eq!(mate.parse::<i32>().unwrap(), expected, "{fen}: {info}");
            reported += 1;
        }
    }
    eprintln!("mate reported for {reported} of {total} positions, each equal to FSF's");
    // Uniform priors and 3,000 playouts prove most of them.
    assert!(reported * 3 >= total * 2, "mate reported for {reported} of {total}");
}

#[test]
fn multipv_lines_of_proven_moves_carry_their_mate_distance() {
    let mut h = Harness::new();
    // Qxd7 blows up the black king at once; other moves keep the game going.
    h.send("position fen 4k3/3p4/8/8/8/8/8/3QK3 w - - 0 1");
    h.send("setoption name MultiPV value 3");
    h.send("go nodes 400");
    let (mv, lines) = h.bestmove();
    assert_eq!(mv, "d1d7");
    let last: Vec<&String> = lines.iter().filter(|l| l.contains(" multipv ")).collect();
    let best = last.iter().rev().find(|l| l.contains(" multipv 1 ")).unwrap();
    assert!(best.contains(" score mate 1 "), "{best}");
    assert!(!best.contains(" wdl "), "no wdl without UCI_ShowWDL: {best}");
}

#[test]
fn alphabeta_share_leaves_refuted_root_moves_out() {
    // Black threatens Bxf2 (the blast takes the g1 king). Without a network the search
    // spreads its few playouts evenly; with AlphaBetaShare the moves that allow the
    // explosion are left out before it starts, and the answer is never one of them.
    let fen = "4k3/8/8/2b5/8/8/5P2/6K1 w - - 0 1";
    let pos = Position::from_fen(fen, Variant::Atomic).unwrap();
    let mut h = Harness::new();
    h.send("setoption name AlphaBetaShare value 30");
    h.send(&format!("position fen {fen}"));
    for limit in ["go nodes 2", "go movetime 100"] {
        let (mv, refuted, note) = go_with_check(&mut h, limit, "alphabeta depth");
        let after =
            pos.play(pos.legal_moves().iter().copied().find(|&m| pos.uci(m) == mv).unwrap());
        let after = after.unwrap();
        assert!(after.winning_move(&after.legal_moves()).is_none(), "{limit}: {mv} allows Bxf2");
        let traps = pos
            .legal_moves()
            .iter()
            .filter(|&&m| {
                let a = pos.play(m).unwrap();
                a.winning_move(&a.legal_moves()).is_some()
            })
            .count();
        assert_eq!(refuted, traps, "{note}");
    }
    // Off (the default): no alpha-beta line.
    h.send("setoption name AlphaBetaShare value 0");
    h.send("go nodes 2");
    let (_, lines) = h.bestmove();
    assert!(info_strings(&lines).iter().all(|l| !l.contains("alphabeta")), "{lines:#?}");
}

#[test]
fn alphabeta_root_share_raises_the_prior_of_the_only_move_that_keeps_the_material() {
    // Nxd5 takes the queen; every other move leaves a knight against a queen. Without a
    // network every prior is equal; the root check leaves one move unrefuted and raises its
    // prior to AlphaBetaPriorWeight (0.5), so the few playouts go to it. The checks inside
    // the tree are off, so that only the root check can raise it.
    let fen = "4k3/8/8/3q4/8/4N3/8/4K3 w - - 0 1";
    let pos = Position::from_fen(fen, Variant::Atomic).unwrap();
    let n = pos.legal_moves().len();
    let mut h = Harness::new();
    h.send("setoption name AlphaBetaPriorNodes value 0");
    h.send("setoption name AlphaBetaRootShare value 10");
    h.send(&format!("position fen {fen}"));
    for limit in ["go nodes 16", "go movetime 100"] {
        let (mv, refuted, note) = go_with_check(&mut h, limit, "alphabeta root priors depth");
        assert_eq!(refuted, n - 1, "{note}");
        assert_eq!(mv, "e3d5", "{limit}: {note}");
    }
    // Off (the default): no such line.
    h.send("setoption name AlphaBetaRootShare value 0");
    h.send("go nodes 16");
    let (_, lines) = h.bestmove();
    assert!(info_strings(&lines).iter().all(|l| !l.contains("root priors")), "{lines:#?}");
}

#[test]
fn go_searchmoves_searches_only_the_moves_named() {
    let mut h = Harness::new();
    h.send("position startpos");
    for _ in 0..3 {
        h.send("go searchmoves a2a3 h2h3 e9e4 nodes 300");
        let (mv, lines) = h.bestmove();
        h.assert_legal(&mv, &lines);
        assert!(mv == "a2a3" || mv == "h2h3", "{mv}");
        assert!(
            info_strings(&lines).iter().any(|l| l.contains("e9e4") && l.contains("ignored")),
            "{lines:#?}"
        );
    }
    // Nothing legal named: every move is searched.
    h.send("go searchmoves e9e4 nodes 50");
    let (mv, lines) = h.bestmove();
    h.assert_legal(&mv, &lines);
}
