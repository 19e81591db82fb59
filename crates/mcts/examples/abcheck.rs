//! The alpha-beta root check on a file of positions (issue 42's diagnosis): each line is
//! `FEN|played-move` (UCI), or an EPD line of a blunder suite (`am` the move played, `bm` the
//! better move, both SAN: `docs/experiments/blunders-0500.epd`); prints the depth reached, the
//! best move and score, the moves refuted by `margin` centipawns or more, whether the played
//! move is among them and, for EPD lines, whether the better move is (a false alarm).
//!
//! `cargo run --release -p atomzero-mcts --example abcheck -- FILE NODES [MARGIN]`
use atomzero_mcts::alphabeta::AlphaBeta;
use atomzero_rules::{Move, Position, Variant};
use std::time::Instant;

/// The position, the move played and the better move (EPD lines only) of one line.
fn parse(line: &str) -> (Position, Move, Option<Move>) {
    if let Some((fen, played)) = line.split_once('|') {
        let pos = Position::from_fen(fen, Variant::Atomic).unwrap();
        let m = *pos.legal_moves().iter().find(|&&m| pos.uci(m) == played).unwrap();
        return (pos, m, None);
    }
    let fields: Vec<&str> = line.split_whitespace().collect();
    let fen = format!("{} 0 1", fields[..4].join(" "));
    let pos = Position::from_fen(&fen, Variant::Atomic).unwrap();
    let op = |name: &str| {
        let rest = line.split(&format!(" {name} ")).nth(1)?;
        pos.parse_san(rest.split(';').next()?.trim()).ok()
    };
    (pos, op("am").unwrap(), op("bm"))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let budget: u64 = args[2].parse().unwrap();
    let margin: i32 = args.get(3).map(|s| s.parse().unwrap()).unwrap_or(300);
    let text = std::fs::read_to_string(&args[1]).unwrap();
    let (mut caught, mut false_alarms, mut lines, mut depths, mut nodes) = (0, 0, 0, 0, 0);
    let t = Instant::now();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let (pos, played, better) = parse(line);
        let mut ab = AlphaBeta::new(20);
        let r = ab.check_root(&pos, &[], 64, margin, &mut |n| n < budget).unwrap();
        let refuted = r.refuted.contains(&played);
        let alarm = better.is_some_and(|b| r.refuted.contains(&b));
        caught += refuted as u32;
        false_alarms += alarm as u32;
        lines += 1;
        depths += r.depth;
        nodes += r.nodes;
        println!(
            "{:6} depth {:2} best {} {:6} refuted {:2}/{:2} played-refuted {refuted} better-refuted {alarm}",
            pos.uci(played),
            r.depth,
            pos.uci(r.best),
            r.score,
            r.refuted.len(),
            pos.legal_moves().len(),
        );
    }
    let dt = t.elapsed().as_secs_f64();
    println!(
        "caught {caught}/{lines} false alarms {false_alarms} mean depth {:.2} {:.0} knps",
        depths as f64 / lines as f64,
        nodes as f64 / dt / 1000.0
    );
}
