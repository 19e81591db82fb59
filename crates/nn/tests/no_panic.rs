//! Property tests of the network loader on damaged sidecars and weights (issue 44): whatever
//! the two files hold, `load` returns a net whose values are all finite or an error that names
//! one of the two files in a few hundred characters; never a panic, never an allocation by a
//! size only the sidecar claims. The sidecar's checksum is recomputed for damaged weights
//! ("vouched"), so the checks behind it, not the checksum, meet the damage. Seeded.

use std::fs;
use std::path::{Path, PathBuf};

use atomzero_nn::{DeviceKind, NetConfig, Provenance, load};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn fnv1a64_hex(bytes: &[u8]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016x}")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("atomzero-nn-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// Values a hostile sidecar field might take.
fn hostile_value(rng: &mut Rng) -> serde_json::Value {
    match rng.below(9) {
        0 => serde_json::Value::Null,
        1 => (-1).into(),
        2 => 0.into(),
        3 => u64::MAX.into(),
        4 => 4096.into(),
        5 => 1.5.into(),
        6 => "x".into(),
        7 => serde_json::json!([1, 2]),
        _ => (rng.below(300) as u64).into(),
    }
}

fn mutate_bytes(rng: &mut Rng, bytes: &mut Vec<u8>) {
    for _ in 0..=rng.below(3) {
        let i = rng.below(bytes.len() + 1);
        match rng.below(4) {
            0 if i < bytes.len() => bytes[i] = rng.next() as u8,
            1 if i < bytes.len() => {
                bytes.remove(i);
            }
            2 => bytes.insert(i, rng.next() as u8),
            _ => bytes.truncate(i),
        }
    }
}

/// The property, on the net at `path`.
fn check(path: &Path, device: &atomzero_nn::burn::tensor::Device) -> bool {
    match load(path, device) {
        Ok((net, _)) => {
            let bytes = net.to_safetensors().unwrap();
            let tensors = safetensors::SafeTensors::deserialize(&bytes).unwrap();
            for (name, view) in tensors.tensors() {
                assert!(
                    view.data()
                        .chunks_exact(4)
                        .all(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]).is_finite()),
                    "{name} of a loaded net is not finite"
                );
            }
            true
        }
        Err(e) => {
            let text = e.to_string();
            let names =
                [path.display().to_string(), path.with_extension("json").display().to_string()];
            assert!(names.iter().any(|n| text.starts_with(n.as_str())), "{text}");
            assert!(text.len() < 1200, "{} characters: {text}", text.len());
            false
        }
    }
}

#[test]
fn damaged_sidecars_and_weights_load_cleanly_or_fail_naming_the_file() {
    let device = DeviceKind::Cpu.device().unwrap();
    let dir = temp_dir("no-panic");
    let path = dir.join("net.safetensors");
    let sidecar = path.with_extension("json");
    device.seed(3);
    let config = NetConfig {
        blocks: 1,
        filters: 8,
        value_hidden: 8,
        value_channels: 2,
        ..NetConfig::tiny()
    };
    config
        .init(&device)
        .unwrap()
        .save(&path, &Provenance { variant: "atomic".into(), ..Provenance::default() })
        .unwrap();
    let weights = fs::read(&path).unwrap();
    let json = fs::read(&sidecar).unwrap();
    let mut rng = Rng(44);
    let (mut loaded, mut refused) = (0, 0);
    for case in 0..400 {
        let mut w = weights.clone();
        let mut j: serde_json::Value = serde_json::from_slice(&json).unwrap();
        match case % 4 {
            // A field of the sidecar set to a hostile value.
            0 => {
                let fields = ["blocks", "filters", "se_ratio", "value_hidden", "value_channels"];
                let field = fields[rng.below(fields.len())];
                j["net"][field] = hostile_value(&mut rng);
            }
            // Top-level fields.
            1 => {
                let fields =
                    ["format_version", "encoding_version", "weights_bytes", "variant", "belief"];
                j[fields[rng.below(fields.len())]] = hostile_value(&mut rng);
            }
            // Weights bytes damaged, the sidecar vouching for them.
            2 => {
                mutate_bytes(&mut rng, &mut w);
                j["weights_bytes"] = w.len().into();
                j["weights_fnv1a64"] = fnv1a64_hex(&w).into();
            }
            // Tensor values overwritten with non-finite or extreme floats, vouched.
            _ => {
                let header = u64::from_le_bytes(w[..8].try_into().unwrap()) as usize + 8;
                let at = header + 4 * rng.below((w.len() - header) / 4);
                let value = [f32::NAN, f32::INFINITY, -f32::INFINITY, -1.0, 1e30][rng.below(5)];
                w[at..at + 4].copy_from_slice(&value.to_le_bytes());
                j["weights_bytes"] = w.len().into();
                j["weights_fnv1a64"] = fnv1a64_hex(&w).into();
            }
        }
        fs::write(&path, &w).unwrap();
        let mut text = serde_json::to_vec(&j).unwrap();
        if case % 9 == 0 {
            mutate_bytes(&mut rng, &mut text);
        }
        fs::write(&sidecar, &text).unwrap();
        if check(&path, &device) {
            loaded += 1;
        } else {
            refused += 1;
        }
    }
    assert!(loaded > 0 && refused > 0, "{loaded} loaded, {refused} refused");
    fs::remove_dir_all(&dir).unwrap();
}
