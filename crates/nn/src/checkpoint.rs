//! Saving and loading networks: the weights as safetensors (written through Burn's
//! `burn::store::SafetensorsStore`) plus a JSON sidecar, [`NetMetadata`], that describes the
//! architecture and the input encoding, so an engine can load a net without the training config.
//!
//! `models/000042.safetensors` has its sidecar at `models/000042.json`. Both files are written
//! to a temporary name in the same directory, fsynced and renamed into place, weights first.
//! The sidecar records the weights' size and checksum, so a reader that catches the pair
//! between the two renames, or finds a damaged file, gets an error rather than wrong weights.
//!
//! Before Burn sees a weights file, [`check_weights`] reads its header and values: every f32
//! must be finite (and every batch norm's running variance ≥ 0), and the tensors' shapes must
//! be those of the sidecar's architecture; a file of another architecture is reported by the
//! fields that differ (`filters: the weights have 32, the sidecar says 64`), never by Burn's
//! error dump. Saving checks the same values, so a net with NaN weights is never written (or
//! exported) under a sidecar that would vouch for it. Both checks read the file's header before
//! the net is built, so a sidecar cannot make the loader allocate a net larger than its
//! weights file (the safetensors reader checks that every tensor's bytes are in the file).
//!
//! Sidecar fields (format version 1):
//!
//! | field | meaning |
//! |---|---|
//! | `format_version` | [`NET_FORMAT_VERSION`]; other versions are refused |
//! | `net` | the [`NetConfig`] (every field present, except `opponent_policy`, added later: absent means `false`) |
//! | `encoding_version` | `atomzero_encoding::ENCODING_VERSION` the net was saved with (versions in `READABLE_ENCODING_VERSIONS` load: version 1 differs only for the Balanced start's setup position, which it lacked) |
//! | `variant` | the variant the net plays, e.g. `atomic` |
//! | `training_step` | optimizer steps behind these weights |
//! | `parent` | the net these weights were trained from, if any |
//! | `weights_bytes` | size of the safetensors file |
//! | `weights_fnv1a64` | FNV-1a (64 bit) of the safetensors file, 16 hex digits |
//! | `created_unix` | when it was saved, seconds since the Unix epoch |
//! | `belief` | optional: the bomb variant's learned belief over the opponent's bomb, fitted with these weights on the same self-play (`atomzero_belief::BeliefModel`'s JSON; absent for other variants) |

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use atomzero_encoding::{ENCODING_VERSION, READABLE_ENCODING_VERSIONS};
use burn::module::Module;
use burn::store::{ModuleSnapshot, SafetensorsStore};
use burn::tensor::Device;
use serde::{Deserialize, Serialize};

use crate::config::{ConfigError, FieldDifference, NetConfig};
use crate::model::Net;

/// Version of the sidecar format written by this build.
pub const NET_FORMAT_VERSION: u32 = 1;

/// The JSON sidecar of a saved network. See the module docs for the field table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetMetadata {
    /// Version of this format ([`NET_FORMAT_VERSION`]).
    pub format_version: u32,
    /// The architecture.
    pub net: NetConfig,
    /// The input encoding version (`atomzero_encoding::ENCODING_VERSION`) of the weights.
    pub encoding_version: u32,
    /// The variant the net was trained for (`atomzero_rules::Variant` name).
    pub variant: String,
    /// Optimizer steps behind these weights.
    pub training_step: u64,
    /// The net these weights were trained from (e.g. its file name), if any.
    pub parent: Option<String>,
    /// Size of the weights file in bytes.
    pub weights_bytes: u64,
    /// FNV-1a (64 bit) of the weights file, 16 lowercase hex digits.
    pub weights_fnv1a64: String,
    /// When the net was saved, seconds since the Unix epoch.
    pub created_unix: u64,
    /// The bomb variant's belief model saved with the net (opaque JSON here:
    /// `atomzero_belief::BeliefModel`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub belief: Option<serde_json::Value>,
}

/// Where a net came from: the caller's part of [`NetMetadata`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Provenance {
    /// The variant the net was trained for.
    pub variant: String,
    /// Optimizer steps behind these weights.
    pub training_step: u64,
    /// The net these weights were trained from, if any.
    pub parent: Option<String>,
    /// The bomb variant's belief model to save in the sidecar (JSON), if any.
    pub belief: Option<serde_json::Value>,
}

/// The sidecar path of a weights file: its extension replaced by `json`.
pub fn sidecar_path(weights: &Path) -> PathBuf {
    weights.with_extension("json")
}

