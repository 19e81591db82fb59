//! The small path's f32 Winograd work in AVX2 and FMA intrinsics, for hosts without AVX-512
//! (Zen 2 and 3, Intel client cores): the input and output transforms
//! ([`crate::winograd::input_transform_rows`], [`crate::winograd::output_transform_rows`]) and
//! the 36 products between them ([`crate::gemm::gemm_rm`]). Each performs the portable
//! version's operations in its order, so the floats are the same, bit for bit (tested).
//!
//! Why: on a 2-core Zen 2 EPYC the engine spent 54% of its time in the portable products and
//! 28% in the portable transforms (docs/performance.md). The portable product kernel keeps
//! 4 × 16 sums, 8 accumulators, fewer than the 10 that Zen's two FMA pipes of latency 5 need;
//! [`products_f32`] keeps 6 × 16 (12). The portable transforms check each load's width and
//! spill; these load whole vectors where the channels allow and mask only a tail.
//!
//! Chosen at run time on hosts with AVX2 and FMA ([`supported`]) where the AVX-512 versions
//! ([`crate::wino512`]) are not; elsewhere the portable code runs. The crate denies
//! `unsafe_code`; this module allows it for the intrinsics' raw loads and stores and for
//! calling the `#[target_feature]` kernels, which each public function does only after
//! checking the CPU's features (every access is inside bounds asserted first).

#![allow(unsafe_code)]

use crate::winograd::{Epilogue, TILE_POINTS, xi_stride};

/// Whether this CPU runs these kernels (AVX2 and FMA).
pub fn supported() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// [`crate::winograd::input_transform_rows`], the same floats: `input [nb][64][c]` → `v
/// [36][4 · nb][c]`, the points [`xi_stride`] apart. Panics when the CPU lacks the features
/// ([`supported`]) or `v` is too small.
pub fn input_transform_f32(input: &[f32], c: usize, nb: usize, v: &mut [f32]) {
    let stride = xi_stride(nb, c);
    assert!(
        input.len() >= nb * 64 * c && v.len() >= TILE_POINTS * stride,
        "AVX2 input transform: buffer sizes"
    );
    if nb == 0 || c == 0 {
        return;
    }
    assert!(supported(), "AVX2 input transform on a CPU without AVX2 and FMA");
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the CPU has every feature the kernel enables (checked just above); it reads
    // `input[..nb·64·c]` and writes, for each of the 36 points, `4·nb` rows of `c` floats
    // from `ξ·stride` on, all inside `v` (asserted).
    unsafe {
        x86::input_f32(input, c, nb, v.as_mut_ptr(), stride);
    }
}

/// [`crate::winograd::output_transform_rows`], the same floats: `m [36][4 · nb][c]` f32 sums,
/// the points [`xi_stride`] apart, → `out [nb][64][c]` plus `bias` through `epilogue` (the
/// skip input read from `out`). Panics when the CPU lacks the features or a buffer is too
/// small.
pub fn output_transform_f32(
    m: &[f32],
    c: usize,
    nb: usize,
    bias: &[f32],
    epilogue: Epilogue,
    out: &mut [f32],
) {
    let stride = xi_stride(nb, c);
    assert!(
        m.len() >= TILE_POINTS * stride && out.len() >= nb * 64 * c && bias.len() >= c,
        "AVX2 output transform: buffer sizes"
    );
    if nb == 0 || c == 0 {
        return;
    }
    assert!(supported(), "AVX2 output transform on a CPU without AVX2 and FMA");
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the CPU has every feature the kernel enables (checked just above); it reads
    // `4·nb` rows of `c` floats from each point's `ξ·stride` on, `bias[..c]`, and reads and
    // writes `out[..nb·64·c]`, all asserted to exist.
    unsafe {
        x86::output_f32(m.as_ptr(), c, nb, bias, epilogue, out, stride);
    }
}

