/* attn_core.c: the attention core (src/problem/attn_core.h) against the double reference
   (ref/attn_core.c), on every backend present and every implementation of it, forced one at a
   time with OPENCUDNN_DISABLE (the i-th forward entry with the i-th backward entry after it):
   every window kind (full, causal, sliding past both ends, rows without keys), per-sequence
   lengths, beams under both query maps, head sizes that are and are not multiples of 8 (and
   64, 128: the fused kernels', over several of their query blocks and key tiles), the query
   range of an inference step, three operand layouts (packed, time-major, strided elements with
   gaps), float, half, bfloat16 and double, dropout off and on (the reference regenerates the
   mask from its own Philox), and
   the backward overwriting and accumulating. Outputs hold random prior values and the whole span
   of each is compared, so rows the core must not write (and the gaps) must come back untouched.
   The backward is also checked by finite differences of sum(dO * O) in double; bad problems
   return BAD_PARAM and write nothing. On CUDA, a forward and backward captured into a graph
   and replayed give the same results.

   The core is not an API function: the test reaches it as an ocd_ symbol of
   libcudnn_adv_infer.so.8, as tests/gemm.c reaches ocd_gemm. */
#include "problem/attn_core.h"

#include "ref/attn_core.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef OCD_TEST_CUDA
#include <cuda_runtime.h>
#endif

typedef cudnnStatus_t (*fwd_fn)(cudnnHandle_t, const struct ocd_attn_core_problem *, void *, size_t, void *, size_t,
                                const char *);
typedef cudnnStatus_t (*bwd_fn)(cudnnHandle_t, const struct ocd_attn_core_problem *, void *, size_t, const void *,
                                size_t, const char *);

static fwd_fn fwd_entry(void)
{
    static fwd_fn fn;
    if (fn == NULL) *(void **)&fn = test_lib_symbol(OCD_LIBRARY_FILE("cudnn_adv_infer"), "ocd_attn_core_forward");
    return fn;
}

static bwd_fn bwd_entry(void)
{
    static bwd_fn fn;
    if (fn == NULL) *(void **)&fn = test_lib_symbol(OCD_LIBRARY_FILE("cudnn_adv_infer"), "ocd_attn_core_backward");
    return fn;
}

/* The implementations of each backend, in table order (src/adv/attn_core.c): forward and
   backward, run in pairs (the wgmma backward also after the sm_80 forward, which serves it the
   problems with dropout that the wgmma forward does not). */
static const char *const host_entries[][2] = {{"host:attn_fwd_rows", "host:attn_bwd_rows"}};
static const char *const cuda_entries[][2] = {{"cuda:attn_fwd_sm90", "cuda:attn_bwd_sm90"},
                                              {"cuda:attn_fwd_flash", "cuda:attn_bwd_sm90"},
                                              {"cuda:attn_fwd_flash", "cuda:attn_bwd_flash"},
                                              {"cuda:attn_fwd_rows", "cuda:attn_bwd_rows"}};

enum win { WIN_FULL, WIN_CAUSAL, WIN_SLIDE, WIN_HOLES };
enum layout { PACKED, TIME_MAJOR, STRIDED };

/* A case, named for what it exercises. */
struct acase {
    const char *name;
    int batch, beams, heads, max_q, max_kv, dqk, dv;
    bool kv_shared, lengths; /* lengths: shorter sequences than the buffers */
    enum win win;
    enum layout layout;
    int q_first, q_count; /* q_count 0: all steps */
};

