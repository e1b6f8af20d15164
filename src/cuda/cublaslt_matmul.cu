/* cublaslt_matmul.cu: one cuBLASLt matmul's descriptors, algorithm query and run (see
   cublaslt_matmul.h). A .cu file only because src/cuda holds the CUDA backend's sources; nothing
   here runs on the device. */
#include "cuda/cublaslt_matmul.h"

#include "core/impl.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The descriptors of one matmul: the operation and the layouts of A, B and C (which D shares). */
struct lt_descs {
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t a, b, c;
};

uint32_t ocd_lt_alignment(const void *ptr, int64_t stride_bytes, int64_t batch)
{
    uint64_t bits = (uint64_t)(uintptr_t)ptr | 256;
    if (batch > 1) bits |= (uint64_t)stride_bytes;
    return (uint32_t)(bits & (~bits + 1));
}

bool ocd_lt_fits_scale(double v)
{
    return !(fabs(v) > FLT_MAX) || isinf(v);
}

size_t ocd_lt_type_size(cudaDataType_t t)
{
    switch (t) {
    case CUDA_R_16F:
    case CUDA_R_16BF: return 2;
    case CUDA_R_64F: return 8;
    default: return 4;
    }
}

uint32_t ocd_lt_matrix_alignment(const struct ocd_lt_matmul *mm, const struct ocd_lt_matrix *m, const void *data)
{
    return ocd_lt_alignment(data, m->stride * (int64_t)ocd_lt_type_size(m->type), mm->batch);
}

/* One matrix's layout, with the batch count and stride when batched. */
static cublasStatus_t layout(const struct ocd_cublaslt_api *api, cublasLtMatrixLayout_t *l, const struct ocd_lt_matrix *m,
                             int64_t batch)
{
    cublasStatus_t st = api->layout_create(l, m->type, (uint64_t)m->rows, (uint64_t)m->cols, m->ld);
    if (st != CUBLAS_STATUS_SUCCESS || batch == 1) return st;
    const int32_t count = (int32_t)batch;
    st = api->layout_set(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count);
    if (st != CUBLAS_STATUS_SUCCESS) return st;
    return api->layout_set(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &m->stride, sizeof m->stride);
}

static void descs_free(const struct ocd_cublaslt_api *api, struct lt_descs *d)
{
    if (d->op) api->desc_destroy(d->op);
    if (d->a) api->layout_destroy(d->a);
    if (d->b) api->layout_destroy(d->b);
    if (d->c) api->layout_destroy(d->c);
}

