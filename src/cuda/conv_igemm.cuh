/* conv_igemm.cuh: the tensor-core implicit-GEMM convolution kernel: one mainloop, one epilogue,
   and a loader per operand shape. Included by conv_igemm_{fwd,dgrad,wgrad}.cu, which instantiate
   it per direction, and by conv_igemm.cu, which plans and launches.

   The GEMM each direction computes, per group g (M, N and K come from ocd_conv_gemm_dims, the one
   conv -> GEMM mapping; make_plan in conv_igemm.cu says where each operand lives):
     forward          y[M=N*P*Q, N=K/G]   = gather(x)[M, K=T*R*S*C/G]  * w[N, K]^T
     backward data    dx[M=N*H*W, N=C/G]  = gather(dy)[M, K=T*R*S*K/G] * wt[N, K]^T
     backward filter  dw[M=K/G, N=T*R*S*C/G] = dy^T[M, K=N*P*Q]         * gather(x)[K, N]
   where wt is the filter re-packed as [G][C/G][T][R][S][K/G] into the workspace.

   Main decisions. The mainloop is the shared tensor-core one (mma.cuh: cp.async pipeline,
   ldmatrix, mma.sync); this file adds the convolution's loaders and epilogue.
   - 16 bytes, the unit of the mainloop's copies, is 8 channels of a 16-bit type (4 of fp32), so
     every gathered chunk lies inside one filter tap: that is why the GEMM's channel dimension
     (C/G forward, K/G backward data, both for the filter gradient) must be a multiple of 8 (4
     for fp32) and why activations need unit channel stride (NHWC; other layouts are
     transposed into the workspace first).
   - Forward and backward-data operands are K-major in shared memory, backward-filter operands
     MN-major (16-bit types only: tf32 is only used K-major).
   - The epilogue owns alpha, beta (the old output, or z for the fused call, is read only when
     beta != 0), bias, the fused call's per-channel scale (of the output's type or fp32, applied
     to the product and, as flagged, to z and the bias) and ReLU, or backward data's ReLU
     gradient (DgradDrelu: z the forward input, the value kept where it is above 0): the typed
     epilogue of
     conv_store.cuh, which the stem kernel (conv_stem.cu) shares, without its activation step.
     It writes through two index maps (GEMM row -> offset, GEMM column -> offset), so any output
     layout is written in place. With split-K the mainloop writes fp32 partial tiles into the
     workspace and a second kernel sums them in split order (deterministic) and runs the same
     epilogue. A fused epilogue this typed store does not take (an activation other than ReLU,
     whose step is a call, or a scale of another type or channel stride: make_plan in
     conv_igemm.cu) takes that path even with one split, and the second kernel stores through
     conv_store.cuh (`wide`): a call site per element of the unrolled stores, never taken
     without a step, would still cost every call its code and registers.
   - 8-bit integers (the int8 configurations, forward only: conv_igemm_int8.cu): T int8_t or
     uint8_t (mma.cuh's m16n8k32, int32 accumulators), 16 channels a chunk; the outputs (int8,
     uint8 or float) are the direct kernel's bit for bit: alpha times the sum in float, stored
     typed (igemm_epi_out's plain form), or with beta or the fused call's bias finished by the
     direct kernels' store; no split-K (partial sums in fp32 would not be exact).
   - Hopper: conv_igemm_sm90.cu replaces the mainloop only (wgmma from a swizzled cp.async
     ring), with these loaders on its stage layout, this epilogue and split-K; see the end of
     conv_igemm.cu for its next steps. */
#ifndef OCD_CUDA_CONV_IGEMM_CUH
#define OCD_CUDA_CONV_IGEMM_CUH

#include <climits>
#include <cstring>

#include "cuda/check.cuh"
#include "cuda/conv_igemm.h"
#include "cuda/conv_store.cuh"
#include "cuda/launch.cuh"
#include "cuda/mma.cuh"
#include "cuda/types.cuh"

/* ---- kernel arguments -------------------------------------------------------------------------- */

/* An activation tensor whose channels are contiguous (NHWC and its padded variants). */
struct igemm_act {
    const void *ptr;
    int64_t sn, sd, sh, sw; /* element strides of batch and the three spatial dims */
    int64_t group_c;        /* channel offset from one group to the next */
    int d, h, w;            /* spatial extents (d == 1 for 2-D) */
    int vshift;             /* 0, or int8 INT8x4 / INT8x32 read in place (2, 5): channel c at
                               (c >> vshift) * sv + c % (1 << vshift) */
    int64_t sv;             /* the vectors' stride (vshift > 0) */
};

/* A GEMM row or column index -> element offset: the index is a mixed-radix number of up to four
   digits, digit 3 innermost; digit i moves by stride[i]. A one-digit map has div = {1, 1, 1}. */
struct igemm_map {
    ocd_fastdiv div[3]; /* extents of digits 3, 2 and 1 */
    int64_t stride[4];
};

/* The forms of the typed epilogue the kernels' stores are compiled in, each its own code: their
   stores, unrolled over a lane's 64 to 128 elements, inline the epilogue per element, and the
   whole epilogue (its checks and loads) is thousands of instructions a warp, which on a short
   mainloop stall on instruction fetch more than the mainloop takes (ncu, the 3x3 128-channel
   layer with a bias and ReLU on the TMA kernel: 10.7 M warp instructions against the plain
   form's 6.6 M, a third of the samples waiting for an instruction). A kernel runs the form the
   plan names (epi.form): plain where the call needs no more, bias where it adds a bias and maybe
   ReLU and nothing else (ConvBiasAct without z; the TMA kernel's staged store alone compiles
   it, the other stores run such a call in the whole form), else the whole one. */
enum igemm_epi_form {
    IGEMM_EPI_WHOLE, /* alpha, the fused call's scale, beta times z, the bias, ReLU; the ReLU gradient */
    IGEMM_EPI_PLAIN, /* alpha * acc */
    IGEMM_EPI_BIAS   /* alpha * acc + bias, then ReLU where the call has it */
};

