//! Matrix products `C = A · B` for the convolutions, with the weights `A` packed once at load
//! and the activations `B` read in place (no packing per call: with the small inner dimensions
//! of a chess net, matrixmultiply spent a quarter of its time packing).
//!
//! The kernel keeps an `MR × 2 vectors` block of `C` in registers and walks the inner dimension:
//! per step one row of the packed `A` block (`MR` broadcasts) and two vectors of `B`. SIMD is
//! `pulp`'s safe runtime dispatch (AVX-512 where the CPU has it, else AVX2+FMA, else scalar).

use pulp::{Arch, Simd, WithSimd};

/// Rows of `C` per register block: 12 × 2 vectors = 24 accumulators, which fits AVX-512's 32
/// registers (measured best of 4, 8, 12, 14 here); AVX2 runs a block as two halves of 6
/// ([`kernel_2`]).
pub const MR: usize = 12;

/// `A` (`m × k`, row-major) packed for the kernel: `[⌈m / MR⌉][k][MR]`, rows past `m` zero.
#[derive(Clone, Debug)]
pub struct PackedA {
    m: usize,
    k: usize,
    data: Vec<f32>,
}

impl PackedA {
    /// Packs the row-major `m × k` matrix `a`.
    pub fn new(a: &[f32], m: usize, k: usize) -> PackedA {
        let mut packed = PackedA::empty();
        packed.repack(a, m, k);
        packed
    }

    /// Packs the row-major `m × k` matrix `a` into this buffer, reusing its allocation.
    pub fn repack(&mut self, a: &[f32], m: usize, k: usize) {
        let blocks = m.div_ceil(MR);
        self.data.clear();
        self.data.resize(blocks * k * MR, 0.0);
        for row in 0..m {
            let (block, r) = (row / MR, row % MR);
            let packed = &mut self.data[block * k * MR..(block + 1) * k * MR];
            for (kk, &value) in a[row * k..(row + 1) * k].iter().enumerate() {
                packed[kk * MR + r] = value;
            }
        }
        self.m = m;
        self.k = k;
    }

    /// An empty matrix (`0 × 0`), to be filled by [`PackedA::repack`].
    pub fn empty() -> PackedA {
        PackedA { m: 0, k: 0, data: Vec::new() }
    }

    /// Rows.
    pub fn rows(&self) -> usize {
        self.m
    }

    /// Columns (the inner dimension).
    pub fn cols(&self) -> usize {
        self.k
    }
}

/// `c [m × n] = a [m × k] · b [k × n]`, row-major `b` and `c` exactly `k · n` and `m · n` long.
///
/// Callers size every buffer from the architecture, so a length mismatch is a bug in this
/// crate, not bad input.
pub fn gemm(a: &PackedA, b: &[f32], n: usize, c: &mut [f32]) {
    gemm_strided(a, b, n, n, c, false);
}

/// `c [m × n] (+)= a · b` where row `kk` of `b` starts at `kk · ldb` (`ldb ≥ n`): a window of a
/// wider matrix. With `accumulate`, the product is added to `c`.
pub fn gemm_strided(a: &PackedA, b: &[f32], ldb: usize, n: usize, c: &mut [f32], accumulate: bool) {
    let b_len = if a.k == 0 { 0 } else { (a.k - 1) * ldb + n };
    assert!(ldb >= n && b.len() >= b_len && c.len() == a.m * n, "gemm: buffer sizes");
    Arch::new().dispatch(Gemm { a, b, rows: Strided(ldb), n, c, accumulate });
}

/// Where row `kk` of `b` starts.
trait RowStart: Copy {
    fn start(self, kk: usize) -> usize;
}

/// Rows `ldb` apart.
#[derive(Clone, Copy)]
struct Strided(usize);

impl RowStart for Strided {
    #[inline(always)]
    fn start(self, kk: usize) -> usize {
        kk * self.0
    }
}

