//! A fake UCI engine for atomzero-eval's tests (`tests/eval/uci.rs`). It speaks enough UCI
//! for the match runner and misbehaves on request:
//!
//! ```text
//! fake_uci [mode=good|illegal|garbage|none|crash|hang] [after=N] [variants=LIST|novariant] [balanced]
//! ```
//!
//! It answers the first `after` searches (default 0) with a legal move (a pseudo-random one
//! chosen by the position's hash), then every later one according to `mode`: `illegal` sends
//! `bestmove a1a1`, `garbage` sends `bestmove xyz`, `none` sends `bestmove (none)`, `crash`
//! exits, `hang` stops answering. By default it advertises `UCI_Variant` with every atomzero
//! variant and `chess`, and answers with the null move if a game starts without the variant
//! having been set; `variants=chess+crazyhouse` advertises only those, `novariant` no
//! `UCI_Variant` at all (the engine then plays atomic). `balanced` advertises a `Start` option
//! with the value `balanced` (the engine then plays the Balanced start's removal as `@e2`).

use atomzero_rules::{Position, Variant};
use std::io::{BufRead, Write};

fn main() {
    let mut mode = "good".to_string();
    let mut after = 0usize;
    let mut balanced = false;
    let mut advertised: Option<Vec<String>> = Some(
        std::iter::once("chess".to_string())
            .chain(Variant::ALL.iter().map(|v| v.name().to_string()))
            .collect(),
    );
    for arg in std::env::args().skip(1) {
        if let Some(m) = arg.strip_prefix("mode=") {
            mode = m.to_string();
        } else if let Some(n) = arg.strip_prefix("after=") {
            after = n.parse().expect("after=N");
        } else if let Some(list) = arg.strip_prefix("variants=") {
            advertised = Some(list.split('+').map(str::to_string).collect());
        } else if arg == "novariant" {
            advertised = None;
        } else if arg == "balanced" {
            balanced = true;
        } else {
            panic!("unknown argument {arg}");
        }
    }
    let mut variant: Option<Variant> =
        if advertised.is_none() { Some(Variant::Atomic) } else { None };
    let mut position: Option<Position> = None;
    let mut searches = 0usize;
    let stdin = std::io::stdin();
    let mut out = std::io::stdout();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let tokens: Vec<&str> = line.split_whitespace().collect();
        match tokens.first().copied() {
            Some("uci") => {
                writeln!(out, "id name fake_uci {mode}").unwrap();
                writeln!(out, "id author atomzero tests").unwrap();
                if let Some(list) = &advertised {
                    let vars: Vec<String> = list.iter().map(|v| format!("var {v}")).collect();
                    writeln!(
                        out,
                        "option name UCI_Variant type combo default chess {}",
                        vars.join(" ")
                    )
                    .unwrap();
                }
                writeln!(out, "option name Hash type spin default 16 min 1 max 1024").unwrap();
                if balanced {
                    writeln!(
                        out,
                        "option name Start type combo default standard var standard var balanced"
                    )
                    .unwrap();
                }
                writeln!(out, "uciok").unwrap();
            }
            Some("isready") => writeln!(out, "readyok").unwrap(),
            // setoption name UCI_Variant value atomic
            Some("setoption") if tokens.get(2) == Some(&"UCI_Variant") => {
                variant = tokens.get(4).and_then(|v| Variant::from_name(v));
            }
            Some("position") => position = variant.and_then(|v| parse_position(&tokens, v)),
            Some("go") => {
                searches += 1;
                if searches > after {
                    match mode.as_str() {
                        "illegal" => writeln!(out, "bestmove a1a1").unwrap(),
                        "garbage" => writeln!(out, "bestmove xyz").unwrap(),
                        "none" => writeln!(out, "bestmove (none)").unwrap(),
                        "crash" => std::process::exit(3),
                        "hang" => {}
                        _ => answer(&mut out, position.as_ref()),
                    }
                } else {
                    answer(&mut out, position.as_ref());
                }
            }
            Some("quit") => break,
            _ => {}
        }
        out.flush().unwrap();
    }
}

fn answer(out: &mut impl Write, position: Option<&Position>) {
    writeln!(out, "info depth 1 score cp 0 nodes 1").unwrap();
    let chosen = position.and_then(|pos| {
        let moves = pos.legal_moves();
        (!moves.is_empty()).then(|| pos.uci(moves[(pos.hash() % moves.len() as u64) as usize]))
    });
    writeln!(out, "bestmove {}", chosen.unwrap_or_else(|| "0000".to_string())).unwrap();
}

/// `position fen <fen> [moves ...]` or `position startpos [moves ...]`.
fn parse_position(tokens: &[&str], variant: Variant) -> Option<Position> {
    let moves_at = tokens.iter().position(|&t| t == "moves").unwrap_or(tokens.len());
    let mut pos = match tokens.get(1).copied() {
        Some("startpos") => Position::new(variant),
        Some("fen") => Position::from_fen(&tokens[2..moves_at].join(" "), variant).ok()?,
        _ => return None,
    };
    for m in tokens.iter().skip(moves_at + 1) {
        pos = pos.play(pos.parse_uci(m).ok()?).ok()?;
    }
    Some(pos)
}
