/* fused_pointwise.cu: the CUDA pointwise-chain kernels of src/cuda/fused_pointwise.cu, their
   per-thread code (pw_chain_lanes, pw_fast_groups, written __host__ __device__ for this) run on
   the CPU for every thread of a small grid, against the tests' double reference of the pointwise
   modes (ref/pointwise.c): so that the kernels' logic is checked where no GPU is.

   Chains are built as the graph API builds them (ocd_pw_chain_build over views): ConvBiasAct's
   tail (add a tensor with alpha2 0.5, add a per-channel bias, ReLU) in float NCHW; a backward
   mode and a forward mode in a row (RELU_BWD then GELU_FWD) in half NHWC, storing both steps;
   MatmulBiasAct's tail (a bias per column, GELU) written over its input, as the graph runs it;
   every unary forward mode, and every binary and backward mode over two inputs, one chain each,
   in float, double, half and bfloat16 (the half ones at the default parameters); ScaleBiasAddAct
   with a scalar and a stored intermediate in half, bfloat16 and float, NHWC and NCHW, each way
   the fast form reads a per-channel operand, with partial last groups, mixed types and written
   over an input. Each chain runs in the two forms of the kernel (the general one, and the fast
   form, which must take every chain marked for it and is reported as declining the others), the
   outputs poisoned before each; and the fast form's planner must decline the chains it cannot
   run. A result must be within a few roundings of its type (and of float arithmetic) of the
   reference. Prints a line per case; exits 1 if any differs. */
#include "cuda/fused_pointwise.cu"

#include "../ref/pointwise.c"

#include <cmath>
#include <cstdio>
#include <vector>

namespace {

uint32_t emu_seed = 4242;
double emu_random(double lo, double hi)
{
    emu_seed = emu_seed * 1664525u + 1013904223u;
    return lo + (hi - lo) * (double)(emu_seed >> 8) / (double)(1u << 24);
}

/* A packed 4-D tensor (NCHW or NHWC) of scalars of dtype, held as bytes, read as doubles. */
struct emu_tensor {
    struct ocd_tensor_view v;
    std::vector<unsigned char> bytes;
    size_t esize;

