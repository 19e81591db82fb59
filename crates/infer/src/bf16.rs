//! bf16 matrix products for hosts with AVX-512 BF16 (AMD Zen 4 and later, Intel Cooper Lake
//! and Sapphire Rapids): the small-batch path's Winograd products and policy convolution with
//! both operands rounded to bfloat16 and the sums kept in f32 (`vdpbf16ps`: two multiply-adds
//! per lane per instruction, twice an f32 FMA's). Chosen at run time: [`PrecisionChoice::Auto`]
//! times f32, bf16 and f16 ([`crate::f16`]) on the loaded net and keeps bf16 only where it is
//! the measurably fastest ([`crate::calibrate`]; on Zen 4 it is, on Sapphire Rapids it is not);
//! on every other host, and with [`Precision::F32`], the f32 kernels run unchanged. This module
//! also holds what the narrower arithmetics share: [`Precision`], [`PrecisionChoice`] and the
//! packing of rows in pairs.
//!
//! Layout: the weights `b [k × n]` are packed at load into `[⌈k/2⌉][n]` 32-bit words, word
//! `(p, j)` holding `b[2p][j]` in its low half and `b[2p + 1][j]` in its high half (a zero for
//! an odd `k`'s last row): one 512-bit load is 16 columns × 2 rows, as `vdpbf16ps` pairs them.
//! The activations `a [m × k]` (f32, row-major) are rounded per call into the same pairs, so
//! one 32-bit broadcast is a row's two entries. Rounding is to nearest, ties to even, the
//! hardware's and [`round`]'s alike.
//!
//! The crate denies `unsafe_code`; this module allows it for the intrinsics' raw loads and
//! stores and for calling the `#[target_feature]` kernel, which [`products`] does only after
//! checking that the CPU has the features (every access is inside bounds asserted first).

#![allow(unsafe_code)]

use std::fmt;
use std::str::FromStr;

/// Arithmetic of the small-batch path's products.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Precision {
    /// f32 throughout (every host).
    #[default]
    F32,
    /// bf16 operands, f32 sums (hosts with AVX-512 BF16: [`bf16_supported`]).
    Bf16,
    /// f16 operands, f16 sums of up to 16 products widened and added in f32 (hosts with
    /// AVX-512 FP16: [`crate::f16::f16_supported`]).
    F16,
    /// bf16 as [`Precision::Bf16`], the 3×3 convolutions' Winograd products on AMX tiles
    /// (hosts with AMX-BF16 that Linux lends the tiles: [`crate::amx::amx_supported`]).
    Amx,
}

impl Precision {
    /// The narrower arithmetics than f32, in the order `auto` measures and prints them.
    pub const NARROW: [Precision; 3] = [Precision::Bf16, Precision::F16, Precision::Amx];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::Bf16 => "bf16",
            Precision::F16 => "f16",
            Precision::Amx => "amx",
        }
    }

    /// What the CPU needs for this arithmetic, for messages.
    pub fn needs(self) -> &'static str {
        match self {
            Precision::F32 => "nothing",
            Precision::Bf16 => "AVX-512 BF16",
            Precision::F16 => "AVX-512 FP16",
            Precision::Amx => "AMX-BF16 tiles",
        }
    }

    /// Whether this CPU runs this arithmetic.
    pub fn supported(self) -> bool {
        match self {
            Precision::F32 => true,
            Precision::Bf16 => bf16_supported(),
            Precision::F16 => crate::f16::f16_supported(),
            Precision::Amx => crate::amx::amx_supported(),
        }
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Precision {
    type Err = String;

    fn from_str(s: &str) -> Result<Precision, String> {
        match s {
            "f32" => Ok(Precision::F32),
            "bf16" => Ok(Precision::Bf16),
            "f16" => Ok(Precision::F16),
            "amx" => Ok(Precision::Amx),
            other => Err(format!("unknown precision '{other}' (expected f32, bf16, f16 or amx)")),
        }
    }
}

/// How `atomzero uci --precision` picks the arithmetic: one named, or `auto`, the fastest
/// measured on the loaded net at load time ([`crate::InferNet::with_choice`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PrecisionChoice {
    /// The fastest of bf16 and f16 where the CPU has them and it runs the net at least
    /// [`crate::calibrate::AUTO_MIN_RATIO`] times as fast as f32 here (its outputs agreeing
    /// with f32's); else f32.
    #[default]
    Auto,
    /// This arithmetic, measured or not.
    Fixed(Precision),
}

