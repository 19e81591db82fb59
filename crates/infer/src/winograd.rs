//! Winograd F(4×4, 3×3) convolution on the 8×8 board, as lc0 does it: the padded 10×10 board is
//! four overlapping 6×6 input tiles, each giving a 4×4 output tile, so a 3×3 convolution becomes
//! 36 independent matrix products `M[ξ] = U[ξ] · V[ξ]` (`[C_out × C_in] · [C_in × 4B]`) with a
//! quarter of the direct convolution's multiply-adds.
//!
//! ```text
//! U = G g Gᵀ   (weights, once at load)      V = Bᵀ d B   (input tiles)      Y = Aᵀ M A   (output tiles)
//! ```
//!
//! Activations are laid out `[C][64][B]` (channel, square, position): every transform works on
//! whole rows of `B` positions at once, contiguous in memory, so the loops vectorise. `V` and
//! `M` are `[36][C][4 · B]`, column `tile · B + position`. The `*_rows` variants are the same
//! transforms for the small-batch path's channel-inner layout, in explicit SIMD over channels.

use pulp::{Arch, Simd, WithSimd};

/// `G` (6×3): the filter transform.
const G: [[f64; 3]; 6] = [
    [1.0 / 4.0, 0.0, 0.0],
    [-1.0 / 6.0, -1.0 / 6.0, -1.0 / 6.0],
    [-1.0 / 6.0, 1.0 / 6.0, -1.0 / 6.0],
    [1.0 / 24.0, 1.0 / 12.0, 1.0 / 6.0],
    [1.0 / 24.0, -1.0 / 12.0, 1.0 / 6.0],
    [0.0, 0.0, 1.0],
];

/// Transformed tiles per output tile.
pub const TILE_POINTS: usize = 36;
/// Output tiles per board.
pub const TILES: usize = 4;

/// `U[ξ][o][i] = (G · w[o][i] · Gᵀ)[ξ]` for 3×3 weights `w [c_out][c_in][3][3]`; returns
/// `[36][c_out][c_in]`. Computed in f64.
pub fn transform_weights(weight: &[f32], c_out: usize, c_in: usize) -> Vec<f32> {
    let mut u = vec![0.0f32; TILE_POINTS * c_out * c_in];
    for o in 0..c_out {
        for i in 0..c_in {
            let g = &weight[(o * c_in + i) * 9..(o * c_in + i + 1) * 9];
            // t = G · g  (6×3)
            let mut t = [[0.0f64; 3]; 6];
            for (r, row) in t.iter_mut().enumerate() {
                for (c, value) in row.iter_mut().enumerate() {
                    *value = (0..3).map(|k| G[r][k] * f64::from(g[k * 3 + c])).sum();
                }
            }
            // U = t · Gᵀ  (6×6)
            for r in 0..6 {
                for c in 0..6 {
                    let value: f64 = (0..3).map(|k| t[r][k] * G[c][k]).sum();
                    u[((r * 6 + c) * c_out + o) * c_in + i] = value as f32;
                }
            }
        }
    }
    u
}

/// Row `row` of `Bᵀ d` for six input rows `d`, written to `out` (all of `out.len()` lanes).
#[inline(always)]
fn bt_row(row: usize, d: [&[f32]; 6], out: &mut [f32]) {
    let n = out.len();
    let [d0, d1, d2, d3, d4, d5] = d.map(|s| &s[..n]);
    match row {
        0 => {
            for l in 0..n {
                out[l] = 4.0 * d0[l] - 5.0 * d2[l] + d4[l];
            }
        }
        1 => {
            for l in 0..n {
                out[l] = -4.0 * (d1[l] + d2[l]) + d3[l] + d4[l];
            }
        }
        2 => {
            for l in 0..n {
                out[l] = 4.0 * (d1[l] - d2[l]) - d3[l] + d4[l];
            }
        }
        3 => {
            for l in 0..n {
                out[l] = 2.0 * (d3[l] - d1[l]) - d2[l] + d4[l];
            }
        }
        4 => {
            for l in 0..n {
                out[l] = 2.0 * (d1[l] - d3[l]) - d2[l] + d4[l];
            }
        }
        _ => {
            for l in 0..n {
                out[l] = 4.0 * d1[l] - 5.0 * d3[l] + d5[l];
            }
        }
    }
}