struct igemm_epi {
    void *out;          /* y, dx or dw */
    const void *z;      /* read where beta != 0 (scaled by beta: the output itself, or the fused call's
                           z), or for a ReLU gradient (typed.relu_grad: the forward input) */
    ocd_cuda_conv_epi typed; /* the typed store's epilogue, channels indexed g * N + n; the bias, the
                                scale and the step are the forward pass's */
    igemm_map row, col;
    int64_t group_off;  /* output offset from one group to the next */
    float *partial;     /* split-K or wide: [splits][G][M][N] fp32 partial sums; NULL otherwise */
    int wide;           /* the second kernel stores through `store` (a fused epilogue the typed
                           store does not take); scale is then unset (act always is) */
    ocd_cuda_conv_store store;
    int col_c;          /* 0, or the filter gradient on the TMA kernel, whose columns run over channels padded
                           per filter tap: columns whose innermost digit is col_c or more are padding */
    int pairs;          /* column n's offset is n and every row's is even, out and z aligned to two
                           elements: a lane's two adjacent columns are one 2-element access
                           (igemm_store_frags) */
    int form;           /* igemm_epi_form: what the typed epilogue holds (igemm_epi_form_of) */
};

/* The epilogue form of typed epilogue e (igemm_epi_form): plain where it is alpha alone, bias
   where it adds a bias of the output's type and maybe ReLU and nothing else, else whole. */
__host__ __device__ __forceinline__ int igemm_epi_form_of(const ocd_cuda_conv_epi &e)
{
    if (ocd_cuda_conv_epi_plain(e)) return IGEMM_EPI_PLAIN;
    if (e.bias != NULL && e.beta == 0.f && e.scale == NULL && !e.act_on) return IGEMM_EPI_BIAS;
    return IGEMM_EPI_WHOLE;
}

struct igemm_params {
    int M, N, K;                     /* GEMM sizes of one group */
    int groups, splits, kt_per_split; /* grid.z = groups * splits; each split owns kt_per_split K tiles */
    int T, R, S;                     /* filter extents (T == 1 for 2-D) */
    int pd, ph, pw, ud, uh, uw, dd, dh, dw; /* padding, stride, dilation */
    int flip;                        /* CONVOLUTION mode: gathers take mirrored filter taps */
    igemm_act a;                     /* forward: x; backward data: dy; backward filter: dy */
    igemm_act b;                     /* backward filter: x; forward: an int8 INT8x4 or INT8x32 filter
                                        read in place (vshift, sv; its taps' strides sd, sh, sw) */
    const void *bmat;                /* forward, backward data: the dense B operand [G][N][K] */
    int64_t b_ld, b_gs;              /* its row stride and group stride, in elements */
    ocd_fastdiv k_div[3];            /* decodes the GEMM K index: fwd (C/G, S, R), dgrad (K/G, S, R),
                                        wgrad (Q, P, Z) */
    ocd_fastdiv str_div[3];          /* backward data: strides uw, uh, ud */
    int round_a, round_b;            /* TF32, the sm_90a kernel: round A, B to tf32 in shared memory
                                        (read in place; the workspace copies round theirs) */
    igemm_epi epi;
};

/* ---- index maps and the epilogue ------------------------------------------------------------ */

__host__ __device__ __forceinline__ int64_t igemm_map_offset(const igemm_map &mp, uint32_t i)
{
    uint32_t d3, d2, d1;
    uint32_t q = ocd_fastdiv_divmod(mp.div[0], i, &d3);
    q = ocd_fastdiv_divmod(mp.div[1], q, &d2);
    q = ocd_fastdiv_divmod(mp.div[2], q, &d1);
    return (int64_t)q * mp.stride[0] + (int64_t)d1 * mp.stride[1] + (int64_t)d2 * mp.stride[2] +
           (int64_t)d3 * mp.stride[3];
}

/* Whether GEMM column n has an output (epi.col_c). */
__host__ __device__ __forceinline__ bool igemm_col_real(const igemm_epi &e, int n)
{
    if (e.col_c == 0) return true;
    uint32_t c;
    ocd_fastdiv_divmod(e.col.div[0], (uint32_t)n, &c);
    return (int)c < e.col_c;
}

/* Channel `channel`'s values of the typed epilogue (conv_store.cuh's ocd_cuda_conv_chan) in form
   FORM (igemm_epi_form): the plain form loads none. */
template <typename T, int FORM>
__host__ __device__ __forceinline__ ocd_cuda_conv_chan igemm_epi_chan(const igemm_epi &e, int64_t channel)
{
    if constexpr (FORM == IGEMM_EPI_PLAIN)
        return ocd_cuda_conv_chan{1.f, 0.f};
    else if constexpr (FORM == IGEMM_EPI_BIAS)
        return ocd_cuda_conv_chan{1.f, ocd_cuda_load((const T *)e.typed.bias + channel)};
    else
        return ocd_cuda_conv_epi_chan<T>(e.typed, channel);
}

/* The typed epilogue's value in form FORM for accumulator acc of a channel of values c, z read
   where beta != 0. */
template <int FORM>
__host__ __device__ __forceinline__ float igemm_epi_apply(const igemm_epi &e, ocd_cuda_conv_chan c, float acc, float z)
{
    if constexpr (FORM == IGEMM_EPI_PLAIN) {
        return e.typed.alpha * acc;
    } else if constexpr (FORM == IGEMM_EPI_BIAS) {
        const float v = e.typed.alpha * acc + c.bias;
        return e.typed.relu ? fmaxf(v, 0.f) : v;
    } else {
        return ocd_cuda_conv_epi_apply<false>(e.typed, c, acc, z);
    }
}

/* Whether form FORM reads z (beta != 0, or a ReLU gradient). */
template <int FORM> __host__ __device__ __forceinline__ bool igemm_epi_reads_z(const igemm_epi &e)
{
    return FORM == IGEMM_EPI_WHOLE && (e.typed.beta != 0.f || e.typed.relu_grad);
}

/* out = the typed epilogue of form FORM at element offset off. */
template <typename T, int FORM = IGEMM_EPI_WHOLE>
__host__ __device__ __forceinline__ void igemm_epi_store(const igemm_epi &e, int64_t off, int64_t channel, float acc)
{
    const float z = igemm_epi_reads_z<FORM>(e) ? ocd_cuda_load((const T *)e.z + off) : 0.f;
    ocd_cuda_store((T *)e.out + off, igemm_epi_apply<FORM>(e, igemm_epi_chan<T, FORM>(e, channel), acc, z));
}

/* The typed epilogue of two adjacent columns, of channel values c0 and c1, at offsets off and
   off + 1 (epi.pairs: off is even), z read and the two results stored as one access each. */
