//! The two training engines against each other: atomzero-backprop's CPU step against Burn's
//! autodiff and optimizers on the same weights and batches, plus the CPU step's determinism
//! and its file round trips.
//!
//! Burn's gradient is read off one plain-SGD step at learning rate 1 (`g = θ − θ'`), so the
//! comparison uses only public APIs. Batch norms get random `gamma`, `beta` and running
//! statistics, so a wrong normalisation or a missed term shows.

use atomzero_backprop::{
    CpuTrainer, Optimizer, OptimizerConfig, Params, ParamsError, SparseBatch, StepStats,
};
use atomzero_encoding::{EncoderConfig, POLICY_SIZE};
use atomzero_nn::burn::grad_clipping::GradientClippingConfig;
use atomzero_nn::burn::module::Module;
use atomzero_nn::burn::optim::decay::WeightDecayConfig;
use atomzero_nn::burn::optim::momentum::MomentumConfig;
use atomzero_nn::burn::optim::{AdamWConfig, SgdConfig};
use atomzero_nn::burn::tensor::Device;
use atomzero_nn::{DeviceKind, NetConfig};
use atomzero_train::burn::{BurnTrainer, StepConfig, TrainBatch, gradient_norm, losses};
use atomzero_train::checkpoint::Engine;
use atomzero_train::engine::Trainer;

/// A small deterministic generator.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }

    fn below(&mut self, n: usize) -> usize {
        ((self.next() * n as f32) as usize).min(n - 1)
    }
}

fn device() -> Device {
    DeviceKind::Cpu.device().expect("cpu device")
}

fn small_net(history: usize) -> NetConfig {
    NetConfig {
        blocks: 2,
        filters: 8,
        se_ratio: 0,
        value_hidden: 16,
        value_channels: 2,
        encoder: EncoderConfig { history, ..EncoderConfig::default() },
        opponent_policy: false,
    }
}

/// [`small_net`] with KataGo's opponent-policy head.
fn small_net_with_reply(history: usize) -> NetConfig {
    NetConfig { opponent_policy: true, ..small_net(history) }
}

/// A seeded Burn net's parameters with random batch-norm settings and statistics.
fn random_params(config: &NetConfig, seed: u64) -> Params {
    let device = device();
    device.seed(seed);
    let net = config.init(&device).expect("net");
    let mut params =
        Params::from_safetensors(config, &net.to_safetensors().expect("bytes")).expect("params");
    let mut rng = Lcg(seed);
    for info in params.tensors().to_vec() {
        let values = &mut params.values_mut()[info.range.clone()];
        if info.name.ends_with("gamma") {
            values.iter_mut().for_each(|v| *v = 0.5 + rng.next());
        } else if info.name.ends_with("beta") {
            values.iter_mut().for_each(|v| *v = rng.next() - 0.5);
        }
    }
    params.stats_mut().iter_mut().for_each(|v| *v = 0.2 + rng.next());
    params
}

/// A batch of random inputs, random legal sets with normalised targets and WDL targets; with
/// `replies`, every position but each third also gets random replies whose targets sum to 0.15.
fn random_batch(planes: usize, len: usize, seed: u64) -> SparseBatch {
    random_batch_with(planes, len, seed, false)
}

fn random_batch_with(planes: usize, len: usize, seed: u64, replies: bool) -> SparseBatch {
    let mut rng = Lcg(seed);
    let mut batch = SparseBatch::new(planes);
    let sparse = |rng: &mut Lcg, sum: f32| {
        let moves = 1 + rng.below(40);
        let mut indices: Vec<usize> = (0..moves).map(|_| rng.below(POLICY_SIZE)).collect();
        indices.sort_unstable();
        indices.dedup();
        let weights: Vec<f32> = indices.iter().map(|_| rng.next() + 0.01).collect();
        let total: f32 = weights.iter().sum();
        indices.into_iter().zip(weights).map(|(i, w)| (i, sum * w / total)).collect::<Vec<_>>()
    };
    for p in 0..len {
        let input: Vec<f32> = (0..planes * 64).map(|_| rng.next()).collect();
        let policy = sparse(&mut rng, 1.0);
        let reply = if replies && p % 3 != 2 { sparse(&mut rng, 0.15) } else { Vec::new() };
        let wdl = [rng.next(), rng.next(), rng.next()];
        let w_total: f32 = wdl.iter().sum();
        batch.push_with_reply(&input, policy, reply, wdl.map(|v| v / w_total)).expect("push");
    }
    batch
}

fn burn_batch(batch: &SparseBatch, device: &Device) -> TrainBatch {
    TrainBatch::from_sparse(batch, device).expect("batch")
}

