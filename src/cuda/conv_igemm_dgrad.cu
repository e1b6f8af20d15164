/* conv_igemm_dgrad.cu: instantiates the implicit-GEMM kernel (conv_igemm.cuh) for the
   backward-data pass, every tile configuration, fp16, bf16 and tf32. */
#include "cuda/conv_igemm.cuh"

#define OCD_IGEMM_DIR igemm_dir_dgrad
const igemm_launch_fn ocd_igemm_dgrad_launch[OCD_IGEMM_NTILES][IGEMM_NTYPES] = {
    OCD_IGEMM_TILES(OCD_IGEMM_LAUNCH_ROW)};