    emu_tensor(cudnnDataType_t dtype, const int dims[4], cudnnTensorFormat_t format)
    {
        int strides[4];
        ocd_packed_strides(format, 4, dims, 1, strides);
        memset(&v, 0, sizeof v);
        v.dtype = dtype, v.rank = 4, v.vect = 1;
        int64_t n = 1;
        for (int d = 0; d < 4; d++) v.dims[d] = dims[d], v.strides[d] = strides[d], n *= dims[d];
        esize = dtype == CUDNN_DATA_HALF || dtype == CUDNN_DATA_BFLOAT16 ? 2 : dtype == CUDNN_DATA_DOUBLE ? 8 : 4;
        bytes.assign((size_t)n * esize, 0xFF);
    }
    int64_t offset(const int64_t i[4]) const
    {
        int64_t o = 0;
        for (int d = 0; d < 4; d++) o += (v.dims[d] == 1 ? 0 : i[d]) * v.strides[d];
        return o;
    }
    double get(const int64_t i[4]) const { return ocd_cuda_load_as<double>(v.dtype, bytes.data(), offset(i)); }
    void set(const int64_t i[4], double x) { ocd_cuda_store_as(v.dtype, bytes.data(), offset(i), x); }
    void randomize(double lo, double hi)
    {
        const int64_t *d = v.dims;
        for (int64_t a = 0; a < d[0]; a++)
            for (int64_t b = 0; b < d[1]; b++)
                for (int64_t c = 0; c < d[2]; c++)
                    for (int64_t e = 0; e < d[3]; e++) {
                        int64_t i[4] = {a, b, c, e};
                        set(i, emu_random(lo, hi));
                    }
    }
};

double tolerance(cudnnDataType_t t, bool dbl, double m)
{
    const double u = t == CUDNN_DATA_HALF       ? 1.0 / 1024
                     : t == CUDNN_DATA_BFLOAT16 ? 1.0 / 128
                     : dbl && t == CUDNN_DATA_DOUBLE ? 1e-15
                                                 : 1.0 / 8388608;
    return 8 * u * fmax(fabs(m), 1.0);
}

int failures = 0;

enum emu_form { EMU_GENERAL, EMU_FAST };
const char *const form_names[] = {"general", "fast"};

/* The chain of d over the tensors' bytes. */
struct ocd_pw_chain chain_of(struct ocd_pw_chain_desc &d, std::vector<emu_tensor *> &ins,
                             std::vector<emu_tensor *> &outs)
{
    struct ocd_pw_chain c;
    ocd_pw_chain_build(&c, &d);
    for (size_t k = 0; k < ins.size(); k++) c.in[k].data = ins[k]->bytes.data();
    for (size_t k = 0; k < outs.size(); k++) c.out[k].data = outs[k]->bytes.data();
    return c;
}

/* The kernels' grids for a block of 8 threads, two blocks striding: every thread of every block,
   so that each element is reached through the kernel's own index arithmetic. */
const uint32_t emu_threads = 8, emu_blocks = 2;

/* Runs every element of the chain in one form of the kernel (pw_chain_lanes, or pw_fast_groups
   over pw_fast_plan's launch: false when that declines the chain). */
bool run_form(emu_form form, const struct ocd_pw_chain &c)
{
    const uint32_t threads = emu_threads, blocks = emu_blocks;
    if (form == EMU_FAST) { /* pw_fast_kernel's loop, then its tail */
        pw_fast_launch f;
        if (!pw_fast_plan(&c, &f)) return false;
        const uint32_t span = PW_FAST_U * threads;
        for (uint32_t b = 0; b < blocks; b++)
            for (uint32_t base = b * span; base < f.groups; base += blocks * span)
                for (uint32_t t = 0; t < threads; t++) pw_fast_groups<false>(f, base + t, threads);
        if (f.groups * PW_FAST_G < f.count) pw_fast_groups<true>(f, f.groups, 0);
        return true;
    }
    const pw_chain_launch l = pw_chain_launch_of(&c);
    const uint32_t span = PW_ELEMS * threads;
    for (uint32_t b = 0; b < blocks; b++)
        for (uint32_t base = b * span; base < (uint32_t)c.count; base += blocks * span)
            for (uint32_t t = 0; t < threads; t++) {
                if (c.double_compute) pw_chain_lanes<double>(l, base + t, threads);
                else pw_chain_lanes<float>(l, base + t, threads);
            }
    return true;
}

/* Runs the chain in one form and compares output k (tensor outs[k]) with want(k, index); a
   chain the fast form declines fails when fast_expected, else is reported as not taken. */
template <typename F>
void check_form(const char *name, emu_form form, struct ocd_pw_chain_desc &d, std::vector<emu_tensor *> ins,
                std::vector<emu_tensor *> outs, F want, bool fast_expected)
{
    const struct ocd_pw_chain c = chain_of(d, ins, outs);
    if (!run_form(form, c)) {
        printf("%-48s %-8s %s\n", name, form_names[form], fast_expected ? "FAILED (declined)" : "declined");
        if (fast_expected) failures++;
        return;
    }
    double worst = 0;
    bool ok = true;
    const int64_t *dm = d.shape.dims;
    for (size_t k = 0; k < outs.size(); k++)
        for (int64_t a = 0; a < dm[0]; a++)
            for (int64_t b = 0; b < dm[1]; b++)
                for (int64_t e = 0; e < dm[2]; e++)
                    for (int64_t f = 0; f < dm[3]; f++) {
                        int64_t i[4] = {a, b, e, f};
                        double w = want((int)k, i), g = outs[k]->get(i), err = fabs(g - w);
                        worst = fmax(worst, err);
                        if (!(err <= tolerance(outs[k]->v.dtype, c.double_compute, w))) ok = false;
                    }
    printf("%-48s %-8s %s (largest error %.3g)\n", name, form_names[form], ok ? "ok" : "FAILED", worst);
    if (!ok) failures++;
}

/* check_form in every form, the outputs poisoned and the inputs restored between them (a chain
   may write over one). */
template <typename F>
void check(const char *name, struct ocd_pw_chain_desc &d, std::vector<emu_tensor *> ins, std::vector<emu_tensor *> outs,
           F want, bool fast_expected = false)
{
    std::vector<std::vector<unsigned char>> saved;
    for (emu_tensor *t : ins) saved.push_back(t->bytes);
    for (int form = EMU_GENERAL; form <= EMU_FAST; form++) {
        for (emu_tensor *t : outs) std::fill(t->bytes.begin(), t->bytes.end(), (unsigned char)0xFF);
        for (size_t k = 0; k < ins.size(); k++) ins[k]->bytes = saved[k]; /* after: an output may be an input */
        check_form(name, (emu_form)form, d, ins, outs, want, fast_expected);
    }
}

void step(struct ocd_pw_chain_desc &d, int s, const struct ref_pw &p, int x, int b)
{
    ocd_pw_step_defaults(&d.steps[s], p.mode, x, b);
    struct ocd_pw_step &st = d.steps[s];
    st.alpha1 = p.alpha1, st.alpha2 = p.alpha2, st.propagate_nan = p.propagate_nan;
    st.lower_clip = p.lower_clip, st.upper_clip = p.upper_clip, st.clip_slope = p.slope;
    st.elu_alpha = p.elu_alpha, st.softplus_beta = p.softplus_beta, st.swish_beta = p.swish_beta;
}

/* conv result y, z, bias: relu(y + 0.5 z + bias[c]) */
void conv_bias_act()
{
    const int dims[4] = {2, 5, 3, 7}, bdims[4] = {1, 5, 1, 1};
    emu_tensor y(CUDNN_DATA_FLOAT, dims, CUDNN_TENSOR_NCHW), z(CUDNN_DATA_FLOAT, dims, CUDNN_TENSOR_NCHW),
        bias(CUDNN_DATA_FLOAT, bdims, CUDNN_TENSOR_NCHW), out(CUDNN_DATA_FLOAT, dims, CUDNN_TENSOR_NCHW);
    y.randomize(-2, 2), z.randomize(-2, 2), bias.randomize(-1, 1);
    struct ocd_pw_chain_desc d;
    memset(&d, 0, sizeof d);
    d.shape = out.v;
    d.ninputs = 3, d.nsteps = 3, d.noutputs = 1;
    d.in[0] = y.v, d.in[1] = z.v, d.in[2] = bias.v, d.out[0] = out.v, d.out_slot[0] = 5;
    struct ref_pw add = ref_pw_mode(CUDNN_POINTWISE_ADD), half = add, relu = ref_pw_mode(CUDNN_POINTWISE_RELU_FWD);
    half.alpha2 = 0.5;
    step(d, 0, half, 0, 1);
    step(d, 1, add, 3, 2);
    step(d, 2, relu, 4, -1);
    check("ConvBiasAct tail, float NCHW", d, {&y, &z, &bias}, {&out}, [&](int, const int64_t *i) {
        int64_t c[4] = {0, i[1], 0, 0};
        return fmax(0.0, y.get(i) + 0.5 * z.get(i) + bias.get(c));
    }, true);
}

/* g = RELU_BWD(x, dy); out = GELU(g): both stored, half NHWC */
void drelu_gelu()
{
    const int dims[4] = {3, 8, 2, 5};
    emu_tensor x(CUDNN_DATA_HALF, dims, CUDNN_TENSOR_NHWC), dy(CUDNN_DATA_HALF, dims, CUDNN_TENSOR_NHWC),
        g(CUDNN_DATA_HALF, dims, CUDNN_TENSOR_NHWC), out(CUDNN_DATA_HALF, dims, CUDNN_TENSOR_NHWC);
    x.randomize(-2, 2), dy.randomize(-2, 2);
    struct ocd_pw_chain_desc d;
    memset(&d, 0, sizeof d);
    d.shape = out.v;
    d.ninputs = 2, d.nsteps = 2, d.noutputs = 2;
    d.in[0] = x.v, d.in[1] = dy.v, d.out[0] = g.v, d.out[1] = out.v, d.out_slot[0] = 2, d.out_slot[1] = 3;
    struct ref_pw drelu = ref_pw_mode(CUDNN_POINTWISE_RELU_BWD), gelu = ref_pw_mode(CUDNN_POINTWISE_GELU_FWD);
    drelu.lower_clip = -0.5, drelu.slope = 0.2, drelu.upper_clip = 1.5;
    step(d, 0, drelu, 0, 1);
    step(d, 1, gelu, 2, -1);
    check("RELU_BWD -> GELU_FWD, half NHWC, two outputs", d, {&x, &dy}, {&g, &out}, [&](int k, const int64_t *i) {
        double r = ref_pw(&drelu, x.get(i), dy.get(i));
        return k == 0 ? r : ref_pw(&gelu, r, 0);
    }, true);
}

/* MatmulBiasAct's tail in place: out = GELU(y + bias[column]) written over y, half, a row count
   that leaves the last block partly empty */
void matmul_bias_gelu_in_place()
{
    const int dims[4] = {1, 1, 37, 24}, bdims[4] = {1, 1, 1, 24};
    emu_tensor y(CUDNN_DATA_HALF, dims, CUDNN_TENSOR_NCHW), bias(CUDNN_DATA_HALF, bdims, CUDNN_TENSOR_NCHW);
    y.randomize(-3, 3), bias.randomize(-1, 1);
    const emu_tensor y0 = y;
    struct ocd_pw_chain_desc d;
    memset(&d, 0, sizeof d);
    d.shape = y.v;
    d.ninputs = 2, d.nsteps = 2, d.noutputs = 1;
    d.in[0] = y.v, d.in[1] = bias.v, d.out[0] = y.v, d.out_slot[0] = 3;
    struct ref_pw add = ref_pw_mode(CUDNN_POINTWISE_ADD), gelu = ref_pw_mode(CUDNN_POINTWISE_GELU_FWD);
    step(d, 0, add, 0, 1);
    step(d, 1, gelu, 2, -1);
    check("MatmulBiasAct tail in place, half", d, {&y, &bias}, {&y}, [&](int, const int64_t *i) {
        int64_t c[4] = {0, 0, 0, i[3]};
        return ref_pw(&gelu, y0.get(i) + bias.get(c), 0);
    }, true);
}

/* The types of the mode cases: float, double, and the 16-bit ones (the fast form's loads). */
const cudnnDataType_t mode_types[] = {CUDNN_DATA_FLOAT, CUDNN_DATA_DOUBLE, CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16};

const char *type_name(cudnnDataType_t t)
{
    return t == CUDNN_DATA_FLOAT    ? "float"
           : t == CUDNN_DATA_DOUBLE ? "double"
           : t == CUDNN_DATA_HALF   ? "half"
                                    : "bfloat16";
}

/* every unary forward mode with its parameters away from the defaults (at them in half), in
   each of mode_types (double computed in double) */
void unary_modes()
{
    const cudnnPointwiseMode_t modes[] = {CUDNN_POINTWISE_SQRT, CUDNN_POINTWISE_RELU_FWD, CUDNN_POINTWISE_TANH_FWD,
                                          CUDNN_POINTWISE_SIGMOID_FWD, CUDNN_POINTWISE_ELU_FWD, CUDNN_POINTWISE_GELU_FWD,
                                          CUDNN_POINTWISE_SOFTPLUS_FWD, CUDNN_POINTWISE_SWISH_FWD};
    const int dims[4] = {1, 3, 4, 9};
    for (cudnnDataType_t t : mode_types)
        for (cudnnPointwiseMode_t m : modes) {
            const bool dbl = t == CUDNN_DATA_DOUBLE;
            emu_tensor x(t, dims, CUDNN_TENSOR_NCHW), out(t, dims, CUDNN_TENSOR_NCHW);
            x.randomize(m == CUDNN_POINTWISE_SQRT ? 0 : -3, 3);
            struct ref_pw p = ref_pw_mode(m);
            if (t != CUDNN_DATA_HALF) { /* half keeps the defaults: the fast form's plain steps */
                p.alpha1 = 0.75, p.lower_clip = -0.5, p.upper_clip = 1.25, p.slope = 0.1;
                p.elu_alpha = 0.7, p.softplus_beta = 1.5, p.swish_beta = 0.8;
            }
            struct ocd_pw_chain_desc d;
            memset(&d, 0, sizeof d);
            d.shape = out.v;
            d.ninputs = 1, d.nsteps = 1, d.noutputs = 1;
            d.in[0] = x.v, d.out[0] = out.v, d.out_slot[0] = 1;
            d.double_compute = dbl;
            step(d, 0, p, 0, -1);
            char name[64];
            snprintf(name, sizeof name, "mode %d, %s", (int)m, type_name(t));
            check(name, d, {&x}, {&out}, [&](int, const int64_t *i) { return ref_pw(&p, x.get(i), 0); }, !dbl);
        }
}

/* every binary and backward mode (b the second input, dy for the backward ones) with its
   parameters away from the defaults (at them in half), in each of mode_types (double computed
   in double); b NHWC where x and the output are NCHW for float and double (beyond the fast
   form), NCHW too for the 16-bit types and for float once more (the fast form) */
void binary_modes()
{
    const cudnnPointwiseMode_t modes[] = {CUDNN_POINTWISE_ADD, CUDNN_POINTWISE_MUL, CUDNN_POINTWISE_MIN,
                                          CUDNN_POINTWISE_MAX, CUDNN_POINTWISE_RELU_BWD, CUDNN_POINTWISE_TANH_BWD,
                                          CUDNN_POINTWISE_SIGMOID_BWD, CUDNN_POINTWISE_ELU_BWD, CUDNN_POINTWISE_GELU_BWD,
                                          CUDNN_POINTWISE_SOFTPLUS_BWD, CUDNN_POINTWISE_SWISH_BWD};
    const int dims[4] = {2, 3, 5, 7};
    for (int k = 0; k < 5; k++)
        for (cudnnPointwiseMode_t m : modes) {
            const cudnnDataType_t t = k < 4 ? mode_types[k] : CUDNN_DATA_FLOAT;
            const bool dbl = t == CUDNN_DATA_DOUBLE, bnhwc = k < 2;
            emu_tensor x(t, dims, CUDNN_TENSOR_NCHW), b(t, dims, bnhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW),
                out(t, dims, CUDNN_TENSOR_NCHW);
            x.randomize(-3, 3), b.randomize(-2, 2);
            struct ref_pw p = ref_pw_mode(m);
            if (t != CUDNN_DATA_HALF) { /* half keeps the defaults: the fast form's plain steps */
                p.alpha1 = 0.75, p.alpha2 = -1.5, p.lower_clip = -0.5, p.upper_clip = 1.25, p.slope = 0.1;
                p.elu_alpha = 0.7, p.softplus_beta = 1.5, p.swish_beta = 0.8;
            }
            struct ocd_pw_chain_desc d;
            memset(&d, 0, sizeof d);
            d.shape = out.v;
            d.ninputs = 2, d.nsteps = 1, d.noutputs = 1;
            d.in[0] = x.v, d.in[1] = b.v, d.out[0] = out.v, d.out_slot[0] = 2;
            d.double_compute = dbl;
            step(d, 0, p, 0, 1);
            char name[64];
            snprintf(name, sizeof name, "mode %d of x and b (%s), %s", (int)m, bnhwc ? "NHWC" : "NCHW", type_name(t));
            check(name, d, {&x, &b}, {&out}, [&](int, const int64_t *i) { return ref_pw(&p, x.get(i), b.get(i)); },
                  !dbl && !bnhwc);
        }
}

/* The ScaleBiasAddAct chain with a scalar and a stored intermediate: out = relu(s * (x * scale[c]
   + bias[c] + z)) with clips, mid = x * scale[c] + bias[c]; in each 16-bit type and float, NHWC
   and NCHW, channels that make the per-channel operands vectors (NHWC, 16 channels), one value a
   group (NCHW, 16 pixels) or element by element with a count that leaves a partial group (6 or 3
   channels, 35 or 15 pixels); z float in the half chains of those (types mixed). With in_place,
   out is written over z (read before the step that stores out). */
void scale_bias_add_act(bool in_place)
{
    const int shapes[4][4] = {{3, 16, 3, 5}, {1, 6, 5, 7}, {3, 4, 2, 8}, {2, 3, 3, 5}};
    const cudnnDataType_t types[] = {CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT};
    for (cudnnDataType_t t : types)
        for (int k = 0; k < 4; k++) {
            const int *dims = shapes[k], cdims[4] = {1, dims[1], 1, 1}, one[4] = {1, 1, 1, 1};
            const cudnnTensorFormat_t f = k < 2 ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
            const cudnnDataType_t zt = t == CUDNN_DATA_HALF && k % 2 ? CUDNN_DATA_FLOAT : t;
            emu_tensor x(t, dims, f), scale(t, cdims, f), bias(t, cdims, f), z(zt, dims, f), sc(t, one, f),
                mid(t, dims, f), own(in_place ? zt : t, dims, f);
            emu_tensor &out = in_place ? z : own;
            x.randomize(-2, 2), scale.randomize(0.5, 1.5), bias.randomize(-1, 1), z.randomize(-2, 2);
            sc.randomize(0.5, 2);
            const emu_tensor z0 = z;
            struct ocd_pw_chain_desc d;
            memset(&d, 0, sizeof d);
            d.shape = x.v;
            d.ninputs = 5, d.nsteps = 5, d.noutputs = 2;
            d.in[0] = x.v, d.in[1] = scale.v, d.in[2] = bias.v, d.in[3] = z.v, d.in[4] = sc.v;
            d.out[0] = out.v, d.out[1] = mid.v, d.out_slot[0] = 9, d.out_slot[1] = 6;
            struct ref_pw mul = ref_pw_mode(CUDNN_POINTWISE_MUL), add = ref_pw_mode(CUDNN_POINTWISE_ADD),
                          relu = ref_pw_mode(CUDNN_POINTWISE_RELU_FWD);
            relu.lower_clip = -0.25, relu.slope = 0.1, relu.upper_clip = 2.5;
            step(d, 0, mul, 0, 1);
            step(d, 1, add, 5, 2);
            step(d, 2, add, 6, 3);
            step(d, 3, mul, 4, 7); /* the running value as b */
            step(d, 4, relu, 8, -1);
            char name[64];
            snprintf(name, sizeof name, "ScaleBiasAddAct %s %s %dx%dx%dx%d%s%s", type_name(t),
                     f == CUDNN_TENSOR_NHWC ? "NHWC" : "NCHW", dims[0], dims[1], dims[2], dims[3],
                     zt != t ? ", z float" : "", in_place ? ", in place" : "");
            check(name, d, {&x, &scale, &bias, &z, &sc}, {&out, &mid}, [&](int o, const int64_t *i) {
                const int64_t c[4] = {0, i[1], 0, 0}, s0[4] = {0, 0, 0, 0};
                const double m = x.get(i) * scale.get(c) + bias.get(c);
                return o == 1 ? m : ref_pw(&relu, sc.get(s0) * (m + z0.get(i)), 0);
            }, true);
        }
}

/* The chains the fast form declines (the others run them: checked above): a step reading an
   older step's value, an output over an input that a later step reads, double data. */
void fast_declines()
{
    const int dims[4] = {2, 3, 4, 5};
    emu_tensor x(CUDNN_DATA_FLOAT, dims, CUDNN_TENSOR_NCHW), y(CUDNN_DATA_FLOAT, dims, CUDNN_TENSOR_NCHW),
        xd(CUDNN_DATA_DOUBLE, dims, CUDNN_TENSOR_NCHW);
    struct ref_pw add = ref_pw_mode(CUDNN_POINTWISE_ADD), relu = ref_pw_mode(CUDNN_POINTWISE_RELU_FWD);
    struct ocd_pw_chain_desc d;
    memset(&d, 0, sizeof d);
    d.shape = x.v;
    d.ninputs = 2, d.nsteps = 3, d.noutputs = 1;
    d.in[0] = x.v, d.in[1] = y.v, d.out[0] = y.v, d.out_slot[0] = 4;
    step(d, 0, relu, 0, -1);
    step(d, 1, add, 2, 1);
    step(d, 2, add, 3, 2); /* step 0's value: not linear */
    struct ocd_pw_chain c;
    pw_fast_launch f;
    std::vector<emu_tensor *> ins = {&x, &y}, outs = {&y};
    c = chain_of(d, ins, outs);
    bool ok = !pw_fast_plan(&c, &f);
    step(d, 2, add, 3, 0); /* linear; y written by step 1, read by step 1 */
    d.out_slot[0] = 3;
    c = chain_of(d, ins, outs);
    ok = ok && pw_fast_plan(&c, &f);
    step(d, 1, add, 2, 0); /* y written by step 1, read by step 2 */
    step(d, 2, add, 3, 1);
    c = chain_of(d, ins, outs);
    ok = ok && !pw_fast_plan(&c, &f);
    d.in[0] = xd.v;
    ins[0] = &xd;
    d.out_slot[0] = 4;
    c = chain_of(d, ins, outs);
    ok = ok && !pw_fast_plan(&c, &f);
    printf("%-48s %-8s %s\n", "declined chains", "fast", ok ? "ok" : "FAILED");
    if (!ok) failures++;
}

} // namespace

int main()
{
    conv_bias_act();
    drelu_gelu();
    matmul_bias_gelu_in_place();
    unary_modes();
    binary_modes();
    scale_bias_add_act(false);
    scale_bias_add_act(true);
    fast_declines();
    return failures ? 1 : 0;
}
