//! IEEE half-precision (binary16) matrix products for hosts with AVX-512 FP16 (Intel Sapphire
//! Rapids and later): the small-batch path's Winograd products and policy convolution with both
//! operands rounded to f16 and the products summed in f16 lanes (`vfmadd231ph`: 32 multiply-adds
//! per instruction, twice an f32 FMA's; on a Sapphire Rapids host it issues at f32's rate,
//! 170 against 83 GMAC/s in a register-only loop, where AVX-512 BF16's `vdpbf16ps` ran the net
//! slower than f32: docs/experiments.md, "Change 15"). Chosen at run time like bf16
//! ([`crate::calibrate`]: `--precision auto` times it on the loaded net and checks its outputs
//! against f32's); with [`crate::Precision::F32`] the f32 kernels run unchanged.
//!
//! f16 keeps 11 bits of significand (bf16: 8) but only five of exponent: values past 65,504
//! become infinite. The kernel sums up to `⌈k/2⌉` products a lane in f16 (and the two lanes of
//! a column once more) before widening to f32, and `auto` refuses f16 for a net whose outputs
//! on its calibration positions are not finite or stray from f32's ([`crate::calibrate`]).
//!
//! Layout: as [`crate::bf16`]'s, the weights `b [k × n]` are packed at load into `[⌈k/2⌉][n]`
//! 32-bit words, word `(p, j)` holding `b[2p][j]` (low half) and `b[2p + 1][j]` (high half),
//! and each call's `a [m × k]` is rounded into the same pairs, so one 32-bit broadcast (a
//! plain load, where a 16-bit broadcast also needs a shuffle) is a row's two entries and serves
//! two multiply-adds of 16 columns: a block of up to 8 rows keeps two accumulators a row (32
//! columns) and loads one broadcast per two FMAs. A column's two lanes (its even and odd rows
//! of `b`) are added in f16 at the end, gathered in column order and widened to f32. Rounding
//! is to nearest, ties to even ([`round`], the hardware's).
//!
//! On the small path's 3×3 convolutions the Winograd transforms around the products work in
//! this format as well ([`crate::wino512`]): the input transform rounds its 36 points straight
//! into the pairs ([`products_of_pairs`] reads them as they are), the sums stay in the f16 they
//! were summed in ([`products_of_pairs_f16`]), and the output transform widens them as it
//! loads (docs/experiments.md, "Change 16").
//!
//! Stable Rust has AVX-512 FP16's target feature but not its intrinsics (they need the unstable
//! `f16` type), so the two instructions that need it, `vfmadd231ph` and `vaddph`, are written
//! as inline assembly on 512-bit integer vectors. The crate denies `unsafe_code`; this module allows it
//! for that, the intrinsics' raw loads and stores, and for calling the `#[target_feature]`
//! kernel, which [`products`] does only after checking that the CPU has the features (every
//! access is inside bounds asserted first).

#![allow(unsafe_code)]

use crate::bf16::PairScratch;

/// Whether this CPU runs the f16 kernel (AVX-512 F, BW, VL and FP16).
pub fn f16_supported() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && std::arch::is_x86_feature_detected!("avx512fp16")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `x` rounded to binary16, to nearest with ties to even; past the largest finite f16
/// (65,504, rounding included) an infinity, a NaN stays a NaN.
pub fn round(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let abs = bits & 0x7FFF_FFFF;
    if abs > 0x7F80_0000 {
        return sign | 0x7E00;
    }
    // 65,520 is halfway between 65,504 and 65,536 (an odd and an even significand).
    if abs >= 0x477F_F000 {
        return sign | 0x7C00;
    }
    let exp = (abs >> 23) as i32 - 127;
    let significand = abs & 0x7F_FFFF;
    if exp >= -14 {
        let base = (((exp + 15) as u32) << 10) | (significand >> 13);
        let rest = significand & 0x1FFF;
        let up = rest > 0x1000 || (rest == 0x1000 && base & 1 == 1);
        // A carry out of the significand steps the exponent, as it should.
        return sign | (base + u32::from(up)) as u16;
    }
    if exp < -25 {
        return sign;
    }
    // A subnormal: units of 2⁻²⁴; the full significand shifted right by 13 to 24.
    let full = significand | 0x80_0000;
    let shift = (-(exp + 1)) as u32;
    let (q, rest, half) = (full >> shift, full & ((1 << shift) - 1), 1u32 << (shift - 1));
    let up = rest > half || (rest == half && q & 1 == 1);
    sign | (q + u32::from(up)) as u16
}

