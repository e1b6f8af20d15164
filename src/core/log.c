/* log.c: cuDNN 8 style logging.

   Three severities can be switched on: errors, warnings and info (each API call with its
   arguments). The environment variables CUDNN_LOGERR_DBG, CUDNN_LOGWARN_DBG and CUDNN_LOGINFO_DBG
   set to 1 switch them on; CUDNN_LOGDEST_DBG names the destination: stdout, stderr or a file name
   (nothing is printed without it). cudnnSetCallback replaces the mask and routes the messages to a
   user function instead (NULL: back to the destination). The first message of the process fixes
   the time origin reported in cudnnDebug_t.time_delta. A callback receives the message as the
   8.2 text describes it: "Each line of this message is terminated by \0, and the end of the
   message is terminated by \0\0" (CUDA.jl's callback scans for the double NUL and splits the
   lines at the single ones; a plain C callback sees the first line).

   Messages are formatted into a bounded buffer; a longer message is cut, never overrun. */
#include "core/ocd.h"

#include "core/platform.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned ocd_log_mask;

static ocd_mutex_t log_lock = OCD_MUTEX_INIT;
static ocd_once_t log_once = OCD_ONCE_INIT;
static FILE *log_dest;          /* NULL: messages only reach a callback, if any */
static cudnnCallback_t callback; /* NULL: messages go to log_dest */
static void *callback_data;
static unsigned long long start_sec; /* wall-clock seconds of the first message */

static bool env_on(const char *name)
{
    const char *v = getenv(name);
    return v != NULL && strcmp(v, "1") == 0;
}

static void init_from_environment(void)
{
    unsigned start_usec;
    ocd_wall_time(&start_sec, &start_usec);
    unsigned mask = 0;
    if (env_on("CUDNN_LOGERR_DBG")) mask |= CUDNN_SEV_ERROR_EN;
    if (env_on("CUDNN_LOGWARN_DBG")) mask |= CUDNN_SEV_WARNING_EN;
    if (env_on("CUDNN_LOGINFO_DBG")) mask |= CUDNN_SEV_INFO_EN;
    const char *dest = getenv("CUDNN_LOGDEST_DBG");
    if (dest == NULL || dest[0] == '\0') {
        log_dest = NULL;
    } else if (strcmp(dest, "stdout") == 0) {
        log_dest = stdout;
    } else if (strcmp(dest, "stderr") == 0) {
        log_dest = stderr;
    } else {
        log_dest = fopen(dest, "a");
        if (log_dest == NULL) fprintf(stderr, "opencudnn: cannot open CUDNN_LOGDEST_DBG=%s\n", dest);
    }
    ocd_log_mask = mask;
}

void ocd_log_init(void)
{
    ocd_once(&log_once, init_from_environment);
}

/* Read the environment when the library loads, so that the cheap mask test in OCD_LOG_API sees
   the user's settings from the first call on. */
OCD_CONSTRUCTOR(log_init_at_load)
{
    ocd_log_init();
}

static const char severity_letter[] = {'F', 'E', 'W', 'I'};

/* The bound of a formatted message, its terminating NUL included. */
#define LOG_TEXT_MAX 2048

/* text (at most LOG_TEXT_MAX - 1 characters) as the callback takes it: each line ended by a
   NUL, the message by a second one; out holds LOG_TEXT_MAX + 1 bytes. */
static void callback_lines(const char *text, char *out)
{
    size_t n = 0;
    for (; text[n] != '\0' && n < LOG_TEXT_MAX - 1; n++) out[n] = text[n] == '\n' ? '\0' : text[n];
    out[n] = '\0';
    out[n + 1] = '\0';
}

static void emit(cudnnSeverity_t sev, cudnnStatus_t status, const char *text)
{
    unsigned long long now_sec;
    unsigned now_usec;
    ocd_wall_time(&now_sec, &now_usec);
    cudnnDebug_t dbg;
    memset(&dbg, 0, sizeof dbg);
    dbg.cudnn_version = CUDNN_VERSION;
    dbg.cudnnStatus = status;
    dbg.time_sec = (unsigned)now_sec;
    dbg.time_usec = now_usec;
    dbg.time_delta = (unsigned)(now_sec - start_sec);
    dbg.pid = ocd_process_id();
    dbg.tid = ocd_thread_id();
    dbg.cudaDeviceId = -1;
    ocd_mutex_lock(&log_lock);
    if (callback != NULL) {
        char lines[LOG_TEXT_MAX + 1];
        callback_lines(text, lines);
        callback(sev, callback_data, &dbg, lines);
    } else if (log_dest != NULL) {
        fprintf(log_dest, "%c! CuDNN (v%d) %s\n%c! Time: %u.%06u (%us since start); Process=%llu; Thread=%llu\n",
                severity_letter[sev], CUDNN_VERSION, text, severity_letter[sev] + 32, dbg.time_sec,
                dbg.time_usec, dbg.time_delta, dbg.pid, dbg.tid);
        fflush(log_dest);
    }
    ocd_mutex_unlock(&log_lock);
}

