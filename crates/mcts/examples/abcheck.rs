//! The alpha-beta root check on a file of positions (issue 42's diagnosis): each line is
//! `FEN|played-move`; prints the depth reached, the best move and score, the moves refuted by
//! `margin` centipawns or more, and whether the played move is among them.
//!
//! `cargo run --release -p atomzero-mcts --example abcheck -- FILE NODES [MARGIN]`
use atomzero_mcts::alphabeta::AlphaBeta;
use atomzero_rules::{Position, Variant};
use std::time::Instant;
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let budget: u64 = std::env::args().nth(2).unwrap().parse().unwrap();
    let margin: i32 = std::env::args().nth(3).map(|s| s.parse().unwrap()).unwrap_or(300);
    let text = std::fs::read_to_string(path).unwrap();
    let mut caught = 0;
    for line in text.lines() {
        let (fen, played) = line.split_once('|').unwrap();
        let pos = Position::from_fen(fen, Variant::Atomic).unwrap();
        let mut ab = AlphaBeta::new(20);
        let t = Instant::now();
        let r = ab.check_root(&pos, &[], 64, margin, &mut |n| n < budget).unwrap();
        let dt = t.elapsed().as_secs_f64();
        let refuted = r.refuted.iter().any(|&m| pos.uci(m) == played);
        caught += refuted as u32;
        let list: Vec<String> = r.refuted.iter().map(|&m| pos.uci(m)).collect();
        println!("REF {fen}|{}|{}|{}", pos.uci(r.best), r.score, list.join(","));
        println!(
            "{played:6} depth {:2} best {} {:6} refuted {:2}/{:2} played-refuted {refuted} nodes {} {:.0} knps",
            r.depth,
            pos.uci(r.best),
            r.score,
            r.refuted.len(),
            pos.legal_moves().len(),
            r.nodes,
            r.nodes as f64 / dt / 1000.0
        );
    }
    println!("caught {caught}");
}