static const struct acase acases[] = {
    {"plain", 2, 1, 2, 5, 6, 8, 8, false, false, WIN_FULL, PACKED, 0, 0},
    {"lengths_causal", 3, 1, 2, 7, 7, 8, 16, false, true, WIN_CAUSAL, TIME_MAJOR, 0, 0},
    {"sliding_window", 2, 1, 1, 9, 11, 5, 3, false, true, WIN_SLIDE, STRIDED, 0, 0},
    {"rows_without_keys", 2, 1, 2, 6, 5, 4, 4, false, false, WIN_HOLES, PACKED, 0, 0},
    {"beams_one_to_one", 2, 3, 2, 4, 6, 8, 8, false, true, WIN_FULL, TIME_MAJOR, 0, 0},
    {"beams_all_to_one", 2, 3, 2, 4, 6, 8, 8, true, true, WIN_CAUSAL, PACKED, 0, 0},
    {"odd_heads", 1, 2, 3, 5, 7, 3, 5, true, false, WIN_SLIDE, STRIDED, 0, 0},
    {"inference_step", 2, 2, 2, 6, 6, 8, 8, false, true, WIN_CAUSAL, TIME_MAJOR, 3, 1},
    {"head64_tiles", 2, 1, 2, 70, 90, 64, 64, false, true, WIN_FULL, TIME_MAJOR, 0, 0},
    {"head128_causal", 1, 2, 1, 80, 80, 128, 128, true, true, WIN_CAUSAL, PACKED, 0, 0},
    {"head64_holes", 2, 2, 1, 70, 130, 64, 64, true, true, WIN_HOLES, TIME_MAJOR, 0, 0},
    {"head128_sliding", 1, 1, 2, 100, 150, 128, 128, false, true, WIN_SLIDE, PACKED, 0, 0},
    {"head40_window", 1, 1, 2, 33, 70, 40, 24, false, false, WIN_SLIDE, PACKED, 0, 0},
    {"head64_blocks", 1, 1, 2, 260, 300, 64, 64, false, true, WIN_CAUSAL, TIME_MAJOR, 0, 0},
    {"head128_blocks", 1, 2, 1, 200, 270, 128, 128, true, true, WIN_SLIDE, PACKED, 0, 0},
};

static const cudnnDataType_t atypes[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16, CUDNN_DATA_DOUBLE};

static double tolerance(cudnnDataType_t t)
{
    return t == CUDNN_DATA_DOUBLE ? 1e-10 : t == CUDNN_DATA_FLOAT ? 5e-5 : 2 * ttolerance(t);
}

/* One operand: its dims (batch, beams, heads, time, elements), strides, span and buffers. */
struct top {
    int dims[OCD_ATTN_AXES];
    int64_t stride[OCD_ATTN_AXES], span;
    double *logical; /* dense [b][m][h][t][x] */
    double *prior;   /* the span's values before the call */
    void *dev;
};

static int64_t logical_count(const struct top *o)
{
    int64_t n = 1;
    for (int a = 0; a < OCD_ATTN_AXES; a++) n *= o->dims[a];
    return n;
}

/* Offset of logical element l. */
static int64_t top_offset(const struct top *o, int64_t l)
{
    int64_t off = 0;
    for (int a = OCD_ATTN_AXES - 1; a >= 0; a--) {
        off += l % o->dims[a] * o->stride[a];
        l /= o->dims[a];
    }
    return off;
}

/* An operand of the given dims in a layout; random values (rounded to t) everywhere in its span.
   shared: a K/V operand of one beam, whose beam stride 0 the core must ignore. */
static void top_make(struct top *o, cudnnDataType_t t, enum layout lay, int b, int m, int h, int tm, int d,
                     bool shared)
{
    int dims[] = {b, m, h, tm, d};
    memcpy(o->dims, dims, sizeof dims);
    int64_t *s = o->stride;
    if (lay == TIME_MAJOR) {
        s[4] = 1, s[2] = d, s[1] = (int64_t)h * d, s[0] = (int64_t)m * h * d, s[3] = (int64_t)b * m * h * d;
    } else {
        int64_t e = lay == STRIDED ? 2 : 1, row = lay == STRIDED ? 2 * d + 3 : d;
        s[4] = e, s[3] = row, s[2] = tm * row, s[1] = (int64_t)h * tm * row, s[0] = (int64_t)m * h * tm * row;
        if (lay == STRIDED) s[0] += 5;
    }
    if (shared) s[1] = 0;
    o->span = 1;
    for (int a = 0; a < OCD_ATTN_AXES; a++) o->span += (int64_t)(dims[a] - 1) * s[a];
    void *typed = malloc(tdtype_size(t) * (size_t)o->span);
    tfill_random(t, typed, o->span, -1, 1);
    o->prior = malloc(sizeof(double) * (size_t)o->span);
    for (int64_t i = 0; i < o->span; i++) o->prior[i] = tload(t, typed, i);
    int64_t n = logical_count(o);
    o->logical = malloc(sizeof(double) * (size_t)n);
    for (int64_t l = 0; l < n; l++) o->logical[l] = o->prior[top_offset(o, l)];
    o->dev = tbuf_from(typed, tdtype_size(t) * (size_t)o->span);
    free(typed);
}

