//! Games against one of the run's networks.
//!
//! A game names a network of the run (`models/NNNNNN.safetensors`, by its name `NNNNNN`: only
//! listed networks can be chosen, never a path), the root visits per engine move and the
//! person's colour. The person's moves arrive as UCI text and are checked against the legal
//! moves of the position; the engine's moves come from the same MCTS the run's matches use
//! (`atomzero_mcts::Search`, root noise off, a seed per game so a replayed game replays the
//! same). After every move the game is written to `play/play-<unix time>-<id>.pgn` in the run
//! directory (by rename, with `[Variant]` from the run's variant), and the text can be
//! downloaded.
//!
//! At most [`MAX_GAMES`] games are kept in memory (the oldest is dropped; its PGN stays on
//! disk), and at most [`MAX_LOADED_NETWORKS`] networks: games hold a network's name, not the
//! network, and every game of one network shares one loaded copy (loaded again, with its file
//! checked again, if it was evicted or its file changed). Every operation on a game runs on a
//! blocking thread, so a long engine search never stalls the server.
//!
//! A network is read only if its weights file, and its sidecar where there is one, resolve
//! inside the run directory ([`rundir::resolve`]); games are saved only into a `play/` that
//! resolves inside it.

use crate::error::ApiError;
use crate::games::{PlyView, SearchView, ply_view, policy_view};
use crate::rundir;
use atomzero_eval::{ModelLoader, SharedEvaluator};
use atomzero_mcts::{Search, SearchConfig};
use atomzero_rules::{Color, Game, Move, PgnGame, Position, Variant};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Games kept in memory at once.
pub const MAX_GAMES: usize = 32;
/// The most root visits a person may ask the engine for.
pub const MAX_NODES: u32 = 20_000;
/// Leaves evaluated per network call in the engine's search.
const BATCH: usize = 8;
/// Networks kept loaded at once (the least recently used is dropped first).
pub const MAX_LOADED_NETWORKS: usize = 2;

/// A network of the run.
#[derive(Clone, Debug, Serialize)]
pub struct Network {
    /// Its name (the file stem: the generation that produced it).
    pub name: String,
    /// Whether it is the run's current best.
    pub best: bool,
}

/// The run's networks, oldest first.
pub fn networks(root: &Path) -> Vec<Network> {
    let best = rundir::read_text(root, "models/best.json")
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v["best"].as_str().map(|s| s.trim_end_matches(".safetensors").to_string()));
    rundir::list(root, "models", ".safetensors")
        .into_iter()
        .filter_map(|e| {
            let name =
                e.relative.strip_prefix("models/")?.strip_suffix(".safetensors")?.to_string();
            Some(Network { best: best.as_deref() == Some(name.as_str()), name })
        })
        .collect()
}

/// A request for a new game.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewGame {
    /// The network's name (from [`networks`]).
    pub network: String,
    /// Root visits per engine move (1..=[`MAX_NODES`]).
    pub nodes: u32,
    /// The person's colour: `white` or `black`.
    pub color: String,
}

/// A move from the person.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoveRequest {
    /// The move in UCI (`e2e4`, `e7e8q`; castling as the king's two-square move or king takes
    /// rook).
    pub uci: String,
}

/// A game as the play page sees it.
#[derive(Clone, Debug, Serialize)]
pub struct PlayState {
    /// The game's id.
    pub id: u64,
    /// The network.
    pub network: String,
    /// Root visits per engine move.
    pub nodes: u32,
    /// The person's colour.
    pub human: &'static str,
    /// The variant.
    pub variant: &'static str,
    /// The start position.
    pub start_fen: String,
    /// The current position.
    pub fen: String,
    /// Side to move: `white` or `black`.
    pub turn: &'static str,
    /// Every ply so far (engine plies carry the search's visits and value).
    pub plies: Vec<PlyView>,
    /// The person's legal moves in UCI (empty unless it is their turn).
    pub legal: Vec<String>,
    /// `1-0`, `0-1`, `1/2-1/2`, or `None` while the game goes on.
    pub result: Option<&'static str>,
    /// Why it ended.
    pub termination: Option<&'static str>,
    /// Where the PGN is saved, relative to the run directory.
    pub pgn_file: String,
}

