/* onednn_conv.c: the host suite of bench.c (resnet50_host: ResNet-50's 3x3 layers, forward,
   f32, batch 8) run through oneDNN's C API, as the comparison for opencudnn's host backend. Built
   by bench/CMakeLists.txt only where oneDNN (libdnnl, Debian's libdnnl-dev) is found; nothing in
   src/ uses it.

   Each layer runs twice: "nchw" hands oneDNN the user's NCHW tensors and OIHW filter as they are
   (what opencudnn is given); "any" lets oneDNN choose its preferred (blocked) layouts and reorders
   the tensors into them once, outside the timing, as a framework that keeps its activations
   blocked would. Timing follows bench.c: three calls of warm-up, batches of as many calls as last
   --min-ms, the median time per call of --reps batches. Columns are bench.c's host columns (GB/s
   counts |x| + |w| + |y| once; %copy is '-': no copy ceiling is measured here), then oneDNN's
   name for the implementation it chose. */
#include <oneapi/dnnl/dnnl.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host_peak.h"
#include "resnet50_shapes.h"

#define TRY(call)                                                                                  \
    do {                                                                                           \
        dnnl_status_t s_ = (call);                                                                 \
        if (s_ != dnnl_success) {                                                                  \
            fprintf(stderr, "onednn_conv: %s: status %d (%s:%d)\n", #call, (int)s_, __FILE__, __LINE__); \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

struct layer {
    const char *name;
    int n, c, k, h, r, pad, stride;
};

#define HOST_ROW(N, name, c, k, h, r, pad, st) {#name "_fwd_f32_b8", N, c, k, h, r, pad, st},
#define LAYER_ROW(N, OP, DIR, DT, LAYOUT, SUFFIX, name, c, k, h, r, pad, st)                        \
    RN50_ONLY_##r(HOST_ROW(N, name, c, k, h, r, pad, st))
static const struct layer layers[] = {RN50_SHAPES(LAYER_ROW, 8, convfwd, fwd, f32, nchw, "")};
#undef LAYER_ROW
#undef HOST_ROW

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* A memory object of descriptor md filled from `user` (plain layout user_md) through a reorder
   when the layouts differ, or `user` itself. */
static dnnl_memory_t in_layout(dnnl_engine_t eng, dnnl_stream_t st, const dnnl_memory_desc_t *md,
                               dnnl_memory_t user, const dnnl_memory_desc_t *user_md, dnnl_memory_t *owned)
{
    *owned = NULL;
    if (dnnl_memory_desc_equal(md, user_md)) return user;
    TRY(dnnl_memory_create(owned, md, eng, DNNL_MEMORY_ALLOCATE));
    dnnl_primitive_desc_t rpd;
    dnnl_primitive_t reorder;
    TRY(dnnl_reorder_primitive_desc_create(&rpd, user_md, eng, md, eng, NULL));
    TRY(dnnl_primitive_create(&reorder, rpd));
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, *owned}};
    TRY(dnnl_primitive_execute(reorder, st, 2, args));
    TRY(dnnl_stream_wait(st));
    dnnl_primitive_destroy(reorder);
    dnnl_primitive_desc_destroy(rpd);
    return *owned;
}

static void fill(dnnl_memory_t m, size_t count, unsigned seed)
{
    float *p;
    TRY(dnnl_memory_get_data_handle(m, (void **)&p));
    for (size_t i = 0; i < count; i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = (float)(seed >> 8) * 0x1p-23f - 1.0f;
    }
}

/* Runs one layer in the user's layouts (blocked = 0) or oneDNN's (blocked = 1). */
static void run_layer(dnnl_engine_t eng, dnnl_stream_t st, const struct layer *l, int blocked, int reps,
                      double min_ms, double peak)
{
    int p = (l->h + 2 * l->pad - l->r) / l->stride + 1;
    dnnl_dims_t xd = {l->n, l->c, l->h, l->h}, wd = {l->k, l->c, l->r, l->r}, yd = {l->n, l->k, p, p};
    dnnl_dims_t strides = {l->stride, l->stride}, dil = {0, 0}, pad = {l->pad, l->pad};
    dnnl_memory_desc_t xu, wu, yu, xa, wa, ya;
    TRY(dnnl_memory_desc_init_by_tag(&xu, 4, xd, dnnl_f32, dnnl_nchw));
    TRY(dnnl_memory_desc_init_by_tag(&wu, 4, wd, dnnl_f32, dnnl_oihw));
    TRY(dnnl_memory_desc_init_by_tag(&yu, 4, yd, dnnl_f32, dnnl_nchw));
    dnnl_format_tag_t any = dnnl_format_tag_any;
    TRY(dnnl_memory_desc_init_by_tag(&xa, 4, xd, dnnl_f32, blocked ? any : dnnl_nchw));
    TRY(dnnl_memory_desc_init_by_tag(&wa, 4, wd, dnnl_f32, blocked ? any : dnnl_oihw));
    TRY(dnnl_memory_desc_init_by_tag(&ya, 4, yd, dnnl_f32, blocked ? any : dnnl_nchw));
    dnnl_convolution_desc_t cd;
    TRY(dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &xa, &wa,
                                                   NULL, &ya, strides, dil, pad, pad));
    dnnl_primitive_desc_t pd;
    TRY(dnnl_primitive_desc_create(&pd, &cd, NULL, eng, NULL));
    const char *impl = "?";
    TRY(dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl));
    dnnl_primitive_t conv;
    TRY(dnnl_primitive_create(&conv, pd));

    dnnl_memory_t x, w, y, x_owned, w_owned, y_owned;
    TRY(dnnl_memory_create(&x, &xu, eng, DNNL_MEMORY_ALLOCATE));
    TRY(dnnl_memory_create(&w, &wu, eng, DNNL_MEMORY_ALLOCATE));
    TRY(dnnl_memory_create(&y, &yu, eng, DNNL_MEMORY_ALLOCATE));
    fill(x, (size_t)l->n * l->c * l->h * l->h, 1);
    fill(w, (size_t)l->k * l->c * l->r * l->r, 2);
    dnnl_memory_t xc = in_layout(eng, st, dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0), x, &xu, &x_owned);
    dnnl_memory_t wc = in_layout(eng, st, dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), w, &wu, &w_owned);
    dnnl_memory_t yc = in_layout(eng, st, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0), y, &yu, &y_owned);
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, xc}, {DNNL_ARG_WEIGHTS, wc}, {DNNL_ARG_DST, yc}};

    for (int i = 0; i < 3; i++) TRY(dnnl_primitive_execute(conv, st, 3, args));
    TRY(dnnl_stream_wait(st));
    double t0 = now_ms();
    TRY(dnnl_primitive_execute(conv, st, 3, args));
    TRY(dnnl_stream_wait(st));
    double one = now_ms() - t0;
    int calls = one > 0 ? (int)ceil(min_ms / one) : 1000;
    calls = calls < 3 ? 3 : calls > 10000 ? 10000 : calls;
    double *samples = malloc(sizeof *samples * (size_t)reps);
    for (int rep = 0; rep < reps; rep++) {
        t0 = now_ms();
        for (int i = 0; i < calls; i++) TRY(dnnl_primitive_execute(conv, st, 3, args));
        TRY(dnnl_stream_wait(st));
        samples[rep] = (now_ms() - t0) / calls;
    }
    qsort(samples, (size_t)reps, sizeof *samples, compare);
    double ms = reps % 2 ? samples[reps / 2] : 0.5 * (samples[reps / 2 - 1] + samples[reps / 2]);
    free(samples);

    double flops = 2.0 * l->n * l->k * p * p * (double)l->c * l->r * l->r;
    double bytes = 4.0 * ((double)l->n * l->c * l->h * l->h + (double)l->k * l->c * l->r * l->r + (double)l->n * l->k * p * p);
    double gflops = flops / (ms * 1e-3) / 1e9;
    char pct[16] = "-";
    if (peak > 0) snprintf(pct, sizeof pct, "%.0f%%", 100 * gflops / peak);
    printf("%-26s %10.4f %9.1f %6s %8.1f %6s  op=convfwd dt=f32 layout=nchw n=%d c=%d h=%d w=%d k=%d r=%d s=%d pad=%d "
           "stride=%d dil=1 [oneDNN %s: %s]\n",
           l->name, ms, bytes / (ms * 1e-3) / 1e9, "-", gflops, pct, l->n, l->c, l->h, l->h, l->k, l->r, l->r, l->pad,
           l->stride, blocked ? "any" : "nchw", impl);
    fflush(stdout);

    dnnl_primitive_destroy(conv);
    dnnl_primitive_desc_destroy(pd);
    dnnl_memory_destroy(x), dnnl_memory_destroy(w), dnnl_memory_destroy(y);
    if (x_owned) dnnl_memory_destroy(x_owned);
    if (w_owned) dnnl_memory_destroy(w_owned);
    if (y_owned) dnnl_memory_destroy(y_owned);
}

