/* conv_winograd.h: the plan of the Winograd convolution algorithms (WINOGRAD and
   WINOGRAD_NONFUSED, every direction cuDNN 8.2 has them in), shared by the host and CUDA entries.

   Main decision: every direction is one 2-D minimal filtering algorithm F(m x m, r x r) applied
   to alpha x alpha tiles (alpha = m + r - 1), with the channel sums done by one batched GEMM per
   transformed position xi (alpha^2 of them, times the groups):

     Y = A^T [ (G g G^T) (.) (B^T d B) ] A       summed over channels inside the GEMM

   d is an alpha x alpha window of the "input" role, g an r x r tile of the "filter" role, Y an
   m x m tile of the "output" role. The roles per direction (unit strides and dilations):
     forward          d: x windows at tile*m - pad         g: w[k][c]                Y: y tiles
     backward data    d: dy windows at tile*m - (R-1-pad)  g: w[k][c] rotated 180    Y: dx tiles
     backward filter  d: x windows at tile*r - pad         g: dy[n][k] tiles of r    Y: dw[k][c]
   (backward data is the forward convolution of dy with the rotated, transposed filter and the
   complementary padding; the filter gradient is F(R x R, t x t) with the dy tile as the filter,
   and its GEMM sums over images and tiles, so A^T . A runs once per (k, c) at the end.) In
   CONVOLUTION mode the filter is mirrored, which undoes the rotation of backward data and mirrors
   the stored dw. Windows and tiles read zero outside their tensor; outputs beyond the tensor are
   dropped.

   Tiles: WINOGRAD (3x3) runs F(2x2, 3x3); WINOGRAD_NONFUSED runs F(4x4, 3x3) and F(2x2, 5x5);
   the filter gradient runs F(3x3, 2x2) and F(5x5, 2x2). Transformed tensors are float:
     U [xi][o][i]  the filter role: o = the GEMM's output channel (all groups), i = its reduction
                   channel within the group (forward: U[xi][k][c]; backward data U[xi][c][k]);
                   for the filter gradient U[xi][k][t] (t: image-and-tile index, N*tiles)
     V [xi][ch][t] the input role, ch over all channels of the input role
     M [xi][o][t]  the products (filter gradient: M[xi][k][c])
   and the GEMM of batch b = xi * groups + g is row-major with uniform batch strides:
     forward, backward data   M_b [o x T] = U_b [o x i] * V_b [i x T]
     backward filter          M_b [K/G x C/G] = U_b [K/G x T] * V_b^T            (trans_b)

   The matrices come from the Toom-Cook construction (conv_winograd.c derives them) on the points
   0, 1, -1 (alpha 4) or 0, 1, -1, 1/2, -2 (alpha 6), plus the point at infinity. */
#ifndef OCD_PROBLEM_CONV_WINOGRAD_H
#define OCD_PROBLEM_CONV_WINOGRAD_H

#include "problem/conv.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OCD_WINO_MAX_ALPHA 6

struct ocd_conv_wino_plan {
    int m, r, alpha; /* F(m x m, r x r) on alpha x alpha tiles */
    int64_t tiles[2];  /* tiles along H and W of the tiled plane (output plane; dy for dw) */
    int64_t step;      /* tile pitch on that plane: m, or r for the filter gradient */
    int shift[2];      /* the input window of tile t starts at t * step - shift */
    int64_t ntiles;    /* T = N * tiles[0] * tiles[1] */
    int64_t in_ch;     /* channels of the input role: C (K for backward data) */
    int64_t out_ch;    /* channels of the output role: K (C for backward data; K for dw) */
    /* the batched GEMM: batch = alpha^2 * groups, row-major, C_b = A_b * op(B_b) */
    int64_t batch, gm, gn, gk;
    bool trans_b;
    int64_t lda, ldb, ldc, stride_a, stride_b, stride_c;
    int64_t u_elems, v_elems, m_elems; /* floats of U, V, M (U at 0, V and M after it) */
    /* the transforms, row-major: at m x alpha, g alpha x r, bt alpha x alpha */
    float at[OCD_WINO_MAX_ALPHA * OCD_WINO_MAX_ALPHA];
    float g[OCD_WINO_MAX_ALPHA * OCD_WINO_MAX_ALPHA];
    float bt[OCD_WINO_MAX_ALPHA * OCD_WINO_MAX_ALPHA];
    bool rotate; /* the filter role reads w mirrored (backward data xor CONVOLUTION mode) */
};

/* Fills the plan of WINOGRAD (nonfused false) or WINOGRAD_NONFUSED for a problem the documented
   rules admit (ocd_conv_algo_rejects); returns a reason when these entries cannot run it. */
const char *ocd_conv_wino_plan_init(struct ocd_conv_wino_plan *plan, const struct ocd_conv_problem *p, bool nonfused);

/* Workspace bytes: U, V and M in float, each 256-byte aligned. */
size_t ocd_conv_wino_workspace(const struct ocd_conv_wino_plan *plan);
/* Offsets in floats of V and M within the workspace (U is at 0). */
int64_t ocd_conv_wino_v_offset(const struct ocd_conv_wino_plan *plan);
int64_t ocd_conv_wino_m_offset(const struct ocd_conv_wino_plan *plan);

#ifdef __cplusplus
}
#endif

#endif /* OCD_PROBLEM_CONV_WINOGRAD_H */
