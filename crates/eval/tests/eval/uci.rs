//! External UCI engines, with `examples/fake_uci.rs` as the engine: a correct engine plays
//! whole games; one that sends illegal moves, crashes or hangs loses the game (recorded in
//! the PGN termination) and the match goes on.

use crate::common::assert_pgn_round_trips;
use atomzero_eval::{
    GameEnd, MatchConfig, MatchError, MatchResult, NoModels, PlayerError, PlayerSpec, run_match,
};
use atomzero_rules::{Color, Start, Variant};
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// The fake engine: `cargo test` builds examples next to the test binaries
/// (`target/<profile>/examples/fake_uci`); when a filtered run (`--test eval`) did not, it is
/// built here once with the same cargo, target directory and profile.
fn fake_engine() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let exe = std::env::current_exe().unwrap();
        let profile_dir = exe.parent().and_then(|deps| deps.parent()).unwrap().to_path_buf();
        let path =
            profile_dir.join("examples").join(format!("fake_uci{}", std::env::consts::EXE_SUFFIX));
        if !path.exists() {
            let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
                Some("debug") | None => "dev".to_string(),
                Some(name) => name.to_string(),
            };
            let status = Command::new(env!("CARGO"))
                .args(["build", "--quiet", "-p", "atomzero-eval", "--example", "fake_uci"])
                .args(["--profile", &profile])
                .env("CARGO_TARGET_DIR", profile_dir.parent().unwrap())
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .status()
                .expect("run cargo to build the fake engine");
            assert!(status.success(), "building examples/fake_uci failed");
        }
        assert!(path.exists(), "{} missing", path.display());
        path
    })
}

fn engine(args: &str, options: &str) -> PlayerSpec {
    let text = format!("uci:{} {args}{options}", fake_engine().display());
    PlayerSpec::parse(&text, &NoModels).unwrap().with_name(format!("fake {args}"))
}

fn play(engine: &PlayerSpec, games: usize, variant: Variant) -> MatchResult {
    let config = MatchConfig { games, variant, max_plies: 60, seed: 21, ..Default::default() };
    let mut finished = 0;
    let result = run_match(engine, &PlayerSpec::random(), &config, &mut |_| finished += 1).unwrap();
    assert_eq!(finished, games, "the match goes on after every game");
    assert_eq!(result.games.len(), games);
    assert_pgn_round_trips(&result);
    result
}

/// Every game is lost by the engine through `expected`, with that PGN termination.
fn assert_engine_forfeits(
    result: &MatchResult,
    termination: &str,
    expected: fn(&PlayerError) -> bool,
) {
    for game in &result.games {
        let engine_side = if game.first_is_white { Color::White } else { Color::Black };
        match &game.end {
            GameEnd::Forfeit { side, error } => {
                assert_eq!(*side, engine_side, "{}", game.finished_line());
                assert!(expected(error), "{}", game.finished_line());
            }
            other => panic!("game {} ended by {other:?}", game.index + 1),
        }
        assert_eq!(game.winner, Some(!engine_side));
        assert_eq!(game.termination(), termination);
        let pgn = game.to_pgn("test").write();
        assert!(pgn.contains(&format!("[Termination \"{termination}\"]")), "{pgn}");
    }
    assert_eq!(result.wdl.losses, result.games.len() as u64);
}

#[test]
fn a_correct_engine_plays_whole_games_in_every_variant() {
    for variant in Variant::ALL {
        let result = play(&engine("mode=good", ",nodes=5"), 2, variant);
        for game in &result.games {
            assert!(
                !matches!(game.end, GameEnd::Forfeit { .. }),
                "{variant}: {}",
                game.finished_line()
            );
            assert!(!game.moves.is_empty());
        }
    }
    // Without UCI_Variant on offer, the engine is still driven (and plays atomic here).
    let result = play(&engine("novariant", ",depth=3"), 2, Variant::Atomic);
    assert!(result.games.iter().all(|g| !matches!(g.end, GameEnd::Forfeit { .. })));
}