int main(int argc, char **argv)
{
    int reps = 5;
    double min_ms = 20;
    const char *layout = NULL; /* nchw, any, or NULL: both */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--min-ms") == 0 && i + 1 < argc) min_ms = atof(argv[++i]);
        else if (strcmp(argv[i], "--layout") == 0 && i + 1 < argc) layout = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--reps N] [--min-ms MS] [--layout nchw|any]\n", argv[0]);
            return 2;
        }
    }
    if (reps < 1) reps = 1;
    const dnnl_version_t *v = dnnl_version();
    double peak = host_fma_peak();
    printf("# oneDNN %d.%d.%d (cpu runtime %u), fp32 FMA peak %.1f GFLOP/s\n", v->major, v->minor, v->patch,
           v->cpu_runtime, peak);
    printf("%-26s %10s %9s %6s %8s %6s  %s\n", "case", "ms", "GB/s", "%copy", "GFLOP/s", "%peak", "problem");
    dnnl_engine_t eng;
    dnnl_stream_t st;
    TRY(dnnl_engine_create(&eng, dnnl_cpu, 0));
    TRY(dnnl_stream_create(&st, eng, dnnl_stream_default_flags));
    for (int blocked = 0; blocked < 2; blocked++) {
        if (layout && strcmp(layout, blocked ? "any" : "nchw") != 0) continue;
        for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++) run_layer(eng, st, &layers[i], blocked, reps, min_ms, peak);
    }
    dnnl_stream_destroy(st);
    dnnl_engine_destroy(eng);
    return 0;
}
