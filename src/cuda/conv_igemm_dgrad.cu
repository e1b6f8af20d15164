/* conv_igemm_dgrad.cu: instantiates the implicit-GEMM kernel (conv_igemm.cuh) for the
   backward-data pass, every tile configuration, fp16, bf16 and tf32. */
#include "cuda/conv_igemm.cuh"

#define X(i, bm, bn, wm, wn, st)                                                                    \
    {igemm_launch<igemm_tile<bm, bn, wm, wn, st>, __half, igemm_dir_dgrad>,                         \
     igemm_launch<igemm_tile<bm, bn, wm, wn, st>, __nv_bfloat16, igemm_dir_dgrad>,                  \
     igemm_launch<igemm_tile<bm, bn, wm, wn, st>, float, igemm_dir_dgrad>},
const igemm_launch_fn ocd_igemm_dgrad_launch[OCD_IGEMM_NTILES][IGEMM_NTYPES] = {OCD_IGEMM_TILES(X)};
#undef X
