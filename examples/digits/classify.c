/* classify: the smallest useful program on flatrt's C API. Loads the digit classifier and prints
 * the predicted digit for each .npy sample (float32 [1,1,8,8]) given on the command line.
 *
 *   cc -Iinclude examples/digits/classify.c build/libflatrt.a -lopenblas -lm -lpthread -o classify
 *   ./classify examples/digits/digits.onnx examples/digits/samples/digit_0_label1.npy
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flatrt.h"

/* Reads a little-endian float32 .npy file holding exactly n values (format 1.0 header). */
static int read_npy_f32(const char *path, float *out, size_t n) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    unsigned char head[10];
    int ok = fread(head, 1, 10, f) == 10 && memcmp(head, "\x93NUMPY\x01", 7) == 0;
    if (ok) {
        unsigned hlen = head[8] | (unsigned)head[9] << 8;
        char dict[512];
        ok = hlen < sizeof dict && fread(dict, 1, hlen, f) == hlen;
        if (ok) dict[hlen] = 0;
        ok = ok && strstr(dict, "'<f4'") && strstr(dict, "'fortran_order': False");
        ok = ok && fread(out, sizeof(float), n, f) == n && fgetc(f) == EOF;
    }
    fclose(f);
    return ok ? 0 : -1;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s digits.onnx SAMPLE.npy...\n", argv[0]);
        return 2;
    }
    frt_model *model;
    if (frt_model_load(argv[1], NULL, &model) != FRT_OK) {
        fprintf(stderr, "%s\n", frt_last_error());
        return 1;
    }
    frt_runtime *rt;
    if (frt_runtime_create(model, &rt) != FRT_OK) {
        fprintf(stderr, "%s\n", frt_last_error());
        frt_model_free(model);
        return 1;
    }
    int rc = 0;
    for (int i = 2; i < argc; i++) {
        float img[64], logits[10];
        if (read_npy_f32(argv[i], img, 64) != 0) {
            fprintf(stderr, "%s: not a float32 .npy with 64 values\n", argv[i]);
            rc = 1;
            continue;
        }
        frt_tensor in = {.dtype = FRT_FLOAT32, .rank = 4, .shape = {1, 1, 8, 8},
                         .data = img, .nbytes = sizeof img};
        frt_tensor out = {.data = logits, .nbytes = sizeof logits}; /* our buffer: no allocation */
        const char *names[] = {"image"};
        if (frt_run(rt, names, &in, 1, &out, 1, FRT_OUTPUTS_CALLER) != FRT_OK) {
            fprintf(stderr, "%s\n", frt_last_error());
            rc = 1;
            continue;
        }
        int best = 0;
        for (int k = 1; k < 10; k++)
            if (logits[k] > logits[best]) best = k;
        printf("%s %d\n", argv[i], best);
    }
    frt_runtime_free(rt); /* every runtime before its model */
    frt_model_free(model);
    return rc;
}
