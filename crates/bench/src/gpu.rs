//! `atomzero gpu-check`: a GPU backend (cuda, wgpu) against the CPU on the same weights and
//! inputs. For each net (the `tiny` and `default` presets): the forward pass in eval mode
//! (policy and WDL logits of 64 positions), then one training step's losses and the gradient
//! of every parameter (training mode, a batch of 64 positions with search targets) against
//! Burn's CPU backend, and for a net atomzero-backprop implements (no squeeze-excitation)
//! against its CPU step too. The weights are first moved off their initial values by two
//! AdamW steps on the CPU, so batch norm's running statistics and the weights are not the
//! initialiser's.
//!
//! Each figure is the largest absolute difference over a tensor divided by the largest
//! absolute value of the CPU's tensor (a loss: its difference over the CPU's total loss; a
//! gradient: the relative L2 difference), compared with a tolerance that allows TF32 on
//! tensor cores (cubek's matmul uses it for f32 where the GPU has it: a 10-bit mantissa, ~1e-3
//! relative per product) and a different order of summation, while a wrong kernel (a
//! transposed weight, a missing term) is off by the order of the values themselves.

use crate::error::{BenchError, Context, Result};
use crate::util::{encoded_positions, random_games};
use atomzero_backprop::{CpuTrainer, Optimizer, OptimizerConfig, Params, SparseBatch};
use atomzero_encoding::Encoder;
use atomzero_nn::burn::module::Module;
use atomzero_nn::burn::tensor::{Device, Tensor, TensorData};
use atomzero_nn::{DeviceKind, Net, NetConfig};
use atomzero_replay::ReplayWindow;
use atomzero_train::burn::{BurnTrainer, NamedGradient, StepConfig, TrainBatch, gradients};
use atomzero_train::data::build_batch;
use std::io::Write;
use std::time::Instant;

/// Largest |GPU − CPU| of a forward output over the largest |CPU value| of that output.
pub const FORWARD_TOLERANCE: f32 = 1e-2;
/// |GPU − CPU| of a loss over the CPU's total loss (see [`loss_difference`]).
pub const LOSS_TOLERANCE: f32 = 1e-3;
/// A parameter's gradient in the net check: the relative L2 difference ‖GPU − CPU‖ / ‖CPU‖
/// ([`relative_l2`]); in the convolution sweep, the largest difference over the largest value,
/// as for the forward pass. TF32's rounding alone moves the net check's figures by up to
/// 3.4e-2 (`gpu-check --device cpu --round-bits 10`, the CPU against itself with the weights
/// rounded to TF32's 10 mantissa bits: 3.37e-2 on the tiny net, 6.98e-3 on the default net;
/// the largest-difference figure of the same gradients reached 9.23e-2, one entry's noise
/// among thousands), so the tolerance sits above that floor and well below the faults seen on
/// an H200 (3.5e-1 to 7.7e-1 as largest differences: a weight-gradient kernel wrong for 16-24
/// input channels; docs/gpu.md). Until 2026-11-28 the net check used the largest difference
/// with a batch whose value targets were all draws, so that the value loss was ~0 and the
/// value head's gradients were not really compared.
pub const GRADIENT_TOLERANCE: f32 = 1e-1;
/// Positions of the forward comparison and of the training batch.
const POSITIONS: usize = 64;

/// The largest difference of two buffers relative to the reference's largest magnitude
/// (absolute when the reference is all zeros); `None` when the lengths differ or a value is
/// not finite.
pub fn relative_difference(values: &[f32], reference: &[f32]) -> Option<f32> {
    if values.len() != reference.len() || values.iter().chain(reference).any(|v| !v.is_finite()) {
        return None;
    }
    let scale = reference.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let largest = values.iter().zip(reference).fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
    Some(if scale > 0.0 { largest / scale } else { largest })
}

/// ‖values − reference‖₂ / ‖reference‖₂ (absolute when the reference is all zeros); `None`
/// when the lengths differ or a value is not finite. Rounding noise spread over a tensor
/// counts by its size, not by its largest entry; a wrong kernel is off by the order of the
/// values either way.
pub fn relative_l2(values: &[f32], reference: &[f32]) -> Option<f32> {
    if values.len() != reference.len() || values.iter().chain(reference).any(|v| !v.is_finite()) {
        return None;
    }
    let diff: f64 = values.iter().zip(reference).map(|(a, b)| f64::from(a - b).powi(2)).sum();
    let norm: f64 = reference.iter().map(|b| f64::from(*b).powi(2)).sum();
    Some(if norm > 0.0 { (diff / norm).sqrt() } else { diff.sqrt() } as f32)
}

