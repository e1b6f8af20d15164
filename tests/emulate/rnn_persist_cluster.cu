/* rnn_persist_cluster.cu: the cluster form of the persistent RNN kernel (src/cuda/
   rnn_persist_cluster.cu) run on the CPU for every block, warp and thread: its prologue phases,
   the warps' products through the tensor-core emulation (mma_emulate.h, on the kernel's own
   fragment addressing: cluster_load_fragments, cluster_b_frag, cluster_part_store), the cells
   and the stores into the peers' shared memory (the stores' table of cluster_stage), under schedules where the blocks
   run at different speeds. The mbarriers are modelled: a block waits for h_{t-1} until its
   barrier has received every byte of the phase; each store into a peer must find the phase of
   its step announced and the previous one complete, and the peer done reading the slot (its
   products of step t - 1), else the protocol would let a store overwrite what is still read.

   Each case is tests/emulate/rnn_emulate.h's one-layer bidirectional network (both pseudo-
   layers through the kernel), half and bfloat16, compared with the host backend's step loop
   (which rounds h to the data type between steps, as this form does), with the double-precision
   reference network, and across schedules (the same bits). Cases: every cell mode, LSTM with
   clipping, skip input, the three layouts, ragged lengths with a sequence of length 0; the plan's
   own cluster (a second block without units where one holds them all) and blocks of 8 units
   (several blocks, a last block with fewer units, K split over warps, two n tiles); no states
   given (zero initial states, nothing stored); and the plan's refusals and sizes. Prints a line per case; exits 1 if any differs. */
#include "cuda/rnn_persist_cluster.cu"
#include "emulate/rnn_emulate.h"
#include "mma_emulate.h"

#include <array>

