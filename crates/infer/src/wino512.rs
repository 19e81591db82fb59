//! The small path's Winograd transforms ([`crate::winograd::input_transform_rows`] and
//! [`crate::winograd::output_transform_rows`]) in AVX-512 intrinsics, writing and reading the
//! format the products between them use: f32 rows for the f32 products, bf16 or f16 pairs for
//! the narrow products ([`crate::bf16`], [`crate::f16`]), f32 or f16 sums. Each performs the
//! portable transform's operations in its order, so the floats are the same (tested), rounded
//! once at the store where the products take a narrow format.
//!
//! Why: at the engine's four positions a call the portable (`pulp`) input transform's
//! `[36][16][32]` f32 output (76 KiB) no longer fits L1 and it ran 2.5 times slower a position
//! than at one, the narrow products then read it back to round it, and the output transform
//! read back the products' f32 sums (docs/experiments.md, Changes 16 and 17). These versions
//! have no per-load bounds branch or zero-filled intermediate, write half the bytes under a
//! narrow format, and take no separate rounding pass.
//!
//! Chosen at run time on hosts with AVX-512 F, BW and VL ([`supported`]; BF16 too for the bf16
//! format); elsewhere the portable transforms run. The crate denies `unsafe_code`; this module
//! allows it for the intrinsics' raw loads and stores and for calling the `#[target_feature]`
//! kernels, which each public function does only after checking the CPU's features (every
//! access is inside bounds asserted first).

#![allow(unsafe_code)]

use crate::winograd::{Epilogue, TILE_POINTS, TILES, xi_stride};

/// Whether this CPU runs the f32 and f16 transforms (AVX-512 F, BW and VL).
pub fn supported() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vl")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The narrow formats the input transform can round its points into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Narrow {
    /// bfloat16 (needs AVX-512 BF16 as well: [`crate::bf16::bf16_supported`]).
    Bf16,
    /// IEEE binary16 (AVX-512 F's `vcvtps2ph`).
    F16,
}

/// Words from one Winograd point to the next in [`input_transform_pairs`]' output for `rows`
/// rows of `k` channels: the point's `rows · ⌈k/2⌉` words plus one cache line (as
/// [`crate::winograd::xi_stride`], so that the 36 points do not share a few L1 sets).
pub fn pairs_stride(rows: usize, k: usize) -> usize {
    rows * k.div_ceil(2) + 16
}

/// Halves from one Winograd point to the next in [`output_transform_f16`]'s input for `rows`
/// rows of `c` channels: the point's `rows · c` halves plus one cache line.
pub fn sums_stride(rows: usize, c: usize) -> usize {
    rows * c + 32
}

/// The checks every entry below makes before its kernel: its buffers hold what the kernel
/// reads and writes (`sizes`), else a panic; `false` when there is nothing to transform (`nb`
/// or `c` zero); else the CPU's `features`, else a panic.
fn ready(what: &str, sizes: bool, nb: usize, c: usize, features: bool) -> bool {
    assert!(sizes, "AVX-512 {what} transform: buffer sizes");
    if nb == 0 || c == 0 {
        return false;
    }
    assert!(features, "AVX-512 {what} transform on a CPU without its features");
    true
}