#[test]
fn illegal_moves_lose_and_the_match_goes_on() {
    let result = play(&engine("mode=illegal after=2", ",movetime=5"), 4, Variant::Atomic);
    assert_engine_forfeits(
        &result,
        "illegal move",
        |e| matches!(e, PlayerError::IllegalMove(m) if m == "a1a1"),
    );
    for game in &result.games {
        // Two good moves by the engine and the random player's replies came first.
        let engine_moves =
            if game.first_is_white { game.moves.len().div_ceil(2) } else { game.moves.len() / 2 };
        assert_eq!(engine_moves, 2, "{}", game.finished_line());
    }
    let result = play(&engine("mode=garbage", ""), 2, Variant::Atomic);
    assert_engine_forfeits(
        &result,
        "illegal move",
        |e| matches!(e, PlayerError::IllegalMove(m) if m == "xyz"),
    );
    let result = play(&engine("mode=none after=1", ""), 2, Variant::Atomic);
    assert_engine_forfeits(&result, "illegal move", |e| matches!(e, PlayerError::IllegalMove(_)));
}

#[test]
fn a_crashing_engine_loses_by_abandonment() {
    let result = play(&engine("mode=crash after=1", ""), 4, Variant::Atomic);
    assert_engine_forfeits(&result, "abandoned", |e| matches!(e, PlayerError::Crashed(_)));
}

#[test]
fn a_hung_engine_loses_on_time() {
    // The engine stops answering; the runner waits `timeout` (here 200 ms past movetime).
    let result = play(&engine("mode=hang after=1", ",movetime=1,timeout=200"), 2, Variant::Atomic);
    assert_engine_forfeits(&result, "time forfeit", |e| matches!(e, PlayerError::Timeout(_)));
}

#[test]
fn an_engine_that_cannot_start_or_play_the_variant_stops_the_match_before_it_begins() {
    let config = MatchConfig { games: 2, ..Default::default() };
    let missing = PlayerSpec::parse("uci:/nonexistent/engine", &NoModels).unwrap();
    let err = run_match(&missing, &PlayerSpec::random(), &config, &mut |_| {}).unwrap_err();
    assert!(matches!(err, MatchError::Player { error: PlayerError::Spawn(_), .. }), "{err}");
    let chess_only = engine("variants=chess+crazyhouse", "");
    let err = run_match(&chess_only, &PlayerSpec::random(), &config, &mut |_| {}).unwrap_err();
    assert!(matches!(err, MatchError::Player { error: PlayerError::Protocol(_), .. }), "{err}");
    assert!(err.to_string().contains("does not support variant atomic"), "{err}");
}

#[test]
fn only_an_engine_offering_the_balanced_start_plays_it() {
    let config = MatchConfig {
        games: 2,
        start: Start::Balanced,
        max_plies: 40,
        seed: 4,
        ..Default::default()
    };
    // The fake engine with a `Start` option removes a pawn as White (`bestmove @e2`-style)
    // and plays on as Black after the random player's removal.
    let balanced = engine("balanced", ",nodes=5");
    let result = run_match(&balanced, &PlayerSpec::random(), &config, &mut |_| {}).unwrap();
    for game in &result.games {
        assert!(!matches!(game.end, GameEnd::Forfeit { .. }), "{}", game.finished_line());
        assert!(game.removal().is_some(), "{}", game.finished_line());
    }
    assert_pgn_round_trips(&result);
    // Without it (Fairy-Stockfish has none), the match is refused before it begins.
    let plain = engine("mode=good", ",nodes=5");
    let err = run_match(&plain, &PlayerSpec::random(), &config, &mut |_| {}).unwrap_err();
    assert!(matches!(err, MatchError::Player { .. }));
    assert!(err.to_string().contains("cannot play the Balanced start"), "{err}");
}
