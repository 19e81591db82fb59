//! End-to-end tests of the `atomzero` binary: output formats, exit codes and error messages.

use std::process::{Command, Output};

fn atomzero(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_atomzero")).args(args).output().expect("run atomzero")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn perft_prints_the_stockfish_summary_line() {
    let o = atomzero(&["perft", "--depth", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).lines().any(|l| l == "Nodes searched: 8902"), "{}", stdout(&o));
}

#[test]
fn perft_divide_lists_each_move() {
    let fen = "rn2kb1r/1pp1p2p/p2q1pp1/3P4/2P3b1/4PN2/PP3PPP/R2QKB1R b KQkq - 0 1";
    let o = atomzero(&["perft", "--fen", fen, "--depth", "2", "--divide"]);
    assert!(o.status.success());
    let out = stdout(&o);
    let lines: Vec<&str> =
        out.lines().filter(|l| l.contains(": ") && !l.starts_with("Nodes")).collect();
    assert_eq!(lines.len(), 40);
    let sum: u64 =
        lines.iter().map(|l| l.rsplit(": ").next().unwrap().parse::<u64>().unwrap()).sum();
    assert_eq!(sum, 1238);
    assert!(out.contains("Nodes searched: 1238"));
}

#[test]
fn perft_switches_to_chess960_by_itself_and_on_request() {
    // Shredder-FEN rights naming the b-file rook: Chess960 castling, king-takes-rook notation.
    let o = atomzero(&[
        "perft",
        "--fen",
        "4k3/8/8/8/8/8/8/1R2K3 w B - 0 1",
        "--depth",
        "1",
        "--divide",
    ]);
    assert!(stdout(&o).contains("e1b1: 1"), "{}", stdout(&o));
    let o = atomzero(&[
        "perft",
        "--fen",
        "4k3/8/8/8/8/8/8/4K2R w K - 0 1",
        "--depth",
        "1",
        "--divide",
        "--chess960",
    ]);
    assert!(stdout(&o).contains("e1h1: 1"), "{}", stdout(&o));
    let o =
        atomzero(&["perft", "--fen", "4k3/8/8/8/8/8/8/4K2R w K - 0 1", "--depth", "1", "--divide"]);
    assert!(stdout(&o).contains("e1g1: 1"), "{}", stdout(&o));
}

