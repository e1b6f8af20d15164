/* rnn_persist.cu: the persistent RNN kernel of src/cuda/rnn_persist.cu (its phases: persist_prologue,
   persist_stage, persist_dots and persist_cells of the first form, persist_stage_pipelined and
   persist_units of the pipelined one, written __host__ __device__ for this) run on the CPU for
   every block and thread, both forms, under schedules where the blocks run at different speeds
   (run_pseudo_layer): a stage that finds a word of h_{t-1} not yet published runs again later,
   so every schedule must give the same bits, and a block must never overwrite a word another
   block has yet to read.

   Each case is a one-layer bidirectional network (both pseudo-layers through the kernel) whose
   input projection (gx = W x, as the layer loop's GEMM leaves it) is computed here in double. The
   results are compared with tests/ref/rnn.c's double-precision network on the same (rounded)
   weights and inputs, and with the host backend's step loop (a double GEMM for R h, then
   src/host/rnn.c's step) run on buffers poisoned alike: the outputs at padding positions, which
   neither writes, stay poisoned. Cases: every cell mode, LSTM with clipping, skip input, the
   three layouts, ragged lengths with a sequence of length 0, chunks of the batch that do not
   divide it, a last block with fewer units than the others; float, and half with its tolerance;
   the plan's refusal when a block's weights exceed shared memory, and (pipelined) the chunk's
   bound by the gate inputs its threads hold; the rows' batched load of the pipelined prologue
   with several batches a thread, and the units a warp of the pipelined form steps through.
   Prints a line per case; exits 1 if any differs. */
#include "cuda/rnn_persist.cu"
#include "emulate/rnn_emulate.h"