/// The f32 value of a binary16.
pub fn widen(h: u16) -> f32 {
    let sign = u32::from(h & 0x8000) << 16;
    let exp = u32::from((h >> 10) & 0x1F);
    let frac = u32::from(h & 0x3FF);
    let bits = match exp {
        0 if frac == 0 => sign,
        // Subnormal: frac · 2⁻²⁴, exact in f32.
        0 => {
            let value = frac as f32 / 16_777_216.0;
            return if sign == 0 { value } else { -value };
        }
        0x1F => sign | 0x7F80_0000 | (frac << 13),
        _ => sign | ((exp + 112) << 23) | (frac << 13),
    };
    f32::from_bits(bits)
}

/// Weights `b [k × n]` packed for [`products`] (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct PackedF16 {
    k: usize,
    n: usize,
    words: Vec<u32>,
}

impl PackedF16 {
    /// Packs row-major `b [k × n]`.
    pub fn new(b: &[f32], k: usize, n: usize) -> PackedF16 {
        PackedF16 { k, n, words: crate::bf16::pack_pairs(b, k, n, round) }
    }

    /// Rows of `b`.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Columns of `b`.
    pub fn n(&self) -> usize {
        self.n
    }
}

/// `c [m × n] = a [m × k] · b` with `a` (f32, row-major) rounded to f16 and the products summed
/// in f16, widened to f32 at the end. Panics when the CPU lacks the features
/// ([`f16_supported`]) or a buffer is too small.
pub fn products(a: &[f32], m: usize, b: &PackedF16, c: &mut [f32], scratch: &mut PairScratch) {
    let (k, n) = (b.k, b.n);
    assert!(a.len() >= m * k && c.len() >= m * n, "f16 products: buffer sizes");
    if m == 0 || n == 0 {
        return;
    }
    assert!(f16_supported(), "f16 products on a CPU without AVX-512 FP16");
    let pairs = scratch.words(m * k.div_ceil(2));
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the CPU has every feature `kernel` enables (checked just above), and `kernel`
    // reads `a[..m·k]` and `b.words[..⌈k/2⌉·n]`, and writes `pairs[..m·⌈k/2⌉]` and `c[..m·n]`,
    // all asserted to exist.
    unsafe {
        x86::kernel(a, m, k, &b.words, n, Out::F32(c), pairs);
    }
}

