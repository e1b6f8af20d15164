/* conv_gemm_engine.h: the typed half of conv_gemm.c, included once per compute type with
   GEMM_T (float or double), GEMM_NATIVE (its cudnnDataType_t), GEMM_SFX (a name suffix) and the
   micro-tile GEMM_MR x GEMM_NR defined. Everything here is static to conv_gemm.c; the macros are
   undefined at the end so that the next inclusion can set them anew.

   Blocking: MC x KC blocks of A and KC x NC blocks of B are packed into micro-panels of MR rows
   and NR columns (zero-padded at the edges, so the micro-kernel always computes a full tile); C
   accumulates in an MC x NC tile in compute precision and goes through the epilogue once. */

#define GEMM_CAT_(a, b) a##_##b
#define GEMM_CAT(a, b) GEMM_CAT_(a, b)
#define FN(name) GEMM_CAT(name, GEMM_SFX)

#define GEMM_MC (16 * GEMM_MR)
#define GEMM_NC 256
#define GEMM_KC 256

/* Element (row, col) of an operand; r and c are the table entries of the row and the column. */
static inline GEMM_T FN(get)(const struct operand *o, int64_t roff, const int32_t *rpos, int64_t coff,
                             const int32_t *cpos)
{
    int64_t off = roff + coff;
    for (int d = 0; d < o->nchk; d++) {
        int32_t t = rpos[d] + cpos[d];
        if (o->strided) {
            if (t < 0 || t % o->div[d] != 0 || t / o->div[d] >= o->lim[d]) return 0;
            off += (int64_t)(t / o->div[d]) * o->str[d];
        } else if ((uint32_t)t >= (uint32_t)o->lim[d]) {
            return 0;
        }
    }
    if (o->dtype == GEMM_NATIVE) return ((const GEMM_T *)o->base)[off];
    return (GEMM_T)ocd_host_load(o->dtype, o->base, off);
}

/* Packs rows [0, rows) (table r) x columns [0, kc) (table c) of A into MR-row micro-panels; a
   dense operand is read at (r0 + row, c0 + col) of group `group`. */