/// Row `row` of `Aᵀ m` for six rows `m`, written to `out`.
#[inline(always)]
fn at_row(row: usize, m: [&[f32]; 6], out: &mut [f32]) {
    let n = out.len();
    let [m0, m1, m2, m3, m4, m5] = m.map(|s| &s[..n]);
    match row {
        0 => {
            for l in 0..n {
                out[l] = m0[l] + (m1[l] + m2[l]) + (m3[l] + m4[l]);
            }
        }
        1 => {
            for l in 0..n {
                out[l] = (m1[l] - m2[l]) + 2.0 * (m3[l] - m4[l]);
            }
        }
        2 => {
            for l in 0..n {
                out[l] = (m1[l] + m2[l]) + 4.0 * (m3[l] + m4[l]);
            }
        }
        _ => {
            for l in 0..n {
                out[l] = (m1[l] - m2[l]) + 8.0 * (m3[l] - m4[l]) + m5[l];
            }
        }
    }
}

/// `V = Bᵀ d B` for every channel, board and tile. `input` is `[c_in][64][nb]`, `v` gets
/// `[36][c_in][4 · nb]`; `zeros` holds at least `nb` zeros (the padding), `tmp` at least
/// `36 · nb` values of scratch.
pub fn input_transform(
    input: &[f32],
    c_in: usize,
    nb: usize,
    v: &mut [f32],
    zeros: &[f32],
    tmp: &mut [f32],
) {
    let zeros = &zeros[..nb];
    let tmp = &mut tmp[..TILE_POINTS * nb];
    let v_stride = c_in * TILES * nb; // between consecutive ξ
    for c in 0..c_in {
        let board = &input[c * 64 * nb..(c + 1) * 64 * nb];
        let square = |row: isize, col: isize| -> &[f32] {
            if (0..8).contains(&row) && (0..8).contains(&col) {
                let sq = (row * 8 + col) as usize;
                &board[sq * nb..(sq + 1) * nb]
            } else {
                zeros
            }
        };
        for tile in 0..TILES {
            let (y0, x0) = (4 * (tile / 2) as isize - 1, 4 * (tile % 2) as isize - 1);
            // Columns: tmp[i][j] = (Bᵀ d)[i][j].
            for j in 0..6 {
                let x = x0 + j as isize;
                let d = [0, 1, 2, 3, 4, 5].map(|k| square(y0 + k, x));
                for i in 0..6 {
                    bt_row(i, d, &mut tmp[(i * 6 + j) * nb..(i * 6 + j + 1) * nb]);
                }
            }
            // Rows: V[i][j] = (tmp B)[i][j] = Σ_k tmp[i][k] Bᵀ[j][k].
            let column = (c * TILES + tile) * nb;
            for i in 0..6 {
                let e = [0, 1, 2, 3, 4, 5].map(|k| &tmp[(i * 6 + k) * nb..(i * 6 + k + 1) * nb]);
                // `tmp` is read-only here; the results go to `v`.
                let e: [&[f32]; 6] = e;
                for j in 0..6 {
                    let at = (i * 6 + j) * v_stride + column;
                    bt_row(j, e, &mut v[at..at + nb]);
                }
            }
        }
    }
}

/// What happens to a convolution's output after its bias is added.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Epilogue {
    /// `out = y + bias`.
    Linear,
    /// `out = max(y + bias, 0)`.
    Relu,
    /// `out = max(y + bias + out, 0)`: the residual connection, `out` holding the skip input.
    ResidualRelu,
}

/// `Y = Aᵀ M A` for every output channel, board and tile, plus `bias`, through `epilogue`,
/// into `out` (`[c_out][64][nb]`). `m` is `[36][c_out][4 · nb]`; `tmp` holds at least
/// `(24 + 1) · nb` values.
pub fn output_transform(
    m: &[f32],
    c_out: usize,
    nb: usize,
    bias: &[f32],
    epilogue: Epilogue,
    out: &mut [f32],
    tmp: &mut [f32],
) {
    let (tmp, y) = tmp[..25 * nb].split_at_mut(24 * nb);
    let m_stride = c_out * TILES * nb;
    for o in 0..c_out {
        let b = bias[o];
        let board = &mut out[o * 64 * nb..(o + 1) * 64 * nb];
        for tile in 0..TILES {
            let column = (o * TILES + tile) * nb;
            // Columns: tmp[i][j] = (Aᵀ M)[i][j], i < 4.
            for j in 0..6 {
                let rows = [0, 1, 2, 3, 4, 5].map(|k| {
                    let at = (k * 6 + j) * m_stride + column;
                    &m[at..at + nb]
                });
                for i in 0..4 {
                    at_row(i, rows, &mut tmp[(i * 6 + j) * nb..(i * 6 + j + 1) * nb]);
                }
            }
            // Rows: Y[i][j] = Σ_k tmp[i][k] Aᵀ[j][k].
            let (row0, col0) = (4 * (tile / 2), 4 * (tile % 2));
            for i in 0..4 {
                let e = [0, 1, 2, 3, 4, 5].map(|k| &tmp[(i * 6 + k) * nb..(i * 6 + k + 1) * nb]);
                for j in 0..4 {
                    at_row(j, e, y);
                    let sq = (row0 + i) * 8 + col0 + j;
                    let dst = &mut board[sq * nb..(sq + 1) * nb];
                    apply_epilogue(y, b, epilogue, dst);
                }
            }
        }
    }
}

