/* conv_fft.cu: FFT and FFT_TILING convolution on CUDA, every direction (the plan and its math:
   problem/conv_fft.h), with cuFFT for the transforms.

   A call is seven steps on the handle's stream, all in the workspace (complex spectra, then real
   tiles, then cuFFT's work area): for each of the direction's two operands a gather kernel cuts
   the tensor into zero-padded real tiles and a batched cuFFT real-to-complex transform turns them
   into spectra; the product kernel forms the per-frequency channel products of every group (one
   thread per frequency and PRODUCT_COLS outputs of a row, the frequency index running along the
   warp so that every spectrum read is coalesced); a batched complex-to-real transform brings the
   result back, and the scatter kernel stores each destination element through the shared
   convolution store (alpha/beta, the fused epilogue), overlap-adding a data gradient's windows.
   Float and half data compute in float (cufftComplex), double data (FFT_TILING's 1-D
   configuration) in double. The per-element functions are __host__ __device__ so that
   tests/emulate/conv_fft.cu runs them on the CPU for every thread. */
#include "problem/conv.h"

#include "problem/conv_fft.h"
#include "core/handle.h"
#include "core/impl.h"
#include "cuda/check.cuh"
#include "cuda/conv_store.cuh"
#include "cuda/cufft_loader.h"

#include <cuda_fp16.h>

