//! Player specifications: what the command line names a player, parsed into a [`PlayerSpec`]
//! that creates a fresh [`Player`] for each game (so games can run on many threads).
//!
//! | spec | player | options (`,key=value`) |
//! |---|---|---|
//! | `random` | uniform random legal move | |
//! | `greedy` | one ply: explode the king if possible, else best material after the blast ([`crate::greedy`]) | |
//! | `alphabeta[:depth=N]` | negamax alpha-beta with quiescence on material ([`crate::alphabeta`]) | `depth` (default 2) |
//! | `net:PATH` | network + MCTS ([`MctsPlayer`]) | `nodes` (800), `temperature` (0), `temp_plies` (all), `batch` (8); the bomb variant: `worlds` (4, drawn from the belief in the net's sidecar), `cheat` (0; 1 searches the true full state: sees the opponent's bomb, a reference only) |
//! | `policy:PATH` | the network's highest prior ([`PolicyPlayer`]) | |
//! | `uci:COMMAND` | an external UCI engine ([`crate::uci_engine`]) | one of `nodes`, `movetime` (ms; default 100), `depth`; `timeout` (ms, 30000); `option.NAME=VALUE` |
//! | `fsf` | Fairy-Stockfish ([`fairy_stockfish_path`]; `scripts/fairy-stockfish.sh` builds it), one thread, 16 MB hash | one of `depth` (default 2), `nodes`, `movetime`; `timeout`; `option.NAME=VALUE` |
//!
//! Every kind takes `name=NAME` (the name in PGN and rating lists); the default is the
//! canonical spec for the baselines (`random`, `greedy`, `alphabeta:depth=2`, `fsf:depth=2`,
//! `fsf:nodes=1000`: the same player always has the same name, so ratings from different runs
//! and matches can be pooled) and the text as given otherwise. The bomb variant (hidden
//! information) is played by `random`, `greedy`, `net` and `policy` from each player's
//! information set only; `alphabeta`, `uci` and `fsf` do not play it
//! ([`PlayerSpec::plays_hidden_information`]). `COMMAND` is split at whitespace into program and arguments; paths and
//! commands may not contain commas. Networks are loaded through a [`ModelLoader`] that the
//! binary implements, so this crate does not depend on Burn.

use crate::alphabeta::AlphaBetaPlayer;
use crate::greedy::GreedyPlayer;
use crate::player::{MctsPlayer, Player, PlayerError, PolicyPlayer, RandomPlayer, SharedEvaluator};
use crate::uci_engine::{UciEngineConfig, UciLimit, UciPlayer};
use atomzero_belief::BeliefModel;
use atomzero_mcts::SearchConfig;
use atomzero_rules::Position;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The Fairy-Stockfish version `scripts/fairy-stockfish.sh` builds.
pub const FAIRY_STOCKFISH_VERSION: &str = "0.0.90";

/// Where the `fsf` player finds Fairy-Stockfish: `$ATOMZERO_FSF` if set, else the binary that
/// `scripts/fairy-stockfish.sh` leaves in its cache
/// (`$ATOMZERO_CACHE` or `~/.cache/atomzero`, then `fairy-stockfish/<version>/fairy-stockfish`).
/// `None` when neither names an existing file.
pub fn fairy_stockfish_path() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    fairy_stockfish_candidate(var("ATOMZERO_FSF"), var("ATOMZERO_CACHE"), var("HOME"))
        .filter(|path| path.is_file())
}

/// The path [`fairy_stockfish_path`] looks at, from the values of `$ATOMZERO_FSF`,
/// `$ATOMZERO_CACHE` and `$HOME`.
fn fairy_stockfish_candidate(
    fsf: Option<PathBuf>,
    cache: Option<PathBuf>,
    home: Option<PathBuf>,
) -> Option<PathBuf> {
    if fsf.is_some() {
        return fsf;
    }
    let cache = cache.or_else(|| Some(home?.join(".cache/atomzero")))?;
    Some(cache.join("fairy-stockfish").join(FAIRY_STOCKFISH_VERSION).join("fairy-stockfish"))
}

/// Loads networks named by `net:PATH` and `policy:PATH` specs.
pub trait ModelLoader {
    /// Loads the network at `path`.
    fn load(&self, path: &str) -> Result<SharedEvaluator, String>;

