//! `atomzero bench ...`: throughput figures measured on this machine, each printed beside a
//! reference measured in the same run.

use anyhow::{Context, Result, bail};
use atomzero_encoding::{Batch, Encoder, POLICY_SIZE};
use atomzero_infer::{InferNet, Workspace};
use atomzero_mcts::{EvalRequest, Evaluator, Rng, Search, SearchConfig, UniformEvaluator};
use atomzero_nn::burn::module::Module;
use atomzero_nn::burn::tensor::{Device, Tensor, TensorData};
use atomzero_nn::{DeviceKind, NetConfig, TrainBatch, TrainConfig, Trainer};
use atomzero_replay::{EndReason, GameRecord, MoveRecord, ReplayWindow, SearchTarget};
use atomzero_rules::{Game, Position, Variant};
use atomzero_train::data::{HostBatch, build_batch};
use clap::{Args, Subcommand, ValueEnum};
use std::time::Instant;

#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    what: BenchWhat,
}

#[derive(Subcommand, Debug)]
enum BenchWhat {
    /// Search speed: tree work alone with a uniform evaluator (nodes/s on one core).
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
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum NetPreset {
    Tiny,
    Default,
    Both,
}

pub fn run(args: BenchArgs) -> Result<()> {
    match args.what {
        BenchWhat::Selfplay { trees, visits, leaves } => bench_tree(trees, visits, leaves),
        BenchWhat::Net { config, batches, quick } => bench_net(config, &batches, quick),
    }
}

/// The f32 peak of this machine's two cores that the figures are compared with (OpenBLAS
/// sgemm, measured; see issue 4).
const PEAK_GFLOPS: f64 = 175.0;
/// Training batch size.
const TRAIN_BATCH: usize = 256;

fn bench_net(preset: NetPreset, batches: &[usize], quick: bool) -> Result<()> {
    if batches.is_empty() || batches.contains(&0) {
        bail!("--batches needs positive batch sizes");
    }
    let seconds = if quick { 0.4 } else { 1.5 };
    let device = DeviceKind::Cpu.device().context("cpu device")?;
    let configs: Vec<(&str, NetConfig)> = match preset {
        NetPreset::Tiny => vec![("tiny", NetConfig::tiny())],
        NetPreset::Default => vec![("default", NetConfig::default_size())],
        NetPreset::Both => {
            vec![("tiny", NetConfig::tiny()), ("default", NetConfig::default_size())]
        }
    };
    let games = random_games(64, 1);
    println!(
        "bench net: Burn flex (rayon over {} cores) vs atomzero-infer (one thread per call); \
         median time per call",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!(
        "  GFLOP/s = positions/s x FLOPs/position of the direct convolutions; peak = \
         {PEAK_GFLOPS:.0} GFLOP/s (2 cores, sgemm). atomzero-infer's Winograd convolutions do \
         about a quarter of those multiply-adds, so its figures can pass the peak."
    );
    for (name, config) in configs {
        let flops = config.flops_per_position() as f64;
        println!(
            "{name}: {} blocks x {} filters, SE ratio {}, {} input planes: {:.1} MFLOP/position",
            config.blocks,
            config.filters,
            config.se_ratio,
            config.input_planes(),
            flops / 1e6
        );
        device.seed(7);
        let net = config.init(&device)?.valid();
        let infer = InferNet::from_net(&net)?;
        let planes = config.input_planes();
        let max_batch = batches.iter().copied().max().unwrap_or(1);
        let input = encoded_positions(&games, &config, max_batch);
        let gflops = |pos_per_s: f64| pos_per_s * flops / 1e9;
        for &batch in batches {
            let input = &input[..batch * planes * 64];
            let burn_secs = time_median(seconds, || {
                let data = TensorData::new(input.to_vec(), [batch, planes, 8, 8]);
                let output = net.forward(Tensor::<4>::from_data(data, &device));
                let policy = output.policy.into_data();
                let wdl = output.wdl.into_data();
                std::hint::black_box((policy, wdl));
            });
            let mut workspace = Workspace::new();
            let mut policy = vec![0.0; batch * POLICY_SIZE];
            let mut wdl = vec![0.0; batch * 3];
            let mut failed = None;
            let infer_secs = time_median(seconds, || {
                if let Err(e) =
                    infer.forward_into(input, batch, &mut workspace, &mut policy, &mut wdl)
                {
                    failed = Some(e);
                }
            });
            if let Some(e) = failed {
                return Err(e.into());
            }
            let (burn, ours) = (batch as f64 / burn_secs, batch as f64 / infer_secs);
            println!(
                "  infer batch {batch:>4}: burn-flex {burn:>9.1} pos/s ({:>5.1} GFLOP/s, {:>3.0}% of peak) | \
                 atomzero-infer {ours:>9.1} pos/s ({:>5.1} GFLOP/s, {:>3.0}% of peak) | {:.1}x",
                gflops(burn),
                100.0 * gflops(burn) / PEAK_GFLOPS,
                gflops(ours),
                100.0 * gflops(ours) / PEAK_GFLOPS,
                ours / burn
            );
        }
        // Self-play's setting: one worker per core, each with its own workspace.
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let batch = max_batch;
        let total = infer_threads(&infer, &input[..batch * planes * 64], batch, threads, seconds)?;
        println!(
            "  atomzero-infer, {threads} threads x 1 call each, batch {batch}: {total:.1} pos/s \
             ({:.1} GFLOP/s, {:.0}% of peak)",
            gflops(total),
            100.0 * gflops(total) / PEAK_GFLOPS
        );
        bench_training(&config, &games, &device, seconds)?;
    }
    Ok(())
}

/// Aggregate positions/s of `threads` threads, each running forward passes on its own
/// workspace for about `seconds`.
fn infer_threads(
    net: &InferNet,
    input: &[f32],
    batch: usize,
    threads: usize,
    seconds: f64,
) -> Result<f64> {
    let start = Instant::now();
    let counts: Vec<Result<u64, atomzero_infer::InferError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut workspace = Workspace::new();
                    let mut policy = vec![0.0; batch * POLICY_SIZE];
                    let mut wdl = vec![0.0; batch * 3];
                    let mut calls = 0u64;
                    while calls < 2 || start.elapsed().as_secs_f64() < seconds {
                        net.forward_into(input, batch, &mut workspace, &mut policy, &mut wdl)?;
                        calls += 1;
                    }
                    Ok(calls)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or(Ok(0))).collect()
    });
    let elapsed = start.elapsed().as_secs_f64();
    let mut calls = 0;
    for count in counts {
        calls += count?;
    }
    Ok(calls as f64 * batch as f64 / elapsed)
}

