//! Growing a net in place: a wider and/or deeper net that computes exactly what the smaller
//! one computes, so that a bigger network continues from a run's network instead of starting
//! from random weights (Net2Net's aim, Chen, Goodfellow and Shlens 2016; KataGo instead
//! trains each new size on the run's data).
//!
//! The rule: **an old unit reads only old units.** Every new unit is live from the start, as a
//! fresh net's initialiser draws it, and every weight from a new unit into an old one is zero:
//!
//! ```text
//! each conv-bn layer of the small net    W[o][i] the small net's for o, i both old;
//!                                         0 for an old output o and a new input i;
//!                                         drawn fresh for a new output o;
//!                                         γ, β and the running statistics: the small net's
//!                                         for old channels, a fresh norm's for new ones
//! the policy head's 1×1 output           the same (all its 73 outputs are old)
//! a new block (appended to the tower)    drawn fresh, but its second norm's γ = β = 0 on the
//!                                         old channels: it adds 0 to them and relu(x + 0) = x
//!                                         (the stream is ≥ 0)
//! the value head's dense layers          copied (they do not grow)
//! ```
//!
//! So every old channel, and so every output, is what the small net computes, up to the
//! order of floating-point sums, in inference (running statistics) and in training (a batch's
//! own statistics: an old channel's batch statistics see only old channels). Zeroing the new
//! units' outputs instead (γ = β = 0) would leave them dead, since a ReLU passes no gradient
//! at exactly 0; here the zero weights are the ones the first step moves (their gradient is a
//! live new unit times an old unit's), and the new units' own weights learn from then on.
//! Nets with squeeze-excitation are not grown (its gates would need their own rule); the value
//! head's sizes, the encoder and the auxiliary policy head must stay as they are.

use std::collections::HashMap;
use std::fmt;

use burn::tensor::Device;
use safetensors::{Dtype, SafeTensors};

use crate::config::NetConfig;
use crate::layout::{LayerKind, NetLayout};
use crate::model::Net;

/// Tensors by name: shape and f32 values.
type Tensors = HashMap<String, (Vec<usize>, Vec<f32>)>;

/// Why a net could not be grown to an architecture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrowError(pub String);

impl fmt::Display for GrowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GrowError {}

