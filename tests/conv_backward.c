/* conv_backward.c: the convolution matrix of the gradients: every shape of conv_harness.c through
   every float configuration of the cuDNN 8.2 tables and every algorithm, backward data and
   backward filter, against the double reference (tests/ref/conv.c), on every backend present. */
#include "conv_harness.h"

TEST(conv_bwd_data_every_config_shape_and_algo)
{
    run_shapes(BWD_DATA, shapes, nshapes, float_configs, nfloat_configs);
}

TEST(conv_bwd_filter_every_config_shape_and_algo)
{
    run_shapes(BWD_FILTER, shapes, nshapes, float_configs, nfloat_configs);
}
