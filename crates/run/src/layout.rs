//! The run directory: what lives under which key, and the local mirror of a run in an object
//! store.
//!
//! ```text
//! <run>/
//!   config.toml           the resolved config (every key); created once, never rewritten
//!   run.json              where the trainer is (format 1): generation, stage, time spent;
//!                         written by compare-and-swap, so a second trainer is refused
//!   log.txt               the summary line of every finished generation
//!   timeline.jsonl        per finished generation: the best network, wall and CPU time
//!   models/               promoted networks NNNNNN.safetensors + .json (NNNNNN = generation,
//!                         created once); best.json names the best (compare-and-swap)
//!   candidates/           the trainer's network of the generation in progress
//!   selfplay/             replay shards: genGGGGGG-SSSSSS.shard played in the trainer's
//!                         process (`atomzero run`), <worker>/SSSSSS.shard uploaded by workers
//!   generations/          GGGGGG.json: the worker shards counted into generation GGGGGG
//!                         (format 1; only with workers), each shard in exactly one
//!   checkpoints/          trainer state step-NNNNNNNN/ (state.json last), newest few kept
//!   eval/                 results.jsonl, gates.jsonl, ratings.csv, elo.svg, match PGNs
//!   tensorboard/          event files
//! ```
//!
//! Libraries read and write networks, checkpoints, TensorBoard files and the training window
//! as local files. For a run in a directory they are the run's own files. For a run in an
//! object store, [`RunDir`] keeps a local mirror (a cache directory): [`RunDir::fetch`]
//! downloads an object once (objects under their final name never change, but for the
//! candidate, fetched afresh), [`RunDir::publish`] uploads a file written locally.

use crate::error::{Result, RunError, io};
use atomzero_store::{PutMode, Store, Version};
use std::path::{Path, PathBuf};

/// The resolved config.
pub const CONFIG: &str = "config.toml";
/// The trainer's state.
pub const STATE: &str = "run.json";
/// Summary lines.
pub const LOG: &str = "log.txt";
/// Time and best network per generation.
pub const TIMELINE: &str = "timeline.jsonl";
/// The best-network pointer.
pub const BEST: &str = "models/best.json";
/// Evaluation results.
pub const RESULTS: &str = "eval/results.jsonl";
/// Gating results.
pub const GATES: &str = "eval/gates.jsonl";
/// The rating list.
pub const RATINGS: &str = "eval/ratings.csv";
/// The Elo chart.
pub const ELO_SVG: &str = "eval/elo.svg";
/// Replay shards.
pub const SELFPLAY: &str = "selfplay/";
/// Generation manifests.
pub const GENERATIONS: &str = "generations/";
/// Trainer checkpoints.
pub const CHECKPOINTS: &str = "checkpoints";
/// TensorBoard event files.
pub const TENSORBOARD: &str = "tensorboard";

/// The directories of a local run (created at the start, as `atomzero run` always did).
pub const LOCAL_DIRS: [&str; 6] =
    ["models", "candidates", "selfplay", "checkpoints", "eval", "tensorboard"];

/// The name of the network promoted in `generation` (`000000` is the initial network).
pub fn model_name(generation: u64) -> String {
    format!("{generation:06}")
}

/// The generation of a model name, if it is one.
pub fn model_generation(name: &str) -> Option<u64> {
    (name.len() == 6).then(|| name.parse().ok()).flatten()
}

/// A promoted network's weights.
pub fn model_key(name: &str) -> String {
    format!("models/{name}.safetensors")
}

/// The JSON sidecar of a network's weights key.
pub fn sidecar_key(weights_key: &str) -> String {
    format!("{}.json", weights_key.trim_end_matches(".safetensors"))
}

/// The trainer's candidate of `generation`.
pub fn candidate_key(generation: u64) -> String {
    format!("candidates/{generation:06}.safetensors")
}

/// Shard `sequence` of `generation` played in the trainer's process.
pub fn local_shard_key(generation: u64, sequence: u64) -> String {
    format!("{SELFPLAY}{}", atomzero_replay::window::shard_file_name(generation, sequence))
}

/// The generation of a shard played in the trainer's process, from its key.
pub fn local_shard_generation(key: &str) -> Option<u64> {
    let name = key.strip_prefix(SELFPLAY)?;
    let rest = name.strip_prefix("gen")?;
    let (generation, rest) = rest.split_once('-')?;
    rest.strip_suffix(".shard")?;
    generation.parse().ok()
}

/// Shard `sequence` uploaded by `worker`.
pub fn worker_shard_key(worker: &str, sequence: u64) -> String {
    format!("{SELFPLAY}{worker}/{sequence:06}.shard")
}

/// True for a key that [`worker_shard_key`] makes.
pub fn is_worker_shard(key: &str) -> bool {
    key.strip_prefix(SELFPLAY)
        .is_some_and(|rest| rest.split('/').count() == 2 && rest.ends_with(".shard"))
}

/// The manifest of `generation`.
pub fn manifest_key(generation: u64) -> String {
    format!("{GENERATIONS}{generation:06}.json")
}

/// A file under `eval/`.
pub fn eval_key(file: &str) -> String {
    format!("eval/{file}")
}

/// A run's store and the local directory mirroring it.
#[derive(Debug, Clone)]
pub struct RunDir {
    store: Store,
    local: PathBuf,
}

impl RunDir {
    /// A run in `store`; `cache` is the local mirror for an object store (a local store is
    /// its own mirror and ignores it).
    pub fn new(store: Store, cache: Option<PathBuf>) -> Result<RunDir> {
        let local = match store.local_root() {
            Some(root) => root.to_path_buf(),
            None => cache.ok_or_else(|| {
                RunError::Config(format!(
                    "{}: a run in an object store needs a local cache directory",
                    store.location()
                ))
            })?,
        };
        Ok(RunDir { store, local })
    }

