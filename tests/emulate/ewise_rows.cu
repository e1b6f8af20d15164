/* ewise_rows.cu: the vectorized elementwise kernel of src/cuda/tensor_ops.cu (ewise_rows), its
   per-thread code (rows_thread, written __host__ __device__ for this) run on the CPU for every
   thread of a launch, against a double-precision reference: so that the kernel's logic is checked
   on machines without a GPU, CI's included, and a rewrite can be verified before it meets one.

   Problems are built as the API builds them (ocd_ewise_build over tensor views: the dims sorted
   and merged) and launched as ocd_cuda_ewise_vec_run launches them (rows_args_of, the packs a
   thread of launch_rows), on a grid of a few blocks so that the grid-stride loop turns. Cases:
   each of the launch's forms (rows_form: the case says which it must take), with and without a
   blend: the scale in place (cudnnScaleTensor), per-channel bias adds in NCHW (a value per row)
   and NHWC (a row of values), binary ops of two full tensors, of a per-channel bias and of a
   plane an image, rows shorter than a block's segment (decoded pack by pack) and longer (decoded
   once), a single row whose length is not a whole number of packs (its tail), in float and half,
   and the conversions between them (y of one type, the inputs of the other); and reversed views
   (negative strides, every operand reversed alike, which the normalization turns into a forward
   packed problem: the pointers it moves must land each thread on its elements), while an input
   reversed where y is not must be declined (its row offsets would be negative).
   y is poisoned (NaN) where it is not blended. The reference computes in double from the inputs
   as stored; a result must be within one rounding of the type (and of the float arithmetic) of
   it. Prints a line per case; exits 1 if any differs. */
#include "cuda/tensor_ops.cu"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

/* A packed 4-D tensor of T: its view (NCHW or NHWC strides, the dims of `reverse` (a bit per
   dim) walked backwards) and values; element (0,0,0,0) is `origin` into data. */
template <typename T> struct emu_tensor {
    struct ocd_tensor_view v;
    std::vector<T> data;
    int64_t origin = 0;

    emu_tensor(cudnnDataType_t dtype, const int dims[4], cudnnTensorFormat_t format, unsigned reverse = 0)
    {
        int strides[4];
        ocd_packed_strides(format, 4, dims, 1, strides);
        memset(&v, 0, sizeof v);
        v.dtype = dtype;
        v.rank = 4;
        v.vect = 1;
        int64_t n = 1;
        for (int d = 0; d < 4; d++) {
            v.dims[d] = dims[d];
            v.strides[d] = strides[d];
            n *= dims[d];
            if ((reverse >> d & 1) && dims[d] > 1) {
                origin += (int64_t)(dims[d] - 1) * strides[d];
                v.strides[d] = -strides[d];
            }
        }
        data.resize((size_t)n);
    }
    /* What the API is given: the address of element (0,0,0,0). */
    T *first() { return data.data() + origin; }
    /* Logical element (i0, i1, i2, i3), a broadcast dim (of extent 1) taking index 0. */
    T &at(const int64_t i[4])
    {
        int64_t o = 0;
        for (int d = 0; d < 4; d++) o += (v.dims[d] == 1 ? 0 : i[d]) * v.strides[d];
        return data[(size_t)(origin + o)];
    }
};

uint32_t emu_seed = 12345;
double emu_random(double lo, double hi)
{
    emu_seed = emu_seed * 1664525u + 1013904223u;
    return lo + (hi - lo) * (double)(emu_seed >> 8) / (double)(1u << 24);
}

double emu_value(float v) { return v; }
double emu_value(__half v) { return (double)__half2float(v); }
template <typename T> T emu_store(double v);
template <> float emu_store<float>(double v) { return (float)v; }
template <> __half emu_store<__half>(double v) { return __float2half_rn((float)v); }

/* One rounding of T (and of float arithmetic) at magnitude m. */
template <typename T> double emu_tolerance(double m)
{
    const double ulp = sizeof(T) == 2 ? 1.0 / 1024 : 1.0 / 8388608;
    return 2 * ulp * fmax(fabs(m), 1e-3);
}

/* The launch of launch_rows<Ty, Ta, N, OP>: the kernel rows_kernel_for chooses, every thread of
   `blocks` blocks of THREADS. */
template <typename Ty, typename Ta, int OP> void emu_launch(const struct ocd_ewise *e, unsigned blocks)
{
    const int N = 16 / (sizeof(Ty) > sizeof(Ta) ? sizeof(Ty) : sizeof(Ta));
    typedef typename ocd_compute_pair<Ty, Ta>::type C;
    const rows_args g = rows_args_of(e, N);
    const ocd_cuda_scales<C> s = ocd_cuda_scales_of<C>(e);
    Ty *y = (Ty *)e->y.data;
    const Ta *a = (const Ta *)e->a.data, *b = (const Ta *)e->b.data;
    rows_kernel_for<Ty, Ta, N, OP>(e, [&](auto unroll, auto form, auto blend) {
        for (unsigned block = 0; block < blocks; block++)
            for (uint32_t t = 0; t < THREADS; t++)
                rows_thread<Ty, Ta, N, OP, decltype(unroll)::value, decltype(form)::value, decltype(blend)::value>(
                    g, s, y, a, b, block, blocks, THREADS, t);
    });
}