static void top_free(struct top *o)
{
    free(o->logical), free(o->prior);
    tbuf_free(o->dev);
}

static struct ocd_attn_operand top_operand(const struct top *o)
{
    struct ocd_attn_operand x;
    x.data = o->dev;
    memcpy(x.stride, o->stride, sizeof x.stride);
    return x;
}

/* Before the reference writes an output: its logical values are the prior ones when it
   accumulates, NaN (= not written) otherwise. */
static void top_want_init(struct top *o, bool accumulate)
{
    int64_t n = logical_count(o);
    for (int64_t l = 0; l < n; l++) o->logical[l] = accumulate ? o->prior[top_offset(o, l)] : NAN;
}

/* Compares the span on the backend with the prior values overlaid by what the reference wrote. */
static bool top_compare(const struct top *o, cudnnDataType_t t, const char *what)
{
    double *want = malloc(sizeof(double) * (size_t)o->span);
    memcpy(want, o->prior, sizeof(double) * (size_t)o->span);
    int64_t n = logical_count(o);
    for (int64_t l = 0; l < n; l++)
        if (!isnan(o->logical[l])) want[top_offset(o, l)] = o->logical[l];
    void *got = malloc(tdtype_size(t) * (size_t)o->span);
    tbuf_download(got, o->dev, tdtype_size(t) * (size_t)o->span);
    bool ok = tcompare(t, got, want, o->span, tolerance(t), what);
    free(got), free(want);
    return ok;
}

/* A whole problem: operands, lengths (on the backend), windows, generator state and buffers. */
struct setup {
    struct ocd_attn_core_problem p;
    struct ref_attn r;
    struct top q, k, v, o, d_o, dq, dk, dv;
    int *len_q, *len_kv, *lo, *hi;
    void *len_q_dev, *len_kv_dev, *rng_dev, *ws, *reserve;
    size_t ws_bytes, reserve_bytes;
};

static void setup_make(struct setup *s, const struct acase *c, cudnnDataType_t t, double dropout, bool accumulate)
{
    memset(s, 0, sizeof *s);
    int kvb = c->kv_shared ? 1 : c->beams;
    s->len_q = malloc(sizeof(int) * (size_t)(c->batch * c->beams));
    s->len_kv = malloc(sizeof(int) * (size_t)(c->batch * kvb));
    for (int i = 0; i < c->batch * c->beams; i++) s->len_q[i] = c->lengths ? trand_int(1, c->max_q) : c->max_q;
    for (int i = 0; i < c->batch * kvb; i++) s->len_kv[i] = c->lengths ? trand_int(1, c->max_kv) : c->max_kv;
    if (c->lengths) s->len_q[0] = c->max_q; /* the longest too */
    s->lo = malloc(sizeof(int) * (size_t)c->max_q), s->hi = malloc(sizeof(int) * (size_t)c->max_q);
    for (int i = 0; i < c->max_q; i++) {
        switch (c->win) {
        case WIN_FULL: s->lo[i] = 0, s->hi[i] = c->max_kv; break;
        case WIN_CAUSAL: s->lo[i] = 0, s->hi[i] = i + 1; break;
        case WIN_SLIDE: s->lo[i] = i - 3, s->hi[i] = i + 4 + c->max_kv / 3; break;
        case WIN_HOLES: s->lo[i] = i % 3 == 1 ? 4 : 1, s->hi[i] = i % 3 == 1 ? 2 : i % 3 == 2 ? c->max_kv + 7 : 3; break;
        }
    }
    int q_count = c->q_count ? c->q_count : c->max_q;
    top_make(&s->q, t, c->layout, c->batch, c->beams, c->heads, c->max_q, c->dqk, false);
    top_make(&s->k, t, c->layout, c->batch, kvb, c->heads, c->max_kv, c->dqk, c->kv_shared);
    top_make(&s->v, t, c->layout, c->batch, kvb, c->heads, c->max_kv, c->dv, c->kv_shared);
    top_make(&s->o, t, c->layout, c->batch, c->beams, c->heads, c->max_q, c->dv, false);
    top_make(&s->d_o, t, c->layout, c->batch, c->beams, c->heads, c->max_q, c->dv, false);
    top_make(&s->dq, t, c->layout, c->batch, c->beams, c->heads, c->max_q, c->dqk, false);
    top_make(&s->dk, t, c->layout, c->batch, kvb, c->heads, c->max_kv, c->dqk, c->kv_shared);
    top_make(&s->dv, t, c->layout, c->batch, kvb, c->heads, c->max_kv, c->dv, c->kv_shared);
    s->len_q_dev = tbuf_from(s->len_q, sizeof(int) * (size_t)(c->batch * c->beams));
    s->len_kv_dev = tbuf_from(s->len_kv, sizeof(int) * (size_t)(c->batch * kvb));
    uint64_t rng[2] = {trand_u64(), trand_u64() >> 8};
    s->rng_dev = tbuf_from(rng, sizeof rng);

    struct ocd_attn_core_problem *p = &s->p;
    p->dtype = t;
    p->batch = c->batch, p->beams = c->beams, p->heads = c->heads, p->max_q = c->max_q, p->max_kv = c->max_kv;
    p->head_qk = c->dqk, p->head_v = c->dv, p->kv_shared = c->kv_shared;
    p->q_first = c->q_first, p->q_count = q_count;
    p->sm_scaler = 1.0 / sqrt((double)c->dqk) * 1.5;
    p->len_q = s->len_q_dev, p->len_kv = s->len_kv_dev, p->lo_win = s->lo, p->hi_win = s->hi;
    p->dropout = dropout, p->rng = s->rng_dev, p->rng_advance = true;
    p->q = top_operand(&s->q), p->k = top_operand(&s->k), p->v = top_operand(&s->v), p->o = top_operand(&s->o);
    p->d_o = top_operand(&s->d_o), p->dq = top_operand(&s->dq), p->dk = top_operand(&s->dk),
    p->dv = top_operand(&s->dv);
    p->accumulate = accumulate;
    s->ws_bytes = ocd_attn_core_workspace_bytes(p, true), s->reserve_bytes = ocd_attn_core_reserve_bytes(p);
    s->ws = tbuf_alloc(s->ws_bytes), s->reserve = tbuf_alloc(s->reserve_bytes);

    struct ref_attn r = {c->batch, c->beams, c->heads, c->max_q, c->max_kv, c->dqk, c->dv, c->kv_shared,
                         c->q_first, q_count, p->sm_scaler, s->len_q, s->len_kv, s->lo, s->hi, dropout,
                         rng[0], rng[1], accumulate};
    s->r = r;
}

