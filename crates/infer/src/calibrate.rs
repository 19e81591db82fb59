//! `--precision auto`: which of the small-batch path's arithmetics ([`Precision`]) runs the
//! loaded net fastest on this host, measured when the net is loaded.
//!
//! A CPU flag is not a promise of speed: AVX-512 BF16's `vdpbf16ps` does twice an f32 FMA's
//! multiply-adds per instruction, but on AMD Zen 4 the bf16 products ran the shipped net 1.18×
//! as fast as f32 and on an Intel Sapphire Rapids host (2026-11-30) 0.80×, where AVX-512 FP16's
//! f16 products are the fast ones (docs/experiments.md, Changes 8, 14 and 15), and where the
//! host lends AMX tiles, bf16 products on them may be faster still (Change 21). So `auto` times
//! f32 and each narrower arithmetic the CPU has on the net itself: batches of
//! [`CALIBRATION_BATCH`] positions (the engine's default `MinibatchSize`), the arithmetics
//! alternated in [`CALIBRATION_ROUNDS`] rounds of about [`ROUND_SECONDS`] each, the median round
//! of each compared, and keeps the fastest narrower one only at [`AUTO_MIN_RATIO`] or more of
//! f32's speed and only if its outputs on the calibration positions are finite and within
//! [`AUTO_MAX_GAP`] of f32's (f16's range ends at 65,504: a net with larger intermediate values
//! would overflow). A host where they are about even keeps f32's exact arithmetic. The input
//! is a fixed pattern of binary planes (the time of a forward pass does not depend on the
//! values). About 0.1 s a candidate for the shipped net; nothing is measured where the CPU has
//! neither AVX-512 BF16 nor FP16.

use crate::bf16::{Precision, PrecisionChoice};
use crate::error::InferError;
use crate::net::{InferNet, Workspace};
use atomzero_encoding::POLICY_SIZE;
use std::time::Instant;

/// The least speed ratio over f32 at which `auto` picks a narrower arithmetic.
pub const AUTO_MIN_RATIO: f64 = 1.05;
/// The largest difference of any probability (a policy over all 4,672 moves, or win / draw /
/// loss) between a narrower arithmetic's outputs and f32's on the calibration positions at
/// which `auto` still accepts it.
pub const AUTO_MAX_GAP: f32 = 0.2;
/// Positions per timed call.
pub const CALIBRATION_BATCH: usize = 4;
/// Rounds, each timing every arithmetic.
pub const CALIBRATION_ROUNDS: usize = 5;
/// About how long one arithmetic runs in a round.
pub const ROUND_SECONDS: f64 = 0.01;

/// One narrower arithmetic as `auto` measured it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measured {
    /// bf16, f16 or amx.
    pub precision: Precision,
    /// Positions per second.
    pub per_second: f64,
    /// The largest probability difference against f32 ([`AUTO_MAX_GAP`]); infinite where an
    /// output was not finite.
    pub gap: f32,
}

/// What `auto` measured: positions per second of f32 and of each narrower arithmetic the CPU
/// has, on the loaded net.
#[derive(Clone, Debug, PartialEq)]
pub struct Calibration {
    /// f32 throughout.
    pub f32_per_second: f64,
    /// bf16, f16 and amx products, where the CPU has them.
    pub measured: Vec<Measured>,
}

impl Calibration {
    /// `precision`'s speed over f32's, if it was measured.
    pub fn ratio(&self, precision: Precision) -> Option<f64> {
        self.measured
            .iter()
            .find(|m| m.precision == precision)
            .map(|m| m.per_second / self.f32_per_second)
    }

    /// The arithmetic `auto` picks for this measurement: the fastest narrower one that is at
    /// least [`AUTO_MIN_RATIO`] times as fast as f32 and agrees with it; else f32.
    pub fn choice(&self) -> Precision {
        self.measured
            .iter()
            .filter(|m| {
                m.gap <= AUTO_MAX_GAP && m.per_second / self.f32_per_second >= AUTO_MIN_RATIO
            })
            .max_by(|a, b| a.per_second.total_cmp(&b.per_second))
            .map_or(Precision::F32, |m| m.precision)
    }

