//! Dumps random games for differential testing against other implementations.
//!
//! Plays `N` games of uniformly random legal moves from the standard start position of a
//! variant, with a fixed-seed RNG (so a seed always gives the same games), and prints one line
//! per position reached, tab-separated:
//!
//! ```text
//! GAME  PLY  FEN  MOVES  OUTCOME  PLAYED
//! ```
//!
//! - `MOVES`: the legal moves in UCI, sorted, space-separated (empty if there are none);
//! - `OUTCOME`: [`Game::outcome`] ([`Position::outcome`] plus threefold repetition) as
//!   `RESULT TERMINATION`, e.g. `1-0 king exploded`, or `-` while the game goes on;
//! - `PLAYED`: the UCI move played from this position, or `-` on a game's last position.
//!
//! A game stops when [`Game::outcome`] says so or after `--max-plies` half-moves (default 200).
//! `scripts/fsf_diff.py` reads this output and compares every position with Fairy-Stockfish's
//! `pyffish`: legal moves, the position after each move played, and game ends.
//!
//! Usage:
//!
//! ```text
//! cargo run --release -p atomzero-rules --example dump_games -- \
//!     --variant NAME --games N --seed S [--max-plies P]
//! ```

use atomzero_rules::{Game, Outcome, Position, Variant};
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

/// SplitMix64: tiny, deterministic and good enough for picking random moves.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`); the modulo bias is irrelevant here.
    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

struct Args {
    variant: Variant,
    games: u64,
    seed: u64,
    max_plies: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut variant = None;
    let mut games = None;
    let mut seed = None;
    let mut max_plies = 200;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = || value.parse::<u64>().map_err(|e| format!("{flag} {value}: {e}"));
        match flag.as_str() {
            "--variant" => {
                let parsed = Variant::from_name(&value)
                    .ok_or_else(|| format!("unknown variant '{value}' ({})", Variant::names()))?;
                // Fairy-Stockfish has no bomb variant to compare with.
                variant = Some(
                    parsed.require_perfect_information("dump_games").map_err(|e| e.to_string())?,
                );
            }
            "--games" => games = Some(number()?),
            "--seed" => seed = Some(number()?),
            "--max-plies" => max_plies = number()? as usize,
            _ => return Err(format!("unknown argument '{flag}'")),
        }
    }
    Ok(Args {
        variant: variant.ok_or("--variant is required")?,
        games: games.ok_or("--games is required")?,
        seed: seed.ok_or("--seed is required")?,
        max_plies,
    })
}

fn outcome_text(outcome: Option<Outcome>) -> String {
    match outcome {
        Some(o) => format!("{} {}", o.result_str(), o.termination),
        None => "-".to_string(),
    }
}

fn run(args: &Args, out: &mut impl Write) -> io::Result<()> {
    let mut rng = SplitMix64(args.seed);
    for game_index in 0..args.games {
        let mut game = Game::new(Position::new(args.variant));
        loop {
            let pos = *game.position();
            let moves = pos.legal_moves();
            let mut ucis: Vec<String> = moves.iter().map(|&m| pos.uci(m)).collect();
            ucis.sort();
            let outcome = game.outcome();
            let over = outcome.is_some() || game.ply() >= args.max_plies || moves.is_empty();
            let played = if over { None } else { Some(moves[rng.below(moves.len())]) };
            writeln!(
                out,
                "{game_index}\t{}\t{}\t{}\t{}\t{}",
                game.ply(),
                pos.fen(),
                ucis.join(" "),
                outcome_text(outcome),
                played.map_or_else(|| "-".to_string(), |m| pos.uci(m)),
            )?;
            match played {
                Some(m) => game.play_unchecked(m),
                None => break,
            }
        }
    }
    out.flush()
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("dump_games: {e}");
            eprintln!("usage: dump_games --variant NAME --games N --seed S [--max-plies P]");
            return ExitCode::from(2);
        }
    };
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    match run(&args, &mut out) {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (e.g. `| head`) is not an error worth reporting.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dump_games: {e}");
            ExitCode::FAILURE
        }
    }
}
