/* conv_igemm_wgrad.cu: instantiates the implicit-GEMM kernel (conv_igemm.cuh) for the
   backward-filter pass, every tile configuration, fp16 and bf16 (its operands are MN-major, read
   with ldmatrix.trans, which moves 16-bit elements only: fp32 goes to the cuBLAS entries). */
#include "cuda/conv_igemm.cuh"

#define OCD_IGEMM_DIR igemm_dir_wgrad
const igemm_launch_fn ocd_igemm_wgrad_launch[OCD_IGEMM_NTILES][IGEMM_NTYPES] = {
    OCD_IGEMM_TILES(OCD_IGEMM_LAUNCH_ROW)};
