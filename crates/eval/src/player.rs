//! The [`Player`] trait and the players that need no search of their own: uniform random,
//! network + MCTS ([`MctsPlayer`]) and the raw network policy ([`PolicyPlayer`]). The networks
//! are any [`Evaluator`], so this crate never depends on Burn.
//!
//! In the bomb variant a player is handed only its information set
//! ([`Player::choose_in_view`]; `atomzero_belief::InformationSet`, which never holds the
//! opponent's bomb), unless it declares that it sees everything
//! ([`Player::sees_hidden_information`]: the cheating reference, `net:...,cheat=1`), which gets
//! the full game. A network player searches the variant by Perfect-Information Monte Carlo
//! (`atomzero_pimc::Pimc`) over worlds drawn from its belief ([`MctsPlayer::belief`]).

use atomzero_belief::{BeliefModel, InformationSet};
use atomzero_mcts::{Evaluator, Rng, Search, SearchConfig};
use atomzero_pimc::Pimc;
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

    /// The bomb variant: chooses a move from what the player sees (its information set; the
    /// player is to move and the game is not over). Players that cannot play the variant
    /// keep this default, an error.
    fn choose_in_view(&mut self, _info: &InformationSet) -> Result<Move, PlayerError> {
        Err(PlayerError::Protocol("this player does not play the bomb variant".to_string()))
    }

    /// True for a player that is handed the full game in the bomb variant (it sees the
    /// opponent's bomb: a reference, not a fair player).
    fn sees_hidden_information(&self) -> bool {
        false
    }

    /// The player's belief over the opponent's bomb, if it holds one (a match scores its
    /// guesses).
    fn belief(&self) -> Option<&BeliefModel> {
        None
    }
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

    fn choose_in_view(&mut self, info: &InformationSet) -> Result<Move, PlayerError> {
        let moves = info.view().legal_moves().unwrap_or_default();
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
    /// The bomb variant: the belief the worlds are drawn from (`None`: uniform).
    pub belief: Option<Arc<BeliefModel>>,
    /// The bomb variant: worlds drawn per move (the visits are shared among them).
    pub worlds: usize,
    /// The bomb variant: search the true full state instead (sees the opponent's bomb; a
    /// reference, not a fair player).
    pub cheat: bool,
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
            .field("belief", &self.belief.is_some())
            .field("worlds", &self.worlds)
            .field("cheat", &self.cheat)
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

    fn choose_in_view(&mut self, info: &InformationSet) -> Result<Move, PlayerError> {
        let ply = info.ply();
        let seed = self.seed ^ (ply as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let uniform = BeliefModel::uniform();
        let belief = self.belief.as_deref().unwrap_or(&uniform);
        let mut pimc =
            Pimc::new(info, belief, self.config, self.worlds.max(1), self.nodes.max(1), seed)
                .map_err(|e| PlayerError::Protocol(e.to_string()))?;
        pimc.run(&*self.evaluator, self.batch.max(1));
        let chosen = if self.temperature > 0.0 && ply < self.temperature_plies {
            pimc.sample_move(self.temperature, &mut Rng::new(seed))
        } else {
            pimc.best_move()
        };
        chosen.ok_or(PlayerError::NoMove)
    }

    fn sees_hidden_information(&self) -> bool {
        self.cheat
    }

    fn belief(&self) -> Option<&BeliefModel> {
        if self.cheat { None } else { self.belief.as_deref() }
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

    fn choose_in_view(&mut self, info: &InformationSet) -> Result<Move, PlayerError> {
        // One world (any: the network's priors at the root see only the player's view).
        let uniform = BeliefModel::uniform();
        let mut pimc = Pimc::new(info, &uniform, self.config.without_noise(), 1, 1, 0)
            .map_err(|e| PlayerError::Protocol(e.to_string()))?;
        pimc.run(&*self.evaluator, 1);
        pimc.searches()
            .first()
            .and_then(|search| {
                search.root_child_stats().into_iter().max_by(|a, b| a.prior.total_cmp(&b.prior))
            })
            .map(|c| c.mv)
            .ok_or(PlayerError::NoMove)
    }
}
