//! The [`Player`] trait and the players that need no search of their own: uniform random,
//! network + MCTS ([`MctsPlayer`]) and the raw network policy ([`PolicyPlayer`]). The networks
//! are any [`Evaluator`], so this crate never depends on Burn.

use atomzero_mcts::{Evaluator, Rng, Search, SearchConfig};
use atomzero_rules::{Game, Move};
use std::fmt;
use std::sync::Arc;

/// A shared, thread-safe network (or any other evaluator).
pub type SharedEvaluator = Arc<dyn Evaluator + Send + Sync>;

/// Why a player produced no move. The match runner scores it as a loss for that player.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlayerError {
    /// The player answered with a move that is not legal (or not a move at all).
    IllegalMove(String),
    /// The player gave up without a move although legal moves exist.
    NoMove,
    /// The engine process could not be started.
    Spawn(String),
    /// The engine exited or its pipes broke.
    Crashed(String),
    /// The engine did not answer in time.
    Timeout(String),
    /// The engine broke the protocol (or cannot play the variant).
    Protocol(String),
}

impl PlayerError {
    /// The PGN `[Termination]` value of a game lost this way.
    pub fn termination(&self) -> &'static str {
        match self {
            PlayerError::IllegalMove(_) | PlayerError::NoMove => "illegal move",
            PlayerError::Timeout(_) => "time forfeit",
            PlayerError::Spawn(_) | PlayerError::Crashed(_) | PlayerError::Protocol(_) => {
                "abandoned"
            }
        }
    }
}

impl fmt::Display for PlayerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlayerError::IllegalMove(m) => write!(f, "illegal move '{m}'"),
            PlayerError::NoMove => f.write_str("no move although legal moves exist"),
            PlayerError::Spawn(e) => write!(f, "cannot start engine: {e}"),
            PlayerError::Crashed(e) => write!(f, "engine stopped: {e}"),
            PlayerError::Timeout(e) => write!(f, "engine timed out: {e}"),
            PlayerError::Protocol(e) => write!(f, "engine protocol error: {e}"),
        }
    }
}

impl std::error::Error for PlayerError {}

/// Something that chooses moves. One instance plays one game (create it from a
/// [`crate::PlayerSpec`]); it may keep state between its moves.
pub trait Player: Send {
    /// Chooses a move in the game's current position, which is not over.
    fn choose_move(&mut self, game: &Game) -> Result<Move, PlayerError>;
}

/// Plays a uniformly random legal move.
#[derive(Clone, Debug)]
pub struct RandomPlayer {
    rng: Rng,
}

impl RandomPlayer {
    /// A random player with its own seed.
    pub fn new(seed: u64) -> RandomPlayer {
        RandomPlayer { rng: Rng::new(seed) }
    }
}

impl Player for RandomPlayer {
    fn choose_move(&mut self, game: &Game) -> Result<Move, PlayerError> {
        let moves = game.position().legal_moves();
        if moves.is_empty() {
            return Err(PlayerError::NoMove);
        }
        Ok(moves[self.rng.below(moves.len())])
    }
}

/// A network searched with MCTS: `nodes` visits per move, then the most visited move, or a
/// move sampled with `temperature` during the first `temperature_plies` plies of the game.
#[derive(Clone)]
pub struct MctsPlayer {
    /// The network.
    pub evaluator: SharedEvaluator,
    /// Root visits per move.
    pub nodes: u32,
    /// Move-selection temperature (0: always the most visited move).
    pub temperature: f32,
    /// Plies (counted from the game's start position) during which `temperature` applies.
    pub temperature_plies: usize,
    /// Leaves evaluated per network call.
    pub batch: usize,
    /// Search settings (root noise off for evaluation).
    pub config: SearchConfig,
    /// Seeds the search (sampling, tie-breaks).
    pub seed: u64,
}

impl fmt::Debug for MctsPlayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MctsPlayer")
            .field("evaluator", &self.evaluator.name())
            .field("nodes", &self.nodes)
            .field("temperature", &self.temperature)
            .field("temperature_plies", &self.temperature_plies)
            .field("batch", &self.batch)
            .field("config", &self.config)
            .field("seed", &self.seed)
            .finish()
    }
}

impl Player for MctsPlayer {
    fn choose_move(&mut self, game: &Game) -> Result<Move, PlayerError> {
        let seed = self.seed ^ (game.ply() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut search = Search::new(game, self.config, seed);
        search.run(&*self.evaluator, self.nodes.max(1), self.batch.max(1));
        let chosen = if self.temperature > 0.0 && game.ply() < self.temperature_plies {
            search.sample_move(self.temperature)
        } else {
            search.best_move()
        };
        chosen.ok_or(PlayerError::NoMove)
    }
}

/// The raw network policy: the legal move with the highest prior (a one-visit search, so the
/// network sees the same inputs, history included, as under MCTS).
#[derive(Clone)]
pub struct PolicyPlayer {
    /// The network.
    pub evaluator: SharedEvaluator,
    /// Search settings (only the history length matters here).
    pub config: SearchConfig,
}

impl fmt::Debug for PolicyPlayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PolicyPlayer")
            .field("evaluator", &self.evaluator.name())
            .field("config", &self.config)
            .finish()
    }
}

impl Player for PolicyPlayer {
    fn choose_move(&mut self, game: &Game) -> Result<Move, PlayerError> {
        let mut search = Search::new(game, self.config.without_noise(), 0);
        search.run(&*self.evaluator, 1, 1);
        search
            .root_child_stats()
            .iter()
            .max_by(|a, b| a.prior.total_cmp(&b.prior))
            .map(|c| c.mv)
            .ok_or(PlayerError::NoMove)
    }
}