struct Session {
    id: u64,
    network: String,
    nodes: u32,
    human: Color,
    game: Game,
    plies: Vec<PlyView>,
    pgn_file: String,
    date: String,
}

fn color_name(c: Color) -> &'static str {
    match c {
        Color::White => "white",
        Color::Black => "black",
    }
}

impl Session {
    fn state(&self) -> PlayState {
        let pos = self.game.position();
        let outcome = self.game.outcome();
        let legal = if outcome.is_none() && pos.turn() == self.human {
            pos.legal_moves().iter().map(|&m| pos.uci(m)).collect()
        } else {
            Vec::new()
        };
        PlayState {
            id: self.id,
            network: self.network.clone(),
            nodes: self.nodes,
            human: color_name(self.human),
            variant: pos.variant().name(),
            start_fen: crate::games::board_fen(self.game.initial()),
            fen: pos.fen(),
            turn: color_name(pos.turn()),
            plies: self.plies.clone(),
            legal,
            result: outcome.map(|o| match o.winner {
                Some(Color::White) => "1-0",
                Some(Color::Black) => "0-1",
                None => "1/2-1/2",
            }),
            termination: outcome.map(|o| o.termination.description()),
            pgn_file: self.pgn_file.clone(),
        }
    }

    fn pgn(&self) -> String {
        let mut pgn = PgnGame::new(*self.game.initial());
        let engine = format!("atomzero {} ({} nodes)", self.network, self.nodes);
        let (white, black) = match self.human {
            Color::White => ("Human".to_string(), engine),
            Color::Black => (engine, "Human".to_string()),
        };
        pgn.set_tag("Event", "atomzero play");
        pgn.set_tag("Site", "atomzero serve");
        pgn.set_tag("Date", self.date.clone());
        pgn.set_tag("Round", "1");
        pgn.set_tag("White", white);
        pgn.set_tag("Black", black);
        pgn.moves = self.game.moves().to_vec();
        let state = self.state();
        pgn.result = state.result.unwrap_or("*").to_string();
        if let Some(t) = state.termination {
            pgn.set_tag("Termination", t);
        }
        pgn.write()
    }

    fn save(&self, root: &Path) -> Result<(), ApiError> {
        let (dir_name, _) = self.pgn_file.split_once('/').unwrap_or(("play", ""));
        let dir = root.join(dir_name);
        if std::fs::symlink_metadata(&dir).is_err() {
            std::fs::create_dir(&dir)
                .map_err(|e| ApiError::internal(format!("cannot create {}: {e}", dir.display())))?;
        }
        // Never write through a `play` that leads out of the run directory.
        let dir = rundir::resolve_dir(root, dir_name).ok_or_else(|| {
            ApiError::internal(format!(
                "{dir_name}/ is not a directory inside the run directory: the game is not saved"
            ))
        })?;
        let file_name = self.pgn_file.rsplit('/').next().unwrap_or("game.pgn");
        let path = dir.join(file_name);
        atomzero_files::write_atomic(&path, self.pgn().as_bytes())
            .map_err(|e| ApiError::internal(format!("cannot save {}: {e}", self.pgn_file)))
    }

    fn over(&self) -> Result<(), ApiError> {
        match self.game.outcome() {
            Some(o) => Err(ApiError::conflict(format!(
                "the game is over ({}, {})",
                match o.winner {
                    Some(Color::White) => "1-0",
                    Some(Color::Black) => "0-1",
                    None => "1/2-1/2",
                },
                o.termination.description()
            ))),
            None => Ok(()),
        }
    }

    fn play_human(&mut self, text: &str) -> Result<(), ApiError> {
        self.over()?;
        let pos = *self.game.position();
        if pos.turn() != self.human {
            return Err(ApiError::conflict("it is the engine's turn, not yours"));
        }
        let text = text.trim();
        let m = pos.parse_uci(text).map_err(|e| match e {
            atomzero_rules::UciError::Parse(_) => ApiError::bad_request(format!(
                "'{}' is not a move in UCI notation (from-square, to-square and a promotion letter: e2e4, e7e8q)",
                text.chars().take(16).collect::<String>()
            )),
            atomzero_rules::UciError::Illegal(_) => {
                ApiError::bad_request(format!("{text} is not a legal move in this position"))
            }
        })?;
        self.push(m, None);
        Ok(())
    }

