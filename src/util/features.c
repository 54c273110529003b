#include "util/features.h"

#include <stddef.h>

/* FRT_SELECTION_FILE comes with a selective build's header (FRT_OPS_SELECTION); a build with only
 * an op list (cmake -DFRT_OPS=...) compiles this file with FRT_OPS_ONLY. */
const char *frt_selection_file(void) {
#if defined(FRT_SELECTION_FILE)
    return FRT_SELECTION_FILE;
#elif defined(FRT_OPS_ONLY)
    return "the op list FRT_OPS";
#else
    return NULL;
#endif
}