    /// What was measured, for the engine's `model loaded` line: `bf16 0.80x, f16 1.31x f32
    /// here`, with `(outputs strayed)` after an arithmetic refused for its outputs.
    pub fn summary(&self) -> String {
        let each: Vec<String> = self
            .measured
            .iter()
            .map(|m| {
                let strayed = if m.gap <= AUTO_MAX_GAP { "" } else { " (outputs strayed)" };
                format!("{} {:.2}x{strayed}", m.precision, m.per_second / self.f32_per_second)
            })
            .collect();
        format!("{} f32 here", each.join(", "))
    }
}

impl InferNet {
    /// This net with the arithmetic `choice` names; for [`PrecisionChoice::Auto`] on a CPU
    /// with AVX-512 BF16 or FP16, the one picked by measuring now, and the measurement. An
    /// arithmetic named on a CPU without it is [`InferError::Unsupported`].
    pub fn with_choice(
        self,
        choice: PrecisionChoice,
    ) -> Result<(InferNet, Option<Calibration>), InferError> {
        match choice {
            PrecisionChoice::Fixed(precision) => Ok((self.with_precision(precision)?, None)),
            PrecisionChoice::Auto => {
                let f32_net = self.with_precision(Precision::F32)?;
                let narrow: Vec<InferNet> = Precision::NARROW
                    .into_iter()
                    .filter(|p| p.supported())
                    .map(|p| f32_net.clone().with_precision(p))
                    .collect::<Result<_, _>>()?;
                if narrow.is_empty() {
                    return Ok((f32_net, None));
                }
                let calibration = calibrate(&f32_net, &narrow)?;
                let choice = calibration.choice();
                let net = narrow.into_iter().find(|n| n.precision() == choice).unwrap_or(f32_net);
                Ok((net, Some(calibration)))
            }
        }
    }
}

