/* batchnorm.cu: the CUDA entries of the normalization engine (problem/batchnorm.h): whether a
   kind of kernels applies to a problem and its plan (make_plan: the layout, the vector width, the
   splits of the reductions, the workspace), and the call, which hands the plan to the launcher of
   the problem's data type. The plan is in batchnorm.cuh, the kernels and the launcher in
   batchnorm_kernels.cuh. */
#include "core/reasons.h"
#include "cuda/batchnorm.cuh"
#include "cuda/scratch.cuh"

/* instantiated by batchnorm_{float,double,half,bfloat16}.cu */
extern OCD_BN_RUN_TYPED(float);
extern OCD_BN_RUN_TYPED(double);
extern OCD_BN_RUN_TYPED(__half);
extern OCD_BN_RUN_TYPED(__nv_bfloat16);

namespace {

using namespace ocd_bn;

/* The data tensors the problem touches (NULL for the others). */
void involved(const struct ocd_bn_problem *p, const struct ocd_tensor_view *v[NTENS])
{
    bool bwd = p->dir == OCD_BN_BACKWARD, add = p->ops == OCD_BN_OPS_ADD_ACT;
    v[T_X] = &p->x;
    v[T_Y] = bwd ? NULL : &p->y;
    v[T_Z] = !bwd && add ? &p->z : NULL;
    v[T_DY] = bwd ? &p->dy : NULL;
    v[T_DX] = bwd ? &p->dx : NULL;
    v[T_DZ] = bwd && add ? &p->dz : NULL;
    v[T_RES] = p->ops != OCD_BN_OPS_NORM && p->dir != OCD_BN_INFERENCE ? &p->reserve : NULL;
}

bool is_slot_dim(const struct ocd_bn_problem *p, int d)
{
    return d == 1 || (d >= 2 && p->per_activation);
}

/* The dims (of extent > 1) in the set, by increasing stride of x. */
int sorted_dims(const struct ocd_bn_problem *p, bool slots, int out[])
{
    int n = 0;
    for (int d = 0; d < p->x.rank; d++) {
        if (is_slot_dim(p, d) != slots || p->x.dims[d] == 1) continue;
        int i = n++;
        while (i > 0 && p->x.strides[out[i - 1]] > p->x.strides[d]) {
            out[i] = out[i - 1];
            i--;
        }
        out[i] = d;
    }
    return n;
}

/* True when the dims, innermost first, are dense from stride `unit`. */
bool dense_from(const struct ocd_tensor_view *v, const int dims[], int n, int64_t unit)
{
    for (int i = 0; i < n; i++) {
        if (v->strides[dims[i]] != unit) return false;
        unit *= v->dims[dims[i]];
    }
    return true;
}

void slot_map(const struct ocd_bn_problem *p, const int dims[], int n, SlotMap *sm)
{
    sm->nd = n;
    for (int i = 0; i < n; i++) {
        sm->ext[i] = (uint32_t)p->x.dims[dims[i]];
        sm->pstr[i] = p->param.strides[dims[i]];
        sm->sstr[i] = p->stat.strides[dims[i]];
    }
}

int vector_width(cudnnDataType_t t)
{
    return t == CUDNN_DATA_DOUBLE ? 2 : t == CUDNN_DATA_FLOAT ? 4 : 8;
}

size_t round_up(size_t v, size_t a)
{
    return (v + a - 1) / a * a;
}

/* Fills the plan of kind for the problem, or says why that kind does not apply. */
const char *make_plan(cudnnHandle_t h, const struct ocd_bn_problem *p, Kind kind, Plan *pl)
{
    const struct ocd_tensor_view *v[NTENS];
    involved(p, v);
    memset(pl, 0, sizeof *pl);
    pl->kind = kind;
    int sdims[OCD_MAX_DIMS], rdims[OCD_MAX_DIMS];
    int ns = sorted_dims(p, true, sdims), nr = sorted_dims(p, false, rdims);
    int vw = vector_width(p->dtype);
    if (kind != STRIDED)
        for (int t = 0; t < NTENS; t++)
            if (v[t] && !ocd_view_same_strides(v[t], &p->x)) return "the tensors' strides differ";
    const int64_t K = p->slots, M = p->reduced;
    int64_t wave = (int64_t)h->sm_count * MIN_BLOCKS; /* blocks resident at once */
    if (kind == CHANNELS_LAST || kind == FLAT) {
        if (!dense_from(&p->x, sdims, ns, 1)) return "the slots are not the dense innermost dimension";
        /* the spatial dims of the rows must collapse into one stride */
        int sp[OCD_MAX_DIMS], nsp = 0;
        for (int i = 0; i < nr; i++)
            if (rdims[i] != 0) sp[nsp++] = rdims[i];
        int64_t S = 1;
        for (int i = 0; i < nsp; i++) S *= p->x.dims[sp[i]];
        if (nsp > 0 && !dense_from(&p->x, sp, nsp, p->x.strides[sp[0]])) return "the spatial dims do not collapse";
        pl->rows.S = (uint32_t)S;
        pl->rows.sN = p->x.strides[0];
        pl->rows.sS = nsp ? p->x.strides[sp[0]] : 0;
        pl->vec = pl->rows.sN % vw == 0 && (S == 1 || pl->rows.sS % vw == 0) ? vw : 1;
        slot_map(p, sdims, ns, &pl->sm);
        if (kind == FLAT) {
            /* the rows at one stride: no spatial dims, one image, or images packed */
            if (nsp == 0) pl->flat.sR = pl->rows.sN;
            else if (p->x.dims[0] == 1 || pl->rows.sN == S * pl->rows.sS) pl->flat.sR = pl->rows.sS;
            else return "the rows are not at one stride";
            /* whole vectors only, so that no lane is ever masked */
            if (K % vw != 0 || pl->flat.sR % vw != 0) return "the slots or the row stride are not whole vectors";
            if (!pointers_aligned(p)) return "a data pointer is not 16-byte aligned";
            pl->vec = vw;
        }
    } else if (kind == CHANNELS_FIRST) {
        if (p->per_activation) return OCD_REASON_MODE;
        int sp[OCD_MAX_DIMS], nsp = 0;
        for (int i = 0; i < nr; i++)
            if (rdims[i] != 0) sp[nsp++] = rdims[i];
        if (!dense_from(&p->x, sp, nsp, 1)) return "the spatial dims are not contiguous";
        int64_t S = M / p->x.dims[0];
        pl->chan.S = (uint32_t)S;
        pl->chan.sC = p->x.strides[1];
        pl->chan.sN = p->x.strides[0];
        pl->vec = S % vw == 0 && pl->chan.sC % vw == 0 && pl->chan.sN % vw == 0 ? vw : 1;
        slot_map(p, sdims, ns, &pl->sm);
    } else {
        /* canonical numbering: slots row-major over (C, D, H, W), rows over (N, D, H, W) */
        LayStrided *s = &pl->strided;
        int cs[OCD_MAX_DIMS], cr[OCD_MAX_DIMS];
        for (int d = p->x.rank - 1; d >= 0; d--) {
            if (is_slot_dim(p, d)) cs[s->ns++] = d;
            else cr[s->nr++] = d;
        }
        for (int i = 0; i < s->ns; i++) s->sext[i] = (uint32_t)p->x.dims[cs[i]];
        for (int i = 0; i < s->nr; i++) s->rext[i] = (uint32_t)p->x.dims[cr[i]];
        for (int t = 0; t < NTENS; t++) {
            if (!v[t]) continue;
            for (int i = 0; i < s->ns; i++) s->sstr[t][i] = v[t]->strides[cs[i]];
            for (int i = 0; i < s->nr; i++) s->rstr[t][i] = v[t]->strides[cr[i]];
        }
        pl->vec = 1;
        slot_map(p, cs, s->ns, &pl->sm);
    }
    if (kind == CHANNELS_FIRST) {
        /* about eight waves of (channel, split) blocks, each thread taking at least 4 vectors */
        int64_t most = div_up(M, (int64_t)THREADS * pl->vec * UNROLL);
        int64_t g = OCD_MAX(1, OCD_MIN(OCD_MIN(most, 65535), div_up(8 * wave, K)));
        pl->per_split = (uint32_t)round_up(div_up(M, g), (size_t)pl->vec);
        pl->G = (int)div_up(M, pl->per_split);
    } else {
        /* the reduction: one wave of blocks striding over the chunks (the blocks resident of its
           kernel: see RowRounds); the chunk depends on the vector width (ty), the number of
           blocks only on the nominal one, so the workspace does not */
        int tx = block_tx(K, pl->vec), ty = THREADS / tx;
        int64_t groups = div_up(K, (int64_t)tx * pl->vec);
        int64_t nchunks = div_up(M, (int64_t)ty * ROWS);
        bool fused_grad = p->dir == OCD_BN_BACKWARD && p->ops != OCD_BN_OPS_NORM;
        /* training of whole packed rows in float compute on sm_90: the bulk-fed reduction */
        pl->bulk = kind == FLAT && p->dir == OCD_BN_TRAINING && p->dtype != CUDNN_DATA_DOUBLE && groups == 1 &&
                   pl->flat.sR == K && h->cc_major >= 9;
        int per_sm = fused_grad ? MIN_BLOCKS : pl->bulk ? BULK_BLOCKS : ROW_REDUCE_BLOCKS;
        int64_t resident = (int64_t)h->sm_count * per_sm;
        pl->G = (int)OCD_MAX(1, OCD_MIN(OCD_MIN(nchunks, 65535), resident / groups));
    }
    if (p->dir != OCD_BN_INFERENCE) {
        size_t cs = p->dtype == CUDNN_DATA_DOUBLE ? 8 : 4;
        /* partials [Sums::N][G][K] (backward: 4, for P_BOTH, whether or not this call has saved
           statistics: the workspace query does not know), shift, coefficients [3][K] */
        int64_t sums = p->dir == OCD_BN_BACKWARD ? Sums<P_BOTH>::N : Sums<P_STATS>::N;
        pl->workspace = round_up((size_t)(sums * (int64_t)pl->G + 4) * (size_t)K * cs, 256);
    }
    return NULL;
}

cudnnStatus_t run_kind(cudnnHandle_t h, const void *problem, void *workspace, size_t workspace_bytes, Kind kind)
{
    const struct ocd_bn_problem *p = (const struct ocd_bn_problem *)problem;
    Plan pl;
    const char *why = make_plan(h, p, kind, &pl);
    if (why) return OCD_FAIL(CUDNN_STATUS_INTERNAL_ERROR, "the plan that applied no longer does: %s", why);
    void *ws = workspace;
    bool scratch = pl.workspace > 0 && (workspace == NULL || workspace_bytes < pl.workspace);
    if (scratch) OCD_TRY(ocd_cuda_scratch_acquire(h, pl.workspace, &ws));
    cudnnStatus_t s;
    switch (p->dtype) {
    case CUDNN_DATA_FLOAT: s = run_typed<float>(h, p, &pl, ws); break;
    case CUDNN_DATA_DOUBLE: s = run_typed<double>(h, p, &pl, ws); break;
    case CUDNN_DATA_HALF: s = run_typed<__half>(h, p, &pl, ws); break;
    default: s = run_typed<__nv_bfloat16>(h, p, &pl, ws); break;
    }
    if (scratch) {
        cudnnStatus_t done = ocd_cuda_scratch_release(h);
        if (s == CUDNN_STATUS_SUCCESS) s = done;
    }
    return s;
}

size_t workspace_of(cudnnHandle_t h, const void *problem, Kind kind)
{
    Plan pl;
    return make_plan(h, (const struct ocd_bn_problem *)problem, kind, &pl) ? 0 : pl.workspace;
}

} // namespace

