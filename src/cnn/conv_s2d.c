/* conv_s2d.c: the forward pass and the filter gradient of a strided convolution over few channels
   (an RGB network's first layer: C = 3, 7x7, stride 2) as those of a unit-stride convolution over
   the input re-laid space-to-depth (entries host:fwd_s2d, cuda:fwd_s2d, host:wgrad_s2d and
   cuda:wgrad_s2d).

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

   The runs: the re-laid input (zeros first, then u u strided copies of x) in the workspace; the
   forward pass re-lays the filter too (zeros, then its taps, u u strided copies) and runs the
   unit-stride forward pass into y itself (alpha, beta and a fused epilogue as the call has them);
   the filter gradient runs the unit-stride filter gradient into a re-laid one (alpha, beta 0),
   then copies its taps into dw with beta. Each sub-problem runs on the entry the registry picks
   for it (kept in the plan); the copies are the elementwise engine's (ops/tensor_ops.h), so the
   entries run on either backend. On CUDA the re-laid forward pass goes to the cp.async
   implicit GEMM, which reads 8 channels at a time, where the TMA kernel's K tiles of 64 would be
   three quarters padding (conv_igemm.cu declines them there).

   Constraints (each a reason): the forward pass (IMPLICIT_PRECOMP_GEMM: it needs workspace) or
   the filter gradient (ALGO_1), 2-D, no groups, cross-correlation, no dilation, one stride of 2
   or more in both dims; half or bfloat16 data, C not a multiple of 8 and u u C <= 32; the filter
   gradient's dy with its channels innermost (the implicit GEMM reads it as it lies); an entry
   that serves the re-laid problem. The CUDA entries are unproven (core/impl.h) until a GPU run
   has timed them against the few-channel kernels; the host entries are listed after the host's
   GEMMs, where they serve only a pinned engine or a disable list (there the re-laid problems
   took as long as the stem's own or longer: 66 against 70 ms for the filter gradient, 61 against
   53 forward, fp16, batch 4, on a shared 2-core machine). */
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

static size_t align256(size_t v)
{
    return (v + 255) & ~(size_t)255;
}

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

/* The unit-stride problem of p over the re-laid input at x and the re-laid filter (or filter
   gradient) at w: y (dy) as it is; the forward pass with p's alpha, beta and epilogue, the filter
   gradient with alpha and beta 0. */
static void relaid_problem(const struct ocd_conv_problem *p, const struct s2d_plan *pl, void *x, void *w,
                           struct ocd_conv_problem *sub)
{
    *sub = *p;
    if (p->dir == OCD_CONV_BWD_FILTER) memset(&sub->ep, 0, sizeof sub->ep), sub->beta = 0;
    sub->s.c = pl->cp;
    for (int d = 0; d < 2; d++) {
        sub->s.in[d] = pl->in[d], sub->s.filt[d] = pl->taps[d];
        sub->s.pad[d] = 0, sub->s.stride[d] = 1, sub->s.dilation[d] = 1;
    }
    sub->x = relaid_input(p, pl), sub->w = relaid_filter(p, pl);
    sub->w_format = CUDNN_TENSOR_NHWC;
    sub->x_data = x, sub->w_data = w;
}

/* The algorithm an entry serves in direction dir: the re-laid problem's too. */
static int s2d_algo(enum ocd_conv_dir dir)
{
    return dir == OCD_CONV_FWD ? CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM : CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1;
}