    /// Checks that the engine is to move in a game that goes on.
    fn engine_to_move(&self) -> Result<(), ApiError> {
        self.over()?;
        if self.game.position().turn() == self.human {
            return Err(ApiError::conflict("it is your turn, not the engine's"));
        }
        Ok(())
    }

    fn play_engine(&mut self, network: &LoadedNetwork) -> Result<(), ApiError> {
        self.engine_to_move()?;
        let seed = self.id.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ self.game.ply() as u64;
        let mut search = Search::new(&self.game, network.config, seed);
        search.run(&*network.evaluator, self.nodes, BATCH.min(self.nodes as usize).max(1));
        let m = search.best_move().ok_or_else(|| ApiError::internal("the engine found no move"))?;
        let pos = self.game.position();
        let stats: Vec<(Move, f32, Option<u32>)> = search
            .root_child_stats()
            .iter()
            .filter(|c| c.visits > 0)
            .map(|c| (c.mv, c.visits as f32, Some(c.visits)))
            .collect();
        let view = SearchView { wdl: search.root_wdl(), policy: policy_view(pos, &stats) };
        self.push(m, Some(view));
        Ok(())
    }

    fn push(&mut self, m: Move, search: Option<SearchView>) {
        let (view, _) = ply_view(self.game.position(), m, search);
        self.game.play_unchecked(m);
        self.plies.push(view);
    }
}

/// A network loaded for play, shared by every game against it.
#[derive(Clone)]
struct LoadedNetwork {
    name: String,
    /// Length and modification time of the weights file when it was loaded: a changed file
    /// is loaded again.
    stamp: (u64, Option<std::time::SystemTime>),
    evaluator: SharedEvaluator,
    config: SearchConfig,
}

/// The games in progress.
pub struct PlayManager {
    root: PathBuf,
    variant: Variant,
    models: Arc<dyn ModelLoader + Send + Sync>,
    games: Mutex<BTreeMap<u64, Arc<Mutex<Session>>>>,
    /// Loaded networks, most recently used last (at most [`MAX_LOADED_NETWORKS`]).
    loaded: Mutex<Vec<LoadedNetwork>>,
    next_id: AtomicU64,
    started_unix: u64,
}

impl std::fmt::Debug for PlayManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlayManager").field("root", &self.root).finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while a game was locked leaves it usable: its state is always a legal game.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Today's date as PGN writes it (`YYYY.MM.DD`, UTC).
fn pgn_date(unix: u64) -> String {
    // Howard Hinnant's civil_from_days.
    let z = (unix / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}.{month:02}.{day:02}")
}

fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

impl PlayManager {
    /// No games yet.
    pub fn new(
        root: PathBuf,
        variant: Variant,
        models: Arc<dyn ModelLoader + Send + Sync>,
    ) -> PlayManager {
        PlayManager {
            root,
            variant,
            models,
            games: Mutex::new(BTreeMap::new()),
            loaded: Mutex::new(Vec::new()),
            next_id: AtomicU64::new(1),
            started_unix: unix_now(),
        }
    }

    fn get(&self, id: u64) -> Result<Arc<Mutex<Session>>, ApiError> {
        lock(&self.games)
            .get(&id)
            .cloned()
            .ok_or_else(|| ApiError::not_found(format!("no game {id} (start a new one)")))
    }

    /// Starts a game (blocking: loads the network). If the person plays Black, the engine has
    /// not moved yet: ask it with [`PlayManager::engine_move`].
    pub fn start(&self, request: &NewGame) -> Result<PlayState, ApiError> {
        let human = match request.color.as_str() {
            "white" => Color::White,
            "black" => Color::Black,
            other => {
                return Err(ApiError::bad_request(format!(
                    "color must be 'white' or 'black', not '{}'",
                    other.chars().take(16).collect::<String>()
                )));
            }
        };
        if !(1..=MAX_NODES).contains(&request.nodes) {
            return Err(ApiError::bad_request(format!(
                "nodes must be between 1 and {MAX_NODES}, not {}",
                request.nodes
            )));
        }
        // Loads (or finds) the network first: a game starts only against one that loads.
        self.network(&request.network)?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let session = Session {
            id,
            network: request.network.clone(),
            nodes: request.nodes,
            human,
            game: Game::new(Position::new(self.variant)),
            plies: Vec::new(),
            pgn_file: format!("play/play-{}-{id:03}.pgn", self.started_unix),
            date: pgn_date(unix_now()),
        };
        session.save(&self.root)?;
        let state = session.state();
        let mut games = lock(&self.games);
        while games.len() >= MAX_GAMES {
            let Some(&oldest) = games.keys().next() else { break };
            games.remove(&oldest);
        }
        games.insert(id, Arc::new(Mutex::new(session)));
        Ok(state)
    }

