/* conv_fold.c: cudnnGetFoldedConvBackwardDataDescriptors, the descriptors that turn a strided 2-D
   backward-data convolution into a unit-stride one on folded tensors.

   Main decision: the folding is the one our tensor transforms compute (problem/transform.h: channel
   c' = blk * C + c, blk the position modulo the fold factors, row-major), so the documented
   pipeline reproduces the original dx exactly:
     w'  = fold(w)  by filterFoldTransDesc  (cudnnTransformFilter),
     dy' = pad(dy)  by diffPadTransDesc     (cudnnTransformTensorEx),
     dx' = cudnnConvolutionBackwardData(w', dy', foldedConvDesc) into foldedGradDesc,
     dx  = unfold(dx') by gradUnfoldTransDesc (alpha and beta apply here);
   gradFoldTransDesc folds an existing dx into dx' (its inverse up to the padding).

   Why it is exact, per spatial dim (stride u, pad p, filter R, input H, output P; cross-
   correlation, dilation 1): dx[h] = the sum of dy[q] * w[r] over the q, r with h + p = q*u + r.
   Write h + p = a*u + t and r = i*u + t' (0 <= t, t' < u): then t' = t and a = q + i, so with
     dx'[t-block, a] = dx[a*u + t - p]   (dx zero-padded by p before, cut in blocks of u),
     w'[t-block, i]  = w[i*u + t]        (w zero-padded after to R' = ceil(R/u) blocks),
   dx'[a] = sum_i dy[a - i] * w'[i]: the backward data of a stride-1, unpadded convolution.
   Its forward output is H' - R' + 1 long, where H' is the folded dx extent; we take
     H' = max(ceil((H + p) / u), P + R' - 1),
   so that every dx row and every dy row is inside, and pad dy after by H' - R' + 1 - P zeros.
   The dx fold pads p before and H'*u - H - p after, so that the unfold gives back exactly H.

   The phase t must index the same channel block of w' and dx'. In CONVOLUTION mode the filter is
   mirrored (r -> R-1-r), which reverses the phase order of w' against dx' (t' = const - t) in a
   dim the fold cuts: no fold of the stored filter matches there, unless the filter is 1 wide in
   that dim (mirroring it changes nothing: the 1x1 stride-2 layers NVIDIA's samples fold are
   declared in CONVOLUTION mode). So CONVOLUTION mode folds when every dim of stride > 1 has a
   filter extent of 1, the folded convolution keeping the mode (it mirrors the unfolded dims as
   the original does); other strided CONVOLUTION-mode problems are NOT_SUPPORTED. Grouped
   convolutions are NOT_SUPPORTED too: the fold puts the phase blocks outermost in C, so the
   channels of one group are no longer contiguous. A convolution of stride 1 in both dims needs
   no folding: it gets the identity (the transforms only change the layout to transformFormat,
   the folded convolution is a copy of the original). Dilation > 1 is NOT_SUPPORTED. */
#include "cnn/conv.h"

#include "ops/transform.h"

#include <limits.h>

#define NSP 2 /* folding is documented for 2-D convolutions (4-D tensors) */

/* The folding of one spatial dim (see the file comment). */
struct fold_dim {
    int64_t factor;              /* u: the stride, or 1 for the identity */
    int64_t filt, in, out;       /* R', H', and the padded dy extent P' = H' - R' + 1 */
    int64_t dx_before, dx_after; /* the dx fold's padding */
    int64_t dy_after;            /* the dy padding */
};

static void fold_dim_of(const struct ocd_conv_shape *s, int d, bool identity, struct fold_dim *f)
{
    if (identity) {
        *f = (struct fold_dim){1, s->filt[d], s->in[d], s->out[d], 0, 0, 0};
        return;
    }
    int64_t u = s->stride[d], p = s->pad[d];
    f->factor = u;
    f->filt = (s->filt[d] + u - 1) / u;
    f->in = OCD_MAX((s->in[d] + p + u - 1) / u, s->out[d] + f->filt - 1);
    f->out = f->in - f->filt + 1;
    f->dx_before = p;
    f->dx_after = f->in * u - s->in[d] - p;
    f->dy_after = f->out - s->out[d];
}

/* BAD_PARAM unless desc is a live object of the kind (it need not be set: it is an output). */
static cudnnStatus_t check_created(enum ocd_object_kind kind, const void *desc, const char *name)
{
    if (!ocd_object_alive(kind, desc))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s is %s", name, desc == NULL ? "NULL" : "not a live descriptor of its type");
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t check_rank4(const struct ocd_tensor_view *v, const char *name)
{
    if (v->rank != 4)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "%s has %d dims; folding is defined for 4-D tensors", name, v->rank);
    return CUDNN_STATUS_SUCCESS;
}