static void FN(pack_a)(const struct operand *o, struct table r, struct table c, int64_t group, int64_t r0,
                       int64_t c0, int64_t rows, int64_t kc, GEMM_T *restrict dst)
{
    for (int64_t s = 0; s < rows; s += GEMM_MR) {
        GEMM_T *panel = dst + s * kc;
        int live = (int)OCD_MIN(GEMM_MR, rows - s);
        if (o->ld > 0) {
            const GEMM_T *src = (const GEMM_T *)o->base + group * o->dense_group + (r0 + s) * o->ld + c0;
            for (int64_t k = 0; k < kc; k++)
                for (int i = 0; i < GEMM_MR; i++) panel[k * GEMM_MR + i] = i < live ? src[i * o->ld + k] : 0;
            continue;
        }
        if (live == GEMM_MR && o->dtype == GEMM_NATIVE && !o->strided && o->nchk <= 2) {
            /* the hot path (the forward im2col): row terms hoisted, a select per element */
            const GEMM_T *base = o->base;
            int64_t ro[GEMM_MR];
            int32_t rp[2][GEMM_MR];
            uint32_t lim[2] = {o->nchk > 0 ? (uint32_t)o->lim[0] : 1, o->nchk > 1 ? (uint32_t)o->lim[1] : 1};
            for (int i = 0; i < GEMM_MR; i++) {
                ro[i] = r.off[s + i];
                for (int d = 0; d < 2; d++) rp[d][i] = d < o->nchk ? r.pos[(s + i) * OCD_CONV_MAX_SPATIAL + d] : 0;
            }
            /* rows of one image row, evenly spaced (the usual strip of 2-D im2col): a tap either
               misses the row entirely, or reads MR evenly spaced elements whose first and last
               bound the others */
            int64_t step = ro[1] - ro[0];
            int32_t dw = rp[1][1] - rp[1][0];
            bool even = o->nchk == 2 && dw > 0;
            for (int i = 1; i < GEMM_MR && even; i++)
                even = rp[0][i] == rp[0][0] && rp[1][i] - rp[1][0] == i * dw && ro[i] - ro[0] == i * step;
            for (int64_t k = 0; k < kc; k++) {
                int64_t co = c.off[k];
                int32_t c0p = o->nchk > 0 ? c.pos[k * OCD_CONV_MAX_SPATIAL] : 0;
                int32_t c1p = o->nchk > 1 ? c.pos[k * OCD_CONV_MAX_SPATIAL + 1] : 0;
                GEMM_T *out = panel + k * GEMM_MR;
                if (even && (uint32_t)(rp[0][0] + c0p) >= lim[0]) {
                    for (int i = 0; i < GEMM_MR; i++) out[i] = 0;
                    continue;
                }
                if (even && rp[1][0] + c1p >= 0 && (uint32_t)(rp[1][GEMM_MR - 1] + c1p) < lim[1]) {
                    const GEMM_T *src = base + ro[0] + co;
                    for (int i = 0; i < GEMM_MR; i++) out[i] = src[i * step];
                    continue;
                }
                for (int i = 0; i < GEMM_MR; i++) {
                    bool in = (uint32_t)(rp[0][i] + c0p) < lim[0] && (uint32_t)(rp[1][i] + c1p) < lim[1];
                    out[i] = in ? base[ro[i] + co] : 0;
                }
            }
            continue;
        }
        for (int64_t k = 0; k < kc; k++) {
            for (int i = 0; i < GEMM_MR; i++) {
                int64_t row = s + i;
                panel[k * GEMM_MR + i] = i < live ? FN(get)(o, r.off[row], r.pos + row * OCD_CONV_MAX_SPATIAL,
                                                            c.off[k], c.pos + k * OCD_CONV_MAX_SPATIAL)
                                                  : 0;
            }
        }
    }
}

/* Packs rows [0, kc) (table r) x columns [0, cols) (table c) of B into NR-column micro-panels. */
static void FN(pack_b)(const struct operand *o, struct table r, struct table c, int64_t group, int64_t r0,
                       int64_t c0, int64_t kc, int64_t cols, GEMM_T *restrict dst)
{
    for (int64_t s = 0; s < cols; s += GEMM_NR) {
        GEMM_T *panel = dst + s * kc;
        int live = (int)OCD_MIN(GEMM_NR, cols - s);
        for (int64_t k = 0; k < kc; k++) {
            GEMM_T *out = panel + k * GEMM_NR;
            if (o->ld > 0) {
                const GEMM_T *src = (const GEMM_T *)o->base + group * o->dense_group + (r0 + k) * o->ld + c0 + s;
                for (int j = 0; j < GEMM_NR; j++) out[j] = j < live ? src[j] : 0;
                continue;
            }
            for (int j = 0; j < GEMM_NR; j++) {
                int64_t col = s + j;
                out[j] = j < live ? FN(get)(o, r.off[k], r.pos + k * OCD_CONV_MAX_SPATIAL, c.off[col],
                                            c.pos + col * OCD_CONV_MAX_SPATIAL)
                                  : 0;
            }
        }
    }
}

/* c[MR x NR] += a-panel * b-panel over kc, in column chunks of two vectors of VB bytes: the
   MR x 2 accumulators stay in 12 vector registers (VB = 32 with AVX2, 16 on baseline x86-64 and
   other processors). Written with the GNU vector extension, which every target of gcc and clang
   lowers to its own vector instructions; other compilers get the plain loops. */