/* y = alpha1 a (+ alpha2 b for ADD) + beta y over y's dims (a, b broadcast where their dims are
   1): a is y itself when in_place (the scale). form: the rows_form the launch must take; every
   operand's dims of `reverse` walked backwards. Returns whether every element is right. */
template <typename Ty, typename Ta, int OP>
bool emu_case(const char *name, cudnnDataType_t ytype, cudnnDataType_t atype, const int ydims[4], const int adims[4],
              const int bdims[4], cudnnTensorFormat_t format, bool in_place, double alpha1, double alpha2, double beta,
              int form, unsigned reverse = 0)
{
    emu_tensor<Ty> y(ytype, ydims, format, reverse);
    emu_tensor<Ta> a(atype, adims, format, reverse), b(atype, bdims, format, reverse);
    for (Ta &v : a.data) v = emu_store<Ta>(emu_random(-2, 2));
    for (Ta &v : b.data) v = emu_store<Ta>(emu_random(-2, 2));
    for (Ty &v : y.data) v = emu_store<Ty>(beta != 0 || in_place ? emu_random(-2, 2) : NAN);
    const std::vector<Ty> y0 = y.data;
    struct ocd_ewise e;
    ocd_ewise_build(&e, (enum ocd_ewise_op)OP, &y.v, in_place ? &y.v : &a.v, OP == OCD_EWISE_ADD ? &b.v : NULL);
    ocd_ewise_bind(&e, y.first(), in_place ? (const void *)y.first() : (const void *)a.first(), b.first());
    e.alpha1 = alpha1;
    e.alpha2 = alpha2;
    e.beta = beta;
    const char *why = ocd_cuda_ewise_vec_applies(NULL, &e);
    if (why) {
        printf("%-58s FAIL (the kernel does not take it: %s)\n", name, why);
        return false;
    }
    if (rows_form_of(&e) != form) {
        printf("%-58s FAIL (form %d, not %d)\n", name, rows_form_of(&e), form);
        return false;
    }
    emu_launch<Ty, Ta, OP>(&e, 3);

    emu_tensor<Ty> before(ytype, ydims, format, reverse);
    before.data = y0;
    int64_t bad = 0, n = 0, i[4];
    for (i[0] = 0; i[0] < ydims[0]; i[0]++)
        for (i[1] = 0; i[1] < ydims[1]; i[1]++)
            for (i[2] = 0; i[2] < ydims[2]; i[2]++)
                for (i[3] = 0; i[3] < ydims[3]; i[3]++, n++) {
                    double old = emu_value(before.at(i));
                    double want = alpha1 * (in_place ? old : emu_value(a.at(i)));
                    if (OP == OCD_EWISE_ADD) want += alpha2 * emu_value(b.at(i));
                    if (beta != 0) want += beta * old;
                    double got = emu_value(y.at(i));
                    if (!(fabs(got - want) <= emu_tolerance<Ty>(want))) {
                        if (bad++ == 0)
                            printf("    first wrong at (%lld,%lld,%lld,%lld): got %.9g, want %.9g\n", (long long)i[0],
                                   (long long)i[1], (long long)i[2], (long long)i[3], got, want);
                    }
                }
    printf("%-58s %s (%lld of %lld wrong)\n", name, bad ? "FAIL" : "ok", (long long)bad, (long long)n);
    return bad == 0;
}

