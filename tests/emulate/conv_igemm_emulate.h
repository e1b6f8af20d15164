/* conv_igemm_emulate.h: what the emulations of the implicit-GEMM kernels (conv_igemm_sm90.cu,
   conv_igemm_tma.cu) share: tensor views of logical NCHW dims, and the copies launch_copies
   (src/cuda/conv_igemm.cu) makes into the workspace, run element by element on the CPU.
   Included after src/cuda/conv_igemm.cu. */
#ifndef OCD_TESTS_EMULATE_CONV_IGEMM_EMULATE_H
#define OCD_TESTS_EMULATE_CONV_IGEMM_EMULATE_H

#include "conv_emulate.h"
#include "emu_handle.h"

#include <algorithm>
#include <type_traits>

namespace {

/* An NHWC view of logical dims (n, c, h, w). */
struct ocd_tensor_view nhwc(cudnnDataType_t t, int64_t n, int64_t c, int64_t h, int64_t w)
{
    struct ocd_tensor_view v;
    memset(&v, 0, sizeof v);
    v.dtype = t, v.rank = 4, v.vect = 1;
    v.dims[0] = n, v.dims[1] = c, v.dims[2] = h, v.dims[3] = w;
    v.strides[0] = h * w * c, v.strides[1] = 1, v.strides[2] = w * c, v.strides[3] = c;
    return v;
}

/* A packed NCHW view of logical dims (n, c, h, w). */
struct ocd_tensor_view nchw(cudnnDataType_t t, int64_t n, int64_t c, int64_t h, int64_t w)
{
    const int64_t d[4] = {n, c, h, w};
    struct ocd_tensor_view v = packed(d);
    v.dtype = t;
    return v;
}

/* Storage index of logical NCHW element (n, c, h, w) of view v. */
size_t at(const struct ocd_tensor_view &v, long n, long c, long h, long w)
{
    return (size_t)(n * v.strides[0] + c * v.strides[1] + h * v.strides[2] + w * v.strides[3]);
}

/* The copies of launch_copies for plan pl of problem p into the workspace at wsa (256-byte
   aligned), element by element on the raw bits (igemm_operand rounds a TF32 plan's operands),
   with the plan's pointers bound to them. */
template <typename T> void emu_igemm_copies(igemm_plan &pl, const struct ocd_conv_problem &p, uint8_t *wsa)
{
    typedef typename std::conditional<sizeof(T) == 4, uint32_t,
                                      typename std::conditional<sizeof(T) == 2, uint16_t, uint8_t>::type>::type U;
    const bool tf32 = pl.type == IGEMM_TF32;
    if (pl.pack_filter) { /* igemm_pack_filter, or its tiled form block by block, thread by thread */
        const igemm_filter_pack &f = pl.pack;
        const int64_t total = (int64_t)f.g * f.a_n * f.taps * f.b_n;
        U *dst = (U *)(wsa + pl.ws_filter);
        const U *w = (const U *)p.w_data;
        if (f.tiled) {
            std::fill(dst, dst + total, (U)0x5a5a); /* every element must be written */
            U tile[32][33];
            for (int bz = 0; bz < f.g * f.taps; bz++)
                for (int by = 0; by < (f.a_n + 31) / 32; by++)
                    for (int bx = 0; bx < (f.b_n + 31) / 32; bx++) {
                        const igemm_pack_block k(f, bx, by, bz);
                        for (int ty = 0; ty < 8; ty++)
                            for (int tx = 0; tx < 32; tx++) igemm_pack_tile_read(f, k, w, tile, tx, ty, tf32);
                        for (int ty = 0; ty < 8; ty++)
                            for (int tx = 0; tx < 32; tx++) igemm_pack_tile_write<U>(f, k, dst, tile, tx, ty);
                    }
        } else {
            for (int64_t i = 0; i < total; i++) {
                int64_t src;
                dst[i] = igemm_filter_src(f, (uint32_t)i, &src) ? igemm_operand(w[src], tf32) : U(0);
            }
        }
        pl.prm.bmat = dst;
    }
    if (pl.pad_on) { /* igemm_pad_channels */
        U *dst = (U *)(wsa + pl.ws_pad);
        for (uint32_t i = 0; i < pl.pad.total; i++) {
            int64_t src;
            dst[i] = igemm_pad_src(pl.pad, i, &src) ? igemm_operand(((const U *)pl.pad_src)[src], tf32) : U(0);
        }
        pl.prm.a.ptr = dst;
    }
    igemm_copy *copies[2] = {&pl.copy_a, &pl.copy_b};
    igemm_rows_copy *rows[2] = {&pl.rows_a, &pl.rows_b};
    igemm_act *acts[2] = {&pl.prm.a, &pl.prm.b};
    for (int i = 0; i < 2; i++) { /* igemm_pad_rows: the k32 filter gradient's rows of dy and copies of x */
        const igemm_rows_copy &r = *rows[i];
        if (!r.on) continue;
        U *dst = (U *)(wsa + r.ws_off);
        for (uint32_t q = 0; q < r.rows.total / 4; q++) igemm_pad_four((const U *)r.src, dst, r.rows, q, tf32);
        acts[i]->ptr = dst;
    }
    for (int i = 0; i < 2; i++) { /* launch_nhwc_copy into the workspace: [N][C][S] -> packed [N][S][C] */
        const igemm_copy &c = *copies[i];
        if (!c.on) continue;
        U *dst = (U *)(wsa + c.ws_off);
        for (int64_t img = 0; img < c.n; img++)
            for (int64_t sp = 0; sp < c.s; sp++)
                for (int64_t ch = 0; ch < c.c; ch++)
                    dst[(img * c.s + sp) * c.c + ch] =
                        igemm_operand(((const U *)c.tensor)[img * c.sn + ch * c.sc + sp], tf32);
        acts[i]->ptr = dst;
    }
    if (pl.copy_out.on) pl.prm.epi.out = wsa + pl.copy_out.ws_off, pl.prm.epi.z = pl.prm.epi.out; /* plan_out */
}

/* The output's copy out of the workspace (plan_out; launch_nhwc_copy out of it): packed
   [N][S][C] -> [N][C][S], after the kernel. */
template <typename T> void emu_igemm_copy_out(const igemm_plan &pl)
{
    typedef typename std::conditional<sizeof(T) == 4, uint32_t, uint16_t>::type U;
    const igemm_copy &c = pl.copy_out;
    if (!c.on) return;
    const U *src = (const U *)pl.prm.epi.out;
    for (int64_t img = 0; img < c.n; img++)
        for (int64_t sp = 0; sp < c.s; sp++)
            for (int64_t ch = 0; ch < c.c; ch++)
                ((U *)c.tensor)[img * c.sn + ch * c.sc + sp] = src[(img * c.s + sp) * c.c + ch];
}

/* Plans p on tile (make_plan, a handle of compute capability 9.0 with sm_count SMs) into *pl.
   True when it plans and the case wants it to; else false with *passed: a case that must
   decline (declines: part of the reason) passes when it does, any other fails (a line each). */
inline bool emu_igemm_plan(const char *name, const char *declines, int sm_count, const struct ocd_conv_problem &p,
                           int tile, bool tf32, igemm_plan *pl, bool *passed)
{
    struct cudnnContext ctx = emu_handle(9, sm_count);
    const char *why = make_plan(&ctx, &p, tile, tf32, pl);
    *passed = false;
    if (declines) {
        *passed = why != NULL && strstr(why, declines) != NULL;
        printf("%s %s: the plan declines: %s\n", *passed ? "ok  " : "FAIL", name, why ? why : "(it plans)");
        return false;
    }
    if (why != NULL) {
        printf("FAIL %s: the plan declines: %s\n", name, why);
        return false;
    }
    return true;
}

} // namespace

#endif /* OCD_TESTS_EMULATE_CONV_IGEMM_EMULATE_H */