static void setup_free(struct setup *s)
{
    struct top *ops[] = {&s->q, &s->k, &s->v, &s->o, &s->d_o, &s->dq, &s->dk, &s->dv};
    for (size_t i = 0; i < OCD_ARRAY_LEN(ops); i++) top_free(ops[i]);
    tbuf_free(s->len_q_dev), tbuf_free(s->len_kv_dev), tbuf_free(s->rng_dev), tbuf_free(s->ws),
        tbuf_free(s->reserve);
    free(s->len_q), free(s->len_kv), free(s->lo), free(s->hi);
}

static cudnnStatus_t forced(const char *disable, cudnnStatus_t (*call)(struct setup *), struct setup *s)
{
    const char *saved = getenv("OPENCUDNN_DISABLE");
    char *prior = saved ? strdup(saved) : NULL;
    if (disable) ocd_setenv("OPENCUDNN_DISABLE", disable);
    cudnnStatus_t st = call(s);
    if (prior) ocd_setenv("OPENCUDNN_DISABLE", prior);
    else ocd_unsetenv("OPENCUDNN_DISABLE");
    free(prior);
    return st;
}

static cudnnStatus_t call_fwd(struct setup *s)
{
    return fwd_entry()(test_handle(), &s->p, s->ws, s->ws_bytes, s->reserve, s->reserve_bytes, "test_attn_core");
}

static cudnnStatus_t call_bwd(struct setup *s)
{
    return bwd_entry()(test_handle(), &s->p, s->ws, s->ws_bytes, s->reserve, s->reserve_bytes, "test_attn_core");
}

/* The forward's o against the reference. */
static void compare_fwd(struct setup *s, cudnnDataType_t t, const char *what)
{
    top_want_init(&s->o, false);
    ref_attn_forward(&s->r, s->q.logical, s->k.logical, s->v.logical, s->o.logical);
    char w[240];
    snprintf(w, sizeof w, "%s: o", what);
    top_compare(&s->o, t, w);
}

