//! The network's architecture as data: [`NetConfig`], saved beside every set of weights and
//! checked on load, so a net can be rebuilt without the training config.

use std::fmt;

use atomzero_encoding::{Encoder, EncoderConfig, POLICY_PLANES};
use serde::{Deserialize, Serialize};

/// Upper bounds on the architecture, so that a damaged or hostile sidecar cannot make us
/// allocate terabytes: far above anything trainable on the machines we target.
const MAX_BLOCKS: usize = 256;
const MAX_FILTERS: usize = 4096;
const MAX_VALUE_CHANNELS: usize = 4096;
const MAX_VALUE_HIDDEN: usize = 65_536;
const MAX_HISTORY: usize = 64;

/// Architecture of the residual network (AlphaZero body, lc0-style heads).
///
/// Every field takes part in the weights' shapes: a file saved with one config cannot be loaded
/// with another, and [`NetConfig::differences`] names what differs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NetConfig {
    /// Residual blocks in the tower (0 = stem and heads only).
    pub blocks: usize,
    /// Channels of every 3×3 convolution in the stem, the tower and the policy head.
    pub filters: usize,
    /// Squeeze-excitation in each residual block: 0 = none; otherwise the block's SE layer has
    /// `filters / se_ratio` hidden units (must be ≥ 1).
    pub se_ratio: usize,
    /// Hidden units of the value head's fully connected layer.
    pub value_hidden: usize,
    /// Channels of the value head's 1×1 convolution (flattened into `value_channels * 64`).
    pub value_channels: usize,
    /// The input encoding; the stem's input channels are `Encoder::new(encoder).planes()`.
    pub encoder: EncoderConfig,
    /// KataGo's auxiliary opponent-policy head: the policy head's last 1×1 convolution has a
    /// second set of 73 output planes that predict the opponent's reply (a training target
    /// only; inference and export read the first 73). `false` in nets saved before it existed.
    pub opponent_policy: bool,
}

impl Default for NetConfig {
    /// [`NetConfig::default_size`].
    fn default() -> NetConfig {
        NetConfig::default_size()
    }
}

impl NetConfig {
    /// 4 blocks × 32 filters, no squeeze-excitation: for tests, CI and laptops.
    pub fn tiny() -> NetConfig {
        NetConfig {
            blocks: 4,
            filters: 32,
            se_ratio: 0,
            value_hidden: 64,
            value_channels: 8,
            encoder: EncoderConfig::default(),
            opponent_policy: false,
        }
    }

    /// 10 blocks × 128 filters with squeeze-excitation (ratio 4): a real run.
    pub fn default_size() -> NetConfig {
        NetConfig {
            blocks: 10,
            filters: 128,
            se_ratio: 4,
            value_hidden: 128,
            value_channels: 32,
            encoder: EncoderConfig::default(),
            opponent_policy: false,
        }
    }

    /// Number of input planes (`[B, planes, 8, 8]`).
    pub fn input_planes(&self) -> usize {
        Encoder::new(self.encoder).planes()
    }

    /// Output planes of the policy head's last convolution: 73, or 146 with the opponent's
    /// reply (`opponent_policy`).
    pub fn policy_out_planes(&self) -> usize {
        POLICY_PLANES * (1 + usize::from(self.opponent_policy))
    }

    /// Hidden units of each squeeze-excitation layer, `None` without SE.
    pub fn se_hidden(&self) -> Option<usize> {
        (self.se_ratio > 0).then(|| self.filters / self.se_ratio)
    }

