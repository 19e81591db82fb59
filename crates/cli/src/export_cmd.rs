//! `atomzero export`: a network as ONNX (the inference graph, batch norm folded, for
//! onnxruntime and friends) or as safetensors with its JSON sidecar, optionally with a
//! reference dump (encoded positions from random games and the net's own outputs on them) that
//! `scripts/onnx_check.py` compares with onnxruntime.
//!
//! `--grow BLOCKSxFILTERS` exports the net grown to that size with the same outputs
//! (`atomzero_nn::grow`).
//!
//! `--model random` exports a freshly initialised net (`--net tiny|default`, seeded by
//! `--seed`), which is how the check scripts get a net without training one.
//!
//! Reference dump (`--reference DIR`), all arrays little-endian NumPy `.npy` files:
//!
//! | file | content |
//! |---|---|
//! | `planes.npy` | float32 `[N, planes, 8, 8]`: the encoded positions (the ONNX input) |
//! | `policy.npy` | float32 `[N, 4672]`: the net's policy logits on them (Burn, eval mode) |
//! | `wdl.npy` | float32 `[N, 3]`: the net's WDL logits |
//! | `positions.txt` | one line per position: `FEN<TAB>repetitions<TAB>legal moves (UCI, space-separated)` |
//!
//! The positions come from uniformly random games (seeded by `--seed`), never terminal ones,
//! alternately with White and Black to move.

