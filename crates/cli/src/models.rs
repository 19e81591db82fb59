//! Turning a model spec (`random`, `uniform` or a network path) into an evaluator.

use anyhow::{Result, bail};
use atomzero_mcts::{Evaluator, RandomEvaluator, UniformEvaluator};

/// A loaded evaluator and the encoder history it wants with each position.
pub struct LoadedModel {
    /// The evaluator.
    pub evaluator: Box<dyn Evaluator + Send + Sync>,
    /// Earlier positions the network encodes.
    pub history: usize,
    /// A name for logs and shard metadata.
    pub name: String,
}

/// Loads `spec`: `random` (seeded random priors and values: generation 0), `uniform` (equal
/// priors, even value: pure MCTS on the rules), or the path of a saved network.
pub fn load(spec: &str, seed: u64) -> Result<LoadedModel> {
    match spec {
        "random" => Ok(LoadedModel {
            evaluator: Box::new(RandomEvaluator { seed }),
            history: 0,
            name: "random".into(),
        }),
        "uniform" => Ok(LoadedModel {
            evaluator: Box::new(UniformEvaluator),
            history: 0,
            name: "uniform".into(),
        }),
        path => {
            if !std::path::Path::new(path).exists() {
                bail!("model '{path}' not found (expected a network file, 'random' or 'uniform')");
            }
            bail!("model '{path}': loading networks is not built yet (use 'random' or 'uniform')")
        }
    }
}