namespace {

/* One pseudo-layer's kernel on the CPU, of the first form or the pipelined one: every block's
   prologue (the grid barrier after it: none starts a step before all are done), then the
   blocks' phases under schedule `order`:
     0, 1  each block in turn runs a whole step, first to last or last to first (what a grid
           barrier per step would allow);
     2, 3  the lowest (highest) numbered block that can go on runs its next phase: one block
           runs ahead until it waits for the others;
     4     a random block runs its next phase, the cells (units) often in parts (other blocks
           polling between them: part of a step's words published); pipelined, the block's
           next stage often runs between those parts, as its warps that are done with their
           units go on to it while the others are not (no barrier between the units and the
           next stage).
   A stage that finds a word of h_{t-1} not yet published runs again later (counted in *waits);
   all blocks waiting is a deadlock. Before a block's cells write slot t % 2, every block must
   have read h_{t-2} from it (the slot's reuse). The exchange starts with stale words whose tags
   match this call's steps (what an earlier call leaves there), NaN in their h: the prologue's
   clearing must keep any from being read. */
template <typename T>
bool run_pseudo_layer(const ocd_rnn_seq &q, bool pipelined, int order, size_t smem_max, int *waits)
{
    const ocd_rnn_step &s = q.step;
    ocd_rnn_persist_plan pl;
    if (persist_shape(s, sizeof(T), sizeof(float), 3, smem_max, pipelined, &pl) != NULL) {
        printf("  plan refused\n");
        return false;
    }
    if (pl.blocks != 3 || pl.chunk != 2) printf("  (plan: %d blocks, chunks of %d)\n", pl.blocks, pl.chunk);
    uint64_t *ex = (uint64_t *)q.exchange;
    for (int64_t i = 0; i < 2 * (int64_t)s.N * s.P; i++) /* slot i / (N P): tags 1 + slot + 2k */
        ex[i] = persist_word(NAN, (uint32_t)(1 + i / ((int64_t)s.N * s.P) + 2 * (int)emu_random(0, s.T / 2 + 1)));
    std::vector<std::vector<float4>> smem((size_t)pl.blocks);
    for (auto &b : smem) {
        b.resize((pl.smem + 15) / 16);
        memset(b.data(), 0xff, b.size() * 16); /* NaN: shared memory read before written */
    }
    const persist_threads all = persist_all(pl.threads);
    for (int b = 0; b < pl.blocks; b++) persist_prologue<T>(q, pl, b, (unsigned char *)smem[(size_t)b].data(), all);
    struct block_at {
        int t = 0, n0 = 0, phase = 0, cells_done = 0; /* phase 0 stage, 1 dots, 2 cells (units) */
        bool next_staged = false;                    /* pipelined: the next stage ran during the units */
    };
    std::vector<block_at> at((size_t)pl.blocks);
    std::vector<std::vector<int>> read((size_t)pl.blocks, std::vector<int>((size_t)s.N, -1)); /* last step staged */
    /* Block b's stage at (t, n0); false when it must wait. */
    auto stage = [&](int b, int t, int n0) {
        unsigned char *sm = (unsigned char *)smem[(size_t)b].data();
        bool ok = pipelined ? persist_stage_pipelined<T>(q, pl, persist_dims_of<T>(q, pl, t, n0), b, t, n0, sm, all)
                            : persist_stage<T>(q, pl, b, t, n0, sm, all);
        if (!ok) {
            ++*waits;
            return false;
        }
        for (int n = n0; n < std::min(n0 + pl.chunk, s.N); n++) read[(size_t)b][(size_t)n] = t;
        return true;
    };
    /* Block b's next phase: false when its stage must wait (or it is done). */
    auto advance = [&](int b, bool split) {
        block_at &a = at[(size_t)b];
        unsigned char *sm = (unsigned char *)smem[(size_t)b].data();
        const int nc = std::min(pl.chunk, s.N - a.n0), units = nc * pl.units;
        if (a.t == s.T) return false;
        if (a.phase == 0) {
            if (!stage(b, a.t, a.n0)) return false;
            a.phase = pipelined ? 2 : 1;
        } else if (a.phase == 1) {
            persist_dots<T>(q, pl, a.t, a.n0, sm);
            a.phase = 2;
        } else {
            for (int o = 0; o < pl.blocks && a.t >= 2; o++)
                for (int n = a.n0; n < a.n0 + nc; n++)
                    if (read[(size_t)o][(size_t)n] < a.t - 1) {
                        printf("  block %d writes h_%d of sequence %d before block %d read h_%d\n", b, a.t, n, o, a.t - 2);
                        exit(1);
                    }
            /* the first form's cells split by threads, the pipelined units by unit */
            const int end = pipelined ? units : pl.threads;
            int hi = split ? std::max(a.cells_done + 1, (int)emu_random(a.cells_done, units + 1)) : end;
            if (hi >= units) hi = end;
            if (pipelined)
                persist_units<T>(q, pl, persist_dims_of<T>(q, pl, a.t, a.n0), b, a.t, a.n0, sm,
                                 persist_unit_range{a.cells_done, hi, 0, 0, 0, 0});
            else persist_cells<T>(q, pl, b, a.t, a.n0, sm, persist_threads{pl.threads, a.cells_done, hi});
            a.cells_done = hi;
            int t = a.t, n0 = a.n0 + pl.chunk;
            if (n0 >= s.N) n0 = 0, t++;
            if (hi < end) {
                if (pipelined && !a.next_staged && t < s.T && emu_random(0, 1) < 0.5) a.next_staged = stage(b, t, n0);
                return true;
            }
            a.cells_done = 0, a.t = t, a.n0 = n0;
            a.phase = a.next_staged ? 2 : 0;
            a.next_staged = false;
        }
        return true;
    };
    return emu_schedule(pl.blocks, s.T, order, advance, [&](int b) { return at[(size_t)b].t; });
}

/* The persistent kernel (of the form) over both pseudo-layers under schedule `order`
   (run_pseudo_layer). The first form takes and leaves the states in the slots; the pipelined one
   is given the call's hx, cx, hy and cy (the slots NULL: it must not touch them), or with
   no_states none of them (zero initial states, the final ones not stored: y alone). */
template <typename T>
bool run_persistent(const net<T> &m, bool pipelined, int order, size_t smem_max, bool no_states, outputs *o,
                    int *waits)
{
    std::vector<T> y((size_t)(m.pos * m.D * m.P), to_t<T>(NAN)), hs[2], hy[2], cy[2];
    std::vector<float> cs[2];
    std::vector<uint64_t> exchange(ocd_rnn_persist_exchange_bytes(m.N, m.P) / 8);
    for (int pl = 0; pl < m.D; pl++) {
        hs[pl].resize((size_t)2 * m.N * m.P), cs[pl].resize((size_t)2 * m.N * m.H);
        hy[pl].assign((size_t)m.N * m.P, to_t<T>(NAN)), cy[pl].assign((size_t)m.N * m.H, to_t<T>(NAN));
        ocd_rnn_seq q = {};
        q.step = m.step_of(pl, y.data(), hs[pl].data(), cs[pl].data());
        q.r = m.R[pl].data();
        q.exchange = exchange.data();
        if (pipelined) {
            q.step.hprev = q.step.cprev = NULL, q.step.hnext = q.step.cnext = NULL;
            if (!no_states) {
                q.hx = m.hx.data() + (size_t)pl * m.N * m.P, q.cx = m.cx_t.data() + (size_t)pl * m.N * m.H;
                q.hy = hy[pl].data(), q.cy = cy[pl].data();
            }
        }
        if (!run_pseudo_layer<T>(q, pipelined, order, smem_max, waits)) return false;
    }
    if (!pipelined) slot_states(m, hs, cs, hy, cy);
    if (no_states) hy[0].clear(), hy[1].clear(), cy[0].clear(), cy[1].clear();
    collect(m, y, hy, cy, o);
    return true;
}


/* A case: the persistent kernel, both forms, under the five schedules against the reference (y
   and hy within tol, cy within cell_tol), the host's step loop (within step_tol: it rounds h to
   the data type between steps, the kernel does not), the form's schedule 0 (the same bits) and
   the first form's schedule 0 (the same bits where P is odd: both forms sum each product in the
   same order; within step_tol where it is even: the pipelined form takes two columns an access).
   Then the pipelined form given no states against the first form from zero states, the plans'
   refusals and the pipelined chunk's bound. */
template <typename T> bool run_case(const emu_case &c, double tol, double cell_tol, double step_tol)
{
    net<T> m(c);
    const int units = (m.H + 2) / 3, orders = 5;
    outputs ref, host, runs[2][orders];
    run_reference(m, &ref);
    run_host_steps(m, &host);
    bool ok = true, lstm = c.mode == CUDNN_LSTM;
    const double forms_tol = m.P % 2 ? 0 : step_tol;
    for (int form = 0; form < 2 && ok; form++) {
        const bool pipelined = form == 1;
        const size_t smem_max = persist_smem_of(m.G, units, m.P, 2, m.N, sizeof(T), sizeof(float), pipelined).total;
        int waits = 0;
        for (int order = 0; order < orders && ok; order++) {
            ok = run_persistent(m, pipelined, order, smem_max, false, &runs[form][order], &waits) &&
                 same_outputs(runs[form][order], ref, "reference", tol, cell_tol, lstm) &&
                 same_outputs(runs[form][order], host, "host steps", step_tol, step_tol, lstm) &&
                 (order == 0 || same_outputs(runs[form][order], runs[form][0], "schedule 0", 0, 0, lstm)) &&
                 (form == 0 || order > 0 ||
                  same_outputs(runs[1][0], runs[0][0], "the first form", forms_tol, forms_tol, lstm));
        }
        if (ok && waits == 0) {
            printf("  no stage ever waited: the schedules did not exercise the exchange\n");
            ok = false;
        }
        if (!ok) printf("  (%s form)\n", pipelined ? "pipelined" : "first");
    }
    /* no states given to the pipelined form: zero initial states, as the first form's slots of
       zeros give, and nothing stored of the final ones */
    net<T> zero = m;
    std::fill(zero.hx.begin(), zero.hx.end(), to_t<T>(0));
    std::fill(zero.cx_t.begin(), zero.cx_t.end(), to_t<T>(0));
    std::fill(zero.cx.begin(), zero.cx.end(), 0.0f);
    const size_t smem_first = persist_smem_of(m.G, units, m.P, 2, m.N, sizeof(T), sizeof(float), false).total;
    const size_t smem_pipelined = persist_smem_of(m.G, units, m.P, 2, m.N, sizeof(T), sizeof(float), true).total;
    outputs first, none;
    int waits = 0;
    if (ok && !(run_persistent(zero, false, 0, smem_first, false, &first, &waits) &&
                run_persistent(zero, true, 4, smem_pipelined, true, &none, &waits) &&
                same("y", "the first form from zero states", none.y, first.y, forms_tol))) {
        printf("  (pipelined form without states)\n");
        ok = false;
    }
    ocd_rnn_persist_plan pl;
    ocd_rnn_step s = {};
    s.mode = c.mode, s.H = m.H, s.P = m.P, s.N = m.N;
    for (int form = 0; form < 2; form++) /* a block's weights beyond shared memory: refused */
        if (persist_shape(s, sizeof(T), sizeof(float), 3, (size_t)m.G * units * m.P * sizeof(T), form == 1, &pl) == NULL) {
            printf("  a block's weights beyond shared memory were not refused\n");
            ok = false;
        }
    /* pipelined: chunks of at most PERSIST_INPUTS gate inputs a thread (two sequences' of a block
       fill them: 5 sequences in chunks of 2, where the first form takes all 5), none where one
       sequence's exceed them */
    const int inputs = PERSIST_INPUTS * PERSIST_THREADS;
    s.H = 3 * (inputs / m.G / 2);
    if (persist_shape(s, sizeof(T), sizeof(float), 3, SIZE_MAX, true, &pl) != NULL || pl.chunk != 2 ||
        persist_shape(s, sizeof(T), sizeof(float), 3, SIZE_MAX, false, &pl) != NULL || pl.chunk != m.N) {
        printf("  the pipelined chunk is not bounded by the gate inputs (chunk %d)\n", pl.chunk);
        ok = false;
    }
    s.H = 3 * (inputs / m.G + 1);
    if (persist_shape(s, sizeof(T), sizeof(float), 3, SIZE_MAX, true, &pl) == NULL) {
        printf("  a block's gate inputs beyond its threads' were not refused\n");
        ok = false;
    }
    return ok;
}

/* persist_load_rows with several batches a thread: 5 threads, 16 loads each at once, over
   every block of G = 4 gates of H = 7 units in blocks of 3 (the last one short) and P = 9. */
bool check_load_rows()
{
    const int G = 4, H = 7, P = 9, U = 3, threads = 5;
    std::vector<float> r((size_t)G * H * P), w((size_t)G * U * P);
    for (auto &v : r) v = (float)emu_random(-1, 1);
    for (int b = 0; b < 3; b++) {
        std::fill(w.begin(), w.end(), NAN);
        for (int tid = 0; tid < threads; tid++) persist_load_rows<16>(r.data(), G, H, P, U, b, w.data(), tid, threads);
        for (int g = 0; g < G; g++)
            for (int u = 0; u < U; u++)
                for (int c = 0; c < P; c++) {
                    const int j = b * U + u;
                    const float want = j < H ? r[((size_t)g * H + j) * P + c] : 0.0f;
                    if (memcmp(&w[((size_t)g * U + u) * P + c], &want, sizeof want) != 0) {
                        printf("rows of R: block %d gate %d unit %d column %d differs\n", b, g, u, c);
                        return false;
                    }
                }
    }
    printf("rows of R, batched: ok\n");
    return true;
}

/* A warp's units on the device (persist_warp_units, persist_next_unit): unit i = warp + k warps
   as (i % U, i / U), for blocks of 32 to 1024 threads and 1 to 9 units. */
bool check_warp_units()
{
    for (int threads = 32; threads <= 1024; threads *= 2)
        for (int U = 1; U <= 9; U++)
            for (int warp = 0; warp < threads / PERSIST_WARP; warp++) {
                ocd_rnn_persist_plan pl = {};
                pl.threads = threads, pl.units = U;
                const persist_unit_range r = persist_warp_units(pl, warp);
                int u = r.u0, nl = r.nl0;
                for (int i = r.lo; i < 200; i += threads / PERSIST_WARP, persist_next_unit(r, U, &u, &nl))
                    if (u != i % U || nl != i / U) {
                        printf("warp units: %d threads, %d units, warp %d: unit %d as (%d, %d)\n", threads, U, warp, i,
                               u, nl);
                        return false;
                    }
            }
    printf("warp units: ok\n");
    return true;
}

} // namespace

