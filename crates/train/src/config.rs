//! Trainer settings (the `[train]` section of a run config).

use serde::{Deserialize, Serialize};

/// Which optimizer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OptimizerKind {
    /// AdamW (decoupled weight decay).
    Adamw,
    /// SGD with Nesterov momentum (AlphaZero's choice) and L2 weight decay.
    Sgd,
}

/// Which implementation runs the training step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// `atomzero` where it applies (the `cpu` device, a net without squeeze-excitation),
    /// else `burn`.
    #[default]
    Auto,
    /// Burn's autodiff on the run's device (the only choice on a GPU).
    Burn,
    /// Our own CPU training step (`atomzero-backprop`): the same losses and optimizers,
    /// several times faster than Burn on the CPU.
    Atomzero,
}

/// Learning-rate shape after the warm-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Schedule {
    /// `learning_rate` throughout.
    Constant,
    /// Cosine decay from `learning_rate` to `min_learning_rate` over `total_steps`.
    Cosine,
    /// Multiply by `step_gamma` at each of `step_milestones`.
    Step,
}

/// The value target of a position from a game cut by the ply limit
/// (`selfplay.max_plies`, recorded as an adjudicated draw).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MaxLengthTarget {
    /// The adjudicated draw, mixed with the search's root value by `value_target_root_mix`.
    #[default]
    Draw,
    /// The search's root value alone: such a game has no result. Calling it a draw teaches the
    /// value that a position is drawn whenever the players cannot finish the game in time,
    /// a queen up or not (the bomb variant: weak players rarely finish chess in time).
    Search,
    /// Adjudicated by material at the cut (pawn 1, knight and bishop 3, rook 5, queen 9): the
    /// side ahead by at least [`MATERIAL_MARGIN`] wins, else a draw; then mixed with the root
    /// value by `value_target_root_mix` like any result. Domain knowledge, as engines' data
    /// generators adjudicate; for variants where material decides (the bomb variant).
    Material,
}

/// The material lead that wins a game adjudicated by [`MaxLengthTarget::Material`].
pub const MATERIAL_MARGIN: i32 = 3;

/// Trainer settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrainerConfig {
    /// Which implementation runs the training step.
    pub backend: Backend,
    /// Positions per batch.
    pub batch_size: usize,
    /// Optimizer.
    pub optimizer: OptimizerKind,
    /// Peak learning rate.
    pub learning_rate: f64,
    /// Linear warm-up from 0 over this many steps.
    pub warmup_steps: u64,
    /// Shape after the warm-up.
    pub schedule: Schedule,
    /// Horizon of the cosine schedule (steps).
    pub total_steps: u64,
    /// Floor of the cosine schedule.
    pub min_learning_rate: f64,
    /// Steps at which the step schedule multiplies the rate by `step_gamma`.
    pub step_milestones: Vec<u64>,
    /// Factor of the step schedule.
    pub step_gamma: f64,
    /// SGD momentum (Nesterov).
    pub momentum: f64,
    /// Weight decay (AdamW: decoupled; SGD: L2 penalty).
    pub weight_decay: f32,
    /// Clip the gradient to this L2 norm (0 = no clipping).
    pub grad_clip_norm: f32,
    /// Weight of the value loss.
    pub value_loss_weight: f32,
    /// Value target = (1 − mix) · game result + mix · the search's root WDL.
    pub value_target_root_mix: f32,
    /// How far ahead the root-value part of the value target looks: 0 uses the position's
    /// own root value; λ in (0, 1) the λ-return over the game's searched positions from this
    /// one on (`atomzero_train::data::ValueTarget`), about 1 / (1 − λ) searches ahead.
    pub value_target_lambda: f32,
    /// With `value_target_lambda` above 0: stop the λ-return at the first searched position
    /// whose played move was not the search's choice (an exploratory move of either side),
    /// taking that position's root value for the rest (Watkins's Q(λ) cut).
    pub value_target_lambda_greedy: bool,
    /// The value target of positions from games cut by the ply limit: `draw` (the adjudicated
    /// result, as any other) or `search` (the root value alone).
    pub max_length_target: MaxLengthTarget,
    /// Weight of the opponent-policy loss (KataGo's auxiliary target, 0.15 in the paper);
    /// used only by nets with `net.opponent_policy`.
    pub opponent_policy_weight: f32,
    /// Newest training targets in the window.
    pub window_positions: usize,
    /// Upper bound on how often each window position is sampled on average per `train` call:
    /// steps are cut to `window × this / batch_size` if asked for more.
    pub max_samples_per_position: f64,
    /// KataGo's policy-surprise weighting: the share of the sampling weight that goes to the
    /// window's targets in proportion to their policy surprise (how far the search's target
    /// is from the network's prior, `atomzero_replay::SearchTarget::surprise`), the rest
    /// spread evenly. 0 samples uniformly; KataGo uses 0.5. A target without a measured
    /// surprise (shards before format 5, the bomb variant) counts as the window's average.
    pub policy_surprise_weight: f64,
    /// Write a checkpoint every this many steps (and at the end).
    pub checkpoint_every: u64,
    /// Checkpoints kept (newest).
    pub keep_checkpoints: usize,
    /// TensorBoard scalars every this many steps.
    pub log_every: u64,
}