    /// The search settings to use with the network at `path` (e.g. its history length).
    /// Root noise should be off.
    fn search_config(&self, _path: &str) -> SearchConfig {
        SearchConfig::default().without_noise()
    }

    /// The bomb variant's belief over the opponent's bomb saved with the network at `path`
    /// (`None`: a uniform belief).
    fn belief(&self, _path: &str) -> Option<Arc<BeliefModel>> {
        None
    }
}

/// A loader for contexts without networks: every load fails.
#[derive(Copy, Clone, Debug, Default)]
pub struct NoModels;

impl ModelLoader for NoModels {
    fn load(&self, _path: &str) -> Result<SharedEvaluator, String> {
        Err("networks cannot be loaded here".to_string())
    }
}

/// A player spec that does not parse.
#[derive(Clone, Debug, PartialEq)]
pub enum SpecError {
    /// Nothing was given.
    Empty,
    /// The part before `:` is not a known kind.
    UnknownKind(String),
    /// `net`, `policy` and `uci` need a path or command after `:`.
    MissingArgument(String),
    /// An option is not `key=value`.
    Malformed(String),
    /// An option this kind does not take.
    UnknownOption {
        /// The player kind.
        kind: String,
        /// The option.
        key: String,
    },
    /// An option value out of range or of the wrong type.
    BadValue {
        /// The option.
        key: String,
        /// Its value.
        value: String,
        /// What was expected.
        expected: &'static str,
    },
    /// More than one of `nodes`, `movetime`, `depth` for a UCI engine.
    ConflictingLimits,
    /// `fsf` was asked for and no Fairy-Stockfish binary was found.
    NoFairyStockfish,
    /// The model loader failed.
    Model {
        /// The model path.
        path: String,
        /// The loader's message.
        message: String,
    },
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpecError::Empty => f.write_str("empty player spec"),
            SpecError::UnknownKind(k) => write!(
                f,
                "unknown player kind '{k}' (expected random, greedy, alphabeta, fsf, net, policy or uci)"
            ),
            SpecError::MissingArgument(k) => {
                write!(f, "player kind '{k}' needs an argument: {k}:PATH or {k}:COMMAND")
            }
            SpecError::Malformed(o) => write!(f, "player option '{o}' is not key=value"),
            SpecError::UnknownOption { kind, key } => {
                write!(f, "player kind '{kind}' has no option '{key}'")
            }
            SpecError::BadValue { key, value, expected } => {
                write!(f, "player option {key}={value}: expected {expected}")
            }
            SpecError::ConflictingLimits => {
                f.write_str("a uci or fsf player takes only one of nodes, movetime and depth")
            }
            SpecError::NoFairyStockfish => f.write_str(
                "fsf: no Fairy-Stockfish binary found; build it with `bash scripts/fairy-stockfish.sh` \
                 (or point ATOMZERO_FSF at one)",
            ),
            SpecError::Model { path, message } => {
                write!(f, "cannot load network {path}: {message}")
            }
        }
    }
}

impl std::error::Error for SpecError {}

/// What kind of player a spec creates, with its settings.
#[derive(Clone, Debug)]
pub enum PlayerKind {
    /// [`RandomPlayer`].
    Random,
    /// [`GreedyPlayer`].
    Greedy,
    /// [`AlphaBetaPlayer`] of this depth.
    AlphaBeta {
        /// Full-width plies.
        depth: u32,
    },
    /// A template for [`MctsPlayer`] (its seed is replaced per game).
    Mcts(MctsPlayer),
    /// [`PolicyPlayer`].
    Policy(PolicyPlayer),
    /// [`UciPlayer`].
    Uci(UciEngineConfig),
}

/// A named player factory.
#[derive(Clone, Debug)]
pub struct PlayerSpec {
    name: String,
    kind: PlayerKind,
}

impl PlayerSpec {
    /// A spec from its parts.
    pub fn new(name: impl Into<String>, kind: PlayerKind) -> PlayerSpec {
        PlayerSpec { name: name.into(), kind }
    }

    /// The `random` baseline.
    pub fn random() -> PlayerSpec {
        PlayerSpec::new("random", PlayerKind::Random)
    }

    /// The `greedy` baseline.
    pub fn greedy() -> PlayerSpec {
        PlayerSpec::new("greedy", PlayerKind::Greedy)
    }

