/* conv_dgrad_1x1s.cu (emulation): the pass over dx of the strided 1x1 backward-data entry
   (src/cuda/conv_dgrad_1x1s.cu, cuda:dgrad_gemm1x1_strided_cublas_tc) on the CPU, its per-vector
   code run for every vector of dx, on the geometry the entry's plan makes of the problem: 2-D and
   3-D, strides 2 and 3 and unequal ones, even and odd extents (pixels past the last one a stride
   divides), fp16 and bf16, at beta 0 (dcol of dx's type, dx poisoned and never read) and beta 0.5
   (dcol fp32). dcol stands for the GEMM's output (random values); every element of dx must be
   its source's dcol value (or zero) plus beta times its old value, rounded once. Also what the
   plan declines. Prints a line per case; exits 1 if any differs. */
#include "cuda/conv_dgrad_1x1s.cu"

#include "conv_emulate.h"

#include <cmath>
#include <cstdio>
#include <vector>

namespace {

/* A packed NHWC (NDHWC) view of n x c x spatial dims `in` (nsp of them). */
struct ocd_tensor_view ndhwc(cudnnDataType_t t, int nsp, int64_t n, int64_t c, const int64_t *in)
{
    struct ocd_tensor_view v;
    memset(&v, 0, sizeof v);
    v.dtype = t, v.rank = nsp + 2, v.vect = 1;
    v.dims[0] = n, v.dims[1] = c, v.strides[1] = 1;
    int64_t st = c;
    for (int d = nsp - 1; d >= 0; d--) v.dims[d + 2] = in[d], v.strides[d + 2] = st, st *= in[d];
    v.strides[0] = st;
    return v;
}

struct emu_case {
    const char *name;
    cudnnDataType_t t;
    int nsp, n, c, k;
    int64_t in[3];
    int stride[3], filt, pad;
    double beta;
    const char *declines; /* a part of the plan's reason, or NULL where it plans */
};

struct ocd_conv_problem problem_of(const emu_case &e)
{
    struct ocd_conv_problem p;
    memset(&p, 0, sizeof p);
    p.dir = OCD_CONV_BWD_DATA;
    struct ocd_conv_shape &s = p.s;
    s.nsp = e.nsp, s.n = e.n, s.c = e.c, s.k = e.k, s.groups = 1;
    int64_t out[3], one[3] = {1, 1, 1};
    for (int d = 0; d < e.nsp; d++) {
        s.in[d] = e.in[d], s.filt[d] = e.filt, s.pad[d] = e.pad, s.stride[d] = e.stride[d], s.dilation[d] = 1;
        out[d] = s.out[d] = (e.in[d] + 2 * e.pad - e.filt) / e.stride[d] + 1;
    }
    p.x = ndhwc(e.t, e.nsp, e.n, e.c, e.in);
    p.y = ndhwc(e.t, e.nsp, e.n, e.k, out);
    p.w = ndhwc(e.t, e.nsp, e.k, e.c, one);
    p.w_format = CUDNN_TENSOR_NCHW;
    p.alpha = 1, p.beta = e.beta;
    return p;
}

template <typename T> bool run_typed(const emu_case &e, const struct ocd_conv_problem &p, const dg1x1s_plan &pl)
{
    emu_rng rng = {(uint32_t)(e.c * 31 + e.n * 7 + e.stride[0])};
    const size_t nx = (size_t)pl.g.vecs * 8, ncol = (size_t)(pl.npq * pl.c);
    const bool blend = e.beta != 0;
    std::vector<T> dx(nx), dcol_t(ncol);
    std::vector<float> dcol_f(ncol);
    std::vector<double> old(nx);
    for (size_t i = 0; i < nx; i++) {
        ocd_cuda_store(&dx[i], blend ? rng.next() : NAN); /* poison at beta 0: never read */
        old[i] = ocd_cuda_load(&dx[i]);
    }
    for (size_t i = 0; i < ncol; i++) ocd_cuda_store(&dcol_t[i], rng.next()), dcol_f[i] = 2 * rng.next();
    dg1x1s_geom g = pl.g;
    g.beta = (float)e.beta;
    for (uint32_t i = 0; i < g.vecs; i++) {
        if (blend) dg1x1s_vector<T, float>(dx.data(), dcol_f.data(), g, i);
        else dg1x1s_vector<T, T>(dx.data(), dcol_t.data(), g, i);
    }
    /* every element against its definition, walked in NDHWC order */
    const int64_t d3 = e.nsp == 3 ? e.in[0] : 1, h3 = e.in[e.nsp - 2], w3 = e.in[e.nsp - 1];
    const int us[3] = {e.nsp == 3 ? e.stride[0] : 1, e.stride[e.nsp - 2], e.stride[e.nsp - 1]};
    const int64_t z = p.y.rank == 5 ? p.y.dims[2] : 1, pp = p.y.dims[p.y.rank - 2], q = p.y.dims[p.y.rank - 1];
    const double tol = e.t == CUDNN_DATA_HALF ? 1.0 / 1024 : 1.0 / 128;
    size_t i = 0, bad = 0;
    for (int64_t n = 0; n < e.n; n++)
        for (int64_t dd = 0; dd < d3; dd++)
            for (int64_t h = 0; h < h3; h++)
                for (int64_t w = 0; w < w3; w++)
                    for (int64_t c = 0; c < e.c; c++, i++) {
                        const bool src = dd % us[0] == 0 && h % us[1] == 0 && w % us[2] == 0;
                        const size_t at = (size_t)((((n * z + dd / us[0]) * pp + h / us[1]) * q + w / us[2]) * e.c + c);
                        double want = src ? (blend ? (double)dcol_f[at] : (double)ocd_cuda_load(&dcol_t[at])) : 0.0;
                        if (blend) want += e.beta * old[i];
                        const double got = ocd_cuda_load(&dx[i]);
                        if (!(std::fabs(got - want) <= tol * std::fabs(want)) && bad++ < 4)
                            printf("     element %zu (n %ld d %ld h %ld w %ld c %ld): %g, want %g\n", i, (long)n,
                                   (long)dd, (long)h, (long)w, (long)c, got, want);
                    }
    printf("%s %s: %u vectors of dx, %zu differ\n", bad ? "FAIL" : "ok  ", e.name, g.vecs, bad);
    return bad == 0;
}

bool run_case(const emu_case &e)
{
    const struct ocd_conv_problem p = problem_of(e);
    dg1x1s_plan pl;
    const char *why = dg1x1s_geometry(&p, &pl);
    if (e.declines || why) {
        const bool ok = e.declines && why && strstr(why, e.declines);
        printf("%s %s: the plan declines: %s\n", ok ? "ok  " : "FAIL", e.name, why ? why : "(it plans)");
        return ok;
    }
    if (pl.ws_bytes < (size_t)(pl.npq * pl.c) * sizeof(float)) {
        printf("FAIL %s: a workspace too small for fp32 dcol\n", e.name);
        return false;
    }
    return e.t == CUDNN_DATA_HALF ? run_typed<__half>(e, p, pl) : run_typed<__nv_bfloat16>(e, p, pl);
}

} // namespace

