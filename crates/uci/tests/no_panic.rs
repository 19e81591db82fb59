//! Property tests of the UCI input path on hostile lines (issue 44): random and mutated lines
//! (GUI tokens, FENs, moves, control bytes, invalid UTF-8, megabyte names) never panic the
//! parser, the options or the engine; every answer is a bounded line; a line that is not text
//! never starts a search; an out-of-range spin value is said, not clamped silently. Seeded.

use atomzero_uci::command::parse;
use atomzero_uci::{Command, Engine, EngineConfig, NoModelLoader, OptionId, Options, Output};

struct Rng(u64);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 =
            self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

const TOKENS: [&str; 40] = [
    "uci",
    "isready",
    "setoption",
    "name",
    "value",
    "position",
    "startpos",
    "fen",
    "moves",
    "ucinewgame",
    "debug",
    "on",
    "register",
    "stop",
    "ponderhit",
    "Threads",
    "Hash",
    "Model",
    "MinibatchSize",
    "UCI_Variant",
    "Start",
    "Move Overhead",
    "CPuct",
    "nan",
    "-1",
    "0",
    "100000",
    "18446744073709551616",
    "e2e4",
    "e7e8q",
    "@e2",
    "a1a1",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR",
    "w",
    "KQkq",
    "-",
    "\u{0}",
    "\u{feff}",
    "\u{fffd}",
    "\t",
];

fn random_line(rng: &mut Rng) -> String {
    let mut words: Vec<String> =
        (0..rng.below(12)).map(|_| TOKENS[rng.below(TOKENS.len())].to_string()).collect();
    if rng.below(10) == 0 {
        words.push("x".repeat(rng.below(200_000)));
    }
    if rng.below(8) == 0 {
        let bytes: Vec<u8> = (0..rng.below(40)).map(|_| rng.below(256) as u8).collect();
        words.push(String::from_utf8_lossy(&bytes).into_owned());
    }
    words.join(" ")
}

#[test]
fn random_lines_parse_to_a_command_or_a_short_error() {
    let mut rng = Rng(44);
    let mut options = Options::default();
    for _ in 0..20_000 {
        let mut line = random_line(&mut rng);
        if rng.below(3) == 0 {
            line.push_str(" go");
        }
        match parse(&line) {
            Ok(Some(parsed)) => {
                for w in &parsed.warnings {
                    assert!(w.to_string().chars().count() < 300, "{w}");
                }
                if line
                    .chars()
                    .any(|c| c == '\u{fffd}' || (c.is_control() && !c.is_ascii_whitespace()))
                {
                    panic!("a line that is not text was accepted: {line:?}");
                }
                if let Command::SetOption { name, value } = parsed.command {
                    match options.set(&name, value.as_deref()) {
                        Ok(id) => {
                            if let (Some(v), Some(range)) = (value.as_deref(), id.range()) {
                                let note = id.clamp_note(v);
                                let n: i128 = v.trim().parse().unwrap_or(i128::from(range.min));
                                let outside =
                                    n < i128::from(range.min) || n > i128::from(range.max);
                                assert_eq!(note.is_some(), outside, "{v} for {}", id.uci_name());
                            }
                        }
                        Err(e) => assert!(e.to_string().chars().count() < 700, "{e}"),
                    }
                }
            }
            Ok(None) => assert!(line.trim().is_empty()),
            Err(e) => assert!(e.to_string().chars().count() < 300, "{e}"),
        }
    }
}

#[test]
fn hostile_lines_never_panic_the_engine_and_binary_garbage_never_searches() {
    let (output, lines) = Output::channel();
    let mut engine = Engine::new(EngineConfig::default(), NoModelLoader, output);
    let mut rng = Rng(4444);
    for _ in 0..3000 {
        let line = random_line(&mut rng);
        // `go` needs a search; the parser test covers it. Garbage ending in `go` must not.
        engine.handle(&line);
        let garbage = format!("\u{0}{}\u{fffd} go", line);
        engine.handle(&garbage);
        assert!(!engine.is_searching(), "{garbage:?} started a search");
    }
    engine.handle("isready");
    drop(engine);
    let answers: Vec<String> = lines.try_iter().collect();
    assert!(answers.iter().any(|l| l == "readyok"));
    for answer in &answers {
        assert!(answer.chars().count() < 2000, "{} characters", answer.chars().count());
        assert!(!answer.starts_with("bestmove"), "{answer}");
    }
    assert!(answers.iter().any(|l| l.contains("not text")));
}

#[test]
fn every_spin_option_says_when_it_clamps() {
    for id in OptionId::ALL {
        let Some(range) = id.range() else {
            assert_eq!(id.clamp_note("5"), None);
            continue;
        };
        assert_eq!(id.clamp_note(&range.min.to_string()), None);
        assert_eq!(id.clamp_note(&range.max.to_string()), None);
        let above = id.clamp_note(&(u128::from(range.max) + 1).to_string()).unwrap();
        assert!(above.contains(&format!("using {}", range.max)), "{above}");
        if range.min > 0 {
            let below = id.clamp_note("0").unwrap();
            assert!(below.contains(&format!("using {}", range.min)), "{below}");
        }
        assert_eq!(id.clamp_note("lots"), None, "not a number: an error, not a clamp");
    }
}
