/* conv_igemm_tma_maps.cu (emulation): the tensor maps and loads that the sm_90a TMA convolution
   kernel (src/cuda/conv_igemm_tma_sm90.cu) would issue for every ResNet-50 v1.5 layer
   (bench/resnet50_shapes.h), checked against what the CUDA driver and the PTX ISA accept, where
   the emulation that checks data (conv_igemm_tma.cu) runs small cases only. Each layer at batch
   1, 32 and 256, fp16, bf16 and fp32 (TF32: forward and backward data, unclustered tiles), in
   the forward pass, backward data (unit stride directly, strided
   layers stride phase by stride phase as cuda:dgrad_igemm_tma_phases runs them) and the filter
   gradient, is planned by make_plan on every TMA tile for an H100 (132 multiprocessors); for each
   plan that serves it:
   - the two maps pass cuTensorMapEncodeIm2col's and cuTensorMapEncodeTiled's documented rules
     (conv_igemm_tma_emulate.h's model_encode_rejects: dims, byte strides, the rank-4 box corners,
     channelsPerPixel, pixelsPerColumn, traversal strides, boxDim, the 128-byte swizzle's span,
     16-byte aligned addresses), a map the driver refuses failing the launch;
   - every load of every work unit and K tile, as the producer issues it (igemm_tma_kt): its
     im2col offsets within the ISA's rank-4 range, its filter base inside the bounding box and
     each row of its traversal ending exactly one past the box (model_load_im2col, without data);
     the bytes a CTA's full barrier expects equal to its boxes' (its own A and every CTA's part of
     B) and within the mbarrier's tx-count;
   - the work units a multiple of the cluster;
   - where the plan chose the ping-pong twin (the 16-bit staged forward tiles of 128 rows or
     more), the loads of its units of half the tile's rows.
   A layer no tile plans in a direction is listed with the first tile's reason (128x256, which
   takes every direction and type: the later tiles' may only say they do not); every tile must
   plan some layer in each direction (the 64-row tiles: in the filter gradient; the narrow tiles:
   forward and backward data). Prints a line per layer and direction; exits 1 if any check
   fails. */
#define OCD_SM90A
#include "cuda/conv_igemm.cu"
#include "cuda/conv_igemm_tma_sm90.cu"

#include "conv_igemm_emulate.h"
#include "conv_igemm_tma_emulate.h"
#include "emu_handle.h"

#include "../../bench/resnet50_shapes.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

struct layer {
    const char *name;
    int c, k, h, r, pad, stride;
};

#define RN50_ROW(N, OP, DIR, DT, LAYOUT, SUFFIX, name, c, k, h, r, pad, stride) {#name, c, k, h, r, pad, stride},
const layer layers[] = {RN50_SHAPES(RN50_ROW, , , , , , )};
#undef RN50_ROW

/* A fake, 256-byte aligned device address per operand: the maps are checked, never read. */
const void *fake(int i)
{
    return (const void *)(uintptr_t)(0x100000 * (i + 1));
}

/* The problem of layer l at batch n in direction dir, NHWC data and a KRSC filter. */
struct ocd_conv_problem problem_of(const layer &l, int n, enum ocd_conv_dir dir, cudnnDataType_t dt)
{
    struct ocd_conv_problem p;
    memset(&p, 0, sizeof p);
    const int out = (l.h + 2 * l.pad - l.r) / l.stride + 1;
    p.dir = dir;
    p.s.nsp = 2, p.s.n = n, p.s.c = l.c, p.s.k = l.k, p.s.groups = 1;
    for (int i = 0; i < 2; i++) {
        p.s.in[i] = l.h, p.s.filt[i] = l.r, p.s.out[i] = out;
        p.s.pad[i] = l.pad, p.s.stride[i] = l.stride, p.s.dilation[i] = 1;
    }
    p.x = nhwc(dt, n, l.c, l.h, l.h);
    p.y = nhwc(dt, n, l.k, out, out);
    p.w = nhwc(dt, l.k, l.c, l.r, l.r);
    p.w_format = CUDNN_TENSOR_NHWC;
    p.compute = CUDNN_DATA_FLOAT, p.math = CUDNN_TENSOR_OP_MATH;
    p.alpha = 1, p.beta = 0;
    p.x_data = (void *)fake(0), p.w_data = (void *)fake(1), p.y_data = (void *)fake(2);
    return p;
}