    /// The `alphabeta:depth=N` baseline.
    pub fn alpha_beta(depth: u32) -> PlayerSpec {
        PlayerSpec::new(format!("alphabeta:depth={depth}"), PlayerKind::AlphaBeta { depth })
    }

    /// The name used in PGN, reports and rating lists.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The same player under another name.
    pub fn with_name(self, name: impl Into<String>) -> PlayerSpec {
        PlayerSpec { name: name.into(), ..self }
    }

    /// The kind and settings.
    pub fn kind(&self) -> &PlayerKind {
        &self.kind
    }

    /// True if the player can play the bomb variant from its information set (random,
    /// greedy, network players); alpha-beta and UCI engines cannot (UCI has no way to hand an
    /// engine its own hidden bomb only).
    pub fn plays_hidden_information(&self) -> bool {
        matches!(
            self.kind,
            PlayerKind::Random | PlayerKind::Greedy | PlayerKind::Mcts(_) | PlayerKind::Policy(_)
        )
    }

    /// Creates a player for one game starting at `start` (its variant and castling mode
    /// matter to UCI engines). `seed` drives the player's random choices.
    pub fn create(&self, start: &Position, seed: u64) -> Result<Box<dyn Player>, PlayerError> {
        Ok(match &self.kind {
            PlayerKind::Random => Box::new(RandomPlayer::new(seed)),
            PlayerKind::Greedy => Box::new(GreedyPlayer::new(seed)),
            PlayerKind::AlphaBeta { depth } => Box::new(AlphaBetaPlayer::new(*depth, seed)),
            PlayerKind::Mcts(template) => Box::new(MctsPlayer { seed, ..template.clone() }),
            PlayerKind::Policy(template) => Box::new(template.clone()),
            PlayerKind::Uci(config) => Box::new(UciPlayer::start(config, start)?),
        })
    }

    /// Parses a spec (see the module docs), loading networks with `loader`.
    pub fn parse(text: &str, loader: &dyn ModelLoader) -> Result<PlayerSpec, SpecError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(SpecError::Empty);
        }
        let (kind, rest) = match text.split_once(':') {
            Some((kind, rest)) => (kind.trim().to_ascii_lowercase(), rest),
            None => (text.to_ascii_lowercase(), ""),
        };
        let takes_argument = matches!(kind.as_str(), "net" | "policy" | "uci");
        let (argument, options) = if takes_argument {
            let (argument, options) = rest.split_once(',').unwrap_or((rest, ""));
            let argument = argument.trim();
            if argument.is_empty() {
                return Err(SpecError::MissingArgument(kind));
            }
            (argument.to_string(), options)
        } else {
            (String::new(), rest)
        };
        let mut options = Options::parse(&kind, options)?;
        let name = options.take("name");
        let default_name = text.to_string();
        let spec = match kind.as_str() {
            "random" => PlayerSpec::random(),
            "greedy" => PlayerSpec::greedy(),
            "alphabeta" => {
                let depth = options.number("depth", 2u32, 1, 64, "a depth from 1 to 64")?;
                PlayerSpec::alpha_beta(depth)
            }
            "net" => {
                let evaluator = load(loader, &argument)?;
                let temperature = match options.take("temperature") {
                    None => 0.0,
                    Some(v) => match v.parse::<f32>() {
                        Ok(t) if t.is_finite() && t >= 0.0 => t,
                        _ => {
                            return Err(bad("temperature", &v, "a number >= 0"));
                        }
                    },
                };
                let player = MctsPlayer {
                    evaluator,
                    nodes: options.number("nodes", 800, 1, u32::MAX, "a node count >= 1")?,
                    temperature,
                    temperature_plies: options.number(
                        "temp_plies",
                        usize::MAX,
                        0,
                        usize::MAX,
                        "a ply count",
                    )?,
                    batch: options.number("batch", 8, 1, 4096, "a batch size from 1 to 4096")?,
                    config: loader.search_config(&argument).without_noise(),
                    seed: 0,
                    belief: loader.belief(&argument),
                    worlds: options.number("worlds", 4, 1, 256, "a world count from 1 to 256")?,
                    cheat: options.number("cheat", 0u8, 0, 1, "0 or 1")? == 1,
                };
                PlayerSpec::new(default_name, PlayerKind::Mcts(player))
            }
            "policy" => {
                let player = PolicyPlayer {
                    evaluator: load(loader, &argument)?,
                    config: loader.search_config(&argument).without_noise(),
                };
                PlayerSpec::new(default_name, PlayerKind::Policy(player))
            }
            "uci" => {
                let mut config = UciEngineConfig::new(&argument);
                engine_options(&mut options, &mut config, None)?;
                PlayerSpec::new(default_name, PlayerKind::Uci(config))
            }
            "fsf" => {
                let name = |limit: &UciLimit| match limit {
                    UciLimit::Depth(d) => format!("fsf:depth={d}"),
                    UciLimit::Nodes(n) => format!("fsf:nodes={n}"),
                    UciLimit::MoveTime(ms) => format!("fsf:movetime={ms}"),
                };
                // Options sent to the engine change the player: such a spec keeps its text as
                // its name, so it is not pooled with the canonical one.
                let custom = options.has_prefixed("option.");
                let program = fairy_stockfish_path().ok_or(SpecError::NoFairyStockfish)?;
                let mut config = UciEngineConfig::new("");
                config.program = program.display().to_string();
                config.options = vec![
                    ("Threads".to_string(), "1".to_string()),
                    ("Hash".to_string(), "16".to_string()),
                ];
                engine_options(&mut options, &mut config, Some(UciLimit::Depth(2)))?;
                let name = if custom { default_name } else { name(&config.limit) };
                PlayerSpec::new(name, PlayerKind::Uci(config))
            }
            _ => return Err(SpecError::UnknownKind(kind)),
        };
        options.finish()?;
        Ok(match name {
            Some(name) => spec.with_name(name),
            None => spec,
        })
    }
}

