/* softmax.c: cudnnSoftmaxForward, and the implementation table both directions run through
   (cudnnSoftmaxBackward lives in softmax_train.c).

   cuDNN 8.2 rules implemented here: BAD_PARAM when the algorithm or the mode is not a valid
   enumerant, when the dims or the data types of input and output differ, and (the in-place rule
   of every op) when y is x with other strides. Every legal layout is served; the CUDA table
   holds kernels for contiguous slices (CHANNEL over NHWC, INSTANCE over any packed layout), for
   slices strided over a contiguous inner dim (CHANNEL over NCHW), and a generic one. Beyond the
   text, the forward takes plain INT8 data (oneDNN's s8 softmax makes the call on NVIDIA's
   library), run by the generic CUDA kernel or the host; the backward stays floating-point. */
#include "ops/softmax.h"

#include "core/argcheck.h"
#include "core/check.h"
#include "core/impl.h"

#include <stddef.h>
#include <stdio.h>

static const struct ocd_impl softmax_impls[] = {
#ifdef OCD_HAVE_CUDA
    OCD_IMPL_ENTRY("cuda:softmax_rows_packed", OCD_BACKEND_CUDA, ocd_cuda_softmax_rows_packed_applies, NULL,
                   ocd_cuda_softmax_rows_packed),
    OCD_IMPL_ENTRY("cuda:softmax_rows_lanes", OCD_BACKEND_CUDA, ocd_cuda_softmax_rows_lanes_applies, NULL,
                   ocd_cuda_softmax_rows_lanes),
    OCD_IMPL_ENTRY("cuda:softmax_rows_warp", OCD_BACKEND_CUDA, ocd_cuda_softmax_rows_warp_applies, NULL,
                   ocd_cuda_softmax_rows_warp),
    OCD_IMPL_ENTRY("cuda:softmax_rows_block", OCD_BACKEND_CUDA, ocd_cuda_softmax_rows_block_applies, NULL,
                   ocd_cuda_softmax_rows_block),
    OCD_IMPL_ENTRY("cuda:softmax_cols_regs", OCD_BACKEND_CUDA, ocd_cuda_softmax_cols_regs_applies, NULL,
                   ocd_cuda_softmax_cols_regs),
    OCD_IMPL_ENTRY("cuda:softmax_tile_vec", OCD_BACKEND_CUDA, ocd_cuda_softmax_tile_vec_applies, NULL,
                   ocd_cuda_softmax_tile_vec),
    OCD_IMPL_ENTRY("cuda:softmax_tile", OCD_BACKEND_CUDA, ocd_cuda_softmax_tile_applies, NULL, ocd_cuda_softmax_tile),
    OCD_IMPL_ENTRY("cuda:softmax_generic", OCD_BACKEND_CUDA, NULL, NULL,
                   ocd_cuda_softmax_generic),
#endif
    OCD_IMPL_ENTRY("host:softmax_runs", OCD_BACKEND_HOST, NULL, NULL, ocd_host_softmax),
};

cudnnStatus_t ocd_softmax_run(cudnnHandle_t handle, const struct ocd_softmax_problem *p, const char *op)
{
    return ocd_impl_run(handle, softmax_impls, OCD_ARRAY_LEN(softmax_impls), p, op);
}

cudnnStatus_t ocd_softmax_run_checked(cudnnHandle_t handle, const struct ocd_softmax_problem *p, const char *op,
                                      const struct ocd_tensor_view *const views[], cudnnSoftmaxAlgorithm_t algo,
                                      cudnnSoftmaxMode_t mode)
{
    if (!ocd_check_enabled()) return ocd_softmax_run(handle, p, op);
    struct ocd_check_call call = {.op = op, .problem_size = sizeof *p};
    ocd_check_map_io(&call, offsetof(struct ocd_softmax_problem, io), p->backward ? 2 : 1, views);
    char spec[96];
    ocd_check_tensor_spec(views[0], spec, sizeof spec);
    static const char *const algos[] = {"fast", "accurate", "log"};
    snprintf(call.replay, sizeof call.replay, "op=%s algo=%s mode=%s dt=%s x=%s",
             p->backward ? "softmaxbwd" : "softmaxfwd", algos[algo], mode == CUDNN_SOFTMAX_MODE_INSTANCE ? "instance" : "channel",
             ocd_check_dtype_name(views[0]->dtype), spec);
    return ocd_impl_run_checked(handle, softmax_impls, OCD_ARRAY_LEN(softmax_impls), p, &call);
}

cudnnStatus_t ocd_softmax_check_enums(cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode)
{
    if ((unsigned)algo > CUDNN_SOFTMAX_LOG)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "algo %d is not a cudnnSoftmaxAlgorithm_t", (int)algo);
    if ((unsigned)mode > CUDNN_SOFTMAX_MODE_CHANNEL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "mode %d is not a cudnnSoftmaxMode_t", (int)mode);
    return CUDNN_STATUS_SUCCESS;
}

void ocd_softmax_groups(struct ocd_softmax_problem *p, cudnnSoftmaxMode_t mode, int count,
                        const struct ocd_tensor_view *const views[])
{
    /* INSTANCE: every dim but N; CHANNEL: dim 1 (C) alone. */
    unsigned slice = mode == CUDNN_SOFTMAX_MODE_INSTANCE ? ~1u : 2u;
    ocd_dim_group_build(&p->slice, count, views, slice);
    ocd_dim_group_build(&p->batch, count, views, ~slice);
}

cudnnStatus_t CUDNNWINAPI cudnnSoftmaxForward(cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo,
                                              cudnnSoftmaxMode_t mode, const void *alpha,
                                              const cudnnTensorDescriptor_t xDesc, const void *x,
                                              const void *beta, const cudnnTensorDescriptor_t yDesc, void *y)
{
    OCD_LOG_API("handle=%p algo=%d mode=%d alpha=%p xDesc=%p x=%p beta=%p yDesc=%p y=%p", (void *)handle,
                (int)algo, (int)mode, alpha, (void *)xDesc, x, beta, (void *)yDesc, y);
    OCD_CHECK_HANDLE(handle);
    OCD_TRY(ocd_softmax_check_enums(algo, mode));
    OCD_TRY(ocd_check_scaling(alpha, beta));
    struct ocd_tensor_view xv, yv;
    OCD_TRY(ocd_check_map_any_type(xDesc, x, yDesc, y, &xv, &yv));
    /* int8 (plain, any layout) too, forward only: oneDNN's s8 softmax runs through this call on
       NVIDIA's library; computed in floating point, rounded to nearest even and saturated */
    if (!(xv.dtype == CUDNN_DATA_INT8 && xv.vect == 1)) OCD_TRY(ocd_check_float_type(&xv, "xDesc"));

    struct ocd_softmax_problem p = {0};
    p.log = algo == CUDNN_SOFTMAX_LOG;
    ocd_map_io_set(&p.io, xv.dtype, alpha, beta, x, NULL, y);
    const struct ocd_tensor_view *views[] = {&xv, &yv};
    ocd_softmax_groups(&p, mode, 2, views);
    return ocd_softmax_run_checked(handle, &p, __func__, views, algo, mode);
}
