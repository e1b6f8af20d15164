/* cufft_loader.h: cuFFT, loaded at run time, and the per-handle cache of its plans.

   As with cuBLAS (cublas_loader.h), the libraries never link cuFFT. The first use opens
   (cuda/dynload.h) libcufft.so.12, the unversioned name, then .so.11 and .so.10 (CUDA 13, 12 and
   11; the plan and execution functions used here keep one ABI across them); when none loads,
   ocd_cufft_api() answers NULL and logs why once, and the FFT entries say "cuFFT not available".

   Plans are made with automatic work-area allocation off, so that cuFFT works in the workspace
   the caller gives (the library allocates no device memory behind the user's back), and kept per
   handle (handle->fft, made empty with the handle, so that a support check never meets a failed
   allocation it could only report as "unsupported") keyed by size, batch and type: the workspace
   query makes them, so Find times executions and never plan creation; cudnnDestroy destroys them. The header is C and C++:
   it takes cuFFT's types from the toolkit's header, never its code. */
#ifndef OCD_CUDA_CUFFT_LOADER_H
#define OCD_CUDA_CUFFT_LOADER_H

#include <cufft.h>

#include "core/handle.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ocd_cufft_api {
    cufftResult (*create)(cufftHandle *plan);
    cufftResult (*destroy)(cufftHandle plan);
    cufftResult (*set_auto_allocation)(cufftHandle plan, int auto_allocate);
    cufftResult (*make_plan_many)(cufftHandle plan, int rank, int *n, int *inembed, int istride, int idist,
                                  int *onembed, int ostride, int odist, cufftType type, int batch, size_t *work);
    cufftResult (*set_work_area)(cufftHandle plan, void *work);
    cufftResult (*set_stream)(cufftHandle plan, cudaStream_t stream);
    cufftResult (*exec_r2c)(cufftHandle plan, cufftReal *in, cufftComplex *out);
    cufftResult (*exec_c2r)(cufftHandle plan, cufftComplex *in, cufftReal *out);
    cufftResult (*exec_d2z)(cufftHandle plan, cufftDoubleReal *in, cufftDoubleComplex *out);
    cufftResult (*exec_z2d)(cufftHandle plan, cufftDoubleComplex *in, cufftDoubleReal *out);
    const char *library; /* the file that was loaded */
};

/* The loaded API, or NULL when no cuFFT library loads (logged once, with every name tried). */
const struct ocd_cufft_api *ocd_cufft_api(void);

/* The handle's plan of `batch` packed 2-D transforms of len0 x len1 (type CUFFT_R2C, C2R, D2Z or
   Z2D), made on first use; *work receives the bytes of work area it needs. NULL, or a reason
   (for an applies function) when cuFFT is missing or cannot make the plan. */
const char *ocd_cufft_plan(cudnnHandle_t handle, int64_t len0, int64_t len1, int64_t batch, cufftType type,
                           cufftHandle *plan, size_t *work);

/* Makes the handle's empty plan cache (cudnnCreate); ALLOC_FAILED, logged, when memory is short. */
cudnnStatus_t ocd_cufft_open(cudnnHandle_t handle);

/* Destroys the handle's plans (cudnnDestroy). */
void ocd_cufft_release(cudnnHandle_t handle);

/* A failed cuFFT call as a status: ALLOC_FAILED for out-of-memory, EXECUTION_FAILED otherwise,
   logged with the call, cuFFT's result code and file:line. */
cudnnStatus_t ocd_cufft_status(cufftResult result, const char *what, const char *func, const char *file, int line);

#define OCD_CUFFT_TRY(call)                                                                     \
    do {                                                                                        \
        cufftResult ocd_cufft_r_ = (call);                                                      \
        if (ocd_cufft_r_ != CUFFT_SUCCESS)                                                      \
            return ocd_cufft_status(ocd_cufft_r_, #call, __func__, __FILE__, __LINE__);         \
    } while (0)

#ifdef __cplusplus
}
#endif

#endif /* OCD_CUDA_CUFFT_LOADER_H */
