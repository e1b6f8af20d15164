/* cblas_wins.h: whether the CBLAS library found at build time runs a GEMM of a data type faster
   than the packed engine (gemm_engine.h) on this machine. */
#ifndef OCD_HOST_CBLAS_WINS_H
#define OCD_HOST_CBLAS_WINS_H

#include "core/ocd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Nonzero when the CBLAS entries should take GEMMs of data type t. */
int ocd_host_cblas_wins(cudnnDataType_t t);

#ifdef __cplusplus
}
#endif

#endif /* OCD_HOST_CBLAS_WINS_H */
