//! The `atomzero` binary: thin glue over the library crates. Only this crate knows clap and
//! `anyhow`. Started with no command it is the UCI engine, as lc0 and Stockfish are: that is
//! how lichess-bot, cutechess-cli and chess GUIs start an engine.

mod analyse_cmd;
mod bench_cmd;
mod config;
mod export_cmd;
mod fsutil;
mod gauntlet_cmd;
mod gpu_check_cmd;
mod match_cmd;
mod models;
mod perft_cmd;
mod reanalyse_cmd;
mod run_cmd;
mod selfplay_cmd;
mod serve_cmd;
mod shipped;
mod train_cmd;
mod uci_cmd;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "atomzero",
    version,
    about = "AlphaZero-style self-play training for atomic chess",
    after_help = "With no command, atomzero is the UCI engine on standard input and output \
                  (`atomzero uci`, with the options above), as GUIs, cutechess-cli and lichess-bot \
                  start an engine.",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// With no command: the arguments of `atomzero uci`.
    #[command(flatten)]
    uci: uci_cmd::UciArgs,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// The whole loop: self-play, train, gate, promote, evaluate; resumable (Ctrl-C, kill).
    Run(run_cmd::RunArgs),
    /// The trainer of a run whose self-play is done by workers (`atomzero worker`), e.g. over
    /// object storage: creates the run if new, trains, gates, promotes, evaluates.
    Trainer(run_cmd::TrainerArgs),
    /// A self-play worker: plays with the run's best network and uploads shards until the
    /// trainer finishes the run.
    Worker(run_cmd::WorkerArgs),
    /// Count move-tree leaves (perft) of a position, or check a perft suite file.
    Perft(perft_cmd::PerftArgs),
    /// Play games with a model and write them as replay shards (and PGN).
    Selfplay(selfplay_cmd::SelfplayArgs),
    /// Search the training targets of replay shards again with a model (MuZero Reanalyse)
    /// and write them as new shards.
    #[command(visible_alias = "reanalyze")]
    Reanalyse(reanalyse_cmd::ReanalyseArgs),
    /// Train the network on replay shards (resumes from the newest checkpoint).
    Train(train_cmd::TrainArgs),
    /// Play a match between two players (cutechess-cli style output).
    Match(match_cmd::MatchArgs),
    /// Gate a candidate network against the best; promote it if it passes.
    Gate(match_cmd::GateArgs),
    /// Rate the networks of runs against a ladder (Fairy-Stockfish included) by CPU time.
    Gauntlet(gauntlet_cmd::GauntletArgs),
    /// Run as a UCI engine (for GUIs, cutechess-cli, python-chess, lichess-bot); also what
    /// `atomzero` with no command does.
    Uci(uci_cmd::UciArgs),
    /// Analyse the games of a PGN: `[%eval]` on every move, the engine's moves, and
    /// inaccuracies, mistakes and blunders marked as lichess does.
    #[command(visible_alias = "analyze")]
    Analyse(analyse_cmd::AnalyseArgs),
    /// Export a network as ONNX or safetensors (+ JSON sidecar).
    Export(export_cmd::ExportArgs),
    /// Throughput benchmarks (search, network, a run location's ingest rate).
    Bench(bench_cmd::BenchArgs),
    /// Check a GPU backend against the CPU: forward pass, losses and gradients of the tiny and
    /// default nets (exit status 1 if a difference is beyond its tolerance).
    GpuCheck(gpu_check_cmd::GpuCheckArgs),
    /// A local web page over a run: dashboard, game viewer, play a network (live).
    Serve(serve_cmd::ServeArgs),
}

/// `atomzero perft ... | head` closes stdout early. Leave quietly with the status a process
/// killed by SIGPIPE reports (128 + 13), as Unix tools do, instead of printing a panic.
fn quiet_on_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info);
    }));
}

/// mimalloc instead of glibc's allocator: a search's arenas (hundreds of KB per tree) are
/// freed at the end of every game and allocated again for the next; glibc returns them to the
/// OS in between and pays a page fault per 4 KiB to get them back (~10% of the tree work in
/// `atomzero bench selfplay`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Makes Burn's default device its CPU backend (flex) for this process.
///
/// Every device this program uses comes from the config (`atomzero_nn::DeviceKind`); Burn's
/// default device is used only where Burn takes none: `ModuleOptimizer::load_record` puts a
/// restored optimizer's state there, and the next step moves it to its parameter's device.
/// In a build with a GPU backend that default is the GPU, so a CUDA build resuming a run's
/// training on the CPU of a machine without an NVIDIA driver panicked at its second
/// generation (found by `scripts/gpu-check.sh --cpu`; `scripts/cuda-no-driver.sh` checks it).
/// Flex is in every build and needs nothing from the machine.
#[allow(unsafe_code)]
fn pin_burn_default_device() {
    // SAFETY: the first statement of `main`, before any thread exists: nothing can read the
    // environment while it changes (the reason `set_var` is unsafe).
    unsafe { std::env::set_var("BURN_DEVICE", "flex") };
}

fn main() -> ExitCode {
    pin_burn_default_device();
    quiet_on_broken_pipe();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help/version to stdout with exit 0, usage errors with exit 2.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let Cli { command, uci } = cli;
    let result = match command.unwrap_or(Command::Uci(uci)) {
        Command::Run(args) => run_cmd::run(args),
        Command::Trainer(args) => run_cmd::trainer(args),
        Command::Worker(args) => run_cmd::worker(args),
        Command::Perft(args) => perft_cmd::run(args),
        Command::Selfplay(args) => selfplay_cmd::run(args).map(|()| ExitCode::SUCCESS),
        Command::Reanalyse(args) => reanalyse_cmd::run(args).map(|()| ExitCode::SUCCESS),
        Command::Train(args) => train_cmd::run(args).map(|()| ExitCode::SUCCESS),
        Command::Match(args) => match_cmd::run(args).map(|()| ExitCode::SUCCESS),
        Command::Gate(args) => match_cmd::run_gate(args).map(|()| ExitCode::SUCCESS),
        Command::Gauntlet(args) => gauntlet_cmd::run(args).map(|()| ExitCode::SUCCESS),
        Command::Uci(args) => uci_cmd::run(args).map(|()| ExitCode::SUCCESS),
        Command::Analyse(args) => analyse_cmd::run(args).map(|()| ExitCode::SUCCESS),
        Command::Export(args) => export_cmd::run(args).map(|()| ExitCode::SUCCESS),
        Command::Bench(args) => bench_cmd::run(args).map(|()| ExitCode::SUCCESS),
        Command::GpuCheck(args) => gpu_check_cmd::run(args),
        Command::Serve(args) => serve_cmd::run(args).map(|()| ExitCode::SUCCESS),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
