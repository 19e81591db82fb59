//! End-to-end tests of `atomzero run` with the test-sized `configs/ci.toml`: the run directory
//! is laid out as documented, a run killed with SIGKILL resumes with nothing lost and nothing
//! done twice, a finished run can be extended, and bad configs fail in one line.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn ci_config() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/ci.toml")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("atomzero-run-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_atomzero")).args(args).output().expect("run atomzero")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Starts `atomzero run` and SIGKILLs it right after it prints a line starting with `marker`.
/// Returns the lines it printed.
fn run_and_kill_after(args: &[&str], marker: &str) -> Vec<String> {
    run_and_signal_after(args, marker, None).0
}

/// Starts `atomzero run`; after the line starting with `marker`, sends `signal` with kill(1)
/// (SIGKILL through the standard library if `None`). Returns the lines and the exit code.
fn run_and_signal_after(
    args: &[&str],
    marker: &str,
    signal: Option<&str>,
) -> (Vec<String>, Option<i32>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_atomzero"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start atomzero");
    let stdout = child.stdout.take().unwrap();
    let mut lines = Vec::new();
    let mut signalled = false;
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        let hit = !signalled && line.starts_with(marker);
        lines.push(line);
        if hit {
            signalled = true;
            match signal {
                None => child.kill().unwrap(), // SIGKILL on Unix: no handler runs.
                Some(signal) => {
                    let status = Command::new("kill")
                        .args([signal, &child.id().to_string()])
                        .status()
                        .expect("kill(1)");
                    assert!(status.success());
                }
            }
        }
    }
    // The loop above read to the end, so the child never writes to a closed pipe.
    let code = child.wait().unwrap().code();
    (lines, code)
}

/// Shard file name → bytes.
fn shards(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir.join("selfplay"))
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".shard"))
        .map(|e| (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap()))
        .collect()
}

fn games_in(dir: &Path, generation: u64) -> usize {
    shards(dir)
        .keys()
        .filter(|n| n.starts_with(&format!("gen{generation:06}-")))
        .map(|n| atomzero_replay::read_shard(&dir.join("selfplay").join(n)).unwrap().1.len())
        .sum()
}

fn log_generations(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("log.txt"))
        .unwrap()
        .lines()
        .map(|l| l.split(" |").next().unwrap().trim().to_string())
        .collect()
}

fn labels(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["label"].as_str().unwrap().to_string()
        })
        .collect()
}

fn assert_unique(items: &[String]) {
    let set: BTreeSet<&String> = items.iter().collect();
    assert_eq!(set.len(), items.len(), "duplicates in {items:?}");
}

