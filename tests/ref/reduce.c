/* reduce.c: reference reductions (see reduce.h), plain loops in double. */
#include "ref/reduce.h"

#include "test.h"

#include <math.h>

void ref_reduce(cudnnReduceTensorOp_t op, bool propagate_nan, double alpha, const struct rtensor *at, const void *a,
                double beta, const struct rtensor *ct, const void *c_before, double *want, uint32_t *index)
{
    int64_t span = rt_span(ct);
    for (int64_t i = 0; i < span; i++) want[i] = tload(ct->dtype, c_before, i);
    int rdims[RT_MAX_DIMS]; /* the reduced extent of each dim (1 where C keeps it) */
    for (int d = 0; d < at->rank; d++) rdims[d] = ct->dims[d] == 1 ? at->dims[d] : 1;
    int out[RT_MAX_DIMS] = {0};
    int64_t o = 0;
    do {
        double acc = (op == CUDNN_REDUCE_TENSOR_MUL || op == CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS) ? 1 : 0;
        double best = 0;
        int64_t best_at = -1, count = 0;
        int r[RT_MAX_DIMS] = {0}, idx[RT_MAX_DIMS];
        do {
            for (int d = 0; d < at->rank; d++) idx[d] = ct->dims[d] == 1 ? r[d] : out[d];
            double v = tload(at->dtype, a, rt_origin(at) + rt_offset(at, idx));
            switch (op) {
            case CUDNN_REDUCE_TENSOR_ADD: case CUDNN_REDUCE_TENSOR_AVG: acc += v; break;
            case CUDNN_REDUCE_TENSOR_MUL: acc *= v; break;
            case CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS: if (v != 0) acc *= v; break;
            case CUDNN_REDUCE_TENSOR_NORM1: acc += fabs(v); break;
            case CUDNN_REDUCE_TENSOR_NORM2: acc += v * v; break;
            default: {
                double key = op == CUDNN_REDUCE_TENSOR_AMAX ? fabs(v) : v;
                if (isnan(key)) {
                    /* propagated: the first NaN wins for good; ignored: a NaN only stands in
                       until a number comes */
                    if (best_at < 0 || (propagate_nan && !isnan(best))) {
                        best = key;
                        best_at = count;
                    }
                } else if (best_at < 0 || (isnan(best) && !propagate_nan) ||
                           (!isnan(best) && (op == CUDNN_REDUCE_TENSOR_MIN ? key < best : key > best))) {
                    best = key;
                    best_at = count;
                }
            }
            }
            count++;
        } while (rt_next(at->rank, rdims, r));
        double result = op == CUDNN_REDUCE_TENSOR_AVG     ? acc / (double)count
                        : op == CUDNN_REDUCE_TENSOR_NORM2 ? sqrt(acc)
                        : (op == CUDNN_REDUCE_TENSOR_MIN || op == CUDNN_REDUCE_TENSOR_MAX ||
                           op == CUDNN_REDUCE_TENSOR_AMAX)
                            ? best
                            : acc;
        int64_t co = rt_origin(ct) + rt_offset(ct, out);
        double v = alpha * result;
        if (beta != 0) v += beta * tload(ct->dtype, c_before, co);
        want[co] = ref_quantize(ct->dtype, v);
        if (index) index[o] = (uint32_t)best_at;
        o++;
    } while (rt_next(ct->rank, ct->dims, out));
}
