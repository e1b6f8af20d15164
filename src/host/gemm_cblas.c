/* gemm_cblas.c: the host's GEMM (problem/gemm.h) on the CBLAS library found at build time
   (cblas_sgemm, cblas_dgemm; built only with OPENCUDNN_CBLAS, see the top CMakeLists.txt), for
   float and double data where ocd_host_cblas_wins says the library is faster.

   The library takes alpha and beta (beta == 0: BLAS does not read C) and one call per batch
   matrix, from the calling thread on the library's own threads; a bias or an activation is then
   one pass over C in double, rounded to C's type again. The library's global settings (its
   thread count) are left alone. */
#include "problem/gemm.h"

#include "core/dtype.h"
#include "host/cblas_wins.h"
#include "host/typed.h"
#include "ops/activation.h"

#include <cblas.h>

const char *ocd_host_gemm_cblas_applies(cudnnHandle_t handle, const void *call_)
{
    const struct ocd_gemm_problem *p = ((const struct ocd_gemm_call *)call_)->p;
    if (p->ab_type != CUDNN_DATA_FLOAT && p->ab_type != CUDNN_DATA_DOUBLE) return "CBLAS takes float and double data";
    if (!ocd_host_cblas_wins(p->ab_type)) return "the packed engine is faster than CBLAS for this type here";
    return NULL;
}

static const void *batch_base(const struct ocd_gemm_problem *p, const void *data, int64_t stride, int64_t batch)
{
    if (p->pointer_array) return ((const void *const *)data)[batch];
    return (const char *)data + batch * stride * (int64_t)ocd_dtype_scalar_size(p->ab_type);
}

/* C = act(C + bias), one matrix. */
static void epilogue(const struct ocd_gemm_call *call, void *c)
{
    const struct ocd_gemm_problem *p = call->p;
    const struct ocd_activation_params *act = &p->act;
    for (int64_t j = 0; j < p->n; j++) {
        for (int64_t i = 0; i < p->m; i++) {
            int64_t off = i + j * p->ldc;
            double v = ocd_host_load(p->c_type, c, off);
            if (p->bias == OCD_GEMM_BIAS_ROW) v += ocd_host_load(p->c_type, call->bias, i);
            else if (p->bias == OCD_GEMM_BIAS_COL) v += ocd_host_load(p->c_type, call->bias, j);
            if (p->act_on)
                v = ocd_act_forward(act->mode, act->nan_opt == CUDNN_PROPAGATE_NAN, act->coef, act->swish_beta, v);
            ocd_host_store(p->c_type, c, off, v);
        }
    }
}

cudnnStatus_t ocd_host_gemm_cblas(cudnnHandle_t handle, const void *call_, void *ws, size_t ws_bytes)
{
    const struct ocd_gemm_call *call = call_;
    const struct ocd_gemm_problem *p = call->p;
    enum CBLAS_TRANSPOSE ta = p->trans_a ? CblasTrans : CblasNoTrans, tb = p->trans_b ? CblasTrans : CblasNoTrans;
    int m = (int)p->m, n = (int)p->n, k = (int)p->k, lda = (int)p->lda, ldb = (int)p->ldb, ldc = (int)p->ldc;
    for (int64_t i = 0; i < p->batch; i++) {
        const void *a = batch_base(p, call->a, p->stride_a, i), *b = batch_base(p, call->b, p->stride_b, i);
        void *c = (void *)batch_base(p, call->c, p->stride_c, i);
        if (p->ab_type == CUDNN_DATA_FLOAT)
            cblas_sgemm(CblasColMajor, ta, tb, m, n, k, (float)p->alpha, a, lda, b, ldb, (float)p->beta, c, ldc);
        else
            cblas_dgemm(CblasColMajor, ta, tb, m, n, k, p->alpha, a, lda, b, ldb, p->beta, c, ldc);
        if (p->bias != OCD_GEMM_BIAS_NONE || p->act_on) epilogue(call, c);
    }
    return CUDNN_STATUS_SUCCESS;
}
