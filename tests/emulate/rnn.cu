/* rnn.cu: the per-thread code of src/cuda/rnn.cu (fwd_unit, bwd_unit, proj_unit, skip_dx_unit,
   offsets_unit, written __host__ __device__ for this) run on the CPU for every thread of a
   launch, against the host backend's kernels (src/host/rnn.c), which the test suite checks
   against the double-precision reference: so that the CUDA kernels' indexing (positions of the
   three layouts, directions, the inactive sequences that carry their states, the zeroed padding
   gradients, the projection's stores) is checked where no GPU is.

   Cases: every cell mode, both directions, the three layouts, an LSTM with a projection, and a
   batch with a sequence of length 0, one that has ended and one at its last step (an LSTM's
   cell written there before the clip; its backward's dcy past the clip's derivative), at a step
   where some are active and some not; float data (the host computes in double: results within a few float
   roundings) and double. Outputs are poisoned alike on both sides, so what one side leaves
   unwritten must be left unwritten by the other. Prints a line per case; exits 1 if any differs. */
#include "cuda/rnn.cu"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

uint32_t emu_seed = 77;
double emu_random(double lo, double hi)
{
    emu_seed = emu_seed * 1664525u + 1013904223u;
    return lo + (hi - lo) * (double)(emu_seed >> 8) / (double)(1u << 24);
}

/* A buffer of n elements of T: random, or poisoned (NaN). */
template <typename T> struct buf {
    std::vector<T> v;
    buf(int64_t n, bool poison)
    {
        v.resize((size_t)n);
        for (auto &e : v) e = poison ? (T)NAN : (T)emu_random(-1, 1);
    }
};

/* Two sides' outputs, compared element by element (NaN matches NaN). */
template <typename T> bool same(const char *what, const std::vector<T> &a, const std::vector<T> &b, double tol)
{
    for (size_t i = 0; i < a.size(); i++) {
        double x = (double)a[i], y = (double)b[i];
        if (std::isnan(x) && std::isnan(y)) continue;
        if (!(fabs(x - y) <= tol * fmax(1, fabs(y)))) {
            printf("  %s[%zu]: emulated %.9g, host %.9g\n", what, i, x, y);
            return false;
        }
    }
    return true;
}

struct emu_case {
    cudnnRNNMode_t mode;
    int dir;
    cudnnRNNDataLayout_t layout;
    bool proj;
};