use crate::fsutil::write_atomic;
use anyhow::{Context, Result, anyhow, bail};
use atomzero_encoding::{Batch, Encoder};
use atomzero_mcts::Rng;
use atomzero_nn::{DeviceKind, ExportInfo, Net, NetConfig, NetMetadata, Provenance, RawOutputs};
use atomzero_rules::{Game, Position, Variant};
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The network to export: a weights file with its `.json` sidecar, `shipped` (the network in
    /// the binary), or `random` for a freshly initialised net (see --net and --seed).
    #[arg(long)]
    model: String,
    /// Grow the net first to BLOCKSxFILTERS (e.g. `6x48`): a wider and/or deeper net that
    /// computes what the model computes (old units read only old units; the new ones are drawn
    /// fresh, seeded by --seed), to train at that size with `atomzero run --init`.
    #[arg(long, value_name = "BLOCKSxFILTERS", value_parser = parse_size)]
    grow: Option<(usize, usize)>,
    /// Output file.
    #[arg(long)]
    out: PathBuf,
    /// Output format (default: from the extension of --out, `.safetensors` or else ONNX).
    #[arg(long, value_enum)]
    format: Option<Format>,
    /// With `--model random`: the architecture preset.
    #[arg(long, value_enum, default_value = "tiny")]
    net: NetPreset,
    /// With `--model random`: the variant recorded for the net (a file's own variant is kept).
    #[arg(long, default_value = "atomic")]
    variant: String,
    /// Seed of the random initialisation and of the reference positions.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Also write a reference dump into this directory (see the module docs).
    #[arg(long)]
    reference: Option<PathBuf>,
    /// Positions in the reference dump.
    #[arg(long, default_value_t = 100)]
    reference_positions: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Onnx,
    Safetensors,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum NetPreset {
    /// 4 blocks x 32 filters.
    Tiny,
    /// 10 blocks x 128 filters with squeeze-excitation.
    Default,
}

/// Longest random game played for reference positions.
const MAX_GAME_PLIES: usize = 160;

pub fn run(args: ExportArgs) -> Result<()> {
    let format =
        args.format.unwrap_or_else(|| match args.out.extension().and_then(|e| e.to_str()) {
            Some("safetensors") => Format::Safetensors,
            _ => Format::Onnx,
        });
    if args.reference_positions == 0 || args.reference_positions > 100_000 {
        bail!("--reference-positions must be in 1..=100000");
    }
    let device = DeviceKind::Cpu.device().map_err(|e| anyhow!("{e}"))?;
    let (net, provenance, source) = if args.model == "random" {
        let variant: Variant = args.variant.parse().map_err(|e| anyhow!("{e}"))?;
        let variant =
            variant.require_perfect_information("atomzero export").map_err(|e| anyhow!("{e}"))?;
        let config = match args.net {
            NetPreset::Tiny => NetConfig::tiny(),
            NetPreset::Default => NetConfig::default_size(),
        };
        device.seed(args.seed);
        let net = config.init(&device).map_err(|e| anyhow!("{e}"))?;
        let provenance = Provenance {
            variant: variant.to_string(),
            training_step: 0,
            parent: None,
            belief: None,
        };
        (net, provenance, None)
    } else {
        let shipped;
        let path = if args.model == crate::shipped::SPEC {
            shipped = crate::shipped::path()?;
            shipped.as_path()
        } else {
            Path::new(&args.model)
        };
        if !path.is_file() {
            bail!("model '{}' not found (expected a network file or 'random')", path.display());
        }
        if same_file(path, &args.out) {
            bail!("--out must differ from --model");
        }
        let (net, metadata): (Net, NetMetadata) =
            atomzero_nn::load(path, &device).map_err(|e| anyhow!("{e}"))?;
        let provenance = Provenance {
            variant: metadata.variant,
            training_step: metadata.training_step,
            parent: metadata.parent,
            belief: metadata.belief,
        };
        let source = path.file_name().map(|n| n.to_string_lossy().into_owned());
        (net, provenance, source)
    };
    let (net, provenance) = match args.grow {
        None => (net, provenance),
        Some((blocks, filters)) => {
            let small = net.config().clone();
            let large = NetConfig { blocks, filters, ..small.clone() };
            device.seed(args.seed);
            let grown = atomzero_nn::grow(&net, &large, &device)
                .map_err(|e| anyhow!("cannot grow {}: {e}", args.model))?;
            println!(
                "grown: {}x{} ({} values) -> {}x{} ({} values), the same outputs",
                small.blocks,
                small.filters,
                small.parameters(),
                blocks,
                filters,
                large.parameters()
            );
            let parent = source.clone().or(Some(args.model.clone()));
            (grown, Provenance { parent, ..provenance })
        }
    };

    match format {
        Format::Onnx => {
            let info = ExportInfo {
                variant: provenance.variant.clone(),
                training_step: provenance.training_step,
                source,
            };
            let bytes = atomzero_nn::to_onnx(&net, &info).map_err(|e| anyhow!("{e}"))?;
            write_atomic(&args.out, &bytes)?;
            println!("onnx: {} ({} bytes)", args.out.display(), bytes.len());
        }
        Format::Safetensors => {
            if let Some(dir) = args.out.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
            }
            net.save(&args.out, &provenance).map_err(|e| anyhow!("{e}"))?;
            println!(
                "safetensors: {} (sidecar {})",
                args.out.display(),
                atomzero_nn::sidecar_path(&args.out).display()
            );
        }
    }

    if let Some(dir) = &args.reference {
        let variant: Variant = provenance.variant.parse().map_err(|e| anyhow!("{e}"))?;
        let variant =
            variant.require_perfect_information("atomzero export").map_err(|e| anyhow!("{e}"))?;
        write_reference(&net, variant, args.seed, args.reference_positions, dir)?;
        println!("reference: {} positions in {}", args.reference_positions, dir.display());
    }
    Ok(())
}

