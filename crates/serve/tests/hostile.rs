//! Hostile run directories and requests (issue 44, "nothing lost, nothing leaked"): symlinks
//! that lead out of the run on every route, damaged game files (a 4xx that names the file, not
//! a 500), the game JSON's keys, the networks held in memory while many games are played, and
//! random query strings (a clear 4xx or a correct answer, never a 5xx, never a dead server).

use atomzero_eval::{ModelLoader, SharedEvaluator};
use atomzero_mcts::RandomEvaluator;
use atomzero_replay::{EndReason, GameRecord, MoveRecord, ShardMeta, write_shard};
use atomzero_rules::{Position, Variant};
use atomzero_serve::{Scalar, ServeOptions, Server};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Counts loads; hands out seeded random networks.
#[derive(Default)]
struct CountingModels {
    loads: AtomicUsize,
    paths: Mutex<Vec<String>>,
}

impl ModelLoader for CountingModels {
    fn load(&self, path: &str) -> Result<SharedEvaluator, String> {
        self.loads.fetch_add(1, Ordering::SeqCst);
        self.paths.lock().unwrap().push(path.to_string());
        Ok(Arc::new(RandomEvaluator { seed: 7 }))
    }
}

/// Records the directories the TensorBoard reader was handed.
static SCALAR_DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn scalars(dir: &Path) -> Result<Vec<Scalar>, String> {
    SCALAR_DIRS.lock().unwrap().push(dir.to_path_buf());
    Ok(Vec::new())
}

const SECRET: &str = "TOP-SECRET-44";

/// A short legal game (the first legal move, repeatedly).
fn game(plies: usize) -> GameRecord {
    let mut pos = Position::new(Variant::Atomic);
    let mut moves = Vec::new();
    for _ in 0..plies {
        let Some(&m) = pos.legal_moves().first() else { break };
        moves.push(MoveRecord { mv: m, target: None });
        pos.play_unchecked(m);
    }
    GameRecord {
        variant: Variant::Atomic,
        start_fen: Position::new(Variant::Atomic).fen(),
        chess960: false,
        moves,
        winner: None,
        reason: EndReason::MaxLength,
        resign_disabled: false,
        resign_point: None,
    }
}

