/* conv_igemm_sm90.cu (emulation): the sm_90a implicit-GEMM convolution kernel
   (src/cuda/conv_igemm_sm90.cu) with every thread's own logic run on the CPU, against the
   double-precision reference of tests/ref: the plan (make_plan of src/cuda/conv_igemm.cu for the
   wgmma tiles, on a handle of compute capability 9.0), each thread's loaders writing their
   cp.async chunks (a host copy) into the swizzled stages of the CTA's shared memory, the K loop
   (ocd_wgmma_kloop, the kernel's own), the wgmma of both warpgroups read through the kernel's
   descriptors (emulated from the PTX ISA, wgmma_emulate.h), and the epilogue from each thread's
   accumulator registers (igemm_store_frags), split-K's partial tiles summed as the reduction
   kernel sums them.

   The K loop runs under a checker of its schedule: a stage is loaded only when no wgmma that read
   it is still pending as of the last __syncthreads (the other warpgroup's wgmma is known complete
   only through a barrier), a wgmma reads only stages whose copies have landed, been fenced to the
   async proxy and then synchronized, and nothing is pending at the end. It is also run for 3 to
   6 stages and 0 to 12 K tiles, and once on a ring one stage smaller than the loop believes,
   which the checker must reject.

   Cases (fp16 and bf16): every tile; forward with edge tiles in M and N, an odd pixel count, a K
   tail, stride 2, dilation 2 with CONVOLUTION mode and bias + ReLU, alpha and beta, split-K;
   backward data at unit stride (its filter re-packed into the workspace as the pack kernel does)
   and with stride 2 phase by phase, as the phases entry runs it; the filter gradient with edge
   tiles, stride 2 and split-K. TF32 (fp32 data), forward and backward data: every tile, channel
   counts that are multiples of 4 but not 8, NCHW activations (transposed into the workspace as
   launch_nhwc_copy does) with a KCRS filter, split-K and the stride phases. The stem (C = 3, its
   channels padded in the workspace as igemm_pad_channels pads them) in fp16 and TF32. The emulated wgmma keeps
   only the tf32 part of each operand, as the hardware does, and counts operands that arrive with
   low bits set: the kernel's rounding pass must leave none. The TF32 results are checked against
   the reference from the tf32-rounded inputs (to the fp32 sum's rounding) and the exact one (to
   the tests' TF32 tolerance); the TF32 filter gradient is declined.
   Prints a line per case; exits 1 if any differs. */
/* planned as in a build whose toolkit has sm_90a (only the kernel's host side runs here); set
   before the first include, as wgmma.cuh reads it there */
#define OCD_SM90A
#define IGEMM_PACK_TILED_MIN 4096 /* the tiled filter pack on the larger of these filters */
#include "cuda/conv_igemm.cu"
#include "cuda/conv_igemm_sm90.cu"

#include "wgmma_emulate.h"
#include "conv_igemm_emulate.h"

extern "C" {
#include "ref/conv.h"
}

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

/* ---- the schedule checker ---------------------------------------------------------------------- */

struct ring_check {
    int stages;
    int group = 0;                   /* cp.async groups committed */
    std::vector<int> write_group;    /* per stage: the group of its last load; -1 none pending */
    std::vector<int> state;          /* per stage: 0 empty, 1 issued, 2 landed, 3 fenced, 4 visible */
    std::vector<bool> converted;     /* per stage: converted since its last load */
    std::vector<int> reads;          /* per stage: wgmma groups reading it not yet complete */
    std::vector<bool> unread;        /* per stage: loaded, and no wgmma has read it since */
    std::vector<int> reads_at_sync;  /* reads as of the last __syncthreads */
    std::vector<int> mma_groups;     /* stage of each pending wgmma group, oldest first */
    const char *error = NULL;

    explicit ring_check(int s)
        : stages(s), write_group(s, -1), state(s, 0), converted(s, false), reads(s, 0), unread(s, false),
          reads_at_sync(s, 0)
    {
    }