/// |GPU − CPU| of one loss over the CPU's total loss (the scale the training step works at;
/// absolute when that is 0); `None` when a value is not finite. Over the partial loss itself,
/// a part near zero turns float rounding into a failure: on an H200 over wgpu the tiny net's
/// value loss was 0.000028 against the CPU's 0.000027, 2.68e-3 of itself and 2.5e-8 of the
/// total loss (2.900726 on both).
pub fn loss_difference(gpu: f32, cpu: f32, cpu_total: f32) -> Option<f32> {
    if !(gpu.is_finite() && cpu.is_finite() && cpu_total.is_finite()) {
        return None;
    }
    let scale = cpu_total.abs();
    Some(if scale > 0.0 { (gpu - cpu).abs() / scale } else { (gpu - cpu).abs() })
}

/// Tallies the comparisons and writes one line each.
struct Verdicts<'a> {
    out: &'a mut dyn Write,
    failed: Vec<String>,
}

impl Verdicts<'_> {
    /// Writes `what: figure (tolerance): ok|FAILED` and remembers a failure.
    fn check(&mut self, what: &str, figure: Option<f32>, tolerance: f32) -> Result<()> {
        let ok = figure.is_some_and(|f| f <= tolerance);
        let shown = figure
            .map_or("not comparable (length or non-finite)".to_string(), |f| format!("{f:.2e}"));
        writeln!(
            self.out,
            "  {what}: {shown} (tolerance {tolerance:.0e}): {}",
            if ok { "ok" } else { "FAILED" }
        )?;
        if !ok {
            self.failed.push(what.to_string());
        }
        Ok(())
    }

    /// The worst of named gradients against the reference's, as one line.
    fn gradients(
        &mut self,
        what: &str,
        ours: &[NamedGradient],
        reference: &[(String, Vec<f32>)],
    ) -> Result<()> {
        let mut worst: Option<(f32, &str)> = None;
        let mut missing = Vec::new();
        let mut over = Vec::new();
        for (name, values) in reference {
            match ours.iter().find(|g| &g.name == name) {
                Some(g) => {
                    let d = relative_l2(&g.values, values).unwrap_or(f32::INFINITY);
                    if worst.is_none_or(|(w, _)| d > w) {
                        worst = Some((d, name));
                    }
                    if d > GRADIENT_TOLERANCE || !d.is_finite() {
                        over.push(format!("{name} {d:.2e}"));
                    }
                }
                None => missing.push(name.as_str()),
            }
        }
        if !missing.is_empty() || ours.len() != reference.len() {
            writeln!(
                self.out,
                "  {what}: FAILED, {} gradients against {} (missing: {})",
                ours.len(),
                reference.len(),
                missing.join(", ")
            )?;
            self.failed.push(what.to_string());
            return Ok(());
        }
        let (figure, name) = worst.unwrap_or((0.0, "none"));
        let label = format!("{what}, {} tensors, relative L2, worst {name}", reference.len());
        self.check(&label, figure.is_finite().then_some(figure), GRADIENT_TOLERANCE)?;
        if !over.is_empty() {
            writeln!(self.out, "    over the tolerance ({}): {}", over.len(), over.join(", "))?;
        }
        Ok(())
    }
}

/// Reads a tensor back to the host.
fn host<const D: usize>(tensor: Tensor<D>) -> Result<Vec<f32>> {
    tensor.into_data().try_into_vec_as::<f32>().map_err(|e| format!("{e:?}")).context("read back")
}

/// `x` rounded to the nearest value with `bits` mantissa bits (ties to even; 23 or more: `x`).
fn round_mantissa(x: f32, bits: u32) -> f32 {
    if bits >= 23 || !x.is_finite() {
        return x;
    }
    let drop = 23 - bits;
    let u = x.to_bits();
    let odd = (u >> drop) & 1;
    let rounded = u.wrapping_add((1 << (drop - 1)) - 1 + odd) & !((1u32 << drop) - 1);
    f32::from_bits(rounded)
}

