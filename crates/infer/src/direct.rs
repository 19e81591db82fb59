//! A 3×3 convolution of one board in the channel-inner layout (`[64][C]`, square then
//! channel), computed directly, tap by tap, without the taps that fall off the board.
//!
//! At one position a wide net's Winograd weights are used by too few tiles to pay for
//! themselves, and the main path's direct product runs all nine taps over a zero-padded
//! board. Here the output squares are grouped so that every square of a group has the same
//! taps on the board (a row's six inner squares, an edge column's six inner squares, the
//! four corners), and a group runs only those: 504 square-taps of work instead of 576 (the
//! 484 on the board plus the corners' 20). Per tap and input channel, each of a group's
//! squares broadcasts its input value and the tap's weight row is loaded as vectors over the
//! output channels, so nothing is copied or packed per call.

use pulp::{Arch, Simd, WithSimd};

/// Squares per register block (6 × 4 AVX-512 vectors = 24 accumulators).
const R: usize = 6;

/// One tap of a group: the tap (`ky · 3 + kx`) and each square's input square (`None`: off
/// the board, read as zeros; only the corners have such).
#[derive(Clone, Debug)]
struct Pass {
    tap: usize,
    inputs: [Option<u8>; R],
}

/// Output squares that share their taps on the board.
#[derive(Clone, Debug)]
struct Group {
    squares: Vec<u8>,
    passes: Vec<Pass>,
}

/// The groups of an 8×8 board (see the module docs).
fn groups() -> Vec<Group> {
    let square = |x: usize, y: usize| (y * 8 + x) as u8;
    let mut sets: Vec<Vec<u8>> = Vec::new();
    for y in 0..8 {
        sets.push((1..7).map(|x| square(x, y)).collect());
    }
    for x in [0, 7] {
        sets.push((1..7).map(|y| square(x, y)).collect());
    }
    sets.push(vec![square(0, 0), square(7, 0), square(0, 7), square(7, 7)]);
    sets.into_iter()
        .map(|squares| {
            let passes = (0..9)
                .filter_map(|tap| {
                    let inputs: [Option<u8>; R] = std::array::from_fn(|r| {
                        let &s = squares.get(r)?;
                        let (x, y) = (
                            (s % 8) as i32 + (tap % 3) as i32 - 1,
                            (s / 8) as i32 + (tap / 3) as i32 - 1,
                        );
                        ((0..8).contains(&x) && (0..8).contains(&y)).then(|| (y * 8 + x) as u8)
                    });
                    inputs.iter().any(Option::is_some).then_some(Pass { tap, inputs })
                })
                .collect();
            Group { squares, passes }
        })
        .collect()
}

/// A 3×3 convolution's weights as `[9][c_in][c_out]`, ready for [`DirectConv::forward`].
#[derive(Clone, Debug)]
pub(crate) struct DirectConv {
    c_in: usize,
    c_out: usize,
    w: Vec<f32>,
    groups: Vec<Group>,
    /// `c_in` zeros: the input row of an off-board tap.
    zeros: Vec<f32>,
}

impl DirectConv {
    /// From `weight [c_out][c_in][3][3]`.
    pub(crate) fn new(weight: &[f32], c_out: usize, c_in: usize) -> DirectConv {
        let mut w = vec![0.0f32; 9 * c_in * c_out];
        for o in 0..c_out {
            for i in 0..c_in {
                for tap in 0..9 {
                    w[(tap * c_in + i) * c_out + o] = weight[(o * c_in + i) * 9 + tap];
                }
            }
        }
        DirectConv { c_in, c_out, w, groups: groups(), zeros: vec![0.0; c_in] }
    }

    /// `out [64][c_out] = conv(input [64][c_in])` (no bias).
    pub(crate) fn forward(&self, input: &[f32], out: &mut [f32]) {
        self.forward_on(Arch::new(), input, out);
    }

    /// [`DirectConv::forward`] with the instruction set of `arch` (tests pass each one).
    fn forward_on<A: Dispatch>(&self, arch: A, input: &[f32], out: &mut [f32]) {
        let (c_in, c_out) = (self.c_in, self.c_out);
        assert!(input.len() >= 64 * c_in && out.len() >= 64 * c_out, "direct conv: buffer sizes");
        arch.run(Direct { conv: self, input: &input[..64 * c_in], out: &mut out[..64 * c_out] });
    }
}

/// Runs the kernel with an instruction set: [`Arch`]'s runtime choice, or a given one.
trait Dispatch {
    fn run(self, op: Direct<'_>);
}

impl Dispatch for Arch {
    fn run(self, op: Direct<'_>) {
        self.dispatch(op)
    }
}

#[cfg(test)]
impl Dispatch for pulp::Scalar {
    fn run(self, op: Direct<'_>) {
        <pulp::Scalar as Simd>::vectorize(self, op)
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
impl Dispatch for pulp::x86::V3 {
    fn run(self, op: Direct<'_>) {
        <pulp::x86::V3 as Simd>::vectorize(self, op)
    }
}

struct Direct<'a> {
    conv: &'a DirectConv,
    input: &'a [f32],
    out: &'a mut [f32],
}

impl WithSimd for Direct<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        // AVX-512 (32 registers): 4 vectors per square; AVX2 (16): 2.
        if S::F32_LANES >= 16 { run::<S, 4>(simd, self) } else { run::<S, 2>(simd, self) }
    }
}