    void fail(const char *why)
    {
        if (error == NULL) error = why;
    }
    void load(int s)
    {
        if (s < 0 || s >= stages) return fail("stage out of range");
        if (reads_at_sync[s] || reads[s]) fail("stage loaded while a wgmma reading it may be pending");
        if (state[s] == 1 || state[s] == 2) fail("stage loaded over copies still in flight");
        if (unread[s]) fail("stage loaded over a K tile not yet multiplied");
        write_group[s] = group, state[s] = 1, unread[s] = true, converted[s] = false;
    }
    void cp_commit()
    {
        group++;
    }
    void cp_wait(int n)
    {
        for (int s = 0; s < stages; s++)
            if (state[s] == 1 && write_group[s] < group - n) state[s] = 2;
    }
    void convert(int s)
    {
        if (s < 0 || s >= stages) return fail("stage out of range");
        if (state[s] != 2) fail("a stage converted before its copies landed, or after its proxy fence");
        converted[s] = true;
    }
    void fence_async()
    {
        for (int s = 0; s < stages; s++)
            if (state[s] == 2) state[s] = 3;
    }
    void sync()
    {
        for (int s = 0; s < stages; s++) {
            if (state[s] == 3) state[s] = 4;
            reads_at_sync[s] = reads[s];
        }
    }
    void mma(int s)
    {
        if (s < 0 || s >= stages) return fail("stage out of range");
        if (state[s] != 4) fail("wgmma reads a stage whose copies are not landed, fenced and synchronized");
        if (!converted[s]) fail("wgmma reads a stage not converted since it was loaded");
        if (!unread[s]) fail("wgmma reads a stage no K tile was loaded into since its last read");
        reads[s]++, unread[s] = false;
        mma_groups.push_back(s);
    }
    void mma_wait(int n)
    {
        while ((int)mma_groups.size() > n) {
            reads[mma_groups.front()]--;
            mma_groups.erase(mma_groups.begin());
        }
    }
    void finish()
    {
        for (int s = 0; s < stages; s++)
            if (reads[s] || state[s] == 1 || unread[s]) fail("work still pending after the loop");
    }
};

/* Ops for the schedule alone; `wrap` stages in the ring really (fewer than the loop's STAGES: a
   broken ring the checker must catch). */
struct sched_ops {
    ring_check &c;
    int wrap;
    int loads = 0, mmas = 0;
    void load(int, int s)
    {
        c.load(s % wrap);
        loads++;
    }
    void cp_commit()
    {
        c.cp_commit();
    }
    template <int N> void cp_wait()
    {
        c.cp_wait(N);
    }
    void convert(int s)
    {
        c.convert(s % wrap);
    }
    void fence_async()
    {
        c.fence_async();
    }
    void sync()
    {
        c.sync();
    }
    void mma(int s)
    {
        c.mma(s % wrap);
        mmas++;
    }
    template <int N> void mma_wait()
    {
        c.mma_wait(N);
    }
};

template <int STAGES> bool check_schedule(int wrap, int nkt)
{
    ring_check c(STAGES);
    sched_ops ops = {c, wrap};
    ocd_wgmma_kloop<STAGES>(ops, nkt);
    c.finish();
    if (c.error == NULL && (ops.loads != nkt || ops.mmas != nkt)) c.fail("not every K tile loaded and multiplied once");
    if (c.error && wrap == STAGES) printf("    %d stages, %d K tiles: %s\n", STAGES, nkt, c.error);
    return c.error == NULL;
}

bool check_schedules()
{
    bool ok = true, caught = true;
    for (int nkt = 0; nkt <= 12; nkt++) {
        ok = ok && check_schedule<3>(3, nkt) && check_schedule<4>(4, nkt) && check_schedule<5>(5, nkt) &&
             check_schedule<6>(6, nkt);
        /* with more K tiles than real stages, the short ring must clash */
        if (nkt > 5) caught = caught && !check_schedule<5>(4, nkt) && !check_schedule<4>(3, nkt);
    }
    printf("%s the K loop's schedule, 3 to 6 stages, 0 to 12 K tiles\n", ok ? "ok  " : "FAIL");
    printf("%s a ring one stage short is caught\n", caught ? "ok  " : "FAIL");
    return ok && caught;
}

/* ---- one CTA, thread by thread ------------------------------------------------------------------- */

