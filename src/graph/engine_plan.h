/* engine_plan.h: the execution plan of the backend API, as its builder (engine_plan.c) makes it
   and its executor (engine_exec.c) runs it: the tensors with memory (buffers), the stages in the
   order they run, each naming its buffers, and the workspace's layout. */
#ifndef OCD_GRAPH_ENGINE_PLAN_H
#define OCD_GRAPH_ENGINE_PLAN_H

#include "graph/engine.h"
#include "problem/gemm.h"
#include "problem/pointwise.h"
#include "problem/reduce.h"
#include "problem/transform.h"

#define OCD_PLAN_MAX_BUFS 48
#define OCD_PLAN_MAX_STAGES 16
#define OCD_PLAN_WS_ALIGN 256 /* bytes: every piece of the workspace starts at a multiple */

enum ocd_plan_buf_kind { OCD_BUF_USER, OCD_BUF_WORK, OCD_BUF_ALIAS };

/* A tensor with memory: a pointer of the variant pack, a piece of the workspace, or another
   buffer's memory (in place). */
struct ocd_plan_buf {
    int64_t uid;
    enum ocd_plan_buf_kind kind;
    int alias;             /* OCD_BUF_ALIAS */
    size_t off, bytes;     /* OCD_BUF_WORK */
    int64_t alignment;     /* OCD_BUF_USER: bytes the pointer is promised to be aligned to */
    bool by_value;         /* OCD_BUF_USER: the pointer is host memory */
    bool zero_scaled;      /* OCD_BUF_USER: read only as a pointwise B under ALPHA2 0
                              (engine_plan.c, zero_scaled_only) */
    struct ocd_tensor_view view; /* as stored */
};

enum ocd_plan_stage_kind {
    OCD_ST_CONV, OCD_ST_GEMM, OCD_ST_CHAIN, OCD_ST_REDUCE, OCD_ST_GENSTATS, OCD_ST_BN_SUMS, OCD_ST_BN_CHANNELS, OCD_ST_PAD
};

/* Buffers a stage names: at most a chain's operands or a channel pass's. */
enum { OCD_STAGE_BUFS = OCD_BNF_SLOTS > OCD_PW_MAX_OPERANDS ? OCD_BNF_SLOTS : OCD_PW_MAX_OPERANDS };

/* Buffer roles: CONV x w y z bias scale; GEMM a b c (the BLAS operands) bias; CHAIN inputs then outputs;
   REDUCE x y; GENSTATS x sum sqsum; BN_SUMS (OCD_BNS_*) x dy scale mean invstd dscale dbias dx; PAD src dst;
   BN_CHANNELS by enum ocd_bnf_slot. -1: none. */
enum { OCD_BNS_X, OCD_BNS_DY, OCD_BNS_SCALE, OCD_BNS_MEAN, OCD_BNS_INVSTD, OCD_BNS_DSCALE, OCD_BNS_DBIAS, OCD_BNS_DX };

struct ocd_plan_stage {
    enum ocd_plan_stage_kind kind;
    int b[OCD_STAGE_BUFS];
    const struct ocd_conv_impl *impl; /* CONV */
    size_t scratch;                   /* workspace bytes of the call */
    int in_place;                     /* CONV, GEMM: 1 + the buffer of the next stage's (a chain's)
                                         output it writes (engine_plan.c, place_in_output); 0: none */
    union {
        struct ocd_conv_problem conv;
        struct ocd_gemm_problem gemm;
        struct ocd_pw_chain chain;
        struct ocd_reduce red;
        struct ocd_conv_bias_problem gs;
        struct ocd_bn_problem bn;
        struct ocd_bnf_problem bnf;
        struct ocd_fold fold;
    } u;
};

struct ocd_graph_plan {
    struct ocd_graph *g;
    enum ocd_backend_kind backend;
    int nbufs, nstages;
    struct ocd_plan_buf bufs[OCD_PLAN_MAX_BUFS];
    struct ocd_plan_stage stages[OCD_PLAN_MAX_STAGES];
    size_t scratch_off, total;
};

/* The buffer an anchor stage (a convolution or a GEMM) writes its output to; -1 for any other. */
static inline int ocd_plan_anchor_output(const struct ocd_plan_stage *s)
{
    if (s->kind == OCD_ST_GEMM) return s->b[2];
    if (s->kind != OCD_ST_CONV) return -1;
    return s->u.conv.dir == OCD_CONV_FWD ? s->b[2] : s->u.conv.dir == OCD_CONV_BWD_DATA ? s->b[0] : s->b[1];
}

/* v bytes rounded up to the workspace's alignment. */
static inline size_t ocd_plan_align_up(size_t v)
{
    return (v + OCD_PLAN_WS_ALIGN - 1) / OCD_PLAN_WS_ALIGN * OCD_PLAN_WS_ALIGN;
}

#endif /* OCD_GRAPH_ENGINE_PLAN_H */
