//! One forward pass on the wgpu backend against the CPU backend (`--features wgpu`; needs an
//! adapter, e.g. Mesa's lavapipe or llvmpipe on a machine without a GPU; run by
//! `scripts/checks/wgpu-lavapipe.sh`). A test file of its own so that building it with the
//! feature compiles only this, not every CPU test against both backends.
#![cfg(feature = "wgpu")]

use atomzero_encoding::{Batch, Encoder};
use atomzero_mcts::Rng;
use atomzero_nn::burn::module::Module;
use atomzero_nn::burn::tensor::{Device, Tensor, TensorData};
use atomzero_nn::{DeviceKind, Net, NetConfig};
use atomzero_rules::{Position, Variant};

/// `n` positions of random atomic games (fixed seed), none of them finished.
fn random_positions(n: usize, seed: u64) -> Vec<Position> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    while out.len() < n {
        let mut position = Position::new(Variant::Atomic);
        for _ in 0..1 + rng.below(60) {
            let moves = position.legal_moves();
            if moves.is_empty() || position.outcome().is_some() {
                break;
            }
            position.play_unchecked(moves[rng.below(moves.len())]);
        }
        if position.outcome().is_none() {
            out.push(position);
        }
    }
    out
}

#[test]
fn wgpu_forward_matches_cpu() {
    let gpu = DeviceKind::Wgpu.device().unwrap();
    atomzero_nn::check_device(&gpu).unwrap();
    let adapter = gpu.identity().map(|identity| (identity.name, identity.fingerprint));
    println!("wgpu adapter: {adapter:?}");
    let config = NetConfig { se_ratio: 4, ..NetConfig::tiny() };
    let cpu = DeviceKind::Cpu.device().unwrap();
    cpu.seed(9);
    let cpu_net = config.init(&cpu).unwrap().valid();
    let gpu_net = cpu_net.clone().to_device(&gpu);
    let positions = random_positions(32, 41);
    let encoder = Encoder::new(config.encoder);
    let mut batch = Batch::new(encoder, positions.len());
    for position in &positions {
        batch.push(position, &[], 0);
    }
    let shape = [positions.len(), encoder.planes(), 8, 8];
    let run = |net: &Net, device: &Device| -> (Vec<f32>, Vec<f32>) {
        let input = TensorData::new(batch.as_slice().to_vec(), shape);
        let out = net.forward(Tensor::from_data(input, device));
        (
            out.policy.into_data().try_into_vec_as::<f32>().unwrap(),
            out.wdl.into_data().try_into_vec_as::<f32>().unwrap(),
        )
    };
    let (cpu_policy, cpu_wdl) = run(&cpu_net, &cpu);
    let (gpu_policy, gpu_wdl) = run(&gpu_net, &gpu);
    assert_eq!(cpu_policy.len(), gpu_policy.len());
    assert_eq!(cpu_wdl.len(), gpu_wdl.len());
    let max_diff = cpu_policy
        .iter()
        .zip(&gpu_policy)
        .chain(cpu_wdl.iter().zip(&gpu_wdl))
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    println!("wgpu vs cpu: max |difference| {max_diff:e}");
    assert!(max_diff < 1e-3, "wgpu and cpu differ by {max_diff}");
}