template <class Tile, typename T, class Dir> struct cta_emu {
    static constexpr bool MN = !Dir::A_KMAJOR;
    typedef igemm_wgmma_shape<Tile, T, MN> Shape;
    typedef typename Shape::SA SA;
    typedef typename Shape::SB SB;
    typedef typename Dir::template ALoad<T, Tile::BM, Tile::THREADS, SA> ALoad;
    typedef typename Dir::template BLoad<T, Tile::BN, Tile::THREADS, SB> BLoad;
    static constexpr uint32_t BASE = 3 * 1024; /* the aligned start, as a shared address */

    const igemm_params &p;
    igemm_cta cta;
    std::vector<ALoad> al;
    std::vector<BLoad> bl;
    std::vector<uint8_t> smem;
    std::vector<float> d; /* [slice][thread][BN / 2], slice q = warpgroup * MI + mi */
    ring_check check;
    bool wgmma_ok = true;

    cta_emu(const igemm_params &prm, int bx, int by, int bz)
        : p(prm), al(Tile::THREADS), bl(Tile::THREADS), smem(BASE + Shape::SMEM - 1024),
          d((size_t)2 * Tile::MI * 128 * (Tile::BN / 2), 0.f), check(Tile::STAGES)
    {
        cta = igemm_cta_of(p, bx, by, bz, Tile::BM, Tile::BN, SA::BK);
        for (int tid = 0; tid < Tile::THREADS; tid++) {
            al[tid].setup(p, cta.m0, cta.n0, cta.g, tid);
            bl[tid].setup(p, cta.m0, cta.n0, cta.g, tid);
        }
        /* what no load writes must not be read: poison the stages */
        for (uint8_t &b : smem) b = 0xff;
    }

    /* the Ops of ocd_wgmma_kloop, for all threads at once */
    void load(int tile, int s)
    {
        check.load(s);
        for (int tid = 0; tid < Tile::THREADS; tid++) {
            al[tid].load((T *)&smem[BASE + Shape::a_stage(s)], cta.kt0 + tile, p);
            bl[tid].load((T *)&smem[BASE + Shape::b_stage(s)], cta.kt0 + tile, p);
        }
    }
    void cp_commit()
    {
        check.cp_commit();
    }
    template <int N> void cp_wait()
    {
        check.cp_wait(N);
    }
    void convert(int s)
    {
        check.convert(s);
        if constexpr (std::is_same<T, float>::value)
            for (int tid = 0; tid < Tile::THREADS; tid++) {
                if (p.round_a) igemm_wgmma_round_tf32<SA, Tile::BM, Tile::THREADS>(&smem[BASE + Shape::a_stage(s)], tid);
                if (p.round_b) igemm_wgmma_round_tf32<SB, Tile::BN, Tile::THREADS>(&smem[BASE + Shape::b_stage(s)], tid);
            }
    }
    void fence_async()
    {
        check.fence_async();
    }
    void sync()
    {
        check.sync();
    }
    void mma(int s)
    {
        check.mma(s);
        for (int q = 0; q < 2 * Tile::MI; q++)
            for (int ks = 0; ks < SA::BK / SA::KSTEP; ks++)
                wgmma_ok = wgmma_ok && emu_wgmma_ss<T, Tile::BN, MN>((float(*)[Tile::BN / 2]) & d[(size_t)q * 128 * (Tile::BN / 2)],
                                                                     smem, Shape::desc_a(BASE, s, q, ks),
                                                                     Shape::desc_b(BASE, s, ks), true);
    }
    template <int N> void mma_wait()
    {
        check.mma_wait(N);
    }

    /* Runs the CTA; NULL, or what went wrong. */
    const char *run()
    {
        ocd_wgmma_kloop<Tile::STAGES>(*this, cta.nkt);
        check.finish();
        if (check.error) return check.error;
        if (!wgmma_ok) return "a descriptor is malformed or reads outside shared memory";
        for (int tid = 0; tid < Tile::THREADS; tid++)
            for (int mi = 0; mi < Tile::MI; mi++) {
                const int q = tid / 128 * Tile::MI + mi, t = tid % 128;
                const float *r = &d[((size_t)q * 128 + t) * (Tile::BN / 2)];
                igemm_store_frags<T, 1, Tile::BN / 8>(p, [&](int, int j, int e) { return r[j * 4 + e]; },
                                                      cta.m0 + q * 64 + (t / 32) * 16, cta.n0, cta.g, cta.split,
                                                      tid % 32);
            }
        return NULL;
    }
};