impl Net {
    /// Saves the weights to `path` (conventionally `<name>.safetensors`) and the sidecar to
    /// `<name>.json`, each atomically (temporary file, fsync, rename); overwrites existing
    /// files. Returns the sidecar written.
    pub fn save(
        &self,
        path: &Path,
        provenance: &Provenance,
    ) -> Result<NetMetadata, CheckpointError> {
        let sidecar = checked_sidecar_path(path)?;
        let weights = self.to_safetensors().map_err(|e| weights_error(path, e.0))?;
        check_values(path, &weights)?;

        let metadata = NetMetadata {
            format_version: NET_FORMAT_VERSION,
            net: self.config().clone(),
            encoding_version: ENCODING_VERSION,
            variant: provenance.variant.clone(),
            training_step: provenance.training_step,
            parent: provenance.parent.clone(),
            weights_bytes: weights.len() as u64,
            weights_fnv1a64: format!("{:016x}", fnv1a64(&weights)),
            created_unix: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |elapsed| elapsed.as_secs()),
            belief: provenance.belief.clone(),
        };
        let mut json = serde_json::to_vec_pretty(&metadata)
            .map_err(|source| CheckpointError::Json { path: sidecar.clone(), source })?;
        json.push(b'\n');

        write_atomically(path, &weights)?;
        write_atomically(&sidecar, &json)?;
        Ok(metadata)
    }
}

/// Loads a net, taking the architecture from its sidecar. `device` is where the weights go
/// (a plain device for inference, `device.autodiff()` to train).
pub fn load(path: &Path, device: &Device) -> Result<(Net, NetMetadata), CheckpointError> {
    let metadata = read_metadata(path)?;
    let net = load_weights(path, &metadata, device)?;
    Ok((net, metadata))
}

/// Loads a net that must have architecture `config`: a sidecar that differs in any field
/// fails with [`CheckpointError::Mismatch`] naming each field.
pub fn load_with_config(
    path: &Path,
    config: &NetConfig,
    device: &Device,
) -> Result<(Net, NetMetadata), CheckpointError> {
    let metadata = read_metadata(path)?;
    let differences = config.differences(&metadata.net);
    if !differences.is_empty() {
        return Err(CheckpointError::Mismatch { path: sidecar_path(path), differences });
    }
    let net = load_weights(path, &metadata, device)?;
    Ok((net, metadata))
}

/// Reads and checks the sidecar of the weights file `path`: format version, encoding version
/// and a buildable architecture.
pub fn read_metadata(path: &Path) -> Result<NetMetadata, CheckpointError> {
    let sidecar = checked_sidecar_path(path)?;
    // Name the weights file first: `Model /tmp` is a directory, not a missing `/tmp.json`.
    match fs::metadata(path) {
        Ok(meta) if meta.is_dir() => {
            return Err(CheckpointError::BadPath {
                path: path.to_path_buf(),
                reason: "is a directory, not a network (a <name>.safetensors weights file \
                         with its <name>.json sidecar)",
            });
        }
        Ok(_) => {}
        Err(source) => return Err(CheckpointError::Io { path: path.to_path_buf(), source }),
    }
    let bytes = fs::read(&sidecar)
        .map_err(|source| CheckpointError::Io { path: sidecar.clone(), source })?;
    let json_error = |source| CheckpointError::Json { path: sidecar.clone(), source };

    // Version first, so a newer format is reported as such and not as an unknown field.
    let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(json_error)?;
    let found = value.get("format_version").and_then(serde_json::Value::as_u64);
    if found != Some(u64::from(NET_FORMAT_VERSION)) {
        return Err(CheckpointError::FormatVersion { path: sidecar, found });
    }
    // `NetConfig` fills missing fields with defaults (handy in configs, wrong for weights).
    if let Some(field) = missing_net_field(&value) {
        return Err(CheckpointError::MissingField { path: sidecar, field });
    }
    let metadata: NetMetadata = serde_json::from_value(value).map_err(json_error)?;

    if !READABLE_ENCODING_VERSIONS.contains(&metadata.encoding_version) {
        let difference = FieldDifference {
            field: "encoding_version",
            file: metadata.encoding_version.to_string(),
            wanted: format!(
                "{} to {}",
                READABLE_ENCODING_VERSIONS.start(),
                READABLE_ENCODING_VERSIONS.end()
            ),
        };
        return Err(CheckpointError::Mismatch { path: sidecar, differences: vec![difference] });
    }
    metadata.net.validate().map_err(|source| CheckpointError::Config { path: sidecar, source })?;
    Ok(metadata)
}