/// [`crate::winograd::input_transform_rows`], the same floats: `input [nb][64][c]` → `v
/// [36][4 · nb][c]`, the points [`xi_stride`] apart. Panics when the CPU lacks the features
/// ([`supported`]) or `v` is too small.
pub fn input_transform_f32(input: &[f32], c: usize, nb: usize, v: &mut [f32]) {
    let stride = xi_stride(nb, c);
    let sizes = input.len() >= nb * 64 * c && v.len() >= TILE_POINTS * stride;
    if !ready("f32 input", sizes, nb, c, supported()) {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the CPU has every feature the kernel enables (checked just above); it reads
    // `input[..nb·64·c]` and writes, for each of the 36 points, `4·nb` rows of `c` floats
    // from `ξ·stride` on, all inside `v` (asserted).
    unsafe {
        x86::input_f32(input, c, nb, v.as_mut_ptr(), stride);
    }
}

/// [`crate::winograd::input_transform_rows`] written straight into `narrow` pairs for the
/// narrow products: `input [nb][64][c]` → `pairs [36][4 · nb][⌈c/2⌉]` words (a row's channels
/// `2p` and `2p + 1` in word `p`'s low and high halves, a zero high half past an odd `c`), the
/// points [`pairs_stride`] apart, each value the f32 transform's rounded to nearest even by the
/// hardware's conversion. Panics when the CPU lacks the features or `pairs` is too small.
pub fn input_transform_pairs(
    input: &[f32],
    c: usize,
    nb: usize,
    narrow: Narrow,
    pairs: &mut [u32],
) {
    let stride = pairs_stride(TILES * nb, c);
    let sizes = input.len() >= nb * 64 * c && pairs.len() >= TILE_POINTS * stride;
    let (what, features) = match narrow {
        Narrow::Bf16 => ("bf16 input", crate::bf16::bf16_supported()),
        Narrow::F16 => ("f16 input", supported()),
    };
    if !ready(what, sizes, nb, c, features) {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the CPU has every feature the kernel enables (checked just above); it reads
    // `input[..nb·64·c]` and writes, for each of the 36 points, `4·nb` rows of `2·⌈c/2⌉`
    // halves from `2·ξ·stride` on, all inside `pairs` (asserted).
    unsafe {
        let halves = pairs.as_mut_ptr().cast::<u16>();
        match narrow {
            Narrow::Bf16 => x86::input_bf16(input, c, nb, halves, 2 * stride),
            Narrow::F16 => x86::input_f16(input, c, nb, halves, 2 * stride),
        }
    }
}

/// [`crate::winograd::output_transform_rows`], the same floats: `m [36][4 · nb][c]` f32 sums,
/// the points [`xi_stride`] apart, → `out [nb][64][c]` plus `bias` through `epilogue`. Panics
/// when the CPU lacks the features ([`supported`]) or a buffer is too small.
pub fn output_transform_f32(
    m: &[f32],
    c: usize,
    nb: usize,
    bias: &[f32],
    epilogue: Epilogue,
    out: &mut [f32],
) {
    let stride = xi_stride(nb, c);
    let sizes = m.len() >= TILE_POINTS * stride && out.len() >= nb * 64 * c && bias.len() >= c;
    if !ready("f32 output", sizes, nb, c, supported()) {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the CPU has every feature the kernel enables (checked just above); it reads
    // `4·nb` rows of `c` floats from each point's `ξ·stride` on, `bias[..c]`, and reads and
    // writes `out[..nb·64·c]`, all asserted to exist.
    unsafe {
        x86::output_f32(m.as_ptr(), c, nb, bias, epilogue, out, stride);
    }
}

/// [`output_transform_f32`] of sums kept in f16 (`m [36][4 · nb][c]` halves, the points
/// [`sums_stride`] apart), each widened as it is loaded: the floats
/// [`crate::winograd::output_transform_rows`] gives on the widened sums. Panics as
/// [`output_transform_f32`] does.
pub fn output_transform_f16(
    m: &[u16],
    c: usize,
    nb: usize,
    bias: &[f32],
    epilogue: Epilogue,
    out: &mut [f32],
) {
    let stride = sums_stride(TILES * nb, c);
    let sizes = m.len() >= TILE_POINTS * stride && out.len() >= nb * 64 * c && bias.len() >= c;
    if !ready("f16 output", sizes, nb, c, supported()) {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: as in `output_transform_f32`, the points `stride` halves apart.
    unsafe {
        x86::output_f16(m.as_ptr(), c, nb, bias, epilogue, out, stride);
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use crate::winograd::{Epilogue, TILES};
    use std::arch::x86_64::*;

    /// How the input transform stores a point's 16 channels.
    trait Store {
        type Elem;
        /// Elements a row of `c` channels takes.
        fn row_len(c: usize) -> usize;
        /// Stores the lanes under `mask` of `value` at `dst`.
        ///
        /// # Safety
        /// The masked elements from `dst` on are writable; the CPU has the format's features.
        unsafe fn store(dst: *mut Self::Elem, mask: u16, value: __m512);
    }

    struct F32;
    struct F16;
    struct Bf16;

    impl Store for F32 {
        type Elem = f32;
        #[inline(always)]
        fn row_len(c: usize) -> usize {
            c
        }
        #[inline(always)]
        unsafe fn store(dst: *mut f32, mask: u16, value: __m512) {
            // SAFETY: the caller's promise.
            unsafe { _mm512_mask_storeu_ps(dst, mask, value) }
        }
    }

    impl Store for F16 {
        type Elem = u16;
        #[inline(always)]
        fn row_len(c: usize) -> usize {
            2 * c.div_ceil(2)
        }
        #[inline(always)]
        unsafe fn store(dst: *mut u16, mask: u16, value: __m512) {
            // SAFETY: the caller's promise.
            unsafe {
                let h = _mm512_cvtps_ph::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(value);
                _mm256_mask_storeu_epi16(dst.cast(), mask, h)
            }
        }
    }

    impl Store for Bf16 {
        type Elem = u16;
        #[inline(always)]
        fn row_len(c: usize) -> usize {
            2 * c.div_ceil(2)
        }
        #[inline(always)]
        unsafe fn store(dst: *mut u16, mask: u16, value: __m512) {
            // SAFETY: the caller's promise.
            unsafe {
                let h: __m256i = std::mem::transmute(_mm512_cvtneps_pbh(value));
                _mm256_mask_storeu_epi16(dst.cast(), mask, h)
            }
        }
    }

    /// See [`super::input_transform_f32`]; `stride` in floats.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    pub(super) unsafe fn input_f32(input: &[f32], c: usize, nb: usize, v: *mut f32, stride: usize) {
        // SAFETY: the caller's promise; the features are this function's.
        unsafe { transform_in::<F32>(input, c, nb, v, stride) }
    }

    /// See [`super::input_transform_pairs`]; `stride` in halves.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    pub(super) unsafe fn input_f16(input: &[f32], c: usize, nb: usize, v: *mut u16, stride: usize) {
        // SAFETY: as `input_f32`.
        unsafe { transform_in::<F16>(input, c, nb, v, stride) }
    }

    /// See [`super::input_transform_pairs`]; `stride` in halves.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512bf16")]
    pub(super) unsafe fn input_bf16(
        input: &[f32],
        c: usize,
        nb: usize,
        v: *mut u16,
        stride: usize,
    ) {
        // SAFETY: as `input_f32`.
        unsafe { transform_in::<Bf16>(input, c, nb, v, stride) }
    }

    /// The input transform, each point's row stored by `S` from element `ξ·stride + row ·
    /// S::row_len(c)` of `v` on. Inlined into each entry above, whose features it runs with.
    #[inline(always)]
    unsafe fn transform_in<S: Store>(
        input: &[f32],
        c: usize,
        nb: usize,
        v: *mut S::Elem,
        stride: usize,
    ) {
        let row_len = S::row_len(c);
        for b in 0..nb {
            let board = &input[b * 64 * c..(b + 1) * 64 * c];
            for tile in 0..TILES {
                // The tile's 6 × 6 window starts a square off the board: its first or last
                // row and column (by the tile) read as zero.
                let (y0, x0) = (4 * (tile / 2) as isize - 1, 4 * (tile % 2) as isize - 1);
                let row = b * TILES + tile;
                let mut c0 = 0;
                while c0 < c {
                    // Lanes past `c` load as zero and transform to zero: stored as the zero
                    // high half of an odd `c`'s last pair under a narrow format.
                    let mask = lanes16(c - c0);
                    let store_mask = lanes16(row_len - c0);
                    // SAFETY: `column` and `bt6` need AVX-512 F, which every entry enables.
                    unsafe {
                        // t = Bᵀ d column by column (an array literal: no zero fill), then
                        // V = t B row by row, as `crate::winograd`'s transform.
                        let t = [
                            column(board, c, c0, mask, y0, x0),
                            column(board, c, c0, mask, y0, x0 + 1),
                            column(board, c, c0, mask, y0, x0 + 2),
                            column(board, c, c0, mask, y0, x0 + 3),
                            column(board, c, c0, mask, y0, x0 + 4),
                            column(board, c, c0, mask, y0, x0 + 5),
                        ];
                        #[allow(clippy::needless_range_loop)]
                        for i in 0..6 {
                            let out = bt6([t[0][i], t[1][i], t[2][i], t[3][i], t[4][i], t[5][i]]);
                            for (j, value) in out.into_iter().enumerate() {
                                let offset = (i * 6 + j) * stride + row * row_len + c0;
                                // The masked elements are the row's `c0..row_len` of point
                                // `6i + j`, inside `v` (the caller's promise).
                                S::store(v.add(offset), store_mask, value);
                            }
                        }
                    }
                    c0 += 16;
                }
            }
        }
    }

    /// `Bᵀ · d` for six vectors (the operations of `crate::winograd`'s `bt6`, in its order,
    /// so that the results are the same floats).
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn bt6(d: [__m512; 6]) -> [__m512; 6] {
        let (f2, f4, f5) = (_mm512_set1_ps(2.0), _mm512_set1_ps(4.0), _mm512_set1_ps(5.0));
        let [d0, d1, d2, d3, d4, d5] = d;
        [
            _mm512_fmadd_ps(f4, d0, _mm512_sub_ps(d4, _mm512_mul_ps(f5, d2))),
            _mm512_sub_ps(_mm512_add_ps(d3, d4), _mm512_mul_ps(f4, _mm512_add_ps(d1, d2))),
            _mm512_fmadd_ps(f4, _mm512_sub_ps(d1, d2), _mm512_sub_ps(d4, d3)),
            _mm512_fmadd_ps(f2, _mm512_sub_ps(d3, d1), _mm512_sub_ps(d4, d2)),
            _mm512_fmadd_ps(f2, _mm512_sub_ps(d1, d3), _mm512_sub_ps(d4, d2)),
            _mm512_fmadd_ps(f4, d1, _mm512_sub_ps(d5, _mm512_mul_ps(f5, d3))),
        ]
    }

    /// Column `x` of a tile's window (rows `y0..y0 + 6`) of the channel-inner `board [64][c]`,
    /// channels `c0..` under `mask`, `Bᵀ`-transformed; squares off the board read as zero.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn column(board: &[f32], c: usize, c0: usize, mask: u16, y0: isize, x: isize) -> [__m512; 6] {
        let zero = _mm512_setzero_ps();
        if !(0..8).contains(&x) {
            return [zero; 6];
        }
        let load = |i: isize| {
            let y = y0 + i;
            if !(0..8).contains(&y) {
                return zero;
            }
            let square = &board[(y * 8 + x) as usize * c + c0..];
            debug_assert!(square.len() >= (c - c0).min(16));
            // SAFETY: the masked lanes are the first `min(c - c0, 16)` of `square`, inside
            // the board (the caller's `mask`).
            unsafe { _mm512_maskz_loadu_ps(mask, square.as_ptr()) }
        };
        bt6([load(0), load(1), load(2), load(3), load(4), load(5)])
    }

    /// `Aᵀ · m` for six vectors (the operations of `crate::winograd`'s `at4`, in its order).
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn at4(m: [__m512; 6]) -> [__m512; 4] {
        let (f2, f4, f8) = (_mm512_set1_ps(2.0), _mm512_set1_ps(4.0), _mm512_set1_ps(8.0));
        let [m0, m1, m2, m3, m4, m5] = m;
        let (sum12, diff12) = (_mm512_add_ps(m1, m2), _mm512_sub_ps(m1, m2));
        let (sum34, diff34) = (_mm512_add_ps(m3, m4), _mm512_sub_ps(m3, m4));
        [
            _mm512_add_ps(_mm512_add_ps(m0, sum12), sum34),
            _mm512_fmadd_ps(f2, diff34, diff12),
            _mm512_fmadd_ps(f4, sum34, sum12),
            _mm512_add_ps(_mm512_fmadd_ps(f8, diff34, diff12), m5),
        ]
    }

    /// How the output transform loads 16 channels of a point's sums.
    trait Load {
        /// The lanes under `mask` from `src` on, as f32 (zero elsewhere).
        ///
        /// # Safety
        /// The masked elements from `src` on are readable; the CPU has AVX-512 F, BW, VL.
        unsafe fn load(src: *const Self, mask: u16) -> __m512;
    }

    impl Load for f32 {
        #[inline(always)]
        unsafe fn load(src: *const f32, mask: u16) -> __m512 {
            // SAFETY: the caller's promise.
            unsafe { _mm512_maskz_loadu_ps(mask, src) }
        }
    }

    impl Load for u16 {
        #[inline(always)]
        unsafe fn load(src: *const u16, mask: u16) -> __m512 {
            // SAFETY: the caller's promise.
            unsafe { _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mask, src.cast())) }
        }
    }

    /// See [`super::output_transform_f32`]; `stride` in floats.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    pub(super) unsafe fn output_f32(
        m: *const f32,
        c: usize,
        nb: usize,
        bias: &[f32],
        epilogue: Epilogue,
        out: &mut [f32],
        stride: usize,
    ) {
        // SAFETY: the caller's promise; the features are this function's.
        unsafe { transform_out(m, c, nb, bias, epilogue, out, stride) }
    }

    /// See [`super::output_transform_f16`]; `stride` in halves.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    pub(super) unsafe fn output_f16(
        m: *const u16,
        c: usize,
        nb: usize,
        bias: &[f32],
        epilogue: Epilogue,
        out: &mut [f32],
        stride: usize,
    ) {
        // SAFETY: as `output_f32`.
        unsafe { transform_out(m, c, nb, bias, epilogue, out, stride) }
    }

    /// The output transform of sums loaded by `T` (point `ξ`'s row at element `ξ·stride + row
    /// · c`). Inlined into each entry above, whose features it runs with.
    #[inline(always)]
    unsafe fn transform_out<T: Load>(
        m: *const T,
        c: usize,
        nb: usize,
        bias: &[f32],
        epilogue: Epilogue,
        out: &mut [f32],
        stride: usize,
    ) {
        // SAFETY (every block below): intrinsics of AVX-512 F, which the entries enable; the
        // masked loads are inside a point's row (the caller's promise) or `bias[c0..c]`, the
        // masked stores and skip loads `dst[..c - c0]`, inside the board.
        unsafe {
            let zero = _mm512_setzero_ps();
            // Column `j` of a tile's 36 sums (points `6i + j`, from element `at` on), widened
            // and `Aᵀ`-transformed.
            let output_column = |at: usize, mask: u16, j: usize| {
                let load = |i: usize| T::load(m.add((i * 6 + j) * stride + at), mask);
                at4([load(0), load(1), load(2), load(3), load(4), load(5)])
            };
            for b in 0..nb {
                let board = &mut out[b * 64 * c..(b + 1) * 64 * c];
                for tile in 0..TILES {
                    let (row0, col0) = (4 * (tile / 2), 4 * (tile % 2));
                    let row = (b * TILES + tile) * c;
                    let mut c0 = 0;
                    while c0 < c {
                        let mask = lanes16(c - c0);
                        let b_vec = _mm512_maskz_loadu_ps(mask, bias[c0..].as_ptr());
                        let t = [
                            output_column(row + c0, mask, 0),
                            output_column(row + c0, mask, 1),
                            output_column(row + c0, mask, 2),
                            output_column(row + c0, mask, 3),
                            output_column(row + c0, mask, 4),
                            output_column(row + c0, mask, 5),
                        ];
                        #[allow(clippy::needless_range_loop)]
                        for i in 0..4 {
                            let y = at4([t[0][i], t[1][i], t[2][i], t[3][i], t[4][i], t[5][i]]);
                            for (j, value) in y.into_iter().enumerate() {
                                let dst = &mut board[((row0 + i) * 8 + col0 + j) * c + c0..];
                                let value = _mm512_add_ps(value, b_vec);
                                let value = match epilogue {
                                    Epilogue::Linear => value,
                                    Epilogue::Relu => _mm512_max_ps(value, zero),
                                    Epilogue::ResidualRelu => _mm512_max_ps(
                                        _mm512_add_ps(
                                            value,
                                            _mm512_maskz_loadu_ps(mask, dst.as_ptr()),
                                        ),
                                        zero,
                                    ),
                                };
                                _mm512_mask_storeu_ps(dst.as_mut_ptr(), mask, value);
                            }
                        }
                        c0 += 16;
                    }
                }
            }
        }
    }

    /// A mask of the lowest `count` (any; at most 16 set) lanes.
    #[inline(always)]
    fn lanes16(count: usize) -> u16 {
        if count >= 16 { u16::MAX } else { (1u16 << count) - 1 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bf16::{PackedBf16, PairScratch};
    use crate::f16::PackedF16;
    use crate::gemm::tests::uniform;
    use crate::winograd::{input_transform_rows, output_transform_rows};

    /// Shapes: the engine's (32 channels, 1 and 4 positions), odd channel counts (a padded
    /// pair), a channel tail under 16, and more than one chunk of 16 with a tail.
    const SHAPES: [(usize, usize); 6] = [(32, 1), (32, 4), (24, 3), (33, 2), (7, 1), (48, 8)];

    /// The f32 input transform gives the portable transform's floats, bit for bit; and each
    /// narrow one writes what rounding them gives, an odd channel count's padding half zero,
    /// whose products equal the narrow products of the portable transform's output.
    #[test]
    fn the_input_transforms_equal_the_portable_one_rounded_as_their_format_says() {
        if !supported() {
            eprintln!("skipped: this CPU has no AVX-512 F, BW and VL");
            return;
        }
        let mut next = uniform(23);
        for &(c, nb) in &SHAPES {
            let input: Vec<f32> = (0..nb * 64 * c).map(|_| next()).collect();
            let v_stride = xi_stride(nb, c);
            let mut expected = vec![0.0f32; TILE_POINTS * v_stride];
            input_transform_rows(&input, c, nb, &mut expected);
            let mut got = vec![f32::NAN; TILE_POINTS * v_stride];
            input_transform_f32(&input, c, nb, &mut got);
            let rows = TILES * nb;
            for xi in 0..TILE_POINTS {
                let at = xi * v_stride;
                assert_eq!(got[at..at + rows * c], expected[at..at + rows * c], "c {c} nb {nb}");
            }

            type Rounding = fn(f32) -> u16;
            let formats: [(Narrow, bool, Rounding); 2] = [
                (Narrow::F16, crate::f16::f16_supported(), crate::f16::round),
                (Narrow::Bf16, crate::bf16::bf16_supported(), crate::bf16::round),
            ];
            for (narrow, products_here, round) in formats {
                if narrow == Narrow::Bf16 && !crate::bf16::bf16_supported() {
                    eprintln!("bf16 skipped: this CPU has no AVX-512 BF16");
                    continue;
                }
                let (kp, stride) = (c.div_ceil(2), pairs_stride(rows, c));
                let mut pairs = vec![0xDEAD_BEEFu32; TILE_POINTS * stride];
                input_transform_pairs(&input, c, nb, narrow, &mut pairs);
                for xi in 0..TILE_POINTS {
                    for r in 0..rows {
                        for i in 0..2 * kp {
                            let word = pairs[xi * stride + r * kp + i / 2];
                            let half = if i % 2 == 0 { word as u16 } else { (word >> 16) as u16 };
                            let want =
                                if i < c { round(expected[xi * v_stride + r * c + i]) } else { 0 };
                            assert_eq!(
                                half, want,
                                "{narrow:?} c {c} nb {nb}: point {xi} row {r} half {i}"
                            );
                        }
                    }
                }
                if !products_here {
                    continue;
                }
                // The products read the pairs as the per-call rounding would have made them.
                let n = 19;
                let b: Vec<f32> = (0..c * n).map(|_| next()).collect();
                let xi = 7;
                let a = &expected[xi * v_stride..][..rows * c];
                let (mut want, mut got) = (vec![0.0; rows * n], vec![f32::NAN; rows * n]);
                let pairs = &pairs[xi * stride..];
                let scratch = &mut PairScratch::default();
                match narrow {
                    Narrow::F16 => {
                        let packed = PackedF16::new(&b, c, n);
                        crate::f16::products(a, rows, &packed, &mut want, scratch);
                        crate::f16::products_of_pairs(pairs, rows, &packed, &mut got);
                    }
                    Narrow::Bf16 => {
                        let packed = PackedBf16::new(&b, c, n);
                        crate::bf16::products(a, rows, &packed, &mut want, scratch);
                        crate::bf16::products_of_pairs(pairs, rows, &packed, &mut got);
                    }
                }
                assert_eq!(got, want, "{narrow:?} c {c} nb {nb}");
            }
        }
    }

    /// Both output transforms give the portable transform's floats (on the widened sums for
    /// f16), for every epilogue and a channel tail; and the f16 products kept in f16 are the
    /// widened products' values.
    #[test]
    fn the_output_transforms_equal_the_portable_one() {
        if !supported() {
            eprintln!("skipped: this CPU has no AVX-512 F, BW and VL");
            return;
        }
        let mut next = uniform(29);
        for &(c, nb) in &SHAPES {
            let rows = TILES * nb;
            let stride = sums_stride(rows, c);
            let halves: Vec<u16> =
                (0..TILE_POINTS * stride).map(|_| crate::f16::round(next() * 4.0)).collect();
            let mut m = vec![0.0f32; TILE_POINTS * xi_stride(nb, c)];
            for xi in 0..TILE_POINTS {
                for i in 0..rows * c {
                    m[xi * xi_stride(nb, c) + i] = crate::f16::widen(halves[xi * stride + i]);
                }
            }
            // f32 sums that f16 cannot hold exactly, for the f32 transform.
            let wide: Vec<f32> = m.iter().map(|&x| x + next() * 1e-3).collect();
            let bias: Vec<f32> = (0..c).map(|_| next()).collect();
            let skip: Vec<f32> = (0..nb * 64 * c).map(|_| next()).collect();
            for epilogue in [Epilogue::Linear, Epilogue::Relu, Epilogue::ResidualRelu] {
                let (mut expected, mut got) = (skip.clone(), skip.clone());
                output_transform_rows(&wide, c, nb, &bias, epilogue, &mut expected);
                output_transform_f32(&wide, c, nb, &bias, epilogue, &mut got);
                assert_eq!(got, expected, "f32 c {c} nb {nb} {epilogue:?}");
                let (mut expected, mut got) = (skip.clone(), skip.clone());
                output_transform_rows(&m, c, nb, &bias, epilogue, &mut expected);
                output_transform_f16(&halves, c, nb, &bias, epilogue, &mut got);
                assert_eq!(got, expected, "f16 c {c} nb {nb} {epilogue:?}");
            }
            if !crate::f16::f16_supported() {
                continue;
            }
            let (k, n) = (c, 13);
            let a: Vec<f32> = (0..rows * k).map(|_| next()).collect();
            let b = PackedF16::new(&(0..k * n).map(|_| next()).collect::<Vec<_>>(), k, n);
            let mut pairs = vec![0u32; rows * k.div_ceil(2)];
            let mut widened = vec![0.0; rows * n];
            crate::f16::products(&a, rows, &b, &mut widened, &mut PairScratch::default());
            for (r, a_row) in a.chunks_exact(k).enumerate() {
                for (i, &x) in a_row.iter().enumerate() {
                    let word = &mut pairs[r * k.div_ceil(2) + i / 2];
                    *word |= u32::from(crate::f16::round(x)) << (16 * (i % 2));
                }
            }
            let mut narrow = vec![0u16; rows * n];
            crate::f16::products_of_pairs_f16(&pairs, rows, &b, &mut narrow);
            let kept: Vec<f32> = narrow.iter().map(|&h| crate::f16::widen(h)).collect();
            assert_eq!(kept, widened, "c {c} nb {nb}");
        }
    }

    /// Buffers too small are refused before anything is touched.
    #[test]
    fn short_buffers_are_refused() {
        let input = vec![0.0f32; 64 * 32];
        let mut v = vec![0.0f32; TILE_POINTS * xi_stride(1, 32) - 1];
        let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            input_transform_f32(&input, 32, 1, &mut v)
        }));
        assert!(refused.is_err());
        let mut pairs = vec![0u32; TILE_POINTS * pairs_stride(TILES, 32) - 1];
        let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            input_transform_pairs(&input, 32, 1, Narrow::F16, &mut pairs)
        }));
        assert!(refused.is_err());
    }
}