int main()
{
    const cudnnDataType_t H = CUDNN_DATA_HALF, B = CUDNN_DATA_BFLOAT16;
    /* {name, type, nsp, n, c, k, in, stride, filt, pad, beta, declines} */
    const emu_case cases[] = {
        {"fp16 stride 2, 8x8 (every pixel's block whole), beta 0", H, 2, 2, 16, 24, {8, 8}, {2, 2}, 1, 0, 0, NULL},
        {"bf16 stride 2, 7x9 (odd: a last row and column of zeros), beta 0", B, 2, 3, 24, 8, {7, 9}, {2, 2}, 1, 0, 0,
         NULL},
        {"fp16 stride 2, 7x6, beta 0.5", H, 2, 2, 16, 8, {7, 6}, {2, 2}, 1, 0, 0.5, NULL},
        {"bf16 stride 3, 10x8, beta 0.5", B, 2, 2, 8, 16, {10, 8}, {3, 3}, 1, 0, 0.5, NULL},
        {"fp16 strides (1, 2), 5x8, beta 0", H, 2, 2, 32, 8, {5, 8}, {1, 2}, 1, 0, 0, NULL},
        {"fp16 3-D strides (2, 1, 3), 5x4x7, beta 0.5", H, 3, 2, 8, 8, {5, 4, 7}, {2, 1, 3}, 1, 0, 0.5, NULL},
        {"bf16 3-D stride 2, 4x5x6, beta 0", B, 3, 1, 16, 8, {4, 5, 6}, {2, 2, 2}, 1, 0, 0, NULL},
        {"unit stride declines", H, 2, 1, 16, 8, {6, 6}, {1, 1}, 1, 0, 0, "unit stride"},
        {"3x3 declines", H, 2, 1, 16, 8, {6, 6}, {2, 2}, 3, 1, 0, "not a 1x1 filter"},
        {"padding declines", H, 2, 1, 16, 8, {6, 6}, {2, 2}, 1, 1, 0, "not a 1x1 filter"},
        {"C 12 declines", H, 2, 1, 12, 8, {6, 6}, {2, 2}, 1, 0, 0, "multiple of 8"},
        {"fp32 declines", CUDNN_DATA_FLOAT, 2, 1, 16, 8, {6, 6}, {2, 2}, 1, 0, 0, OCD_REASON_DTYPE},
    };
    bool ok = true;
    for (const emu_case &e : cases) ok = run_case(e) && ok;
    printf("%s\n", ok ? "all cases passed" : "FAILED");
    return ok ? 0 : 1;
}
