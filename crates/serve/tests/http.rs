//! The HTTP layer over real sockets: a server on a free localhost port over a run directory
//! made here (shards, PGNs, results, ratings, a network file), asked with raw HTTP/1.1 so that
//! paths reach the server exactly as written (`..` included). Covers path traversal (404 and
//! nothing leaked), the body limit (413), every API with good and bad input (4xx with a
//! message), a whole game against a network to its result, every variant in the viewer, and a
//! live update through the event stream.

use atomzero_eval::{ModelLoader, SharedEvaluator};
use atomzero_mcts::RandomEvaluator;
use atomzero_replay::{EndReason, GameRecord, MoveRecord, SearchTarget, ShardMeta, write_shard};
use atomzero_rules::{Color, PgnGame, Position, Variant};
use atomzero_serve::{Scalar, ServeOptions, Server};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A loader that hands out seeded random networks and records what it was asked for.
#[derive(Default)]
struct TestModels {
    asked: Mutex<Vec<String>>,
}

impl ModelLoader for TestModels {
    fn load(&self, path: &str) -> Result<SharedEvaluator, String> {
        self.asked.lock().unwrap().push(path.to_string());
        Ok(Arc::new(RandomEvaluator { seed: 7 }))
    }
}

/// A tiny deterministic generator for the test games.
struct Lcg(u64);
impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 =
            self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

/// A random game of `variant` (until it ends or 160 plies), every other move with a target.
fn random_game(variant: Variant, seed: u64) -> GameRecord {
    let mut rng = Lcg(seed);
    let mut game = atomzero_rules::Game::new(Position::new(variant));
    let mut moves = Vec::new();
    while game.outcome().is_none() && moves.len() < 160 {
        let legal = game.position().legal_moves();
        let m = legal[rng.below(legal.len())];
        let target = (moves.len() % 2 == 0).then(|| SearchTarget {
            policy: legal.iter().take(3).enumerate().map(|(i, &m)| (m, (3 - i) as f32)).collect(),
            root_wdl: [0.5, 0.2, 0.3],
            surprise: None,
        });
        moves.push(MoveRecord { mv: m, target });
        game.play_unchecked(m);
    }
    let outcome = game.outcome();
    GameRecord {
        variant,
        start_fen: Position::new(variant).fen(),
        chess960: false,
        moves,
        winner: outcome.and_then(|o| o.winner),
        reason: outcome.map_or(EndReason::MaxLength, |o| EndReason::Rules(o.termination)),
        resign_disabled: false,
        resign_point: None,
    }
}

fn pgn_of(record: &GameRecord, white: &str, black: &str) -> String {
    let mut pgn = PgnGame::new(Position::new(record.variant));
    pgn.moves = record.moves.iter().map(|m| m.mv).collect();
    pgn.set_tag("White", white);
    pgn.set_tag("Black", black);
    pgn.result = match record.winner {
        Some(Color::White) => "1-0".into(),
        Some(Color::Black) => "0-1".into(),
        None => "1/2-1/2".into(),
    };
    pgn.write()
}

