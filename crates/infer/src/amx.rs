//! The small path's Winograd products on Intel AMX tiles (Sapphire Rapids and later, where the
//! host exposes AMX to the guest): bf16 operands, f32 sums, as [`crate::bf16`]'s AVX-512 kernel
//! computes them, but by `tdpbf16ps`, which multiplies a 16 × 32 bf16 tile by a 32 × 16 one
//! (8,192 multiply-adds an instruction, sixteen times `vdpbf16ps`'s 512). Chosen by
//! [`crate::Precision::Amx`] (`--precision amx`, or `auto` where it measures fastest).
//!
//! Layouts are [`crate::bf16`]'s, so nothing is repacked: `pairs [m][⌈k/2⌉]` words (two bf16 of
//! a row) are the A tiles as they are (16 rows of up to 16 words, the row stride `⌈k/2⌉ · 4`
//! bytes), the packed weights `[⌈k/2⌉][n]` words are the B tiles (16 word rows × 16 columns,
//! the row stride `n · 4` bytes), and each C tile (16 rows × 16 f32 columns) is stored into
//! `c [m][n]` in place. Rows beyond a multiple of 16 are covered by a last tile that starts at
//! `m − 16` (the rows it shares with the tile before are computed twice, the same way);
//! fewer than 16 rows run as one shorter tile. Inner words beyond a multiple of 16 run as
//! narrower A and B tiles of their own (48 channels: 16 + 8 words). Shapes: `n` a multiple
//! of 16 ([`fits`]); others stay on the AVX-512 kernel.
//!
//! Measured before building it (C, this kind of host, docs/experiments.md "Change 21"): at
//! four positions (16 rows), one 32 → 32 convolution's 36 products are 72 `tdpbf16ps` that take
//! ~1 µs alone, but ~2.4 µs with their tile loads and stores, the stores of the f32 sums
//! (72 KiB, past L1) the largest part.
//!
//! Linux lends a process the tiles' register state only when asked (`arch_prctl
//! ARCH_REQ_XCOMP_PERM`); [`amx_supported`] asks once, and is false where the CPU lacks
//! AMX-TILE or AMX-BF16, the kernel refuses, or the target is not x86-64 Linux. Each call
//! loads its tile configuration and releases the tiles before it returns. Stable Rust has no
//! AMX intrinsics, so the instructions are inline assembly; the crate denies `unsafe_code`,
//! and this module allows it for that (every address is inside bounds asserted first).

#![allow(unsafe_code)]

use crate::bf16::PackedBf16;