/// Reads a UCI engine's limit (one of `nodes`, `movetime`, `depth`; `default` or the
/// engine config's own when none is given), `timeout` and `option.NAME=VALUE` options.
fn engine_options(
    options: &mut Options,
    config: &mut UciEngineConfig,
    default: Option<UciLimit>,
) -> Result<(), SpecError> {
    let mut limits = Vec::new();
    if options.has("nodes") {
        limits.push(UciLimit::Nodes(options.number(
            "nodes",
            1,
            1,
            u64::MAX,
            "a node count >= 1",
        )?));
    }
    if options.has("movetime") {
        limits.push(UciLimit::MoveTime(options.number(
            "movetime",
            100,
            1,
            u64::MAX,
            "milliseconds >= 1",
        )?));
    }
    if options.has("depth") {
        limits.push(UciLimit::Depth(options.number("depth", 1, 1, 1000, "a depth >= 1")?));
    }
    if limits.len() > 1 {
        return Err(SpecError::ConflictingLimits);
    }
    if let Some(limit) = limits.first().copied().or(default) {
        config.limit = limit;
    }
    if options.has("timeout") {
        let ms = options.number("timeout", 0u64, 1, u64::MAX, "milliseconds >= 1")?;
        config.timeout = Duration::from_millis(ms);
    }
    for (key, value) in options.take_prefixed("option.") {
        match config.options.iter_mut().find(|(k, _)| *k == key) {
            Some(existing) => existing.1 = value,
            None => config.options.push((key, value)),
        }
    }
    Ok(())
}

fn load(loader: &dyn ModelLoader, path: &str) -> Result<SharedEvaluator, SpecError> {
    loader.load(path).map_err(|message| SpecError::Model { path: path.to_string(), message })
}

fn bad(key: &str, value: &str, expected: &'static str) -> SpecError {
    SpecError::BadValue { key: key.to_string(), value: value.to_string(), expected }
}

/// `key=value` options not yet consumed.
struct Options {
    kind: String,
    pairs: Vec<(String, String)>,
}

