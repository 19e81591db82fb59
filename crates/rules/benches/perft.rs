//! Perft throughput of atomzero-rules against shakmaty (the test oracle) on the published atomic
//! suite `tests/data/atomic.perft`.
//!
//! Both implementations count the same lines (position, depth) of the suite in the same run,
//! with bulk counting at depth 1, and every count is checked against the published value (a
//! mismatch panics with the FEN). Lines marked `# chess960` are set up with Chess960 castling in
//! both, as the upstream harnesses do. Each line is timed in several samples (alternating the two
//! implementations, each sample repeating the count until it lasts a few milliseconds) and the
//! best sample counts.
//!
//! ```text
//! cargo bench -p atomzero-rules                               # lines up to 5M nodes
//! cargo bench -p atomzero-rules -- --max-nodes 10000000 --samples 5
//! cargo bench -p atomzero-rules -- castle                    # only ids containing "castle"
//! ```
//!
//! `ATOMZERO_PERFT_MAX_NODES` sets the node budget too (the flag wins). Run without `--bench`
//! (as `cargo test --benches` does), the binary only checks the counts of the small lines, once.

use std::hint::black_box;
use std::time::{Duration, Instant};

use atomzero_rules::{CastlingMode, Position, Setup, Variant};
use shakmaty::fen::Fen;
use shakmaty::variant::Atomic;

/// Default node budget per line: lines expecting more nodes are skipped.
const DEFAULT_MAX_NODES: u64 = 5_000_000;
/// Node budget in quick (test) mode.
const QUICK_MAX_NODES: u64 = 100_000;
/// Default number of timed samples per line and implementation.
const DEFAULT_SAMPLES: u32 = 3;
/// A sample repeats a count until it has run at least this long.
const MIN_SAMPLE: Duration = Duration::from_millis(20);

/// One `perft DEPTH NODES` line with its position.
struct Line {
    id: String,
    fen: String,
    chess960: bool,
    depth: u32,
    expected: u64,
}

struct Options {
    max_nodes: u64,
    samples: u32,
    filter: Option<String>,
    quick: bool,
}

fn usage(problem: &str) -> ! {
    eprintln!("perft bench: {problem}");
    eprintln!("usage: cargo bench -p atomzero-rules -- [--max-nodes N] [--samples N] [ID_FILTER]");
    std::process::exit(2);
}

fn parse_options() -> Options {
    let mut max_nodes = None;
    let mut samples = DEFAULT_SAMPLES;
    let mut filter = None;
    let mut bench = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| -> u64 {
            let text = args.next().unwrap_or_else(|| usage(&format!("{name} needs a value")));
            text.replace('_', "")
                .parse()
                .unwrap_or_else(|_| usage(&format!("{name}: not a number: {text}")))
        };
        match arg.as_str() {
            "--bench" => bench = true,
            "--max-nodes" => max_nodes = Some(value("--max-nodes")),
            "--samples" => samples = value("--samples").clamp(1, 100) as u32,
            "-h" | "--help" => usage("help"),
            other if other.starts_with('-') => {} // other harness flags (e.g. --nocapture)
            other => filter = Some(other.to_string()),
        }
    }
    let env_max = std::env::var("ATOMZERO_PERFT_MAX_NODES").ok().map(|v| {
        v.replace('_', "")
            .parse()
            .unwrap_or_else(|_| usage(&format!("ATOMZERO_PERFT_MAX_NODES: not a number: {v}")))
    });
    let quick = !bench;
    let default_max = if quick { QUICK_MAX_NODES } else { DEFAULT_MAX_NODES };
    Options {
        max_nodes: max_nodes.or(env_max).unwrap_or(default_max),
        samples: if quick { 1 } else { samples },
        filter,
        quick,
    }
}

fn read_suite(text: &str) -> Vec<Line> {
    let mut lines = Vec::new();
    let (mut id, mut fen, mut chess960) = (String::new(), None::<String>, false);
    for (number, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if let Some(comment) = line.strip_prefix('#') {
            if comment.trim() == "chess960" {
                chess960 = true;
            }
        } else if let Some(rest) = line.strip_prefix("id ") {
            (id, fen, chess960) = (rest.trim().to_string(), None, false);
        } else if let Some(epd) = line.strip_prefix("epd ") {
            fen = Some(epd.trim().to_string());
        } else if let Some(rest) = line.strip_prefix("perft ") {
            let mut parts = rest.split_whitespace();
            let depth = parts.next().and_then(|d| d.parse().ok());
            let expected = parts.next().and_then(|n| n.parse().ok());
            let (Some(depth), Some(expected), Some(fen)) = (depth, expected, fen.clone()) else {
                panic!("atomic.perft line {}: malformed (or no epd before it): {raw}", number + 1);
            };
            lines.push(Line { id: id.clone(), fen, chess960, depth, expected });
        } else if !line.is_empty() {
            panic!("atomic.perft line {}: unexpected: {raw}", number + 1);
        }
    }
    lines
}

fn ours(line: &Line) -> Position {
    let mode = if line.chess960 { CastlingMode::Chess960 } else { CastlingMode::Standard };
    let setup = Setup::from_fen(&line.fen)
        .unwrap_or_else(|e| panic!("{}: atomzero cannot parse {}: {e}", line.id, line.fen));
    Position::from_setup(setup, Variant::Atomic, mode)
        .unwrap_or_else(|e| panic!("{}: atomzero rejects {}: {e}", line.id, line.fen))
}

