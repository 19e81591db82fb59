//! `atomzero bench ...`: throughput figures measured on this machine, each printed beside a
//! reference measured in the same run.

use anyhow::{Context, Result, anyhow, bail};
use atomzero_encoding::{Batch, Encoder, POLICY_SIZE};
use atomzero_infer::{InferEvaluator, InferNet, Workspace};
use atomzero_mcts::{
    EvalRequest, Evaluations, Evaluator, Rng, Search, SearchConfig, UniformEvaluator,
    pending_requests,
};
use atomzero_nn::burn::module::Module;
use atomzero_nn::burn::tensor::{Device, Tensor, TensorData};
use atomzero_nn::{DEFAULT_MAX_BATCH, DeviceKind, NetConfig, NetEvaluator};
use atomzero_replay::{EndReason, GameRecord, MoveRecord, ReplayWindow, SearchTarget};
use atomzero_rules::{Game, MoveList, Position, Variant};
use atomzero_selfplay::{Batching, Openings, SelfplayEvent};
use atomzero_train::TrainerConfig;
use atomzero_train::checkpoint::Engine;
use atomzero_train::data::build_batch;
use atomzero_train::engine::Trainer;
use clap::{Args, Subcommand, ValueEnum};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

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
enum NetPreset {
    Tiny,
    Default,
    Both,
}

pub fn run(args: BenchArgs) -> Result<()> {
    match args.what {
        BenchWhat::Ingest { run, shards, games } => bench_ingest(&run, shards, games),
        BenchWhat::Selfplay { trees, visits, leaves, moves, games, batching, config } => {
            bench_tree(trees, visits, leaves, moves)?;
            if games > 0 {
                let config = Config::load(config.as_deref())?;
                let modes = match batching {
                    BatchingArg::Worker => vec![Batching::Worker],
                    BatchingArg::Shared => vec![Batching::Shared],
                    BatchingArg::Both => vec![Batching::Worker, Batching::Shared],
                };
                let rates: Vec<f64> = modes
                    .iter()
                    .map(|&mode| bench_selfplay_net(&config, games, mode))
                    .collect::<Result<_>>()?;
                if let [worker, shared] = rates[..] {
                    let (busier, ratio) = if worker >= shared {
                        ("each worker's own batch", worker / shared.max(1e-9))
                    } else {
                        ("one shared batch", shared / worker.max(1e-9))
                    };
                    println!(
                        "batching: worker {worker:.0} vs shared {shared:.0} evaluations/s: \
                         {busier} keeps the network busier ({ratio:.2}x)"
                    );
                }
            }
            Ok(())
        }
        BenchWhat::Net { config, batches, quick } => bench_net(config, &batches, quick),
    }
}

/// Side of the square sgemm that measures the machine's peak (2 x 256^3 = 33.6 MFLOP a call:
/// large enough for matrixmultiply's packed kernel to run at full speed, small enough to stay
/// in cache).
const PEAK_N: usize = 256;

/// This machine's f32 multiply-add peak, measured now: GFLOP/s of a cache-resident sgemm
/// (matrixmultiply, which picks its AVX/FMA kernel at run time) on `threads` threads at once.
fn measure_peak_gflops(threads: usize, seconds: f64) -> f64 {
    let a = ndarray::Array2::<f32>::from_shape_fn((PEAK_N, PEAK_N), |(i, j)| {
        ((i * 7 + j) % 13) as f32 / 13.0
    });
    let b = a.t().to_owned();
    let calls = calls_on_threads(
        threads,
        seconds,
        3,
        || ndarray::Array2::<f32>::zeros((PEAK_N, PEAK_N)),
        |c| {
            ndarray::linalg::general_mat_mul(1.0, &a, &b, 0.0, c);
            std::hint::black_box(&c);
            Ok::<(), std::convert::Infallible>(())
        },
    );
    let calls = match calls {
        Ok(calls) => calls,
        Err(never) => match never {},
    };
    calls * 2.0 * (PEAK_N as f64).powi(3) / 1e9
}