#[inline(always)]
fn run<S: Simd, const NV: usize>(simd: S, op: Direct<'_>) {
    let Direct { conv, input, out } = op;
    let zeros = &conv.zeros[..];
    let (c_out, lanes) = (conv.c_out, S::F32_LANES);
    for group in &conv.groups {
        let mut j = 0;
        while j + NV * lanes <= c_out {
            block::<S, NV>(simd, conv, group, input, zeros, j, NV * lanes, out);
            j += NV * lanes;
        }
        while j < c_out {
            let width = lanes.min(c_out - j);
            block::<S, 1>(simd, conv, group, input, zeros, j, width, out);
            j += width;
        }
    }
}

/// Columns `j..j + width` of the group's output squares (`width ≤ NV · lanes`; below
/// `NV · lanes` only with `NV = 1`, as a partial vector).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn block<S: Simd, const NV: usize>(
    simd: S,
    conv: &DirectConv,
    group: &Group,
    input: &[f32],
    zeros: &[f32],
    j: usize,
    width: usize,
    out: &mut [f32],
) {
    let (c_in, c_out, lanes) = (conv.c_in, conv.c_out, S::F32_LANES);
    let zero = simd.splat_f32s(0.0);
    let mut acc = [[zero; NV]; R];
    for pass in &group.passes {
        let rows: [&[f32]; R] = std::array::from_fn(|r| match pass.inputs[r] {
            Some(q) => &input[q as usize * c_in..(q as usize + 1) * c_in],
            None => &zeros[..c_in],
        });
        let w = &conv.w[pass.tap * c_in * c_out..(pass.tap + 1) * c_in * c_out];
        for ci in 0..c_in {
            let row = &w[ci * c_out + j..ci * c_out + j + width];
            let v: [S::f32s; NV] = if width == NV * lanes {
                let (vs, _) = S::as_simd_f32s(row);
                std::array::from_fn(|x| vs[x])
            } else {
                [simd.partial_load_f32s(row); NV]
            };
            for r in 0..R {
                let a = simd.splat_f32s(rows[r][ci]);
                for x in 0..NV {
                    acc[r][x] = simd.mul_add_f32s(a, v[x], acc[r][x]);
                }
            }
        }
    }
    for (r, &s) in group.squares.iter().enumerate() {
        let at = s as usize * c_out + j;
        let dst = &mut out[at..at + width];
        if width == NV * lanes {
            let (vs, _) = S::as_mut_simd_f32s(dst);
            vs[..NV].copy_from_slice(&acc[r]);
        } else {
            simd.partial_store_f32s(dst, acc[r][0]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `out[p][o] = Σ w[o][i][ky][kx] · in[p + (ky − 1, kx − 1)][i]`, zero off the board.
    fn naive(weight: &[f32], input: &[f32], c_out: usize, c_in: usize) -> Vec<f32> {
        let mut out = vec![0.0f32; 64 * c_out];
        for p in 0..64 {
            let (x, y) = ((p % 8) as i32, (p / 8) as i32);
            for o in 0..c_out {
                let mut sum = 0.0;
                for tap in 0..9 {
                    let (qx, qy) = (x + (tap % 3) as i32 - 1, y + (tap / 3) as i32 - 1);
                    if !(0..8).contains(&qx) || !(0..8).contains(&qy) {
                        continue;
                    }
                    let q = (qy * 8 + qx) as usize;
                    for i in 0..c_in {
                        sum += weight[(o * c_in + i) * 9 + tap] * input[q * c_in + i];
                    }
                }
                out[p * c_out + o] = sum;
            }
        }
        out
    }

    #[test]
    fn groups_cover_every_square_once_with_every_tap_on_the_board() {
        let groups = groups();
        let mut seen = [0; 64];
        let mut square_taps = 0;
        for g in &groups {
            assert!(g.squares.len() <= R);
            for &s in &g.squares {
                seen[s as usize] += 1;
            }
            square_taps += g.passes.len() * g.squares.len();
        }
        assert_eq!(seen, [1; 64]);
        assert_eq!(square_taps, 504);
    }

    #[test]
    fn direct_convolution_equals_the_naive_one_on_every_instruction_set() {
        let mut next = crate::gemm::tests::uniform(11);
        // Widths with full blocks, single vectors and partial vectors on AVX-512 and AVX2.
        for (c_in, c_out) in [(1, 1), (22, 128), (128, 128), (7, 40), (16, 73), (32, 32), (5, 200)]
        {
            let weight: Vec<f32> = (0..c_out * c_in * 9).map(|_| next()).collect();
            let input: Vec<f32> = (0..64 * c_in).map(|_| next()).collect();
            let want = naive(&weight, &input, c_out, c_in);
            let conv = DirectConv::new(&weight, c_out, c_in);
            let check = |got: &[f32], what: &str| {
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert!((g - w).abs() < 1e-3, "{what} {c_in}->{c_out} at {i}: {g} vs {w}");
                }
            };
            let mut out = vec![f32::NAN; 64 * c_out];
            conv.forward(&input, &mut out);
            check(&out, "dispatched");
            let mut out = vec![f32::NAN; 64 * c_out];
            conv.forward_on(pulp::Scalar::new(), &input, &mut out);
            check(&out, "scalar");
            #[cfg(target_arch = "x86_64")]
            if let Some(simd) = pulp::x86::V3::try_new() {
                let mut out = vec![f32::NAN; 64 * c_out];
                conv.forward_on(simd, &input, &mut out);
                check(&out, "avx2");
            }
        }
    }
}
