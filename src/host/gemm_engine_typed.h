/* gemm_engine_typed.h: the typed half of the packed GEMM engine (gemm_engine.h), included by
   gemm_engine.c once per compute type with GEMM_T (float or double), GEMM_NATIVE (its
   cudnnDataType_t), GEMM_SFX (a name suffix) and the micro-tile GEMM_MR x GEMM_NR defined.
   Everything here is static to gemm_engine.c; the macros are undefined at the end so that the
   next inclusion can set them anew. */

#define GEMM_CAT_(a, b) a##_##b
#define GEMM_CAT(a, b) GEMM_CAT_(a, b)
#define FN(name) GEMM_CAT(name, GEMM_SFX)

#define GEMM_MC (16 * GEMM_MR)
#define GEMM_NC 256
#define GEMM_KC 256

/* Element (row, col) of an operand; r and c are the table entries of the row and the column. */
static inline GEMM_T FN(get)(const struct ocd_host_gemm_operand *o, int64_t roff, const int32_t *rpos, int64_t coff,
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
   dense operand is read at (r0 + row, c0 + col) of group `group` (the tables are then unused). */
static void FN(pack_a)(const struct ocd_host_gemm_operand *o, struct ocd_host_gemm_table r, struct ocd_host_gemm_table c, int64_t group, int64_t r0,
                       int64_t c0, int64_t rows, int64_t kc, GEMM_T *restrict dst)
{
    for (int64_t s = 0; s < rows; s += GEMM_MR) {
        GEMM_T *panel = dst + s * kc;
        int live = (int)OCD_MIN(GEMM_MR, rows - s);
        if (o->dense) {
            const void *gb = dense_base(o, group);
            int64_t at = (r0 + s) * o->rs + c0 * o->cs, rs = o->rs, cs = o->cs;
            if (o->dtype == GEMM_NATIVE) {
                const GEMM_T *src = (const GEMM_T *)gb + at;
                for (int64_t k = 0; k < kc; k++)
                    for (int i = 0; i < GEMM_MR; i++) panel[k * GEMM_MR + i] = i < live ? src[i * rs + k * cs] : 0;
            } else {
                for (int64_t k = 0; k < kc; k++)
                    for (int i = 0; i < GEMM_MR; i++)
                        panel[k * GEMM_MR + i] = i < live ? (GEMM_T)ocd_host_load(o->dtype, gb, at + i * rs + k * cs) : 0;
            }
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
                for (int d = 0; d < 2; d++) rp[d][i] = d < o->nchk ? r.pos[(s + i) * OCD_HOST_GEMM_MAX_POS + d] : 0;
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
                int32_t c0p = o->nchk > 0 ? c.pos[k * OCD_HOST_GEMM_MAX_POS] : 0;
                int32_t c1p = o->nchk > 1 ? c.pos[k * OCD_HOST_GEMM_MAX_POS + 1] : 0;
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
                panel[k * GEMM_MR + i] = i < live ? FN(get)(o, r.off[row], r.pos + row * OCD_HOST_GEMM_MAX_POS,
                                                            c.off[k], c.pos + k * OCD_HOST_GEMM_MAX_POS)
                                                  : 0;
            }
        }
    }
}

