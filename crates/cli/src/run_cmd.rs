//! `atomzero run`, `atomzero trainer` and `atomzero worker`: arguments, the config file and
//! the terminal over `atomzero_run` (the loop, the run directory, the roles).
//!
//! - `run --dir DIR`: the whole loop in one process (self-play in the trainer's process).
//! - `trainer --run URL`: creates the run if it is new, then trains on the shards that
//!   workers upload, gates, promotes and evaluates.
//! - `worker --run URL`: waits for the run, plays self-play with its best network and uploads
//!   shards until the trainer finishes the run.
//!
//! A run location is a directory, a `file://` URL or an object store URL (`s3://bucket/prefix`,
//! `gs://`, `az://`) with credentials and endpoint from the environment.

use crate::config::{Config, ConfigFile};
use crate::selfplay_cmd::{interrupt_flag, progress_bar};
use anyhow::{Context, Result, anyhow, bail};
use atomzero_nn::NetConfig;
use atomzero_run::layout::{self, RunDir};
use atomzero_run::trainer::{Outcome, Selfplay, TrainerOptions};
use atomzero_run::worker::{WorkerOptions, WorkerOutcome};
use atomzero_run::{Observer, records, state};
use atomzero_store::Store;
use clap::Args;
use indicatif::ProgressBar;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What `run` and `trainer` both take beyond the run's location and config: the budget
/// overrides, the object store's local mirror, and a network to start from.
#[derive(Args, Debug)]
pub struct RunBudget {
    /// Override `run.generations` (e.g. to extend a finished run).
    #[arg(long)]
    generations: Option<u64>,
    /// Override `run.max_minutes`.
    #[arg(long)]
    max_minutes: Option<f64>,
    /// Local mirror of a run in an object store (default: ~/.cache/atomzero/runs/...).
    #[arg(long)]
    cache: Option<PathBuf>,
    /// Generation 0 of a new run: this network (a path, or `shipped`) instead of random
    /// weights, to continue or fine-tune it; its architecture must be the config's.
    #[arg(long, value_name = "MODEL")]
    init: Option<String>,
    /// The new run's training window starts with the newest shards of this directory
    /// (another run's selfplay/), as many as `train.window_positions` takes: with `--init`
    /// and `run.warmup_generations = 0`, the network trains on its line's games at once.
    #[arg(long, value_name = "DIR")]
    init_window: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Config file (default: the run directory's saved config.toml, else the embedded
    /// configs/tiny.toml).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Run directory (default: runs/<config file name>, e.g. runs/tiny); also a URL
    /// (s3://bucket/prefix, ...).
    #[arg(long)]
    dir: Option<String>,
    #[command(flatten)]
    budget: RunBudget,
}

#[derive(Args, Debug)]
pub struct TrainerArgs {
    /// The run: a directory, file://, s3://bucket/prefix, gs://, az:// (credentials and
    /// endpoint from the environment: AWS_ACCESS_KEY_ID, AWS_ENDPOINT_URL, ...).
    #[arg(long)]
    run: String,
    /// Config file for a new run (default: the run's saved config.toml, else the embedded
    /// configs/tiny.toml).
    #[arg(long)]
    config: Option<PathBuf>,
    #[command(flatten)]
    budget: RunBudget,
    /// Seconds between two looks for new shards while waiting for workers.
    #[arg(long, default_value_t = 2.0)]
    poll: f64,
}

#[derive(Args, Debug)]
pub struct WorkerArgs {
    /// The run (as for `atomzero trainer`).
    #[arg(long)]
    run: String,
    /// Name prefix of this worker's shards (default: the host name); a random suffix keeps
    /// every process's name its own.
    #[arg(long)]
    name: Option<String>,
    /// Self-play threads (default: the run's selfplay.threads; 0 = one per core).
    #[arg(long)]
    threads: Option<usize>,
    /// Where the network runs: cpu, or cuda / wgpu in a binary built with that feature (the
    /// run's own `device` is the trainer's).
    #[arg(long, default_value = "cpu")]
    device: String,
    /// Local mirror of a run in an object store (default: ~/.cache/atomzero/runs/...).
    #[arg(long)]
    cache: Option<PathBuf>,
    /// Seconds between two looks for the run while waiting for it to exist.
    #[arg(long, default_value_t = 2.0)]
    poll: f64,
}

/// Progress bars on stderr, lines on stdout, warnings on stderr. Without a terminal on stderr
/// (a log file, a pipe, `nohup`) indicatif hides the bars, so the progress is also printed as
/// a line on stdout at most every [`PLAIN_PROGRESS_SECS`] seconds.
#[derive(Default)]
struct Terminal {
    bar: Option<ProgressBar>,
    plain: Option<PlainProgress>,
}

/// Seconds between two progress lines without a terminal.
const PLAIN_PROGRESS_SECS: u64 = 30;

/// The stage whose progress is printed as lines, and when the last line was.
struct PlainProgress {
    what: String,
    total: u64,
    last: Instant,
}

impl Observer for Terminal {
    fn line(&mut self, line: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| println!("{line}")),
            None => println!("{line}"),
        }
    }
    fn warning(&mut self, text: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| eprintln!("warning: {text}")),
            None => eprintln!("warning: {text}"),
        }
    }
    fn start(&mut self, what: &str, total: u64, done: u64) {
        let bar = progress_bar(total, what);
        bar.set_position(done);
        self.bar = Some(bar);
        self.plain = (!std::io::stderr().is_terminal()).then(|| PlainProgress {
            what: what.to_string(),
            total,
            last: Instant::now(),
        });
    }
    fn progress(&mut self, done: u64, message: &str) {
        if let Some(bar) = &self.bar {
            bar.set_position(done);
            bar.set_message(message.to_string());
        }
        if let Some(plain) = &mut self.plain
            && plain.last.elapsed().as_secs() >= PLAIN_PROGRESS_SECS
        {
            plain.last = Instant::now();
            println!("{}: {done}/{} {message}", plain.what, plain.total);
        }
    }
    fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        self.plain = None;
    }
}

