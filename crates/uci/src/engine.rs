//! [`Engine`]: the UCI state machine, driven one input line at a time, and the stdin loop
//! around it ([`run`], [`run_stdio`]).
//!
//! `handle` never blocks on a search: `go` starts the search on its own thread (see
//! the `worker` module) and returns, so `stop`, `isready`, `ponderhit` and `quit` are read and
//! answered while it runs. The search thread writes `info` and `bestmove` through the same
//! [`Output`]. Bad input is answered with `info string error: ...` and the engine carries on.
//!
//! The engine knows nothing about networks: the embedder passes a [`ModelLoader`] that turns
//! the `Model` option into an [`atomzero_mcts::Evaluator`]. It is called at the next `isready` or `go` after
//! `Model` (or `Threads`) changed. Without a model the engine plays with the
//! [`UniformEvaluator`] (equal priors, even WDL: pure MCTS on the rules) and says so with
//! `info string no model loaded: playing with uniform priors (pure MCTS)`.
//!
//! The Balanced start: a GUI sets `setoption name Start value balanced` (then `position
//! startpos` is the setup position) or sends `position fen balanced`; `go` there answers with
//! White's removal, `bestmove @e2`, and `position ... moves @e2 e7e5 ...` continues from it. A
//! `position fen` of the position after the removal is ordinary FEN and needs neither.

use crate::command::{self, Command, GoParams, StartPosition};
use crate::limits::SearchLimits;
use crate::options::{OptionId, Options};
use crate::output::Output;
use crate::worker::{self, Job, SharedEvaluator, Signal};
use atomzero_mcts::{EvalCache, Search, SearchConfig, UniformEvaluator};
use atomzero_rules::{CastlingMode, Game, Move, Position};
use std::fmt;
use std::io::{self, BufRead};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// The announcement made at `go` when no model is loaded.
pub const NO_MODEL_MESSAGE: &str = "no model loaded: playing with uniform priors (pure MCTS)";

/// Why a model could not be loaded (the embedder's message).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelLoadError {
    message: String,
}

impl ModelLoadError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> ModelLoadError {
        ModelLoadError { message: message.into() }
    }
}

impl fmt::Display for ModelLoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ModelLoadError {}

/// A loaded network: the evaluator and what the search must hand it.
#[derive(Clone)]
pub struct LoadedModel {
    /// The network behind the search's evaluator interface.
    pub evaluator: SharedEvaluator,
    /// Earlier positions the network's encoder reads with each position (its
    /// `encoder.history`); searches with this model use it as [`SearchConfig::history`].
    pub history: usize,
}

impl LoadedModel {
    /// A model whose encoder reads no history.
    pub fn new(evaluator: SharedEvaluator) -> LoadedModel {
        LoadedModel { evaluator, history: 0 }
    }

    /// The same model with an encoder that reads `history` earlier positions.
    pub fn with_history(self, history: usize) -> LoadedModel {
        LoadedModel { history, ..self }
    }
}

impl fmt::Debug for LoadedModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadedModel")
            .field("evaluator", &self.evaluator.name())
            .field("history", &self.history)
            .finish()
    }
}

/// Turns the `Model` option into an evaluator. Implemented by the binary with the real
/// network; closures `FnMut(&Path, usize) -> Result<LoadedModel, ModelLoadError>` qualify.
pub trait ModelLoader: Send {
    /// Loads the model at `path` for an evaluator that may use `threads` threads (the
    /// `Threads` option).
    fn load(&mut self, path: &Path, threads: usize) -> Result<LoadedModel, ModelLoadError>;
}

impl<F> ModelLoader for F
where
    F: FnMut(&Path, usize) -> Result<LoadedModel, ModelLoadError> + Send,
{
    fn load(&mut self, path: &Path, threads: usize) -> Result<LoadedModel, ModelLoadError> {
        self(path, threads)
    }
}

/// A loader that loads nothing: every `Model` is refused and the engine plays without one.
#[derive(Copy, Clone, Debug, Default)]
pub struct NoModelLoader;

impl ModelLoader for NoModelLoader {
    fn load(&mut self, _path: &Path, _threads: usize) -> Result<LoadedModel, ModelLoadError> {
        Err(ModelLoadError::new("this engine cannot load models"))
    }
}