/* Dims of a folded descriptor, which must fit the int of a descriptor. */
static cudnnStatus_t to_int_dims(const int64_t in[], int out[], const char *name)
{
    for (int d = 0; d < NSP + 2; d++) {
        if (in[d] > INT_MAX)
            return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "dimension %d of %s would be %lld", d, name, (long long)in[d]);
        out[d] = (int)in[d];
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetFoldedConvBackwardDataDescriptors(
    const cudnnHandle_t handle, const cudnnFilterDescriptor_t filterDesc, const cudnnTensorDescriptor_t diffDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t gradDesc,
    const cudnnTensorFormat_t transformFormat, cudnnFilterDescriptor_t foldedFilterDesc,
    cudnnTensorDescriptor_t paddedDiffDesc, cudnnConvolutionDescriptor_t foldedConvDesc,
    cudnnTensorDescriptor_t foldedGradDesc, cudnnTensorTransformDescriptor_t filterFoldTransDesc,
    cudnnTensorTransformDescriptor_t diffPadTransDesc, cudnnTensorTransformDescriptor_t gradFoldTransDesc,
    cudnnTensorTransformDescriptor_t gradUnfoldTransDesc)
{
    OCD_LOG_API("handle=%p filterDesc=%p diffDesc=%p convDesc=%p gradDesc=%p transformFormat=%d "
                "foldedFilterDesc=%p paddedDiffDesc=%p foldedConvDesc=%p foldedGradDesc=%p "
                "filterFoldTransDesc=%p diffPadTransDesc=%p gradFoldTransDesc=%p gradUnfoldTransDesc=%p",
                (void *)handle, (void *)filterDesc, (void *)diffDesc, (void *)convDesc, (void *)gradDesc,
                (int)transformFormat, (void *)foldedFilterDesc, (void *)paddedDiffDesc, (void *)foldedConvDesc,
                (void *)foldedGradDesc, (void *)filterFoldTransDesc, (void *)diffPadTransDesc,
                (void *)gradFoldTransDesc, (void *)gradUnfoldTransDesc);
    OCD_CHECK_HANDLE(handle);
    /* "CUDNN_STATUS_BAD_PARAM: any input parameter is NULL, or the input tensor has more than
       4 dims" (cuDNN 8.2 API reference); a descriptor that is not live counts the same. */
    struct ocd_tensor_view v;
    OCD_TRY(ocd_filter_get(filterDesc, "filterDesc", &v));
    OCD_TRY(check_rank4(&v, "filterDesc"));
    OCD_TRY(ocd_tensor_get(diffDesc, "diffDesc", &v));
    OCD_TRY(check_rank4(&v, "diffDesc"));
    OCD_TRY(ocd_tensor_get(gradDesc, "gradDesc", &v));
    OCD_TRY(check_rank4(&v, "gradDesc"));
    OCD_TRY(ocd_conv_desc_get(convDesc, "convDesc"));
    OCD_TRY(check_created(OCD_OBJ_FILTER, foldedFilterDesc, "foldedFilterDesc"));
    OCD_TRY(check_created(OCD_OBJ_TENSOR, paddedDiffDesc, "paddedDiffDesc"));
    OCD_TRY(check_created(OCD_OBJ_CONVOLUTION, foldedConvDesc, "foldedConvDesc"));
    OCD_TRY(check_created(OCD_OBJ_TENSOR, foldedGradDesc, "foldedGradDesc"));
    OCD_TRY(check_created(OCD_OBJ_TENSOR_TRANSFORM, filterFoldTransDesc, "filterFoldTransDesc"));
    OCD_TRY(check_created(OCD_OBJ_TENSOR_TRANSFORM, diffPadTransDesc, "diffPadTransDesc"));
    OCD_TRY(check_created(OCD_OBJ_TENSOR_TRANSFORM, gradFoldTransDesc, "gradFoldTransDesc"));
    OCD_TRY(check_created(OCD_OBJ_TENSOR_TRANSFORM, gradUnfoldTransDesc, "gradUnfoldTransDesc"));
    if (transformFormat == CUDNN_TENSOR_NCHW_VECT_C)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "transformFormat NCHW_VECT_C: folding is done in NCHW or NHWC");
    if (transformFormat != CUDNN_TENSOR_NCHW && transformFormat != CUDNN_TENSOR_NHWC)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "invalid transformFormat %d", (int)transformFormat);
    struct ocd_conv_problem p;
    OCD_TRY(ocd_conv_problem_init(&p, OCD_CONV_BWD_DATA, gradDesc, "gradDesc", filterDesc, "filterDesc", convDesc,
                                  diffDesc, "diffDesc"));
    const struct ocd_conv_shape *s = &p.s;
    bool identity = true;
    for (int d = 0; d < NSP; d++) {
        if (s->dilation[d] != 1)
            return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "dilation %d: folding needs dilation 1", s->dilation[d]);
        identity = identity && s->stride[d] == 1;
    }
    for (int d = 0; d < NSP && s->flip; d++)
        if (s->stride[d] > 1 && s->filt[d] > 1)
            return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED,
                            "CUDNN_CONVOLUTION mode with a filter %lld wide along a dim of stride %lld: the mirrored "
                            "filter's phases do not fold in the order of dx's (use CUDNN_CROSS_CORRELATION)",
                            (long long)s->filt[d], (long long)s->stride[d]);
    if (!identity && s->groups != 1)
        return OCD_FAIL(CUDNN_STATUS_NOT_SUPPORTED, "groupCount %lld: folding interleaves the groups' channels",
                        (long long)s->groups);

    /* Everything is computed into copies first, so that a failure writes nothing. */
    struct fold_dim f[NSP];
    int64_t blocks = 1;
    for (int d = 0; d < NSP; d++) {
        fold_dim_of(s, d, identity, &f[d]);
        blocks *= f[d].factor;
    }
    int64_t w_dims[4] = {s->k, p.w.dims[1] * blocks, f[0].filt, f[1].filt};
    int64_t dy_dims[4] = {s->n, s->k, f[0].out, f[1].out};
    int64_t dx_dims[4] = {s->n, s->c * blocks, f[0].in, f[1].in};
    int wd[4], dyd[4], dxd[4];
    OCD_TRY(to_int_dims(w_dims, wd, "foldedFilterDesc"));
    OCD_TRY(to_int_dims(dy_dims, dyd, "paddedDiffDesc"));
    OCD_TRY(to_int_dims(dx_dims, dxd, "foldedGradDesc"));
    struct cudnnFilterStruct folded_w = *foldedFilterDesc;
    struct cudnnTensorStruct padded_dy = *paddedDiffDesc, folded_dx = *foldedGradDesc;
    OCD_TRY(ocd_filter_set(&folded_w, p.w.dtype, transformFormat, 4, wd));
    OCD_TRY(ocd_tensor_set_packed(&padded_dy, transformFormat, p.y.dtype, 4, dyd));
    OCD_TRY(ocd_tensor_set_packed(&folded_dx, transformFormat, p.x.dtype, 4, dxd));
    struct cudnnConvolutionStruct folded_conv = *convDesc;
    if (!identity) /* the mode stays: see the file comment on CONVOLUTION mode */
        for (int d = 0; d < NSP; d++) folded_conv.pad[d] = 0, folded_conv.stride[d] = 1;
    int32_t zeros[4] = {0}, dy_after[4] = {0}, dx_before[4] = {0}, dx_after[4] = {0};
    uint32_t factors[NSP];
    for (int d = 0; d < NSP; d++) {
        dy_after[d + 2] = (int32_t)f[d].dy_after;
        dx_before[d + 2] = (int32_t)f[d].dx_before;
        dx_after[d + 2] = (int32_t)f[d].dx_after;
        factors[d] = (uint32_t)f[d].factor;
    }

    *foldedFilterDesc = folded_w;
    *paddedDiffDesc = padded_dy;
    *foldedGradDesc = folded_dx;
    *foldedConvDesc = folded_conv;
    /* These cannot fail: four dims, a valid format and direction, pads >= 0. */
    OCD_TRY(ocd_transform_desc_set(filterFoldTransDesc, 4, transformFormat, zeros, zeros, factors,
                                   CUDNN_TRANSFORM_FOLD));
    OCD_TRY(ocd_transform_desc_set(diffPadTransDesc, 4, transformFormat, zeros, dy_after, NULL, CUDNN_TRANSFORM_FOLD));
    OCD_TRY(ocd_transform_desc_set(gradFoldTransDesc, 4, transformFormat, dx_before, dx_after, factors,
                                   CUDNN_TRANSFORM_FOLD));
    return ocd_transform_desc_set(gradUnfoldTransDesc, 4, transformFormat, dx_before, dx_after, factors,
                                  CUDNN_TRANSFORM_UNFOLD);
}