/// Training at batch 256 on Burn flex (forward, backward, AdamW): samples/s, with the share
/// of the host side (replaying games and encoding the batch, as the trainer does).
fn bench_training(
    config: &NetConfig,
    games: &[GameRecord],
    device: &Device,
    seconds: f64,
) -> Result<()> {
    let window = ReplayWindow::from_games(games.to_vec());
    if window.len() < TRAIN_BATCH {
        bail!("synthetic replay window too small ({} positions)", window.len());
    }
    let encoder = Encoder::new(config.encoder);
    let planes = encoder.planes();
    device.seed(8);
    let mut trainer = Trainer::new(config.init(device)?, &TrainConfig::default(), device);
    let mut rng = Rng::new(9);
    let mut host = HostBatch::default();
    let (mut data_secs, mut compute_secs, mut steps) = (0.0, 0.0, 0u32);
    let start = Instant::now();
    // One warm-up step, then at least two measured ones.
    for step in 0.. {
        if step >= 3 && start.elapsed().as_secs_f64() >= 2.0 * seconds {
            break;
        }
        let t0 = Instant::now();
        let indices: Vec<usize> = (0..TRAIN_BATCH).map(|_| rng.below(window.len())).collect();
        build_batch(&window, &indices, &encoder, 0.0, &mut host);
        let t1 = Instant::now();
        let batch = TrainBatch::from_slices(
            planes,
            &host.inputs,
            &host.policy,
            &host.legal,
            &host.wdl,
            trainer.device(),
        )?;
        let losses = trainer.step(&batch, 1e-4);
        std::hint::black_box(losses);
        let t2 = Instant::now();
        if step > 0 {
            data_secs += (t1 - t0).as_secs_f64();
            compute_secs += (t2 - t1).as_secs_f64();
            steps += 1;
        }
    }
    let per_step = (data_secs + compute_secs) / f64::from(steps);
    let samples = TRAIN_BATCH as f64 / per_step;
    // Forward and backward: about three times the forward FLOPs.
    let gflops = samples * 3.0 * config.flops_per_position() as f64 / 1e9;
    println!(
        "  train batch {TRAIN_BATCH} (burn-flex, AdamW): {samples:.1} samples/s, {:.0} ms/step \
         (host: replay + encode {:.1} ms = {:.1}%; forward+backward+step {:.0} ms); ~{gflops:.1} \
         GFLOP/s (3x forward), {:.0}% of peak; {steps} steps",
        1e3 * per_step,
        1e3 * data_secs / f64::from(steps),
        100.0 * data_secs / (data_secs + compute_secs),
        1e3 * compute_secs / f64::from(steps),
        100.0 * gflops / PEAK_GFLOPS
    );
    Ok(())
}

