//! Every line of the published perft suites (tests/data, copied from ../shared/data) and of our
//! Balanced-start table (tests/data/balanced.perft, checked against shakmaty in balanced.rs) and
//! of the bomb variant's (tests/data/bomb.perft, counted independently by scripts/bomb_perft.py),
//! exact, under a node budget per line so the test stays fast. The full depths run through
//! `atomzero perft --suite` in scripts/test.sh.

mod common;

use atomzero_rules::{CastlingMode, Variant, perft};

/// Lines with more expected nodes than this are left to the CLI run.
const NODE_BUDGET: u64 = 2_000_000;

fn run_suite(name: &str) -> usize {
    let text = std::fs::read_to_string(common::data_path(name)).unwrap();
    let mut checked = 0;
    let (mut variant, mut chess960, mut fen) = (Variant::Atomic, false, None::<String>);
    let mut id = String::new();
    for line in text.lines().map(str::trim) {
        if let Some(c) = line.strip_prefix('#') {
            let c = c.trim();
            if let Some(v) = c.strip_prefix("variant ") {
                variant = v.trim().parse().unwrap();
            } else if c == "chess960" {
                chess960 = true;
            }
        } else if let Some(rest) = line.strip_prefix("id ") {
            (id, variant, chess960, fen) = (rest.to_string(), Variant::Atomic, false, None);
        } else if let Some(epd) = line.strip_prefix("epd ") {
            fen = Some(epd.trim().to_string());
        } else if let Some(rest) = line.strip_prefix("perft ") {
            let mut parts = rest.split_whitespace();
            let depth: u32 = parts.next().unwrap().parse().unwrap();
            let expected: u64 = parts.next().unwrap().parse().unwrap();
            if expected > NODE_BUDGET {
                continue;
            }
            let mode = if chess960 { CastlingMode::Chess960 } else { CastlingMode::Standard };
            let fen = fen.as_deref().unwrap();
            let pos = common::position(fen, variant, mode);
            assert_eq!(perft(&pos, depth), expected, "{id} ({variant}) depth {depth}: {fen}");
            checked += 1;
        }
    }
    checked
}

#[test]
fn atomic_suite() {
    assert!(run_suite("atomic.perft") >= 25);
}

#[test]
fn balanced_start_suite() {
    // Depths 1-4 of the five variants; the deeper lines run through the CLI.
    assert_eq!(run_suite("balanced.perft"), 20);
}

#[test]
fn bomb_suite() {
    // Every line up to the budget (the setup phase, detonations in and out of check, en
    // passant, castling and promotion with bombs); counted independently by
    // scripts/bomb_perft.py.
    assert!(run_suite("bomb.perft") >= 85);
}

#[test]
fn variant_suite() {
    assert_eq!(run_suite("atomic-variants.perft"), 4);
}

#[test]
fn pawnblast_and_deathmatch_start_positions_diverge_only_after_captures() {
    // No capture is possible before ply 3, so the first plies agree with atomic.
    for variant in [Variant::Pawnblast, Variant::Deathmatch] {
        let pos = atomzero_rules::Position::new(variant);
        assert_eq!(perft(&pos, 1), 20);
        assert_eq!(perft(&pos, 2), 400);
    }
}