/// `dst = epilogue(y + bias)` (reading `dst` as the skip input for [`Epilogue::ResidualRelu`]).
#[inline(always)]
pub(crate) fn apply_epilogue(y: &[f32], bias: f32, epilogue: Epilogue, dst: &mut [f32]) {
    let y = &y[..dst.len()];
    match epilogue {
        Epilogue::Linear => dst.iter_mut().zip(y).for_each(|(d, &v)| *d = v + bias),
        Epilogue::Relu => dst.iter_mut().zip(y).for_each(|(d, &v)| *d = (v + bias).max(0.0)),
        Epilogue::ResidualRelu => {
            dst.iter_mut().zip(y).for_each(|(d, &v)| *d = (v + bias + *d).max(0.0))
        }
    }
}

/// `row = epilogue(row + bias)` for [`Epilogue::Linear`] and [`Epilogue::Relu`].
#[inline]
pub(crate) fn apply_epilogue_in_place(row: &mut [f32], bias: f32, epilogue: Epilogue) {
    match epilogue {
        Epilogue::Relu => row.iter_mut().for_each(|v| *v = (*v + bias).max(0.0)),
        _ => row.iter_mut().for_each(|v| *v += bias),
    }
}

/// `Bᵀ · d` for six vectors `d` (the rows of [`bt_row`], vector by vector).
#[inline(always)]
fn bt6<S: Simd>(s: S, d: [S::f32s; 6]) -> [S::f32s; 6] {
    let (f2, f4, f5) = (s.splat_f32s(2.0), s.splat_f32s(4.0), s.splat_f32s(5.0));
    let [d0, d1, d2, d3, d4, d5] = d;
    [
        s.mul_add_f32s(f4, d0, s.sub_f32s(d4, s.mul_f32s(f5, d2))),
        s.sub_f32s(s.add_f32s(d3, d4), s.mul_f32s(f4, s.add_f32s(d1, d2))),
        s.mul_add_f32s(f4, s.sub_f32s(d1, d2), s.sub_f32s(d4, d3)),
        s.mul_add_f32s(f2, s.sub_f32s(d3, d1), s.sub_f32s(d4, d2)),
        s.mul_add_f32s(f2, s.sub_f32s(d1, d3), s.sub_f32s(d4, d2)),
        s.mul_add_f32s(f4, d1, s.sub_f32s(d5, s.mul_f32s(f5, d3))),
    ]
}

/// `Aᵀ · m` for six vectors `m` (the rows of [`at_row`], vector by vector).
#[inline(always)]
fn at4<S: Simd>(s: S, m: [S::f32s; 6]) -> [S::f32s; 4] {
    let (f2, f4, f8) = (s.splat_f32s(2.0), s.splat_f32s(4.0), s.splat_f32s(8.0));
    let [m0, m1, m2, m3, m4, m5] = m;
    let (sum12, diff12) = (s.add_f32s(m1, m2), s.sub_f32s(m1, m2));
    let (sum34, diff34) = (s.add_f32s(m3, m4), s.sub_f32s(m3, m4));
    [
        s.add_f32s(s.add_f32s(m0, sum12), sum34),
        s.mul_add_f32s(f2, diff34, diff12),
        s.mul_add_f32s(f4, sum34, sum12),
        s.add_f32s(s.mul_add_f32s(f8, diff34, diff12), m5),
    ]
}

