/* attn_emulate.h: what the fused attention emulations (attn_flash.cu, attn_flash_bwd.cu) share:
   their random numbers and the geometry of a case, which each file's emu_case gives by the same
   field names (batch, beams, heads, max_q, max_kv, kv_shared, lengths, time_major, win).
   Included after the kernel file, which brings ocd_attn_operand. */
#ifndef OCD_TESTS_EMULATE_ATTN_EMULATE_H
#define OCD_TESTS_EMULATE_ATTN_EMULATE_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace {

/* A linear congruential stream of floats in [-1, 1) from a seed. */
struct emu_rng {
    uint32_t state;
    float operator()()
    {
        state = state * 1664525u + 1013904223u;
        return -1 + 2 * (float)(state >> 8) / (float)(1u << 24);
    }
};

/* Strides of operand x of a case with heads of D: packed [b][m][h][t][D], or time-major
   [t][b][m][h][D]; returns its element count. */
template <typename C> size_t attn_emu_layout(const C &c, int D, ocd_attn_operand &x, int beams, int T)
{
    int64_t *s = x.stride;
    s[4] = 1;
    if (c.time_major)
        s[2] = D, s[1] = (int64_t)c.heads * D, s[0] = (int64_t)beams * c.heads * D,
        s[3] = (int64_t)c.batch * beams * c.heads * D;
    else
        s[3] = D, s[2] = (int64_t)T * D, s[1] = (int64_t)c.heads * T * D, s[0] = (int64_t)beams * c.heads * T * D;
    return (size_t)c.batch * beams * c.heads * T * D;
}

/* The case's sequence lengths (queries, keys: full, or shortened per sequence when c.lengths)
   and windows (win 0: every key; 1: causal; 2: sliding, with rows without keys). */
template <typename C>
void attn_emu_sequences(const C &c, std::vector<int> &lq, std::vector<int> &lk, std::vector<int> &lo,
                        std::vector<int> &hi)
{
    lq.assign((size_t)c.batch * c.beams, 0), lk.assign((size_t)c.batch * (c.kv_shared ? 1 : c.beams), 0);
    lo.assign(c.max_q, 0), hi.assign(c.max_q, 0);
    for (size_t i = 0; i < lq.size(); i++) lq[i] = c.lengths ? c.max_q - 13 * (int)i % c.max_q : c.max_q;
    for (size_t i = 0; i < lk.size(); i++) lk[i] = c.lengths ? c.max_kv - 29 * (int)i % c.max_kv : c.max_kv;
    for (int i = 0; i < c.max_q; i++) {
        lo[i] = c.win == 2 ? i - 40 : 0;
        hi[i] = c.win == 0 ? c.max_kv : c.win == 1 ? i + 1 : i % 7 == 3 ? lo[i] : i + 50;
    }
}

} // namespace

#endif /* OCD_TESTS_EMULATE_ATTN_EMULATE_H */
