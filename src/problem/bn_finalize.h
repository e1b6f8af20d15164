/* bn_finalize.h: the per-channel pass of the backend API's batch-norm operations, shared by the
   host and the CUDA kernels (src/host/bn_finalize.c, src/cuda/bn_finalize.cu).

   Batch normalization is split, in the graph API, into passes over the data (statistics:
   GEN_STATS, or the sums of the backward pass) and a pass over the channels that turns those
   sums into what the next pass needs. This is that channel pass, one channel per thread, in
   double whatever the tensors' types:
   - TRAINING (OPERATION_BN_FINALIZE_STATISTICS, CUDNN_BN_FINALIZE_STATISTICS_TRAINING): from the
     channel sums of y and y^2 over `count` elements, mean = sum / count and the biased
     var = sq_sum / count - mean^2; saved mean and inverse standard deviation
     invstd = 1 / sqrt(var + epsilon); the running averages, as cudnnBatchNormalizationForward-
     Training updates them, updated = (1 - factor) * previous + factor * statistic, the variance's
     statistic the unbiased var * count / (count - 1) (a factor of 1 does not read the previous
     values); and the equivalent scale and bias of y's normalization,
     eq_scale = scale * invstd, eq_bias = bias - mean * eq_scale, so that the next pass computes
     bn(y) = eq_scale * y + eq_bias.
   - INFERENCE (CUDNN_BN_FINALIZE_STATISTICS_INFERENCE): the same eq_scale and eq_bias from the
     running mean and variance (the previous ones); nothing else is written.
   - WEIGHTS (OPERATION_BN_BWD_WEIGHTS): from the batch-norm backward sums dscale = sum dy * xhat
     and dbias = sum dy over M elements (the sums pass computes them), with the saved mean and
     invstd, the coefficients of the data gradient dx = eq_dy_scale * dy + eq_x_scale * x +
     eq_bias: A = scale * invstd, B = -A * invstd * dscale / M, C = -A * dbias / M - B * mean (the
     coefficients of problem/batchnorm.h's backward pass, dscale there being
     invstd * sum dy (x-mean)).
   Scalars (epsilon, factor, count) are operands of stride 0, or immediate values when the graph
   passes them by value (host memory, read when the plan is bound). */
#ifndef OCD_PROBLEM_BN_FINALIZE_H
#define OCD_PROBLEM_BN_FINALIZE_H

#include "core/hostdev.h"
#include "core/impl.h"
#include "core/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ocd_bnf_mode { OCD_BNF_TRAINING, OCD_BNF_INFERENCE, OCD_BNF_WEIGHTS };

/* The operands: inputs first, then outputs. */
enum ocd_bnf_slot {
    OCD_BNF_SUM, OCD_BNF_SQ_SUM, OCD_BNF_SCALE, OCD_BNF_BIAS, OCD_BNF_PREV_MEAN, OCD_BNF_PREV_VAR,
    OCD_BNF_MEAN, OCD_BNF_INV_STD, OCD_BNF_DSCALE, OCD_BNF_DBIAS,
    OCD_BNF_EPSILON, OCD_BNF_FACTOR, OCD_BNF_COUNT, /* scalars */
    OCD_BNF_INPUTS,
    OCD_BNF_UPDATED_MEAN = OCD_BNF_INPUTS, OCD_BNF_UPDATED_VAR, OCD_BNF_SAVED_MEAN, OCD_BNF_SAVED_INV_STD,
    OCD_BNF_EQ_SCALE, /* WEIGHTS: eq_dy_scale */
    OCD_BNF_EQ_BIAS, OCD_BNF_EQ_X_SCALE,
    OCD_BNF_SLOTS
};

/* One operand: channel c at data + c * stride scalars (stride 0 for a scalar); absent when data is
   NULL and not immediate. */
struct ocd_bnf_operand {
    cudnnDataType_t dtype;
    void *data;
    int64_t stride;
    bool immediate; /* a by-value scalar: value holds it */
    double value;
};

struct ocd_bnf_problem {
    enum ocd_bnf_mode mode;
    int64_t channels;
    double reduced; /* WEIGHTS: the elements M behind each channel's sums */
    struct ocd_bnf_operand t[OCD_BNF_SLOTS];
};

OCD_HOST_DEVICE bool ocd_bnf_present(const struct ocd_bnf_operand *o)
{
    return o->data != NULL || o->immediate;
}

/* The outputs of one channel from its inputs (in[s] for every input slot s; absent ones 0). */
OCD_HOST_DEVICE void ocd_bnf_channel(const struct ocd_bnf_problem *p, const double *in, double *out)
{
    if (p->mode == OCD_BNF_WEIGHTS) {
        const double m = p->reduced, invstd = in[OCD_BNF_INV_STD], a = in[OCD_BNF_SCALE] * invstd;
        const double b = -a * invstd * in[OCD_BNF_DSCALE] / m;
        out[OCD_BNF_EQ_SCALE] = a;
        out[OCD_BNF_EQ_X_SCALE] = b;
        out[OCD_BNF_EQ_BIAS] = -a * in[OCD_BNF_DBIAS] / m - b * in[OCD_BNF_MEAN];
        return;
    }
    double mean, var;
    const double n = in[OCD_BNF_COUNT];
    if (p->mode == OCD_BNF_TRAINING) {
        mean = in[OCD_BNF_SUM] / n;
        var = in[OCD_BNF_SQ_SUM] / n - mean * mean;
        if (var < 0) var = 0; /* rounding of the two sums */
    } else {
        mean = in[OCD_BNF_PREV_MEAN];
        var = in[OCD_BNF_PREV_VAR];
    }
    const double invstd = 1.0 / sqrt(var + in[OCD_BNF_EPSILON]);
    out[OCD_BNF_EQ_SCALE] = in[OCD_BNF_SCALE] * invstd;
    out[OCD_BNF_EQ_BIAS] = in[OCD_BNF_BIAS] - mean * out[OCD_BNF_EQ_SCALE];
    if (p->mode != OCD_BNF_TRAINING) return;
    out[OCD_BNF_SAVED_MEAN] = mean;
    out[OCD_BNF_SAVED_INV_STD] = invstd;
    const double f = in[OCD_BNF_FACTOR], unbiased = n > 1 ? var * n / (n - 1) : var;
    out[OCD_BNF_UPDATED_MEAN] = f * mean + (f != 1 ? (1 - f) * in[OCD_BNF_PREV_MEAN] : 0);
    out[OCD_BNF_UPDATED_VAR] = f * unbiased + (f != 1 ? (1 - f) * in[OCD_BNF_PREV_VAR] : 0);
}

/* Implementations: (handle, const struct ocd_bnf_problem *). */
cudnnStatus_t ocd_host_bn_finalize(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
#ifdef OCD_HAVE_CUDA
cudnnStatus_t ocd_cuda_bn_finalize(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
#endif

#ifdef __cplusplus
}
#endif

#endif /* OCD_PROBLEM_BN_FINALIZE_H */