fn theirs(line: &Line) -> Atomic {
    let mode = if line.chess960 {
        shakmaty::CastlingMode::Chess960
    } else {
        shakmaty::CastlingMode::Standard
    };
    let fen: Fen = line
        .fen
        .parse()
        .unwrap_or_else(|e| panic!("{}: shakmaty cannot parse {}: {e}", line.id, line.fen));
    fen.into_position(mode)
        .unwrap_or_else(|e| panic!("{}: shakmaty rejects {}: {e}", line.id, line.fen))
}

/// Checks one count against the published value.
fn check(who: &str, line: &Line, nodes: u64) {
    assert!(
        nodes == line.expected,
        "{who} perft mismatch on {} depth {}{}: got {nodes}, expected {} (FEN {})",
        line.id,
        line.depth,
        if line.chess960 { " (chess960)" } else { "" },
        line.expected,
        line.fen
    );
}

/// Times one sample: repeats `count` until `MIN_SAMPLE` has passed. Returns the time per count.
fn sample(line: &Line, who: &str, count: &mut dyn FnMut() -> u64) -> Duration {
    let start = Instant::now();
    let mut runs = 0u32;
    loop {
        let nodes = black_box(count());
        check(who, line, nodes);
        runs += 1;
        let elapsed = start.elapsed();
        if elapsed >= MIN_SAMPLE {
            return elapsed / runs;
        }
    }
}

fn nodes_per_sec(nodes: u64, time: Duration) -> f64 {
    nodes as f64 / time.as_secs_f64().max(1e-12)
}

fn main() {
    let options = parse_options();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/atomic.perft");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let suite = read_suite(&text);
    assert!(!suite.is_empty(), "{path}: no perft lines");

    if options.quick {
        println!(
            "perft bench (check only; `cargo bench` times): lines up to {} nodes",
            options.max_nodes
        );
    } else {
        println!(
            "perft bench: {} (lines up to {} nodes, best of {} samples of >= {} ms each)",
            path,
            options.max_nodes,
            options.samples,
            MIN_SAMPLE.as_millis()
        );
        println!(
            "{:<22} {:>5} {:>10} {:>14} {:>14} {:>7}",
            "id", "depth", "nodes", "atomzero n/s", "shakmaty n/s", "ratio"
        );
    }

    let (mut total_nodes, mut total_ours, mut total_theirs) =
        (0u64, Duration::ZERO, Duration::ZERO);
    let (mut log_ratio_sum, mut timed, mut skipped) = (0.0f64, 0usize, 0usize);
    for line in &suite {
        if options.filter.as_ref().is_some_and(|f| !line.id.contains(f.as_str())) {
            continue;
        }
        if line.expected > options.max_nodes {
            skipped += 1;
            continue;
        }
        let (pos, sk) = (ours(line), theirs(line));
        let mut count_ours = || atomzero_rules::perft(black_box(&pos), black_box(line.depth));
        let mut count_theirs = || shakmaty::perft(black_box(&sk), black_box(line.depth));
        if options.quick {
            check("atomzero", line, count_ours());
            check("shakmaty", line, count_theirs());
            timed += 1;
            continue;
        }
        let (mut best_ours, mut best_theirs) = (Duration::MAX, Duration::MAX);
        for _ in 0..options.samples {
            best_ours = best_ours.min(sample(line, "atomzero", &mut count_ours));
            best_theirs = best_theirs.min(sample(line, "shakmaty", &mut count_theirs));
        }
        let ratio = best_theirs.as_secs_f64() / best_ours.as_secs_f64().max(1e-12);
        println!(
            "{:<22} {:>5} {:>10} {:>14.0} {:>14.0} {:>6.2}x{}",
            line.id,
            line.depth,
            line.expected,
            nodes_per_sec(line.expected, best_ours),
            nodes_per_sec(line.expected, best_theirs),
            ratio,
            if line.chess960 { "  (chess960)" } else { "" }
        );
        total_nodes += line.expected;
        total_ours += best_ours;
        total_theirs += best_theirs;
        log_ratio_sum += ratio.ln();
        timed += 1;
    }
    assert!(
        timed > 0,
        "no perft line selected (filter {:?}, budget {})",
        options.filter,
        options.max_nodes
    );

    if options.quick {
        println!("{timed} lines agree with the published counts ({skipped} over budget skipped)");
        return;
    }
    let ours_nps = nodes_per_sec(total_nodes, total_ours);
    let theirs_nps = nodes_per_sec(total_nodes, total_theirs);
    println!(
        "{timed} lines ({skipped} over budget skipped), {total_nodes} nodes per implementation, \
         all counts match the published values; per-line ratio geometric mean {:.2}x",
        (log_ratio_sum / timed as f64).exp()
    );
    println!(
        "atomzero: {:.0} nodes/s, shakmaty: {:.0} nodes/s, ratio {:.2}x (bulk counting at depth 1 in both)",
        ours_nps,
        theirs_nps,
        ours_nps / theirs_nps
    );
}
