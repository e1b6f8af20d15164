/* algorithm.c: the (deprecated) algorithm descriptor and performance objects, save and restore. */
#include "test.h"

#include <string.h>

TEST_ONCE(algorithm_descriptor_set_get_copy)
{
    cudnnAlgorithmDescriptor_t a, b;
    CHECK_OK(cudnnCreateAlgorithmDescriptor(&a));
    CHECK_OK(cudnnCreateAlgorithmDescriptor(&b));
    cudnnAlgorithm_t in, out;
    in.algo.convBwdDataAlgo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD;
    CHECK_OK(cudnnSetAlgorithmDescriptor(a, in));
    CHECK_OK(cudnnCopyAlgorithmDescriptor(a, b));
    CHECK_OK(cudnnGetAlgorithmDescriptor(b, &out));
    CHECK(out.algo.convBwdDataAlgo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD);
    CHECK_STATUS(cudnnGetAlgorithmDescriptor(b, NULL), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnDestroyAlgorithmDescriptor(a));
    CHECK_STATUS(cudnnCopyAlgorithmDescriptor(a, b), CUDNN_STATUS_BAD_PARAM);
    CHECK_STATUS(cudnnSetAlgorithmDescriptor(a, in), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnDestroyAlgorithmDescriptor(b));
    CHECK_OK(cudnnDestroyAlgorithmDescriptor(NULL));
}

TEST_ONCE(algorithm_performance_array)
{
    cudnnAlgorithmPerformance_t p[3];
    cudnnAlgorithmDescriptor_t a, got;
    CHECK_OK(cudnnCreateAlgorithmDescriptor(&a));
    CHECK_STATUS(cudnnCreateAlgorithmPerformance(p, 0), CUDNN_STATUS_BAD_PARAM);
    if (!CHECK_OK(cudnnCreateAlgorithmPerformance(p, 3))) return;
    CHECK_OK(cudnnSetAlgorithmPerformance(p[2], a, CUDNN_STATUS_NOT_SUPPORTED, 1.5f, 4096));
    cudnnStatus_t s;
    float t;
    size_t m;
    CHECK_OK(cudnnGetAlgorithmPerformance(p[2], &got, &s, &t, &m));
    CHECK(got == a && s == CUDNN_STATUS_NOT_SUPPORTED && t == 1.5f && m == 4096);
    CHECK_STATUS(cudnnSetAlgorithmPerformance(p[0], NULL, CUDNN_STATUS_SUCCESS, 0, 0), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnDestroyAlgorithmPerformance(p, 3));
    CHECK_STATUS(cudnnDestroyAlgorithmPerformance(p, 3), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnDestroyAlgorithmDescriptor(a));
}

TEST(algorithm_save_and_restore)
{
    cudnnHandle_t h = test_handle();
    cudnnAlgorithmDescriptor_t a, b;
    CHECK_OK(cudnnCreateAlgorithmDescriptor(&a));
    CHECK_OK(cudnnCreateAlgorithmDescriptor(&b));
    cudnnAlgorithm_t in, out;
    in.algo.convFwdAlgo = CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING;
    CHECK_OK(cudnnSetAlgorithmDescriptor(a, in));
    size_t size = 0;
    CHECK_OK(cudnnGetAlgorithmSpaceSize(h, a, &size));
    CHECK(size > 0 && size <= 256);
    unsigned char space[256];
    memset(space, 0xab, sizeof space);
    CHECK_STATUS(cudnnSaveAlgorithm(h, a, space, size - 1), CUDNN_STATUS_BAD_PARAM);
    CHECK(space[0] == 0xab); /* nothing written */
    CHECK_OK(cudnnSaveAlgorithm(h, a, space, size));
    CHECK_OK(cudnnRestoreAlgorithm(h, space, size, b));
    CHECK_OK(cudnnGetAlgorithmDescriptor(b, &out));
    CHECK(out.algo.convFwdAlgo == CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING);
    space[0] ^= 0xff; /* not something Save wrote */
    CHECK_STATUS(cudnnRestoreAlgorithm(h, space, size, b), CUDNN_STATUS_BAD_PARAM);
    CHECK_OK(cudnnDestroyAlgorithmDescriptor(a));
    CHECK_OK(cudnnDestroyAlgorithmDescriptor(b));
}