/// `width` lanes of `src` as a vector (the rest zero).
#[inline(always)]
fn load<S: Simd>(s: S, src: &[f32], width: usize) -> S::f32s {
    if width == S::F32_LANES {
        S::as_simd_f32s(&src[..width]).0[0]
    } else {
        s.partial_load_f32s(&src[..width])
    }
}

/// `width` lanes of `v` into `dst`.
#[inline(always)]
fn store<S: Simd>(s: S, dst: &mut [f32], width: usize, v: S::f32s) {
    if width == S::F32_LANES {
        S::as_mut_simd_f32s(&mut dst[..width]).0[0] = v;
    } else {
        s.partial_store_f32s(&mut dst[..width], v);
    }
}

/// Column `x` of an input tile (rows `y0..y0 + 6`), channels `c0..c0 + width` of a
/// channel-inner board; squares off the board read as zero.
#[derive(Clone, Copy)]
struct InputColumn<'a> {
    board: &'a [f32],
    c: usize,
    c0: usize,
    width: usize,
    y0: isize,
    x: isize,
}

impl InputColumn<'_> {
    #[inline(always)]
    fn at<S: Simd>(self, s: S, i: isize, zero: S::f32s) -> S::f32s {
        let y = self.y0 + i;
        if (0..8).contains(&y) && (0..8).contains(&self.x) {
            let at = (y * 8 + self.x) as usize * self.c + self.c0;
            load(s, &self.board[at..], self.width)
        } else {
            zero
        }
    }

    #[inline(always)]
    fn load<S: Simd>(self, s: S, zero: S::f32s) -> [S::f32s; 6] {
        [
            self.at(s, 0, zero),
            self.at(s, 1, zero),
            self.at(s, 2, zero),
            self.at(s, 3, zero),
            self.at(s, 4, zero),
            self.at(s, 5, zero),
        ]
    }
}

/// Column `j` of an output tile's 36 products: `m`'s points `ξ = 6i + j`, [`xi_stride`]
/// apart, from float `at` on.
#[derive(Clone, Copy)]
struct OutputColumn<'a> {
    m: &'a [f32],
    stride: usize,
    at: usize,
    width: usize,
}

impl OutputColumn<'_> {
    #[inline(always)]
    fn load<S: Simd>(self, s: S, j: usize) -> [S::f32s; 6] {
        let point = |i: usize| &self.m[(i * 6 + j) * self.stride + self.at..];
        [
            load(s, point(0), self.width),
            load(s, point(1), self.width),
            load(s, point(2), self.width),
            load(s, point(3), self.width),
            load(s, point(4), self.width),
            load(s, point(5), self.width),
        ]
    }
}

/// Floats from one point `ξ` to the next in the small-batch path's `[36][4 · nb][c]` arrays:
/// the `4 · nb · c` of a point plus one cache line. Without the line, batches of 4 or 8
/// positions of a 32-filter net put the 36 points 2 or 4 KiB apart, all in the same few L1
/// sets, and each tile's 36 loads and stores evicted each other (measured: 4 positions took
/// 5.3 times as long as one in the input transform, 8 positions ran slower a position than 1).
pub fn xi_stride(nb: usize, c: usize) -> usize {
    TILES * nb * c + 16
}

/// [`input_transform`] for channel-inner activations, as the small-batch path lays them out:
/// `input` is `[nb][64][c_in]` (position, square, channel), and each tile's 36 points are
/// transformed in vector registers over chunks of channels (lc0's layout); `v` gets
/// `[36][4 · nb][c_in]` (row `position · 4 + tile`), the points [`xi_stride`] apart.
pub fn input_transform_rows(input: &[f32], c_in: usize, nb: usize, v: &mut [f32]) {
    assert!(input.len() >= nb * 64 * c_in && v.len() >= TILE_POINTS * xi_stride(nb, c_in));
    Arch::new().dispatch(InputRows { input, c: c_in, nb, v });
}

struct InputRows<'a> {
    input: &'a [f32],
    c: usize,
    nb: usize,
    v: &'a mut [f32],
}