/* The whole launch of igemm_wgmma_launch, then split-K's reduction. */
template <class Tile, typename T, class Dir> const char *emulate_launch(const igemm_params &p)
{
    const int gx = (p.M + Tile::BM - 1) / Tile::BM, gy = (p.N + Tile::BN - 1) / Tile::BN, gz = p.groups * p.splits;
    for (int bz = 0; bz < gz; bz++)
        for (int by = 0; by < gy; by++)
            for (int bx = 0; bx < gx; bx++) {
                cta_emu<Tile, T, Dir> cta(p, bx, by, bz);
                if (const char *why = cta.run()) return why;
            }
    if (p.splits > 1)
        igemm_reduce_all<T>(p);
    return NULL;
}

/* emulate_launch for direction dir (no TF32 filter gradient: make_plan declines it). */
template <class Tile, typename T> const char *emulate_dir(enum ocd_conv_dir dir, const igemm_params &p)
{
    if (dir == OCD_CONV_FWD) return emulate_launch<Tile, T, igemm_dir_fwd>(p);
    if (dir == OCD_CONV_BWD_DATA) return emulate_launch<Tile, T, igemm_dir_dgrad>(p);
    if constexpr (std::is_same<T, float>::value)
        return "a TF32 filter gradient was planned";
    else
        return emulate_launch<Tile, T, igemm_dir_wgrad>(p);
}

/* ---- cases ---------------------------------------------------------------------------------------- */

struct emu_case {
    const char *name;
    enum ocd_conv_dir dir;
    cudnnDataType_t dt; /* half, bfloat16, or float (TF32) */
    int tile;           /* wgmma tile index */
    int n, c, k, h, w, r, s, pad, stride, dil;
    bool flip, bias_relu;
    double alpha, beta;
    int sm_count;
    int splits; /* expected; -1: the phases choose theirs */
    bool nchw = false;            /* activations NCHW and the filter KCRS (transposed, packed into the workspace) */
    const char *declines = NULL; /* the plan must decline, with a reason holding this */
};

/* Plans p for the case's tile, packs the filter as the pack kernel does where the plan says so,
   and runs the emulated launch; false (with a line) when something fails. splits: the split
   count the plan must choose, or -1. */
template <typename T> bool emulate_problem(const emu_case &e, const struct ocd_conv_problem &p, int splits)
{
    igemm_plan pl;
    bool passed;
    if (!emu_igemm_plan(e.name, e.declines, e.sm_count, p, WGMMA_TILE0 + e.tile, e.dt == CUDNN_DATA_FLOAT, &pl, &passed))
        return passed;
    if (splits >= 0 && pl.prm.splits != splits) {
        printf("FAIL %s: %d splits, the case wants %d\n", e.name, pl.prm.splits, splits);
        return false;
    }
    std::vector<uint8_t> ws(pl.ws_bytes + 256);
    uint8_t *wsa = (uint8_t *)(((uintptr_t)ws.data() + 255) & ~(uintptr_t)255);
    emu_igemm_copies<T>(pl, p, wsa);
    if (pl.prm.splits > 1) pl.prm.epi.partial = (float *)(wsa + pl.ws_part);
    emu_tf32_unrounded = 0;

    const char *err;
    typedef igemm_wgmma_tile<128, 256, 4> Big;
    typedef igemm_wgmma_tile<256, 128, 4> Tall;
    typedef igemm_wgmma_tile<128, 128, 5> Small;
    typedef igemm_wgmma_tile<128, 64, 6> Tiny;
    if (e.tile == 0)
        err = emulate_dir<Big, T>(p.dir, pl.prm);
    else if (e.tile == 1)
        err = emulate_dir<Tall, T>(p.dir, pl.prm);
    else if (e.tile == 3)
        err = emulate_dir<Tiny, T>(p.dir, pl.prm);
    else
        err = emulate_dir<Small, T>(p.dir, pl.prm);
    if (!err && emu_tf32_unrounded) err = "tf32 operands reached wgmma unrounded";
    if (err) {
        printf("FAIL %s: %s\n", e.name, err);
        return false;
    }
    return true;
}

