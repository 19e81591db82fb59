//! One description of the stored tensors (`atomzero_nn::layout`), three engines that read and
//! write them (Burn's record in `atomzero-nn`, this crate's CPU trainer, `atomzero-infer`): a
//! net saved by one loads bit-identically in the others, and the file holds exactly the
//! tensors the layout names.

use atomzero_backprop::Params;
use atomzero_encoding::EncoderConfig;
use atomzero_infer::InferNet;
use atomzero_nn::{DeviceKind, NetConfig, NetLayout};
use safetensors::SafeTensors;

/// Every tensor of a safetensors file: name, shape and raw bytes, sorted by name.
fn stored(bytes: &[u8]) -> Vec<(String, Vec<usize>, Vec<u8>)> {
    let file = SafeTensors::deserialize(bytes).expect("safetensors");
    let mut tensors: Vec<(String, Vec<usize>, Vec<u8>)> = file
        .tensors()
        .into_iter()
        .map(|(name, view)| {
            assert_eq!(view.dtype(), safetensors::Dtype::F32, "{name}");
            (name, view.shape().to_vec(), view.data().to_vec())
        })
        .collect();
    tensors.sort_by(|a, b| a.0.cmp(&b.0));
    tensors
}

/// The layout's tensors as (name, shape), sorted by name.
fn described(config: &NetConfig) -> Vec<(String, Vec<usize>)> {
    let mut tensors: Vec<(String, Vec<usize>)> =
        NetLayout::of(config).tensors().into_iter().map(|t| (t.name, t.shape)).collect();
    tensors.sort();
    tensors
}

fn names_and_shapes(tensors: &[(String, Vec<usize>, Vec<u8>)]) -> Vec<(String, Vec<usize>)> {
    tensors.iter().map(|(name, shape, _)| (name.clone(), shape.clone())).collect()
}

fn small(opponent_policy: bool, se_ratio: usize) -> NetConfig {
    NetConfig {
        blocks: 2,
        filters: 8,
        se_ratio,
        value_hidden: 16,
        value_channels: 2,
        encoder: EncoderConfig::default(),
        opponent_policy,
    }
}

/// A fixed input batch of `batch` positions (values in [0, 1)).
fn input(config: &NetConfig, batch: usize) -> Vec<f32> {
    (0..batch * config.input_planes() * 64).map(|i| ((i * 7919) % 1000) as f32 / 1000.0).collect()
}

#[test]
fn a_net_saved_by_one_engine_loads_bit_identically_in_the_others() {
    let device = DeviceKind::Cpu.device().expect("cpu device");
    for config in [small(false, 0), small(true, 0)] {
        device.seed(7);
        let net = config.init(&device).expect("net");
        let burn_bytes = net.to_safetensors().expect("bytes");
        // Burn's file holds exactly the layout's tensors.
        assert_eq!(names_and_shapes(&stored(&burn_bytes)), described(&config));

        // The CPU trainer reads it; with every value and statistic changed (so that a swapped
        // γ/β or mean/variance would show) it writes the layout's tensors too.
        let mut params = Params::from_safetensors(&config, &burn_bytes).expect("params");
        for (i, v) in params.values_mut().iter_mut().enumerate() {
            *v += ((i % 13) as f32 - 6.0) / 64.0;
        }
        for (i, v) in params.stats_mut().iter_mut().enumerate() {
            *v = 0.5 + (i % 7) as f32 / 8.0;
        }
        let cpu_bytes = params.to_safetensors().expect("bytes");
        assert_eq!(names_and_shapes(&stored(&cpu_bytes)), described(&config));
        assert_ne!(stored(&cpu_bytes), stored(&burn_bytes), "the changed values are in the file");

        // Burn reads the trainer's file and writes back the same bits; the trainer reads
        // Burn's file back to the same values.
        let back = config.load_safetensors(cpu_bytes.clone(), &device).expect("burn");
        let back_bytes = back.to_safetensors().expect("bytes");
        assert_eq!(stored(&back_bytes), stored(&cpu_bytes));
        let again = Params::from_safetensors(&config, &back_bytes).expect("params");
        let bits = |xs: &[f32]| xs.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
        assert_eq!(bits(again.values()), bits(params.values()));
        assert_eq!(bits(again.stats()), bits(params.stats()));

        // Inference reads the trainer's file and Burn's net into the same weights: the same
        // outputs, bit for bit.
        let from_file = InferNet::from_safetensors(&config, &cpu_bytes).expect("infer");
        let from_net = InferNet::from_net(&back).expect("infer");
        let x = input(&config, 3);
        let (a, b) =
            (from_file.forward(&x, 3).expect("forward"), from_net.forward(&x, 3).expect("forward"));
        assert_eq!(bits(&a.policy), bits(&b.policy));
        assert_eq!(bits(&a.wdl), bits(&b.wdl));
        // ... and not the outputs of the net before the change.
        let before = InferNet::from_net(&net).expect("infer").forward(&x, 3).expect("forward");
        assert_ne!(bits(&before.wdl), bits(&a.wdl));
    }
}

#[test]
fn squeeze_excitation_nets_store_the_layout_s_tensors() {
    // The CPU trainer refuses them; Burn and inference follow the layout.
    let device = DeviceKind::Cpu.device().expect("cpu device");
    let config = small(false, 2);
    device.seed(3);
    let net = config.init(&device).expect("net");
    let bytes = net.to_safetensors().expect("bytes");
    assert_eq!(names_and_shapes(&stored(&bytes)), described(&config));
    assert!(described(&config).iter().any(|(name, _)| name == "tower.1.se.excite.weight"));
    let x = input(&config, 2);
    let a = InferNet::from_safetensors(&config, &bytes).expect("infer").forward(&x, 2).expect("f");
    let b = InferNet::from_net(&net).expect("infer").forward(&x, 2).expect("f");
    assert_eq!(a, b);
    assert!(Params::from_safetensors(&config, &bytes).is_err());
}
