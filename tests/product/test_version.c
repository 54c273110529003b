/* Built against the shared library with the public header only: frt_version() is the header's
 * FRT_VERSION_STRING, and a few public calls resolve through libflatrt.so. */
#include <stdio.h>
#include <string.h>

#include "flatrt.h"

int main(void) {
    const char *v = frt_version();
    if (!v || strcmp(v, FRT_VERSION_STRING) != 0) {
        fprintf(stderr, "frt_version() = \"%s\", header FRT_VERSION_STRING = \"%s\"\n",
                v ? v : "(null)", FRT_VERSION_STRING);
        return 1;
    }
    frt_options opt;
    frt_options_init(&opt);
    frt_model *m = NULL;
    frt_status st = frt_model_load("/nonexistent/model.onnx", &opt, &m);
    if (st != FRT_ERR_IO || m || frt_last_error()[0] == '\0') {
        fprintf(stderr, "loading a missing file: %s, \"%s\"\n", frt_status_string(st),
                frt_last_error());
        return 1;
    }
    printf("flatrt %s (header %s)\n", v, FRT_VERSION_STRING);
    return 0;
}