#[test]
fn bad_input_is_one_line_and_exit_code_2() {
    for (args, needle) in [
        (vec!["perft", "--fen", "not a fen", "--depth", "2"], "piece placement"),
        (vec!["perft", "--fen", "8/8/8/8/8/8/8/8 w - - 0 1", "--depth", "2"], "empty"),
        (vec!["perft", "--depth", "x"], "invalid value"),
        (vec!["perft", "--depth", "99"], "too large"),
        (vec!["perft", "--variant", "crazyhouse", "--depth", "1"], "valid: atomic, nocheckatomic"),
        (vec!["perft", "--suite", "/nonexistent/suite.perft"], "cannot read suite"),
        // A network named on the command line must load (no silent uniform-prior engine).
        (
            vec!["uci", "--model", "/nonexistent/net.safetensors"],
            "--model /nonexistent/net.safetensors: cannot load",
        ),
        (vec!["uci", "--precision", "fp16"], "--precision: unknown precision 'fp16'"),
    ] {
        let o = atomzero(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn suite_reports_mismatches_with_a_failing_exit() {
    let dir = std::env::temp_dir().join(format!("atomzero-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let suite = dir.join("s.perft");
    std::fs::write(
        &suite,
        "id start\nepd rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -\nperft 1 20\nperft 2 401\n\nid nocheck\n# variant nocheckatomic\nepd rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\nperft 2 400\n",
    )
    .unwrap();
    let o = atomzero(&["perft", "--suite", suite.to_str().unwrap()]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("ok       start depth 1: 20"), "{out}");
    assert!(out.contains("MISMATCH start depth 2: expected 401, got 400"), "{out}");
    assert!(out.contains("ok       nocheck depth 2: 400"), "{out}");
    assert!(out.contains("2 passed, 1 failed"), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bench_selfplay_prints_the_tree_work_beside_a_reference_from_the_same_run() {
    let o = atomzero(&[
        "bench", "selfplay", "--trees", "2", "--visits", "32", "--moves", "1", "--games", "0",
    ]);
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(o.status.success(), "{err}");
    // A number following `before` on the line starting with `line`.
    let number_after = |line: &str, before: &str| -> f64 {
        let l = out.lines().find(|l| l.trim_start().starts_with(line)).expect(line);
        let rest = &l[l.find(before).expect(before) + before.len()..];
        rest.split_whitespace().next().unwrap().parse().unwrap()
    };
    let nodes_per_s = number_after("2 trees x 2 moves x 32 visits", "median ");
    let positions = number_after("reference, same run:", "alone on ");
    let movegen_per_s = number_after("reference, same run:", "median ");
    let cost = number_after("reference, same run:", "costs ");
    assert!(nodes_per_s > 0.0 && positions >= 1.0 && movegen_per_s > 0.0, "{out}");
    assert!((cost - movegen_per_s / nodes_per_s).abs() < 0.01 * cost, "{out}");
    assert!(out.contains("goal: >= 1,000,000 nodes/s per core"), "{out}");

    // Self-play with the tiny net: the utilisation is the busy share times the speed against
    // the same batches evaluated again, and both are shares.
    let o = atomzero(&[
        "bench",
        "selfplay",
        "--trees",
        "1",
        "--visits",
        "8",
        "--moves",
        "0",
        "--games",
        "6",
        "--batching",
        "worker",
    ]);
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(o.status.success(), "{err}");
    let number_after = |line: &str, before: &str| -> f64 {
        let l = out.lines().find(|l| l.trim_start().starts_with(line)).expect(line);
        let rest = &l[l.find(before).expect(before) + before.len()..];
        rest.split(|c: char| c.is_whitespace() || c == '%').next().unwrap().parse().unwrap()
    };
    assert!(out.contains("6 games, "), "{out}");
    let busy = number_after("network busy", "workers): ");
    let raw = number_after("reference: the same games again", "same moment): ");
    let inside = number_after("reference: the same games again", "s raw for ");
    let speed = number_after("reference: the same games again", "batches): ");
    let utilisation = number_after("network utilisation in self-play:", "speed = ");
    assert!(busy > 0.0 && busy <= 100.0 && raw > 0.0 && inside > 0.0, "{out}");
    // The seconds are printed to 0.01 s, the shares to 0.1%.
    let rounding = 100.0 * raw / inside * (0.005 / raw + 0.005 / inside) + 0.05;
    assert!((speed - 100.0 * raw / inside).abs() <= rounding, "{out}");
    assert!((utilisation - busy * speed / 100.0).abs() <= 0.15, "{out}");
    let o = atomzero(&["bench", "selfplay", "--trees", "0"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("--trees, --visits and --leaves must be positive"),
        "{}",
        stderr(&o)
    );
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("atomzero-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn selfplay_writes_readable_shards_pgn_and_config_and_resumes_numbering() {
    let dir = temp_dir("selfplay");
    let out = dir.join("selfplay");
    let pgn = dir.join("games.pgn");
    let args = |games: &str| {
        vec![
            "selfplay".to_string(),
            "--model".into(),
            "random".into(),
            "--games".into(),
            games.into(),
            "--out".into(),
            out.to_str().unwrap().into(),
            "--pgn".into(),
            pgn.to_str().unwrap().into(),
            "--games-per-shard".into(),
            "4".into(),
            "--threads".into(),
            "2".into(),
        ]
    };
    let o = Command::new(env!("CARGO_BIN_EXE_atomzero")).args(args("10")).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("self-play: 10 games"), "{}", stdout(&o));
    let shards = |dir: &std::path::Path| {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".shard"))
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        shards(&out),
        ["gen000000-000000.shard", "gen000000-000001.shard", "gen000000-000002.shard"]
    );
    let mut games = 0;
    for name in shards(&out) {
        games += atomzero_replay::read_shard(&out.join(name)).unwrap().1.len();
    }
    assert_eq!(games, 10);
    let text = std::fs::read_to_string(&pgn).unwrap();
    let read = atomzero_rules::read_pgn(&text);
    assert_eq!(read.len(), 10);
    assert!(read.iter().all(|g| g.is_ok()));
    assert!(
        std::fs::read_to_string(out.join("selfplay-config.toml")).unwrap().contains("[selfplay]")
    );
    // A second run continues the numbering instead of overwriting.
    let o = Command::new(env!("CARGO_BIN_EXE_atomzero")).args(args("2")).output().unwrap();
    assert!(o.status.success());
    assert_eq!(shards(&out).len(), 4);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn reanalyse_searches_every_target_again_keeps_the_games_and_resumes() {
    let dir = temp_dir("reanalyse");
    let (data, out) = (dir.join("data"), dir.join("out"));
    let o = atomzero(&[
        "selfplay",
        "--model",
        "random",
        "--games",
        "6",
        "--out",
        data.to_str().unwrap(),
        "--games-per-shard",
        "3",
        "--threads",
        "1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let reanalyse = |extra: &[&str]| {
        let base = ["reanalyse", "--model", "uniform", "--data", data.to_str().unwrap()];
        let out = ["--out", out.to_str().unwrap(), "--visits", "24", "--threads", "2"];
        atomzero(&base.iter().chain(&out).chain(extra).copied().collect::<Vec<_>>())
    };
    // The first shard only, then the rest: the first is not done again.
    let o = reanalyse(&["--shards", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("reanalyse: 1 shards,"), "{}", stdout(&o));
    let first = std::fs::read(out.join("gen000000-000000.shard")).unwrap();
    let o = reanalyse(&[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("reanalyse: 1 shards,"), "{}", stdout(&o));
    assert_eq!(std::fs::read(out.join("gen000000-000000.shard")).unwrap(), first);
    assert!(out.join("reanalyse-config.toml").exists());
    for name in ["gen000000-000000.shard", "gen000000-000001.shard"] {
        let (_, old) = atomzero_replay::read_shard(&data.join(name)).unwrap();
        let (meta, new) = atomzero_replay::read_shard(&out.join(name)).unwrap();
        assert_eq!(meta.model, "uniform");
        assert!(meta.note.starts_with("reanalysed at 24 visits"), "{}", meta.note);
        assert_eq!(old.len(), new.len());
        for (a, b) in old.iter().zip(&new) {
            assert_eq!((a.winner, &a.start_fen), (b.winner, &b.start_fen));
            assert_eq!(a.moves.len(), b.moves.len());
            for (x, y) in a.moves.iter().zip(&b.moves) {
                assert_eq!(x.mv, y.mv);
                assert_eq!(x.target.is_some(), y.target.is_some());
            }
            // Uniform priors and values: the new targets are not the random net's.
            let targets = |g: &atomzero_replay::GameRecord| {
                g.moves.iter().filter_map(|m| m.target.clone()).collect::<Vec<_>>()
            };
            assert!(targets(a).iter().zip(targets(b)).any(|(x, y)| x.root_wdl != y.root_wdl));
        }
    }
    // Refusals: the same directory, an empty one, no visits.
    let d = data.to_str().unwrap();
    let o = atomzero(&["reanalyse", "--model", "uniform", "--data", d, "--out", d]);
    assert!(!o.status.success() && stderr(&o).contains("must not be --data"), "{}", stderr(&o));
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let e = empty.to_str().unwrap();
    let o = atomzero(&["reanalyse", "--model", "uniform", "--data", e, "--out", d]);
    assert!(!o.status.success() && stderr(&o).contains("no replay shards"), "{}", stderr(&o));
    let o =
        atomzero(&["reanalyse", "--model", "uniform", "--data", d, "--out", e, "--visits", "0"]);
    assert!(!o.status.success() && stderr(&o).contains("at least 1"), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn selfplay_bad_inputs_fail_cleanly() {
    let dir = temp_dir("selfplay-bad");
    let bad_config = dir.join("bad.toml");
    std::fs::write(&bad_config, "[selfplay]\nvisitz = 3\n").unwrap();
    let bad_batching = dir.join("batching.toml");
    std::fs::write(&bad_batching, "[selfplay]\nbatching = \"both\"\n").unwrap();
    let out = dir.join("o");
    let out = out.to_str().unwrap();
    // `atomzero selfplay --model random --games 1 --out DIR` followed by `extra`.
    let random = |extra: &[&str]| -> Vec<String> {
        let base = ["selfplay", "--model", "random", "--games", "1", "--out", out];
        base.iter().chain(extra).map(|s| s.to_string()).collect()
    };
    let (bad_config, bad_batching) = (bad_config.to_str().unwrap(), bad_batching.to_str().unwrap());
    for (args, needle) in [
        (
            random(&["--config", bad_batching]),
            "unknown variant `both`, expected `worker` or `shared`",
        ),
        (
            ["selfplay", "--model", "missing.safetensors", "--games", "1", "--out", out]
                .map(String::from)
                .to_vec(),
            "not found",
        ),
        (random(&["--config", bad_config]), "visitz"),
        (random(&["--variant", "chess"]), "unknown variant"),
        // The bomb variant has its own setup phase.
        (
            random(&["--variant", "bomb", "--start", "balanced"]),
            "the bomb variant starts from its own setup phase",
        ),
        (random(&["--openings", "/nonexistent.epd"]), "nonexistent.epd"),
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = atomzero(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_closed_stdout_ends_quietly_without_a_panic() {
    // `atomzero perft ... | head` after head has exited: the pipe has no reader from the start,
    // so the first line printed fails with EPIPE.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let output = Command::new(env!("CARGO_BIN_EXE_atomzero"))
        .args(["perft", "--depth", "2", "--divide"])
        .stdout(writer)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "stderr: {stderr}");
    assert_eq!(output.status.code(), Some(141), "stderr: {stderr}");
}

/// `atomzero uci ARGS` with the network cache in `cache`, fed `input` (a broken pipe is fine:
/// an engine that refuses its flags exits before reading).
fn uci_session(args: &[&str], cache: &std::path::Path, input: &[u8]) -> std::process::Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_atomzero"))
        .arg("uci")
        .args(args)
        .env("ATOMZERO_CACHE", cache)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run atomzero uci");
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.write_all(input);
    drop(stdin);
    child.wait_with_output().unwrap()
}

#[test]
fn uci_plays_with_the_shipped_network_when_no_model_is_given() {
    let cache = temp_dir("uci-shipped");
    let o = uci_session(&[], &cache, b"uci\nisready\nposition startpos\ngo nodes 64\nquit\n");
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    // The embedded network was written to the cache and loaded from there.
    assert!(out.contains("model loaded: ") && out.contains("atomic.safetensors"), "{out}");
    assert!(!out.contains("no model loaded"), "{out}");
    assert!(out.lines().any(|l| l.starts_with("bestmove ")), "{out}");
    let nets: Vec<_> = std::fs::read_dir(cache.join("nets")).unwrap().collect();
    assert_eq!(nets.len(), 1);
    // `--precision auto` (the default) times f32 against bf16, f16 and amx where the CPU has
    // AVX-512 BF16, FP16 or AMX-BF16 tiles and runs the fastest of them that measured at least 1.05x f32's speed (and
    // whose outputs agreed with f32's); the "model loaded" line says what it measured and kept.
    // Elsewhere f32, nothing measured. `--precision f32` never runs them.
    use atomzero_infer::Precision;
    let available: Vec<Precision> =
        Precision::NARROW.into_iter().filter(|p| p.supported()).collect();
    let loaded = out.lines().find(|l| l.contains("model loaded: ")).expect(&out);
    // (", bf16 products" contains "f16 products": the comma keeps them apart.)
    let kept = |p: Precision| loaded.contains(&format!(", {p} products"));
    match loaded.split_once("(auto: ") {
        None => {
            assert!(available.is_empty(), "{loaded}");
            assert!(!loaded.contains("products"), "{loaded}");
        }
        Some((_, measured)) => {
            // "(auto: bf16 0.80x, f16 1.31x f32 here)", an entry refused for its outputs
            // followed by "(outputs strayed)".
            let measured = measured.split(" f32 here").next().expect(loaded);
            let entries: Vec<(Precision, f64, bool)> = measured
                .split(", ")
                .map(|entry| {
                    let mut words = entry.split_whitespace();
                    let precision: Precision = words.next().unwrap().parse().expect(loaded);
                    let ratio = words.next().and_then(|r| r.strip_suffix('x')).expect(loaded);
                    (precision, ratio.parse().expect(loaded), entry.contains("strayed"))
                })
                .collect();
            let names: Vec<Precision> = entries.iter().map(|e| e.0).collect();
            assert_eq!(names, available, "{loaded}");
            let threshold = atomzero_infer::calibrate::AUTO_MIN_RATIO;
            let eligible: Vec<&(Precision, f64, bool)> =
                entries.iter().filter(|e| !e.2 && e.1 >= threshold).collect();
            let best = eligible.iter().max_by(|a, b| a.1.total_cmp(&b.1));
            // (Printed to two decimals: ratios within rounding of the threshold or of each
            // other go either way.)
            let close = entries.iter().any(|e| (e.1 - threshold).abs() <= 0.006)
                || eligible
                    .iter()
                    .any(|e| best.is_some_and(|b| b.0 != e.0 && (b.1 - e.1).abs() <= 0.01));
            if !close {
                for &p in &available {
                    assert_eq!(kept(p), best.is_some_and(|b| b.0 == p), "{loaded}");
                }
            }
        }
    }
    for precision in [Precision::F32, Precision::Bf16, Precision::F16, Precision::Amx] {
        let input = b"position startpos\ngo nodes 16\nquit\n";
        let o = uci_session(&["--precision", precision.name()], &cache, input);
        let (out, err) = (stdout(&o), stderr(&o));
        if precision.supported() {
            assert!(o.status.success(), "{precision}: {err}");
            for p in Precision::NARROW {
                assert_eq!(out.contains(&format!(", {p} products")), p == precision, "{out}");
            }
            assert!(out.lines().any(|l| l.starts_with("bestmove ")), "{out}");
        } else {
            assert_eq!(o.status.code(), Some(2), "{precision}: {err}");
            assert!(err.contains(precision.needs()), "{err}");
        }
    }
}

#[test]
fn uci_refuses_a_model_without_its_sidecar_instead_of_playing_uniform() {
    // Weights copied without their `.json` sidecar: the engine must say so and exit, not
    // start and play pure MCTS (a match against it would be lost without a word).
    let dir = temp_dir("uci-no-sidecar");
    let weights = dir.join("net.safetensors");
    std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/../../nets/atomic.safetensors"), &weights)
        .unwrap();
    let o = atomzero(&["uci", "--model", weights.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("cannot load") && err.contains("net.json"), "{err}");
    assert!(!stdout(&o).contains("id name"), "{}", stdout(&o));
}

#[test]
fn bench_net_measures_its_peak_in_the_same_run() {
    let o = atomzero(&["bench", "net", "--config", "tiny", "--batches", "1", "--quick"]);
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    // "peak, measured now: sgemm 256^3 (matrixmultiply) X GFLOP/s on 1 thread, Y GFLOP/s on N."
    let line = out.lines().find(|l| l.contains("peak, measured now")).expect(&out);
    let numbers: Vec<f64> = line
        .split_whitespace()
        .filter_map(|w| w.parse::<f64>().ok())
        .filter(|&x| x != 1.0)
        .collect();
    assert!(numbers.len() >= 2 && numbers[..2].iter().all(|&x| x > 0.5), "{line}");
    // Every share is of that peak, with the figure beside it.
    assert!(out.contains("% of peak"), "{out}");
    assert!(out.lines().any(|l| l.contains("infer batch    1:")), "{out}");
    // The bf16, f16 and amx products' lines, with their same-run ratios, exactly where the CPU has
    // them.
    for precision in atomzero_infer::Precision::NARROW {
        let feature = precision.needs();
        let line = out.lines().find(|l| l.contains(&format!("{precision} products ({feature}")));
        assert_eq!(line.is_some(), precision.supported(), "{out}");
        if let Some(line) = line {
            let ratio =
                line.rsplit(' ').next().and_then(|r| r.trim_end_matches('x').parse::<f64>().ok());
            assert!(ratio.is_some_and(|r| r > 0.0), "{line}");
        }
    }
}

/// The `atomzero` invocations in the deployment files: (file, subcommand, flags).
fn deployed_invocations() -> Vec<(String, String, Vec<String>)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut found = Vec::new();
    // Kubernetes: container args as one flow sequence of quoted strings (JSON).
    let yaml = std::fs::read_to_string(root.join("deploy/kubernetes/atomzero.yaml")).unwrap();
    for line in yaml.lines().filter(|l| l.trim_start().starts_with("args: [")) {
        let args: Vec<String> =
            serde_json::from_str(line.trim_start().trim_start_matches("args:").trim()).unwrap();
        let flags = args.iter().filter(|a| a.starts_with("--")).cloned().collect();
        found.push(("atomzero.yaml".to_string(), args[0].clone(), flags));
    }
    // Slurm: `srun atomzero SUBCOMMAND ...` with continuation lines.
    for name in ["trainer.sbatch", "workers.sbatch"] {
        let text = std::fs::read_to_string(root.join("deploy/slurm").join(name)).unwrap();
        assert!(text.starts_with("#!/bin/bash\n"), "{name}");
        let joined = text.replace("\\\n", " ");
        for line in joined.lines().filter(|l| l.trim_start().starts_with("srun atomzero ")) {
            let words: Vec<&str> = line.split_whitespace().collect();
            let flags = words.iter().filter(|w| w.starts_with("--")).map(|w| w.to_string());
            found.push((name.to_string(), words[2].to_string(), flags.collect()));
        }
    }
    found
}

#[test]
fn deployment_files_call_commands_and_flags_that_exist() {
    let invocations = deployed_invocations();
    let subcommands: Vec<&str> = invocations.iter().map(|(_, s, _)| s.as_str()).collect();
    assert_eq!(subcommands, ["trainer", "worker", "trainer", "worker"], "{invocations:?}");
    for (file, subcommand, flags) in &invocations {
        let o = atomzero(&[subcommand, "--help"]);
        assert!(o.status.success(), "{file}: atomzero {subcommand}: {}", stderr(&o));
        let help = stdout(&o);
        for flag in flags {
            assert!(help.contains(&format!("{flag} ")), "{file}: atomzero {subcommand} {flag}");
        }
        assert!(flags.contains(&"--run".to_string()), "{file}: {subcommand} without --run");
    }
    // The Dockerfile builds the binary with a profile that exists and runs it; the config the
    // trainer manifest names is one it copies.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dockerfile = std::fs::read_to_string(root.join("Dockerfile")).unwrap();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    assert!(dockerfile.contains("cargo build --profile dist --locked -p atomzero"));
    assert!(manifest.contains("[profile.dist]"));
    assert!(
        dockerfile.contains("COPY --from=build /usr/local/bin/atomzero /usr/local/bin/atomzero")
    );
    assert!(dockerfile.contains("ENTRYPOINT [\"atomzero\"]"));
    assert!(dockerfile.contains("COPY configs /etc/atomzero/configs"));
    let yaml = std::fs::read_to_string(root.join("deploy/kubernetes/atomzero.yaml")).unwrap();
    assert!(yaml.contains("/etc/atomzero/configs/default.toml"));
    assert!(root.join("configs/default.toml").is_file());
    assert_eq!(yaml.matches("\nkind: Job\n").count(), 2, "a trainer Job and a workers Job");
    assert!(yaml.contains("nvidia.com/gpu: 1"), "the trainer asks for a GPU");
}

/// One HTTP/1.1 request over a fresh connection; returns the status and the body.
fn http(addr: &str, method: &str, path: &str, body: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(std::time::Duration::from_secs(60))).unwrap();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    (head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0), body.to_string())
}

/// Kills the child when dropped, so a failed assertion leaves no server behind.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn serve_shows_a_run_and_plays_its_networks() {
    use std::io::BufRead;
    let dir = temp_dir("serve");
    let run = dir.join("run");
    let config = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/ci.toml");
    let o =
        atomzero(&["run", "--config", config.to_str().unwrap(), "--dir", run.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));

    let mut child = KillOnDrop(
        Command::new(env!("CARGO_BIN_EXE_atomzero"))
            .args(["serve", "--run", run.to_str().unwrap(), "--addr", "127.0.0.1:0"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("run atomzero serve"),
    );
    let mut first = String::new();
    std::io::BufReader::new(child.0.stdout.take().unwrap()).read_line(&mut first).unwrap();
    let addr = first
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_else(|| panic!("no address in {first:?}"))
        .to_string();

    let (status, summary) = http(&addr, "GET", "/api/summary", "");
    assert_eq!(status, 200, "{summary}");
    let summary: serde_json::Value = serde_json::from_str(&summary).unwrap();
    assert_eq!(summary["generations"].as_array().unwrap().len(), 3, "generations 0, 1 and 2");
    assert!(!summary["losses"].as_array().unwrap().is_empty(), "TensorBoard losses read");
    assert!(summary["warnings"].as_array().unwrap().is_empty(), "{}", summary["warnings"]);

    // A real network of the run, loaded by the binary's loader, answers a move.
    let (status, state) =
        http(&addr, "POST", "/api/play", r#"{"network":"000000","nodes":8,"color":"white"}"#);
    assert_eq!(status, 201, "{state}");
    let (status, state) = http(&addr, "POST", "/api/play/1/move", r#"{"uci":"e2e4"}"#);
    assert_eq!(status, 200, "{state}");
    let (status, state) = http(&addr, "POST", "/api/play/1/engine", "");
    assert_eq!(status, 200, "{state}");
    let state: serde_json::Value = serde_json::from_str(&state).unwrap();
    assert_eq!(state["plies"].as_array().unwrap().len(), 2);
    assert_eq!(http(&addr, "GET", "/run/../Cargo.toml", "").0, 404);
    drop(child);
    let _ = std::fs::remove_dir_all(&dir);

    // Not a run directory: one line, exit code 2.
    let o = atomzero(&["serve", "--run", dir.join("nothing").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("config.toml not found"), "{}", stderr(&o));
}

#[test]
fn perft_of_the_bomb_variant_counts_the_choices_and_matches_refuse_players_without_a_view() {
    for (depth, nodes) in [("1", 15), ("2", 225), ("3", 4725)] {
        let o = atomzero(&["perft", "--variant", "bomb", "--depth", depth]);
        assert!(o.status.success(), "{}", stderr(&o));
        let expected = format!("Nodes searched: {nodes}");
        assert!(stdout(&o).lines().any(|l| l == expected), "{}", stdout(&o));
    }
    let fen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 bombs:d1,g8";
    let o = atomzero(&["perft", "--variant", "bomb", "--fen", fen, "--depth", "1", "--divide"]);
    assert!(stdout(&o).contains("d1*: 1") && stdout(&o).contains("Nodes searched: 21"));
    for (args, needle) in [
        (
            vec![
                "perft",
                "--variant",
                "bomb",
                "--fen",
                "8/8/8/3k4/8/3K4/8/8 w - - 0 1",
                "--depth",
                "1",
            ],
            "seventh field",
        ),
        (
            vec!["perft", "--variant", "bomb", "--start", "balanced", "--depth", "1"],
            "no balanced start",
        ),
        (
            // Players that cannot be handed their own view only (alpha-beta, UCI engines).
            vec!["match", "--variant", "bomb", "--engine", "alphabeta", "--engine", "random"],
            "alphabeta:depth=2 cannot play it",
        ),
    ] {
        let o = atomzero(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    }
}

#[test]
fn a_bomb_match_reports_detonations_and_reveals_the_bombs_in_its_pgn() {
    let dir = temp_dir("bomb-match");
    let pgn = dir.join("games.pgn");
    let o = atomzero(&[
        "match",
        "--variant",
        "bomb",
        "--engine",
        "greedy",
        "--engine",
        "random",
        "--games",
        "6",
        "--pgn",
        pgn.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("Score of greedy vs random: "), "{out}");
    assert!(out.lines().any(|l| l.starts_with("Detonations: greedy in ")), "{out}");
    let text = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(text.matches("[WhiteBomb \"").count(), 6, "{text}");
    assert_eq!(text.matches("[BlackBomb \"").count(), 6, "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn perft_of_the_balanced_start_counts_the_removals_as_ply_1() {
    for (depth, nodes) in [("1", 16), ("2", 348), ("3", 7463)] {
        let o = atomzero(&["perft", "--start", "balanced", "--depth", depth]);
        assert!(o.status.success(), "{}", stderr(&o));
        let expected = format!("Nodes searched: {nodes}");
        assert!(stdout(&o).lines().any(|l| l == expected), "{}", stdout(&o));
    }
    let o = atomzero(&["perft", "--fen", "balanced", "--depth", "1", "--divide"]);
    assert!(stdout(&o).contains("@e2: 1") && stdout(&o).contains("@h7: 1"), "{}", stdout(&o));
    let o = atomzero(&["perft", "--start", "balanced", "--variant", "atomar", "--depth", "3"]);
    assert!(stdout(&o).contains("Nodes searched: 7490"), "{}", stdout(&o));
    let o = atomzero(&["perft", "--start", "even", "--depth", "1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown start 'even'"), "{}", stderr(&o));
}

#[test]
fn balanced_selfplay_and_match_record_and_report_the_removals() {
    let dir = temp_dir("balanced");
    let out = dir.join("selfplay");
    let pgn = dir.join("games.pgn");
    let (out_text, pgn_text) = (out.to_str().unwrap(), pgn.to_str().unwrap());
    let o = atomzero(&[
        "selfplay",
        "--model",
        "random",
        "--games",
        "6",
        "--out",
        out_text,
        "--pgn",
        pgn_text,
        "--start",
        "balanced",
        "--threads",
        "2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("removals (Balanced start, White's choice): "), "{}", stdout(&o));
    let (_, games) = atomzero_replay::read_shard(&out.join("gen000000-000000.shard")).unwrap();
    assert!(games.iter().all(|g| g.start_fen == "balanced" && g.moves[0].mv.is_removal()));
    let read = atomzero_rules::read_pgn(&std::fs::read_to_string(&pgn).unwrap());
    assert_eq!(read.len(), 6);
    assert!(read.iter().all(|g| g.as_ref().unwrap().tag("Balanced").is_some()));
    // A book cannot be combined with the Balanced start.
    let o = atomzero(&[
        "selfplay",
        "--model",
        "random",
        "--games",
        "1",
        "--out",
        out_text,
        "--start",
        "balanced",
        "--openings",
        "book.epd",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot be combined with the balanced start"), "{}", stderr(&o));

    let o = atomzero(&[
        "match",
        "--engine",
        "greedy",
        "--engine",
        "random",
        "--games",
        "8",
        "--start",
        "balanced",
        "--max-plies",
        "80",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.lines().any(|l| l.starts_with("White: ") && l.ends_with("over 8 games")),
        "{text}"
    );
    assert!(text.contains("Removals by greedy as White (4 games): "), "{text}");
    assert!(text.contains("Removals by random as White (4 games): "), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn match_first_game_plays_a_later_stretch_of_the_match() {
    let o = atomzero(&[
        "match",
        "--engine",
        "greedy",
        "--engine",
        "alphabeta:depth=1",
        "--games",
        "2",
        "--first-game",
        "3",
        "--max-plies",
        "40",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let finished: Vec<&str> = text.lines().filter(|l| l.starts_with("Finished game ")).collect();
    assert_eq!(finished.len(), 2, "{text}");
    // Games 3 and 4: the first player has White in game 3, as in the whole match.
    assert!(finished.iter().any(|l| l.starts_with("Finished game 3 (greedy vs ")), "{text}");
    assert!(finished.iter().any(|l| l.starts_with("Finished game 4 (alphabeta")), "{text}");
}

#[test]
fn uci_with_start_balanced_answers_with_a_removal() {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_atomzero"))
        .args(["uci", "--model", "uniform", "--start", "balanced"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run atomzero uci");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"uci\nisready\nposition startpos\ngo nodes 32\nquit\n")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        out.contains("option name Start type combo default balanced var standard var balanced"),
        "{out}"
    );
    let bestmove = out.lines().find(|l| l.starts_with("bestmove ")).expect("bestmove");
    let removal = bestmove.split_whitespace().nth(1).unwrap();
    assert!(removal.starts_with('@') && removal.len() == 3, "{out}");
}

/// lichess-bot, cutechess-cli and GUIs start an engine with no arguments (lichess-bot adds
/// only `--key=value` flags): `atomzero` alone must speak UCI, `--model=...` included.
#[test]
fn atomzero_with_no_command_speaks_uci() {
    use std::io::Write;
    for args in [vec![], vec!["--model=uniform"]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_atomzero"))
            .args(&args)
            .env("ATOMZERO_CACHE", temp_dir("uci-no-command"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run atomzero");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(b"uci\nisready\nposition startpos moves e2e4\ngo nodes 16\nisready\nquit\n")
            .unwrap();
        let o = child.wait_with_output().unwrap();
        let out = stdout(&o);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert!(out.lines().any(|l| l == "uciok") && out.contains("readyok"), "{args:?}: {out}");
        assert!(out.contains("option name UCI_ShowWDL type check default false"), "{out}");
        let bestmove = out.lines().find(|l| l.starts_with("bestmove ")).expect("bestmove");
        assert_ne!(bestmove, "bestmove (none)", "{out}");
        let model = if args.is_empty() { "atomic.safetensors" } else { "uniform" };
        assert!(out.contains(model), "{args:?}: {out}");
    }
    // Help and the commands are unchanged; a UCI flag next to a command is refused.
    let o = atomzero(&["--help"]);
    assert!(o.status.success() && stdout(&o).contains("perft"), "{}", stdout(&o));
    assert!(stdout(&o).contains("With no command, atomzero is the UCI engine"));
    let o = atomzero(&["--model", "uniform", "perft", "--depth", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
}

#[test]
fn analyse_annotates_a_pgn_from_a_file_or_stdin_and_rejects_bad_input() {
    use std::io::Write;
    let dir = temp_dir("analyse");
    let pgn = dir.join("games.pgn");
    let o = atomzero(&[
        "match",
        "--engine",
        "net:uniform,nodes=16",
        "--engine",
        "greedy",
        "--games",
        "2",
        "--pgn",
        pgn.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = dir.join("analysed.pgn");
    let o = atomzero(&[
        "analyse",
        pgn.to_str().unwrap(),
        "--model",
        "uniform",
        "--nodes",
        "50",
        "--threads",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.matches("[Event ").count(), 2, "{text}");
    assert_eq!(text.matches("[Annotator \"atomzero ").count(), 2, "{text}");
    let plies: usize = std::fs::read_to_string(&pgn)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("[PlyCount \"")?.strip_suffix("\"]")?.parse::<usize>().ok())
        .sum();
    assert_eq!(text.matches("[%eval ").count(), plies, "one eval per move: {text}");
    assert!(stderr(&o).contains("game 2 ("), "{}", stderr(&o));

    // The same from standard input, with a time budget, to standard output.
    let mut child = Command::new(env!("CARGO_BIN_EXE_atomzero"))
        .args(["analyse", "-", "--model", "uniform", "--nodes", "0", "--movetime", "5", "-q"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"1. e4 e5 2. Nf3 *\n").unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).matches("[%eval ").count(), 3, "{}", stdout(&o));
    assert!(stderr(&o).is_empty(), "quiet: {}", stderr(&o));

    // Bad input: one line naming the file and the problem, exit code 2.
    let bad = dir.join("bad.pgn");
    std::fs::write(&bad, "1. e4 e5 2. Ke3 *\n").unwrap();
    let missing = dir.join("missing.pgn");
    let empty = dir.join("empty.pgn");
    std::fs::write(&empty, "\n").unwrap();
    for (args, needle) in [
        (vec!["analyse", bad.to_str().unwrap()], "bad.pgn: pgn game 1: ply 3"),
        (vec!["analyse", missing.to_str().unwrap()], "cannot read"),
        (vec!["analyse", empty.to_str().unwrap()], "no games"),
        (vec!["analyse", pgn.to_str().unwrap(), "--nodes", "0"], "--movetime"),
        (vec!["analyse", pgn.to_str().unwrap(), "--model", "/no/such/net"], "cannot load"),
    ] {
        let o = atomzero(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.starts_with("error: ") && err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
}

#[test]
fn gate_promotes_a_candidate_the_way_a_run_does_and_stops_at_a_bad_pointer() {
    // Two games at one playout with the shipped net on both sides and threshold 0: the gate
    // passes, and the candidate becomes the next NNNNNN of the best network's directory.
    let dir = temp_dir("gate");
    let models = dir.join("models");
    std::fs::create_dir_all(&models).unwrap();
    let shipped = concat!(env!("CARGO_MANIFEST_DIR"), "/../../nets/atomic");
    let copy = |to: &std::path::Path| {
        std::fs::copy(format!("{shipped}.safetensors"), to.with_extension("safetensors")).unwrap();
        std::fs::copy(format!("{shipped}.json"), to.with_extension("json")).unwrap();
    };
    copy(&models.join("000000"));
    let candidate = dir.join("candidate.safetensors");
    let gate = |candidate: &std::path::Path| {
        atomzero(&[
            "gate",
            "--candidate",
            candidate.to_str().unwrap(),
            "--best",
            models.join("000000.safetensors").to_str().unwrap(),
            "--games",
            "2",
            "--nodes",
            "1",
            "--threshold",
            "0",
        ])
    };
    copy(&candidate);
    let o = gate(&candidate);
    assert!(o.status.success(), "{}", stderr(&o));
    let promoted = models.join("000001.safetensors");
    assert!(stdout(&o).contains(&format!("promoted: {}", promoted.display())), "{}", stdout(&o));
    assert_eq!(
        std::fs::read(&promoted).unwrap(),
        std::fs::read(format!("{shipped}.safetensors")).unwrap()
    );
    assert!(models.join("000001.json").is_file());
    assert!(!candidate.exists() && !candidate.with_extension("json").exists());
    assert_eq!(
        std::fs::read_to_string(models.join("best.json")).unwrap(),
        "{\"best\": \"000001.safetensors\"}\n"
    );

    // A pointer that is not JSON: the gate names it and neither promotes nor loses the
    // candidate.
    std::fs::write(models.join("best.json"), "garbage").unwrap();
    copy(&candidate);
    let o = gate(&candidate);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("best.json") && stderr(&o).contains("not valid JSON"),
        "{}",
        stderr(&o)
    );
    assert!(candidate.exists() && !models.join("000002.safetensors").exists());
}

/// The little-endian f32 values of a `.npy` file `export --reference` wrote.
fn npy_values(path: &std::path::Path) -> Vec<f32> {
    let bytes = std::fs::read(path).unwrap();
    let header = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
    bytes[10 + header..]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// `export --grow` turns the shipped 4x32 into a 5x48 that gives the same policy and value
/// logits on the same reference positions, saved with its own architecture in the sidecar;
/// a size it cannot grow to is refused by name.
#[test]
fn export_grows_the_shipped_net_without_changing_what_it_computes() {
    let dir = temp_dir("export-grow");
    let export = |extra: &[&str], out: &str, reference: &str| {
        let out = dir.join(out);
        let reference = dir.join(reference);
        let mut args: Vec<String> =
            ["export", "--model", "shipped", "--out"].map(String::from).into();
        args.push(out.to_string_lossy().into_owned());
        args.push("--reference".into());
        args.push(reference.to_string_lossy().into_owned());
        args.extend(["--reference-positions", "20", "--seed", "4"].map(String::from));
        args.extend(extra.iter().map(|a| a.to_string()));
        let o = Command::new(env!("CARGO_BIN_EXE_atomzero"))
            .args(&args)
            .env("ATOMZERO_CACHE", dir.join("cache"))
            .output()
            .unwrap();
        (o, reference)
    };
    let (o, plain) = export(&[], "plain.safetensors", "plain");
    assert!(o.status.success(), "{}", stderr(&o));
    let (o, grown) = export(&["--grow", "5x48"], "grown.safetensors", "grown");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("grown: 4x32") && stdout(&o).contains("-> 5x48"), "{}", stdout(&o));
    let sidecar = std::fs::read_to_string(dir.join("grown.json")).unwrap();
    assert!(sidecar.contains("\"blocks\": 5") && sidecar.contains("\"filters\": 48"), "{sidecar}");
    for file in ["policy.npy", "wdl.npy"] {
        let (a, b) = (npy_values(&plain.join(file)), npy_values(&grown.join(file)));
        let scale = a.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        let worst = a.iter().zip(&b).fold(0.0f32, |m, (p, q)| m.max((p - q).abs()));
        assert!(scale > 0.1 && a.len() == b.len() && worst <= 1e-4 * scale, "{file}: {worst}");
    }
    for (size, expected) in [("3x48", "never shrinks"), ("6by48", "BLOCKSxFILTERS")] {
        let (o, _) = export(&["--grow", size], "bad.safetensors", "bad");
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(expected), "{}", stderr(&o));
        assert!(!dir.join("bad.safetensors").exists());
    }
}