template <typename T, int FORM>
__host__ __device__ __forceinline__ void igemm_epi_store_pair(const igemm_epi &e, int64_t off, ocd_cuda_conv_chan c0,
                                                              ocd_cuda_conv_chan c1, float acc0, float acc1)
{
    ocd_vec<T, 2> z, r;
    const bool reads = igemm_epi_reads_z<FORM>(e);
    if (reads) z = *(const ocd_vec<T, 2> *)((const T *)e.z + off);
    ocd_cuda_store(&r.v[0], igemm_epi_apply<FORM>(e, c0, acc0, reads ? ocd_cuda_load(&z.v[0]) : 0.f));
    ocd_cuda_store(&r.v[1], igemm_epi_apply<FORM>(e, c1, acc1, reads ? ocd_cuda_load(&z.v[1]) : 0.f));
    *(ocd_vec<T, 2> *)((T *)e.out + off) = r;
}

/* The epilogue of operand type T and output type O: igemm_epi_store, or for 8-bit operands in
   the whole form the direct kernels' store as a call (conv_store.cuh, epi.store), which converts
   the int32 sum to float as the direct kernel does and writes any destination type (int8 rounded
   and saturated, or float). The plain form of 8-bit operands is igemm_epi_store of O, the output's
   type (int8, uint8 or float: igemm_store_frags picks it): the same float product, rounded the
   same, without the whole store's run-time types at every element. */
template <typename T, int FORM = IGEMM_EPI_WHOLE, typename O = T>
__host__ __device__ __forceinline__ void igemm_epi_out(const igemm_epi &e, int64_t off, int64_t channel, float acc)
{
    if constexpr (sizeof(T) == 1 && FORM == IGEMM_EPI_WHOLE)
        ocd_cuda_conv_finish_call<float>(e.store, off, channel, acc);
    else
        igemm_epi_store<O, FORM>(e, off, channel, acc);
}

/* The filter tap (t, r, s) and channel c (within a group) of GEMM K index kk (below p.K) of the
   K-major gathers, decoded with k_div. */
__host__ __device__ __forceinline__ void igemm_k_decode(const igemm_params &p, uint32_t kk, uint32_t *c, uint32_t *t,
                                                        uint32_t *r, uint32_t *s)
{
    uint32_t q = ocd_fastdiv_divmod(p.k_div[0], kk, c);
    q = ocd_fastdiv_divmod(p.k_div[1], q, s);
    *t = ocd_fastdiv_divmod(p.k_div[2], q, r);
}

/* The element offset of channel c of a vectorized layout (INT8x4, INT8x32: 1 << vshift channels
   a vector, vectors sv elements apart): its vector's offset plus its lane. */
__host__ __device__ __forceinline__ int64_t igemm_vector_channel(int64_t c, int vshift, int64_t sv)
{
    return (c >> vshift) * sv + (c & ((1 << vshift) - 1));
}

/* The element offset of channel c of an operand v of element type T: c, or in an int8 operand
   read in place as vectors (v.vshift) igemm_vector_channel's. */
template <typename T> __host__ __device__ __forceinline__ int64_t igemm_channel_offset(const igemm_act &v, uint32_t c)
{
    if constexpr (sizeof(T) == 1)
        if (v.vshift) return igemm_vector_channel(c, v.vshift, v.sv);
    return (int64_t)c;
}

/* One 16-byte chunk of a stage from src, zero-filled where !ok (src then any valid address): 16
   contiguous bytes, or of an INT8x4 operand read in place (v.vshift 2) four 4-byte vectors v.sv
   apart. */
template <typename T>
__host__ __device__ __forceinline__ void igemm_cp_chunk(T *dst, const T *src, bool ok, const igemm_act &v)
{
    if constexpr (sizeof(T) == 1)
        if (v.vshift == 2) {
#pragma unroll
            for (int q = 0; q < 4; q++) ocd_mma_cp_async<4>(dst + 4 * q, ok ? src + q * v.sv : src, ok);
            return;
        }
    ocd_mma_cp_async<16>(dst, src, ok);
}

/* ---- operand loaders ---------------------------------------------------------------------------
   Each loader owns one operand of one direction: setup() runs once per CTA (per-thread row state),
   load() issues the cp.async copies of one K tile into one stage. The thread -> chunk assignment is
   fixed: K-major stages have L::CPR chunks per row (thread tid takes chunk tid % CPR of rows
   tid / CPR, tid / CPR + THREADS / CPR, ...), placed where the stage layout L says (mma.cuh's
   padded rows, or wgmma.cuh's swizzled ones); MN-major stages have ROWS / E chunks per K row. */

/* What the two K-major gathers share (forward A and backward-data A): rows are pixels, decoded as
   the output's rows are (epi.row), each starting at spatial coordinate coord * mul + add; K runs
   over (t, r, s, channel) of one group, decoded with k_div. */
template <typename T, int ROWS, int THREADS, class L> struct igemm_pixel_rows {
    static constexpr int ITERS = ROWS * L::CPR / THREADS, STEP = THREADS / L::CPR;
    static_assert(ITERS * THREADS == ROWS * L::CPR, "tile rows must cover the threads");
    int64_t base[ITERS];              /* batch offset of each row */
    int zi[ITERS], hi[ITERS], wi[ITERS]; /* its start coordinates; INT_MIN / 2 past M (fails any bounds check) */
    int row0, kc;
    int64_t cbase;

    __host__ __device__ __forceinline__ void setup_rows(const igemm_params &p, int m0, int g, int tid, int mul_d,
                                                        int add_d, int mul_h, int add_h, int mul_w, int add_w)
    {
        kc = tid % L::CPR;
        row0 = tid / L::CPR;
        cbase = g * p.a.group_c;
#pragma unroll
        for (int i = 0; i < ITERS; i++) {
            int m = m0 + row0 + i * STEP;
            base[i] = 0;
            zi[i] = hi[i] = wi[i] = INT_MIN / 2;
            if (m < p.M) {
                uint32_t w, h, d, n = ocd_fastdiv_divmod(p.epi.row.div[0], (uint32_t)m, &w);
                n = ocd_fastdiv_divmod(p.epi.row.div[1], n, &h);
                n = ocd_fastdiv_divmod(p.epi.row.div[2], n, &d);
                base[i] = (int64_t)n * p.a.sn;
                zi[i] = (int)d * mul_d + add_d;
                hi[i] = (int)h * mul_h + add_h;
                wi[i] = (int)w * mul_w + add_w;
            }
        }
    }

    /* The thread's K chunk of tile kt: false past K; else its filter tap and channel in group. */
    __host__ __device__ __forceinline__ bool k_chunk(const igemm_params &p, int kt, uint32_t *c, uint32_t *t,
                                                     uint32_t *r, uint32_t *s) const
    {
        int kk = kt * L::BK + kc * L::E;
        igemm_k_decode(p, (uint32_t)(kk < p.K ? kk : 0), c, t, r, s);
        return kk < p.K;
    }

    __host__ __device__ __forceinline__ T *dst(T *stage, int i) const
    {
        return stage + L::offset(row0 + i * STEP, kc);
    }
};