namespace {

/* An mbarrier as the kernel uses it: phases announced (one arrival with the phase's bytes each),
   phases completed, bytes received in the current one. */
struct emu_bar {
    int announced = 0, done = 0;
    unsigned bytes = 0;
};

/* One pseudo-layer's kernel on the CPU under schedule `order`: every block's prologue (the
   cluster barrier after it), then the blocks' phases (0 the prefetch and the wait for h_{t-1},
   1 the products, 2 the cells, 3 the stores of h_t into the peers):
     0, 1  each block in turn runs a whole step, first to last or last to first;
     2, 3  the lowest (highest) numbered block that can go on runs its next phase;
     4     a random block runs its next phase, its stores often in parts (other blocks running
           between them: part of a step's h delivered).
   A wait that finds its phase incomplete runs again later (counted in *waits); all blocks
   waiting is a deadlock. */
template <typename T>
bool run_cluster_layer(const ocd_rnn_seq &q, const ocd_rnn_cluster_plan &pl, int order, int *waits)
{
    const ocd_rnn_step &s = q.step;
    const cluster_geom g = cluster_geom_of(s, pl.units);
    const int C = pl.ctas;
    std::vector<std::vector<float4>> smem((size_t)C);
    std::vector<std::vector<cluster_thread>> th((size_t)C, std::vector<cluster_thread>(CLUSTER_THREADS));
    std::vector<std::array<emu_bar, 2>> bar((size_t)C);
    auto sm = [&](int b) { return (unsigned char *)smem[(size_t)b].data(); };
    for (int b = 0; b < C; b++) {
        smem[(size_t)b].resize((pl.smem + 15) / 16);
        memset(sm(b), 0xff, smem[(size_t)b].size() * 16); /* NaN: shared memory read before written */
        for (int tid = 0; tid < CLUSTER_THREADS; tid++) cluster_stage<T>(q, g, b, tid, CLUSTER_THREADS, sm(b));
        for (int tid = 0; tid < CLUSTER_THREADS; tid++) {
            cluster_load_fragments<T>(q, g, b, tid / CLUSTER_WARP, tid % CLUSTER_WARP, &th[(size_t)b][(size_t)tid]);
            cluster_cell_init<T>(q, g, b, tid, &th[(size_t)b][(size_t)tid]);
        }
        for (int k = 0; k < 2 && k < s.T - 1; k++) bar[(size_t)b][(size_t)k].announced = 1;
    }
    struct block_at {
        int t = 0, phase = 0, stored = 0, products = -1; /* products: the last step whose products ran */
    };
    std::vector<block_at> at((size_t)C);
    for (int b = g.blocks; b < C; b++) at[(size_t)b].t = s.T; /* no units: idle */
    /* A store of h_t (the 16 bytes at piece, at offset) into block r. */
    auto receive = [&](int r, int offset, const unsigned char *piece, int t) {
        emu_bar &e = bar[(size_t)r][(size_t)(t & 1)];
        const int k = t >> 1;
        if (e.done != k || e.announced <= k || at[(size_t)r].products < t - 1) {
            printf("  h_%d stored into block %d: its phase %d (%d done, %d announced), its products at step %d\n", t, r,
                   k, e.done, e.announced, at[(size_t)r].products);
            exit(1);
        }
        const int slot = g.h + (t & 1) * g.h_slot, column = (offset - slot) / 2 % g.hs;
        if (offset < slot || offset + 16 > slot + s.N * g.hs * 2 || column + 8 > g.kt * 16) {
            printf("  h_%d stored outside its slot's rows and columns (offset %d)\n", t, offset);
            exit(1);
        }
        OCD_EMULATED_ALIGNED(offset, 16);
        memcpy(sm(r) + offset, piece, 16);
        if ((e.bytes += 16) == cluster_phase_bytes(s)) e.done++, e.bytes = 0;
    };
    /* Block b's products of step t: every warp through the emulated mma, as cluster_products. */
    auto products = [&](int b, int t) {
        const T *h = cluster_h<T>(sm(b), g, (t + 1) & 1);
        float *part = cluster_part(sm(b), g, t & 1);
        for (int warp = 0; warp < CLUSTER_WARPS; warp++) {
            const int mi = warp % g.mt, si = warp / g.mt, k0 = si * g.kper;
            if (si >= g.splits) continue;
            for (int nt = 0; nt < g.np / 8; nt++) {
                float acc[2][32][4] = {}, d[4];
                for (int k = 0; k < CLUSTER_KPER; k++) {
                    if (k >= g.kper || k0 + k >= g.kt) continue;
                    uint32_t a[32][4], bf[32][2];
                    for (int l = 0; l < 32; l++) {
                        memcpy(a[l], th[(size_t)b][(size_t)(warp * CLUSTER_WARP + l)].a[k], sizeof a[l]);
                        cluster_b_frag(h, g, nt, k0 + k, l, bf[l]);
                    }
                    mma<T>(acc[k & 1], a, bf);
                }
                for (int l = 0; l < 32; l++) {
                    for (int e = 0; e < 4; e++) d[e] = acc[0][l][e] + acc[1][l][e];
                    cluster_part_store(part, g, mi, si, nt, l, d);
                }
            }
        }
        at[(size_t)b].products = t;
    };
    /* Block b's next phase: false when it must wait (or it is done). */
    auto advance = [&](int b, bool split) {
        block_at &a = at[(size_t)b];
        if (a.t == s.T) return false;
        if (a.phase == 0) {
            for (int tid = 0; tid < CLUSTER_THREADS; tid++) cluster_prefetch<T>(q, g, a.t, &th[(size_t)b][(size_t)tid]);
            if (a.t > 0) {
                if (bar[(size_t)b][(size_t)((a.t - 1) & 1)].done <= (a.t - 1) >> 1) {
                    ++*waits;
                    return false;
                }
                if (a.t + 1 < s.T - 1) bar[(size_t)b][(size_t)((a.t + 1) & 1)].announced++;
            }
            a.phase = 1;
        } else if (a.phase == 1) {
            products(b, a.t);
            a.phase = 2;
        } else if (a.phase == 2) {
            for (int tid = 0; tid < CLUSTER_THREADS; tid++) cluster_cell<T>(q, g, a.t, sm(b), &th[(size_t)b][(size_t)tid]);
            a.phase = a.t == s.T - 1 ? 0 : 3, a.stored = 0;
            if (a.phase == 0) a.t++;
        } else {
            const int stores = g.stores;
            int hi = split ? std::max(a.stored + 1, (int)emu_random(a.stored, stores + 1)) : stores;
            hi = std::min(hi, stores);
            for (int i = a.stored; i < hi; i++) { /* the kernel's loop over the stores' table */
                const cluster_store st = ((const cluster_store *)(sm(b) + g.table))[i];
                if (st.rank < 0) continue;
                OCD_EMULATED_ALIGNED(st.src, 16);
                receive(st.rank, st.dst + (a.t & 1) * g.h_slot, sm(b) + st.src, a.t);
            }
            a.stored = hi;
            if (hi == stores) a.t++, a.phase = 0;
        }
        return true;
    };
    return emu_schedule(C, s.T, order, advance, [&](int b) { return at[(size_t)b].t; });
}

/* The cluster form over both pseudo-layers under schedule `order`, blocks of `units` units (0:
   the plan's), given the call's hx, cx, hy and cy, or with no_states none of them. */
template <typename T>
bool run_cluster(const net<T> &m, int units, int order, bool no_states, outputs *o, int *waits, int *blocks)
{
    std::vector<T> y((size_t)(m.pos * m.D * m.P), to_t<T>(NAN)), hy[2], cy[2], hs((size_t)2 * m.N * m.P);
    std::vector<float> cs((size_t)2 * m.N * m.H);
    for (int pl = 0; pl < m.D; pl++) {
        hy[pl].assign((size_t)m.N * m.P, to_t<T>(NAN)), cy[pl].assign((size_t)m.N * m.H, to_t<T>(NAN));
        ocd_rnn_seq q = {};
        q.step = m.step_of(pl, y.data(), hs.data(), cs.data()); /* the state slots: not the kernel's */
        q.step.hprev = q.step.cprev = NULL, q.step.hnext = q.step.cnext = NULL;
        q.r = m.R[pl].data();
        if (!no_states) {
            q.hx = m.hx.data() + (size_t)pl * m.N * m.P, q.cx = m.cx_t.data() + (size_t)pl * m.N * m.H;
            q.hy = hy[pl].data(), q.cy = cy[pl].data();
        }
        ocd_rnn_cluster_plan plan;
        if (const char *why = cluster_shape(q.step, SIZE_MAX, &plan)) {
            printf("  plan refused: %s\n", why);
            return false;
        }
        if (units) plan.units = units, plan.ctas = std::max(2, (m.H + units - 1) / units);
        const cluster_geom g = cluster_geom_of(q.step, plan.units);
        if (g.mt > CLUSTER_WARPS || g.kper > CLUSTER_KPER || m.N * plan.units > CLUSTER_THREADS) {
            printf("  blocks of %d units do not fit the kernel\n", plan.units);
            return false;
        }
        plan.smem = (size_t)g.total;
        *blocks = g.blocks; /* with units */
        if (!run_cluster_layer<T>(q, plan, order, waits)) return false;
    }
    if (no_states) hy[0].clear(), hy[1].clear(), cy[0].clear(), cy[1].clear();
    collect(m, y, hy, cy, o);
    return true;
}

/* The host's step loop with the initial states zero and the final ones left out (y alone). */
template <typename T> void run_host_steps_from_zero(const net<T> &m, outputs *o)
{
    net<T> zero = m;
    std::fill(zero.hx.begin(), zero.hx.end(), to_t<T>(0));
    std::fill(zero.cx_t.begin(), zero.cx_t.end(), to_t<T>(0));
    std::fill(zero.cx.begin(), zero.cx.end(), 0.0f);
    run_host_steps(zero, o);
    o->hy.clear(), o->cy.clear();
}

/* A case under blocks of `units` units (0: the plan's): the five schedules against the host's
   step loop (within tol) and the reference (within ref_tol), and against schedule 0 (the same
   bits); then no states given, against the host's step loop from zero states. */
template <typename T> bool run_case(const emu_case &c, int units, double tol, double ref_tol)
{
    net<T> m(c);
    const int orders = 5;
    outputs ref, host, zero, runs[orders], none;
    run_reference(m, &ref);
    run_host_steps(m, &host);
    run_host_steps_from_zero(m, &zero);
    const bool lstm = c.mode == CUDNN_LSTM;
    bool ok = true;
    int waits = 0, blocks = 0;
    for (int order = 0; order < orders && ok; order++)
        ok = run_cluster(m, units, order, false, &runs[order], &waits, &blocks) &&
             same_outputs(runs[order], host, "host steps", tol, tol, lstm) &&
             same_outputs(runs[order], ref, "reference", ref_tol, ref_tol, lstm) &&
             (order == 0 || same_outputs(runs[order], runs[0], "schedule 0", 0, 0, lstm));
    if (ok && waits == 0 && c.steps > 1 && blocks > 1) {
        printf("  no block ever waited: the schedules did not exercise the exchange\n");
        ok = false;
    }
    if (ok && !(run_cluster(m, units, 4, true, &none, &waits, &blocks) && same_outputs(none, zero, "host steps from zero", tol, tol, false))) {
        printf("  (no states given)\n");
        ok = false;
    }
    return ok;
}

/* The plan's refusals and choices. */
bool check_shapes()
{
    struct {
        cudnnRNNMode_t mode;
        int N, H, ctas; /* ctas 0: refused */
    } cases[] = {
        {CUDNN_LSTM, 1, 512, 16}, {CUDNN_LSTM, 16, 512, 16}, {CUDNN_LSTM, 17, 512, 0}, {CUDNN_LSTM, 1, 513, 0},
        {CUDNN_LSTM, 1, 1024, 0}, {CUDNN_GRU, 1, 512, 13},   {CUDNN_RNN_TANH, 1, 256, 2}, {CUDNN_LSTM, 1, 64, 2},
        {CUDNN_LSTM, 3, 6, 2},    {CUDNN_GRU, 1, 100, 2},
    };
    bool ok = true;
    for (const auto &k : cases) {
        ocd_rnn_step s = {};
        s.mode = k.mode, s.N = k.N, s.H = s.P = k.H;
        ocd_rnn_cluster_plan pl = {};
        const char *why = cluster_shape(s, 227 * 1024, &pl);
        if ((why == NULL) != (k.ctas != 0) || (why == NULL && pl.ctas != k.ctas)) {
            printf("shape mode %d N %d H %d: %s (%d blocks of %d units), expected %d blocks\n", (int)k.mode, k.N, k.H,
                   why ? why : "served", pl.ctas, pl.units, k.ctas);
            ok = false;
        }
    }
    printf("shapes: %s\n", ok ? "ok" : "DIFFER");
    return ok;
}

} // namespace

