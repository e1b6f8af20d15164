/* conv_igemm_fwd.cu: instantiates the implicit-GEMM kernel (conv_igemm.cuh) for the forward pass,
   every tile configuration, fp16, bf16 and tf32. Kept apart from the other directions so that
   the three compile in parallel. */
#include "cuda/conv_igemm.cuh"

#define OCD_IGEMM_DIR igemm_dir_fwd
const igemm_launch_fn ocd_igemm_fwd_launch[OCD_IGEMM_NTILES][IGEMM_NTYPES] = {
    OCD_IGEMM_TILES(OCD_IGEMM_LAUNCH_ROW)};