/* The backward's dq, dk and dv against the reference. */
static void compare_bwd(struct setup *s, cudnnDataType_t t, const char *what)
{
    bool acc = s->p.accumulate;
    top_want_init(&s->dq, acc), top_want_init(&s->dk, acc), top_want_init(&s->dv, acc);
    ref_attn_backward(&s->r, s->q.logical, s->k.logical, s->v.logical, s->d_o.logical, s->dq.logical, s->dk.logical,
                      s->dv.logical);
    char w[240];
    snprintf(w, sizeof w, "%s: dq", what);
    top_compare(&s->dq, t, w);
    snprintf(w, sizeof w, "%s: dk", what);
    top_compare(&s->dk, t, w);
    snprintf(w, sizeof w, "%s: dv", what);
    top_compare(&s->dv, t, w);
}

/* Runs a case forward through the entry `disable` leaves, then backward through the backward
   entry it leaves: true when the forward ran (false: the entry does not serve it, which only
   entries ahead of the fallback may answer; nor may their backward then). *bwd_served (when not
   NULL) counts the backward runs the entry served. */
static bool run_case(const struct acase *c, cudnnDataType_t t, double dropout, bool accumulate, const char *disable,
                     bool fallback, int *bwd_served)
{
    struct setup s;
    setup_make(&s, c, t, dropout, accumulate);
    char what[200];
    snprintf(what, sizeof what, "%s %s dropout %g%s", c->name, tdtype_name(t), dropout,
             accumulate ? " accumulating" : "");
    cudnnStatus_t st = forced(disable, call_fwd, &s);
    bool ran = st == CUDNN_STATUS_SUCCESS;
    if (!ran && (fallback || st != CUDNN_STATUS_NOT_SUPPORTED)) FAIL("%s: forward status %s", what, cudnnGetErrorString(st));
    if (ran) {
        compare_fwd(&s, t, what);
        uint64_t rng[2];
        tbuf_download(rng, s.rng_dev, sizeof rng);
        if (dropout > 0) CHECK(rng[1] == s.r.offset + 1);
        else CHECK(rng[1] == s.r.offset);
    }
    if (ran) {
        st = forced(disable, call_bwd, &s);
        bool served = fallback || st != CUDNN_STATUS_NOT_SUPPORTED;
        if (served && CHECK_OK(st)) compare_bwd(&s, t, what);
        if (bwd_served && st == CUDNN_STATUS_SUCCESS) ++*bwd_served;
    }
    setup_free(&s);
    return ran;
}

static int backend_entries(const char *const (**entries)[2])
{
    bool cuda = strcmp(test_backend, "cuda") == 0;
    *entries = cuda ? cuda_entries : host_entries;
    return cuda ? (int)OCD_ARRAY_LEN(cuda_entries) : (int)OCD_ARRAY_LEN(host_entries);
}

/* False for an entry that serves no problem on this device: the wgmma kernels (names ending
   in _sm90) serve compute capability 9.0 only. */
static bool serves_this_device(const char *entry)
{
    size_t n = strlen(entry);
    return n <= 5 || strcmp(entry + n - 5, "_sm90") != 0 || test_compute_capability() == 90;
}

/* Every pair of entries, forced, on every case and type, dropout off and on. */
TEST(attn_core_matches_reference)
{
    if (!CHECK(fwd_entry() != NULL && bwd_entry() != NULL)) return;
    const char *const(*entries)[2];
    int count = backend_entries(&entries);
    for (int e = 0; e < count; e++) {
        char disable[512] = "";
        for (int o = 0; o < count; o++)
            for (int dir = 0; o != e && dir < 2; dir++)
                if (strcmp(entries[o][dir], entries[e][dir]) != 0)
                    snprintf(disable + strlen(disable), sizeof disable - strlen(disable), "%s%s",
                             disable[0] ? "," : "", entries[o][dir]);
        bool last = e == count - 1;
        int ran = 0, bwd_ran = 0;
        for (size_t t = 0; t < OCD_ARRAY_LEN(atypes); t++)
            for (size_t c = 0; c < OCD_ARRAY_LEN(acases); c++)
                for (int d = 0; d < 2; d++)
                    ran += run_case(&acases[c], atypes[t], d ? 0.25 : 0, (c + t + d) % 2 == 1, disable, last, &bwd_ran);
        if (ran == 0 && serves_this_device(entries[e][0])) FAIL("%s served no case", entries[e][0]);
        if (bwd_ran == 0 && serves_this_device(entries[e][1])) FAIL("%s served no case", entries[e][1]);
    }
}

