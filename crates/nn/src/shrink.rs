//! Shrinking a net in place: a narrower net (fewer filters, the same blocks) that keeps the
//! channels of the larger one that matter most, to fine-tune at a size that searches more
//! playouts a second ("structured pruning"; Li et al., "Pruning Filters for Efficient
//! ConvNets", 2017, rank filters by their weights' magnitude, Liu et al.'s "network slimming",
//! 2017, by batch norm's scale). The narrower net does not compute what the larger one did,
//! but it starts close to it, which training from random weights on the same data does not
//! (docs/experiments.md, e24).
//!
//! A channel's importance is the size of what it carries times the weight its readers give it,
//! both read from the weights alone (no data):
//!
//! ```text
//! carried   a conv-bn output o: E[relu(γ·z + β)] over z ~ N(0, 1) (batch norm makes the
//!           conv's output about standard normal); a channel of the residual stream: the
//!           stem's carried size plus, for each block, E|γ·z + β| of the second norm that
//!           adds to it
//! read      Σ over the layers reading channel i and their outputs o of
//!           |γ_o| / sqrt(var_o + ε) · Σ over the kernel |W[o][i]| (the weight's effect on
//!           the reader's normalised output; the policy head's 1×1 output has no norm: |W|)
//! ```
//!
//! The residual stream keeps one set of channels everywhere (the blocks add into it); each
//! block's inner channels (its first conv's outputs) and the policy conv's outputs are chosen
//! on their own. Kept channels stay in their order. Batch norm's running statistics are
//! copied: those of a layer that lost inputs are stale until training updates them, so a
//! shrunk net is for fine-tuning (`atomzero train --init`), not for play as it is.

use std::collections::HashMap;

use burn::tensor::Device;

use crate::config::NetConfig;
use crate::grow::{GrowError, Tensors, all_layers, get, read, write};
use crate::layout::{LayerKind, NetLayout};
use crate::model::Net;

/// Batch norm's ε (Burn's default, which the nets use).
const EPSILON: f32 = 1e-5;

/// Checks that `large`'s net can be shrunk to `small`'s: the same blocks, no more filters, no
/// squeeze-excitation, the same value head, encoder and policy head.
pub fn check_shrinkable(large: &NetConfig, small: &NetConfig) -> Result<(), GrowError> {
    small.validate().map_err(|e| GrowError(format!("the shrunk architecture: {e}")))?;
    if small.blocks != large.blocks || small.filters > large.filters {
        return Err(GrowError(format!(
            "a net shrinks in filters only: {}x{} cannot become {}x{} (blocks x filters)",
            large.blocks, large.filters, small.blocks, small.filters
        )));
    }
    if small.se_ratio != 0 || large.se_ratio != 0 {
        return Err(GrowError(
            "nets with squeeze-excitation (net.se_ratio > 0) are not shrunk".to_string(),
        ));
    }
    let same = [
        ("value_hidden", small.value_hidden == large.value_hidden),
        ("value_channels", small.value_channels == large.value_channels),
        ("encoder", small.encoder == large.encoder),
        ("opponent_policy", small.opponent_policy == large.opponent_policy),
    ];
    let differ: Vec<&str> = same.iter().filter(|(_, same)| !same).map(|(name, _)| *name).collect();
    if !differ.is_empty() {
        return Err(GrowError(format!("only filters shrink; these differ: {}", differ.join(", "))));
    }
    Ok(())
}

/// `large` shrunk to `small` (see the module docs), and the residual stream's kept channels.
pub fn shrink(
    large: &Net,
    small: &NetConfig,
    device: &Device,
) -> Result<(Net, Vec<usize>), GrowError> {
    check_shrinkable(large.config(), small)?;
    let error = |what: &str, e: &dyn std::fmt::Display| GrowError(format!("{what}: {e}"));
    let bytes = large.to_safetensors().map_err(|e| error("the large net", &e))?;
    let (bytes, stream) = shrink_tensors(large.config(), &bytes, small)?;
    let net = small.load_safetensors(bytes, device).map_err(|e| error("the shrunk net", &e))?;
    Ok((net, stream))
}

