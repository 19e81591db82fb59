//! ONNX export: the file parses back with the declared inputs, outputs, dynamic batch
//! dimension and metadata, and a small reference interpreter of the exported graph (the
//! handful of ONNX operators it uses, written from the operator specs) reproduces the net's own
//! outputs, batch norm folded and squeeze-excitation split included. onnxruntime checks the
//! same files in `scripts/checks/onnx-export.sh`. Deterministic: fixed seeds throughout.

use std::collections::HashMap;

use atomzero_encoding::{ENCODING_VERSION, POLICY_SIZE};
use atomzero_nn::burn::tensor::Device;
use atomzero_nn::export::onnx::tensor_proto::DataType;
use atomzero_nn::export::onnx::tensor_shape_proto::dimension;
use atomzero_nn::export::onnx::{ModelProto, NodeProto, TensorProto, type_proto};
use atomzero_nn::export::{self, METADATA_KEYS};
use atomzero_nn::{DeviceKind, ExportInfo, Net, NetConfig, RawOutputs, reference_outputs, to_onnx};
use atomzero_train::burn::{BurnTrainer, StepConfig, TrainBatch};
use prost::Message;

/// SplitMix64: the test's only source of randomness.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
}

fn device() -> Device {
    DeviceKind::Cpu.device().unwrap()
}

/// Input planes shaped like real ones: mostly 0/1 with a few fractional planes.
fn random_planes(rng: &mut Rng, batch: usize, planes: usize) -> Vec<f32> {
    (0..batch * planes * 64)
        .map(|i| {
            let plane = (i / 64) % planes;
            if plane == 17 {
                rng.unit()
            } else if rng.unit() < 0.2 {
                1.0
            } else {
                0.0
            }
        })
        .collect()
}

/// A net of `config` trained a few steps with a large learning rate, so that batch norm's
/// γ, β and running statistics are far from their initial values (folding them matters).
fn trained_net(config: &NetConfig, seed: u64) -> Net {
    let device = device();
    device.seed(seed);
    let net = config.init(&device).unwrap();
    let mut trainer = BurnTrainer::new(net, &StepConfig::default(), &device);
    let mut rng = Rng(seed);
    let batch = 8;
    let planes = config.input_planes();
    for _ in 0..4 {
        let inputs = random_planes(&mut rng, batch, planes);
        let mut policy = vec![0.0f32; batch * POLICY_SIZE];
        let mut legal = vec![false; batch * POLICY_SIZE];
        for b in 0..batch {
            for k in 0..20 {
                let index = b * POLICY_SIZE + (rng.next_u64() as usize % POLICY_SIZE);
                legal[index] = true;
                policy[index] = if k == 0 { 1.0 } else { 0.0 };
            }
        }
        let wdl: Vec<f32> =
            (0..batch).flat_map(|b| [(b % 2) as f32, 0.0, 1.0 - (b % 2) as f32]).collect();
        let train =
            TrainBatch::from_slices(planes, &inputs, &policy, &legal, &wdl, trainer.device())
                .unwrap();
        trainer.step(&train, 0.05);
    }
    trainer.into_net()
}

fn info() -> ExportInfo {
    ExportInfo {
        variant: "atomic".into(),
        training_step: 4,
        source: Some("test.safetensors".into()),
    }
}

fn metadata(model: &ModelProto) -> HashMap<String, String> {
    model.metadata_props.iter().map(|e| (e.key.clone(), e.value.clone())).collect()
}

/// Dimension `i` of a value's shape: `Ok(n)` fixed, `Err(name)` symbolic.
fn dims(value: &atomzero_nn::export::onnx::ValueInfoProto) -> Vec<Result<i64, String>> {
    let Some(type_proto::Value::TensorType(tensor)) =
        value.r#type.as_ref().and_then(|t| t.value.clone())
    else {
        panic!("{} is not a tensor", value.name)
    };
    assert_eq!(tensor.elem_type, DataType::Float as i32, "{} is not float32", value.name);
    tensor
        .shape
        .unwrap()
        .dim
        .into_iter()
        .map(|d| match d.value.unwrap() {
            dimension::Value::DimValue(n) => Ok(n),
            dimension::Value::DimParam(name) => Err(name),
        })
        .collect()
}