#[test]
fn killed_run_resumes_with_nothing_lost_or_repeated() {
    let tmp = temp_dir("kill");
    let dir = tmp.join("r");
    let (config, dir_s) = (ci_config(), dir.display().to_string());
    let args = ["run", "--config", config.to_str().unwrap(), "--dir", &dir_s];

    // Killed during generation 2 (its self-play starts right after generation 1's line).
    let printed = run_and_kill_after(&args, "gen   1 |");
    assert!(printed.iter().any(|l| l.starts_with("gen   0 |")), "{printed:?}");
    let gen1_shards: BTreeMap<String, Vec<u8>> =
        shards(&dir).into_iter().filter(|(n, _)| n.starts_with("gen000001-")).collect();
    assert_eq!(games_in(&dir, 1), 8);
    let model1 = std::fs::read(dir.join("models/000000.safetensors")).unwrap();

    let o = run(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("resuming"), "{out}");
    assert!(out.contains("run finished after 2 generations"), "{out}");

    // Nothing lost, nothing redone: generation 1's shards are untouched, generation 2 has
    // exactly its games, each generation is logged once, each match recorded once.
    let after: BTreeMap<String, Vec<u8>> =
        shards(&dir).into_iter().filter(|(n, _)| n.starts_with("gen000001-")).collect();
    assert_eq!(after, gen1_shards);
    assert_eq!(games_in(&dir, 2), 8);
    assert_eq!(std::fs::read(dir.join("models/000000.safetensors")).unwrap(), model1);
    assert_eq!(log_generations(&dir), ["gen   0", "gen   1", "gen   2"]);
    let results = labels(&dir.join("eval/results.jsonl"));
    assert_unique(&results);
    assert!(results.contains(&"eval 000000 random".to_string()), "{results:?}");
    let gates = labels(&dir.join("eval/gates.jsonl"));
    assert_eq!(gates, ["gate 1", "gate 2"]);

    // The documented layout.
    for file in [
        "config.toml",
        "run.json",
        "log.txt",
        "models/best.json",
        "models/000000.json",
        "eval/ratings.csv",
        "eval/elo.svg",
        "eval/gate-000001.pgn",
    ] {
        assert!(dir.join(file).is_file(), "{file} missing");
    }
    let checkpoints: Vec<String> = std::fs::read_dir(dir.join("checkpoints"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(checkpoints.contains(&"step-00000020".to_string()), "{checkpoints:?}");
    assert!(checkpoints.len() <= 2, "{checkpoints:?}"); // keep_checkpoints = 2
    let events = std::fs::read_dir(dir.join("tensorboard")).unwrap().count();
    assert!(events >= 2, "{events} event files");
    let best = std::fs::read_to_string(dir.join("models/best.json")).unwrap();
    let best_name = best.split('"').nth(3).unwrap().to_string();
    assert!(dir.join("models").join(&best_name).is_file(), "{best}");
    assert!(!dir.join("candidates/000002.safetensors").exists());
    let ratings = std::fs::read_to_string(dir.join("eval/ratings.csv")).unwrap();
    assert!(ratings.starts_with("rank,name,elo,error"), "{ratings}");
    assert!(ratings.contains(",random,0.0,"), "{ratings}");

    // Running it again does nothing; a larger budget continues.
    let o = run(&args);
    assert!(o.status.success());
    assert_eq!(games_in(&dir, 3), 0);
    let o = run(&["run", "--dir", &dir_s, "--generations", "3"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(games_in(&dir, 3), 8);
    assert_eq!(log_generations(&dir), ["gen   0", "gen   1", "gen   2", "gen   3"]);

    // The timeline has one line per generation, across the kill and the resumes, with wall
    // and CPU time that never go back.
    let timeline: Vec<serde_json::Value> = std::fs::read_to_string(dir.join("timeline.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let generations: Vec<u64> =
        timeline.iter().map(|l| l["generation"].as_u64().unwrap()).collect();
    assert_eq!(generations, [0, 1, 2, 3]);
    for pair in timeline.windows(2) {
        for key in ["elapsed_secs", "cpu_secs"] {
            let (a, b) = (pair[0][key].as_f64().unwrap(), pair[1][key].as_f64().unwrap());
            assert!(b > a && a >= 0.0, "{key}: {a} then {b}");
        }
    }
    assert_eq!(timeline[0]["best"], "000000");
    let best_now = std::fs::read_to_string(dir.join("models/best.json")).unwrap();
    let best_now = best_now.split('"').nth(3).unwrap().trim_end_matches(".safetensors");
    assert_eq!(timeline[3]["best"], best_now);
    // ci.toml promotes every candidate that plays its gate, so the gauntlet below has more
    // than one network to choose from on every host.
    assert_eq!(best_now, "000003");

    // The gauntlet rates the run's networks against the ladder, by CPU time, and a second
    // call replays nothing.
    let out = tmp.join("gauntlet");
    let out_s = out.display().to_string();
    let gauntlet = [
        "gauntlet", "--run", &dir_s, "--ladder", "random", "--ladder", "greedy", "--points", "2",
        "--games", "2", "--nodes", "4", "--out", &out_s,
    ];
    let o = run(&gauntlet);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let printed = text(&o.stdout);
    assert!(printed.contains("r/000000 vs random: "), "{printed}");
    assert!(printed.lines().any(|l| l.starts_with("player ") && l.contains("CPU h")), "{printed}");
    for file in ["results.jsonl", "ratings.csv", "networks.csv", "elo-cpu.svg"] {
        assert!(out.join(file).is_file(), "{file} missing");
    }
    let networks = std::fs::read_to_string(out.join("networks.csv")).unwrap();
    assert!(networks.starts_with("run,name,cpu_hours"), "{networks}");
    assert_eq!(networks.lines().count(), 3, "two networks: {networks}");
    let results = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    assert_unique(&labels(&out.join("results.jsonl")));
    let o = run(&gauntlet);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(!text(&o.stdout).contains(" vs random: "), "nothing replayed");
    assert_eq!(std::fs::read_to_string(out.join("results.jsonl")).unwrap(), results);
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn killed_during_the_first_evaluation_resumes() {
    let tmp = temp_dir("kill-early");
    let dir = tmp.join("r");
    let (config, dir_s) = (ci_config(), dir.display().to_string());
    let args = ["run", "--config", config.to_str().unwrap(), "--dir", &dir_s, "--generations", "1"];
    let printed = run_and_kill_after(&args, "new run");
    assert_eq!(printed.len(), 1, "{printed:?}");
    let o = run(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(log_generations(&dir), ["gen   0", "gen   1"]);
    assert_eq!(games_in(&dir, 1), 8);
    assert_unique(&labels(&dir.join("eval/results.jsonl")));
    let _ = std::fs::remove_dir_all(&tmp);
}

/// The number before " s" at the end of a summary line.
fn line_secs(line: &str) -> f64 {
    line.rsplit(" | ").next().unwrap().trim_end_matches(" s").parse().unwrap()
}

#[test]
fn killed_during_the_gate_the_line_keeps_self_play_training_and_their_time() {
    // Issue 44: after a resume the generation's line omitted the stages finished before the
    // kill and counted only the resumed session's time. The gate reads the opening book when
    // it starts; the book is a named pipe, so the test's open of its other end returns exactly
    // when the gate has begun (self-play and training saved), and the run is killed there.
    let tmp = temp_dir("kill-gate");
    let dir = tmp.join("r");
    let book = tmp.join("book.epd");
    let made = Command::new("mkfifo").arg(&book).status().expect("mkfifo");
    assert!(made.success());
    let ci = std::fs::read_to_string(ci_config()).unwrap();
    // 30 steps: the session before the kill lasts over a second (the line's time is whole
    // seconds).
    let text_config = ci
        .replace("generations = 2", "generations = 1")
        .replace("steps_per_generation = 10", "steps_per_generation = 30")
        .replace("eval_games = 4", "eval_games = 0")
        + &format!("openings = \"{}\"\n", book.display());
    let config = tmp.join("c.toml");
    std::fs::write(&config, text_config).unwrap();
    let (config_s, dir_s) = (config.display().to_string(), dir.display().to_string());
    let mut child = Command::new(env!("CARGO_BIN_EXE_atomzero"))
        .args(["run", "--config", &config_s, "--dir", &dir_s])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start atomzero");
    let stdout = child.stdout.take().unwrap();
    let opened = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (opened, book) = (opened.clone(), book.clone());
        std::thread::spawn(move || {
            let lines: Vec<String> = BufReader::new(stdout).lines().map_while(Result::ok).collect();
            // A run that ended without opening the book would leave the test waiting on the
            // pipe: open its reading end here instead, and the assertions below say why.
            if !opened.load(std::sync::atomic::Ordering::SeqCst) {
                let _ = std::fs::File::open(&book);
            }
            lines
        })
    };
    // Blocks until the run opens the book for reading: its gate of generation 1.
    let pipe = std::fs::OpenOptions::new().write(true).open(&book).unwrap();
    opened.store(true, std::sync::atomic::Ordering::SeqCst);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    drop(pipe);
    let printed = reader.join().unwrap();
    assert!(printed.iter().any(|l| l.starts_with("gen   0 |")), "{printed:?}");
    assert!(!printed.iter().any(|l| l.starts_with("gen   1 |")), "{printed:?}");
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(state["stage"], "gate", "{state}");
    let (elapsed, started) =
        (state["elapsed_secs"].as_f64().unwrap(), state["generation_start_secs"].as_f64());

    // The book is a file again; the run resumes with its gate.
    std::fs::remove_file(&book).unwrap();
    std::fs::write(&book, "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -\n").unwrap();
    let o = run(&["run", "--dir", &dir_s]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let log = std::fs::read_to_string(dir.join("log.txt")).unwrap();
    let line = log.lines().find(|l| l.starts_with("gen   1 |")).unwrap();
    assert!(line.contains("| self-play 8 games "), "{line}");
    assert!(line.contains("| train steps 0->30 loss "), "{line}");
    assert!(line.contains("| gate +"), "{line}");
    let before_kill = elapsed - started.expect("run.json records when the generation began");
    // Its time counts the session before the kill (to the gate's start) and the resumed one
    // (the line rounds their sum, never below the first part rounded).
    assert!(line_secs(line) >= before_kill.round(), "{line}: {before_kill} s before the kill");
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn ctrl_c_stops_cleanly_and_the_run_resumes() {
    let tmp = temp_dir("sigint");
    let dir = tmp.join("r");
    let (config, dir_s) = (ci_config(), dir.display().to_string());
    let args = ["run", "--config", config.to_str().unwrap(), "--dir", &dir_s];
    let (_, code) = run_and_signal_after(&args, "gen   1 |", Some("-INT"));
    // Either the interrupt landed (exit 130 after finishing the step) or the short run was
    // already done; both leave a consistent directory.
    assert!(matches!(code, Some(130) | Some(0)), "{code:?}");
    let state = std::fs::read_to_string(dir.join("run.json")).unwrap();
    assert!(state.contains("\"format\": 1"), "{state}");
    let o = run(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(log_generations(&dir), ["gen   0", "gen   1", "gen   2"]);
    assert_eq!((games_in(&dir, 1), games_in(&dir, 2)), (8, 8));
    assert_unique(&labels(&dir.join("eval/results.jsonl")));
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn bad_configs_fail_in_one_line_naming_the_problem() {
    let tmp = temp_dir("bad");
    let dir_s = tmp.join("r").display().to_string();
    let check = |body: Option<&str>, wanted: &str| {
        let path = tmp.join("c.toml");
        if let Some(body) = body {
            std::fs::write(&path, body).unwrap();
        } else {
            let _ = std::fs::remove_file(&path);
        }
        let o = run(&["run", "--config", path.to_str().unwrap(), "--dir", &dir_s]);
        assert_eq!(o.status.code(), Some(2));
        let err = text(&o.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(wanted), "wanted '{wanted}' in: {err}");
        assert!(!tmp.join("r/run.json").exists(), "nothing is started: {err}");
    };
    check(None, "c.toml");
    check(Some("[run]\ngamez = 3\n"), "gamez");
    check(Some("[run]\ngames_per_generation = \"many\"\n"), "games_per_generation");
    check(Some("[run]\nbaselines = [\"randomm\"]\n"), "randomm");
    check(Some("device = \"tpu\"\n"), "device");

    // A run directory remembers its config: another one is refused, naming the key.
    let ci = std::fs::read_to_string(ci_config()).unwrap();
    let dir2 = tmp.join("r2").display().to_string();
    let config = ci_config();
    let o = run(&[
        "run",
        "--config",
        config.to_str().unwrap(),
        "--dir",
        &dir2,
        "--max-minutes",
        "1e-9",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    std::fs::write(tmp.join("b.toml"), ci.replace("visits = 16", "visits = 17")).unwrap();
    let o = run(&["run", "--config", tmp.join("b.toml").to_str().unwrap(), "--dir", &dir2]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(err.contains("selfplay.visits"), "{err}");
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Starts `atomzero` with `args`; its stdout lines arrive on the returned channel.
fn spawn_lines(args: &[&str]) -> (std::process::Child, std::sync::mpsc::Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_atomzero"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start atomzero");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// Waits up to `limit` for a line of `rx` that contains `needle`; returns it.
fn line_containing(
    rx: &std::sync::mpsc::Receiver<String>,
    needle: &str,
    limit: std::time::Duration,
) -> String {
    let deadline = std::time::Instant::now() + limit;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) if line.contains(needle) => return line,
            Ok(_) => {}
            Err(e) => panic!("no line with '{needle}' within {limit:?}: {e}"),
        }
    }
}

/// Waits up to `limit` for `child` to close its stdout (it exits), collecting the lines of
/// `rx` until then; returns them and the exit code.
fn finish_within(
    child: &mut std::process::Child,
    rx: &std::sync::mpsc::Receiver<String>,
    limit: std::time::Duration,
) -> (Vec<String>, Option<i32>) {
    let deadline = std::time::Instant::now() + limit;
    let mut lines = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => lines.push(line),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                let _ = child.kill();
                panic!("still running after {limit:?}: {lines:?}");
            }
        }
    }
    (lines, child.wait().unwrap().code())
}

#[test]
fn a_trainer_and_workers_share_a_run_with_a_worker_killed() {
    // A run on a shared directory: one trainer, two workers; one worker is killed with
    // SIGKILL after its first shard and another starts. The run finishes its generations,
    // every shard is readable and counted in at most one generation, and the workers stop
    // by themselves when the run is finished. (Over S3: scripts/checks/s3-workers.sh.)
    let tmp = temp_dir("workers");
    let dir = tmp.join("r");
    let dir_s = dir.display().to_string();
    let config = tmp.join("w.toml");
    let ci = std::fs::read_to_string(ci_config()).unwrap();
    std::fs::write(&config, ci.replace("games_per_generation = 8", "games_per_generation = 12"))
        .unwrap();
    let config_s = config.display().to_string();
    let limit = std::time::Duration::from_secs(300);
    let worker = |name: &str| {
        spawn_lines(&["worker", "--run", &dir_s, "--name", name, "--threads", "1", "--poll", "0.1"])
    };
    let (mut a, a_lines) = worker("wa");
    let (mut b, b_lines) = worker("wb");
    let (mut trainer, trainer_lines) =
        spawn_lines(&["trainer", "--run", &dir_s, "--config", &config_s, "--poll", "0.1"]);
    let first = line_containing(&a_lines, "uploaded", limit);
    a.kill().unwrap(); // SIGKILL
    a.wait().unwrap();
    let (mut c, c_lines) = worker("wc");

    let (printed, code) = finish_within(&mut trainer, &trainer_lines, limit);
    assert_eq!(code, Some(0), "{printed:?}");
    assert!(printed.iter().any(|l| l.contains("(self-play by workers)")), "{printed:?}");
    let finished = printed.iter().any(|l| l.starts_with("run finished after 2 generations"));
    assert!(finished, "{printed:?}");
    for (worker, lines) in [(&mut b, &b_lines), (&mut c, &c_lines)] {
        let (printed, code) = finish_within(worker, lines, limit);
        assert_eq!(code, Some(0), "{printed:?}");
        assert!(printed.last().is_some_and(|l| l.contains("the run is finished")), "{printed:?}");
    }

    // Every worker shard is readable; each is counted in at most one generation, and each
    // generation counted at least its games.
    let mut shards = BTreeMap::new();
    for worker_dir in std::fs::read_dir(dir.join("selfplay")).unwrap() {
        let worker_dir = worker_dir.unwrap().path();
        assert!(worker_dir.is_dir(), "only workers' folders: {}", worker_dir.display());
        for shard in std::fs::read_dir(&worker_dir).unwrap() {
            let shard = shard.unwrap().path();
            let (_, games) = atomzero_replay::read_shard(&shard).unwrap();
            let key = shard.strip_prefix(&dir).unwrap().display().to_string();
            shards.insert(key, games.len());
        }
    }
    let killed = first.split_whitespace().nth(3).unwrap().to_string();
    assert!(shards.contains_key(&killed), "{killed} of the killed worker is kept: {shards:?}");
    let mut counted = BTreeSet::new();
    for g in 1..=2u64 {
        let text = std::fs::read_to_string(dir.join(format!("generations/{g:06}.json"))).unwrap();
        let manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
        let mut games = 0;
        for entry in manifest["shards"].as_array().unwrap() {
            let key = entry["key"].as_str().unwrap().to_string();
            assert_eq!(Some(&(entry["games"].as_u64().unwrap() as usize)), shards.get(&key));
            assert!(counted.insert(key.clone()), "{key} counted twice");
            games += entry["games"].as_u64().unwrap();
        }
        assert!(games >= 12, "generation {g}: {games} games");
    }
    assert_eq!(log_generations(&dir), ["gen   0", "gen   1", "gen   2"]);
    let state = std::fs::read_to_string(dir.join("run.json")).unwrap();
    assert!(state.contains("\"finished\": true"), "{state}");
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn a_balanced_start_run_trains_and_evaluates_from_the_setup_position() {
    let tmp = temp_dir("balanced");
    let config = tmp.join("balanced.toml");
    let ci = std::fs::read_to_string(ci_config()).unwrap();
    let body = ci.replacen("variant = \"atomic\"", "variant = \"atomic\"\nstart = \"balanced\"", 1);
    assert!(body.contains("start = \"balanced\""));
    std::fs::write(&config, body).unwrap();
    let dir = tmp.join("r");
    let o = run(&[
        "run",
        "--config",
        config.to_str().unwrap(),
        "--dir",
        dir.to_str().unwrap(),
        "--generations",
        "1",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("atomic (balanced start)"), "{out}");
    let gen1 = out.lines().find(|l| l.starts_with("gen   1")).expect("generation 1 line");
    assert!(gen1.contains(" | removes "), "{gen1}");
    // Every self-play game starts with a searched removal; evaluation games with White's.
    for (name, bytes) in shards(&dir) {
        let path = tmp.join(&name);
        std::fs::write(&path, bytes).unwrap();
        for game in atomzero_replay::read_shard(&path).unwrap().1 {
            assert_eq!(game.start_fen, "balanced", "{name}");
            assert!(game.moves[0].mv.is_removal(), "{name}");
        }
    }
    let evals: Vec<_> = std::fs::read_dir(dir.join("eval"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pgn"))
        .collect();
    assert!(!evals.is_empty());
    for path in evals {
        for game in atomzero_rules::read_pgn(&std::fs::read_to_string(&path).unwrap()) {
            let game = game.unwrap();
            assert!(game.initial.is_setup_phase() && game.moves[0].is_removal(), "{path:?}");
        }
    }
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn a_bomb_run_is_rated_by_a_gauntlet_against_random_and_greedy() {
    let tmp = temp_dir("bomb-gauntlet");
    let config = tmp.join("bomb.toml");
    let ci = std::fs::read_to_string(ci_config()).unwrap();
    let body = ci
        .replacen("variant = \"atomic\"", "variant = \"bomb\"", 1)
        .replacen("value_channels = 2", "value_channels = 2\n[net.encoder]\nbomb = true", 1)
        .replacen(
            "match_max_plies = 60",
            "match_max_plies = 60\nbaselines = [\"random\", \"greedy\"]",
            1,
        );
    assert!(body.contains("bomb = true") && body.contains("baselines"));
    std::fs::write(&config, body).unwrap();
    let dir = tmp.join("b");
    let dir_s = dir.display().to_string();
    let o =
        run(&["run", "--config", config.to_str().unwrap(), "--dir", &dir_s, "--generations", "1"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // The default ladder of the bomb variant: random < greedy (alphabeta and Fairy-Stockfish
    // cannot play hidden information); each match reports detonations and beliefs.
    let out = tmp.join("gauntlet");
    let out_s = out.display().to_string();
    let o = run(&[
        "gauntlet", "--run", &dir_s, "--points", "2", "--games", "2", "--nodes", "4", "--out",
        &out_s,
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let printed = text(&o.stdout);
    assert!(printed.contains("ladder random < greedy;"), "{printed}");
    assert!(printed.contains("b/000000 vs random: "), "{printed}");
    assert!(printed.contains("  Detonations: "), "{printed}");
    assert!(out.join("ratings.csv").is_file());
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn init_starts_a_new_run_from_a_given_network_and_only_a_new_run() {
    let tmp = temp_dir("init");
    // Every candidate promoted, so that generation 1 is a trained network in models/.
    let config = tmp.join("promote.toml");
    let body = std::fs::read_to_string(ci_config()).unwrap().replacen(
        "gate_games = 4",
        "gate_games = 0",
        1,
    );
    assert!(body.contains("gate_games = 0"));
    std::fs::write(&config, body).unwrap();
    let (a, b, c) = (tmp.join("a"), tmp.join("b"), tmp.join("c"));
    let cfg = config.to_str().unwrap();
    let o = run(&["run", "--config", cfg, "--dir", a.to_str().unwrap(), "--generations", "1"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let trained = a.join("models/000001.safetensors");
    let random = std::fs::read(a.join("models/000000.safetensors")).unwrap();
    let weights = std::fs::read(&trained).unwrap();
    assert!(random != weights, "generation 1 was trained");

    // Generation 0 of the new run is the given network, not the seed's random weights.
    let init = trained.to_str().unwrap();
    let b_s = b.to_str().unwrap();
    let args = ["run", "--config", cfg, "--dir", b_s, "--generations", "1", "--init", init];
    let o = run(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("generation 0 is the network"), "{}", text(&o.stdout));
    // The same tensors (the header's metadata map may list its keys in another order).
    let data = |bytes: &[u8]| {
        bytes[8 + u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize..].to_vec()
    };
    let gen0 = std::fs::read(b.join("models/000000.safetensors")).unwrap();
    assert!(gen0.len() == weights.len() && data(&gen0) == data(&weights), "generation 0 differs");
    let sidecar = std::fs::read_to_string(b.join("models/000000.json")).unwrap();
    assert!(sidecar.contains("000001.safetensors"), "the parent is recorded: {sidecar}");

    // With a warm-up, generation 1 only plays (its games fill the window), generation 2 is
    // the first to train, from step 0.
    let warm = tmp.join("warm.toml");
    let body = std::fs::read_to_string(&config).unwrap().replacen(
        "[run]\n",
        "[run]\nwarmup_generations = 1\n",
        1,
    );
    assert!(body.contains("warmup_generations = 1"));
    std::fs::write(&warm, body).unwrap();
    let d = tmp.join("d");
    let d_s = d.to_str().unwrap();
    let w = warm.to_str().unwrap();
    let o = run(&["run", "--config", w, "--dir", d_s, "--generations", "1", "--init", init]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let log = std::fs::read_to_string(d.join("log.txt")).unwrap();
    let gen1 = log.lines().find(|l| l.starts_with("gen   1 |")).unwrap();
    assert!(gen1.contains("window warm-up 1 of 1: no training"), "{gen1}");
    assert!(!gen1.contains("train steps") && !gen1.contains("gate"), "{gen1}");
    assert_eq!(games_in(&d, 1), 8, "generation 1 played its games");
    assert!(!d.join("candidates/000001.safetensors").exists());
    assert!(atomzero_train::checkpoint::list(&d.join("checkpoints")).is_empty());
    let o = run(&["run", "--dir", d_s, "--generations", "2"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let log = std::fs::read_to_string(d.join("log.txt")).unwrap();
    let gen2 = log.lines().find(|l| l.starts_with("gen   2 |")).unwrap();
    assert!(gen2.contains("train steps 0->10") && !gen2.contains("warm-up"), "{gen2}");
    assert!(d.join("models/000002.safetensors").exists(), "generation 2 promoted");
    assert!(!d.join("models/000001.safetensors").exists());

    // A run past generation 0 refuses it (extending the budget with it is a mistake).
    let o = run(&["run", "--dir", b_s, "--generations", "2", "--init", init]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("new run"), "{}", text(&o.stderr));

    // A network of another architecture is refused before the run directory gets a config.
    let other = tmp.join("wide.toml");
    let body = std::fs::read_to_string(&config).unwrap().replacen("filters = 8", "filters = 4", 1);
    assert!(body.contains("filters = 4"));
    std::fs::write(&other, body).unwrap();
    let c_s = c.to_str().unwrap();
    let o = run(&["run", "--config", other.to_str().unwrap(), "--dir", c_s, "--init", init]);
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(err.contains("initial network") && err.contains("filters"), "{err}");
    assert!(!c.join("config.toml").exists());
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// Training targets in the shards of `dir/selfplay` whose names start with `prefix`.
fn targets_in(dir: &Path, prefix: &str) -> usize {
    shards(dir)
        .keys()
        .filter(|n| n.starts_with(prefix))
        .map(|n| {
            let (_, games) = atomzero_replay::read_shard(&dir.join("selfplay").join(n)).unwrap();
            games.iter().map(|g| g.n_targets()).sum::<usize>()
        })
        .sum()
}

/// The run scalar `tag` at `step` in a run's TensorBoard files.
fn run_scalar(dir: &Path, tag: &str, step: i64) -> Option<f32> {
    std::fs::read_dir(dir.join("tensorboard"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .flat_map(|p| atomzero_train::tensorboard::read_scalars(&p).unwrap())
        .find(|(t, s, _)| t == tag && *s == step)
        .map(|(_, _, v)| v)
}

#[test]
fn init_window_seeds_a_new_runs_window_with_another_runs_newest_shards() {
    let tmp = temp_dir("init-window");
    // No warm-up (the config's default): generation 1 trains at once.
    let cfg = ci_config();
    let cfg = cfg.to_str().unwrap();
    let (a, b, c) = (tmp.join("a"), tmp.join("b"), tmp.join("c"));
    let o = run(&["run", "--config", cfg, "--dir", a.to_str().unwrap(), "--generations", "1"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let source = a.join("selfplay");
    let seeded = targets_in(&a, "gen000001-");
    assert!(seeded > 0);

    // The whole source fits the window: every shard is copied, byte for byte, in order.
    let b_s = b.to_str().unwrap();
    let src = source.to_str().unwrap();
    let o =
        run(&["run", "--config", cfg, "--dir", b_s, "--generations", "1", "--init-window", src]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let printed = text(&o.stdout);
    let expected =
        format!("the window starts with {seeded} positions: the newest 4 of the 4 shards in");
    assert!(printed.contains(&expected), "{printed}");
    let copied: Vec<Vec<u8>> = shards(&b)
        .into_iter()
        .filter(|(n, _)| n.starts_with("gen000000-"))
        .map(|(_, bytes)| bytes)
        .collect();
    let originals: Vec<Vec<u8>> = shards(&a).into_values().collect();
    assert_eq!(copied, originals, "generation 0's shards are the source's");
    // Generation 1 trained on its own games and the seed's.
    let own = targets_in(&b, "gen000001-");
    let window = run_scalar(&b, "train/window_positions", 1).expect("window scalar");
    assert_eq!(window as usize, own + seeded, "own {own}, seeded {seeded}");
    // Without a seed the window is the run's own games.
    let c_s = c.to_str().unwrap();
    let o = run(&["run", "--config", cfg, "--dir", c_s, "--generations", "1"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let window = run_scalar(&c, "train/window_positions", 1).expect("window scalar");
    assert_eq!(window as usize, targets_in(&c, "gen000001-"));

    // A window smaller than the source takes only the newest shards that cover it.
    let small = tmp.join("small.toml");
    let body = std::fs::read_to_string(cfg).unwrap().replacen(
        "[train]\n",
        "[train]\nwindow_positions = 1\n",
        1,
    );
    assert!(body.contains("window_positions = 1\n"));
    std::fs::write(&small, body).unwrap();
    let d = tmp.join("d");
    let args = [
        "run",
        "--config",
        small.to_str().unwrap(),
        "--dir",
        d.to_str().unwrap(),
        "--generations",
        "1",
        "--init-window",
        src,
    ];
    let o = run(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("the newest 1 of the 4 shards"), "{}", text(&o.stdout));
    let newest = shards(&a).into_values().last().unwrap();
    assert_eq!(shards(&d).get("gen000000-000000.shard"), Some(&newest));
    assert!(!shards(&d).contains_key("gen000000-000001.shard"));

    // A run past generation 0 refuses it.
    let o = run(&["run", "--dir", b_s, "--generations", "2", "--init-window", src]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("new run"), "{}", text(&o.stderr));

    // A directory without shards, or with a corrupt one, is refused before the run
    // directory gets a config, in a line naming it.
    let empty = tmp.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let e = tmp.join("e");
    let e_s = e.to_str().unwrap();
    let o = run(&["run", "--config", cfg, "--dir", e_s, "--init-window", empty.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("no .shard files"), "{}", text(&o.stderr));
    assert!(!e.join("config.toml").exists());
    let bad = tmp.join("bad");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(bad.join("gen000009-000000.shard"), b"not a shard").unwrap();
    let o = run(&["run", "--config", cfg, "--dir", e_s, "--init-window", bad.to_str().unwrap()]);
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(err.contains("gen000009-000000.shard") && err.contains("corrupt"), "{err}");
    assert!(!e.join("config.toml").exists());
    std::fs::remove_dir_all(&tmp).unwrap();
}
