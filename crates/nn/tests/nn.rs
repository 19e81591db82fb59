//! The network crate end to end on the CPU backend: evaluator shapes and masking, save/load
//! round trips, refusals that name what differs, damaged files (nets with trained batch-norm
//! statistics come from `atomzero-train`'s Burn step; its own tests are there). Deterministic: fixed seeds for positions, targets and Burn's initialisation.

use std::fs;
use std::path::{Path, PathBuf};

use atomzero_encoding::{Batch, Encoder, POLICY_SIZE, move_to_index};
use atomzero_mcts::{EvalRequest, Evaluations, Evaluator};
use atomzero_nn::burn::module::Module;
use atomzero_nn::burn::tensor::{Device, Tensor, TensorData};
use atomzero_nn::{
    CheckpointError, DeviceKind, Net, NetConfig, NetEvaluator, Provenance, load, load_with_config,
};
use atomzero_rules::{Position, Variant};
use atomzero_train::burn::{BurnTrainer, StepConfig, TrainBatch};

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
    /// Uniform in (0, 1].
    fn unit(&mut self) -> f32 {
        ((self.next_u64() >> 40) as f32 + 1.0) / (1u64 << 24) as f32
    }
}

/// A position from a random atomic game, with its history (most recent first).
struct Sample {
    position: Position,
    history: Vec<Position>,
    moves: Vec<atomzero_rules::Move>,
}

fn random_positions(n: usize, seed: u64) -> Vec<Sample> {
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    while out.len() < n {
        let mut position = Position::new(Variant::Atomic);
        let mut history: Vec<Position> = Vec::new();
        let plies = 1 + rng.below(60);
        for _ in 0..plies {
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
            out.push(Sample { position, history, moves });
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
            repetitions: 0,
            moves: &s.moves,
        })
        .collect()
}

fn device() -> Device {
    DeviceKind::Cpu.device().unwrap()
}

fn net(config: &NetConfig, seed: u64) -> Net {
    let device = device();
    device.seed(seed);
    config.init(&device).unwrap()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("atomzero-nn-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn provenance() -> Provenance {
    Provenance {
        variant: "atomic".into(),
        training_step: 7,
        parent: Some("000000".into()),
        belief: None,
    }
}

/// A batch with random target distributions over the legal moves and random WDL targets.
fn train_batch(samples: &[Sample], config: &NetConfig, seed: u64, device: &Device) -> TrainBatch {
    let mut rng = Rng(seed);
    let encoder = Encoder::new(config.encoder);
    let mut batch = Batch::new(encoder, samples.len());
    let mut policy = vec![0.0f32; samples.len() * POLICY_SIZE];
    let mut legal = vec![false; samples.len() * POLICY_SIZE];
    let mut wdl = Vec::new();
    for (i, s) in samples.iter().enumerate() {
        batch.push(&s.position, &s.history, 0);
        let weights: Vec<f32> = s.moves.iter().map(|_| rng.unit().powi(3)).collect();
        let sum: f32 = weights.iter().sum();
        for (&m, w) in s.moves.iter().zip(&weights) {
            let index = i * POLICY_SIZE + move_to_index(&s.position, m);
            policy[index] = w / sum;
            legal[index] = true;
        }
        let raw = [rng.unit(), rng.unit(), rng.unit()];
        let total: f32 = raw.iter().sum();
        wdl.extend(raw.iter().map(|x| x / total));
    }
    TrainBatch::from_slices(encoder.planes(), batch.as_slice(), &policy, &legal, &wdl, device)
        .unwrap()
}

fn assert_close(a: &Evaluations, b: &Evaluations, tolerance: f32) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert_eq!(x.priors.len(), y.priors.len());
        for (p, q) in x.priors.iter().zip(y.priors).chain(x.wdl.iter().zip(&y.wdl)) {
            assert!((p - q).abs() <= tolerance, "{p} vs {q}");
        }
    }
}