/* Forward A: rows are output pixels (n, z, p, q), K runs over (t, r, s, c); a row's input window
   starts at out * stride - pad. */
template <typename T, int ROWS, int THREADS, class L = ocd_mma_smem<T, ROWS, true>>
struct igemm_load_fwd_a : igemm_pixel_rows<T, ROWS, THREADS, L> {
    typedef igemm_pixel_rows<T, ROWS, THREADS, L> R;

    __host__ __device__ __forceinline__ void setup(const igemm_params &p, int m0, int n0, int g, int tid)
    {
        R::setup_rows(p, m0, g, tid, p.ud, -p.pd, p.uh, -p.ph, p.uw, -p.pw);
    }

    __host__ __device__ __forceinline__ void load(T *s, int kt, const igemm_params &p) const
    {
        uint32_t c, t, r, sx;
        bool kok = R::k_chunk(p, kt, &c, &t, &r, &sx);
        if (p.flip) {
            t = p.T - 1 - t;
            r = p.R - 1 - r;
            sx = p.S - 1 - sx;
        }
        int oz = (int)t * p.dd, oh = (int)r * p.dh, ow = (int)sx * p.dw;
        const T *x = (const T *)p.a.ptr;
        /* the chunk's channel offset (in a vectorized int8 x its first vector's: INT8x32, 16 bytes
           of one vector; INT8x4, four vectors sv apart) */
        const int64_t coff = igemm_channel_offset<T>(p.a, c);
#pragma unroll
        for (int i = 0; i < R::ITERS; i++) {
            int z = R::zi[i] + oz, h = R::hi[i] + oh, w = R::wi[i] + ow;
            bool ok = kok && (unsigned)z < (unsigned)p.a.d && (unsigned)h < (unsigned)p.a.h &&
                      (unsigned)w < (unsigned)p.a.w;
            const T *src = ok ? x + R::base[i] + z * p.a.sd + h * p.a.sh + w * p.a.sw + R::cbase + coff : x;
            igemm_cp_chunk(R::dst(s, i), src, ok, p.a);
        }
    }
};

/* Backward-data A: rows are dx pixels (n, z, h, w), K runs over (t, r, s, k); the dy element
   exists only where (h + pad - r * dil) is a non-negative multiple of the stride below P. The
   filter taps are not mirrored here: the re-packed filter already is. */
template <typename T, int ROWS, int THREADS, class L = ocd_mma_smem<T, ROWS, true>>
struct igemm_load_dgrad_a : igemm_pixel_rows<T, ROWS, THREADS, L> {
    typedef igemm_pixel_rows<T, ROWS, THREADS, L> R;

    __host__ __device__ __forceinline__ void setup(const igemm_params &p, int m0, int n0, int g, int tid)
    {
        R::setup_rows(p, m0, g, tid, 1, p.pd, 1, p.ph, 1, p.pw);
    }

    __host__ __device__ __forceinline__ void load(T *s, int kt, const igemm_params &p) const
    {
        uint32_t k, t, r, sx;
        bool kok = R::k_chunk(p, kt, &k, &t, &r, &sx);
        int oz = (int)t * p.dd, oh = (int)r * p.dh, ow = (int)sx * p.dw;
        const T *dy = (const T *)p.a.ptr;
#pragma unroll
        for (int i = 0; i < R::ITERS; i++) {
            int nz = R::zi[i] - oz, nh = R::hi[i] - oh, nw = R::wi[i] - ow;
            bool ok = kok && nz >= 0 && nh >= 0 && nw >= 0;
            uint32_t qz = 0, qh = 0, qw = 0;
            if (ok) {
                uint32_t rz, rh, rw;
                qz = ocd_fastdiv_divmod(p.str_div[2], (uint32_t)nz, &rz);
                qh = ocd_fastdiv_divmod(p.str_div[1], (uint32_t)nh, &rh);
                qw = ocd_fastdiv_divmod(p.str_div[0], (uint32_t)nw, &rw);
                ok = (rz | rh | rw) == 0 && qz < (uint32_t)p.a.d && qh < (uint32_t)p.a.h &&
                     qw < (uint32_t)p.a.w;
            }
            const T *src = ok ? dy + R::base[i] + qz * p.a.sd + qh * p.a.sh + qw * p.a.sw + R::cbase + k : dy;
            ocd_mma_cp_async<16>(R::dst(s, i), src, ok);
        }
    }
};

/* Dense K-major B (forward: the KRSC filter; backward data: the re-packed filter): row n of
   group g starts at bmat + g * b_gs + n * b_ld. An int8 forward filter in INT8x32, or a small one
   in INT8x4 (p.b.vshift; make_plan's VECT_FILTER_IN_PLACE), is read in place instead: row n at
   bmat + n * b_ld, the chunk of K index (t, r, s, c) at its tap's offset plus its channel's, read
   as x is (igemm_load_fwd_a). */
template <typename T, int ROWS, int THREADS, class L = ocd_mma_smem<T, ROWS, true>>
struct igemm_load_dense_b : ocd_mma_load_kmajor<T, ROWS, THREADS, L> {
    typedef ocd_mma_load_kmajor<T, ROWS, THREADS, L> B;

    __host__ __device__ __forceinline__ void setup(const igemm_params &p, int m0, int n0, int g, int tid)
    {
        B::setup((const T *)p.bmat + g * p.b_gs, p.b_ld, p.N, n0, p.K, tid);
    }

    __host__ __device__ __forceinline__ void load(T *s, int kt, const igemm_params &p) const
    {
        if constexpr (sizeof(T) == 1)
            if (p.b.vshift) {
                load_vectors(s, kt, p);
                return;
            }
        B::load(s, kt, p);
    }

    __host__ __device__ __forceinline__ void load_vectors(T *s, int kt, const igemm_params &p) const
    {
        const int kk = kt * L::BK + B::kc * L::E;
        uint32_t c, t, r, sx;
        igemm_k_decode(p, (uint32_t)(kk < p.K ? kk : 0), &c, &t, &r, &sx);
        const int64_t koff = igemm_channel_offset<T>(p.b, c) + t * p.b.sd + r * p.b.sh + sx * p.b.sw;
#pragma unroll
        for (int i = 0; i < B::ITERS; i++) {
            const bool ok = B::off[i] >= 0 && kk < p.K;
            igemm_cp_chunk(s + L::offset(B::row0 + i * B::STEP, B::kc), ok ? B::mat + B::off[i] + koff : B::mat, ok,
                           p.b);
        }
    }
};

