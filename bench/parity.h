/* parity.h: what the parity probe's files share (the program: parity.md; the line format:
   parity.c). parity.c holds the frame: one probe's output line, the resources it holds until it
   ends, its buffers and descriptors, the list of probes and main. The probes live by subject:
   parity_adv.c (RNN and CTC), parity_tensor.c (tensor descriptors, transforms, tensor ops),
   parity_conv.c (convolution) and parity_nn.c (activation, pooling, softmax, LRN, batch norm,
   dropout); each file ends with its table, which parity.c lists.

   A probe is a function of one struct probe_out: it builds its inputs (the generator o->rng is
   seeded by the probe's name), calls set_status once on the call it asks about (SETUP where an
   earlier call fails) and appends the outputs read back with put*. Every call used is present
   in cuDNN 8.2 and 9 (the v8 RNN API, none of the v6/v7 calls cuDNN 9 removed). */
#ifndef BENCH_PARITY_H
#define BENCH_PARITY_H

#include "bench.h"

enum { MAX_KEEP = 48, LINE_BYTES = 1 << 16, FULL_VALUES = 256 };

extern cudnnHandle_t parity_handle;

enum held_kind { HELD_MEMORY, HELD_TENSOR, HELD_FILTER, HELD_CONV, HELD_POOL, HELD_LRN, HELD_DROPOUT, HELD_RNN,
                 HELD_RNN_DATA, HELD_CTC, HELD_ACTIVATION, HELD_OP_TENSOR, HELD_REDUCE };

struct held {
    void *p;
    enum held_kind kind;
};

struct probe_out {
    char line[LINE_BYTES];
    size_t len;
    bool status_set;
    struct held held[MAX_KEEP];
    int nheld;
    uint64_t rng;
};

struct probe {
    const char *name;
    void (*run)(struct probe_out *o);
};

/* Each subject's probes, in the order they run. */
extern const struct probe parity_adv_probes[], parity_tensor_probes[], parity_conv_probes[], parity_nn_probes[];
extern const size_t parity_adv_count, parity_tensor_count, parity_conv_count, parity_nn_count;

/* ---- the line ---------------------------------------------------------------------------------- */

void append(struct probe_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The status of the call asked about; the first one set is kept. */
void set_status(struct probe_out *o, cudnnStatus_t s);
/* A call before the one asked about failed: the probe reports which and stops (false). */
bool setup_ok(struct probe_out *o, const char *call, cudnnStatus_t s);
/* setup_ok on a call, named by its text (the report keeps the function's name). */
#define SETUP(o, call) setup_ok(o, #call, (call))

/* Appends host values as a KEY field (parity.c says the two forms). */
void put_host(struct probe_out *o, const char *key, const double *v, size_t n);
/* Appends n values of type t (FLOAT, HALF, INT8) read back from backend memory as a KEY field. */
void put_as(struct probe_out *o, const char *key, const void *dev, size_t n, cudnnDataType_t t);
/* put_as for floats. */
void put(struct probe_out *o, const char *key, const void *dev, size_t n);
void put_number(struct probe_out *o, const char *key, double v);
/* n floats read back from backend memory into host doubles. */
void read_floats(const void *dev, double *out, size_t n);

/* ---- resources and inputs ------------------------------------------------------------------------ */

/* Registers backend memory or a descriptor, released after the probe. */
void hold(struct probe_out *o, void *p, enum held_kind kind);
double uniform(struct probe_out *o, double lo, double hi);
/* Backend buffers: given values of type t (FLOAT, HALF, INT8), an output's poison in type t (NaN,
   or -7 for INT8: what no call writes), given floats, random floats in [lo, hi] from the probe's
   stream, n copies of v, or bytes left as they are. */
void *dev_as(struct probe_out *o, cudnnDataType_t t, const double *values, size_t n);
void *dev_poison(struct probe_out *o, cudnnDataType_t t, size_t n);
float *dev_floats(struct probe_out *o, const float *values, size_t n);
float *dev_random(struct probe_out *o, size_t n, double lo, double hi);
float *dev_fill(struct probe_out *o, size_t n, float v);
void *dev_bytes(struct probe_out *o, size_t bytes);

/* A held float tensor descriptor from cudnnSetTensorNdDescriptor; NULL after a SETUP failure. */
cudnnTensorDescriptor_t tensor_nd(struct probe_out *o, int nd, const int *dims, const int *strides);
/* A packed NCHW tensor of type t, or float. */
cudnnTensorDescriptor_t tensor4_as(struct probe_out *o, cudnnDataType_t t, int n, int c, int h, int w);
cudnnTensorDescriptor_t tensor4(struct probe_out *o, int n, int c, int h, int w);

#endif
