/* gemm_cblas_calibrate.h: whether the CBLAS library the build found multiplies faster than the
   built-in packed GEMM engine on this machine, decided once per process by measuring both.

   A CBLAS library is only as fast as the kernel it picks for the processor: OpenBLAS falls back to
   generic kernels on a processor it does not know, and then runs a third of the built-in engine's
   speed. So the choice between the two engines is measured, not assumed: the first question for
   a data type times one GEMM of the size of a mid-network convolution layer on both engines and
   keeps the answer for the life of the process. OPENCUDNN_HOST_GEMM=cblas|builtin decides
   instead (read at every call, so that a program or a test can change it). */
#ifndef OCD_HOST_GEMM_CBLAS_CALIBRATE_H
#define OCD_HOST_GEMM_CBLAS_CALIBRATE_H

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

#ifdef __cplusplus
}
#endif

#endif /* OCD_HOST_GEMM_CBLAS_CALIBRATE_H */