/// Checks that `small`'s net can be grown into `large`'s: no fewer blocks or filters, no
/// squeeze-excitation, the same value head, encoder and policy head.
pub fn check_growable(small: &NetConfig, large: &NetConfig) -> Result<(), GrowError> {
    large.validate().map_err(|e| GrowError(format!("the grown architecture: {e}")))?;
    if large.blocks < small.blocks || large.filters < small.filters {
        return Err(GrowError(format!(
            "a net grows, never shrinks: {}x{} cannot become {}x{} (blocks x filters)",
            small.blocks, small.filters, large.blocks, large.filters
        )));
    }
    if small.se_ratio != 0 || large.se_ratio != 0 {
        return Err(GrowError(
            "nets with squeeze-excitation (net.se_ratio > 0) are not grown".to_string(),
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
        return Err(GrowError(format!(
            "only blocks and filters grow; these differ: {}",
            differ.join(", ")
        )));
    }
    Ok(())
}

/// `small` grown to `large` (see the module docs): the new weights are drawn by `device`'s
/// initialiser (seed it first for a reproducible net), the rest copied.
pub fn grow(small: &Net, large: &NetConfig, device: &Device) -> Result<Net, GrowError> {
    check_growable(small.config(), large)?;
    let error = |what: &str, e: &dyn fmt::Display| GrowError(format!("{what}: {e}"));
    let fresh = large.init(device).map_err(|e| error("the grown net", &e))?;
    let fresh_bytes = fresh.to_safetensors().map_err(|e| error("the grown net", &e))?;
    let small_bytes = small.to_safetensors().map_err(|e| error("the small net", &e))?;
    let bytes = grow_tensors(small.config(), &small_bytes, large, &fresh_bytes)?;
    large.load_safetensors(bytes, device).map_err(|e| error("the grown net", &e))
}

/// The grown net's safetensors bytes from the small net's and a freshly initialised large
/// net's (both as [`Net::to_safetensors`] writes them).
fn grow_tensors(
    small: &NetConfig,
    small_bytes: &[u8],
    large: &NetConfig,
    fresh_bytes: &[u8],
) -> Result<Vec<u8>, GrowError> {
    let old = read(small_bytes, "the small net")?;
    let mut out = read(fresh_bytes, "the grown net")?;
    let small_layout = NetLayout::of(small);
    let large_layout = NetLayout::of(large);
    let small_kinds: HashMap<String, LayerKind> =
        all_layers(&small_layout).map(|l| (l.name.clone(), l.kind)).collect();

    for layer in all_layers(&large_layout) {
        let name = |suffix: &str| layer.tensor_name(suffix);
        let Some(&old_kind) = small_kinds.get(&layer.name) else {
            // A new block: its second conv-bn adds nothing to the old channels.
            if layer.name.ends_with(".second") {
                get_mut(&mut out, &name("norm.gamma"))?[..small.filters].fill(0.0);
                get_mut(&mut out, &name("norm.beta"))?[..small.filters].fill(0.0);
            }
            continue;
        };
        match (old_kind, layer.kind) {
            (
                LayerKind::ConvBn { c_in: i0, c_out: o0, kernel },
                LayerKind::ConvBn { c_in: i1, c_out: o1, .. },
            ) => {
                let area = kernel * kernel;
                corner(&old, &mut out, &name("conv.weight"), [o0, i0 * area], [o1, i1 * area])?;
                for suffix in ["norm.gamma", "norm.beta", "norm.running_mean", "norm.running_var"] {
                    let tensor = get(&old, &name(suffix))?.to_vec();
                    get_mut(&mut out, &name(suffix))?[..o0].copy_from_slice(&tensor[..o0]);
                }
            }
            (
                LayerKind::ConvBias { c_in: i0, c_out: o0, kernel },
                LayerKind::ConvBias { c_in: i1, c_out: o1, .. },
            ) if o0 == o1 => {
                let area = kernel * kernel;
                corner(&old, &mut out, &name("weight"), [o0, i0 * area], [o1, i1 * area])?;
                let bias = get(&old, &name("bias"))?.to_vec();
                get_mut(&mut out, &name("bias"))?.copy_from_slice(&bias);
            }
            (LayerKind::Dense { .. }, LayerKind::Dense { .. }) if old_kind == layer.kind => {
                for suffix in ["weight", "bias"] {
                    let values = get(&old, &name(suffix))?.to_vec();
                    get_mut(&mut out, &name(suffix))?.copy_from_slice(&values);
                }
            }
            _ => {
                return Err(GrowError(format!(
                    "layer {}: {:?} cannot grow into {:?}",
                    layer.name, old_kind, layer.kind
                )));
            }
        }
    }
    write(&out)
}

/// Every layer of a layout, in stored order.
fn all_layers(layout: &NetLayout) -> impl Iterator<Item = &crate::layout::Layer> {
    let tower = layout.tower.iter().flat_map(|b| [&b.first, &b.second]);
    std::iter::once(&layout.stem).chain(tower).chain([
        &layout.policy_conv,
        &layout.policy_out,
        &layout.value_conv,
        &layout.value_hidden,
        &layout.value_out,
    ])
}

/// Copies the small `[rows0][cols0]` matrix `name` of `old` into the top-left corner of the
/// `[rows1][cols1]` one of `out` and zeroes the rest of its first `rows0` rows: an old output
/// reads no new input (`cols` counts input channels times the kernel's area). The rows of new
/// outputs keep their fresh values.
fn corner(
    old: &Tensors,
    out: &mut Tensors,
    name: &str,
    [rows0, cols0]: [usize; 2],
    [rows1, cols1]: [usize; 2],
) -> Result<(), GrowError> {
    let source = get(old, name)?;
    let target = get_mut(out, name)?;
    if source.len() != rows0 * cols0 || target.len() != rows1 * cols1 {
        return Err(GrowError(format!("tensor {name}: unexpected size")));
    }
    for row in 0..rows0 {
        let target = &mut target[row * cols1..(row + 1) * cols1];
        target[..cols0].copy_from_slice(&source[row * cols0..(row + 1) * cols0]);
        target[cols0..].fill(0.0);
    }
    Ok(())
}

fn get<'a>(tensors: &'a Tensors, name: &str) -> Result<&'a [f32], GrowError> {
    tensors.get(name).map(|(_, v)| v.as_slice()).ok_or_else(|| missing(name))
}