/// Burn's trainer on `params` with `optimizer`, stepped once per batch; returns the losses of
/// each step and the parameters after. Burn's CPU backend splits its reductions over rayon's
/// threads, so its last bits (which AdamW's normalised steps amplify on near-zero gradients)
/// depended on the load; it runs on one rayon thread so the reference is the same every run.
fn burn_steps(
    params: &Params,
    batches: &[SparseBatch],
    lr: f64,
    value_weight: f32,
    optimizer: atomzero_nn::burn::optim::ModuleOptimizer,
) -> (Vec<f32>, Params) {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("rayon pool");
    pool.install(|| burn_steps_here(params, batches, lr, value_weight, optimizer))
}

fn burn_steps_here(
    params: &Params,
    batches: &[SparseBatch],
    lr: f64,
    value_weight: f32,
    optimizer: atomzero_nn::burn::optim::ModuleOptimizer,
) -> (Vec<f32>, Params) {
    let device = device();
    let net = params
        .config()
        .load_safetensors(params.to_safetensors().expect("bytes"), &device)
        .expect("burn net");
    let config = StepConfig { value_loss_weight: value_weight, ..StepConfig::default() };
    let mut trainer = BurnTrainer::new(net, &config, &device);
    trainer.set_optimizer(optimizer);
    let mut losses = Vec::new();
    for batch in batches {
        let b = burn_batch(batch, trainer.device());
        losses.push(trainer.step(&b, lr).total);
    }
    let bytes = trainer.into_net().to_safetensors().expect("bytes");
    (losses, Params::from_safetensors(params.config(), &bytes).expect("params"))
}

fn cpu_steps(
    params: &Params,
    batches: &[SparseBatch],
    lr: f64,
    value_weight: f32,
    config: OptimizerConfig,
    clip: Option<f32>,
) -> (Vec<StepStats>, CpuTrainer) {
    let optimizer = Optimizer::new(config, clip, params.values().len());
    let mut trainer = CpuTrainer::new(params.clone(), optimizer);
    let stats = batches.iter().map(|b| trainer.step(b, lr, value_weight).expect("step")).collect();
    (stats, trainer)
}

/// Max over elements of |a − b| / (tolerance_scale), per tensor, with a message.
fn assert_close(name: &str, a: &[f32], b: &[f32], relative: f32, absolute: f32) {
    let scale = b.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    for (i, (&x, &y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= relative * scale + absolute,
            "{name}[{i}]: {x} vs {y} (largest |value| {scale})"
        );
    }
}

#[test]
fn gradients_and_losses_equal_burns_autodiff() {
    for (history, len, seed, reply) in
        [(0, 7, 1, false), (1, 12, 2, false), (0, 3, 3, false), (0, 9, 4, true), (1, 5, 5, true)]
    {
        let config = if reply { small_net_with_reply(history) } else { small_net(history) };
        let params = random_params(&config, seed);
        let batch = random_batch_with(config.input_planes(), len, seed + 10, reply);
        let value_weight = 0.7;
        let (burn_losses, burn_after) = burn_steps(
            &params,
            std::slice::from_ref(&batch),
            1.0,
            value_weight,
            SgdConfig::new().init(),
        );
        let (stats, trainer) = cpu_steps(
            &params,
            std::slice::from_ref(&batch),
            1.0,
            value_weight,
            OptimizerConfig::Sgd { momentum: 0.0, weight_decay: 0.0 },
            None,
        );
        let ours = trainer.last_gradient();
        assert!(
            (stats[0].total - burn_losses[0]).abs() <= 1e-5 * burn_losses[0].abs(),
            "loss {} vs Burn {}",
            stats[0].total,
            burn_losses[0]
        );
        for info in params.tensors() {
            let r = info.range.clone();
            let burn: Vec<f32> = params.values()[r.clone()]
                .iter()
                .zip(&burn_after.values()[r.clone()])
                .map(|(&before, &after)| before - after)
                .collect();
            assert_close(&info.name, &ours[r], &burn, 2e-3, 1e-6);
        }
        // The running statistics moved the same way.
        assert_close(
            "running statistics",
            trainer.params().stats(),
            burn_after.stats(),
            1e-5,
            1e-6,
        );
        assert!(stats[0].grad_norm > 0.0 && stats[0].entropy > 0.0);
        // The opponent-policy loss took part (and its gradient reached the head's second 73
        // planes, compared with Burn's above).
        assert_eq!(stats[0].reply > 0.0, reply, "reply loss {}", stats[0].reply);
        if reply {
            let out = params.tensors().iter().find(|t| t.name == "policy_out.weight").unwrap();
            let second_half = &ours[out.range.start + out.range.len() / 2..out.range.end];
            assert!(second_half.iter().any(|&g| g != 0.0));
        }
    }
}