/// [`gemm_strided`] on a given instruction set (tests cover every one the CPU has).
#[cfg(test)]
fn gemm_with<S: Simd>(simd: S, a: &PackedA, b: &[f32], ldb: usize, n: usize, c: &mut [f32]) {
    simd.vectorize(Gemm { a, b, rows: Strided(ldb), n, c, accumulate: false });
}

struct Gemm<'a, R> {
    a: &'a PackedA,
    b: &'a [f32],
    rows: R,
    n: usize,
    c: &'a mut [f32],
    accumulate: bool,
}

impl<R: RowStart> WithSimd for Gemm<'_, R> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let Gemm { a, b, rows: b_rows, n, c, accumulate } = self;
        let lanes = S::F32_LANES;
        let blocks = a.m.div_ceil(MR);
        let mut j = 0;
        // Panels of 2 vectors, then 1 vector, then a partial vector; each panel of `b`
        // (k × width) stays in L1 while every block of `a` passes over it.
        while j < n {
            let width = if j + 2 * lanes <= n {
                2 * lanes
            } else if j + lanes <= n {
                lanes
            } else {
                n - j
            };
            for block in 0..blocks {
                let packed = &a.data[block * a.k * MR..(block + 1) * a.k * MR];
                let row0 = block * MR;
                let rows = MR.min(a.m - row0);
                let at = Block { j, width, row0, rows, n, accumulate };
                if width == 2 * lanes {
                    kernel_2(simd, packed, b, b_rows, a.k, c, at);
                } else {
                    kernel_1(simd, packed, b, b_rows, a.k, c, at);
                }
            }
            j += width;
        }
    }
}

/// Where a register block goes: columns `j..j + width` of rows `row0..row0 + rows`.
#[derive(Clone, Copy)]
struct Block {
    j: usize,
    width: usize,
    row0: usize,
    rows: usize,
    n: usize,
    accumulate: bool,
}

/// `MR × 2` vectors of `c` (`width = 2 · lanes`). With AVX-512's 32 registers the whole block's
/// 24 accumulators stay in registers; with AVX2's 16 (or scalar) they spilled, so there the
/// block runs as two halves of `MR / 2` rows (12 accumulators, `b` loaded once per half).
#[inline(always)]
fn kernel_2<S: Simd, R: RowStart>(
    simd: S,
    packed: &[f32],
    b: &[f32],
    b_rows: R,
    k: usize,
    c: &mut [f32],
    at: Block,
) {
    const HALF: usize = MR / 2;
    // A partial last block (e.g. rows 120..128 of a 128-row product) multiplies only the
    // rows it has, in the smallest register block that holds them.
    if S::F32_LANES >= 16 {
        match at.rows {
            9.. => kernel_2_rows::<S, R, 0, MR>(simd, packed, b, b_rows, k, c, at),
            5..=8 => kernel_2_rows::<S, R, 0, 8>(simd, packed, b, b_rows, k, c, at),
            _ => kernel_2_rows::<S, R, 0, 4>(simd, packed, b, b_rows, k, c, at),
        }
    } else {
        match at.rows {
            5.. => kernel_2_rows::<S, R, 0, HALF>(simd, packed, b, b_rows, k, c, at),
            3..=4 => kernel_2_rows::<S, R, 0, 4>(simd, packed, b, b_rows, k, c, at),
            _ => kernel_2_rows::<S, R, 0, 2>(simd, packed, b, b_rows, k, c, at),
        }
        match at.rows {
            11.. => kernel_2_rows::<S, R, HALF, HALF>(simd, packed, b, b_rows, k, c, at),
            9..=10 => kernel_2_rows::<S, R, HALF, 4>(simd, packed, b, b_rows, k, c, at),
            7..=8 => kernel_2_rows::<S, R, HALF, 2>(simd, packed, b, b_rows, k, c, at),
            _ => {}
        }
    }
}