/// Rounds every float parameter of a module with [`round_mantissa`].
struct RoundMantissa(u32);

impl atomzero_nn::burn::module::ModuleMapper for RoundMantissa {
    fn map_float<const D: usize>(
        &mut self,
        param: atomzero_nn::burn::module::Param<Tensor<D>>,
    ) -> atomzero_nn::burn::module::Param<Tensor<D>> {
        let bits = self.0;
        param.map(|tensor| {
            let device = tensor.device();
            let shape = tensor.shape();
            let values: Vec<f32> =
                tensor.into_data().try_to_vec::<f32>().expect("the net's parameters are f32");
            let rounded: Vec<f32> = values.into_iter().map(|v| round_mantissa(v, bits)).collect();
            Tensor::from_data(TensorData::new(rounded, shape), &device)
        })
    }
}

/// A training batch of `batch` on `device`.
fn train_batch(batch: &SparseBatch, device: &Device) -> Result<TrainBatch> {
    let (policy, legal) = batch.dense();
    TrainBatch::from_slices(batch.planes, &batch.inputs, &policy, &legal, &batch.wdl, device)
        .context("training batch")
}

/// The losses (total, policy, value) and named gradients of `net` on `batch` on `device`.
fn step_on(
    net: &Net,
    batch: &SparseBatch,
    device: &Device,
) -> Result<([f32; 3], Vec<NamedGradient>)> {
    let device = device.clone().autodiff();
    let net = net.clone().to_device(&device).train();
    let (losses, grads) = gradients(&net, &train_batch(batch, &device)?, 1.0);
    Ok(([losses.total, losses.policy, losses.value], grads))
}