/* One forward and one backward step, and the projection passes, on both sides. */
template <typename T> bool run_case(const emu_case &c, cudnnDataType_t dtype, double tol)
{
    typedef typename ocd_compute<T>::type C;
    const int T_ = 5, N = 4, H = 3, P = c.proj ? 2 : 3, G = ocd_rnn_gates(c.mode), S = ocd_rnn_saved_gates(c.mode);
    const int32_t lengths[N] = {5, 0, 3, 4}; /* at step 3: active, empty, ended, at its last step */
    int32_t lens_sorted[N] = {5, 4, 3, 0};   /* packed: non-increasing */
    const int32_t *lens = c.layout == CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED ? lens_sorted : lengths;
    int64_t pos = 0;
    if (c.layout == CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED)
        for (int n = 0; n < N; n++) pos += lens[n];
    else
        pos = (int64_t)T_ * N;
    int32_t offsets[T_], offsets_emu[T_];
    ocd_rnn_step s;
    memset(&s, 0, sizeof s);
    s.mode = c.mode, s.dtype = dtype, s.layout = c.layout;
    s.T = T_, s.N = N, s.H = H, s.P = P, s.s = 3, s.dir = c.dir, s.proj = c.proj;
    s.lengths = lens;
    s.offsets = offsets;
    s.clip = c.mode == CUDNN_LSTM, s.lclip = -0.7, s.rclip = 0.8;
    s.y_stride = 2 * P;
    s.x_stride = H;
    ocd_rnn_aux off = {};
    off.op = OCD_RNN_OFFSETS, off.dst = offsets, off.step = s;
    ocd_host_rnn_aux(NULL, &off);
    off.dst = offsets_emu;
    for (int t = 0; t < T_; t++) offsets_unit(off, t);
    bool ok = memcmp(offsets, offsets_emu, sizeof offsets) == 0;
    if (!ok) printf("  offsets differ\n");

    /* inputs */
    buf<C> gx(pos * G * H, false), gh((int64_t)N * G * H, false), cprev((int64_t)N * H, false);
    buf<T> x(pos * H, false), bw((int64_t)G * H, false), br((int64_t)G * H, false), hprev((int64_t)N * P, false);
    for (int g = 0; g < G; g++) s.bw[g] = &bw.v[(size_t)g * H], s.br[g] = g % 2 ? NULL : &br.v[(size_t)g * H];
    s.gx = c.mode == CUDNN_GRU ? NULL : gx.v.data(); /* GRU: skip input, x stands for W x */
    s.x = x.v.data();
    s.gh = gh.v.data();
    s.hprev = hprev.v.data();
    s.cprev = cprev.v.data();
    /* outputs of the forward step, both sides */
    buf<T> hnext[2] = {buf<T>((int64_t)N * P, true), buf<T>((int64_t)N * P, true)};
    buf<T> hfull[2] = {buf<T>((int64_t)N * H, true), buf<T>((int64_t)N * H, true)};
    buf<T> y[2] = {buf<T>(pos * 2 * P, true), buf<T>(pos * 2 * P, true)};
    buf<C> cnext[2] = {buf<C>((int64_t)N * H, true), buf<C>((int64_t)N * H, true)};
    buf<C> saved[2] = {buf<C>((int64_t)N * S * H, true), buf<C>((int64_t)N * S * H, true)};
    buf<T> r((int64_t)N * P, false); /* a stand-in for the W_p GEMM's result */
    for (int side = 0; side < 2; side++) {
        ocd_rnn_step f = s;
        f.hnext = hnext[side].v.data(), f.hfull = hfull[side].v.data(), f.y = y[side].v.data();
        f.cnext = cnext[side].v.data(), f.saved = saved[side].v.data();
        if (side == 0)
            for (int64_t i = 0; i < (int64_t)N * H; i++) fwd_unit<T>(f, i);
        else
            ocd_host_rnn_fwd_step(NULL, &f);
        if (c.proj) {
            ocd_rnn_aux a = {};
            a.op = OCD_RNN_PROJ_STORE, a.src = r.v.data(), a.step = f;
            if (side == 0)
                for (int64_t i = 0; i < (int64_t)N * P; i++) proj_unit<T>(a, i);
            else
                ocd_host_rnn_aux(NULL, &a);
        }
    }
    ok = ok && same("hnext", hnext[0].v, hnext[1].v, tol) && same("hfull", hfull[0].v, hfull[1].v, tol) &&
         same("y", y[0].v, y[1].v, tol) && same("cnext", cnext[0].v, cnext[1].v, tol) &&
         same("saved", saved[0].v, saved[1].v, tol);

    /* the backward step from the saved gates */
    buf<C> dh((int64_t)N * (c.proj ? H : P), false), dc((int64_t)N * H, false);
    buf<T> dy(pos * 2 * P, false);
    buf<C> dhprev[2] = {buf<C>((int64_t)N * P, true), buf<C>((int64_t)N * P, true)};
    buf<C> dcprev[2] = {buf<C>((int64_t)N * H, true), buf<C>((int64_t)N * H, true)};
    buf<T> dpre_x[2] = {buf<T>(pos * G * H, true), buf<T>(pos * G * H, true)};
    buf<T> dpre_h[2] = {buf<T>((int64_t)N * G * H, true), buf<T>((int64_t)N * G * H, true)};
    buf<T> dtot[2] = {buf<T>((int64_t)N * P, true), buf<T>((int64_t)N * P, true)};
    buf<T> dx[2] = {buf<T>(pos * H, false), buf<T>(pos * H, false)};
    dx[1].v = dx[0].v;
    for (int side = 0; side < 2; side++) {
        ocd_rnn_step b = s;
        b.saved = saved[1].v.data();
        b.dy = dy.v.data(), b.dh = dh.v.data(), b.dc = dc.v.data();
        b.dhprev = dhprev[side].v.data(), b.dcprev = dcprev[side].v.data();
        b.dpre_x = dpre_x[side].v.data(), b.dpre_h = dpre_h[side].v.data();
        if (c.proj) {
            ocd_rnn_aux a = {};
            a.op = OCD_RNN_PROJ_DTOT, a.dst = dtot[side].v.data(), a.step = b;
            if (side == 0)
                for (int64_t i = 0; i < (int64_t)N * P; i++) proj_unit<T>(a, i);
            else
                ocd_host_rnn_aux(NULL, &a);
        }
        if (side == 0)
            for (int64_t i = 0; i < (int64_t)N * H; i++) bwd_unit<T>(b, i);
        else
            ocd_host_rnn_bwd_step(NULL, &b);
        /* skip input's dx: the sum over gates, added */
        ocd_rnn_aux a = {};
        a.op = OCD_RNN_SKIP_DX, a.dst = dx[side].v.data(), a.src = b.dpre_x, a.count = H, a.rows = pos, a.add = true;
        a.step = b;
        if (side == 0)
            for (int64_t i = 0; i < pos * H; i++) skip_dx_unit<T>(a, i);
        else
            ocd_host_rnn_aux(NULL, &a);
    }
    ok = ok && same("dhprev", dhprev[0].v, dhprev[1].v, tol) && same("dcprev", dcprev[0].v, dcprev[1].v, tol) &&
         same("dpre_x", dpre_x[0].v, dpre_x[1].v, tol) && same("dpre_h", dpre_h[0].v, dpre_h[1].v, tol) &&
         same("dtot", dtot[0].v, dtot[1].v, tol) && same("dx", dx[0].v, dx[1].v, tol);
    return ok;
}

} // namespace

int main()
{
    static const cudnnRNNDataLayout_t layouts[] = {CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED,
                                                   CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED,
                                                   CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED};
    int failed = 0, cases = 0;
    for (int mode = 0; mode < 4; mode++)
        for (int dir = 0; dir < 2; dir++)
            for (int l = 0; l < 3; l++)
                for (int proj = 0; proj < (mode == CUDNN_LSTM ? 2 : 1); proj++) {
                    emu_case c = {(cudnnRNNMode_t)mode, dir, layouts[l], proj == 1};
                    bool f = run_case<float>(c, CUDNN_DATA_FLOAT, 2e-6);
                    bool d = run_case<double>(c, CUDNN_DATA_DOUBLE, 1e-13);
                    printf("mode %d dir %d layout %d proj %d: %s\n", mode, dir, (int)layouts[l], proj,
                           f && d ? "ok" : "DIFFERS");
                    failed += !(f && d);
                    cases++;
                }
    printf("%d of %d cases differ\n", failed, cases);
    return failed ? 1 : 0;
}
