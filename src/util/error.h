/* Error reporting: a thread-local message for the last failed call, read by frt_last_error(). */
#ifndef FRT_UTIL_ERROR_H
#define FRT_UTIL_ERROR_H

#include "flatrt.h"

#if defined(__GNUC__)
#define FRT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define FRT_PRINTF(f, a)
#endif

/* Sets the thread's message and returns s, so callers can `return frt_error(...)`. */
frt_status frt_error(frt_status s, const char *fmt, ...) FRT_PRINTF(2, 3);
/* Prepends "prefix: " to the current message (for adding context on the way up). */
frt_status frt_error_context(frt_status s, const char *fmt, ...) FRT_PRINTF(2, 3);
void frt_error_clear(void);

#endif