/// `net` fields added after format version 1 whose default (`false`) is what every net saved
/// before them is: a sidecar may omit these, and only these.
const NET_FIELDS_ADDED_LATER: [&str; 1] = ["opponent_policy"];

fn missing_net_field(value: &serde_json::Value) -> Option<String> {
    let template = serde_json::to_value(NetConfig::tiny()).ok()?;
    let net = value.get("net")?;
    let template = template.as_object()?;
    template
        .keys()
        .filter(|key| !NET_FIELDS_ADDED_LATER.contains(&key.as_str()))
        .find(|key| net.get(key.as_str()).is_none())
        .map(|key| format!("net.{key}"))
}

fn load_weights(
    path: &Path,
    metadata: &NetMetadata,
    device: &Device,
) -> Result<Net, CheckpointError> {
    let bytes = fs::read(path)
        .map_err(|source| CheckpointError::Io { path: path.to_path_buf(), source })?;
    if bytes.len() as u64 != metadata.weights_bytes {
        return Err(CheckpointError::Size {
            path: path.to_path_buf(),
            expected: metadata.weights_bytes,
            found: bytes.len() as u64,
        });
    }
    let checksum = format!("{:016x}", fnv1a64(&bytes));
    if checksum != metadata.weights_fnv1a64 {
        return Err(CheckpointError::Checksum {
            path: path.to_path_buf(),
            expected: metadata.weights_fnv1a64.clone(),
            found: checksum,
        });
    }

    metadata
        .net
        .validate()
        .map_err(|source| CheckpointError::Config { path: sidecar_path(path), source })?;
    check_weights(path, &bytes, &metadata.net)?;
    metadata.net.load_safetensors(bytes, device).map_err(|e| weights_error(path, e.0))
}

/// Checks the safetensors `bytes` of the weights file `path` against the architecture
/// `config` (from its sidecar) before Burn reads them: valid safetensors, the shapes of the
/// architecture (else [`CheckpointError::Architecture`] naming the fields that differ), and
/// only finite values (else [`CheckpointError::NonFinite`] naming the tensor).
pub fn check_weights(path: &Path, bytes: &[u8], config: &NetConfig) -> Result<(), CheckpointError> {
    let tensors = safetensors::SafeTensors::deserialize(bytes)
        .map_err(|e| weights_error(path, format!("not a safetensors file: {e}")))?;
    let shape = |name: &str| tensors.tensor(name).ok().map(|t| t.shape().to_vec());
    let dim = |name: &str, axis: usize| shape(name).and_then(|s| s.get(axis).copied());
    let blocks = tensors
        .names()
        .iter()
        .filter_map(|n| {
            n.strip_prefix("tower.")?.strip_suffix(".first.conv.weight")?.parse::<usize>().ok()
        })
        .max()
        .map_or(0, |b| b + 1);
    let mut differences = Vec::new();
    let mut field = |name: &'static str, found: Option<usize>, wanted: usize| {
        let found = found.map_or_else(|| "no such tensor".to_string(), |v| v.to_string());
        if found != wanted.to_string() {
            differences.push(FieldDifference {
                field: name,
                file: found,
                wanted: wanted.to_string(),
            });
        }
    };
    field("blocks", Some(blocks), config.blocks);
    field("filters", dim("stem.conv.weight", 0), config.filters);
    field("input planes", dim("stem.conv.weight", 1), config.input_planes());
    field("value_channels", dim("value_conv.conv.weight", 0), config.value_channels);
    field("value_hidden", dim("value_hidden.weight", 1), config.value_hidden);
    field("policy output planes", dim("policy_out.weight", 0), config.policy_out_planes());
    let se_hidden = if config.blocks > 0 { dim("tower.0.se.squeeze.weight", 1) } else { None };
    if config.blocks > 0 && se_hidden != config.se_hidden() {
        differences.push(FieldDifference {
            field: "squeeze-excitation hidden units",
            file: se_hidden.map_or_else(|| "none".to_string(), |h| h.to_string()),
            wanted: config.se_hidden().map_or_else(|| "none".to_string(), |h| h.to_string()),
        });
    }
    if !differences.is_empty() {
        return Err(CheckpointError::Architecture { path: path.to_path_buf(), differences });
    }
    check_values(path, bytes)
}