static void vemit(cudnnSeverity_t sev, cudnnStatus_t status, const char *prefix, const char *fmt,
                  va_list ap)
{
    char text[LOG_TEXT_MAX];
    int n = snprintf(text, sizeof text, "%s", prefix);
    if (n < 0 || (size_t)n >= sizeof text) n = 0;
    vsnprintf(text + n, sizeof text - (size_t)n, fmt, ap);
    emit(sev, status, text);
}

void ocd_log_message(cudnnSeverity_t sev, cudnnStatus_t status, const char *fmt, ...)
{
    ocd_log_init();
    if (!(ocd_log_mask & (1u << sev))) return;
    va_list ap;
    va_start(ap, fmt);
    vemit(sev, status, "", fmt, ap);
    va_end(ap);
}

/* The API function this thread entered last (ocd_log_enter). Every API entry but a few version
   queries, which fail through no helper, enters one, so the name is current when a helper fails. */
static OCD_THREAD_LOCAL const char *api_name;

void ocd_log_enter(const char *api)
{
    api_name = api;
}

void ocd_log_api(const char *func, const char *fmt, ...)
{
    char prefix[160];
    snprintf(prefix, sizeof prefix, "function %s() called:\ni!     ", func);
    va_list ap;
    va_start(ap, fmt);
    vemit(CUDNN_SEV_INFO, CUDNN_STATUS_SUCCESS, prefix, fmt, ap);
    va_end(ap);
}

cudnnStatus_t ocd_fail(cudnnStatus_t status, const char *func, const char *file, int line,
                       const char *fmt, ...)
{
    ocd_log_init();
    /* NOT_SUPPORTED is the answer to a legal request we cannot serve: a warning, not an error. */
    cudnnSeverity_t sev = status == CUDNN_STATUS_NOT_SUPPORTED ? CUDNN_SEV_WARNING : CUDNN_SEV_ERROR;
    if (!(ocd_log_mask & (1u << sev))) return status;
    char prefix[320];
    /* A helper's failure is the API function's: name that, and the helper after the place. A
       func that is itself an API name (cudnn*) is the call, whatever was entered before. */
    if (api_name != NULL && strncmp(func, "cudnn", 5) != 0 && strcmp(func, api_name) != 0)
        snprintf(prefix, sizeof prefix, "function %s() returned %s (%s:%d, in %s): ", api_name,
                 ocd_status_string(status), file, line, func);
    else
        snprintf(prefix, sizeof prefix, "function %s() returned %s (%s:%d): ", func,
                 ocd_status_string(status), file, line);
    va_list ap;
    va_start(ap, fmt);
    vemit(sev, status, prefix, fmt, ap);
    va_end(ap);
    return status;
}

/* ---- the API ---------------------------------------------------------------------------------- */

cudnnStatus_t CUDNNWINAPI cudnnSetCallback(unsigned mask, void *udata, cudnnCallback_t fptr)
{
    ocd_log_init();
    ocd_mutex_lock(&log_lock);
    callback = fptr;
    callback_data = udata;
    ocd_log_mask = mask & (CUDNN_SEV_ERROR_EN | CUDNN_SEV_WARNING_EN | CUDNN_SEV_INFO_EN);
    ocd_mutex_unlock(&log_lock);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t CUDNNWINAPI cudnnGetCallback(unsigned *mask, void **udata, cudnnCallback_t *fptr)
{
    ocd_log_init();
    if (mask == NULL || udata == NULL || fptr == NULL)
        return OCD_FAIL(CUDNN_STATUS_BAD_PARAM, "an output pointer is NULL");
    ocd_mutex_lock(&log_lock);
    *mask = ocd_log_mask;
    *udata = callback_data;
    *fptr = callback;
    ocd_mutex_unlock(&log_lock);
    return CUDNN_STATUS_SUCCESS;
}
