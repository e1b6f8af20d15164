/* conv_s2d.c: the filter gradient of a strided convolution over few channels (an RGB network's
   first layer: C = 3, 7x7, stride 2) as the filter gradient of a unit-stride convolution over the
   input re-laid space-to-depth (entries host:wgrad_s2d and cuda:wgrad_s2d).

   Main decision: no kernel of its own. With stride u, input pixel h = u i + a (a < u) is pixel i of
   "phase" a; output pixel p reads h = u p - pad + r, i.e. pixel i = p + m of phase a, where
   r - pad = u m + a. So the convolution is a unit-stride one over an input of u u C channels
   (phase (a, b)'s C channels side by side), with R' = (R - 1 - pad) / u - m0 + 1 taps a dim
   (m0 = floor(-pad / u): the block rows the first tap reaches above the image) and no padding
   once -m0 rows of zeros lead the re-laid input, which then has P + R' - 1 rows and Q + S' - 1
   columns (zeros past the image). Tap r of the filter is tap r' = m - m0 of phase a of the
   re-laid one; the re-laid taps that no r reaches (r < 0 or r >= R) are computed and dropped.
   The channel-padded GEMMs multiply 8 channels a tap where C = 3 has 3, and the few-channel
   kernel unpacks every tile's patch in shared memory; re-laid, the GEMM's K is u u C padded to 8
   (16 for the stem) over R' S' = 16 taps: 256 columns for the stem's 147 (1.74 times the
   multiply-adds), on the implicit GEMM's channel-contiguous loads.

   The run: the re-laid input (zeros first, then u u strided copies of x) and the re-laid filter
   gradient in the workspace, the unit-stride filter gradient through the registry's pick for the
   same algorithm (alpha, beta 0), then u u strided copies of its taps into dw with beta. The
   copies are the elementwise engine's (ops/tensor_ops.h), so the entry runs on either backend.

   Constraints (each a reason): the filter gradient, 2-D, no groups, cross-correlation, no
   dilation, one stride of 2 or more in both dims; half or bfloat16 data, C not a multiple of 8
   and u u C <= 32; dy with its channels innermost (the implicit GEMM reads it as it lies); an
   entry that serves the re-laid problem. On CUDA it runs ahead of the few-channel kernel, in
   0.64-0.73 of its time on the stem (an H100, batch 64 and 256); the host entry is listed after
   the host's GEMMs, where it serves only a pinned engine or a disable list (there the re-laid
   problem took as long as the stem's own: 66 against 70 ms, fp16, batch 4, a 2-core machine).

   The forward pass re-laid the same way (on the cp.async implicit GEMM) took 1.17-1.38 times the
   few-channel forward kernel's time, which K = C R S packed serves without copies: not an entry. */
#include "cnn/conv.h"

#include "core/impl.h"
#include "core/reasons.h"
#include "ops/tensor_ops.h"

#include <string.h>

#define S2D_ESIZE 2 /* the bytes of an element: half and bfloat16 */

struct s2d_plan {
    int u;            /* the stride: the block's side */
    int m0[2];        /* floor(-pad / u) per dim: the block rows (columns) above the first pixel */
    int taps[2];      /* R', S': the re-laid filter's taps */
    int64_t cp;       /* the re-laid channels: u u C padded to a multiple of 8 */
    int64_t in[2];    /* the re-laid input's rows and columns: P + R' - 1, Q + S' - 1 */
    size_t x_bytes, w_bytes, sub_bytes; /* the workspace's parts, each 256-byte aligned */
    const struct ocd_conv_impl *sub;    /* the entry the registry picked for the re-laid problem */
};
OCD_IMPL_PLAN_FITS(struct s2d_plan);

