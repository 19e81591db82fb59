//! The run configuration as a TOML file: one section per component. Only this crate knows
//! TOML; the typed config ([`Config`], every section the component's own config with
//! `deny_unknown_fields` and defaults on every field) lives in `atomzero-run`. The resolved
//! config (every key, defaults filled in) is saved beside what a command writes.

use anyhow::{Context, Result};
pub use atomzero_run::Config;
use std::path::Path;

/// The embedded default config (`configs/tiny.toml`).
pub const TINY_TOML: &str = include_str!("../../../configs/tiny.toml");

/// Reading and writing a [`Config`] as TOML.
pub trait ConfigFile: Sized {
    /// Parses TOML text; `origin` names the source in errors.
    fn from_toml(text: &str, origin: &str) -> Result<Self>;
    /// Reads a config file, or the embedded `configs/tiny.toml` when `path` is `None`.
    fn load(path: Option<&Path>) -> Result<Self>;
    /// The resolved config as TOML.
    fn to_toml(&self) -> Result<String>;
}

impl ConfigFile for Config {
    fn from_toml(text: &str, origin: &str) -> Result<Config> {
        // A UTF-8 byte-order mark (some editors write one) is not TOML.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let config: Config = toml::from_str(text)
            .map_err(|e| anyhow::anyhow!("{origin}: {}", one_line(&e.to_string())))?;
        config.validate().map_err(|e| anyhow::anyhow!("{origin}: {e}"))?;
        Ok(config)
    }

    fn load(path: Option<&Path>) -> Result<Config> {
        match path {
            None => Config::from_toml(TINY_TOML, "configs/tiny.toml (embedded)"),
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read config {}", path.display()))?;
                Config::from_toml(&text, &path.display().to_string())
            }
        }
    }

    fn to_toml(&self) -> Result<String> {
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
        assert_eq!(config.variant().unwrap(), atomzero_rules::Variant::Atomic);
    }

    #[test]
    fn every_shipped_config_parses() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                let config = Config::load(Some(&path)).unwrap();
                // The resolved form parses back to the same config.
                let back = Config::from_toml(&config.to_toml().unwrap(), "resolved").unwrap();
                assert_eq!(back, config, "{}", path.display());
                seen += 1;
            }
        }
        assert!(seen >= 3, "tiny, default and ci configs");
        let default = Config::load(Some(&dir.join("default.toml"))).unwrap();
        assert_eq!((default.net.blocks, default.net.filters), (10, 128));
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
        // The bomb variant needs a network with its input planes, and no Balanced start.
        let err = Config::from_toml("variant = \"bomb\"\n", "x.toml").unwrap_err().to_string();
        assert!(err.contains("variant = \"bomb\": the network needs"), "{err}");
        assert!(err.contains("net.encoder.bomb = true"), "{err}");
        assert!(!err.contains('\n'), "{err}");
        let text = "variant = \"bomb\"\nstart = \"balanced\"\n[net.encoder]\nbomb = true\n";
        let err = Config::from_toml(text, "x.toml").unwrap_err().to_string();
        assert!(err.contains("start must be \"standard\""), "{err}");
        let bomb = include_str!("../../../configs/tiny-bomb.toml");
        let config = Config::from_toml(bomb, "configs/tiny-bomb.toml").unwrap();
        assert_eq!(config.variant().unwrap(), atomzero_rules::Variant::Bomb);
        assert!(config.net.encoder.bomb);
        let err = Config::from_toml("start = \"even\"\n", "x.toml").unwrap_err().to_string();
        assert!(err.contains("start: unknown start 'even'"), "{err}");
        let text = "start = \"balanced\"\n[run]\nopenings = \"book.epd\"\n";
        let err = Config::from_toml(text, "x.toml").unwrap_err().to_string();
        assert!(err.contains("cannot be combined with run.openings"), "{err}");
    }

    #[test]
    fn the_start_defaults_to_standard_and_reads_balanced() {
        use atomzero_rules::Start;
        // A config without the key (every config before the Balanced start) is standard.
        assert_eq!(Config::from_toml("", "x.toml").unwrap().start().unwrap(), Start::Standard);
        let config = Config::from_toml("start = \"balanced\"\n", "x.toml").unwrap();
        assert_eq!(config.start().unwrap(), Start::Balanced);
        assert!(config.to_toml().unwrap().contains("start = \"balanced\""));
    }
}