/* Packs rows [0, kc) (table r) x columns [0, cols) (table c) of B into NR-column micro-panels. */
static void FN(pack_b)(const struct ocd_host_gemm_operand *o, struct ocd_host_gemm_table r, struct ocd_host_gemm_table c, int64_t group, int64_t r0,
                       int64_t c0, int64_t kc, int64_t cols, GEMM_T *restrict dst)
{
    for (int64_t s = 0; s < cols; s += GEMM_NR) {
        GEMM_T *panel = dst + s * kc;
        int live = (int)OCD_MIN(GEMM_NR, cols - s);
        const void *gb = o->dense ? dense_base(o, group) : NULL;
        for (int64_t k = 0; k < kc; k++) {
            GEMM_T *out = panel + k * GEMM_NR;
            if (o->dense) {
                int64_t at = (r0 + k) * o->rs + (c0 + s) * o->cs, cs = o->cs;
                if (o->dtype != GEMM_NATIVE) {
                    for (int j = 0; j < GEMM_NR; j++) out[j] = j < live ? (GEMM_T)ocd_host_load(o->dtype, gb, at + j * cs) : 0;
                    continue;
                }
                const GEMM_T *src = (const GEMM_T *)gb + at;
                if (cs == 1)
                    for (int j = 0; j < GEMM_NR; j++) out[j] = j < live ? src[j] : 0;
                else
                    for (int j = 0; j < GEMM_NR; j++) out[j] = j < live ? src[j * cs] : 0;
                continue;
            }
            for (int j = 0; j < GEMM_NR; j++) {
                int64_t col = s + j;
                out[j] = j < live ? FN(get)(o, r.off[k], r.pos + k * OCD_HOST_GEMM_MAX_POS, c.off[col],
                                            c.pos + col * OCD_HOST_GEMM_MAX_POS)
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
static int64_t FN(npad)(const struct ocd_host_gemm *g)
{
    return (g->n + GEMM_NR - 1) / GEMM_NR * GEMM_NR;
}

struct FN(job) {
    const struct ocd_host_gemm *g;
    GEMM_T *packed_b;         /* all of B packed once (see prepack), or NULL: packed per tile */
    int64_t mc, nc;           /* tile sizes: at most GEMM_MC x GEMM_NC, smaller to feed every thread */
    int64_t mt, nt;           /* tiles along M and N */
};

/* Task scratch: packed blocks, the C tile, and room for every table slice a tile needs (A rows,
   A columns, B rows, B columns, and the store's two). */
struct FN(scratch) {
    GEMM_T *pa, *pb, *acc;
    struct ocd_host_gemm_table t[6];
};

static const int64_t FN(scratch_entries)[6] = {GEMM_MC, GEMM_KC, GEMM_KC, GEMM_NC, GEMM_MC, GEMM_NC};

static size_t FN(scratch_bytes)(void)
{
    size_t bytes = sizeof(GEMM_T) * (GEMM_MC * GEMM_KC + GEMM_KC * GEMM_NC + GEMM_MC * GEMM_NC) + 64;
    for (int i = 0; i < 6; i++) bytes += ocd_host_gemm_table_bytes(FN(scratch_entries)[i]);
    return bytes;
}

/* Lays the task scratch out in mem (FN(scratch_bytes) of it, 64-byte aligned). */
static void FN(scratch_carve)(struct FN(scratch) *s, char *mem)
{
    const int64_t *entries = FN(scratch_entries);
    char *at = mem;
    s->pa = (GEMM_T *)at, at += sizeof(GEMM_T) * GEMM_MC * GEMM_KC;
    s->pb = (GEMM_T *)at, at += sizeof(GEMM_T) * GEMM_KC * GEMM_NC;
    s->acc = (GEMM_T *)at, at += sizeof(GEMM_T) * GEMM_MC * GEMM_NC;
    at = (char *)align64((size_t)at);
    for (int i = 0; i < 6; i++) s->t[i] = ocd_host_gemm_table_at(at, entries[i]), at += ocd_host_gemm_table_bytes(entries[i]);
}

static void FN(tiles)(void *ctx, int64_t begin, int64_t end, void *mem)
{
    struct FN(job) *job = ctx;
    const struct ocd_host_gemm *g = job->g;
    struct FN(scratch) s;
    FN(scratch_carve)(&s, mem);
    bool a_tabled = !g->a.dense, b_tabled = !g->b.dense && job->packed_b == NULL;
    struct ocd_host_gemm_table none = {NULL, NULL};
    for (int64_t t = begin; t < end; t++) {
        int64_t group = t / (job->mt * job->nt), mb = t / job->nt % job->mt, nb = t % job->nt;
        int64_t m0 = mb * job->mc, mc = OCD_MIN(job->mc, g->m - m0);
        int64_t n0 = nb * job->nc, nc = OCD_MIN(job->nc, g->n - n0);
        int64_t ldacc = (nc + GEMM_NR - 1) / GEMM_NR * GEMM_NR;
        int64_t mcp = (mc + GEMM_MR - 1) / GEMM_MR * GEMM_MR;
        struct ocd_host_gemm_table ar = a_tabled ? g->slice(g->ctx, 0, group, m0, m0 + mc, s.t[0]) : none;
        struct ocd_host_gemm_table bc = b_tabled ? g->slice(g->ctx, 3, group, n0, n0 + nc, s.t[3]) : none;
        memset(s.acc, 0, sizeof(GEMM_T) * (size_t)(mcp * ldacc));
        for (int64_t k0 = 0; k0 < g->k; k0 += GEMM_KC) {
            int64_t kc = OCD_MIN(GEMM_KC, g->k - k0);
            struct ocd_host_gemm_table ac = a_tabled ? g->slice(g->ctx, 1, group, k0, k0 + kc, s.t[1]) : none;
            struct ocd_host_gemm_table br = b_tabled ? g->slice(g->ctx, 2, group, k0, k0 + kc, s.t[2]) : none;
            FN(pack_a)(&g->a, ar, ac, group, m0, k0, mc, kc, s.pa);
            const GEMM_T *pb = s.pb;
            if (job->packed_b != NULL) pb = job->packed_b + group * g->k * FN(npad)(g) + k0 * FN(npad)(g) + n0 * kc;
            else FN(pack_b)(&g->b, br, bc, group, k0, n0, kc, nc, s.pb);
            for (int64_t jr = 0; jr < ldacc; jr += GEMM_NR)
                for (int64_t ir = 0; ir < mcp; ir += GEMM_MR)
                    FN(micro)(kc, s.pa + ir * kc, pb + jr * kc, s.acc + ir * ldacc + jr, ldacc);
        }
        g->store(g->ctx, s.acc, ldacc, group, m0, n0, mc, nc, s.t + 4);
    }
}

struct FN(gather_job) {
    const struct ocd_host_gemm *g;
    const struct ocd_host_gemm_operand *o;
    int rtab, ctab;
    int64_t rows, cols;
    GEMM_T *dst;
};

/* Materialises one row of a tabled operand for each index of the range (group-major). */
static void FN(gather_rows)(void *ctx, int64_t begin, int64_t end, void *scratch)
{
    struct FN(gather_job) *j = ctx;
    char *mem = scratch;
    struct ocd_host_gemm_table rs = ocd_host_gemm_table_at(mem, 1), cs = ocd_host_gemm_table_at(mem + ocd_host_gemm_table_bytes(1), j->cols);
    for (int64_t e = begin; e < end; e++) {
        int64_t group = e / j->rows, row = e % j->rows;
        struct ocd_host_gemm_table r = j->g->slice(j->g->ctx, j->rtab, group, row, row + 1, rs);
        struct ocd_host_gemm_table c = j->g->slice(j->g->ctx, j->ctab, group, 0, j->cols, cs);
        GEMM_T *out = j->dst + e * j->cols;
        for (int64_t col = 0; col < j->cols; col++)
            out[col] = FN(get)(j->o, r.off[0], r.pos, c.off[col], c.pos + col * OCD_HOST_GEMM_MAX_POS);
    }
}

static cudnnStatus_t FN(gather)(struct ocd_host_gemm *g, int which, void *dst)
{
    struct ocd_host_gemm_operand *o = which == 0 ? &g->a : &g->b;
    struct FN(gather_job) gj = {g, o, which == 0 ? 0 : 2, which == 0 ? 1 : 3, which == 0 ? g->m : g->k,
                                which == 0 ? g->k : g->n, dst};
    size_t table_bytes = ocd_host_gemm_table_bytes(1) + ocd_host_gemm_table_bytes(gj.cols);
    if (!ocd_parallel_for_scratch(g->groups * gj.rows, 64, table_bytes, FN(gather_rows), &gj))
        return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "cannot allocate the index tables of the gather tasks");
    o->base = dst;
    o->dtype = GEMM_NATIVE;
    o->dense = true;
    o->rs = gj.cols;
    o->cs = 1;
    o->group_stride = gj.rows * gj.cols;
    o->ptrs = NULL;
    return CUDNN_STATUS_SUCCESS;
}

/* Packs all of B once, per group, per KC block of rows, in micro-panels: the block of rows k0 of
   group g starts at (g * K + k0) * npad and its panel of columns n0 at n0 * kc within. */
struct FN(prepack_job) {
    const struct ocd_host_gemm *g;
    GEMM_T *dst;
    int64_t kblocks;
};

/* The scratch of a prepack task: B's index tables for a block of rows (none for a dense B). */
static size_t FN(prepack_scratch_bytes)(const struct ocd_host_gemm *g)
{
    return g->b.dense ? 0 : ocd_host_gemm_table_bytes(GEMM_KC) + ocd_host_gemm_table_bytes(g->n);
}

static void FN(prepack_range)(void *ctx, int64_t begin, int64_t end, void *scratch)
{
    struct FN(prepack_job) *j = ctx;
    const struct ocd_host_gemm *g = j->g;
    struct ocd_host_gemm_table rows = {NULL, NULL}, cols = {NULL, NULL};
    char *mem = scratch;
    if (!g->b.dense) {
        rows = ocd_host_gemm_table_at(mem, GEMM_KC), cols = ocd_host_gemm_table_at(mem + ocd_host_gemm_table_bytes(GEMM_KC), g->n);
    }
    for (int64_t e = begin; e < end; e++) {
        int64_t group = e / j->kblocks, k0 = e % j->kblocks * GEMM_KC, kc = OCD_MIN(GEMM_KC, g->k - k0);
        struct ocd_host_gemm_table r = rows, c = cols;
        if (!g->b.dense) {
            r = g->slice(g->ctx, 2, group, k0, k0 + kc, rows);
            c = g->slice(g->ctx, 3, group, 0, g->n, cols);
        }
        FN(pack_b)(&g->b, r, c, group, k0, 0, kc, g->n, j->dst + (group * g->k + k0) * FN(npad)(g));
    }
}

static size_t FN(prepack_bytes)(const struct ocd_host_gemm *g)
{
    return g->prepack_b ? align64((size_t)(g->groups * g->k * FN(npad)(g)) * sizeof(GEMM_T)) : 0;
}

static cudnnStatus_t FN(run)(const struct ocd_host_gemm *g, void *prepack_ws)
{
    GEMM_T *packed_b = NULL, *owned = NULL;
    if (g->prepack_b) {
        size_t bytes = FN(prepack_bytes)(g);
        packed_b = prepack_ws;
        if (packed_b == NULL) {
            packed_b = owned = ocd_malloc(bytes ? bytes : 1);
            if (owned == NULL) return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "cannot allocate %zu bytes", bytes);
        }
        struct FN(prepack_job) pj = {g, packed_b, (g->k + GEMM_KC - 1) / GEMM_KC};
        if (!ocd_parallel_for_scratch(g->groups * pj.kblocks, 1, FN(prepack_scratch_bytes)(g), FN(prepack_range), &pj)) {
            free(owned);
            return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "cannot allocate the GEMM scratch of a task");
        }
    }
    struct FN(job) job = {g, packed_b, GEMM_MC, GEMM_NC, 0, 0};
    /* Halve the tiles (N first: it repacks only A) until every thread has two tasks or the tiles
       are a few micro-tiles; the reduction (K) is never split, so results do not depend on it. */
    int64_t want = 2 * (int64_t)ocd_parallel_threads();
    for (;;) {
        job.mt = (g->m + job.mc - 1) / job.mc, job.nt = (g->n + job.nc - 1) / job.nc;
        if (g->groups * job.mt * job.nt >= want) break;
        if (job.nc > 4 * GEMM_NR && g->n > job.nc / 2) job.nc /= 2;
        else if (job.mc > 4 * GEMM_MR && g->m > job.mc / 2) job.mc /= 2;
        else break;
    }
    bool ran = ocd_parallel_for_scratch_in(g->tile_scratch, g->groups * job.mt * job.nt, 1, FN(scratch_bytes)(),
                                           FN(tiles), &job);
    free(owned);
    if (!ran) return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "cannot allocate the GEMM scratch of the tasks");
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
