//! The network shipped inside the binary (`nets/atomic.safetensors` and its `.json` sidecar,
//! described in `nets/README.md`): `atomzero uci` plays with it when no `--model` is given, and
//! the model spec `shipped` names it anywhere a network path is accepted.
//!
//! The loaders read networks from files, so the embedded bytes are written once, atomically,
//! to `$ATOMZERO_CACHE/nets/<fnv1a64 of the weights>/atomic.safetensors` (default cache
//! `~/.cache/atomzero`) and loaded from there; a copy that is already there with the right
//! size is reused.

use crate::fsutil::write_atomic;
use anyhow::{Context, Result, bail};
use atomzero_nn::checkpoint::fnv1a64;
use std::path::{Path, PathBuf};

/// The shipped network's weights.
pub const WEIGHTS: &[u8] = include_bytes!("../../../nets/atomic.safetensors");
/// Its metadata sidecar.
pub const METADATA: &[u8] = include_bytes!("../../../nets/atomic.json");

/// The model spec that names the shipped network.
pub const SPEC: &str = "shipped";

/// The cache directory: `$ATOMZERO_CACHE`, else `$HOME/.cache/atomzero`.
fn cache_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("ATOMZERO_CACHE").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    match std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        Some(home) => Ok(Path::new(&home).join(".cache").join("atomzero")),
        None => bail!("cannot place the shipped network: neither ATOMZERO_CACHE nor HOME is set"),
    }
}

/// Writes the shipped network under `cache` (if not already there) and returns its path.
pub fn materialise_in(cache: &Path) -> Result<PathBuf> {
    let dir = cache.join("nets").join(format!("{:016x}", fnv1a64(WEIGHTS)));
    let weights = dir.join("atomic.safetensors");
    let metadata = dir.join("atomic.json");
    let present = |path: &Path, bytes: &[u8]| {
        std::fs::metadata(path).is_ok_and(|m| m.len() == bytes.len() as u64)
    };
    // The sidecar first: a network file is only ever seen beside its metadata.
    if !present(&metadata, METADATA) {
        write_atomic(&metadata, METADATA).context("cannot write the shipped network")?;
    }
    if !present(&weights, WEIGHTS) {
        write_atomic(&weights, WEIGHTS).context("cannot write the shipped network")?;
    }
    Ok(weights)
}

/// The path of the shipped network, written to the cache directory if needed.
pub fn path() -> Result<PathBuf> {
    materialise_in(&cache_dir()?)
}

/// The file an `--init` spec names (`run`, `train`): `shipped` is the network embedded in the
/// binary, anything else a path.
pub fn init_path(spec: Option<&str>) -> Result<Option<PathBuf>> {
    Ok(match spec {
        None => None,
        Some(SPEC) => Some(path()?),
        Some(file) => Some(PathBuf::from(file)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_network_matches_its_sidecar() {
        let meta: serde_json::Value = serde_json::from_slice(METADATA).unwrap();
        assert_eq!(meta["weights_bytes"].as_u64(), Some(WEIGHTS.len() as u64));
        assert_eq!(
            meta["weights_fnv1a64"].as_str(),
            Some(format!("{:016x}", fnv1a64(WEIGHTS)).as_str())
        );
        assert_eq!(meta["variant"].as_str(), Some("atomic"));
    }

    #[test]
    fn materialising_twice_reuses_the_copy_and_mends_a_truncated_one() {
        let cache = std::env::temp_dir().join(format!("atomzero-shipped-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&cache);
        let path = materialise_in(&cache).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), WEIGHTS);
        assert_eq!(std::fs::read(path.with_extension("json")).unwrap(), METADATA);
        // A truncated copy (a killed writer of an older version) is rewritten.
        std::fs::write(&path, &WEIGHTS[..10]).unwrap();
        assert_eq!(materialise_in(&cache).unwrap(), path);
        assert_eq!(std::fs::read(&path).unwrap(), WEIGHTS);
        let _ = std::fs::remove_dir_all(&cache);
    }
}
