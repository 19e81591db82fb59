//! `atomzero uci`: the UCI engine on stdin/stdout, with networks loaded by this binary.

use crate::config::{Config, ConfigFile};
use crate::models;
use anyhow::{Result, anyhow};
use atomzero_infer::PrecisionChoice;
use atomzero_uci::{EngineConfig, LoadedModel, ModelLoadError, run_stdio};
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct UciArgs {
    /// Network to play with (also settable with `setoption name Model value PATH`; `random`
    /// and `uniform` work too). Default: the network shipped in the binary (nets/README.md);
    /// `--model uniform` plays pure MCTS with uniform priors.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Config file (for the network device).
    #[arg(long)]
    config: Option<PathBuf>,
    /// The default of the `Start` option: standard, or balanced (`position startpos` is then
    /// the Balanced start's setup position, and the engine's first move a removal like `@e2`).
    #[arg(long, default_value = "standard")]
    start: String,
    /// Arithmetic of the network's small batches on the CPU: `auto` (where the CPU has AVX-512
    /// BF16, FP16 or AMX-BF16 tiles, f32 and each of those is timed on the loaded net and the
    /// fastest kept only if at least 1.05x f32's speed; else f32), `f32`, `bf16` (AVX-512 BF16),
    /// `f16` (AVX-512 FP16) or `amx` (bf16 products on AMX tiles); a named one the CPU lacks is
    /// an error. docs/experiments.md, Changes 8, 14, 15 and 21, have the measurements.
    #[arg(long, default_value = "auto")]
    precision: String,
}

pub fn run(args: UciArgs) -> Result<()> {
    let config = Config::load(args.config.as_deref())?;
    let device = config.device()?;
    let mut engine = EngineConfig {
        name: format!("atomzero {}", env!("CARGO_PKG_VERSION")),
        ..EngineConfig::default()
    };
    engine.options.start = args.start.parse().map_err(|e| anyhow!("--start: {e}"))?;
    let precision: PrecisionChoice =
        args.precision.parse().map_err(|e| anyhow!("--precision: {e}"))?;
    // Refused here, not at the first load: the engine would otherwise start and play with
    // uniform priors after an `info string error`.
    if let PrecisionChoice::Fixed(fixed) = precision
        && !fixed.supported()
    {
        return Err(anyhow!("--precision: {}", atomzero_infer::InferError::Unsupported(fixed)));
    }
    // A network named on the command line must load: an engine that silently fell back to
    // uniform priors would lose every game of a match without saying why (lc0 also refuses
    // to start without its weights). `setoption name Model` keeps the fallback. The network
    // loaded here is the one the engine's first load of that path gets.
    let mut preloaded = None;
    engine.options.model = match args.model {
        Some(model) => {
            let loaded =
                models::load_with_precision(&model.to_string_lossy(), 0, device, precision)
                    .map_err(|e| anyhow!("--model {}: cannot load: {e:#}", model.display()))?;
            preloaded = Some((model.clone(), loaded));
            Some(model)
        }
        None => Some(crate::shipped::path()?),
    };
    let loader = move |path: &Path, _threads: usize| {
        let loaded = match preloaded.take() {
            Some((preloaded_path, m)) if preloaded_path == path => Ok(m),
            _ => models::load_with_precision(&path.to_string_lossy(), 0, device, precision),
        };
        loaded
            .map(|m| LoadedModel::new(m.evaluator).with_history(m.history))
            .map_err(|e| ModelLoadError::new(format!("{e:#}")))
    };
    run_stdio(engine, loader).map_err(|e| anyhow!("uci: {e}"))
}