#if defined(__GNUC__)
#define GEMM_MICRO_BODY(VB)                                                                     \
    typedef GEMM_T vec_t __attribute__((vector_size(VB)));                                        \
    enum { NV = (int)((VB) / sizeof(GEMM_T)) };                                                  \
    for (int jh = 0; jh < GEMM_NR; jh += 2 * NV) {                                               \
        vec_t acc[GEMM_MR][2];                                                                   \
        for (int i = 0; i < GEMM_MR; i++) acc[i][0] = acc[i][1] = (vec_t){0};                    \
        for (int64_t k = 0; k < kc; k++) {                                                       \
            vec_t b0, b1;                                                                        \
            memcpy(&b0, b + k * GEMM_NR + jh, sizeof b0);                                        \
            memcpy(&b1, b + k * GEMM_NR + jh + NV, sizeof b1);                                   \
            const GEMM_T *ak = a + k * GEMM_MR;                                                  \
            _Pragma("GCC unroll 8") for (int i = 0; i < GEMM_MR; i++) {                          \
                acc[i][0] += ak[i] * b0;                                                         \
                acc[i][1] += ak[i] * b1;                                                         \
            }                                                                                    \
        }                                                                                        \
        for (int i = 0; i < GEMM_MR; i++)                                                        \
            for (int h = 0; h < 2; h++) {                                                        \
                vec_t v;                                                                         \
                memcpy(&v, c + i * ldc + jh + h * NV, sizeof v);                                 \
                v += acc[i][h];                                                                  \
                memcpy(c + i * ldc + jh + h * NV, &v, sizeof v);                                 \
            }                                                                                    \
    }
#else
#define GEMM_MICRO_BODY(VB)                                                                     \
    for (int64_t k = 0; k < kc; k++)                                                             \
        for (int i = 0; i < GEMM_MR; i++)                                                        \
            for (int j = 0; j < GEMM_NR; j++) c[i * ldc + j] += a[k * GEMM_MR + i] * b[k * GEMM_NR + j];
#endif

static void FN(micro_base)(int64_t kc, const GEMM_T *restrict a, const GEMM_T *restrict b, GEMM_T *restrict c,
                           int64_t ldc)
{
    GEMM_MICRO_BODY(16)
}

#if OCD_GEMM_X86_DISPATCH
__attribute__((target("avx2,fma"))) static void FN(micro_avx2)(int64_t kc, const GEMM_T *restrict a,
                                                                const GEMM_T *restrict b, GEMM_T *restrict c,
                                                                int64_t ldc)
{
    GEMM_MICRO_BODY(32)
}
#endif

static void FN(micro)(int64_t kc, const GEMM_T *restrict a, const GEMM_T *restrict b, GEMM_T *restrict c, int64_t ldc)
{
#if OCD_GEMM_X86_DISPATCH
    if (have_avx2_fma()) {
        FN(micro_avx2)(kc, a, b, c, ldc);
        return;
    }
#endif
    FN(micro_base)(kc, a, b, c, ldc);
}

#undef GEMM_MICRO_BODY

/* Columns of B rounded up to whole micro-panels. */
static int64_t FN(npad)(const struct gemm_plan *g)
{
    return (g->dims.n + GEMM_NR - 1) / GEMM_NR * GEMM_NR;
}

struct FN(job) {
    const struct gemm_plan *g;
    const struct tables *pre; /* NULL: the implicit strategy */
    GEMM_T *packed_b;         /* all of B packed once (see prepack), or NULL: packed per tile */
    int64_t mc, nc;           /* tile sizes: at most GEMM_MC x GEMM_NC, smaller to feed every thread */
    int64_t mt, nt;           /* tiles along M and N */
    bool failed;              /* a task could not allocate its scratch */
};

/* Task scratch: packed blocks, the C tile, and room for every table slice a tile needs. */
struct FN(scratch) {
    GEMM_T *pa, *pb, *acc;
    struct table t[NSPECS];
};