/// Median seconds per call of `f`: one warm-up call, then calls until `seconds` have passed
/// (at least 3, at most 2000).
fn time_median(seconds: f64, mut f: impl FnMut()) -> f64 {
    f();
    let mut times = Vec::new();
    let start = Instant::now();
    while times.len() < 3 || (start.elapsed().as_secs_f64() < seconds && times.len() < 2000) {
        let t = Instant::now();
        f();
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// `n` random atomic games (fixed seed) recorded as self-play would, every move a training
/// target with a few visited moves.
fn random_games(n: usize, seed: u64) -> Vec<GameRecord> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| {
            let start = Position::new(Variant::Atomic);
            let mut pos = start;
            let mut moves = Vec::new();
            for _ in 0..80 {
                if pos.outcome().is_some() {
                    break;
                }
                let legal = pos.legal_moves();
                if legal.is_empty() {
                    break;
                }
                let mv = legal[rng.below(legal.len())];
                let visits = (0..legal.len().min(8)).map(|i| (legal[i], 1 + i as u32)).collect();
                moves.push(MoveRecord {
                    mv,
                    target: Some(SearchTarget { visits, root_wdl: [0.3, 0.4, 0.3] }),
                });
                pos.play_unchecked(mv);
            }
            GameRecord {
                variant: Variant::Atomic,
                start_fen: start.fen(),
                chess960: false,
                moves,
                winner: None,
                reason: EndReason::MaxLength,
                resign_disabled: false,
                resign_point: None,
            }
        })
        .collect()
}

/// `[n, planes, 8, 8]` inputs encoded from positions of `games` (repeated if needed).
fn encoded_positions(games: &[GameRecord], config: &NetConfig, n: usize) -> Vec<f32> {
    let window = ReplayWindow::from_games(games.to_vec());
    let encoder = Encoder::new(config.encoder);
    let mut batch = Batch::new(encoder, n);
    let history = config.encoder.history;
    for i in 0..n {
        if let Some(sample) = window.get((i * 7) % window.len().max(1), history) {
            batch.push(&sample.position, &sample.history, sample.repetitions);
        }
    }
    let mut out = batch.as_slice().to_vec();
    out.resize(n * encoder.planes() * 64, 0.0);
    out
}

/// Drives `trees` searches from different positions on this thread, as a self-play worker
/// does, with an evaluator that costs nothing: what remains is tree work and move generation.
fn bench_tree(trees: usize, visits: u32, leaves: usize) -> Result<()> {
    let mut searches: Vec<Search> = (0..trees)
        .map(|i| {
            // Distinct positions: a few plies of a fixed pseudo-random walk.
            let mut pos = Position::new(Variant::Atomic);
            for k in 0..(i % 7) {
                let moves = pos.legal_moves();
                pos.play_unchecked(moves[(i * 31 + k * 17) % moves.len()]);
            }
            Search::new(&Game::new(pos), SearchConfig::default(), i as u64)
        })
        .collect();
    let evaluator = UniformEvaluator;
    let start = Instant::now();
    let (mut batches, mut evaluated) = (0u64, 0u64);
    let mut eval_secs = 0.0;
    loop {
        let mut active = false;
        for s in searches.iter_mut().filter(|s| {
            s.root_visits() < visits && s.root_proven() == atomzero_mcts::Proven::Unknown
        }) {
            s.gather(leaves);
            active = true;
        }
        if !active {
            break;
        }
        let requests: Vec<EvalRequest<'_>> =
            searches.iter().flat_map(|s| s.pending().iter().map(|l| l.request())).collect();
        let t = Instant::now();
        let evals = evaluator.evaluate(&requests);
        eval_secs += t.elapsed().as_secs_f64();
        batches += 1;
        evaluated += requests.len() as u64;
        drop(requests);
        let mut offset = 0;
        for s in searches.iter_mut() {
            let n = s.pending().len();
            s.apply(&evals[offset..offset + n]);
            offset += n;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let nodes: u64 = searches.iter().map(|s| u64::from(s.root_visits())).sum();
    println!("bench selfplay (tree work alone, uniform evaluator, 1 thread)");
    println!(
        "  {trees} trees x {visits} visits, {leaves} leaves/tree/round: {nodes} nodes in {secs:.3} s = {:.0} nodes/s per core",
        nodes as f64 / secs
    );
    println!(
        "  {batches} batches, mean batch {:.1} positions, {evaluated} evaluations; uniform evaluator share {:.1}% of wall time",
        evaluated as f64 / batches.max(1) as f64,
        100.0 * eval_secs / secs
    );
    println!("  goal: >= 1,000,000 nodes/s per core ({:.2}x of goal)", nodes as f64 / secs / 1e6);
    Ok(())
}
