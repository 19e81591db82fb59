//! `atomzero bench net`: the network's speed for inference and training, against the
//! machine's sgemm peak and onnxruntime measured in the same run.

use crate::error::{BenchError, Context, Result};
use crate::util::{encoded_positions, random_games, time_median};
use atomzero_encoding::{Encoder, POLICY_SIZE};
use atomzero_infer::calibrate::AUTO_MIN_RATIO;
use atomzero_infer::net::takes_small_path;
use atomzero_infer::{InferNet, Precision, Workspace};
use atomzero_mcts::Rng;
use atomzero_nn::burn::module::Module;
use atomzero_nn::burn::tensor::{Device, Tensor, TensorData};
use atomzero_nn::{DeviceKind, NetConfig};
use atomzero_replay::{GameRecord, ReplayWindow};
use atomzero_train::TrainerConfig;
use atomzero_train::checkpoint::Engine;
use atomzero_train::data::build_batch;
use atomzero_train::engine::Trainer;
use std::io::Write;
use std::time::Instant;

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

/// Measures each named net config at the batch sizes (`quick`: about a quarter of the time).
pub fn run(
    configs: &[(&str, NetConfig)],
    batches: &[usize],
    quick: bool,
    out: &mut dyn Write,
) -> Result<()> {
    if batches.is_empty() || batches.contains(&0) {
        return Err(BenchError::msg("--batches needs positive batch sizes"));
    }
    let seconds = if quick { 0.4 } else { 1.5 };
    let device = DeviceKind::Cpu.device().context("cpu device")?;
    let games = random_games(64, 1);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    writeln!(
        out,
        "bench net: Burn flex (rayon over {cores} cores) vs atomzero-infer (one thread per call); \
         median time per call"
    )?;
    let peaks =
        Peaks { one: measure_peak_gflops(1, seconds), all: measure_peak_gflops(cores, seconds) };
    writeln!(
        out,
        "  peak, measured now: sgemm {PEAK_N}^3 (matrixmultiply) {:.1} GFLOP/s on 1 thread, \
         {:.1} GFLOP/s on {cores}. GFLOP/s below = positions/s x FLOPs/position of the direct \
         convolutions, as a share of the peak of the threads used (1 for atomzero-infer's \
         calls, {cores} for Burn); atomzero-infer's Winograd convolutions do about a quarter of \
         those multiply-adds, so its shares can pass 100%.",
        peaks.one, peaks.all
    )?;
    for (name, config) in configs {
        let (name, config) = (*name, config.clone());
        let flops = config.flops_per_position() as f64;
        write_header(out, name, &config)?;
        device.seed(7);
        let net = config.init(&device).context("net")?.valid();
        let infer = InferNet::from_net(&net).context("atomzero-infer")?;
        // The small path's bf16, f16 and amx products, where the CPU has them (`atomzero uci
        // --precision auto` keeps the fastest).
        let mut narrow = Vec::new();
        for precision in Precision::NARROW.into_iter().filter(|p| p.supported()) {
            let net = infer.clone().with_precision(precision);
            narrow.push((precision, net.context(format!("atomzero-infer {precision}"))?));
        }
        let planes = config.input_planes();
        let max_batch = batches.iter().copied().max().unwrap_or(1);
        let input = encoded_positions(&games, &config, max_batch);
        let gflops = |pos_per_s: f64| pos_per_s * flops / 1e9;
        let mut ort = OrtReference::start(&net, &input, planes);
        match &ort {
            Ok(_) => writeln!(
                out,
                "  reference: onnxruntime on the same exported graph, one thread, alternating with \
                 atomzero-infer in 3 rounds per batch size"
            )?,
            Err(why) => writeln!(out, "  reference: no onnxruntime ({why})")?,
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
                return Err(BenchError::msg(format!("atomzero-infer: {e}")));
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
            writeln!(
                out,
                "  infer batch {batch:>4}: burn-flex {burn:>9.1} pos/s ({:>5.1} GFLOP/s, {:>3.0}% of peak) | \
                 atomzero-infer {ours:>9.1} pos/s ({:>5.1} GFLOP/s, {:>3.0}% of peak) | {:.1}x burn{reference}",
                gflops(burn),
                100.0 * gflops(burn) / peaks.all,
                gflops(ours),
                100.0 * gflops(ours) / peaks.one,
                ours / burn
            )?;
            for (precision, narrow) in
                narrow.iter().filter(|_| takes_small_path(batch, config.filters))
            {
                let (mut f32_rounds, mut narrow_rounds) = (Vec::new(), Vec::new());
                let mut failed = None;
                let mut run = |net: &InferNet| {
                    time_median(seconds / 3.0, || {
                        if let Err(e) =
                            net.forward_into(input, batch, &mut workspace, &mut policy, &mut wdl)
                        {
                            failed = Some(e);
                        }
                    })
                };
                for _ in 0..3 {
                    f32_rounds.push(run(&infer));
                    narrow_rounds.push(run(narrow));
                }
                if let Some(e) = failed {
                    return Err(BenchError::msg(format!("atomzero-infer: {e}")));
                }
                let (f32s, narrows) =
                    (batch as f64 / median(f32_rounds), batch as f64 / median(narrow_rounds));
                let feature = precision.needs();
                writeln!(
                    out,
                    "    {precision} products ({feature}; atomzero uci's auto keeps the fastest at >= {AUTO_MIN_RATIO}x): {narrows:>9.1} pos/s \
                     against f32 {f32s:>9.1} in the same rounds: {:.2}x",
                    narrows / f32s
                )?;
            }
        }
        drop(ort);
        // Self-play's setting: one worker per core, each with its own workspace.
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let batch = max_batch;
        let total = infer_threads(&infer, &input[..batch * planes * 64], batch, threads, seconds)?;
        writeln!(
            out,
            "  atomzero-infer, {threads} threads x 1 call each, batch {batch}: {total:.1} pos/s \
             ({:.1} GFLOP/s, {:.0}% of peak)",
            gflops(total),
            100.0 * gflops(total) / peaks.all
        )?;
        training(&config, &games, &device, seconds, peaks.all, out)?;
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
            _ => Err(BenchError::msg(format!("onnxruntime helper answered '{}'", line.trim()))),
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
    )
    .context("atomzero-infer")?;
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
fn training(
    config: &NetConfig,
    games: &[GameRecord],
    device: &Device,
    seconds: f64,
    peak_gflops: f64,
    out: &mut dyn Write,
) -> Result<()> {
    let window = ReplayWindow::from_games(games.to_vec());
    if window.len() < TRAIN_BATCH {
        return Err(BenchError::msg(format!(
            "synthetic replay window too small ({} positions)",
            window.len()
        )));
    }
    let encoder = Encoder::new(config.encoder);
    let train_config = TrainerConfig::default();
    let mut engines = Vec::new();
    for engine in [Engine::Burn, Engine::Atomzero] {
        if engine == Engine::Atomzero && atomzero_backprop::Params::zeros(config).is_err() {
            writeln!(
                out,
                "  train batch {TRAIN_BATCH} (atomzero-backprop): not supported for this net \
                 (squeeze-excitation); it trains with Burn"
            )?;
            continue;
        }
        device.seed(8);
        let net = config.init(device).context("net")?;
        let trainer = Trainer::new(engine, net, &train_config, device)
            .context(format!("{engine:?} trainer"))?;
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
            build_batch(&window, &indices, &encoder, 0.0, 0.0, &mut batch);
            let t1 = Instant::now();
            let figures = trainer.step(&batch, 1e-4, 1.0).context("training step")?;
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
        writeln!(
            out,
            "  train batch {TRAIN_BATCH} ({name}, AdamW): {samples:.1} samples/s, {:.0} ms/step \
             (host: replay + encode {:.1} ms = {:.1}%; forward+backward+step {:.0} ms); \
             ~{gflops:.1} GFLOP/s (3x forward, direct convolutions), {:.0}% of peak; {steps} steps",
            1e3 * per_step,
            1e3 * data_secs / f64::from(*steps),
            100.0 * data_secs / (data_secs + compute_secs),
            1e3 * compute_secs / f64::from(*steps),
            100.0 * gflops / peak_gflops
        )?;
        rates.push(samples);
    }
    if let [burn, ours] = rates[..] {
        writeln!(
            out,
            "  training: atomzero-backprop {:.2}x burn-flex (same run, alternating steps)",
            ours / burn
        )?;
    }
    Ok(())
}

/// `atomzero bench net --device cuda|wgpu`: Burn on a GPU (CubeCL with fusion and autotune).
/// For each named net: inference positions/s at each batch size (a call uploads the encoded
/// batch, runs the net in eval mode and reads both outputs back, as [`atomzero_nn::NetEvaluator`]
/// does in self-play), then training samples/s at each batch size (the trainer's step with
/// AdamW: the host replays and encodes the batch, uploads it, forward, backward and update on
/// the GPU, the losses read back), with the host's share. The first calls of every shape
/// compile kernels and autotune; they are run before timing starts and are not counted.
pub fn run_device(
    configs: &[(&str, NetConfig)],
    batches: &[usize],
    kind: DeviceKind,
    quick: bool,
    out: &mut dyn Write,
) -> Result<()> {
    if batches.is_empty() || batches.contains(&0) {
        return Err(BenchError::msg("--batches needs positive batch sizes"));
    }
    let seconds = if quick { 0.5 } else { 2.0 };
    let device = kind.device().map_err(|e| BenchError::msg(e.to_string()))?;
    let name = atomzero_nn::device_name(&device);
    writeln!(
        out,
        "bench net on {kind} ({name}): Burn, median time per call after 3 untimed warm-up calls \
         per shape (kernel compilation, autotuning)"
    )?;
    let max_batch = batches.iter().copied().max().unwrap_or(1);
    let games = random_games(64, 1);
    let window = ReplayWindow::from_games(games.clone());
    for (name, config) in configs {
        let flops = config.flops_per_position() as f64;
        write_header(out, name, config)?;
        device.seed(7);
        let net = config.init(&device).context("net")?.valid();
        let planes = config.input_planes();
        let input = encoded_positions(&games, config, max_batch);
        for &batch in batches {
            let input = &input[..batch * planes * 64];
            let call = || {
                let data = TensorData::new(input.to_vec(), [batch, planes, 8, 8]);
                let output = net.forward(Tensor::<4>::from_data(data, &device));
                std::hint::black_box((output.policy.into_data(), output.wdl.into_data()));
            };
            for _ in 0..2 {
                call();
            }
            let secs = time_median(seconds, call);
            let rate = batch as f64 / secs;
            writeln!(
                out,
                "  infer batch {batch:>5}: {rate:>10.1} positions/s, {:>7.2} ms/call ({:.1} \
                 TFLOP/s of the direct convolutions)",
                1e3 * secs,
                rate * flops / 1e12
            )?;
        }
        let encoder = Encoder::new(config.encoder);
        let mut rng = Rng::new(9);
        let mut sparse = atomzero_backprop::SparseBatch::new(encoder.planes());
        for &batch in batches {
            device.seed(8);
            let net = config.init(&device).context("net")?;
            let mut trainer = Trainer::new(Engine::Burn, net, &TrainerConfig::default(), &device)
                .context("trainer")?;
            let (mut host_secs, mut total_secs, mut steps) = (0.0f64, 0.0f64, 0u32);
            let start = Instant::now();
            for step in 0.. {
                if step >= 3 + 3 && start.elapsed().as_secs_f64() >= 2.0 * seconds {
                    break;
                }
                let t0 = Instant::now();
                let indices: Vec<usize> = (0..batch).map(|_| rng.below(window.len())).collect();
                build_batch(&window, &indices, &encoder, 0.0, 0.0, &mut sparse);
                let t1 = Instant::now();
                let figures = trainer.step(&sparse, 1e-4, 1.0).context("training step")?;
                std::hint::black_box(figures);
                if step >= 3 {
                    host_secs += (t1 - t0).as_secs_f64();
                    total_secs += t0.elapsed().as_secs_f64();
                    steps += 1;
                }
            }
            let per_step = total_secs / f64::from(steps);
            let samples = batch as f64 / per_step;
            writeln!(
                out,
                "  train batch {batch:>5}: {samples:>10.1} samples/s, {:>7.1} ms/step (host: \
                 replay + encode {:.1}%), ~{:.1} TFLOP/s (3x forward); {steps} steps",
                1e3 * per_step,
                100.0 * host_secs / total_secs,
                samples * 3.0 * flops / 1e12
            )?;
        }
    }
    Ok(())
}

/// The line that opens a net's rows: its shape and work per position.
fn write_header(out: &mut dyn Write, name: &str, config: &NetConfig) -> std::io::Result<()> {
    writeln!(
        out,
        "{name}: {} blocks x {} filters, SE ratio {}, {} input planes: {:.1} MFLOP/position",
        config.blocks,
        config.filters,
        config.se_ratio,
        config.input_planes(),
        config.flops_per_position() as f64 / 1e6
    )
}