/// Rows `R0..R0 + RN` of the `MR × 2` vector block of [`kernel_2`] (those below `at.rows`).
#[inline(always)]
fn kernel_2_rows<S: Simd, R: RowStart, const R0: usize, const RN: usize>(
    simd: S,
    packed: &[f32],
    b: &[f32],
    b_rows: R,
    k: usize,
    c: &mut [f32],
    at: Block,
) {
    let lanes = S::F32_LANES;
    let Block { j, row0, rows, n, accumulate, .. } = at;
    let rows = rows.saturating_sub(R0).min(RN);
    let row0 = row0 + R0;
    let zero = simd.splat_f32s(0.0);
    let mut acc = [[zero; 2]; RN];
    if accumulate {
        for (r, row) in acc.iter_mut().enumerate().take(rows) {
            let start = (row0 + r) * n + j;
            let (old, _) = S::as_simd_f32s(&c[start..start + 2 * lanes]);
            *row = [old[0], old[1]];
        }
    }
    for (kk, a_row) in packed.chunks_exact(MR).take(k).enumerate() {
        let a_row = &a_row[R0..R0 + RN];
        let start = b_rows.start(kk) + j;
        let (b_vectors, _) = S::as_simd_f32s(&b[start..start + 2 * lanes]);
        let (b0, b1) = (b_vectors[0], b_vectors[1]);
        for r in 0..RN {
            let a_value = simd.splat_f32s(a_row[r]);
            acc[r][0] = simd.mul_add_f32s(a_value, b0, acc[r][0]);
            acc[r][1] = simd.mul_add_f32s(a_value, b1, acc[r][1]);
        }
    }
    for (r, row) in acc.iter().enumerate().take(rows) {
        let start = (row0 + r) * n + j;
        let (out, _) = S::as_mut_simd_f32s(&mut c[start..start + 2 * lanes]);
        out[0] = row[0];
        out[1] = row[1];
    }
}

/// `MR × 1` (possibly partial) vector of `c` (`width ≤ lanes`).
#[inline(always)]
fn kernel_1<S: Simd, R: RowStart>(
    simd: S,
    packed: &[f32],
    b: &[f32],
    b_rows: R,
    k: usize,
    c: &mut [f32],
    at: Block,
) {
    let Block { j, width, row0, rows, n, accumulate } = at;
    let zero = simd.splat_f32s(0.0);
    let mut acc = [zero; MR];
    if accumulate {
        for (r, row) in acc.iter_mut().enumerate().take(rows) {
            let start = (row0 + r) * n + j;
            *row = simd.partial_load_f32s(&c[start..start + width]);
        }
    }
    if width == S::F32_LANES {
        for (kk, a_row) in packed.chunks_exact(MR).take(k).enumerate() {
            let start = b_rows.start(kk) + j;
            let (b_vector, _) = S::as_simd_f32s(&b[start..start + width]);
            let b0 = b_vector[0];
            for r in 0..MR {
                acc[r] = simd.mul_add_f32s(simd.splat_f32s(a_row[r]), b0, acc[r]);
            }
        }
    } else {
        // A partial vector: pulp loads it through a masked-load stub, slower; only the last
        // columns of odd-sized products get here.
        for (kk, a_row) in packed.chunks_exact(MR).take(k).enumerate() {
            let start = b_rows.start(kk) + j;
            let b0 = simd.partial_load_f32s(&b[start..start + width]);
            for r in 0..MR {
                acc[r] = simd.mul_add_f32s(simd.splat_f32s(a_row[r]), b0, acc[r]);
            }
        }
    }
    for (r, &row) in acc.iter().enumerate().take(rows) {
        let start = (row0 + r) * n + j;
        simd.partial_store_f32s(&mut c[start..start + width], row);
    }
}

/// Rows and columns of `C` per block of [`gemm_abt`]: 4 × 4 dot products, 16 vector
/// accumulators and 8 loads per step of the inner dimension.
const ABT_BLOCK: usize = 4;

