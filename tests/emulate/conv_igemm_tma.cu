/* conv_igemm_tma.cu (emulation): the sm_90a warp-specialized TMA convolution kernel
   (src/cuda/conv_igemm_tma_sm90.cu) on the CPU, fp16 and bf16, in three parts (their machinery
   in conv_igemm_tma_run.h, shared with the TF32 emulation conv_igemm_tma_tf32.cu).

   1. The tensor maps. The TMA is modelled (conv_igemm_tma_emulate.h) from the PTX ISA ("Tensors": tiled mode, im2col
      mode with its bounding box, traversal strides and im2col offsets; the 128-byte swizzle) and
      the driver API's description of the map parameters, independently of the kernel's address
      code: an im2col load starts at the filter base given by the tensor coordinates, which must lie
      in the box [lower, dim - 1 + upper] of W and H; it visits pixelsPerColumn pixels, W first,
      then H, then N, each step moving by the traversal stride and wrapping to the box's lower
      corner past its upper one; a step that passes the upper corner by more than one fails the
      load (the maps end every row exactly one past the box, where every reading of the ISA's
      wrap agrees: to the corner, or carrying what passed it); each pixel's channels are read at
      the pixel plus the im2col
      offsets, zeros where a coordinate falls outside the tensor; a tiled load reads the box at
      its coordinates, zeros outside. Both write their box as 128-byte rows into a 1024-byte
      aligned destination, the 16-byte chunk bits (4-6) of each byte offset XORed with its row
      bits (7-9). The maps make_plan computes (igemm_tma_plan) and the coordinates the producer
      issues (igemm_tma_coords) are fed to the model for every tile and K tile of each case, and
      every element wgmma would read through the kernel's descriptors must be the im2col matrix's
      (A) or the filter's (B) as the convolution defines them; where C is a multiple of 64 the
      stages must also be, byte for byte, what the cp.async kernel's loaders write. The maps
      must pass the driver's documented rules (model_encode_rejects; conv_igemm_tma_maps.cu
      checks them for every ResNet-50 layer), and a stage's bytes the mbarrier's tx-count. The
      units' and K tiles' index maps (fast divisors) must agree with division on each of them.
   2. The schedule. The kernel's own loops (wgmma.cuh's ocd_wgmma_ring_produce and
      ocd_wgmma_ring_consume) run on threads (the producer, the consumer warpgroups: two, one on
      the 64-row tile, and the TMA engine completing the queued loads in random order after random
      delays) over mbarriers modelled from the ISA (arrival counts, expect_tx and complete_tx,
      phases, and try_wait.parity's "the phase of this parity has completed"). wgmma reads its
      stage when its group is retired by wgmma.wait_group, the latest the ISA allows, and a TMA
      write to a stage with a wgmma still pending on it, a refill before both consumers released
      the stage, or a K tile multiplied out of order or twice fail the case; a stall fails it
      too. A ring whose barrier count is one short of its stages must be caught. The
      consumers release a stage with each warp's lane 0's arrival (igemm_tma_releases), the
      empty barriers counting those.
      Ping-pong consumers (the kernel's twin where the plan chose it: every fp16 and bf16
      forward and backward-data case of the 128x256, 256x128 and 256x64 tiles with an NHWC
      output, strided backward data's phases on them included) run the two-team ring: each
      consumer must multiply exactly the K tiles of its own units (the CTA's even or odd ones), in
      order, a stage's use released by one warpgroup (the empty barriers counting one warpgroup's
      arrivals), and the turns are modelled as the named barriers they are: a consumer issuing
      wgmma while the other holds the turn, a turn passed by one that does not hold it, or passed
      twice before it was taken, or left untaken at the end, fails the case; so do ping-pong
      consumers that do not wait for their turn, which must be caught, as must their ring one
      stage short.
      Clustered tiles (the _c2 entries) run a cluster at a time: two CTAs' shared memories and
      barriers, their producers and consumers, one TMA engine; a multicast load is queued once
      per destination CTA, each completing on that CTA's full barrier on its own, in random
      order (so a peer's bytes may land before the CTA's own arrive.expect_tx: the model's
      tx-count goes negative, as the ISA allows); consumers arrive on both CTAs' empty barriers
      (the remote arrive). A load that completes on a full barrier's phase other than its own,
      or a refill of a stage before the consumers of every CTA it writes released it, fails the
      case; a cluster whose consumers release their own CTA's stages only, or whose full
      barriers expect their own CTA's bytes only, must be caught.
   3. The whole kernel's result (the emulated wgmma of wgmma_emulate.h and the epilogue
      igemm_wgmma_store, or the staged epilogue where the plan chose it: every forward and
      backward-data case on the 128x256, 256x128 and 256x64 tiles with an NHWC output, each
      warp's 32 lanes in lockstep through its NaN-poisoned buffer in the emulated shared
      memory) against the double-precision reference of tests/ref. The staged epilogue's
      buffer is checked free of bank conflicts, and planned by default.
   Cases (fp16 and bf16, both tiles): padding, stride 2, dilation 2 in CONVOLUTION mode, 1x1,
   a 7x7 stem-like layer with C = 8, M not a multiple of BM, tiles crossing image and row
   boundaries, C not a multiple of 64, a KCRS filter packed in the workspace, bias + ReLU with z
   (also with K = 250: the staged epilogue's rows misaligned for 4-element stores) and without z
   (the staged store's bias form), a persistent grid of fewer CTAs than tiles; and the plan
   declining what the maps cannot take; a grid of two thirds of the multiprocessors served,
   fewer declined.
   Backward data (unit stride, as a forward pass over dy: conv_igemm_tma.cuh): 3x3 pad 1, 5x5 pad
   2, dilation 2, 1x1 with a KCRS filter, padding above (R - 1) * dilation (a negative pad'), K
   and C not multiples of 64, CONVOLUTION mode, alpha and beta, the ReLU gradient in the stores
   (DgradDrelu: staged, and NCHW through the fragments' stores); the wants of part 1 from the
   backward pass's own definition, part 3 against tests/ref's backward data.
   The filter gradient (K over output pixels, both operands MN-major: dy's blocks from the tiled
   map over dy as [N*P*Q][K], x's from the im2col map, 64 pixels a load, at each block's tap):
   part 1 checks every element wgmma reads (emu_desc_addr_mn) against dy and the im2col matrix
   with each tap's channels padded to 64, the blocks loaded and the stage's expected bytes, and,
   where C % 64 == 0, the stages against the cp.async kernel's MN-major loaders; part 3 dw
   against tests/ref's backward filter. Cases: 3x3 pad 1 with an N edge (blocks past the padded
   columns not loaded), stride 2 with unequal paddings and a pixel tail, C = 56, 120 and 200
   (padded to 64, 128, 256), K = 240 and 192 (an A block not loaded), dilation 2 and a 3x1
   filter in CONVOLUTION mode, a 1x1 filter with stride 2 and a KCRS dw, alpha and beta,
   split-K (2 splits of 17 and 16 K tiles; 3 of 19, 19 and 17, CTAs walking several units); the
   plan declining C = 40 (mostly padding) and stride 9.
   Strided backward data phase by phase (cuda:dgrad_igemm_tma_phases: phases_plan and phases_run
   of conv_igemm.cu, each phase a unit-stride problem as a forward pass over dy on the TMA tile
   the plan chose): each phase's taps and pixels against the definition's (emu_phase), parts 1
   and 2 per phase, part 3 the whole dx against tests/ref's strided backward data. Cases: 3x3
   stride 2 with padding 0 and 1 (odd and even sizes: phases of unequal extents, a phase with
   more pixels than its padding implies, and with stride 3 one with fewer), the 1x1 stride-2 downsampling layer (three phases without taps,
   scaled by beta), stride 3 with 3x3 and 5x5 filters and unequal paddings, dilation 3 (a phase
   of negative padding) and dilation 2 (a stride-2 dilation-2 filter: whole phases without
   taps), CONVOLUTION mode, alpha and beta, a K tail, C = 64 on the narrow tiles; the plan
   declining C = 40 and unit stride.
   Clusters of 2 CTAs (parts 1 to 3, B assembled from both CTAs' loads): forward with 3 M tiles
   (the last pair's second tile past M: no A, nothing stored) and a cluster walking two pairs,
   the 256x128 tile with stride 2, alpha and beta; backward data in CONVOLUTION mode with odd M
   tiles; the filter gradient with one M tile (padded to two), three M tiles with split-K on 12
   clusters, and stride 2 on the 256x128 tile; where no cluster fits the GPU
   (OPENCUDNN_TEST_CLUSTERS=0, as on a MIG slice), the clustered tiles declining at the plan and
   an unclustered one still planning.
   The filter gradient's 64-row tile (one consumer warpgroup, 5 stages; parts 1 to 3, and its
   ring one stage short caught): K = 64 with 576 columns (the last tile one block of four),
   split-K in four splits, K = 56 (one A block, rows past the filters) with C = 120 and stride 2,
   a 1x1 stride-2 filter, and the plan declining K = 40 and the forward pass. Its 64-wide tile
   (64 x 64, 8 stages: a GEMM of 64 columns, the 1x1 filter over 64 channels; parts 1 to 3, and
   its ring one stage short caught): a 1x1 64 -> 64 in four splits, K = 48 with C = 56 (padded
   to 64) and stride 2, a 3x3 of nine column tiles (one a tap) on NCHW data, and the plan
   declining C = 40 and the forward pass.
   The narrow forward and backward-data tiles (128x128 in 7 stages, 256x64 in 5, 128x64 in 9; parts
   1 to 3, the stages against the cp.async loaders of the 128x128 and 128x64 tiles where C % 64 ==
   0, and the 128x64 ring one stage short caught): forward with 3 images across tiles and an M
   edge, stride 2 with a channel tail and an N edge, ResNet's 64 -> 64 3x3 with an M edge, dilation
   2 with bias, ReLU and z and an N edge, a 1x1 with a packed KCRS filter, the 7x7 stem with C = 8
   on NCHW data; backward data 64 -> 64, a K tail in CONVOLUTION mode, 5x5 with an N edge, pad' =
   -1 on NCHW data; ResNet-50's 64-channel layers at 56x56 (3x3 64 -> 64 both ways, the 1x1
   256 -> 64 forward and the 1x1 64 -> 256 backward); the plan declining 64 columns on the
   128x128 tile, too few tiles for the GPU, and the filter gradient. Strided backward data with C = 64 runs its phases on them.
   Prints a line per case; exits 1 if any fails. */
