#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define ERR_CAP 4096
static _Thread_local char g_err[ERR_CAP];

frt_status frt_error(frt_status s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_err, ERR_CAP, fmt, ap);
    va_end(ap);
    return s;
}

frt_status frt_error_context(frt_status s, const char *fmt, ...) {
    char prefix[512], old[ERR_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, g_err, ERR_CAP);
    size_t n = strlen(prefix);
    if (n > ERR_CAP - 3) n = ERR_CAP - 3;
    memcpy(g_err, prefix, n);
    memcpy(g_err + n, ": ", 2);
    size_t m = strnlen(old, ERR_CAP - 1);
    if (m > ERR_CAP - 1 - n - 2) m = ERR_CAP - 1 - n - 2;
    memcpy(g_err + n + 2, old, m);
    g_err[n + 2 + m] = 0;
    return s;
}

void frt_error_clear(void) { g_err[0] = 0; }

const char *frt_last_error(void) { return g_err; }

const char *frt_status_string(frt_status s) {
    switch (s) {
    case FRT_OK: return "FRT_OK";
    case FRT_ERR_INVALID_ARGUMENT: return "FRT_ERR_INVALID_ARGUMENT";
    case FRT_ERR_IO: return "FRT_ERR_IO";
    case FRT_ERR_MALFORMED: return "FRT_ERR_MALFORMED";
    case FRT_ERR_UNSUPPORTED: return "FRT_ERR_UNSUPPORTED";
    case FRT_ERR_SHAPE: return "FRT_ERR_SHAPE";
    case FRT_ERR_NO_MEMORY: return "FRT_ERR_NO_MEMORY";
    case FRT_ERR_RUNTIME: return "FRT_ERR_RUNTIME";
    case FRT_ERR_INTERNAL: return "FRT_ERR_INTERNAL";
    case FRT_ERR_TIMEOUT: return "FRT_ERR_TIMEOUT";
    }
    return "FRT_ERR_UNKNOWN";
}
