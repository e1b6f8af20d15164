/* conv_fft.h: the CUDA backend's FFT and FFT_TILING convolution entries (conv_fft.cu), every
   direction, on cuFFT loaded at run time (cufft_loader.h). C-callable: the registry is C. */
#ifndef OCD_CUDA_CONV_FFT_H
#define OCD_CUDA_CONV_FFT_H

#include "cnn/conv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* applies: the plan's reasons (cnn/conv_fft.h), or that cuFFT is missing or cannot plan;
   workspace: the spectra, the real tiles and cuFFT's work area (the plans are made here, once
   per handle, so that Find never times plan creation). */
const char *ocd_cuda_conv_fft_applies(cudnnHandle_t handle, const void *problem);
size_t ocd_cuda_conv_fft_workspace(cudnnHandle_t handle, const void *problem);
cudnnStatus_t ocd_cuda_conv_fft(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);
const char *ocd_cuda_conv_fft_tiling_applies(cudnnHandle_t handle, const void *problem);
size_t ocd_cuda_conv_fft_tiling_workspace(cudnnHandle_t handle, const void *problem);
cudnnStatus_t ocd_cuda_conv_fft_tiling(cudnnHandle_t handle, const void *problem, void *ws, size_t ws_bytes);

#ifdef __cplusplus
}
#endif

#endif /* OCD_CUDA_CONV_FFT_H */
