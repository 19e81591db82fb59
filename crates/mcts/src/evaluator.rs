//! The narrow interface between search and network (lc0's backend interface in spirit): a
//! batch of positions in, priors over each position's legal moves and WDL probabilities out.
//! [`UniformEvaluator`] and [`RandomEvaluator`] serve tests and generation 0.

use atomzero_rules::{Move, Position};

/// One position to evaluate.
#[derive(Clone, Copy, Debug)]
pub struct EvalRequest<'a> {
    /// The position.
    pub position: &'a Position,
    /// Earlier positions of the game, most recent first (for history planes).
    pub history: &'a [Position],
    /// How often `position` occurred before in the game.
    pub repetitions: usize,
    /// The legal moves; priors come back in this order.
    pub moves: &'a [Move],
}

/// The network's view of a position.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// Prior probability of each requested move (sums to 1 over the legal moves).
    pub priors: Vec<f32>,
    /// Win, draw, loss probabilities for the side to move (sum to 1).
    pub wdl: [f32; 3],
}

impl Evaluation {
    /// Expected score for the side to move in [-1, 1]: win − loss.
    #[inline]
    pub fn value(&self) -> f32 {
        self.wdl[0] - self.wdl[2]
    }
}

/// Evaluates batches of positions. Implementations must return one [`Evaluation`] per
/// request, in order, with `priors.len() == moves.len()`.
pub trait Evaluator {
    /// Evaluates a batch.
    fn evaluate(&self, requests: &[EvalRequest<'_>]) -> Vec<Evaluation>;

    /// A short description for logs (e.g. the model path).
    fn name(&self) -> String {
        "evaluator".to_string()
    }
}

impl<E: Evaluator + ?Sized> Evaluator for &E {
    fn evaluate(&self, requests: &[EvalRequest<'_>]) -> Vec<Evaluation> {
        (**self).evaluate(requests)
    }
    fn name(&self) -> String {
        (**self).name()
    }
}

/// Equal priors and an even WDL (value 0): search driven by the rules alone.
#[derive(Clone, Copy, Debug, Default)]
pub struct UniformEvaluator;

impl Evaluator for UniformEvaluator {
    fn evaluate(&self, requests: &[EvalRequest<'_>]) -> Vec<Evaluation> {
        requests
            .iter()
            .map(|r| Evaluation {
                priors: vec![1.0 / r.moves.len().max(1) as f32; r.moves.len()],
                wdl: [1.0 / 3.0; 3],
            })
            .collect()
    }
    fn name(&self) -> String {
        "uniform".to_string()
    }
}

/// Pseudo-random priors and WDL, a pure function of (seed, position, move): reproducible and
/// thread-safe without shared state.
#[derive(Clone, Copy, Debug, Default)]
pub struct RandomEvaluator {
    /// Varies the random values.
    pub seed: u64,
}

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn unit(z: u64) -> f32 {
    ((z >> 40) as f32 + 0.5) / (1u64 << 24) as f32
}

impl Evaluator for RandomEvaluator {
    fn evaluate(&self, requests: &[EvalRequest<'_>]) -> Vec<Evaluation> {
        requests
            .iter()
            .map(|r| {
                let base = mix(self.seed ^ r.position.hash());
                let raw: Vec<f32> =
                    r.moves.iter().map(|m| unit(mix(base ^ u64::from(m.to_u16())))).collect();
                let sum: f32 = raw.iter().sum::<f32>().max(f32::MIN_POSITIVE);
                let (w, d) = (unit(mix(base ^ 1)), unit(mix(base ^ 2)));
                let total = w + d + unit(mix(base ^ 3));
                Evaluation {
                    priors: raw.iter().map(|p| p / sum).collect(),
                    wdl: [w / total, d / total, 1.0 - (w + d) / total],
                }
            })
            .collect()
    }
    fn name(&self) -> String {
        format!("random(seed={})", self.seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use atomzero_rules::Variant;

    #[test]
    fn evaluators_return_distributions() {
        let pos = Position::new(Variant::Atomic);
        let moves = pos.legal_moves();
        let req = EvalRequest { position: &pos, history: &[], repetitions: 0, moves: &moves };
        for e in [&UniformEvaluator as &dyn Evaluator, &RandomEvaluator { seed: 7 }] {
            let out = e.evaluate(&[req, req]);
            assert_eq!(out.len(), 2);
            assert_eq!(out[0], out[1], "deterministic");
            assert_eq!(out[0].priors.len(), 20);
            assert!((out[0].priors.iter().sum::<f32>() - 1.0).abs() < 1e-5);
            assert!((out[0].wdl.iter().sum::<f32>() - 1.0).abs() < 1e-5);
            assert!(out[0].wdl.iter().all(|&p| p >= 0.0));
        }
        let other = RandomEvaluator { seed: 8 }.evaluate(&[req]);
        assert_ne!(other[0], RandomEvaluator { seed: 7 }.evaluate(&[req])[0]);
    }
}