/// Every f32 of the safetensors `bytes` is finite and every batch norm's running variance is
/// not negative (else [`CheckpointError::NonFinite`] naming `path` and the tensor).
fn check_values(path: &Path, bytes: &[u8]) -> Result<(), CheckpointError> {
    let tensors = safetensors::SafeTensors::deserialize(bytes)
        .map_err(|e| weights_error(path, format!("not a safetensors file: {e}")))?;
    let mut names = tensors.names();
    names.sort_unstable();
    for name in names {
        let Ok(view) = tensors.tensor(name) else { continue };
        if view.dtype() != safetensors::Dtype::F32 {
            continue;
        }
        let variance = name.ends_with("running_var");
        let bad = view.data().chunks_exact(4).any(|b| {
            let v = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            !v.is_finite() || (variance && v < 0.0)
        });
        if bad {
            return Err(CheckpointError::NonFinite {
                path: path.to_path_buf(),
                tensor: name.to_string(),
            });
        }
    }
    Ok(())
}

/// Weights held in memory as safetensors bytes that could not be written or loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WeightsError(pub String);

impl fmt::Display for WeightsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WeightsError {}

impl Net {
    /// The weights as the safetensors bytes [`Net::save`] writes (Burn's tensor names, e.g.
    /// `tower.3.first.norm.running_var`; running batch-norm statistics included).
    pub fn to_safetensors(&self) -> Result<Vec<u8>, WeightsError> {
        let mut store = SafetensorsStore::from_bytes(None);
        // `valid` folds batch norm's pending running-statistics update into its value; saving
        // the training module directly would store the statistics one step stale.
        self.valid().save_into(&mut store).map_err(|e| WeightsError(e.to_string()))?;
        store.get_bytes().map_err(|e| WeightsError(e.to_string()))
    }
}

impl NetConfig {
    /// A net of this architecture on `device` holding the weights in the safetensors `bytes`
    /// (as [`Net::to_safetensors`] writes them): every tensor of the architecture must be
    /// there with its shape, and no other.
    pub fn load_safetensors(&self, bytes: Vec<u8>, device: &Device) -> Result<Net, WeightsError> {
        let mut net = self.init(device).map_err(|e| WeightsError(e.to_string()))?;
        let mut store = SafetensorsStore::from_bytes(Some(bytes));
        let result = net.load_from(&mut store).map_err(|e| WeightsError(e.to_string()))?;
        if !result.errors.is_empty() || !result.missing.is_empty() || !result.unused.is_empty() {
            let mut problems: Vec<String> = result.errors.iter().map(ToString::to_string).collect();
            problems
                .extend(result.missing.iter().map(|(name, _)| format!("missing tensor {name}")));
            problems.extend(result.unused.iter().map(|name| format!("unexpected tensor {name}")));
            return Err(WeightsError(problems.join("; ")));
        }
        Ok(net)
    }
}

fn checked_sidecar_path(path: &Path) -> Result<PathBuf, CheckpointError> {
    let sidecar = sidecar_path(path);
    if sidecar == path || path.file_name().is_none() {
        return Err(CheckpointError::BadPath {
            path: path.to_path_buf(),
            reason: "the weights path must name a file not ending in .json \
                     (conventionally <name>.safetensors)",
        });
    }
    Ok(sidecar)
}

fn weights_error(path: &Path, error: impl fmt::Display) -> CheckpointError {
    CheckpointError::Weights { path: path.to_path_buf(), message: shorten(&error.to_string()) }
}

/// A message cut to a readable length (Burn's store reports every tensor, thousands of
/// characters).
fn shorten(message: &str) -> String {
    const MAX: usize = 400;
    if message.chars().count() <= MAX {
        return message.to_string();
    }
    let head: String = message.chars().take(MAX).collect();
    format!("{head}... ({} more characters)", message.chars().count() - MAX)
}

/// Writes `bytes` to `path` by `atomzero_files::write_atomic` (a synced temporary renamed
/// over it, the directory synced): readers see the old file or the new one, never a partial one.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), CheckpointError> {
    atomzero_files::write_atomic(path, bytes)
        .map_err(|source| CheckpointError::Io { path: path.to_path_buf(), source })
}