/// `BLOCKSxFILTERS`, e.g. `6x48`.
fn parse_size(text: &str) -> Result<(usize, usize), String> {
    let bad = || format!("'{text}': expected BLOCKSxFILTERS, e.g. 6x48");
    let (blocks, filters) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    let blocks = blocks.trim().parse().map_err(|_| bad())?;
    let filters = filters.trim().parse().map_err(|_| bad())?;
    Ok((blocks, filters))
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// One reference position: the position, its earlier positions (most recent first) and how
/// often it occurred before.
struct Sample {
    position: Position,
    history: Vec<Position>,
    repetitions: usize,
}

/// Plays a uniformly random game and returns its non-terminal positions.
fn random_game(variant: Variant, history: usize, rng: &mut Rng) -> Vec<Sample> {
    let mut game = Game::new(Position::new(variant));
    let mut positions = vec![*game.position()];
    let mut samples = Vec::new();
    while game.ply() < MAX_GAME_PLIES && game.outcome().is_none() {
        let position = *game.position();
        let moves = position.legal_moves();
        if moves.is_empty() {
            break;
        }
        let earlier: Vec<Position> =
            positions.iter().rev().skip(1).take(history).copied().collect();
        samples.push(Sample { position, history: earlier, repetitions: game.repetitions() });
        let m = moves[rng.below(moves.len())];
        game.play_unchecked(m);
        positions.push(*game.position());
    }
    samples
}

/// `count` positions from random games, White to move for even indices and Black for odd.
fn reference_positions(variant: Variant, history: usize, seed: u64, count: usize) -> Vec<Sample> {
    let mut rng = Rng::new(seed);
    let mut pools: [Vec<Sample>; 2] = [Vec::new(), Vec::new()];
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let want = out.len() % 2;
        if pools[want].is_empty() {
            for sample in random_game(variant, history, &mut rng) {
                let side = usize::from(sample.position.turn() == atomzero_rules::Color::Black);
                pools[side].push(sample);
            }
            continue;
        }
        let pool = &mut pools[want];
        // One position per game stretch: pick at random, the rest stay for later picks.
        let index = rng.below(pool.len());
        out.push(pool.swap_remove(index));
    }
    out
}

fn write_reference(net: &Net, variant: Variant, seed: u64, count: usize, dir: &Path) -> Result<()> {
    let encoder = Encoder::new(net.config().encoder);
    let samples = reference_positions(variant, encoder.config().history, seed, count);
    let mut batch = Batch::new(encoder, samples.len());
    let mut lines = String::new();
    for sample in &samples {
        batch.push(&sample.position, &sample.history, sample.repetitions);
        let moves: Vec<String> =
            sample.position.legal_moves().iter().map(|&m| sample.position.uci(m)).collect();
        lines.push_str(&format!(
            "{}\t{}\t{}\n",
            sample.position.fen(),
            sample.repetitions,
            moves.join(" ")
        ));
    }
    let device = DeviceKind::Cpu.device().map_err(|e| anyhow!("{e}"))?;
    let RawOutputs { policy, wdl } =
        atomzero_nn::reference_outputs(net, batch.as_slice(), samples.len(), &device)
            .map_err(|e| anyhow!("{e}"))?;
    let n = samples.len();
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    write_atomic(
        &dir.join("planes.npy"),
        &npy_f32(&[n, encoder.planes(), 8, 8], batch.as_slice()),
    )?;
    write_atomic(&dir.join("policy.npy"), &npy_f32(&[n, policy.len() / n], &policy))?;
    write_atomic(&dir.join("wdl.npy"), &npy_f32(&[n, 3], &wdl))?;
    write_atomic(&dir.join("positions.txt"), lines.as_bytes())?;
    Ok(())
}

/// A NumPy `.npy` file (format 1.0) holding little-endian float32 `values` of `shape`.
fn npy_f32(shape: &[usize], values: &[f32]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(ToString::to_string).collect();
    let shape =
        if dims.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}");
    // Magic (6) + version (2) + header length (2) + header, padded with spaces to a multiple
    // of 64 and ended by a newline.
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + 4 * values.len());
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for value in values {
        out.extend_from_slice(&value.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_header_is_aligned_and_describes_the_array() {
        let bytes = npy_f32(&[2, 3], &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
        let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!((10 + header_len) % 64, 0);
        let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
        assert!(header.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"));
        assert!(header.ends_with('\n'));
        assert_eq!(bytes.len(), 10 + header_len + 24);
        assert_eq!(&bytes[bytes.len() - 4..], &5.0f32.to_le_bytes());
    }

    #[test]
    fn reference_positions_alternate_colours_and_are_not_terminal() {
        let samples = reference_positions(Variant::Atomic, 1, 7, 20);
        assert_eq!(samples.len(), 20);
        for (i, sample) in samples.iter().enumerate() {
            let black = sample.position.turn() == atomzero_rules::Color::Black;
            assert_eq!(black, i % 2 == 1);
            assert!(sample.position.outcome().is_none());
            assert!(!sample.position.legal_moves().is_empty());
        }
    }
}