/// [`crate::gemm::gemm_rm`], the same floats: `c [m × n] = a [m × k] · b [k × n]`, every
/// operand row-major and read in place, each sum accumulated over `k` in order from zero by
/// fused multiply-adds. Panics when the CPU lacks the features or a buffer is too small.
pub fn products_f32(a: &[f32], m: usize, k: usize, b: &[f32], n: usize, c: &mut [f32]) {
    assert!(
        a.len() >= m * k && b.len() >= k * n && c.len() >= m * n,
        "AVX2 products: buffer sizes"
    );
    if m == 0 || n == 0 {
        return;
    }
    assert!(supported(), "AVX2 products on a CPU without AVX2 and FMA");
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the CPU has every feature the kernel enables (checked just above); it reads
    // `a[..m·k]`, `b[..k·n]` and writes `c[..m·n]`, all asserted to exist.
    unsafe {
        x86::products(a.as_ptr(), m, k, b.as_ptr(), n, c.as_mut_ptr());
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use crate::winograd::{Epilogue, TILES};
    use std::arch::x86_64::*;

    /// The lanes of a chunk of channels: all eight, or the first `count` under a mask.
    #[derive(Clone, Copy)]
    struct Lanes {
        full: bool,
        mask: __m256i,
    }

    impl Lanes {
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        fn new(count: usize) -> Lanes {
            let count = count.min(8) as i32;
            let index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
            Lanes { full: count == 8, mask: _mm256_cmpgt_epi32(_mm256_set1_epi32(count), index) }
        }

        /// The lanes from `src` on (zero past a tail).
        ///
        /// # Safety
        /// The lanes from `src` on are readable.
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn load(self, src: *const f32) -> __m256 {
            // SAFETY: the caller's promise; masked-off lanes are not read.
            unsafe {
                if self.full { _mm256_loadu_ps(src) } else { _mm256_maskload_ps(src, self.mask) }
            }
        }

        /// Stores the lanes of `value` at `dst`.
        ///
        /// # Safety
        /// The lanes from `dst` on are writable.
        #[inline]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn store(self, dst: *mut f32, value: __m256) {
            // SAFETY: the caller's promise; masked-off lanes are not written.
            unsafe {
                if self.full {
                    _mm256_storeu_ps(dst, value)
                } else {
                    _mm256_maskstore_ps(dst, self.mask, value)
                }
            }
        }
    }

    /// See [`super::input_transform_f32`]; `stride` in floats.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn input_f32(input: &[f32], c: usize, nb: usize, v: *mut f32, stride: usize) {
        for b in 0..nb {
            let board = &input[b * 64 * c..(b + 1) * 64 * c];
            for tile in 0..TILES {
                // The tile's 6 × 6 window starts a square off the board: its first or last
                // row and column (by the tile) read as zero.
                let (y0, x0) = (4 * (tile / 2) as isize - 1, 4 * (tile % 2) as isize - 1);
                let row = b * TILES + tile;
                let mut c0 = 0;
                while c0 < c {
                    let lanes = Lanes::new(c - c0);
                    // t = Bᵀ d column by column, then V = t B row by row, as
                    // `crate::winograd`'s transform.
                    let t = [
                        column(board, c, c0, lanes, y0, x0),
                        column(board, c, c0, lanes, y0, x0 + 1),
                        column(board, c, c0, lanes, y0, x0 + 2),
                        column(board, c, c0, lanes, y0, x0 + 3),
                        column(board, c, c0, lanes, y0, x0 + 4),
                        column(board, c, c0, lanes, y0, x0 + 5),
                    ];
                    #[allow(clippy::needless_range_loop)]
                    for i in 0..6 {
                        let out = bt6([t[0][i], t[1][i], t[2][i], t[3][i], t[4][i], t[5][i]]);
                        for (j, value) in out.into_iter().enumerate() {
                            let offset = (i * 6 + j) * stride + row * c + c0;
                            // SAFETY: the lanes are the row's `c0..c` of point `6i + j`,
                            // inside `v` (the caller's promise).
                            unsafe { lanes.store(v.add(offset), value) };
                        }
                    }
                    c0 += 8;
                }
            }
        }
    }

    /// `Bᵀ · d` for six vectors (the operations of `crate::winograd`'s `bt6`, in its order,
    /// so that the results are the same floats).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn bt6(d: [__m256; 6]) -> [__m256; 6] {
        let (f2, f4, f5) = (_mm256_set1_ps(2.0), _mm256_set1_ps(4.0), _mm256_set1_ps(5.0));
        let [d0, d1, d2, d3, d4, d5] = d;
        [
            _mm256_fmadd_ps(f4, d0, _mm256_sub_ps(d4, _mm256_mul_ps(f5, d2))),
            _mm256_sub_ps(_mm256_add_ps(d3, d4), _mm256_mul_ps(f4, _mm256_add_ps(d1, d2))),
            _mm256_fmadd_ps(f4, _mm256_sub_ps(d1, d2), _mm256_sub_ps(d4, d3)),
            _mm256_fmadd_ps(f2, _mm256_sub_ps(d3, d1), _mm256_sub_ps(d4, d2)),
            _mm256_fmadd_ps(f2, _mm256_sub_ps(d1, d3), _mm256_sub_ps(d4, d2)),
            _mm256_fmadd_ps(f4, d1, _mm256_sub_ps(d5, _mm256_mul_ps(f5, d3))),
        ]
    }

    /// Column `x` of a tile's window (rows `y0..y0 + 6`) of the channel-inner `board [64][c]`,
    /// channels `c0..` under `lanes`, `Bᵀ`-transformed; squares off the board read as zero.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn column(
        board: &[f32],
        c: usize,
        c0: usize,
        lanes: Lanes,
        y0: isize,
        x: isize,
    ) -> [__m256; 6] {
        let zero = _mm256_setzero_ps();
        if !(0..8).contains(&x) {
            return [zero; 6];
        }
        let load = |i: isize| {
            let y = y0 + i;
            if !(0..8).contains(&y) {
                return zero;
            }
            let square = &board[(y * 8 + x) as usize * c + c0..];
            debug_assert!(square.len() >= (c - c0).min(8));
            // SAFETY: the lanes are the first `min(c - c0, 8)` of `square`, inside the board.
            unsafe { lanes.load(square.as_ptr()) }
        };
        bt6([load(0), load(1), load(2), load(3), load(4), load(5)])
    }

    /// `Aᵀ · m` for six vectors (the operations of `crate::winograd`'s `at4`, in its order).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn at4(m: [__m256; 6]) -> [__m256; 4] {
        let (f2, f4, f8) = (_mm256_set1_ps(2.0), _mm256_set1_ps(4.0), _mm256_set1_ps(8.0));
        let [m0, m1, m2, m3, m4, m5] = m;
        let (sum12, diff12) = (_mm256_add_ps(m1, m2), _mm256_sub_ps(m1, m2));
        let (sum34, diff34) = (_mm256_add_ps(m3, m4), _mm256_sub_ps(m3, m4));
        [
            _mm256_add_ps(_mm256_add_ps(m0, sum12), sum34),
            _mm256_fmadd_ps(f2, diff34, diff12),
            _mm256_fmadd_ps(f4, sum34, sum12),
            _mm256_add_ps(_mm256_fmadd_ps(f8, diff34, diff12), m5),
        ]
    }

    /// See [`super::output_transform_f32`]; `stride` in floats.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn output_f32(
        m: *const f32,
        c: usize,
        nb: usize,
        bias: &[f32],
        epilogue: Epilogue,
        out: &mut [f32],
        stride: usize,
    ) {
        let zero = _mm256_setzero_ps();
        // Column `j` of a tile's 36 sums (points `6i + j`, from element `at` on),
        // `Aᵀ`-transformed.
        let output_column = |at: usize, lanes: Lanes, j: usize| {
            // SAFETY: the lanes are inside a point's row (the caller's promise).
            let load = |i: usize| unsafe { lanes.load(m.add((i * 6 + j) * stride + at)) };
            at4([load(0), load(1), load(2), load(3), load(4), load(5)])
        };
        for b in 0..nb {
            let board = &mut out[b * 64 * c..(b + 1) * 64 * c];
            for tile in 0..TILES {
                let (row0, col0) = (4 * (tile / 2), 4 * (tile % 2));
                let row = (b * TILES + tile) * c;
                let mut c0 = 0;
                while c0 < c {
                    let lanes = Lanes::new(c - c0);
                    // SAFETY: `bias[c0..c]` holds the lanes.
                    let b_vec = unsafe { lanes.load(bias[c0..].as_ptr()) };
                    let t = [
                        output_column(row + c0, lanes, 0),
                        output_column(row + c0, lanes, 1),
                        output_column(row + c0, lanes, 2),
                        output_column(row + c0, lanes, 3),
                        output_column(row + c0, lanes, 4),
                        output_column(row + c0, lanes, 5),
                    ];
                    #[allow(clippy::needless_range_loop)]
                    for i in 0..4 {
                        let y = at4([t[0][i], t[1][i], t[2][i], t[3][i], t[4][i], t[5][i]]);
                        for (j, value) in y.into_iter().enumerate() {
                            let dst = &mut board[((row0 + i) * 8 + col0 + j) * c + c0..];
                            let value = _mm256_add_ps(value, b_vec);
                            // SAFETY (loads and stores): the lanes are `dst[..c - c0]`, inside
                            // the board.
                            let value = match epilogue {
                                Epilogue::Linear => value,
                                Epilogue::Relu => _mm256_max_ps(value, zero),
                                Epilogue::ResidualRelu => _mm256_max_ps(
                                    _mm256_add_ps(value, unsafe { lanes.load(dst.as_ptr()) }),
                                    zero,
                                ),
                            };
                            unsafe { lanes.store(dst.as_mut_ptr(), value) };
                        }
                    }
                    c0 += 8;
                }
            }
        }
    }

    /// Rows of a block of the product kernel: 6 rows × 2 vectors keep 12 sums in flight,
    /// enough for two FMA pipes of latency 5, with 2 registers for `b` and 1 broadcast.
    const ROWS: usize = 6;

    /// See [`super::products_f32`].
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn products(
        a: *const f32,
        m: usize,
        k: usize,
        b: *const f32,
        n: usize,
        c: *mut f32,
    ) {
        // Column blocks of 16, then 8, then a masked tail; each over all rows, so that the
        // block's `k × 16` weights stay in L1 while the rows pass.
        let mut j = 0;
        while j < n {
            let width = (n - j).min(16);
            let mut r = 0;
            while r < m {
                let rows = (m - r).min(ROWS);
                // SAFETY: rows `r..r + rows` and columns `j..j + width` are inside the
                // operands (the caller's promise).
                unsafe {
                    let (a, c) = (a.add(r * k), c.add(r * n + j));
                    let b = b.add(j);
                    if width == 16 {
                        match rows {
                            6 => block::<6, 2>(a, k, b, n, c, Lanes::new(8)),
                            5 => block::<5, 2>(a, k, b, n, c, Lanes::new(8)),
                            4 => block::<4, 2>(a, k, b, n, c, Lanes::new(8)),
                            3 => block::<3, 2>(a, k, b, n, c, Lanes::new(8)),
                            2 => block::<2, 2>(a, k, b, n, c, Lanes::new(8)),
                            _ => block::<1, 2>(a, k, b, n, c, Lanes::new(8)),
                        }
                    } else {
                        // Up to 8 columns, or 9 to 15 as 8 and a masked rest.
                        let first = width.min(8);
                        let lanes = Lanes::new(first);
                        one_vector(a, k, b, n, c, rows, lanes);
                        if width > 8 {
                            let lanes = Lanes::new(width - 8);
                            one_vector(a, k, b.add(8), n, c.add(8), rows, lanes);
                        }
                    }
                }
                r += rows;
            }
            j += width;
        }
    }

    /// A block of up to [`ROWS`] rows and one vector of columns (the lanes of `lanes`).
    ///
    /// # Safety
    /// As [`block`].
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn one_vector(
        a: *const f32,
        k: usize,
        b: *const f32,
        n: usize,
        c: *mut f32,
        rows: usize,
        lanes: Lanes,
    ) {
        // SAFETY: the caller's promise.
        unsafe {
            match rows {
                6 => block::<6, 1>(a, k, b, n, c, lanes),
                5 => block::<5, 1>(a, k, b, n, c, lanes),
                4 => block::<4, 1>(a, k, b, n, c, lanes),
                3 => block::<3, 1>(a, k, b, n, c, lanes),
                2 => block::<2, 1>(a, k, b, n, c, lanes),
                _ => block::<1, 1>(a, k, b, n, c, lanes),
            }
        }
    }

    /// `c[r][..] = Σ_kk a[r][kk] · b[kk][..]` for `R` rows (`a` rows `k` apart, `c` rows `n`
    /// apart) and `V` vectors of columns (`b` rows `n` apart); the last vector's lanes are
    /// `last` (a tail under a mask when `V` is 1). Each sum starts at zero and takes its
    /// products in `kk` order by fused multiply-adds, as `gemm_rm` does.
    ///
    /// # Safety
    /// `a[r·k + kk]`, `b[kk·n + lane]` and `c[r·n + lane]` are inside the operands for every
    /// `r < R`, `kk < k` and lane of the `V` vectors.
    #[inline(always)]
    unsafe fn block<const R: usize, const V: usize>(
        a: *const f32,
        k: usize,
        b: *const f32,
        n: usize,
        c: *mut f32,
        last: Lanes,
    ) {
        // SAFETY: the caller's promise (and the features of the kernels this is inlined into).
        unsafe {
            let mut acc = [[_mm256_setzero_ps(); V]; R];
            for kk in 0..k {
                let row = b.add(kk * n);
                let mut bv = [_mm256_setzero_ps(); V];
                for (v, slot) in bv.iter_mut().enumerate() {
                    *slot = if v + 1 == V {
                        last.load(row.add(8 * v))
                    } else {
                        _mm256_loadu_ps(row.add(8 * v))
                    };
                }
                for (r, sums) in acc.iter_mut().enumerate() {
                    let x = _mm256_broadcast_ss(&*a.add(r * k + kk));
                    for (sum, &bv) in sums.iter_mut().zip(&bv) {
                        *sum = _mm256_fmadd_ps(x, bv, *sum);
                    }
                }
            }
            for (r, sums) in acc.iter().enumerate() {
                for (v, &sum) in sums.iter().enumerate() {
                    let dst = c.add(r * n + 8 * v);
                    if v + 1 == V { last.store(dst, sum) } else { _mm256_storeu_ps(dst, sum) }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::gemm_rm;
    use crate::gemm::tests::uniform;
    use crate::winograd::{TILES, input_transform_rows, output_transform_rows};

    /// Shapes: the engine's (32 channels, 1 and 4 positions), self-play's parts of 16, odd
    /// channel counts, a channel tail under 8, more than one chunk of 8 with a tail, and the
    /// stem's 24 input planes.
    const SHAPES: [(usize, usize); 7] =
        [(32, 1), (32, 4), (32, 16), (33, 2), (7, 1), (21, 3), (24, 5)];

    /// The input transform gives the portable transform's floats, bit for bit, and writes
    /// nothing past a point's rows.
    #[test]
    fn the_input_transform_equals_the_portable_one() {
        if !supported() {
            eprintln!("skipped: this CPU has no AVX2 and FMA");
            return;
        }
        let mut next = uniform(31);
        for &(c, nb) in &SHAPES {
            let input: Vec<f32> = (0..nb * 64 * c).map(|_| next()).collect();
            let stride = xi_stride(nb, c);
            let mut expected = vec![f32::NAN; TILE_POINTS * stride];
            input_transform_rows(&input, c, nb, &mut expected);
            let mut got = vec![f32::NAN; TILE_POINTS * stride];
            input_transform_f32(&input, c, nb, &mut got);
            let rows = TILES * nb;
            for xi in 0..TILE_POINTS {
                let at = xi * stride;
                assert_eq!(got[at..at + rows * c], expected[at..at + rows * c], "c {c} nb {nb}");
                assert!(
                    got[at + rows * c..at + stride].iter().all(|x| x.is_nan()),
                    "c {c} nb {nb}"
                );
            }
        }
    }

    /// The output transform gives the portable transform's floats for every epilogue.
    #[test]
    fn the_output_transform_equals_the_portable_one() {
        if !supported() {
            eprintln!("skipped: this CPU has no AVX2 and FMA");
            return;
        }
        let mut next = uniform(37);
        for &(c, nb) in &SHAPES {
            let m: Vec<f32> = (0..TILE_POINTS * xi_stride(nb, c)).map(|_| next() * 4.0).collect();
            let bias: Vec<f32> = (0..c).map(|_| next()).collect();
            let skip: Vec<f32> = (0..nb * 64 * c).map(|_| next()).collect();
            for epilogue in [Epilogue::Linear, Epilogue::Relu, Epilogue::ResidualRelu] {
                let (mut expected, mut got) = (skip.clone(), skip.clone());
                output_transform_rows(&m, c, nb, &bias, epilogue, &mut expected);
                output_transform_f32(&m, c, nb, &bias, epilogue, &mut got);
                assert_eq!(got, expected, "c {c} nb {nb} {epilogue:?}");
            }
        }
    }

    /// The products equal `gemm_rm`'s bit for bit at every row count a block can take, full
    /// and partial column vectors, and write nothing past `c`'s `m × n`.
    #[test]
    fn the_products_equal_gemm_rm() {
        if !supported() {
            eprintln!("skipped: this CPU has no AVX2 and FMA");
            return;
        }
        let mut next = uniform(41);
        for &(m, k, n) in &[
            (16, 32, 32),
            (64, 32, 32),
            (4, 24, 32),
            (13, 7, 48),
            (7, 33, 8),
            (5, 9, 3),
            (11, 16, 21),
            (1, 1, 1),
            (23, 5, 41),
        ] {
            let a: Vec<f32> = (0..m * k).map(|_| next()).collect();
            let b: Vec<f32> = (0..k * n).map(|_| next()).collect();
            let mut want = vec![f32::NAN; m * n + 9];
            gemm_rm(&a, m, k, &b, n, &mut want);
            let mut got = vec![f32::NAN; m * n + 9];
            products_f32(&a, m, k, &b, n, &mut got);
            assert_eq!(got[..m * n], want[..m * n], "m {m} k {k} n {n}");
            assert!(got[m * n..].iter().all(|x| x.is_nan()), "wrote past c: m {m} k {k} n {n}");
        }
    }

    /// Buffers too small are refused before anything is touched.
    #[test]
    fn short_buffers_are_refused() {
        let refused =
            |f: &dyn Fn()| std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_err();
        let input = vec![0.0f32; 64 * 32];
        let v = vec![0.0f32; TILE_POINTS * xi_stride(1, 32) - 1];
        assert!(refused(&|| input_transform_f32(&input, 32, 1, &mut v.clone())));
        let bias = vec![0.0f32; 32];
        assert!(refused(&|| output_transform_f32(
            &v,
            32,
            1,
            &bias,
            Epilogue::Relu,
            &mut input.clone()
        )));
        assert!(refused(&|| products_f32(&input, 16, 32, &input[..1023], 32, &mut v.clone())));
    }
}
