//! The routes.
//!
//! | method and path | answer |
//! |---|---|
//! | `GET /`, `/games`, `/play` | the three pages (embedded HTML) |
//! | `GET /assets/PATH` | embedded scripts, styles and the vendored board ([`crate::assets`]) |
//! | `GET /run/PATH` | a file of the run directory ([`crate::rundir::resolve`]; 404 for anything outside) |
//! | `GET /api/summary` | the dashboard's data ([`crate::summary::Summary`]) |
//! | `GET /api/events` | server-sent events: `run` on every change ([`crate::events`]) |
//! | `GET /api/games` | the game files ([`crate::games::GameFile`]) |
//! | `GET /api/games/file?file=F` | the games of file `F` |
//! | `GET /api/games/game?file=F&index=I` | game `I` of `F`, ply by ply ([`crate::games::GameView`]) |
//! | `GET /api/networks` | the run's networks |
//! | `POST /api/play` | `{"network","nodes","color"}`: a new game ([`crate::play::PlayState`]) |
//! | `GET /api/play/ID` | the game's state |
//! | `POST /api/play/ID/move` | `{"uci"}`: the person's move, checked |
//! | `POST /api/play/ID/engine` | the engine's move |
//! | `GET /api/play/ID/pgn` | the game as a PGN download |
//!
//! Errors are JSON `{"error": "..."}` with a 4xx status: 422 for a damaged file of the run (a
//! corrupt shard or PGN, a network that does not load), 5xx only when the run directory cannot
//! be read. Request bodies over [`MAX_BODY_BYTES`] are refused with 413.

use crate::error::ApiError;
use crate::play::{MoveRequest, NewGame, PlayManager};
use crate::{ScalarReader, ServeOptions, assets, events, games, play, rundir, summary};
use atomzero_rules::Variant;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// The largest request body accepted (a move or a new game is a few dozen bytes).
pub const MAX_BODY_BYTES: usize = 4096;

/// What every handler shares.
pub struct AppState {
    /// The canonical run directory.
    pub root: PathBuf,
    /// The run's variant.
    pub variant: Variant,
    /// The run's `eval_games`.
    pub eval_games: usize,
    /// TensorBoard reader.
    pub scalars: ScalarReader,
    /// How often the watcher looks.
    pub poll: Duration,
    /// Bumped on every change of the run directory.
    pub version: watch::Sender<u64>,
    /// Games against the networks.
    pub play: PlayManager,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("root", &self.root)
            .field("variant", &self.variant)
            .finish_non_exhaustive()
    }
}

impl AppState {
    /// State for the run at `root` (canonical).
    pub fn new(root: PathBuf, options: ServeOptions) -> AppState {
        AppState {
            play: PlayManager::new(root.clone(), options.variant, options.models),
            root,
            variant: options.variant,
            eval_games: options.eval_games,
            scalars: options.scalars,
            poll: options.poll,
            version: watch::Sender::new(0),
        }
    }
}

type Shared = State<Arc<AppState>>;

/// Every route, with the body limit.
pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/", get(|| async { page("index.html") }))
        .route("/games", get(|| async { page("games.html") }))
        .route("/play", get(|| async { page("play.html") }))
        .route("/assets/{*path}", get(asset))
        .route("/run/{*path}", get(run_file))
        .route("/api/summary", get(api_summary))
        .route("/api/events", get(|State(s): Shared| async move { events::stream(&s) }))
        .route("/api/games", get(api_game_files))
        .route("/api/games/file", get(api_file_games))
        .route("/api/games/game", get(api_game))
        .route("/api/networks", get(api_networks))
        .route("/api/play", post(api_play_new))
        .route("/api/play/{id}", get(api_play_state))
        .route("/api/play/{id}/move", post(api_play_move))
        .route("/api/play/{id}/engine", post(api_play_engine))
        .route("/api/play/{id}/pgn", get(api_play_pgn))
        .fallback(|uri: Uri| async move {
            ApiError::not_found(format!(
                "no such page: {}",
                uri.path().chars().take(200).collect::<String>()
            ))
        })
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(state)
}

fn page(name: &str) -> Response {
    match assets::get(name) {
        Some((bytes, mime)) => embedded(bytes, mime),
        None => ApiError::not_found(format!("no page {name}")).into_response(),
    }
}

fn embedded(bytes: &'static [u8], mime: &'static str) -> Response {
    let mut response = Body::from(bytes).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(mime));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

async fn asset(Path(path): Path<String>) -> Response {
    match assets::get(&path) {
        Some((bytes, mime)) => embedded(bytes, mime),
        None => {
            ApiError::not_found(format!("no asset {}", path.chars().take(200).collect::<String>()))
                .into_response()
        }
    }
}

/// Content type of a run file: text for the run's text formats, SVG for the chart, bytes for
/// the rest; never HTML, so nothing in the run directory runs as a page of this origin.
fn run_file_type(name: &str) -> &'static str {
    let ext = name.rsplit('.').next().unwrap_or("");
    match ext {
        "txt" | "toml" | "json" | "jsonl" | "csv" | "pgn" | "epd" => "text/plain; charset=utf-8",
        "svg" => "image/svg+xml",
        _ => "application/octet-stream",
    }
}