static void *FN(scratch_alloc)(struct FN(scratch) *s)
{
    static const int64_t entries[NSPECS] = {GEMM_MC, GEMM_KC, GEMM_KC, GEMM_NC, GEMM_MC, GEMM_NC};
    size_t bytes = sizeof(GEMM_T) * (GEMM_MC * GEMM_KC + GEMM_KC * GEMM_NC + GEMM_MC * GEMM_NC) + 64;
    for (int i = 0; i < NSPECS; i++) bytes += table_bytes(entries[i]);
    char *mem = malloc(bytes);
    if (mem == NULL) return NULL;
    char *at = mem;
    s->pa = (GEMM_T *)at, at += sizeof(GEMM_T) * GEMM_MC * GEMM_KC;
    s->pb = (GEMM_T *)at, at += sizeof(GEMM_T) * GEMM_KC * GEMM_NC;
    s->acc = (GEMM_T *)at, at += sizeof(GEMM_T) * GEMM_MC * GEMM_NC;
    at = (char *)align64((size_t)at);
    for (int i = 0; i < NSPECS; i++) {
        s->t[i].off = (int64_t *)at;
        s->t[i].pos = (int32_t *)(at + align64((size_t)entries[i] * sizeof(int64_t)));
        at += table_bytes(entries[i]);
    }
    return mem;
}

static void FN(epilogue)(const struct gemm_plan *g, const GEMM_T *acc, int64_t ldacc, struct table cr,
                         struct table cc, int64_t group, int64_t n0, int64_t mc, int64_t nc)
{
    const struct ocd_conv_problem *p = g->p;
    const struct ocd_tensor_view *v = ocd_conv_dst_view(p);
    void *dst = p->dir == OCD_CONV_FWD ? p->y_data : p->dir == OCD_CONV_BWD_DATA ? p->x_data : p->w_data;
    bool plain = !p->ep.on && p->beta == 0 && v->dtype == GEMM_NATIVE;
    GEMM_T alpha = (GEMM_T)p->alpha;
    /* walk the destination along its smaller stride (channels outer for NCHW outputs, pixels
       outer for NHWC), so that stores stream instead of striding */
    int64_t rs = mc > 1 ? cr.off[1] - cr.off[0] : 0, cs = nc > 1 ? cc.off[1] - cc.off[0] : 0;
    bool cols_outer = (cs < 0 ? -cs : cs) > (rs < 0 ? -rs : rs);
    int64_t outer = cols_outer ? nc : mc, inner = cols_outer ? mc : nc;
    for (int64_t a = 0; a < outer; a++) {
        for (int64_t b = 0; b < inner; b++) {
            int64_t i = cols_outer ? b : a, j = cols_outer ? a : b, off = cr.off[i] + cc.off[j];
            if (plain) ((GEMM_T *)dst)[off] = alpha * acc[i * ldacc + j];
            else ocd_host_conv_store(p, off, g->c_channel_cols ? group * g->dims.n + n0 + j : 0, acc[i * ldacc + j]);
        }
    }
}