/* cvt.rna.tf32.f32 of a float value (10 mantissa bits, ties away from zero), for the reference
   of the TF32 cases. */
double tf32_rna(double v)
{
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    u = (u + 0x1000u) & 0xffffe000u;
    memcpy(&f, &u, 4);
    return f;
}

template <typename T> bool run_case(const emu_case &e)
{
    const cudnnDataType_t dt = e.dt;
    struct ref_conv rc;
    memset(&rc, 0, sizeof rc);
    rc.nsp = 2, rc.n = e.n, rc.c = e.c, rc.k = e.k, rc.groups = 1, rc.convolution = e.flip;
    rc.in[0] = e.h, rc.in[1] = e.w, rc.filt[0] = e.r, rc.filt[1] = e.s;
    rc.pad[0] = rc.pad[1] = e.pad, rc.stride[0] = rc.stride[1] = e.stride, rc.dil[0] = rc.dil[1] = e.dil;
    if (!ref_conv_out_dims(&rc)) return false;
    const int P = rc.out[0], Q = rc.out[1];

    struct ocd_conv_problem p;
    memset(&p, 0, sizeof p);
    p.dir = e.dir;
    const bool dgrad = e.dir == OCD_CONV_BWD_DATA, wgrad = e.dir == OCD_CONV_BWD_FILTER;
    p.s.nsp = 2, p.s.n = e.n, p.s.c = e.c, p.s.k = e.k, p.s.groups = 1, p.s.flip = e.flip;
    for (int i = 0; i < 2; i++) {
        p.s.in[i] = rc.in[i], p.s.filt[i] = rc.filt[i], p.s.out[i] = rc.out[i];
        p.s.pad[i] = e.pad, p.s.stride[i] = e.stride, p.s.dilation[i] = e.dil;
    }
    p.x = e.nchw ? nchw(dt, e.n, e.c, e.h, e.w) : nhwc(dt, e.n, e.c, e.h, e.w);
    p.y = e.nchw ? nchw(dt, e.n, e.k, P, Q) : nhwc(dt, e.n, e.k, P, Q);
    /* the forward pass reads a KRSC filter in place; backward data (and NCHW) re-packs a KCRS one */
    const bool kcrs = dgrad || e.nchw;
    p.w = kcrs ? nchw(dt, e.k, e.c, e.r, e.s) : nhwc(dt, e.k, e.c, e.r, e.s);
    p.w_format = kcrs ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC;
    p.compute = CUDNN_DATA_FLOAT, p.math = CUDNN_TENSOR_OP_MATH;
    p.alpha = e.alpha, p.beta = e.beta;

    emu_rng rng = {(uint32_t)(e.c * 131 + e.k)};
    const size_t nx = (size_t)ref_conv_x_count(&rc), nw = (size_t)ref_conv_w_count(&rc), ny = (size_t)ref_conv_y_count(&rc);
    std::vector<T> x(nx), w(nw), y(ny), bias(e.k);
    std::vector<double> xd(nx), wd(nw), yd(ny), biasd(e.k);
    const struct ocd_tensor_view &wv = p.w;
    /* logical NCHW (KCRS) double copies in the reference's order */
    for (long n = 0, i = 0; n < e.n; n++)
        for (long c = 0; c < e.c; c++)
            for (long h = 0; h < e.h; h++)
                for (long ww = 0; ww < e.w; ww++, i++) {
                    T &v = x[at(p.x, n, c, h, ww)];
                    v = T(rng.next());
                    xd[i] = ocd_cuda_load(&v);
                }
    for (long k = 0, i = 0; k < e.k; k++)
        for (long c = 0; c < e.c; c++)
            for (long r = 0; r < e.r; r++)
                for (long s = 0; s < e.s; s++, i++) {
                    T &v = w[at(wv, k, c, r, s)];
                    v = T(rng.next());
                    wd[i] = ocd_cuda_load(&v);
                }
    for (long n = 0, i = 0; n < e.n; n++)
        for (long k = 0; k < e.k; k++)
            for (long h = 0; h < P; h++)
                for (long ww = 0; ww < Q; ww++, i++) {
                    T &v = y[at(p.y, n, k, h, ww)];
                    v = T(rng.next());
                    yd[i] = ocd_cuda_load(&v);
                }
    for (int k = 0; k < e.k; k++) bias[k] = T(rng.next()), biasd[k] = ocd_cuda_load(&bias[k]);
    p.x_data = x.data(), p.w_data = w.data(), p.y_data = y.data();
    if (e.bias_relu) {
        p.ep.on = true, p.ep.relu = true, p.ep.alpha2 = e.beta, p.ep.z = e.beta != 0 ? y.data() : NULL;
        p.ep.bias = bias.data();
        p.ep.bias_view = nhwc(dt, 1, e.k, 1, 1);
    }

    /* the reference: the destination's old values (beta, or z) and the result, from the inputs
       as given (want) and, for TF32, also from the convolution's inputs rounded to tf32 as the
       kernel rounds them (want_rounded: then only the fp32 sum's rounding differs) */
    const bool tf32 = dt == CUDNN_DATA_FLOAT;
    auto reference = [&](bool round) {
        std::vector<double> xr = xd, wr = wd, yr = yd, out;
        if (round)
            for (std::vector<double> *v : {&xr, &wr, &yr})
                for (double &a : *v) a = tf32_rna(a);
        if (wgrad) {
            out.assign(nw, 0);
            ref_conv_bwd_filter(&rc, xr.data(), yr.data(), out.data());
            for (size_t i = 0; i < nw; i++) out[i] = e.alpha * out[i] + e.beta * wd[i];
        } else if (dgrad) {
            out.assign(nx, 0);
            ref_conv_bwd_data(&rc, yr.data(), wr.data(), out.data());
            for (size_t i = 0; i < nx; i++) out[i] = e.alpha * out[i] + e.beta * xd[i];
        } else {
            out.assign(ny, 0);
            ref_conv_fwd(&rc, xr.data(), wr.data(), out.data());
            for (size_t i = 0; i < ny; i++) {
                out[i] = e.alpha * out[i] + e.beta * yd[i];
                if (e.bias_relu) out[i] = fmax(out[i] + biasd[(i / ((size_t)P * Q)) % e.k], 0.0);
            }
        }
        return out;
    };
    const std::vector<double> want = reference(false), want_rounded = tf32 ? reference(true) : want;

    if (e.declines) return emulate_problem<T>(e, p, e.splits);
    if (dgrad && e.stride > 1) { /* the phases entry's sub-problems, one after the other */
        for (int ph = 0; ph < phase_count(&p); ph++) {
            struct ocd_conv_problem sub;
            bool taps, pixels;
            phase_problem(&p, ph, (int)sizeof(T), &sub, &taps, &pixels);
            if (!pixels) continue;
            if (!taps) {
                printf("FAIL %s: the case's phases must all have taps\n", e.name);
                return false;
            }
            if (!emulate_problem<T>(e, sub, -1)) return false;
        }
    } else if (!emulate_problem<T>(e, p, e.splits)) {
        return false;
    }
    /* within the destination type's rounding of a sum in fp32; TF32: within the fp32 sum's
       rounding of the result from tf32-rounded inputs, and within the tests' TF32 tolerance
       (tconv_tolerance: 4e-2) of the exact one */
    const std::vector<T> &got = wgrad ? w : dgrad ? x : y;
    const struct ocd_tensor_view &gv = wgrad ? p.w : dgrad ? p.x : p.y;
    const long gn = wgrad ? e.k : e.n, gc = wgrad || dgrad ? e.c : e.k;
    const long gh = wgrad ? e.r : dgrad ? e.h : P, gw = wgrad ? e.s : dgrad ? e.w : Q;
    double worst = 0;
    for (long n = 0, i = 0; n < gn; n++)
        for (long c = 0; c < gc; c++)
            for (long h = 0; h < gh; h++)
                for (long ww = 0; ww < gw; ww++, i++) {
                    double g = ocd_cuda_load(&got[at(gv, n, c, h, ww)]);
                    double err_i = fabs(g - want[i]) / fmax(1.0, fabs(want[i]));
                    double err_r = fabs(g - want_rounded[i]) / fmax(1.0, fabs(want_rounded[i]));
                    if (!(err_i <= (tf32 ? 4e-2 : 1e-2)) || (tf32 && !(err_r <= 1e-4))) {
                        printf("FAIL %s: (n %ld, c %ld, %ld, %ld): %.9g, want %.9g (from tf32 inputs %.9g)\n", e.name,
                               n, c, h, ww, g, want[i], want_rounded[i]);
                        return false;
                    }
                    worst = fmax(worst, tf32 ? err_r : err_i);
                }
    printf("ok   %s: largest error %.2g%s\n", e.name, worst, tf32 ? " (against tf32-rounded inputs)" : "");
    return true;
}

} // namespace