/* floor(a / b) for b > 0. */
static int floor_div(int a, int b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* A 4-D view of p's type, dims (n, c, h, w) in those strides. */
static struct ocd_tensor_view view4(cudnnDataType_t t, const int64_t dims[4], const int64_t strides[4])
{
    struct ocd_tensor_view v;
    memset(&v, 0, sizeof v);
    v.dtype = t, v.rank = 4, v.vect = 1;
    for (int d = 0; d < 4; d++) v.dims[d] = dims[d], v.strides[d] = strides[d];
    return v;
}

/* The re-laid input (N, C', rows, columns), packed channels-last. */
static struct ocd_tensor_view relaid_input(const struct ocd_conv_problem *p, const struct s2d_plan *pl)
{
    const int64_t dims[4] = {p->s.n, pl->cp, pl->in[0], pl->in[1]};
    const int64_t strides[4] = {pl->in[0] * pl->in[1] * pl->cp, 1, pl->in[1] * pl->cp, pl->cp};
    return view4(p->x.dtype, dims, strides);
}

/* The re-laid filter (K, C', R', S'), packed KRSC. */
static struct ocd_tensor_view relaid_filter(const struct ocd_conv_problem *p, const struct s2d_plan *pl)
{
    const int64_t dims[4] = {p->s.k, pl->cp, pl->taps[0], pl->taps[1]};
    const int64_t strides[4] = {pl->taps[0] * pl->taps[1] * pl->cp, 1, pl->taps[1] * pl->cp, pl->cp};
    return view4(p->w.dtype, dims, strides);
}

/* The unit-stride filter gradient of p over the re-laid input at x (its filter gradient at w):
   dy as it is, alpha, beta 0. */
static void relaid_problem(const struct ocd_conv_problem *p, const struct s2d_plan *pl, void *x, void *w,
                           struct ocd_conv_problem *sub)
{
    *sub = *p;
    memset(&sub->ep, 0, sizeof sub->ep);
    sub->s.c = pl->cp;
    for (int d = 0; d < 2; d++) {
        sub->s.in[d] = pl->in[d], sub->s.filt[d] = pl->taps[d];
        sub->s.pad[d] = 0, sub->s.stride[d] = 1, sub->s.dilation[d] = 1;
    }
    sub->x = relaid_input(p, pl), sub->w = relaid_filter(p, pl);
    sub->w_format = CUDNN_TENSOR_NHWC;
    sub->x_data = x, sub->w_data = w;
    sub->beta = 0;
}

static const char *s2d_plan_of(cudnnHandle_t h, const void *problem, void *plan)
{
    const struct ocd_conv_problem *p = problem;
    struct s2d_plan *pl = plan;
    memset(pl, 0, sizeof *pl);
    const struct ocd_conv_shape *s = &p->s;
    if (p->dir != OCD_CONV_BWD_FILTER) return "the filter gradient only";
    if (s->nsp != 2 || s->groups != 1) return "2-D, without groups";
    if (s->flip) return "cross-correlation only";
    if (s->dilation[0] != 1 || s->dilation[1] != 1) return "no dilation";
    if (s->stride[0] != s->stride[1] || s->stride[0] < 2) return "one stride of 2 or more in both dims";
    const cudnnDataType_t t = p->x.dtype;
    if ((t != CUDNN_DATA_HALF && t != CUDNN_DATA_BFLOAT16) || p->y.dtype != t || p->w.dtype != t) return OCD_REASON_DTYPE;
    const int u = (int)s->stride[0];
    if (s->c % 8 == 0 || (int64_t)u * u * s->c > 32)
        return "channels a multiple of 8, or more than 32 re-laid (the channel-padded GEMMs serve)";
    if (p->y.dims[1] > 1 && p->y.strides[1] != 1) return "dy's channels are not innermost";
    pl->u = u;
    pl->cp = ((int64_t)u * u * s->c + 7) / 8 * 8;
    for (int d = 0; d < 2; d++) {
        const int pad = (int)s->pad[d], m0 = floor_div(-pad, u);
        pl->m0[d] = m0;
        pl->taps[d] = floor_div((int)s->filt[d] - 1 - pad, u) - m0 + 1;
        pl->in[d] = s->out[d] + pl->taps[d] - 1;
    }
    pl->x_bytes = ocd_ws_round((size_t)(s->n * pl->cp * pl->in[0] * pl->in[1]) * S2D_ESIZE);
    pl->w_bytes = ocd_ws_round((size_t)(s->k * pl->cp * pl->taps[0] * pl->taps[1]) * S2D_ESIZE);
    struct ocd_conv_problem sub;
    relaid_problem(p, pl, NULL, NULL, &sub);
    char why[512];
    struct ocd_impl_plan sub_plan;
    pl->sub = ocd_conv_pick(h, &sub, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, why, sizeof why, &sub_plan);
    if (pl->sub == NULL) return "no entry serves the re-laid filter gradient";
    pl->sub_bytes = ocd_conv_impl_workspace(h, pl->sub, &sub, &sub_plan);
    return NULL;
}

static size_t s2d_workspace(cudnnHandle_t h, const void *problem, const void *plan)
{
    const struct s2d_plan *pl = plan;
    return 256 + pl->x_bytes + pl->w_bytes + pl->sub_bytes; /* 256: room to align the caller's pointer */
}

/* The first of the re-laid taps of phase a that reaches a tap of the filter (of `filt` taps,
   padding pad) in *first, their count returned; *r0 the filter's tap it reaches. */
static int phase_taps(const struct s2d_plan *pl, int d, int a, int pad, int filt, int *first, int *r0)
{
    const int off = pl->u * pl->m0[d] + a + pad; /* tap r' reaches the filter's tap u r' + off */
    int lo = off >= 0 ? 0 : (-off + pl->u - 1) / pl->u, n = 0;
    for (int r = lo; r < pl->taps[d] && pl->u * r + off < filt; r++) n++;
    *first = lo, *r0 = pl->u * lo + off;
    return n;
}

static cudnnStatus_t s2d_run(cudnnHandle_t h, const void *problem, const void *plan, void *workspace, size_t bytes)
{
    const struct ocd_conv_problem *p = problem;
    const struct s2d_plan pl = *(const struct s2d_plan *)plan;
    const char *op = "cudnnConvolutionBackwardFilter";
    if (bytes < s2d_workspace(h, p, &pl))
        return OCD_FAIL(CUDNN_STATUS_INTERNAL_ERROR, "space-to-depth filter gradient run with %zu bytes of workspace",
                        bytes);
    char *x = ocd_ws_aligned(workspace), *w = x + pl.x_bytes, *rest = w + pl.w_bytes;
    const int64_t c = p->s.c;
    const int u = pl.u;
    const float one = 1.f, zero = 0.f, beta = (float)p->beta;

    /* the re-laid input: zeros, then phase (a, b) of x into its channels */
    const struct ocd_tensor_view xr = relaid_input(p, &pl);
    OCD_TRY(ocd_ewise_fill(h, &xr, x, 0, op));
    const int64_t *xs = p->x.strides;
    for (int a = 0; a < u; a++)
        for (int b = 0; b < u; b++) {
            const int64_t rows = OCD_MIN((p->s.in[0] - a + u - 1) / u, pl.in[0] + pl.m0[0]);
            const int64_t cols = OCD_MIN((p->s.in[1] - b + u - 1) / u, pl.in[1] + pl.m0[1]);
            if (rows <= 0 || cols <= 0) continue;
            const int64_t dims[4] = {p->s.n, c, rows, cols};
            const int64_t src_st[4] = {xs[0], xs[1], u * xs[2], u * xs[3]};
            const struct ocd_tensor_view src = view4(p->x.dtype, dims, src_st), dst = view4(p->x.dtype, dims, xr.strides);
            const char *from = (const char *)p->x_data + (size_t)(a * xs[2] + b * xs[3]) * S2D_ESIZE;
            char *to = x + (size_t)((-pl.m0[0] * pl.in[1] - pl.m0[1]) * pl.cp + (a * u + b) * c) * S2D_ESIZE;
            OCD_TRY(ocd_ewise_copy(h, &one, &src, from, &zero, &dst, to, op));
        }

    /* the unit-stride filter gradient, on the entry the registry picked for it (its plan made
       again here, on the workspace's pointers) */
    struct ocd_conv_problem sub;
    relaid_problem(p, &pl, x, w, &sub);
    ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS, "%s: the space-to-depth filter gradient on %s", op,
                    pl.sub->base.name);
    OCD_TRY(ocd_impl_exec(h, &pl.sub->base, &sub, NULL, rest, pl.sub_bytes));

    /* the filter's taps of phase (a, b) out of the re-laid filter gradient, with beta */
    const struct ocd_tensor_view wr = relaid_filter(p, &pl);
    const int64_t *ws = p->w.strides;
    for (int a = 0; a < u; a++)
        for (int b = 0; b < u; b++) {
            int r_first, s_first, r0, s0;
            const int nr = phase_taps(&pl, 0, a, (int)p->s.pad[0], (int)p->s.filt[0], &r_first, &r0);
            const int ns = phase_taps(&pl, 1, b, (int)p->s.pad[1], (int)p->s.filt[1], &s_first, &s0);
            if (nr <= 0 || ns <= 0) continue;
            const int64_t dims[4] = {p->s.k, c, nr, ns};
            const int64_t dst_st[4] = {ws[0], ws[1], u * ws[2], u * ws[3]};
            const struct ocd_tensor_view src = view4(p->w.dtype, dims, wr.strides), dst = view4(p->w.dtype, dims, dst_st);
            const char *from = w + (size_t)(r_first * wr.strides[2] + s_first * wr.strides[3] + (a * u + b) * c) * S2D_ESIZE;
            char *to = (char *)p->w_data + (size_t)(r0 * ws[2] + s0 * ws[3]) * S2D_ESIZE;
            OCD_TRY(ocd_ewise_copy(h, &one, &src, from, &beta, &dst, to, op));
        }
    return CUDNN_STATUS_SUCCESS;
}

const struct ocd_impl_planned ocd_conv_s2d_wgrad_planned = {s2d_plan_of, s2d_workspace, s2d_run};
