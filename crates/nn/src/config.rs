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
/// The largest network, in bytes of f32 weights (1 Gi parameters): each field's bound alone
/// still allows `blocks = 256, filters = 4096` (77 G parameters, 288 GiB), which would
/// allocate until the machine dies.
pub const MAX_WEIGHT_BYTES: u64 = 4 << 30;

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
        let parameters = self.parameters();
        if parameters.saturating_mul(4) > MAX_WEIGHT_BYTES {
            return Err(ConfigError::TooLarge {
                blocks: self.blocks,
                filters: self.filters,
                parameters,
                max_bytes: MAX_WEIGHT_BYTES,
            });
        }
        Ok(())
    }

    /// The number of stored values of the net (weights, biases and batch-norm statistics, as
    /// saved): 4 bytes each. Computed without overflow for any field values.
    pub fn parameters(&self) -> u64 {
        let f = self.filters as u64;
        let planes = self.input_planes() as u64;
        // A convolution without bias and its batch norm (γ, β, running mean and variance).
        let conv_bn = |c_in: u64, c_out: u64, k: u64| {
            c_in.saturating_mul(c_out).saturating_mul(k * k).saturating_add(4 * c_out)
        };
        let dense = |d_in: u64, d_out: u64| d_in.saturating_mul(d_out).saturating_add(d_out);
        let se = match self.se_hidden() {
            Some(h) => dense(f, h as u64).saturating_add(dense(h as u64, 2 * f)),
            None => 0,
        };
        let block = conv_bn(f, f, 3).saturating_mul(2).saturating_add(se);
        let out = self.policy_out_planes() as u64;
        let value_channels = self.value_channels as u64;
        let hidden = self.value_hidden as u64;
        conv_bn(planes, f, 3)
            .saturating_add(block.saturating_mul(self.blocks as u64))
            .saturating_add(conv_bn(f, f, 3))
            .saturating_add(f.saturating_mul(out).saturating_add(out))
            .saturating_add(conv_bn(f, value_channels, 1))
            .saturating_add(dense(value_channels.saturating_mul(64), hidden))
            .saturating_add(dense(hidden, 3))
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
    /// The weights alone would exceed [`MAX_WEIGHT_BYTES`].
    TooLarge {
        /// The config's blocks.
        blocks: usize,
        /// The config's filters.
        filters: usize,
        /// Its parameter count.
        parameters: u64,
        /// The cap in bytes.
        max_bytes: u64,
    },
}

/// `bytes` for people: `512 B`, `6.7 MB`, `288.0 GB` (decimal units).
pub fn human_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    if b < 1e3 {
        format!("{bytes} B")
    } else if b < 1e6 {
        format!("{:.1} kB", b / 1e3)
    } else if b < 1e9 {
        format!("{:.1} MB", b / 1e6)
    } else {
        format!("{:.1} GB", b / 1e9)
    }
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
            ConfigError::TooLarge { blocks, filters, parameters, max_bytes } => write!(
                f,
                "a net of {blocks} blocks x {filters} filters has {parameters} parameters \
                 ({} of weights), over the limit of {}",
                human_bytes(parameters.saturating_mul(4)),
                human_bytes(*max_bytes)
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