namespace {

const int kThreads = 256;
const int PRODUCT_COLS = 4; /* outputs of one row a thread of the product kernel forms */

/* The geometry of a call, by value for the kernels. */
struct fft_geom {
    int dir, flip;
    int64_t n, c, k, cg;
    int64_t in[2], filt[2], out[2], pad[2];
    int64_t len[2], step[2], tiles[2], segs;
};

/* A tensor the gather reads: data and the strides of its four dims (n or k, c, h, w). */
struct fft_src {
    const void *p;
    int64_t s[4];
};

/* The products (struct ocd_conv_fft_gemm) with each operand's first spectrum resolved. */
struct fft_operand {
    int64_t base, group, row, col;
    int conj;
};
struct fft_gemm {
    int64_t m, n, k, groups, freq;
    fft_operand a, b, d;
};

__host__ __device__ __forceinline__ float to_compute(float v) { return v; }
__host__ __device__ __forceinline__ double to_compute(double v) { return v; }
__host__ __device__ __forceinline__ float to_compute(__half v) { return __half2float(v); }

/* Element e of the real tiles of `set` (tile e / (len0*len1), then row and column): the tensor
   value that lands there, or 0 outside the data (padding, beyond a tile's segment). */
template <typename T, typename C>
__host__ __device__ C fft_gather_value(const fft_geom &g, int set, const fft_src &src, int64_t e)
{
    int64_t area = g.len[0] * g.len[1], i = e / area, a = e % area / g.len[1], b = e % g.len[1];
    int64_t base, h, w;
    if (set == OCD_CONV_FFT_W) {
        if (a >= g.filt[0] || b >= g.filt[1]) return 0;
        base = i / g.cg * src.s[0] + i % g.cg * src.s[1];
        h = g.flip ? g.filt[0] - 1 - a : a;
        w = g.flip ? g.filt[1] - 1 - b : b;
    } else {
        bool x = set == OCD_CONV_FFT_X;
        int64_t ch = x ? g.c : g.k, nt = i / ch, t = nt % g.segs;
        h = t / g.tiles[1] * g.step[0] + a;
        w = t % g.tiles[1] * g.step[1] + b;
        if (x) {
            h -= g.pad[0], w -= g.pad[1];
            if (h < 0 || h >= g.in[0] || w < 0 || w >= g.in[1]) return 0;
        } else if (a >= g.step[0] || b >= g.step[1] || h >= g.out[0] || w >= g.out[1]) {
            return 0;
        }
        base = nt / g.segs * src.s[0] + i % ch * src.s[1];
    }
    return (C)to_compute(((const T *)src.p)[base + h * src.s[2] + w * src.s[3]]);
}

template <typename C2> __host__ __device__ __forceinline__ const C2 &spectrum(const C2 *spec, const fft_gemm &g,
                                                                              const fft_operand &o, int64_t grp,
                                                                              int64_t r, int64_t c, int64_t f)
{
    return spec[(o.base + grp * o.group + r * o.row + c * o.col) * g.freq + f];
}

/* Outputs (grp, m, n0 .. n0 + PRODUCT_COLS) of the products at frequency f; `o` numbers the
   (group, row, block of columns) triples. */
template <typename C2> __host__ __device__ void fft_product(const fft_gemm &g, C2 *spec, int64_t f, int64_t o)
{
    typedef decltype(C2().x) C;
    int64_t blocks = (g.n + PRODUCT_COLS - 1) / PRODUCT_COLS;
    int64_t grp = o / (g.m * blocks), m = o / blocks % g.m, n0 = o % blocks * PRODUCT_COLS;
    int cols = g.n - n0 < PRODUCT_COLS ? (int)(g.n - n0) : PRODUCT_COLS;
    C sa = g.a.conj ? -1 : 1, sb = g.b.conj ? -1 : 1;
    C re[PRODUCT_COLS] = {0}, im[PRODUCT_COLS] = {0};
    for (int64_t k = 0; k < g.k; k++) {
        C2 a = spectrum(spec, g, g.a, grp, m, k, f);
        a.y *= sa;
        for (int j = 0; j < PRODUCT_COLS; j++) {
            if (j >= cols) break;
            C2 b = spectrum(spec, g, g.b, grp, k, n0 + j, f);
            b.y *= sb;
            re[j] += a.x * b.x - a.y * b.y;
            im[j] += a.x * b.y + a.y * b.x;
        }
    }
    for (int j = 0; j < cols; j++) {
        C2 *d = &spec[(g.d.base + grp * g.d.group + m * g.d.row + (n0 + j) * g.d.col) * g.freq + f];
        d->x = re[j];
        d->y = im[j];
    }
}

/* Destination element e (row-major over y's dims forward, x's backward data, w's backward
   filter, coordinates to idx): its value from the unnormalised inverse transforms in real, the
   windows that cover it summed for backward data. */
template <typename C> __host__ __device__ C fft_scatter_value(const fft_geom &g, const C *real, int64_t e, int64_t idx[4])
{
    int64_t d0 = g.dir == OCD_CONV_BWD_FILTER ? g.k : g.n;
    int64_t d1 = g.dir == OCD_CONV_FWD ? g.k : g.dir == OCD_CONV_BWD_DATA ? g.c : g.cg;
    const int64_t *sp = g.dir == OCD_CONV_FWD ? g.out : g.dir == OCD_CONV_BWD_DATA ? g.in : g.filt;
    idx[3] = e % sp[1];
    idx[2] = e / sp[1] % sp[0];
    idx[1] = e / (sp[0] * sp[1]) % d1;
    idx[0] = e / (sp[0] * sp[1] * d1) % d0;
    int64_t area = g.len[0] * g.len[1];
    C v = 0;
    if (g.dir == OCD_CONV_BWD_FILTER) {
        int64_t a = g.flip ? g.filt[0] - 1 - idx[2] : idx[2], b = g.flip ? g.filt[1] - 1 - idx[3] : idx[3];
        v = real[(idx[0] * g.cg + idx[1]) * area + a * g.len[1] + b];
    } else if (g.dir == OCD_CONV_FWD) {
        int64_t t0 = idx[2] / g.step[0], t1 = idx[3] / g.step[1];
        int64_t spec = (idx[0] * g.segs + t0 * g.tiles[1] + t1) * g.k + idx[1];
        v = real[spec * area + (idx[2] - t0 * g.step[0]) * g.len[1] + idx[3] - t1 * g.step[1]];
    } else {
        /* padded position i meets window t where t*step <= i < t*step + len */
        int64_t i0 = idx[2] + g.pad[0], i1 = idx[3] + g.pad[1];
        int64_t lo0 = i0 >= g.len[0] ? (i0 - g.len[0]) / g.step[0] + 1 : 0, hi0 = i0 / g.step[0];
        int64_t lo1 = i1 >= g.len[1] ? (i1 - g.len[1]) / g.step[1] + 1 : 0, hi1 = i1 / g.step[1];
        if (hi0 > g.tiles[0] - 1) hi0 = g.tiles[0] - 1;
        if (hi1 > g.tiles[1] - 1) hi1 = g.tiles[1] - 1;
        for (int64_t t0 = lo0; t0 <= hi0; t0++)
            for (int64_t t1 = lo1; t1 <= hi1; t1++) {
                int64_t spec = (idx[0] * g.segs + t0 * g.tiles[1] + t1) * g.c + idx[1];
                v += real[spec * area + (i0 - t0 * g.step[0]) * g.len[1] + i1 - t1 * g.step[1]];
            }
    }
    return v / (C)area;
}

template <typename T, typename C>
__global__ void gather_kernel(fft_geom g, int set, fft_src src, C *real, int64_t total)
{
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x)
        real[e] = fft_gather_value<T, C>(g, set, src, e);
}

