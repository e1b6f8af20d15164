/* conv_igemm_wgrad.cu: instantiates the implicit-GEMM kernel (conv_igemm.cuh) for the
   backward-filter pass, every tile configuration, fp16 and bf16 (its operands are MN-major, read
   with ldmatrix.trans, which moves 16-bit elements only: fp32 goes to the cuBLAS entries). */
#include "cuda/conv_igemm.cuh"

#define X(i, bm, bn, wm, wn, st)                                                                    \
    {igemm_launch<igemm_tile<bm, bn, wm, wn, st>, __half, igemm_dir_wgrad>,                         \
     igemm_launch<igemm_tile<bm, bn, wm, wn, st>, __nv_bfloat16, igemm_dir_wgrad>, NULL},
const igemm_launch_fn ocd_igemm_wgrad_launch[OCD_IGEMM_NTILES][IGEMM_NTYPES] = {OCD_IGEMM_TILES(X)};
#undef X