int main()
{
    static const emu_case kinds[] = {
        {"RELU", CUDNN_RNN_RELU, {}, false, false, 6},      {"TANH", CUDNN_RNN_TANH, {}, false, false, 6},
        {"LSTM", CUDNN_LSTM, {}, false, false, 6},          {"LSTM clip", CUDNN_LSTM, {}, true, false, 6},
        {"GRU", CUDNN_GRU, {}, false, false, 6},            {"GRU skip input", CUDNN_GRU, {}, false, true, 6},
        {"LSTM 64 steps", CUDNN_LSTM, {}, false, false, 64}, {"GRU 64 steps", CUDNN_GRU, {}, false, false, 64},
        {"LSTM hidden 8", CUDNN_LSTM, {}, true, false, 6, 8}, {"GRU skip input hidden 8", CUDNN_GRU, {}, false, true, 6, 8},
        {"RELU hidden 10", CUDNN_RNN_RELU, {}, false, false, 6, 10},
    };
    int failed = 0, cases = 0;
    for (const emu_case &k : kinds)
        for (int layout = 0; layout < 3; layout++) { /* the three cudnnRNNDataLayout_t */
            emu_case c = k;
            c.layout = (cudnnRNNDataLayout_t)layout;
            bool f = run_case<float>(c, 2e-5, 2e-5, 2e-5);
            /* half: the states stay float from step to step, so y, hy and cy are the reference's
               rounded once to half however many steps (where the host's step loop rounds h at
               every step) */
            bool h = c.layout != CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED ||
                     run_case<__half>(c, ONE_HALF_ROUNDING, ONE_HALF_ROUNDING, 2e-2);
            printf("%s layout %d: %s\n", c.name, layout, f && h ? "ok" : "DIFFERS");
            failed += !(f && h);
            cases++;
        }
    failed += !check_load_rows() + !check_warp_units();
    printf("%d of %d cases differ\n", failed, cases + 2);
    return failed ? 1 : 0;
}
