/* gemm_cblas_calibrate.c: the once-per-process measurement of the CBLAS library against the
   built-in packed GEMM engine (see gemm_cblas_calibrate.h).

   Main decision: the calibration is one GEMM, C (64 x 784) = A (64 x 576) B (576 x 784): the
   per-image product of a 3x3 layer with 64 filters over 64 channels on a 28 x 28 image, large
   enough for both engines to run at their steady rate (about 58 MFLOP: half a millisecond to two
   milliseconds on a two-core machine) and small enough to cost a few milliseconds once. Both run
   it as the convolution entries run a 1x1 convolution of that shape, so what is measured is what
   the forward convolution would get: the CBLAS entry (x itself is B, one cblas_?gemm) and the
   packed engine's precomputed strategy (the one its heuristic takes first). Each engine runs once
   untimed (thread start-up, first touch of the buffers), then three times alternately with the
   other; the best time of each decides, so that a burst of load on a shared machine cannot
   penalise only one of them. The library wins only when strictly faster. */
#include "host/gemm_cblas_calibrate.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#ifdef OCD_HAVE_CBLAS
#include "host/conv.h"

#include <math.h>
#include <pthread.h>
#include <time.h>
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

enum { CAL_M = 64, CAL_K = 576, CAL_SIDE = 28, CAL_REPS = 3 };

struct calibration {
    pthread_once_t once;
    cudnnDataType_t dtype;
    bool cblas_wins;
};
static struct calibration calibrations[2] = {{PTHREAD_ONCE_INIT, CUDNN_DATA_FLOAT, false},
                                             {PTHREAD_ONCE_INIT, CUDNN_DATA_DOUBLE, false}};

/* A packed NCHW view. */
static void packed_view(struct ocd_tensor_view *v, cudnnDataType_t t, int64_t n, int64_t c, int64_t h, int64_t w)
{
    *v = (struct ocd_tensor_view){.dtype = t, .rank = 4, .vect = 1, .dims = {n, c, h, w}, .strides = {c * h * w, h * w, w, 1}};
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double timed(cudnnStatus_t (*run)(cudnnHandle_t, const void *, void *, size_t), const struct ocd_conv_problem *p,
                    void *ws, size_t ws_bytes)
{
    double t0 = now();
    run(NULL, p, ws, ws_bytes);
    return now() - t0;
}

static void calibrate(struct calibration *cal)
{
    size_t elem = cal->dtype == CUDNN_DATA_DOUBLE ? sizeof(double) : sizeof(float);
    const int64_t pixels = CAL_SIDE * CAL_SIDE;
    struct ocd_conv_problem p;
    memset(&p, 0, sizeof p);
    p.dir = OCD_CONV_FWD;
    p.s = (struct ocd_conv_shape){.nsp = 2, .n = 1, .c = CAL_K, .k = CAL_M, .groups = 1,
                                  .in = {CAL_SIDE, CAL_SIDE}, .filt = {1, 1}, .out = {CAL_SIDE, CAL_SIDE},
                                  .stride = {1, 1}, .dilation = {1, 1}};
    packed_view(&p.x, cal->dtype, 1, CAL_K, CAL_SIDE, CAL_SIDE);
    packed_view(&p.w, cal->dtype, CAL_M, CAL_K, 1, 1);
    packed_view(&p.y, cal->dtype, 1, CAL_M, CAL_SIDE, CAL_SIDE);
    p.w_format = CUDNN_TENSOR_NCHW;
    p.compute = cal->dtype;
    p.math = CUDNN_DEFAULT_MATH;
    p.alpha = 1.0;
    /* zeros: no denormals, and neither engine looks at values */
    size_t ws_bytes = ocd_host_conv_gemm_precomp_workspace(NULL, &p);
    p.x_data = calloc((size_t)(CAL_K * pixels), elem);
    p.w_data = calloc((size_t)(CAL_M * CAL_K), elem);
    p.y_data = calloc((size_t)(CAL_M * pixels), elem);
    void *ws = malloc(ws_bytes);
    double best_cblas = HUGE_VAL, best_builtin = HUGE_VAL;
    if (p.x_data && p.w_data && p.y_data && ws) {
        for (int r = 0; r <= CAL_REPS; r++) { /* run 0 is the untimed one */
            double c = timed(ocd_host_conv_cblas, &p, NULL, 0);
            double b = timed(ocd_host_conv_gemm_precomp, &p, ws, ws_bytes);
            if (r > 0) best_cblas = OCD_MIN(best_cblas, c), best_builtin = OCD_MIN(best_builtin, b);
        }
        cal->cblas_wins = best_cblas < best_builtin;
        double gflop = 2.0 * CAL_M * (double)pixels * CAL_K * 1e-9;
        ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS,
                        "host GEMM calibration (%s, %dx%lldx%d): CBLAS %.1f GFLOP/s, built-in %.1f GFLOP/s: %s",
                        cal->dtype == CUDNN_DATA_DOUBLE ? "double" : "float", CAL_M, (long long)pixels, CAL_K,
                        gflop / best_cblas, gflop / best_builtin, cal->cblas_wins ? "CBLAS" : "built-in");
    } else {
        ocd_log_message(CUDNN_SEV_WARNING, CUDNN_STATUS_ALLOC_FAILED,
                        "host GEMM calibration: out of memory; the built-in engine is used");
    }
    free(p.x_data), free(p.w_data), free(p.y_data), free(ws);
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
        pthread_once(&calibrations[0].once, calibrate_float);
        return calibrations[0].cblas_wins;
    }
    pthread_once(&calibrations[1].once, calibrate_double);
    return calibrations[1].cblas_wins;
}

#else

bool ocd_host_cblas_wins(cudnnDataType_t dtype)
{
    (void)dtype;
    return false;
}

#endif