/// `atomzero_train::burn::gradients` (what `atomzero gpu-check` compares between devices)
/// names every trained tensor as the weights file does and gives the gradient the CPU step
/// computes, without changing the net.
#[test]
fn named_gradients_are_the_cpu_steps() {
    let config = small_net_with_reply(1);
    let params = random_params(&config, 6);
    let batch = random_batch_with(config.input_planes(), 8, 16, true);
    let value_weight = 0.7;
    let (stats, trainer) = cpu_steps(
        &params,
        std::slice::from_ref(&batch),
        1.0,
        value_weight,
        OptimizerConfig::Sgd { momentum: 0.0, weight_decay: 0.0 },
        None,
    );
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("rayon pool");
    let (losses, gradients, after) = pool.install(|| {
        let device = device().autodiff();
        let bytes = params.to_safetensors().expect("bytes");
        let net = config.load_safetensors(bytes.clone(), &self::device()).expect("net");
        let net = net.to_device(&device).train();
        let (losses, gradients) =
            atomzero_train::burn::gradients(&net, &burn_batch(&batch, &device), value_weight);
        let after = Params::from_safetensors(&config, &net.to_safetensors().expect("bytes"))
            .expect("params");
        (losses, gradients, after.values() == params.values())
    });
    // The trained tensors; the batch norms' running statistics advance as in any
    // training-mode forward pass.
    assert!(after, "computing the gradients changed the net's weights");
    assert!(
        (losses.total - stats[0].total).abs() <= 1e-5 * stats[0].total.abs(),
        "loss {} vs the CPU step's {}",
        losses.total,
        stats[0].total
    );
    let names: Vec<&str> = gradients.iter().map(|g| g.name.as_str()).collect();
    let expected: Vec<&str> = params.tensors().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, expected);
    for (gradient, info) in gradients.iter().zip(params.tensors()) {
        let ours = &trainer.last_gradient()[info.range.clone()];
        assert_close(&info.name, &gradient.values, ours, 2e-3, 1e-6);
    }
}

#[test]
fn adamw_and_nesterov_trajectories_equal_burns() {
    let config = small_net(0);
    let params = random_params(&config, 5);
    let batches: Vec<SparseBatch> =
        (0..3).map(|i| random_batch(config.input_planes(), 9, 20 + i)).collect();
    // AdamW with decay and a clip small enough to bind on some tensors. Adam's normalised
    // steps turn the last bits of near-zero gradients (Burn's reductions differ between runs)
    // into differences proportional to the learning rate, so the rate is small (1e-3) and the
    // decay large (1.0), keeping the decay's effect (1e-3 a step) above the tolerance. The
    // epsilon is 1e-6, not 1e-8: a weight whose gradient cancels to rounding noise (a stem
    // weight failed so once in CI, 2026-12-07: a step of ~0.8 × the rate apart) then moves by
    // noise / 1e-6 × the rate instead of ± the rate. The clipped gradients of the other
    // weights are ~1e-4 and larger, so their steps are still normalised (and an epsilon
    // inside the square root would still be caught).
    const EPSILON: f32 = 1e-6;
    let (burn_losses, burn_after) = burn_steps(
        &params,
        &batches,
        1e-3,
        1.0,
        AdamWConfig::new()
            .with_weight_decay(1.0)
            .with_epsilon(EPSILON)
            .with_grad_clipping(Some(GradientClippingConfig::Norm(0.05)))
            .init(),
    );
    let (stats, trainer) = cpu_steps(
        &params,
        &batches,
        1e-3,
        1.0,
        OptimizerConfig::AdamW { beta1: 0.9, beta2: 0.999, epsilon: EPSILON, weight_decay: 1.0 },
        Some(0.05),
    );
    for (s, b) in stats.iter().zip(&burn_losses) {
        assert!((s.total - b).abs() <= 1e-4 * b.abs(), "AdamW loss {} vs {b}", s.total);
    }
    assert_close("AdamW parameters", trainer.params().values(), burn_after.values(), 1e-4, 1e-6);

    let (burn_losses, burn_after) = burn_steps(
        &params,
        &batches,
        0.05,
        1.0,
        SgdConfig::new()
            .with_momentum(Some(MomentumConfig { momentum: 0.9, dampening: 0.0, nesterov: true }))
            .with_weight_decay(Some(WeightDecayConfig { penalty: 1e-3 }))
            .init(),
    );
    let (stats, trainer) = cpu_steps(
        &params,
        &batches,
        0.05,
        1.0,
        OptimizerConfig::Sgd { momentum: 0.9, weight_decay: 1e-3 },
        None,
    );
    for (s, b) in stats.iter().zip(&burn_losses) {
        assert!((s.total - b).abs() <= 1e-4 * b.abs(), "SGD loss {} vs {b}", s.total);
    }
    assert_close("SGD parameters", trainer.params().values(), burn_after.values(), 1e-4, 1e-6);
}

