//! The networks the trainer makes: generation 0 (random weights from the seed, or the `init`
//! network) and each generation's candidate, trained from the newest checkpoint towards the
//! step target fixed in `run.json` on the replay window.

use super::Generations;
use crate::error::{Result, RunError};
use crate::layout::{self, model_key, model_name};
use crate::report::GenerationReport;
use crate::state::{read_best, write_best};
use atomzero_belief::BeliefModel;
use atomzero_nn::Provenance;
use atomzero_store::PutMode;
use atomzero_train::{Data, TrainOptions, TrainerConfig, train};
use std::sync::atomic::Ordering;

impl Generations<'_> {
    /// Generation 0: the window's seed shards (`init_window`), the initial network (random
    /// weights from the seed, or the `init` network's), best.json.
    pub(super) fn init(&mut self) -> Result<()> {
        // The seed first: generation 0's network marks generation 0 as done.
        self.seed_window()?;
        let name = model_name(0);
        let key = model_key(&name);
        let exists = self.dir.store().get(&layout::sidecar_key(&key))?.is_some();
        if !exists {
            let path = self.dir.local(&key);
            let device =
                self.config.device()?.device().map_err(|e| RunError::Config(e.to_string()))?;
            let (net, parent) = match &self.init {
                Some(init) => {
                    let (net, _) =
                        atomzero_nn::load_with_config(init, &self.config.net, &device)
                            .map_err(|e| RunError::Network(format!("initial network: {e}")))?;
                    self.observer.line(&format!(
                        "generation 0 is the network {} (not random weights)",
                        init.display()
                    ));
                    (net, Some(init.display().to_string()))
                }
                None => {
                    device.seed(self.config.seed);
                    let net = self
                        .config
                        .net
                        .init(&device)
                        .map_err(|e| RunError::Network(e.to_string()))?;
                    (net, None)
                }
            };
            let provenance = Provenance {
                variant: self.config.variant.clone(),
                training_step: 0,
                parent,
                belief: None,
            };
            net.save(&path, &provenance).map_err(|e| RunError::Network(e.to_string()))?;
            self.dir.publish_network(&key, PutMode::Create)?;
        }
        let current = read_best(self.dir.store())?;
        write_best(self.dir.store(), &name, current.as_ref().map(|(_, v)| v))?;
        Ok(())
    }

    pub(super) fn train(&mut self, generation: u64, report: &mut GenerationReport) -> Result<()> {
        let target = self.state.train_target.ok_or_else(|| RunError::Corrupt {
            location: self.dir.describe(layout::STATE),
            reason: "no train target".into(),
        })?;
        let device = self.config.device()?.device().map_err(|e| RunError::Config(e.to_string()))?;
        self.fetch_checkpoint()?;
        let files = self.window_files(generation)?;
        let init = self.dir.fetch_network(&model_key(&model_name(0)), false)?;
        let steps = self.config.run.steps_per_generation;
        let first_step = target.saturating_sub(steps);
        let factor = self.config.run.learning_rate_factor(generation, self.elapsed());
        let learning_rate = self.config.train.learning_rate * factor;
        if factor < 1.0 && !self.lr_drop_reported {
            self.lr_drop_reported = true;
            self.observer.line(&format!(
                "learning rate {} -> {learning_rate} from generation {generation} (run.lr_drop_at = {})",
                self.config.train.learning_rate, self.config.run.lr_drop_at
            ));
        }
        let checkpoints = self.dir.local(layout::CHECKPOINTS);
        let tensorboard = self.dir.local(layout::TENSORBOARD);
        let selfplay_dir = self.dir.local("selfplay");
        let observer = &mut *self.observer;
        observer.start("train", steps, 0);
        let summary = train(
            TrainOptions {
                data: Data::Files(&files, &selfplay_dir),
                checkpoint_dir: &checkpoints,
                tensorboard_dir: Some(&tensorboard),
                target_step: target,
                init: Some(&init),
                net: self.config.net.clone(),
                config: TrainerConfig { learning_rate, ..self.config.train.clone() },
                variant: self.config.variant.clone(),
                device,
                seed: self.config.seed,
                interrupted: Some(&self.interrupted),
            },
            |r| {
                observer.progress(
                    r.step.saturating_sub(first_step),
                    &format!(
                        "loss {:.3} (policy {:.3}, value {:.3}), {:.0} samples/s",
                        r.total_loss, r.policy_loss, r.value_loss, r.samples_per_sec
                    ),
                );
            },
        )?;
        observer.finish();
        for e in &summary.skipped {
            self.observer
                .warning(&format!("{e} (skipped: its games are not in the training window)"));
        }
        match summary.surprise_measured {
            Some(0) => self.observer.warning(
                "train.policy_surprise_weight: no target in the window has a policy surprise \
                 (shards before format 5, or the bomb variant): sampled uniformly",
            ),
            Some(m) if m < summary.window_len => self.observer.warning(&format!(
                "train.policy_surprise_weight: {} of {} targets in the window have no policy \
                 surprise (shards before format 5, or the bomb variant): weighted as the average",
                summary.window_len - m,
                summary.window_len
            )),
            _ => {}
        }
        if summary.optimizer_restarted {
            self.observer.warning(
                "the newest checkpoint was written by the other training engine; its weights \
                 were resumed with a fresh optimizer state",
            );
        }
        self.publish_checkpoint()?;
        if self.interrupted.load(Ordering::SeqCst) {
            return Ok(());
        }
        let provenance = Provenance {
            variant: self.config.variant.clone(),
            training_step: summary.end_step,
            parent: Some(format!("{}.safetensors", self.best()?.0)),
            belief: summary.belief.as_ref().map(BeliefModel::to_json),
        };
        self.scalar("train/window_positions", generation, summary.window_len as f64);
        report.belief = summary.belief.as_ref().and_then(|b| b.report.as_ref()).map(|r| r.heldout);
        if let Some(belief) = report.belief.filter(|b| b.positions > 0) {
            self.scalar("belief/top1", generation, belief.top1());
            self.scalar("belief/uniform_top1", generation, belief.uniform_top1());
        }
        let key = layout::candidate_key(generation);
        summary
            .net
            .save(&self.dir.local(&key), &provenance)
            .map_err(|e| RunError::Network(e.to_string()))?;
        self.dir.publish_network(&key, PutMode::Overwrite)?;
        let secs = summary.data_secs + summary.compute_secs;
        let samples = (summary.end_step - summary.start_step) * self.config.train.batch_size as u64;
        report.train = Some((
            summary.start_step,
            summary.end_step,
            summary.first_loss,
            summary.last_loss,
            samples as f64 / secs.max(1e-9),
        ));
        Ok(())
    }
}
