//! Matrix products on row-major `f32` slices, through ndarray's safe `general_mat_mul`
//! (matrixmultiply's packed, cache-blocked sgemm with runtime-detected AVX2/FMA kernels;
//! single-threaded).

use ndarray::linalg::general_mat_mul;
use ndarray::{ArrayView2, ArrayViewMut2};

/// `c = a · b` with `a [m × k]`, `b [k × n]`, `c [m × n]`, all row-major and exactly that long.
///
/// The callers size every buffer from the architecture, so a length mismatch is a bug in this
/// crate, not bad input.
pub(crate) fn gemm(m: usize, k: usize, n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    let a = ArrayView2::from_shape((m, k), a).expect("gemm: a is m x k");
    let b = ArrayView2::from_shape((k, n), b).expect("gemm: b is k x n");
    let mut c = ArrayViewMut2::from_shape((m, n), c).expect("gemm: c is m x n");
    general_mat_mul(1.0, &a, &b, 0.0, &mut c);
}
