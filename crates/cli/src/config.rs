//! The run configuration: one TOML file with a section per component. Only this crate knows
//! TOML; each section is the component's own typed config (`deny_unknown_fields`, defaults on
//! every field). The resolved config (every key, defaults filled in) is saved beside what a
//! command writes.

use anyhow::{Context, Result, bail};
use atomzero_nn::{DeviceKind, NetConfig};
use atomzero_rules::{Start, Variant};
use atomzero_selfplay::SelfplayConfig;
use atomzero_train::TrainerConfig;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The embedded default config (`configs/tiny.toml`).
pub const TINY_TOML: &str = include_str!("../../../configs/tiny.toml");

/// Everything a run needs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Rule variant (atomic, nocheckatomic, atomar, deathmatch, pawnblast).
    #[serde(default = "default_variant")]
    pub variant: String,
    /// How games start: "standard", or "balanced" (White first removes one of the 16 pawns,
    /// then Black moves; self-play searches the removal, matches let White's player choose).
    #[serde(default = "default_start")]
    pub start: String,
    /// Master seed; every stage derives its own.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Where the network runs: "cpu", "cuda" or "wgpu" (GPU backends need the cargo feature).
    #[serde(default = "default_device")]
    pub device: String,
    /// The network architecture.
    #[serde(default = "NetConfig::tiny")]
    pub net: NetConfig,
    /// Self-play.
    #[serde(default)]
    pub selfplay: SelfplayConfig,
    /// Training.
    #[serde(default)]
    pub train: TrainerConfig,
    /// The `atomzero run` loop: budget, games and steps per generation, gating, evaluation.
    #[serde(default)]
    pub run: RunConfig,
}

/// The `[run]` section: what one generation of `atomzero run` does and when the run stops.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// Stop after this many generations (0 = no limit).
    pub generations: u64,
    /// Stop after this much wall time in minutes, counted across resumes (0 = no limit).
    pub max_minutes: f64,
    /// Self-play games per generation, played by the best network.
    pub games_per_generation: usize,
    /// Games per replay shard file (a killed run loses at most the games not yet in a shard).
    pub games_per_shard: usize,
    /// Training steps per generation (the trainer may stop earlier to respect
    /// `train.max_samples_per_position`).
    pub steps_per_generation: u64,
    /// Gating match budget (0 = promote every candidate, as AlphaZero did).
    pub gate_games: usize,
    /// Nodes per move in gating games.
    pub gate_nodes: u32,
    /// Early stop of the gating match ("" = none), e.g. "elo0=0,elo1=30,alpha=0.1,beta=0.1".
    pub gate_sprt: String,
    /// Score the candidate needs when the budget runs out without an SPRT verdict.
    pub gate_threshold: f64,
    /// Fixed players every promoted network is measured against.
    pub baselines: Vec<String>,
    /// Games against each baseline per promoted network (0 = no evaluation).
    pub eval_games: usize,
    /// Nodes per move of the network in evaluation games.
    pub eval_nodes: u32,
    /// EPD opening book for gating and evaluation ("" = random balanced openings).
    pub openings: String,
    /// Games played at once in gating and evaluation (0 = one per CPU core).
    pub concurrency: usize,
    /// Gating and evaluation games longer than this are adjudicated draws.
    pub match_max_plies: usize,
}

impl Default for RunConfig {
    fn default() -> RunConfig {
        RunConfig {
            generations: 8,
            max_minutes: 0.0,
            games_per_generation: 64,
            games_per_shard: 16,
            steps_per_generation: 100,
            gate_games: 40,
            gate_nodes: 32,
            gate_sprt: "elo0=0,elo1=30,alpha=0.1,beta=0.1".to_string(),
            gate_threshold: 0.5,
            baselines: vec!["random".to_string(), "greedy".to_string()],
            eval_games: 20,
            eval_nodes: 32,
            openings: String::new(),
            concurrency: 0,
            match_max_plies: 300,
        }
    }
}

impl RunConfig {
    fn validate(&self) -> Result<()> {
        let check = |ok: bool, msg: &str| if ok { Ok(()) } else { Err(anyhow::anyhow!("{msg}")) };
        check(self.games_per_generation >= 1, "run.games_per_generation must be at least 1")?;
        check(self.games_per_shard >= 1, "run.games_per_shard must be at least 1")?;
        check(self.steps_per_generation >= 1, "run.steps_per_generation must be at least 1")?;
        check(self.gate_nodes >= 1 && self.eval_nodes >= 1, "run: node counts must be at least 1")?;
        check(
            self.max_minutes >= 0.0 && self.max_minutes.is_finite(),
            "run.max_minutes must be a number >= 0",
        )?;
        check((0.0..=1.0).contains(&self.gate_threshold), "run.gate_threshold must be in [0, 1]")?;
        check(self.match_max_plies >= 1, "run.match_max_plies must be at least 1")?;
        if !self.gate_sprt.trim().is_empty() {
            self.gate_sprt
                .parse::<atomzero_eval::SprtConfig>()
                .map_err(|e| anyhow::anyhow!("run.gate_sprt: {e}"))?;
        }
        for b in &self.baselines {
            let spec = atomzero_eval::PlayerSpec::parse(b, &atomzero_eval::NoModels)
                .map_err(|e| anyhow::anyhow!("run.baselines: '{b}': {e}"))?;
            if matches!(
                spec.kind(),
                atomzero_eval::PlayerKind::Mcts(_) | atomzero_eval::PlayerKind::Policy(_)
            ) {
                bail!("run.baselines: '{b}': a baseline must be a fixed player, not a network");
            }
        }
        Ok(())
    }
}