/* Dropout at its ends: 1 drops every probability (o = 0), and the mask depends on the offset. */
TEST(attn_core_dropout_ends)
{
    if (!CHECK(fwd_entry() != NULL)) return;
    run_case(&acases[0], CUDNN_DATA_FLOAT, 1.0, false, NULL, true, NULL);
    run_case(&acases[4], CUDNN_DATA_DOUBLE, 0.75, true, NULL, true, NULL);
}

/* sum(dO * O) differentiated numerically, in double, with and without dropout. */
static double loss(struct setup *s)
{
    uint64_t rng[2] = {s->r.seed, s->r.offset};
    tbuf_upload(s->rng_dev, rng, sizeof rng);
    if (!CHECK_OK(call_fwd(s))) return NAN;
    double *got = malloc(sizeof(double) * (size_t)s->o.span), l = 0;
    tbuf_download(got, s->o.dev, sizeof(double) * (size_t)s->o.span);
    for (int64_t i = 0; i < logical_count(&s->o); i++) l += got[top_offset(&s->o, i)] * s->d_o.logical[i];
    free(got);
    return l;
}

static void finite_differences(const struct acase *c, double dropout)
{
    struct setup s;
    setup_make(&s, c, CUDNN_DATA_DOUBLE, dropout, false);
    s.p.rng_advance = false;
    loss(&s);
    if (!CHECK_OK(call_bwd(&s))) {
        setup_free(&s);
        return;
    }
    struct top *in[] = {&s.q, &s.k, &s.v}, *grad[] = {&s.dq, &s.dk, &s.dv};
    const char *names[] = {"dq", "dk", "dv"};
    for (int a = 0; a < 3; a++) {
        double *g = malloc(sizeof(double) * (size_t)grad[a]->span);
        tbuf_download(g, grad[a]->dev, sizeof(double) * (size_t)grad[a]->span);
        for (int64_t l = 0; l < logical_count(in[a]); l++) {
            int64_t off = top_offset(in[a], l);
            double x = in[a]->prior[off], h = 1e-5, lp, lm;
            double xp = x + h, xm = x - h;
            tbuf_upload((double *)in[a]->dev + off, &xp, sizeof xp);
            lp = loss(&s);
            tbuf_upload((double *)in[a]->dev + off, &xm, sizeof xm);
            lm = loss(&s);
            tbuf_upload((double *)in[a]->dev + off, &x, sizeof x);
            double num = (lp - lm) / (2 * h), ana = g[top_offset(grad[a], l)];
            if (fabs(num - ana) > 1e-6 * fmax(1, fabs(num))) {
                FAIL("%s dropout %g: %s[%lld] = %.9g, finite differences %.9g", c->name, dropout, names[a],
                     (long long)l, ana, num);
                break;
            }
        }
        free(g);
    }
    setup_free(&s);
}

static const struct acase fd_cases[] = {
    {"fd_all_to_one", 1, 2, 1, 3, 4, 3, 2, true, true, WIN_SLIDE, PACKED, 0, 0},
    {"fd_one_to_one", 2, 2, 1, 3, 3, 2, 3, false, true, WIN_CAUSAL, STRIDED, 0, 0},
};

TEST(attn_core_finite_differences)
{
    if (!CHECK(fwd_entry() != NULL && bwd_entry() != NULL)) return;
    for (size_t c = 0; c < OCD_ARRAY_LEN(fd_cases); c++) {
        finite_differences(&fd_cases[c], 0);
        finite_differences(&fd_cases[c], 0.3);
    }
}

/* Bad problems: BAD_PARAM, nothing written (o, the reserve and the generator keep their bytes). */
#ifdef OCD_TEST_CUDA
/* Frameworks capture cuDNN calls into CUDA graphs and replay them. The core's forward and
   backward (windows, generator words and dropout included), captured on a stream of their own
   and replayed once, match the reference; the windows are those of the captured call, though
   the caller's arrays change before the replay. The fused kernels (half, head 64) and the row
   kernels (float). */
