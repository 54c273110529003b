/* A program outside flatrt's tree, built against an installed flatrt (find_package or pkg-config)
 * or a source tree added with add_subdirectory: it sees only the public header, loads the digits
 * classifier given on the command line, runs one zero image and checks the output's shape [1, 10]
 * and that the scores are finite. Exit 0 and "ok ..." on success. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <flatrt.h>

/* The library's private headers (src/) must not be on the include path of a consumer. */
#if defined(__has_include)
#if __has_include("ops/op.h") || __has_include("runtime/runtime.h")
#error "flatrt's private include directory src/ leaked into a consumer's include path"
#endif
#endif

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s digits.onnx\n", argv[0]);
        return 2;
    }
    if (strcmp(frt_version(), FRT_VERSION_STRING) != 0) {
        fprintf(stderr, "library %s, header %s\n", frt_version(), FRT_VERSION_STRING);
        return 1;
    }
    frt_model *model = NULL;
    if (frt_model_load(argv[1], NULL, &model) != FRT_OK) {
        fprintf(stderr, "load: %s\n", frt_last_error());
        return 1;
    }
    frt_runtime *rt = NULL;
    if (frt_runtime_create(model, &rt) != FRT_OK) {
        fprintf(stderr, "runtime: %s\n", frt_last_error());
        frt_model_free(model);
        return 1;
    }
    float img[64] = {0};
    frt_tensor in = {.dtype = FRT_FLOAT32, .rank = 4, .shape = {1, 1, 8, 8},
                     .data = img, .nbytes = sizeof img};
    frt_tensor out = {0};
    const char *names[] = {"image"};
    int rc = 0;
    if (frt_run(rt, names, &in, 1, &out, 1, FRT_OUTPUTS_ALLOC) != FRT_OK) {
        fprintf(stderr, "run: %s\n", frt_last_error());
        rc = 1;
    } else if (out.dtype != FRT_FLOAT32 || out.rank != 2 || out.shape[0] != 1 ||
               out.shape[1] != 10) {
        fprintf(stderr, "output: %s rank %d, expected float32 [1, 10]\n",
                frt_dtype_name(out.dtype), (int)out.rank);
        rc = 1;
    } else {
        for (int k = 0; k < 10; k++)
            if (!isfinite(((const float *)out.data)[k])) rc = 1;
        if (rc) fprintf(stderr, "output: non-finite scores\n");
    }
    if (rc == 0) printf("ok flatrt %s output [1, 10]\n", frt_version());
    frt_tensor_release(&out);
    frt_runtime_free(rt);
    frt_model_free(model);
    return rc;
}