/// Compares `kind` with the CPU on each named net (`atomzero gpu-check`: the `tiny` and
/// `default` presets; see the module docs); writes one line per comparison and returns
/// whether all passed. Errors are failures to run at all (no device, a net that cannot be
/// built).
///
/// `round_bits`: the compared side's weights rounded to that many mantissa bits first (10:
/// TF32's), so that `--device cpu` measures how far rounding alone moves each figure: the
/// noise floor the tolerances must sit above.
pub fn run(
    kind: DeviceKind,
    nets: &[(&str, NetConfig)],
    round_bits: Option<u32>,
    out: &mut dyn Write,
) -> Result<bool> {
    let start = Instant::now();
    let gpu = kind.device().map_err(|e| BenchError::msg(e.to_string()))?;
    let cpu = DeviceKind::Cpu.device().context("cpu device")?;
    let name = atomzero_nn::device_name(&gpu);
    let weights = match round_bits {
        Some(bits) => format!("{kind}'s weights rounded to {bits} mantissa bits"),
        None => "same weights".to_string(),
    };
    writeln!(
        out,
        "gpu-check: {kind} ({name}) against the cpu (Burn flex; atomzero-backprop where it \
         implements the net), {weights} and inputs"
    )?;
    let mut verdicts = Verdicts { out, failed: Vec::new() };
    let games = random_games(POSITIONS, 3);
    let window = ReplayWindow::from_games(games.clone());
    for (preset, config) in nets {
        writeln!(
            verdicts.out,
            "{preset}: {} blocks x {} filters, SE ratio {}",
            config.blocks, config.filters, config.se_ratio
        )?;
        let encoder = Encoder::new(config.encoder);
        let mut batch = SparseBatch::new(encoder.planes());
        let indices: Vec<usize> = (0..POSITIONS).map(|i| (i * 13) % window.len()).collect();
        build_batch(&window, &indices, &encoder, 0.0, 0.0, &mut batch);

        // Weights off their initial values: two AdamW steps on the CPU.
        cpu.seed(11);
        let net = config.init(&cpu).context("net")?;
        let mut trainer = BurnTrainer::new(net, &StepConfig::default(), &cpu);
        let on_cpu = train_batch(&batch, trainer.device())?;
        for _ in 0..2 {
            trainer.step(&on_cpu, 1e-2);
        }
        let net = trainer.into_net().valid();
        // The net the compared device runs: `net`, or a copy with its weights rounded.
        let rounded = round_bits.map(|bits| net.clone().map(&mut RoundMantissa(bits)));
        let compared = rounded.as_ref().unwrap_or(&net);

        // Forward, eval mode.
        let planes = encoder.planes();
        let input = encoded_positions(&games, config, POSITIONS);
        let forward = |net: &Net, device: &Device| -> Result<(Vec<f32>, Vec<f32>)> {
            let data = TensorData::new(input.clone(), [POSITIONS, planes, 8, 8]);
            let output = net.forward(Tensor::from_data(data, device));
            Ok((host(output.policy)?, host(output.wdl)?))
        };
        let (cpu_policy, cpu_wdl) = forward(&net, &cpu)?;
        let t0 = Instant::now();
        let (gpu_policy, gpu_wdl) = forward(&compared.clone().to_device(&gpu), &gpu)?;
        // The first call on a device compiles (and autotunes) its kernels: how long it took.
        let what = format!("forward, {POSITIONS} positions ({:.1} s)", t0.elapsed().as_secs_f64());
        verdicts.check(
            &format!("{what}: policy logits"),
            relative_difference(&gpu_policy, &cpu_policy),
            FORWARD_TOLERANCE,
        )?;
        verdicts.check(
            &format!("{what}: WDL logits"),
            relative_difference(&gpu_wdl, &cpu_wdl),
            FORWARD_TOLERANCE,
        )?;

        // One training step's losses and gradients, training mode.
        let (cpu_losses, cpu_grads) = step_on(&net, &batch, &cpu)?;
        let t0 = Instant::now();
        let (gpu_losses, gpu_grads) = step_on(compared, &batch, &gpu)?;
        let step_secs = t0.elapsed().as_secs_f64();
        for (i, loss) in ["total", "policy", "value"].iter().enumerate() {
            verdicts.check(
                &format!(
                    "training step, batch {POSITIONS} ({step_secs:.1} s): {loss} loss {:.6} vs \
                     cpu {:.6}",
                    gpu_losses[i], cpu_losses[i]
                ),
                loss_difference(gpu_losses[i], cpu_losses[i], cpu_losses[0]),
                LOSS_TOLERANCE,
            )?;
        }
        let reference: Vec<(String, Vec<f32>)> =
            cpu_grads.into_iter().map(|g| (g.name, g.values)).collect();
        verdicts.gradients("gradients vs Burn flex", &gpu_grads, &reference)?;

        // atomzero-backprop, the CPU engine that trains nets without squeeze-excitation.
        if let Ok(bytes) = net.to_safetensors()
            && let Ok(params) = Params::from_safetensors(config, &bytes)
        {
            let sgd = OptimizerConfig::Sgd { momentum: 0.0, weight_decay: 0.0 };
            let optimizer = Optimizer::new(sgd, None, params.values().len());
            let mut cpu_trainer = CpuTrainer::new(params.clone(), optimizer);
            let stats = cpu_trainer.step(&batch, 0.0, 1.0).context("atomzero-backprop step")?;
            verdicts.check(
                &format!(
                    "atomzero-backprop: total loss {:.6} vs gpu {:.6}",
                    stats.total, gpu_losses[0]
                ),
                loss_difference(gpu_losses[0], stats.total, stats.total),
                LOSS_TOLERANCE,
            )?;
            let reference: Vec<(String, Vec<f32>)> = params
                .tensors()
                .iter()
                .map(|t| (t.name.clone(), cpu_trainer.last_gradient()[t.range.clone()].to_vec()))
                .collect();
            verdicts.gradients("gradients vs atomzero-backprop", &gpu_grads, &reference)?;
        }
    }
    let Verdicts { out, failed } = verdicts;
    let secs = start.elapsed().as_secs_f64();
    if failed.is_empty() {
        writeln!(out, "gpu-check: passed ({secs:.1} s)")?;
    } else {
        writeln!(out, "gpu-check: FAILED ({secs:.1} s): {}", failed.join("; "))?;
    }
    Ok(failed.is_empty())
}

/// One convolution of the sweep: input channels, output channels, batch, and whether the
/// input is 0/1 planes (as the encoder writes them) or dense values.
const SWEEP: [(usize, usize, usize, bool); 7] = [
    (24, 32, 64, true),
    (32, 32, 64, false),
    (24, 32, 64, false),
    (24, 128, 64, true),
    (16, 32, 64, false),
    (20, 32, 64, false),
    (128, 128, 64, false),
];