static void FN(tiles)(void *ctx, int64_t begin, int64_t end)
{
    struct FN(job) *job = ctx;
    const struct gemm_plan *g = job->g;
    struct FN(scratch) s;
    void *mem = FN(scratch_alloc)(&s);
    if (mem == NULL) {
        job->failed = true;
        return;
    }
    bool a_dense = g->a.ld > 0, b_dense = g->b.ld > 0;
    struct table none = {NULL, NULL};
    for (int64_t t = begin; t < end; t++) {
        int64_t group = t / (job->mt * job->nt), mb = t / job->nt % job->mt, nb = t % job->nt;
        int64_t m0 = mb * job->mc, mc = OCD_MIN(job->mc, g->dims.m - m0);
        int64_t n0 = nb * job->nc, nc = OCD_MIN(job->nc, g->dims.n - n0);
        int64_t ldacc = (nc + GEMM_NR - 1) / GEMM_NR * GEMM_NR;
        int64_t mcp = (mc + GEMM_MR - 1) / GEMM_MR * GEMM_MR;
        struct table ar = a_dense ? none : slice(g, job->pre, 0, group, m0, m0 + mc, s.t[0]);
        struct table bc = b_dense || job->packed_b ? none : slice(g, job->pre, 3, group, n0, n0 + nc, s.t[3]);
        memset(s.acc, 0, sizeof(GEMM_T) * (size_t)(mcp * ldacc));
        for (int64_t k0 = 0; k0 < g->dims.k; k0 += GEMM_KC) {
            int64_t kc = OCD_MIN(GEMM_KC, g->dims.k - k0);
            struct table ac = a_dense ? none : slice(g, job->pre, 1, group, k0, k0 + kc, s.t[1]);
            struct table br = b_dense || job->packed_b ? none : slice(g, job->pre, 2, group, k0, k0 + kc, s.t[2]);
            FN(pack_a)(&g->a, ar, ac, group, m0, k0, mc, kc, s.pa);
            const GEMM_T *pb = s.pb;
            if (job->packed_b != NULL) pb = job->packed_b + group * g->dims.k * FN(npad)(g) + k0 * FN(npad)(g) + n0 * kc;
            else FN(pack_b)(&g->b, br, bc, group, k0, n0, kc, nc, s.pb);
            for (int64_t jr = 0; jr < ldacc; jr += GEMM_NR)
                for (int64_t ir = 0; ir < mcp; ir += GEMM_MR)
                    FN(micro)(kc, s.pa + ir * kc, pb + jr * kc, s.acc + ir * ldacc + jr, ldacc);
        }
        struct table cr = slice(g, job->pre, 4, group, m0, m0 + mc, s.t[4]);
        struct table cc = slice(g, job->pre, 5, group, n0, n0 + nc, s.t[5]);
        FN(epilogue)(g, s.acc, ldacc, cr, cc, group, n0, mc, nc);
    }
    free(mem);
}

struct FN(gather_job) {
    const struct gemm_plan *g;
    const struct tables *pre;
    const struct operand *o;
    int rspec, cspec;
    int64_t rows, cols;
    GEMM_T *dst;
};

/* Materialises one row of the gathered operand for each index of the range (group-major). */
static void FN(gather_rows)(void *ctx, int64_t begin, int64_t end)
{
    struct FN(gather_job) *j = ctx;
    for (int64_t e = begin; e < end; e++) {
        int64_t group = e / j->rows, row = e % j->rows;
        struct table none = {NULL, NULL};
        struct table r = slice(j->g, j->pre, j->rspec, group, row, row + 1, none);
        struct table c = slice(j->g, j->pre, j->cspec, group, 0, j->cols, none);
        GEMM_T *out = j->dst + e * j->cols;
        for (int64_t col = 0; col < j->cols; col++)
            out[col] = FN(get)(j->o, r.off[0], r.pos, c.off[col], c.pos + col * OCD_CONV_MAX_SPATIAL);
    }
}

/* Packs all of B once, per group, per KC block of rows, in micro-panels: the block of rows k0 of
   group g starts at (g * K + k0) * npad and its panel of columns n0 at n0 * kc within. Worth it
   when B is the filter (forward, data gradient): every M tile reuses it. */
struct FN(prepack_job) {
    const struct gemm_plan *g;
    const struct tables *pre;
    GEMM_T *dst;
    int64_t kblocks;
    bool failed;
};

static void FN(prepack_range)(void *ctx, int64_t begin, int64_t end)
{
    struct FN(prepack_job) *j = ctx;
    const struct gemm_plan *g = j->g;
    struct table rows = {NULL, NULL}, cols = {NULL, NULL};
    void *mem = NULL;
    if (j->pre == NULL) {
        mem = malloc(table_bytes(GEMM_KC) + table_bytes(g->dims.n));
        if (mem == NULL) {
            j->failed = true;
            return;
        }
        rows.off = mem, rows.pos = (int32_t *)((char *)mem + align64(GEMM_KC * sizeof(int64_t)));
        char *c = (char *)mem + table_bytes(GEMM_KC);
        cols.off = (int64_t *)c, cols.pos = (int32_t *)(c + align64((size_t)g->dims.n * sizeof(int64_t)));
    }
    for (int64_t e = begin; e < end; e++) {
        int64_t group = e / j->kblocks, k0 = e % j->kblocks * GEMM_KC, kc = OCD_MIN(GEMM_KC, g->dims.k - k0);
        struct table r = slice(g, j->pre, 2, group, k0, k0 + kc, rows);
        struct table c = slice(g, j->pre, 3, group, 0, g->dims.n, cols);
        FN(pack_b)(&g->b, r, c, group, k0, 0, kc, g->dims.n, j->dst + (group * g->dims.k + k0) * FN(npad)(g));
    }
    free(mem);
}