/// A run directory with two finished generations, and a secret file beside it.
fn make_run(name: &str) -> PathBuf {
    let base =
        std::env::temp_dir().join(format!("atomzero-serve-http-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let run = base.join("run");
    for dir in ["eval", "models", "selfplay", "tensorboard"] {
        std::fs::create_dir_all(run.join(dir)).unwrap();
    }
    std::fs::write(base.join("secret.txt"), "TOP-SECRET").unwrap();
    std::fs::write(run.join("config.toml"), "variant = \"atomic\"\nseed = 3\n").unwrap();
    std::fs::write(
        run.join("run.json"),
        r#"{"format":1,"generation":3,"stage":"selfplay","elapsed_secs":1.5,"cpu_secs":0.9}"#,
    )
    .unwrap();
    std::fs::write(run.join("log.txt"), "gen   0 | first\ngen   1 | second\ngen   2 | third\n")
        .unwrap();
    let timeline: String = (0..3)
        .map(|g| {
            let best = if g == 2 { 1 } else { g };
            format!(
                "{{\"format\":1,\"generation\":{g},\"best\":\"{best:06}\",\"elapsed_secs\":{}.0,\"cpu_secs\":{}.0,\"cores\":2}}\n",
                g + 1,
                g + 2
            )
        })
        .collect();
    std::fs::write(run.join("timeline.jsonl"), timeline).unwrap();
    std::fs::write(
        run.join("eval/gates.jsonl"),
        "{\"format\":1,\"first\":\"000001\",\"second\":\"000000\",\"wins\":3,\"draws\":0,\"losses\":1,\"label\":\"gate 1\"}\n\
         {\"format\":1,\"first\":\"000002\",\"second\":\"000001\",\"wins\":1,\"draws\":1,\"losses\":2,\"label\":\"gate 2\"}\n",
    )
    .unwrap();
    std::fs::write(
        run.join("eval/ratings.csv"),
        "rank,name,elo,error,games,points,score\n1,greedy,200.0,50.0,8,6,75.0\n2,000001,120.5,80.0,8,4,50.0\n3,000000,30.0,90.0,8,3,37.5\n4,random,0.0,0.0,8,1,12.5\n",
    )
    .unwrap();
    for model in ["000000", "000001"] {
        std::fs::write(run.join(format!("models/{model}.safetensors")), b"not really a network")
            .unwrap();
    }
    std::fs::write(run.join("models/best.json"), "{\"best\": \"000001.safetensors\"}\n").unwrap();
    let games: Vec<GameRecord> = (0..3).map(|i| random_game(Variant::Atomic, 11 + i)).collect();
    let meta = ShardMeta {
        model: "models/000001.safetensors".into(),
        generation: 2,
        ..ShardMeta::default()
    };
    write_shard(&run.join("selfplay/gen000002-000000.shard"), &meta, &games).unwrap();
    std::fs::write(run.join("eval/gate-000001.pgn"), pgn_of(&games[0], "000001", "000000"))
        .unwrap();
    for (i, variant) in Variant::ALL.into_iter().enumerate() {
        let record = random_game(variant, 100 + i as u64);
        let meta = ShardMeta { model: "random".into(), generation: 9, ..ShardMeta::default() };
        write_shard(&run.join(format!("selfplay/gen000009-{i:06}.shard")), &meta, &[record])
            .unwrap();
    }
    run
}

struct TestServer {
    addr: SocketAddr,
    run: PathBuf,
    models: Arc<TestModels>,
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
        if let Some(base) = self.run.parent() {
            let _ = std::fs::remove_dir_all(base);
        }
    }
}

fn scalars(_: &Path) -> Result<Vec<Scalar>, String> {
    Ok(vec![
        ("loss/total".into(), 5, 4.0),
        ("loss/policy".into(), 5, 3.0),
        ("loss/value".into(), 5, 1.0),
        ("loss/total".into(), 10, 3.5),
        ("selfplay/positions_per_sec".into(), 1, 1000.0),
        ("selfplay/game_length".into(), 1, 40.0),
    ])
}

fn start(name: &str, variant: Variant) -> TestServer {
    start_with(name, variant, 20)
}

fn start_with(name: &str, variant: Variant, eval_games: usize) -> TestServer {
    let run = make_run(name);
    let models = Arc::new(TestModels::default());
    let options = ServeOptions {
        run_dir: run.clone(),
        variant,
        eval_games,
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
    TestServer { addr, run, models, stop: Some(stop), thread: Some(thread) }
}

struct Reply {
    status: u16,
    headers: String,
    body: String,
}

impl Reply {
    fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// One request, sent byte for byte as given.
fn request(addr: SocketAddr, method: &str, path: &str, body: &[u8]) -> Reply {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    // The server may answer (413) and close before reading a large body.
    let _ = stream.write_all(body);
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (headers, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = headers.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    Reply { status, headers: headers.to_string(), body: body.to_string() }
}

fn get(addr: SocketAddr, path: &str) -> Reply {
    request(addr, "GET", path, b"")
}

fn post(addr: SocketAddr, path: &str, body: &str) -> Reply {
    request(addr, "POST", path, body.as_bytes())
}

#[test]
fn pages_and_embedded_assets_are_served() {
    let server = start("pages", Variant::Atomic);
    for (path, needle) in [("/", "Generations"), ("/games", "Moves"), ("/play", "New game")] {
        let reply = get(server.addr, path);
        assert_eq!(reply.status, 200, "{path}");
        assert!(reply.headers.to_ascii_lowercase().contains("content-type: text/html"), "{path}");
        assert!(reply.body.contains(needle), "{path}");
    }
    let js = get(server.addr, "/assets/vendor/cm-chessboard/src/Chessboard.js");
    assert_eq!(js.status, 200);
    assert!(js.headers.to_ascii_lowercase().contains("text/javascript"));
    assert!(js.body.contains("export class Chessboard"));
    let missing = get(server.addr, "/assets/nothing.js");
    assert_eq!(missing.status, 404);
    assert!(missing.json()["error"].as_str().unwrap().contains("nothing.js"));
    assert_eq!(get(server.addr, "/no/such/page").status, 404);
}

#[test]
fn only_files_under_the_run_directory_are_served() {
    let server = start("traversal", Variant::Atomic);
    let ok = get(server.addr, "/run/config.toml");
    assert_eq!(ok.status, 200);
    assert!(ok.body.contains("variant = \"atomic\""));
    assert!(ok.headers.to_ascii_lowercase().contains("text/plain"));
    #[cfg(unix)]
    std::os::unix::fs::symlink(
        server.run.parent().unwrap().join("secret.txt"),
        server.run.join("eval/link.txt"),
    )
    .unwrap();
    for path in [
        "/run/../secret.txt",
        "/run/..%2fsecret.txt",
        "/run/%2e%2e/secret.txt",
        "/run/%2e%2e%2fsecret.txt",
        "/run/eval/../../secret.txt",
        "/run/eval/%2e%2e/%2e%2e/secret.txt",
        "/run//etc/passwd",
        "/run/%2fetc%2fpasswd",
        "/run/..\\secret.txt",
        "/run/eval/link.txt",
        "/run/.hidden",
        "/run/eval",
        "/run/",
        "/assets/../secret.txt",
        "/assets/%2e%2e/%2e%2e/secret.txt",
        "/api/games/file?file=../secret.txt",
        "/api/games/file?file=selfplay/../../secret.txt",
        "/api/games/file?file=%2Fetc%2Fpasswd",
        "/api/games/game?file=eval/../../secret.txt&index=0",
        "/../secret.txt",
    ] {
        let reply = get(server.addr, path);
        assert!(
            reply.status == 404 || reply.status == 400,
            "{path}: {} {}",
            reply.status,
            reply.body
        );
        assert!(!reply.body.contains("TOP-SECRET"), "{path} leaked the file");
        if path.starts_with("/run/") {
            assert_eq!(reply.status, 404, "{path}");
        }
    }
}

#[test]
fn request_bodies_are_limited() {
    let server = start("limit", Variant::Atomic);
    let big = format!(
        "{{\"network\":\"000001\",\"nodes\":4,\"color\":\"white\",\"x\":\"{}\"}}",
        "a".repeat(64 * 1024)
    );
    let reply = post(server.addr, "/api/play", &big);
    assert_eq!(reply.status, 413, "{}", reply.body);
    let reply = post(server.addr, "/api/play/1/move", &big);
    assert_eq!(reply.status, 413, "{}", reply.body);
    assert!(server.models.asked.lock().unwrap().is_empty(), "nothing was loaded");
}

#[test]
fn the_summary_has_the_generations_elo_losses_and_status() {
    let server = start("summary", Variant::Atomic);
    let s = get(server.addr, "/api/summary").json();
    assert_eq!(s["variant"], "atomic");
    assert_eq!(s["status"]["generation"], 3);
    assert_eq!(s["status"]["stage"], "selfplay");
    assert_eq!(s["status"]["best"], "000001");
    assert_eq!(s["status"]["finished_generations"], 3);
    let generations = s["generations"].as_array().unwrap();
    assert_eq!(generations.len(), 3);
    assert_eq!(generations[1]["promoted"], true);
    assert_eq!(generations[1]["gate"], serde_json::json!([3, 0, 1]));
    assert_eq!(generations[1]["elo"], 120.5);
    assert_eq!(generations[1]["games_per_hour"], 90000.0);
    assert_eq!(generations[2]["promoted"], false, "generation 2 has no network: rejected");
    assert_eq!(s["elo"]["points"].as_array().unwrap().len(), 2);
    let baselines: Vec<&str> = s["elo"]["baselines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(baselines, ["greedy", "random"]);
    let losses = s["losses"].as_array().unwrap();
    assert_eq!(losses.len(), 2);
    assert_eq!(losses[0]["policy"], 3.0);
    assert_eq!(s["log"].as_array().unwrap().len(), 3);
    assert!(s["config"].as_str().unwrap().contains("seed = 3"));
    assert_eq!(s["warnings"].as_array().unwrap().len(), 0, "{}", s["warnings"]);
    assert!(s["rating_hint"].is_null(), "a run that rates its networks needs no hint");

    // A damaged file is reported, the rest still shown.
    std::fs::write(server.run.join("eval/ratings.csv"), "rank,name,elo\n1,x,y\n").unwrap();
    let s = get(server.addr, "/api/summary").json();
    assert!(s["warnings"][0].as_str().unwrap().contains("ratings.csv"), "{}", s["warnings"]);
    assert_eq!(s["generations"].as_array().unwrap().len(), 3);
}

#[test]
fn a_run_without_evaluation_games_is_told_how_to_rate_its_networks() {
    let server = start_with("unrated", Variant::Atomic, 0);
    let s = get(server.addr, "/api/summary").json();
    let hint = &s["rating_hint"];
    let command = hint["command"].as_str().unwrap();
    assert!(command.starts_with("atomzero gauntlet --run /"), "{command}");
    assert!(command.contains("unrated") && command.ends_with("/run"), "{command}");
    assert_eq!(hint["gauntlet_chart"], false);
    // Once the gauntlet has written its chart at its default place, the page links it.
    std::fs::create_dir_all(server.run.join("gauntlet")).unwrap();
    std::fs::write(server.run.join("gauntlet/elo-cpu.svg"), "<svg/>").unwrap();
    let s = get(server.addr, "/api/summary").json();
    assert_eq!(s["rating_hint"]["gauntlet_chart"], true);
}

#[test]
fn games_of_every_kind_and_variant_replay_move_by_move() {
    let server = start("games", Variant::Atomic);
    let files = get(server.addr, "/api/games").json();
    let files: Vec<(String, String)> = files["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["file"].as_str().unwrap().to_string(), f["kind"].as_str().unwrap().to_string()))
        .collect();
    assert!(files.contains(&("selfplay/gen000002-000000.shard".into(), "selfplay".into())));
    assert!(files.contains(&("eval/gate-000001.pgn".into(), "gate".into())));

    let list = get(server.addr, "/api/games/file?file=selfplay/gen000002-000000.shard").json();
    assert_eq!(list["games"].as_array().unwrap().len(), 3);
    assert_eq!(list["games"][0]["white"], "000001");

    let shard_game =
        get(server.addr, "/api/games/game?file=selfplay/gen000002-000000.shard&index=0").json();
    let pgn_game = get(server.addr, "/api/games/game?file=eval/gate-000001.pgn&index=0").json();
    let plies = shard_game["plies"].as_array().unwrap();
    assert!(!plies.is_empty());
    // The same game from the shard and from the PGN: the same SAN, FENs and explosions.
    for (a, b) in plies.iter().zip(pgn_game["plies"].as_array().unwrap()) {
        assert_eq!(
            (&a["san"], &a["fen"], &a["explosion"]),
            (&b["san"], &b["fen"], &b["explosion"])
        );
    }
    assert!(plies[0]["search"]["policy"][0]["weight"].as_f64().unwrap() > 0.49);
    assert!(plies[1]["search"].is_null());
    // Every capture that explodes lists its centre; quiet moves list nothing.
    let mut explosions = 0;
    for p in plies {
        let san = p["san"].as_str().unwrap();
        let squares = p["explosion"].as_array().unwrap();
        if san.contains('x') {
            explosions += 1;
            let to = p["to"].as_str().unwrap();
            assert!(squares.iter().any(|s| s == to), "{san}: {squares:?}");
        } else {
            assert!(squares.is_empty(), "{san}: {squares:?}");
        }
    }
    assert!(explosions > 0, "random games capture");

    for (i, variant) in Variant::ALL.into_iter().enumerate() {
        let file = format!("selfplay/gen000009-{i:06}.shard");
        let game = get(server.addr, &format!("/api/games/game?file={file}&index=0")).json();
        assert_eq!(game["variant"], variant.name(), "{file}");
        // Replaying the SAN on the rules crate reaches the FEN the server shows after each ply.
        let mut pos = Position::new(variant);
        for p in game["plies"].as_array().unwrap() {
            let m = pos.parse_san(p["san"].as_str().unwrap()).unwrap();
            pos = pos.play(m).unwrap();
            assert_eq!(pos.fen(), p["fen"].as_str().unwrap(), "{variant:?}");
        }
    }

    for (path, status) in [
        ("/api/games/game?file=selfplay/gen000002-000000.shard&index=99", 404),
        ("/api/games/game?file=selfplay/gen000002-000000.shard&index=x", 400),
        ("/api/games/game?file=selfplay/gen000002-000000.shard", 400),
        ("/api/games/game?index=0", 400),
        ("/api/games/file?file=config.toml", 404),
        ("/api/games/file?file=selfplay/missing.shard", 404),
    ] {
        let reply = get(server.addr, path);
        assert_eq!(reply.status, status, "{path}: {}", reply.body);
        assert!(!reply.json()["error"].as_str().unwrap().is_empty());
    }
    // A damaged shard is an error with its name, not a crash, and a 4xx (issue 44: 5xx only
    // when the run directory cannot be read).
    std::fs::write(server.run.join("selfplay/gen000003-000000.shard"), b"AZREPLAY garbage")
        .unwrap();
    let reply = get(server.addr, "/api/games/file?file=selfplay/gen000003-000000.shard");
    assert_eq!(reply.status, 422);
    assert!(reply.json()["error"].as_str().unwrap().contains("gen000003-000000.shard"));
}

#[test]
fn a_whole_game_against_a_network_with_every_move_checked() {
    let server = start("play", Variant::Atomic);
    let networks = get(server.addr, "/api/networks").json();
    assert_eq!(networks["networks"].as_array().unwrap().len(), 2);
    assert_eq!(networks["networks"][1]["best"], true);

    for (body, status, needle) in [
        (r#"{"network":"000001","nodes":4,"color":"green"}"#, 400, "color"),
        (r#"{"network":"000001","nodes":0,"color":"white"}"#, 400, "nodes"),
        (r#"{"network":"000001","nodes":999999,"color":"white"}"#, 400, "nodes"),
        (r#"{"network":"../../secret","nodes":4,"color":"white"}"#, 404, "network"),
        (r#"{"network":"uci:/bin/sh","nodes":4,"color":"white"}"#, 404, "network"),
        (r#"{"network":"000001","nodes":4}"#, 400, "color"),
        (r#"{"network":"000001","nodes":4,"color":"white","exec":"x"}"#, 400, "exec"),
        ("not json", 400, "bad request body"),
    ] {
        let reply = post(server.addr, "/api/play", body);
        assert_eq!(reply.status, status, "{body}: {}", reply.body);
        let message = reply.json()["error"].as_str().unwrap().to_string();
        assert!(message.contains(needle), "{body}: {message}");
    }
    assert!(server.models.asked.lock().unwrap().is_empty(), "no bad request loaded anything");

    let reply = post(server.addr, "/api/play", r#"{"network":"000001","nodes":4,"color":"white"}"#);
    assert_eq!(reply.status, 201, "{}", reply.body);
    let state = reply.json();
    let id = state["id"].as_u64().unwrap();
    assert_eq!(state["turn"], "white");
    assert_eq!(state["legal"].as_array().unwrap().len(), 20);
    let asked = server.models.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert!(asked[0].ends_with("models/000001.safetensors"), "{asked:?}");

    for (body, status, needle) in [
        (r#"{"uci":"e2e5"}"#, 400, "not a legal move"),
        (r#"{"uci":"zz"}"#, 400, "not a move in UCI"),
        (r#"{"uci":""}"#, 400, "not a move in UCI"),
        (r#"{"move":"e2e4"}"#, 400, "bad request body"),
    ] {
        let reply = post(server.addr, &format!("/api/play/{id}/move"), body);
        assert_eq!(reply.status, status, "{body}: {}", reply.body);
        assert!(reply.json()["error"].as_str().unwrap().contains(needle), "{body}: {}", reply.body);
    }
    let reply = post(server.addr, &format!("/api/play/{id}/engine"), "");
    assert_eq!(reply.status, 409, "not the engine's turn: {}", reply.body);
    assert_eq!(post(server.addr, "/api/play/999/move", r#"{"uci":"e2e4"}"#).status, 404);
    assert_eq!(post(server.addr, "/api/play/abc/move", r#"{"uci":"e2e4"}"#).status, 404);

    // Play on: the person takes a seeded random legal move, until the game ends.
    let mut state = state;
    let mut rng = Lcg(5);
    for _ in 0..600 {
        if !state["result"].is_null() {
            break;
        }
        let legal = state["legal"].as_array().unwrap();
        let uci = legal[rng.below(legal.len())].as_str().unwrap().to_string();
        let reply =
            post(server.addr, &format!("/api/play/{id}/move"), &format!("{{\"uci\":\"{uci}\"}}"));
        assert_eq!(reply.status, 200, "{uci}: {}", reply.body);
        state = reply.json();
        let again =
            post(server.addr, &format!("/api/play/{id}/move"), &format!("{{\"uci\":\"{uci}\"}}"));
        assert!(again.status == 409, "{}", again.body);
        if !state["result"].is_null() {
            break;
        }
        let reply = post(server.addr, &format!("/api/play/{id}/engine"), "");
        assert_eq!(reply.status, 200, "{}", reply.body);
        state = reply.json();
        let last = state["plies"].as_array().unwrap().last().unwrap().clone();
        assert!(last["search"]["policy"][0]["visits"].as_u64().unwrap() >= 1, "{last}");
    }
    let result = state["result"].as_str().expect("the game ended").to_string();
    assert!(["1-0", "0-1", "1/2-1/2"].contains(&result.as_str()));
    let reply = post(server.addr, &format!("/api/play/{id}/move"), r#"{"uci":"e2e4"}"#);
    assert_eq!(reply.status, 409);
    assert!(reply.json()["error"].as_str().unwrap().contains("over"));

    let pgn = get(server.addr, &format!("/api/play/{id}/pgn"));
    assert_eq!(pgn.status, 200);
    assert!(pgn.headers.to_ascii_lowercase().contains("content-disposition: attachment"));
    assert!(pgn.body.contains("[Variant \"Atomic\"]"), "{}", pgn.body);
    assert!(pgn.body.contains(&format!("[Result \"{result}\"]")));
    let saved = state["pgn_file"].as_str().unwrap();
    assert_eq!(std::fs::read_to_string(server.run.join(saved)).unwrap(), pgn.body);
    // The saved game reads back with the same moves, and the viewer lists it.
    let games = atomzero_rules::read_pgn(&pgn.body);
    assert_eq!(games[0].as_ref().unwrap().moves.len(), state["plies"].as_array().unwrap().len());
    let files = get(server.addr, "/api/games").json();
    assert!(
        files["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["file"] == saved && f["kind"] == "play")
    );
    assert_eq!(
        server.models.asked.lock().unwrap().len(),
        1,
        "one network loaded, nothing else run"
    );
}

#[test]
fn playing_black_under_another_variant_starts_with_the_engine() {
    let server = start("black", Variant::Atomar);
    let state =
        post(server.addr, "/api/play", r#"{"network":"000000","nodes":2,"color":"black"}"#).json();
    assert_eq!(state["variant"], "atomar");
    assert!(state["legal"].as_array().unwrap().is_empty(), "white (the engine) moves first");
    let id = state["id"].as_u64().unwrap();
    let state = post(server.addr, &format!("/api/play/{id}/engine"), "").json();
    assert_eq!(state["plies"].as_array().unwrap().len(), 1);
    assert_eq!(state["turn"], "black");
    let pgn = get(server.addr, &format!("/api/play/{id}/pgn")).body;
    assert!(pgn.contains("[Variant \"Atomar\"]"), "{pgn}");
    assert!(pgn.contains("[Black \"Human\"]"), "{pgn}");
}

#[test]
fn the_event_stream_announces_changes_of_the_run() {
    let server = start("events", Variant::Atomic);
    let mut stream = TcpStream::connect(server.addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    stream.write_all(b"GET /api/events HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    let mut reader = BufReader::new(stream);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let mut next_data = || -> u64 {
        loop {
            // Keep-alive comments arrive every 15 s: the read timeout alone never ends the wait.
            assert!(std::time::Instant::now() < deadline, "no event within 60 s");
            let mut line = String::new();
            assert!(reader.read_line(&mut line).unwrap() > 0, "stream closed");
            // Chunked encoding puts sizes on their own lines; the event's lines pass through.
            if let Some(data) = line.trim().strip_prefix("data: ") {
                return data.parse().unwrap();
            }
        }
    };
    let first = next_data();
    // A new generation's log line: the watcher (50 ms) announces it.
    std::fs::write(
        server.run.join("log.txt"),
        "gen   0 | first\ngen   1 | second\ngen   2 | third\ngen   3 | fourth\n",
    )
    .unwrap();
    let second = next_data();
    assert!(second > first, "{first} -> {second}");
}

#[test]
fn a_run_that_has_only_just_started_shows_an_empty_dashboard() {
    let server = start("empty", Variant::Atomic);
    for entry in std::fs::read_dir(&server.run).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().unwrap() != "config.toml" {
            if path.is_dir() {
                std::fs::remove_dir_all(&path).unwrap();
            } else {
                std::fs::remove_file(&path).unwrap();
            }
        }
    }
    let s = get(server.addr, "/api/summary").json();
    assert!(s["status"]["generation"].is_null());
    assert_eq!(s["generations"].as_array().unwrap().len(), 0);
    assert_eq!(s["warnings"].as_array().unwrap().len(), 0, "{}", s["warnings"]);
    assert_eq!(get(server.addr, "/api/games").json()["files"].as_array().unwrap().len(), 0);
    assert_eq!(get(server.addr, "/api/networks").json()["networks"].as_array().unwrap().len(), 0);
    let reply = post(server.addr, "/api/play", r#"{"network":"000000","nodes":4,"color":"white"}"#);
    assert_eq!(reply.status, 404, "{}", reply.body);
}