/// Deterministic values for the sweep: 0/1 with probability 1/8 (`binary`) or uniform in
/// [-1, 1).
fn sweep_values(n: usize, seed: u64, binary: bool) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let unit = (state >> 40) as f32 / (1u64 << 24) as f32; // [0, 1)
            if binary { f32::from(unit < 0.125) } else { 2.0 * unit - 1.0 }
        })
        .collect()
}

/// `atomzero gpu-check --conv-sweep`: one 3×3 convolution (padding 1, no bias) of several
/// shapes on `kind` against the CPU: the forward output, the weight gradient from Burn's
/// `conv2d_weight_backward` and through autodiff (the trainer's route), and two rewrites of
/// the weight gradient that avoid the shape: the input channels zero-padded to a multiple of
/// 32 (the padded rows of the gradient dropped), and im2col (`unfold4d`) followed by a
/// matrix product. Written to find which kernel gives the stem's weight gradient its error on
/// CUDA (the stem is the one convolution with 24 input channels) and which rewrite avoids it.
/// Each figure as in [`run`]; returns whether every plain figure passed.
pub fn conv_sweep(kind: DeviceKind, out: &mut dyn Write) -> Result<bool> {
    conv_sweep_of(kind, &SWEEP, out)
}

/// [`conv_sweep`] over the given shapes.
fn conv_sweep_of(
    kind: DeviceKind,
    shapes: &[(usize, usize, usize, bool)],
    out: &mut dyn Write,
) -> Result<bool> {
    use atomzero_nn::burn::tensor::module::{conv2d, conv2d_weight_backward, unfold4d};
    use atomzero_nn::burn::tensor::ops::{ConvOptions, UnfoldOptions};

    let gpu = kind.device().map_err(|e| BenchError::msg(e.to_string()))?;
    let cpu = DeviceKind::Cpu.device().context("cpu device")?;
    writeln!(
        out,
        "conv sweep: {kind} ({}) against the cpu, 3x3 convolution, padding 1, 8x8 boards",
        atomzero_nn::device_name(&gpu)
    )?;
    let options = || ConvOptions::new([1, 1], [1, 1], [1, 1], 1);
    let mut verdicts = Verdicts { out, failed: Vec::new() };
    for (i, &(cin, cout, batch, binary)) in shapes.iter().enumerate() {
        let seed = 100 + i as u64 * 3;
        let x = sweep_values(batch * cin * 64, seed, binary);
        let w = sweep_values(cout * cin * 9, seed + 1, false);
        let g = sweep_values(batch * cout * 64, seed + 2, false);
        let padded = cin.next_multiple_of(32);
        // Everything one device computes: forward, wgrad (direct, autodiff, padded, im2col).
        let compute = |device: &Device| -> Result<[Vec<f32>; 5]> {
            let t = |data: &[f32], shape: [usize; 4], device: &Device| {
                Tensor::<4>::from_data(TensorData::new(data.to_vec(), shape), device)
            };
            let xt = t(&x, [batch, cin, 8, 8], device);
            let wt = t(&w, [cout, cin, 3, 3], device);
            let gt = t(&g, [batch, cout, 8, 8], device);
            let forward = host(conv2d(xt.clone(), wt.clone(), None, options()))?;
            let direct =
                host(conv2d_weight_backward(xt.clone(), wt.clone(), gt.clone(), options()))?;
            // Autodiff, as the trainer's backward pass reaches the kernel.
            let ad = device.clone().autodiff();
            let wa = t(&w, [cout, cin, 3, 3], &ad).require_grad();
            let y = conv2d(t(&x, [batch, cin, 8, 8], &ad), wa.clone(), None, options());
            let loss = (y * t(&g, [batch, cout, 8, 8], &ad)).sum();
            let grads = loss.backward();
            let autodiff = match wa.grad(&grads) {
                Some(grad) => host(grad)?,
                None => Vec::new(),
            };
            // Zero-padded input channels.
            let pad = padded - cin;
            let (xp, wp) = if pad == 0 {
                (xt.clone(), wt.clone())
            } else {
                (
                    Tensor::cat(vec![xt.clone(), Tensor::zeros([batch, pad, 8, 8], device)], 1),
                    Tensor::cat(vec![wt.clone(), Tensor::zeros([cout, pad, 3, 3], device)], 1),
                )
            };
            let padded_grad = conv2d_weight_backward(xp, wp, gt.clone(), options());
            let padded_grad = host(padded_grad.narrow(1, 0, cin))?;
            // im2col: [B, cin*9, 64] columns; dW = sum over batch of g [cout, 64] x cols^T.
            let cols = unfold4d(xt, [3, 3], UnfoldOptions::new([1, 1], [1, 1], [1, 1]));
            let g3 = gt.reshape([batch, cout, 64]);
            let im2col = g3.matmul(cols.swap_dims(1, 2)).sum_dim(0); // [1, cout, cin*9]
            let im2col = host(im2col.reshape([cout, cin, 3, 3]))?;
            Ok([forward, direct, autodiff, padded_grad, im2col])
        };
        let reference = compute(&cpu)?;
        let t0 = Instant::now();
        let ours = compute(&gpu)?;
        let secs = t0.elapsed().as_secs_f64();
        let label = format!(
            "{cin:>3} -> {cout:>3}, batch {batch:>3}, {} input ({secs:.1} s)",
            if binary { "0/1" } else { "dense" }
        );
        let names = [
            ("forward", FORWARD_TOLERANCE),
            ("weight gradient", GRADIENT_TOLERANCE),
            ("weight gradient via autodiff", GRADIENT_TOLERANCE),
        ];
        for (k, (name, tolerance)) in names.iter().enumerate() {
            verdicts.check(
                &format!("{label}: {name}"),
                relative_difference(&ours[k], &reference[k]),
                *tolerance,
            )?;
        }
        // The rewrites: figures only, against the CPU's plain weight gradient.
        let figure = |v: &[f32]| match relative_difference(v, &reference[1]) {
            Some(f) => format!("{f:.2e}"),
            None => "not comparable".to_string(),
        };
        writeln!(
            verdicts.out,
            "    rewrites: padded to {padded} channels {}, im2col {} (cpu's own: {}, {})",
            figure(&ours[3]),
            figure(&ours[4]),
            figure(&reference[3]),
            figure(&reference[4]),
        )?;
    }
    let Verdicts { out, failed } = verdicts;
    if failed.is_empty() {
        writeln!(out, "conv sweep: passed")?;
    } else {
        writeln!(out, "conv sweep: FAILED: {}", failed.join("; "))?;
    }
    Ok(failed.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mantissas_round_to_nearest_even() {
        assert_eq!(round_mantissa(1.0, 10), 1.0);
        let ulp = 2f32.powi(-10);
        // Just over half an ulp rounds up, just under rounds down, a tie goes to even.
        assert_eq!(round_mantissa(1.0 + 0.5 * ulp + 1e-6, 10), 1.0 + ulp);
        assert_eq!(round_mantissa(1.0 + 0.5 * ulp - 1e-6, 10), 1.0);
        assert_eq!(round_mantissa(1.0 + 0.5 * ulp, 10), 1.0);
        assert_eq!(round_mantissa(1.0 + 1.5 * ulp, 10), 1.0 + 2.0 * ulp);
        assert_eq!(round_mantissa(-3.1, 10), -round_mantissa(3.1, 10));
        assert_eq!(round_mantissa(0.1, 23), 0.1);
        let r = round_mantissa(0.1, 10);
        assert!(r != 0.1 && (r - 0.1).abs() <= 0.1 * 2f32.powi(-11));
    }

    #[test]
    fn differences_are_relative_to_the_reference() {
        assert_eq!(relative_difference(&[1.0, 2.0], &[1.0, 2.0]), Some(0.0));
        let d = relative_difference(&[1.0, 2.1], &[1.0, 2.0]).unwrap();
        assert!((d - 0.05).abs() < 1e-6, "{d}");
        assert_eq!(relative_difference(&[0.5], &[0.0]), Some(0.5));
        assert_eq!(relative_difference(&[1.0], &[1.0, 2.0]), None);
        assert_eq!(relative_difference(&[f32::NAN], &[1.0]), None);
    }

    /// The relative L2 difference: exact on simple vectors, absolute against zeros, `None`
    /// for mismatched lengths or non-finite values; one entry off by 50% of the largest
    /// counts less than all of them off by 50%.
    #[test]
    fn relative_l2_is_the_norm_of_the_difference() {
        assert_eq!(relative_l2(&[3.0, 4.0], &[3.0, 4.0]), Some(0.0));
        let d = relative_l2(&[3.0, 4.0], &[0.0, 0.0]).unwrap();
        assert!((d - 5.0).abs() < 1e-6, "{d}");
        let d = relative_l2(&[1.5, 2.0, 2.0, 2.0], &[2.0; 4]).unwrap();
        assert!((d - 0.125).abs() < 1e-6, "{d}");
        let d = relative_l2(&[1.0; 4], &[2.0; 4]).unwrap();
        assert!((d - 0.5).abs() < 1e-6, "{d}");
        assert_eq!(relative_l2(&[1.0], &[1.0, 2.0]), None);
        assert_eq!(relative_l2(&[f32::INFINITY], &[1.0]), None);
    }

    /// A partial loss is compared at the total loss's scale: wgpu's value loss on the H200
    /// (0.000028 against 0.000027 of a total 2.900726) passes, a policy loss off by 1% of the
    /// total fails, and a non-finite loss is not comparable.
    #[test]
    fn losses_are_compared_at_the_total_losss_scale() {
        let value = loss_difference(0.000_028, 0.000_027, 2.900_726).unwrap();
        assert!(value < 1e-6, "{value}");
        let policy = loss_difference(2.93, 2.90, 2.90).unwrap();
        assert!(policy > LOSS_TOLERANCE, "{policy}");
        assert_eq!(loss_difference(0.5, 0.25, 0.0), Some(0.25));
        assert_eq!(loss_difference(f32::NAN, 1.0, 1.0), None);
        assert_eq!(loss_difference(1.0, 1.0, f32::INFINITY), None);
    }

    /// The whole check with the CPU as the "GPU" on the tiny net: every line ok.
    #[test]
    fn the_cpu_passes_against_itself() {
        let mut out = Vec::new();
        assert!(run(DeviceKind::Cpu, &[("tiny", NetConfig::tiny())], None, &mut out).unwrap());
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("gradients vs atomzero-backprop"), "{text}");
        assert!(!text.contains("FAILED"), "{text}");
        // Forward (2), losses (3), gradients (1); atomzero-backprop's loss and gradients (2).
        assert_eq!(text.matches(": ok").count(), 8, "{text}");
    }

    /// TF32's rounding of the weights (10 mantissa bits) moves the tiny net's figures (so
    /// the rounding happened) but keeps every one within its tolerance: the tolerances sit
    /// above the noise floor of the arithmetic a GPU uses for f32.
    #[test]
    fn rounding_to_tf32_stays_within_the_tolerances() {
        let mut out = Vec::new();
        let passed = run(DeviceKind::Cpu, &[("tiny", NetConfig::tiny())], Some(10), &mut out);
        let text = String::from_utf8(out).unwrap();
        assert!(passed.unwrap(), "{text}");
        assert!(text.contains("rounded to 10 mantissa bits"), "{text}");
        let figures: Vec<f32> = text
            .lines()
            .filter(|l| l.contains("gradients vs"))
            .filter_map(|l| l.split(": ").nth(1)?.split(' ').next()?.parse().ok())
            .collect();
        assert_eq!(figures.len(), 2, "{text}");
        assert!(figures.iter().all(|&f| f > 1e-3), "the rounding changed nothing: {text}");
    }

    /// The sweep (small shapes) with the CPU as the "GPU": every figure within its
    /// tolerance, and each rewrite agrees with the plain weight gradient on the CPU itself (so
    /// a GPU figure off is the GPU's kernel, not the rewrite).
    #[test]
    fn the_conv_sweep_passes_on_the_cpu() {
        let shapes = [(24, 32, 4, true), (20, 16, 4, false)];
        let mut out = Vec::new();
        assert!(conv_sweep_of(DeviceKind::Cpu, &shapes, &mut out).unwrap());
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.matches("): ok").count(), 3 * shapes.len(), "{text}");
        assert!(!text.contains("FAILED"), "{text}");
        let rewrites: Vec<&str> = text.lines().filter(|l| l.contains("rewrites")).collect();
        assert_eq!(rewrites.len(), shapes.len(), "{text}");
        for line in rewrites {
            let figures: Vec<f32> = line
                .split([' ', ',', '(', ')'])
                .filter(|w| w.contains('e'))
                .filter_map(|w| w.parse::<f32>().ok())
                .collect();
            assert_eq!(figures.len(), 4, "{line}");
            assert!(figures.iter().all(|f| *f < 1e-4), "{line}");
        }
    }
}
