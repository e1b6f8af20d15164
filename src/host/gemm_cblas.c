/* gemm_cblas.c: the host's CBLAS engine: the shared GEMM's entry on it (host:gemm_cblas) and the
   once-per-process measurement against the built-in packed engine (see gemm_cblas.h).

   Main decision: the calibration is one dense GEMM, C (64 x 784) = A (64 x 576) B (576 x 784):
   the per-image product of a 3x3 layer with 64 filters over 64 channels on a 28 x 28 image,
   large enough for both engines to run at their steady rate (about 58 MFLOP: half a millisecond
   to two milliseconds on a two-core machine) and small enough to cost a few milliseconds once.
   Both engines run it through their ocd_gemm entries. Each runs once untimed (thread start-up,
   first touch of the buffers), then three times alternately with the other; the best time of
   each decides, so that a burst of load on a shared machine cannot penalise only one of them.
   The library wins only when strictly faster.

   The entry hands the library the problem as it stands (column-major, transpositions, leading
   dimensions, alpha and beta; the library does not read C when beta is 0), one call a matrix of
   the batch, then applies a bias and an activation in one pass over C. The library threads each
   call itself; our pool stays idle meanwhile. */
#include "host/gemm_cblas.h"

#include "problem/gemm.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#ifdef OCD_HAVE_CBLAS
#include "core/dtype.h"
#include "core/platform.h"
#include "core/reasons.h"
#include "host/typed.h"

#include <cblas.h>
#include <math.h>
#endif

enum ocd_host_gemm_choice ocd_host_gemm_choice(void)
{
    static atomic_bool warned;
    const char *v = getenv("OPENCUDNN_HOST_GEMM");
    if (v == NULL || *v == '\0') return OCD_HOST_GEMM_MEASURE;
    if (strcmp(v, "cblas") == 0) return OCD_HOST_GEMM_CBLAS;
    if (strcmp(v, "builtin") == 0) return OCD_HOST_GEMM_BUILTIN;
    if (!atomic_exchange(&warned, true))
        ocd_log_message(CUDNN_SEV_WARNING, CUDNN_STATUS_SUCCESS,
                        "OPENCUDNN_HOST_GEMM=%s is neither cblas nor builtin: the host GEMM engine is measured", v);
    return OCD_HOST_GEMM_MEASURE;
}

#ifdef OCD_HAVE_CBLAS

/* ---- the entry ------------------------------------------------------------------------------------ */

const char *ocd_host_gemm_cblas_applies(cudnnHandle_t handle, const void *call_)
{
    const struct ocd_gemm_problem *p = ((const struct ocd_gemm_call *)call_)->p;
    enum ocd_host_gemm_choice choice = ocd_host_gemm_choice();
    if (choice == OCD_HOST_GEMM_BUILTIN) return "OPENCUDNN_HOST_GEMM=builtin";
    if ((p->ab_type != CUDNN_DATA_FLOAT && p->ab_type != CUDNN_DATA_DOUBLE) || p->c_type != p->ab_type)
        return OCD_REASON_DTYPE;
    if (choice == OCD_HOST_GEMM_CBLAS) return NULL;
    if (2.0 * (double)p->m * (double)p->n * (double)p->k < OCD_HOST_CBLAS_MIN_FLOPS)
        return "a product this small runs faster on the packed engine";
    return ocd_host_cblas_wins(p->ab_type) ? NULL : "the CBLAS library lost this process's calibration";
}

static const void *matrix(const struct ocd_gemm_problem *p, const void *data, int64_t stride, int64_t b)
{
    if (p->pointer_array) return ((const void *const *)data)[b];
    return (const char *)data + b * stride * (int64_t)ocd_dtype_scalar_size(p->ab_type);
}

/* C = act(C + bias) over one m x n matrix. */
static void epilogue(const struct ocd_gemm_call *call, void *c)
{
    const struct ocd_gemm_problem *p = call->p;
    for (int64_t j = 0; j < p->n; j++)
        for (int64_t i = 0; i < p->m; i++) {
            int64_t off = i + j * p->ldc;
            ocd_host_store(p->c_type, c, off, ocd_host_gemm_finish(call, i, j, ocd_host_load(p->c_type, c, off)));
        }
}

