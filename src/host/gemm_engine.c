/* gemm_engine.c: the host's packed GEMM engine (see gemm_engine.h): the untyped helpers, the
   run-time choice of the micro-kernel, and the typed engine (gemm_engine_typed.h) instantiated
   for float and double. Compiled with -ffp-contract=fast, so that the micro-kernel's a*b+c
   becomes one FMA. */
#include "host/gemm_engine.h"

#include "core/dtype.h"
#include "host/parallel.h"
#include "host/typed.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* The micro-kernel is compiled twice on x86-64 with gcc or clang: for the baseline and for
   AVX2 + FMA, chosen once at run time; the build itself stays portable (OPENCUDNN_NATIVE=ON
   compiles everything for the build machine instead). */
#if defined(__x86_64__) && defined(__GNUC__)
#define OCD_GEMM_X86_DISPATCH 1
static bool have_avx2_fma(void)
{
    /* racing threads compute the same answer; atomic, so that their race is defined */
    static atomic_int cached = -1;
    int v = atomic_load_explicit(&cached, memory_order_relaxed);
    if (v < 0) {
        __builtin_cpu_init();
        v = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        atomic_store_explicit(&cached, v, memory_order_relaxed);
    }
    return v;
}
#else
#define OCD_GEMM_X86_DISPATCH 0
#endif

static size_t align64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

size_t ocd_host_gemm_table_bytes(int64_t entries)
{
    return align64((size_t)entries * sizeof(int64_t)) +
           align64((size_t)entries * OCD_HOST_GEMM_MAX_POS * sizeof(int32_t));
}

struct ocd_host_gemm_table ocd_host_gemm_table_at(void *at, int64_t entries)
{
    struct ocd_host_gemm_table t = {at, (int32_t *)((char *)at + align64((size_t)entries * sizeof(int64_t)))};
    return t;
}

/* The first element of group `group` of a dense operand. */
static const void *dense_base(const struct ocd_host_gemm_operand *o, int64_t group)
{
    if (o->ptrs != NULL) return o->ptrs[group];
    return (const char *)o->base + group * o->group_stride * (int64_t)ocd_dtype_scalar_size(o->dtype);
}

/* Micro-tile widths: two vectors of the widest vector unit dispatched (AVX2: 8 floats, 4 doubles). */
#define GEMM_T float
#define GEMM_NATIVE CUDNN_DATA_FLOAT
#define GEMM_SFX f32
#define GEMM_MR 6
#define GEMM_NR 16
#include "host/gemm_engine_typed.h"

#define GEMM_T double
#define GEMM_NATIVE CUDNN_DATA_DOUBLE
#define GEMM_SFX f64
#define GEMM_MR 6
#define GEMM_NR 8
#include "host/gemm_engine_typed.h"

size_t ocd_host_gemm_tile_scratch_bytes(bool dbl)
{
    return ocd_parallel_scratch_block_bytes(dbl ? scratch_bytes_f64() : scratch_bytes_f32());
}

size_t ocd_host_gemm_prepack_bytes(const struct ocd_host_gemm *g)
{
    return g->dbl ? prepack_bytes_f64(g) : prepack_bytes_f32(g);
}

cudnnStatus_t ocd_host_gemm_run(const struct ocd_host_gemm *g, void *prepack_ws)
{
    return g->dbl ? run_f64(g, prepack_ws) : run_f32(g, prepack_ws);
}

size_t ocd_host_gemm_gather_bytes(const struct ocd_host_gemm *g, int which)
{
    int64_t rows = which == 0 ? g->m : g->k, cols = which == 0 ? g->k : g->n;
    return (size_t)(g->groups * rows * cols) * (g->dbl ? sizeof(double) : sizeof(float));
}

cudnnStatus_t ocd_host_gemm_gather(struct ocd_host_gemm *g, int which, void *dst)
{
    return g->dbl ? gather_f64(g, which, dst) : gather_f32(g, which, dst);
}
