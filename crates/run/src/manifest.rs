//! Generation manifests (`generations/GGGGGG.json`, format [`MANIFEST_FORMAT`]): which shards
//! uploaded by workers the trainer counted into generation GGGGGG. The trainer writes each
//! manifest once (create-only) with every worker shard that no earlier manifest lists, so a
//! shard is counted in exactly one generation, and a trainer that restarts finds its
//! decision instead of making another.

use crate::error::{Result, RunError};
use crate::layout::manifest_key;
use atomzero_store::{PutMode, Store, StoreError};
use serde::{Deserialize, Serialize};

/// Format version of manifests.
pub const MANIFEST_FORMAT: u32 = 1;

/// The shards of one generation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Always [`MANIFEST_FORMAT`].
    pub format: u32,
    /// The generation.
    pub generation: u64,
    /// The shards, in the order the window reads them (oldest first).
    pub shards: Vec<ShardEntry>,
    /// Seconds the trainer waited for them.
    pub wait_secs: f64,
}

/// One shard of a manifest, with what it holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardEntry {
    /// The shard's key.
    pub key: String,
    /// The network that played it (its `ShardMeta::model`).
    pub model: String,
    /// Games.
    pub games: usize,
    /// Training targets.
    pub targets: usize,
    /// Plies.
    pub plies: usize,
    /// Games won by White, drawn, won by Black.
    pub white_wins: usize,
    /// See `white_wins`.
    pub draws: usize,
    /// See `white_wins`.
    pub black_wins: usize,
    /// Games from the Balanced start by the square of White's removal (index a1 = 0; empty,
    /// and absent from the file, without such games).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removals: Vec<usize>,
}

impl Manifest {
    /// Games in the manifest.
    pub fn games(&self) -> usize {
        self.shards.iter().map(|s| s.games).sum()
    }
}

/// Reads the manifest of `generation`, if there is one.
pub fn read_manifest(store: &Store, generation: u64) -> Result<Option<Manifest>> {
    let key = manifest_key(generation);
    let Some(object) = store.get(&key)? else { return Ok(None) };
    let corrupt = |reason: String| RunError::Corrupt { location: store.describe(&key), reason };
    let manifest: Manifest = serde_json::from_slice(&object.bytes)
        .map_err(|e| corrupt(format!("not a manifest this build can read ({e})")))?;
    if manifest.format != MANIFEST_FORMAT || manifest.generation != generation {
        return Err(corrupt(format!(
            "format {} of generation {} (this build reads format {MANIFEST_FORMAT})",
            manifest.format, manifest.generation
        )));
    }
    Ok(Some(manifest))
}

/// Writes the manifest of its generation unless one exists; returns the manifest that holds
/// (the one found, if another write came first).
pub fn create_manifest(store: &Store, manifest: &Manifest) -> Result<Manifest> {
    let key = manifest_key(manifest.generation);
    let text = serde_json::to_string_pretty(manifest)
        .map_err(|e| RunError::Corrupt { location: store.describe(&key), reason: e.to_string() })?;
    match store.put(&key, text.as_bytes(), PutMode::Create) {
        Ok(_) => Ok(manifest.clone()),
        Err(StoreError::Exists { .. }) => read_manifest(store, manifest.generation)?
            .ok_or_else(|| RunError::AnotherTrainer { location: store.describe(&key) }),
        Err(e) => Err(e.into()),
    }
}