fn get_mut<'a>(tensors: &'a mut Tensors, name: &str) -> Result<&'a mut [f32], GrowError> {
    tensors.get_mut(name).map(|(_, v)| v.as_mut_slice()).ok_or_else(|| missing(name))
}

fn missing(name: &str) -> GrowError {
    GrowError(format!("tensor {name} missing"))
}

/// Every tensor of safetensors `bytes` (all f32) by name, with its shape.
fn read(bytes: &[u8], what: &str) -> Result<Tensors, GrowError> {
    let file = SafeTensors::deserialize(bytes).map_err(|e| GrowError(format!("{what}: {e}")))?;
    let mut tensors = HashMap::new();
    for (name, view) in file.tensors() {
        if view.dtype() != Dtype::F32 {
            return Err(GrowError(format!("{what}: tensor {name} is {:?}, not F32", view.dtype())));
        }
        let values: Vec<f32> = view
            .data()
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        tensors.insert(name, (view.shape().to_vec(), values));
    }
    Ok(tensors)
}

/// The tensors as safetensors bytes.
fn write(tensors: &Tensors) -> Result<Vec<u8>, GrowError> {
    let data: Vec<(&str, &[usize], Vec<u8>)> = tensors
        .iter()
        .map(|(name, (shape, values))| {
            (name.as_str(), shape.as_slice(), values.iter().flat_map(|v| v.to_le_bytes()).collect())
        })
        .collect();
    let views = data
        .iter()
        .map(|(name, shape, bytes)| {
            safetensors::tensor::TensorView::new(Dtype::F32, shape.to_vec(), bytes)
                .map(|view| (*name, view))
                .map_err(|e| GrowError(format!("tensor {name}: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    safetensors::serialize(views, None).map_err(|e| GrowError(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::{Tensor, TensorData};

    /// The tiny net (4×32) with every value drawn here rather than by the backend's seeded
    /// generator, which tests running in parallel share (a race once left the value logits
    /// near zero), and with every batch norm's γ, β and statistics away from their initial
    /// 1, 0, 0, 1, so that a copy that misplaces a channel shows.
    fn small_net(device: &Device) -> Net {
        let config = NetConfig::tiny();
        let net = config.init(device).unwrap();
        let mut tensors = read(&net.to_safetensors().unwrap(), "test").unwrap();
        let mut k = 0u32;
        let mut next = || {
            k = k.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            f32::from((k >> 16) as u16 % 1000) / 1000.0
        };
        let mut names: Vec<String> = tensors.keys().cloned().collect();
        names.sort();
        for name in names {
            let (_, values) = tensors.get_mut(&name).unwrap();
            for v in values.iter_mut() {
                if name.ends_with("gamma") || name.ends_with("running_var") {
                    *v = 0.5 + next();
                } else if name.ends_with("beta") || name.ends_with("running_mean") {
                    *v = next() - 0.5;
                } else {
                    *v = 0.3 * (next() - 0.5);
                }
            }
        }
        config.load_safetensors(write(&tensors).unwrap(), device).unwrap()
    }

    fn outputs(net: &Net, device: &Device) -> (Vec<f32>, Vec<f32>) {
        let planes = net.config().input_planes();
        let values: Vec<f32> =
            (0..3 * planes * 64).map(|i| if (i * 7919) % 13 < 3 { 1.0 } else { 0.0 }).collect();
        let x = Tensor::<4>::from_data(TensorData::new(values, [3, planes, 8, 8]), device);
        let out = net.forward(x);
        let host = |t: Tensor<2>| t.into_data().try_to_vec::<f32>().unwrap();
        (host(out.policy), host(out.wdl))
    }

    fn assert_close(a: &[f32], b: &[f32], what: &str) {
        let scale = a.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        assert!(scale > 0.1, "{what}: outputs near zero prove nothing");
        let worst = a.iter().zip(b).fold(0.0f32, |m, (p, q)| m.max((p - q).abs()));
        assert!(a.len() == b.len() && worst <= 1e-4 * scale, "{what}: {worst} of {scale}");
    }

    /// Wider, deeper and both: the grown net's policy and value logits are the small net's,
    /// with batch norm's running statistics (inference) and with a batch's own (training).
    #[test]
    fn a_grown_net_computes_what_the_small_one_does() {
        for device in [Device::flex(), Device::flex().autodiff()] {
            let small = small_net(&device);
            let (policy, wdl) = outputs(&small, &device);
            for (blocks, filters) in [(4, 48), (6, 32), (6, 48)] {
                let large = NetConfig { blocks, filters, ..NetConfig::tiny() };
                device.seed(3);
                let grown = grow(&small, &large, &device).unwrap();
                assert_eq!(grown.config(), &large);
                let (grown_policy, grown_wdl) = outputs(&grown, &device);
                let what = format!("{blocks}x{filters}");
                assert_close(&policy, &grown_policy, &format!("{what} policy"));
                assert_close(&wdl, &grown_wdl, &format!("{what} value"));
            }
        }
    }

    /// The rule, tensor by tensor: the small net's values in the corner, zeros where an old
    /// output reads a new input, new outputs drawn fresh with a fresh norm, the new blocks'
    /// second norm silent on the old channels.
    #[test]
    fn old_units_read_only_old_units() {
        let device = Device::flex();
        let small = small_net(&device);
        let large = NetConfig { blocks: 6, filters: 48, ..NetConfig::tiny() };
        device.seed(3);
        let grown = grow(&small, &large, &device).unwrap();
        let old = read(&small.to_safetensors().unwrap(), "small").unwrap();
        let new = read(&grown.to_safetensors().unwrap(), "grown").unwrap();
        let values = |t: &Tensors, name: &str| t[name].1.clone();

        let gamma = values(&new, "tower.1.first.norm.gamma");
        assert_eq!(gamma[..32], values(&old, "tower.1.first.norm.gamma")[..]);
        assert!(gamma[32..].iter().all(|&g| g == 1.0));
        let var = values(&new, "stem.norm.running_var");
        assert_eq!(var[..32], values(&old, "stem.norm.running_var")[..]);
        assert!(var[32..].iter().all(|&v| v == 1.0));

        // Weight [o][i][3][3]: output 5 (old) reads the small net's weights from inputs ..32
        // and zeros from 32..; output 40 (new) reads drawn weights from every input.
        let w_old = values(&old, "tower.2.second.conv.weight");
        let w_new = values(&new, "tower.2.second.conv.weight");
        assert_eq!(w_new[5 * 48 * 9..5 * 48 * 9 + 32 * 9], w_old[5 * 32 * 9..6 * 32 * 9]);
        assert!(w_new[5 * 48 * 9 + 32 * 9..6 * 48 * 9].iter().all(|&w| w == 0.0));
        assert!(w_new[40 * 48 * 9..40 * 48 * 9 + 32 * 9].iter().any(|&w| w != 0.0));
        assert!(w_new[40 * 48 * 9 + 32 * 9..41 * 48 * 9].iter().any(|&w| w != 0.0));
        let head = values(&new, "policy_out.weight");
        assert_eq!(head[..32], values(&old, "policy_out.weight")[..32]);
        assert!(head[32..48].iter().all(|&w| w == 0.0));
        assert_eq!(values(&new, "value_hidden.weight"), values(&old, "value_hidden.weight"));

        for block in [4, 5] {
            let second = |s: &str| values(&new, &format!("tower.{block}.second.norm.{s}"));
            assert!(second("gamma")[..32].iter().chain(&second("beta")[..32]).all(|&v| v == 0.0));
            assert!(second("gamma")[32..].iter().all(|&g| g == 1.0));
            let first = values(&new, &format!("tower.{block}.first.conv.weight"));
            assert!(first.iter().any(|&w| w != 0.0));
        }
    }

    /// The new units are live: in training mode the zero weights from new units into old ones
    /// get a gradient at once (a ReLU unit held at exactly 0 would pass none), so the first
    /// step connects the new channels.
    #[test]
    fn the_zero_bridges_get_a_gradient_at_once() {
        let device = Device::flex().autodiff();
        let small = small_net(&device);
        let large = NetConfig { blocks: 5, filters: 48, ..NetConfig::tiny() };
        device.seed(3);
        let grown = grow(&small, &large, &device).unwrap();
        let planes = large.input_planes();
        let values: Vec<f32> =
            (0..4 * planes * 64).map(|i| if (i * 7919) % 11 < 3 { 1.0 } else { 0.0 }).collect();
        let x = Tensor::<4>::from_data(TensorData::new(values, [4, planes, 8, 8]), &device);
        let out = grown.forward(x);
        let loss = out.policy.powf_scalar(2.0).mean() + out.wdl.powf_scalar(2.0).sum();
        let grads = loss.backward();
        let grad = |w: &burn::module::Param<Tensor<4>>| {
            w.grad(&grads).unwrap().into_data().try_to_vec::<f32>().unwrap()
        };
        let head = grad(&grown.policy_out.weight); // [73][48][1][1]
        assert!(head[32..48].iter().any(|&g| g.abs() > 1e-9), "policy head: no gradient");
        let first = grad(&grown.tower[1].first.conv.weight); // [48][48][3][3], output 5
        assert!(first[5 * 48 * 9 + 32 * 9..6 * 48 * 9].iter().any(|&g| g.abs() > 1e-9));
        let value = grad(&grown.value_conv.conv.weight); // [8][48][1][1]
        assert!(value[32..48].iter().any(|&g| g.abs() > 1e-9), "value head: no gradient");
    }

    /// Shrinking, squeeze-excitation and a changed value head are refused, each by name.
    #[test]
    fn what_cannot_grow_is_refused() {
        let tiny = NetConfig::tiny();
        let cases = [
            (NetConfig { filters: 16, ..tiny.clone() }, "never shrinks"),
            (NetConfig { blocks: 3, ..tiny.clone() }, "never shrinks"),
            (NetConfig { se_ratio: 4, ..tiny.clone() }, "squeeze-excitation"),
            (NetConfig { value_hidden: 128, ..tiny.clone() }, "value_hidden"),
            (NetConfig { opponent_policy: true, ..tiny.clone() }, "opponent_policy"),
            (NetConfig { filters: 1 << 20, ..tiny.clone() }, "grown architecture"),
        ];
        for (large, expected) in cases {
            let error = check_growable(&tiny, &large).unwrap_err().to_string();
            assert!(error.contains(expected), "{error}");
        }
        assert!(check_growable(&tiny, &NetConfig { blocks: 8, filters: 64, ..tiny }).is_ok());
    }
}
