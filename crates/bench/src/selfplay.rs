//! `atomzero bench selfplay`, second part: self-play with the config's net, and how busy and
//! how fast the network is inside it (raw inference of the same batches as the reference).

use crate::error::{Context, Result};
use atomzero_infer::InferEvaluator;
use atomzero_mcts::{EvalRequest, Evaluations, Evaluator};
use atomzero_nn::burn::module::Module;
use atomzero_nn::{DEFAULT_MAX_BATCH, DeviceKind, NetEvaluator};
use atomzero_run::Config;
use atomzero_selfplay::{Batching, Openings, SelfplayEvent};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

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
pub fn run(config: &Config, games: usize, batching: Batching, out: &mut dyn Write) -> Result<f64> {
    let variant = config.perfect_information_variant("atomzero bench").context("config")?;
    let kind = config.device().context("config")?;
    let device = DeviceKind::Cpu.device().context("cpu device")?;
    device.seed(config.seed);
    let net = config.net.init(&device).context("net")?.valid();
    // As `atomzero selfplay` runs nets: atomzero-infer on the CPU, Burn on a GPU.
    let (network, backend): (Box<dyn Evaluator + Send + Sync>, String) = match kind {
        DeviceKind::Cpu => (
            Box::new(InferEvaluator::from_net(&net).context("atomzero-infer")?),
            "atomzero-infer".into(),
        ),
        gpu => {
            let device = gpu.device().context(format!("{gpu} device"))?;
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
    writeln!(
        out,
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
    )?;
    writeln!(
        out,
        "  {finished} games, {plies} positions in {wall:.2} s = {:.1} positions/s ({:.2} games/s); \
         {evaluated} evaluations = {inside:.0}/s in {calls} batches (mean {mean_batch:.1})",
        plies as f64 / wall,
        finished as f64 / wall
    )?;
    // Per-worker batches run on every worker's thread at once; a shared batch runs on one
    // thread at a time while the other workers wait.
    writeln!(
        out,
        "  network busy (time inside evaluate / wall time x workers): {:.1}%",
        100.0 * busy
    )?;

    let paired = TimedEvaluator::new(&*network, true);
    play(&paired);
    let (inside_secs, raw_secs) = (seconds(&paired.busy_nanos), seconds(&paired.raw_nanos));
    let speed = raw_secs / inside_secs.max(1e-9);
    writeln!(
        out,
        "  reference: the same games again, every batch evaluated a second time right after its \
         call (raw inference of the same batch at the same moment): {:.2} s raw for {:.2} s \
         inside self-play ({} batches): {:.1}% of raw speed",
        raw_secs,
        inside_secs,
        paired.calls.load(Ordering::Relaxed),
        100.0 * speed
    )?;
    writeln!(
        out,
        "  network utilisation in self-play: {:.1}% busy x {:.1}% of raw speed = {:.1}% (goal >= 90%)",
        100.0 * busy,
        100.0 * speed,
        100.0 * busy * speed
    )?;
    Ok(inside)
}