#[test]
fn exported_file_has_the_documented_interface() {
    let config = NetConfig::tiny();
    let device = device();
    device.seed(1);
    let net = config.init(&device).unwrap();
    let bytes = to_onnx(&net, &info()).unwrap();
    let model = ModelProto::decode(bytes.as_slice()).expect("the export parses back");

    assert_eq!(model.ir_version, export::IR_VERSION);
    assert_eq!(model.producer_name, "atomzero");
    assert_eq!(model.opset_import.len(), 1);
    assert_eq!((model.opset_import[0].domain.as_str(), model.opset_import[0].version), ("", 17));
    let graph = model.graph.as_ref().unwrap();

    assert_eq!(graph.input.len(), 1);
    assert_eq!(graph.input[0].name, "planes");
    let batch = Err("batch".to_string());
    assert_eq!(dims(&graph.input[0]), vec![batch.clone(), Ok(24), Ok(8), Ok(8)]);
    let outputs: Vec<_> = graph.output.iter().map(|o| (o.name.as_str(), dims(o))).collect();
    assert_eq!(
        outputs,
        vec![("policy", vec![batch.clone(), Ok(4672)]), ("wdl", vec![batch, Ok(3)])]
    );

    // Batch norm is folded: no normalisation node, and every node reads defined tensors.
    let mut defined: Vec<&str> = graph.initializer.iter().map(|t| t.name.as_str()).collect();
    defined.push("planes");
    for node in &graph.node {
        assert_ne!(node.op_type, "BatchNormalization");
        for input in &node.input {
            assert!(defined.contains(&input.as_str()), "{} reads undefined {input}", node.name);
        }
        defined.extend(node.output.iter().map(String::as_str));
    }
    assert!(defined.contains(&"policy") && defined.contains(&"wdl"));
    // stem + 2 per block + policy conv, policy out, value conv = 4 + 2 * 4 = 12 convolutions.
    let convs = graph.node.iter().filter(|n| n.op_type == "Conv").count();
    assert_eq!(convs, 3 + 1 + 2 * config.blocks);

    let meta = metadata(&model);
    for (key, _) in METADATA_KEYS {
        assert!(meta.contains_key(key), "metadata lacks {key}");
    }
    assert_eq!(meta["atomzero.encoding_version"], ENCODING_VERSION.to_string());
    assert_eq!(meta["atomzero.input_planes"], "24");
    assert_eq!(meta["atomzero.variant"], "atomic");
    assert_eq!(meta["atomzero.source"], "test.safetensors");
    let architecture: NetConfig = serde_json::from_str(&meta["atomzero.architecture"]).unwrap();
    assert_eq!(architecture, config);
    let encoding = &meta["atomzero.input_encoding"];
    assert!(encoding.contains("0-5: the side to move's pawns") && encoding.contains("23: "));
    assert!(meta["atomzero.policy_layout"].contains("plane * 64 + from"));
}

#[test]
fn history_planes_are_described() {
    let mut config = NetConfig::tiny();
    config.blocks = 1;
    config.encoder.history = 2;
    let net = config.init(&device()).unwrap();
    let model = ModelProto::decode(to_onnx(&net, &info()).unwrap().as_slice()).unwrap();
    let meta = metadata(&model);
    assert_eq!(meta["atomzero.input_planes"], "48");
    assert!(meta["atomzero.input_encoding"].contains("36-47: the position 2 plies earlier"));
}

/// A dense float tensor for the interpreter.
#[derive(Clone, Debug)]
struct Value {
    shape: Vec<usize>,
    data: Vec<f32>,
}

fn initializer(tensor: &TensorProto) -> (Vec<usize>, Vec<f32>, Vec<i64>) {
    let shape = tensor.dims.iter().map(|&d| d as usize).collect();
    if tensor.data_type == DataType::Int64 as i32 {
        return (shape, Vec::new(), tensor.int64_data.clone());
    }
    assert_eq!(tensor.data_type, DataType::Float as i32);
    let floats = tensor
        .raw_data
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    (shape, floats, Vec::new())
}

fn attr<'a>(
    node: &'a NodeProto,
    name: &str,
) -> Option<&'a atomzero_nn::export::onnx::AttributeProto> {
    node.attribute.iter().find(|a| a.name == name)
}