/* What the two MN-major gathers of the filter gradient share: K rows are output pixels
   (n, z, p, q), decoded with k_div; each thread owns one 16-byte column chunk (cc) of rows krow0,
   krow0 + STEP, ..., placed where the stage layout L says (mma.cuh's padded rows, or wgmma.cuh's
   swizzled MN-major blocks). */
template <typename T, int ROWS, int THREADS, class L> struct igemm_pixel_krows {
    static constexpr int CPR = ROWS / L::E, ITERS = L::BK * CPR / THREADS, STEP = THREADS / CPR;
    static_assert(THREADS % CPR == 0 && ITERS * THREADS == L::BK * CPR, "tile must cover the threads");
    int krow0, cc;

    __host__ __device__ __forceinline__ void setup_krows(int tid)
    {
        krow0 = tid / CPR;
        cc = tid % CPR;
    }

    /* The pixel of row i of tile kt: false past K. */
    __host__ __device__ __forceinline__ bool pixel(const igemm_params &p, int kt, int i, uint32_t *n, uint32_t *z,
                                                   uint32_t *pp, uint32_t *q) const
    {
        int npq = kt * L::BK + krow0 + i * STEP;
        uint32_t t = ocd_fastdiv_divmod(p.k_div[0], (uint32_t)(npq < p.K ? npq : 0), q);
        t = ocd_fastdiv_divmod(p.k_div[1], t, pp);
        *n = ocd_fastdiv_divmod(p.k_div[2], t, z);
        return npq < p.K;
    }

    __host__ __device__ __forceinline__ T *dst(T *stage, int i) const
    {
        return stage + L::offset(krow0 + i * STEP, cc);
    }
};

/* Backward-filter A = dy^T: columns are output channels of one group. */
template <typename T, int ROWS, int THREADS, class L = ocd_mma_smem<T, ROWS, false>>
struct igemm_load_wgrad_a : igemm_pixel_krows<T, ROWS, THREADS, L> {
    typedef igemm_pixel_krows<T, ROWS, THREADS, L> R;
    bool mok;
    int64_t coff;

    __host__ __device__ __forceinline__ void setup(const igemm_params &p, int m0, int n0, int g, int tid)
    {
        R::setup_krows(tid);
        int m = m0 + R::cc * L::E;
        mok = m < p.M;
        coff = g * p.a.group_c + m;
    }

    __host__ __device__ __forceinline__ void load(T *s, int kt, const igemm_params &p) const
    {
        const T *dy = (const T *)p.a.ptr;
#pragma unroll
        for (int i = 0; i < R::ITERS; i++) {
            uint32_t n, z, pp, q;
            bool ok = R::pixel(p, kt, i, &n, &z, &pp, &q) && mok;
            const T *src = ok ? dy + n * p.a.sn + z * p.a.sd + pp * p.a.sh + q * p.a.sw + coff : dy;
            ocd_mma_cp_async<16>(R::dst(s, i), src, ok);
        }
    }
};

/* Backward-filter B = gather(x): columns are (t, r, s, c) of one group, decoded as the filter's
   columns are (epi.col). */
template <typename T, int ROWS, int THREADS, class L = ocd_mma_smem<T, ROWS, false>>
struct igemm_load_wgrad_b : igemm_pixel_krows<T, ROWS, THREADS, L> {
    typedef igemm_pixel_krows<T, ROWS, THREADS, L> R;
    bool nok;
    int toff, roff, soff;
    int64_t coff;

    __host__ __device__ __forceinline__ void setup(const igemm_params &p, int m0, int n0, int g, int tid)
    {
        R::setup_krows(tid);
        int ncol = n0 + R::cc * L::E;
        nok = ncol < p.N;
        uint32_t c, sx, r, t = ocd_fastdiv_divmod(p.epi.col.div[0], (uint32_t)(nok ? ncol : 0), &c);
        t = ocd_fastdiv_divmod(p.epi.col.div[1], t, &sx);
        t = ocd_fastdiv_divmod(p.epi.col.div[2], t, &r);
        if (p.flip) {
            t = p.T - 1 - t;
            r = p.R - 1 - r;
            sx = p.S - 1 - sx;
        }
        toff = (int)t * p.dd - p.pd;
        roff = (int)r * p.dh - p.ph;
        soff = (int)sx * p.dw - p.pw;
        coff = g * p.b.group_c + c;
    }

    __host__ __device__ __forceinline__ void load(T *s, int kt, const igemm_params &p) const
    {
        const T *x = (const T *)p.b.ptr;
#pragma unroll
        for (int i = 0; i < R::ITERS; i++) {
            uint32_t n, z, pp, q;
            bool ok = R::pixel(p, kt, i, &n, &z, &pp, &q) && nok;
            int zz = (int)z * p.ud + toff, hh = (int)pp * p.uh + roff, ww = (int)q * p.uw + soff;
            ok = ok && (unsigned)zz < (unsigned)p.b.d && (unsigned)hh < (unsigned)p.b.h &&
                 (unsigned)ww < (unsigned)p.b.w;
            const T *src = ok ? x + n * p.b.sn + zz * p.b.sd + hh * p.b.sh + ww * p.b.sw + coff : x;
            ocd_mma_cp_async<16>(R::dst(s, i), src, ok);
        }
    }
};

/* The three directions: which loader feeds which operand, and how each operand is laid out (the
   K-major loaders also take another stage layout L: the sm_90a kernel's swizzled one). */
struct igemm_dir_fwd {
    static constexpr bool A_KMAJOR = true, B_KMAJOR = true;
    template <typename T, int R, int TH, class L = ocd_mma_smem<T, R, true>> using ALoad = igemm_load_fwd_a<T, R, TH, L>;
    template <typename T, int R, int TH, class L = ocd_mma_smem<T, R, true>> using BLoad = igemm_load_dense_b<T, R, TH, L>;
};
struct igemm_dir_dgrad {
    static constexpr bool A_KMAJOR = true, B_KMAJOR = true;
    template <typename T, int R, int TH, class L = ocd_mma_smem<T, R, true>> using ALoad = igemm_load_dgrad_a<T, R, TH, L>;
    template <typename T, int R, int TH, class L = ocd_mma_smem<T, R, true>> using BLoad = igemm_load_dense_b<T, R, TH, L>;
};
struct igemm_dir_wgrad {
    static constexpr bool A_KMAJOR = false, B_KMAJOR = false;
    template <typename T, int R, int TH, class L = ocd_mma_smem<T, R, false>> using ALoad = igemm_load_wgrad_a<T, R, TH, L>;
    template <typename T, int R, int TH, class L = ocd_mma_smem<T, R, false>> using BLoad = igemm_load_wgrad_b<T, R, TH, L>;
};

