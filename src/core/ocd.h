/* ocd.h: what every opencudnn source file needs: the public API, the internal naming rules and the
   error helpers. Internal names start with ocd_; file-static helpers carry no prefix.

   Three tiers of names: exported cudnn* (the API, only in src/ops, src/cnn, src/adv, src/graph),
   cross-file ocd_* (exported from a sub-library under the private version node so that the
   sub-libraries can share the core), and static helpers. Code inside the libraries never calls a
   public cudnn* function: a public symbol can be interposed by the front or a user's preload.
   Memory is allocated through ocd_malloc / ocd_calloc (alloc.h), never malloc directly, so that
   tests can make any allocation fail. */
#ifndef OCD_CORE_OCD_H
#define OCD_CORE_OCD_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include <cudnn.h>

#include "core/alloc.h"

/* The library must be built against its own headers, never a vendor's cudnn.h found first. */
#ifndef OPENCUDNN_CUDNN_H_
#error "opencudnn is being compiled against a cudnn.h that is not its own: put include/ first"
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define OCD_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define OCD_MIN(a, b) ((a) < (b) ? (a) : (b))
#define OCD_MAX(a, b) ((a) > (b) ? (a) : (b))

/* ---- logging (log.c) --------------------------------------------------------------------- */

/* Bits of ocd_log_mask: which severities are on (the CUDNN_SEV_*_EN values of the API). */
extern unsigned ocd_log_mask;

void ocd_log_init(void);
void ocd_log_message(cudnnSeverity_t sev, cudnnStatus_t status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Logs one API call: its name and its arguments, formatted by the caller. */
void ocd_log_api(const char *func, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Logs an error (or a NOT_SUPPORTED) with the place it was found and returns the status. */
cudnnStatus_t ocd_fail(cudnnStatus_t status, const char *func, const char *file, int line,
                       const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* Records that the calling thread has entered API function api (a string literal: __func__),
   so that an error a shared helper finds (OCD_FAIL in ocd_tensor_get, say) is logged under the
   API function's name rather than the helper's. OCD_LOG_API calls it. */
void ocd_log_enter(const char *api);

/* The first statement of every API entry: names the call for errors and logs it. */
#define OCD_LOG_API(...)                                                                        \
    do {                                                                                        \
        ocd_log_enter(__func__);                                                                \
        if (ocd_log_mask & CUDNN_SEV_INFO_EN) ocd_log_api(__func__, __VA_ARGS__);               \
    } while (0)

/* return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "xDesc has %d dims", n); the log names the API function
   the thread is in (ocd_log_enter) and, when the failing function is another one (a helper),
   that one too. */
#define OCD_FAIL(status, ...) ocd_fail((status), __func__, __FILE__, __LINE__, __VA_ARGS__)

/* Evaluates a call that returns a cudnnStatus_t and returns it from the caller when it failed. */
#define OCD_TRY(call)                                                                           \
    do {                                                                                        \
        cudnnStatus_t ocd_try_status_ = (call);                                                 \
        if (ocd_try_status_ != CUDNN_STATUS_SUCCESS) return ocd_try_status_;                    \
    } while (0)

/* ---- status names (status.c) --------------------------------------------------------------- */

const char *ocd_status_string(cudnnStatus_t status);

/* ---- versions (handle.c) ------------------------------------------------------------------------ */

/* VERSION_MISMATCH, logged, unless the version given is the library's own. */
cudnnStatus_t ocd_version_check(unsigned major, unsigned minor, unsigned patch);

#ifdef __cplusplus
}
#endif

#endif /* OCD_CORE_OCD_H */