/// Times `f32_net` against each of `narrow` (the same weights in other arithmetics),
/// alternated, and compares their outputs on the timed positions.
pub fn calibrate(f32_net: &InferNet, narrow: &[InferNet]) -> Result<Calibration, InferError> {
    let batch = CALIBRATION_BATCH;
    let planes = f32_net.planes();
    // Sparse binary planes, like an encoded position: one square in seven set.
    let input: Vec<f32> = (0..batch * planes * 64)
        .map(|i| if (i * 37 + i / 64) % 7 == 0 { 1.0 } else { 0.0 })
        .collect();
    let mut workspace = Workspace::default();
    let (mut policy, mut wdl) = (vec![0.0; batch * POLICY_SIZE], vec![0.0; batch * 3]);
    let nets: Vec<&InferNet> = std::iter::once(f32_net).chain(narrow).collect();
    // Each net's outputs (and the warm-up: buffers grown, caches filled).
    let mut outputs = Vec::new();
    for net in &nets {
        let mut out = (vec![0.0; batch * POLICY_SIZE], vec![0.0; batch * 3]);
        net.forward_into(&input, batch, &mut workspace, &mut out.0, &mut out.1)?;
        outputs.push((probabilities(&out.0, POLICY_SIZE), probabilities(&out.1, 3)));
    }
    let mut call =
        |net: &InferNet| net.forward_into(&input, batch, &mut workspace, &mut policy, &mut wdl);
    // Size a round from f32's first timed call.
    let start = Instant::now();
    call(f32_net)?;
    let one = start.elapsed().as_secs_f64().max(1e-6);
    let calls = ((ROUND_SECONDS / one) as usize).clamp(1, 1000);
    let mut rounds = vec![Vec::new(); nets.len()];
    for _ in 0..CALIBRATION_ROUNDS {
        for (arm, net) in nets.iter().enumerate() {
            let start = Instant::now();
            for _ in 0..calls {
                call(net)?;
            }
            let seconds = start.elapsed().as_secs_f64().max(1e-9);
            rounds[arm].push((calls * batch) as f64 / seconds);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let measured = narrow
        .iter()
        .zip(&mut rounds[1..])
        .zip(&outputs[1..])
        .map(|((net, rounds), output)| Measured {
            precision: net.precision(),
            per_second: median(rounds),
            gap: gap(&outputs[0], output),
        })
        .collect();
    Ok(Calibration { f32_per_second: median(&mut rounds[0]), measured })
}

/// Softmax of each `width` logits; non-finite logits give NaNs.
fn probabilities(logits: &[f32], width: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(logits.len());
    for row in logits.chunks_exact(width) {
        let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let exps: Vec<f32> = row.iter().map(|&x| (x - max).exp()).collect();
        let sum: f32 = exps.iter().sum();
        out.extend(exps.iter().map(|e| e / sum));
    }
    out
}

/// The largest difference between two nets' probabilities; infinite if any is not finite.
fn gap(a: &(Vec<f32>, Vec<f32>), b: &(Vec<f32>, Vec<f32>)) -> f32 {
    let pairs = a.0.iter().zip(&b.0).chain(a.1.iter().zip(&b.1));
    let mut largest = 0.0f32;
    for (&x, &y) in pairs {
        if !(x.is_finite() && y.is_finite()) {
            return f32::INFINITY;
        }
        largest = largest.max((x - y).abs());
    }
    largest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(bf16: f64, f16: f64, f16_gap: f32) -> Calibration {
        Calibration {
            f32_per_second: 1000.0,
            measured: vec![
                Measured { precision: Precision::Bf16, per_second: 1000.0 * bf16, gap: 0.01 },
                Measured { precision: Precision::F16, per_second: 1000.0 * f16, gap: f16_gap },
            ],
        }
    }

    #[test]
    fn auto_picks_the_fastest_agreeing_arithmetic_at_the_minimum_ratio() {
        assert_eq!(at(0.8, 0.9, 0.0).choice(), Precision::F32);
        assert_eq!(at(1.0, 1.0, 0.0).choice(), Precision::F32);
        assert_eq!(at(AUTO_MIN_RATIO - 0.01, 0.9, 0.0).choice(), Precision::F32);
        assert_eq!(at(AUTO_MIN_RATIO, 0.9, 0.0).choice(), Precision::Bf16);
        assert_eq!(at(1.18, 0.9, 0.0).choice(), Precision::Bf16);
        assert_eq!(at(0.8, 1.3, 0.001).choice(), Precision::F16);
        assert_eq!(at(1.2, 1.3, 0.001).choice(), Precision::F16);
        assert_eq!(at(1.4, 1.3, 0.001).choice(), Precision::Bf16);
        // Faster but its outputs strayed (an overflow: infinite), or just too far.
        assert_eq!(at(0.8, 1.3, f32::INFINITY).choice(), Precision::F32);
        assert_eq!(at(1.2, 1.3, AUTO_MAX_GAP * 2.0).choice(), Precision::Bf16);
        assert!((at(0.8, 1.3, 0.0).ratio(Precision::Bf16).unwrap() - 0.8).abs() < 1e-12);
        assert_eq!(at(0.8, 1.3, 0.0).ratio(Precision::F32), None);
        assert_eq!(at(0.8, 1.3, 0.0).summary(), "bf16 0.80x, f16 1.30x f32 here");
        assert_eq!(
            at(0.8, 1.3, f32::INFINITY).summary(),
            "bf16 0.80x, f16 1.30x (outputs strayed) f32 here"
        );
    }

    #[test]
    fn the_gap_is_the_largest_probability_difference_and_infinite_past_the_range() {
        let p = probabilities(&[0.0, 0.0, 1.0, 1.0], 2);
        assert_eq!(p, vec![0.5, 0.5, 0.5, 0.5]);
        let q = probabilities(&[0.0, 0.0, 2.0, 1.0], 2);
        let wdl = (vec![0.2, 0.3, 0.5], vec![0.2, 0.3, 0.5]);
        let g = gap(&(p.clone(), wdl.0.clone()), &(q.clone(), wdl.1.clone()));
        assert!((g - (q[2] - 0.5)).abs() < 1e-6 && g > 0.2, "{g}");
        let overflowed = probabilities(&[f32::INFINITY, 0.0], 2);
        assert_eq!(gap(&(vec![1.0, 0.0], wdl.0.clone()), &(overflowed, wdl.1)), f32::INFINITY);
    }
}