/// Runs the graph on `input` with naive implementations of the operators it uses.
fn interpret(model: &ModelProto, input: Value) -> HashMap<String, Value> {
    let graph = model.graph.as_ref().unwrap();
    let mut floats: HashMap<String, Value> = HashMap::new();
    let mut ints: HashMap<String, Vec<i64>> = HashMap::new();
    for tensor in &graph.initializer {
        let (shape, data, int64) = initializer(tensor);
        if tensor.data_type == DataType::Int64 as i32 {
            ints.insert(tensor.name.clone(), int64);
        } else {
            floats.insert(tensor.name.clone(), Value { shape, data });
        }
    }
    floats.insert("planes".into(), input);
    for node in &graph.node {
        let get = |i: usize| floats[&node.input[i]].clone();
        let x = get(0);
        let out = match node.op_type.as_str() {
            "Relu" => Value { data: x.data.iter().map(|v| v.max(0.0)).collect(), ..x },
            "Sigmoid" => {
                Value { data: x.data.iter().map(|v| 1.0 / (1.0 + (-v).exp())).collect(), ..x }
            }
            "Add" | "Mul" => {
                let y = get(1);
                // Broadcast [B, F, 1, 1] over [B, F, 8, 8] (or equal shapes).
                let inner = x.data.len() / y.data.len();
                let data = x
                    .data
                    .iter()
                    .enumerate()
                    .map(|(i, &a)| {
                        let b = y.data[i / inner];
                        if node.op_type == "Add" { a + b } else { a * b }
                    })
                    .collect();
                Value { data, ..x }
            }
            "Flatten" => {
                assert_eq!(attr(node, "axis").unwrap().i, 1);
                let batch = x.shape[0];
                Value { shape: vec![batch, x.data.len() / batch], data: x.data }
            }
            "Reshape" => {
                let shape = &ints[&node.input[1]];
                let batch = x.shape[0];
                assert_eq!(shape[0], -1);
                let mut new: Vec<usize> = shape.iter().map(|&d| d.max(0) as usize).collect();
                new[0] = batch;
                Value { shape: new, data: x.data }
            }
            "GlobalAveragePool" => {
                let (b, c, hw) = (x.shape[0], x.shape[1], x.shape[2] * x.shape[3]);
                let data =
                    x.data.chunks(hw).map(|plane| plane.iter().sum::<f32>() / hw as f32).collect();
                Value { shape: vec![b, c, 1, 1], data }
            }
            "Gemm" => {
                assert!(node.attribute.is_empty(), "plain Gemm expected");
                let (w, bias) = (get(1), get(2));
                let (batch, d_in, d_out) = (x.shape[0], w.shape[0], w.shape[1]);
                assert_eq!(x.shape[1], d_in);
                let mut data = Vec::with_capacity(batch * d_out);
                for b in 0..batch {
                    for o in 0..d_out {
                        let mut sum = bias.data[o];
                        for i in 0..d_in {
                            sum += x.data[b * d_in + i] * w.data[i * d_out + o];
                        }
                        data.push(sum);
                    }
                }
                Value { shape: vec![batch, d_out], data }
            }
            "Conv" => {
                let (w, bias) = (get(1), get(2));
                let (batch, c_in, c_out, k) = (x.shape[0], x.shape[1], w.shape[0], w.shape[2]);
                let pads = &attr(node, "pads").unwrap().ints;
                assert_eq!(&attr(node, "kernel_shape").unwrap().ints, &[k as i64, k as i64]);
                assert!(pads.iter().all(|&p| p == (k / 2) as i64));
                let pad = (k / 2) as isize;
                let mut data = vec![0.0f32; batch * c_out * 64];
                for b in 0..batch {
                    for o in 0..c_out {
                        for r in 0..8isize {
                            for f in 0..8isize {
                                let mut sum = bias.data[o];
                                for i in 0..c_in {
                                    for kr in 0..k as isize {
                                        for kf in 0..k as isize {
                                            let (rr, ff) = (r + kr - pad, f + kf - pad);
                                            if !(0..8).contains(&rr) || !(0..8).contains(&ff) {
                                                continue;
                                            }
                                            let xi = ((b * c_in + i) * 64) as isize + rr * 8 + ff;
                                            let wi = ((o * c_in + i) * k * k) as isize
                                                + kr * k as isize
                                                + kf;
                                            sum += x.data[xi as usize] * w.data[wi as usize];
                                        }
                                    }
                                }
                                data[(b * c_out + o) * 64 + (r * 8 + f) as usize] = sum;
                            }
                        }
                    }
                }
                Value { shape: vec![batch, c_out, 8, 8], data }
            }
            other => panic!("the interpreter does not know {other}"),
        };
        floats.insert(node.output[0].clone(), out);
    }
    floats
}

fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

/// Exports `config` after a few training steps and checks the interpreted graph against the
/// net on random inputs.
fn check_outputs_match(config: &NetConfig, seed: u64) {
    let net = trained_net(config, seed);
    let model = ModelProto::decode(to_onnx(&net, &info()).unwrap().as_slice()).unwrap();
    let batch = 5;
    let planes = random_planes(&mut Rng(seed + 100), batch, config.input_planes());
    let RawOutputs { policy, wdl } = reference_outputs(&net, &planes, batch, &device()).unwrap();
    let input = Value { shape: vec![batch, config.input_planes(), 8, 8], data: planes };
    let outputs = interpret(&model, input);
    assert_eq!(outputs["policy"].shape, vec![batch, POLICY_SIZE]);
    assert_eq!(outputs["wdl"].shape, vec![batch, 3]);
    let policy_diff = max_abs_diff(&outputs["policy"].data, &policy);
    let wdl_diff = max_abs_diff(&outputs["wdl"].data, &wdl);
    assert!(policy_diff < 1e-4 && wdl_diff < 1e-4, "policy {policy_diff}, wdl {wdl_diff}");
    // The outputs are not trivially equal (e.g. all zero).
    assert!(policy.iter().any(|&v| v.abs() > 1e-2) && wdl.iter().any(|&v| v.abs() > 1e-2));
}

#[test]
fn interpreted_graph_matches_the_net() {
    let mut config = NetConfig::tiny();
    config.blocks = 2;
    config.filters = 16;
    check_outputs_match(&config, 11);
}

#[test]
fn interpreted_graph_matches_the_net_with_squeeze_excitation_and_history() {
    let mut config = NetConfig::tiny();
    config.blocks = 2;
    config.filters = 16;
    config.se_ratio = 4;
    config.value_channels = 4;
    config.encoder.history = 1;
    check_outputs_match(&config, 12);
}

#[test]
fn interpreted_graph_matches_the_net_with_an_opponent_policy_head() {
    // The head's second 73 planes (a training target) are left out of the graph: the exported
    // policy is the net's own policy output.
    let mut config = NetConfig::tiny();
    config.blocks = 1;
    config.filters = 16;
    config.opponent_policy = true;
    check_outputs_match(&config, 14);
    let net = config.init(&device()).unwrap();
    let model = ModelProto::decode(to_onnx(&net, &info()).unwrap().as_slice()).unwrap();
    let graph = model.graph.unwrap();
    let policy_out = graph.initializer.iter().find(|t| t.name == "policy_out.weight").unwrap();
    assert_eq!(policy_out.dims, vec![73, 16, 1, 1]);
}

#[test]
fn batch_norm_folding_is_not_the_identity_here() {
    // Guards the tests above: after training, the folded biases differ from zero, so a wrong
    // fold would show in the outputs.
    let mut config = NetConfig::tiny();
    config.blocks = 1;
    config.filters = 8;
    let net = trained_net(&config, 13);
    let model = ModelProto::decode(to_onnx(&net, &info()).unwrap().as_slice()).unwrap();
    let graph = model.graph.unwrap();
    let stem_bias = graph.initializer.iter().find(|t| t.name == "stem.bias").unwrap();
    let (_, values, _) = initializer(stem_bias);
    assert!(values.iter().any(|v| v.abs() > 1e-4), "{values:?}");
}

#[test]
fn reference_outputs_reject_a_wrong_input_size() {
    let net = NetConfig::tiny().init(&device()).unwrap();
    let error = reference_outputs(&net, &[0.0; 10], 1, &device()).unwrap_err();
    assert_eq!(error.to_string(), "input has 10 values, the net expects 1536");
}
