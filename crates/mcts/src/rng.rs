//! A small seeded generator (splitmix64) with the samplers the search needs (uniform,
//! gamma for Dirichlet noise). Reproducible: the same seed gives the same search.

/// splitmix64.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x6A09_E667_F3BC_C908)
    }

    /// The generator's state, to save (e.g. in a trainer checkpoint) and restore with
    /// [`Rng::from_state`].
    pub fn state(&self) -> u64 {
        self.0
    }

    /// A generator continuing from a saved [`Rng::state`].
    pub fn from_state(state: u64) -> Rng {
        Rng(state)
    }

    /// 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform integer in 0..n (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.uniform() * n as f64) as usize % n.max(1)
    }

    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let u1 = self.uniform().max(1e-300);
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// Standard Gumbel: `-ln(-ln(u))` for `u` uniform in (0, 1).
    pub fn gumbel(&mut self) -> f64 {
        let u = self.uniform().max(1e-300);
        -(-u.ln()).max(1e-300).ln()
    }

    /// Gamma(shape, 1) by Marsaglia–Tsang (boosted for shape < 1).
    pub fn gamma(&mut self, shape: f64) -> f64 {
        if shape < 1.0 {
            let u = self.uniform().max(1e-300);
            return self.gamma(shape + 1.0) * u.powf(1.0 / shape);
        }
        let d = shape - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        loop {
            let x = self.normal();
            let v = (1.0 + c * x).powi(3);
            if v <= 0.0 {
                continue;
            }
            let u = self.uniform();
            if u < 1.0 - 0.0331 * x.powi(4) || u.ln() < 0.5 * x * x + d * (1.0 - v + v.ln()) {
                return d * v;
            }
        }
    }

    /// A Dirichlet(alpha, ..., alpha) sample of dimension `n`.
    pub fn dirichlet(&mut self, alpha: f64, n: usize) -> Vec<f32> {
        let samples: Vec<f64> = (0..n).map(|_| self.gamma(alpha)).collect();
        let sum: f64 = samples.iter().sum::<f64>().max(1e-300);
        samples.iter().map(|s| (s / sum) as f32).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gamma_and_dirichlet_have_the_right_means() {
        let mut rng = Rng::new(1);
        for shape in [0.3, 1.0, 2.5] {
            let n = 20_000;
            let mean = (0..n).map(|_| rng.gamma(shape)).sum::<f64>() / n as f64;
            assert!((mean - shape).abs() < 0.05 * shape.max(1.0), "shape {shape}: mean {mean}");
        }
        let d = rng.dirichlet(0.3, 30);
        assert!((d.iter().sum::<f32>() - 1.0).abs() < 1e-4);
        assert!(d.iter().all(|&p| p >= 0.0));
    }
}