template <typename C2> __global__ void product_kernel(fft_gemm g, C2 *spec, int64_t outputs)
{
    int64_t f = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (f >= g.freq) return;
    for (int64_t o = blockIdx.y; o < outputs; o += gridDim.y) fft_product(g, spec, f, o);
}

template <typename C>
__global__ void scatter_kernel(fft_geom g, const C *real, ocd_cuda_view dst, ocd_cuda_conv_store out, int64_t total)
{
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total; e += (int64_t)gridDim.x * blockDim.x) {
        int64_t idx[OCD_MAX_DIMS] = {0};
        C v = fft_scatter_value<C>(g, real, e, idx);
        ocd_cuda_conv_finish<C>(out, ocd_cuda_offset_of(dst, idx), g.dir == OCD_CONV_BWD_FILTER ? idx[0] : idx[1], v);
    }
}

unsigned blocks_for(int64_t total)
{
    int64_t b = (total + kThreads - 1) / kThreads;
    return (unsigned)(b < 65535 ? (b > 0 ? b : 1) : 65535);
}

/* ---- the plan of a call -------------------------------------------------------------------- */

/* The plan of an entry (core/impl.h). The cuFFT plans stay in the handle's cache, which owns
   them: a run takes them from there (transforms), made by the planning. */
struct fft_call {
    struct ocd_conv_fft_plan plan;
    fft_geom g;
    fft_gemm gemm;
    bool dbl;                        /* double data: D2Z/Z2D and double kernels */
    enum ocd_conv_fft_set in[2], out; /* the operands transformed, the result */
    int64_t count[3];                /* spectra of each set */
    size_t work, spectra_bytes, real_bytes; /* each aligned */
};
OCD_IMPL_PLAN_FITS(fft_call);

fft_geom geom_of(const struct ocd_conv_problem *p, const struct ocd_conv_fft_plan *pl)
{
    const struct ocd_conv_shape *s = &p->s;
    fft_geom g;
    memset(&g, 0, sizeof g);
    g.dir = p->dir, g.flip = s->flip;
    g.n = s->n, g.c = s->c, g.k = s->k, g.cg = s->c / s->groups;
    for (int d = 0; d < 2; d++) {
        g.in[d] = s->in[d], g.filt[d] = s->filt[d], g.out[d] = s->out[d], g.pad[d] = s->pad[d];
        g.len[d] = pl->len[d], g.step[d] = pl->step[d], g.tiles[d] = pl->tiles[d];
    }
    g.segs = pl->segs;
    return g;
}

fft_operand operand_of(const struct ocd_conv_fft_plan *pl, const struct ocd_conv_fft_operand *o)
{
    fft_operand r = {ocd_conv_fft_set_base(pl, o->set), o->group, o->row, o->col, o->conj};
    return r;
}

