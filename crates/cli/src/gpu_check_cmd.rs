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
}

/// Exit status 0 when every comparison is within its tolerance, 1 when one is not.
pub fn run(args: GpuCheckArgs) -> Result<ExitCode> {
    let kind = args.device.parse::<DeviceKind>().map_err(|e| anyhow!("--device: {e}"))?;
    let out = &mut std::io::stdout().lock();
    let passed = atomzero_bench::gpu::run(kind, &args.config.nets(), out)?;
    Ok(if passed { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
