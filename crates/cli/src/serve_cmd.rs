//! `atomzero serve --run DIR`: the local web page over a run directory (atomzero-serve), with
//! the run's networks loaded by this binary's model loader and its TensorBoard scalars read by
//! the trainer's reader.

use crate::config::{Config, ConfigFile};
use crate::models::NetLoader;
use anyhow::{Context, Result, anyhow};
use atomzero_serve::{Scalar, ServeOptions, Server};
use clap::Args;
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The run directory (made by `atomzero run`; it may still be running).
    #[arg(long)]
    run: PathBuf,
    /// Address to listen on (port 0: any free port). Only this machine can connect to the
    /// default; another address makes the page reachable from elsewhere.
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// How often the run directory is checked for changes, in milliseconds.
    #[arg(long, default_value_t = 500)]
    poll_ms: u64,
}

/// Every scalar of the event files in `dir` (a file being written is read up to its last
/// whole record), in file-name order. Symlinks are not followed (a link could lead out of the
/// run directory).
fn read_scalars(dir: &Path) -> Result<Vec<Scalar>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("events.out.tfevents."))
        })
        .collect();
    files.sort();
    let mut scalars = Vec::new();
    for file in files {
        let read = atomzero_train::tensorboard::read_scalars_of_live_file(&file)
            .map_err(|e| e.to_string())?;
        scalars.extend(read);
    }
    Ok(scalars)
}

pub fn run(args: ServeArgs) -> Result<()> {
    let config_path = args.run.join("config.toml");
    if !config_path.is_file() {
        return Err(anyhow!(
            "{} not found: --run takes a run directory made by `atomzero run`",
            config_path.display()
        ));
    }
    let config = Config::load(Some(&config_path))?;
    let options = ServeOptions {
        run_dir: args.run.clone(),
        variant: config.perfect_information_variant("atomzero serve")?,
        eval_games: config.run.eval_games,
        models: Arc::new(NetLoader { device: config.device()? }),
        scalars: Arc::new(read_scalars),
        poll: Duration::from_millis(args.poll_ms.max(50)),
    };
    let server = Server::bind(args.addr, options).map_err(|e| anyhow!("{e}"))?;
    let addr = server.local_addr().map_err(|e| anyhow!("{e}"))?;
    println!("serving {} on http://{addr}/ (Ctrl-C stops)", args.run.display());
    std::io::stdout().flush().context("stdout")?;
    server.run().map_err(|e| anyhow!("{e}"))
}
