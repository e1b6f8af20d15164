/* ops_conv.c: the three convolution directions, the algorithm chosen by the heuristic or forced. */
#include "bench.h"


/* convfwd, convbwdd, convbwdf: a 2-D convolution (cross-correlation, one group) and its two
   gradients. Keys: layout nchw|nhwc|nchw_vect_c (of x, y and the filter alike), x = n x c x h x w,
   filter = k x c x r x s, pad/stride/dil the same along both spatial dims; y = n x k x p x q with
   p = (h + 2 pad - dil (r - 1) - 1) / stride + 1 (q alike). Tensors, in this order: x (dx for
   convbwdd), the filter (dw for convbwdf), y (dy for the gradients); the result is y, dx or dw.
   alpha 1, beta 0. The compute type is float (double for f64): half and bfloat16 data with float
   accumulation, as training frameworks run them. The optional math key names the math type
   (conv_math_names); without it tensor-op math for half, bfloat16 and the int8 types, default
   math for f32 and f64 (which lets f32 run on TF32).
   The int8 configurations of cudnnConvolutionForward (cuDNN 8.2's table of them): dt i8 or u8
   with layout nhwc (INT8_CONFIG, UINT8_CONFIG: NHWC tensors and filter), i8x4 or i8x32 with
   layout nchw_vect_c (INT8x4_CONFIG, INT8x32_CONFIG); the filter int8 of x's vector width (u8
   data take an i8 filter), the compute type INT32, y of x's type or, with the optional ydt after
   math, FLOAT (ydt=f32: the _EXT configurations; INT8x4_EXT's y in NCHW) or, for u8 data, INT8
   (ydt=i8: UINT8_CONFIG as the 8.2 table has it). An INT8x32 filter is
   passed through cudnnReorderFilterAndBias (CUDNN_DEFAULT_REORDER) once in setup and the
   convolution descriptor set to CUDNN_NO_REORDER, as NVIDIA's conv_sample does: the
   convolution then reads the reordered copy as such (under the descriptor's default,
   CUDNN_DEFAULT_REORDER, it takes the filter in the plain layout, so that a reordered copy
   would be convolved as a permuted filter; docs/compatibility.md). The gradients have no int8
   configuration: their rows show the library's status.
   algo=auto takes the first algorithm that cudnnGetConvolution*Algorithm_v7 returns with
   CUDNN_STATUS_SUCCESS (the library's heuristic choice, no search); any other value
   names the algorithm to force (conv_algo_names), so that one algorithm is compared with the same
   algorithm of the other library. The workspace is what Get*WorkspaceSize asks for (its status,
   such as NOT_SUPPORTED, is the row's status when the algorithm does not apply); not in a dry run.
   flops = 2 N K P Q C R S per group (a multiply and an add for each filter tap of each output;
   each gradient does the same arithmetic); bytes = |x| + |filter| + |y| (each tensor read or
   written once: the fewest possible, far under what a convolution really moves). */
enum { CONV_FWD, CONV_BWD_DATA, CONV_BWD_FILTER };

/* The algorithm names of algo=, indexed by the cudnnConvolution*Algo_t value, one list a direction
   (NULL: a value with no algorithm). */
static const char *const conv_algo_names[3][8] = {
    [CONV_FWD] = {"implicit_gemm", "implicit_precomp_gemm", "gemm", "direct", "fft", "fft_tiling", "winograd",
                  "winograd_nonfused"},
    [CONV_BWD_DATA] = {"algo_0", "algo_1", "fft", "fft_tiling", "winograd", "winograd_nonfused"},
    [CONV_BWD_FILTER] = {"algo_0", "algo_1", "fft", "algo_3", "winograd", "winograd_nonfused", "fft_tiling"},
};

/* The names of math=, indexed by the cudnnMathType_t value. */
static const char *const conv_math_names[] = {
    [CUDNN_DEFAULT_MATH] = "default",
    [CUDNN_TENSOR_OP_MATH] = "tensor_op",
    [CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION] = "tensor_op_allow_conversion",
    [CUDNN_FMA_MATH] = "fma",
};

