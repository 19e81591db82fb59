//! The typed config of a run: one section per component (`net`, `selfplay`, `train`, each the
//! component's own config) and the loop's own `[run]` section. Every struct denies unknown
//! fields and has a default on every field. The file format (TOML) is the binary's business:
//! this crate receives a parsed [`Config`] and the text to save as the run's `config.toml`.

use crate::error::RunError;
use atomzero_nn::{DeviceKind, NetConfig};
use atomzero_rules::{Start, Variant};
use atomzero_selfplay::SelfplayConfig;
use atomzero_train::TrainerConfig;
use serde::{Deserialize, Serialize};

/// Everything a run needs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Rule variant (atomic, nocheckatomic, atomar, deathmatch, pawnblast, bomb).
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
    /// Checks every field; the error names the key.
    pub fn validate(&self) -> Result<(), String> {
        let check = |ok: bool, msg: &str| if ok { Ok(()) } else { Err(msg.to_string()) };
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
                .map_err(|e| format!("run.gate_sprt: {e}"))?;
        }
        for b in &self.baselines {
            let spec = atomzero_eval::PlayerSpec::parse(b, &atomzero_eval::NoModels)
                .map_err(|e| format!("run.baselines: '{b}': {e}"))?;
            if matches!(
                spec.kind(),
                atomzero_eval::PlayerKind::Mcts(_) | atomzero_eval::PlayerKind::Policy(_)
            ) {
                return Err(format!(
                    "run.baselines: '{b}': a baseline must be a fixed player, not a network"
                ));
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
    /// The variant, parsed: any of [`Variant::EVERY`]. The bomb variant (hidden information)
    /// is played by `atomzero run`, `trainer`, `worker` and `selfplay` (searched from each
    /// player's information set); commands that do not play it ask for
    /// [`Config::perfect_information_variant`].
    pub fn variant(&self) -> Result<Variant, RunError> {
        self.variant.parse::<Variant>().map_err(|e| RunError::Config(format!("variant: {e}")))
    }

    /// The variant, refused if it is the bomb variant (for `by`, a command that does not play
    /// it yet).
    pub fn perfect_information_variant(&self, by: &str) -> Result<Variant, RunError> {
        self.variant()?
            .require_perfect_information(by)
            .map_err(|e| RunError::Config(format!("variant: {e}")))
    }

    /// The start, parsed.
    pub fn start(&self) -> Result<Start, RunError> {
        self.start.parse::<Start>().map_err(|e| RunError::Config(format!("start: {e}")))
    }

    /// The device kind, parsed.
    pub fn device(&self) -> Result<DeviceKind, RunError> {
        self.device.parse::<DeviceKind>().map_err(|e| RunError::Config(format!("device: {e}")))
    }

    /// Checks every section; the error names the key.
    pub fn validate(&self) -> Result<(), RunError> {
        if self.variant()? == Variant::Bomb {
            self.validate_bomb()?;
        }
        if self.start()? == Start::Balanced && !self.run.openings.trim().is_empty() {
            return Err(RunError::Config(
                "start = \"balanced\" cannot be combined with run.openings (games start from \
                 the setup position, where White removes a pawn)"
                    .to_string(),
            ));
        }
        self.device()?;
        let check = |r: Result<(), String>| r.map_err(RunError::Config);
        check(self.net.validate().map_err(|e| format!("net: {e}")))?;
        check(self.selfplay.validate())?;
        check(self.train.validate())?;
        check(self.run.validate())
    }

    /// What the bomb variant needs: the network's bomb planes, its own setup phase (no
    /// Balanced start, no book), and baselines that play from their own view.
    fn validate_bomb(&self) -> Result<(), RunError> {
        let fail = |msg: &str| Err(RunError::Config(format!("variant = \"bomb\": {msg}")));
        if !self.net.encoder.bomb {
            return fail(
                "the network needs the bomb variant's input planes: set net.encoder.bomb = true",
            );
        }
        if self.start()? != Start::Standard {
            return fail("start must be \"standard\" (the variant has its own setup phase)");
        }
        if !self.run.openings.trim().is_empty() {
            return fail("run.openings must be \"\" (games start from the setup phase)");
        }
        for b in &self.run.baselines {
            let spec = atomzero_eval::PlayerSpec::parse(b, &atomzero_eval::NoModels)
                .map_err(|e| RunError::Config(format!("run.baselines: '{b}': {e}")))?;
            if !spec.plays_hidden_information() {
                return fail(&format!(
                    "run.baselines: '{b}' cannot play it (hidden information: random and greedy can)"
                ));
            }
        }
        Ok(())
    }
}