/* Everything of a call but the cuFFT plans: the geometry, the products, the sets. */
const char *call_of(const struct ocd_conv_problem *p, bool tiling, fft_call *c)
{
    const char *why = ocd_conv_fft_plan_init(&c->plan, p, tiling);
    if (why != NULL) return why;
    const struct ocd_conv_fft_plan *pl = &c->plan;
    c->g = geom_of(p, pl);
    struct ocd_conv_fft_gemm gm;
    ocd_conv_fft_gemm_of(p, pl, &gm);
    c->gemm.m = gm.m, c->gemm.n = gm.n, c->gemm.k = gm.k, c->gemm.groups = gm.groups, c->gemm.freq = pl->freq;
    c->gemm.a = operand_of(pl, &gm.a), c->gemm.b = operand_of(pl, &gm.b), c->gemm.d = operand_of(pl, &gm.d);
    c->dbl = p->x.dtype == CUDNN_DATA_DOUBLE;
    c->in[0] = p->dir == OCD_CONV_BWD_FILTER ? OCD_CONV_FFT_X : OCD_CONV_FFT_W;
    c->in[1] = p->dir == OCD_CONV_FWD ? OCD_CONV_FFT_X : OCD_CONV_FFT_Y;
    c->out = gm.d.set;
    c->count[OCD_CONV_FFT_W] = pl->w_specs, c->count[OCD_CONV_FFT_X] = pl->x_specs;
    c->count[OCD_CONV_FFT_Y] = pl->y_specs;
    return NULL;
}

/* The outputs the product kernel numbers (see fft_product). */
int64_t product_outputs(const fft_gemm &g)
{
    return g.groups * g.m * ((g.n + PRODUCT_COLS - 1) / PRODUCT_COLS);
}

/* The call's cuFFT plans from the handle's cache (made there on first use, bound to the handle's
   stream): the forward transforms of in[0] and in[1], then the inverse of out; *work gets the
   largest work area. NULL or a reason. */
const char *transforms(cudnnHandle_t handle, const fft_call &c, cufftHandle plans[3], size_t *work)
{
    *work = 0;
    for (int e = 0; e < 3; e++) {
        enum ocd_conv_fft_set set = e < 2 ? c.in[e] : c.out;
        cufftType type = e < 2 ? (c.dbl ? CUFFT_D2Z : CUFFT_R2C) : (c.dbl ? CUFFT_Z2D : CUFFT_C2R);
        size_t w = 0;
        const char *why = ocd_cufft_plan(handle, c.plan.len[0], c.plan.len[1], c.count[set], type, &plans[e], &w);
        if (why != NULL) return why;
        *work = w > *work ? w : *work;
    }
    return NULL;
}

/* Plans everything of a call (the cuFFT plans in the handle's cache); NULL or a reason. */
const char *prepare(cudnnHandle_t handle, const struct ocd_conv_problem *p, bool tiling, fft_call *c)
{
    if (const char *why = call_of(p, tiling, c)) return why;
    cufftHandle plans[3];
    if (const char *why = transforms(handle, *c, plans, &c->work)) return why;
    const struct ocd_conv_fft_plan *pl = &c->plan;
    size_t real = c->dbl ? sizeof(double) : sizeof(float);
    int64_t most = 0;
    for (int e = 0; e < 3; e++) {
        enum ocd_conv_fft_set set = e < 2 ? c->in[e] : c->out;
        most = c->count[set] > most ? c->count[set] : most;
    }
    c->spectra_bytes = ocd_ws_round((size_t)ocd_conv_fft_spectra(pl) * 2 * real);
    c->real_bytes = ocd_ws_round((size_t)(most * pl->len[0] * pl->len[1]) * real);
    return NULL;
}

fft_src src_of(const struct ocd_conv_problem *p, enum ocd_conv_fft_set set)
{
    const struct ocd_tensor_view *v = set == OCD_CONV_FFT_W ? &p->w : set == OCD_CONV_FFT_X ? &p->x : &p->y;
    fft_src s = {set == OCD_CONV_FFT_W ? p->w_data : set == OCD_CONV_FFT_X ? p->x_data : p->y_data,
                 {v->strides[0], v->strides[1], v->strides[2], v->strides[3]}};
    return s;
}