static cudnnStatus_t FN(run)(struct gemm_plan *g, void *ws, int strategy)
{
    struct tables pre;
    void *rest = strategy == IMPLICIT ? NULL : precompute(g, ws, &pre);
    GEMM_T *packed_b = NULL;
    bool prepack = g->p->dir != OCD_CONV_BWD_FILTER;
    if (prepack) {
        size_t bytes = (size_t)(g->dims.groups * g->dims.k * FN(npad)(g)) * sizeof(GEMM_T);
        if (strategy == IMPLICIT) {
            packed_b = malloc(bytes ? bytes : 1);
            if (packed_b == NULL) return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "cannot allocate %zu bytes", bytes);
        } else {
            packed_b = rest;
            rest = (char *)rest + align64(bytes);
        }
        struct FN(prepack_job) pj = {g, strategy == IMPLICIT ? NULL : &pre, packed_b, (g->dims.k + GEMM_KC - 1) / GEMM_KC,
                                     false};
        ocd_parallel_for(g->dims.groups * pj.kblocks, 1, FN(prepack_range), &pj);
        if (pj.failed) {
            if (strategy == IMPLICIT) free(packed_b);
            return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "cannot allocate the GEMM scratch of a task");
        }
    }
    if (strategy == EXPLICIT) {
        struct operand *o = gathered(g);
        bool is_a = o == &g->a;
        struct FN(gather_job) gj = {g, &pre, o, is_a ? 0 : 2, is_a ? 1 : 3, is_a ? g->dims.m : g->dims.k,
                                    is_a ? g->dims.k : g->dims.n, rest};
        ocd_parallel_for(g->dims.groups * gj.rows, 64, FN(gather_rows), &gj);
        o->base = rest;
        o->dtype = GEMM_NATIVE;
        o->ld = gj.cols;
        o->dense_group = gj.rows * gj.cols;
    }
    struct FN(job) job = {g, strategy == IMPLICIT ? NULL : &pre, packed_b, GEMM_MC, GEMM_NC, 0, 0, false};
    /* Halve the tiles (N first: it repacks only A) until every thread has two tasks or the tiles
       are a few micro-tiles; the reduction (K) is never split, so results do not depend on it. */
    int64_t want = 2 * (int64_t)ocd_parallel_threads();
    for (;;) {
        job.mt = (g->dims.m + job.mc - 1) / job.mc, job.nt = (g->dims.n + job.nc - 1) / job.nc;
        if (g->dims.groups * job.mt * job.nt >= want) break;
        if (job.nc > 4 * GEMM_NR && g->dims.n > job.nc / 2) job.nc /= 2;
        else if (job.mc > 4 * GEMM_MR && g->dims.m > job.mc / 2) job.mc /= 2;
        else break;
    }
    ocd_parallel_for(g->dims.groups * job.mt * job.nt, 1, FN(tiles), &job);
    if (strategy == IMPLICIT) free(packed_b);
    if (job.failed) return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "cannot allocate the GEMM scratch of a task");
    return CUDNN_STATUS_SUCCESS;
}

#undef GEMM_T
#undef GEMM_NATIVE
#undef GEMM_SFX
#undef GEMM_MR
#undef GEMM_NR
#undef GEMM_MC
#undef GEMM_NC
#undef GEMM_KC
#undef FN
#undef GEMM_CAT
#undef GEMM_CAT_
