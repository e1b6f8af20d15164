/* ops_tensor.c: the tensor ops: copy (the bandwidth ceiling), set, scale, add, op tensor, transform. */
#include "bench.h"

/* copy: the device-to-device copy of a buffer the size of y: the bandwidth ceiling.
   bytes = |y| read + |y| written. */
static const char *setup_copy(struct call *c, const struct problem *p)
{
    const char *why = add_tensor(c, p, "y");
    if (!why) why = add_tensor(c, p, "y"); /* the source, of the same size */
    c->bytes = 2 * tensor_bytes(c, 0);
    return why;
}

static cudnnStatus_t run_copy(struct call *c)
{
    size_t bytes = (size_t)c->t[0].count * c->dt->size;
#ifdef BENCH_CUDA
    if (on_device) {
        CUDA_TRY(cudaMemcpyAsync(c->t[0].data, c->t[1].data, bytes, cudaMemcpyDeviceToDevice, stream));
        return CUDNN_STATUS_SUCCESS;
    }
#endif
    memcpy(c->t[0].data, c->t[1].data, bytes);
    return CUDNN_STATUS_SUCCESS;
}

/* settensor: y = value. bytes = |y| written. */
static const char *setup_settensor(struct call *c, const struct problem *p)
{
    encode(c->dt, problem_number(p, "value"), c->value);
    const char *why = add_tensor(c, p, "y");
    c->bytes = tensor_bytes(c, 0);
    return why;
}

static cudnnStatus_t run_settensor(struct call *c)
{
    return cudnnSetTensor(c->handle, c->t[0].desc, c->t[0].data, c->value);
}

/* scaletensor: y = alpha * y. bytes = |y| read + |y| written. */
static const char *setup_scaletensor(struct call *c, const struct problem *p)
{
    c->alpha = scaling_of(problem_number(p, "alpha"));
    const char *why = add_tensor(c, p, "y");
    c->bytes = 2 * tensor_bytes(c, 0);
    return why;
}

static cudnnStatus_t run_scaletensor(struct call *c)
{
    return cudnnScaleTensor(c->handle, c->t[0].desc, c->t[0].data, scaling_ptr(c, &c->alpha));
}

/* addtensor: y = alpha * x + beta * y, x broadcast where its dims are 1; transform: the same
   between layouts (same dims, other strides). bytes = |x| read + |y| written + |y| read when
   beta != 0. */
static const char *setup_x_into_y(struct call *c, const struct problem *p)
{
    c->alpha = scaling_of(problem_number(p, "alpha"));
    c->beta = scaling_of(problem_number(p, "beta"));
    const char *why = add_tensor(c, p, "x");
    if (!why) why = add_tensor(c, p, "y");
    c->out = 1;
    c->bytes = tensor_bytes(c, 0) + tensor_bytes(c, 1) * (c->beta.d != 0 ? 2 : 1);
    return why;
}

static cudnnStatus_t run_addtensor(struct call *c)
{
    return cudnnAddTensor(c->handle, scaling_ptr(c, &c->alpha), c->t[0].desc, c->t[0].data,
                          scaling_ptr(c, &c->beta), c->t[1].desc, c->t[1].data);
}

/* optensor: c = op(alpha1 * a, alpha2 * b) + beta * c, b broadcast where its dims are 1; the
   compute type is double for f64 data and float otherwise.
   bytes = |a| + |b| read + |c| written + |c| read when beta != 0. */
static const char *setup_optensor(struct call *c, const struct problem *p)
{
    static const struct {
        const char *name;
        cudnnOpTensorOp_t op;
    } opts[] = {{"add", CUDNN_OP_TENSOR_ADD}, {"mul", CUDNN_OP_TENSOR_MUL}, {"min", CUDNN_OP_TENSOR_MIN},
                {"max", CUDNN_OP_TENSOR_MAX}};
    const char *name = problem_get(p, "opt");
    size_t i = 0;
    while (i < ARRAY_LEN(opts) && strcmp(opts[i].name, name) != 0) i++;
    if (i == ARRAY_LEN(opts)) return "opt must be add, mul, min or max";
    c->alpha = scaling_of(problem_number(p, "alpha1"));
    c->alpha2 = scaling_of(problem_number(p, "alpha2"));
    c->beta = scaling_of(problem_number(p, "beta"));
    cudnnStatus_t s = cudnnCreateOpTensorDescriptor(&c->op_desc);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnSetOpTensorDescriptor(c->op_desc, opts[i].op,
                                       c->dt->type == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT,
                                       CUDNN_NOT_PROPAGATE_NAN);
    if (s != CUDNN_STATUS_SUCCESS) return cudnnGetErrorString(s);
    const char *why = add_tensor(c, p, "a");
    if (!why) why = add_tensor(c, p, "b");
    if (!why) why = add_tensor(c, p, "c");
    c->out = 2;
    c->bytes = tensor_bytes(c, 0) + tensor_bytes(c, 1) + tensor_bytes(c, 2) * (c->beta.d != 0 ? 2 : 1);
    return why;
}

static cudnnStatus_t run_optensor(struct call *c)
{
    return cudnnOpTensor(c->handle, c->op_desc, scaling_ptr(c, &c->alpha), c->t[0].desc, c->t[0].data,
                         scaling_ptr(c, &c->alpha2), c->t[1].desc, c->t[1].data, scaling_ptr(c, &c->beta),
                         c->t[2].desc, c->t[2].data);
}

static cudnnStatus_t run_transform(struct call *c)
{
    return cudnnTransformTensor(c->handle, scaling_ptr(c, &c->alpha), c->t[0].desc, c->t[0].data,
                                scaling_ptr(c, &c->beta), c->t[1].desc, c->t[1].data);
}

static const struct op ops[] = {
    {"copy", "dt y", setup_copy, run_copy},
    {"settensor", "dt y value", setup_settensor, run_settensor},
    {"scaletensor", "dt y alpha", setup_scaletensor, run_scaletensor},
    {"addtensor", "dt x y alpha beta", setup_x_into_y, run_addtensor},
    {"optensor", "opt dt a b c alpha1 alpha2 beta", setup_optensor, run_optensor},
    {"transform", "dt x y alpha beta", setup_x_into_y, run_transform},
};

const struct op_family ops_tensor = {ops, ARRAY_LEN(ops)};