async fn run_file(State(state): Shared, Path(path): Path<String>) -> Response {
    let not_found = || {
        ApiError::not_found(format!(
            "no file {} in the run directory",
            path.chars().take(200).collect::<String>()
        ))
        .into_response()
    };
    let Some(file) = rundir::resolve(&state.root, &path) else { return not_found() };
    let Ok(bytes) = tokio::task::spawn_blocking(move || std::fs::read(file)).await else {
        return not_found();
    };
    let Ok(bytes) = bytes else { return not_found() };
    let mut response = Body::from(bytes).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(run_file_type(&path)));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; style-src 'unsafe-inline'"),
    );
    response
}

/// Runs `work` on a blocking thread and answers its value as JSON.
async fn blocking_json<T: Serialize + Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Response {
    match tokio::task::spawn_blocking(work).await {
        Ok(Ok(value)) => axum::Json(value).into_response(),
        Ok(Err(e)) => e.into_response(),
        Err(e) => ApiError::internal(format!("request failed: {e}")).into_response(),
    }
}

async fn api_summary(State(state): Shared) -> Response {
    blocking_json(move || {
        Ok(summary::summarize(&state.root, state.variant.name(), state.eval_games, &state.scalars))
    })
    .await
}

async fn api_game_files(State(state): Shared) -> Response {
    blocking_json(move || Ok(serde_json::json!({ "files": games::list_files(&state.root) }))).await
}

fn query_value<'a>(query: &'a BTreeMap<String, String>, key: &str) -> Result<&'a str, ApiError> {
    query
        .get(key)
        .map(String::as_str)
        .ok_or_else(|| ApiError::bad_request(format!("missing ?{key}=")))
}

fn game_error(e: games::GameError) -> ApiError {
    match e {
        games::GameError::NotFound(m) => ApiError::not_found(m),
        games::GameError::Corrupt(m) => ApiError::unprocessable(m),
        games::GameError::Unreadable(m) => ApiError::internal(m),
    }
}

async fn api_file_games(
    State(state): Shared,
    Query(query): Query<BTreeMap<String, String>>,
) -> Response {
    let file = match query_value(&query, "file") {
        Ok(f) => f.to_string(),
        Err(e) => return e.into_response(),
    };
    blocking_json(move || {
        let games = games::list_games(&state.root, &file).map_err(game_error)?;
        Ok(serde_json::json!({ "file": file, "games": games }))
    })
    .await
}

async fn api_game(State(state): Shared, Query(query): Query<BTreeMap<String, String>>) -> Response {
    let parsed = query_value(&query, "file").and_then(|file| {
        let index = query_value(&query, "index")?;
        let index = index.parse::<usize>().map_err(|_| {
            ApiError::bad_request(format!(
                "index must be a game number, not '{}'",
                index.chars().take(20).collect::<String>()
            ))
        })?;
        Ok((file.to_string(), index))
    });
    let (file, index) = match parsed {
        Ok(p) => p,
        Err(e) => return e.into_response(),
    };
    blocking_json(move || games::game_view(&state.root, &file, index).map_err(game_error)).await
}

async fn api_networks(State(state): Shared) -> Response {
    blocking_json(move || {
        Ok(serde_json::json!({
            "networks": play::networks(&state.root),
            "variant": state.variant.name(),
            "max_nodes": play::MAX_NODES,
        }))
    })
    .await
}

/// A JSON body, with a message that says what is wrong with it.
fn json_body<T: DeserializeOwned>(body: &Bytes) -> Result<T, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("bad request body: {e}")))
}

fn game_id(text: &str) -> Result<u64, ApiError> {
    text.parse().map_err(|_| {
        ApiError::not_found(format!("no game '{}'", text.chars().take(20).collect::<String>()))
    })
}

async fn api_play_new(State(state): Shared, body: Bytes) -> Response {
    let request: NewGame = match json_body(&body) {
        Ok(r) => r,
        Err(e) => return e.into_response(),
    };
    let response = blocking_json(move || state.play.start(&request)).await;
    if response.status() == StatusCode::OK {
        let (mut parts, body) = response.into_parts();
        parts.status = StatusCode::CREATED;
        return Response::from_parts(parts, body);
    }
    response
}

async fn api_play_state(State(state): Shared, Path(id): Path<String>) -> Response {
    match game_id(&id) {
        Ok(id) => blocking_json(move || state.play.state(id)).await,
        Err(e) => e.into_response(),
    }
}

async fn api_play_move(State(state): Shared, Path(id): Path<String>, body: Bytes) -> Response {
    let parsed = game_id(&id).and_then(|id| Ok((id, json_body::<MoveRequest>(&body)?)));
    match parsed {
        Ok((id, request)) => blocking_json(move || state.play.human_move(id, &request.uci)).await,
        Err(e) => e.into_response(),
    }
}

async fn api_play_engine(State(state): Shared, Path(id): Path<String>) -> Response {
    match game_id(&id) {
        Ok(id) => blocking_json(move || state.play.engine_move(id)).await,
        Err(e) => e.into_response(),
    }
}

async fn api_play_pgn(State(state): Shared, Path(id): Path<String>) -> Response {
    let id = match game_id(&id) {
        Ok(id) => id,
        Err(e) => return e.into_response(),
    };
    match tokio::task::spawn_blocking(move || state.play.pgn(id)).await {
        Ok(Ok((text, name))) => {
            let mut response = text.into_response();
            let headers = response.headers_mut();
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/x-chess-pgn; charset=utf-8"),
            );
            if let Ok(value) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
                headers.insert(header::CONTENT_DISPOSITION, value);
            }
            response
        }
        Ok(Err(e)) => e.into_response(),
        Err(e) => ApiError::internal(format!("request failed: {e}")).into_response(),
    }
}