    /// A remote run's mirror holds files of this run only: `.origin` in the mirror records the
    /// version and time of the run's `config.toml`; a mirror of an older run at the same
    /// location (deleted and created again) is emptied first. Call once the run exists.
    pub fn claim_mirror(&self) -> Result<()> {
        if !self.is_remote() {
            return Ok(());
        }
        let config = self.store.get(CONFIG)?.ok_or_else(|| RunError::Corrupt {
            location: self.describe(CONFIG),
            reason: "missing".into(),
        })?;
        let origin = format!(
            "{}\n{}\n{}\n{}\n",
            self.store.location(),
            config.version.tag(),
            config.version.id().unwrap_or(""),
            config.modified_ms.unwrap_or(0)
        );
        let marker = self.local.join(".origin");
        if std::fs::read_to_string(&marker).is_ok_and(|text| text == origin) {
            return Ok(());
        }
        if let Ok(entries) = std::fs::read_dir(&self.local) {
            for entry in entries.filter_map(|e| e.ok()) {
                let path = entry.path();
                let _ = if path.is_dir() {
                    std::fs::remove_dir_all(&path)
                } else {
                    std::fs::remove_file(&path)
                };
            }
        }
        write_local(&marker, origin.as_bytes())
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// True if the run is in an object store (the local directory is only a mirror).
    pub fn is_remote(&self) -> bool {
        self.store.local_root().is_none()
    }

    /// The local directory (the run itself, or its mirror).
    pub fn local_root(&self) -> &Path {
        &self.local
    }

    /// The local file of `key`.
    pub fn local(&self, key: &str) -> PathBuf {
        self.local.join(key)
    }

    /// Where `key` is, for messages and for the user (a path or a URL).
    pub fn describe(&self, key: &str) -> String {
        self.store.describe(key)
    }

    /// The local file of `key`, downloaded first if the run is remote and it is not in the
    /// mirror (or always, with `fresh`). A missing object is an error naming it.
    pub fn fetch(&self, key: &str, fresh: bool) -> Result<PathBuf> {
        let path = self.local(key);
        if !self.is_remote() || (!fresh && path.is_file()) {
            if !path.is_file() {
                return Err(RunError::Corrupt {
                    location: self.describe(key),
                    reason: "missing".into(),
                });
            }
            return Ok(path);
        }
        let object = self.store.get(key)?.ok_or_else(|| RunError::Corrupt {
            location: self.describe(key),
            reason: "missing".into(),
        })?;
        write_local(&path, &object.bytes)?;
        Ok(path)
    }

    /// Uploads the local file of `key` (nothing to do for a local run).
    pub fn publish(&self, key: &str, mode: PutMode) -> Result<()> {
        if !self.is_remote() {
            return Ok(());
        }
        let path = self.local(key);
        let bytes = std::fs::read(&path).map_err(io(&path))?;
        match self.store.put(key, &bytes, mode.clone()) {
            Err(atomzero_store::StoreError::Exists { .. }) if mode == PutMode::Create => {
                // Created earlier (a trainer killed after the upload): the same name holds
                // the same network only if the bytes agree.
                match self.store.get(key)? {
                    Some(object) if object.bytes == bytes => Ok(()),
                    _ => Err(RunError::AnotherTrainer { location: self.describe(key) }),
                }
            }
            other => other.map(|_| ()).map_err(RunError::from),
        }
    }

    /// Writes `bytes` under `key` (a local run: the file, by rename).
    pub fn put(&self, key: &str, bytes: &[u8], mode: PutMode) -> Result<Version> {
        Ok(self.store.put(key, bytes, mode)?)
    }

    /// The network `weights_key` and its sidecar as local files (downloaded if remote).
    pub fn fetch_network(&self, weights_key: &str, fresh: bool) -> Result<PathBuf> {
        self.fetch(&sidecar_key(weights_key), fresh)?;
        self.fetch(weights_key, fresh)
    }

    /// Uploads a network saved locally under `weights_key`: weights, then sidecar (a reader
    /// that finds the sidecar finds the weights).
    pub fn publish_network(&self, weights_key: &str, mode: PutMode) -> Result<()> {
        self.publish(weights_key, mode.clone())?;
        self.publish(&sidecar_key(weights_key), mode)
    }
}

/// Writes a local file atomically (`atomzero_files::write_atomic`), creating its directory.
pub(crate) fn write_local(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    atomzero_files::write_atomic(path, bytes).map_err(io(path))
}

/// Removes temporary files a killed process left in a local run (`atomzero_files`' rule:
/// `.name.*.tmp`, never read) that are more than a minute old: a younger one may be a
/// worker's write in progress.
pub fn remove_stale_temporaries(root: &Path) {
    atomzero_files::remove_stale_temporaries(root, std::time::Duration::from_secs(60));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_keys_say_who_played_them() {
        let local = local_shard_key(3, 7);
        assert_eq!(local, "selfplay/gen000003-000007.shard");
        assert_eq!(local_shard_generation(&local), Some(3));
        assert!(!is_worker_shard(&local));
        let worker = worker_shard_key("w-host-1f2e", 12);
        assert_eq!(worker, "selfplay/w-host-1f2e/000012.shard");
        assert!(is_worker_shard(&worker));
        assert_eq!(local_shard_generation(&worker), None);
        assert_eq!(sidecar_key("models/000001.safetensors"), "models/000001.json");
        assert_eq!(model_generation("000012"), Some(12));
        assert_eq!(model_generation("random"), None);
    }
}
