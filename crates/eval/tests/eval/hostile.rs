//! Issue 44: values a hostile user gives the evaluator. SPRT settings outside their ranges and
//! matches of no games are refused with the value named; opening books (both readers: this
//! crate's and self-play's) never panic on damaged text, name the file and line of the first
//! bad position, and skip a UTF-8 byte-order mark. Seeded.

use atomzero_eval::{EpdError, MatchConfig, Openings, PlayerSpec, SprtConfig, run_match};
use atomzero_rules::Variant;

#[test]
fn sprt_settings_outside_their_ranges_are_refused() {
    for (text, needle) in [
        ("elo0=10,elo1=0,alpha=2,beta=-1", "elo0 = 10 must be below elo1 = 0"),
        ("elo0=5,elo1=5", "elo0 = 5 must be below elo1 = 5"),
        ("alpha=nan", "alpha = NaN must be a probability"),
        ("beta=0", "beta = 0 must be a probability"),
        ("alpha=1", "alpha = 1 must be a probability"),
        ("alpha=0.5,beta=0.5", "alpha + beta = 1 must be below 1"),
        ("elo0=-inf", "elo0 = -inf is not a finite number"),
    ] {
        let err = text.parse::<SprtConfig>().unwrap_err().to_string();
        assert!(err.contains(needle), "{text}: {err}");
    }
    // What stays allowed: any finite elo0 < elo1 and error rates that leave the bounds apart.
    for text in ["elo0=-5,elo1=-1", "alpha=0.49,beta=0.5", "elo0=0,elo1=0.5,alpha=1e-9,beta=0.3"] {
        let sprt: SprtConfig = text.parse().unwrap();
        assert!(sprt.lower_bound() < 0.0 && sprt.upper_bound() > 0.0, "{text}");
    }
}

#[test]
fn a_match_of_no_games_is_refused_not_scored_nan() {
    let first = PlayerSpec::parse("random", &atomzero_eval::NoModels).unwrap();
    let second = PlayerSpec::parse("greedy", &atomzero_eval::NoModels).unwrap();
    let config = MatchConfig { games: 0, ..MatchConfig::default() };
    let err = run_match(&first, &second, &config, &mut |_| {}).unwrap_err().to_string();
    assert!(err.contains("at least one game"), "{err}");
}

struct Rng(u64);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 =
            self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

const BOOK: &str = "# a book\n\
rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - bm e5;\n\
\n\
rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq -;\n\
r1bqkbnr/pppppppp/2n5/8/8/5N2/PPPPPPPP/RNBQKB1R w KQkq - 2 2\n";

#[test]
fn damaged_books_never_panic_and_errors_name_the_line() {
    let alphabet: Vec<char> =
        "pnbrqkPNBRQK12345678/ wb-KQkq;#\n\r\t\u{feff}\u{0}\u{e9}x".chars().collect();
    let mut rng = Rng(44);
    let (mut read, mut refused) = (0, 0);
    for _ in 0..3000 {
        let mut chars: Vec<char> = BOOK.chars().collect();
        for _ in 0..=rng.below(4) {
            let i = rng.below(chars.len() + 1);
            match rng.below(3) {
                0 if i < chars.len() => chars[i] = alphabet[rng.below(alphabet.len())],
                1 if i < chars.len() => {
                    chars.remove(i);
                }
                _ => chars.insert(i, alphabet[rng.below(alphabet.len())]),
            }
        }
        let text: String = chars.into_iter().collect();
        for variant in [Variant::Atomic, Variant::Atomar] {
            match Openings::parse_epd(&text, variant) {
                Ok(Openings::Book(positions)) => {
                    assert!(!positions.is_empty());
                    assert!(positions.iter().all(|p| p.outcome().is_none()));
                    read += 1;
                }
                Ok(_) => unreachable!("a book parses to a book"),
                Err(EpdError::Position { path: None, line, reason }) => {
                    assert!(line >= 1 && line <= text.lines().count(), "{line}");
                    assert!(!reason.is_empty());
                    refused += 1;
                }
                Err(EpdError::Empty { path: None }) => refused += 1,
                Err(e) => panic!("unexpected {e}"),
            }
            // Self-play reads books with the same reader: the same positions or the same error.
            let ours = Openings::parse_epd(&text, variant).map_err(|e| e.to_string());
            match atomzero_selfplay::Openings::parse_epd(&text, variant) {
                Ok(atomzero_selfplay::Openings::Book(positions)) => {
                    assert_eq!(ours, Ok(Openings::Book(positions)))
                }
                Ok(_) => unreachable!("a book parses to a book"),
                Err(e) => assert_eq!(ours, Err(e.to_string())),
            }
        }
    }
    assert!(read > 0 && refused > 0, "{read} read, {refused} refused");
}

#[test]
fn book_files_are_named_in_errors_and_a_byte_order_mark_is_skipped() {
    let dir = std::env::temp_dir().join(format!("atomzero-eval-books-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.epd");
    std::fs::write(&bad, format!("{BOOK}not a fen\n")).unwrap();
    let err = Openings::from_epd_file(&bad, Variant::Atomic).unwrap_err().to_string();
    assert!(err.starts_with(&format!("{}: line 6: ", bad.display())), "{err}");
    let empty = dir.join("empty.epd");
    std::fs::write(&empty, "# nothing\n").unwrap();
    let err = Openings::from_epd_file(&empty, Variant::Atomic).unwrap_err().to_string();
    assert!(err.starts_with(&empty.display().to_string()), "{err}");
    let bom = dir.join("bom.epd");
    std::fs::write(&bom, format!("\u{feff}{BOOK}")).unwrap();
    let Openings::Book(book) = Openings::from_epd_file(&bom, Variant::Atomic).unwrap() else {
        panic!("not a book")
    };
    assert_eq!(book.len(), 3);
    let selfplay = atomzero_selfplay::Openings::from_epd(&bom, Variant::Atomic).unwrap();
    assert_eq!(selfplay.len(), 3);
    std::fs::remove_dir_all(&dir).unwrap();
}