/* The cases of y of Ty from inputs of Ta (in place: Ty == Ta only). */
template <typename Ty, typename Ta> bool emu_type(cudnnDataType_t ytype, cudnnDataType_t atype, const char *tname)
{
    const bool same = std::is_same<Ty, Ta>::value;
    const int small[4] = {2, 3, 8, 3}, large[4] = {2, 4, 96, 96}, row[4] = {1, 1, 1, 8 * 37 + 5};
    const int bias_small[4] = {1, 3, 1, 1}, bias_large[4] = {1, 4, 1, 1}, bias_nhwc[4] = {1, 48, 1, 1};
    const int nhwc[4] = {3, 48, 9, 11}; /* rows of 48 channels */
    const int plane_small[4] = {2, 1, 8, 3}, plane_large[4] = {2, 1, 96, 96}; /* one H x W plane an image */
    const int C = OCD_EWISE_COPY, A = OCD_EWISE_ADD;
    char name[96];
    bool ok = true;
#define EMU_CASE(label, OP, ...)                                         \
    snprintf(name, sizeof name, "%s: %s", tname, label);               \
    ok &= emu_case<Ty, Ta, OP>(name, ytype, atype, __VA_ARGS__)
    /* ROWS_FLAT */
    if (same) {
        EMU_CASE("scale in place", C, large, large, large, CUDNN_TENSOR_NCHW, true, 1.5, 0, 0, ROWS_FLAT);
        EMU_CASE("scale in place, few packs", C, small, small, small, CUDNN_TENSOR_NCHW, true, -0.75, 0, 0, ROWS_FLAT);
    }
    EMU_CASE("copy, one row with a tail", C, row, row, row, CUDNN_TENSOR_NCHW, false, 2, 0, 0, ROWS_FLAT);
    EMU_CASE("bias add NHWC", C, nhwc, bias_nhwc, nhwc, CUDNN_TENSOR_NHWC, false, 1, 0, -0.5, ROWS_FLAT);
    EMU_CASE("copy, blended", C, large, large, large, CUDNN_TENSOR_NCHW, false, 0.5, 0, -1, ROWS_FLAT);
    /* ROWS_VALUE */
    EMU_CASE("bias add NCHW, short rows", C, small, bias_small, small, CUDNN_TENSOR_NCHW, false, 1, 0, 1, ROWS_VALUE);
    EMU_CASE("bias add NCHW, long rows", C, large, bias_large, large, CUDNN_TENSOR_NCHW, false, 0.5, 0, 1, ROWS_VALUE);
    EMU_CASE("bias copy NCHW, not blended", C, large, bias_large, large, CUDNN_TENSOR_NCHW, false, 2, 0, 0,
             ROWS_VALUE);
    /* ROWS_ANY */
    EMU_CASE("add of two tensors, blended", A, large, large, large, CUDNN_TENSOR_NCHW, false, 1, -1, 0.5, ROWS_ANY);
    EMU_CASE("add of two tensors, one row with a tail", A, row, row, row, CUDNN_TENSOR_NCHW, false, 0.5, 2, 0,
             ROWS_ANY);
    EMU_CASE("add of a bias NCHW, short rows", A, small, small, bias_small, CUDNN_TENSOR_NCHW, false, 1, 1, 0,
             ROWS_ANY);
    EMU_CASE("add of a bias NCHW, long rows, blended", A, large, large, bias_large, CUDNN_TENSOR_NCHW, false, 1, -2,
             0.5, ROWS_ANY);
    EMU_CASE("add of a plane an image, short rows", A, small, small, plane_small, CUDNN_TENSOR_NCHW, false, 1, 1, 1,
             ROWS_ANY);
    EMU_CASE("add of a plane an image, long rows", A, large, large, plane_large, CUDNN_TENSOR_NCHW, false, 0.5, 1, 0,
             ROWS_ANY);
    /* reversed views, every operand alike: packed again once turned around */
    if (same) {
        EMU_CASE("scale in place, all reversed", C, large, large, large, CUDNN_TENSOR_NCHW, true, 1.5, 0, 0, ROWS_FLAT,
                 0xf);
    }
    EMU_CASE("bias add NHWC, H and C reversed", C, nhwc, bias_nhwc, nhwc, CUDNN_TENSOR_NHWC, false, 1, 0, -0.5,
             ROWS_FLAT, 0x6);
    EMU_CASE("bias add NCHW, N and W reversed", C, large, bias_large, large, CUDNN_TENSOR_NCHW, false, 0.5, 0, 1,
             ROWS_VALUE, 0x9);
    EMU_CASE("add of a plane an image, all reversed", A, large, large, plane_large, CUDNN_TENSOR_NCHW, false, 0.5, 1,
             0, ROWS_ANY, 0xf);
    EMU_CASE("add of two tensors, one row reversed, tail", A, row, row, row, CUDNN_TENSOR_NCHW, false, 0.5, 2, 0,
             ROWS_ANY, 0x8);
#undef EMU_CASE
    return ok;
}

/* An input reversed where y is not keeps negative strides after the normalization: the
   vectorized kernel, whose row offsets are unsigned, must decline it. */
bool emu_reversed_input_declined()
{
    const int dims[4] = {2, 4, 96, 96};
    emu_tensor<float> y(CUDNN_DATA_FLOAT, dims, CUDNN_TENSOR_NCHW), a(CUDNN_DATA_FLOAT, dims, CUDNN_TENSOR_NCHW, 0x1);
    struct ocd_ewise e;
    ocd_ewise_build(&e, OCD_EWISE_COPY, &y.v, &a.v, NULL);
    ocd_ewise_bind(&e, y.first(), a.first(), NULL);
    e.alpha1 = 1;
    const char *why = ocd_cuda_ewise_vec_applies(NULL, &e);
    printf("%-58s %s\n", "float: copy of an input reversed along N, declined", why ? "ok" : "FAIL (taken)");
    return why != NULL;
}

} // namespace

int main()
{
    bool ok = emu_type<float, float>(CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, "float");
    ok &= emu_type<__half, __half>(CUDNN_DATA_HALF, CUDNN_DATA_HALF, "half");
    ok &= emu_type<__half, float>(CUDNN_DATA_HALF, CUDNN_DATA_FLOAT, "float -> half");
    ok &= emu_type<float, __half>(CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, "half -> float");
    ok &= emu_reversed_input_declined();
    printf("%s\n", ok ? "all cases ok" : "SOME CASES FAILED");
    return ok ? 0 : 1;
}