/// The shrunk net's safetensors bytes and the stream's kept channels.
fn shrink_tensors(
    large: &NetConfig,
    bytes: &[u8],
    small: &NetConfig,
) -> Result<(Vec<u8>, Vec<usize>), GrowError> {
    let t = read(bytes, "the large net")?;
    let layout = NetLayout::of(large);
    let (f, k) = (large.filters, small.filters);

    // What the residual stream's channels carry, and how much their readers read them.
    let mut carried = carried_relu(&t, &layout.stem.name)?;
    for block in &layout.tower {
        for (c, size) in carried_abs(&t, &block.second.name)?.into_iter().enumerate() {
            carried[c] += size;
        }
    }
    let mut read_by = vec![0.0f32; f];
    let readers =
        layout.tower.iter().map(|b| &b.first).chain([&layout.policy_conv, &layout.value_conv]);
    for reader in readers {
        for (c, weight) in column_weights(&t, reader, true)?.into_iter().enumerate() {
            read_by[c] += weight;
        }
    }
    let stream = top(&product(&carried, &read_by), k);

    // Each block's inner channels and the policy conv's outputs, on their own.
    let mut inner = HashMap::new();
    for block in &layout.tower {
        let score = product(
            &carried_relu(&t, &block.first.name)?,
            &column_weights(&t, &block.second, true)?,
        );
        inner.insert(block.first.name.clone(), top(&score, k));
    }
    let policy = top(
        &product(
            &carried_relu(&t, &layout.policy_conv.name)?,
            &column_weights(&t, &layout.policy_out, false)?,
        ),
        k,
    );

    let all = |n: usize| (0..n).collect::<Vec<usize>>();
    let mut out = Tensors::new();
    for layer in all_layers(&layout) {
        let name = &layer.name;
        // (kept outputs, kept inputs) of each layer.
        let (rows, cols) = if name == &layout.stem.name {
            (stream.clone(), all(large.input_planes()))
        } else if let Some(block) = layout.tower.iter().find(|b| &b.first.name == name) {
            (inner[&block.first.name].clone(), stream.clone())
        } else if let Some(block) = layout.tower.iter().find(|b| &b.second.name == name) {
            (stream.clone(), inner[&block.first.name].clone())
        } else if name == &layout.policy_conv.name {
            (policy.clone(), stream.clone())
        } else if name == &layout.policy_out.name {
            (all(large.policy_out_planes()), policy.clone())
        } else if name == &layout.value_conv.name {
            (all(large.value_channels), stream.clone())
        } else {
            (Vec::new(), Vec::new())
        };
        match layer.kind {
            LayerKind::ConvBn { c_in, kernel, .. } => {
                let area = kernel * kernel;
                let weight = layer.tensor_name("conv.weight");
                let values = pick(get(&t, &weight)?, c_in * area, &rows, &cols, area);
                out.insert(weight, (vec![rows.len(), cols.len(), kernel, kernel], values));
                for suffix in ["norm.gamma", "norm.beta", "norm.running_mean", "norm.running_var"] {
                    let name = layer.tensor_name(suffix);
                    let values = get(&t, &name)?;
                    out.insert(name, (vec![rows.len()], rows.iter().map(|&o| values[o]).collect()));
                }
            }
            LayerKind::ConvBias { c_in, kernel, .. } => {
                let area = kernel * kernel;
                let weight = layer.tensor_name("weight");
                let values = pick(get(&t, &weight)?, c_in * area, &rows, &cols, area);
                out.insert(weight, (vec![rows.len(), cols.len(), kernel, kernel], values));
                let bias = layer.tensor_name("bias");
                let values = get(&t, &bias)?;
                out.insert(bias, (vec![rows.len()], rows.iter().map(|&o| values[o]).collect()));
            }
            LayerKind::Dense { .. } => {
                for suffix in ["weight", "bias"] {
                    let name = layer.tensor_name(suffix);
                    let entry =
                        t.get(&name).ok_or_else(|| GrowError(format!("tensor {name} missing")))?;
                    out.insert(name, entry.clone());
                }
            }
        }
    }
    let expected: usize = all_layers(&NetLayout::of(small)).map(|l| l.tensors().len()).sum();
    if out.len() != expected {
        return Err(GrowError(format!(
            "the shrunk net has {} tensors where {}x{} has {expected}",
            out.len(),
            small.blocks,
            small.filters
        )));
    }
    Ok((write(&out)?, stream))
}