int main()
{
    static const struct {
        emu_case c;
        int units; /* 0: the plan's */
    } kinds[] = {
        {{"LSTM hidden 8", CUDNN_LSTM, {}, false, false, 6, 8}, 0},
        {{"LSTM clip hidden 20, blocks of 8", CUDNN_LSTM, {}, true, false, 6, 20}, 8},
        {{"GRU hidden 10, blocks of 8", CUDNN_GRU, {}, false, false, 6, 10}, 8},
        {{"GRU skip input hidden 10, blocks of 8", CUDNN_GRU, {}, false, true, 6, 10}, 8},
        {{"RELU hidden 10", CUDNN_RNN_RELU, {}, false, false, 6, 10}, 0},
        {{"TANH hidden 40, blocks of 8", CUDNN_RNN_TANH, {}, false, false, 5, 40}, 8},
        {{"LSTM hidden 72", CUDNN_LSTM, {}, false, false, 4, 72}, 0},
        {{"LSTM 24 steps hidden 24, blocks of 8", CUDNN_LSTM, {}, false, false, 24, 24}, 8},
        {{"GRU hidden 12 batch 13, blocks of 8", CUDNN_GRU, {}, false, false, 6, 12, 13}, 8},
        {{"LSTM hidden 512", CUDNN_LSTM, {}, false, false, 3, 512}, 0},
    };
    int failed = 0, cases = 0;
    for (const auto &k : kinds)
        for (int layout = 0; layout < 3; layout++) { /* the three cudnnRNNDataLayout_t */
            emu_case c = k.c;
            c.layout = (cudnnRNNDataLayout_t)layout;
            const bool big = c.hidden >= 72;
            if (big && layout != 1) continue; /* the large shapes once */
            const bool h = run_case<__half>(c, k.units, 2e-2, 5e-2);
            const bool bf = (big && c.hidden > 72) || run_case<__nv_bfloat16>(c, k.units, 1e-1, 2e-1);
            printf("%s layout %d: %s\n", c.name, layout, h && bf ? "ok" : "DIFFERS");
            failed += !(h && bf);
            cases++;
        }
    failed += !check_shapes();
    printf("%d of %d cases differ\n", failed, cases + 1);
    return failed ? 1 : 0;
}