#define OCD_SM90A
#define IGEMM_PACK_TILED_MIN 4096 /* the tiled filter pack on the larger of these filters */
#include "cuda/conv_igemm.cu"
#include "cuda/conv_igemm_tma_sm90.cu"

#include "wgmma_emulate.h"
#include "conv_igemm_emulate.h"

extern "C" {
#include "ref/conv.h"
}

#include "conv_igemm_tma_run.h"

namespace {

/* Plan pl of tile Tile (or of its ping-pong twin, where pl has it) on one CTA, its ring `short_by`
   stages short of what the loops believe, under protocol proto, on three seeds: NULL where
   some run passed, else the last run's failure. */
template <class Tile, bool WGRAD> const char *run_broken(const igemm_plan &pl, int short_by, cluster_protocol proto)
{
    if constexpr (igemm_tma_launch<Tile, __half, WGRAD>::PINGPONG_OK)
        if (pl.tma.pingpong) return run_broken<typename igemm_tma_pingpong_tile<Tile, __half>::type, WGRAD>(pl, short_by, proto);
    const char *why = "";
    for (unsigned seed = 0; seed < 3 && why != NULL; seed++)
        why = run_cluster<Tile, __half, WGRAD>(pl.prm, pl.tma, 0, 1, Tile::STAGES - short_by, proto, seed);
    return why;
}

/* A ring whose barriers and stages are one fewer than the loops believe must fail the checks:
   case e on the tile of index e.tile (Tile), two consumers or one, or the ping-pong twin where
   the plan chose it (there also ping-pong consumers that do not wait for their turn). */
template <class Tile, bool WGRAD> bool check_short_ring(const tma_case &e)
{
    tma_problem<__half> tp(e);
    igemm_plan pl;
    bool passed;
    if (!emu_igemm_plan(e.name, NULL, 1, tp.p, TMA_TILE0 + e.tile, false, &pl, &passed)) return false;
    const char *why = run_broken<Tile, WGRAD>(pl, 1, PROTO_KERNEL);
    bool caught = why != NULL;
    printf("%s %s: a ring one stage short is caught (%s)\n", caught ? "ok  " : "FAIL", e.name, why ? why : "not caught");
    if (!pl.tma.pingpong) return caught;
    why = run_broken<Tile, WGRAD>(pl, 0, PROTO_NO_TURNS);
    printf("%s %s: ping-pong consumers not waiting for their turn are caught (%s)\n", why ? "ok  " : "FAIL", e.name,
           why ? why : "not caught");
    return caught && why != NULL;
}

/* A cluster following a broken protocol must fail the checks: consumers that release a stage in
   their own CTA only (a producer then refills, through its multicast, a stage of the peer whose
   consumers may not have read it yet), or full barriers that expect only their own CTA's bytes
   (the peer's half of B then lands after the phase has completed). */
bool check_broken_cluster(cluster_protocol proto, const char *what)
{
    const tma_case e = {"broken cluster", CUDNN_DATA_HALF, 2, 4, 256, 256, 8, 8, 3, 3, 1, 1, 1, 1, false, false, false, 1, 0, 2, NULL};
    tma_problem<__half> tp(e);
    igemm_plan pl;
    bool passed;
    if (!emu_igemm_plan(e.name, NULL, 2, tp.p, TMA_C2_TILE0, false, &pl, &passed)) return false;
    typedef igemm_tma_tile<128, 256, 4, 2> Tile;
    bool caught = true;
    const char *why = NULL;
    for (unsigned seed = 0; seed < 3 && caught; seed++)
        caught = (why = run_cluster<Tile, __half, false>(pl.prm, pl.tma, 0, 2, Tile::STAGES, proto, seed)) != NULL;
    printf("%s a cluster %s is caught (%s)\n", caught ? "ok  " : "FAIL", what, why ? why : "not caught");
    return caught;
}

/* The staged epilogue's buffer (igemm_tma_staged::at) is conflict-free: a half-warp's 8-byte
   puts (rows ln / 4 and ln / 4 + 8, columns 8 jj + 2 (ln % 4)) and a quarter-warp's 16-byte
   flush reads (row ln / 8 + 4 i, columns 4 (ln % 8)) touch each of the 32 banks at most once,
   and the 32 x 16 floats of a chunk lie at distinct places inside the warp's buffer. */
bool check_staged_banks()
{
    typedef igemm_tma_staged<igemm_tma_tile<128, 256, 4>, __half> E;
    bool ok = true;
    std::vector<int> seen(E::WARP_BYTES / 4, 0);
    for (int row = 0; row < 16; row++)
        for (int col = 0; col < E::COLS; col++) {
            const uint32_t a = E::at(row, col);
            ok = ok && a < E::WARP_BYTES && a % 4 == 0 && seen[a / 4]++ == 0;
        }
    for (int jj = 0; jj < E::COLS / 8; jj++)
        for (int h = 0; h < 2; h++)
            for (int half = 0; half < 2; half++) {
                int banks = 0;
                for (int ln = 16 * half; ln < 16 * half + 16; ln++)
                    for (int w = 0; w < 2; w++) {
                        const int bit = 1 << ((E::at((ln >> 2) + 8 * h, 8 * jj + 2 * (ln & 3)) / 4 + w) % 32);
                        ok = ok && !(banks & bit), banks |= bit;
                    }
            }
    for (int i = 0; i < 4; i++)
        for (int quarter = 0; quarter < 4; quarter++) {
            int banks = 0;
            for (int ln = 8 * quarter; ln < 8 * quarter + 8; ln++)
                for (int w = 0; w < 4; w++) {
                    const int bit = 1 << ((E::at((ln >> 3) + 4 * i, 4 * (ln & 7)) / 4 + w) % 32);
                    ok = ok && !(banks & bit), banks |= bit;
                }
        }
    printf("%s the staged epilogue's buffer: distinct places, puts and flush reads free of bank conflicts\n",
           ok ? "ok  " : "FAIL");
    return ok;
}

/* The staged epilogue and its ping-pong twin serve by default: a 128x256 fp16 forward plans them
   without OPENCUDNN_UNPROVEN, over 64 channels (9 K tiles) and over 128 (18: a long mainloop). */
bool check_staged_planned()
{
    bool ok = true;
    unsetenv("OPENCUDNN_UNPROVEN");
    for (int c : {64, 128}) {
        const tma_case e = {"staged plan", CUDNN_DATA_HALF, 0, 2, c, 256, 8, 8, 3, 3, 1, 1, 1, 1, false, false, false,
                            1, 0, 1, NULL};
        tma_problem<__half> tp(e);
        igemm_plan pl;
        bool passed;
        ok = ok && emu_igemm_plan(e.name, NULL, 1, tp.p, TMA_TILE0, false, &pl, &passed) && pl.tma.staged &&
             pl.tma.pingpong;
    }
    emu_tma_switches();
    printf("%s the staged epilogue and ping-pong are planned by default\n", ok ? "ok  " : "FAIL");
    return ok;
}

/* The filter gradient's wave-aware split count (wave_splits) on ResNet-50's 3x3 layers, 132
   multiprocessors: {tiles, K tiles, most splits, the count of least time}. The l3 layer at batch
   64: 7 splits of 28 K tiles in one wave (12 of 17 in two before). */
bool check_wave_splits()
{
    struct {
        int64_t tiles, ktiles, most, want;
    } const cases[] = {
        {18, 196, 12, 7},  /* 3x3 256 -> 256, 14x14, batch 64 (128x256 tiles) */
        {18, 784, 49, 7},  /* the same at batch 256: 22 would fill 3 waves, for 3 times the partials */
        {3, 3136, 64, 44}, /* 3x3 64 -> 64, 56x56, batch 64 (64x256 tiles) */
        {5, 784, 49, 26},  /* 3x3 128 -> 128, 28x28, batch 64 */
        {72, 49, 3, 1},    /* 3x3 512 -> 512, 7x7, batch 64: one wave of 49 K tiles beats two of 17 */
        {5, 20, 1, 1},     /* too few K tiles to split */
    };
    bool ok = true;
    for (const auto &c : cases) {
        const int64_t got = wave_splits(c.tiles, c.ktiles, 132, c.most);
        if (got != c.want) {
            printf("FAIL wave_splits(%ld tiles, %ld K tiles, at most %ld): %ld, want %ld\n", (long)c.tiles,
                   (long)c.ktiles, (long)c.most, (long)got, (long)c.want);
            ok = false;
        }
    }
    printf("%s the filter gradient's wave-aware split counts\n", ok ? "ok  " : "FAIL");
    return ok;
}

} // namespace