    /// Checks that the config describes a network that can be built.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let check = |field: &'static str, value: usize, min: usize, max: usize| {
            if value < min || value > max {
                Err(ConfigError::OutOfRange { field, value, min, max })
            } else {
                Ok(())
            }
        };
        check("blocks", self.blocks, 0, MAX_BLOCKS)?;
        check("filters", self.filters, 1, MAX_FILTERS)?;
        check("value_channels", self.value_channels, 1, MAX_VALUE_CHANNELS)?;
        check("value_hidden", self.value_hidden, 1, MAX_VALUE_HIDDEN)?;
        check("encoder.history", self.encoder.history, 0, MAX_HISTORY)?;
        if self.se_ratio > self.filters {
            return Err(ConfigError::SeRatio { se_ratio: self.se_ratio, filters: self.filters });
        }
        Ok(())
    }

    /// Every field where `file` (a saved net) differs from `self` (what the caller wants), in
    /// declaration order.
    pub fn differences(&self, file: &NetConfig) -> Vec<FieldDifference> {
        let mut out = Vec::new();
        let mut field = |name: &'static str, file: usize, wanted: usize| {
            if file != wanted {
                out.push(FieldDifference {
                    field: name,
                    file: file.to_string(),
                    wanted: wanted.to_string(),
                });
            }
        };
        field("blocks", file.blocks, self.blocks);
        field("filters", file.filters, self.filters);
        field("se_ratio", file.se_ratio, self.se_ratio);
        field("value_hidden", file.value_hidden, self.value_hidden);
        field("value_channels", file.value_channels, self.value_channels);
        field("encoder.history", file.encoder.history, self.encoder.history);
        field("encoder.bomb", usize::from(file.encoder.bomb), usize::from(self.encoder.bomb));
        if file.opponent_policy != self.opponent_policy {
            out.push(FieldDifference {
                field: "opponent_policy",
                file: file.opponent_policy.to_string(),
                wanted: self.opponent_policy.to_string(),
            });
        }
        out
    }
}

/// One field that differs between a saved net and the config a caller asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldDifference {
    /// The field's name (`filters`, `encoder.history`, `encoding_version`, ...).
    pub field: &'static str,
    /// The value in the file.
    pub file: String,
    /// The value the caller wants.
    pub wanted: String,
}

impl fmt::Display for FieldDifference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: file has {}, config wants {}", self.field, self.file, self.wanted)
    }
}

/// A [`NetConfig`] that cannot be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// A size outside its allowed range.
    OutOfRange {
        /// The field.
        field: &'static str,
        /// Its value.
        value: usize,
        /// Smallest allowed value.
        min: usize,
        /// Largest allowed value.
        max: usize,
    },
    /// `se_ratio` larger than `filters` would leave the SE layer without hidden units.
    SeRatio {
        /// The ratio.
        se_ratio: usize,
        /// The filters.
        filters: usize,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::OutOfRange { field, value, min, max } => {
                write!(f, "{field} = {value} is outside {min}..={max}")
            }
            ConfigError::SeRatio { se_ratio, filters } => write!(
                f,
                "se_ratio = {se_ratio} exceeds filters = {filters} (the SE layer would have no hidden units)"
            ),
        }
    }
}

impl std::error::Error for ConfigError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_validate_and_round_trip() {
        for config in [NetConfig::tiny(), NetConfig::default_size()] {
            config.validate().unwrap();
            let json = serde_json::to_string(&config).unwrap();
            assert_eq!(serde_json::from_str::<NetConfig>(&json).unwrap(), config);
        }
        assert_eq!(NetConfig::default(), NetConfig::default_size());
    }

    #[test]
    fn unknown_fields_are_rejected_and_missing_fields_default() {
        assert!(serde_json::from_str::<NetConfig>(r#"{"blocks": 2, "filterz": 3}"#).is_err());
        let partial: NetConfig = serde_json::from_str(r#"{"blocks": 2}"#).unwrap();
        assert_eq!(partial.blocks, 2);
        assert_eq!(partial.filters, NetConfig::default_size().filters);
    }

    #[test]
    fn invalid_configs_are_named() {
        let mut config = NetConfig::tiny();
        config.filters = 0;
        assert!(config.validate().unwrap_err().to_string().starts_with("filters = 0"));
        let mut config = NetConfig::tiny();
        config.se_ratio = 64;
        assert!(config.validate().unwrap_err().to_string().contains("se_ratio"));
    }

    #[test]
    fn differences_name_the_field() {
        let mut file = NetConfig::tiny();
        file.filters = 64;
        let diffs = NetConfig::tiny().differences(&file);
        assert_eq!(diffs.len(), 1);
        assert_eq!(diffs[0].to_string(), "filters: file has 64, config wants 32");
    }
}