/// `c [m × n] = a [m × k] · b [n × k]ᵀ`, both operands row-major (contiguous along the summed
/// dimension `k`): each entry is a dot product of a row of `a` and a row of `b`. This is a
/// weight gradient's shape (the sum runs over positions), so neither operand is transposed or
/// packed.
pub fn gemm_abt(a: &[f32], m: usize, b: &[f32], n: usize, k: usize, c: &mut [f32]) {
    assert!(a.len() >= m * k && b.len() >= n * k && c.len() == m * n, "gemm_abt: buffer sizes");
    if m == 0 || n == 0 {
        return;
    }
    Arch::new().dispatch(Abt { a, m, b, n, k, c });
}

struct Abt<'a> {
    a: &'a [f32],
    m: usize,
    b: &'a [f32],
    n: usize,
    k: usize,
    c: &'a mut [f32],
}

impl WithSimd for Abt<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let Abt { a, m, b, n, k, c } = self;
        // Rows past the end repeat the last row; their results are dropped.
        fn row(matrix: &[f32], rows: usize, k: usize, i: usize) -> &[f32] {
            let i = i.min(rows - 1);
            &matrix[i * k..(i + 1) * k]
        }
        for i0 in (0..m).step_by(ABT_BLOCK) {
            let ra: [&[f32]; ABT_BLOCK] = std::array::from_fn(|r| row(a, m, k, i0 + r));
            let va = ra.map(|r| S::as_simd_f32s(r));
            for j0 in (0..n).step_by(ABT_BLOCK) {
                let rb: [&[f32]; ABT_BLOCK] = std::array::from_fn(|r| row(b, n, k, j0 + r));
                let vb = rb.map(|r| S::as_simd_f32s(r));
                let zero = simd.splat_f32s(0.0);
                let mut acc = [[zero; ABT_BLOCK]; ABT_BLOCK];
                for t in 0..va[0].0.len() {
                    let x: [S::f32s; ABT_BLOCK] = std::array::from_fn(|r| va[r].0[t]);
                    let y: [S::f32s; ABT_BLOCK] = std::array::from_fn(|s| vb[s].0[t]);
                    for r in 0..ABT_BLOCK {
                        for s in 0..ABT_BLOCK {
                            acc[r][s] = simd.mul_add_f32s(x[r], y[s], acc[r][s]);
                        }
                    }
                }
                for r in 0..ABT_BLOCK.min(m - i0) {
                    for s in 0..ABT_BLOCK.min(n - j0) {
                        let tail: f32 = va[r].1.iter().zip(vb[s].1).map(|(&x, &y)| x * y).sum();
                        c[(i0 + r) * n + j0 + s] = simd.reduce_sum_f32s(acc[r][s]) + tail;
                    }
                }
            }
        }
    }
}

/// Rows of `C` per block of [`gemm_rm`] (4 rows × 2 vectors: 8 accumulators, which fits AVX2's
/// 16 registers as well as AVX-512's 32).
const RM_ROWS: usize = 4;

/// `c [m × n] = a [m × k] · b [k × n]` with every operand row-major and read in place: `a`'s
/// entries are broadcast straight from memory (no packing), which suits a left side of a few
/// rows — the Winograd tiles of a small batch against a layer's weights (`b`).
pub fn gemm_rm(a: &[f32], m: usize, k: usize, b: &[f32], n: usize, c: &mut [f32]) {
    assert!(a.len() >= m * k && b.len() >= k * n && c.len() >= m * n, "gemm_rm: buffer sizes");
    if m == 0 || n == 0 {
        return;
    }
    Arch::new().dispatch(RowMajor { a, m, k, b, n, c });
}

struct RowMajor<'a> {
    a: &'a [f32],
    m: usize,
    k: usize,
    b: &'a [f32],
    n: usize,
    c: &'a mut [f32],
}

