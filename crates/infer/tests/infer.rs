//! atomzero-infer against Burn: raw outputs equal `Net::forward` (eval mode) within 1e-4 for the
//! tiny net, a net with squeeze-excitation and a net with history planes, on random atomic
//! positions and with non-trivial batch-norm statistics; the evaluator equals `NetEvaluator`;
//! damaged files and bytes give errors. Deterministic: fixed seeds throughout.

use std::collections::HashMap;
use std::fs;
use std::path::PathBuf;

use atomzero_encoding::{Batch, Encoder, EncoderConfig, POLICY_SIZE, move_to_index};
use atomzero_infer::{InferError, InferEvaluator, InferNet, Workspace};
use atomzero_mcts::{EvalRequest, Evaluator};
use atomzero_nn::burn::module::Module;
use atomzero_nn::burn::store::{ModuleSnapshot, SafetensorsStore};
use atomzero_nn::burn::tensor::{Device, Tensor, TensorData};
use atomzero_nn::{DeviceKind, Net, NetConfig, NetEvaluator, Provenance};
use atomzero_rules::{Move, Position, Variant};
use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensors};

const TOLERANCE: f32 = 1e-4;

struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
    /// Uniform in [lo, hi).
    fn uniform(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32)
    }
}

/// A position from a random atomic game, with its history (most recent first).
struct Sample {
    position: Position,
    history: Vec<Position>,
    repetitions: usize,
    moves: Vec<Move>,
}

fn random_positions(n: usize, seed: u64) -> Vec<Sample> {
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    while out.len() < n {
        let mut position = Position::new(Variant::Atomic);
        let mut history: Vec<Position> = Vec::new();
        for _ in 0..1 + rng.below(60) {
            let moves = position.legal_moves();
            if moves.is_empty() || position.outcome().is_some() {
                break;
            }
            history.push(position);
            position.play_unchecked(moves[rng.below(moves.len())]);
        }
        if position.outcome().is_none() {
            let moves = position.legal_moves().to_vec();
            let history = history.iter().rev().take(8).copied().collect();
            out.push(Sample { position, history, repetitions: rng.below(3), moves });
        }
    }
    out
}

fn requests(samples: &[Sample]) -> Vec<EvalRequest<'_>> {
    samples
        .iter()
        .map(|s| EvalRequest {
            position: &s.position,
            history: &s.history,
            repetitions: s.repetitions,
            moves: &s.moves,
        })
        .collect()
}

fn device() -> Device {
    DeviceKind::Cpu.device().unwrap()
}

