//! Whether a training run fits in memory, checked before anything is allocated: a config of
//! `blocks = 256, filters = 4096` used to be accepted and then allocated until the process
//! was killed (`memory allocation of 603979776 bytes failed`).
//!
//! [`estimate`] is a lower bound of what a training step holds at once:
//!
//! | part | bytes |
//! |---|---|
//! | weights | 4 per parameter ([`NetConfig::parameters`]) |
//! | gradients and optimizer state | 4 per parameter for the gradient, 4 for each optimizer moment (one: Nesterov SGD; AdamW has two) |
//! | activations kept for the backward pass | `batch_size` × (2 × blocks + 2) 3×3 convolution layers × filters × 64 squares × 4 bytes × 3 (the layer's input, its output before and after batch norm) |
//!
//! [`check`] refuses a config whose estimate exceeds the machine's memory (`MemTotal` of
//! `/proc/meminfo`; on systems without it only the weights' own cap,
//! `atomzero_nn::MAX_WEIGHT_BYTES`, applies), naming the sizes. A GPU's memory is smaller
//! than its host's, so what does not fit here does not fit there either.

use atomzero_nn::{NetConfig, human_bytes};

/// The memory a training step needs at least (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrainingMemory {
    /// The weights.
    pub weights: u64,
    /// Gradients and one optimizer moment.
    pub optimizer: u64,
    /// Activations of one batch kept for the backward pass.
    pub activations: u64,
}

impl TrainingMemory {
    /// The sum of the parts.
    pub fn total(&self) -> u64 {
        self.weights.saturating_add(self.optimizer).saturating_add(self.activations)
    }
}

/// A lower bound of the memory one training step of `net` on `batch_size` positions holds.
pub fn estimate(net: &NetConfig, batch_size: usize) -> TrainingMemory {
    let weights = net.parameters().saturating_mul(4);
    let layers = (2 * net.blocks as u64).saturating_add(2);
    let activations = (batch_size as u64)
        .saturating_mul(layers)
        .saturating_mul(net.filters as u64)
        .saturating_mul(64 * 4 * 3);
    TrainingMemory { weights, optimizer: weights.saturating_mul(2), activations }
}

/// The machine's memory in bytes (`MemTotal` of `/proc/meminfo`), if it can be read.
pub fn machine_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// Refuses a net and batch whose training cannot fit in `memory` bytes (`None`: unknown, only
/// the weights' cap applies), with a message naming the sizes.
pub fn check(net: &NetConfig, batch_size: usize, memory: Option<u64>) -> Result<(), String> {
    net.validate().map_err(|e| format!("net: {e}"))?;
    let need = estimate(net, batch_size);
    match memory {
        Some(memory) if need.total() > memory => Err(format!(
            "training a net of {} blocks x {} filters on batches of {batch_size} needs at least \
             {} (weights {}, gradients and optimizer state {}, activations of one batch {}), \
             more than this machine's {} of memory: use a smaller net or train.batch_size",
            net.blocks,
            net.filters,
            human_bytes(need.total()),
            human_bytes(need.weights),
            human_bytes(need.optimizer),
            human_bytes(need.activations),
            human_bytes(memory)
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issues_net_is_refused_by_its_weights_and_a_huge_batch_by_its_activations() {
        let huge = NetConfig { blocks: 256, filters: 4096, ..NetConfig::default_size() };
        let err = check(&huge, 256, None).unwrap_err();
        assert!(err.contains("256 blocks x 4096 filters") && err.contains("GB"), "{err}");
        // The default net fits 16 GB at its batch size, not at a batch of ten million.
        let net = NetConfig::default_size();
        check(&net, 256, Some(16 << 30)).unwrap();
        let err = check(&net, 10_000_000, Some(16 << 30)).unwrap_err();
        assert!(err.contains("batches of 10000000") && err.contains("activations"), "{err}");
        assert!(check(&NetConfig::tiny(), 256, Some(1 << 30)).is_ok());
    }

    #[test]
    fn machine_memory_is_read_on_linux() {
        if cfg!(target_os = "linux") {
            assert!(machine_memory().is_some_and(|m| m > 0));
        }
    }
}