template <typename T, typename C, typename C2>
cudnnStatus_t execute(cudnnHandle_t h, const struct ocd_conv_problem *p, const fft_call &c, const cufftHandle plans[3],
                      char *ws)
{
    const struct ocd_cufft_api *api = ocd_cufft_api();
    C2 *spec = (C2 *)ws;
    C *real = (C *)(ws + c.spectra_bytes);
    void *work = ws + c.spectra_bytes + c.real_bytes;
    const int64_t area = c.plan.len[0] * c.plan.len[1];
    for (int e = 0; e < 2; e++) {
        enum ocd_conv_fft_set set = c.in[e];
        int64_t total = c.count[set] * area;
        gather_kernel<T, C><<<blocks_for(total), kThreads, 0, h->stream>>>(c.g, set, src_of(p, set), real, total);
        OCD_CUDA_LAUNCHED();
        C2 *dst = spec + ocd_conv_fft_set_base(&c.plan, set) * c.plan.freq;
        OCD_CUFFT_TRY(api->set_work_area(plans[e], work));
        if (c.dbl) OCD_CUFFT_TRY(api->exec_d2z(plans[e], (cufftDoubleReal *)real, (cufftDoubleComplex *)dst));
        else OCD_CUFFT_TRY(api->exec_r2c(plans[e], (cufftReal *)real, (cufftComplex *)dst));
    }
    int64_t outputs = product_outputs(c.gemm);
    dim3 grid((unsigned)((c.plan.freq + 127) / 128), (unsigned)(outputs < 65535 ? outputs : 65535));
    product_kernel<C2><<<grid, 128, 0, h->stream>>>(c.gemm, spec, outputs);
    OCD_CUDA_LAUNCHED();
    C2 *res = spec + ocd_conv_fft_set_base(&c.plan, c.out) * c.plan.freq;
    OCD_CUFFT_TRY(api->set_work_area(plans[2], work));
    if (c.dbl) OCD_CUFFT_TRY(api->exec_z2d(plans[2], (cufftDoubleComplex *)res, (cufftDoubleReal *)real));
    else OCD_CUFFT_TRY(api->exec_c2r(plans[2], (cufftComplex *)res, (cufftReal *)real));
    const struct ocd_tensor_view *dv = ocd_conv_dst_view(p);
    int64_t total = ocd_view_count(dv);
    scatter_kernel<C><<<blocks_for(total), kThreads, 0, h->stream>>>(c.g, real, ocd_cuda_view_of(dv),
                                                                     ocd_cuda_conv_store_of(p), total);
    OCD_CUDA_LAUNCHED();
    return CUDNN_STATUS_SUCCESS;
}

template <bool TILING> const char *plan(cudnnHandle_t h, const void *problem, void *out)
{
    return prepare(h, (const struct ocd_conv_problem *)problem, TILING, (fft_call *)out);
}

size_t workspace(cudnnHandle_t h, const void *problem, const void *plan)
{
    const fft_call &c = *(const fft_call *)plan;
    return c.spectra_bytes + c.real_bytes + c.work;
}

cudnnStatus_t run(cudnnHandle_t h, const void *problem, const void *plan, void *ws, size_t ws_bytes)
{
    const struct ocd_conv_problem *p = (const struct ocd_conv_problem *)problem;
    const fft_call &c = *(const fft_call *)plan;
    cufftHandle plans[3];
    size_t work;
    const char *why = transforms(h, c, plans, &work); /* cached: the planning made them */
    if (why != NULL) return OCD_FAIL(CUDNN_STATUS_EXECUTION_FAILED, "%s", why);
    if (p->x.dtype == CUDNN_DATA_DOUBLE) return execute<double, double, double2>(h, p, c, plans, (char *)ws);
    if (p->x.dtype == CUDNN_DATA_HALF) return execute<__half, float, float2>(h, p, c, plans, (char *)ws);
    return execute<float, float, float2>(h, p, c, plans, (char *)ws);
}

} // namespace

extern "C" const struct ocd_impl_planned ocd_cuda_conv_fft_planned = {plan<false>, workspace, run};
extern "C" const struct ocd_impl_planned ocd_cuda_conv_fft_tiling_planned = {plan<true>, workspace, run};