/* What one CTA (block bx, by, bz of the grid of igemm_launch_kernel) computes: the BM x BN tile at
   (m0, n0) of group g, K tiles kt0 .. kt0 + nkt - 1 of BK elements each (split `split`). */
struct igemm_cta {
    int m0, n0, g, split, kt0, nkt;
};

__host__ __device__ __forceinline__ igemm_cta igemm_cta_of(const igemm_params &p, int bx, int by, int bz, int bm,
                                                           int bn, int bk)
{
    igemm_cta c;
    c.m0 = bx * bm, c.n0 = by * bn;
    c.g = bz / p.splits, c.split = bz % p.splits;
    const int ktiles = (p.K + bk - 1) / bk;
    c.kt0 = c.split * p.kt_per_split;
    const int end = ktiles < c.kt0 + p.kt_per_split ? ktiles : c.kt0 + p.kt_per_split;
    c.nkt = end > c.kt0 ? end - c.kt0 : 0;
    return c;
}

/* igemm_store_frags_as where epi.pairs and the output is the kernel's (no partial sums): the
   rows' offsets mapped once, then column pair by column pair (a lane's columns n and n + 1 of
   each 8), the pair's channel values loaded once for all its rows, and loaded ahead of the
   stores of the pair before it, so that no load waits behind a store (conv_store.cuh's
   ocd_cuda_conv_chan says why it would). */
#pragma nv_exec_check_disable
template <typename T, int MI, int NI, int FORM, class Acc>
__host__ __device__ __forceinline__ void igemm_store_pairs_as(const igemm_params &p, const Acc &acc, int m_base,
                                                              int n_base, int g, int lane)
{
    const igemm_epi &e = p.epi;
    int64_t roff[MI][2];
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
        for (int hr = 0; hr < 2; hr++) {
            const int m = m_base + i * 16 + (lane >> 2) + hr * 8;
            roff[i][hr] = m < p.M ? igemm_map_offset(e.row, (uint32_t)m) + g * e.group_off : -1;
        }
    const int64_t ch = (int64_t)g * p.N; /* the channel of column 0 */
    const int n0 = n_base + (lane & 3) * 2;
    ocd_cuda_conv_chan next0 = {1.f, 0.f}, next1 = next0;
    if (n0 < p.N)
        next0 = igemm_epi_chan<T, FORM>(e, ch + n0), next1 = igemm_epi_chan<T, FORM>(e, ch + OCD_MIN(n0 + 1, p.N - 1));
#pragma unroll
    for (int j = 0; j < NI; j++) {
        const int n = n0 + j * 8;
        if (n >= p.N) break;
        const ocd_cuda_conv_chan c0 = next0, c1 = next1;
        if (j + 1 < NI && n + 8 < p.N)
            next0 = igemm_epi_chan<T, FORM>(e, ch + n + 8),
            next1 = igemm_epi_chan<T, FORM>(e, ch + OCD_MIN(n + 9, p.N - 1));
#pragma unroll
        for (int i = 0; i < MI; i++)
#pragma unroll
            for (int hr = 0; hr < 2; hr++) {
                if (roff[i][hr] < 0) continue;
                if (n + 1 < p.N)
                    igemm_epi_store_pair<T, FORM>(e, roff[i][hr] + n, c0, c1, acc(i, j, hr * 2), acc(i, j, hr * 2 + 1));
                else
                    igemm_epi_store<T, FORM>(e, roff[i][hr] + n, ch + n, acc(i, j, hr * 2));
            }
    }
}

/* The epilogue of one warp's accumulators, laid out as mma.sync's (mma.cuh; wgmma's m64nNk16 is
   the same per warp, wgmma.cuh): acc(i, j, e) of lane `lane` is row m_base + 16 i + lane / 4 +
   8 (e / 2), column n_base + 8 j + 2 (lane % 4) + e % 2 of group g's output; rows past M and
   columns past N or padding (igemm_col_real) are skipped; where epi.pairs, e and e + 1 of a row
   are stored together (igemm_store_pairs_as). With split-K the values go to the split's partial
   tile instead. acc is a device lambda in the kernels and a host one in the
   emulations (hence the pragma). In the epilogue form FORM (igemm_epi_form), of output type O
   (igemm_epi_out). */
#pragma nv_exec_check_disable
template <typename T, int MI, int NI, int FORM, typename O = T, class Acc>
__host__ __device__ __forceinline__ void igemm_store_frags_as(const igemm_params &p, const Acc &acc, int m_base,
                                                              int n_base, int g, int split, int lane)
{
    const igemm_epi &e = p.epi;
    const int64_t pstride = (int64_t)p.groups * p.M * p.N;
    float *part = e.partial ? e.partial + split * pstride + (int64_t)g * p.M * p.N : NULL;
    if constexpr (sizeof(T) > 1)
        if (!part && e.pairs) return igemm_store_pairs_as<T, MI, NI, FORM>(p, acc, m_base, n_base, g, lane);
#pragma unroll
    for (int i = 0; i < MI; i++) {
#pragma unroll
        for (int hr = 0; hr < 2; hr++) {
            int m = m_base + i * 16 + (lane >> 2) + hr * 8;
            if (m >= p.M) continue;
            if (part) {
                /* a lane's two columns as one 8-byte store where both are real and N is even (the
                   row's offset m N, hence every pair's, is then even): a warp's store covers
                   whole sectors of its 8 rows */
                float *row = part + (int64_t)m * p.N;
#pragma unroll
                for (int j = 0; j < NI; j++) {
                    const int n = n_base + j * 8 + (lane & 3) * 2;
                    const bool real0 = n < p.N && igemm_col_real(e, n), real1 = n + 1 < p.N && igemm_col_real(e, n + 1);
                    if (real0 && real1 && p.N % 2 == 0) {
                        *(float2 *)(row + n) = make_float2(acc(i, j, hr * 2), acc(i, j, hr * 2 + 1));
                    } else {
                        if (real0) row[n] = acc(i, j, hr * 2);
                        if (real1) row[n + 1] = acc(i, j, hr * 2 + 1);
                    }
                }
                continue;
            }
            const int64_t roff = igemm_map_offset(e.row, (uint32_t)m) + g * e.group_off;
#pragma unroll
            for (int j = 0; j < NI; j++) {
#pragma unroll
                for (int c = 0; c < 2; c++) {
                    int n = n_base + j * 8 + (lane & 3) * 2 + c;
                    if (n >= p.N || !igemm_col_real(e, n)) continue;
                    igemm_epi_out<T, FORM, O>(e, roff + igemm_map_offset(e.col, (uint32_t)n), (int64_t)g * p.N + n,
                                              acc(i, j, hr * 2 + c));
                }
            }
        }
    }
}

