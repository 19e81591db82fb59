//! `--precision auto`: which of the small-batch path's arithmetics ([`Precision`]) runs the
//! loaded net faster on this host, measured when the net is loaded.
//!
//! AVX-512 BF16 is not a promise of speed: `vdpbf16ps` does twice an f32 FMA's multiply-adds
//! per instruction, but on AMD Zen 4 the bf16 products ran the shipped net 1.18× as fast as
//! f32 and on an Intel Sapphire Rapids host (2026-11-30) 0.80× (docs/experiments.md, Changes 8
//! and 14). So `auto` times both on the net itself: batches of [`CALIBRATION_BATCH`] positions
//! (the engine's default `MinibatchSize`), the two arithmetics alternated in
//! [`CALIBRATION_ROUNDS`] rounds of about [`ROUND_SECONDS`] each, the median round of each
//! compared, and keeps bf16 only at [`AUTO_BF16_MIN_RATIO`] or more: a host where the two are
//! about even keeps f32's exact arithmetic. The input is a fixed pattern of binary planes (the
//! time of a forward pass does not depend on the values). About 0.1 s for the shipped net;
//! nothing is measured where the CPU has no AVX-512 BF16.

use crate::bf16::{Precision, PrecisionChoice, bf16_supported};
use crate::error::InferError;
use crate::net::{InferNet, Workspace};
use atomzero_encoding::POLICY_SIZE;
use std::time::Instant;

/// The least bf16 : f32 speed ratio at which `auto` picks bf16.
pub const AUTO_BF16_MIN_RATIO: f64 = 1.05;
/// Positions per timed call.
pub const CALIBRATION_BATCH: usize = 4;
/// Rounds, each timing both arithmetics.
pub const CALIBRATION_ROUNDS: usize = 5;
/// About how long one arithmetic runs in a round.
pub const ROUND_SECONDS: f64 = 0.01;

/// What `auto` measured: positions per second of each arithmetic on the loaded net.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibration {
    /// f32 throughout.
    pub f32_per_second: f64,
    /// bf16 products.
    pub bf16_per_second: f64,
}

impl Calibration {
    /// bf16's speed over f32's.
    pub fn ratio(&self) -> f64 {
        self.bf16_per_second / self.f32_per_second
    }

    /// The arithmetic `auto` picks for this measurement.
    pub fn choice(&self) -> Precision {
        if self.ratio() >= AUTO_BF16_MIN_RATIO { Precision::Bf16 } else { Precision::F32 }
    }
}

impl InferNet {
    /// This net with the arithmetic `choice` names; for [`PrecisionChoice::Auto`] on a CPU
    /// with AVX-512 BF16, the faster one measured now, and the measurement. bf16 named on a
    /// CPU without it is [`InferError::Bf16Unsupported`].
    pub fn with_choice(
        self,
        choice: PrecisionChoice,
    ) -> Result<(InferNet, Option<Calibration>), InferError> {
        match choice {
            PrecisionChoice::Fixed(precision) => Ok((self.with_precision(precision)?, None)),
            PrecisionChoice::Auto if !bf16_supported() => {
                Ok((self.with_precision(Precision::F32)?, None))
            }
            PrecisionChoice::Auto => {
                let f32_net = self.with_precision(Precision::F32)?;
                let bf16_net = f32_net.clone().with_precision(Precision::Bf16)?;
                let calibration = calibrate(&f32_net, &bf16_net)?;
                let net = match calibration.choice() {
                    Precision::F32 => f32_net,
                    Precision::Bf16 => bf16_net,
                };
                Ok((net, Some(calibration)))
            }
        }
    }
}

/// Times `f32_net` against `bf16_net` (the same weights), alternated.
pub fn calibrate(f32_net: &InferNet, bf16_net: &InferNet) -> Result<Calibration, InferError> {
    let batch = CALIBRATION_BATCH;
    let planes = f32_net.planes();
    // Sparse binary planes, like an encoded position: one square in seven set.
    let input: Vec<f32> = (0..batch * planes * 64)
        .map(|i| if (i * 37 + i / 64) % 7 == 0 { 1.0 } else { 0.0 })
        .collect();
    let mut workspace = Workspace::default();
    let (mut policy, mut wdl) = (vec![0.0; batch * POLICY_SIZE], vec![0.0; batch * 3]);
    let mut call =
        |net: &InferNet| net.forward_into(&input, batch, &mut workspace, &mut policy, &mut wdl);
    // Warm both (buffers grown, caches filled), and size a round from f32's first timed call.
    call(f32_net)?;
    call(bf16_net)?;
    let start = Instant::now();
    call(f32_net)?;
    let one = start.elapsed().as_secs_f64().max(1e-6);
    let calls = ((ROUND_SECONDS / one) as usize).clamp(1, 1000);
    let mut rounds = [Vec::new(), Vec::new()];
    for _ in 0..CALIBRATION_ROUNDS {
        for (arm, net) in [f32_net, bf16_net].into_iter().enumerate() {
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
    let [mut f, mut b] = rounds;
    Ok(Calibration { f32_per_second: median(&mut f), bf16_per_second: median(&mut b) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_picks_bf16_only_at_the_minimum_ratio() {
        let at =
            |ratio: f64| Calibration { f32_per_second: 1000.0, bf16_per_second: 1000.0 * ratio };
        assert_eq!(at(0.8).choice(), Precision::F32);
        assert_eq!(at(1.0).choice(), Precision::F32);
        assert_eq!(at(AUTO_BF16_MIN_RATIO - 0.01).choice(), Precision::F32);
        assert_eq!(at(AUTO_BF16_MIN_RATIO).choice(), Precision::Bf16);
        assert_eq!(at(1.18).choice(), Precision::Bf16);
        assert!((at(0.8).ratio() - 0.8).abs() < 1e-12);
    }
}