/// Opens a run location, reporting storage retries on stderr.
fn open_store(location: &str) -> Result<Store> {
    let store = atomzero_store::open(location)?;
    Ok(store.with_retry_observer(Arc::new(|note| eprintln!("warning: {note}"))))
}

/// The run at `store` with its local mirror (`cache`, or one under ~/.cache/atomzero/runs).
fn run_dir(store: Store, cache: Option<PathBuf>) -> Result<RunDir> {
    let cache = if store.local_root().is_some() {
        None
    } else {
        Some(cache.unwrap_or_else(|| {
            let base = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
                .unwrap_or_else(std::env::temp_dir);
            let name: String = store
                .location()
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' })
                .collect();
            base.join("atomzero").join("runs").join(name)
        }))
    };
    Ok(RunDir::new(store, cache)?)
}

/// Keys whose values differ between two TOML tables (dotted paths).
fn differing_keys(a: &toml::Value, b: &toml::Value, prefix: &str, out: &mut Vec<String>) {
    match (a, b) {
        (toml::Value::Table(x), toml::Value::Table(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                match (x.get(k), y.get(k)) {
                    (Some(v), Some(w)) => differing_keys(v, w, &path, out),
                    _ => out.push(path),
                }
            }
        }
        _ if a != b => out.push(prefix.to_string()),
        _ => {}
    }
}