/// `E[relu(γ·z + β)]` for each output channel of a conv-bn layer, z ~ N(0, 1).
fn carried_relu(t: &Tensors, layer: &str) -> Result<Vec<f32>, GrowError> {
    let (gamma, beta) =
        (get(t, &format!("{layer}.norm.gamma"))?, get(t, &format!("{layer}.norm.beta"))?);
    Ok(gamma
        .iter()
        .zip(beta)
        .map(|(&g, &b)| {
            let (a, b) = (f64::from(g.abs()), f64::from(b));
            if a < 1e-12 {
                return b.max(0.0) as f32;
            }
            let x = b / a;
            (b * normal_cdf(x) + a * normal_pdf(x)) as f32
        })
        .collect())
}

/// `E|γ·z + β|` for each output channel of a conv-bn layer, z ~ N(0, 1).
fn carried_abs(t: &Tensors, layer: &str) -> Result<Vec<f32>, GrowError> {
    let (gamma, beta) =
        (get(t, &format!("{layer}.norm.gamma"))?, get(t, &format!("{layer}.norm.beta"))?);
    Ok(gamma
        .iter()
        .zip(beta)
        .map(|(&g, &b)| {
            let (a, b) = (f64::from(g.abs()), f64::from(b));
            if a < 1e-12 {
                return b.abs() as f32;
            }
            let x = b / a;
            (a * 2.0 * normal_pdf(x) + b * (2.0 * normal_cdf(x) - 1.0)) as f32
        })
        .collect())
}

/// For each input channel of `reader`: Σ over its outputs o of `gain_o · Σ_kernel |W[o][i]|`,
/// `gain_o` being `|γ_o| / sqrt(var_o + ε)` for a conv-bn layer (`normed`) and 1 otherwise.
fn column_weights(
    t: &Tensors,
    reader: &crate::layout::Layer,
    normed: bool,
) -> Result<Vec<f32>, GrowError> {
    let (c_in, c_out, kernel, weight) = match reader.kind {
        LayerKind::ConvBn { c_in, c_out, kernel } => (c_in, c_out, kernel, "conv.weight"),
        LayerKind::ConvBias { c_in, c_out, kernel } => (c_in, c_out, kernel, "weight"),
        LayerKind::Dense { .. } => {
            return Err(GrowError(format!("layer {} is not a convolution", reader.name)));
        }
    };
    let area = kernel * kernel;
    let w = get(t, &reader.tensor_name(weight))?;
    let gain: Vec<f32> = if normed {
        let gamma = get(t, &reader.tensor_name("norm.gamma"))?;
        let var = get(t, &reader.tensor_name("norm.running_var"))?;
        gamma.iter().zip(var).map(|(g, v)| g.abs() / (v.max(0.0) + EPSILON).sqrt()).collect()
    } else {
        vec![1.0; c_out]
    };
    if w.len() != c_out * c_in * area || gain.len() != c_out {
        return Err(GrowError(format!("layer {}: unexpected tensor sizes", reader.name)));
    }
    let mut out = vec![0.0f32; c_in];
    for (o, g) in gain.iter().enumerate() {
        for (i, sum) in out.iter_mut().enumerate() {
            let start = (o * c_in + i) * area;
            *sum += g * w[start..start + area].iter().map(|v| v.abs()).sum::<f32>();
        }
    }
    Ok(out)
}

