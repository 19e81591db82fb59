//! The weights of one step, packed for the matrix kernel in the two orientations the forward
//! and backward passes multiply by (rebuilt after every optimizer update; a few hundred
//! microseconds for the tiny net).

use atomzero_infer::gemm::PackedA;
use atomzero_infer::winograd::{TILE_POINTS, transform_weights};

use crate::params::{ConvBnAt, Params};

/// A 3×3 convolution's Winograd-domain weights `U[ξ]` (`c_out × c_in`) and their transposes.
#[derive(Debug)]
pub(crate) struct PreparedConv {
    pub u: Vec<PackedA>,
    pub ut: Vec<PackedA>,
}

/// Every weight matrix of a step.
#[derive(Debug)]
pub(crate) struct Prepared {
    /// The 3×3 convolutions in forward order.
    pub convs: Vec<PreparedConv>,
    /// Zeros, as long as the widest layer (the convolutions' bias during training: batch
    /// norm follows).
    pub zero_bias: Vec<f32>,
    /// Policy output `[73][F]` and its transpose.
    pub policy_out_w: PackedA,
    pub policy_out_wt: PackedA,
    /// Value convolution `[C][F]` and its transpose.
    pub value_conv_w: PackedA,
    pub value_conv_wt: PackedA,
    /// Value hidden layer: `Whᵀ [H][C·64]` (forward) and `Wh [C·64][H]` (backward).
    pub value_hidden_wt: PackedA,
    pub value_hidden_w: PackedA,
    /// Value output: `Woᵀ [3][H]` and `Wo [H][3]`.
    pub value_out_wt: PackedA,
    pub value_out_w: PackedA,
}

/// `dst [cols][rows] = srcᵀ` for row-major `src [rows][cols]`.
fn transpose_into(src: &[f32], rows: usize, cols: usize, dst: &mut Vec<f32>) {
    dst.resize(rows * cols, 0.0);
    for r in 0..rows {
        for c in 0..cols {
            dst[c * rows + r] = src[r * cols + c];
        }
    }
}

fn prepare_conv(values: &[f32], at: &ConvBnAt, scratch: &mut Vec<f32>) -> PreparedConv {
    let u = transform_weights(&values[at.weight.clone()], at.c_out, at.c_in);
    let per = at.c_out * at.c_in;
    let mut ut = Vec::with_capacity(TILE_POINTS);
    for block in u.chunks_exact(per) {
        transpose_into(block, at.c_out, at.c_in, scratch);
        ut.push(PackedA::new(scratch, at.c_in, at.c_out));
    }
    PreparedConv {
        u: u.chunks_exact(per).map(|a| PackedA::new(a, at.c_out, at.c_in)).collect(),
        ut,
    }
}

/// `(W, Wᵀ)` packed for a row-major `rows × cols` matrix `w`.
fn both(w: &[f32], rows: usize, cols: usize, scratch: &mut Vec<f32>) -> (PackedA, PackedA) {
    transpose_into(w, rows, cols, scratch);
    (PackedA::new(w, rows, cols), PackedA::new(scratch, cols, rows))
}

impl Prepared {
    /// Packs `params`' weights.
    pub fn new(params: &Params) -> Prepared {
        let (values, layers) = (&params.values, &params.layers);
        let mut scratch = Vec::new();
        let convs = layers.convs3().into_iter().map(|at| prepare_conv(values, at, &mut scratch));
        let convs: Vec<PreparedConv> = convs.collect();
        let po = &layers.policy_out;
        let (policy_out_w, policy_out_wt) =
            both(&values[po.weight.clone()], po.c_out, po.c_in, &mut scratch);
        let vc = &layers.value_conv;
        let (value_conv_w, value_conv_wt) =
            both(&values[vc.weight.clone()], vc.c_out, vc.c_in, &mut scratch);
        let vh = &layers.value_hidden;
        let (value_hidden_w, value_hidden_wt) =
            both(&values[vh.weight.clone()], vh.d_in, vh.d_out, &mut scratch);
        let vo = &layers.value_out;
        let (value_out_w, value_out_wt) =
            both(&values[vo.weight.clone()], vo.d_in, vo.d_out, &mut scratch);
        let widest = layers.convs3().iter().map(|at| at.c_out).max().unwrap_or(0);
        Prepared {
            convs,
            zero_bias: vec![0.0; widest],
            policy_out_w,
            policy_out_wt,
            value_conv_w,
            value_conv_wt,
            value_hidden_wt,
            value_hidden_w,
            value_out_wt,
            value_out_w,
        }
    }
}