/// Where the products' sums go: widened to f32, or kept as the f16 they were summed in.
enum Out<'a> {
    F32(&'a mut [f32]),
    F16(&'a mut [u16]),
}

/// [`products`] of rows already rounded into pairs
/// ([`crate::wino512::input_transform_pairs`]): `pairs` is `[m][⌈k/2⌉]` words.
/// Panics as [`products`] does.
pub fn products_of_pairs(pairs: &[u32], m: usize, b: &PackedF16, c: &mut [f32]) {
    let (kp, n) = (b.k.div_ceil(2), b.n);
    assert!(pairs.len() >= m * kp && c.len() >= m * n, "f16 products: buffer sizes");
    if m == 0 || n == 0 {
        return;
    }
    assert!(f16_supported(), "f16 products on a CPU without AVX-512 FP16");
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the CPU has every feature `blocks` enables (checked just above), and `blocks`
    // reads `pairs[..m·kp]` and `b.words[..kp·n]` and writes `c[..m·n]`, all asserted to exist.
    unsafe {
        x86::blocks(m, kp, &b.words, n, Out::F32(c), pairs);
    }
}

/// [`products_of_pairs`] with the sums kept in the f16 they were summed in (`c [m × n]`
/// halves): the same values, half the bytes, for [`crate::wino512::output_transform_f16`].
pub fn products_of_pairs_f16(pairs: &[u32], m: usize, b: &PackedF16, c: &mut [u16]) {
    let (kp, n) = (b.k.div_ceil(2), b.n);
    assert!(pairs.len() >= m * kp && c.len() >= m * n, "f16 products: buffer sizes");
    if m == 0 || n == 0 {
        return;
    }
    assert!(f16_supported(), "f16 products on a CPU without AVX-512 FP16");
    #[cfg(target_arch = "x86_64")]
    // SAFETY: as in `products_of_pairs`, `c` holding `m·n` halves.
    unsafe {
        x86::blocks(m, kp, &b.words, n, Out::F16(c), pairs);
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::Out;
    use std::arch::asm;
    use std::arch::x86_64::*;

    /// `acc += x · w` in 32 f16 lanes.
    macro_rules! fma_ph {
        ($acc:expr, $x:expr, $w:expr) => {
            // (Used inside `unsafe` blocks: a register-only instruction of a feature the
            // enclosing kernel enables.)
            asm!(
                "vfmadd231ph {acc}, {x}, {w}",
                acc = inout(zmm_reg) $acc,
                x = in(zmm_reg) $x,
                w = in(zmm_reg) $w,
                options(pure, nomem, nostack, preserves_flags)
            )
        };
    }

    /// `a + b` in 32 f16 lanes.
    macro_rules! add_ph {
        ($a:expr, $b:expr) => {{
            let mut sum = $a;
            // (Used inside `unsafe` blocks, as `fma_ph`.)
            asm!(
                "vaddph {sum}, {sum}, {b}",
                sum = inout(zmm_reg) sum,
                b = in(zmm_reg) $b,
                options(pure, nomem, nostack, preserves_flags)
            );
            sum
        }};
    }

    /// See [`super::products`]; `b` is `[⌈k/2⌉][n]` words, `pairs` is `[m][⌈k/2⌉]` words.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512fp16")]
    pub(super) unsafe fn kernel(
        a: &[f32],
        m: usize,
        k: usize,
        b: &[u32],
        n: usize,
        c: Out<'_>,
        pairs: &mut [u32],
    ) {
        let kp = k.div_ceil(2);
        // Round `a` into pairs, 16 entries a step (an odd k's last pair gets a zero high half).
        for r in 0..m {
            let row = a[r * k..(r + 1) * k].as_ptr();
            let out = pairs[r * kp..(r + 1) * kp].as_mut_ptr().cast::<u16>();
            let mut i = 0;
            while i < 2 * kp {
                // SAFETY: lanes below `k - i` are `row[i..k]`, inside `a`'s row; lanes below
                // `2·kp - i` are `out[i..2·kp]`, inside the row's halves.
                unsafe {
                    let x = _mm512_maskz_loadu_ps(lanes16(k.saturating_sub(i)), row.add(i));
                    let h = _mm512_cvtps_ph::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(x);
                    _mm256_mask_storeu_epi16(out.add(i).cast(), lanes16(2 * kp - i), h);
                }
                i += 16;
            }
        }
        // SAFETY: `pairs` holds `m` rounded rows of `kp` words (just written), `b` and `c` as
        // the caller promised.
        unsafe { blocks(m, kp, b, n, c, pairs) }
    }

    /// The products of rows already rounded into pairs: `pairs` is `[m][kp]` words, `b`
    /// `[kp][n]` words, `c [m × n]` gets the sums widened to f32.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512fp16")]
    pub(super) unsafe fn blocks(
        m: usize,
        kp: usize,
        b: &[u32],
        n: usize,
        mut c: Out<'_>,
        pairs: &[u32],
    ) {
        // Blocks of 8 rows (16 accumulators), then of 4, 2 and 1 (the small path's rows are 4
        // a position).
        let mut r0 = 0;
        while r0 < m {
            let left = m - r0;
            // SAFETY: each block reads rows `r0..r0 + R` of `pairs` and writes the same rows
            // of `c`, all below `m`.
            unsafe {
                r0 += if left >= 8 {
                    block::<8>(r0, kp, b, n, &mut c, pairs)
                } else if left >= 4 {
                    block::<4>(r0, kp, b, n, &mut c, pairs)
                } else if left >= 2 {
                    block::<2>(r0, kp, b, n, &mut c, pairs)
                } else {
                    block::<1>(r0, kp, b, n, &mut c, pairs)
                };
            }
        }
    }

    /// Rows `r0..r0 + R` of `c`, 32 columns at a time (two accumulators a row, each 16
    /// columns × a pair of rows of `b`); returns `R`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512fp16")]
    unsafe fn block<const R: usize>(
        r0: usize,
        kp: usize,
        b: &[u32],
        n: usize,
        c: &mut Out<'_>,
        pairs: &[u32],
    ) -> usize {
        let a_rows: [*const u32; R] = std::array::from_fn(|r| pairs[(r0 + r) * kp..].as_ptr());
        let zero = _mm512_setzero_si512();
        // Lane i of the gathered sums: the low half of word i of the first accumulator's sums
        // (i < 16), then of the second's.
        let gather = _mm512_set_epi16(
            62, 60, 58, 56, 54, 52, 50, 48, 46, 44, 42, 40, 38, 36, 34, 32, 30, 28, 26, 24, 22, 20,
            18, 16, 14, 12, 10, 8, 6, 4, 2, 0,
        );
        let mut j = 0;
        while j < n {
            let width = (n - j).min(32);
            let (m0, m1) = (lanes16(width), lanes16(width.saturating_sub(16)));
            let mut acc = [[zero; 2]; R];
            for p in 0..kp {
                // SAFETY: the masked lanes are `b[p·n + j ..][..width]`, inside `b`; each
                // `a_rows[r] + p` is inside its row of `kp` words.
                unsafe {
                    let w = b.as_ptr().add(p * n + j);
                    let w0 = _mm512_maskz_loadu_epi32(m0, w.cast());
                    let w1 = _mm512_maskz_loadu_epi32(m1, w.add(16).cast());
                    for r in 0..R {
                        let x = _mm512_set1_epi32(*a_rows[r].add(p) as i32);
                        fma_ph!(acc[r][0], x, w0);
                        fma_ph!(acc[r][1], x, w1);
                    }
                }
            }
            for (r, [even, odd]) in acc.into_iter().enumerate() {
                // SAFETY: register arithmetic of the enabled features; the masked lanes are
                // `c[(r0 + r)·n + j ..][..width]`, inside `c`.
                unsafe {
                    // Each word's two halves (a column's even and odd rows of `b`) added in
                    // the low half, the low halves gathered in column order, widened.
                    let s0 = add_ph!(even, _mm512_srli_epi32::<16>(even));
                    let s1 = add_ph!(odd, _mm512_srli_epi32::<16>(odd));
                    let sums = _mm512_permutex2var_epi16(s0, gather, s1);
                    match c {
                        Out::F32(c) => {
                            let out = c.as_mut_ptr().add((r0 + r) * n + j);
                            let low = _mm512_cvtph_ps(_mm512_castsi512_si256(sums));
                            _mm512_mask_storeu_ps(out, m0, low);
                            if m1 != 0 {
                                let high = _mm512_cvtph_ps(_mm512_extracti64x4_epi64::<1>(sums));
                                _mm512_mask_storeu_ps(out.add(16), m1, high);
                            }
                        }
                        Out::F16(c) => {
                            let out = c.as_mut_ptr().add((r0 + r) * n + j);
                            let mask = u32::from(m0) | (u32::from(m1) << 16);
                            _mm512_mask_storeu_epi16(out.cast(), mask, sums);
                        }
                    }
                }
            }
            j += 32;
        }
        R
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
    use crate::gemm::tests::{check_narrow_products, uniform};

    #[test]
    fn rounding_is_to_nearest_even_with_infinities_past_the_range() {
        assert_eq!(round(1.0), 0x3C00);
        assert_eq!(round(-2.0), 0xC000);
        assert_eq!(round(0.0), 0x0000);
        assert_eq!(round(-0.0), 0x8000);
        // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties go to the even 1.
        assert_eq!(round(1.0 + 1.0 / 2048.0), 0x3C00);
        // 1 + 3·2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9: up to the even one.
        assert_eq!(round(1.0 + 3.0 / 2048.0), 0x3C02);
        assert_eq!(round(65504.0), 0x7BFF);
        assert_eq!(round(65519.0), 0x7BFF);
        assert_eq!(round(65520.0), 0x7C00);
        assert_eq!(round(-1e6), 0xFC00);
        // The smallest subnormal, 2^-24, and half of it (a tie, to the even zero).
        assert_eq!(round(2f32.powi(-24)), 0x0001);
        assert_eq!(round(2f32.powi(-25)), 0x0000);
        assert_eq!(round(1.5 * 2f32.powi(-24)), 0x0002);
        assert!(widen(round(f32::NAN)).is_nan());
        for h in [0x3C00u16, 0xC000, 0x7BFF, 0x0001, 0x03FF, 0x0400, 0x8001, 0x7C00, 0xFC00] {
            assert_eq!(round(widen(h)), h, "{h:#06x}");
        }
    }

    /// The software rounding against the CPU's (`vcvtps2ph`, F16C) over many magnitudes.
    #[test]
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    fn rounding_matches_the_hardware() {
        if !std::arch::is_x86_feature_detected!("f16c") {
            eprintln!("skipped: this CPU has no F16C");
            return;
        }
        let mut next = uniform(5);
        let mut checked = 0;
        for e in -30..=18 {
            for _ in 0..400 {
                let x = next() * 2f32.powi(e);
                // SAFETY: F16C is present (checked above).
                let hw = unsafe { hardware(x) };
                assert_eq!(round(x), hw, "{x:e}");
                if hw & 0x7C00 != 0x7C00 {
                    assert_eq!(widen(hw), f32_of_hardware(hw), "{hw:#06x}");
                }
                checked += 1;
            }
        }
        assert!(checked > 10_000);

        #[target_feature(enable = "f16c")]
        unsafe fn hardware(x: f32) -> u16 {
            use std::arch::x86_64::*;
            let h = _mm_cvtps_ph::<{ _MM_FROUND_TO_NEAREST_INT }>(_mm_set1_ps(x));
            _mm_extract_epi16::<0>(h) as u16
        }
        fn f32_of_hardware(h: u16) -> f32 {
            use std::arch::x86_64::*;
            // SAFETY: F16C is present (checked by the caller).
            unsafe { _mm_cvtss_f32(_mm_cvtph_ps(_mm_set1_epi16(h as i16))) }
        }
    }

    /// The kernel against a naive product of the same rounded operands (in f64): within f16's
    /// summation error.
    #[test]
    fn products_equal_a_naive_product_of_the_rounded_operands() {
        if !f16_supported() {
            eprintln!("skipped: this CPU has no AVX-512 FP16");
            return;
        }
        let mut scratch = PairScratch::default();
        check_narrow_products(
            |a, m, b, k, n| {
                let mut c = vec![f32::NAN; m * n];
                products(a, m, &PackedF16::new(b, k, n), &mut c, &mut scratch);
                c
            },
            |x| f64::from(widen(round(x))),
            // Each of ⌈k/2⌉ + 1 f16 roundings a lane is ≤ 2^-11 of the running sum, and a
            // product that lost a row, a column or a lane would be far off.
            |k, _, scale| {
                (2f64.powi(-11) * (k as f64 / 2.0 + 2.0) * scale).min(0.02 * scale + 1e-3)
            },
        );
    }
}