#[test]
fn a_step_is_the_same_on_one_thread_and_on_several() {
    let config = small_net(0);
    let params = random_params(&config, 7);
    let batches: Vec<SparseBatch> =
        (0..2).map(|i| random_batch(config.input_planes(), 10, 30 + i)).collect();
    let adamw =
        OptimizerConfig::AdamW { beta1: 0.9, beta2: 0.999, epsilon: 1e-8, weight_decay: 1.0 };
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
        pool.install(|| cpu_steps(&params, &batches, 1e-3, 1.0, adamw, Some(10.0)).1)
    };
    let (one, three) = (run(1), run(3));
    assert_eq!(one.params().values(), three.params().values());
    assert_eq!(one.params().stats(), three.params().stats());
}

#[test]
fn parameters_and_optimizer_state_round_trip_and_reject_bad_bytes() {
    let config = small_net(0);
    let params = random_params(&config, 9);
    let bytes = params.to_safetensors().expect("bytes");
    let again = Params::from_safetensors(&config, &bytes).expect("params");
    assert_eq!(again.values(), params.values());
    assert_eq!(again.stats(), params.stats());
    // Burn reads the same file.
    let net = config.load_safetensors(bytes.clone(), &device()).expect("burn");
    let from_burn =
        Params::from_safetensors(&config, &net.to_safetensors().expect("bytes")).expect("params");
    assert_eq!(from_burn.values(), params.values());

    // Another architecture, truncated bytes and squeeze-excitation are refused.
    let other = NetConfig { filters: 16, ..config.clone() };
    assert!(matches!(Params::from_safetensors(&other, &bytes), Err(ParamsError::Weights(_))));
    assert!(matches!(
        Params::from_safetensors(&config, &bytes[..bytes.len() / 2]),
        Err(ParamsError::Weights(_))
    ));
    let se = NetConfig { se_ratio: 2, ..config.clone() };
    assert!(matches!(Params::zeros(&se), Err(ParamsError::Unsupported(_))));

    // Optimizer state: saved, restored, continued identically.
    let adamw =
        OptimizerConfig::AdamW { beta1: 0.9, beta2: 0.999, epsilon: 1e-8, weight_decay: 0.01 };
    let batches: Vec<SparseBatch> =
        (0..3).map(|i| random_batch(config.input_planes(), 6, 40 + i)).collect();
    let (_, whole) = cpu_steps(&params, &batches, 1e-3, 1.0, adamw, None);
    let (_, first) = cpu_steps(&params, &batches[..2], 1e-3, 1.0, adamw, None);
    let state = first.optimizer().to_bytes().expect("state");
    let restored =
        Optimizer::from_bytes(adamw, None, params.values().len(), &state).expect("restore");
    assert_eq!(restored.time(), 2);
    let mut resumed = CpuTrainer::new(first.params().clone(), restored);
    resumed.step(&batches[2], 1e-3, 1.0).expect("step");
    assert_eq!(resumed.params().values(), whole.params().values());
    let sgd = OptimizerConfig::Sgd { momentum: 0.9, weight_decay: 0.0 };
    assert!(Optimizer::from_bytes(sgd, None, params.values().len(), &state).is_err());
    assert!(Optimizer::from_bytes(adamw, None, 3, &state).is_err());
    assert!(Optimizer::from_bytes(adamw, None, params.values().len(), &state[..40]).is_err());
}

/// Cross-entropy floor of a batch: the entropy of its policy and WDL targets.
fn target_entropy(batch: &SparseBatch) -> (f32, f32) {
    let h =
        |p: &[f32]| -> f32 { -p.iter().filter(|&&x| x > 0.0).map(|&x| x * x.ln()).sum::<f32>() };
    let policy: f32 = (0..batch.len).map(|i| h(batch.policy(i).1)).sum::<f32>();
    let value: f32 = batch.wdl.chunks_exact(3).map(h).sum::<f32>();
    (policy / batch.len as f32, value / batch.len as f32)
}

