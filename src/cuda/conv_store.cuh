/* conv_store.cuh: the two epilogues of a convolution result on CUDA.
   - The typed one (ocd_cuda_conv_epi, evaluated by ocd_cuda_conv_epi_value), held by the
     tensor-core kernels (the implicit GEMM's igemm_epi, the few-channel stem's stem_params) and
     evaluated in fp32 on their accumulators in registers: alpha, beta times z, a bias and scale
     of the output's element type (the scale also fp32), ReLU or another activation, or a
     backward data's ReLU gradient; the kernel reads z and writes the result with its own
     addressing.
   - The run-time-typed store (ocd_cuda_conv_store, ocd_cuda_conv_finish), shared by the kernels
     that finish a destination element at a time (the direct reference, the FFT algorithms'
     scatter): alpha and beta (beta == 0 never reads the destination), or for the fused forward
     the whole epilogue of problem/conv.h: alpha, z, the bias and scale of the element's channel
     and the activation, of any type and channel stride; then a backward data's ReLU gradient
     (problem/conv.h's relu_grad). The tensor-core kernels run it too, for
     the epilogues their typed one does not take. */
#ifndef OCD_CUDA_CONV_STORE_CUH
#define OCD_CUDA_CONV_STORE_CUH

#include "problem/conv.h"
#include "problem/pointwise.h"
#include "cuda/pw_step.cuh"
#include "cuda/types.cuh"

#include <string.h>

/* The typed epilogue: act(sc * alpha * acc + sz * beta * z + sb * bias) for output channel c, z
   the element's z (the old output, or the fused call's z), which counts only when beta != 0; sc
   the channel's scale (1 without one), sz and sb sc where the scale applies to z and to the bias,
   else 1; problem/conv.h's order, as ocd_cuda_conv_finish evaluates it. The bias and the scale
   are indexed by the channel (one element a channel, unit stride). A backward data's ReLU
   gradient (relu_grad: beta is 0, z the forward input) then keeps the value where z > 0. */
struct ocd_cuda_conv_epi {
    float alpha, beta;
    const void *bias;        /* of the output's type; NULL for none */
    int relu;
    const void *scale;       /* of the output's type or fp32 (scale_f32); NULL for none */
    int scale_f32;
    int scale_z, scale_bias; /* the scale also applies to z, to the bias */
    int act_on;              /* the activation is the unary forward step act (relu is then 0) */
    struct ocd_pw_step act;
    int relu_grad;           /* z is a backward data's ReLU input: the value where z > 0, else 0 */
};

/* A channel's values of ocd_cuda_conv_epi: its scale (1 without one) and bias (0 without one).
   A kernel that stores many elements of a channel loads them once (ocd_cuda_conv_epi_chan) and
   applies them to each (ocd_cuda_conv_epi_apply): loaded per element, each load would wait
   behind the store before it, which the compiler cannot reorder (the output might alias them). */
struct ocd_cuda_conv_chan {
    float scale, bias;
};

/* Channel `channel`'s values of e, for output element type T. */
template <typename T>
__host__ __device__ __forceinline__ ocd_cuda_conv_chan ocd_cuda_conv_epi_chan(const ocd_cuda_conv_epi &e,
                                                                              int64_t channel)
{
    ocd_cuda_conv_chan c = {1.f, 0.f};
    if (e.scale != NULL)
        c.scale = e.scale_f32 ? ((const float *)e.scale)[channel] : ocd_cuda_load((const T *)e.scale + channel);
    if (e.bias != NULL) c.bias = ocd_cuda_load((const T *)e.bias + channel);
    return c;
}

/* ocd_cuda_conv_epi's value for accumulator acc of a channel whose values are c, z (read by the
   caller where beta != 0). STEP: the kernel takes the activation step; without it the step
   compiles out, and the step's call with it (cuda/pw_step.cuh), so that a kernel that never has
   one keeps no call sites in its unrolled stores (the implicit GEMM's send a call with a step
   to their second kernel instead: conv_igemm.cuh). */
template <bool STEP = true>
__host__ __device__ __forceinline__ float ocd_cuda_conv_epi_apply(const ocd_cuda_conv_epi &e, ocd_cuda_conv_chan c,
                                                                  float acc, float z)
{
    float v = e.alpha * acc;
    if (e.scale != NULL) v *= c.scale;
    if (e.beta != 0.f) v += (e.scale_z ? c.scale : 1.f) * e.beta * z;
    if (e.bias != NULL) v += (e.scale_bias ? c.scale : 1.f) * c.bias;
    if (STEP && e.act_on) v = ocd_cuda_pw_step<float>(&e.act, v);
    else if (e.relu) v = fmaxf(v, 0.f);
    if (e.relu_grad && !(z > 0.f)) v = 0.f;
    return v;
}

/* ocd_cuda_conv_epi_apply of channel `channel`, its values loaded here, for output element type T. */
template <typename T, bool STEP = true>
__host__ __device__ __forceinline__ float ocd_cuda_conv_epi_value(const ocd_cuda_conv_epi &e, float acc, float z,
                                                                  int64_t channel)
{
    return ocd_cuda_conv_epi_apply<STEP>(e, ocd_cuda_conv_epi_chan<T>(e, channel), acc, z);
}