/* The operands a run binds (run_plan): the workspace copies at a fake address. */
void bind(igemm_plan *pl)
{
    if (pl->pad_on) pl->prm.a.ptr = fake(3);
    if (pl->copy_a.on) pl->prm.a.ptr = fake(4);
    if (pl->copy_b.on) pl->prm.b.ptr = fake(5);
    if (pl->pack_filter) pl->prm.bmat = fake(6);
}

/* Checks every load of plan pl on tile <BM, BN> in clusters of CL; NULL or what fails. *loads:
   the loads checked. */
template <int BM, int BN, int CL, bool WGRAD> const char *check_loads(const igemm_plan &pl, long *loads)
{
    typedef igemm_tma_kt<BM, BN, WGRAD, CL> Loads;
    const igemm_params &p = pl.prm;
    const igemm_tma_geom &g = pl.tma;
    const model_im2col mi = map_im(g, p, WGRAD, pl.esize);
    const model_tiled mt = map_ti(g, p, WGRAD, pl.esize);
    if (const char *why = model_encode_rejects(mi, mt)) return why;
    if (g.units % CL != 0 || g.tiles_m % CL != 0) return "the work units are not a multiple of the cluster";
    for (int t = 0; t < g.units; t++)
        for (int kt = 0; kt < igemm_tma_unit_at(g, t, BM, BN).nkt; kt++) {
            const int rank = t % CL;
            const Loads l(p, g, t, kt, rank);
            uint32_t bytes = 0;
            for (int r = 0; r < CL; r++) {
                const Loads lr(p, g, t, kt, r);
                for (int i = 0; i < Loads::COPIES; i++) {
                    if (!lr.on(i)) continue;
                    const igemm_tma_copy c = lr.copy(p, g, i);
                    if (!c.into_b && r != rank) continue; /* the peer's own A */
                    if (c.im2col && !model_load_im2col(mi, c.c[0], c.c[1], c.c[2], c.c[3], c.ow, c.oh, NULL))
                        return "an im2col load outside the ISA's offsets, its bounding box, or its row ends";
                    bytes += model_box_bytes(mi, mt, c);
                    ++*loads;
                }
            }
            if (bytes != l.bytes) return "a stage's expected bytes differ from its boxes'";
            if (bytes > MODEL_TX_MAX) return "a stage's expected bytes exceed the mbarrier's tx-count";
        }
    return NULL;
}

/* check_loads for unclustered tile `tile` of BM x BN, or for its ping-pong twin's units of
   BM / 2 x BN where the plan chose that (forward kernels that have one only). */
template <int BM, int BN, bool WGRAD> const char *check_unclustered(int tile, const igemm_plan &pl, long *loads)
{
    if (!pl.tma.pingpong) return check_loads<BM, BN, 1, WGRAD>(pl, loads);
    if (WGRAD || !ocd_igemm_tma_pingpong[tile - TMA_TILE0]) return "ping-pong consumers planned on a tile without them";
    return check_loads<BM / 2, BN, 1, WGRAD>(pl, loads);
}

/* check_loads for TMA tile `tile` (make_plan's index) of plan pl, the direction's kernel. */
const char *check_tile(int tile, bool wgrad, const igemm_plan &pl, long *loads)
{
#define TILE_CASE(i, bm, bn, ...)                                                                   \
    if (tile == TMA_TILE0 + i)                                                                      \
        return wgrad ? check_unclustered<bm, bn, true>(tile, pl, loads) : check_unclustered<bm, bn, false>(tile, pl, loads);
#define C2_TILE_CASE(i, bm, bn, ...)                                                                \
    if (tile == TMA_C2_TILE0 + i)                                                                   \
        return wgrad ? check_loads<bm, bn, 2, true>(pl, loads) : check_loads<bm, bn, 2, false>(pl, loads);
#define W64_TILE_CASE(i, bm, bn, ...)                                                               \
    if (tile == TMA_W64_TILE0 + i) return wgrad ? check_loads<bm, bn, 1, true>(pl, loads) : "not the filter gradient";
#define NARROW_TILE_CASE(i, bm, bn, ...)                                                            \
    if (tile == TMA_NARROW_TILE0 + i) return wgrad ? "the filter gradient" : check_unclustered<bm, bn, false>(tile, pl, loads);
    OCD_IGEMM_TMA_TILES(TILE_CASE)
    OCD_IGEMM_TMA_C2_TILES(C2_TILE_CASE)
    OCD_IGEMM_TMA_W64_TILES(W64_TILE_CASE)
    OCD_IGEMM_TMA_NARROW_TILES(NARROW_TILE_CASE)
#undef NARROW_TILE_CASE
#undef W64_TILE_CASE
#undef C2_TILE_CASE
#undef TILE_CASE
    return "not a TMA tile";
}