impl WithSimd for InputRows<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, s: S) {
        let InputRows { input, c, nb, v } = self;
        let stride = xi_stride(nb, c);
        let zero = s.splat_f32s(0.0);
        for b in 0..nb {
            let board = &input[b * 64 * c..(b + 1) * 64 * c];
            for tile in 0..TILES {
                let (y0, x0) = (4 * (tile / 2) as isize - 1, 4 * (tile % 2) as isize - 1);
                let row = (b * TILES + tile) * c;
                for c0 in (0..c).step_by(S::F32_LANES) {
                    let width = S::F32_LANES.min(c - c0);
                    // t = Bᵀ d, column by column (`t[j]` is column j). Written as array
                    // literals of inlined calls: a zero-filled array written element by
                    // element cost a 2 KiB memset a chunk (8% of the engine's time on
                    // AVX-512), and closures (`array::from_fn`) this size are not inlined
                    // into the SIMD context (4x slower).
                    let column = |j: isize| InputColumn { board, c, c0, width, y0, x: x0 + j };
                    let t = [
                        bt6(s, column(0).load(s, zero)),
                        bt6(s, column(1).load(s, zero)),
                        bt6(s, column(2).load(s, zero)),
                        bt6(s, column(3).load(s, zero)),
                        bt6(s, column(4).load(s, zero)),
                        bt6(s, column(5).load(s, zero)),
                    ];
                    // V = t B, row by row (row i of t is element i of every column).
                    #[allow(clippy::needless_range_loop)]
                    for i in 0..6 {
                        let out = bt6(s, [t[0][i], t[1][i], t[2][i], t[3][i], t[4][i], t[5][i]]);
                        for (j, &value) in out.iter().enumerate() {
                            let at = (i * 6 + j) * stride + row + c0;
                            store(s, &mut v[at..], width, value);
                        }
                    }
                }
            }
        }
    }
}

/// [`output_transform`] for the small-batch path: `m` is `[36][4 · nb][c_out]` (the points
/// [`xi_stride`] apart), `out` gets
/// `[nb][64][c_out]` plus `bias[channel]` through `epilogue` (the skip input read from `out`),
/// each tile in vector registers over chunks of channels.
pub fn output_transform_rows(
    m: &[f32],
    c_out: usize,
    nb: usize,
    bias: &[f32],
    epilogue: Epilogue,
    out: &mut [f32],
) {
    assert!(m.len() >= TILE_POINTS * xi_stride(nb, c_out) && out.len() >= nb * 64 * c_out);
    assert!(bias.len() >= c_out);
    Arch::new().dispatch(OutputRows { m, c: c_out, nb, bias, epilogue, out });
}

struct OutputRows<'a> {
    m: &'a [f32],
    c: usize,
    nb: usize,
    bias: &'a [f32],
    epilogue: Epilogue,
    out: &'a mut [f32],
}

impl WithSimd for OutputRows<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, s: S) {
        let OutputRows { m, c, nb, bias, epilogue, out } = self;
        let stride = xi_stride(nb, c);
        let zero = s.splat_f32s(0.0);
        for b in 0..nb {
            let board = &mut out[b * 64 * c..(b + 1) * 64 * c];
            for tile in 0..TILES {
                let (row0, col0) = (4 * (tile / 2), 4 * (tile % 2));
                let row = (b * TILES + tile) * c;
                for c0 in (0..c).step_by(S::F32_LANES) {
                    let width = S::F32_LANES.min(c - c0);
                    let b_vec = load(s, &bias[c0..], width);
                    // t = Aᵀ M, column by column (`t[j]` is column j; array literals as in
                    // the input transform).
                    let column = OutputColumn { m, stride, at: row + c0, width };
                    let t = [
                        at4(s, column.load(s, 0)),
                        at4(s, column.load(s, 1)),
                        at4(s, column.load(s, 2)),
                        at4(s, column.load(s, 3)),
                        at4(s, column.load(s, 4)),
                        at4(s, column.load(s, 5)),
                    ];
                    // Y = t A, row by row, then bias and epilogue.
                    #[allow(clippy::needless_range_loop)]
                    for i in 0..4 {
                        let y = at4(s, [t[0][i], t[1][i], t[2][i], t[3][i], t[4][i], t[5][i]]);
                        for (j, &value) in y.iter().enumerate() {
                            let at = ((row0 + i) * 8 + col0 + j) * c + c0;
                            let dst = &mut board[at..];
                            let value = s.add_f32s(value, b_vec);
                            let value = match epilogue {
                                Epilogue::Linear => value,
                                Epilogue::Relu => s.max_f32s(value, zero),
                                Epilogue::ResidualRelu => {
                                    s.max_f32s(s.add_f32s(value, load(s, dst, width)), zero)
                                }
                            };
                            store(s, dst, width, value);
                        }
                    }
                }
            }
        }
    }
}