int main()
{
    setenv("OPENCUDNN_UNPROVEN", "1", 1); /* the entries are gated until a GPU has run them */
    int failed = !check_schedules();
    const cudnnDataType_t H = CUDNN_DATA_HALF, B = CUDNN_DATA_BFLOAT16, F = CUDNN_DATA_FLOAT;
    const emu_case cases[] = {
        /* name, dir, type, tile, n, c, k, h, w, r, s, pad, stride, dil, flip, bias_relu, alpha, beta, sms, splits */
        {"fwd 128x256 fp16, 361 pixels, N edge, K tail", OCD_CONV_FWD, H, 0, 1, 24, 240, 19, 19, 3, 3, 1, 1, 1, false,
         false, 1, 0, 2, 1},
        {"fwd 128x128 bf16, stride 2, 315 pixels, alpha beta", OCD_CONV_FWD, B, 2, 3, 40, 120, 29, 13, 3, 3, 1, 2, 1,
         false, false, 0.5, 0.75, 2, 1},
        {"fwd 128x128 fp16, dilation 2, CONVOLUTION, bias ReLU z", OCD_CONV_FWD, H, 2, 1, 16, 128, 20, 18, 3, 3, 2, 1, 2,
         true, true, 1, 0.5, 2, 1},
        {"fwd 128x64 fp16, split-K", OCD_CONV_FWD, H, 3, 2, 232, 128, 10, 10, 3, 3, 1, 1, 1, false, false, 1, 0, 64, 2},
        {"dgrad 128x256 fp16, 361 pixels, N edge", OCD_CONV_BWD_DATA, H, 0, 1, 240, 24, 19, 19, 3, 3, 1, 1, 1, false, false, 1,
         0, 2, 1},
        {"dgrad 128x128 bf16, CONVOLUTION, beta", OCD_CONV_BWD_DATA, B, 2, 2, 128, 40, 13, 13, 3, 3, 1, 1, 1, true,
         false, 1, 0.5, 2, 1},
        {"wgrad 128x256 fp16, N edge, pixel tail", OCD_CONV_BWD_FILTER, H, 0, 2, 24, 128, 9, 11, 3, 3, 1, 1, 1,
         false, false, 1, 0, 2, 1},
        {"wgrad 128x128 bf16, M edge, stride 2, CONVOLUTION, beta", OCD_CONV_BWD_FILTER, B, 2, 3, 40, 112, 15, 13, 3,
         3, 1, 2, 1, true, false, 0.5, 0.25, 2, 1},
        {"wgrad 128x128 fp16, split-K", OCD_CONV_BWD_FILTER, H, 2, 6, 24, 128, 20, 20, 3, 3, 1, 1, 1, false, false,
         1, 0, 64, 2},
        {"dgrad 128x64 fp16, stride 2 phases, CONVOLUTION", OCD_CONV_BWD_DATA, H, 3, 2, 128, 24, 16, 16, 3, 3, 1,
         2, 1, true, false, 1, 0, 2, -1},
        {"fwd 256x128 fp16, 450 pixels, K tail", OCD_CONV_FWD, H, 1, 2, 24, 128, 15, 15, 3, 3, 1, 1, 1, false,
         false, 1, 0, 2, 1},
        {"dgrad 256x128 bf16, beta", OCD_CONV_BWD_DATA, B, 1, 2, 128, 40, 16, 15, 3, 3, 1, 1, 1, false, false, 1,
         0.5, 2, 1},
        {"fwd 128x64 bf16, N edge, 225 pixels", OCD_CONV_FWD, B, 3, 1, 16, 56, 15, 15, 3, 3, 1, 1, 1, false, false,
         1, 0, 2, 1},
        {"dgrad 128x64 fp16, CONVOLUTION", OCD_CONV_BWD_DATA, H, 3, 1, 64, 24, 15, 15, 3, 3, 1, 1, 1, true, false,
         1, 0, 2, 1},
        {"wgrad 128x64 bf16, M and N edges", OCD_CONV_BWD_FILTER, B, 3, 2, 40, 120, 9, 11, 3, 3, 1, 1, 1, false,
         false, 1, 0, 2, 1},
        {"wgrad 256x128 fp16, M edge", OCD_CONV_BWD_FILTER, H, 1, 2, 24, 232, 9, 11, 3, 3, 1, 1, 1, false, false, 1,
         0, 2, 1},
        /* TF32 (fp32 data): forward and backward data, channel counts multiples of 4 but not of 8 */
        {"fwd 128x256 tf32, 361 pixels, N edge, K tail", OCD_CONV_FWD, F, 0, 1, 24, 240, 19, 19, 3, 3, 1, 1, 1, false,
         false, 1, 0, 2, 1},
        {"fwd 128x128 tf32 NCHW, C 20, stride 2, 315 pixels, alpha beta", OCD_CONV_FWD, F, 2, 3, 20, 120, 29, 13, 3, 3,
         1, 2, 1, false, false, 0.5, 0.75, 2, 1, true},
        {"fwd 256x128 tf32 NCHW, C 12, 450 pixels, bias ReLU z", OCD_CONV_FWD, F, 1, 2, 12, 128, 15, 15, 3, 3, 1, 1, 1,
         false, true, 1, 0.5, 2, 1, true},
        {"fwd 128x64 tf32, dilation 2, CONVOLUTION, split-K", OCD_CONV_FWD, F, 3, 2, 232, 128, 10, 10, 3, 3, 2, 1, 2,
         true, false, 1, 0, 64, 4},
        {"fwd 128x64 tf32, N edge, 225 pixels", OCD_CONV_FWD, F, 3, 1, 28, 60, 15, 15, 3, 3, 1, 1, 1, false, false, 1,
         0, 2, 1},
        {"dgrad 128x256 tf32, 361 pixels, N edge", OCD_CONV_BWD_DATA, F, 0, 1, 240, 24, 19, 19, 3, 3, 1, 1, 1, false,
         false, 1, 0, 2, 1},
        {"dgrad 128x128 tf32 NCHW, K 20, CONVOLUTION, beta", OCD_CONV_BWD_DATA, F, 2, 2, 124, 20, 13, 13, 3, 3, 1, 1, 1,
         true, false, 1, 0.5, 2, 1, true},
        {"dgrad 256x128 tf32, beta", OCD_CONV_BWD_DATA, F, 1, 2, 128, 40, 16, 15, 3, 3, 1, 1, 1, false, false, 1, 0.5,
         2, 1},
        {"dgrad 128x64 tf32 NCHW, stride 2 phases, CONVOLUTION", OCD_CONV_BWD_DATA, F, 3, 2, 128, 28, 16, 16, 3, 3, 1,
         2, 1, true, false, 1, 0, 2, -1, true},
        {"fwd 128x64 tf32 NCHW, stem C 3 padded to 4, 7x7 stride 2", OCD_CONV_FWD, F, 3, 3, 3, 64, 23, 21, 7, 7, 3, 2, 1,
         false, false, 1, 0, 2, 1, true},
        {"fwd 128x64 fp16, stem C 3 padded to 8, 7x7 stride 2, bias ReLU", OCD_CONV_FWD, H, 3, 3, 3, 64, 23, 21, 7, 7,
         3, 2, 1, false, true, 1, 0, 2, 1},
        {"wgrad 128x128 tf32 is declined", OCD_CONV_BWD_FILTER, F, 2, 2, 24, 128, 9, 11, 3, 3, 1, 1, 1, false, false,
         1, 0, 2, 1, false, "filter gradient"},
    };
    for (const emu_case &e : cases)
        failed += e.dt == F   ? !run_case<float>(e)
                  : e.dt == B ? !run_case<__nv_bfloat16>(e)
                              : !run_case<__half>(e);
    printf("%d failed\n", failed);
    return failed ? 1 : 0;
}