int main()
{
    emu_tma_switches();
    const cudnnDataType_t H = CUDNN_DATA_HALF, B = CUDNN_DATA_BFLOAT16;
    const tma_case cases[] = {
        /* name, type, tile, n, c, k, h, w, r, s, pad_h, pad_w, stride, dil, flip, bias_relu, kcrs, alpha, beta, sms */
        {"128x256 fp16 3x3 pad 1, 3 images across tiles, C 64, 3 tiles on 2 CTAs", H, 0, 3, 64, 240, 10, 11, 3, 3, 1,
         1, 1, 1, false, false, false, 1, 0, 2, NULL},
        {"256x128 bf16 3x3 pad 1, C 128, M and N edges, 4 tiles on 3 CTAs", B, 1, 3, 128, 240, 13, 13, 3, 3, 1, 1, 1, 1,
         false, false, false, 1, 0, 3, NULL},
        {"128x256 bf16 stride 2, pad (2, 1), C 72 (a channel tail), alpha beta", B, 0, 3, 72, 224, 17, 15, 3, 3, 2, 1, 2,
         1, false, false, false, 0.5, 0.75, 2, NULL},
        {"256x128 fp16 dilation 2, CONVOLUTION, bias ReLU z, 2 tiles on 1 CTA", H, 1, 2, 64, 128, 16, 14, 3, 3, 2, 2, 1,
         2, true, true, false, 1, 0.5, 1, NULL},
        {"128x256 fp16 1x1, C 40, KCRS filter packed", H, 0, 2, 40, 256, 14, 13, 1, 1, 0, 0, 1, 1, false, false, true, 1,
         0, 1, NULL},
        {"256x128 bf16 7x7 stride 2 pad 3 stem, C 8", B, 1, 1, 8, 128, 30, 27, 7, 7, 3, 3, 2, 1, false, false, false, 1,
         0, 1, NULL},
        {"128x256 fp16 5x5 pad 0, C 24, 20-pixel images inside a tile", H, 0, 6, 24, 240, 9, 8, 5, 5, 0, 0, 1, 1, false,
         false, false, 1, 0, 1, NULL},
        {"128x256 fp16 3x3 pad 1, K 250 (rows 500 bytes apart: stores element by element), bias ReLU z, an N edge", H, 0,
         3, 64, 250, 14, 14, 3, 3, 1, 1, 1, 1, false, true, false, 1, 0.5, 2, NULL},
        {"128x256 fp16 stride 9 declines", H, 0, 5, 64, 256, 40, 40, 3, 3, 1, 1, 9, 1, false, false, false, 1, 0, 1,
         "stride above 8"},
        {"128x256 fp16 padding 130 declines", H, 0, 1, 64, 256, 8, 8, 3, 3, 130, 130, 1, 1, false, false, false, 1, 0, 1,
         "box corners"},
        {"128x256 fp16 dilation 128 declines", H, 0, 1, 64, 256, 40, 40, 3, 3, 128, 128, 1, 128, false, false, false, 1,
         0, 1, "im2col offsets"},
        /* backward data as a forward pass over dy (padding (R - 1) * dil - pad, taps mirrored) */
        {"dgrad 128x256 fp16 3x3 pad 1, K 64, C 240, ReLU gradient, 3 tiles on 2 CTAs", H, 0, 3, 240, 64, 10, 11, 3, 3,
         1, 1, 1, 1, false, true, false, 1, 0, 2, NULL, true},
        {"dgrad 256x128 bf16 5x5 pad 2, K 72 and C 100 (tails), alpha beta", B, 1, 3, 100, 72, 13, 13, 5, 5, 2, 2, 1, 1,
         false, false, false, 0.5, 0.75, 2, NULL, true},
        {"dgrad 128x256 bf16 3x3 dilation 2 pad 2, C 240, CONVOLUTION, 4 tiles on 1 CTA", B, 0, 2, 240, 128, 16, 16, 3,
         3, 2, 2, 1, 2, true, false, false, 1, 0, 1, NULL, true},
        {"dgrad 256x128 fp16 5x3 pad (1, 0), C 120, CONVOLUTION, beta", H, 1, 2, 120, 56, 16, 16, 5, 3, 1, 0, 1, 1, true,
         false, false, 1, 1, 2, NULL, true},
        {"dgrad 128x256 fp16 1x1, K 40, KCRS filter", H, 0, 2, 256, 40, 14, 13, 1, 1, 0, 0, 1, 1, false, false, true, 1,
         0, 1, NULL, true},
        {"dgrad 128x256 fp16 3x3 pad 3 (pad' -1: a positive lower corner)", H, 0, 2, 256, 64, 8, 8, 3, 3, 3, 3, 1, 1,
         false, false, false, 1, 0, 1, NULL, true},
        {"dgrad 128x256 fp16 stride 2 declines", H, 0, 2, 64, 64, 9, 9, 3, 3, 1, 1, 2, 1, false, false, false, 1, 0, 1,
         "_phases", true},
        {"dgrad 128x256 fp16 pad 140 (pad' -138) declines", H, 0, 2, 256, 64, 8, 8, 3, 3, 140, 140, 1, 1, false, false,
         false, 1, 0, 1, "box corners", true},
        /* the filter gradient: K over the pixels, both operands MN-major, columns padded per tap */
        {"wgrad 128x256 fp16 3x3 pad 1, C 64, K 128, N edge (3 of 12 blocks loaded), 3 tiles on 2 CTAs", H, 0, 2, 64,
         128, 16, 16, 3, 3, 1, 1, 1, 1, false, false, false, 1, 0, 2, NULL, false, true},
        {"wgrad 256x128 bf16 stride 2, pad (2, 1), C 120 (padded to 128), K 240, a pixel tail, alpha beta", B, 1, 3, 120,
         240, 17, 15, 3, 3, 2, 1, 2, 1, false, false, false, 0.5, 0.75, 4, NULL, false, true},
        {"wgrad 128x256 fp16 split-K (33 K tiles in 2 splits of 17), C 56 (padded to 64)", H, 0, 3, 56, 128, 26, 27, 3, 3,
         1, 1, 1, 1, false, false, false, 1, 0, 8, NULL, false, true},
        {"wgrad 256x128 fp16 dilation 2 pad 2, CONVOLUTION, C 200 (padded to 256), beta", H, 1, 2, 200, 256, 12, 13, 3,
         3, 2, 2, 1, 2, true, false, false, 1, 1, 3, NULL, false, true},
        {"wgrad 128x256 bf16 1x1 stride 2, C 256, K 192 (an A block not loaded), KCRS filter", B, 0, 2, 256, 192, 13, 13,
         1, 1, 0, 0, 2, 1, false, false, true, 1, 0, 2, NULL, false, true},
        {"wgrad 256x128 bf16 3x1 pad (1, 0), C 64, K 256, 3 splits (19, 19, 17 K tiles) on 3 CTAs, CONVOLUTION", B, 1,
         8, 64, 256, 22, 20, 3, 1, 1, 0, 1, 1, true, false, false, 1, 0, 3, NULL, false, true},
        {"wgrad 128x256 fp16 C 40 declines (padded to 64: mostly padding)", H, 0, 2, 40, 128, 16, 16, 3, 3, 1, 1, 1, 1,
         false, false, false, 1, 0, 1, "mostly padding", false, true},
        {"wgrad 128x256 fp16 stride 9 declines", H, 0, 2, 64, 128, 40, 40, 3, 3, 1, 1, 9, 1, false, false, false, 1, 0, 1,
         "stride above 8", false, true},
        /* clusters of 2 CTAs along M (tiles 2, 3: the _c2 entries), B multicast to both */
        {"c2 128x256 fp16 3x3 pad 1, 3 M tiles (the last pair's second past M), one cluster walking 2 pairs", H, 2, 3, 64,
         240, 10, 11, 3, 3, 1, 1, 1, 1, false, false, false, 1, 0, 2, NULL},
        {"c2 256x128 bf16 stride 2, pad (2, 1), C 72, 1 M tile (padded to 2), 2 N tiles, alpha beta", B, 3, 3, 72, 224,
         17, 15, 3, 3, 2, 1, 2, 1, false, false, false, 0.5, 0.75, 2, NULL},
        {"c2 dgrad 128x256 bf16 3x3 pad 1, K 72, C 240, CONVOLUTION, 3 M tiles on 1 cluster", B, 2, 3, 240, 72, 10, 11, 3,
         3, 1, 1, 1, 1, true, false, false, 1, 0, 2, NULL, true},
        {"c2 wgrad 128x256 fp16 3x3 pad 1, K 128 (1 M tile, padded to 2), N edge, 3 pairs on 1 cluster", H, 2, 2, 64,
         128, 16, 16, 3, 3, 1, 1, 1, 1, false, false, false, 1, 0, 2, NULL, false, true},
        {"c2 wgrad 128x256 fp16 K 360 (3 M tiles), C 128, split-K (2 splits), 12 clusters", H, 2, 3, 128, 360, 26, 27, 3,
         3, 1, 1, 1, 1, false, false, false, 1, 0, 24, NULL, false, true},
        {"c2 wgrad 256x128 bf16 stride 2, C 120, K 240, CONVOLUTION, beta", B, 3, 3, 120, 240, 17, 15, 3, 3, 2, 1, 2, 1,
         true, false, false, 1, 1, 4, NULL, false, true},
        /* where no cluster fits the GPU (OPENCUDNN_TEST_CLUSTERS=0: a MIG slice), the clustered
           tiles decline at the plan and the unclustered ones still plan */
        {"c2 128x256 fp16 declines where no cluster fits", H, 2, 3, 64, 240, 10, 11, 3, 3, 1, 1, 1, 1, false, false,
         false, 1, 0, 2, "no cluster of 2 CTAs", false, false, false, false, false, true},
        {"c2 wgrad 256x128 bf16 declines where no cluster fits", B, 3, 3, 120, 240, 17, 15, 3, 3, 2, 1, 2, 1, true, false,
         false, 1, 1, 4, "no cluster of 2 CTAs", false, true, false, false, false, true},
        {"128x256 fp16 unclustered, planned where no cluster fits", H, 0, 3, 64, 240, 10, 11, 3, 3, 1, 1, 1, 1, false,
         false, false, 1, 0, 2, NULL, false, false, false, false, false, true},
        /* the filter gradient's 64-row tile (tile 4: one consumer warpgroup, 5 stages) */
        {"w64 wgrad 64x256 fp16 3x3 pad 1, K 64, C 64 (576 columns: the last tile one block of four), 3 tiles on 2 CTAs",
         H, 4, 2, 64, 64, 16, 16, 3, 3, 1, 1, 1, 1, false, false, false, 1, 0, 2, NULL, false, true},
        {"w64 wgrad 64x256 bf16 split-K (4 splits: 17, 17, 17, 15 K tiles), K 64, C 64, CONVOLUTION, alpha beta", B, 4, 6, 64, 64, 26, 27, 3, 3,
         1, 1, 1, 1, true, false, false, 0.5, 0.75, 8, NULL, false, true},
        {"w64 wgrad 64x256 fp16 K 56 (an A block of 56 filters), C 120 (padded to 128), stride 2, pad (2, 1)", H, 4, 3,
         120, 56, 17, 15, 3, 3, 2, 1, 2, 1, false, false, false, 1, 0, 3, NULL, false, true},
        {"w64 wgrad 64x256 bf16 1x1 stride 2, K 64, C 256, KCRS filter", B, 4, 2, 256, 64, 13, 13, 1, 1, 0, 0, 2, 1, false,
         false, true, 1, 0, 2, NULL, false, true},
        {"w64 wgrad 64x256 fp16 K 40 declines (mostly padding)", H, 4, 2, 64, 40, 16, 16, 3, 3, 1, 1, 1, 1, false, false,
         false, 1, 0, 1, "mostly padding", false, true},
        {"w64 64x256 fp16 forward declines (the filter gradient's tile)", H, 4, 2, 64, 64, 16, 16, 3, 3, 1, 1, 1, 1, false,
         false, false, 1, 0, 1, "filter gradient's"},
        /* its 64-wide tile (tile 5: 64 x 64, 8 stages), for GEMMs of 64 columns */
        {"w64 wgrad 64x64 fp16 1x1, K 64, C 64 (one tile), split-K (4 splits: 17, 17, 17, 16 K tiles)", H, 5, 8, 64, 64,
         23, 23, 1, 1, 0, 0, 1, 1, false, false, false, 1, 0, 2, NULL, false, true},
        {"w64 wgrad 64x64 bf16 1x1 stride 2, K 48 (an A block of 48 filters), C 56 (padded to 64), CONVOLUTION, alpha beta",
         B, 5, 3, 56, 48, 13, 13, 1, 1, 0, 0, 2, 1, true, false, false, 0.5, 0.75, 1, NULL, false, true},
        {"w64 wgrad 64x64 fp16 3x3 pad 1, K 64, C 64 (9 column tiles, one a tap), NCHW, 9 tiles on 4 CTAs", H, 5, 2, 64,
         64, 12, 11, 3, 3, 1, 1, 1, 1, false, false, false, 1, 0, 4, NULL, false, true, false, true},
        {"w64 wgrad 64x64 fp16 C 40 declines (padded to 64: mostly padding)", H, 5, 2, 40, 64, 16, 16, 1, 1, 0, 0, 1, 1,
         false, false, false, 1, 0, 1, "mostly padding", false, true},
        {"w64 64x64 bf16 forward declines (the filter gradient's tile)", B, 5, 2, 64, 64, 16, 16, 1, 1, 0, 0, 1, 1, false,
         false, false, 1, 0, 1, "filter gradient's"},
        /* the narrow forward and backward-data tiles (6: 128x128 in 7 stages, 7: 256x64 in 5, 8:
           128x64 in 9), for 64 columns and for GEMMs the wide tiles leave the GPU idle on */
        {"narrow 128x128 fp16 3x3 pad 1, C 64, K 128, 3 images across tiles (an M edge), 3 tiles on 2 CTAs", H, 6, 3, 64,
         128, 10, 11, 3, 3, 1, 1, 1, 1, false, false, false, 1, 0, 2, NULL},
        {"narrow 128x128 bf16 stride 2, pad (2, 1), C 72 (a channel tail), K 224 (an N edge), alpha beta", B, 6, 3, 72,
         224, 17, 15, 3, 3, 2, 1, 2, 1, false, false, false, 0.5, 0.75, 2, NULL},
        {"narrow 256x64 fp16 3x3 pad 1, C 64, K 64 (ResNet's 64-channel layer), an M edge, 4 tiles on 3 CTAs", H, 7, 2,
         64, 64, 20, 20, 3, 3, 1, 1, 1, 1, false, false, false, 1, 0, 3, NULL},
        {"narrow 256x64 bf16 dilation 2, CONVOLUTION, bias ReLU z, K 56 (an N edge), 2 tiles on 1 CTA", B, 7, 2, 64, 56,
         16, 14, 3, 3, 2, 2, 1, 2, true, true, false, 1, 0.5, 1, NULL},
        {"narrow 128x64 fp16 3x3 pad 1, C 64, K 64, an M edge, 5 tiles on 2 CTAs", H, 8, 1, 64, 64, 25, 25, 3, 3, 1, 1, 1,
         1, false, false, false, 1, 0, 2, NULL},
        {"narrow 128x64 bf16 1x1, C 40, K 56 (an N edge), KCRS filter packed", B, 8, 2, 40, 56, 14, 13, 1, 1, 0, 0, 1, 1,
         false, false, true, 1, 0, 1, NULL},
        {"narrow 128x64 fp16 7x7 stride 2 pad 3 stem, C 8, NCHW", H, 8, 1, 8, 64, 30, 27, 7, 7, 3, 3, 2, 1, false, false,
         false, 1, 0, 1, NULL, false, false, false, true},
        {"narrow dgrad 128x64 fp16 3x3 pad 1, K 64, C 64 (ResNet's 64-channel layer), 5 tiles on 2 CTAs", H, 8, 1, 64, 64,
         25, 25, 3, 3, 1, 1, 1, 1, false, false, false, 1, 0, 2, NULL, true},
        {"narrow dgrad 256x64 bf16 3x3 pad 1, K 72 (a K tail), C 64, CONVOLUTION, alpha beta", B, 7, 2, 64, 72, 20, 20, 3,
         3, 1, 1, 1, 1, true, false, false, 0.5, 0.75, 3, NULL, true},
        {"narrow dgrad 128x128 fp16 5x5 pad 2, K 64, C 120 (an N edge), 3 tiles on 2 CTAs", H, 6, 3, 120, 64, 10, 11, 5,
         5, 2, 2, 1, 1, false, false, false, 1, 0, 2, NULL, true},
        {"narrow dgrad 128x64 bf16 3x3 pad 3 (pad' -1), NCHW, ReLU gradient", B, 8, 2, 64, 64, 8, 8, 3, 3, 3, 3, 1, 1,
         false, true, false, 1, 0, 1, NULL, true, false, false, true},
        {"narrow 128x64 fp16 ResNet-50's 3x3 64 -> 64 at 56x56, 25 tiles on 8 CTAs", H, 8, 1, 64, 64, 56, 56, 3, 3, 1, 1,
         1, 1, false, false, false, 1, 0, 8, NULL},
        {"narrow 256x64 bf16 ResNet-50's 1x1 256 -> 64 at 56x56, 13 tiles on 4 CTAs", B, 7, 1, 256, 64, 56, 56, 1, 1, 0,
         0, 1, 1, false, false, false, 1, 0, 4, NULL},
        {"narrow dgrad 256x64 fp16 ResNet-50's 3x3 64 -> 64 at 56x56, CONVOLUTION, ReLU gradient, 13 tiles on 5 CTAs", H,
         7, 1, 64, 64, 56, 56, 3, 3, 1, 1, 1, 1, true, true, false, 1, 0, 5, NULL, true},
        {"narrow dgrad 128x64 bf16 ResNet-50's 1x1 64 -> 256 at 56x56 (dx's 64 channels), 25 tiles on 6 CTAs", B, 8, 1,
         64, 256, 56, 56, 1, 1, 0, 0, 1, 1, false, false, false, 1, 0, 6, NULL, true},
        {"narrow 128x128 fp16 K 64 declines (half padding)", H, 6, 2, 64, 64, 16, 16, 3, 3, 1, 1, 1, 1, false, false,
         false, 1, 0, 1, "mostly padding"},
        {"narrow 128x64 fp16 5 tiles on 8 SMs decline (the cp.async tile's split-K serves)", H, 8, 1, 64, 64, 25, 25, 3,
         3, 1, 1, 1, 1, false, false, false, 1, 0, 8, "too few tiles"},
        {"128x256 fp16 6 tiles on 8 SMs (two thirds of a wave or more) plan", H, 0, 3, 64, 256, 16, 16, 3, 3, 1, 1, 1,
         1, false, false, false, 1, 0, 8, NULL},
        {"dgrad 256x128 bf16 5 tiles on 8 SMs decline", B, 1, 2, 128, 64, 25, 25, 3, 3, 1, 1, 1, 1, false, false, false,
         1, 0, 8, "too few tiles", true},
        {"narrow 128x64 fp16 wgrad declines (the forward pass's and backward data's tiles)", H, 8, 2, 64, 64, 16, 16, 3, 3,
         1, 1, 1, 1, false, false, false, 1, 0, 1, "forward pass's and backward data's", false, true},
        {"128x256 fp16 3x3 pad 1, C 64, bias ReLU without z (the bias form), an N edge", H, 0, 2, 64, 224, 18, 17, 3, 3,
         1, 1, 1, 1, false, true, false, 0.75, 0, 2, NULL},
        /* strided backward data, phase by phase on the TMA kernel (cuda:dgrad_igemm_tma_phases) */
        {"phases fp16 3x3 stride 2 pad 1, 22x21 (a phase of more pixels than its padding implies), C 256, K 64, no memset",
         H, 0, 3, 256, 64, 22, 21, 3, 3, 1, 1, 2, 1, false, false, false, 1, 0, 2, NULL, true, false, true},
        {"phases bf16 1x1 stride 2 pad 0 (ResNet downsampling), 3 phases without taps, C 256, K 128, alpha beta", B, 0,
         3, 256, 128, 22, 22, 1, 1, 0, 0, 2, 1, false, false, false, 0.5, 0.75, 2, NULL, true, false, true},
        {"phases fp16 3x3 stride 2 pad 0, 23x19, C 256, K 72 (a K tail), CONVOLUTION, beta", H, 0, 3, 256, 72, 23, 19, 3,
         3, 0, 0, 2, 1, true, false, false, 1, 1, 3, NULL, true, false, true},
        {"phases bf16 3x3 stride 3 pad 2, C 128 (the 256x128 tile), K 64, CONVOLUTION", B, 0, 5, 128, 64, 21, 21, 3, 3, 2,
         2, 3, 1, true, false, false, 1, 0, 1, NULL, true, false, true},
        {"phases fp16 5x5 stride 3 pad (1, 2), 2 or 1 taps a phase, C 256, K 64, alpha beta", H, 0, 5, 256, 64, 21, 21, 5,
         5, 1, 2, 3, 1, false, false, false, 0.5, 0.25, 2, NULL, true, false, true},
        {"phases fp16 5x5 stride 2 pad 0 dilation 3 (a phase of dilation 3, padding -1), C 256, K 64", H, 0, 3, 256, 64,
         21, 21, 5, 5, 0, 0, 2, 3, false, false, false, 1, 0, 2, NULL, true, false, true},
        {"phases bf16 3x3 stride 2 pad 2 dilation 2 (every other phase all taps, the rest none), CONVOLUTION, beta", B, 0,
         3, 256, 64, 21, 21, 3, 3, 2, 2, 2, 2, true, false, false, 1, 0.5, 2, NULL, true, false, true},
        {"phases bf16 3x3 stride 2 pad 1, C 64 (the narrow tiles), K 64, CONVOLUTION, alpha beta", B, 0, 3, 64, 64, 21,
         21, 3, 3, 1, 1, 2, 1, true, false, false, 0.5, 0.75, 2, NULL, true, false, true},
        {"phases fp16 3x3 stride 2 pad 1, 21x22, C 256, K 64, NCHW, alpha beta", H, 0, 3, 256, 64, 21, 22, 3, 3, 1, 1, 2,
         1, false, false, false, 0.5, 0.75, 2, NULL, true, false, true, true},
        {"phases bf16 1x1 stride 2 pad 0, 3 phases without taps, C 256, K 128, NCHW", B, 0, 2, 256, 128, 22, 22, 1, 1, 0,
         0, 2, 1, false, false, false, 1, 0, 2, NULL, true, false, true, true},
        {"phases fp16 stride 2, C 40 declines (mostly padding on every TMA tile)", H, 0, 3, 40, 64, 21, 21, 3, 3, 1, 1, 2,
         1, false, false, false, 1, 0, 2, "mostly padding", true, false, true},
        {"phases fp16 unit stride declines", H, 0, 3, 256, 64, 21, 21, 3, 3, 1, 1, 1, 1, false, false, false, 1, 0, 2,
         "unit stride", true, false, true},
    };
    const tma_case short_fwd = {"short ring, 128x256 forward", H, 0, 2, 64, 256, 8, 8, 3, 3, 1, 1, 1, 1, false, false,
                                false, 1, 0, 1, NULL};
    const tma_case short_w64 = {"short ring, 64x256 filter gradient (one consumer)", H, 4, 2, 64, 64, 16, 16, 3, 3, 1, 1,
                                1, 1, false, false, false, 1, 0, 1, NULL, false, true};
    int failed = !check_short_ring<igemm_tma_tile<128, 256, 4>, false>(short_fwd);
    failed += !check_short_ring<igemm_tma_tile<64, 256, 5>, true>(short_w64);
    const tma_case short_n64 = {"short ring, 64x64 filter gradient", H, 5, 2, 64, 64, 16, 16, 1, 1, 0, 0, 1, 1, false,
                                false, false, 1, 0, 1, NULL, false, true};
    failed += !check_short_ring<igemm_tma_tile<64, 64, 8>, true>(short_n64);
    const tma_case short_narrow = {"short ring, 128x64 forward", H, 8, 1, 64, 64, 16, 16, 3, 3, 1, 1, 1, 1, false, false,
                                   false, 1, 0, 1, NULL};
    failed += !check_short_ring<igemm_tma_tile<128, 64, 9>, false>(short_narrow);
    failed += !check_staged_banks();
    failed += !check_staged_planned();
    failed += !check_wave_splits();
    failed += !check_broken_cluster(PROTO_LOCAL_RELEASE, "releasing stages in its own CTA only");
    failed += !check_broken_cluster(PROTO_OWN_BYTES, "whose full barriers expect their own CTA's bytes only");
    for (const tma_case &e : cases) failed += e.dt == B ? !run_case<__nv_bfloat16>(e) : !run_case<__half>(e);
    printf("%d failed\n", failed);
    return failed ? 1 : 0;
}
