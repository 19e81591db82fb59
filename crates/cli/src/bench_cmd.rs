//! `atomzero bench ...`: argument parsing over `atomzero-bench`, whose measurements print each
//! figure beside a reference measured in the same run.

use anyhow::{Result, anyhow};
use atomzero_nn::{DeviceKind, NetConfig};
use atomzero_selfplay::Batching;
use clap::{Args, Subcommand, ValueEnum};
use std::io::Write;

use crate::config::{Config, ConfigFile};

#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    what: BenchWhat,
}

#[derive(Subcommand, Debug)]
enum BenchWhat {
    /// Search speed: tree work alone with a uniform evaluator (nodes/s on one core), then
    /// self-play with a (randomly initialised) net of the config: positions/s, and how busy the
    /// network is compared with raw batched inference of the same batches.
    Selfplay {
        /// Concurrent trees driven by the one thread.
        #[arg(long, default_value_t = 64)]
        trees: usize,
        /// Visits per tree.
        #[arg(long, default_value_t = 800)]
        visits: u32,
        /// Leaves gathered per tree per round.
        #[arg(long, default_value_t = 4)]
        leaves: usize,
        /// Moves each tree plays after its first search (tree reuse, as in self-play).
        #[arg(long, default_value_t = 7)]
        moves: usize,
        /// Self-play games with the config's net (0 skips this part).
        #[arg(long, default_value_t = 128)]
        games: usize,
        /// How the workers' leaves reach the net: each worker's own batch, one batch shared
        /// by all workers, or both one after the other (compared).
        #[arg(long, value_enum, default_value_t = BatchingArg::Both)]
        batching: BatchingArg,
        /// Config whose `[net]` and `[selfplay]` sections are used (default: the embedded
        /// configs/tiny.toml).
        #[arg(long)]
        config: Option<std::path::PathBuf>,
    },
    /// Network speed: FLOPs, inference positions/s (Burn flex and atomzero-infer) and
    /// training samples/s, for the tiny and default configs.
    Net {
        /// Which preset net to measure.
        #[arg(long, value_enum, default_value_t = NetPreset::Both)]
        config: NetPreset,
        /// Inference batch sizes.
        #[arg(long, value_delimiter = ',', default_value = "1,32,256")]
        batches: Vec<usize>,
        /// Shorter measurements (about a quarter of the time; noisier).
        #[arg(long)]
        quick: bool,
        /// Where Burn runs: cpu (Burn flex against atomzero-infer and onnxruntime, training
        /// with both engines), or cuda / wgpu in a binary built with that feature (Burn
        /// alone: inference and training at every batch size).
        #[arg(long, default_value = "cpu")]
        device: String,
    },
    /// A trainer's ingest rate from a run location: uploads `--shards` shards of `--games`
    /// recorded games each under bench/ingest-*/, then lists, downloads and decodes them one
    /// after the other as the trainer does while it waits for workers, and removes them.
    Ingest {
        /// The location (a directory, s3://bucket/prefix, ...; as `atomzero trainer --run`).
        #[arg(long)]
        run: String,
        /// Shards to upload and ingest.
        #[arg(long, default_value_t = 100)]
        shards: usize,
        /// Games per shard (configs/default.toml: 250).
        #[arg(long, default_value_t = 250)]
        games: usize,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum BatchingArg {
    Worker,
    Shared,
    Both,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum NetPreset {
    Tiny,
    Default,
    Both,
}

impl NetPreset {
    /// The named nets: `tiny` (4x32), `default` (10x128 SE), or both.
    pub(crate) fn nets(self) -> Vec<(&'static str, NetConfig)> {
        match self {
            NetPreset::Tiny => vec![("tiny", NetConfig::tiny())],
            NetPreset::Default => vec![("default", NetConfig::default_size())],
            NetPreset::Both => {
                vec![("tiny", NetConfig::tiny()), ("default", NetConfig::default_size())]
            }
        }
    }
}

pub fn run(args: BenchArgs) -> Result<()> {
    let out = &mut std::io::stdout().lock();
    match args.what {
        BenchWhat::Ingest { run, shards, games } => {
            atomzero_bench::ingest::run(&run, shards, games, out)?
        }
        BenchWhat::Selfplay { trees, visits, leaves, moves, games, batching, config } => {
            atomzero_bench::search::tree(trees, visits, leaves, moves, out)?;
            if games > 0 {
                let config = Config::load(config.as_deref())?;
                let modes = match batching {
                    BatchingArg::Worker => vec![Batching::Worker],
                    BatchingArg::Shared => vec![Batching::Shared],
                    BatchingArg::Both => vec![Batching::Worker, Batching::Shared],
                };
                let mut rates = Vec::new();
                for mode in modes {
                    rates.push(atomzero_bench::selfplay::run(&config, games, mode, out)?);
                }
                if let [worker, shared] = rates[..] {
                    let (busier, ratio) = if worker >= shared {
                        ("each worker's own batch", worker / shared.max(1e-9))
                    } else {
                        ("one shared batch", shared / worker.max(1e-9))
                    };
                    writeln!(
                        out,
                        "batching: worker {worker:.0} vs shared {shared:.0} evaluations/s: \
                         {busier} keeps the network busier ({ratio:.2}x)"
                    )?;
                }
            }
        }
        BenchWhat::Net { config, batches, quick, device } => {
            let configs = config.nets();
            let kind = device.parse::<DeviceKind>().map_err(|e| anyhow!("--device: {e}"))?;
            match kind {
                DeviceKind::Cpu => atomzero_bench::net::run(&configs, &batches, quick, out)?,
                gpu => atomzero_bench::net::run_device(&configs, &batches, gpu, quick, out)?,
            }
        }
    }
    Ok(())
}