TEST(attn_core_stream_capture)
{
    if (test_backend[0] != 'c' || !CHECK(fwd_entry() != NULL && bwd_entry() != NULL)) return;
    static const struct acase c = {"capture", 2, 1, 2, 70, 90, 64, 64, false, true, WIN_SLIDE, PACKED, 0, 0};
    static const cudnnDataType_t types[] = {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT};
    cudnnHandle_t h = test_handle();
    cudaStream_t prior = NULL, st = NULL;
    if (!CHECK_OK(cudnnGetStream(h, &prior)) ||
        !CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) == cudaSuccess))
        return;
    for (size_t t = 0; t < OCD_ARRAY_LEN(types); t++) {
        struct setup s;
        setup_make(&s, &c, types[t], 0.25, t == 1);
        cudaGraph_t g = NULL;
        cudaGraphExec_t exec = NULL;
        CHECK_OK(cudnnSetStream(h, st));
        CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
        cudnnStatus_t fs = call_fwd(&s), bs = call_bwd(&s);
        bool captured = CHECK(cudaStreamEndCapture(st, &g) == cudaSuccess) && CHECK_OK(fs) && CHECK_OK(bs) &&
                        CHECK(cudaGraphInstantiateWithFlags(&exec, g, 0) == cudaSuccess);
        CHECK_OK(cudnnSetStream(h, prior));
        if (captured) {
            size_t wb = sizeof(int) * (size_t)c.max_q;
            int *lo = malloc(wb), *hi = malloc(wb);
            memcpy(lo, s.lo, wb), memcpy(hi, s.hi, wb);
            memset(s.lo, 0, wb), memset(s.hi, 0, wb); /* the caller's arrays change */
            CHECK(cudaGraphLaunch(exec, st) == cudaSuccess);
            CHECK(cudaStreamSynchronize(st) == cudaSuccess);
            memcpy(s.lo, lo, wb), memcpy(s.hi, hi, wb);
            free(lo), free(hi);
            char what[64];
            snprintf(what, sizeof what, "captured %s", tdtype_name(types[t]));
            compare_fwd(&s, types[t], what);
            compare_bwd(&s, types[t], what);
        }
        if (exec) cudaGraphExecDestroy(exec);
        if (g) cudaGraphDestroy(g);
        setup_free(&s);
    }
    cudaStreamDestroy(st);
}
#endif

TEST(attn_core_bad_input)
{
    if (!CHECK(fwd_entry() != NULL && bwd_entry() != NULL)) return;
    struct setup s;
    setup_make(&s, &acases[0], CUDNN_DATA_FLOAT, 0.5, false);
    struct ocd_attn_core_problem good = s.p;
    for (int k = 0; k < 12; k++) {
        s.p = good;
        size_t ws = s.ws_bytes, rs = s.reserve_bytes;
        bool backward = false;
        switch (k) {
        case 0: s.p.dtype = CUDNN_DATA_INT8; break;
        case 1: s.p.heads = 0; break;
        case 2: s.p.head_v = -1; break;
        case 3: s.p.q_first = 3, s.p.q_count = 3; break;
        case 4: s.p.dropout = 1.5; break;
        case 5: s.p.rng = NULL; break;
        case 6: s.p.lo_win = NULL; break;
        case 7: s.p.k.stride[OCD_ATTN_TIME] = -1; break;
        case 8: ws = ocd_attn_core_workspace_bytes(&s.p, false) - 1; break;
        case 9: rs -= 1; break;
        case 10: s.p.dv.data = NULL, backward = true; break;
        case 11: s.p.sm_scaler = NAN; break;
        }
        char before[4][64];
        void *bufs[] = {s.o.dev, s.reserve, s.rng_dev, s.dq.dev};
        for (int b = 0; b < 4; b++) tbuf_download(before[b], bufs[b], 16);
        cudnnStatus_t st = backward ? bwd_entry()(test_handle(), &s.p, s.ws, ws, s.reserve, rs, "test")
                                    : fwd_entry()(test_handle(), &s.p, s.ws, ws, s.reserve, rs, "test");
        if (!CHECK_STATUS(st, CUDNN_STATUS_BAD_PARAM)) FAIL("bad case %d", k);
        for (int b = 0; b < 4; b++) {
            char after[64];
            tbuf_download(after, bufs[b], 16);
            if (memcmp(before[b], after, 16) != 0) FAIL("bad case %d wrote buffer %d", k, b);
        }
    }
    setup_free(&s);
}