/* Whether e is alpha alone (no beta, bias, scale, activation or gradient): ocd_cuda_conv_epi_value is then
   alpha * acc, which the implicit GEMM's stores compile apart (conv_igemm.cuh's igemm_epi_form). */
__host__ __device__ __forceinline__ bool ocd_cuda_conv_epi_plain(const ocd_cuda_conv_epi &e)
{
    return e.beta == 0.f && e.bias == NULL && !e.relu && e.scale == NULL && !e.act_on && !e.relu_grad;
}

/* The run-time-typed store's parameters (ocd_cuda_conv_finish). */
struct ocd_cuda_conv_store {
    void *dst;
    cudnnDataType_t t; /* the destination's type */
    double alpha, beta;
    int ep_on, relu;
    double alpha2;
    const void *z, *bp; /* z: NULL when alpha2 == 0 */
    ocd_cuda_view bias;
    cudnnDataType_t bt;
    int scale_on, scale_z, scale_bias, act_on;
    const void *sp; /* the per-channel scale when scale_on */
    ocd_cuda_view scale;
    cudnnDataType_t st;
    struct ocd_pw_step act; /* the activation when act_on (relu is then 0) */
    const void *relu_x;     /* NULL, or a backward data's ReLU input (problem/conv.h's relu_grad) */
};

/* The store of the direction's destination of p. */
static inline ocd_cuda_conv_store ocd_cuda_conv_store_of(const struct ocd_conv_problem *p)
{
    ocd_cuda_conv_store s;
    memset(&s, 0, sizeof s);
    s.dst = p->dir == OCD_CONV_FWD ? p->y_data : p->dir == OCD_CONV_BWD_DATA ? p->x_data : p->w_data;
    s.t = ocd_conv_dst_view(p)->dtype;
    s.alpha = p->alpha, s.beta = p->beta;
    if (p->ep.on) {
        s.ep_on = 1, s.relu = p->ep.relu, s.alpha2 = p->ep.alpha2, s.z = p->ep.z, s.bp = p->ep.bias;
        s.bias = ocd_cuda_view_of(&p->ep.bias_view);
        s.bt = p->ep.bias_view.dtype;
        s.scale_on = p->ep.scale_on, s.scale_z = p->ep.scale_z, s.scale_bias = p->ep.scale_bias;
        if (s.scale_on) {
            s.sp = p->ep.scale;
            s.scale = ocd_cuda_view_of(&p->ep.scale_view);
            s.st = p->ep.scale_view.dtype;
        }
        s.act_on = p->ep.act_on;
        if (s.act_on) s.act = p->ep.act;
    }
    if (p->relu_grad) s.relu_x = p->relu_x;
    return s;
}

/* Stores acc at scalar offset off. In double for double data, float otherwise (int accumulators
   scale in float). */
template <typename Acc>
__host__ __device__ void ocd_cuda_conv_finish(const ocd_cuda_conv_store &s, int64_t off, int64_t channel, Acc acc)
{
    typedef typename ocd_compute<Acc>::type R;
    R r = (R)s.alpha * (R)acc;
    if (s.ep_on) {
        const R sc =
            s.scale_on ? ocd_cuda_load_as<R>(s.st, s.sp, ocd_cuda_channel_offset(s.scale, channel)) : (R)1;
        r *= sc;
        if (s.z != nullptr) r += (s.scale_z ? sc : (R)1) * (R)s.alpha2 * ocd_cuda_load_as<R>(s.t, s.z, off);
        r += (s.scale_bias ? sc : (R)1) * ocd_cuda_load_as<R>(s.bt, s.bp, ocd_cuda_channel_offset(s.bias, channel));
        if (s.act_on) r = ocd_pw_apply<R>(&s.act, r, (R)0);
        else if (s.relu && r < 0) r = 0;
    } else if (s.beta != 0) {
        r += (R)s.beta * ocd_cuda_load_as<R>(s.t, s.dst, off);
    }
    if (s.relu_x != nullptr && !(ocd_cuda_load_as<R>(s.t, s.relu_x, off) > (R)0)) r = 0;
    ocd_cuda_store_as(s.t, s.dst, off, (double)r);
}

/* ocd_cuda_conv_finish as a call, for the kernels that store a thread's many elements through it
   in an unrolled loop: inlined at each, its run-time types and fused epilogue made a kernel a
   hundred thousand instructions or more (megabytes of code, minutes of ptxas); the call costs a
   few instructions an element where the store is already several dozen. s must lie in memory
   the call can address as it is: a __grid_constant__ kernel parameter (or a member of one), not
   a by-value one, which every thread would first copy to its stack (Winograd's output kernel:
   472 bytes of stack, 2.7 times the time). */
template <typename Acc>
__host__ __device__ __noinline__ void ocd_cuda_conv_finish_call(const ocd_cuda_conv_store &s, int64_t off,
                                                                int64_t channel, Acc acc)
{
    ocd_cuda_conv_finish<Acc>(s, off, channel, acc);
}

#endif /* OCD_CUDA_CONV_STORE_CUH */