/* igemm_store_frags_as in the plain form where the plan's epilogue is (epi.form), else in the
   whole one. The plain form of 8-bit operands is compiled for each output type of the int8
   configurations and run for the call's (epi.store.t; the plan names the form only for these). */
#pragma nv_exec_check_disable
template <typename T, int MI, int NI, class Acc>
__host__ __device__ __forceinline__ void igemm_store_frags(const igemm_params &p, const Acc &acc, int m_base,
                                                           int n_base, int g, int split, int lane)
{
    if (p.epi.form == IGEMM_EPI_PLAIN) {
        if constexpr (sizeof(T) > 1) {
            return igemm_store_frags_as<T, MI, NI, IGEMM_EPI_PLAIN>(p, acc, m_base, n_base, g, split, lane);
        } else {
            switch (p.epi.store.t) {
            case CUDNN_DATA_FLOAT:
                return igemm_store_frags_as<T, MI, NI, IGEMM_EPI_PLAIN, float>(p, acc, m_base, n_base, g, split, lane);
            case CUDNN_DATA_UINT8: case CUDNN_DATA_UINT8x4:
                return igemm_store_frags_as<T, MI, NI, IGEMM_EPI_PLAIN, uint8_t>(p, acc, m_base, n_base, g, split, lane);
            default:
                return igemm_store_frags_as<T, MI, NI, IGEMM_EPI_PLAIN, int8_t>(p, acc, m_base, n_base, g, split, lane);
            }
        }
    }
    igemm_store_frags_as<T, MI, NI, IGEMM_EPI_WHOLE>(p, acc, m_base, n_base, g, split, lane);
}

/* ---- the kernel --------------------------------------------------------------------------------
   grid = (ceil(M / BM), ceil(N / BN), groups * splits); dynamic shared memory igemm_smem_bytes. */

template <class Tile, typename T, class Dir> struct igemm_shape {
    typedef ocd_mma_smem<T, Tile::BM, Dir::A_KMAJOR> SA;
    typedef ocd_mma_smem<T, Tile::BN, Dir::B_KMAJOR> SB;
    static constexpr size_t SMEM = (size_t)Tile::STAGES * (SA::STAGE + SB::STAGE) * sizeof(T);
};

template <class Tile, typename T, class Dir>
__global__ void __launch_bounds__(Tile::THREADS) igemm_kernel(const __grid_constant__ igemm_params p)
{
#ifdef OCD_MMA_ARCH_OK
    typedef igemm_shape<Tile, T, Dir> Shape;
    typedef typename Shape::SA SA;
    typedef typename Shape::SB SB;
    constexpr int STAGES = Tile::STAGES, MI = Tile::MI, NI = Tile::NI;

    extern __shared__ __align__(16) unsigned char igemm_smem_raw[];
    T *sa = (T *)igemm_smem_raw;
    T *sb = sa + STAGES * SA::STAGE;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = (warp % Tile::WARPS_M) * Tile::WTM, wn = (warp / Tile::WARPS_M) * Tile::WTN;
    const igemm_cta c = igemm_cta_of(p, blockIdx.x, blockIdx.y, blockIdx.z, Tile::BM, Tile::BN, SA::BK);

    typename Dir::template ALoad<T, Tile::BM, Tile::THREADS> al;
    typename Dir::template BLoad<T, Tile::BN, Tile::THREADS> bl;
    al.setup(p, c.m0, c.n0, c.g, tid);
    bl.setup(p, c.m0, c.n0, c.g, tid);

    typename ocd_mma_elem<T>::Acc acc[MI][NI][4];
    ocd_mma_mainloop<Tile, T, Dir::A_KMAJOR, Dir::B_KMAJOR>(acc, sa, sb, al, bl, p, c.kt0, c.nkt, wm, wn, lane);
    igemm_store_frags<T, MI, NI>(p, [&](int i, int j, int e) { return acc[i][j][e]; }, c.m0 + wm, c.n0 + wn, c.g,
                                 c.split, lane);
#endif
}

/* Split-K (or a `wide` epilogue): sums the partial tiles in split order and runs the epilogue of
   output (group g, row m, column n) in form FORM (igemm_epi_form); padding columns have none
   (igemm_col_real). */
template <typename T, int FORM = IGEMM_EPI_WHOLE>
__host__ __device__ __forceinline__ void igemm_reduce_one(const igemm_params &p, int g, int m, int n)
{
    if (!igemm_col_real(p.epi, n)) return;
    const int64_t total = (int64_t)p.M * p.N * p.groups, i = ((int64_t)g * p.M + m) * p.N + n;
    float s = 0.f;
    for (int sp = 0; sp < p.splits; sp++) s += p.epi.partial[sp * total + i];
    const int64_t off = igemm_map_offset(p.epi.row, (uint32_t)m) + g * p.epi.group_off +
                        igemm_map_offset(p.epi.col, (uint32_t)n);
    if (p.epi.wide)
        ocd_cuda_conv_finish<float>(p.epi.store, off, (int64_t)g * p.N + n, s);
    else
        igemm_epi_out<T, FORM>(p.epi, off, (int64_t)g * p.N + n, s);
}

/* Whether the reduction runs the plain form (what igemm_store_frags would store). */
template <typename T> __host__ __device__ __forceinline__ bool igemm_reduce_plain(const igemm_params &p)
{
    return sizeof(T) > 1 && !p.epi.wide && p.epi.form == IGEMM_EPI_PLAIN;
}

/* Every output, as the kernel below computes them (the emulations). */
template <typename T> void igemm_reduce_all(const igemm_params &p)
{
    const bool plain = igemm_reduce_plain<T>(p);
    for (int g = 0; g < p.groups; g++)
        for (int m = 0; m < p.M; m++)
            for (int n = 0; n < p.N; n++)
                plain ? igemm_reduce_one<T, IGEMM_EPI_PLAIN>(p, g, m, n)
                      : igemm_reduce_one<T, IGEMM_EPI_WHOLE>(p, g, m, n);
}