/// Whether this process can run the AMX kernel: the CPU has AMX-TILE and AMX-BF16 and
/// AVX-512 BF16 (the input transform's rounding), and Linux granted the tile state. Asked
/// once per process.
pub fn amx_supported() -> bool {
    static READY: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *READY.get_or_init(detect)
}

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
fn detect() -> bool {
    if !crate::bf16::bf16_supported() {
        return false;
    }
    // CPUID leaf 7: EDX bit 22 AMX-BF16, bit 24 AMX-TILE.
    #[allow(unused_unsafe)]
    // SAFETY: CPUID leaf 7 exists on every CPU with AVX-512 (checked just above).
    let leaf = unsafe { std::arch::x86_64::__cpuid_count(7, 0) };
    if leaf.edx & (1 << 22) == 0 || leaf.edx & (1 << 24) == 0 {
        return false;
    }
    // arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA): 0 when granted.
    let ret: i64;
    // SAFETY: a system call that only changes this process's permitted register state; it
    // clobbers rcx and r11, as declared.
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") 158i64 => ret,
            in("rdi") 0x1023i64,
            in("rsi") 18i64,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    ret == 0
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
fn detect() -> bool {
    false
}

/// Whether products of `m` rows, inner size `k` and `n` columns run on the tiles.
pub fn fits(m: usize, k: usize, n: usize) -> bool {
    m > 0 && k > 0 && n > 0 && n.is_multiple_of(16)
}

/// For each `xi` of `points`: `c[xi · c_stride ..][m × n] = a · b` where `a [m × k]` is
/// `pairs[xi · pair_stride ..]` in [`crate::bf16`]'s pairs and `b` is `points[xi]`. Panics when
/// the shapes do not [`fit`](fits), the points differ in shape, a buffer is too small, or the
/// process cannot run AMX.
pub fn products_points(
    pairs: &[u32],
    pair_stride: usize,
    m: usize,
    points: &[PackedBf16],
    c: &mut [f32],
    c_stride: usize,
) {
    let Some(first) = points.first() else { return };
    let (k, n) = (first.k(), first.n());
    let kp = k.div_ceil(2);
    assert!(fits(m, k, n), "AMX products: shape {m} × {k} × {n} does not fit the tiles");
    assert!(points.iter().all(|p| p.k() == k && p.n() == n), "AMX products: points differ");
    let count = points.len();
    assert!(
        pair_stride >= m * kp
            && c_stride >= m * n
            && pairs.len() >= (count - 1) * pair_stride + m * kp
            && c.len() >= (count - 1) * c_stride + m * n,
        "AMX products: buffer sizes"
    );
    assert!(amx_supported(), "AMX products on a CPU or kernel without AMX");
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the process may use the tiles (checked just above); every tile load reads rows
    // inside `pairs[xi · pair_stride..][..m · kp]` or a point's `kp · n` words, and every store
    // writes rows inside `c[xi · c_stride..][..m · n]`, all asserted to exist.
    unsafe {
        x86::run(pairs, pair_stride, m, kp, n, points, c, c_stride);
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::PackedBf16;
    use std::arch::asm;

    /// The 64-byte tile configuration `ldtilecfg` reads (palette 1).
    #[repr(C, align(64))]
    struct TileConfig {
        palette: u8,
        start_row: u8,
        reserved: [u8; 14],
        colsb: [u16; 16],
        rows: [u8; 16],
    }

    // Tiles: 0 and 1 the sums of two column blocks, 2 the rows of `a`, 3 and 4 the two
    // column blocks of `b` (16 word rows each); 5, 6 and 7 the same for the last `⌈k/2⌉ mod
    // 16` words.
    macro_rules! load {
        ($t:literal, $ptr:expr, $stride:expr) => {
            asm!(concat!("tileloadd tmm", $t, ", [{p} + {s}*1]"),
                p = in(reg) $ptr, s = in(reg) $stride, options(nostack, readonly))
        };
    }
    macro_rules! store {
        ($t:literal, $ptr:expr, $stride:expr) => {
            asm!(concat!("tilestored [{p} + {s}*1], tmm", $t),
                p = in(reg) $ptr, s = in(reg) $stride, options(nostack))
        };
    }
    macro_rules! zero {
        ($t:literal) => {
            asm!(concat!("tilezero tmm", $t), options(nostack))
        };
    }
    macro_rules! dot {
        ($c:literal, $a:literal, $b:literal) => {
            asm!(concat!("tdpbf16ps tmm", $c, ", tmm", $a, ", tmm", $b), options(nostack))
        };
    }

    /// See [`super::products_points`]; `kp` is `⌈k/2⌉`.
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn run(
        pairs: &[u32],
        pair_stride: usize,
        m: usize,
        kp: usize,
        n: usize,
        points: &[PackedBf16],
        c: &mut [f32],
        c_stride: usize,
    ) {
        let rows = m.min(16) as u8;
        // Inner blocks of 16 word columns (tiles 2, 3, 4), then the rest (tiles 5, 6, 7).
        let (full, tail) = (kp / 16 * 16, kp % 16);
        let (tail_bytes, tail_rows) = ((tail.max(1) * 4) as u16, tail.max(1) as u8);
        let config = TileConfig {
            palette: 1,
            start_row: 0,
            reserved: [0; 14],
            colsb: [64, 64, 64, 64, 64, tail_bytes, 64, 64, 0, 0, 0, 0, 0, 0, 0, 0],
            rows: [rows, rows, rows, 16, 16, rows, tail_rows, tail_rows, 0, 0, 0, 0, 0, 0, 0, 0],
        };
        let (a_stride, bc_stride) = (kp * 4, n * 4);
        // Row blocks: 0, 16, ..., and a last one ending at `m`.
        let row_starts = (0..m.div_ceil(16))
            .map(|i| if (i + 1) * 16 > m { m.saturating_sub(16) } else { i * 16 });
        // SAFETY (whole body): the caller checked the sizes and the permission.
        unsafe {
            asm!("ldtilecfg [{}]", in(reg) &config as *const TileConfig, options(nostack, readonly));
            for (xi, point) in points.iter().enumerate() {
                let a_point = pairs.as_ptr().add(xi * pair_stride);
                let c_point = c.as_mut_ptr().add(xi * c_stride);
                let w = point.words().as_ptr();
                for r0 in row_starts.clone() {
                    let a_rows = a_point.add(r0 * kp);
                    let c_rows = c_point.add(r0 * n);
                    let mut j = 0;
                    while j < n {
                        let two = j + 16 < n;
                        zero!(0);
                        if two {
                            zero!(1);
                        }
                        // The words from `q` on, `a` in tile $a, `b`'s column blocks in $b0/$b1.
                        macro_rules! block {
                            ($a:literal, $b0:literal, $b1:literal, $q:expr) => {
                                load!($a, a_rows.add($q), a_stride);
                                load!($b0, w.add($q * n + j), bc_stride);
                                dot!(0, $a, $b0);
                                if two {
                                    load!($b1, w.add($q * n + j + 16), bc_stride);
                                    dot!(1, $a, $b1);
                                }
                            };
                        }
                        for q in (0..full).step_by(16) {
                            block!(2, 3, 4, q);
                        }
                        if tail > 0 {
                            block!(5, 6, 7, full);
                        }
                        store!(0, c_rows.add(j), bc_stride);
                        if two {
                            store!(1, c_rows.add(j + 16), bc_stride);
                        }
                        j += if two { 32 } else { 16 };
                    }
                }
            }
            asm!("tilerelease", options(nostack));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bf16::{round, widen};

    #[test]
    fn shapes_that_fit_the_tiles() {
        assert!(fits(16, 32, 32));
        assert!(fits(4, 32, 32));
        assert!(fits(37, 64, 48));
        assert!(fits(1, 7, 16));
        assert!(fits(16, 48, 48), "24 word columns: a block of 16 and one of 8");
        assert!(!fits(16, 32, 24), "columns not a multiple of 16");
        assert!(!fits(0, 32, 32));
        assert!(!fits(16, 0, 32));
        assert_eq!(crate::Precision::Amx.supported(), amx_supported());
    }

    /// Three points of each shape, their buffers spaced apart, against a naive product of the
    /// same rounded operands (sums in f64): equal within f32 summation error, and nothing
    /// written between the points.
    #[test]
    fn products_equal_a_naive_product_of_the_rounded_operands() {
        if !amx_supported() {
            eprintln!("skipped: this CPU or kernel lends no AMX tiles");
            return;
        }
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
        };
        for (m, k, n) in [
            (16usize, 32usize, 32usize),
            (4, 32, 32),
            (1, 32, 16),
            (20, 32, 32),
            (37, 64, 48),
            (64, 32, 96),
            (12, 20, 32),
            (16, 7, 16),
            (16, 48, 48),
            (20, 96, 32),
            (5, 130, 16),
        ] {
            let kp = k.div_ceil(2);
            let (pair_stride, c_stride) = (m * kp + 5, m * n + 3);
            let points = 3;
            let a: Vec<Vec<f32>> =
                (0..points).map(|_| (0..m * k).map(|_| next()).collect()).collect();
            let b: Vec<Vec<f32>> =
                (0..points).map(|_| (0..k * n).map(|_| next()).collect()).collect();
            let mut pairs = vec![0u32; points * pair_stride];
            for (xi, a) in a.iter().enumerate() {
                for r in 0..m {
                    for p in 0..kp {
                        let lo = u32::from(round(a[r * k + 2 * p]));
                        let hi =
                            if 2 * p + 1 < k { u32::from(round(a[r * k + 2 * p + 1])) } else { 0 };
                        pairs[xi * pair_stride + r * kp + p] = lo | (hi << 16);
                    }
                }
            }
            let packed: Vec<PackedBf16> = b.iter().map(|b| PackedBf16::new(b, k, n)).collect();
            let mut c = vec![f32::NAN; points * c_stride];
            products_points(&pairs, pair_stride, m, &packed, &mut c, c_stride);
            for xi in 0..points {
                for r in 0..m {
                    for j in 0..n {
                        let (mut exact, mut size) = (0.0f64, 0.0f64);
                        for i in 0..k {
                            let t = f64::from(widen(round(a[xi][r * k + i])))
                                * f64::from(widen(round(b[xi][i * n + j])));
                            exact += t;
                            size += t.abs();
                        }
                        let got = f64::from(c[xi * c_stride + r * n + j]);
                        assert!(
                            (got - exact).abs() <= 1e-5 * (1.0 + size),
                            "{m}x{k}x{n} point {xi} ({r}, {j}): {got} against {exact}"
                        );
                    }
                }
                let gap = &c[xi * c_stride + m * n..(xi + 1) * c_stride];
                assert!(gap.iter().all(|v| v.is_nan()), "{m}x{k}x{n}: wrote between points");
            }
        }
    }
}