int failures = 0;
int served[TILES_ALL][OCD_CONV_DIRS];

const char *const dirs[] = {"fwd", "dgrad", "wgrad"};

/* Checks plan pl of problem p on tile t (bound to fake operands); false after reporting what
   fails. */
bool check_plan(const layer &l, int n, cudnnDataType_t dt, enum ocd_conv_dir dir, int t, bool phase, igemm_plan &pl,
                long *loads)
{
    bind(&pl);
    if (const char *err = check_tile(t, dir == OCD_CONV_BWD_FILTER, pl, loads)) {
        printf("FAIL %s n %d %s type %d tile %d%s: %s\n", l.name, n, dirs[dir], (int)dt, t - TMA_TILE0,
               phase ? " (a phase)" : "", err);
        failures++;
        return false;
    }
    served[t][dir]++;
    return true;
}

/* Layer l at batch n, type dt, direction dir: the plan of every TMA tile, or for strided
   backward data the phases entry's plan and each of its phases' on the tile it chose. */
void run_layer(cudnnHandle_t h, const layer &l, int n, cudnnDataType_t dt, enum ocd_conv_dir dir)
{
    const struct ocd_conv_problem p = problem_of(l, n, dir, dt);
    const bool tf32 = dt == CUDNN_DATA_FLOAT;
    std::string tiles;
    const char *why = NULL;
    long loads = 0;
    if (dir == OCD_CONV_BWD_DATA && l.stride > 1) {
        igemm_phases_plan pp;
        why = phases_plan(h, &p, tf32, true, &pp);
        for (int ph = 0; ph < phase_count(&p) && why == NULL; ph++) {
            if (pp.tile[ph] < 0) continue; /* no taps or no pixels: scaled by beta */
            struct ocd_conv_problem sub;
            bool taps, pixels;
            phase_problem(&p, ph, tf32 ? 4 : 2, &sub, &taps, &pixels);
            igemm_plan pl;
            if ((why = make_plan(h, &sub, pp.tile[ph], tf32, &pl, PLAN_PHASE)) != NULL) break;
            if (!check_plan(l, n, dt, dir, pp.tile[ph], true, pl, &loads)) return;
            tiles += (tiles.empty() ? "phases on " : ",") + std::to_string(pp.tile[ph] - TMA_TILE0);
        }
    } else {
        for (int t = TMA_TILE0; t < TILES_ALL; t++) {
            igemm_plan pl;
            const char *reason = make_plan(h, &p, t, tf32, &pl);
            if (reason != NULL) {
                if (why == NULL) why = reason;
                continue;
            }
            if (!check_plan(l, n, dt, dir, t, false, pl, &loads)) return;
            tiles += (tiles.empty() ? "" : ",") + std::to_string(t - TMA_TILE0);
        }
    }
    if (tiles.empty()) printf("     %s n %d %s type %d: no TMA plan (%s)\n", l.name, n, dirs[dir], (int)dt, why);
    else printf("ok   %s n %d %s type %d: tiles %s, %ld loads\n", l.name, n, dirs[dir], (int)dt, tiles.c_str(), loads);
}

} // namespace

int main()
{
    emu_tma_switches();
    struct cudnnContext ctx = emu_handle(9, 132);
    const cudnnDataType_t types[] = {CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT};
    const int batches[] = {1, 32, 256};
    for (const layer &l : layers)
        for (int n : batches)
            for (cudnnDataType_t dt : types)
                for (int dir = 0; dir < OCD_CONV_DIRS; dir++) run_layer(&ctx, l, n, dt, (enum ocd_conv_dir)dir);
    for (int tile = TMA_TILE0; tile < TILES_ALL; tile++)
        for (int dir = 0; dir < OCD_CONV_DIRS; dir++) {
            const bool w64 = tile >= TMA_W64_TILE0 && tile < TMA_NARROW_TILE0, narrow = tile >= TMA_NARROW_TILE0;
            if ((w64 && dir != OCD_CONV_BWD_FILTER) || (narrow && dir == OCD_CONV_BWD_FILTER)) continue;
            if (served[tile][dir] == 0) {
                printf("FAIL TMA tile %d plans no layer in %s\n", tile - TMA_TILE0, dirs[dir]);
                failures++;
            }
        }
    printf("%s: %d failures\n", failures ? "FAIL" : "ok", failures);
    return failures ? 1 : 0;
}