/// Row `p` of `A · y` for four rows `y` (`A` = the output transform's `Aᵀ`, transposed),
/// written to `out`.
#[inline(always)]
fn a_row(p: usize, y: [&[f32]; 4], out: &mut [f32]) {
    let n = out.len();
    let [y0, y1, y2, y3] = y.map(|s| &s[..n]);
    match p {
        0 => out.copy_from_slice(y0),
        1 => {
            for l in 0..n {
                out[l] = (y0[l] + y2[l]) + (y1[l] + y3[l]);
            }
        }
        2 => {
            for l in 0..n {
                out[l] = (y0[l] + y2[l]) - (y1[l] + y3[l]);
            }
        }
        3 => {
            for l in 0..n {
                out[l] = (y0[l] + 4.0 * y2[l]) + 2.0 * (y1[l] + 4.0 * y3[l]);
            }
        }
        4 => {
            for l in 0..n {
                out[l] = (y0[l] + 4.0 * y2[l]) - 2.0 * (y1[l] + 4.0 * y3[l]);
            }
        }
        _ => out.copy_from_slice(y3),
    }
}

/// Row `p` of `B · v` for six rows `v` (`B` = the input transform's `Bᵀ`, transposed),
/// added to `out` when `add`, else written.
#[inline(always)]
fn b_row(p: usize, v: [&[f32]; 6], out: &mut [f32], add: bool) {
    let n = out.len();
    let [v0, v1, v2, v3, v4, v5] = v.map(|s| &s[..n]);
    macro_rules! put {
        ($e:expr) => {
            if add {
                for l in 0..n {
                    out[l] += $e(l);
                }
            } else {
                for l in 0..n {
                    out[l] = $e(l);
                }
            }
        };
    }
    match p {
        0 => put!(|l: usize| 4.0 * v0[l]),
        1 => put!(|l: usize| 4.0 * (v2[l] - v1[l] + v5[l]) + 2.0 * (v4[l] - v3[l])),
        2 => put!(|l: usize| -5.0 * v0[l] - 4.0 * (v1[l] + v2[l]) - (v3[l] + v4[l])),
        3 => put!(|l: usize| (v1[l] - v2[l]) + 2.0 * (v3[l] - v4[l]) - 5.0 * v5[l]),
        4 => put!(|l: usize| (v0[l] + v1[l]) + (v2[l] + v3[l]) + v4[l]),
        _ => put!(|l: usize| v5[l]),
    }
}

/// The adjoint (transpose) of [`output_transform`] without bias or epilogue, for the
/// backward pass: `dM = A · dY · Aᵀ` for every output channel, board and tile. `dy` is
/// `[c_out][64][nb]`; `dm` gets `[36][c_out][4 · nb]` (overwritten); `tmp` holds at least
/// `24 · nb` values.
pub fn output_transform_adjoint(
    dy: &[f32],
    c_out: usize,
    nb: usize,
    dm: &mut [f32],
    tmp: &mut [f32],
) {
    let tmp = &mut tmp[..24 * nb];
    let m_stride = c_out * TILES * nb;
    for o in 0..c_out {
        let board = &dy[o * 64 * nb..(o + 1) * 64 * nb];
        for tile in 0..TILES {
            let (row0, col0) = (4 * (tile / 2), 4 * (tile % 2));
            // tmp[p][j] = (A · dY)[p][j]  (6 × 4): column j of the tile's four rows.
            for j in 0..4 {
                let y = [0, 1, 2, 3].map(|i| {
                    let sq = (row0 + i) * 8 + col0 + j;
                    &board[sq * nb..(sq + 1) * nb]
                });
                for p in 0..6 {
                    a_row(p, y, &mut tmp[(p * 4 + j) * nb..(p * 4 + j + 1) * nb]);
                }
            }
            // dM[p][q] = (tmp · Aᵀ)[p][q] = (A · tmpᵀ)[q][p].
            let column = (o * TILES + tile) * nb;
            for p in 0..6 {
                let e = [0, 1, 2, 3].map(|j| &tmp[(p * 4 + j) * nb..(p * 4 + j + 1) * nb]);
                for q in 0..6 {
                    let at = (p * 6 + q) * m_stride + column;
                    a_row(q, e, &mut dm[at..at + nb]);
                }
            }
        }
    }
}