static const char *s2d_plan_of(cudnnHandle_t h, const void *problem, void *plan)
{
    const struct ocd_conv_problem *p = problem;
    struct s2d_plan *pl = plan;
    memset(pl, 0, sizeof *pl);
    const struct ocd_conv_shape *s = &p->s;
    if (p->dir == OCD_CONV_BWD_DATA) return "the forward pass and the filter gradient only";
    if (s->nsp != 2 || s->groups != 1) return "2-D, without groups";
    if (s->flip) return "cross-correlation only";
    if (s->dilation[0] != 1 || s->dilation[1] != 1) return "no dilation";
    if (s->stride[0] != s->stride[1] || s->stride[0] < 2) return "one stride of 2 or more in both dims";
    const cudnnDataType_t t = p->x.dtype;
    if ((t != CUDNN_DATA_HALF && t != CUDNN_DATA_BFLOAT16) || p->y.dtype != t || p->w.dtype != t) return OCD_REASON_DTYPE;
    const int u = (int)s->stride[0];
    if (s->c % 8 == 0 || (int64_t)u * u * s->c > 32)
        return "channels a multiple of 8, or more than 32 re-laid (the channel-padded GEMMs serve)";
    if (p->dir == OCD_CONV_BWD_FILTER && p->y.dims[1] > 1 && p->y.strides[1] != 1) return "dy's channels are not innermost";
    if (h->backend->kind == OCD_BACKEND_CUDA && ocd_impl_unproven() != NULL) return ocd_impl_unproven();
    pl->u = u;
    pl->cp = ((int64_t)u * u * s->c + 7) / 8 * 8;
    for (int d = 0; d < 2; d++) {
        const int pad = (int)s->pad[d], m0 = floor_div(-pad, u);
        pl->m0[d] = m0;
        pl->taps[d] = floor_div((int)s->filt[d] - 1 - pad, u) - m0 + 1;
        pl->in[d] = s->out[d] + pl->taps[d] - 1;
    }
    pl->x_bytes = align256((size_t)(s->n * pl->cp * pl->in[0] * pl->in[1]) * S2D_ESIZE);
    pl->w_bytes = align256((size_t)(s->k * pl->cp * pl->taps[0] * pl->taps[1]) * S2D_ESIZE);
    struct ocd_conv_problem sub;
    relaid_problem(p, pl, NULL, NULL, &sub);
    char why[512];
    struct ocd_impl_plan sub_plan;
    pl->sub = ocd_conv_pick(h, &sub, s2d_algo(p->dir), why, sizeof why, &sub_plan);
    if (pl->sub == NULL) return "no entry serves the re-laid problem";
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

/* Copies the filter's taps of every phase (a, b) between the filter (its view p->w at wdata) and
   the re-laid one at w: into the re-laid filter (to_relaid: the forward pass, beta 0) or out of
   it into the filter with p's beta (the filter gradient). */
static cudnnStatus_t copy_taps(cudnnHandle_t h, const struct ocd_conv_problem *p, const struct s2d_plan *pl, char *w,
                               bool to_relaid, const char *op)
{
    const struct ocd_tensor_view wr = relaid_filter(p, pl);
    const int64_t *ws = p->w.strides, c = p->s.c;
    const int u = pl->u;
    const float one = 1.f, beta = to_relaid ? 0.f : (float)p->beta;
    for (int a = 0; a < u; a++)
        for (int b = 0; b < u; b++) {
            int r_first, s_first, r0, s0;
            const int nr = phase_taps(pl, 0, a, (int)p->s.pad[0], (int)p->s.filt[0], &r_first, &r0);
            const int ns = phase_taps(pl, 1, b, (int)p->s.pad[1], (int)p->s.filt[1], &s_first, &s0);
            if (nr <= 0 || ns <= 0) continue;
            const int64_t dims[4] = {p->s.k, c, nr, ns};
            const int64_t filter_st[4] = {ws[0], ws[1], u * ws[2], u * ws[3]};
            const struct ocd_tensor_view relaid = view4(p->w.dtype, dims, wr.strides);
            const struct ocd_tensor_view filter = view4(p->w.dtype, dims, filter_st);
            char *rw = w + (size_t)(r_first * wr.strides[2] + s_first * wr.strides[3] + (a * u + b) * c) * S2D_ESIZE;
            char *fw = (char *)p->w_data + (size_t)(r0 * ws[2] + s0 * ws[3]) * S2D_ESIZE;
            if (to_relaid) OCD_TRY(ocd_ewise_copy(h, &one, &filter, fw, &beta, &relaid, rw, op));
            else OCD_TRY(ocd_ewise_copy(h, &one, &relaid, rw, &beta, &filter, fw, op));
        }
    return CUDNN_STATUS_SUCCESS;
}

/* Zeros over the view v at data. */
static cudnnStatus_t zero_fill(cudnnHandle_t h, const struct ocd_tensor_view *v, void *data, const char *op)
{
    struct ocd_ewise fill;
    ocd_ewise_build(&fill, OCD_EWISE_FILL, v, NULL, NULL);
    ocd_ewise_bind(&fill, data, NULL, NULL);
    fill.fill = 0;
    return ocd_ewise_run(h, &fill, op);
}

static cudnnStatus_t s2d_run(cudnnHandle_t h, const void *problem, const void *plan, void *workspace, size_t bytes)
{
    const struct ocd_conv_problem *p = problem;
    const struct s2d_plan pl = *(const struct s2d_plan *)plan;
    const bool fwd = p->dir == OCD_CONV_FWD;
    const char *op = fwd ? "cudnnConvolutionForward" : "cudnnConvolutionBackwardFilter";
    if (bytes < s2d_workspace(h, p, &pl))
        return OCD_FAIL(CUDNN_STATUS_INTERNAL_ERROR, "space-to-depth entry run with %zu bytes of workspace", bytes);
    char *x = (char *)(((uintptr_t)workspace + 255) & ~(uintptr_t)255), *w = x + pl.x_bytes, *rest = w + pl.w_bytes;
    const int64_t c = p->s.c;
    const int u = pl.u;
    const float one = 1.f, zero = 0.f;

    /* the re-laid input: zeros, then phase (a, b) of x into its channels */
    const struct ocd_tensor_view xr = relaid_input(p, &pl);
    OCD_TRY(zero_fill(h, &xr, x, op));
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

    /* the forward pass's re-laid filter: zeros, then the filter's taps */
    if (fwd) {
        const struct ocd_tensor_view wr = relaid_filter(p, &pl);
        OCD_TRY(zero_fill(h, &wr, w, op));
        OCD_TRY(copy_taps(h, p, &pl, w, true, op));
    }

    /* the unit-stride problem, on the entry the registry picked for it (its plan made again here,
       on the workspace's pointers) */
    struct ocd_conv_problem sub;
    relaid_problem(p, &pl, x, w, &sub);
    ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS, "%s: the space-to-depth problem on %s", op,
                    pl.sub->base.name);
    OCD_TRY(ocd_impl_exec(h, &pl.sub->base, &sub, NULL, rest, pl.sub_bytes));
    if (fwd) return CUDNN_STATUS_SUCCESS;

    /* the filter's taps out of the re-laid filter gradient, with beta */
    return copy_taps(h, p, &pl, w, false, op);
}

const struct ocd_impl_planned ocd_conv_s2d_planned = {s2d_plan_of, s2d_workspace, s2d_run};