    /// The state of game `id`.
    pub fn state(&self, id: u64) -> Result<PlayState, ApiError> {
        let game = self.get(id)?;
        let state = lock(&game).state();
        Ok(state)
    }

    /// The person's move in game `id` (checked), then the game is saved.
    pub fn human_move(&self, id: u64, uci: &str) -> Result<PlayState, ApiError> {
        let game = self.get(id)?;
        let mut session = lock(&game);
        session.play_human(uci)?;
        session.save(&self.root)?;
        Ok(session.state())
    }

    /// The engine's move in game `id` (blocking: runs the search), then the game is saved.
    pub fn engine_move(&self, id: u64) -> Result<PlayState, ApiError> {
        let game = self.get(id)?;
        let mut session = lock(&game);
        session.engine_to_move()?;
        let network = self.network(&session.network)?;
        session.play_engine(&network)?;
        session.save(&self.root)?;
        Ok(session.state())
    }

    /// The network `name` of the run, loaded (or found loaded) through the model loader.
    /// Only a network listed by [`networks`] whose files resolve inside the run directory is
    /// read.
    fn network(&self, name: &str) -> Result<LoadedNetwork, ApiError> {
        let missing = || {
            ApiError::not_found(format!(
                "no network '{}' in this run's models/",
                name.chars().take(40).collect::<String>()
            ))
        };
        if !networks(&self.root).iter().any(|n| n.name == name) {
            return Err(missing());
        }
        let weights = rundir::resolve(&self.root, &format!("models/{name}.safetensors"))
            .ok_or_else(missing)?;
        let sidecar = format!("models/{name}.json");
        if std::fs::symlink_metadata(self.root.join(&sidecar)).is_ok()
            && rundir::resolve(&self.root, &sidecar).is_none()
        {
            return Err(ApiError::not_found(format!(
                "network '{name}': its sidecar {sidecar} is not a file inside the run directory"
            )));
        }
        let meta = std::fs::metadata(&weights).map_err(|_| missing())?;
        let stamp = (meta.len(), meta.modified().ok());
        {
            let mut loaded = lock(&self.loaded);
            if let Some(i) = loaded.iter().position(|n| n.name == name && n.stamp == stamp) {
                let network = loaded.remove(i);
                loaded.push(network.clone());
                return Ok(network);
            }
        }
        let path_text = weights.to_string_lossy().into_owned();
        let evaluator = self
            .models
            .load(&path_text)
            .map_err(|e| ApiError::unprocessable(format!("cannot load network {name}: {e}")))?;
        let config = self.models.search_config(&path_text).without_noise();
        let network = LoadedNetwork { name: name.to_string(), stamp, evaluator, config };
        let mut loaded = lock(&self.loaded);
        loaded.retain(|n| n.name != name);
        while loaded.len() >= MAX_LOADED_NETWORKS {
            loaded.remove(0);
        }
        loaded.push(network.clone());
        Ok(network)
    }

    /// Networks loaded now (at most [`MAX_LOADED_NETWORKS`]).
    pub fn loaded_networks(&self) -> usize {
        lock(&self.loaded).len()
    }

    /// The PGN of game `id` and its file name.
    pub fn pgn(&self, id: u64) -> Result<(String, String), ApiError> {
        let game = self.get(id)?;
        let session = lock(&game);
        let name = session.pgn_file.rsplit('/').next().unwrap_or("game.pgn").to_string();
        Ok((session.pgn(), name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgn_dates_are_civil_dates() {
        assert_eq!(pgn_date(0), "1970.01.01");
        assert_eq!(pgn_date(951_782_400), "2000.02.29");
        assert_eq!(pgn_date(1_795_595_734), "2026.11.25");
    }
}