/// The adjoint (transpose) of [`input_transform`], for the backward pass: `dX = Σ B · dV · Bᵀ`
/// over each board's four tiles (they overlap, so their contributions add up; the padding is
/// dropped). `dv` is `[36][c_in][4 · nb]`; `dx` gets `[c_in][64][nb]` (overwritten); `tmp`
/// holds at least `36 · nb` values.
pub fn input_transform_adjoint(
    dv: &[f32],
    c_in: usize,
    nb: usize,
    dx: &mut [f32],
    tmp: &mut [f32],
) {
    let tmp = &mut tmp[..TILE_POINTS * nb];
    let v_stride = c_in * TILES * nb;
    for c in 0..c_in {
        let board = &mut dx[c * 64 * nb..(c + 1) * 64 * nb];
        let mut written = [false; 64];
        for tile in 0..TILES {
            let (y0, x0) = (4 * (tile / 2) as isize - 1, 4 * (tile % 2) as isize - 1);
            let column = (c * TILES + tile) * nb;
            // tmp[p][j] = (B · dV)[p][j]: column j of the tile's six rows.
            for j in 0..6 {
                let v = [0, 1, 2, 3, 4, 5].map(|i| {
                    let at = (i * 6 + j) * v_stride + column;
                    &dv[at..at + nb]
                });
                for p in 0..6 {
                    b_row(p, v, &mut tmp[(p * 6 + j) * nb..(p * 6 + j + 1) * nb], false);
                }
            }
            // dd[p][q] = (tmp · Bᵀ)[p][q] = (B · tmpᵀ)[q][p], onto square (y0 + p, x0 + q).
            for p in 0..6 {
                let y = y0 + p as isize;
                if !(0..8).contains(&y) {
                    continue;
                }
                let e = [0, 1, 2, 3, 4, 5].map(|j| &tmp[(p * 6 + j) * nb..(p * 6 + j + 1) * nb]);
                for q in 0..6 {
                    let x = x0 + q as isize;
                    if !(0..8).contains(&x) {
                        continue;
                    }
                    let sq = (y * 8 + x) as usize;
                    b_row(q, e, &mut board[sq * nb..(sq + 1) * nb], written[sq]);
                    written[sq] = true;
                }
            }
        }
    }
}