fn default_device() -> String {
    "cpu".to_string()
}

fn default_variant() -> String {
    "atomic".to_string()
}

fn default_start() -> String {
    "standard".to_string()
}

fn default_seed() -> u64 {
    1
}

impl Config {
    /// Parses TOML text; `origin` names the source in errors.
    pub fn from_toml(text: &str, origin: &str) -> Result<Config> {
        let config: Config = toml::from_str(text)
            .map_err(|e| anyhow::anyhow!("{origin}: {}", one_line(&e.to_string())))?;
        config.validate().map_err(|e| anyhow::anyhow!("{origin}: {e:#}"))?;
        Ok(config)
    }

    /// Reads a config file, or the embedded `configs/tiny.toml` when `path` is `None`.
    pub fn load(path: Option<&Path>) -> Result<Config> {
        match path {
            None => Config::from_toml(TINY_TOML, "configs/tiny.toml (embedded)"),
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read config {}", path.display()))?;
                Config::from_toml(&text, &path.display().to_string())
            }
        }
    }

    /// The variant, parsed.
    pub fn variant(&self) -> Result<Variant> {
        self.variant.parse::<Variant>().map_err(|e| anyhow::anyhow!("variant: {e}"))
    }

    /// The start, parsed.
    pub fn start(&self) -> Result<Start> {
        self.start.parse::<Start>().map_err(|e| anyhow::anyhow!("start: {e}"))
    }

    /// The device kind, parsed.
    pub fn device(&self) -> Result<DeviceKind> {
        self.device.parse::<DeviceKind>().map_err(|e| anyhow::anyhow!("device: {e}"))
    }

    fn validate(&self) -> Result<()> {
        self.variant()?;
        if self.start()? == Start::Balanced && !self.run.openings.trim().is_empty() {
            bail!(
                "start = \"balanced\" cannot be combined with run.openings (games start from \
                 the setup position, where White removes a pawn)"
            );
        }
        self.device()?;
        self.net.validate().map_err(|e| anyhow::anyhow!("net: {e}"))?;
        if let Err(e) = self.selfplay.validate() {
            bail!("{e}");
        }
        if let Err(e) = self.train.validate() {
            bail!("{e}");
        }
        self.run.validate()
    }

    /// The resolved config as TOML.
    pub fn to_toml(&self) -> Result<String> {
        Ok(toml::to_string(self)?)
    }
}

/// TOML errors span several lines (with a source excerpt); keep the message to one line.
fn one_line(message: &str) -> String {
    let lines: Vec<&str> = message.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let location = lines.first().copied().unwrap_or("");
    let reason = lines.last().copied().unwrap_or("");
    // The excerpt line looks like `2 | visits = "many"`: quote it, it names the key.
    let excerpt = lines.iter().find_map(|l| {
        let (number, text) = l.split_once('|')?;
        (number.trim().parse::<usize>().is_ok() && !text.trim().is_empty()).then(|| text.trim())
    });
    match excerpt {
        _ if location == reason => reason.to_string(),
        Some(text) => format!("{location}: {reason} (in `{text}`)"),
        None => format!("{location}: {reason}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_config_parses() {
        let config = Config::load(None).unwrap();
        assert_eq!(config.variant().unwrap(), Variant::Atomic);
    }

    #[test]
    fn every_shipped_config_parses() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                let config = Config::load(Some(&path)).unwrap();
                // The resolved form parses back to the same config.
                let back = Config::from_toml(&config.to_toml().unwrap(), "resolved").unwrap();
                assert_eq!(back, config, "{}", path.display());
                seen += 1;
            }
        }
        assert!(seen >= 3, "tiny, default and ci configs");
        let default = Config::load(Some(&dir.join("default.toml"))).unwrap();
        assert_eq!((default.net.blocks, default.net.filters), (10, 128));
    }

    #[test]
    fn unknown_keys_and_wrong_types_are_named() {
        let err = Config::from_toml("variant = \"atomic\"\n[selfplay]\nvisitz = 3\n", "x.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("visitz") && err.contains("x.toml"), "{err}");
        assert!(!err.contains('\n'), "{err}");
        let err =
            Config::from_toml("[selfplay]\nvisits = \"many\"\n", "x.toml").unwrap_err().to_string();
        assert!(err.contains("visits"), "{err}");
        let err = Config::from_toml("variant = \"chess\"\n", "x.toml").unwrap_err().to_string();
        assert!(err.contains("unknown variant"), "{err}");
        let err = Config::from_toml("start = \"even\"\n", "x.toml").unwrap_err().to_string();
        assert!(err.contains("start: unknown start 'even'"), "{err}");
        let text = "start = \"balanced\"\n[run]\nopenings = \"book.epd\"\n";
        let err = Config::from_toml(text, "x.toml").unwrap_err().to_string();
        assert!(err.contains("cannot be combined with run.openings"), "{err}");
    }

    #[test]
    fn the_start_defaults_to_standard_and_reads_balanced() {
        // A config without the key (every config before the Balanced start) is standard.
        assert_eq!(Config::from_toml("", "x.toml").unwrap().start().unwrap(), Start::Standard);
        let config = Config::from_toml("start = \"balanced\"\n", "x.toml").unwrap();
        assert_eq!(config.start().unwrap(), Start::Balanced);
        assert!(config.to_toml().unwrap().contains("start = \"balanced\""));
    }
}