/// The peaks the figures are compared with: one thread (atomzero-infer's single calls) and
/// every core (Burn's rayon pool, atomzero-infer on every core, training).
struct Peaks {
    one: f64,
    all: f64,
}
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
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "bench net: Burn flex (rayon over {cores} cores) vs atomzero-infer (one thread per call); \
         median time per call"
    );
    let peaks =
        Peaks { one: measure_peak_gflops(1, seconds), all: measure_peak_gflops(cores, seconds) };
    println!(
        "  peak, measured now: sgemm {PEAK_N}^3 (matrixmultiply) {:.1} GFLOP/s on 1 thread, \
         {:.1} GFLOP/s on {cores}. GFLOP/s below = positions/s x FLOPs/position of the direct \
         convolutions, as a share of the peak of the threads used (1 for atomzero-infer's \
         calls, {cores} for Burn); atomzero-infer's Winograd convolutions do about a quarter of \
         those multiply-adds, so its shares can pass 100%.",
        peaks.one, peaks.all
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
        let mut ort = OrtReference::start(&net, &input, planes);
        match &ort {
            Ok(_) => println!(
                "  reference: onnxruntime on the same exported graph, one thread, alternating with \
                 atomzero-infer in 3 rounds per batch size"
            ),
            Err(why) => println!("  reference: no onnxruntime ({why})"),
        }
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
            let (mut ours_rounds, mut ort_rounds) = (Vec::new(), Vec::new());
            for _ in 0..3 {
                ours_rounds.push(time_median(seconds / 3.0, || {
                    if let Err(e) =
                        infer.forward_into(input, batch, &mut workspace, &mut policy, &mut wdl)
                    {
                        failed = Some(e);
                    }
                }));
                if let Ok(reference) = &mut ort {
                    ort_rounds.push(reference.seconds_per_call(batch, seconds / 3.0)?);
                }
            }
            if let Some(e) = failed {
                return Err(e.into());
            }
            let median = |mut v: Vec<f64>| {
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            };
            let (burn, ours) = (batch as f64 / burn_secs, batch as f64 / median(ours_rounds));
            let reference = if ort_rounds.is_empty() {
                String::new()
            } else {
                let ort = batch as f64 / median(ort_rounds);
                format!(
                    " | onnxruntime {ort:>9.1} pos/s: atomzero-infer {:.2}x onnxruntime",
                    ours / ort
                )
            };
            println!(
                "  infer batch {batch:>4}: burn-flex {burn:>9.1} pos/s ({:>5.1} GFLOP/s, {:>3.0}% of peak) | \
                 atomzero-infer {ours:>9.1} pos/s ({:>5.1} GFLOP/s, {:>3.0}% of peak) | {:.1}x burn{reference}",
                gflops(burn),
                100.0 * gflops(burn) / peaks.all,
                gflops(ours),
                100.0 * gflops(ours) / peaks.one,
                ours / burn
            );
        }
        drop(ort);
        // Self-play's setting: one worker per core, each with its own workspace.
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let batch = max_batch;
        let total = infer_threads(&infer, &input[..batch * planes * 64], batch, threads, seconds)?;
        println!(
            "  atomzero-infer, {threads} threads x 1 call each, batch {batch}: {total:.1} pos/s \
             ({:.1} GFLOP/s, {:.0}% of peak)",
            gflops(total),
            100.0 * gflops(total) / peaks.all
        );
        bench_training(&config, &games, &device, seconds, peaks.all)?;
    }
    Ok(())
}

/// onnxruntime running the same net (exported to ONNX) in a Python process of the project's
/// venv (`scripts/python-env.sh`, or the interpreter named by `ATOMZERO_PYTHON`), driven line
/// by line so that its timings alternate with ours (`scripts/ort_bench.py`, embedded).
struct OrtReference {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
    _dir: TempDir,
}