/// The adjoint (transpose) of [`transform_weights`], for the weight gradient: `dW = Gᵀ · dU ·
/// G` for `du [36][c_out][c_in]`; `dw` gets `[c_out][c_in][3][3]` (overwritten). Computed in
/// f64.
pub fn transform_weights_adjoint(du: &[f32], c_out: usize, c_in: usize, dw: &mut [f32]) {
    for o in 0..c_out {
        for i in 0..c_in {
            let d = |r: usize, c: usize| f64::from(du[((r * 6 + c) * c_out + o) * c_in + i]);
            // t = Gᵀ · dU  (3×6)
            let mut t = [[0.0f64; 6]; 3];
            for (a, row) in t.iter_mut().enumerate() {
                for (c, value) in row.iter_mut().enumerate() {
                    *value = (0..6).map(|r| G[r][a] * d(r, c)).sum();
                }
            }
            // dW = t · G  (3×3)
            let out = &mut dw[(o * c_in + i) * 9..(o * c_in + i + 1) * 9];
            for a in 0..3 {
                for b in 0..3 {
                    out[a * 3 + b] = (0..6).map(|c| t[a][c] * G[c][b]).sum::<f64>() as f32;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gemm::{PackedA, gemm};

    /// Direct 3×3 "same" cross-correlation (Burn's conv2d) on `[c][64][nb]` data.
    fn direct(input: &[f32], w: &[f32], c_in: usize, c_out: usize, nb: usize) -> Vec<f32> {
        let mut out = vec![0.0f32; c_out * 64 * nb];
        for o in 0..c_out {
            for b in 0..nb {
                for y in 0..8i32 {
                    for x in 0..8i32 {
                        let mut acc = 0.0f64;
                        for i in 0..c_in {
                            for ky in 0..3i32 {
                                for kx in 0..3i32 {
                                    let (yy, xx) = (y + ky - 1, x + kx - 1);
                                    if (0..8).contains(&yy) && (0..8).contains(&xx) {
                                        let sq = (yy * 8 + xx) as usize;
                                        acc += f64::from(
                                            w[(o * c_in + i) * 9 + (ky * 3 + kx) as usize],
                                        ) * f64::from(input[(i * 64 + sq) * nb + b]);
                                    }
                                }
                            }
                        }
                        out[(o * 64 + (y * 8 + x) as usize) * nb + b] = acc as f32;
                    }
                }
            }
        }
        out
    }

    #[test]
    fn winograd_equals_direct_convolution() {
        let (c_in, c_out) = (5, 7);
        let mut state = 12345u64;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        };
        for nb in [1, 3, 16] {
            let input: Vec<f32> = (0..c_in * 64 * nb).map(|_| next()).collect();
            let w: Vec<f32> = (0..c_out * c_in * 9).map(|_| next()).collect();
            let expected = direct(&input, &w, c_in, c_out, nb);

            let u = transform_weights(&w, c_out, c_in);
            let mut v = vec![0.0; TILE_POINTS * c_in * TILES * nb];
            let mut m = vec![0.0; TILE_POINTS * c_out * TILES * nb];
            let mut tmp = vec![0.0; TILE_POINTS * nb];
            input_transform(&input, c_in, nb, &mut v, &vec![0.0; nb], &mut tmp);
            let columns = TILES * nb;
            for xi in 0..TILE_POINTS {
                gemm(
                    &PackedA::new(&u[xi * c_out * c_in..(xi + 1) * c_out * c_in], c_out, c_in),
                    &v[xi * c_in * columns..(xi + 1) * c_in * columns],
                    columns,
                    &mut m[xi * c_out * columns..(xi + 1) * c_out * columns],
                );
            }
            let mut out = vec![0.0; c_out * 64 * nb];
            output_transform(
                &m,
                c_out,
                nb,
                &vec![0.0; c_out],
                Epilogue::Linear,
                &mut out,
                &mut tmp,
            );
            for (a, b) in out.iter().zip(&expected) {
                assert!((a - b).abs() < 1e-4, "{a} vs {b}");
            }
        }
    }

    /// `<T x, y> = <x, Tᵀ y>` for random `x`, `y`: each adjoint is the transpose of its
    /// transform (a sign, an index or a coefficient wrong breaks the equality).
    #[test]
    fn adjoints_are_the_transposes_of_the_transforms() {
        let mut next = crate::gemm::tests::uniform(99);
        let dot = |a: &[f32], b: &[f32]| -> f64 {
            a.iter().zip(b).map(|(&x, &y)| f64::from(x) * f64::from(y)).sum()
        };
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-4 * (1.0 + a.abs().max(b.abs()));
        let (c, nb) = (3, 5);
        let mut tmp = vec![0.0f32; 72 * nb];

        // Input transform.
        let x: Vec<f32> = (0..c * 64 * nb).map(|_| next()).collect();
        let dv: Vec<f32> = (0..TILE_POINTS * c * TILES * nb).map(|_| next()).collect();
        let mut v = vec![0.0f32; dv.len()];
        input_transform(&x, c, nb, &mut v, &vec![0.0; nb], &mut tmp);
        let mut dx = vec![f32::NAN; x.len()];
        input_transform_adjoint(&dv, c, nb, &mut dx, &mut tmp);
        assert!(close(dot(&v, &dv), dot(&x, &dx)), "{} vs {}", dot(&v, &dv), dot(&x, &dx));

        // Output transform.
        let m: Vec<f32> = (0..TILE_POINTS * c * TILES * nb).map(|_| next()).collect();
        let dy: Vec<f32> = (0..c * 64 * nb).map(|_| next()).collect();
        let mut y = vec![0.0f32; dy.len()];
        output_transform(&m, c, nb, &vec![0.0; c], Epilogue::Linear, &mut y, &mut tmp);
        let mut dm = vec![f32::NAN; m.len()];
        output_transform_adjoint(&dy, c, nb, &mut dm, &mut tmp);
        assert!(close(dot(&y, &dy), dot(&m, &dm)), "{} vs {}", dot(&y, &dy), dot(&m, &dm));

        // Weight transform.
        let (c_out, c_in) = (4, 3);
        let w: Vec<f32> = (0..c_out * c_in * 9).map(|_| next()).collect();
        let du: Vec<f32> = (0..TILE_POINTS * c_out * c_in).map(|_| next()).collect();
        let u = transform_weights(&w, c_out, c_in);
        let mut dw = vec![f32::NAN; w.len()];
        transform_weights_adjoint(&du, c_out, c_in, &mut dw);
        assert!(close(dot(&u, &du), dot(&w, &dw)), "{} vs {}", dot(&u, &du), dot(&w, &dw));
    }
}