/* The forced algorithm of algo= for direction dir, -1 for auto, -2 for a name not in the list. */
static int conv_algo_of(const char *name, int dir)
{
    if (strcmp(name, "auto") == 0) return -1;
    for (int i = 0; i < 8; i++)
        if (conv_algo_names[dir][i] && strcmp(conv_algo_names[dir][i], name) == 0) return i;
    return -2;
}

const char *setup_conv(struct call *c, const struct problem *p, int dir)
{
    static char why_buf[128];
    const char *layout = problem_get(p, "layout");
    bool nhwc = strcmp(layout, "nhwc") == 0, vect_c = strcmp(layout, "nchw_vect_c") == 0;
    if (!nhwc && !vect_c && strcmp(layout, "nchw") != 0) return "layout must be nchw, nhwc or nchw_vect_c";
    static const char *const names[] = {"n", "c", "h", "w", "k", "r", "s", "pad", "stride", "dil"};
    int v[ARRAY_LEN(names)];
    for (size_t i = 0; i < ARRAY_LEN(names); i++) {
        double d = problem_number(p, names[i]);
        if (d != floor(d) || d < (i == 7 ? 0 : 1) || d > INT32_MAX) {
            snprintf(why_buf, sizeof why_buf, "%s must be a whole number >= %d", names[i], i == 7 ? 0 : 1);
            return why_buf;
        }
        v[i] = (int)d;
    }
    int n = v[0], ch = v[1], h = v[2], w = v[3], k = v[4], r = v[5], s = v[6], pad = v[7], stride = v[8], dil = v[9];
    int ph = h + 2 * pad - dil * (r - 1) - 1, qw = w + 2 * pad - dil * (s - 1) - 1;
    if (ph < 0 || qw < 0) return "the filter is larger than the padded input";
    int pp = ph / stride + 1, qq = qw / stride + 1;
    int forced = conv_algo_of(problem_get(p, "algo"), dir);
    if (forced == -2) return "algo must be auto or an algorithm of the direction (see conv_algo_names)";
    const bool int8 = dtype_is_int8(c->dt);
    bool half = c->dt->type == CUDNN_DATA_HALF || c->dt->type == CUDNN_DATA_BFLOAT16;
    const char *math_name = problem_get_or(p, "math", half || int8 ? "tensor_op" : "default");
    int math = -1;
    for (int i = 0; i < (int)ARRAY_LEN(conv_math_names); i++)
        if (strcmp(math_name, conv_math_names[i]) == 0) math = i;
    if (math < 0) return "math must be default, tensor_op, tensor_op_allow_conversion or fma";
    /* the filter's type: x's, but INT8 for UINT8 data; y's: x's, or ydt's */
    const struct dtype *wdt = c->dt->type == CUDNN_DATA_UINT8 ? dtype_of(CUDNN_DATA_INT8) : c->dt;
    const struct dtype *ydt = dtype_named(problem_get_or(p, "ydt", c->dt->name));
    if (ydt == NULL || (ydt != c->dt && !(int8 && ydt->type == CUDNN_DATA_FLOAT) && ydt != wdt))
        return "ydt is f32 (the int8 configurations' FLOAT output), i8 for u8 data, or dt itself";
    const char *lay = nhwc ? ":nhwc" : vect_c ? ":nchw_vect_c" : "";
    char spec[96];
    snprintf(spec, sizeof spec, "%dx%dx%dx%d%s", n, ch, h, w, lay);
    const char *why = add_tensor_spec(c, spec);
    snprintf(spec, sizeof spec, "%dx%dx%dx%d%s", k, ch, r, s, lay);
    if (!why) why = add_tensor_dt(c, spec, wdt);
    snprintf(spec, sizeof spec, "%dx%dx%dx%d%s", n, k, pp, qq, ydt->vect == 1 && vect_c ? "" : lay);
    if (!why) why = add_tensor_dt(c, spec, ydt);
    if (why) return why;
    c->out = dir == CONV_FWD ? 2 : dir == CONV_BWD_DATA ? 0 : 1;
    c->alpha = scaling_of(1);
    c->beta = scaling_of(0);
    c->bytes = tensor_bytes(c, 0) + tensor_bytes(c, 1) + tensor_bytes(c, 2);
    c->flops = 2.0 * n * k * pp * qq * (double)ch * r * s;

    cudnnStatus_t st = cudnnCreateFilterDescriptor(&c->filter_desc);
    if (st == CUDNN_STATUS_SUCCESS)
        st = cudnnSetFilter4dDescriptor(c->filter_desc, wdt->type, c->t[1].format, k, ch, r, s);
    if (st == CUDNN_STATUS_SUCCESS) st = cudnnCreateConvolutionDescriptor(&c->conv_desc);
    const cudnnDataType_t compute = int8 ? CUDNN_DATA_INT32
                                    : c->dt->type == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    if (st == CUDNN_STATUS_SUCCESS)
        st = cudnnSetConvolution2dDescriptor(c->conv_desc, pad, pad, stride, stride, dil, dil, CUDNN_CROSS_CORRELATION,
                                             compute);
    if (st == CUDNN_STATUS_SUCCESS)
        st = cudnnSetConvolutionMathType(c->conv_desc, (cudnnMathType_t)math);
    if (st != CUDNN_STATUS_SUCCESS) return cudnnGetErrorString(st);
    if (c->dry) return NULL;
    if (c->dt->type == CUDNN_DATA_INT8x32) {
        void *reordered = mem_alloc((size_t)c->t[1].count);
        st = cudnnReorderFilterAndBias(c->handle, c->filter_desc, CUDNN_DEFAULT_REORDER, c->t[1].data, reordered, 0,
                                       NULL, NULL);
        if (st == CUDNN_STATUS_SUCCESS) st = cudnnSetConvolutionReorderType(c->conv_desc, CUDNN_NO_REORDER);
        device_sync();
        mem_free(c->t[1].data);
        c->t[1].data = reordered;
        if (st != CUDNN_STATUS_SUCCESS) return cudnnGetErrorString(st);
    }

    cudnnTensorDescriptor_t x = c->t[0].desc, y = c->t[2].desc;
    cudnnFilterDescriptor_t f = c->filter_desc;
    enum { MAX_ALGOS = 16 };
    int max = 0, got = 0, found = forced;
    st = CUDNN_STATUS_SUCCESS;
    if (forced < 0 && dir == CONV_FWD) {
        cudnnConvolutionFwdAlgoPerf_t perf[MAX_ALGOS];
        st = cudnnGetConvolutionForwardAlgorithmMaxCount(c->handle, &max);
        if (st == CUDNN_STATUS_SUCCESS)
            st = cudnnGetConvolutionForwardAlgorithm_v7(c->handle, x, f, c->conv_desc, y,
                                                        max < MAX_ALGOS ? max : MAX_ALGOS, &got, perf);
        for (int i = 0; st == CUDNN_STATUS_SUCCESS && i < got && found < 0; i++)
            if (perf[i].status == CUDNN_STATUS_SUCCESS) found = (int)perf[i].algo;
    } else if (forced < 0 && dir == CONV_BWD_DATA) {
        cudnnConvolutionBwdDataAlgoPerf_t perf[MAX_ALGOS];
        st = cudnnGetConvolutionBackwardDataAlgorithmMaxCount(c->handle, &max);
        if (st == CUDNN_STATUS_SUCCESS)
            st = cudnnGetConvolutionBackwardDataAlgorithm_v7(c->handle, f, y, c->conv_desc, x,
                                                             max < MAX_ALGOS ? max : MAX_ALGOS, &got, perf);
        for (int i = 0; st == CUDNN_STATUS_SUCCESS && i < got && found < 0; i++)
            if (perf[i].status == CUDNN_STATUS_SUCCESS) found = (int)perf[i].algo;
    } else if (forced < 0) {
        cudnnConvolutionBwdFilterAlgoPerf_t perf[MAX_ALGOS];
        st = cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(c->handle, &max);
        if (st == CUDNN_STATUS_SUCCESS)
            st = cudnnGetConvolutionBackwardFilterAlgorithm_v7(c->handle, x, y, c->conv_desc, f,
                                                               max < MAX_ALGOS ? max : MAX_ALGOS, &got, perf);
        for (int i = 0; st == CUDNN_STATUS_SUCCESS && i < got && found < 0; i++)
            if (perf[i].status == CUDNN_STATUS_SUCCESS) found = (int)perf[i].algo;
    }
    if (st == CUDNN_STATUS_SUCCESS && found >= 0) {
        if (dir == CONV_FWD)
            st = cudnnGetConvolutionForwardWorkspaceSize(c->handle, x, f, c->conv_desc, y,
                                                         (cudnnConvolutionFwdAlgo_t)found, &c->workspace_bytes);
        else if (dir == CONV_BWD_DATA)
            st = cudnnGetConvolutionBackwardDataWorkspaceSize(c->handle, f, y, c->conv_desc, x,
                                                              (cudnnConvolutionBwdDataAlgo_t)found,
                                                              &c->workspace_bytes);
        else
            st = cudnnGetConvolutionBackwardFilterWorkspaceSize(c->handle, x, y, c->conv_desc, f,
                                                                (cudnnConvolutionBwdFilterAlgo_t)found,
                                                                &c->workspace_bytes);
    }
    if (st != CUDNN_STATUS_SUCCESS) return cudnnGetErrorString(st);
    if (found < 0) return "no algorithm with status CUDNN_STATUS_SUCCESS";
    c->algo = found;
    if (c->workspace_bytes > 0) c->workspace = mem_alloc(c->workspace_bytes);
    return NULL;
}

