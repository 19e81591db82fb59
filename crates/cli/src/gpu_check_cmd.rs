//! `atomzero gpu-check`: argument parsing over `atomzero_bench::gpu` (a GPU's forward pass,
//! losses and gradients against the CPU's, with the tolerances stated in that module).

use anyhow::{Result, anyhow};
use atomzero_nn::DeviceKind;
use clap::Args;
use std::process::ExitCode;

use crate::bench_cmd::NetPreset;

#[derive(Args, Debug)]
pub struct GpuCheckArgs {
    /// The device to check against the cpu: cuda or wgpu (in a binary built with that
    /// feature; `cpu` checks the CPU against itself).
    #[arg(long, default_value = "cuda")]
    device: String,
    /// Which preset nets to compare.
    #[arg(long, value_enum, default_value_t = NetPreset::Both)]
    config: NetPreset,
    /// Instead of the nets: one 3x3 convolution of several shapes (input channels 8 to 128),
    /// its forward output and weight gradient against the cpu's, and two rewrites of the
    /// weight gradient (input channels zero-padded to a multiple of 32; im2col and a matrix
    /// product). Finds which shapes a GPU kernel gets wrong.
    #[arg(long)]
    conv_sweep: bool,
    /// The compared device's weights rounded to this many mantissa bits (10: TF32's) before
    /// the comparison; with `--device cpu`, how far that rounding alone moves each figure
    /// (the noise floor under the tolerances).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=23))]
    round_bits: Option<u32>,
}

/// Exit status 0 when every comparison is within its tolerance, 1 when one is not.
pub fn run(args: GpuCheckArgs) -> Result<ExitCode> {
    let kind = args.device.parse::<DeviceKind>().map_err(|e| anyhow!("--device: {e}"))?;
    let out = &mut std::io::stdout().lock();
    let passed = if args.conv_sweep {
        atomzero_bench::gpu::conv_sweep(kind, out)?
    } else {
        atomzero_bench::gpu::run(kind, &args.config.nets(), args.round_bits, out)?
    };
    Ok(if passed { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