/// A directory removed when dropped.
struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl OrtReference {
    /// Exports `net`, writes `inputs` and starts the helper; `Err` says why there is none.
    fn start(
        net: &atomzero_nn::Net,
        inputs: &[f32],
        planes: usize,
    ) -> Result<OrtReference, String> {
        use std::io::BufRead;
        let python = match std::env::var_os("ATOMZERO_PYTHON") {
            Some(p) => std::path::PathBuf::from(p),
            None => {
                let home = std::env::var_os("HOME").ok_or("HOME is not set")?;
                std::path::PathBuf::from(home).join(".cache/atomzero/venv/bin/python")
            }
        };
        if !python.exists() {
            return Err(format!(
                "{} not found; `bash scripts/python-env.sh` installs it",
                python.display()
            ));
        }
        let dir =
            TempDir(std::env::temp_dir().join(format!("atomzero-ort-{}", std::process::id())));
        std::fs::create_dir_all(&dir.0).map_err(|e| e.to_string())?;
        let info =
            atomzero_nn::ExportInfo { variant: "atomic".into(), training_step: 0, source: None };
        let onnx = atomzero_nn::to_onnx(net, &info).map_err(|e| e.to_string())?;
        let (model, data, script) =
            (dir.0.join("net.onnx"), dir.0.join("inputs.f32"), dir.0.join("ort_bench.py"));
        let bytes: Vec<u8> = inputs.iter().flat_map(|v| v.to_le_bytes()).collect();
        for (path, content) in [
            (&model, &onnx[..]),
            (&data, &bytes[..]),
            (&script, include_str!("../../../scripts/ort_bench.py").as_bytes()),
        ] {
            std::fs::write(path, content).map_err(|e| e.to_string())?;
        }
        let mut child = std::process::Command::new(&python)
            .arg(&script)
            .arg(&model)
            .arg(&data)
            .arg(planes.to_string())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| format!("{}: {e}", python.display()))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("no pipes to the onnxruntime helper".to_string());
        };
        let mut stdout = std::io::BufReader::new(stdout);
        let mut line = String::new();
        if stdout.read_line(&mut line).map_err(|e| e.to_string())? == 0 || line.trim() != "ready" {
            let _ = child.kill();
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut e, &mut err);
            }
            let last = err.lines().last().unwrap_or("it exited").to_string();
            return Err(format!("the onnxruntime helper did not start: {last}"));
        }
        Ok(OrtReference { child, stdin, stdout, _dir: dir })
    }

    /// onnxruntime's median seconds per call at `batch`, measured for about `seconds`.
    fn seconds_per_call(&mut self, batch: usize, seconds: f64) -> Result<f64> {
        use std::io::{BufRead, Write};
        writeln!(self.stdin, "{batch} {seconds}").context("onnxruntime helper")?;
        self.stdin.flush().context("onnxruntime helper")?;
        let mut line = String::new();
        self.stdout.read_line(&mut line).context("onnxruntime helper")?;
        let mut words = line.split_whitespace();
        match (words.next(), words.next(), words.next().and_then(|w| w.parse::<f64>().ok())) {
            (Some("ort"), Some(_), Some(secs)) if secs > 0.0 => Ok(secs),
            _ => bail!("onnxruntime helper answered '{}'", line.trim()),
        }
    }
}

impl Drop for OrtReference {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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
    let calls_per_sec = calls_on_threads(
        threads,
        seconds,
        2,
        || (Workspace::new(), vec![0.0; batch * POLICY_SIZE], vec![0.0; batch * 3]),
        |(workspace, policy, wdl)| net.forward_into(input, batch, workspace, policy, wdl),
    )?;
    Ok(calls_per_sec * batch as f64)
}