impl Default for TrainerConfig {
    fn default() -> TrainerConfig {
        TrainerConfig {
            backend: Backend::Auto,
            batch_size: 256,
            optimizer: OptimizerKind::Adamw,
            learning_rate: 1e-3,
            warmup_steps: 100,
            schedule: Schedule::Constant,
            total_steps: 100_000,
            min_learning_rate: 1e-5,
            step_milestones: Vec::new(),
            step_gamma: 0.1,
            momentum: 0.9,
            weight_decay: 1e-4,
            grad_clip_norm: 10.0,
            value_loss_weight: 1.0,
            value_target_root_mix: 0.0,
            value_target_lambda: 0.0,
            value_target_lambda_greedy: false,
            max_length_target: MaxLengthTarget::Draw,
            opponent_policy_weight: 0.15,
            window_positions: 100_000,
            max_samples_per_position: 8.0,
            policy_surprise_weight: 0.0,
            checkpoint_every: 500,
            keep_checkpoints: 3,
            log_every: 10,
        }
    }
}

impl TrainerConfig {
    /// The learning rate at `step` (0-based).
    pub fn learning_rate_at(&self, step: u64) -> f64 {
        let peak = self.learning_rate;
        if step < self.warmup_steps {
            return peak * (step + 1) as f64 / self.warmup_steps as f64;
        }
        match self.schedule {
            Schedule::Constant => peak,
            Schedule::Cosine => {
                let span = self.total_steps.saturating_sub(self.warmup_steps).max(1) as f64;
                let t = ((step - self.warmup_steps) as f64 / span).min(1.0);
                self.min_learning_rate
                    + 0.5
                        * (peak - self.min_learning_rate)
                        * (1.0 + (std::f64::consts::PI * t).cos())
            }
            Schedule::Step => {
                let passed = self.step_milestones.iter().filter(|&&m| step >= m).count();
                peak * self.step_gamma.powi(passed as i32)
            }
        }
    }

    /// Checks values; the message names the field.
    pub fn validate(&self) -> Result<(), String> {
        let check = |ok: bool, msg: &str| if ok { Ok(()) } else { Err(msg.to_string()) };
        check(self.batch_size >= 1, "train.batch_size must be at least 1")?;
        check(
            self.learning_rate > 0.0 && self.learning_rate.is_finite(),
            "train.learning_rate must be positive",
        )?;
        check(self.window_positions >= 1, "train.window_positions must be at least 1")?;
        check(
            self.max_samples_per_position > 0.0 && self.max_samples_per_position.is_finite(),
            "train.max_samples_per_position must be a positive number",
        )?;
        check(
            (0.0..=1.0).contains(&self.policy_surprise_weight),
            "train.policy_surprise_weight must be in [0, 1]",
        )?;
        check(
            self.min_learning_rate >= 0.0 && self.min_learning_rate.is_finite(),
            "train.min_learning_rate must be a number >= 0",
        )?;
        check(
            self.step_gamma > 0.0 && self.step_gamma.is_finite(),
            "train.step_gamma must be a positive number",
        )?;
        check((0.0..=1.0).contains(&self.momentum), "train.momentum must be in [0, 1]")?;
        let finite_at_least_0 = |v: f32| v.is_finite() && v >= 0.0;
        check(finite_at_least_0(self.weight_decay), "train.weight_decay must be a number >= 0")?;
        check(
            finite_at_least_0(self.grad_clip_norm),
            "train.grad_clip_norm must be a number >= 0 (0 = no clipping)",
        )?;
        check(
            finite_at_least_0(self.value_loss_weight),
            "train.value_loss_weight must be a number >= 0",
        )?;
        check(self.checkpoint_every >= 1, "train.checkpoint_every must be at least 1")?;
        check(self.keep_checkpoints >= 1, "train.keep_checkpoints must be at least 1")?;
        check(self.log_every >= 1, "train.log_every must be at least 1")?;
        check(
            (0.0..=1.0).contains(&self.value_target_root_mix),
            "train.value_target_root_mix must be in [0, 1]",
        )?;
        check(
            (0.0..1.0).contains(&self.value_target_lambda),
            "train.value_target_lambda must be in [0, 1)",
        )?;
        check(
            self.opponent_policy_weight >= 0.0 && self.opponent_policy_weight <= 10.0,
            "train.opponent_policy_weight must be in [0, 10]",
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules() {
        let mut c =
            TrainerConfig { warmup_steps: 10, learning_rate: 1.0, ..TrainerConfig::default() };
        assert!((c.learning_rate_at(0) - 0.1).abs() < 1e-12);
        assert!((c.learning_rate_at(9) - 1.0).abs() < 1e-12);
        assert_eq!(c.learning_rate_at(500), 1.0);
        c.schedule = Schedule::Cosine;
        c.total_steps = 110;
        c.min_learning_rate = 0.0;
        assert!((c.learning_rate_at(10) - 1.0).abs() < 1e-12);
        assert!((c.learning_rate_at(60) - 0.5).abs() < 1e-9);
        assert!(c.learning_rate_at(110).abs() < 1e-12);
        c.schedule = Schedule::Step;
        c.step_milestones = vec![20, 40];
        assert!((c.learning_rate_at(25) - 0.1).abs() < 1e-12);
        assert!((c.learning_rate_at(45) - 0.01).abs() < 1e-12);
    }

    #[test]
    fn value_target_lambda_is_refused_outside_0_to_1_naming_the_key() {
        for lambda in [0.0, 0.75, 0.999] {
            let c = TrainerConfig { value_target_lambda: lambda, ..TrainerConfig::default() };
            assert!(c.validate().is_ok(), "{lambda}");
        }
        for lambda in [1.0, -0.1, f32::NAN] {
            let c = TrainerConfig { value_target_lambda: lambda, ..TrainerConfig::default() };
            let err = c.validate().unwrap_err();
            assert!(err.contains("train.value_target_lambda"), "{lambda}: {err}");
        }
    }
}