/* Grid (ceil(N / blockDim.x), rows, groups): a thread takes column n of rows blockIdx.y,
   blockIdx.y + gridDim.y, ... (and groups alike), so that no index needs a division (a 1-D
   index split by two 64-bit divisions an output cost ResNet-50's l4 3x3 filter gradient at
   batch 256 about 350 instructions an output: 50 us beside the kernel's 149 on an H100). */
template <typename T, int FORM> __global__ void igemm_splitk_reduce(const __grid_constant__ igemm_params p)
{
    const int n = blockIdx.x * blockDim.x + threadIdx.x;
    if (n >= p.N) return;
    for (int g = blockIdx.z; g < p.groups; g += gridDim.z)
        for (int m = blockIdx.y; m < p.M; m += gridDim.y) igemm_reduce_one<T, FORM>(p, g, m, n);
}

/* ---- launchers ---------------------------------------------------------------------------------- */

typedef cudnnStatus_t (*igemm_launch_fn)(const igemm_params *p, int device, cudaStream_t stream);

/* Launches the reduction of the partial sums where the kernel wrote them (split-K, or a wide
   epilogue: epi.partial): blocks of up to 256 columns, at most 65535 rows of blocks. */
template <typename T> cudnnStatus_t igemm_launch_reduce(const igemm_params *p, cudaStream_t stream)
{
    if (p->epi.partial != NULL) {
        const int threads = OCD_MIN((p->N + 31) / 32 * 32, 256);
        const dim3 grid((unsigned)((p->N + threads - 1) / threads), (unsigned)OCD_MIN(p->M, 65535),
                        (unsigned)OCD_MIN(p->groups, 65535));
        if (igemm_reduce_plain<T>(*p))
            igemm_splitk_reduce<T, IGEMM_EPI_PLAIN><<<grid, threads, 0, stream>>>(*p);
        else
            igemm_splitk_reduce<T, IGEMM_EPI_WHOLE><<<grid, threads, 0, stream>>>(*p);
        OCD_CUDA_LAUNCHED();
    }
    return CUDNN_STATUS_SUCCESS;
}

/* Launches `kernel` (a BM x BN tile per CTA, `smem` bytes of dynamic shared memory) and the
   reduction when the kernel writes partial sums (split-K, or a wide epilogue), on `device`, the
   current one. */
template <typename T>
cudnnStatus_t igemm_launch_kernel(void (*kernel)(const igemm_params), int bm, int bn, int threads, size_t smem,
                                  unsigned long long *smem_opted, const igemm_params *p, int device,
                                  cudaStream_t stream)
{
    OCD_TRY(ocd_smem_opt_in(kernel, smem, false, smem_opted, device));
    dim3 grid((unsigned)((p->M + bm - 1) / bm), (unsigned)((p->N + bn - 1) / bn), (unsigned)(p->groups * p->splits));
    kernel<<<grid, threads, smem, stream>>>(*p);
    OCD_CUDA_LAUNCHED();
    return igemm_launch_reduce<T>(p, stream);
}

/* The mainloop kernel of one tile, type and direction. */
template <class Tile, typename T, class Dir> struct igemm_mma_launch {
    static cudnnStatus_t run(const igemm_params *p, int device, cudaStream_t stream)
    {
        static unsigned long long smem_opted;
        return igemm_launch_kernel<T>(igemm_kernel<Tile, T, Dir>, Tile::BM, Tile::BN, Tile::THREADS,
                                      igemm_shape<Tile, T, Dir>::SMEM, &smem_opted, p, device, stream);
    }
};

/* Element types, in launcher-table column order. */
enum igemm_type { IGEMM_F16, IGEMM_BF16, IGEMM_TF32, IGEMM_NTYPES };

/* The launcher of one kernel instance (Launch<Tile, T, Dir>::run: igemm_mma_launch, or the sm_90a
   kernel's igemm_wgmma_launch), or NULL where the combination does not exist (tf32 with MN-major
   operands), without instantiating it. */
template <bool EXISTS, template <class, typename, class> class Launch, class Tile, typename T, class Dir>
struct igemm_launcher {
    static constexpr igemm_launch_fn fn = Launch<Tile, T, Dir>::run;
};
template <template <class, typename, class> class Launch, class Tile, typename T, class Dir>
struct igemm_launcher<false, Launch, Tile, T, Dir> {
    static constexpr igemm_launch_fn fn = NULL;
};

/* One direction's launchers of one tile (the type after dir), in igemm_type order: tf32 only
   where both operands are K-major. */
#define OCD_IGEMM_LAUNCH_TYPES(launch, dir, ...)                                                   \
    {igemm_launcher<true, launch, __VA_ARGS__, __half, dir>::fn,                                    \
     igemm_launcher<true, launch, __VA_ARGS__, __nv_bfloat16, dir>::fn,                             \
     igemm_launcher<dir::A_KMAJOR && dir::B_KMAJOR, launch, __VA_ARGS__, float, dir>::fn}

/* One row of a direction's launcher table, for OCD_IGEMM_TILES; OCD_IGEMM_DIR names the
   direction. Each conv_igemm_<dir>.cu defines the table of its direction, so that the three
   directions compile in parallel. */
#define OCD_IGEMM_LAUNCH_ROW(i, bm, bn, wm, wn, st)                                                 \
    OCD_IGEMM_LAUNCH_TYPES(igemm_mma_launch, OCD_IGEMM_DIR, ocd_mma_tile<bm, bn, wm, wn, st>),

/* Per direction, [tile][type] launchers (NULL for tf32 in the backward-filter pass). */
extern const igemm_launch_fn ocd_igemm_fwd_launch[OCD_IGEMM_NTILES][IGEMM_NTYPES];
extern const igemm_launch_fn ocd_igemm_dgrad_launch[OCD_IGEMM_NTILES][IGEMM_NTYPES];
extern const igemm_launch_fn ocd_igemm_wgrad_launch[OCD_IGEMM_NTILES][IGEMM_NTYPES];

/* The forward pass on 8-bit integers (conv_igemm_int8.cu), [tile][A's type: int8, uint8]. */
extern const igemm_launch_fn ocd_igemm_int8_launch[OCD_IGEMM_NTILES][2];

/* The sm_90a kernel (conv_igemm_sm90.cu), [wgmma tile][direction][type] (NULL for tf32 in the
   backward-filter pass); false built: compiled without sm_90a code (a toolkit older than CUDA
   12.0). */
extern const igemm_launch_fn ocd_igemm_wgmma_launch[OCD_IGEMM_WGMMA_NTILES][OCD_CONV_DIRS][IGEMM_NTYPES];
extern const bool ocd_igemm_wgmma_built;

#endif /* OCD_CUDA_CONV_IGEMM_CUH */
