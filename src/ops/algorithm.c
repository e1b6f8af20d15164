/* algorithm.c: the algorithm descriptors and algorithm-performance objects of cuDNN 8 (deprecated
   in 8.x, kept for programs that still use them): a descriptor holds one cudnnAlgorithm_t; a
   performance object holds a descriptor, a status, a time and a memory size. Save writes a
   descriptor into a host buffer in a self-checking format (magic, version, the algorithm);
   Restore reads one back and rejects a buffer it did not write. */
#include "ops/algorithm.h"

#include "core/handle.h"

#include <string.h>

struct cudnnAlgorithmStruct {
    struct ocd_object obj;
    cudnnAlgorithm_t algorithm;
};

struct cudnnAlgorithmPerformanceStruct {
    struct ocd_object obj;
    cudnnAlgorithmDescriptor_t algo_desc;
    bool owns_desc; /* algo_desc was made by a Find (ocd_algorithm_perf_fill): destroyed with it */
    cudnnStatus_t status;
    float time;
    size_t memory;
};

/* The saved form: what cudnnSaveAlgorithm writes and cudnnRestoreAlgorithm accepts. */
struct saved_algorithm {
    uint32_t magic;   /* SAVED_MAGIC */
    uint32_t version; /* CUDNN_VERSION of the writer */
    cudnnAlgorithm_t algorithm;
};

#define SAVED_MAGIC 0x4f434441u /* "OCDA" */

cudnnStatus_t CUDNNWINAPI cudnnCreateAlgorithmDescriptor(cudnnAlgorithmDescriptor_t *algoDesc)
{
    OCD_LOG_API("algoDesc=%p", (void *)algoDesc);
    return ocd_object_create(OCD_OBJ_ALGORITHM, sizeof(struct cudnnAlgorithmStruct), (void **)algoDesc);
}