impl FromStr for PrecisionChoice {
    type Err = String;

    fn from_str(s: &str) -> Result<PrecisionChoice, String> {
        match s {
            "auto" => Ok(PrecisionChoice::Auto),
            other => other.parse().map(PrecisionChoice::Fixed).map_err(|_| {
                format!("unknown precision '{other}' (expected f32, bf16, f16, amx or auto)")
            }),
        }
    }
}

/// Whether this CPU runs the bf16 kernel (AVX-512 F, BW, VL and BF16).
pub fn bf16_supported() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && std::arch::is_x86_feature_detected!("avx512bf16")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `x` rounded to bfloat16, to nearest with ties to even (finite `x`; a NaN stays a NaN).
pub fn round(x: f32) -> u16 {
    let bits = x.to_bits();
    if x.is_nan() {
        return ((bits >> 16) | 0x40) as u16;
    }
    let rounded = bits.wrapping_add(0x7FFF + ((bits >> 16) & 1));
    (rounded >> 16) as u16
}

/// The f32 value of a bfloat16.
pub fn widen(h: u16) -> f32 {
    f32::from_bits(u32::from(h) << 16)
}

/// Weights `b [k × n]` packed for [`products`] (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct PackedBf16 {
    k: usize,
    n: usize,
    words: Vec<u32>,
}

impl PackedBf16 {
    /// Packs row-major `b [k × n]`.
    pub fn new(b: &[f32], k: usize, n: usize) -> PackedBf16 {
        PackedBf16 { k, n, words: pack_pairs(b, k, n, round) }
    }

    /// Rows of `b`.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Columns of `b`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The packed words, `[⌈k/2⌉][n]`.
    pub(crate) fn words(&self) -> &[u32] {
        &self.words
    }
}

/// Row-major `b [k × n]` as `[⌈k/2⌉][n]` words of two 16-bit halves (`round` of `b[2p][j]`
/// low, of `b[2p + 1][j]` high, a zero for an odd `k`'s last row): the packing of the bf16 and
/// the f16 ([`crate::f16`]) kernels.
pub(crate) fn pack_pairs(b: &[f32], k: usize, n: usize, round: fn(f32) -> u16) -> Vec<u32> {
    assert!(b.len() >= k * n, "pack_pairs: buffer size");
    let pairs = k.div_ceil(2);
    let mut words = vec![0u32; pairs * n];
    for p in 0..pairs {
        for j in 0..n {
            let lo = u32::from(round(b[2 * p * n + j]));
            let hi = if 2 * p + 1 < k { u32::from(round(b[(2 * p + 1) * n + j])) } else { 0 };
            words[p * n + j] = lo | (hi << 16);
        }
    }
    words
}

/// `a [m × k]` rounded into pairs (`[m][⌈k/2⌉]` words) by the bf16 and f16 kernels, reused
/// between calls.
#[derive(Clone, Debug, Default)]
pub struct PairScratch {
    words: Vec<u32>,
}

impl PairScratch {
    /// The first `len` words, grown as needed.
    pub(crate) fn words(&mut self, len: usize) -> &mut [u32] {
        if self.words.len() < len {
            self.words.resize(len, 0);
        }
        &mut self.words[..len]
    }
}

/// `c [m × n] = a [m × k] · b` with `a` (f32, row-major) rounded to bf16 and sums in f32.
/// Panics when the CPU lacks the features ([`bf16_supported`]) or a buffer is too small.
pub fn products(a: &[f32], m: usize, b: &PackedBf16, c: &mut [f32], scratch: &mut PairScratch) {
    let (k, n) = (b.k, b.n);
    assert!(a.len() >= m * k && c.len() >= m * n, "bf16 products: buffer sizes");
    if m == 0 || n == 0 {
        return;
    }
    assert!(bf16_supported(), "bf16 products on a CPU without AVX-512 BF16");
    let words = scratch.words(m * k.div_ceil(2));
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the CPU has every feature `kernel` enables (checked just above), and `kernel`
    // reads `a[..m·k]`, `b.words[..⌈k/2⌉·n]` and `words[..m·⌈k/2⌉]` and writes `c[..m·n]`, all
    // asserted to exist.
    unsafe {
        x86::kernel(a, m, k, &b.words, n, c, words);
    }
}