#[test]
fn evaluator_priors_cover_exactly_the_legal_moves() {
    let config = NetConfig { se_ratio: 4, ..NetConfig::tiny() };
    let net = net(&config, 1);
    let samples = random_positions(40, 11);
    let requests = requests(&samples);
    let evaluator = NetEvaluator::new(&net, &device(), 256);
    let out = evaluator.evaluate(&requests);
    assert_eq!(out.len(), samples.len());
    for (e, s) in out.iter().zip(&samples) {
        assert_eq!(e.priors.len(), s.moves.len());
        assert!(e.priors.iter().all(|p| p.is_finite() && *p > 0.0));
        assert!((e.priors.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        assert!(e.wdl.iter().all(|p| p.is_finite() && *p > 0.0));
        assert!((e.wdl.iter().sum::<f32>() - 1.0).abs() < 1e-5);
    }

    // The priors are the softmax of the raw policy logits at the legal indices only.
    let encoder = Encoder::new(config.encoder);
    let mut batch = Batch::new(encoder, samples.len());
    for s in &samples {
        batch.push(&s.position, &s.history, 0);
    }
    let input = TensorData::new(batch.as_slice().to_vec(), [samples.len(), encoder.planes(), 8, 8]);
    let output = net.valid().forward(Tensor::from_data(input, &device()));
    let logits: Vec<f32> = output.policy.into_data().try_into_vec_as::<f32>().unwrap();
    for (i, (e, s)) in out.iter().zip(&samples).enumerate() {
        let legal: Vec<f32> = s
            .moves
            .iter()
            .map(|&m| logits[i * POLICY_SIZE + move_to_index(&s.position, m)])
            .collect();
        let max = legal.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let sum: f32 = legal.iter().map(|l| (l - max).exp()).sum();
        for (prior, logit) in e.priors.iter().zip(&legal) {
            assert!((prior - (logit - max).exp() / sum).abs() < 1e-5);
        }
    }

    // Chunking gives the same answers (up to summation order in the kernels).
    let chunked = NetEvaluator::new(&net, &device(), 7).evaluate(&requests);
    assert_close(&out, &chunked, 1e-5);
    // So does zero-padding each chunk (as GPU devices do): 40 positions as 64 rows (largest
    // batch 256) and as 48 (largest batch 48), and in chunks of 28 and 12, the 12 as 16 rows.
    for max_batch in [256, 48, 28] {
        let padded = NetEvaluator::new(&net, &device(), max_batch).with_batch_padding(true);
        assert_close(&out, &padded.evaluate(&requests), 1e-5);
    }
    assert!(evaluator.evaluate(&[]).is_empty());
}

#[test]
fn evaluator_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<NetEvaluator>();
}

#[test]
fn flops_count_matches_the_architecture() {
    let tiny = NetConfig::tiny();
    let planes = tiny.input_planes() as u64;
    let conv = |c_in: u64, c_out: u64, k: u64| c_in * c_out * k * k * 64;
    let expected = 2
        * (conv(planes, 32, 3)
            + 4 * 2 * conv(32, 32, 3)
            + conv(32, 32, 3)
            + conv(32, 73, 1)
            + conv(32, 8, 1)
            + 8 * 64 * 64
            + 64 * 3);
    assert_eq!(tiny.flops_per_position(), expected);
    assert!(NetConfig::default_size().flops_per_position() > 30 * tiny.flops_per_position());
}

/// Trains a few steps so that batch norm's running statistics are not the initial ones.
fn trained_net(config: &NetConfig, samples: &[Sample]) -> Net {
    let mut trainer = BurnTrainer::new(net(config, 3), &StepConfig::default(), &device());
    let batch = train_batch(samples, config, 5, trainer.device());
    for _ in 0..3 {
        trainer.step(&batch, 1e-3);
    }
    trainer.into_net()
}

#[test]
fn save_then_load_gives_identical_outputs() {
    let config = NetConfig { blocks: 2, filters: 16, se_ratio: 4, ..NetConfig::tiny() };
    let samples = random_positions(24, 21);
    let trained = trained_net(&config, &samples);
    let dir = temp_dir("round-trip");
    let path = dir.join("000001.safetensors");
    let saved = trained.save(&path, &provenance()).unwrap();
    assert!(path.exists() && dir.join("000001.json").exists());
    let leftovers: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left behind");

    let requests = requests(&samples);
    let before = NetEvaluator::new(&trained, &device(), 64).evaluate(&requests);
    let (loaded, metadata) = load(&path, &device()).unwrap();
    assert_eq!(metadata, saved);
    assert_eq!(metadata.net, config);
    assert_eq!(metadata.training_step, 7);
    assert_eq!(metadata.parent.as_deref(), Some("000000"));
    let after = NetEvaluator::new(&loaded, &device(), 64).evaluate(&requests);
    assert_close(&before, &after, 1e-6);

    let (with_config, _) = load_with_config(&path, &config, &device()).unwrap();
    let again = NetEvaluator::new(&with_config, &device(), 64).evaluate(&requests);
    assert_close(&before, &again, 1e-6);

    // Saving again over the same name replaces both files.
    trained.save(&path, &Provenance { training_step: 8, ..provenance() }).unwrap();
    assert_eq!(load(&path, &device()).unwrap().1.training_step, 8);
    fs::remove_dir_all(&dir).unwrap();
}

fn edit_sidecar(path: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let sidecar = path.with_extension("json");
    let mut value: serde_json::Value =
        serde_json::from_slice(&fs::read(&sidecar).unwrap()).unwrap();
    edit(&mut value);
    fs::write(&sidecar, serde_json::to_vec(&value).unwrap()).unwrap();
}

/// FNV-1a 64, as the sidecar records it.
fn fnv1a64_hex(bytes: &[u8]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// Replaces the weights file and makes the sidecar vouch for the new bytes, so that the
/// safetensors parser itself is what must catch the damage.
fn replace_weights_vouched(path: &Path, bytes: &[u8]) {
    fs::write(path, bytes).unwrap();
    let (len, checksum) = (bytes.len(), fnv1a64_hex(bytes));
    edit_sidecar(path, |v| {
        v["weights_bytes"] = len.into();
        v["weights_fnv1a64"] = checksum.into();
    });
}

fn load_error(path: &Path) -> String {
    match load(path, &device()) {
        Ok(_) => panic!("{} loaded", path.display()),
        Err(error) => error.to_string(),
    }
}

#[test]
fn loading_another_architecture_or_encoding_fails_naming_the_field() {
    let config = NetConfig { blocks: 1, filters: 8, ..NetConfig::tiny() };
    let dir = temp_dir("mismatch");
    let path = dir.join("net.safetensors");
    net(&config, 4).save(&path, &provenance()).unwrap();

    let wanted = NetConfig { filters: 16, ..config.clone() };
    let error = load_with_config(&path, &wanted, &device()).unwrap_err();
    assert!(matches!(error, CheckpointError::Mismatch { .. }));
    assert!(error.to_string().contains("filters: file has 8, config wants 16"), "{error}");

    let wanted = NetConfig { blocks: 3, se_ratio: 2, ..config.clone() };
    let error = load_with_config(&path, &wanted, &device()).unwrap_err().to_string();
    assert!(error.contains("blocks: file has 1, config wants 3"), "{error}");
    assert!(error.contains("se_ratio: file has 0, config wants 2"), "{error}");

    let mut wanted = config.clone();
    wanted.encoder.history = 2;
    let error = load_with_config(&path, &wanted, &device()).unwrap_err().to_string();
    assert!(error.contains("encoder.history: file has 0, config wants 2"), "{error}");

    // Version 1 (before the Balanced start's setup phase) still loads: it encodes every
    // position it had as version 2 does.
    edit_sidecar(&path, |v| v["encoding_version"] = 1.into());
    assert!(load(&path, &device()).is_ok());
    for bad in [0, 3, 999] {
        edit_sidecar(&path, |v| v["encoding_version"] = bad.into());
        let error = load_error(&path);
        let expected = format!("encoding_version: file has {bad}, config wants 1 to 2");
        assert!(error.contains(&expected), "{error}");
    }
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn damaged_files_fail_cleanly() {
    let config = NetConfig { blocks: 1, filters: 8, ..NetConfig::tiny() };
    let dir = temp_dir("damaged");
    let path = dir.join("net.safetensors");
    let sidecar = path.with_extension("json");
    let original = net(&config, 5);
    original.save(&path, &provenance()).unwrap();
    let weights = fs::read(&path).unwrap();
    let json = fs::read(&sidecar).unwrap();
    let restore = || {
        fs::write(&path, &weights).unwrap();
        fs::write(&sidecar, &json).unwrap();
    };
    load(&path, &device()).unwrap();

    // Truncated weights, at several lengths (inside the header and inside the data).
    for len in [0, 4, 8, 100, weights.len() / 2, weights.len() - 1] {
        restore();
        fs::write(&path, &weights[..len]).unwrap();
        let error = load_error(&path);
        assert!(error.contains("weights file is"), "{error}");
    }
    // One flipped byte in the tensor data.
    restore();
    let mut flipped = weights.clone();
    let last = flipped.len() - 3;
    flipped[last] ^= 0x40;
    fs::write(&path, &flipped).unwrap();
    assert!(load_error(&path).contains("checksum"));

    // Damage the sidecar vouches for: the safetensors parser must refuse it, not panic.
    for len in [0, 7, 8, 50, weights.len() / 2, weights.len() - 1] {
        restore();
        replace_weights_vouched(&path, &weights[..len]);
        let error = load_error(&path);
        assert!(error.contains("cannot load weights"), "{len}: {error}");
    }
    restore();
    let mut garbage_header = weights.clone();
    for byte in &mut garbage_header[8..40] {
        *byte = b'!';
    }
    replace_weights_vouched(&path, &garbage_header);
    assert!(load_error(&path).contains("cannot load weights"));
    // Weights of another architecture under a sidecar that claims this one.
    restore();
    let dir_other = dir.join("other");
    fs::create_dir_all(&dir_other).unwrap();
    let other_path = dir_other.join("net.safetensors");
    net(&NetConfig { filters: 12, ..config.clone() }, 6).save(&other_path, &provenance()).unwrap();
    replace_weights_vouched(&path, &fs::read(&other_path).unwrap());
    // Named by the fields that differ (issue 44: it was Burn's dump of every tensor).
    let error = load_error(&path);
    assert!(
        error.contains("do not fit their sidecar's architecture")
            && error.contains("filters: the weights have 12, the sidecar says 8"),
        "{error}"
    );
    assert!(error.len() < 400, "{error}");

    // Truncated, empty, garbage and missing sidecars.
    for len in [0, 1, json.len() / 2, json.len() - 3] {
        restore();
        fs::write(&sidecar, &json[..len]).unwrap();
        let error = load_error(&path);
        assert!(error.contains("invalid network sidecar"), "{len}: {error}");
    }
    restore();
    fs::write(&sidecar, b"\xff\xfe not json").unwrap();
    assert!(load_error(&path).contains("invalid network sidecar"));
    fs::remove_file(&sidecar).unwrap();
    assert!(load_error(&path).contains("net.json"));
    restore();
    fs::remove_file(&path).unwrap();
    assert!(load_error(&path).contains("net.safetensors"));

    // Sidecars with wrong versions, missing fields, unknown fields, unbuildable sizes.
    restore();
    edit_sidecar(&path, |v| v["format_version"] = 2.into());
    assert!(load_error(&path).contains("format version 2"));
    restore();
    edit_sidecar(&path, |v| {
        v["net"].as_object_mut().unwrap().remove("filters");
    });
    assert!(load_error(&path).contains("net.filters"));
    restore();
    // Nets saved before the opponent-policy head existed (the shipped one among them) load.
    edit_sidecar(&path, |v| {
        v["net"].as_object_mut().unwrap().remove("opponent_policy");
    });
    load(&path, &device()).unwrap();
    restore();
    edit_sidecar(&path, |v| v["surprise"] = true.into());
    assert!(load_error(&path).contains("surprise"));
    restore();
    edit_sidecar(&path, |v| v["net"]["filters"] = 0.into());
    assert!(load_error(&path).contains("filters = 0"));
    restore();
    edit_sidecar(&path, |v| v["net"]["blocks"] = (1u64 << 40).into());
    assert!(load_error(&path).contains("blocks"));
    restore();
    edit_sidecar(&path, |v| v["net"]["filters"] = (-3).into());
    assert!(load_error(&path).contains("invalid network sidecar"));

    restore();
    load(&path, &device()).unwrap();
    fs::remove_dir_all(&dir).unwrap();
}