/// The config of a run: the saved one when resuming (a given config must agree with it
/// except for the budget), else the given one or the embedded default. Returns the config
/// and, for a new run, the text to save as its config.toml.
fn resolve_config(
    dir: &RunDir,
    given: Option<&Path>,
    generations: Option<u64>,
    max_minutes: Option<f64>,
    resume_hint: &str,
) -> Result<(Config, Option<String>)> {
    let saved = match dir.store().get(layout::CONFIG)? {
        Some(object) => {
            let text = String::from_utf8(object.bytes)
                .map_err(|_| anyhow!("{}: not UTF-8 text", dir.describe(layout::CONFIG)))?;
            Some(Config::from_toml(&text, &dir.describe(layout::CONFIG))?)
        }
        None => None,
    };
    let mut config = match (given, &saved) {
        (None, Some(saved)) => saved.clone(),
        (path, _) => Config::load(path)?,
    };
    if let Some(saved) = &saved {
        let strip = |c: &Config| -> Result<toml::Value> {
            let mut c = c.clone();
            c.run.generations = 0;
            c.run.max_minutes = 0.0;
            Ok(toml::Value::try_from(&c)?)
        };
        let mut keys = Vec::new();
        differing_keys(&strip(saved)?, &strip(&config)?, "", &mut keys);
        if !keys.is_empty() {
            bail!(
                "{} was started with another config (differs in {}); give the same config, only the budget (run.generations, run.max_minutes) may change, or choose a new {resume_hint}",
                dir.store().location(),
                keys.join(", ")
            );
        }
    }
    if let Some(g) = generations {
        config.run.generations = g;
    }
    if let Some(m) = max_minutes {
        config.run.max_minutes = m;
    }
    let new_run_text = match saved {
        Some(_) => None,
        None => Some(format!(
            "# The resolved config of this run (every key). Re-running `atomzero {resume_hint} {}`\n# resumes with it.\n{}",
            dir.store().location(),
            config.to_toml()?
        )),
    };
    Ok((config, new_run_text))
}

/// Prints how the run starts: its settings if new, else where it is and its log so far.
fn announce(dir: &RunDir, config: &Config, new: bool, workers: bool) -> Result<()> {
    let location = dir.store().location();
    if new {
        let NetConfig { blocks, filters, .. } = config.net;
        println!(
            "new run in {location}: {} on {}, net {blocks}x{filters}, {} games + {} steps per generation{}, \
             budget {}",
            match config.start()? {
                atomzero_rules::Start::Standard => config.variant.clone(),
                start => format!("{} ({start} start)", config.variant),
            },
            config.device,
            config.run.games_per_generation,
            config.run.steps_per_generation,
            if workers { " (self-play by workers)" } else { "" },
            match (config.run.generations, config.run.max_minutes) {
                (0, m) if m > 0.0 => format!("{m} min"),
                (g, m) if m > 0.0 => format!("{g} generations or {m} min"),
                (0, _) => "none (Ctrl-C to stop)".to_string(),
                (g, _) => format!("{g} generations"),
            }
        );
    } else {
        let state = state::load_state(dir.store())?.map(|(s, _)| s).unwrap_or_default();
        println!(
            "resuming {location} at generation {} ({:?}), {:.1} min spent so far",
            state.generation,
            state.stage,
            state.elapsed_secs / 60.0
        );
        print!("{}", records::read_text(dir.store(), layout::LOG)?);
    }
    Ok(())
}

/// Runs the trainer and reports how it ended.
fn train_loop(dir: &RunDir, options: TrainerOptions) -> Result<ExitCode> {
    let mut terminal = Terminal::default();
    match atomzero_run::trainer::run(dir, options, &mut terminal)? {
        Outcome::Finished { generations, elapsed_secs, best } => {
            println!(
                "run finished after {generations} generations ({:.1} min): best network {}; ratings in {}, chart in {}",
                elapsed_secs / 60.0,
                dir.describe(&layout::model_key(&best)),
                dir.describe(layout::RATINGS),
                dir.describe(layout::ELO_SVG)
            );
            Ok(ExitCode::SUCCESS)
        }
        Outcome::Interrupted => {
            eprintln!("interrupted: everything finished is saved; run the same command to resume");
            Ok(ExitCode::from(130))
        }
    }
}

pub fn run(args: RunArgs) -> Result<ExitCode> {
    let location = args.dir.clone().unwrap_or_else(|| default_dir(args.config.as_deref()));
    let dir = run_dir(open_store(&location)?, args.budget.cache)?;
    let (config, new_run_config) = resolve_checked(
        &dir,
        args.config.as_deref(),
        args.budget.generations,
        args.budget.max_minutes,
        "run --dir",
    )?;
    let init = crate::shipped::init_path(args.budget.init.as_deref())?;
    let init_window = args.budget.init_window;
    announce_after_create(&dir, &config, new_run_config, Selfplay::InProcess, init, init_window)
}

