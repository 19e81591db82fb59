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
    /// Once this fraction of the budget has passed (of `max_minutes`, else of `generations`),
    /// every generation trains at `lr_drop_factor` times `train.learning_rate` (a step drop
    /// timed by the budget, as AlphaZero and lc0 drop theirs late in a run); 1 = never.
    pub lr_drop_at: f64,
    /// The learning rate's factor after `lr_drop_at`.
    pub lr_drop_factor: f64,
    /// The first this many generations of the run only play self-play (no training, gating
    /// or evaluation): a run that starts from a trained network (`--init`) fills its replay
    /// window with that network's games before the first training step, instead of training
    /// on one generation's games (KataGo and lc0 wait for a minimum of data likewise).
    /// 0 = train from generation 1.
    pub warmup_generations: u64,
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
            lr_drop_at: 1.0,
            lr_drop_factor: 0.1,
            warmup_generations: 0,
        }
    }
}

impl RunConfig {
    /// The factor of `train.learning_rate` for generation `generation` (1-based) when its
    /// training starts after `elapsed_secs` of the run's wall time.
    pub fn learning_rate_factor(&self, generation: u64, elapsed_secs: f64) -> f64 {
        let by_time = (self.max_minutes > 0.0).then(|| elapsed_secs / (self.max_minutes * 60.0));
        let by_generations = (self.generations > 0)
            .then(|| generation.saturating_sub(1) as f64 / self.generations as f64);
        let passed = match (by_time, by_generations) {
            (Some(t), Some(g)) => t.max(g),
            (Some(f), None) | (None, Some(f)) => f,
            (None, None) => 0.0,
        };
        if self.lr_drop_at < 1.0 && passed >= self.lr_drop_at { self.lr_drop_factor } else { 1.0 }
    }

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
        check(
            self.lr_drop_at > 0.0 && self.lr_drop_at <= 1.0,
            "run.lr_drop_at must be in (0, 1] (1 = never)",
        )?;
        check(
            self.lr_drop_factor > 0.0 && self.lr_drop_factor <= 1.0,
            "run.lr_drop_factor must be in (0, 1]",
        )?;
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
        // Refused up front, naming the sizes, rather than allocated until the machine dies.
        check(atomzero_train::memory::check(
            &self.net,
            self.train.batch_size,
            atomzero_train::memory::machine_memory(),
        ))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_learning_rate_drops_once_the_budget_fraction_has_passed() {
        let timed = RunConfig {
            max_minutes: 60.0,
            generations: 0,
            lr_drop_at: 0.75,
            lr_drop_factor: 0.1,
            ..RunConfig::default()
        };
        assert_eq!(timed.learning_rate_factor(200, 44.9 * 60.0), 1.0);
        assert_eq!(timed.learning_rate_factor(1, 45.0 * 60.0), 0.1);
        // By generations when there is no time budget: generation 7 of 8 starts after 6.
        let counted = RunConfig { max_minutes: 0.0, generations: 8, ..timed.clone() };
        assert_eq!(counted.learning_rate_factor(6, 1e9), 1.0);
        assert_eq!(counted.learning_rate_factor(7, 0.0), 0.1);
        // Both budgets: whichever is nearer its end.
        let both = RunConfig { generations: 8, ..timed.clone() };
        assert_eq!(both.learning_rate_factor(7, 0.0), 0.1);
        assert_eq!(both.learning_rate_factor(1, 50.0 * 60.0), 0.1);
        // 1 = never; no budget at all: never.
        let never = RunConfig { lr_drop_at: 1.0, ..timed.clone() };
        assert_eq!(never.learning_rate_factor(1_000, 1e9), 1.0);
        let unbounded = RunConfig { max_minutes: 0.0, generations: 0, ..timed };
        assert_eq!(unbounded.learning_rate_factor(1_000, 1e9), 1.0);
    }

    #[test]
    fn learning_rate_drop_keys_are_checked() {
        for (at, factor) in [(0.0, 0.1), (1.5, 0.1), (0.5, 0.0), (0.5, 2.0), (f64::NAN, 0.1)] {
            let c = RunConfig { lr_drop_at: at, lr_drop_factor: factor, ..RunConfig::default() };
            let err = c.validate().unwrap_err();
            assert!(err.contains("run.lr_drop"), "{err}");
        }
    }
}