extern "C" {

const char *ocd_cuda_bn_flat_applies(cudnnHandle_t handle, const void *problem)
{
    Plan pl;
    return make_plan(handle, (const struct ocd_bn_problem *)problem, FLAT, &pl);
}

const char *ocd_cuda_bn_channels_last_applies(cudnnHandle_t handle, const void *problem)
{
    Plan pl;
    return make_plan(handle, (const struct ocd_bn_problem *)problem, CHANNELS_LAST, &pl);
}

const char *ocd_cuda_bn_channels_first_applies(cudnnHandle_t handle, const void *problem)
{
    Plan pl;
    return make_plan(handle, (const struct ocd_bn_problem *)problem, CHANNELS_FIRST, &pl);
}

size_t ocd_cuda_bn_flat_workspace(cudnnHandle_t handle, const void *problem)
{
    return workspace_of(handle, problem, FLAT);
}

size_t ocd_cuda_bn_channels_last_workspace(cudnnHandle_t handle, const void *problem)
{
    return workspace_of(handle, problem, CHANNELS_LAST);
}

size_t ocd_cuda_bn_channels_first_workspace(cudnnHandle_t handle, const void *problem)
{
    return workspace_of(handle, problem, CHANNELS_FIRST);
}

size_t ocd_cuda_bn_strided_workspace(cudnnHandle_t handle, const void *problem)
{
    return workspace_of(handle, problem, STRIDED);
}

cudnnStatus_t ocd_cuda_bn_flat(cudnnHandle_t handle, const void *problem, void *workspace,
                               size_t workspace_bytes)
{
    return run_kind(handle, problem, workspace, workspace_bytes, FLAT);
}

cudnnStatus_t ocd_cuda_bn_channels_last(cudnnHandle_t handle, const void *problem, void *workspace,
                                        size_t workspace_bytes)
{
    return run_kind(handle, problem, workspace, workspace_bytes, CHANNELS_LAST);
}

cudnnStatus_t ocd_cuda_bn_channels_first(cudnnHandle_t handle, const void *problem, void *workspace,
                                         size_t workspace_bytes)
{
    return run_kind(handle, problem, workspace, workspace_bytes, CHANNELS_FIRST);
}

cudnnStatus_t ocd_cuda_bn_strided(cudnnHandle_t handle, const void *problem, void *workspace,
                                  size_t workspace_bytes)
{
    return run_kind(handle, problem, workspace, workspace_bytes, STRIDED);
}

} // extern "C"