/// [`resolve_config`], then checks the config's device before anything is written.
fn resolve_checked(
    dir: &RunDir,
    config: Option<&Path>,
    generations: Option<u64>,
    max_minutes: Option<f64>,
    resume_command: &str,
) -> Result<(Config, Option<String>)> {
    let (config, new_run_config) =
        resolve_config(dir, config, generations, max_minutes, resume_command)?;
    config.device()?.device().map_err(|e| anyhow!("{e}"))?;
    Ok((config, new_run_config))
}

/// Creates the run (through the trainer, which writes config.toml first) and announces it.
fn announce_after_create(
    dir: &RunDir,
    config: &Config,
    new_run_config: Option<String>,
    selfplay: Selfplay,
    init: Option<PathBuf>,
    init_window: Option<PathBuf>,
) -> Result<ExitCode> {
    let workers = matches!(selfplay, Selfplay::Workers { .. });
    announce(dir, config, new_run_config.is_some(), workers)?;
    train_loop(
        dir,
        TrainerOptions {
            config: config.clone(),
            new_run_config,
            selfplay,
            interrupted: interrupt_flag(),
            init,
            init_window,
        },
    )
}

pub fn trainer(args: TrainerArgs) -> Result<ExitCode> {
    let dir = run_dir(open_store(&args.run)?, args.budget.cache)?;
    let (config, new_run_config) = resolve_checked(
        &dir,
        args.config.as_deref(),
        args.budget.generations,
        args.budget.max_minutes,
        "trainer --run",
    )?;
    let poll = Duration::try_from_secs_f64(args.poll.max(0.1)).context("--poll")?;
    let init = crate::shipped::init_path(args.budget.init.as_deref())?;
    let init_window = args.budget.init_window;
    announce_after_create(
        &dir,
        &config,
        new_run_config,
        Selfplay::Workers { poll },
        init,
        init_window,
    )
}

pub fn worker(args: WorkerArgs) -> Result<ExitCode> {
    let store = open_store(&args.run)?;
    let interrupted = interrupt_flag();
    let poll = Duration::try_from_secs_f64(args.poll.max(0.1)).context("--poll")?;
    let mut terminal = Terminal::default();
    let name = atomzero_run::worker::worker_name(args.name.as_deref());
    let Some(text) = atomzero_run::worker::wait_for_run(&store, poll, &interrupted, &mut terminal)?
    else {
        eprintln!("interrupted before the run existed");
        return Ok(ExitCode::from(130));
    };
    let config = Config::from_toml(&text, &store.describe(layout::CONFIG))?;
    let dir = run_dir(store, args.cache)?;
    let device =
        args.device.parse::<atomzero_nn::DeviceKind>().map_err(|e| anyhow!("--device: {e}"))?;
    device.device().map_err(|e| anyhow!("--device: {e}"))?;
    let options = WorkerOptions { name: name.clone(), threads: args.threads, device, interrupted };
    match atomzero_run::worker::run(&dir, &config, &options, &mut terminal)? {
        WorkerOutcome::RunFinished { games, shards } => {
            println!(
                "worker {name}: the run is finished; uploaded {games} games in {shards} shards"
            );
            Ok(ExitCode::SUCCESS)
        }
        WorkerOutcome::Interrupted { games, shards } => {
            eprintln!(
                "worker {name}: interrupted; uploaded {games} games in {shards} shards (finished games are kept)"
            );
            Ok(ExitCode::from(130))
        }
    }
}

fn default_dir(config: Option<&Path>) -> String {
    let name = config
        .and_then(|p| p.file_stem())
        .map_or("tiny".to_string(), |s| s.to_string_lossy().into_owned());
    PathBuf::from("runs").join(name).display().to_string()
}