/// A freshly initialised net whose batch norms get random statistics and affine parameters
/// (a fresh net's are the identity, which would not test the folding).
fn net(config: &NetConfig, seed: u64) -> Net {
    let device = device();
    device.seed(seed);
    let net = config.init(&device).unwrap();
    let mut store = SafetensorsStore::from_bytes(None);
    net.save_into(&mut store).unwrap();
    let bytes = store.get_bytes().unwrap();

    let mut rng = Rng(seed ^ 0xABCD);
    let tensors = SafeTensors::deserialize(&bytes).unwrap();
    let mut names: Vec<String> = tensors.names().into_iter().map(str::to_string).collect();
    names.sort();
    let mut data: Vec<(String, Vec<usize>, Vec<u8>)> = Vec::new();
    for name in names {
        let view = tensors.tensor(&name).unwrap();
        let range = if name.ends_with("norm.gamma") {
            Some((0.5, 1.5))
        } else if name.ends_with("norm.beta") || name.ends_with("norm.running_mean") {
            Some((-0.5, 0.5))
        } else if name.ends_with("norm.running_var") {
            Some((0.3, 2.0))
        } else {
            None
        };
        let bytes = match range {
            Some((lo, hi)) => {
                let n = view.shape().iter().product::<usize>();
                (0..n).flat_map(|_| rng.uniform(lo, hi).to_le_bytes()).collect()
            }
            None => view.data().to_vec(),
        };
        data.push((name, view.shape().to_vec(), bytes));
    }
    let views: Vec<(String, TensorView<'_>)> = data
        .iter()
        .map(|(name, shape, bytes)| {
            (name.clone(), TensorView::new(Dtype::F32, shape.clone(), bytes).unwrap())
        })
        .collect();
    let bytes = safetensors::serialize(views, None::<HashMap<String, String>>).unwrap();

    let mut net = config.init(&device).unwrap();
    let result = net.load_from(&mut SafetensorsStore::from_bytes(Some(bytes))).unwrap();
    assert!(result.errors.is_empty() && result.missing.is_empty() && result.unused.is_empty());
    net.valid()
}

fn encode(samples: &[Sample], config: &NetConfig) -> Vec<f32> {
    let mut batch = Batch::new(Encoder::new(config.encoder), samples.len());
    for s in samples {
        batch.push(&s.position, &s.history, s.repetitions);
    }
    batch.as_slice().to_vec()
}

fn burn_forward(net: &Net, input: &[f32], n: usize) -> (Vec<f32>, Vec<f32>) {
    let planes = net.config().input_planes();
    let input = TensorData::new(input.to_vec(), [n, planes, 8, 8]);
    let output = net.forward(Tensor::from_data(input, &device()));
    (
        output.policy.into_data().try_into_vec_as::<f32>().unwrap(),
        output.wdl.into_data().try_into_vec_as::<f32>().unwrap(),
    )
}

fn max_difference(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

fn check_against_burn(config: &NetConfig, seed: u64) {
    let net = net(config, seed);
    let infer = InferNet::from_net(&net).unwrap();
    // 45 positions: a chunk of 32 (the main path, Winograd over positions) and one of 13;
    // 40: 32 and 8; then 13, 8, 5, 4 and 1 alone. Which of them take the small-batch path
    // (Winograd over channels) or, for wide nets at one position, the direct convolution
    // depends on the width (`takes_small_path`); the nets below cover all three.
    let samples = random_positions(45, seed + 1);
    let mut workspace = Workspace::new();
    for n in [45, 40, 13, 8, 5, 4, 1] {
        let input = encode(&samples[..n], config);
        let (policy, wdl) = burn_forward(&net, &input, n);
        let mut ours_policy = vec![0.0; n * POLICY_SIZE];
        let mut ours_wdl = vec![0.0; n * 3];
        infer.forward_into(&input, n, &mut workspace, &mut ours_policy, &mut ours_wdl).unwrap();
        let (dp, dw) = (max_difference(&policy, &ours_policy), max_difference(&wdl, &ours_wdl));
        assert!(dp <= TOLERANCE && dw <= TOLERANCE, "{config:?} n={n}: policy {dp}, wdl {dw}");
        // The logits are not trivially small (the comparison means something).
        assert!(policy.iter().any(|v| v.abs() > 0.1), "policy logits all near zero");
        assert_eq!(infer.forward(&input, n).unwrap().policy, ours_policy);
        // Only the legal moves' logits (the engine's call): the same values, whichever path
        // the batch takes (dot products on the small-batch path, picked out on the main one).
        let (mut moves, mut counts) = (Vec::new(), Vec::new());
        for s in &samples[..n] {
            moves.extend(s.moves.iter().map(|&m| move_to_index(&s.position, m) as u32));
            counts.push(s.moves.len());
        }
        let mut move_logits = vec![f32::NAN; moves.len()];
        infer
            .forward_moves_into(
                &input,
                n,
                &mut workspace,
                &moves,
                &counts,
                &mut move_logits,
                &mut ours_wdl,
            )
            .unwrap();
        let mut picked = Vec::new();
        let mut at = 0;
        for (b, &count) in counts.iter().enumerate() {
            picked.extend(
                moves[at..at + count].iter().map(|&i| policy[b * POLICY_SIZE + i as usize]),
            );
            at += count;
        }
        let (dp, dw) = (max_difference(&picked, &move_logits), max_difference(&wdl, &ours_wdl));
        assert!(
            dp <= TOLERANCE && dw <= TOLERANCE,
            "{config:?} n={n} moves: policy {dp}, wdl {dw}"
        );
    }
}

#[test]
fn move_logits_refuse_indices_that_do_not_fit_the_batch() {
    let config = NetConfig::tiny();
    let infer = InferNet::from_net(&net(&config, 8)).unwrap();
    let samples = random_positions(2, 9);
    let input = encode(&samples, &config);
    let mut workspace = Workspace::new();
    let mut wdl = vec![0.0; 6];
    let mut run = |moves: &[u32], counts: &[usize], logits: usize| {
        let mut out = vec![0.0; logits];
        infer
            .forward_moves_into(&input, 2, &mut workspace, moves, counts, &mut out, &mut wdl)
            .map(|()| out)
    };
    assert!(run(&[0, 4671, 7], &[1, 2], 3).is_ok());
    for (moves, counts, logits, says) in [
        (&[0u32, 1, 2][..], &[1usize, 1][..], 3, "2 counts adding up to 2 for a batch of 2 and 3"),
        (&[0, 1], &[2], 2, "1 counts adding up to 2 for a batch of 2"),
        (&[0, 1], &[1, 1], 3, "3 logits for 2 indices"),
        (&[0, 4672], &[1, 1], 2, "index 4672 is not below 4672"),
    ] {
        let error = run(moves, counts, logits).unwrap_err().to_string();
        assert!(error.starts_with("policy moves: ") && error.contains(says), "{error}");
    }
}

#[test]
fn tiny_net_matches_burn() {
    check_against_burn(&NetConfig::tiny(), 1);
}

#[test]
fn wide_net_matches_burn_on_every_path() {
    // 100 filters: the small-batch path's direct convolution at 1 position, its Winograd
    // products at 4, and the main path at 5, 8 and 13.
    let config = NetConfig { blocks: 1, filters: 100, se_ratio: 4, ..NetConfig::tiny() };
    assert!(atomzero_infer::net::takes_small_path(1, 100));
    assert!(atomzero_infer::net::takes_small_path(4, 100));
    assert!(!atomzero_infer::net::takes_small_path(5, 100));
    check_against_burn(&config, 4);
}

#[test]
fn net_with_squeeze_excitation_matches_burn() {
    check_against_burn(&NetConfig { se_ratio: 4, ..NetConfig::tiny() }, 2);
}

#[test]
fn net_with_history_and_an_opponent_policy_head_matches_burn() {
    let config = NetConfig {
        blocks: 2,
        filters: 24,
        se_ratio: 2,
        value_channels: 4,
        value_hidden: 16,
        encoder: EncoderConfig { history: 2, ..EncoderConfig::default() },
        // The opponent-policy planes are read and left out: the policy is the first 73.
        opponent_policy: true,
    };
    check_against_burn(&config, 3);
}

#[test]
fn net_without_blocks_matches_burn() {
    check_against_burn(&NetConfig { blocks: 0, filters: 8, ..NetConfig::tiny() }, 4);
}

#[test]
fn evaluator_matches_net_evaluator() {
    for (config, seed) in [
        (NetConfig::tiny(), 5),
        (
            NetConfig {
                se_ratio: 4,
                encoder: EncoderConfig { history: 1, ..EncoderConfig::default() },
                ..NetConfig::tiny()
            },
            6,
        ),
    ] {
        let net = net(&config, seed);
        let samples = random_positions(70, seed);
        let requests = requests(&samples);
        let reference = NetEvaluator::new(&net, &device(), 256).evaluate(&requests);
        // max_batch 20: requests split into chunks, the workspace reused between them.
        let ours = InferEvaluator::new(InferNet::from_net(&net).unwrap(), 20);
        for _ in 0..2 {
            let out = ours.evaluate(&requests);
            assert_eq!(out.len(), reference.len());
            for (a, b) in out.iter().zip(&reference) {
                assert_eq!(a.priors.len(), b.priors.len());
                for (p, q) in a.priors.iter().zip(b.priors).chain(a.wdl.iter().zip(&b.wdl)) {
                    assert!((p - q).abs() <= TOLERANCE, "{p} vs {q}");
                }
            }
        }
        assert!(ours.evaluate(&[]).is_empty());
        assert_eq!(ours.with_name("m.safetensors").name(), "m.safetensors");
    }
}

#[test]
fn evaluator_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<InferEvaluator>();
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("atomzero-infer-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn saved_net_loads_with_the_same_outputs() {
    let config = NetConfig { se_ratio: 4, ..NetConfig::tiny() };
    let net = net(&config, 7);
    let dir = temp_dir("load");
    let path = dir.join("net.safetensors");
    let provenance =
        Provenance { variant: "atomic".into(), training_step: 1, parent: None, belief: None };
    net.save(&path, &provenance).unwrap();

    let (loaded, metadata) = InferEvaluator::load(&path).unwrap();
    assert_eq!(metadata.net, config);
    let samples = random_positions(5, 8);
    let input = encode(&samples, &config);
    let direct = InferNet::from_net(&net).unwrap().forward(&input, 5).unwrap();
    assert_eq!(loaded.net().forward(&input, 5).unwrap(), direct);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn damaged_files_and_bytes_are_errors() {
    let config = NetConfig::tiny();
    let net = net(&config, 9);
    let dir = temp_dir("damaged");
    let path = dir.join("net.safetensors");
    let provenance =
        Provenance { variant: "atomic".into(), training_step: 1, parent: None, belief: None };
    net.save(&path, &provenance).unwrap();
    let bytes = fs::read(&path).unwrap();

    // Truncated file: refused by the checkpoint loader (size against the sidecar).
    fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let error = InferEvaluator::load(&path).unwrap_err();
    assert!(matches!(error, InferError::Checkpoint(_)), "{error}");
    // A flipped byte: checksum.
    let mut flipped = bytes.clone();
    flipped[bytes.len() - 10] ^= 0x40;
    fs::write(&path, &flipped).unwrap();
    assert!(matches!(InferEvaluator::load(&path).unwrap_err(), InferError::Checkpoint(_)));
    // No file at all.
    assert!(InferNet::load(&dir.join("absent.safetensors")).is_err());
    fs::remove_dir_all(&dir).unwrap();

    // Raw bytes, without a sidecar to catch the damage: every prefix and some garbage.
    for len in [0, 1, 7, 8, 100, bytes.len() / 3, bytes.len() - 1] {
        let error = InferNet::from_safetensors(&config, &bytes[..len]).unwrap_err();
        assert!(matches!(error, InferError::Safetensors(_)), "len {len}: {error}");
    }
    let mut rng = Rng(10);
    let garbage: Vec<u8> = (0..4096).map(|_| rng.next_u64() as u8).collect();
    assert!(InferNet::from_safetensors(&config, &garbage).is_err());
    // A header claiming a huge length.
    let mut huge = u64::MAX.to_le_bytes().to_vec();
    huge.extend_from_slice(b"{}");
    assert!(InferNet::from_safetensors(&config, &huge).is_err());

    // The right bytes for another architecture: shape mismatch, named.
    let other = NetConfig { filters: 16, ..config.clone() };
    let mut store = SafetensorsStore::from_bytes(None);
    net.save_into(&mut store).unwrap();
    let good = store.get_bytes().unwrap();
    let error = InferNet::from_safetensors(&other, &good).unwrap_err();
    assert!(error.to_string().contains("stem.conv.weight"), "{error}");
    let fewer = NetConfig { blocks: 3, ..config.clone() };
    let error = InferNet::from_safetensors(&fewer, &good).unwrap_err();
    assert!(matches!(error, InferError::UnexpectedTensor(ref name) if name.starts_with("tower.3")));
    assert!(InferNet::from_safetensors(&config, &good).is_ok());

    // Buffers of the wrong size for the batch: errors, no panic.
    let infer = InferNet::from_safetensors(&config, &good).unwrap();
    let planes = infer.planes();
    assert!(matches!(
        infer.forward(&vec![0.0; planes * 64 * 2 + 1], 2),
        Err(InferError::BufferShape { buffer: "input", .. })
    ));
    let mut policy = vec![0.0; POLICY_SIZE];
    let mut wdl = vec![0.0; 3];
    let error = infer
        .forward_into(
            &vec![0.0; planes * 64],
            1,
            &mut Workspace::new(),
            &mut policy[..10],
            &mut wdl,
        )
        .unwrap_err();
    assert!(matches!(error, InferError::BufferShape { buffer: "policy", .. }));
    assert!(infer.forward(&[], 0).unwrap().policy.is_empty());
}

/// The bf16, f16 and amx products against f32 on the shipped network (nets/atomic.safetensors) and
/// 600 positions of random games: close, not equal. Measured on an AVX-512 BF16 host
/// (docs/experiments.md, Change 8): bf16's largest prior difference per position averages
/// 0.033, the value difference 0.020, the top move agrees in 94.5%; f16 (11 bits of
/// significand to bf16's 8, Change 15) is closer still; amx rounds as bf16 does and only adds
/// in another order (Change 21), so it keeps bf16's bounds. A wrong pairing of the operands or a lost
/// tail of columns breaks each bound by far. On a CPU without the instructions the precision is
/// refused with its own error.
#[test]
fn narrow_products_stay_close_to_f32_on_the_shipped_net() {
    use atomzero_infer::Precision;
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../nets/atomic.safetensors");
    let (net, _) = InferNet::load(&path).unwrap();
    let samples = random_positions(600, 12);
    let requests = requests(&samples);
    // (precision, the CPU feature named in its refusal, bounds on the mean largest prior
    // difference, the mean value difference, and the top move's agreement)
    for (precision, feature, bounds) in [
        (Precision::Bf16, "AVX-512 BF16", (0.06, 0.04, 0.88)),
        (Precision::F16, "AVX-512 FP16", (0.02, 0.01, 0.95)),
        (Precision::Amx, "AMX-BF16", (0.06, 0.04, 0.88)),
    ] {
        let narrow = match net.clone().with_precision(precision) {
            Ok(narrow) => narrow,
            Err(error) => {
                assert!(!precision.supported());
                assert!(matches!(error, InferError::Unsupported(p) if p == precision), "{error}");
                assert!(error.to_string().contains(feature), "{error}");
                eprintln!("this CPU has no {feature}: only the refusal is checked");
                continue;
            }
        };
        assert_eq!(narrow.precision(), precision);
        let (a, b) = (InferEvaluator::new(net.clone(), 8), InferEvaluator::new(narrow, 8));
        let (mut prior_sum, mut value_sum, mut same_top) = (0.0f64, 0.0f64, 0usize);
        // Chunks of 4, the engine's minibatch: every evaluation takes the small path.
        for chunk in requests.chunks(4) {
            let (x, y) = (a.evaluate(chunk), b.evaluate(chunk));
            for (e, f) in x.iter().zip(y.iter()) {
                let largest = e.priors.iter().zip(f.priors).map(|(p, q)| (p - q).abs());
                prior_sum += f64::from(largest.fold(0.0f32, f32::max));
                value_sum += f64::from((e.value() - f.value()).abs());
                let top =
                    |v: &[f32]| v.iter().enumerate().max_by(|s, t| s.1.total_cmp(t.1)).unwrap().0;
                same_top += usize::from(top(e.priors) == top(f.priors));
            }
        }
        let n = requests.len() as f64;
        let (prior, value, agree) = (prior_sum / n, value_sum / n, same_top as f64 / n);
        eprintln!(
            "{precision} against f32: prior {prior:.4}, value {value:.4}, same top move {agree:.3}"
        );
        let (max_prior, max_value, min_agree) = bounds;
        assert!(
            prior < max_prior && value < max_value && agree > min_agree,
            "{precision}: {prior} {value} {agree}"
        );
        // And not simply f32: the rounding shows.
        assert!(value > 0.0, "{precision} gave exactly the f32 values");
    }
}

/// `--precision auto` on the shipped net: without AVX-512 BF16, FP16 or AMX nothing is measured and
/// the net runs f32; with either, f32 and each arithmetic the CPU has are timed (positive
/// speeds), their outputs agree with f32's (finite, a gap below `AUTO_MAX_GAP`), and the net kept
/// runs the one the measurement picks. A named precision is kept as named, never measured.
#[test]
fn auto_precision_keeps_the_arithmetic_it_measured_faster() {
    use atomzero_infer::Precision;
    use atomzero_infer::bf16::PrecisionChoice;
    use atomzero_infer::calibrate::{AUTO_MAX_GAP, AUTO_MIN_RATIO};
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../nets/atomic.safetensors");
    let (net, _) = InferNet::load(&path).unwrap();
    let (fixed, measured) =
        net.clone().with_choice(PrecisionChoice::Fixed(Precision::F32)).unwrap();
    assert_eq!((fixed.precision(), measured), (Precision::F32, None));
    let (auto, calibration) = net.with_choice(PrecisionChoice::Auto).unwrap();
    let available: Vec<Precision> =
        Precision::NARROW.into_iter().filter(|p| p.supported()).collect();
    match calibration {
        None => {
            assert!(available.is_empty());
            assert_eq!(auto.precision(), Precision::F32);
        }
        Some(c) => {
            let measured: Vec<Precision> = c.measured.iter().map(|m| m.precision).collect();
            assert_eq!(measured, available, "{c:?}");
            assert!(c.f32_per_second > 0.0, "{c:?}");
            for m in &c.measured {
                // The shipped net's values stay far inside f16's range.
                assert!(m.per_second > 0.0 && m.gap < AUTO_MAX_GAP, "{c:?}");
            }
            let fastest = c.measured.iter().max_by(|a, b| a.per_second.total_cmp(&b.per_second));
            let expected = match fastest {
                Some(m) if m.per_second / c.f32_per_second >= AUTO_MIN_RATIO => m.precision,
                _ => Precision::F32,
            };
            assert_eq!((auto.precision(), c.choice()), (expected, expected), "{c:?}");
            eprintln!("auto: {} ({c:?}), kept {expected}", c.summary());
        }
    }
}
