/* conv_igemm_int8.cu: instantiates the implicit-GEMM kernel (conv_igemm.cuh) for the forward
   pass of the int8 configurations, every tile configuration: int8 data (int8_t) and uint8 data
   (uint8_t), both with an int8 filter. Kept apart from the other types so that they compile in
   parallel. */
#include "cuda/conv_igemm.cuh"

#define X(i, bm, bn, wm, wn, st)                                                                    \
    {igemm_mma_launch<ocd_mma_tile<bm, bn, wm, wn, st>, int8_t, igemm_dir_fwd>::run,                \
     igemm_mma_launch<ocd_mma_tile<bm, bn, wm, wn, st>, uint8_t, igemm_dir_fwd>::run},
const igemm_launch_fn ocd_igemm_int8_launch[OCD_IGEMM_NTILES][2] = {OCD_IGEMM_TILES(X)};
#undef X
