/* emu_handle.h: the handle an emulation plans with. Planning reads only the device's compute
   capability, multiprocessor count and L2 size, so the handle is a zeroed cudnnContext with the
   first two set (an L2 of 0 bytes: every NCHW stride-phase problem runs staged, conv_igemm.cu's
   stage_wanted). */
#ifndef OCD_EMU_HANDLE_H
#define OCD_EMU_HANDLE_H

#include "core/handle.h"

#include <string.h>

static inline struct cudnnContext emu_handle(int cc_major, int sm_count)
{
    struct cudnnContext ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.cc_major = cc_major, ctx.sm_count = sm_count;
    return ctx;
}

#endif
