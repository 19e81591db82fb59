//! Model specs on the command line: `shipped` (the network in the binary) on top of what
//! `atomzero_run::models` loads (`random`, `uniform`, a network path).

use anyhow::{Result, anyhow, bail};
use atomzero_eval::ModelLoader;
use atomzero_infer::{Precision, PrecisionChoice};
use atomzero_mcts::SearchConfig;
use atomzero_nn::DeviceKind;
pub use atomzero_run::models::LoadedModel;

/// Loads `spec`: `random`, `uniform`, `shipped` or the path of a saved network (its `.json`
/// sidecar beside it), run on `device`.
pub fn load(spec: &str, seed: u64, device: DeviceKind) -> Result<LoadedModel> {
    load_with_precision(spec, seed, device, PrecisionChoice::Fixed(Precision::F32))
}

/// [`load`] with the CPU inference's small-batch arithmetic (`atomzero uci --precision`).
pub fn load_with_precision(
    spec: &str,
    seed: u64,
    device: DeviceKind,
    precision: PrecisionChoice,
) -> Result<LoadedModel> {
    let path;
    let spec = if spec == crate::shipped::SPEC {
        path = crate::shipped::path()?.to_string_lossy().into_owned();
        path.as_str()
    } else {
        spec
    };
    atomzero_run::models::load_with_precision(spec, seed, device, precision)
        .map_err(|e| anyhow!("{e}"))
}

/// Networks for `net:PATH` and `policy:PATH` players (`net:shipped` included).
pub struct NetLoader {
    /// Backend for every loaded net.
    pub device: DeviceKind,
}

impl ModelLoader for NetLoader {
    fn load(&self, path: &str) -> Result<atomzero_eval::SharedEvaluator, String> {
        load(path, 0, self.device).map(|m| m.evaluator).map_err(|e| format!("{e:#}"))
    }

    fn search_config(&self, path: &str) -> SearchConfig {
        let path = match path {
            crate::shipped::SPEC => crate::shipped::path().unwrap_or_default(),
            path => path.into(),
        };
        atomzero_run::models::NetLoader { device: self.device }
            .search_config(&path.to_string_lossy())
    }

    fn belief(&self, path: &str) -> Option<std::sync::Arc<atomzero_belief::BeliefModel>> {
        atomzero_run::models::NetLoader { device: self.device }.belief(path)
    }
}

/// In the bomb variant a network must have the variant's input planes, or it would not see
/// its own bomb: `spec` (a model spec: `random`, `uniform`, `shipped` or a network path) is
/// checked when it names a network file. Other variants need nothing.
pub fn require_bomb_network(variant: atomzero_rules::Variant, spec: &str) -> Result<()> {
    if variant != atomzero_rules::Variant::Bomb {
        return Ok(());
    }
    if spec == crate::shipped::SPEC {
        bail!("the shipped network plays atomic, not the bomb variant");
    }
    let path = std::path::Path::new(spec);
    if path.is_file() {
        let metadata = atomzero_nn::read_metadata(path).map_err(|e| anyhow!("{e}"))?;
        if !metadata.net.encoder.bomb {
            bail!(
                "{}: not a network of the bomb variant (it has no input planes for its own bomb: \
                 net.encoder.bomb = false)",
                path.display()
            );
        }
    }
    Ok(())
}