/// A run directory beside a directory of secrets, both under a fresh base.
fn make_run(name: &str) -> (PathBuf, PathBuf) {
    let base =
        std::env::temp_dir().join(format!("atomzero-serve-hostile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let run = base.join("run");
    let outside = base.join("outside");
    for dir in ["eval", "models", "selfplay"] {
        std::fs::create_dir_all(run.join(dir)).unwrap();
    }
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(run.join("config.toml"), "variant = \"atomic\"\n").unwrap();
    for model in ["000000", "000001"] {
        std::fs::write(run.join(format!("models/{model}.safetensors")), b"weights").unwrap();
    }
    let meta = ShardMeta { model: "models/000001.safetensors".into(), ..ShardMeta::default() };
    write_shard(&run.join("selfplay/gen000001-000000.shard"), &meta, &[game(6), game(3)]).unwrap();
    (base, run)
}

struct TestServer {
    addr: SocketAddr,
    base: PathBuf,
    run: PathBuf,
    models: Arc<CountingModels>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

fn serve(base: PathBuf, run: PathBuf) -> TestServer {
    let models = Arc::new(CountingModels::default());
    let options = ServeOptions {
        run_dir: run.clone(),
        variant: Variant::Atomic,
        eval_games: 0,
        models: models.clone(),
        scalars: Arc::new(scalars),
        poll: Duration::from_millis(50),
    };
    let server = Server::bind("127.0.0.1:0".parse().unwrap(), options).unwrap();
    let addr = server.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::spawn(move || {
        server
            .run_until(async move {
                let _ = stopped.await;
            })
            .unwrap();
    });
    TestServer { addr, base, run, models, stop: Some(stop), thread: Some(thread) }
}

/// One request sent byte for byte; (status, body).
fn request(addr: SocketAddr, method: &str, path: &str, body: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (headers, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = headers.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, body.to_string())
}

fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    request(addr, "GET", path, "")
}

#[cfg(unix)]
#[test]
fn symlinks_out_of_the_run_are_not_read_on_any_route() {
    use std::os::unix::fs::symlink;
    let (base, run) = make_run("symlinks");
    let outside = base.join("outside");
    std::fs::write(outside.join("secret.txt"), SECRET).unwrap();
    std::fs::write(outside.join("secret.toml"), format!("# {SECRET}\n")).unwrap();
    std::fs::write(
        outside.join("run.json"),
        format!("{{\"generation\": 7, \"stage\": \"{SECRET}\"}}"),
    )
    .unwrap();
    std::fs::create_dir_all(outside.join("games")).unwrap();
    std::fs::write(outside.join("games/gen000005-000000.shard"), b"x").unwrap();
    std::fs::write(outside.join("games/secret-game.pgn"), format!("[Event \"{SECRET}\"]\n\n*\n"))
        .unwrap();
    std::fs::create_dir_all(outside.join("tb")).unwrap();
    // The issue's reproduction: log.txt and config.toml lead out of the run.
    std::fs::remove_file(run.join("config.toml")).unwrap();
    symlink(outside.join("secret.txt"), run.join("log.txt")).unwrap();
    symlink(outside.join("secret.toml"), run.join("config.toml")).unwrap();
    symlink(outside.join("run.json"), run.join("run.json")).unwrap();
    symlink(outside.join("secret.txt"), run.join("timeline.jsonl")).unwrap();
    symlink(outside.join("secret.txt"), run.join("models/best.json")).unwrap();
    symlink(outside.join("tb"), run.join("tensorboard")).unwrap();
    symlink(outside.join("games"), run.join("play")).unwrap();
    symlink(outside.join("games/secret-game.pgn"), run.join("eval/gate-000009.pgn")).unwrap();
    // A network whose sidecar leads out.
    std::fs::write(run.join("models/000002.safetensors"), b"weights").unwrap();
    symlink(outside.join("secret.txt"), run.join("models/000002.json")).unwrap();
    let server = serve(base, run);

    let (status, summary) = get(server.addr, "/api/summary");
    assert_eq!(status, 200, "{summary}");
    assert!(!summary.contains(SECRET), "the summary read a file outside the run: {summary}");
    let json: serde_json::Value = serde_json::from_str(&summary).unwrap();
    assert_eq!(json["status"]["generation"], serde_json::Value::Null, "{summary}");
    assert!(
        SCALAR_DIRS.lock().unwrap().iter().all(|d| !d.starts_with(server.base.join("outside"))),
        "the TensorBoard reader was handed a directory outside the run"
    );
    let (status, files) = get(server.addr, "/api/games");
    assert_eq!(status, 200);
    assert!(!files.contains("secret-game") && !files.contains("gen000005"), "{files}");
    assert!(!files.contains("gate-000009"), "a symlinked PGN is listed: {files}");
    for path in [
        "/api/games/file?file=eval/gate-000009.pgn",
        "/api/games/file?file=play/secret-game.pgn",
        "/api/games/game?file=eval/gate-000009.pgn&index=0",
        "/run/log.txt",
        "/run/config.toml",
        "/run/play/secret-game.pgn",
    ] {
        let (status, body) = get(server.addr, path);
        assert_eq!(status, 404, "{path}: {body}");
        assert!(!body.contains(SECRET), "{path}: {body}");
    }
    // The network list reads models/ only, and a sidecar that leads out is never read.
    let (status, body) = request(
        server.addr,
        "POST",
        "/api/play",
        r#"{"network":"000002","nodes":2,"color":"white"}"#,
    );
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("sidecar"), "{body}");
    // A game is never written through a `play/` that leads out.
    let (status, body) = request(
        server.addr,
        "POST",
        "/api/play",
        r#"{"network":"000001","nodes":2,"color":"white"}"#,
    );
    assert!(status >= 400, "a game was saved through a symlinked play/: {status} {body}");
    let written: Vec<_> = std::fs::read_dir(server.base.join("outside/games"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("play-"))
        .collect();
    assert!(written.is_empty(), "written outside the run: {written:?}");
    assert!(
        server
            .models
            .paths
            .lock()
            .unwrap()
            .iter()
            .all(|p| p.starts_with(&*server.run.to_string_lossy())
                || Path::new(p).starts_with(server.run.canonicalize().unwrap())),
        "a network was loaded from outside the run"
    );
}

#[test]
fn damaged_game_files_answer_422_naming_the_file_and_the_game_json_has_one_index() {
    let (base, run) = make_run("damaged");
    let shard = run.join("selfplay/gen000001-000000.shard");
    let mut bytes = std::fs::read(&shard).unwrap();
    let middle = bytes.len() / 2;
    for b in &mut bytes[middle..middle + 8] {
        *b ^= 0xA5;
    }
    std::fs::write(run.join("selfplay/gen000002-000000.shard"), &bytes).unwrap();
    std::fs::write(run.join("selfplay/gen000003-000000.shard"), &bytes[..bytes.len() / 3]).unwrap();
    std::fs::write(run.join("eval/gate-000001.pgn"), [0xFFu8, 0xFE, 0x00, b'[', 0x80]).unwrap();
    let server = serve(base, run);
    for file in [
        "selfplay/gen000002-000000.shard",
        "selfplay/gen000003-000000.shard",
        "eval/gate-000001.pgn",
    ] {
        for path in
            [format!("/api/games/file?file={file}"), format!("/api/games/game?file={file}&index=0")]
        {
            let (status, body) = get(server.addr, &path);
            assert_eq!(status, 422, "{path}: {body}");
            assert!(body.contains(file), "{path}: the error names the file: {body}");
        }
    }
    let (status, body) =
        get(server.addr, "/api/games/game?file=selfplay/gen000001-000000.shard&index=1");
    assert_eq!(status, 200, "{body}");
    assert_eq!(body.matches("\"index\":").count(), 1, "one \"index\" key: {body}");
    let json: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(json["index"], 1);
}

#[test]
fn many_games_share_one_loaded_network_and_few_are_held() {
    let (base, run) = make_run("memory");
    let server = serve(base, run);
    let mut ids = Vec::new();
    for i in 0..40 {
        let network = if i % 10 == 9 { "000000" } else { "000001" };
        let body = format!(r#"{{"network":"{network}","nodes":2,"color":"black"}}"#);
        let (status, reply) = request(server.addr, "POST", "/api/play", &body);
        assert_eq!(status, 201, "{reply}");
        let json: serde_json::Value = serde_json::from_str(&reply).unwrap();
        ids.push(json["id"].as_u64().unwrap());
    }
    // Each game's engine moves once.
    for id in ids.iter().rev().take(5) {
        let (status, reply) = request(server.addr, "POST", &format!("/api/play/{id}/engine"), "");
        assert_eq!(status, 200, "{reply}");
    }
    let loads = server.models.loads.load(Ordering::SeqCst);
    // Alternating between two networks with room for two: each is loaded once.
    assert_eq!(loads, 2, "40 games and 5 engine moves loaded {loads} networks");
}

/// A tiny deterministic generator.
struct Lcg(u64);
impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 =
            self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

#[test]
fn random_query_strings_get_a_clear_answer_never_a_5xx() {
    let (base, run) = make_run("queries");
    let server = serve(base, run);
    let mut rng = Lcg(44);
    let pieces = [
        "file=",
        "index=",
        "&",
        "=",
        "selfplay/gen000001-000000.shard",
        "eval/",
        "..",
        "%2e",
        "%2F",
        "%00",
        "%",
        "%zz",
        "%ff%fe",
        "0",
        "1",
        "-1",
        "18446744073709551616",
        "99999999999",
        "play/",
        "/",
        "+",
        "?",
        "#",
        ";",
        "file",
        "index",
        "\u{e9}",
        "%C3%A9",
    ];
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    for _ in 0..300 {
        let route =
            ["/api/games/file", "/api/games/game", "/api/games", "/api/networks"][rng.below(4)];
        let query: String = (0..rng.below(8)).map(|_| pieces[rng.below(pieces.len())]).collect();
        // Only bytes an HTTP request line can carry.
        let query: String = query
            .chars()
            .map(|c| if c.is_ascii_graphic() { c.to_string() } else { "%E9".to_string() })
            .collect();
        let path = format!("{route}?{query}");
        let (status, body) = get(server.addr, &path);
        *statuses.entry(status).or_default() += 1;
        assert!(matches!(status, 200 | 400 | 404 | 422), "{path}: {status} {body}");
        if status != 200 {
            let json: serde_json::Value =
                serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"));
            assert!(json["error"].as_str().is_some_and(|m| !m.is_empty()), "{path}: {body}");
        }
    }
    // The server is still answering.
    assert_eq!(get(server.addr, "/api/networks").0, 200);
    eprintln!("query strings: status counts {statuses:?}");
}