cudnnStatus_t CUDNNWINAPI cudnnSetAlgorithmDescriptor(cudnnAlgorithmDescriptor_t algoDesc,
                                                      cudnnAlgorithm_t algorithm)
{
    OCD_LOG_API("algoDesc=%p algorithm=%d", (void *)algoDesc, (int)algorithm.algo.convFwdAlgo);
    OCD_CHECK_OBJECT(OCD_OBJ_ALGORITHM, algoDesc);
    algoDesc->algorithm = algorithm;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_algorithm_get(cudnnAlgorithmDescriptor_t algoDesc, cudnnAlgorithm_t *algorithm)
{
    OCD_CHECK_OBJECT(OCD_OBJ_ALGORITHM, algoDesc);
    if (algorithm == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "algorithm is NULL");
    *algorithm = algoDesc->algorithm;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetAlgorithmDescriptor(const cudnnAlgorithmDescriptor_t algoDesc,
                                                      cudnnAlgorithm_t *algorithm)
{
    OCD_LOG_API("algoDesc=%p", (void *)algoDesc);
    return ocd_algorithm_get(algoDesc, algorithm);
}

cudnnStatus_t CUDNNWINAPI cudnnCopyAlgorithmDescriptor(const cudnnAlgorithmDescriptor_t src,
                                                       cudnnAlgorithmDescriptor_t dest)
{
    OCD_LOG_API("src=%p dest=%p", (void *)src, (void *)dest);
    OCD_CHECK_OBJECT(OCD_OBJ_ALGORITHM, src);
    OCD_CHECK_OBJECT(OCD_OBJ_ALGORITHM, dest);
    dest->algorithm = src->algorithm;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnDestroyAlgorithmDescriptor(cudnnAlgorithmDescriptor_t algoDesc)
{
    OCD_LOG_API("algoDesc=%p", (void *)algoDesc);
    if (algoDesc == NULL) return CUDNN_STATUS_SUCCESS;
    return ocd_object_destroy(OCD_OBJ_ALGORITHM, algoDesc);
}

/* Creates numberToCreate objects into algoPerf[]; on failure none is left created. */
cudnnStatus_t CUDNNWINAPI cudnnCreateAlgorithmPerformance(cudnnAlgorithmPerformance_t *algoPerf,
                                                          int numberToCreate)
{
    OCD_LOG_API("algoPerf=%p numberToCreate=%d", (void *)algoPerf, numberToCreate);
    if (algoPerf == NULL || numberToCreate <= 0)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "algoPerf is NULL or numberToCreate (%d) is not positive",
                        numberToCreate);
    for (int i = 0; i < numberToCreate; i++) {
        cudnnAlgorithmPerformance_t p;
        cudnnStatus_t s = ocd_object_create(OCD_OBJ_ALGORITHM_PERF, sizeof *p, (void **)&p);
        if (s != CUDNN_STATUS_SUCCESS) {
            while (i-- > 0) ocd_object_destroy(OCD_OBJ_ALGORITHM_PERF, algoPerf[i]);
            return s;
        }
        algoPerf[i] = p;
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnSetAlgorithmPerformance(cudnnAlgorithmPerformance_t algoPerf,
                                                       cudnnAlgorithmDescriptor_t algoDesc,
                                                       cudnnStatus_t status, float time, size_t memory)
{
    OCD_LOG_API("algoPerf=%p algoDesc=%p status=%d time=%g memory=%zu", (void *)algoPerf,
                (void *)algoDesc, (int)status, (double)time, memory);
    OCD_CHECK_OBJECT(OCD_OBJ_ALGORITHM_PERF, algoPerf);
    OCD_CHECK_OBJECT(OCD_OBJ_ALGORITHM, algoDesc);
    if (algoPerf->owns_desc && algoPerf->algo_desc != algoDesc && ocd_object_alive(OCD_OBJ_ALGORITHM, algoPerf->algo_desc))
        ocd_object_destroy(OCD_OBJ_ALGORITHM, algoPerf->algo_desc);
    algoPerf->owns_desc = false;
    algoPerf->algo_desc = algoDesc;
    algoPerf->status = status;
    algoPerf->time = time;
    algoPerf->memory = memory;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetAlgorithmPerformance(const cudnnAlgorithmPerformance_t algoPerf,
                                                       cudnnAlgorithmDescriptor_t *algoDesc,
                                                       cudnnStatus_t *status, float *time,
                                                       size_t *memory)
{
    OCD_LOG_API("algoPerf=%p", (void *)algoPerf);
    OCD_CHECK_OBJECT(OCD_OBJ_ALGORITHM_PERF, algoPerf);
    if (!algoDesc || !status || !time || !memory)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "an output pointer is NULL");
    *algoDesc = algoPerf->algo_desc;
    *status = algoPerf->status;
    *time = algoPerf->time;
    *memory = algoPerf->memory;
    return CUDNN_STATUS_SUCCESS;
}

/* Destroys numberToDestroy objects of algoPerf[]; every one must be live, else nothing is destroyed. */
cudnnStatus_t CUDNNWINAPI cudnnDestroyAlgorithmPerformance(cudnnAlgorithmPerformance_t *algoPerf,
                                                           int numberToDestroy)
{
    OCD_LOG_API("algoPerf=%p numberToDestroy=%d", (void *)algoPerf, numberToDestroy);
    if (algoPerf == NULL || numberToDestroy <= 0)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "algoPerf is NULL or numberToDestroy (%d) is not positive",
                        numberToDestroy);
    for (int i = 0; i < numberToDestroy; i++)
        if (!ocd_object_alive(OCD_OBJ_ALGORITHM_PERF, algoPerf[i]))
            return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "algoPerf[%d] is not a live performance object", i);
    for (int i = 0; i < numberToDestroy; i++) {
        if (algoPerf[i]->owns_desc && ocd_object_alive(OCD_OBJ_ALGORITHM, algoPerf[i]->algo_desc))
            ocd_object_destroy(OCD_OBJ_ALGORITHM, algoPerf[i]->algo_desc);
        ocd_object_destroy(OCD_OBJ_ALGORITHM_PERF, algoPerf[i]);
    }
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t ocd_algorithm_perf_fill(cudnnAlgorithmPerformance_t perf, cudnnAlgorithm_t algorithm,
                                      cudnnStatus_t status, float time, size_t memory)
{
    OCD_CHECK_OBJECT(OCD_OBJ_ALGORITHM_PERF, perf);
    if (!perf->owns_desc || !ocd_object_alive(OCD_OBJ_ALGORITHM, perf->algo_desc)) {
        OCD_TRY(ocd_object_create(OCD_OBJ_ALGORITHM, sizeof(struct cudnnAlgorithmStruct), (void **)&perf->algo_desc));
        perf->owns_desc = true;
    }
    perf->algo_desc->algorithm = algorithm;
    perf->status = status;
    perf->time = time;
    perf->memory = memory;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetAlgorithmSpaceSize(cudnnHandle_t handle, cudnnAlgorithmDescriptor_t algoDesc,
                                                     size_t *algoSpaceSizeInBytes)
{
    OCD_LOG_API("handle=%p algoDesc=%p", (void *)handle, (void *)algoDesc);
    OCD_CHECK_HANDLE(handle);
    OCD_CHECK_OBJECT(OCD_OBJ_ALGORITHM, algoDesc);
    if (algoSpaceSizeInBytes == NULL) return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "algoSpaceSizeInBytes is NULL");
    *algoSpaceSizeInBytes = sizeof(struct saved_algorithm);
    return CUDNN_STATUS_SUCCESS;
}

/* algoSpace is host memory on every backend: the saved form is for the program to keep. */
cudnnStatus_t CUDNNWINAPI cudnnSaveAlgorithm(cudnnHandle_t handle, cudnnAlgorithmDescriptor_t algoDesc,
                                             void *algoSpace, size_t algoSpaceSizeInBytes)
{
    OCD_LOG_API("handle=%p algoDesc=%p algoSpace=%p size=%zu", (void *)handle, (void *)algoDesc, algoSpace,
                algoSpaceSizeInBytes);
    OCD_CHECK_HANDLE(handle);
    OCD_CHECK_OBJECT(OCD_OBJ_ALGORITHM, algoDesc);
    if (algoSpace == NULL || algoSpaceSizeInBytes < sizeof(struct saved_algorithm))
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "algoSpace is NULL or smaller than %zu bytes",
                        sizeof(struct saved_algorithm));
    struct saved_algorithm saved = {SAVED_MAGIC, CUDNN_VERSION, algoDesc->algorithm};
    memcpy(algoSpace, &saved, sizeof saved);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnRestoreAlgorithm(cudnnHandle_t handle, void *algoSpace, size_t algoSpaceSizeInBytes,
                                                cudnnAlgorithmDescriptor_t algoDesc)
{
    OCD_LOG_API("handle=%p algoSpace=%p size=%zu algoDesc=%p", (void *)handle, algoSpace, algoSpaceSizeInBytes,
                (void *)algoDesc);
    OCD_CHECK_HANDLE(handle);
    OCD_CHECK_OBJECT(OCD_OBJ_ALGORITHM, algoDesc);
    struct saved_algorithm saved;
    if (algoSpace == NULL || algoSpaceSizeInBytes < sizeof saved)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "algoSpace is NULL or smaller than %zu bytes", sizeof saved);
    memcpy(&saved, algoSpace, sizeof saved);
    if (saved.magic != SAVED_MAGIC)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "algoSpace does not hold an algorithm saved by cudnnSaveAlgorithm");
    if (saved.version != CUDNN_VERSION)
        return OCD_FAIL(CUDNN_STATUS_VERSION_MISMATCH, "algoSpace was saved by version %u", saved.version);
    algoDesc->algorithm = saved.algorithm;
    return CUDNN_STATUS_SUCCESS;
}
