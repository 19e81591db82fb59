//! Networks as evaluators: a model spec (`random`, `uniform`, or the path of a saved network
//! with its JSON sidecar) becomes an [`Evaluator`]. On `device = "cpu"` a network runs on
//! atomzero-infer (our own CPU inference, checked against Burn in its tests); on `cuda` and
//! `wgpu` on Burn. [`NetLoader`] serves the evaluator's `net:`/`policy:` players. A network of
//! the bomb variant brings the belief saved in its sidecar ([`LoadedModel::belief`]).

use atomzero_belief::BeliefModel;
use atomzero_eval::ModelLoader;
use atomzero_infer::{InferEvaluator, InferNet, Precision, PrecisionChoice};
use atomzero_mcts::{Evaluator, RandomEvaluator, SearchConfig, UniformEvaluator};
use atomzero_nn::{DEFAULT_MAX_BATCH, DeviceKind, NetEvaluator, NetMetadata};
use std::path::Path;
use std::sync::Arc;

/// A loaded evaluator and the encoder history it wants with each position.
pub struct LoadedModel {
    /// The evaluator.
    pub evaluator: Arc<dyn Evaluator + Send + Sync>,
    /// Earlier positions the network encodes.
    pub history: usize,
    /// A name for logs and shard metadata.
    pub name: String,
    /// The bomb variant's belief over the opponent's bomb saved with the network (`None`:
    /// none saved, e.g. the initial network; searches then draw worlds uniformly).
    pub belief: Option<Arc<BeliefModel>>,
}

impl std::fmt::Debug for LoadedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedModel")
            .field("name", &self.name)
            .field("history", &self.history)
            .finish()
    }
}

/// Loads `spec`: `random` (seeded random priors and values), `uniform` (equal priors, even
/// value: pure MCTS on the rules), or the path of a saved network, run on `device` (on the
/// CPU in f32: self-play, gates and matches).
pub fn load(spec: &str, seed: u64, device: DeviceKind) -> Result<LoadedModel, String> {
    load_with_precision(spec, seed, device, PrecisionChoice::Fixed(Precision::F32))
}

/// [`load`] with the CPU inference's small-batch arithmetic (`atomzero uci --precision`):
/// `auto` measures f32 against bf16 and f16 on the loaded net where the CPU has AVX-512 BF16 or
/// FP16 ([`InferNet::with_choice`]) and the model's name says what it picked; bf16 or f16 named
/// on a CPU without them is an error.
pub fn load_with_precision(
    spec: &str,
    seed: u64,
    device: DeviceKind,
    precision: PrecisionChoice,
) -> Result<LoadedModel, String> {
    match spec {
        "random" => Ok(LoadedModel {
            evaluator: Arc::new(RandomEvaluator { seed }),
            history: 0,
            name: "random".into(),
            belief: None,
        }),
        "uniform" => Ok(LoadedModel {
            evaluator: Arc::new(UniformEvaluator),
            history: 0,
            name: "uniform".into(),
            belief: None,
        }),
        path => {
            if !Path::new(path).exists() {
                return Err(format!(
                    "model '{path}' not found (expected a network file, 'random' or 'uniform')"
                ));
            }
            let name = Path::new(path)
                .file_stem()
                .map_or(path.to_string(), |s| s.to_string_lossy().into_owned());
            let (evaluator, metadata): (Arc<dyn Evaluator + Send + Sync>, _) = match device {
                // On the CPU, our own inference (atomzero-infer): 3-6x Burn flex at self-play
                // batch sizes and single-threaded per call, so every worker keeps a core busy.
                DeviceKind::Cpu => {
                    let (net, metadata) =
                        InferNet::load(Path::new(path)).map_err(|e| e.to_string())?;
                    let (net, calibration) =
                        net.with_choice(precision).map_err(|e| e.to_string())?;
                    // Named so that `atomzero uci`'s "model loaded" line says which arithmetic,
                    // and for `auto`, what it measured.
                    let shown = match (net.precision(), calibration) {
                        (Precision::F32, None) => name.clone(),
                        (precision, None) => format!("{name}, {precision} products"),
                        (Precision::F32, Some(c)) => {
                            format!("{name}, f32 (auto: {})", c.summary())
                        }
                        (precision, Some(c)) => {
                            format!("{name}, {precision} products (auto: {})", c.summary())
                        }
                    };
                    let evaluator = InferEvaluator::new(net, DEFAULT_MAX_BATCH);
                    (Arc::new(evaluator.with_name(shown)), metadata)
                }
                DeviceKind::Cuda | DeviceKind::Wgpu => {
                    let device = device.device().map_err(|e| e.to_string())?;
                    let (net, metadata) =
                        atomzero_nn::load(Path::new(path), &device).map_err(|e| e.to_string())?;
                    let evaluator =
                        NetEvaluator::new(&net, &device, DEFAULT_MAX_BATCH).with_name(name.clone());
                    (Arc::new(evaluator), metadata)
                }
            };
            let belief = belief_of(&metadata)?;
            Ok(LoadedModel { evaluator, history: metadata.net.encoder.history, name, belief })
        }
    }
}

/// The belief saved in a network's sidecar, checked.
fn belief_of(metadata: &NetMetadata) -> Result<Option<Arc<BeliefModel>>, String> {
    metadata
        .belief
        .as_ref()
        .map(|json| BeliefModel::from_json(json).map(Arc::new).map_err(|e| e.to_string()))
        .transpose()
}

/// Networks for `net:PATH` and `policy:PATH` players.
#[derive(Clone, Copy, Debug)]
pub struct NetLoader {
    /// Backend for every loaded net.
    pub device: DeviceKind,
}

impl ModelLoader for NetLoader {
    fn load(&self, path: &str) -> Result<atomzero_eval::SharedEvaluator, String> {
        load(path, 0, self.device).map(|m| m.evaluator)
    }

    fn search_config(&self, path: &str) -> SearchConfig {
        let history =
            atomzero_nn::read_metadata(Path::new(path)).map_or(0, |m| m.net.encoder.history);
        SearchConfig { history, ..SearchConfig::default().without_noise() }
    }

    fn belief(&self, path: &str) -> Option<Arc<BeliefModel>> {
        atomzero_nn::read_metadata(Path::new(path)).ok().and_then(|m| belief_of(&m).ok().flatten())
    }
}
