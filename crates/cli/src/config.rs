//! The run configuration: one TOML file with a section per component. Only this crate knows
//! TOML; each section is the component's own typed config (`deny_unknown_fields`, defaults on
//! every field). The resolved config (every key, defaults filled in) is saved beside what a
//! command writes.

use anyhow::{Context, Result, bail};
use atomzero_nn::{DeviceKind, NetConfig};
use atomzero_rules::Variant;
use atomzero_selfplay::SelfplayConfig;
use atomzero_train::TrainerConfig;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The embedded default config (`configs/tiny.toml`).
pub const TINY_TOML: &str = include_str!("../../../configs/tiny.toml");

/// Everything a run needs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Rule variant (atomic, nocheckatomic, atomar, deathmatch, pawnblast).
    #[serde(default = "default_variant")]
    pub variant: String,
    /// Master seed; every stage derives its own.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Where the network runs: "cpu", "cuda" or "wgpu" (GPU backends need the cargo feature).
    #[serde(default = "default_device")]
    pub device: String,
    /// The network architecture.
    #[serde(default = "NetConfig::tiny")]
    pub net: NetConfig,
    /// Self-play.
    #[serde(default)]
    pub selfplay: SelfplayConfig,
    /// Training.
    #[serde(default)]
    pub train: TrainerConfig,
}

fn default_device() -> String {
    "cpu".to_string()
}

fn default_variant() -> String {
    "atomic".to_string()
}

fn default_seed() -> u64 {
    1
}

impl Config {
    /// Parses TOML text; `origin` names the source in errors.
    pub fn from_toml(text: &str, origin: &str) -> Result<Config> {
        let config: Config = toml::from_str(text)
            .map_err(|e| anyhow::anyhow!("{origin}: {}", one_line(&e.to_string())))?;
        config.validate().map_err(|e| anyhow::anyhow!("{origin}: {e:#}"))?;
        Ok(config)
    }

    /// Reads a config file, or the embedded `configs/tiny.toml` when `path` is `None`.
    pub fn load(path: Option<&Path>) -> Result<Config> {
        match path {
            None => Config::from_toml(TINY_TOML, "configs/tiny.toml (embedded)"),
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read config {}", path.display()))?;
                Config::from_toml(&text, &path.display().to_string())
            }
        }
    }

    /// The variant, parsed.
    pub fn variant(&self) -> Result<Variant> {
        self.variant.parse::<Variant>().map_err(|e| anyhow::anyhow!("variant: {e}"))
    }

    /// The device kind, parsed.
    pub fn device(&self) -> Result<DeviceKind> {
        self.device.parse::<DeviceKind>().map_err(|e| anyhow::anyhow!("device: {e}"))
    }

    fn validate(&self) -> Result<()> {
        self.variant()?;
        self.device()?;
        self.net.validate().map_err(|e| anyhow::anyhow!("net: {e}"))?;
        if let Err(e) = self.selfplay.validate() {
            bail!("{e}");
        }
        if let Err(e) = self.train.validate() {
            bail!("{e}");
        }
        Ok(())
    }

    /// The resolved config as TOML.
    pub fn to_toml(&self) -> Result<String> {
        Ok(toml::to_string(self)?)
    }
}

/// TOML errors span several lines (with a source excerpt); keep the message to one line.
fn one_line(message: &str) -> String {
    let lines: Vec<&str> = message.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let location = lines.first().copied().unwrap_or("");
    let reason = lines.last().copied().unwrap_or("");
    // The excerpt line looks like `2 | visits = "many"`: quote it, it names the key.
    let excerpt = lines.iter().find_map(|l| {
        let (number, text) = l.split_once('|')?;
        (number.trim().parse::<usize>().is_ok() && !text.trim().is_empty()).then(|| text.trim())
    });
    match excerpt {
        _ if location == reason => reason.to_string(),
        Some(text) => format!("{location}: {reason} (in `{text}`)"),
        None => format!("{location}: {reason}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_config_parses() {
        let config = Config::load(None).unwrap();
        assert_eq!(config.variant().unwrap(), Variant::Atomic);
    }

    #[test]
    fn unknown_keys_and_wrong_types_are_named() {
        let err = Config::from_toml("variant = \"atomic\"\n[selfplay]\nvisitz = 3\n", "x.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("visitz") && err.contains("x.toml"), "{err}");
        assert!(!err.contains('\n'), "{err}");
        let err =
            Config::from_toml("[selfplay]\nvisits = \"many\"\n", "x.toml").unwrap_err().to_string();
        assert!(err.contains("visits"), "{err}");
        let err = Config::from_toml("variant = \"chess\"\n", "x.toml").unwrap_err().to_string();
        assert!(err.contains("unknown variant"), "{err}");
    }
}