static const char *setup_convfwd(struct call *c, const struct problem *p)
{
    return setup_conv(c, p, CONV_FWD);
}

static const char *setup_convbwdd(struct call *c, const struct problem *p)
{
    return setup_conv(c, p, CONV_BWD_DATA);
}

static const char *setup_convbwdf(struct call *c, const struct problem *p)
{
    return setup_conv(c, p, CONV_BWD_FILTER);
}

static cudnnStatus_t run_convfwd(struct call *c)
{
    return cudnnConvolutionForward(c->handle, scaling_ptr(c, &c->alpha), c->t[0].desc, c->t[0].data, c->filter_desc,
                                   c->t[1].data, c->conv_desc, (cudnnConvolutionFwdAlgo_t)c->algo, c->workspace,
                                   c->workspace_bytes, scaling_ptr(c, &c->beta), c->t[2].desc, c->t[2].data);
}

static cudnnStatus_t run_convbwdd(struct call *c)
{
    return cudnnConvolutionBackwardData(c->handle, scaling_ptr(c, &c->alpha), c->filter_desc, c->t[1].data,
                                        c->t[2].desc, c->t[2].data, c->conv_desc,
                                        (cudnnConvolutionBwdDataAlgo_t)c->algo, c->workspace, c->workspace_bytes,
                                        scaling_ptr(c, &c->beta), c->t[0].desc, c->t[0].data);
}

static cudnnStatus_t run_convbwdf(struct call *c)
{
    return cudnnConvolutionBackwardFilter(c->handle, scaling_ptr(c, &c->alpha), c->t[0].desc, c->t[0].data,
                                          c->t[2].desc, c->t[2].data, c->conv_desc,
                                          (cudnnConvolutionBwdFilterAlgo_t)c->algo, c->workspace,
                                          c->workspace_bytes, scaling_ptr(c, &c->beta), c->filter_desc,
                                          c->t[1].data);
}

static const struct op ops[] = {
#define CONV_KEYS "dt layout n c h w k r s pad stride dil algo [math ydt]"
    {"convfwd", CONV_KEYS, setup_convfwd, run_convfwd},
    {"convbwdd", CONV_KEYS, setup_convbwdd, run_convbwdd},
    {"convbwdf", CONV_KEYS, setup_convbwdf, run_convbwdf},
#undef CONV_KEYS
};

const struct op_family ops_conv = {ops, ARRAY_LEN(ops)};
