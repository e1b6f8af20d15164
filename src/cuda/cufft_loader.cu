/* cufft_loader.cu: loads cuFFT at run time and caches plans per handle (see cufft_loader.h). A
   .cu file only because src/cuda holds the CUDA backend's sources; nothing here runs on the
   device. */
#include "cuda/cufft_loader.h"

#include "core/platform.h"
#include "cuda/dynload.h"

#include <limits.h>
#include <stdlib.h>

static struct ocd_cufft_api api;
static const struct ocd_cufft_api *loaded;
static ocd_once_t load_once = OCD_ONCE_INIT;

static void load(void)
{
    static const char *const names[] = {"libcufft.so.12", "libcufft.so", "libcufft.so.11", "libcufft.so.10"};
    struct ocd_cufft_api a;
    const struct ocd_dynload_sym syms[] = {
        {"cufftCreate", (void **)&a.create, false},
        {"cufftDestroy", (void **)&a.destroy, false},
        {"cufftSetAutoAllocation", (void **)&a.set_auto_allocation, false},
        {"cufftMakePlanMany", (void **)&a.make_plan_many, false},
        {"cufftSetWorkArea", (void **)&a.set_work_area, false},
        {"cufftSetStream", (void **)&a.set_stream, false},
        {"cufftExecR2C", (void **)&a.exec_r2c, false},
        {"cufftExecC2R", (void **)&a.exec_c2r, false},
        {"cufftExecD2Z", (void **)&a.exec_d2z, false},
        {"cufftExecZ2D", (void **)&a.exec_z2d, false},
    };
    char why[1024];
    a.library = ocd_dynload(names, OCD_ARRAY_LEN(names), syms, OCD_ARRAY_LEN(syms), why, sizeof why);
    if (a.library == NULL) {
        ocd_log_message(CUDNN_SEV_WARNING, CUDNN_STATUS_SUCCESS,
                        "cuFFT not available, the FFT convolution algorithms are off on CUDA (%s)", why);
        return;
    }
    api = a;
    loaded = &api;
    ocd_log_message(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS, "cuFFT loaded from %s", a.library);
}

const struct ocd_cufft_api *ocd_cufft_api(void)
{
    ocd_once(&load_once, load);
    return loaded;
}

cudnnStatus_t ocd_cufft_status(cufftResult result, const char *what, const char *func, const char *file, int line)
{
    return ocd_fail(result == CUFFT_ALLOC_FAILED ? CUDNN_STATUS_ALLOC_FAILED : CUDNN_STATUS_EXECUTION_FAILED, func, file,
                    line, "%s: cuFFT result %d", what, (int)result);
}

/* The cache: a few plans per handle, the oldest replaced when it is full (a handle serves a few
   layer shapes at a time; a plan costs device memory for its twiddles). */
#define PLAN_SLOTS 16

struct plan_slot {
    bool used;
    int64_t len0, len1, batch;
    cufftType type;
    cufftHandle plan;
    size_t work;
};

struct plan_cache {
    struct plan_slot slot[PLAN_SLOTS];
    int next; /* the slot replaced next when all are used */
};

const char *ocd_cufft_plan(cudnnHandle_t handle, int64_t len0, int64_t len1, int64_t batch, cufftType type,
                           cufftHandle *plan, size_t *work)
{
    const struct ocd_cufft_api *a = ocd_cufft_api();
    if (a == NULL) return "cuFFT not available";
    if (len0 * len1 > INT_MAX || batch > INT_MAX || len0 * (len1 / 2 + 1) * batch > INT_MAX)
        return "the transforms exceed cuFFT's 32-bit plan sizes";
    struct plan_cache *c = (struct plan_cache *)handle->fft;
    struct plan_slot *s = NULL;
    for (int i = 0; i < PLAN_SLOTS && s == NULL; i++) {
        struct plan_slot *t = &c->slot[i];
        if (t->used && t->len0 == len0 && t->len1 == len1 && t->batch == batch && t->type == type) s = t;
    }
    if (s == NULL) {
        s = &c->slot[c->next];
        c->next = (c->next + 1) % PLAN_SLOTS;
        if (s->used) a->destroy(s->plan);
        s->used = false;
        /* a single row is the 1-D transform of that row (same packed layout) */
        int rank = len0 == 1 ? 1 : 2, n[2] = {(int)(rank == 1 ? len1 : len0), (int)len1};
        cufftHandle p;
        cufftResult r = a->create(&p);
        if (r != CUFFT_SUCCESS) {
            ocd_cufft_status(r, "cufftCreate", __func__, __FILE__, __LINE__);
            return "cuFFT could not start on this device";
        }
        size_t bytes = 0;
        r = a->set_auto_allocation(p, 0);
        if (r == CUFFT_SUCCESS) r = a->make_plan_many(p, rank, n, NULL, 1, 0, NULL, 1, 0, type, (int)batch, &bytes);
        if (r != CUFFT_SUCCESS) {
            ocd_cufft_status(r, "cufftMakePlanMany", __func__, __FILE__, __LINE__);
            a->destroy(p);
            return "cuFFT could not make a plan for these transforms";
        }
        *s = (struct plan_slot){true, len0, len1, batch, type, p, bytes};
    }
    if (a->set_stream(s->plan, handle->stream) != CUFFT_SUCCESS) return "cuFFT could not bind the handle's stream";
    *plan = s->plan;
    *work = s->work;
    return NULL;
}

cudnnStatus_t ocd_cufft_open(cudnnHandle_t handle)
{
    handle->fft = ocd_calloc(1, sizeof(struct plan_cache));
    if (handle->fft == NULL) return OCD_FAIL(CUDNN_STATUS_ALLOC_FAILED, "cannot allocate the cuFFT plan cache");
    return CUDNN_STATUS_SUCCESS;
}

void ocd_cufft_release(cudnnHandle_t handle)
{
    struct plan_cache *c = (struct plan_cache *)handle->fft;
    if (c == NULL) return;
    for (int i = 0; i < PLAN_SLOTS; i++)
        if (c->slot[i].used && loaded != NULL) loaded->destroy(c->slot[i].plan);
    free(c);
    handle->fft = NULL;
}
