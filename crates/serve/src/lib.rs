//! # atomzero-serve
//!
//! `atomzero serve --run DIR`: a local web page over one run directory, served by one small
//! HTTP server (axum on a single-threaded tokio runtime) with every page, script, style and
//! board asset embedded in the binary, so it works offline.
//!
//! - **Dashboard** (`/`): the generations (gate result, promoted or rejected, Elo of the best
//!   network), the Elo chart with 95% error bars (the run's `eval/ratings.csv`, the data of
//!   `eval/elo.svg`), training losses and self-play speed (the run's TensorBoard scalars), the
//!   resolved `config.toml`, what the run is doing now (`run.json`, the newest files) and
//!   `log.txt` ([`summary`]).
//! - **Games** (`/games`): every self-play game (`selfplay/*.shard`), gating and evaluation
//!   game (`eval/*.pgn`) and played game (`play/*.pgn`), move by move with SAN, the squares
//!   each capture blew up, and where recorded the search's policy target and root value
//!   ([`games`]).
//! - **Play** (`/play`): a game against one of the run's networks with MCTS at a chosen number
//!   of nodes; the server checks every move and saves the game as PGN under `play/` after every
//!   move ([`play`]).
//!
//! Pages update without reload: `/api/events` is a server-sent event stream that announces
//! every change of the run directory ([`events`]).
//!
//! Safety rules (tested in `tests/http.rs`): only regular files under the run directory are
//! served or read (`..`, hidden names and symlinks leading out answer 404, and read as missing
//! on every route: the dashboard's files, the game lists, the networks); request bodies are
//! limited
//! to [`http::MAX_BODY_BYTES`]; no input is ever executed: the only players are the run's own
//! networks (`models/NNNNNN.safetensors`), loaded through the [`ModelLoader`] the binary
//! provides, so this crate does not depend on Burn. Bad requests get a 4xx status with a JSON
//! `{"error": "..."}` that says what was wrong; nothing panics on input. Memory is bounded:
//! at most [`play::MAX_GAMES`] games and [`play::MAX_LOADED_NETWORKS`] networks are held, and
//! requests run on at most [`MAX_BLOCKING_THREADS`] threads.

pub mod assets;
pub mod error;
pub mod events;
pub mod games;
pub mod http;
pub mod play;
pub mod rundir;
pub mod summary;

pub use error::{ApiError, ServeError};

use atomzero_eval::ModelLoader;
use atomzero_rules::Variant;
use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Threads that read files and run engine searches for requests (tokio's default is 512:
/// each thread keeps its own allocator cache and search trees, and a burst of requests grew
/// the server by a gigabyte; more requests than threads wait their turn).
pub const MAX_BLOCKING_THREADS: usize = 4;

/// One TensorBoard scalar: (tag, step, value).
pub type Scalar = (String, i64, f32);

/// Reads every scalar of the TensorBoard event files in a directory (the binary provides it:
/// the reader lives in the trainer's crate). The directory it is handed resolves inside the
/// run directory; the reader must read only its regular files, never follow a symlink.
pub type ScalarReader = Arc<dyn Fn(&Path) -> Result<Vec<Scalar>, String> + Send + Sync>;

/// What the server needs to know.
pub struct ServeOptions {
    /// The run directory.
    pub run_dir: PathBuf,
    /// The run's rule variant (from its `config.toml`): games against a network use it.
    pub variant: Variant,
    /// Games per baseline in the run's evaluation (`eval_games` of its `config.toml`): with 0
    /// the run rates no network, and the dashboard says how to rate them.
    pub eval_games: usize,
    /// Loads the run's networks for play.
    pub models: Arc<dyn ModelLoader + Send + Sync>,
    /// Reads the run's TensorBoard scalars.
    pub scalars: ScalarReader,
    /// How often the run directory is checked for changes.
    pub poll: Duration,
}

impl std::fmt::Debug for ServeOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeOptions")
            .field("run_dir", &self.run_dir)
            .field("variant", &self.variant)
            .field("poll", &self.poll)
            .finish_non_exhaustive()
    }
}

/// A bound server, not yet answering.
#[derive(Debug)]
pub struct Server {
    listener: std::net::TcpListener,
    state: Arc<http::AppState>,
}

impl Server {
    /// Checks the run directory and binds `addr` (port 0 picks a free port; see
    /// [`Server::local_addr`]).
    pub fn bind(addr: SocketAddr, options: ServeOptions) -> Result<Server, ServeError> {
        let root = options
            .run_dir
            .canonicalize()
            .map_err(|e| ServeError::RunDir(options.run_dir.clone(), e.to_string()))?;
        if !root.is_dir() {
            return Err(ServeError::RunDir(options.run_dir, "not a directory".into()));
        }
        let listener =
            std::net::TcpListener::bind(addr).map_err(|e| ServeError::Bind(addr, e.to_string()))?;
        listener.set_nonblocking(true).map_err(|e| ServeError::Bind(addr, e.to_string()))?;
        let state = Arc::new(http::AppState::new(root, options));
        Ok(Server { listener, state })
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> Result<SocketAddr, ServeError> {
        self.listener.local_addr().map_err(|e| ServeError::Io(e.to_string()))
    }

    /// Answers requests until `shutdown` completes (forever if it never does).
    pub fn run_until(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .max_blocking_threads(MAX_BLOCKING_THREADS)
            .build()
            .map_err(|e| ServeError::Io(e.to_string()))?;
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(self.listener)
                .map_err(|e| ServeError::Io(e.to_string()))?;
            let watcher = events::spawn_watcher(self.state.clone());
            let app = http::router(self.state);
            let result = axum::serve(listener, app)
                .with_graceful_shutdown(shutdown)
                .await
                .map_err(|e| ServeError::Io(e.to_string()));
            watcher.abort();
            result
        })
    }

    /// Answers requests forever.
    pub fn run(self) -> Result<(), ServeError> {
        self.run_until(std::future::pending())
    }
}
