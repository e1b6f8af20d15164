/* conv.c: the convolution matrix, forward: every shape of conv_harness.c through every float and
   int8 configuration of the cuDNN 8.2 tables and every algorithm, and the tensor-core shapes in
   every direction, against the double reference (tests/ref/conv.c), on every backend present.
   conv_backward.c runs the float matrix of the two gradients (a file of its own, so that ctest
   runs the halves in parallel). */
#include "conv_harness.h"

TEST(conv_fwd_every_float_config_shape_and_algo)
{
    run_shapes(FWD, shapes, nshapes, float_configs, nfloat_configs);
}

/* The shapes and layouts the CUDA backend's tensor-core entries take (implicit GEMM, cuBLAS GEMMs),
   every direction and algorithm; on the host pass they are more edge shapes. */
TEST(conv_tensor_core_shapes_every_direction_and_algo)
{
    for (int d = FWD; d <= BWD_FILTER; d++)
        run_shapes((enum dir)d, tc_shapes, ntc_shapes, tc_configs, ntc_configs);
}

TEST(conv_fwd_int8_configs)
{
    for (size_t s = 0; s < nint8_shapes; s++) {
        for (size_t c = 0; c < nint8_configs; c++) {
            for (int variant = 0; variant < 2; variant++) {
                struct problem p;
                char label[160];
                snprintf(label, sizeof label, "fwd %s %s v%d", int8_shapes[s].name, int8_configs[c].name, variant);
                if (make_problem(&p, &int8_shapes[s], &int8_configs[c], variant)) check_direction(&p, FWD, -1, label);
                free_problem(&p);
            }
        }
    }
    struct problem p;
    if (make_problem(&p, &int8x32_shape, &int8x32_config, 0)) check_direction(&p, FWD, -1, "fwd int8x32");
    free_problem(&p);
}