cudnnStatus_t ocd_host_gemm_cblas(cudnnHandle_t handle, const void *call_, void *ws, size_t ws_bytes)
{
    const struct ocd_gemm_call *call = call_;
    const struct ocd_gemm_problem *p = call->p;
    const enum CBLAS_TRANSPOSE ta = p->trans_a ? CblasTrans : CblasNoTrans, tb = p->trans_b ? CblasTrans : CblasNoTrans;
    const int m = (int)p->m, n = (int)p->n, k = (int)p->k, lda = (int)p->lda, ldb = (int)p->ldb, ldc = (int)p->ldc;
    for (int64_t b = 0; b < p->batch; b++) {
        const void *a = matrix(p, call->a, p->stride_a, b), *bm = matrix(p, call->b, p->stride_b, b);
        void *c = (void *)(p->pointer_array ? ((void *const *)call->c)[b]
                                            : (char *)call->c + b * p->stride_c * (int64_t)ocd_dtype_scalar_size(p->c_type));
        if (p->ab_type == CUDNN_DATA_DOUBLE)
            cblas_dgemm(CblasColMajor, ta, tb, m, n, k, p->alpha, a, lda, bm, ldb, p->beta, c, ldc);
        else
            cblas_sgemm(CblasColMajor, ta, tb, m, n, k, (float)p->alpha, a, lda, bm, ldb, (float)p->beta, c, ldc);
        if (p->bias != OCD_GEMM_BIAS_NONE || p->act_on || p->pw_act_on) epilogue(call, c);
    }
    return CUDNN_STATUS_SUCCESS;
}

/* ---- the calibration -------------------------------------------------------------------------------- */

enum { CAL_M = 64, CAL_N = 784, CAL_K = 576, CAL_REPS = 3 };

struct calibration {
    ocd_once_t once;
    cudnnDataType_t dtype;
    bool cblas_wins;
};
static struct calibration calibrations[2] = {{OCD_ONCE_INIT, CUDNN_DATA_FLOAT, false},
                                             {OCD_ONCE_INIT, CUDNN_DATA_DOUBLE, false}};

static double timed(cudnnStatus_t (*run)(cudnnHandle_t, const void *, void *, size_t), const struct ocd_gemm_call *call)
{
    double t0 = ocd_seconds();
    run(NULL, call, NULL, 0);
    return ocd_seconds() - t0;
}

static void calibrate(struct calibration *cal)
{
    size_t elem = cal->dtype == CUDNN_DATA_DOUBLE ? sizeof(double) : sizeof(float);
    struct ocd_gemm_problem p = {.m = CAL_M, .n = CAL_N, .k = CAL_K, .lda = CAL_M, .ldb = CAL_K, .ldc = CAL_M,
                                 .batch = 1, .ab_type = cal->dtype, .c_type = cal->dtype, .alpha = 1.0,
                                 .compute = cal->dtype == CUDNN_DATA_DOUBLE ? OCD_GEMM_COMPUTE_F64 : OCD_GEMM_COMPUTE_F32};
    /* zeros: no denormals, and neither engine looks at values */
    struct ocd_gemm_call call = {&p, ocd_calloc((size_t)(CAL_M * CAL_K), elem), ocd_calloc((size_t)(CAL_K * CAL_N), elem),
                                 ocd_calloc((size_t)(CAL_M * CAL_N), elem), NULL};
    double best_cblas = HUGE_VAL, best_builtin = HUGE_VAL;
    if (call.a && call.b && call.c) {
        for (int r = 0; r <= CAL_REPS; r++) { /* run 0 is the untimed one */
            double c = timed(ocd_host_gemm_cblas, &call);
            double b = timed(ocd_host_gemm_packed, &call);
            if (r > 0) best_cblas = OCD_MIN(best_cblas, c), best_builtin = OCD_MIN(best_builtin, b);
        }
        cal->cblas_wins = best_cblas < best_builtin;
        double gflop = 2.0 * CAL_M * CAL_N * CAL_K * 1e-9;
        ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS,
                        "host GEMM calibration (%s, %dx%dx%d): CBLAS %.1f GFLOP/s, built-in %.1f GFLOP/s: %s",
                        cal->dtype == CUDNN_DATA_DOUBLE ? "double" : "float", CAL_M, CAL_N, CAL_K, gflop / best_cblas,
                        gflop / best_builtin, cal->cblas_wins ? "CBLAS" : "built-in");
    } else {
        ocd_log_message(CUDNN_SEV_WARNING, CUDNN_STATUS_ALLOC_FAILED,
                        "host GEMM calibration: out of memory; the built-in engine is used");
    }
    free((void *)call.a), free((void *)call.b), free(call.c);
}

static void calibrate_float(void)
{
    calibrate(&calibrations[0]);
}

static void calibrate_double(void)
{
    calibrate(&calibrations[1]);
}

bool ocd_host_cblas_wins(cudnnDataType_t dtype)
{
    if (dtype != CUDNN_DATA_FLOAT && dtype != CUDNN_DATA_DOUBLE) return false;
    enum ocd_host_gemm_choice choice = ocd_host_gemm_choice();
    if (choice != OCD_HOST_GEMM_MEASURE) return choice == OCD_HOST_GEMM_CBLAS;
    if (dtype == CUDNN_DATA_FLOAT) {
        ocd_once(&calibrations[0].once, calibrate_float);
        return calibrations[0].cblas_wins;
    }
    ocd_once(&calibrations[1].once, calibrate_double);
    return calibrations[1].cblas_wins;
}

#else

bool ocd_host_cblas_wins(cudnnDataType_t dtype)
{
    (void)dtype;
    return false;
}

#endif