/* The descriptors of mm; on failure those made so far are in d, for descs_free. */
static cublasStatus_t descs_make(const struct ocd_cublaslt_api *api, const struct ocd_lt_matmul *mm, struct lt_descs *d)
{
    memset(d, 0, sizeof *d);
    const cublasOperation_t ta = mm->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, tb = mm->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    const uint32_t epilogue = (uint32_t)mm->epilogue;
    const bool bias = mm->epilogue == CUBLASLT_EPILOGUE_BIAS || mm->epilogue == CUBLASLT_EPILOGUE_RELU_BIAS;
    cublasStatus_t st = api->desc_create(&d->op, mm->compute, CUDA_R_32F);
    if (st == CUBLAS_STATUS_SUCCESS) st = api->desc_set(d->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    if (st == CUBLAS_STATUS_SUCCESS) st = api->desc_set(d->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    if (st == CUBLAS_STATUS_SUCCESS) st = api->desc_set(d->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue);
    if (st == CUBLAS_STATUS_SUCCESS && bias)
        st = api->desc_set(d->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &mm->bias, sizeof mm->bias);
    if (st == CUBLAS_STATUS_SUCCESS) st = layout(api, &d->a, &mm->a, mm->batch);
    if (st == CUBLAS_STATUS_SUCCESS) st = layout(api, &d->b, &mm->b, mm->batch);
    if (st == CUBLAS_STATUS_SUCCESS) st = layout(api, &d->c, &mm->c, mm->batch);
    return st;
}

/* What the heuristic sees of a matmul: the matmul without its pointers, and their alignments.
   Made from a zeroed struct, so that memcmp compares it. */
struct lt_key {
    struct ocd_lt_matmul mm; /* pointers NULL */
    uint32_t align[5];       /* A, B, C, D and the bias */
};

/* A handle's remembered algorithms (ocd_cublaslt_algos' block): `used` keys, replaced round-robin
   from `next` once full. */
struct lt_algos {
    struct lt_key key[OCD_LT_ALGOS];
    cublasLtMatmulAlgo_t algo[OCD_LT_ALGOS];
    int used, next;
};

static struct lt_key key_of(const struct ocd_lt_matmul *mm, const uint32_t align[4])
{
    struct lt_key k;
    memset(&k, 0, sizeof k);
    k.mm.compute = mm->compute, k.mm.trans_a = mm->trans_a, k.mm.trans_b = mm->trans_b;
    k.mm.epilogue = mm->epilogue, k.mm.batch = mm->batch;
    const struct ocd_lt_matrix *from[3] = {&mm->a, &mm->b, &mm->c};
    struct ocd_lt_matrix *to[3] = {&k.mm.a, &k.mm.b, &k.mm.c};
    for (int i = 0; i < 3; i++) {
        to[i]->type = from[i]->type, to[i]->rows = from[i]->rows, to[i]->cols = from[i]->cols;
        to[i]->ld = from[i]->ld, to[i]->stride = from[i]->stride;
    }
    for (int i = 0; i < 4; i++) k.align[i] = align[i];
    k.align[4] = mm->bias ? ocd_lt_alignment(mm->bias, 0, 1) : 0;
    return k;
}

/* The handle's remembered algorithm for key k, or NULL; the table made on first use (NULL
   where there is no memory: every query then asks the heuristic). */
static cublasLtMatmulAlgo_t *remembered(cudnnHandle_t handle, const struct lt_key *k, struct lt_algos **table)
{
    void **slot = ocd_cublaslt_algos(handle);
    if (slot != NULL && *slot == NULL) *slot = calloc(1, sizeof(struct lt_algos));
    struct lt_algos *t = *table = slot ? (struct lt_algos *)*slot : NULL;
    for (int i = 0; t != NULL && i < t->used; i++)
        if (memcmp(&t->key[i], k, sizeof *k) == 0) return &t->algo[i];
    return NULL;
}

static void remember(struct lt_algos *t, const struct lt_key *k, const cublasLtMatmulAlgo_t *algo)
{
    const int i = t->used < OCD_LT_ALGOS ? t->used++ : t->next;
    t->next = (i + 1) % OCD_LT_ALGOS;
    t->key[i] = *k, t->algo[i] = *algo;
}

cublasStatus_t ocd_lt_query(cudnnHandle_t handle, cublasLtHandle_t lt, const struct ocd_lt_matmul *mm,
                            cublasLtMatmulAlgo_t *algo)
{
    const struct ocd_cublaslt_api *api = ocd_cublaslt_api();
    const uint32_t align[4] = {ocd_lt_matrix_alignment(mm, &mm->a, mm->a.data),
                               ocd_lt_matrix_alignment(mm, &mm->b, mm->b.data),
                               ocd_lt_matrix_alignment(mm, &mm->c, mm->c.data), ocd_lt_matrix_alignment(mm, &mm->c, mm->d)};
    const cublasLtMatmulPreferenceAttributes_t align_attr[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    const bool memo = ocd_impl_unproven() == NULL;
    const struct lt_key key = key_of(mm, align);
    struct lt_algos *table = NULL;
    const cublasLtMatmulAlgo_t *known = memo ? remembered(handle, &key, &table) : NULL;
    if (known != NULL) {
        *algo = *known;
        return CUBLAS_STATUS_SUCCESS;
    }
    const uint64_t workspace = 0;
    struct lt_descs d;
    cublasLtMatmulPreference_t pref = NULL;
    cublasStatus_t st = descs_make(api, mm, &d);
    if (st == CUBLAS_STATUS_SUCCESS) st = api->pref_create(&pref);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = api->pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof workspace);
    for (int i = 0; i < 4 && st == CUBLAS_STATUS_SUCCESS; i++)
        st = api->pref_set(pref, align_attr[i], &align[i], sizeof align[i]);
    cublasLtMatmulHeuristicResult_t result;
    int found = 0;
    if (st == CUBLAS_STATUS_SUCCESS) st = api->heuristic(lt, d.op, d.a, d.b, d.c, d.c, pref, 1, &result, &found);
    if (st == CUBLAS_STATUS_SUCCESS && (found < 1 || result.state != CUBLAS_STATUS_SUCCESS))
        st = CUBLAS_STATUS_NOT_SUPPORTED;
    if (st == CUBLAS_STATUS_SUCCESS) *algo = result.algo;
    if (st == CUBLAS_STATUS_SUCCESS && table != NULL) remember(table, &key, algo);
    if (pref) api->pref_destroy(pref);
    descs_free(api, &d);
    return st;
}

cublasStatus_t ocd_lt_run(cublasLtHandle_t lt, const struct ocd_lt_matmul *mm, const cublasLtMatmulAlgo_t *algo,
                          float alpha, float beta, cudaStream_t stream)
{
    const struct ocd_cublaslt_api *api = ocd_cublaslt_api();
    struct lt_descs d;
    cublasStatus_t st = descs_make(api, mm, &d);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = api->matmul(lt, d.op, &alpha, mm->a.data, d.a, mm->b.data, d.b, &beta, mm->c.data, d.c, mm->d, d.c, algo,
                         NULL, 0, stream);
    descs_free(api, &d);
    return st;
}