impl WithSimd for RowMajor<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let RowMajor { a, m, k, b, n, c } = self;
        let lanes = S::F32_LANES;
        let zero = simd.splat_f32s(0.0);
        for r0 in (0..m).step_by(RM_ROWS) {
            let rows = RM_ROWS.min(m - r0);
            // Rows past `m` repeat the last one; their results are not stored.
            let a_rows: [&[f32]; RM_ROWS] = std::array::from_fn(|r| {
                let row = (r0 + r).min(m - 1);
                &a[row * k..(row + 1) * k]
            });
            let mut j = 0;
            while j + 2 * lanes <= n {
                let mut acc = [[zero; 2]; RM_ROWS];
                for kk in 0..k {
                    let (v, _) = S::as_simd_f32s(&b[kk * n + j..kk * n + j + 2 * lanes]);
                    for r in 0..RM_ROWS {
                        let x = simd.splat_f32s(a_rows[r][kk]);
                        acc[r][0] = simd.mul_add_f32s(x, v[0], acc[r][0]);
                        acc[r][1] = simd.mul_add_f32s(x, v[1], acc[r][1]);
                    }
                }
                for (r, row) in acc.iter().enumerate().take(rows) {
                    let at = (r0 + r) * n + j;
                    let (out, _) = S::as_mut_simd_f32s(&mut c[at..at + 2 * lanes]);
                    out[0] = row[0];
                    out[1] = row[1];
                }
                j += 2 * lanes;
            }
            while j < n {
                let width = lanes.min(n - j);
                let mut acc = [zero; RM_ROWS];
                for kk in 0..k {
                    let v = simd.partial_load_f32s(&b[kk * n + j..kk * n + j + width]);
                    for r in 0..RM_ROWS {
                        acc[r] = simd.mul_add_f32s(simd.splat_f32s(a_rows[r][kk]), v, acc[r]);
                    }
                }
                for (r, &row) in acc.iter().enumerate().take(rows) {
                    let at = (r0 + r) * n + j;
                    simd.partial_store_f32s(&mut c[at..at + width], row);
                }
                j += width;
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A seeded generator of values uniform in [−1, 1) (a 64-bit LCG), for the crate's tests.
    pub(crate) fn uniform(seed: u64) -> impl FnMut() -> f32 {
        let mut state = seed;
        move || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        }
    }

    /// Checks a narrow-format product `product(a, m, b, k, n) -> c [m × n]` against a naive
    /// product of the same rounded operands (`round_trip`: f32 → the format → f64) over shapes
    /// with a tail of columns and an odd `k`: `|c − exact| ≤ tolerance(k, exact, Σ|terms|)`.
    pub(crate) fn check_narrow_products(
        mut product: impl FnMut(&[f32], usize, &[f32], usize, usize) -> Vec<f32>,
        round_trip: fn(f32) -> f64,
        tolerance: fn(usize, f64, f64) -> f64,
    ) {
        let mut next = uniform(11);
        for &(m, k, n) in
            &[(4, 32, 32), (1, 32, 32), (7, 24, 32), (16, 33, 73), (5, 3, 9), (12, 96, 96)]
        {
            let a: Vec<f32> = (0..m * k).map(|_| next()).collect();
            let b: Vec<f32> = (0..k * n).map(|_| next()).collect();
            let c = product(&a, m, &b, k, n);
            assert_eq!(c.len(), m * n);
            for i in 0..m {
                for j in 0..n {
                    let terms: Vec<f64> = (0..k)
                        .map(|l| round_trip(a[i * k + l]) * round_trip(b[l * n + j]))
                        .collect();
                    let exact: f64 = terms.iter().sum();
                    let scale: f64 = terms.iter().map(|t| t.abs()).sum();
                    let got = f64::from(c[i * n + j]);
                    assert!(
                        (got - exact).abs() <= tolerance(k, exact, scale),
                        "m {m} k {k} n {n}: c[{i}][{j}] = {got}, expected {exact}"
                    );
                }
            }
        }
    }

    #[test]
    fn gemm_equals_naive_product_for_awkward_sizes() {
        let mut next = uniform(7);
        // Last blocks of every height from 1 to 12 rows (each has its own register block).
        for (m, k, n) in [
            (1, 1, 1),
            (8, 3, 16),
            (13, 29, 7),
            (73, 32, 67),
            (32, 40, 128),
            (9, 5, 33),
            (10, 17, 64),
            (16, 9, 64),
            (23, 5, 96),
            (128, 36, 64),
            (3, 4, 32),
            (18, 6, 48),
            (19, 6, 64),
            (24, 3, 64),
            (14, 3, 32),
            (17, 3, 32),
        ] {
            let a: Vec<f32> = (0..m * k).map(|_| next()).collect();
            let b: Vec<f32> = (0..k * n).map(|_| next()).collect();
            let mut c = vec![f32::NAN; m * n];
            let packed = PackedA::new(&a, m, k);
            gemm(&packed, &b, n, &mut c);
            let expected = |i: usize, j: usize| -> f32 {
                (0..k).map(|kk| a[i * k + kk] * b[kk * n + j]).sum()
            };
            for i in 0..m {
                for j in 0..n {
                    let (got, want) = (c[i * n + j], expected(i, j));
                    assert!((got - want).abs() < 1e-4, "{m}x{k}x{n} at {i},{j}: {got} vs {want}");
                }
            }
            // Every instruction set this CPU has, and the scalar fallback, agree.
            let mut other = vec![f32::NAN; m * n];
            gemm_with(pulp::Scalar::new(), &packed, &b, n, n, &mut other);
            assert!(other.iter().zip(&c).all(|(x, y)| (x - y).abs() < 1e-4));
            #[cfg(target_arch = "x86_64")]
            if let Some(simd) = pulp::x86::V3::try_new() {
                let mut other = vec![f32::NAN; m * n];
                gemm_with(simd, &packed, &b, n, n, &mut other);
                assert!(other.iter().zip(&c).all(|(x, y)| (x - y).abs() < 1e-4));
            }
            // A window of columns 1..n of `b` (row stride n), added to what `c` holds.
            if n > 1 {
                let mut window = vec![1.0f32; m * (n - 1)];
                gemm_strided(&packed, &b[1..], n, n - 1, &mut window, true);
                for i in 0..m {
                    for j in 1..n {
                        let (got, want) = (window[i * (n - 1) + j - 1], 1.0 + expected(i, j));
                        assert!((got - want).abs() < 1e-4, "window {i},{j}: {got} vs {want}");
                    }
                }
            }
        }
    }

    #[test]
    fn gemm_abt_equals_naive_product() {
        let mut state = 11u64;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        };
        for (m, n, k) in [(1, 1, 1), (3, 5, 7), (4, 4, 16), (9, 6, 33), (73, 32, 100), (2, 3, 0)] {
            let a: Vec<f32> = (0..m * k).map(|_| next()).collect();
            let b: Vec<f32> = (0..n * k).map(|_| next()).collect();
            let mut c = vec![f32::NAN; m * n];
            gemm_abt(&a, m, &b, n, k, &mut c);
            for i in 0..m {
                for j in 0..n {
                    let want: f32 = (0..k).map(|t| a[i * k + t] * b[j * k + t]).sum();
                    let got = c[i * n + j];
                    assert!((got - want).abs() < 1e-4, "{m}x{n}x{k} at {i},{j}: {got} vs {want}");
                }
            }
        }
    }

    #[test]
    fn gemm_rm_equals_naive_product() {
        let mut state = 13u64;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        };
        for (m, k, n) in [(1, 1, 1), (4, 32, 32), (5, 24, 73), (16, 32, 64), (3, 7, 9), (9, 512, 3)]
        {
            let a: Vec<f32> = (0..m * k).map(|_| next()).collect();
            let b: Vec<f32> = (0..k * n).map(|_| next()).collect();
            let mut c = vec![f32::NAN; m * n];
            gemm_rm(&a, m, k, &b, n, &mut c);
            for i in 0..m {
                for j in 0..n {
                    let want: f32 = (0..k).map(|t| a[i * k + t] * b[t * n + j]).sum();
                    let got = c[i * n + j];
                    assert!((got - want).abs() < 1e-3, "{m}x{k}x{n} at {i},{j}: {got} vs {want}");
                }
            }
        }
    }
}