/// FNV-1a, 64 bit: enough to catch a damaged or mismatched file (not an adversary).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// Why a net could not be saved or loaded.
#[derive(Debug)]
pub enum CheckpointError {
    /// Reading or writing a file failed.
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// The sidecar is not valid JSON or does not have the expected fields (e.g. truncated).
    Json {
        /// The sidecar.
        path: PathBuf,
        /// The parser's complaint.
        source: serde_json::Error,
    },
    /// The sidecar's `format_version` is missing or not [`NET_FORMAT_VERSION`].
    FormatVersion {
        /// The sidecar.
        path: PathBuf,
        /// The version found, if any.
        found: Option<u64>,
    },
    /// A field of the sidecar's `net` is missing.
    MissingField {
        /// The sidecar.
        path: PathBuf,
        /// The field, e.g. `net.filters`.
        field: String,
    },
    /// The saved net's architecture or encoding version differs from what the caller wants.
    Mismatch {
        /// The sidecar.
        path: PathBuf,
        /// Each field that differs.
        differences: Vec<FieldDifference>,
    },
    /// The sidecar's architecture cannot be built.
    Config {
        /// The sidecar.
        path: PathBuf,
        /// What is wrong with it.
        source: ConfigError,
    },
    /// The weights file does not have the size the sidecar records (truncated or replaced).
    Size {
        /// The weights file.
        path: PathBuf,
        /// Size recorded in the sidecar.
        expected: u64,
        /// Actual size.
        found: u64,
    },
    /// The weights file's checksum differs from the sidecar's (damaged or replaced).
    Checksum {
        /// The weights file.
        path: PathBuf,
        /// Checksum recorded in the sidecar.
        expected: String,
        /// Checksum of the file.
        found: String,
    },
    /// The weights file is not valid safetensors or does not fit the architecture.
    Weights {
        /// The weights file.
        path: PathBuf,
        /// What Burn's store reported.
        message: String,
    },
    /// The weights file's tensors are those of another architecture than its sidecar's.
    Architecture {
        /// The weights file.
        path: PathBuf,
        /// Each field where the weights (`file`) and the sidecar (`wanted`) differ.
        differences: Vec<FieldDifference>,
    },
    /// A tensor holds NaN or infinity (or a batch norm a negative variance).
    NonFinite {
        /// The weights file.
        path: PathBuf,
        /// The tensor's name.
        tensor: String,
    },
    /// The weights path cannot be used (e.g. it ends in `.json`, the sidecar's extension).
    BadPath {
        /// The path.
        path: PathBuf,
        /// Why.
        reason: &'static str,
    },
}

impl fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckpointError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            CheckpointError::Json { path, source } => {
                write!(f, "{}: invalid network sidecar: {source}", path.display())
            }
            CheckpointError::FormatVersion { path, found: Some(found) } => write!(
                f,
                "{}: sidecar format version {found}, this build reads version {NET_FORMAT_VERSION}",
                path.display()
            ),
            CheckpointError::FormatVersion { path, found: None } => write!(
                f,
                "{}: sidecar has no numeric format_version (expected {NET_FORMAT_VERSION})",
                path.display()
            ),
            CheckpointError::MissingField { path, field } => {
                write!(f, "{}: sidecar lacks field {field}", path.display())
            }
            CheckpointError::Mismatch { path, differences } => {
                let list: Vec<String> = differences.iter().map(ToString::to_string).collect();
                write!(f, "{}: network does not match: {}", path.display(), list.join("; "))
            }
            CheckpointError::Config { path, source } => {
                write!(f, "{}: invalid architecture: {source}", path.display())
            }
            CheckpointError::Size { path, expected, found } => write!(
                f,
                "{}: weights file is {found} bytes, its sidecar says {expected} \
                 (truncated, or replaced without its sidecar)",
                path.display()
            ),
            CheckpointError::Checksum { path, expected, found } => write!(
                f,
                "{}: weights checksum {found} differs from the sidecar's {expected} \
                 (damaged, or replaced without its sidecar)",
                path.display()
            ),
            CheckpointError::Weights { path, message } => {
                write!(f, "{}: cannot load weights: {message}", path.display())
            }
            CheckpointError::Architecture { path, differences } => {
                let list: Vec<String> = differences
                    .iter()
                    .map(|d| {
                        format!(
                            "{}: the weights have {}, the sidecar says {}",
                            d.field, d.file, d.wanted
                        )
                    })
                    .collect();
                write!(
                    f,
                    "{}: the weights do not fit their sidecar's architecture: {}",
                    path.display(),
                    list.join("; ")
                )
            }
            CheckpointError::NonFinite { path, tensor } => write!(
                f,
                "{}: tensor {tensor} holds non-finite values (NaN or infinity, or a negative \
                 variance)",
                path.display()
            ),
            CheckpointError::BadPath { path, reason } => {
                write!(f, "{}: {reason}", path.display())
            }
        }
    }
}

impl std::error::Error for CheckpointError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CheckpointError::Io { source, .. } => Some(source),
            CheckpointError::Json { source, .. } => Some(source),
            CheckpointError::Config { source, .. } => Some(source),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a64_matches_reference_values() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn sidecar_paths() {
        assert_eq!(sidecar_path(Path::new("m/000001.safetensors")), Path::new("m/000001.json"));
        assert!(checked_sidecar_path(Path::new("m/net.json")).is_err());
    }
}