/// The engine's settings (the UCI options are in [`EngineConfig::options`]).
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// Sent as `id name`.
    pub name: String,
    /// Sent as `id author`.
    pub author: String,
    /// The options' starting values, announced as their defaults by `uci` (e.g. `Model` set
    /// from the command line).
    pub options: Options,
    /// Search settings. Root noise is always switched off; `history` is replaced by the
    /// loaded model's, `c_init`, `fpu_reduction`, `fpu_reduction_root` and `lcb_stdevs` by the
    /// `CPuct`, `CPuctBase`, `CPuctFactor`, `FpuReduction`, `FpuReductionAtRoot` and `LcbStdevs` options (the largest batch
    /// of leaves is the `MinibatchSize` option).
    pub search: SearchConfig,
    /// Seed of the search's random numbers.
    pub seed: u64,
    /// Time between periodic `info` lines.
    pub info_interval: Duration,
    /// Keep the tree between moves when the new position follows from the searched one.
    pub tree_reuse: bool,
}

impl Default for EngineConfig {
    fn default() -> EngineConfig {
        EngineConfig {
            name: format!("atomzero {}", env!("CARGO_PKG_VERSION")),
            author: "the atomzero authors".to_string(),
            options: Options::default(),
            search: SearchConfig { instant_wins: true, ..SearchConfig::default() },
            seed: 0,
            info_interval: Duration::from_millis(500),
            tree_reuse: true,
        }
    }
}

/// What the caller of [`Engine::handle`] should do next.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Read the next line.
    Continue,
    /// `quit` was received: stop reading.
    Quit,
}

/// A search in progress.
struct Running {
    handle: JoinHandle<Option<Search>>,
    signals: Sender<Signal>,
    /// Set by the search thread just before it writes `bestmove`.
    answered: Arc<AtomicBool>,
    /// The search ends by itself (a node or time limit, no `infinite` or `ponder`).
    bounded: bool,
    game: GameKey,
}

impl Running {
    /// True once `bestmove` is (being) written: the thread is about to end.
    fn is_done(&self) -> bool {
        self.answered.load(Ordering::Acquire) || self.handle.is_finished()
    }
}

/// A finished search, kept for tree reuse.
struct Previous {
    search: Search,
    game: GameKey,
}

/// The game a tree was searched for: start position and moves.
#[derive(Clone, Debug, PartialEq, Eq)]
struct GameKey {
    initial: Position,
    moves: Vec<Move>,
}

impl GameKey {
    fn of(game: &Game) -> GameKey {
        GameKey { initial: *game.initial(), moves: game.moves().to_vec() }
    }
}

/// The UCI engine. See the module documentation.
pub struct Engine {
    config: EngineConfig,
    options: Options,
    loader: Box<dyn ModelLoader>,
    output: Output,
    /// The (path, threads) the current evaluator was loaded for (`None`: no model wanted).
    loaded_for: Option<(PathBuf, u64)>,
    model: Option<LoadedModel>,
    /// The evaluation cache in front of the model's evaluator (`NNCacheSize` > 0): kept from
    /// one `go` to the next, emptied with a new model or size.
    cache: Option<Arc<EvalCache<SharedEvaluator>>>,
    /// `debug on`: searches report the evaluation cache's hits.
    debug: bool,
    /// The model in use (or the fallback) was named in an `info string` at a `go`.
    announced: bool,
    game: Game,
    /// A `position` command was received since the start or the last `ucinewgame`.
    position_set: bool,
    previous: Option<Previous>,
    running: Option<Running>,
}