/// Calls per second, summed over `threads` threads that each make at least `min_calls` calls
/// of `call` on their own state from `init`, and go on until `seconds` have passed.
fn calls_on_threads<S, E>(
    threads: usize,
    seconds: f64,
    min_calls: u64,
    init: impl Fn() -> S + Sync,
    call: impl Fn(&mut S) -> Result<(), E> + Sync,
) -> Result<f64, E>
where
    E: Send,
{
    let start = Instant::now();
    let counts: Vec<Result<u64, E>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut state = init();
                    let mut calls = 0u64;
                    while calls < min_calls || start.elapsed().as_secs_f64() < seconds {
                        call(&mut state)?;
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
    Ok(calls as f64 / elapsed)
}

/// Training at batch 256 (forward, backward, AdamW) with each engine, alternating between
/// them in rounds so that both see the same moments of the machine: samples/s, with the share
/// of the host side (replaying games and encoding the batch, as the trainer does), and the
/// ratio of the two.
fn bench_training(
    config: &NetConfig,
    games: &[GameRecord],
    device: &Device,
    seconds: f64,
    peak_gflops: f64,
) -> Result<()> {
    let window = ReplayWindow::from_games(games.to_vec());
    if window.len() < TRAIN_BATCH {
        bail!("synthetic replay window too small ({} positions)", window.len());
    }
    let encoder = Encoder::new(config.encoder);
    let train_config = TrainerConfig::default();
    let mut engines = Vec::new();
    for engine in [Engine::Burn, Engine::Atomzero] {
        if engine == Engine::Atomzero && atomzero_backprop::Params::zeros(config).is_err() {
            println!(
                "  train batch {TRAIN_BATCH} (atomzero-backprop): not supported for this net \
                 (squeeze-excitation); it trains with Burn"
            );
            continue;
        }
        device.seed(8);
        let trainer = Trainer::new(engine, config.init(device)?, &train_config, device)
            .map_err(|e| anyhow!(e))?;
        engines.push((engine, trainer, 0.0f64, 0.0f64, 0u32));
    }
    let mut rng = Rng::new(9);
    let mut batch = atomzero_backprop::SparseBatch::new(encoder.planes());
    let start = Instant::now();
    // Rounds of one step per engine; the first round warms up.
    for round in 0.. {
        if round >= 3 && start.elapsed().as_secs_f64() >= 2.0 * seconds {
            break;
        }
        for (_, trainer, data_secs, compute_secs, steps) in &mut engines {
            let t0 = Instant::now();
            let indices: Vec<usize> = (0..TRAIN_BATCH).map(|_| rng.below(window.len())).collect();
            build_batch(&window, &indices, &encoder, 0.0, &mut batch);
            let t1 = Instant::now();
            let figures = trainer.step(&batch, 1e-4, 1.0).map_err(|e| anyhow!(e))?;
            std::hint::black_box(figures);
            let t2 = Instant::now();
            if round > 0 {
                *data_secs += (t1 - t0).as_secs_f64();
                *compute_secs += (t2 - t1).as_secs_f64();
                *steps += 1;
            }
        }
    }
    let mut rates = Vec::new();
    for (engine, _, data_secs, compute_secs, steps) in &engines {
        let per_step = (data_secs + compute_secs) / f64::from(*steps);
        let samples = TRAIN_BATCH as f64 / per_step;
        // Forward and backward: about three times the forward FLOPs.
        let gflops = samples * 3.0 * config.flops_per_position() as f64 / 1e9;
        let name = match engine {
            Engine::Burn => "burn-flex",
            Engine::Atomzero => "atomzero-backprop",
        };
        println!(
            "  train batch {TRAIN_BATCH} ({name}, AdamW): {samples:.1} samples/s, {:.0} ms/step \
             (host: replay + encode {:.1} ms = {:.1}%; forward+backward+step {:.0} ms); \
             ~{gflops:.1} GFLOP/s (3x forward, direct convolutions), {:.0}% of peak; {steps} steps",
            1e3 * per_step,
            1e3 * data_secs / f64::from(*steps),
            100.0 * data_secs / (data_secs + compute_secs),
            1e3 * compute_secs / f64::from(*steps),
            100.0 * gflops / peak_gflops
        );
        rates.push(samples);
    }
    if let [burn, ours] = rates[..] {
        println!(
            "  training: atomzero-backprop {:.2}x burn-flex (same run, alternating steps)",
            ours / burn
        );
    }
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
                let policy = (0..legal.len().min(8)).map(|i| (legal[i], 1.0 + i as f32)).collect();
                moves.push(MoveRecord {
                    mv,
                    target: Some(SearchTarget { policy, root_wdl: [0.3, 0.4, 0.3] }),
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
/// does (each tree plays `moves` moves after the first search, keeping its subtree), with an
/// evaluator that costs nothing: what remains is tree work and move generation. Repeated for at least 1.5 s; the median repetition is reported.
fn bench_tree(trees: usize, visits: u32, leaves: usize, moves: usize) -> Result<()> {
    if trees == 0 || visits == 0 || leaves == 0 {
        bail!("--trees, --visits and --leaves must be positive");
    }
    // The reference: legal-move generation alone, on a sample of the positions the trees
    // expand (every node costs one generation besides its selection, play and backup). Timed
    // right after each repetition, so both see the same moment of the machine.
    let mut sample = Vec::new();
    tree_run(trees, visits, leaves, moves, Some(&mut sample));
    let start = Instant::now();
    let mut runs: Vec<TreeRun> = Vec::new();
    let mut movegen: Vec<f64> = Vec::new();
    while runs.len() < 3 || start.elapsed().as_secs_f64() < 1.5 {
        runs.push(tree_run(trees, visits, leaves, moves, None));
        movegen.push(movegen_run(&sample));
    }
    runs.sort_by(|a, b| a.nodes_per_sec().total_cmp(&b.nodes_per_sec()));
    movegen.sort_by(f64::total_cmp);
    let median = &runs[runs.len() / 2];
    let best = &runs[runs.len() - 1];
    let movegen = movegen[movegen.len() / 2];
    println!("bench selfplay (tree work alone, uniform evaluator, 1 thread)");
    println!(
        "  {trees} trees x {} moves x {visits} visits (tree reuse), {leaves} leaves/tree/round: \
         {} nodes in {:.3} s; {} repetitions: median {:.0} nodes/s per core (best {:.0})",
        moves + 1,
        median.nodes,
        median.secs,
        runs.len(),
        median.nodes_per_sec(),
        best.nodes_per_sec()
    );
    println!(
        "  {} batches, mean batch {:.1} positions; uniform evaluator share {:.1}% of wall time",
        median.batches,
        median.evaluated as f64 / median.batches.max(1) as f64,
        100.0 * median.eval_secs / median.secs
    );
    println!(
        "  reference, same run: legal-move generation alone on {} of these positions: median {:.0} \
         positions/s; the tree work costs {:.2} generations' time per node",
        sample.len(),
        movegen,
        movegen / median.nodes_per_sec()
    );
    println!(
        "  goal: >= 1,000,000 nodes/s per core ({:.2}x of goal)",
        median.nodes_per_sec() / 1e6
    );
    Ok(())
}

/// Legal-move generations per second over `positions` (passes repeated for at least 0.1 s).
fn movegen_run(positions: &[Position]) -> f64 {
    let mut list = MoveList::new();
    let (mut generated, mut moves) = (0usize, 0usize);
    let start = Instant::now();
    while generated == 0 || start.elapsed().as_secs_f64() < 0.1 {
        for pos in positions {
            pos.legal_moves_into(&mut list);
            moves += list.len();
        }
        generated += positions.len().max(1);
    }
    std::hint::black_box(moves);
    generated as f64 / start.elapsed().as_secs_f64()
}

/// One repetition of [`bench_tree`].
struct TreeRun {
    nodes: u64,
    secs: f64,
    batches: u64,
    evaluated: u64,
    eval_secs: f64,
}

impl TreeRun {
    fn nodes_per_sec(&self) -> f64 {
        self.nodes as f64 / self.secs
    }
}

/// One repetition of [`bench_tree`]; with `sample`, every 16th position sent to the evaluator
/// is copied into it.
fn tree_run(
    trees: usize,
    visits: u32,
    leaves: usize,
    moves: usize,
    mut sample: Option<&mut Vec<Position>>,
) -> TreeRun {
    let start = Instant::now();
    // (search, moves still to play, root visits when this move's search began)
    let mut searches: Vec<(Search, usize, u32)> = (0..trees)
        .map(|i| {
            // Distinct positions: a few plies of a fixed pseudo-random walk.
            let mut pos = Position::new(Variant::Atomic);
            for k in 0..(i % 7) {
                let moves = pos.legal_moves();
                pos.play_unchecked(moves[(i * 31 + k * 17) % moves.len()]);
            }
            (Search::new(&Game::new(pos), SearchConfig::default(), i as u64), moves, 0)
        })
        .collect();
    let evaluator = UniformEvaluator;
    let (mut batches, mut evaluated, mut nodes) = (0u64, 0u64, 0u64);
    let mut eval_secs = 0.0;
    let mut active: Vec<bool> = vec![true; trees];
    loop {
        for (k, (s, left, base)) in searches.iter_mut().enumerate() {
            if !active[k] {
                continue;
            }
            let before = s.root_visits();
            if before >= visits || s.root_proven() != atomzero_mcts::Proven::Unknown {
                // This move's search is done: count its visits, then play on with tree reuse.
                nodes += u64::from(before - *base);
                match s.best_move() {
                    Some(mv) if *left > 0 => {
                        *left -= 1;
                        s.advance(mv);
                        *base = s.root_visits();
                    }
                    _ => {
                        active[k] = false;
                        continue;
                    }
                }
            }
            if s.gather(leaves).is_empty() && s.root_visits() == before {
                // Nothing to search (a finished game at the root).
                active[k] = false;
            }
        }
        if !active.iter().any(|&a| a) {
            break;
        }
        let requests = pending_requests(searches.iter().map(|(s, ..)| s));
        if let Some(sample) = sample.as_deref_mut() {
            let first = (16 - evaluated % 16) % 16;
            sample.extend(requests.iter().skip(first as usize).step_by(16).map(|r| *r.position));
        }
        let t = Instant::now();
        let evals = evaluator.evaluate(&requests);
        eval_secs += t.elapsed().as_secs_f64();
        batches += 1;
        evaluated += requests.len() as u64;
        drop(requests);
        let mut offset = 0;
        for (s, ..) in searches.iter_mut() {
            let n = s.pending().len();
            s.apply(evals.range(offset..offset + n));
            offset += n;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    TreeRun { nodes, secs, batches, evaluated, eval_secs }
}

/// An evaluator that counts its calls, positions and the time spent inside them (summed over
/// threads). With `paired`, every call is followed by the same call again, timed apart: raw
/// inference of the very same batch at the same moment of the machine.
struct TimedEvaluator<E> {
    inner: E,
    paired: bool,
    calls: AtomicU64,
    positions: AtomicU64,
    busy_nanos: AtomicU64,
    raw_nanos: AtomicU64,
}

impl<E> TimedEvaluator<E> {
    fn new(inner: E, paired: bool) -> TimedEvaluator<E> {
        TimedEvaluator {
            inner,
            paired,
            calls: AtomicU64::new(0),
            positions: AtomicU64::new(0),
            busy_nanos: AtomicU64::new(0),
            raw_nanos: AtomicU64::new(0),
        }
    }
}

impl<E: Evaluator> Evaluator for TimedEvaluator<E> {
    fn evaluate(&self, requests: &[EvalRequest<'_>]) -> Evaluations {
        let nanos = |t: Instant| u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let t = Instant::now();
        let out = self.inner.evaluate(requests);
        self.busy_nanos.fetch_add(nanos(t), Ordering::Relaxed);
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.positions.fetch_add(requests.len() as u64, Ordering::Relaxed);
        if self.paired {
            let t = Instant::now();
            std::hint::black_box(self.inner.evaluate(requests));
            self.raw_nanos.fetch_add(nanos(t), Ordering::Relaxed);
        }
        out
    }

    fn name(&self) -> String {
        self.inner.name()
    }

    fn computes_on_calling_thread(&self) -> bool {
        self.inner.computes_on_calling_thread()
    }
}

/// Self-play as `atomzero selfplay` runs it (the config's `[selfplay]` section with
/// `batching`, one worker per core; the config's device: atomzero-infer on the CPU, Burn on a
/// GPU) with a randomly initialised net of the config's architecture: positions/s and the
/// share of the time the network is busy. Then the same games again with every batch
/// evaluated twice, the second time as the reference (raw inference of the same batch at the
/// same moment): how fast the network runs inside self-play. Returns the evaluations per
/// second inside self-play.
fn bench_selfplay_net(config: &Config, games: usize, batching: Batching) -> Result<f64> {
    let variant = config.variant()?;
    let kind = config.device()?;
    let device = DeviceKind::Cpu.device().context("cpu device")?;
    device.seed(config.seed);
    let net = config.net.init(&device)?.valid();
    // As `atomzero selfplay` runs nets: atomzero-infer on the CPU, Burn on a GPU.
    let (network, backend): (Box<dyn Evaluator + Send + Sync>, String) = match kind {
        DeviceKind::Cpu => (Box::new(InferEvaluator::from_net(&net)?), "atomzero-infer".into()),
        gpu => {
            let device = gpu.device().with_context(|| format!("{gpu} device"))?;
            (Box::new(NetEvaluator::new(&net, &device, DEFAULT_MAX_BATCH)), format!("Burn {gpu}"))
        }
    };
    let sp = &atomzero_selfplay::SelfplayConfig { batching, ..config.selfplay.clone() };
    let threads = if sp.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        sp.threads
    };
    let workers = threads.min(games.div_ceil(sp.games_per_worker.max(1))).max(1);
    let openings = Openings::RandomPlies(sp.random_opening_plies);
    // Self-play through `evaluator`: (games, positions, wall seconds).
    let play = |evaluator: &TimedEvaluator<&(dyn Evaluator + Send + Sync)>| {
        let (mut finished, mut plies) = (0usize, 0usize);
        let start = Instant::now();
        atomzero_selfplay::run(
            evaluator,
            sp,
            variant,
            &openings,
            games,
            config.net.encoder.history,
            config.seed,
            |event| {
                if let SelfplayEvent::Game(_, stats) = event {
                    finished += 1;
                    plies += stats.plies;
                }
                true
            },
        );
        (finished, plies, start.elapsed().as_secs_f64())
    };
    let seconds = |nanos: &AtomicU64| nanos.load(Ordering::Relaxed) as f64 / 1e9;

    let evaluator = TimedEvaluator::new(&*network, false);
    let (finished, plies, wall) = play(&evaluator);
    let calls = evaluator.calls.load(Ordering::Relaxed).max(1);
    let evaluated = evaluator.positions.load(Ordering::Relaxed);
    let busy = seconds(&evaluator.busy_nanos) / (wall * workers as f64);
    let mean_batch = evaluated as f64 / calls as f64;
    let inside = evaluated as f64 / wall;
    println!(
        "bench selfplay with the net ({} blocks x {} filters, randomly initialised; \
         {backend}, {workers} workers x {} games, {} batching, {} visits full / {} cheap, \
         {} leaves/tree)",
        config.net.blocks,
        config.net.filters,
        sp.games_per_worker,
        batching.name(),
        sp.visits,
        sp.cheap_visits,
        sp.leaves_per_tree
    );
    println!(
        "  {finished} games, {plies} positions in {wall:.2} s = {:.1} positions/s ({:.2} games/s); \
         {evaluated} evaluations = {inside:.0}/s in {calls} batches (mean {mean_batch:.1})",
        plies as f64 / wall,
        finished as f64 / wall
    );
    // Per-worker batches run on every worker's thread at once; a shared batch runs on one
    // thread at a time while the other workers wait.
    println!("  network busy (time inside evaluate / wall time x workers): {:.1}%", 100.0 * busy);

    let paired = TimedEvaluator::new(&*network, true);
    play(&paired);
    let (inside_secs, raw_secs) = (seconds(&paired.busy_nanos), seconds(&paired.raw_nanos));
    let speed = raw_secs / inside_secs.max(1e-9);
    println!(
        "  reference: the same games again, every batch evaluated a second time right after its \
         call (raw inference of the same batch at the same moment): {:.2} s raw for {:.2} s \
         inside self-play ({} batches): {:.1}% of raw speed",
        raw_secs,
        inside_secs,
        paired.calls.load(Ordering::Relaxed),
        100.0 * speed
    );
    println!(
        "  network utilisation in self-play: {:.1}% busy x {:.1}% of raw speed = {:.1}% (goal >= 90%)",
        100.0 * busy,
        100.0 * speed,
        100.0 * busy * speed
    );
    Ok(inside)
}

/// Uploads `shards` shards of `games` random games to `location`, then times listing,
/// downloading and decoding them (and decoding alone, from memory), and removes them.
fn bench_ingest(location: &str, shards: usize, games: usize) -> Result<()> {
    use atomzero_replay::{ShardMeta, decode_shard, encode_shard};
    use atomzero_store::PutMode;
    let store = atomzero_store::open(location)?;
    let meta = ShardMeta {
        model: "bench".into(),
        generation: 0,
        created_unix: 0,
        note: "atomzero bench ingest".into(),
    };
    let bytes = encode_shard(&meta, &random_games(games, 7));
    let prefix = format!("bench/ingest-{}", atomzero_run::worker::worker_name(Some("b")));
    let t = Instant::now();
    for i in 0..shards {
        store.put(&format!("{prefix}/{i:06}.shard"), &bytes, PutMode::Create)?;
    }
    let upload = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let listed = store.list(&format!("{prefix}/"))?;
    let list = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let (mut n_games, mut n_bytes) = (0usize, 0usize);
    for entry in &listed {
        let object = store.get(&entry.key)?.ok_or_else(|| anyhow!("{} vanished", entry.key))?;
        n_bytes += object.bytes.len();
        n_games += decode_shard(&object.bytes, std::path::Path::new(&entry.key))?.1.len();
    }
    let ingest = t.elapsed().as_secs_f64();
    let t = Instant::now();
    for _ in 0..listed.len() {
        decode_shard(&bytes, std::path::Path::new("memory"))?;
    }
    let decode = t.elapsed().as_secs_f64();
    for entry in &listed {
        store.delete(&entry.key)?;
    }
    if listed.len() != shards || n_games != shards * games {
        bail!("listed {} shards with {n_games} games, uploaded {shards} of {games}", listed.len());
    }
    let n = shards as f64;
    println!(
        "ingest from {location}: {shards} shards of {games} games ({:.1} KB each): upload {:.0} shards/s; \
         list {:.3} s; fetch + decode {:.0} shards/s = {:.0} games/s = {:.1} MB/s (decode alone {:.0} shards/s)",
        bytes.len() as f64 / 1e3,
        n / upload.max(1e-9),
        list,
        n / ingest.max(1e-9),
        n_games as f64 / ingest.max(1e-9),
        n_bytes as f64 / 1e6 / ingest.max(1e-9),
        n / decode.max(1e-9),
    );
    Ok(())
}
