/* gemm_cblas.h: the host's second GEMM engine, a CBLAS library (OpenBLAS and the like, found by
   CMake: OPENCUDNN_CBLAS), and the once-per-process measurement that decides whether it or the
   built-in packed engine (gemm_engine.h) multiplies. The shared GEMM (problem/gemm.h) has an
   entry on it (host:gemm_cblas, in src/host/gemm_cblas.c) and the forward convolution another
   (host:fwd_gemm_cblas, conv_cblas.c); both ask ocd_host_cblas_wins.

   A CBLAS library is only as fast as the kernel it picks for the processor: OpenBLAS falls back to
   generic kernels on a processor it does not know, and then runs a third of the built-in engine's
   speed. So the choice between the two engines is measured, not assumed: the first question for
   a data type times one GEMM of the size of a mid-network convolution layer on both engines and
   keeps the answer for the life of the process. OPENCUDNN_HOST_GEMM=cblas|builtin decides
   instead (read at every call, so that a program or a test can change it). */
#ifndef OCD_HOST_GEMM_CBLAS_H
#define OCD_HOST_GEMM_CBLAS_H

#include "core/ocd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What OPENCUDNN_HOST_GEMM asks for: the measurement (unset, empty or another value, which is
   logged as a warning), or one engine forced. */
enum ocd_host_gemm_choice { OCD_HOST_GEMM_MEASURE, OCD_HOST_GEMM_CBLAS, OCD_HOST_GEMM_BUILTIN };
enum ocd_host_gemm_choice ocd_host_gemm_choice(void);

/* True when GEMMs of data type dtype (float or double; false for any other) should go to the
   CBLAS library: forced by OPENCUDNN_HOST_GEMM=cblas, or faster in this process's calibration
   (measured on the first call for the type, thread-safe; logged at info level). False in a build
   without CBLAS. */
bool ocd_host_cblas_wins(cudnnDataType_t dtype);

/* The smallest product (2 m n k flops a matrix) worth handing to the library where it won the
   calibration: below it the packed engine's lower start-up cost wins (bench/archive.md, "Host
   backend": a GEMM per image and group of 64 x 196 x 576 on a 2-core Zen 3). */
#define OCD_HOST_CBLAS_MIN_FLOPS (2.0 * 64 * 196 * 576)

#ifdef __cplusplus
}
#endif

#endif /* OCD_HOST_GEMM_CBLAS_H */