/// [`products`] of rows already rounded into pairs
/// ([`crate::wino512::input_transform_pairs`]): `pairs` is `[m][⌈k/2⌉]` words. Panics as
/// [`products`] does.
pub fn products_of_pairs(pairs: &[u32], m: usize, b: &PackedBf16, c: &mut [f32]) {
    let (kp, n) = (b.k.div_ceil(2), b.n);
    assert!(pairs.len() >= m * kp && c.len() >= m * n, "bf16 products: buffer sizes");
    if m == 0 || n == 0 {
        return;
    }
    assert!(bf16_supported(), "bf16 products on a CPU without AVX-512 BF16");
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the CPU has every feature `blocks` enables (checked just above), and `blocks`
    // reads `pairs[..m·kp]` and `b.words[..kp·n]` and writes `c[..m·n]`, all asserted to exist.
    unsafe {
        x86::blocks(m, kp, &b.words, n, c, pairs);
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// Rows of `c` per block: 4 rows × 2 vectors of 16 columns, 8 accumulators.
    const ROWS: usize = 4;

    /// See [`super::products`]; `pairs` is `[m][⌈k/2⌉]`.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512bf16")]
    pub(super) unsafe fn kernel(
        a: &[f32],
        m: usize,
        k: usize,
        b: &[u32],
        n: usize,
        c: &mut [f32],
        pairs: &mut [u32],
    ) {
        let kp = k.div_ceil(2);
        // Round `a` into pairs, 16 entries a step (an odd k's last pair gets a zero high half).
        for r in 0..m {
            let row = a[r * k..(r + 1) * k].as_ptr();
            let out = pairs[r * kp..(r + 1) * kp].as_mut_ptr().cast::<u16>();
            let mut i = 0;
            while i < 2 * kp {
                let load = k.saturating_sub(i).min(16);
                let store = (2 * kp - i).min(16);
                // SAFETY: lanes below `load` are `row[i..i + load]`, inside `a`'s row; lanes
                // below `store` are `out[i..i + store]`, inside the row's `2·kp` halves.
                unsafe {
                    let x = _mm512_maskz_loadu_ps(lanes(load), row.add(i));
                    let h: __m256i = std::mem::transmute(_mm512_cvtneps_pbh(x));
                    _mm256_mask_storeu_epi16(out.add(i).cast(), lanes(store), h);
                }
                i += 16;
            }
        }
        // SAFETY: `pairs` holds `m` rounded rows of `kp` words (just written), `b` and `c` as
        // the caller promised.
        unsafe { blocks(m, kp, b, n, c, pairs) }
    }

    /// The products of rows already rounded into pairs: `pairs` is `[m][kp]` words, `b`
    /// `[kp][n]` words, `c [m × n]` gets the f32 sums.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512bf16")]
    pub(super) unsafe fn blocks(
        m: usize,
        kp: usize,
        b: &[u32],
        n: usize,
        c: &mut [f32],
        pairs: &[u32],
    ) {
        let zero = _mm512_setzero_ps();
        for r0 in (0..m).step_by(ROWS) {
            let rows = ROWS.min(m - r0);
            // Rows past `m` repeat the last one; their results are not stored.
            let a_rows: [*const u32; ROWS] =
                std::array::from_fn(|r| pairs[(r0 + r).min(m - 1) * kp..].as_ptr());
            let mut j = 0;
            while j + 32 <= n {
                let mut acc = [[zero; 2]; ROWS];
                for p in 0..kp {
                    // SAFETY: `b[p·n + j .. p·n + j + 32]` is inside `b` (j + 32 ≤ n), each
                    // `a_rows[r] + p` inside its row of `kp` words.
                    unsafe {
                        let w = b.as_ptr().add(p * n + j);
                        let w0: __m512bh = std::mem::transmute(_mm512_loadu_si512(w.cast()));
                        let w1: __m512bh =
                            std::mem::transmute(_mm512_loadu_si512(w.add(16).cast()));
                        for r in 0..ROWS {
                            let x: __m512bh =
                                std::mem::transmute(_mm512_set1_epi32(*a_rows[r].add(p) as i32));
                            acc[r][0] = _mm512_dpbf16_ps(acc[r][0], x, w0);
                            acc[r][1] = _mm512_dpbf16_ps(acc[r][1], x, w1);
                        }
                    }
                }
                for (r, row) in acc.iter().enumerate().take(rows) {
                    // SAFETY: `c[(r0 + r)·n + j ..][..32]` is inside `c` (r0 + r < m, j + 32 ≤ n).
                    unsafe {
                        let out = c.as_mut_ptr().add((r0 + r) * n + j);
                        _mm512_storeu_ps(out, row[0]);
                        _mm512_storeu_ps(out.add(16), row[1]);
                    }
                }
                j += 32;
            }
            while j < n {
                let width = (n - j).min(16);
                let mask = lanes(width);
                let mut acc = [zero; ROWS];
                for p in 0..kp {
                    // SAFETY: the masked lanes are `b[p·n + j ..][..width]`, inside `b`.
                    unsafe {
                        let w: __m512bh = std::mem::transmute(_mm512_maskz_loadu_epi32(
                            mask,
                            b.as_ptr().add(p * n + j).cast(),
                        ));
                        for r in 0..ROWS {
                            let x: __m512bh =
                                std::mem::transmute(_mm512_set1_epi32(*a_rows[r].add(p) as i32));
                            acc[r] = _mm512_dpbf16_ps(acc[r], x, w);
                        }
                    }
                }
                for (r, &row) in acc.iter().enumerate().take(rows) {
                    // SAFETY: the masked lanes are `c[(r0 + r)·n + j ..][..width]`, inside `c`.
                    unsafe {
                        _mm512_mask_storeu_ps(c.as_mut_ptr().add((r0 + r) * n + j), mask, row)
                    };
                }
                j += width;
            }
        }
    }

    /// A mask of the lowest `count` (≤ 16) lanes.
    #[inline(always)]
    fn lanes(count: usize) -> u16 {
        if count >= 16 { u16::MAX } else { (1u16 << count) - 1 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::tests::check_narrow_products;

    #[test]
    fn rounding_is_to_nearest_even() {
        assert_eq!(round(1.0), 0x3F80);
        // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to the even 1.
        assert_eq!(round(1.0 + 1.0 / 256.0), 0x3F80);
        // 1 + 3·2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6: up to the even one.
        assert_eq!(round(1.0 + 3.0 / 256.0), 0x3F82);
        assert_eq!(round(1.0 + 1.5 / 256.0), 0x3F81);
        assert_eq!(widen(round(-2.5)), -2.5);
        assert!(widen(round(f32::NAN)).is_nan());
    }

    #[test]
    fn precision_names_parse() {
        assert_eq!("f32".parse::<Precision>(), Ok(Precision::F32));
        assert_eq!("bf16".parse::<Precision>(), Ok(Precision::Bf16));
        assert!("auto".parse::<Precision>().is_err());
        assert!("fp16".parse::<Precision>().unwrap_err().contains("fp16"));
        assert_eq!("auto".parse::<PrecisionChoice>(), Ok(PrecisionChoice::Auto));
        assert_eq!("f32".parse::<PrecisionChoice>(), Ok(PrecisionChoice::Fixed(Precision::F32)));
        assert_eq!("bf16".parse::<PrecisionChoice>(), Ok(PrecisionChoice::Fixed(Precision::Bf16)));
        let err = "fp16".parse::<PrecisionChoice>().unwrap_err();
        assert!(err.contains("'fp16'") && err.contains("auto"), "{err}");
    }

    /// The kernel against a naive product of the same rounded operands (sums in f64): equal
    /// to within f32 summation error.
    #[test]
    fn products_equal_a_naive_product_of_the_rounded_operands() {
        if !bf16_supported() {
            eprintln!("skipped: this CPU has no AVX-512 BF16");
            return;
        }
        let mut scratch = PairScratch::default();
        check_narrow_products(
            |a, m, b, k, n| {
                let mut c = vec![f32::NAN; m * n];
                products(a, m, &PackedBf16::new(b, k, n), &mut c, &mut scratch);
                c
            },
            |x| f64::from(widen(round(x))),
            |_, exact, _| 1e-5 * (1.0 + exact.abs()),
        );
    }
}