impl Options {
    fn parse(kind: &str, text: &str) -> Result<Options, SpecError> {
        let mut pairs = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) =
                part.split_once('=').ok_or_else(|| SpecError::Malformed(part.to_string()))?;
            pairs.push((key.trim().to_string(), value.trim().to_string()));
        }
        Ok(Options { kind: kind.to_string(), pairs })
    }

    fn has(&self, key: &str) -> bool {
        self.pairs.iter().any(|(k, _)| k == key)
    }

    fn has_prefixed(&self, prefix: &str) -> bool {
        self.pairs.iter().any(|(k, _)| k.starts_with(prefix))
    }

    fn take(&mut self, key: &str) -> Option<String> {
        let index = self.pairs.iter().position(|(k, _)| k == key)?;
        Some(self.pairs.remove(index).1)
    }

    fn take_prefixed(&mut self, prefix: &str) -> Vec<(String, String)> {
        let (taken, kept) = std::mem::take(&mut self.pairs)
            .into_iter()
            .partition::<Vec<_>, _>(|(k, _)| k.starts_with(prefix) && k.len() > prefix.len());
        self.pairs = kept;
        taken.into_iter().map(|(k, v)| (k[prefix.len()..].to_string(), v)).collect()
    }

    fn number<T>(
        &mut self,
        key: &str,
        default: T,
        min: T,
        max: T,
        expected: &'static str,
    ) -> Result<T, SpecError>
    where
        T: std::str::FromStr + PartialOrd + Copy,
    {
        match self.take(key) {
            None => Ok(default),
            Some(value) => match value.parse::<T>() {
                Ok(n) if n >= min && n <= max => Ok(n),
                _ => Err(bad(key, &value, expected)),
            },
        }
    }

    fn finish(self) -> Result<(), SpecError> {
        match self.pairs.into_iter().next() {
            None => Ok(()),
            Some((key, _)) => Err(SpecError::UnknownOption { kind: self.kind, key }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use atomzero_mcts::UniformEvaluator;
    use std::sync::Arc;

    struct Uniform;
    impl ModelLoader for Uniform {
        fn load(&self, path: &str) -> Result<SharedEvaluator, String> {
            if path.ends_with(".missing") {
                return Err("no such file".into());
            }
            Ok(Arc::new(UniformEvaluator))
        }
    }

    #[test]
    fn parses_the_baselines() {
        assert_eq!(PlayerSpec::parse("random", &NoModels).unwrap().name(), "random");
        assert_eq!(PlayerSpec::parse(" Greedy ", &NoModels).unwrap().name(), "greedy");
        let ab = PlayerSpec::parse("alphabeta", &NoModels).unwrap();
        assert_eq!(ab.name(), "alphabeta:depth=2");
        let ab = PlayerSpec::parse("alphabeta:depth=3,name=ab3", &NoModels).unwrap();
        assert_eq!(ab.name(), "ab3");
        assert!(matches!(ab.kind(), PlayerKind::AlphaBeta { depth: 3 }));
    }

    #[test]
    fn parses_networks_with_options() {
        let spec = PlayerSpec::parse(
            "net:models/000003.safetensors,nodes=50,temperature=0.5,temp_plies=10",
            &Uniform,
        )
        .unwrap();
        assert_eq!(
            spec.name(),
            "net:models/000003.safetensors,nodes=50,temperature=0.5,temp_plies=10"
        );
        let PlayerKind::Mcts(p) = spec.kind() else { panic!() };
        assert_eq!((p.nodes, p.temperature, p.temperature_plies, p.batch), (50, 0.5, 10, 8));
        assert_eq!(p.config.dirichlet_epsilon, 0.0);
        let spec = PlayerSpec::parse("policy:x.safetensors,name=gen3-policy", &Uniform).unwrap();
        assert_eq!(spec.name(), "gen3-policy");
        assert!(matches!(spec.kind(), PlayerKind::Policy(_)));
    }

    #[test]
    fn parses_uci_engines() {
        let spec = PlayerSpec::parse(
            "uci:fairy-stockfish --flag,depth=5,option.Hash=16,timeout=2000",
            &NoModels,
        )
        .unwrap();
        let PlayerKind::Uci(c) = spec.kind() else { panic!() };
        assert_eq!(c.program, "fairy-stockfish");
        assert_eq!(c.args, vec!["--flag"]);
        assert_eq!(c.limit, UciLimit::Depth(5));
        assert_eq!(c.timeout, Duration::from_millis(2000));
        assert_eq!(c.options, vec![("Hash".to_string(), "16".to_string())]);
        let spec = PlayerSpec::parse("uci:engine", &NoModels).unwrap();
        let PlayerKind::Uci(c) = spec.kind() else { panic!() };
        assert_eq!(c.limit, UciLimit::MoveTime(100));
    }

    #[test]
    fn fairy_stockfish_is_found_where_the_build_script_puts_it() {
        let p = |s: &str| Some(PathBuf::from(s));
        assert_eq!(fairy_stockfish_candidate(p("/x/fsf"), p("/c"), p("/h")), p("/x/fsf"));
        let cached = format!("/c/fairy-stockfish/{FAIRY_STOCKFISH_VERSION}/fairy-stockfish");
        assert_eq!(fairy_stockfish_candidate(None, p("/c"), p("/h")), p(&cached));
        let home =
            format!("/h/.cache/atomzero/fairy-stockfish/{FAIRY_STOCKFISH_VERSION}/fairy-stockfish");
        assert_eq!(fairy_stockfish_candidate(None, None, p("/h")), p(&home));
        assert_eq!(fairy_stockfish_candidate(None, None, None), None);
    }

    #[test]
    fn parses_fairy_stockfish_with_canonical_names() {
        let Some(program) = fairy_stockfish_path() else {
            // Not built on this machine: the spec says how to build it.
            let err = PlayerSpec::parse("fsf:depth=2", &NoModels).unwrap_err();
            assert_eq!(err, SpecError::NoFairyStockfish);
            assert!(err.to_string().contains("scripts/fairy-stockfish.sh"));
            return;
        };
        let spec = PlayerSpec::parse("fsf", &NoModels).unwrap();
        assert_eq!(spec.name(), "fsf:depth=2");
        let PlayerKind::Uci(c) = spec.kind() else { panic!() };
        assert_eq!(c.program, program.display().to_string());
        assert_eq!(c.limit, UciLimit::Depth(2));
        assert_eq!(
            c.options,
            vec![("Threads".to_string(), "1".to_string()), ("Hash".to_string(), "16".to_string())]
        );
        let spec = PlayerSpec::parse(" fsf:nodes=1000 ", &NoModels).unwrap();
        assert_eq!(spec.name(), "fsf:nodes=1000");
        let PlayerKind::Uci(c) = spec.kind() else { panic!() };
        assert_eq!(c.limit, UciLimit::Nodes(1000));
        assert_eq!(
            PlayerSpec::parse("fsf:movetime=100", &NoModels).unwrap().name(),
            "fsf:movetime=100"
        );
        // Changed engine options make another player: the spec's own text names it.
        let spec = PlayerSpec::parse("fsf:depth=3,option.Hash=64", &NoModels).unwrap();
        assert_eq!(spec.name(), "fsf:depth=3,option.Hash=64");
        let PlayerKind::Uci(c) = spec.kind() else { panic!() };
        assert_eq!(c.options[1], ("Hash".to_string(), "64".to_string()));
        let err = PlayerSpec::parse("fsf:depth=2,nodes=5", &NoModels).unwrap_err();
        assert_eq!(err, SpecError::ConflictingLimits);
        assert!(matches!(
            PlayerSpec::parse("fsf:depth=2,skill=3", &NoModels),
            Err(SpecError::UnknownOption { .. })
        ));
    }

    #[test]
    fn rejects_bad_specs_with_reasons() {
        let err = |s: &str| PlayerSpec::parse(s, &Uniform).unwrap_err();
        assert_eq!(err(""), SpecError::Empty);
        assert_eq!(err("stockfish"), SpecError::UnknownKind("stockfish".into()));
        assert_eq!(err("net:"), SpecError::MissingArgument("net".into()));
        assert!(matches!(err("alphabeta:depth=0"), SpecError::BadValue { .. }));
        assert!(matches!(err("alphabeta:dept=3"), SpecError::UnknownOption { .. }));
        assert!(matches!(err("random:fast"), SpecError::Malformed(_)));
        assert!(matches!(err("net:a,temperature=-1"), SpecError::BadValue { .. }));
        assert!(matches!(err("net:a.missing"), SpecError::Model { .. }));
        assert_eq!(err("uci:e,nodes=5,depth=3"), SpecError::ConflictingLimits);
        assert!(matches!(PlayerSpec::parse("net:a", &NoModels), Err(SpecError::Model { .. })));
        assert!(err("alphabeta:dept=3").to_string().contains("dept"));
    }
}