#[test]
fn both_engines_overfit_a_fixed_batch_of_the_tiny_net() {
    let config = NetConfig::tiny();
    let batch = random_batch(config.input_planes(), 64, 33);
    let (policy_floor, value_floor) = target_entropy(&batch);
    let device = device();
    device.seed(7);
    let net = config.init(&device).expect("net");
    let train = atomzero_train::TrainerConfig::default();
    for engine in [Engine::Burn, Engine::Atomzero] {
        let mut trainer = Trainer::new(engine, net.clone(), &train, &device).expect("trainer");
        // Cross-entropy minus its floor (the KL divergence), policy and value together.
        let excess = |f: atomzero_train::engine::Figures| {
            (f.policy - policy_floor) + (f.value - value_floor)
        };
        let first = trainer.step(&batch, 3e-3, 1.0).expect("step");
        let mut last = first;
        for _ in 1..60 {
            last = trainer.step(&batch, 3e-3, 1.0).expect("step");
        }
        // The same batch through the eval-mode net (running batch-norm statistics).
        let trained = trainer.into_net(&device).expect("net").valid();
        let b = burn_batch(&batch, &device);
        let eval = losses(trained.forward(b.inputs.clone()), &b, 1.0).values();
        let eval_excess = (eval.policy - policy_floor) + (eval.value - value_floor);
        assert!(
            excess(last) <= 0.1 * excess(first),
            "{engine:?}: training-mode loss above the floor fell only from {} to {}",
            excess(first),
            excess(last)
        );
        assert!(
            eval_excess <= 0.1 * excess(first),
            "{engine:?}: eval-mode loss above the floor fell only from {} to {eval_excess}",
            excess(first)
        );
    }
}

#[test]
fn train_batch_rejects_mismatched_buffers() {
    let device = device();
    let error = TrainBatch::from_slices(
        24,
        &[0.0; 24 * 64],
        &[0.0; 10],
        &[false; POLICY_SIZE],
        &[0.0; 3],
        &device,
    )
    .unwrap_err();
    assert_eq!(error.buffer, "policy_target");
    assert!(TrainBatch::from_slices(24, &[], &[], &[], &[], &device).is_err());
    // A sparse batch refuses inputs of the wrong size and indices off the policy.
    let mut sparse = SparseBatch::new(24);
    assert!(sparse.push(&[0.0; 10], [], [1.0, 0.0, 0.0]).is_err());
    assert!(sparse.push(&[0.0; 24 * 64], [(POLICY_SIZE, 1.0)], [1.0, 0.0, 0.0]).is_err());
    assert_eq!(sparse.len, 0);
}

#[test]
fn burns_gradient_norm_is_the_l2_norm_of_all_parameter_gradients() {
    use atomzero_nn::burn::optim::GradientsParams;
    let config = NetConfig::tiny();
    let batch = random_batch(config.input_planes(), 16, 41);
    let autodiff = device().autodiff();
    let d = device();
    d.seed(9);
    let net = config.init(&d).expect("net");
    let train_net = net.clone().to_device(&autodiff).train();
    let b = burn_batch(&batch, &autodiff);
    let norm = |scale: f32| {
        let l = losses(train_net.forward(b.inputs.clone()), &b, 1.0);
        let grads = GradientsParams::from_grads(l.total.mul_scalar(scale).backward(), &train_net);
        gradient_norm(&train_net, &grads)
    };
    let (one, three) = (norm(1.0), norm(3.0));
    assert!(one.is_finite() && one > 0.0, "{one}");
    // Gradients are linear in the loss: a parameter left out, a square root forgotten or a
    // double count would break this or the trainers' agreement below.
    assert!((three - 3.0 * one).abs() <= 1e-3 * three, "{one} {three}");
    let mut trainer = BurnTrainer::new(net.clone(), &StepConfig::default(), &d);
    assert!(trainer.last_grad_norm().is_nan());
    trainer.step(&burn_batch(&batch, trainer.device()), 1e-3);
    assert!((trainer.last_grad_norm() - one).abs() <= 1e-3 * one, "{}", trainer.last_grad_norm());
    // atomzero-backprop reports the same global norm.
    let params =
        Params::from_safetensors(&config, &net.to_safetensors().expect("bytes")).expect("params");
    let (stats, _) = cpu_steps(
        &params,
        std::slice::from_ref(&batch),
        1e-3,
        1.0,
        OptimizerConfig::Sgd { momentum: 0.0, weight_decay: 0.0 },
        None,
    );
    assert!((stats[0].grad_norm - one).abs() <= 2e-3 * one, "{} vs {one}", stats[0].grad_norm);
}