fn product(a: &[f32], b: &[f32]) -> Vec<f32> {
    a.iter().zip(b).map(|(x, y)| x * y).collect()
}

/// The indices of the `k` largest scores (NaN counts as the smallest; ties go to the lower
/// index), in ascending order.
fn top(score: &[f32], k: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..score.len()).collect();
    let key = |i: usize| if score[i].is_nan() { f32::NEG_INFINITY } else { score[i] };
    order.sort_by(|&a, &b| key(b).total_cmp(&key(a)).then(a.cmp(&b)));
    order.truncate(k);
    order.sort_unstable();
    order
}

/// The rows `rows` and input channels `cols` (each `area` values) of a `[o][c_in · area]`
/// matrix whose rows are `stride` long.
fn pick(w: &[f32], stride: usize, rows: &[usize], cols: &[usize], area: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(rows.len() * cols.len() * area);
    for &o in rows {
        for &i in cols {
            let start = o * stride + i * area;
            out.extend_from_slice(&w[start..start + area]);
        }
    }
    out
}

fn normal_pdf(x: f64) -> f64 {
    (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// Φ(x) through erfc's continued fraction-free approximation (Abramowitz and Stegun 7.1.26,
/// absolute error below 1.5e-7): ample for ranking channels.
fn normal_cdf(x: f64) -> f64 {
    let z = x.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * z);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erfc = poly * (-z * z).exp();
    if x >= 0.0 { 1.0 - 0.5 * erfc } else { 0.5 * erfc }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grow::grow;
    use crate::grow::tests::{assert_close, outputs, small_net};

    /// Shrinking to the same width keeps every channel in its place: the same outputs, with
    /// running statistics and with a batch's own.
    #[test]
    fn shrinking_to_the_same_width_changes_nothing() {
        for device in [Device::flex(), Device::flex().autodiff()] {
            let net = small_net(&device);
            let (policy, wdl) = outputs(&net, &device);
            let (same, stream) = shrink(&net, net.config(), &device).unwrap();
            assert_eq!(stream, (0..32).collect::<Vec<_>>());
            let (p, w) = outputs(&same, &device);
            assert_close(&policy, &p, "policy");
            assert_close(&wdl, &w, "value");
        }
    }

    /// A 4×40 net whose 8 extra channels (of the stream, of each block's inner layer and of the
    /// policy conv) no layer reads: the shrink to 4×32 drops exactly those and computes what
    /// the 4×32 net they were grown from computes. A ranking that ignored what readers read,
    /// or a slice that misplaced a channel, would not.
    #[test]
    fn the_channels_nothing_reads_are_the_ones_dropped() {
        for device in [Device::flex(), Device::flex().autodiff()] {
            let small = small_net(&device);
            let (policy, wdl) = outputs(&small, &device);
            let wide = NetConfig { filters: 40, ..small.config().clone() };
            device.seed(5);
            let grown = grow(&small, &wide, &device).unwrap();
            let mut t = read(&grown.to_safetensors().unwrap(), "grown").unwrap();
            let layout = NetLayout::of(&wide);
            let readers = layout.tower.iter().flat_map(|b| [&b.first, &b.second]).chain([
                &layout.policy_conv,
                &layout.policy_out,
                &layout.value_conv,
            ]);
            for reader in readers {
                let (c_in, weight) = match reader.kind {
                    LayerKind::ConvBn { c_in, kernel: 3, .. } => (c_in, ("conv.weight", 9)),
                    LayerKind::ConvBn { c_in, .. } => (c_in, ("conv.weight", 1)),
                    LayerKind::ConvBias { c_in, .. } => (c_in, ("weight", 1)),
                    LayerKind::Dense { .. } => unreachable!(),
                };
                let (suffix, area) = weight;
                let (_, w) = t.get_mut(&reader.tensor_name(suffix)).unwrap();
                for row in w.chunks_mut(c_in * area) {
                    row[32 * area..].fill(0.0);
                }
            }
            let silenced = wide.load_safetensors(write(&t).unwrap(), &device).unwrap();
            let (shrunk, stream) = shrink(&silenced, small.config(), &device).unwrap();
            assert_eq!(stream, (0..32).collect::<Vec<_>>());
            assert_eq!(shrunk.config(), small.config());
            let (p, w) = outputs(&shrunk, &device);
            assert_close(&policy, &p, "policy");
            assert_close(&wdl, &w, "value");
        }
    }

    /// The weakest stream channel goes first: a channel whose norms carry nothing (γ = β = 0
    /// in the stem and in every block's second norm) is dropped from a shrink by one filter.
    #[test]
    fn a_channel_that_carries_nothing_is_dropped_first() {
        let device = Device::flex();
        let net = small_net(&device);
        let mut t = read(&net.to_safetensors().unwrap(), "net").unwrap();
        let layout = NetLayout::of(net.config());
        let writers = std::iter::once(&layout.stem).chain(layout.tower.iter().map(|b| &b.second));
        for writer in writers {
            for suffix in ["norm.gamma", "norm.beta"] {
                t.get_mut(&writer.tensor_name(suffix)).unwrap().1[17] = 0.0;
            }
        }
        let net = net.config().load_safetensors(write(&t).unwrap(), &device).unwrap();
        let narrower = NetConfig { filters: 31, ..net.config().clone() };
        let (_, stream) = shrink(&net, &narrower, &device).unwrap();
        assert_eq!(stream, (0..32).filter(|&c| c != 17).collect::<Vec<_>>());
    }

    #[test]
    fn the_carried_sizes_are_the_normal_expectations() {
        assert!((normal_cdf(1.0) - 0.841_344_7).abs() < 1e-6);
        assert!((normal_cdf(-2.0) - 0.022_750_1).abs() < 1e-6);
        let mut t = Tensors::new();
        t.insert("l.norm.gamma".into(), (vec![3], vec![1.0, -2.0, 0.0]));
        t.insert("l.norm.beta".into(), (vec![3], vec![0.0, 0.0, -0.5]));
        let relu = carried_relu(&t, "l").unwrap();
        let abs = carried_abs(&t, "l").unwrap();
        let phi0 = 1.0 / (2.0 * std::f32::consts::PI).sqrt();
        assert!((relu[0] - phi0).abs() < 1e-6 && (relu[1] - 2.0 * phi0).abs() < 1e-6);
        assert_eq!(relu[2], 0.0);
        assert!((abs[0] - 2.0 * phi0).abs() < 1e-6 && (abs[1] - 4.0 * phi0).abs() < 1e-6);
        assert_eq!(abs[2], 0.5);
    }

    /// More filters, other blocks, squeeze-excitation and a changed value head are refused,
    /// each by name.
    #[test]
    fn what_cannot_shrink_is_refused() {
        let tiny = NetConfig::tiny();
        let cases = [
            (NetConfig { filters: 48, ..tiny.clone() }, "filters only"),
            (NetConfig { blocks: 3, filters: 16, ..tiny.clone() }, "filters only"),
            (NetConfig { se_ratio: 4, filters: 16, ..tiny.clone() }, "squeeze-excitation"),
            (NetConfig { value_hidden: 128, filters: 16, ..tiny.clone() }, "value_hidden"),
            (NetConfig { filters: 0, ..tiny.clone() }, "shrunk architecture"),
        ];
        for (small, expected) in cases {
            let error = check_shrinkable(&tiny, &small).unwrap_err().to_string();
            assert!(error.contains(expected), "{error}");
        }
        assert!(check_shrinkable(&tiny, &NetConfig { filters: 16, ..tiny }).is_ok());
    }
}