impl fmt::Debug for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Engine")
            .field("options", &self.options)
            .field("position", &self.game.position().fen())
            .field("model", &self.model)
            .field("searching", &self.running.is_some())
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// An engine writing to `output`, at the start position of the configured variant.
    pub fn new(config: EngineConfig, loader: impl ModelLoader + 'static, output: Output) -> Engine {
        let options = config.options.clone();
        let game = Game::new(Position::start(options.variant, options.start));
        let mut engine = Engine {
            config,
            options,
            loader: Box::new(loader),
            output,
            loaded_for: None,
            model: None,
            cache: None,
            debug: false,
            announced: false,
            game,
            position_set: false,
            previous: None,
            running: None,
        };
        engine.game = Game::new(engine.start_position());
        engine
    }

    /// The current option values.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The position the next `go` searches.
    pub fn position(&self) -> &Position {
        self.game.position()
    }

    /// True from `go` until the search has answered with `bestmove` (a search under
    /// `go infinite` or `go ponder` waits for `stop` or `ponderhit`).
    pub fn is_searching(&self) -> bool {
        self.running.as_ref().is_some_and(|r| !r.is_done())
    }

    /// Handles one line of input.
    pub fn handle(&mut self, line: &str) -> Flow {
        self.reap(false);
        let parsed = match command::parse(line) {
            Ok(Some(parsed)) => parsed,
            Ok(None) => return Flow::Continue,
            Err(e) => {
                self.error(&e.to_string());
                return Flow::Continue;
            }
        };
        for warning in &parsed.warnings {
            self.error(&warning.to_string());
        }
        match parsed.command {
            Command::Uci => {
                self.output.line(&format!("id name {}", self.config.name));
                self.output.line(&format!("id author {}", self.config.author));
                for line in self.config.options.declarations() {
                    self.output.line(&line);
                }
                self.output.line("uciok");
            }
            Command::Debug(on) => self.debug = on,
            Command::Register => {}
            Command::IsReady => {
                if !self.is_searching() {
                    self.sync_model();
                }
                self.output.line("readyok");
            }
            Command::SetOption { name, value } => match self.set_option(&name, value.as_deref()) {
                Ok(OptionId::Variant | OptionId::Chess960 | OptionId::Start) => {
                    // Takes effect at the next `position`; a GUI that sends no `position` before
                    // `go` gets the new variant's start position.
                    if !self.position_set {
                        self.game = Game::new(self.start_position());
                    }
                }
                Ok(_) => {}
                Err(e) => self.error(&e.to_string()),
            },
            Command::UciNewGame => {
                self.stop_and_join();
                self.previous = None;
                self.position_set = false;
                self.game = Game::new(self.start_position());
            }
            Command::Position { start, moves } => self.set_position(start, &moves),
            Command::Go(go) => self.go(&go),
            // Waits for the search's `bestmove` (it answers a stop within one batch), so that
            // nothing printed for later commands, `readyok` included, can come before it.
            Command::Stop => self.stop_and_join(),
            Command::PonderHit => self.signal(Signal::PonderHit),
            Command::Quit => {
                self.stop_and_join();
                return Flow::Quit;
            }
        }
        Flow::Continue
    }

    /// Waits for the running search to end by itself (it never does under `go infinite`
    /// without `stop`).
    pub fn wait(&mut self) {
        self.reap(true);
    }

    /// The input has ended: a search with a node or time limit is allowed to finish (so that
    /// `echo "go nodes 800" | atomzero uci` prints its move), any other search is stopped.
    /// Either way its `bestmove` is written before this returns.
    pub fn end_of_input(&mut self) {
        if !self.running.as_ref().is_some_and(|r| r.bounded) {
            self.signal(Signal::Stop);
        }
        self.reap(true);
    }

    /// `setoption`, saying in an `info string` when a value was clamped into its range.
    fn set_option(
        &mut self,
        name: &str,
        value: Option<&str>,
    ) -> Result<OptionId, crate::options::OptionError> {
        let id = self.options.set(name, value)?;
        if let Some(note) = value.and_then(|v| id.clamp_note(v)) {
            self.output.info_string(&note);
        }
        Ok(id)
    }

    fn error(&self, message: &str) {
        self.output.info_string(&format!("error: {message}"));
    }

    fn signal(&self, signal: Signal) {
        if let Some(running) = &self.running {
            let _ = running.signals.send(signal);
        }
    }

    /// Joins a search that has answered (or, with `block`, waits for it) and keeps its tree.
    fn reap(&mut self, block: bool) {
        let finished = self.running.as_ref().is_some_and(Running::is_done);
        if !(finished || block) {
            return;
        }
        if let Some(running) = self.running.take() {
            let search = running.handle.join().ok().flatten();
            self.previous = search.map(|search| Previous { search, game: running.game });
        }
    }

    fn stop_and_join(&mut self) {
        self.signal(Signal::Stop);
        self.reap(true);
    }

    fn castling_mode(&self) -> CastlingMode {
        if self.options.chess960 { CastlingMode::Chess960 } else { CastlingMode::Standard }
    }

    /// The start position of the current variant, start (`Start`: the Balanced start's setup
    /// position) and castling mode.
    fn start_position(&self) -> Position {
        let pos = Position::start(self.options.variant, self.options.start);
        pos.with_castling_mode(self.castling_mode()).unwrap_or(pos)
    }

    fn set_position(&mut self, start: StartPosition, moves: &[String]) {
        self.position_set = true;
        let initial = match start {
            StartPosition::StartPos => self.start_position(),
            StartPosition::Fen(fen) => {
                let parsed = match self.castling_mode() {
                    CastlingMode::Chess960 => Position::from_fen_with_mode(
                        &fen,
                        self.options.variant,
                        CastlingMode::Chess960,
                    ),
                    CastlingMode::Standard => Position::from_fen(&fen, self.options.variant),
                };
                match parsed {
                    Ok(pos) => pos,
                    Err(e) => {
                        self.error(&format!(
                            "invalid FEN '{fen}' for {}: {e}; keeping the previous position",
                            self.options.variant
                        ));
                        return;
                    }
                }
            }
        };
        let mut game = Game::new(initial);
        for (i, text) in moves.iter().enumerate() {
            match game.position().parse_uci(text) {
                Ok(m) => game.play_unchecked(m),
                Err(e) => {
                    let ignored = moves.len() - i - 1;
                    self.error(&format!(
                        "move {} of position: {e}; keeping the position before it{}",
                        i + 1,
                        if ignored > 0 {
                            format!(" and ignoring the {ignored} moves after it")
                        } else {
                            String::new()
                        }
                    ));
                    break;
                }
            }
        }
        self.game = game;
    }

    /// Loads the model if `Model` or `Threads` changed since the last load.
    fn sync_model(&mut self) {
        let wanted = self.options.model.clone().map(|path| (path, self.options.threads));
        if wanted == self.loaded_for {
            return;
        }
        self.loaded_for = wanted.clone();
        self.model = None;
        self.cache = None;
        self.previous = None;
        self.announced = false;
        let Some((path, threads)) = wanted else { return };
        let threads = usize::try_from(threads).unwrap_or(1);
        match self.loader.load(&path, threads) {
            Ok(model) => self.model = Some(model),
            Err(e) => self.error(&format!("cannot load model '{}': {e}", path.display())),
        }
    }

    /// The evaluation cache for the next search: the one kept since the last, a new one if the
    /// model or `NNCacheSize` changed, `None` without a model or with `NNCacheSize` 0. The
    /// cache sits under `PolicyTemperature`: it keeps the network's own priors.
    fn sync_cache(&mut self) -> Option<Arc<EvalCache<SharedEvaluator>>> {
        let Some(model) = &self.model else {
            self.cache = None;
            return None;
        };
        let entries = usize::try_from(self.options.nn_cache_size).unwrap_or(usize::MAX);
        if entries == 0 {
            self.cache = None;
            return None;
        }
        let fits = self.cache.as_ref().is_some_and(|c| c.capacity() == entries.next_power_of_two());
        if !fits {
            self.cache = Some(Arc::new(EvalCache::new(Arc::clone(&model.evaluator), entries)));
        }
        self.cache.clone()
    }

    /// The search settings: the engine's, with the `CPuct`, `CPuctBase`, `CPuctFactor`, `FpuReduction`,
    /// `FpuReductionAtRoot` and `LcbStdevs` options.
    fn search_config(&self) -> SearchConfig {
        self.options.search_config(self.config.search)
    }

    /// `go searchmoves`: leaves the other root moves out of `search`; true if it did. A move
    /// that is not legal here is reported and ignored; none legal searches every move.
    fn restrict_to_searchmoves(&self, search: &mut Search, searchmoves: &[String]) -> bool {
        if searchmoves.is_empty() {
            return false;
        }
        let pos = *search.root_position();
        let mut allowed = Vec::new();
        for text in searchmoves {
            match pos.parse_uci(text) {
                Ok(m) if pos.is_legal(m) => allowed.push(m),
                _ => self.error(&format!(
                    "searchmoves: {} is not a legal move here; ignored",
                    text.chars().take(16).collect::<String>()
                )),
            }
        }
        if allowed.is_empty() {
            return false;
        }
        let others: Vec<_> =
            pos.legal_moves().iter().copied().filter(|m| !allowed.contains(m)).collect();
        search.exclude_root_moves(&others);
        true
    }

    /// The tree's size bound (in bytes, see `Search::tree_bytes`) from the `Hash` option: half
    /// of it, leaving room for the arenas' growth by doubling.
    fn max_tree_bytes(&self) -> usize {
        let bytes = self.options.hash_mib.saturating_mul(1 << 20) / 2;
        usize::try_from(bytes).unwrap_or(usize::MAX).max(1 << 16)
    }

    /// The tree to search: the previous one moved down the moves played since, or a new one.
    fn tree_for_current_game(&mut self, config: SearchConfig, max_tree_bytes: usize) -> Search {
        let key = GameKey::of(&self.game);
        if let Some(Previous { mut search, game }) = self.previous.take()
            && self.config.tree_reuse
            && *search.config() == config.without_noise()
            && game.initial == key.initial
            && key.moves.len() >= game.moves.len()
            && key.moves.len() - game.moves.len() <= 2
            && key.moves.starts_with(&game.moves)
        {
            for &m in &key.moves[game.moves.len()..] {
                search.advance(m);
            }
            if search.root_position() == self.game.position()
                && search.tree_bytes() < max_tree_bytes / 2
            {
                return search;
            }
        }
        Search::new(&self.game, config.without_noise(), self.config.seed)
    }

    fn go(&mut self, go: &GoParams) {
        let started = Instant::now();
        self.stop_and_join();
        self.sync_model();
        // Named at the first `go` after a (re)load, as Stockfish names its network: an `info`
        // line is expected there, while GUIs warn about one in answer to `isready`.
        if !self.announced {
            self.announced = true;
            let message = match (&self.model, &self.loaded_for) {
                (Some(model), Some((path, _))) => {
                    format!("model loaded: {} ({})", path.display(), model.evaluator.name())
                }
                _ => NO_MODEL_MESSAGE.to_string(),
            };
            self.output.info_string(&message);
        }
        let cache = self.sync_cache();
        let (evaluator, search_config): (SharedEvaluator, SearchConfig) = match &self.model {
            Some(model) => {
                let network: SharedEvaluator = match &cache {
                    Some(cache) => Arc::clone(cache) as SharedEvaluator,
                    None => Arc::clone(&model.evaluator),
                };
                (
                    self.options.tempered(network),
                    SearchConfig { history: model.history, ..self.search_config() },
                )
            }
            None => (Arc::new(UniformEvaluator), self.search_config()),
        };
        if go.mate.is_some() {
            self.error("go mate is searched like go without a mate limit");
        }
        let overhead = Duration::from_millis(self.options.move_overhead_ms);
        let limits =
            SearchLimits::from_go(go, self.game.position().turn(), self.options.nodes, overhead);
        let bounded = (limits.budget.is_some() || limits.nodes.is_some())
            && !limits.infinite
            && !limits.ponder;
        let max_tree_bytes = self.max_tree_bytes();
        let mut search = self.tree_for_current_game(search_config, max_tree_bytes);
        search.set_alpha_beta_priors(self.options.alpha_beta_priors_for(limits.budget));
        let restricted = self.restrict_to_searchmoves(&mut search, &go.searchmoves);
        let answered = Arc::new(AtomicBool::new(false));
        let job = Job {
            search,
            evaluator,
            limits,
            started,
            max_batch: usize::try_from(self.options.minibatch_size).unwrap_or(1).max(1),
            max_tree_bytes,
            multipv: usize::try_from(self.options.multipv).unwrap_or(1).max(1),
            show_wdl: self.options.show_wdl,
            // `searchmoves` decides the root moves itself.
            alphabeta_share: if restricted {
                0.0
            } else {
                self.options.alphabeta_share as f64 / 100.0
            },
            alphabeta_root_share: if restricted {
                0.0
            } else {
                self.options.alphabeta_root_share as f64 / 100.0
            },
            info_interval: self.config.info_interval,
            output: self.output.clone(),
            answered: Arc::clone(&answered),
            cache: cache.filter(|_| self.debug),
        };
        let (sender, receiver) = mpsc::channel();
        let spawned = thread::Builder::new()
            .name("atomzero-search".to_string())
            .spawn(move || worker::run(job, receiver));
        match spawned {
            Ok(handle) => {
                self.running = Some(Running {
                    handle,
                    signals: sender,
                    answered,
                    bounded,
                    game: GameKey::of(&self.game),
                });
            }
            Err(e) => {
                self.error(&format!("cannot start the search thread: {e}"));
                let legal = self.game.position().legal_moves();
                let answer = legal
                    .first()
                    .map_or_else(|| worker::NO_MOVE.to_string(), |&m| self.game.position().uci(m));
                self.output.line(&format!("bestmove {answer}"));
            }
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.stop_and_join();
    }
}

/// Reads lines from `input` and hands them to a new engine until `quit` or the end of the
/// input (see [`Engine::end_of_input`]). Invalid UTF-8 is replaced, not fatal.
pub fn run(
    config: EngineConfig,
    loader: impl ModelLoader + 'static,
    mut input: impl BufRead,
    output: Output,
) -> io::Result<()> {
    let mut engine = Engine::new(config, loader, output);
    let mut buffer = Vec::new();
    loop {
        buffer.clear();
        if input.read_until(b'\n', &mut buffer)? == 0 {
            engine.end_of_input();
            return Ok(());
        }
        let line = String::from_utf8_lossy(&buffer);
        if engine.handle(&line) == Flow::Quit {
            return Ok(());
        }
    }
}

/// The UCI engine on standard input and output: what `atomzero uci` runs.
pub fn run_stdio(config: EngineConfig, loader: impl ModelLoader + 'static) -> io::Result<()> {
    run(config, loader, io::stdin().lock(), Output::stdout())
}
